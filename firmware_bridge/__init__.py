"""Serial protocol to the sensor/LED board, board emulator and Raspberry Pi panel.

May import `board_rules` types; must not import `vision` or `referee`.
(Not built yet: see issue 4.)
"""
