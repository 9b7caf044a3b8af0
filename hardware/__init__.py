"""Firmware source, wiring, bill of materials and PROTOCOL.md (not built yet: see issues 4 and 6)."""
