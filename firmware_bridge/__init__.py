"""The table's electronics: the wire protocol, the host link, the LED map, the board emulator and the Pi panel.

``framing`` and ``protocol`` (the codec of ``hardware/PROTOCOL.md``), ``leds`` (which LED
lights which place), ``sensing`` (the model of ``hardware/SENSING.md``), ``link`` (the
host side of the serial link), ``panel`` (the Pi's buttons, status LED and buzzer),
``cli_board`` (``tavli board ...``), and the stand-in board ``emulator``,
``emulator_checkers``, ``emulator_pty`` and ``script`` (its command language), which
production code never imports.

May import ``board_rules`` types; must not import ``vision`` or ``referee``.
Nothing opens a device at import time.
"""
