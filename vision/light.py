"""The light across a board: how much brighter or dimmer each place of the field is lit than the field as a whole.

A lamp or a window lights one row of a real board more than the other; a white checker in the dim
row can then be darker than a black one in the lit row, and checkers told apart by colour across the
board swap sides. The field's own colour is the same everywhere, so where it shows (between the
triangles and between the rows, clear of the checkers and dice) its lightness is the light there.
:class:`LightMap` holds that light and evens colours by it. Must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.view import View

CHECKER_COVER = 0.6  # a checker seen hides the field this many of its diameters from its centre (its side too)
L_OFFSET = 16 * 255 / 100  # CIE L*'s 16, in OpenCV's 8-bit L: L* + 16 scales with the light as a, b do
_STEP_MM = 2.0  # the map's resolution
_CELL_MM = 20.0  # the field's light is the median of its px in cells this wide...
_MIN_CELL_SHARE = 0.2  # ...that show at least this share of field
_SPREAD_CELLS = 1.5  # what cells add to the smooth light spreads this many cells (a Gaussian's sigma)...
_SPREAD_REACH = 0.3  # ...fully where its cells weigh this much, fading beyond
_MIN_FIT_CELLS = 12  # cells to fit the smooth light to
_BEYOND_CELLS = 0.25  # the smooth light goes beyond the cells' range by at most this share of it
_EDGE_MM = 3.0  # the field this near a triangle, the bar or the field's edge is not taken (stitches, shadows)
_OUTLIER_SCALES = 3.0  # a cell this many robust deviations from the smooth light is the field's drawing...
_MIN_RESIDUAL = 0.02  # ...never nearer than three of these
_RATIO_RANGE = (0.4, 2.5)  # no place is lit further from the field's median than this


def _trend(cells: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The smooth light over the cells (a quadratic over the board fitted to the cells ``weight`` marks, those
    far from it left out and fitted again: a logo or a mat's pattern is not the light) at every cell, and
    the cells it kept. With too few cells to fit, their median everywhere."""
    ys, xs = np.nonzero(weight)
    flat = np.full(cells.shape, float(np.median(cells[ys, xs])), np.float32)
    if len(xs) < _MIN_FIT_CELLS:
        return flat, weight
    gh, gw = cells.shape

    def terms(xs, ys):
        u, v = xs / max(gw - 1, 1) - 0.5, ys / max(gh - 1, 1) - 0.5
        return np.c_[np.ones_like(u), u, v, u * u, u * v, v * v]

    design, values = terms(xs, ys), cells[ys, xs]
    keep = np.ones(len(xs), bool)
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(design[keep], values[keep], rcond=None)
        resid = np.abs(values - design @ coef)
        scale = max(_MIN_RESIDUAL, 1.4826 * float(np.median(resid[keep])))
        keep = resid <= _OUTLIER_SCALES * scale
        if keep.sum() < _MIN_FIT_CELLS:
            return flat, weight
    gy, gx = np.mgrid[0:gh, 0:gw]
    trend = (terms(gx.ravel().astype(np.float64), gy.ravel().astype(np.float64)) @ coef).reshape(gh, gw)
    kept = np.zeros_like(weight)
    kept[ys[keep], xs[keep]] = 1.0
    # little darker or brighter than a cell kept: a quadratic carried to a corner the field hardly shows overshoots
    lo, hi = float(values[keep].min()), float(values[keep].max())
    trend = np.clip(trend, lo - _BEYOND_CELLS * (hi - lo), hi + _BEYOND_CELLS * (hi - lo))
    return trend.astype(np.float32), kept


@dataclass(frozen=True)
class LightMap:
    """Each place's light relative to the field's median (a ratio of L* + 16), sampled every ``step_mm``
    board mm (rows down, columns across)."""

    ratio: np.ndarray
    step_mm: float = _STEP_MM

    def at(self, points_mm) -> np.ndarray:
        """The light's ratio at board-mm points (N x 2 -> N floats); the nearest sample beyond the map."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 2) / self.step_mm
        h, w = self.ratio.shape
        xs = np.clip(np.round(pts[:, 0] - 0.5).astype(int), 0, w - 1)
        ys = np.clip(np.round(pts[:, 1] - 0.5).astype(int), 0, h - 1)
        return self.ratio[ys, xs].astype(np.float32)


def even(lab, ratio) -> np.ndarray:
    """Lab colours (``..., 3``, OpenCV's 8-bit scale) as they would be in the field's median light, each
    divided by its place's ``ratio`` (broadcast against ``lab``'s leading axes): L* + 16, a and b scale
    alike with the light. Returns float32."""
    lab = np.asarray(lab, np.float32)
    r = np.asarray(ratio, np.float32)[..., None]
    out = np.empty_like(lab)
    out[..., 0] = (lab[..., 0] + L_OFFSET) / r[..., 0] - L_OFFSET
    out[..., 1:] = 128 + (lab[..., 1:] - 128) / r
    return out


def light_map(v: View, covered: Sequence[tuple[float, float, float]] = ()) -> LightMap | None:
    """The light over a view's field, from the field's px between the triangles and between the rows,
    less the discs ``covered`` (x, y, radius in board mm: the checkers and dice seen). Taken in cells
    by their medians, so a stitch or a die missed moves no cell far; a smooth light fitted to the cells
    (:func:`_trend`, a logo left out) reaches the triangles and the stacks, and what the cells add to it
    stays near them. None where too little field shows to tell (a board of points alone)."""
    lay = v.layout
    s = 1.0 / _STEP_MM
    rows, cols = v.lab.shape[:2]
    h, w = max(1, int(rows / v.ppm * s)), max(1, int(cols / v.ppm * s))
    lum = cv2.resize(v.lab[..., 0], (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    mask = np.zeros((h, w), np.uint8)
    e = _EDGE_MM * s
    x0, y0, x1, y1 = (c * s for c in lay.field)
    cv2.rectangle(mask, (round(x0 + e), round(y0 + e)), (round(x1 - e) - 1, round(y1 - e) - 1), 1, -1)
    bx0, _, bx1, _ = lay.geometry.bar
    cv2.rectangle(mask, (round(bx0 * s - e), 0), (round(bx1 * s + e), h), 0, -1)
    thick = max(1, round(2 * e))
    for p in lay.geometry.points:
        tri = np.round(np.array([(p.x0, p.base_y), (p.x1, p.base_y), (p.centre_x, p.tip_y)]) * s).astype(np.int32)
        cv2.fillConvexPoly(mask, tri, 0)
        cv2.polylines(mask, [tri], True, 0, thick)
    for x, y, r in covered:
        cv2.circle(mask, (round(x * s), round(y * s)), int(np.ceil(r * s + e)), 0, -1)
    seen = mask.astype(bool)
    if seen.sum() < 4 * (_CELL_MM * s) ** 2:
        return None
    median = float(np.median(lum[seen]))
    ratio = (lum + L_OFFSET) / (median + L_OFFSET)
    cell = max(1, round(_CELL_MM * s))
    gh, gw = -(-h // cell), -(-w // cell)
    cells = np.zeros((gh, gw), np.float32)
    weight = np.zeros((gh, gw), np.float32)
    for i in range(gh):
        for j in range(gw):
            m = seen[i * cell : (i + 1) * cell, j * cell : (j + 1) * cell]
            if m.mean() >= _MIN_CELL_SHARE:
                cells[i, j] = np.median(ratio[i * cell : (i + 1) * cell, j * cell : (j + 1) * cell][m])
                weight[i, j] = 1.0
    if not weight.any():
        return None
    trend, weight = _trend(cells, weight)
    # the trend reaches the stacks and the points' bases; what the cells add to it (a shadow's edge) stays near them
    num = cv2.GaussianBlur((cells - trend) * weight, (0, 0), _SPREAD_CELLS, borderType=cv2.BORDER_CONSTANT)
    den = cv2.GaussianBlur(weight, (0, 0), _SPREAD_CELLS, borderType=cv2.BORDER_CONSTANT)
    spread = trend + num / np.maximum(den, _SPREAD_REACH)
    smooth = cv2.resize(spread.astype(np.float32), (gw * cell, gh * cell), interpolation=cv2.INTER_LINEAR)[:h, :w]
    return LightMap(np.clip(smooth, *_RATIO_RANGE).astype(np.float32))
