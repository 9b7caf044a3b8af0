"""Camera pipeline: calibrate, rectify, checkers, dice, cube, gate.

Owns turning camera frames into observations. May import `board_rules` types;
must not import `firmware_bridge` or `referee`. (Not built yet: see issue 3.)
"""
