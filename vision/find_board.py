"""Finding a board's playing field in a photo: no markers, no calibration.

Owns :func:`find_field` (the field's corners in a photo, found or given, and its bar, points and
margins fitted to what the photo shows), :class:`FieldFit` (the result, and the board profile and
geometry it makes) and :class:`FieldConfig` (the finder's thresholds). The field is what
``calibrate(..., field=True)`` takes: both halves and the bar. Stages: points and rows
(:mod:`vision.field_points`), the model's fit (:mod:`vision.field_model`), the sides onto the
photo's edges (:mod:`vision.field_edges`). Must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision.board import BOARD_HEIGHT_MM, BOARD_WIDTH_MM, CHECKERS_PER_ROW
from vision.calibrate import CalibrationError, Geometry, calibrate
from vision.config import DEFAULT_PATH, ConfigError, read_toml
from vision.field_edges import SNAP_MIN_KEEP, fit_sides, snap_to_edges
from vision.field_model import (
    PARAM_HI,
    PARAM_LO,
    PARAM_START,
    REGIONS,
    UNIT,
    Grid,
    Scorer,
    field_aspect,
    lab_of,
    meet,
    model_labels,
    refine,
    side_px,
    unit_to_image,
)
from vision.field_points import (
    Triangle,
    candidate_fields,
    colour_triangles,
    distinct_triangles,
    point_rows,
    side_triangles,
)
from vision.gate import static_samples
from vision.profile import BoardProfile, Layout, ProfileError

Point = tuple[float, float]


Corners = tuple[Point, Point, Point, Point]

# the lightness (OpenCV's 8-bit L) of a photo's lightest region at and above which its board edges need
# board_edges' whole min_contrast; a dimmer photo's need proportionately less
_LIT_L = 170.0

# the field model's regions turned half round: a row's place k becomes the other row's place 11 - k
_TURNED = {
    "top-even": "bottom-odd",
    "top-odd": "bottom-even",
    "bottom-even": "top-odd",
    "bottom-odd": "top-even",
    "field-top": "field-bottom",
    "field-bottom": "field-top",
    "frame-top": "frame-bottom",
    "frame-bottom": "frame-top",
    "frame-left": "frame-right",
    "frame-right": "frame-left",
}


class BoardNotFoundError(TavliError, ValueError):
    """No playing field in a photo (or corners that bound none); the message starts ``board-not-found:``.

    ``weak_fit`` is the best fit where it explains too little of the photo to be taken for the field, but
    enough (``FieldConfig.min_score_hidden``) that a hand over the field may be why; otherwise None.
    """

    def __init__(self, message: str, weak_fit: FieldFit | None = None) -> None:
        super().__init__(message)
        self.weak_fit = weak_fit


@dataclass(frozen=True, slots=True)
class FieldConfig:
    """The field finder's thresholds (``[find_board]`` of ``vision/vision.toml`` by default, or of a vision TOML file given)."""

    work_side_px: int = 640  # the photo is searched shrunk to this many px on its long side
    cluster_counts: tuple[int, ...] = (4, 6, 8)  # numbers of colour clusters the photo is split into to find triangles
    min_triangle_fill: float = 0.72  # a triangle fills this much of the smallest triangle around it...
    min_solidity: float = 0.85  # ...and this much of its convex hull
    min_row: int = 3  # triangles on one line of tips that make a row
    candidates: int = 3  # how many of the coarse fits that fit best are then fitted closely
    quick_candidates: int = 10  # how many of the candidate fields that score best as they stand are fitted coarsely
    min_score: float = 0.3  # a fit explaining less of the photo's colour than this is no field...
    min_score_hidden: float = 0.1  # ...but one explaining this much is looked at for a hand hiding the field
    min_field_frac: float = 0.02  # a field smaller than this fraction of the photo's area is none

    def __post_init__(self) -> None:
        def bad(name: str, expected: str) -> ConfigError:
            return ConfigError(f"find_board.{name}: {getattr(self, name)!r}: expected {expected}")

        if not _is_int(self.work_side_px) or not 128 <= self.work_side_px <= 4096:
            raise bad("work_side_px", "an integer 128..4096")
        if (
            not isinstance(self.cluster_counts, tuple)
            or not self.cluster_counts
            or not all(_is_int(k) and 2 <= k <= 16 for k in self.cluster_counts)
        ):
            raise bad("cluster_counts", "a list of integers 2..16")
        for name in ("min_triangle_fill", "min_solidity", "min_score", "min_score_hidden", "min_field_frac"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
                raise bad(name, "a number between 0 and 1")
        if not _is_int(self.min_row) or self.min_row < 2:
            raise bad("min_row", "an integer >= 2")
        for name in ("candidates", "quick_candidates"):
            if not _is_int(getattr(self, name)) or getattr(self, name) < 1:
                raise bad(name, "an integer >= 1")

    @classmethod
    def load(cls, path: str | Path) -> FieldConfig:
        """The ``[find_board]`` table of a TOML file (keys it leaves out keep their defaults).

        Raises :class:`ConfigError` if the file cannot be read, is not TOML, or holds an unknown key or a bad value.
        """
        table = read_toml(path).get("find_board", {})
        known = {f.name for f in fields(cls)}
        if not isinstance(table, dict) or set(table) - known:
            extra = sorted(set(table) - known) if isinstance(table, dict) else table
            raise ConfigError(
                f"vision config {str(path)!r}: [find_board]: {extra!r}: expected keys among {sorted(known)}"
            )
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in table.items()}
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"vision config {str(path)!r}: {exc}") from None


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@lru_cache(maxsize=1)
def default_field_config() -> FieldConfig:
    """The ``[find_board]`` table of ``vision/vision.toml`` (read once)."""
    return FieldConfig.load(DEFAULT_PATH)


def _work_image(cfg: FieldConfig, image: np.ndarray) -> tuple[np.ndarray, float]:
    """``image`` shrunk to ``cfg.work_side_px`` on its long side (never enlarged), and the scale used."""
    h, w = image.shape[:2]
    scale = min(1.0, cfg.work_side_px / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    return image, scale


def _search(cfg: FieldConfig, work: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int]:
    """The best field fit in a work image: corners (px), proportions, score, and how many candidates were tried."""
    tris = distinct_triangles(
        colour_triangles(lab_of(work, 1.0), cfg.cluster_counts, cfg.min_triangle_fill, cfg.min_solidity)
        + side_triangles(cv2.cvtColor(work, cv2.COLOR_BGR2GRAY))
    )
    rows = point_rows(tris, cfg.min_row)
    cands = candidate_fields(rows, tris)
    if not cands:
        return np.zeros((4, 2)), PARAM_START.copy(), -1.0, 0
    coarse = Scorer(lab_of(work, 2.0), 64, 52)
    ranked = sorted(((coarse.score(c, p), k) for k, (c, p) in enumerate(cands)), reverse=True)
    quick = [
        refine(coarse, cands[k][0], cands[k][1], 0.03 * side_px(cands[k][0]), 2.0)
        for _, k in ranked[: cfg.quick_candidates]
    ]
    quick.sort(key=lambda f: -f[2])
    mid = Scorer(lab_of(work, 1.5), 96, 80)
    fits = [refine(mid, c, p, 2.0, 0.75) for c, p, _ in _distinct(quick)[: cfg.candidates]]
    corners, params, best = max(fits, key=lambda f: f[2])
    # a side one point out or in, a row a tenth of the field out or in: fitted coarsely, and closely where that beats the fit
    here = refine(coarse, corners, params, 2.0, 2.0)[2]
    for c in _variants(corners, params):
        if refine(coarse, c, params, 2.0, 2.0)[2] > here:
            f = refine(mid, c, params, 2.0, 0.75)
            if f[2] > best:
                corners, params, best = f
    fine = Scorer(lab_of(work, 1.0), 160, 128)
    corners, params, score = refine(fine, corners, params, 1.0, 0.3)
    # whole triangles seen beyond a row's base: checkers standing on the other points' bases held the fit short
    seen = _bases_seen(tris, corners, params)
    if seen is not None:
        f = refine(fine, *seen, 1.0, 0.3)
        if f[2] >= _SEEN_KEEP * score:
            corners, params, score = f
    # the bases where the colour along the rows stops changing: the frame beyond is plain, the points are not
    ends = _bases_ended(fine.lab, corners, params)
    if ends is not None:
        f = refine(fine, *ends, 1.0, 0.3, fixed_corners=True)
        if f[2] >= _ENDED_KEEP * score:
            corners, params, score = f
    return corners, params, score, len(cands)


# a row's base is moved out to the triangles seen beyond it by more than this share of the field's height
# (the third furthest out of them), where the fit then scores at least _SEEN_KEEP of what it did
_SEEN_MARGIN = 0.03
_SEEN_KEEP = 0.95


def _bases_seen(tris: list[Triangle], corners: np.ndarray, params: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The fit with each row's base moved out to the bases of the whole triangles seen beyond it (the third
    furthest out, the tips kept), or None where none lies beyond by ``_SEEN_MARGIN``."""
    hom = unit_to_image(corners)
    if hom is None:
        return None
    inv = np.linalg.inv(hom)
    out = ([], [])
    for t in tris:
        q = np.array([[*t.apex, 1.0], [*t.mid, 1.0]]) @ inv.T
        (au, av), (bu, bv) = q[:, :2] / q[:, 2:]
        if not (0 < au < 1 and 0 < bu < 1):
            continue
        if 0.15 < av < 0.6 and bv < av - 0.15:
            out[0].append(bv)
        elif 0.4 < av < 0.85 and bv > av + 0.15:
            out[1].append(bv)
    v0 = min(0.0, sorted(out[0])[2]) if len(out[0]) >= 3 else 0.0
    v1 = max(1.0, sorted(out[1])[-3]) if len(out[1]) >= 3 else 1.0
    if v0 > -_SEEN_MARGIN and v1 < 1 + _SEEN_MARGIN:
        return None
    return _with_bases(hom, params, (v0, v0), (v1, v1))


def _with_bases(
    hom: np.ndarray, params: np.ndarray, top: tuple[float, float], bottom: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The fit laid by ``hom`` with its top base moved to the line through v = ``top[0]`` at u = 0 and
    ``top[1]`` at u = 1 of its field units (the bottom base likewise), the tips kept where they were: its
    corners and proportions, or None where a corner falls behind the camera."""
    q = np.c_[np.array([[0.0, top[0]], [1.0, top[1]], [1.0, bottom[1]], [0.0, bottom[0]]]), np.ones(4)] @ hom.T
    if np.any(q[:, 2] <= 1e-9):
        return None
    bar, margin, plen = (float(v) for v in params)
    v0, v1 = sum(top) / 2, sum(bottom) / 2
    tips = ((plen - v0) + (v1 - 1 + plen)) / 2 / (v1 - v0)
    return q[:, :2] / q[:, 2:], np.array([bar, margin, min(PARAM_HI[2], max(PARAM_LO[2], tips))])


# a row's base is looked for this far (field heights) either side of the fit's, in steps of _ENDED_STEP,
# along _ENDED_SEGMENTS stretches of two points each; where at least _ENDED_MIN of them say where it is
_ENDED_REACH = 0.12
_ENDED_STEP = 0.005
_ENDED_SEGMENTS = 6
_ENDED_SAMPLES = 16
_ENDED_MIN = 3
_ENDED_KEEP = 0.5  # the fit moved there must still score this share of what it did
_ENDED_MIN_SPREAD = 10.0  # Lab units: a stretch whose colours spread less than this inside the field says nothing
# a stretch ends where its spread falls under _ENDED_FALL of its level deep inside the field (the inner half of
# the reach) and stays, over the next _ENDED_AFTER steps, under _ENDED_STAYS of it on average
_ENDED_FALL = 0.5
_ENDED_STAYS = 0.35
_ENDED_AFTER = 6
_SNAPPED_BEYOND = 0.008  # a snapped base whose row ends further inside it than this (field heights) is not taken


def _ended_at(spread: np.ndarray, depths: np.ndarray) -> float | None:
    """Where a stretch's colour spread (per depth, inside to out) falls to half its level deep inside the
    field and stays low beyond (interpolated between steps): the base's depth, or None where the profile
    shows no such end."""
    inside = float(np.median(spread[depths <= -_ENDED_REACH / 2]))
    if inside < _ENDED_MIN_SPREAD:
        return None
    fall = _ENDED_FALL * inside
    for i in range(int(np.searchsorted(depths, -_ENDED_REACH / 2)), len(depths) - 1):
        if spread[i + 1] < fall <= spread[i] and spread[i + 1 : i + 1 + _ENDED_AFTER].mean() < _ENDED_STAYS * inside:
            t = (spread[i] - fall) / max(spread[i] - spread[i + 1], 1e-9)
            return float(depths[i] + t * (depths[i + 1] - depths[i]))
    return None


def _row_ends(lab: np.ndarray, hom: np.ndarray, params: np.ndarray) -> list[list[tuple[float, float]]] | None:
    """Per row (the top base, v = 0, then the bottom, v = 1): where each stretch of two points ends, as
    (u at its middle, depth outward from the base in field heights), for the stretches that show an end.

    Inside the field a line along a row crosses points of two colours and the checkers on them; beyond
    the base it runs along the frame, which is plain at that scale. The spread of colour along such
    lines is followed outward and the stretch ends where it falls to half (:func:`_ended_at`)."""
    bar, margin, _ = (float(v) for v in params)
    half = (1 - bar) / 2
    pw = (half - 2 * margin) / 6
    per_half = _ENDED_SEGMENTS // 2
    starts = [margin + 2 * j * pw for j in range(per_half)] + [1 - half + margin + 2 * j * pw for j in range(per_half)]
    us = np.array(starts)[:, None] + np.linspace(0.03, 0.97, _ENDED_SAMPLES)[None, :] * 2 * pw
    depths = np.arange(-_ENDED_REACH, _ENDED_REACH + _ENDED_STEP / 2, _ENDED_STEP)
    rows = []
    for base, outward in ((0.0, -1.0), (1.0, 1.0)):
        u = np.broadcast_to(us[:, None, :], (len(us), len(depths), _ENDED_SAMPLES))
        v = np.broadcast_to(base + outward * depths[None, :, None], u.shape)
        p = np.stack([u.ravel(), v.ravel(), np.ones(u.size)], 1) @ hom.T
        if p[:, 2].min() <= 1e-9:
            return None
        xy = (p[:, :2] / p[:, 2:]).astype(np.float32)
        colour = cv2.remap(
            lab, xy[:, 0].reshape(1, -1), xy[:, 1].reshape(1, -1), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).reshape(u.shape + (3,))
        spread = np.sqrt(((colour - colour.mean(2, keepdims=True)) ** 2).sum(3).mean(2))
        ends = ((float(us[k].mean()), _ended_at(spread[k], depths)) for k in range(len(us)))
        rows.append([(uk, d) for uk, d in ends if d is not None])
    return rows


def _bases_ended(lab: np.ndarray, corners: np.ndarray, params: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The fit with each row's base moved to where the rows end (:func:`_row_ends`): a line through the
    stretches' ends (Theil-Sen), which may lean against the fit's base. A row with fewer than
    ``_ENDED_MIN`` stretches that end keeps its base. None where neither base moves."""
    hom = unit_to_image(corners)
    rows = None if hom is None else _row_ends(lab, hom, params)
    if rows is None:
        return None
    lines = []
    for (base, outward), found in zip(((0.0, -1.0), (1.0, 1.0)), rows):
        if len(found) < _ENDED_MIN:
            lines.append((base, base))
            continue
        x = np.array([f[0] for f in found])
        y = base + outward * np.array([f[1] for f in found])
        i, j = np.triu_indices(len(x), 1)
        slope = float(np.median((y[j] - y[i]) / (x[j] - x[i])))
        at0 = float(np.median(y - slope * x))
        lines.append((at0, at0 + slope))
    (t0, t1), (b0, b1) = lines
    if max(abs(t0), abs(t1), abs(b0 - 1), abs(b1 - 1)) < _ENDED_STEP:
        return None
    return _with_bases(hom, params, (t0, t1), (b0, b1))


def _bases_kept(lab: np.ndarray, before: np.ndarray, snapped: np.ndarray, params: np.ndarray) -> np.ndarray | None:
    """``snapped`` with a base put back on ``before``'s where the snap took it out beyond the end of its
    row: onto an edge of the frame, where the row's stretches (:func:`_row_ends`, median) end more than
    ``_SNAPPED_BEYOND`` of the field's height inside it. The ends of the rows keep their snapped sides.
    None where no base is put back."""
    hom = unit_to_image(snapped)
    old = unit_to_image(before)
    rows = None if hom is None or old is None else _row_ends(lab, hom, params)
    if rows is None:
        return None
    q = np.c_[snapped, np.ones(4)] @ np.linalg.inv(old).T
    q = q[:, :2] / q[:, 2:]  # the snapped corners in the fit's field units before
    out = q.copy()
    for (a, b, base), found in zip(((0, 1, 0.0), (3, 2, 1.0)), rows):
        if len(found) < _ENDED_MIN or float(np.median([d for _, d in found])) > -_SNAPPED_BEYOND:
            continue
        for k in (a, b):  # along the end of the rows from the other row's corner, to the base before
            at = meet(q[3 - k], q[k] - q[3 - k], np.array([0.0, base]), np.array([1.0, 0.0]))
            if at is not None:
                out[k] = at
    if np.array_equal(out, q):
        return None
    p = np.c_[out, np.ones(4)] @ old.T
    return p[:, :2] / p[:, 2:]


def _variants(corners: np.ndarray, params: np.ndarray) -> list[np.ndarray]:
    """The fit with one side moved: an end of the rows by a point's width, a row's base by a tenth of the field's height."""
    hom = unit_to_image(corners)
    if hom is None:
        return []
    bar, margin, _ = params
    pw = ((1 - bar) / 2 - 2 * margin) / 6
    unit = UNIT.astype(np.float64)
    out = []
    for idx, axis, step in (((0, 3), 0, pw), ((1, 2), 0, pw), ((0, 1), 1, 0.1), ((2, 3), 1, 0.1)):
        for sign in (1.0, -1.0):
            u = unit.copy()
            u[list(idx), axis] += sign * step
            p = np.c_[u, np.ones(4)] @ hom.T
            if np.all(p[:, 2] > 1e-9):
                out.append(p[:, :2] / p[:, 2:])
    return out


def _distinct(fits: list[tuple[np.ndarray, np.ndarray, float]]) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Fits in order, without those whose corners lie within a few px of an earlier one's."""
    out: list[tuple[np.ndarray, np.ndarray, float]] = []
    for f in fits:
        if all(np.abs(f[0] - g[0]).max() > 0.01 * side_px(g[0]) for g in out):
            out.append(f)
    return out


@dataclass(frozen=True, slots=True)
class FieldFit:
    """A playing field in a photo: its corners in image px (top-left, top-right, bottom-right,
    bottom-left as white sees the board, the first two along one row of twelve points, clockwise on
    screen) and its proportions as the photo shows them (fields below). ``score`` is how well the
    field model fits (see ``FieldConfig.min_score``); ``colours`` are the mean Lab colours (OpenCV's
    8-bit) the photo shows in each of the model's regions (:data:`REGIONS`; None for one outside it).
    """

    corners: Corners
    bar: float  # the bar's width, a fraction of the field's width
    margin: float  # each half's end margins, a fraction of the field's width
    point_length: float  # a fraction of the field's height
    aspect: float  # the field's width over its height, on the board
    score: float
    source: str  # "found" or "corners"
    colours: tuple[tuple[float, float, float] | None, ...] = ()
    checkers_per_row: int = CHECKERS_PER_ROW  # how many the players line along a point before stacking

    def __post_init__(self) -> None:
        if self.colours and len(self.colours) != len(REGIONS):
            raise ValueError(
                f"colours: {len(self.colours)} of them: expected one (Lab, or None) per region of {REGIONS}"
            )
        if self.source not in ("found", "corners"):
            raise ValueError(f"source: {self.source!r}: expected 'found' or 'corners'")
        if not (isinstance(self.checkers_per_row, int) and 1 <= self.checkers_per_row <= 6):
            raise ValueError(f"checkers_per_row: {self.checkers_per_row!r}: expected an integer 1..6")
        if len(self.corners) != 4 or not all(len(c) == 2 and all(math.isfinite(v) for v in c) for c in self.corners):
            raise ValueError(f"corners: {self.corners!r}: expected four (x, y) image points")
        for name, lo, hi in (
            ("bar", 0.0, 0.5),
            ("margin", 0.0, 0.1),
            ("point_length", 0.0, 0.5),
            ("aspect", 0.1, 10.0),
        ):
            v = getattr(self, name)
            if not (isinstance(v, float) and lo <= v <= hi):
                raise ValueError(f"{name}: {v!r}: expected a number from {lo} to {hi}")

    @property
    def point_width(self) -> float:
        """One point's width as a fraction of the field's width."""
        return ((1 - self.bar) / 2 - 2 * self.margin) / 6

    def profile(self, name: str = "photo") -> BoardProfile:
        """A :class:`~vision.profile.BoardProfile` with this field's proportions, in nominal mm (points
        40 mm wide, or less where the board would not fit the rectified canvas); a frame of 20 mm and a
        tray 40 mm wide beside the field; checkers, dice and cube sized from the points (0.9, 0.4 and
        0.75 of a point's width), checkers a fortieth of their width apart in a row, ``checkers_per_row``
        of them before the players stack."""
        pw = 40.0
        width = pw / self.point_width
        height = width / self.aspect
        frame, tray = 20.0, 40.0
        k = min(1.0, 0.98 * BOARD_WIDTH_MM / (2 * frame + width + tray), 0.98 * BOARD_HEIGHT_MM / (2 * frame + height))
        pw, width, height, frame, tray = (v * k for v in (pw, width, height, frame, tray))
        checker = 0.9 * pw
        try:
            return BoardProfile(
                name,
                "fitted to a photo by tavli vision read",
                border_mm=frame,
                point_width_mm=pw,
                point_length_mm=min(self.point_length, 0.49) * height,
                point_margin_mm=self.margin * width,
                bar_width_mm=self.bar * width,
                field_height_mm=height,
                tray_width_mm=tray,
                checker_diameter_mm=checker,
                checker_step_mm=checker * 1.025,
                checkers_per_row=self.checkers_per_row,
                die_size_mm=0.4 * pw,
                cube_size_mm=0.75 * pw,
            )
        except ProfileError as exc:  # pragma: no cover - the fit's bounds keep the proportions valid
            raise BoardNotFoundError(f"board-not-found: the field's proportions make no board ({exc})") from None

    def geometry(self, image_size: tuple[int, int], home: str = "right") -> Geometry:
        """The calibration this field gives a photo of ``image_size`` (width, height px): the homography from
        its corners and :meth:`profile`, white's home on ``home`` (``right`` or ``left`` as white sees it).
        Raises :class:`~vision.calibrate.CalibrationError` for a bad home side."""
        w, h = image_size
        blank = np.zeros((int(h), int(w)), np.uint8)
        return calibrate(blank, corners=self.corners, field=True, profile=self.profile(), home=home)

    def turned(self) -> FieldFit:
        """The same field seen from the other side of the board (its corners' order turned half round):
        the row white sat at becomes black's, and each region's colour moves to the region it turns into."""
        c = self.corners
        colours = tuple(self.colours[REGIONS.index(_TURNED.get(r, r))] for r in REGIONS) if self.colours else ()
        return replace(self, corners=(c[2], c[3], c[0], c[1]), colours=colours)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data."""
        return {
            "source": self.source,
            "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners],
            "bar": round(self.bar, 4),
            "margin": round(self.margin, 4),
            "point_length": round(self.point_length, 4),
            "aspect": round(self.aspect, 3),
            "score": round(self.score, 3),
            "checkers_per_row": self.checkers_per_row,
        }

    def board_edges(self, layout: Layout, min_contrast: float = 20.0) -> tuple[tuple[float, float], ...]:
        """The places (board mm of ``layout``, the layout of :meth:`geometry`) on the board's own drawing
        (:func:`vision.gate.static_samples`: the triangles' sides, the halves' borders) where this photo's
        regions on either side differ in colour by at least ``min_contrast`` (Lab): the edges the photo
        shows wherever nothing lies on them. A point of the frame's colour has no edge at its base, and is
        not expected to. The regions' mean colours make this so where a hand lies on the board too."""
        pts, _ = static_samples(layout)
        if not self.colours or not len(pts):
            return ()
        x0, y0, x1, y1 = layout.field
        probes = np.concatenate([pts + d for d in ((-2.0, 0.0), (2.0, 0.0), (0.0, -2.0), (0.0, 2.0))])
        regions = self.region_at((probes[:, 0] - x0) / (x1 - x0), (probes[:, 1] - y0) / (y1 - y0)).reshape(4, -1)
        colours = np.array([c if c is not None else (np.nan,) * 3 for c in self.colours], np.float64)
        # a dim photo shows every difference smaller, lightness's in proportion to its light
        brightest = float(np.nanmax(colours[:, 0])) if np.isfinite(colours[:, 0]).any() else _LIT_L
        min_contrast *= min(1.0, brightest / _LIT_L)
        keep = np.zeros(len(pts), bool)
        for a in range(4):
            for b in range(a + 1, 4):
                d = np.linalg.norm(colours[regions[a]] - colours[regions[b]], axis=1)
                keep |= np.nan_to_num(d, nan=0.0) >= min_contrast
        return tuple((float(x), float(y)) for x, y in pts[keep])

    def colour(self, region: str) -> np.ndarray | None:
        """The mean Lab colour the photo shows in one of :data:`REGIONS`, or None."""
        if not self.colours:
            return None
        c = self.colours[REGIONS.index(region)]
        return None if c is None else np.array(c, np.float64)

    def region_at(self, u, v) -> np.ndarray:
        """Indices into :data:`REGIONS` of the model's region at field units (``u`` along the rows from the first
        corner, ``v`` across from the first row; arrays of one shape)."""
        u = np.asarray(u, np.float64).ravel()
        v = np.asarray(v, np.float64).ravel()
        grid = Grid(u, v, np.c_[u, v, np.ones(len(u))], (1, len(u)))
        return model_labels(grid, np.array([self.bar, self.margin, self.point_length]))


def find_field(
    config: FieldConfig | None, image: np.ndarray, corners: Sequence[Sequence[float]] | None = None
) -> FieldFit:
    """The playing field in a photo (BGR uint8): found from its points, or at ``corners`` where given (the
    field's four corners in image px, clockwise, the first two along one row of twelve points), with its
    bar, points and margins fitted to what the photo shows there.

    Raises :class:`BoardNotFoundError` where no field fits the photo well enough (``config.min_score``;
    with the fit as its ``weak_fit`` where it scores ``config.min_score_hidden``),
    :class:`~vision.calibrate.CalibrationError` for malformed corners, ValueError for an image that is not BGR uint8.
    """
    cfg = config or default_field_config()
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected a BGR uint8 array, got {getattr(image, 'shape', type(image))!r}")
    work, scale = _work_image(cfg, image)
    h, w = work.shape[:2]
    fine = Scorer(lab_of(work, 1.0), 160, 128)  # built once: it costs as much as a dozen scores
    weak = ""  # why a fit too weak to be the field was kept to look for a hand over it
    if corners is not None:
        given = _check_corners(corners) * scale
        starts = [np.array([b, m, lam]) for b in (0.05, 0.08) for m in (0.0, 0.01) for lam in (0.36, 0.42, 0.47)]
        params = max(starts, key=lambda p: fine.score(given, p))
        fitted, params, score = refine(fine, given, params, 1.0, 0.25, fixed_corners=True)
        source = "corners"
    else:
        fitted, params, score, _ = _search(cfg, work)
        source = "found"
        if score < cfg.min_score:
            why = (
                "no rows of points"
                if score < 0
                else f"the best fit explains too little (score {score:.2f} < {cfg.min_score})"
            )
            weak = (
                f"board-not-found: no playing field found in the photo ({why}); "
                "give the field's corners with --corners x1,y1,...,x4,y4"
            )
            if score < cfg.min_score_hidden:
                raise BoardNotFoundError(weak)
        fitted = _as_white_sees(fitted)
        area = abs(cv2.contourArea(fitted.astype(np.float32)))
        if area < cfg.min_field_frac * w * h:
            raise BoardNotFoundError(
                f"board-not-found: the best field covers {area / (w * h):.1%} of the photo "
                f"(at least {cfg.min_field_frac:.0%} expected)"
            )
    colours = fine.region_colours(fitted, params)
    full = fitted / scale
    if source == "found":  # the corners onto the photo's edges, and the proportions refitted between them
        snapped = snap_to_edges(image, full, params, colours)
        refitted = fit_sides(fine, snapped * scale, params)
        # an edge of the frame beside the field's can draw a side: taken only where the field still fits as well
        if fine.score(snapped * scale, refitted) >= SNAP_MIN_KEEP * fine.score(fitted, params):
            kept = _bases_kept(fine.lab, fitted, snapped * scale, refitted)
            if kept is None:
                full, params = snapped, refitted
            else:
                full, params = kept / scale, fit_sides(fine, kept, params)
    hom = unit_to_image(full * scale)
    aspect = field_aspect(hom, (w, h)) if hom is not None else 1.2
    fit = FieldFit(
        tuple((float(x), float(y)) for x, y in full),
        float(params[0]),
        float(params[1]),
        float(params[2]),
        float(aspect),
        float(score),
        source,
        tuple(None if np.isnan(c).any() else (float(c[0]), float(c[1]), float(c[2])) for c in colours),
    )  # type: ignore[arg-type]
    if weak:
        raise BoardNotFoundError(weak, weak_fit=fit)
    return fit


def _check_corners(corners: Sequence[Sequence[float]]) -> np.ndarray:
    """Four (x, y) points, clockwise on screen. Raises :class:`~vision.calibrate.CalibrationError` otherwise."""
    try:
        pts = np.array([[float(c[0]), float(c[1])] for c in corners], np.float64)
        ok = pts.shape == (4, 2) and all(len(c) == 2 for c in corners) and bool(np.all(np.isfinite(pts)))
    except (TypeError, ValueError, IndexError):
        ok = False
    if not ok:
        raise CalibrationError(f"corners: {corners!r}: expected four (x, y) image points of the playing field")
    d = pts[[1, 2, 3, 0]] - pts
    e = d[[1, 2, 3, 0]]
    if not np.all(d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0] > 0):
        raise CalibrationError(
            f"corners: {corners!r}: expected the field's corners clockwise (top-left, top-right, "
            "bottom-right, bottom-left as white sees the board), the first two along one row of twelve points"
        )
    return pts


def _as_white_sees(corners: np.ndarray) -> np.ndarray:
    """Corners whose first two run along a row, reordered as white sees the board: the row nearer the
    photo's top first (nearer its left where the rows run up and down the photo), clockwise on screen."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    options = [c[[0, 1, 2, 3]], c[[1, 0, 3, 2]], c[[3, 2, 1, 0]], c[[2, 3, 0, 1]]]

    def clockwise(q: np.ndarray) -> bool:
        d = q[[1, 2, 3, 0]] - q
        e = d[[1, 2, 3, 0]]
        return bool(np.all(d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0] > 0))

    def key(q: np.ndarray) -> float:
        along = q[1] - q[0] + q[2] - q[3]
        top, bottom = (q[0] + q[1]) / 2, (q[2] + q[3]) / 2
        axis = (
            1 if abs(along[0]) >= abs(along[1]) else 0
        )  # rows across the photo: top is up; up and down it: top is left
        return float(top[axis] - bottom[axis])

    return min((q for q in options if clockwise(q)), key=key)
