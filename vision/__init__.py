"""Camera pipeline: calibrate, rectify, checkers, dice, cube, gate; and the table renderer.

Owns turning camera frames into observations (to come: issue 3) and, in ``render``,
drawing camera frames of a position with ground truth (the camera of the emulated
table). May import ``board_rules`` types; must not import ``firmware_bridge`` or
``referee``.
"""
