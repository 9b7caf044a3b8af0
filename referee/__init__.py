"""The application: session state machine, fusion, LEDs, recording, hints and the `tavli` command line.

The only package that may import `board_rules`, `vision` and `firmware_bridge` together.
"""
