"""The table's electronics: the wire protocol, the host link, the board emulator and the Pi panel.

``framing`` (COBS, CRC, frame header) and ``protocol`` (the messages of ``hardware/PROTOCOL.md``),
``leds`` (which LED lights which place), ``sensing`` (the hall-sensor model of ``hardware/SENSING.md``), ``link`` (the host side:
handshake, reader thread, events, LED frames, reconnects), ``panel`` (the Raspberry Pi's
buttons, status LED and buzzer, gpiozero), ``cli_board`` (``tavli board emulate`` and
``tavli board watch``), and the stand-in board: ``emulator``, ``emulator_checkers``,
``emulator_pty``, which production code never imports.

May import ``board_rules`` types; must not import ``vision`` or ``referee``.
Nothing opens a device at import time.
"""
