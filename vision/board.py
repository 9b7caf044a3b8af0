"""The board's geometry in millimetres: the renderer's board, and every layout's default.

Owns its dimensions (frame, points, bar, tray, checker, die, cube, markers),
:class:`PointRegion` and :class:`BoardGeometry` (a board's regions), :data:`GEOMETRY`
and where players stack checkers on a point (:func:`checker_slot`). Board mm: origin at
the board's top-left outer corner as white sees it, x to white's right, y towards white;
white's point 1 bottom right, 1..12 along the bottom row, 13..24 along the top. Markers
(``DICT_4X4_50``) ids 0..3 sit top-left, top-right, bottom-right, bottom-left, corners in
ArUco's order. Imports nothing of ours; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from dataclasses import dataclass

BORDER_MM = 50.0  # frame around the playing field; holds the markers
POINT_WIDTH_MM = 40.0
POINT_LENGTH_MM = 190.0
HALF_WIDTH_MM = 6 * POINT_WIDTH_MM  # 240
BAR_WIDTH_MM = 50.0
TRAY_WIDTH_MM = 50.0  # bear-off tray on white's right, split: black's at the top, white's at the bottom
FIELD_HEIGHT_MM = 440.0
BOARD_WIDTH_MM = 2 * BORDER_MM + 2 * HALF_WIDTH_MM + BAR_WIDTH_MM + TRAY_WIDTH_MM  # 690
BOARD_HEIGHT_MM = 2 * BORDER_MM + FIELD_HEIGHT_MM  # 540
CHECKER_DIAMETER_MM = 36.0
CHECKER_HEIGHT_MM = 8.0  # a checker's thickness: tournament checkers are 7 to 10 mm


def lifted(
    eye_mm: tuple[float, float, float], at: tuple[float, float], height: float
) -> tuple[tuple[float, float], float]:
    """Where on the field's plane a camera sees a point ``height`` mm above the board-mm point ``at``,
    and the scale there of a thing that high: from an eye ``eye_mm`` (board mm x, y of the point
    under it, and its height above the field), a plane ``height`` above the field projects onto it
    by ``eye / (eye - height)`` about the point under the eye."""
    ex, ey, ez = eye_mm
    k = ez / (ez - height)
    return (ex + (at[0] - ex) * k, ey + (at[1] - ey) * k), k


CHECKER_STEP_MM = 37.0  # centre to centre along a point
CHECKERS_PER_ROW = 5  # layer k holds 5 - k checkers, offset half a step: 5 + 4 + 3 + 2 + 1 = 15
DIE_SIZE_MM = 16.0
CUBE_SIZE_MM = 30.0
MARKER_SIZE_MM = 36.0
MARKER_QUIET_MM = 5.0  # white margin around each marker

LEFT_X0 = BORDER_MM
LEFT_X1 = LEFT_X0 + HALF_WIDTH_MM
BAR_X0 = LEFT_X1
BAR_X1 = BAR_X0 + BAR_WIDTH_MM
RIGHT_X0 = BAR_X1
RIGHT_X1 = RIGHT_X0 + HALF_WIDTH_MM
TRAY_X0 = RIGHT_X1
TRAY_X1 = TRAY_X0 + TRAY_WIDTH_MM
FIELD_Y0 = BORDER_MM
FIELD_Y1 = FIELD_Y0 + FIELD_HEIGHT_MM

MARKER_IDS = {"top-left": 0, "top-right": 1, "bottom-right": 2, "bottom-left": 3}

# Where each layer of a stack sits, in steps along the point and mm across it: every checker
# of a full 15-stack has its own centre, as real stacks are a little askew.
LAYER_ALONG = (0.0, 0.5, 0.25, 0.75, 0.5)
LAYER_ACROSS = (0.0, 0.0, -3.0, 3.0, -1.5)


@dataclass(frozen=True, slots=True)
class PointRegion:
    """One point's triangle in board mm: base on the frame edge, tip towards the centre."""

    number: int  # 1..24, white's numbering
    x0: float
    x1: float
    base_y: float
    tip_y: float

    @property
    def centre_x(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def direction(self) -> int:
        """+1 if the point runs down the board (top row), -1 if up (bottom row)."""
        return 1 if self.tip_y > self.base_y else -1

    def contains(self, x: float, y: float) -> bool:
        lo, hi = sorted((self.base_y, self.tip_y))
        return self.x0 <= x < self.x1 and lo <= y < hi


@dataclass(frozen=True, slots=True)
class BoardGeometry:
    """The board's regions in board mm (see the module docstring for the frame)."""

    width: float = BOARD_WIDTH_MM
    height: float = BOARD_HEIGHT_MM
    points: tuple[PointRegion, ...] = ()
    bar: tuple[float, float, float, float] = (BAR_X0, FIELD_Y0, BAR_X1, FIELD_Y1)
    tray_white: tuple[float, float, float, float] = (TRAY_X0, (FIELD_Y0 + FIELD_Y1) / 2, TRAY_X1, FIELD_Y1)
    tray_black: tuple[float, float, float, float] = (TRAY_X0, FIELD_Y0, TRAY_X1, (FIELD_Y0 + FIELD_Y1) / 2)
    right_half: tuple[float, float, float, float] = (RIGHT_X0, FIELD_Y0, RIGHT_X1, FIELD_Y1)
    left_half: tuple[float, float, float, float] = (LEFT_X0, FIELD_Y0, LEFT_X1, FIELD_Y1)
    markers: tuple[tuple[tuple[float, float], ...], ...] = ()  # by id, ArUco corner order

    def __post_init__(self) -> None:
        if len(self.points) != 24 or [p.number for p in self.points] != list(range(1, 25)):
            raise ValueError(f"points: {len(self.points)!r} regions: expected points 1..24 in order")
        if len(self.markers) != 4:
            raise ValueError(f"markers: {len(self.markers)!r}: expected 4 (ids 0..3)")

    def point_at(self, x: float, y: float) -> int | None:
        """The point (1..24, white's numbering) whose column holds board-mm (x, y), or None.

        A point's column is its width times half the field height (the triangle
        and the space beside it up to the middle of the field).
        """
        mid = (FIELD_Y0 + FIELD_Y1) / 2
        for p in self.points:
            lo, hi = (p.base_y, mid) if p.direction > 0 else (mid, p.base_y)
            if p.x0 <= x < p.x1 and lo <= y < hi:
                return p.number
        return None

    def half_at(self, x: float, y: float) -> str | None:
        """``"left"`` or ``"right"`` (as white sees it) for a board-mm location on the field, else None."""
        if not FIELD_Y0 <= y < FIELD_Y1:
            return None
        if LEFT_X0 <= x < LEFT_X1:
            return "left"
        if RIGHT_X0 <= x < RIGHT_X1:
            return "right"
        return None


def _make_geometry() -> BoardGeometry:
    regions = []
    for n in range(1, 25):
        if n <= 12:  # bottom row, right to left from the bottom-right corner
            k = n - 1
            x1 = RIGHT_X1 - k * POINT_WIDTH_MM if k < 6 else LEFT_X1 - (k - 6) * POINT_WIDTH_MM
            regions.append(PointRegion(n, x1 - POINT_WIDTH_MM, x1, FIELD_Y1, FIELD_Y1 - POINT_LENGTH_MM))
        else:  # top row, left to right from the top-left corner
            k = n - 13
            x0 = LEFT_X0 + k * POINT_WIDTH_MM if k < 6 else RIGHT_X0 + (k - 6) * POINT_WIDTH_MM
            regions.append(PointRegion(n, x0, x0 + POINT_WIDTH_MM, FIELD_Y0, FIELD_Y0 + POINT_LENGTH_MM))
    inset = (BORDER_MM - MARKER_SIZE_MM) / 2
    origins = [
        (inset, inset),
        (BOARD_WIDTH_MM - inset - MARKER_SIZE_MM, inset),
        (BOARD_WIDTH_MM - inset - MARKER_SIZE_MM, BOARD_HEIGHT_MM - inset - MARKER_SIZE_MM),
        (inset, BOARD_HEIGHT_MM - inset - MARKER_SIZE_MM),
    ]
    s = MARKER_SIZE_MM
    markers = tuple(((x, y), (x + s, y), (x + s, y + s), (x, y + s)) for x, y in origins)
    return BoardGeometry(points=tuple(regions), markers=markers)


GEOMETRY = _make_geometry()


def point_at(x: float, y: float) -> int | None:
    """The point (1..24, white's numbering; 1 is bottom right as white sees it) at board mm (x, y), or None."""
    return GEOMETRY.point_at(x, y)


def checker_slot(point: int, index: int) -> tuple[float, float, int]:
    """Board-mm centre and layer of the ``index``-th checker (0-based) stacked on ``point``.

    Players stack 5 along the point from its base; the 6th to 9th go on a
    second layer offset half a checker, then layers of 3, 2 and 1 (each a
    little askew so that no two centres coincide): 15 in all.
    Raises ValueError outside 1..24 or 0..14.
    """
    if not 1 <= point <= 24:
        raise ValueError(f"point: {point!r}: expected 1..24")
    if not 0 <= index < 15:
        raise ValueError(f"index: {index!r}: expected 0..14")
    layer, i = 0, index
    while i >= CHECKERS_PER_ROW - layer:
        i -= CHECKERS_PER_ROW - layer
        layer += 1
    p = GEOMETRY.points[point - 1]
    along = CHECKER_DIAMETER_MM / 2 + 0.5 + (LAYER_ALONG[layer] + i) * CHECKER_STEP_MM
    return p.centre_x + LAYER_ACROSS[layer], p.base_y + p.direction * along, layer
