"""The table's hardware as documents and data: PROTOCOL.md, SENSING.md, WIRING.md, the bill of materials,
the board's firmware source (``firmware/``, built with avr-gcc) and ``panel.toml``.

No code. An installed package carries ``panel.toml`` only (package data, read by ``firmware_bridge.panel``).
"""
