"""Finding a board's playing field in a photo: no markers, no calibration.

Owns :func:`find_field` (the field's four corners in a photo, found from its
points, or given, and the proportions of its bar, points and margins fitted to
what the photo shows), :class:`FieldFit` (that result, and the
:class:`~vision.profile.BoardProfile` and :class:`~vision.calibrate.Geometry` it
makes) and :class:`FieldConfig` (the finder's thresholds).

The field is what ``calibrate(..., field=True)`` takes: both halves and the bar
between them, without frame or trays. It is found in four steps. Triangles:
the photo's colours are clustered at a few numbers of clusters, and every
region of one colour whose outline is an elongated isosceles triangle is a
point seen; so is every pair of straight segments meeting at a narrow angle
(points drawn by their sides). Rows: triangles pointing one way whose tips lie
on one line are a row of points; two rows facing each other, or one row and
its mirror, give candidate fields, their ends moved out where the outer points
are hidden. Fit: a model of the field (two rows of twelve triangles in
alternating colours, split by the bar, margins at the ends, the frame band
around) is laid over the photo through a homography and fitted, corners and
proportions, by a pattern search from coarse to fine; its score is the share
of the photo's colour variance its regions explain (colours not assumed),
times the plausibility of its proportions, the balance of its two rows and
the edges across its triangles' sides. The best fit whose score reaches
``FieldConfig.min_score`` is the field; otherwise :class:`BoardNotFoundError`.
Edges: each side of the field is then moved onto the photo's edge there (a
line through the strongest colour change across it), and the proportions onto
the edges across the triangles' sides, unless that spoils the fit.

The field's aspect (its width over its height on the board) comes from the
perspective of its corners (a camera with square pixels looking through the
image centre) where both pairs of sides converge, else from a typical focal
length. Stages are functions ``(config, image) -> result``; nothing here reads
or writes files but :meth:`FieldConfig.load`. May import ``board_rules`` types;
must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision.board import BOARD_HEIGHT_MM, BOARD_WIDTH_MM
from vision.calibrate import CalibrationError, Geometry, calibrate
from vision.config import DEFAULT_PATH, ConfigError, read_toml
from vision.gate import static_samples
from vision.profile import BoardProfile, Layout, ProfileError

Point = tuple[float, float]
Corners = tuple[Point, Point, Point, Point]


class BoardNotFoundError(TavliError, ValueError):
    """No playing field in a photo (or corners that bound none); the message starts ``board-not-found:``."""


@dataclass(frozen=True, slots=True)
class FieldConfig:
    """The field finder's thresholds (``[find_board]`` of ``vision/vision.toml`` by default, or of a vision TOML file given).

    ``work_side_px``: the photo is searched shrunk to this many px on its long side.
    ``cluster_counts``: the numbers of colour clusters the photo is split into to find triangles.
    ``min_triangle_fill``: a region is a triangle when it fills at least this much of the
    smallest triangle around it (and ``min_solidity`` of its convex hull).
    ``min_row``: triangles on one base line that make a row.
    ``quick_candidates``: how many of the candidate fields that score best as they stand are fitted coarsely;
    ``candidates``: how many of those that fit best then are fitted closely.
    ``min_score``: a fit explaining less of the photo's colour than this is no field.
    ``min_field_frac``: a field smaller than this fraction of the photo's area is none.
    """

    work_side_px: int = 640
    cluster_counts: tuple[int, ...] = (4, 6, 8)
    min_triangle_fill: float = 0.72
    min_solidity: float = 0.85
    min_row: int = 3
    candidates: int = 3
    quick_candidates: int = 10
    min_score: float = 0.3
    min_field_frac: float = 0.02

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
        for name in ("min_triangle_fill", "min_solidity", "min_score", "min_field_frac"):
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


# ----------------------------------------------------------------- triangles and rows


@dataclass(frozen=True, slots=True)
class _Triangle:
    """A point seen: its tip and the two ends of its base, in work-image px."""

    apex: np.ndarray
    b1: np.ndarray
    b2: np.ndarray

    @property
    def mid(self) -> np.ndarray:
        return (self.b1 + self.b2) / 2

    @property
    def length(self) -> float:
        return float(np.linalg.norm(self.apex - self.mid))

    @property
    def width(self) -> float:
        return float(np.linalg.norm(self.b2 - self.b1))

    @property
    def axis(self) -> np.ndarray:
        return (self.apex - self.mid) / max(self.length, 1e-9)


@lru_cache(maxsize=1)
def default_field_config() -> FieldConfig:
    """The ``[find_board]`` table of ``vision/vision.toml`` (read once)."""
    return FieldConfig.load(DEFAULT_PATH)


def _triangles(cfg: FieldConfig, lab: np.ndarray) -> list[_Triangle]:
    """Regions of one colour (at each of ``cfg.cluster_counts`` colour clusters) shaped as elongated isosceles triangles."""
    h, w = lab.shape[:2]
    pixels = lab.reshape(-1, 3)
    sample = np.ascontiguousarray(pixels[::7])
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0)
    min_area, max_area = max(30.0, 1.5e-4 * h * w), 0.04 * h * w
    found: list[_Triangle] = []
    kernel = np.ones((3, 3), np.uint8)
    for k in cfg.cluster_counts:
        cv2.setRNGSeed(k)
        _, _, centres = cv2.kmeans(sample, k, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
        dist = ((pixels[:, None, :] - centres[None]) ** 2).sum(-1)
        labels = dist.argmin(1).reshape(h, w)
        for c in range(k):
            mask = cv2.morphologyEx((labels == c).astype(np.uint8), cv2.MORPH_OPEN, kernel)
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for contour in contours:
                t = _as_triangle(cfg, contour, min_area, max_area)
                if t is not None:
                    found.append(t)
    return found


def _distinct_triangles(found: list[_Triangle]) -> list[_Triangle]:
    """One of each triangle found more than once (at several cluster counts, or by its sides too): the longest."""
    kept: list[_Triangle] = []
    for t in sorted(found, key=lambda t: -t.length):
        if all(
            np.linalg.norm(t.apex - u.apex) > 0.3 * u.width or np.linalg.norm(t.mid - u.mid) > 0.3 * u.width
            for u in kept
        ):
            kept.append(t)
    return kept


def _as_triangle(cfg: FieldConfig, contour: np.ndarray, min_area: float, max_area: float) -> _Triangle | None:
    area = cv2.contourArea(contour)
    if not min_area <= area <= max_area:
        return None
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0 or area / hull_area < cfg.min_solidity:
        return None
    tri_area, tri = cv2.minEnclosingTriangle(hull.astype(np.float32))
    if tri_area <= 0 or area / tri_area < cfg.min_triangle_fill:
        return None
    tri = tri.reshape(3, 2).astype(np.float64)
    sides = [float(np.linalg.norm(tri[(j + 1) % 3] - tri[j])) for j in range(3)]
    j = int(np.argmin(sides))
    t = _Triangle(tri[(j + 2) % 3], tri[j], tri[(j + 1) % 3])
    long1, long2 = sides[(j + 1) % 3], sides[(j + 2) % 3]
    if not 2.0 <= t.length / max(t.width, 1e-9) <= 12.0 or max(long1, long2) > 1.35 * min(long1, long2):
        return None
    return t


def _v_triangles(grey: np.ndarray) -> list[_Triangle]:
    """Points drawn by their two sides (outlined, stitched, faint): pairs of straight segments that
    meet at one end at a narrow angle, as a point's sides meet at its tip."""
    segs = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(grey)[0]
    if segs is None:
        return []
    segs = segs.reshape(-1, 4).astype(np.float64)
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    keep = lengths > 0.03 * max(grey.shape)
    segs, lengths = segs[keep], lengths[keep]
    n = len(segs)
    if n < 2:
        return []
    ends = np.r_[segs[:, :2], segs[:, 2:]]  # endpoint k of segment k % n; its other end is (k + n) % (2n)
    other = np.r_[segs[:, 2:], segs[:, :2]]
    seg_len = np.r_[lengths, lengths]
    outward = (other - ends) / seg_len[:, None]
    d = np.linalg.norm(ends[:, None, :] - ends[None, :, :], axis=2)
    tol = np.maximum(3.0, 0.12 * np.minimum(seg_len[:, None], seg_len[None, :]))
    idx = np.arange(2 * n)
    a, b = np.nonzero((d < tol) & (idx[:, None] % n < idx[None, :] % n))
    out = []
    for i, j in zip(a, b):
        cos = float(outward[i] @ outward[j])
        if not math.cos(math.radians(40)) < cos < math.cos(math.radians(4)):
            continue
        apex = _meet(ends[i], outward[i], ends[j], outward[j])
        if (
            apex is None
            or np.linalg.norm(apex - ends[i]) > 2 * tol[i, j]
            or np.linalg.norm(apex - ends[j]) > 2 * tol[i, j]
        ):
            continue
        reach = max(float((other[i] - apex) @ outward[i]), float((other[j] - apex) @ outward[j]))
        t = _Triangle(apex, apex + outward[i] * reach, apex + outward[j] * reach)
        if 2.0 <= t.length / max(t.width, 1e-9) <= 12.0:
            out.append(t)
    return out


@dataclass(frozen=True, slots=True)
class _Row:
    """Triangles whose tips lie on one line and point one way: ``centre`` and ``along`` give the line of
    tips, ``axis`` the way the tips point; ``members`` index the triangles. ``length`` and ``width`` are
    those of its whole triangles (checkers standing on a point cut its base off)."""

    centre: np.ndarray
    along: np.ndarray
    axis: np.ndarray
    members: tuple[int, ...]
    length: float
    width: float

    @property
    def base(self) -> np.ndarray:
        """A point on the line of the row's bases (the field's edge)."""
        return self.centre - self.axis * self.length


def _rows(cfg: FieldConfig, tris: list[_Triangle]) -> list[_Row]:
    """Rows of points: for each triangle, the triangles pointing its way whose tips lie on the line
    across its axis through its tip (refitted once); rows that are part of a larger one are dropped."""
    if len(tris) < cfg.min_row:
        return []
    apexes = np.array([t.apex for t in tris])
    axes = np.array([t.axis for t in tris])
    lengths = np.array([t.length for t in tris])
    widths = np.array([t.width for t in tris])
    cos_max = math.cos(math.radians(20))
    found: dict[tuple[int, ...], _Row] = {}
    for t in tris:
        alike = (axes @ t.axis > cos_max) & (lengths > 0.25 * t.length) & (lengths < 4.0 * t.length)
        centre, along = t.apex, np.array([-t.axis[1], t.axis[0]])
        members = np.zeros(len(tris), bool)
        for _ in range(2):
            normal = np.array([-along[1], along[0]])
            tol = max(0.25 * (float(np.median(widths[members])) if members.any() else t.width), 2.0)
            members = alike & (np.abs((apexes - centre) @ normal) < tol)
            if members.sum() < cfg.min_row:
                break
            centre = apexes[members].mean(0)
            along = np.linalg.svd(apexes[members] - centre)[2][0]
        key = tuple(int(i) for i in np.nonzero(members)[0])
        if len(key) < cfg.min_row or key in found:
            continue
        axis = axes[members].mean(0)
        axis /= np.linalg.norm(axis)
        whole = members & (lengths >= 0.85 * lengths[members].max())
        found[key] = _Row(centre, along, axis, key, float(np.median(lengths[whole])), float(np.median(widths[whole])))
    rows = sorted(found.values(), key=lambda r: -len(r.members))
    out: list[_Row] = []
    for r in rows:  # a row along another's line of tips, pointing its way, is that row
        if not any(
            float(r.axis @ o.axis) > cos_max
            and abs(float((r.centre - o.centre) @ np.array([-o.along[1], o.along[0]]))) < 0.5 * o.width
            for o in out
        ):
            out.append(r)
    return out


# ----------------------------------------------------------------- the field model

_OUT = 0.04  # the frame band around the field in the model, a fraction of the field's width and height
_UNIT = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
# the model's regions
_BACKGROUND, _BAR, _TOP_EVEN, _TOP_ODD, _BOTTOM_EVEN, _BOTTOM_ODD, _BACK_TOP, _BACK_BOTTOM = range(8)
_OUTSIDE = (8, 9, 10, 11)  # above, below, left, right of the field
_REGIONS = 12
REGIONS = (
    "field",
    "bar",
    "top-even",
    "top-odd",
    "bottom-even",
    "bottom-odd",
    "field-top",
    "field-bottom",
    "frame-top",
    "frame-bottom",
    "frame-left",
    "frame-right",
)
"""The field model's regions: the field between the rows, the bar, the points of the first (top) and
second row by the parity of their place (0..11 from the first corner), the field beside the points of
each row, and the frame band beyond each side."""
# the proportions' bounds: bar over field width, margin (each end of each half) over field width, point length over field height
_PARAM_LO = np.array([0.0, 0.0, 0.25])
_PARAM_HI = np.array([0.2, 0.05, 0.49])
_PARAM_START = np.array([0.08, 0.005, 0.42])
_PARAM_STEPS = np.array([0.012, 0.004, 0.03])  # the proportions' first steps in the fit
_TIP_SHARE = 0.96  # a triangle's base spans this share of its point's width


@dataclass(frozen=True, slots=True)
class _Grid:
    """Sample places of the model in field units (u along the rows, v across), frame band included."""

    u: np.ndarray
    v: np.ndarray
    homogeneous: np.ndarray  # (N, 3)
    shape: tuple[int, int]


@lru_cache(maxsize=4)
def _grid(nu: int, nv: int) -> _Grid:
    us = (np.arange(nu) + 0.5) / nu * (1 + 2 * _OUT) - _OUT
    vs = (np.arange(nv) + 0.5) / nv * (1 + 2 * _OUT) - _OUT
    u, v = np.meshgrid(us, vs)
    return _Grid(u.ravel(), v.ravel(), np.c_[u.ravel(), v.ravel(), np.ones(u.size)], (nv, nu))


def _model_labels(grid: _Grid, params: np.ndarray) -> np.ndarray:
    """The region of each sample of ``grid`` for proportions ``(bar, margin, point length)``."""
    bar, margin, plen = (float(x) for x in params)
    u, v = grid.u, grid.v
    half = (1 - bar) / 2
    pw = (half - 2 * margin) / 6
    labels = np.full(u.shape, _BACKGROUND, np.int64)
    labels[v < plen] = _BACK_TOP
    labels[v > 1 - plen] = _BACK_BOTTOM
    labels[np.abs(u - 0.5) < bar / 2] = _BAR
    for start, first in ((0.0, 0), (1 - half, 6)):
        x = u - start - margin
        k = np.floor(x / pw)
        on = (x >= 0) & (k < 6)
        centre = start + margin + (k + 0.5) * pw
        for base_v, sign, region in ((0.0, 1, _TOP_EVEN), (1.0, -1, _BOTTOM_EVEN)):
            depth = (v - base_v) * sign
            inside = (
                on & (depth >= 0) & (depth < plen) & (np.abs(u - centre) < pw / 2 * _TIP_SHARE * (1 - depth / plen))
            )
            labels[inside] = region + ((k[inside].astype(np.int64) + first) % 2)
    labels[v < 0] = _OUTSIDE[0]
    labels[v > 1] = _OUTSIDE[1]
    labels[(u < 0) & (v >= 0) & (v <= 1)] = _OUTSIDE[2]
    labels[(u > 1) & (v >= 0) & (v <= 1)] = _OUTSIDE[3]
    return labels


# a field is this many times as wide as high, or the fit pays for it (by exp(-(beyond / falloff)^2))
_ASPECT_LO, _ASPECT_HI, _ASPECT_FALLOFF = 0.9, 1.45, 0.12
# the focal length (px) is taken within these multiples of the image's diagonal
_FOCAL_LO, _FOCAL_HI, _FOCAL_DEFAULT = 0.5, 5.0, 0.9
_MIN_CONVERGE = 0.15
# a point is this many times as long as wide, or the fit pays for it likewise
_POINT_LO, _POINT_HI, _POINT_FALLOFF = 3.5, 6.5, 0.6


def _prior(aspect: float, params: np.ndarray) -> float:
    """How plausible a fit's proportions are, 0..1: its field's aspect, and its points' length over their width."""
    bar, margin, plen = (float(v) for v in params)
    point = 12 * plen / max(aspect * (1 - bar - 4 * margin), 1e-9)
    off = max(0.0, _ASPECT_LO - aspect, aspect - _ASPECT_HI) / _ASPECT_FALLOFF
    off_point = max(0.0, _POINT_LO - point, point - _POINT_HI) / _POINT_FALLOFF
    return math.exp(-(off**2) - off_point**2)


# both rows of points stand out from the field: the fainter at least this share of the other, or the fit pays in proportion
_MIN_BALANCE = 0.3


def field_aspect(hom: np.ndarray, size: tuple[int, int]) -> float:
    """The width over the height, on the board, of the rectangle that the homography ``hom`` (field units
    to image px) maps to the photo, for a camera with square pixels looking through the image centre.
    Its focal length comes from the vanishing points of both pairs of the rectangle's sides where both
    pairs converge (by ``_MIN_CONVERGE``), kept within a plausible range of the image's diagonal; else
    (a view straight on, or tilted one way only) it is taken as ``_FOCAL_DEFAULT`` times the diagonal."""
    w, h = size
    diag = math.hypot(w, h)
    t = np.array([[1.0, 0.0, -w / 2], [0.0, 1.0, -h / 2], [0.0, 0.0, 1.0]]) @ hom
    h1, h2 = t[:, 0], t[:, 1]
    f2 = (diag * _FOCAL_DEFAULT) ** 2
    # how far each pair of opposite sides converges: the third coordinate's share of the vanishing point
    converge = [abs(v[2]) * diag / max(math.hypot(v[0], v[1]), 1e-12) for v in (h1, h2)]
    if min(converge) > _MIN_CONVERGE:
        est = -(h1[0] * h2[0] + h1[1] * h2[1]) / (h1[2] * h2[2])
        if est > 0:
            f2 = min(max(est, (_FOCAL_LO * diag) ** 2), (_FOCAL_HI * diag) ** 2)
    a = math.sqrt((h1[0] ** 2 + h1[1] ** 2) / f2 + h1[2] ** 2)
    b = math.sqrt((h2[0] ** 2 + h2[1] ** 2) / f2 + h2[2] ** 2)
    return a / max(b, 1e-12)


# the fit gains by the root of how strongly the photo shows an edge across the model's triangle sides (over its 90th percentile), up to this
_SIDE_EDGES_MAX = 3.0


def _side_samples(params: np.ndarray, per_side: int = 8) -> np.ndarray:
    """Places along the 48 triangle sides of the model (from 15% to 85% of the way from base to tip), in field units: (48, per_side, 2)."""
    bar, margin, plen = (float(v) for v in params)
    half = (1 - bar) / 2
    pw = (half - 2 * margin) / 6
    centre = np.r_[margin + (np.arange(6) + 0.5) * pw, 1 - half + margin + (np.arange(6) + 0.5) * pw]
    c = np.repeat(centre, 4)  # per point: top row left and right side, bottom row left and right side
    base_v = np.tile([0.0, 0.0, 1.0, 1.0], 12)
    sign = np.tile([1.0, 1.0, -1.0, -1.0], 12)
    side = np.tile([-1.0, 1.0, -1.0, 1.0], 12)
    base = np.c_[c + side * pw / 2 * _TIP_SHARE, base_v]
    tip = np.c_[c, base_v + sign * plen]
    t = np.linspace(0.15, 0.85, per_side)[None, :, None]
    return base[:, None, :] + (tip - base)[:, None, :] * t


def _unit_to_image(corners: np.ndarray) -> np.ndarray | None:
    """The homography from field units (u, v in 0..1) to image px, or None for corners that bound no convex quadrilateral."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    d = c[[1, 2, 3, 0]] - c
    e = d[[1, 2, 3, 0]]
    turns = d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0]
    if not (np.all(turns > 0) or np.all(turns < 0)):
        return None
    return cv2.getPerspectiveTransform(_UNIT, np.float32(c)).astype(np.float64)


class _Scorer:
    """How much of a work image's colour the field model explains, laid over it at given corners."""

    def __init__(self, lab: np.ndarray, nu: int, nv: int, noise: float = 20.0) -> None:
        self.lab = lab
        self.grid = _grid(nu, nv)
        self.noise = noise
        self._labels: tuple[tuple[float, ...], np.ndarray] | None = None
        self._sides: tuple[tuple[float, ...], np.ndarray] | None = None
        self.evaluations = 0
        gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8
        gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8
        # the colour gradient's structure tensor: across a direction n, the change is sqrt(n' J n)
        self.tensor = np.dstack([(gx * gx).sum(2), (gx * gy).sum(2), (gy * gy).sum(2)])
        strength = np.sqrt(self.tensor[..., 0] + self.tensor[..., 2])
        self.strong = max(float(np.percentile(strength, 90)), 1.0)

    def region_colours(self, corners: np.ndarray, params: np.ndarray) -> np.ndarray:
        """The mean Lab colour of each of the model's regions at ``corners`` (``_REGIONS`` x 3; NaN for a region with no sample in the photo)."""
        hom = _unit_to_image(corners)
        if hom is None:
            return np.full((_REGIONS, 3), np.nan)
        p = self.grid.homogeneous @ hom.T
        xs = (p[:, 0] / p[:, 2]).astype(np.float32)
        ys = (p[:, 1] / p[:, 2]).astype(np.float32)
        h, w = self.lab.shape[:2]
        inside = (xs >= 0) & (xs <= w - 1) & (ys >= 0) & (ys <= h - 1)
        nv, nu = self.grid.shape
        x = cv2.remap(
            self.lab, xs.reshape(nv, nu), ys.reshape(nv, nu), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).reshape(-1, 3)
        labels = np.argmax(self.onehot(params), axis=1)[inside]
        counts = np.bincount(labels, minlength=_REGIONS).astype(np.float64)
        sums = np.stack([np.bincount(labels, weights=x[inside, c], minlength=_REGIONS) for c in range(3)], 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts[:, None] > 0, sums / counts[:, None], np.nan)

    def sides(self, params: np.ndarray) -> np.ndarray:
        key = tuple(float(v) for v in params)
        if self._sides is None or self._sides[0] != key:
            self._sides = (key, _side_samples(params))
        return self._sides[1]

    def side_edges(self, hom: np.ndarray, params: np.ndarray) -> float:
        """How strongly the photo shows an edge along the model's triangle sides, across them: the median
        over the sides' samples, over the photo's strong edges (its 90th percentile)."""
        pts = self.sides(params)  # (sides, samples, 2) in field units
        k, m = pts.shape[:2]
        p = np.c_[pts.reshape(-1, 2), np.ones(k * m)] @ hom.T
        xy = p[:, :2] / p[:, 2:3]
        ends = xy.reshape(k, m, 2)
        d = ends[:, -1] - ends[:, 0]
        normal = np.stack([-d[:, 1], d[:, 0]], 1) / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
        t = cv2.remap(
            self.tensor,
            xy[:, 0].astype(np.float32).reshape(1, -1),
            xy[:, 1].astype(np.float32).reshape(1, -1),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
        ).reshape(k, m, 3)
        nx, ny = normal[:, None, 0], normal[:, None, 1]
        across = np.sqrt(np.maximum(nx * nx * t[..., 0] + 2 * nx * ny * t[..., 1] + ny * ny * t[..., 2], 0.0))
        return float(np.median(across)) / self.strong

    def onehot(self, params: np.ndarray) -> np.ndarray:
        """The model's region of each sample, one-hot: (samples, regions)."""
        key = tuple(float(v) for v in params)
        if self._labels is None or self._labels[0] != key:
            labels = _model_labels(self.grid, params)
            onehot = np.zeros((len(labels), _REGIONS), np.float32)
            onehot[np.arange(len(labels)), labels] = 1.0
            self._labels = (key, onehot)
        return self._labels[1]

    def score(self, corners: np.ndarray, params: np.ndarray) -> float:
        """How well the field model fits the photo at ``corners`` with proportions ``params`` (higher is
        better; -1 for corners that bound no field). The model's regions' share of the colour variance
        of its samples (a noise floor added to the total, so that a plain area explains nothing), times:
        the root of the share of samples inside the photo; the plausibility of the proportions
        (:func:`_prior`); the balance of the two rows of points (the fainter standing out from the field
        at least ``_MIN_BALANCE`` as much as the other, or in proportion); and the root of the edge
        across the triangles' sides (:meth:`side_edges`)."""
        self.evaluations += 1
        hom = _unit_to_image(corners)
        if hom is None:
            return -1.0
        p = self.grid.homogeneous @ hom.T
        z = p[:, 2]
        if z.min() <= 1e-9:
            return -1.0
        xs = (p[:, 0] / z).astype(np.float32)
        ys = (p[:, 1] / z).astype(np.float32)
        h, w = self.lab.shape[:2]
        inside = (xs >= 0) & (xs <= w - 1) & (ys >= 0) & (ys <= h - 1)
        n = int(inside.sum())
        if n < 0.3 * len(xs):
            return -1.0
        nv, nu = self.grid.shape
        x = cv2.remap(
            self.lab, xs.reshape(nv, nu), ys.reshape(nv, nu), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).reshape(-1, 3)
        weight = inside.astype(np.float32)
        rows = np.empty((5, len(x)), np.float32)
        rows[:3] = x.T * weight
        rows[3] = weight
        rows[4] = np.einsum("ij,ij->i", x, x) * weight
        stats = (rows @ self.onehot(params)).astype(np.float64)
        sums, counts, squares = stats[:3], stats[3], stats[4]
        n_in = float(counts.sum())
        total_sum = sums.sum(1)
        between = float((sums**2 / np.maximum(counts, 1e-9)).sum() - (total_sum**2).sum() / n_in)
        total = float(squares.sum()) - float((total_sum**2).sum()) / n_in
        means = sums / np.maximum(counts, 1e-9)
        shown = []  # how far each row's points stand out from the field beside them, per sample of its band
        for points, back in (((_TOP_EVEN, _TOP_ODD), _BACK_TOP), ((_BOTTOM_EVEN, _BOTTOM_ODD), _BACK_BOTTOM)):
            contrast = sum(counts[k] * float(((means[:, k] - means[:, back]) ** 2).sum()) for k in points)
            shown.append(contrast / max(counts[points[0]] + counts[points[1]] + counts[back], 1.0))
        balance = min(shown) / max(max(shown), 1e-9)
        prior = _prior(field_aspect(hom, (w, h)), params)
        sides = math.sqrt(min(self.side_edges(hom, params), _SIDE_EDGES_MAX))
        return (
            between
            / (total + self.noise * n_in)
            * math.sqrt(n / len(xs))
            * prior
            * min(1.0, balance / _MIN_BALANCE)
            * sides
        )


def _moves(corners: np.ndarray) -> np.ndarray:
    """Unit moves of the 8 corner coordinates: each corner alone, each side along its normal, the whole
    quadrilateral along x and y and outwards from its centre."""
    c = corners.reshape(4, 2)
    out = list(np.eye(8))
    for k in range(4):
        d = c[(k + 1) % 4] - c[k]
        n = np.array([d[1], -d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
        m = np.zeros((4, 2))
        m[k] = m[(k + 1) % 4] = n
        out.append(m.ravel())
    out.append(np.tile([1.0, 0.0], 4))
    out.append(np.tile([0.0, 1.0], 4))
    grow = c - c.mean(0)
    out.append((grow / max(float(np.abs(grow).max()), 1e-9)).ravel())
    return np.array(out)


def _refine(
    scorer: _Scorer,
    corners: np.ndarray,
    params: np.ndarray,
    step_px: float,
    min_step_px: float,
    fixed_corners: bool = False,
    max_sweeps: int = 300,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Pattern search over the corners (unless ``fixed_corners``) and the proportions, from steps of
    ``step_px`` (the proportions' own steps alongside) halved down to ``min_step_px``."""
    c = np.asarray(corners, np.float64).ravel().copy()
    p = np.asarray(params, np.float64).copy()
    best = scorer.score(c.reshape(4, 2), p)
    scale = 1.0
    sweeps = 0
    while step_px * scale >= min_step_px and sweeps < max_sweeps:
        improved = False
        moves = [] if fixed_corners else list(_moves(c) * step_px * scale)
        trials = [(m, None) for m in moves] + [(None, i) for i in range(3)]
        for move, i in trials:
            for sign in (1.0, -1.0):
                if move is not None:
                    c2, p2 = c + sign * move, p
                else:
                    p2 = p.copy()
                    p2[i] = min(_PARAM_HI[i], max(_PARAM_LO[i], p2[i] + sign * _PARAM_STEPS[i] * scale))
                    if p2[i] == p[i]:
                        continue
                    c2 = c
                s = scorer.score(c2.reshape(4, 2), p2)
                if s > best:
                    c, p, best, improved = c2, p2, s, True
                    break
        sweeps += 1
        if not improved:
            scale /= 2
    return c.reshape(4, 2), p, best


# ----------------------------------------------------------------- candidate fields


def _meet(p1: np.ndarray, d1: np.ndarray, p2: np.ndarray, d2: np.ndarray) -> np.ndarray | None:
    """Where the line through ``p1`` along ``d1`` meets the one through ``p2`` along ``d2`` (None if parallel)."""
    a = np.array([d1, -d2]).T
    if abs(np.linalg.det(a)) < 1e-9:
        return None
    s = np.linalg.solve(a, p2 - p1)
    return p1 + s[0] * d1


# a field is about this many point widths wide (12 points, a bar and margins)
_FIELD_WIDTHS = 13.3


def _candidates_from_rows(rows: list[_Row], tris: list[_Triangle]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Field corners (in the order the quadrilateral runs, a row's base first) for two rows facing each
    other, or one row and its mirror a field's height away; each with its ends moved out by up to two
    points (the outer points may be under checkers), or out to a whole field's width where the rows span less."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    pairs: list[tuple[_Row, _Row | None]] = []
    for i, r in enumerate(rows):
        for q in rows[i + 1 :]:
            if abs(float(r.along @ q.along)) < math.cos(math.radians(25)) or float(r.axis @ q.axis) > -math.cos(
                math.radians(30)
            ):
                continue
            gap = float((q.centre - r.centre) @ r.axis)  # between the two lines of tips
            longer = max(r.length, q.length)
            if not -0.1 * longer <= gap <= 2.0 * longer or abs(r.length - q.length) > 0.4 * longer:
                continue
            pairs.append((r, q))
    pairs.sort(key=lambda pq: -(len(pq[0].members) + len(pq[1].members)))  # type: ignore[union-attr]
    singles: list[tuple[_Row, _Row | None]] = [(r, None) for r in rows[:4]]
    for r, q in pairs[:6] + singles:
        members = list(r.members) + (list(q.members) if q is not None else [])
        along = r.along
        if q is None:  # the other row: a field's height away, its points 0.42 of the field's height
            q = _Row(r.centre + r.axis * r.length * (1 / 0.42 - 2), r.along, -r.axis, (), r.length, r.width)
        height = float((q.base - r.base) @ r.axis)
        params = _PARAM_START.copy()
        params[2] = min(_PARAM_HI[2], max(_PARAM_LO[2], (r.length + q.length) / 2 / max(height, 1e-9)))
        width = max(r.width, q.width)
        tips = np.array([tris[i].apex for i in members])
        s = (tips - r.centre) @ along
        lo_tip, hi_tip = tips[int(np.argmin(s))], tips[int(np.argmax(s))]
        span = float(s.max() - s.min()) / max(width, 1e-9) + 1  # in points, the outer two whole
        short = max(0.0, _FIELD_WIDTHS - span)
        if (
            short <= 4.5
        ):  # the rows found miss a few points at their ends: every split of what is missing, give or take one
            moves = [(float(a), float(b)) for a in range(5) for b in range(5) if abs(a + b - short) <= 1.5]
        else:
            moves = [(float(j), max(0.0, short - j)) for j in range(int(math.ceil(short)) + 1)]
        ax_lo = tris[members[int(np.argmin(s))]].axis
        ax_hi = tris[members[int(np.argmax(s))]].axis
        ax_lo, ax_hi = (a if a @ r.axis > 0 else -a for a in (ax_lo, ax_hi))
        for a, b in moves:
            p_lo = lo_tip - along * (a + 0.5) * width
            p_hi = hi_tip + along * (b + 0.5) * width
            corners = [
                _meet(r.base, r.along, p_lo, ax_lo),
                _meet(r.base, r.along, p_hi, ax_hi),
                _meet(q.base, q.along, p_hi, ax_hi),
                _meet(q.base, q.along, p_lo, ax_lo),
            ]
            if any(c is None for c in corners):
                continue
            c = np.array(corners)
            if _unit_to_image(c) is not None:
                out.append((c, params))
    return out


def _work_image(cfg: FieldConfig, image: np.ndarray) -> tuple[np.ndarray, float]:
    """``image`` shrunk to ``cfg.work_side_px`` on its long side (never enlarged), and the scale used."""
    h, w = image.shape[:2]
    scale = min(1.0, cfg.work_side_px / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    return image, scale


def _lab(bgr: np.ndarray, blur: float) -> np.ndarray:
    return cv2.cvtColor(cv2.GaussianBlur(bgr, (0, 0), blur) if blur > 0 else bgr, cv2.COLOR_BGR2LAB).astype(np.float32)


def _side_px(corners: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)))


def _search(cfg: FieldConfig, work: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int]:
    """The best field fit in a work image: corners (px), proportions, score, and how many candidates were tried."""
    tris = _distinct_triangles(_triangles(cfg, _lab(work, 1.0)) + _v_triangles(cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)))
    rows = _rows(cfg, tris)
    cands = _candidates_from_rows(rows, tris)
    if not cands:
        return np.zeros((4, 2)), _PARAM_START.copy(), -1.0, 0
    coarse = _Scorer(_lab(work, 2.0), 64, 52)
    ranked = sorted(((coarse.score(c, p), k) for k, (c, p) in enumerate(cands)), reverse=True)
    quick = [
        _refine(coarse, cands[k][0], cands[k][1], 0.03 * _side_px(cands[k][0]), 2.0)
        for _, k in ranked[: cfg.quick_candidates]
    ]
    quick.sort(key=lambda f: -f[2])
    mid = _Scorer(_lab(work, 1.5), 96, 80)
    fits = [_refine(mid, c, p, 2.0, 0.75) for c, p, _ in _distinct(quick)[: cfg.candidates]]
    corners, params, best = max(fits, key=lambda f: f[2])
    # a side one point out or in, a row a tenth of the field out or in: fitted coarsely, and closely where that beats the fit
    here = _refine(coarse, corners, params, 2.0, 2.0)[2]
    for c in _variants(corners, params):
        if _refine(coarse, c, params, 2.0, 2.0)[2] > here:
            f = _refine(mid, c, params, 2.0, 0.75)
            if f[2] > best:
                corners, params, best = f
    fine = _Scorer(_lab(work, 1.0), 160, 128)
    corners, params, score = _refine(fine, corners, params, 1.0, 0.3)
    return corners, params, score, len(cands)


def _variants(corners: np.ndarray, params: np.ndarray) -> list[np.ndarray]:
    """The fit with one side moved: an end of the rows by a point's width, a row's base by a tenth of the field's height."""
    hom = _unit_to_image(corners)
    if hom is None:
        return []
    bar, margin, _ = params
    pw = ((1 - bar) / 2 - 2 * margin) / 6
    unit = _UNIT.astype(np.float64)
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
        if all(np.abs(f[0] - g[0]).max() > 0.01 * _side_px(g[0]) for g in out):
            out.append(f)
    return out


# ----------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class FieldFit:
    """A playing field in a photo: its corners in image px (top-left, top-right, bottom-right,
    bottom-left as white sees the board: the first two along one row of twelve points, clockwise
    on screen) and its proportions as the photo shows them: the bar's width and each half's end
    margins as fractions of the field's width, the points' length as a fraction of its height,
    and its width over its height on the board (``aspect``). ``score`` is how well the field model
    fits the photo (see :class:`FieldConfig`'s ``min_score``); ``source`` is ``found`` or ``corners``.
    ``colours`` are the mean colours (OpenCV's 8-bit Lab) the photo shows in each of the model's
    regions (:data:`REGIONS`; None for one outside the photo): the points of each row by parity, the
    field beside them, the bar, the frame around."""

    corners: Corners
    bar: float
    margin: float
    point_length: float
    aspect: float
    score: float
    source: str
    colours: tuple[tuple[float, float, float] | None, ...] = ()

    def __post_init__(self) -> None:
        if self.colours and len(self.colours) != len(REGIONS):
            raise ValueError(
                f"colours: {len(self.colours)} of them: expected one (Lab, or None) per region of {REGIONS}"
            )
        if self.source not in ("found", "corners"):
            raise ValueError(f"source: {self.source!r}: expected 'found' or 'corners'")
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
        0.75 of a point's width), checkers a fortieth of their width apart in a row."""
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
        grid = _Grid(u, v, np.c_[u, v, np.ones(len(u))], (1, len(u)))
        return _model_labels(grid, np.array([self.bar, self.margin, self.point_length]))


def find_field(
    config: FieldConfig | None, image: np.ndarray, corners: Sequence[Sequence[float]] | None = None
) -> FieldFit:
    """The playing field in a photo (BGR uint8): found from its points, or at ``corners`` where given (the
    field's four corners in image px, clockwise, the first two along one row of twelve points), with its
    bar, points and margins fitted to what the photo shows there.

    Raises :class:`BoardNotFoundError` where no field fits the photo well enough (``config.min_score``),
    :class:`~vision.calibrate.CalibrationError` for malformed corners, ValueError for an image that is not BGR uint8.
    """
    cfg = config or default_field_config()
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected a BGR uint8 array, got {getattr(image, 'shape', type(image))!r}")
    work, scale = _work_image(cfg, image)
    h, w = work.shape[:2]
    if corners is not None:
        given = _check_corners(corners) * scale
        fine = _Scorer(_lab(work, 1.0), 160, 128)
        starts = [np.array([b, m, lam]) for b in (0.05, 0.08) for m in (0.0, 0.01) for lam in (0.36, 0.42, 0.47)]
        params = max(starts, key=lambda p: fine.score(given, p))
        fitted, params, score = _refine(fine, given, params, 1.0, 0.25, fixed_corners=True)
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
            raise BoardNotFoundError(
                f"board-not-found: no playing field found in the photo ({why}); "
                "give the field's corners with --corners x1,y1,...,x4,y4"
            )
        fitted = _as_white_sees(fitted)
        area = abs(cv2.contourArea(fitted.astype(np.float32)))
        if area < cfg.min_field_frac * w * h:
            raise BoardNotFoundError(
                f"board-not-found: the best field covers {area / (w * h):.1%} of the photo "
                f"(at least {cfg.min_field_frac:.0%} expected)"
            )
    fine = _Scorer(_lab(work, 1.0), 160, 128)
    colours = fine.region_colours(fitted, params)
    full = fitted / scale
    if source == "found":  # the corners onto the photo's edges, and the proportions refitted between them
        snapped = _snap_to_edges(image, full, params, colours)
        refitted = _fit_sides(fine, snapped * scale, params)
        # an edge of the frame beside the field's can draw a side: taken only where the field still fits as well
        if fine.score(snapped * scale, refitted) >= _SNAP_MIN_KEEP * fine.score(fitted, params):
            full, params = snapped, refitted
    hom = _unit_to_image(full * scale)
    aspect = field_aspect(hom, (w, h)) if hom is not None else 1.2
    return FieldFit(
        tuple((float(x), float(y)) for x, y in full),
        float(params[0]),
        float(params[1]),
        float(params[2]),
        float(aspect),
        float(score),
        source,
        tuple(None if np.isnan(c).any() else (float(c[0]), float(c[1]), float(c[2])) for c in colours),
    )  # type: ignore[arg-type]


# the final fit to the photo's edges: at most this many px on the long side; searched this far across each edge, then
# nearer; a move of a corner beyond this share of the field's mean side is not taken
_SNAP_SIDE_PX = 1600
_SNAP_REACH = (0.025, 0.012, 0.006, 0.004)  # of the field's mean side, and at least 2 px
_SNAP_MAX_MOVE = 0.04
_SNAP_MIN_KEEP = 0.45  # of the fit's score before (it is steep: a few px lose a good part of it)
_SNAP_MIN_CONTRAST = 20.0


def _model_edges(params: np.ndarray, colours: np.ndarray, with_sides: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Places on the model's edges that the photo's regions show (their colours on either side differ by
    ``_SNAP_MIN_CONTRAST``), in field units, and a unit step along each edge there: the field's borders
    and the bar's sides, and the triangles' sides unless ``with_sides`` is False."""
    bar, margin, plen = (float(v) for v in params)
    half = (1 - bar) / 2
    pw = (half - 2 * margin) / 6
    t = np.linspace(0.1, 0.9, 15)[:, None]
    segments = []
    for start in (0.0, 1 - half):
        for k in range(6):
            c = start + margin + (k + 0.5) * pw
            for base_v, sign in ((0.0, 1.0), (1.0, -1.0)):
                for side in (-1.0, 1.0):
                    segments.append(((c + side * pw / 2 * _TIP_SHARE, base_v), (c, base_v + sign * plen)))
    for u0, u1 in ((0.0, half), (1 - half, 1.0)):
        segments += [((u0, 0.0), (u1, 0.0)), ((u0, 1.0), (u1, 1.0)), ((u0, 0.0), (u0, 1.0)), ((u1, 0.0), (u1, 1.0))]
    if not with_sides:
        segments = segments[48:]
    pts, steps = [], []
    for a, b in segments:
        a, b = np.array(a), np.array(b)
        d = (b - a) / np.linalg.norm(b - a)
        pts.append(a + (b - a) * t)
        steps.append(np.repeat(d[None], len(t), axis=0))
    pts, steps = np.concatenate(pts), np.concatenate(steps)
    normal = np.c_[-steps[:, 1], steps[:, 0]] * 0.006
    sides = _model_labels(
        _Grid(
            *(lambda q: (q[:, 0], q[:, 1], np.c_[q, np.ones(len(q))], (1, len(q))))(np.r_[pts + normal, pts - normal])
        ),
        np.asarray(params, np.float64),
    ).reshape(2, -1)
    contrast = np.linalg.norm(colours[sides[0]] - colours[sides[1]], axis=1)
    keep = np.nan_to_num(contrast, nan=0.0) >= _SNAP_MIN_CONTRAST
    return pts[keep], steps[keep]


def _snap_to_edges(image: np.ndarray, corners: np.ndarray, params: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """The corners moved so that each side of the field lies on the photo's edge there: along each side, where
    the model's regions on either side differ in colour (``_SNAP_MIN_CONTRAST``), the place across the side where
    the photo's colour changes most is looked for; a straight line is fitted to the places found along the side
    (places off it, a checker's rim, left out), and the corners are where the four lines meet; three times,
    nearer each time. A side with too few such places stays; corners that would move further than
    ``_SNAP_MAX_MOVE`` of the field's side stay where they were."""
    h, w = image.shape[:2]
    scale = min(1.0, _SNAP_SIDE_PX / max(h, w))
    small = (
        cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA) if scale < 1 else image
    )
    lab = _lab(small, 0.7)
    gradient = (
        np.concatenate([cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)], axis=2)
        / 8
    )
    floor = float(np.percentile(np.abs(gradient).sum(2), 75))
    start = np.asarray(corners, np.float64) * scale
    current = start.copy()
    s = np.linspace(0.02, 0.98, 64)
    # each side: field units along it, and a step into the field across it
    sides = [
        (np.c_[s, np.zeros_like(s)], (0.0, 1.0)),
        (np.c_[np.ones_like(s), s], (-1.0, 0.0)),
        (np.c_[s, np.ones_like(s)], (0.0, -1.0)),
        (np.c_[np.zeros_like(s), s], (1.0, 0.0)),
    ]
    usable = []
    for pts, into in sides:
        eps = np.array(into) * 0.01
        q = np.r_[pts + eps, pts - eps]
        regions = _model_labels(
            _Grid(q[:, 0], q[:, 1], np.c_[q, np.ones(len(q))], (1, len(q))), np.asarray(params, np.float64)
        ).reshape(2, -1)
        contrast = np.nan_to_num(np.linalg.norm(colours[regions[0]] - colours[regions[1]], axis=1), nan=0.0)
        usable.append(contrast >= _SNAP_MIN_CONTRAST)
    for share in _SNAP_REACH:
        reach = max(2.0, round(2 * share * _side_px(current)) / 2)
        hom = _unit_to_image(current)
        if hom is None:
            return corners
        lines = []
        for (pts, _), ok in zip(sides, usable):
            p = np.c_[pts, np.ones(len(pts))] @ hom.T
            at = p[:, :2] / p[:, 2:3]
            d = at[-1] - at[0]
            normal = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
            line = (at[0], d / max(float(np.linalg.norm(d)), 1e-9))
            if ok.sum() >= 12:
                offsets = np.arange(-reach, reach + 1e-9, 0.5)
                probes = at[ok][:, None, :] + normal[None, None, :] * offsets[None, :, None]
                g = cv2.remap(
                    gradient,
                    probes[..., 0].astype(np.float32),
                    probes[..., 1].astype(np.float32),
                    cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_CONSTANT,
                )
                across = np.abs(g[..., :3] * normal[0] + g[..., 3:] * normal[1]).sum(2)
                best = np.argmax(
                    across * (1 - 0.5 * np.abs(offsets) / reach), axis=1
                )  # of two edges (a frame, a tray), the nearer
                rows = np.arange(len(best))
                good = (best > 0) & (best < len(offsets) - 1) & (across[rows, best] > 2 * floor)
                fitted = _line_through(at[ok][good] + normal * offsets[best[good]][:, None], s[ok][good])
                if fitted is not None:
                    line = fitted
            lines.append(line)
        meets = [_meet(lines[k - 1][0], lines[k - 1][1], lines[k][0], lines[k][1]) for k in range(4)]
        if any(m is None for m in meets):
            return corners
        current = np.array(meets)  # top-left is where the left side (3) meets the top (0), and so on
    if np.linalg.norm(current - start, axis=1).max() > _SNAP_MAX_MOVE * _side_px(start):
        return corners
    return current / scale


def _line_through(points: np.ndarray, along: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A straight line (a point on it, its direction) through ``points`` found along a side (``along``: where, 0..1),
    those more than a px off it left out; None for fewer than 12 spanning less than a third of the side."""
    keep = np.ones(len(points), bool)
    for _ in range(3):
        if keep.sum() < 12 or np.ptp(along[keep]) < 0.33:
            return None
        c = points[keep].mean(0)
        direction = np.linalg.svd(points[keep] - c)[2][0]
        normal = np.array([-direction[1], direction[0]])
        off = np.abs((points - c) @ normal)
        keep = off <= max(1.0, 2.5 * float(np.median(off[keep])))
    if keep.sum() < 12 or np.ptp(along[keep]) < 0.33:
        return None
    return c, direction


def _fit_sides(scorer: _Scorer, corners: np.ndarray, params: np.ndarray) -> np.ndarray:
    """The proportions (bar, margin, point length) that put the model's triangle sides where the photo shows
    the strongest edges across them (:meth:`_Scorer.side_edges`), the corners fixed: each in turn over a
    range about its fit, twice."""
    hom = _unit_to_image(corners)
    if hom is None:
        return params
    best = np.asarray(params, np.float64).copy()
    spans = (0.015, 0.006, 0.03)
    for _ in range(2):
        for i, span in enumerate(spans):
            trials = []
            for x in np.linspace(best[i] - span, best[i] + span, 13):
                p = best.copy()
                p[i] = min(_PARAM_HI[i], max(_PARAM_LO[i], x))
                trials.append((scorer.side_edges(hom, p), -abs(x - best[i]), p))
            best = max(trials, key=lambda t: (t[0], t[1]))[2]
    return best


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
