"""Fusion: one board from the sensor board and the camera, and where they disagree.

Owns :func:`fuse`. Each source sees some places better: the sensor board's five
slots a point count exactly up to five checkers and tell a pinned pair by its
field, but a stack beyond the slots only as "at least"; the camera counts stacks
to fifteen but cannot see a pinned checker. So each point comes from the source
that can see it, and a point where both see it and disagree is *not guessed*: it
is reported (the referee lights it amber) and the board's reading is kept. Bar
and trays follow the same rule. Imports ``board_rules`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from board_rules import Position


@dataclass(frozen=True, slots=True)
class Fused:
    """The fused board and the places (1..24, ``"bar"``, ``"off"``) where the sources disagree."""

    position: Position
    disagree: tuple[int | str, ...]
    source: str  # "board", "camera" or "both"


def fuse(
    like: Position,
    board: Position | None = None,
    camera: tuple[tuple[int, ...], tuple[int, int], tuple[int, int]] | None = None,
    *,
    board_uncertain: tuple[int, ...] = (),
) -> Fused:
    """Fuse a board reading (a :class:`Position`) and a camera reading ``(points, bar, off)``.

    ``like`` gives the turn, rolls and pins; ``board_uncertain`` are points the sensor
    board counts only as a lower bound (its slots saturated), where the camera's count
    is taken. Raises ValueError if neither source is given.
    """
    if board is None and camera is None:
        raise ValueError("fuse: give the sensor board's reading, the camera's, or both")
    if camera is None:
        return Fused(board, (), "board")
    cam_points, cam_bar, cam_off = camera
    if board is None:
        pos = replace(like, points=tuple(cam_points), bar=tuple(cam_bar), off=tuple(cam_off))
        return Fused(pos, (), "camera")
    points = list(board.points)
    disagree: list[int | str] = []
    for i, (b, c) in enumerate(zip(board.points, cam_points)):
        n = i + 1
        if b == c:
            continue
        if board.pinned[i]:  # the camera cannot see the pinned checker: its stack is the board's top
            if abs(b) == abs(c) or (b > 0) == (c > 0):
                continue
        if n in board_uncertain and (b == 0 or (b > 0) == (c > 0)) and abs(c) >= abs(b):
            points[i] = c  # the board knows only "at least": the camera counts the stack
            continue
        disagree.append(n)
    if tuple(board.bar) != tuple(cam_bar):
        disagree.append("bar")
    if tuple(board.off) != tuple(cam_off):
        disagree.append("off")
    try:
        pos = replace(board, points=tuple(points))
    except ValueError:
        pos = board
    return Fused(pos, tuple(disagree), "both")
