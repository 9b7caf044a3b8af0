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
from firmware_bridge.sensing import counts_from_slots
from referee.fusion import BoardSeen

__all__ = ["COLOURS", "EmulatedTable", "TableError", "observed_position", "read_board"]


class TableError(TavliError, RuntimeError):
    """The emulated table did not answer as a board must."""


def read_board(snapshot: Snapshot, like: Position) -> BoardSeen:
    """What a snapshot shows, given ``like`` (the position before): counts, pins and lower bounds.

    The board cannot tell who is pinned under whom (plakoto): the referee knows it from
    the game so far. A pinned pair where ``like`` has a pin keeps that pin; a pinned pair
    where ``like`` has a single checker is a new pin of that checker; a pin of ``like``
    no longer read as a pair is released. Checkers heaped against the fill order are
    counted as a lower bound (``at_least``). Raises ``ValueError`` for both colours on
    a point where no pin can explain them.
    """
    sensed = counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )
    pins = [0] * 24
    for p in sensed.uncertain:
        if like.pinned[p - 1]:
            pins[p - 1] = like.pinned[p - 1]
        elif like.variant.pins and abs(like.points[p - 1]) == 1 and p not in sensed.at_least:
            pins[p - 1] = 1 if like.points[p - 1] > 0 else -1
    points = sensed.resolved_points(pins) if sensed.uncertain else sensed.points
    return BoardSeen.counted(points, pins, sensed.bar, sensed.off, sensed.at_least)


def observed_position(snapshot: Snapshot, like: Position) -> Position:
    """The position a snapshot shows, with the turn and rolls of ``like`` (the position before).

    See :func:`read_board`; a side's one heap the board counts only as "at least" is
    finished by the count of 15. Raises ``ValueError`` for a reading that is not a
    valid position (a misread, a checker in a hand, or both colours on a point where
    no pin can explain them).
    """
    return read_board(snapshot, like).completed(like)


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
