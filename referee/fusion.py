"""Fusion: one board from the sensor board and the camera, and where they disagree.

Owns :class:`BoardSeen` (the sensor board's counts, some only lower bounds) and
:func:`fuse`. Each place comes from the source that can see it: a pinned point from
the board (the camera sees only the top), a heap the board counts only as "at least"
from the camera, a point the camera is unsure of from the board; where both see a
place and disagree, the disagreement is reported (lit amber), not guessed, and the
board's reading is kept. The rules in full are in ``docs/referee.md``.
Imports ``board_rules`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from board_rules import Place, PlaceKind, Position, Side

CHECKERS = 15
_SIDES = (Side.WHITE, Side.BLACK)  # the index of a side in a (white, black) pair
# Below this the camera's count of a point is noise to the referee (see fuse): on 150 noisy 1280x720
# development frames, 12 of the camera's 20 miscounted points were below it, and 13 of its 3388 right ones.
MIN_CONFIDENCE = 0.3


class BoardSeen(NamedTuple):
    """What the sensor board reads, before it is a position: signed counts per point
    (pinned checkers apart, in ``pinned``), bar and off per side, and ``at_least``:
    the places whose count is only a lower bound (:class:`~board_rules.Place` to that number of checkers)."""

    points: tuple[int, ...]
    pinned: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    at_least: Mapping[Place, int] = {}

    @classmethod
    def counted(
        cls,
        points: Sequence[int],
        pinned: Sequence[int],
        bar: Sequence[int],
        off: Sequence[int],
        at_least: Sequence[Place] = (),
    ) -> BoardSeen:
        """The board's counts, where the places ``at_least`` are lower bounds (each bound its count).

        A place may also be written as the sensing layer writes it: a point number, or
        ``("bar" | "off", 0 | 1)`` for white's or black's bar or tray.
        """
        bounds = {q: abs(_count(points, bar, off, q)) for q in map(as_place, at_least)}
        return cls(tuple(points), tuple(pinned), (bar[0], bar[1]), (off[0], off[1]), bounds)

    @classmethod
    def of(cls, position: Position, at_least: Sequence[Place] = ()) -> BoardSeen:
        """A position read by the board, where the places ``at_least`` are lower bounds."""
        return cls.counted(position.points, position.pinned, position.bar, position.off, at_least)

    def uncountable(self) -> tuple[Place, ...]:
        """The lower-bound places the count of 15 cannot finish: a colour's, where it has two or more."""
        sides = [_side_of(p, self.points) for p in self.at_least]
        return tuple(p for p, side in zip(self.at_least, sides) if sides.count(side) > 1)

    def completed(self, like: Position) -> Position:
        """The position, each side's one lower-bound place finished by the count of 15.

        With ``like``'s variant, turn and rolls. Raises ValueError when that does not make
        a valid position (a checker in a hand, or two heaps of one colour the board cannot count).
        """
        points, bar, off = list(self.points), list(self.bar), list(self.off)
        for side, sign in ((0, 1), (1, -1)):
            places = [p for p in self.at_least if _side_of(p, self.points) == side]
            if len(places) != 1:
                continue
            total = sum(v * sign for v in points if v * sign > 0) + sum(1 for v in self.pinned if v == sign)
            total += bar[side] + off[side]
            if total < CHECKERS:
                _add(points, bar, off, places[0], sign * (CHECKERS - total))
        return replace(like, points=tuple(points), pinned=tuple(self.pinned), bar=tuple(bar), off=tuple(off))


@dataclass(frozen=True, slots=True)
class Fused:
    """The fused board and the places where the sources disagree (sorted)."""

    position: Position
    disagree: tuple[Place, ...]
    source: str  # "board", "camera" or "both"


def fuse(
    like: Position,
    board: Position | BoardSeen | None = None,
    camera: tuple[tuple[int, ...], tuple[int, int], tuple[int, int]] | None = None,
    *,
    board_uncertain: Sequence[Place] = (),
    camera_confidence: Sequence[float] | None = None,
    min_confidence: float = MIN_CONFIDENCE,
) -> Fused:
    """Fuse a board reading and a camera reading ``(points, bar, off)``.

    ``like`` gives the variant, turn and rolls (and the pins when only the camera sees).
    ``board`` is a :class:`BoardSeen`, or a :class:`Position` whose places
    ``board_uncertain`` the board counts only as a lower bound. ``camera_confidence``
    holds the camera's confidence per point (index 0 is point 1), as the camera's
    observation gives it. Raises ValueError if neither source is given, or if what is
    seen is not a position (a checker in a hand).
    """
    if board is None and camera is None:
        raise ValueError("fuse: give the sensor board's reading, the camera's, or both")
    if isinstance(board, BoardSeen):
        seen = board._replace(at_least={as_place(p): n for p, n in board.at_least.items()})
    else:
        seen = None if board is None else BoardSeen.of(board, board_uncertain)
    if camera is None:
        return Fused(seen.completed(like), (), "board")
    cam_points, cam_bar, cam_off = camera
    if seen is None:
        pins = _camera_pins(like, cam_points)
        pos = replace(like, points=tuple(cam_points), pinned=pins, bar=tuple(cam_bar), off=tuple(cam_off))
        return Fused(pos, (), "camera")
    points, bar, off = list(seen.points), list(seen.bar), list(seen.off)
    disagree: list[Place] = []
    unfinished: dict[Place, int] = {}
    for i, (b, c) in enumerate(zip(seen.points, cam_points)):
        n = Place.point(i + 1)
        if n in seen.at_least:
            if (b == 0 or (b > 0) == (c > 0)) and abs(c) >= abs(b):
                points[i] = c  # the board knows only "at least": the camera counts the heap
            else:
                unfinished[n] = seen.at_least[n]
                disagree.append(n)
            continue
        if b == c:
            continue
        if seen.pinned[i]:  # the camera cannot see the pinned checker: its stack is the board's top
            if abs(b) == abs(c) or (b > 0) == (c > 0):
                continue
        if camera_confidence is not None and camera_confidence[i] < min_confidence:
            continue  # the camera cannot tell this point: the board's count stands
        disagree.append(n)
    for kind, mine, cams in ((PlaceKind.BAR, bar, cam_bar), (PlaceKind.OFF, off, cam_off)):
        for side in (0, 1):
            place = Place(kind, 0, _SIDES[side])
            if place in seen.at_least:
                if cams[side] >= mine[side]:
                    mine[side] = cams[side]
                    continue
                unfinished[place] = seen.at_least[place]
            if mine[side] != cams[side]:
                disagree.append(place)
    rest = BoardSeen(tuple(points), seen.pinned, (bar[0], bar[1]), (off[0], off[1]), unfinished)
    try:
        return Fused(rest.completed(like), tuple(disagree), "both")
    except ValueError:  # with the camera's heaps the count is not 15: where they disagree decides; the board's reading
        return Fused(seen.completed(like), tuple(disagree), "both")


def _camera_pins(like: Position, cam_points: Sequence[int]) -> tuple[int, ...]:
    """The pins under what the camera sees, from the game so far (the camera sees only a stack's top).

    Only the side on roll moves, so a lone checker of ``like`` now under the other colour is pinned
    there, and a pin of ``like`` whose point shows the pinned colour again (or nothing) is released.
    """
    pins = list(like.pinned)
    if not like.variant.pins:
        return tuple(pins)
    for i, (before, now) in enumerate(zip(like.points, cam_points)):
        if pins[i]:
            if now == 0 or (now > 0) == (pins[i] > 0):
                pins[i] = 0
        elif abs(before) == 1 and now and (now > 0) != (before > 0):
            pins[i] = 1 if before > 0 else -1
    return tuple(pins)


def as_place(place: Place | int | tuple[str, int]) -> Place:
    """``place``, or the place the sensing layer writes as a point number or ``("bar" | "off", 0 | 1)``."""
    if isinstance(place, Place):
        return place
    if isinstance(place, tuple):
        name, side = place
        return Place(PlaceKind(name), 0, _SIDES[side])
    return Place.point(place)


def _side_of(place: Place, points: Sequence[int]) -> int:
    place = as_place(place)
    if place.is_point:
        return 0 if points[place.number - 1] > 0 else 1
    return _SIDES.index(place.side)


def _count(points: Sequence[int], bar: Sequence[int], off: Sequence[int], place: Place) -> int:
    place = as_place(place)
    if place.is_point:
        return points[place.number - 1]
    return (bar if place.kind is PlaceKind.BAR else off)[_SIDES.index(place.side)]


def _add(points: list[int], bar: list[int], off: list[int], place: Place, signed: int) -> None:
    place = as_place(place)
    if place.is_point:
        points[place.number - 1] += signed
    else:
        (bar if place.kind is PlaceKind.BAR else off)[_SIDES.index(place.side)] += abs(signed)
