"""Camera pipeline: calibrate, rectify, checkers, dice, cube, gate; the board's geometry; and the table renderer.

Owns turning camera frames into observations (:func:`vision.observe.read_frame`, :class:`vision.observe.Pipeline`)
on the board of :mod:`vision.board` or of a profile (:mod:`vision.profile`), and, in :mod:`vision.render`,
drawing camera frames of a position with ground truth (the camera of the emulated table). May import
``board_rules`` types; must not import ``firmware_bridge`` or ``referee``.
"""
