"""The table's electronics: the wire protocol, the host link, the board emulator and the Pi panel.

``protocol`` (the pure codec of ``hardware/PROTOCOL.md``), ``sensing`` (the hall-sensor
model of ``hardware/SENSING.md``), ``link`` (the host side: handshake, reader thread,
events, LED frames, reconnects), ``emulator`` (a board on a pseudo-terminal with fault
injection), ``panel`` (the Raspberry Pi's buttons, status LED and buzzer, gpiozero) and
``cli_board`` (``tavli board emulate`` and ``tavli board watch``).

May import ``board_rules`` types; must not import ``vision`` or ``referee``.
Nothing opens a device at import time.
"""
