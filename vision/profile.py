"""Board profiles: the dimensions of a physical board, and the layout of points, bar and trays built from them.

Owns :class:`BoardProfile` (a board's proportions in board mm, named: ``rendered`` is the board
of :mod:`vision.board` and the default; others are ``[board_profile.<name>]`` tables of
``vision/vision.toml``) and :class:`Layout` (a profile set up for play: which side holds the home
boards). Every stage takes its places from a geometry's layout; every layout fits the rectified
canvas. May import ``board_rules`` types; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from board_rules.errors import TavliError
from board_rules.untrusted import read_text
from vision import board
from vision.board import GEOMETRY, LAYER_ACROSS, LAYER_ALONG, BoardGeometry, PointRegion

DEFAULT_PROFILE = "rendered"
HOMES = ("right", "left")
PROFILES_PATH = Path(__file__).with_name("vision.toml")
_TABLE = "board_profile"


class ProfileError(TavliError, ValueError):
    """An unknown profile or home side, or a ``[board_profile.<name>]`` table with a bad value."""


@dataclass(frozen=True, slots=True)
class BoardProfile:
    """A board's proportions in board mm: the field (two halves of six points and the bar between
    them), the frame around it and one bear-off tray beyond the field on white's right.

    ``point_margin_mm`` is the space between a half's outer points and its sides;
    ``checkers_per_row`` how many checkers players line up along a point before
    they start a second layer on top (each layer one fewer, offset half a step,
    and at least one: with 4 or fewer to a row the last checkers stand one on another).
    """

    name: str
    description: str = ""
    border_mm: float = board.BORDER_MM
    point_width_mm: float = board.POINT_WIDTH_MM
    point_length_mm: float = board.POINT_LENGTH_MM
    point_margin_mm: float = 0.0
    bar_width_mm: float = board.BAR_WIDTH_MM
    field_height_mm: float = board.FIELD_HEIGHT_MM
    tray_gap_mm: float = 0.0
    tray_width_mm: float = board.TRAY_WIDTH_MM
    checker_diameter_mm: float = board.CHECKER_DIAMETER_MM
    checker_step_mm: float = board.CHECKER_STEP_MM
    checkers_per_row: int = board.CHECKERS_PER_ROW
    die_size_mm: float = board.DIE_SIZE_MM
    cube_size_mm: float = board.CUBE_SIZE_MM

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ProfileError(f"profile name: {self.name!r}: expected a non-empty string")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("name", "description"):
                continue
            if f.name == "checkers_per_row":
                if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 6:
                    raise ProfileError(f"profile {self.name!r}: checkers_per_row: {v!r}: expected an integer 1..6")
            elif (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or v < 0
                or (v == 0 and f.name not in ("point_margin_mm", "tray_gap_mm"))
            ):
                raise ProfileError(f"profile {self.name!r}: {f.name}: {v!r}: expected a positive number of mm")
        if (
            self.point_length_mm >= self.field_height_mm / 2 + 1e-9
            or self.checker_diameter_mm > self.point_width_mm * 1.2
        ):
            raise ProfileError(
                f"profile {self.name!r}: points of {self.point_length_mm!r} mm in a field {self.field_height_mm!r} mm high, "
                f"checkers of {self.checker_diameter_mm!r} mm on points {self.point_width_mm!r} mm wide: expected points "
                "shorter than half the field and checkers about as wide as a point"
            )
        w, h = self.board_size_mm
        if w > board.BOARD_WIDTH_MM + 1e-9 or h > board.BOARD_HEIGHT_MM + 1e-9:
            raise ProfileError(
                f"profile {self.name!r}: board {w:g} x {h:g} mm: expected at most "
                f"{board.BOARD_WIDTH_MM:g} x {board.BOARD_HEIGHT_MM:g} (the rectified canvas; scale the nominal mm down)"
            )

    @property
    def half_width_mm(self) -> float:
        return 6 * self.point_width_mm + 2 * self.point_margin_mm

    @property
    def field_width_mm(self) -> float:
        """Both halves and the bar: what ``calibrate(..., field=True)`` corners span."""
        return 2 * self.half_width_mm + self.bar_width_mm

    @property
    def board_size_mm(self) -> tuple[float, float]:
        return (
            2 * self.border_mm + self.field_width_mm + self.tray_gap_mm + self.tray_width_mm,
            2 * self.border_mm + self.field_height_mm,
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


RENDERED = BoardProfile(DEFAULT_PROFILE, "the renderer's board (vision.board.GEOMETRY)")


def load_profiles(path: str | Path = PROFILES_PATH) -> dict[str, BoardProfile]:
    """The ``rendered`` profile and every ``[board_profile.<name>]`` table of ``path``.

    Raises :class:`ProfileError` if the file cannot be read or a table holds an unknown key or a bad value.
    """
    text = read_text(path, "board profiles", ProfileError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"board profiles {str(path)!r}: not valid TOML: {exc}") from None
    tables = data.get(_TABLE, {})
    if not isinstance(tables, dict):
        raise ProfileError(f"{_TABLE} in {str(path)!r}: {tables!r}: expected [{_TABLE}.<name>] tables")
    known = {f.name for f in fields(BoardProfile)} - {"name"}
    out = {DEFAULT_PROFILE: RENDERED}
    for name, table in tables.items():
        if not isinstance(table, dict) or set(table) - known:
            extra = sorted(set(table) - known) if isinstance(table, dict) else table
            raise ProfileError(f"[{_TABLE}.{name}] in {str(path)!r}: {extra!r}: expected keys among {sorted(known)}")
        if name == DEFAULT_PROFILE:
            raise ProfileError(
                f"[{_TABLE}.{name}] in {str(path)!r}: {name!r} is the renderer's board and cannot be redefined"
            )
        out[name] = BoardProfile(name, **table)
    return out


@lru_cache(maxsize=4)
def _profiles() -> dict[str, BoardProfile]:
    return load_profiles()


def find_profile(name: str) -> BoardProfile:
    """The profile called ``name`` (``rendered`` or a table of ``vision.toml``). Raises :class:`ProfileError` for an unknown name."""
    profiles = _profiles()
    if name not in profiles:
        raise ProfileError(f"board profile: {name!r}: expected one of {sorted(profiles)}")
    return profiles[name]


def read_profile_file(path: str | Path, name: str | None = None) -> BoardProfile:
    """A board's profile from a TOML file of ``[board_profile.<name>]`` tables, as in ``vision.toml``
    (a maker's own board, measured): the table ``name``, or the file's only one.

    Raises :class:`ProfileError` if the file cannot be read, holds a bad table, holds no table
    (or several and no ``name``), or has no table ``name``.
    """
    found = {k: v for k, v in load_profiles(path).items() if k != DEFAULT_PROFILE}
    if name is None:
        if len(found) != 1:
            raise ProfileError(
                f"board profiles {str(path)!r}: {sorted(found)!r}: expected one [{_TABLE}.<name>] table, or a name (FILE.toml:NAME)"
            )
        return next(iter(found.values()))
    if name not in found:
        raise ProfileError(f"board profiles {str(path)!r}: {name!r}: expected one of {sorted(found)}")
    return found[name]


# ----------------------------------------------------------------- layout


@dataclass(frozen=True, slots=True)
class Layout:
    """A profile set up for play: the board's regions in board mm, with white's point 1 at the
    bottom right (``home="right"``, as the renderer draws it) or bottom left (``home="left"``) as
    white sees the board. The tray stays on white's right either way."""

    profile: BoardProfile
    home: str
    geometry: (
        BoardGeometry  # points, bar, trays, halves (its point_at / half_at are the rendered board's: use this class's)
    )
    field: tuple[float, float, float, float]  # x0, y0, x1, y1
    eye: tuple[float, float, float] | None = None  # the camera's eye (board mm, :func:`vision.board.lifted`), if known

    @property
    def field_corners_mm(self) -> tuple[tuple[float, float], ...]:
        x0, y0, x1, y1 = self.field
        return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))

    @property
    def board_corners_mm(self) -> tuple[tuple[float, float], ...]:
        w, h = self.profile.board_size_mm
        return ((0.0, 0.0), (w, 0.0), (w, h), (0.0, h))

    @property
    def mid_y(self) -> float:
        return (self.field[1] + self.field[3]) / 2

    def point_at(self, x: float, y: float) -> int | None:
        """The point (1..24, white's numbering) whose column (its width, from its base to the middle of the field) holds (x, y)."""
        for p in self.geometry.points:
            lo, hi = (p.base_y, self.mid_y) if p.direction > 0 else (self.mid_y, p.base_y)
            if p.x0 <= x < p.x1 and lo <= y < hi:
                return p.number
        return None

    def half_at(self, x: float, y: float) -> str | None:
        """``"left"`` or ``"right"`` (as white sees it) for a location on the field, else None."""
        if not self.field[1] <= y < self.field[3]:
            return None
        for name, (x0, _, x1, _) in (("left", self.geometry.left_half), ("right", self.geometry.right_half)):
            if x0 <= x < x1:
                return name
        return None

    def checker_slot(self, point: int, index: int) -> tuple[float, float, int]:
        """Board-mm centre and layer of the ``index``-th checker (0-based) stacked on ``point``
        (as :func:`vision.board.checker_slot`, with the profile's row length: layer ``k`` holds
        ``checkers_per_row - k`` checkers, and at least one). Raises ValueError outside 1..24 or 0..14."""
        if not 1 <= point <= 24:
            raise ValueError(f"point: {point!r}: expected 1..24")
        if not 0 <= index < 15:
            raise ValueError(f"index: {index!r}: expected 0..14")
        per_row, layer, i = self.profile.checkers_per_row, 0, index
        while i >= max(per_row - layer, 1):
            i -= max(per_row - layer, 1)
            layer += 1
        p = self.geometry.points[point - 1]
        along = (
            self.profile.checker_diameter_mm / 2 + 0.5 + (LAYER_ALONG[min(layer, 4)] + i) * self.profile.checker_step_mm
        )
        return p.centre_x + LAYER_ACROSS[min(layer, 4)], p.base_y + p.direction * along, layer

    def checker_top(self, point: int, index: int) -> tuple[float, float, float]:
        """Where the camera sees the top of the ``index``-th checker on ``point``: board mm x, y on
        the field's plane and its size there against a checker lying on it. A top stands its
        layer's checkers and its own above the field (:data:`vision.board.CHECKER_HEIGHT_MM` each),
        so it is seen further from the point under the eye, and larger; without an eye, at the slot."""
        return self._seen(point, index, 1)

    def checker_foot(self, point: int, index: int) -> tuple[float, float, float]:
        """As :meth:`checker_top`, for the checker's underside: lifted by its layer's checkers only."""
        return self._seen(point, index, 0)

    def _seen(self, point: int, index: int, above: int) -> tuple[float, float, float]:
        """The slot's centre lifted by its layer's checkers and ``above`` more, and the scale there."""
        x, y, layer = self.checker_slot(point, index)
        if self.eye is None:
            return x, y, 1.0
        (x, y), scale = board.lifted(self.eye, (x, y), (layer + above) * board.CHECKER_HEIGHT_MM)
        return x, y, scale

    def seen_from(self, eye: tuple[float, float, float] | None) -> Layout:
        """This layout with the camera's eye (rounded to 10 mm, so that the rims worked out for one
        are kept for a camera that moved a little)."""
        if eye is not None:
            eye = tuple(float(round(v / 10) * 10) for v in eye)  # type: ignore[assignment]
        return dataclasses.replace(self, eye=eye)


@lru_cache(maxsize=16)
def layout(profile: str | BoardProfile = DEFAULT_PROFILE, home: str = "right") -> Layout:
    """The :class:`Layout` of a profile (named, or a :class:`BoardProfile` itself: a maker's own board,
    see :func:`read_profile_file`) with the home boards on white's ``home`` side.

    Raises :class:`ProfileError` for an unknown profile or a home side other than ``right`` / ``left``.
    """
    if home not in HOMES:
        raise ProfileError(
            f"home: {home!r}: expected 'right' (white's point 1 bottom right, as white sees the board) or 'left'"
        )
    prof = profile if isinstance(profile, BoardProfile) else find_profile(profile)
    if prof.name == DEFAULT_PROFILE and home == "right":
        g = GEOMETRY
        return Layout(prof, home, g, (board.LEFT_X0, board.FIELD_Y0, board.RIGHT_X1, board.FIELD_Y1))
    b, pw, m = prof.border_mm, prof.point_width_mm, prof.point_margin_mm
    left_x0 = b
    left_x1 = left_x0 + prof.half_width_mm
    bar_x1 = left_x1 + prof.bar_width_mm
    right_x1 = bar_x1 + prof.half_width_mm
    y0, y1 = b, b + prof.field_height_mm
    # columns right to left from the field's right edge: 0..5 in the right half, 6..11 in the left
    cols = [(right_x1 - m - (k + 1) * pw) if k < 6 else (left_x1 - m - (k - 5) * pw) for k in range(12)]
    if home == "left":  # mirror the columns about the field's centre line
        cols = [(left_x0 + right_x1) - (x + pw) for x in cols]
    regions = []
    for n in range(1, 25):
        if n <= 12:
            x0 = cols[n - 1]
            regions.append(PointRegion(n, x0, x0 + pw, y1, y1 - prof.point_length_mm))
        else:
            x0 = cols[24 - n]
            regions.append(PointRegion(n, x0, x0 + pw, y0, y0 + prof.point_length_mm))
    tx0 = right_x1 + prof.tray_gap_mm
    tx1 = tx0 + prof.tray_width_mm
    w, h = prof.board_size_mm
    inset = (b - board.MARKER_SIZE_MM) / 2 if b > board.MARKER_SIZE_MM else 0.0
    s = min(board.MARKER_SIZE_MM, b)
    origins = [(inset, inset), (w - inset - s, inset), (w - inset - s, h - inset - s), (inset, h - inset - s)]
    geometry = BoardGeometry(
        width=w,
        height=h,
        points=tuple(regions),
        bar=(left_x1, y0, bar_x1, y1),
        tray_white=(tx0, (y0 + y1) / 2, tx1, y1),
        tray_black=(tx0, y0, tx1, (y0 + y1) / 2),
        right_half=(bar_x1, y0, right_x1, y1),
        left_half=(left_x0, y0, left_x1, y1),
        markers=tuple(((x, y), (x + s, y), (x + s, y + s), (x, y + s)) for x, y in origins),
    )
    return Layout(prof, home, geometry, (left_x0, y0, right_x1, y1))
