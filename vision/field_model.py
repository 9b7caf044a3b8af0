"""The playing field's model, and its fit to a photo: what :func:`vision.find_board.find_field` lays over it.

Owns the model (two rows of twelve triangles in alternating colours, split by the bar, margins at
the ends, the frame band around: :data:`REGIONS`, :func:`model_labels`) laid over a photo through a
homography from field units (:func:`unit_to_image`), its score (:class:`Scorer`), the field's
aspect from its corners' perspective (:func:`field_aspect`) and the pattern search that fits it
(:func:`refine`). Imports nothing of ours; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

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


def _median(a: np.ndarray) -> float:
    """``np.median`` of a flat array, by partition (a tenth of the cost on a few hundred values)."""
    n = len(a)
    h = n // 2
    if n % 2:
        return float(np.partition(a, h)[h])
    part = np.partition(a, (h - 1, h))
    return float((part[h - 1] + part[h]) / 2)


def unit_to_image(corners: np.ndarray) -> np.ndarray | None:
    """The homography from field units (u, v in 0..1) to image px, or None for corners that bound no convex quadrilateral."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    d = c[[1, 2, 3, 0]] - c
    e = d[[1, 2, 3, 0]]
    turns = d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0]
    if not (np.all(turns > 0) or np.all(turns < 0)):
        return None
    return cv2.getPerspectiveTransform(UNIT, np.float32(c)).astype(np.float64)


class Scorer:
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
        hom = unit_to_image(corners)
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
        """The triangle sides' samples (:func:`_side_samples`) in homogeneous field units: (sides, samples, 3)."""
        key = tuple(float(v) for v in params)
        if self._sides is None or self._sides[0] != key:
            pts = _side_samples(params)
            self._sides = (key, np.concatenate([pts, np.ones(pts.shape[:2] + (1,))], axis=2))
        return self._sides[1]

    def side_edges(self, hom: np.ndarray, params: np.ndarray) -> float:
        """How strongly the photo shows an edge along the model's triangle sides, across them: the median
        over the sides' samples, over the photo's strong edges (its 90th percentile)."""
        pts = self.sides(params)  # (sides, samples, 3) in homogeneous field units
        k, m = pts.shape[:2]
        p = pts.reshape(-1, 3) @ hom.T
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
        return _median(across.ravel()) / self.strong

    def onehot(self, params: np.ndarray) -> np.ndarray:
        """The model's region of each sample, one-hot: (samples, regions)."""
        key = tuple(float(v) for v in params)
        if self._labels is None or self._labels[0] != key:
            labels = model_labels(self.grid, params)
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
        hom = unit_to_image(corners)
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
                    p2[i] = min(PARAM_HI[i], max(PARAM_LO[i], p2[i] + sign * _PARAM_STEPS[i] * scale))
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
