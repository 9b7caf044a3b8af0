"""The playing field's model, and its fit to a photo: what :func:`vision.find_board.find_field` lays over it.

Owns the model (two rows of twelve triangles in alternating colours, split by the bar, margins at
the ends, the frame band around: :data:`REGIONS`, :func:`model_labels`) laid over a photo through a
homography from field units (:func:`unit_to_image`), its score (:class:`Scorer`), the field's
aspect from its corners' perspective (:func:`field_aspect`) and the pattern search that fits it
(:func:`refine`). The score is compiled (``vision/_fieldscore.c``, the same scores to about 1e-13) where
it was built, numpy where not. Imports nothing of ours but that; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

try:
    if os.environ.get("TAVLI_PURE_PYTHON"):
        raise ImportError("TAVLI_PURE_PYTHON is set")
    from vision import _fieldscore as _compiled
except ImportError:
    _compiled = None

_OUT = 0.04  # the frame band around the field in the model, a fraction of the field's width and height
UNIT = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])


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
PARAM_LO = np.array([0.0, 0.0, 0.25])
PARAM_HI = np.array([0.2, 0.05, 0.49])
PARAM_START = np.array([0.08, 0.005, 0.42])
_PARAM_STEPS = np.array([0.012, 0.004, 0.03])  # the proportions' first steps in the fit
_TIP_SHARE = 0.96  # a triangle's base spans this share of its point's width


@dataclass(frozen=True, slots=True)
class Grid:
    """Sample places of the model in field units (u along the rows, v across), frame band included."""

    u: np.ndarray
    v: np.ndarray
    homogeneous: np.ndarray  # (N, 3)
    shape: tuple[int, int]


@lru_cache(maxsize=4)
def _grid(nu: int, nv: int) -> Grid:
    us = (np.arange(nu) + 0.5) / nu * (1 + 2 * _OUT) - _OUT
    vs = (np.arange(nv) + 0.5) / nv * (1 + 2 * _OUT) - _OUT
    u, v = np.meshgrid(us, vs)
    return Grid(u.ravel(), v.ravel(), np.c_[u.ravel(), v.ravel(), np.ones(u.size)], (nv, nu))


def model_labels(grid: Grid, params: np.ndarray) -> np.ndarray:
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


def _prior(aspects: np.ndarray, params: np.ndarray) -> np.ndarray:
    """How plausible fits' proportions are, 0..1: each field's aspect (of ``aspects``), and its points' length
    over their width."""
    bar, margin, plen = (float(v) for v in params)
    point = 12 * plen / np.maximum(aspects * (1 - bar - 4 * margin), 1e-9)
    off = np.maximum(0.0, np.maximum(_ASPECT_LO - aspects, aspects - _ASPECT_HI)) / _ASPECT_FALLOFF
    off_point = np.maximum(0.0, np.maximum(_POINT_LO - point, point - _POINT_HI)) / _POINT_FALLOFF
    return np.exp(-(off**2) - off_point**2)


# both rows of points stand out from the field: the fainter at least this share of the other, or the fit pays in proportion
_MIN_BALANCE = 0.3


def field_aspect(hom: np.ndarray, size: tuple[int, int]) -> float:
    """The width over the height, on the board, of the rectangle that the homography ``hom`` (field units
    to image px) maps to the photo, for a camera with square pixels looking through the image centre.
    Its focal length comes from the vanishing points of both pairs of the rectangle's sides where both
    pairs converge (by ``_MIN_CONVERGE``), kept within a plausible range of the image's diagonal; else
    (a view straight on, or tilted one way only) it is taken as ``_FOCAL_DEFAULT`` times the diagonal."""
    return float(_aspects(np.asarray(hom, np.float64)[None], size)[0])


def _aspects(homs: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """:func:`field_aspect` of each of a stack of homographies ``(T, 3, 3)``."""
    w, h = size
    diag = math.hypot(w, h)
    t = np.array([[1.0, 0.0, -w / 2], [0.0, 1.0, -h / 2], [0.0, 0.0, 1.0]]) @ homs
    h1, h2 = t[:, :, 0], t[:, :, 1]
    # how far each pair of opposite sides converges: the third coordinate's share of the vanishing point
    converge = np.minimum(*(np.abs(v[:, 2]) * diag / np.maximum(np.hypot(v[:, 0], v[:, 1]), 1e-12) for v in (h1, h2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        est = -(h1[:, 0] * h2[:, 0] + h1[:, 1] * h2[:, 1]) / (h1[:, 2] * h2[:, 2])
    f2 = np.where(
        (converge > _MIN_CONVERGE) & (est > 0),
        np.clip(np.nan_to_num(est), (_FOCAL_LO * diag) ** 2, (_FOCAL_HI * diag) ** 2),
        (diag * _FOCAL_DEFAULT) ** 2,
    )
    a = np.sqrt((h1[:, 0] ** 2 + h1[:, 1] ** 2) / f2 + h1[:, 2] ** 2)
    b = np.sqrt((h2[:, 0] ** 2 + h2[:, 1] ** 2) / f2 + h2[:, 2] ** 2)
    return a / np.maximum(b, 1e-12)


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


def _medians(a: np.ndarray) -> np.ndarray:
    """``np.median`` of each row of ``a``, by partition (a tenth of the cost on a few hundred values)."""
    n = a.shape[1]
    h = n // 2
    if n % 2:
        return np.partition(a, h, axis=1)[:, h]
    part = np.partition(a, (h - 1, h), axis=1)
    return (part[:, h - 1] + part[:, h]) / 2


def unit_to_image(corners: np.ndarray) -> np.ndarray | None:
    """The homography from field units (u, v in 0..1) to image px, or None for corners that bound no convex quadrilateral."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    d = c[[1, 2, 3, 0]] - c
    e = d[[1, 2, 3, 0]]
    turns = d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0]
    if not (np.all(turns > 0) or np.all(turns < 0)):
        return None
    return cv2.getPerspectiveTransform(UNIT, np.float32(c)).astype(np.float64)


def _homographies(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The homographies from field units to image px of a stack of corners ``(T, 4, 2)``, and which of them
    bound a convex quadrilateral (the others' homographies are the identity). The corners are taken in
    single precision, as :func:`unit_to_image` hands them to OpenCV; the square-to-quadrilateral map
    is solved in closed form, so a stack costs what one does."""
    c = np.asarray(corners, np.float32).astype(np.float64)
    d = np.roll(c, -1, axis=1) - c
    e = np.roll(d, -1, axis=1)
    turns = d[..., 0] * e[..., 1] - d[..., 1] * e[..., 0]
    convex = np.all(turns > 0, axis=1) | np.all(turns < 0, axis=1)
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = (c[:, k].T for k in range(4))
    dx1, dx2, dx3 = x1 - x2, x3 - x2, x0 - x1 + x2 - x3
    dy1, dy2, dy3 = y1 - y2, y3 - y2, y0 - y1 + y2 - y3
    den = dx1 * dy2 - dx2 * dy1
    convex &= np.abs(den) > 1e-12
    den = np.where(convex, den, 1.0)
    g = (dx3 * dy2 - dx2 * dy3) / den
    h = (dx1 * dy3 - dx3 * dy1) / den
    homs = np.stack(
        [x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h, np.ones_like(g)], 1
    ).reshape(-1, 3, 3)
    homs[~convex] = np.eye(3)
    return homs, convex


_MODELS_KEPT = 16  # how many proportions' models (regions, triangle sides) a Scorer keeps


class Scorer:
    """How much of a work image's colour the field model explains, laid over it at given corners."""

    def __init__(self, lab: np.ndarray, nu: int, nv: int, noise: float = 20.0) -> None:
        self.lab = np.ascontiguousarray(lab, np.float32)
        self.grid = _grid(nu, nv)
        self._uv = np.ascontiguousarray(np.c_[self.grid.u, self.grid.v], np.float64)
        self.noise = noise
        # per proportions: the model's regions and its triangle sides' samples,
        # the last few kept (a pattern search tries the same proportions again after each move of the corners)
        self._by_params: OrderedDict[tuple[float, ...], tuple[np.ndarray, np.ndarray, np.ndarray | None]] = (
            OrderedDict()
        )
        self.evaluations = 0
        gx = cv2.Sobel(self.lab, cv2.CV_32F, 1, 0, ksize=3) / 8
        gy = cv2.Sobel(self.lab, cv2.CV_32F, 0, 1, ksize=3) / 8
        # the colour gradient's structure tensor: across a direction n, the change is sqrt(n' J n)
        self.tensor = np.ascontiguousarray(np.dstack([(gx * gx).sum(2), (gx * gy).sum(2), (gy * gy).sum(2)]))
        strength = np.sqrt(self.tensor[..., 0] + self.tensor[..., 2])
        self.strong = max(float(np.percentile(strength, 90)), 1.0)
        # what the compiled scores take of this module's constants, in its order (vision/_fieldscore.c)
        self._constants = np.array(
            [noise, self.strong, _ASPECT_LO, _ASPECT_HI, _ASPECT_FALLOFF, _POINT_LO, _POINT_HI, _POINT_FALLOFF]
            + [_FOCAL_LO, _FOCAL_HI, _FOCAL_DEFAULT, _MIN_CONVERGE, _MIN_BALANCE, _SIDE_EDGES_MAX]
            + [_TOP_EVEN, _TOP_ODD, _BACK_TOP, _BOTTOM_EVEN, _BOTTOM_ODD, _BACK_BOTTOM],
            np.float64,
        )

    def region_colours(self, corners: np.ndarray, params: np.ndarray) -> np.ndarray:
        """The mean Lab colour of each of the model's regions at ``corners`` (``_REGIONS`` x 3; NaN for a region with no sample in the photo)."""
        homs, ok = _homographies(np.asarray(corners, np.float64).reshape(1, 4, 2))
        stats, _, ok = self._region_stats(homs, ok, params)
        if not ok[0]:
            return np.full((_REGIONS, 3), np.nan)
        sums, counts = stats[0, :3].T, stats[0, 3]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts[:, None] > 0, sums / counts[:, None], np.nan)

    def _region_stats(
        self, homs: np.ndarray, ok: np.ndarray, params: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per homography ``(T, 3, 3)``: the sums per model region (``(T, 5, regions)``: the Lab channels,
        the count, the sum of squares) over the samples that fall inside the photo, how many do, and
        ``ok`` where every sample lies in front of the camera. The photo's colour at a sample is
        OpenCV's bilinear read."""
        trials = len(homs)
        h, w = self.lab.shape[:2]
        p = self.grid.homogeneous @ homs.transpose(0, 2, 1)  # (T, samples, 3)
        z = p[..., 2]
        ok = ok & (z.min(axis=1) > 1e-9)
        z = np.where(ok[:, None], z, 1.0)
        xs = (p[..., 0] / z).astype(np.float32)
        ys = (p[..., 1] / z).astype(np.float32)
        inside = (xs >= 0) & (xs <= w - 1) & (ys >= 0) & (ys <= h - 1) & ok[:, None]
        xs[~ok] = 0.0
        ys[~ok] = 0.0
        x = cv2.remap(self.lab, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)  # (T, samples, 3)
        x = np.ascontiguousarray(x.transpose(0, 2, 1), np.float64)  # (T, channels, samples): far faster to work on
        weight = inside.astype(np.float64)
        rows = np.empty((trials, 5, xs.shape[1]))
        rows[:, :3] = x * weight[:, None]
        rows[:, 3] = weight
        rows[:, 4] = (x[:, 0] * x[:, 0] + x[:, 1] * x[:, 1] + x[:, 2] * x[:, 2]) * weight
        return rows @ self.onehot(params), inside.sum(axis=1).astype(np.float64), ok

    def sides(self, params: np.ndarray) -> np.ndarray:
        """The triangle sides' samples (:func:`_side_samples`) in homogeneous field units: (sides, samples, 3)."""
        return self._model(params)[1]

    def _model(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The model's region of each sample, its triangle sides' samples (homogeneous) and, where the numpy
        scores (no compiled module), the regions one-hot, for ``params``."""
        key = tuple(float(v) for v in params)
        model = self._by_params.get(key)
        if model is None:
            pts = _side_samples(params)
            sides = np.concatenate([pts, np.ones(pts.shape[:2] + (1,))], axis=2)
            labels = model_labels(self.grid, params).astype(np.uint8)
            model = (labels, sides, None if _compiled is not None else np.eye(_REGIONS)[labels])
            self._by_params[key] = model
            if len(self._by_params) > _MODELS_KEPT:
                self._by_params.popitem(last=False)
        else:
            self._by_params.move_to_end(key)
        return model

    def side_edges(self, hom: np.ndarray, params: np.ndarray) -> float:
        """How strongly the photo shows an edge along the model's triangle sides, across them: the median
        over the sides' samples, over the photo's strong edges (its 90th percentile)."""
        return float(self._side_edges(np.asarray(hom, np.float64)[None], params)[0])

    def _side_edges(self, homs: np.ndarray, params: np.ndarray) -> np.ndarray:
        """:meth:`side_edges` through each of a stack of homographies ``(T, 3, 3)``."""
        pts = self.sides(params)  # (sides, samples, 3) in homogeneous field units
        k, m = pts.shape[:2]
        p = pts.reshape(-1, 3) @ homs.transpose(0, 2, 1)  # (T, sides * samples, 3)
        xy = p[..., :2] / p[..., 2:3]
        ends = xy.reshape(len(homs), k, m, 2)
        d = ends[:, :, -1] - ends[:, :, 0]
        normal = np.stack([-d[..., 1], d[..., 0]], -1) / np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-9)
        t = cv2.remap(
            self.tensor,
            xy[..., 0].astype(np.float32),
            xy[..., 1].astype(np.float32),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
        ).reshape(len(homs), k, m, 3)
        nx, ny = normal[..., None, 0], normal[..., None, 1]
        across = np.sqrt(np.maximum(nx * nx * t[..., 0] + 2 * nx * ny * t[..., 1] + ny * ny * t[..., 2], 0.0))
        return _medians(across.reshape(len(homs), -1)) / self.strong

    def onehot(self, params: np.ndarray) -> np.ndarray:
        """The model's region of each sample, one-hot: (samples, regions)."""
        labels, _, onehot = self._model(params)
        return onehot if onehot is not None else np.eye(_REGIONS)[labels]

    def score(self, corners: np.ndarray, params: np.ndarray) -> float:
        """How well the field model fits the photo at ``corners`` with proportions ``params`` (higher is
        better; -1 for corners that bound no field). The model's regions' share of the colour variance
        of its samples (a noise floor added to the total, so that a plain area explains nothing), times:
        the root of the share of samples inside the photo; the plausibility of the proportions
        (:func:`_prior`); the balance of the two rows of points (the fainter standing out from the field
        at least ``_MIN_BALANCE`` as much as the other, or in proportion); and the root of the edge
        across the triangles' sides (:meth:`side_edges`)."""
        return float(self.scores(np.asarray(corners, np.float64)[None], params)[0])

    def scores(self, corners: np.ndarray, params: np.ndarray) -> np.ndarray:
        """:meth:`score` of each of a stack of corners ``(T, 4, 2)``, all with proportions ``params``: one
        pass over all of them, each scored as it would be alone."""
        corners = np.ascontiguousarray(corners, np.float64).reshape(-1, 4, 2)
        trials = len(corners)
        self.evaluations += trials
        if _compiled is not None:  # the same scores, about 1e-13 apart
            out = np.empty(trials)
            labels, sides, _ = self._model(params)
            h, w = self.lab.shape[:2]
            flat = sides.reshape(-1, 3)
            here = np.ascontiguousarray(params, np.float64)
            args = (self.lab, self.tensor, h, w, self._uv, labels, _REGIONS, flat, sides.shape[1], corners, here)
            _compiled.scores(*args, self._constants, out)
            return out
        homs, ok = _homographies(corners)
        stats, n, ok = self._region_stats(homs, ok, params)
        samples = len(self.grid.u)
        ok &= n >= 0.3 * samples
        if not ok.any():
            return np.full(trials, -1.0)
        h, w = self.lab.shape[:2]
        sums, counts, squares = stats[:, :3], stats[:, 3], stats[:, 4]
        n_in = np.maximum(counts.sum(axis=1), 1e-9)
        total_sum = sums.sum(axis=2)
        safe = np.maximum(counts, 1e-9)[:, None]
        between = (sums**2 / safe).sum(axis=(1, 2)) - (total_sum**2).sum(axis=1) / n_in
        total = squares.sum(axis=1) - (total_sum**2).sum(axis=1) / n_in
        means = sums / safe
        shown = []  # how far each row's points stand out from the field beside them, per sample of its band
        for points, back in (((_TOP_EVEN, _TOP_ODD), _BACK_TOP), ((_BOTTOM_EVEN, _BOTTOM_ODD), _BACK_BOTTOM)):
            contrast = sum(counts[:, k] * ((means[:, :, k] - means[:, :, back]) ** 2).sum(axis=1) for k in points)
            shown.append(contrast / np.maximum(counts[:, points[0]] + counts[:, points[1]] + counts[:, back], 1.0))
        balance = np.minimum(*shown) / np.maximum(np.maximum(*shown), 1e-9)
        prior = _prior(_aspects(homs, (w, h)), params)
        sides = np.sqrt(np.minimum(self._side_edges(homs, params), _SIDE_EDGES_MAX))
        fit = (
            between
            / (total + self.noise * n_in)
            * np.sqrt(n / samples)
            * prior
            * np.minimum(1.0, balance / _MIN_BALANCE)
            * sides
        )
        return np.where(ok, fit, -1.0)


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


def refine(
    scorer: Scorer,
    corners: np.ndarray,
    params: np.ndarray,
    step_px: float,
    min_step_px: float,
    fixed_corners: bool = False,
    max_sweeps: int = 300,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Pattern search over the corners (unless ``fixed_corners``) and the proportions, from steps of
    ``step_px`` (the proportions' own steps alongside) halved down to ``min_step_px``.

    Each sweep tries the moves in turn, each forward then back (both scored in one pass: the compiled
    scores cost little more for two), and takes every one that scores better than the fit so far."""
    c = np.asarray(corners, np.float64).ravel().copy()
    p = np.asarray(params, np.float64).copy()
    best = scorer.score(c.reshape(4, 2), p)
    scale = 1.0
    sweeps = 0
    while step_px * scale >= min_step_px and sweeps < max_sweeps:
        improved = False
        moves = np.zeros((0, 8)) if fixed_corners else _moves(c) * step_px * scale
        for move in moves:
            both = np.stack([c + move, c - move])
            forward, back = scorer.scores(both.reshape(2, 4, 2), p)
            if forward > best or back > best:
                k = 0 if forward > best else 1
                c, best, improved = both[k], float((forward, back)[k]), True
        for i in range(3):
            for sign in (1.0, -1.0):
                p2 = p.copy()
                p2[i] = min(PARAM_HI[i], max(PARAM_LO[i], p2[i] + sign * _PARAM_STEPS[i] * scale))
                if p2[i] == p[i]:
                    continue
                s = scorer.score(c.reshape(4, 2), p2)
                if s > best:
                    p, best, improved = p2, s, True
                    break
        sweeps += 1
        if not improved:
            scale /= 2
    return c.reshape(4, 2), p, best


def meet(p1: np.ndarray, d1: np.ndarray, p2: np.ndarray, d2: np.ndarray) -> np.ndarray | None:
    """Where the line through ``p1`` along ``d1`` meets the one through ``p2`` along ``d2`` (None if parallel)."""
    a = np.array([d1, -d2]).T
    if abs(np.linalg.det(a)) < 1e-9:
        return None
    s = np.linalg.solve(a, p2 - p1)
    return p1 + s[0] * d1


def lab_of(bgr: np.ndarray, blur: float) -> np.ndarray:
    return cv2.cvtColor(cv2.GaussianBlur(bgr, (0, 0), blur) if blur > 0 else bgr, cv2.COLOR_BGR2LAB).astype(np.float32)


def side_px(corners: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)))
