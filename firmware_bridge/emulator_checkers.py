"""The checkers on an emulated board, and the stack each of its slots holds.

Owns :class:`EmulatedCheckers`, the part of the board emulator that knows where the
checkers lie: counts on the points, pins (plakoto), bar and trays, heaps a player piled
against the fill order (:meth:`EmulatedCheckers.lay`), and checkers put on top of a
point the other colour holds. :meth:`EmulatedCheckers.stacks` turns them into a stack
per slot for :mod:`firmware_bridge.sensing` to read.

Stand-in code, for :mod:`firmware_bridge.emulator` only. Pure: no I/O, threads or
clocks. Imports :mod:`firmware_bridge.protocol` and :mod:`firmware_bridge.sensing`.
"""

from __future__ import annotations

from firmware_bridge.protocol import POINTS, Area
from firmware_bridge.sensing import slot_stacks

__all__ = ["EmulatedCheckers", "side_sign"]


def side_sign(side) -> int:
    """+1 for white, -1 for black, from 'white' / 'black', a Side, or +1 / -1; raises ValueError otherwise."""
    value = getattr(side, "value", side)
    if value in ("white", 1):
        return 1
    if value in ("black", -1):
        return -1
    raise ValueError(f"side must be 'white' or 'black', not {side!r}")


def _area(point) -> tuple[Area | None, int]:
    """(area, point number) of ``point``: 1..24, "bar" or "off" (area None: a tray)."""
    if point == "bar":
        return Area.BAR, 0
    if point == "off":
        return None, 0
    if isinstance(point, int) and not isinstance(point, bool) and 1 <= point <= POINTS:
        return Area.POINT, point
    raise ValueError(f"point must be 1..24, 'bar' or 'off', not {point!r}")


def _layout_key(area: Area | None, number: int, sign: int):
    """The key of a place in the layouts: a point's number, or ("bar" | "off", side) for ``sign``'s side."""
    return number if area is Area.POINT else ("bar" if area is Area.BAR else "off", 0 if sign > 0 else 1)


class EmulatedCheckers:
    """Where the checkers of an emulated board lie; places are 1..24, ``"bar"`` or ``"off"`` (those with a side).

    Every method that changes the checkers raises ``ValueError`` and changes nothing
    for a checker that is not there or a place that cannot take it.
    """

    def __init__(self, slots_per_point: int, bar_slots: int, tray_slots: int) -> None:
        self.slots_per_point = slots_per_point
        self.bar_slots = bar_slots
        self.tray_slots = tray_slots
        self._points = [0] * POINTS
        self._pinned = [0] * POINTS
        self._bar = [0, 0]
        self._off = [0, 0]
        self._layouts: dict = {}  # places whose checkers a player piled against the fill order (see lay)
        self._strangers = [0] * POINTS  # checkers put on top of a stack of the other colour (a blocked point)

    def set_position(self, position, layouts=None) -> None:
        """All of a ``board_rules.Position``'s checkers, laid in the fill order except the places in ``layouts``."""
        self._points = list(position.points)
        self._pinned = list(position.pinned)
        self._bar = list(position.bar)
        self._off = list(position.off)
        self._layouts = dict(layouts or {})
        self._strangers = [0] * POINTS

    def lay(self, point, heights, side=None) -> None:
        """Lay the checkers on ``point`` as ``heights`` per slot, until a checker is lifted from or put on it.

        Raises ValueError if ``heights`` does not fit the place's slots or add up to its
        checkers, or the point holds a pin.
        """
        area, number = _area(point)
        key = _layout_key(area, number, 0 if area is Area.POINT else side_sign(side))
        if area is Area.POINT:
            count, slots = abs(self._points[number - 1]), self.slots_per_point
            if self._pinned[number - 1]:
                raise ValueError(f"point {number!r} holds a pinned checker: its checkers lie as the pin puts them")
        else:
            j = key[1]
            count = (self._bar if area is Area.BAR else self._off)[j]
            white_half = (self.bar_slots + 1) // 2
            slots = self.tray_slots if area is None else (white_half if j == 0 else self.bar_slots - white_half)
        hs = [int(h) for h in heights]
        if len(hs) != slots or min(hs, default=0) < 0 or sum(hs) != count:
            raise ValueError(
                f"{point!r}: heights {list(heights)!r} must be {slots} slots adding up to its {count} checkers"
            )
        self._layouts[key] = hs

    def top(self, point, side=None) -> int:
        """The sign of the checker a lift from ``point`` would take (+1 white, -1 black); changes nothing.

        On a point, the checker on top. On the bar or a tray, ``side``'s checker; without
        ``side``, the checker of the one side that has any there. Raises ValueError if there
        is no such checker, or ``side`` is not given and both sides have checkers there.
        """
        area, number = _area(point)
        if area is Area.POINT:
            i = number - 1
            if self._strangers[i]:  # a checker put on the other colour's stack lies on top
                return 1 if self._strangers[i] > 0 else -1
            if not self._points[i]:
                raise ValueError(f"point {number!r}: no checker there to lift")
            return 1 if self._points[i] > 0 else -1
        store = self._bar if area is Area.BAR else self._off
        if side is None:
            held = [sign for sign, n in ((1, store[0]), (-1, store[1])) if n]
            if len(held) == 1:
                return held[0]
            if not held:
                raise ValueError(f"{point}: no checker there to lift")
            raise ValueError(f"{point}: both sides have checkers there; name the side, white or black")
        sign = side_sign(side)
        if not store[0 if sign > 0 else 1]:
            raise ValueError(f"{point}: no {'white' if sign > 0 else 'black'} checker there to lift")
        return sign

    def check_place(self, point, sign: int) -> None:
        """Raise ValueError if a checker of ``sign``'s colour cannot be put on ``point`` (see :meth:`place`)."""
        area, number = _area(point)
        if area is Area.POINT and self._strangers[number - 1] * sign < 0:
            raise ValueError(f"point {number!r}: a checker of each colour on top already; lift one first")

    def lift(self, point, side=None) -> int:
        """Lift the top checker off ``point``; return its sign (+1 white, -1 black).

        On the bar or a tray, ``side`` may be left out where only one side has checkers
        there. Raises ValueError as :meth:`top` does, and changes nothing then.
        """
        sign = self.top(point, side)
        area, number = _area(point)
        if area is Area.POINT:
            i = number - 1
            if self._strangers[i]:  # a checker put on the other colour's stack lies on top: it comes off first
                self._strangers[i] -= sign
                self._layouts.pop(number, None)
                return sign
            n = self._points[i]
            self._points[i] -= sign
            if self._pinned[i] and abs(n) == 1:  # the pinning checker leaves; the pinned one stays alone
                self._points[i] = self._pinned[i]
                self._pinned[i] = 0
        else:
            store = self._bar if area is Area.BAR else self._off
            store[0 if sign > 0 else 1] -= 1
        self._layouts.pop(_layout_key(area, number, sign), None)
        return sign

    def place(self, point, sign: int) -> None:
        """Put a checker of ``sign``'s colour on ``point``.

        On a lone checker of the other colour it pins it; on two or more of the other
        colour it lies on top of their stack and is the first lifted from that point.
        """
        area, number = _area(point)
        if area is Area.POINT:
            i = number - 1
            n = self._points[i]
            if self._strangers[i] or (n * sign < 0 and (abs(n) > 1 or self._pinned[i])):
                self.check_place(point, sign)
                self._strangers[i] += sign  # put on a point the other colour holds: it lies on top of their stack
            elif n * sign < 0:
                self._pinned[i] = n  # a pin: the board reads slot 0 UNCERTAIN
                self._points[i] = sign
            else:
                self._points[i] += sign
        else:
            store = self._bar if area is Area.BAR else self._off
            store[0 if sign > 0 else 1] += 1
        self._layouts.pop(_layout_key(area, number, sign), None)

    def stacks(self) -> list[list[int]]:
        """The stack on every slot (bottom first, +1 white, -1 black), in the protocol's slot order."""
        stacks = slot_stacks(
            self._points,
            self._pinned,
            tuple(self._bar),
            tuple(self._off),
            self.slots_per_point,
            bar_slots=self.bar_slots,
            tray_slots=self.tray_slots,
            layouts=self._layouts,
        )
        k = self.slots_per_point
        for i, extra in enumerate(self._strangers):  # on top of the slot the next checker of the point would take
            sign = 1 if extra > 0 else -1
            for j in range(abs(extra)):
                slot = (abs(self._points[i]) + bool(self._pinned[i]) + j) % k
                stacks[i * k + slot] = stacks[i * k + slot] + [sign]
        return stacks
