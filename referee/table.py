"""The emulated table: the board emulator and the host link together, as the referee sees them.

Owns :class:`EmulatedTable`: checkers are put on an emulated sensor board, the host
link reads them back through a real pseudo-terminal, and the referee's LED frames
light the board. It is the stand-in for the physical table in the demo and tests;
a real board is the same :class:`BoardLink` on another port. Imports ``board_rules``
and ``firmware_bridge``.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterable

from board_rules import Place, Position
from board_rules.errors import TavliError
from firmware_bridge import leds
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.leds import COLOURS  # the referee's colour names, for its callers
from firmware_bridge.link import BoardLink
from firmware_bridge.protocol import Snapshot
from referee.inputs import observed_position

__all__ = ["COLOURS", "EmulatedTable", "TableError"]


class TableError(TavliError, RuntimeError):
    """The emulated table did not answer as a board must."""


class EmulatedTable:
    """An emulated board on a pseudo-terminal, read and lit through the host link."""

    def __init__(self, seed: int = 0, timeout_s: float = 3.0) -> None:
        self.timeout_s = timeout_s
        self.emulator = BoardEmulator(seed=seed)
        path = self.emulator.start()
        try:
            self.link = BoardLink(path).start()
        except Exception:
            self.emulator.stop()
            raise

    def show(self, position: Position) -> Position:
        """Put ``position``'s checkers on the board and return what the host reads back.

        A heartbeat snapshot sent just before the change can arrive after it: the
        first snapshot that shows the change is returned, or the last one seen
        when none does within the timeout (a genuine misread).
        """
        while True:  # what came before is stale
            try:
                self.link.events.get_nowait()
            except queue.Empty:
                break
        self.emulator.set_position(position)
        deadline = time.monotonic() + self.timeout_s
        last = None
        while time.monotonic() < deadline:
            try:
                event = self.link.events.get(timeout=0.1)
            except queue.Empty:
                continue
            if isinstance(event, Snapshot):
                try:
                    last = observed_position(event, position)
                except ValueError:
                    continue
                if last == position:
                    return last
        if last is not None:
            return last
        raise TableError(f"the board sent no snapshot within {self.timeout_s} s of a change")

    def light(self, places: Iterable[Place]) -> bool:
        """Light ``places`` red and the rest dark; True once the board acknowledges the frame."""
        return self.link.send_leds(leds.led_frame(dict.fromkeys(places, "red")))

    def lit_points(self) -> list[Place]:
        """The places the board shows lit now, from the emulator's LED frame (both bars if the bar's LED is)."""
        frame = self.emulator.led_frame
        return [] if frame is None else leds.lit_places(frame)

    def close(self) -> None:
        self.link.stop()
        self.emulator.stop()

    def __enter__(self) -> EmulatedTable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
