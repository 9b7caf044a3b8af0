"""Rims: where a board layout's checkers show the rims of their tops, worked out once per layout.

Owns the stack models of the points: players stack checkers in a known way
(:meth:`vision.profile.Layout.checker_slot`: a row along the point from its base, then shorter
layers), so each stack height (plain, or on a pinned checker) predicts which rim samples of the
point's slots show a rim (:func:`stacked_samples`); samples on the board's own drawing are not used.
Also the rim samples along the bar (:func:`bar_samples`) and where a real board's drawing shows
(:func:`quiet_mask`). May import ``board_rules`` types; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from vision import profile
from vision.profile import DEFAULT_PROFILE, Layout

MAX_STACK = 15
ANGLES = 48  # rim samples round a checker


def _static_labels(lay: Layout, w: int, h: int) -> np.ndarray:
    """A label per px of an ``h`` x ``w`` map of the board at ``_LABEL_PPM`` (px centres) for the
    layout's own drawing: 1..24 inside a point's triangle, 30 field, 31 bar, 32 tray, 0 frame."""
    g, (_, fy0, _, fy1) = lay.geometry, lay.field
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    x, y = (xs + 0.5) / _LABEL_PPM, (ys + 0.5) / _LABEL_PPM
    lab = np.zeros(x.shape, np.int32)
    inside_field = (y >= fy0) & (y < fy1)
    lab[
        inside_field
        & (((x >= g.left_half[0]) & (x < g.left_half[2])) | ((x >= g.right_half[0]) & (x < g.right_half[2])))
    ] = 30
    lab[inside_field & (x >= g.bar[0]) & (x < g.bar[2])] = 31
    lab[inside_field & (x >= g.tray_white[0]) & (x < g.tray_white[2])] = 32
    for p in g.points:
        ax, ay, bx, by, cx, cy = p.x0 + 1, p.base_y, p.x1 - 1, p.base_y, p.centre_x, p.tip_y
        # only the px of the triangle's bounding box (and two around it) can be in it
        i0, i1 = (int(np.clip(v * _LABEL_PPM + d, 0, w)) for v, d in ((min(ax, bx, cx), -2), (max(ax, bx, cx), 2)))
        j0, j1 = (int(np.clip(v * _LABEL_PPM + d, 0, h)) for v, d in ((min(ay, by, cy), -2), (max(ay, by, cy), 2)))
        px, py = x[j0:j1, i0:i1], y[j0:j1, i0:i1]
        d1 = (px - bx) * (ay - by) - (ax - bx) * (py - by)
        d2 = (px - cx) * (by - cy) - (bx - cx) * (py - cy)
        d3 = (px - ax) * (cy - ay) - (cx - ax) * (py - ay)
        neg = (d1 < 0) | (d2 < 0) | (d3 < 0)
        pos = (d1 > 0) | (d2 > 0) | (d3 > 0)
        lab[j0:j1, i0:i1][~(neg & pos)] = p.number
    return lab


_RIM_INSET_MM = 0.6  # the rim's dark or light ring, just inside the checker's edge
_RIM_TOLERANCE_MM = 1.0
_STATIC_CLEARANCE_MM = 2.0
_ANG = np.linspace(0, 2 * np.pi, ANGLES, endpoint=False)
_UNIT = np.c_[np.cos(_ANG), np.sin(_ANG)]
_LABEL_PPM = 4.0


def _rim_mm(lay: Layout) -> float:
    return lay.profile.checker_diameter_mm / 2 - _RIM_INSET_MM


@lru_cache(maxsize=8)
def _clearance(lay: Layout) -> np.ndarray:
    """Distance (board mm) from each board location (at ``_LABEL_PPM``) to the nearest edge of the layout's own drawing."""
    w, h = int(lay.geometry.width * _LABEL_PPM), int(lay.geometry.height * _LABEL_PPM)
    labels = _static_labels(lay, w, h)
    edge = np.zeros((h, w), bool)
    edge[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    edge[1:, :] |= labels[1:, :] != labels[:-1, :]
    return cv2.distanceTransform((~edge).astype(np.uint8), cv2.DIST_L2, 5) / _LABEL_PPM


def mask_at(mask: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    """Values of a ``_LABEL_PPM`` board map (clearance, quiet) at board-mm points."""
    ix = np.clip((pts_mm * _LABEL_PPM).astype(int), 0, [mask.shape[1] - 1, mask.shape[0] - 1])
    return mask[ix[..., 1], ix[..., 0]]


def _stack_model(lay: Layout, point: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rim samples of a point's slots: positions (N x 2 mm), whether each is clear of the board's
    own edges (N), and ``pred[h]``: whether hypothesis ``h`` shows a rim there (``_HYPOTHESES`` x N).

    Hypothesis ``n`` (0..15) is a plain stack of ``n``; ``16 + n - 1`` is a stack of ``n`` on a
    pinned checker (plakoto): the pinned one in the first slot, the stack shifted ``PIN_SHIFT_MM``
    along the point on top of it.
    """
    rim, diameter = _rim_mm(lay), lay.profile.checker_diameter_mm
    tops = np.array([lay.checker_top(point, k) for k in range(MAX_STACK)], dtype=np.float64)
    centres, scales = tops[:, :2], tops[:, 2]  # where the camera sees each slot's top, and its size there
    direction = lay.geometry.points[point - 1].direction
    shifted = centres + np.array([0.0, direction * PIN_SHIFT_MM])
    rims = np.concatenate([centres, shifted[: MAX_STACK - 1]])
    rim_scales = np.concatenate([scales, scales[: MAX_STACK - 1]])
    samples = (rims[:, None, :] + (rim * rim_scales)[:, None, None] * _UNIT[None]).reshape(-1, 2)
    valid = mask_at(_clearance(lay), samples) > _STATIC_CLEARANCE_MM

    def shows(stack: np.ndarray, size: np.ndarray) -> np.ndarray:
        """For a stack (bottom first; each top's size), where its visible rims lie among the samples."""
        dist = np.hypot(*(samples[:, None, :] - stack[None, :, :]).transpose(2, 0, 1))
        on_rim = np.abs(dist - rim * size[None, :]) < _RIM_TOLERANCE_MM
        inside = dist < (diameter / 2 - 0.3) * size[None, :]
        covered_above = np.zeros_like(inside)  # covered_above[:, k]: inside some disc above k
        for k in range(len(stack) - 2, -1, -1):
            covered_above[:, k] = covered_above[:, k + 1] | inside[:, k + 1]
        return (on_rim & ~covered_above).any(axis=1)

    if lay.eye is not None:  # a checker seen standing up shows its underside's rim too, where its top does not hide it
        discs = np.empty((2 * MAX_STACK, 3))
        discs[0::2] = [lay.checker_foot(point, k) for k in range(MAX_STACK)]
        discs[1::2] = tops

        def stack_of(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            d = discs[np.ravel(np.c_[2 * k, 2 * k + 1])]
            return d[:, :2], d[:, 2]
    else:

        def stack_of(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return centres[k], scales[k]

    pred = np.zeros((_HYPOTHESES, len(samples)), bool)
    for n in range(1, MAX_STACK + 1):
        pred[n] = shows(*stack_of(np.arange(n)))
        if n < MAX_STACK:
            pred[MAX_STACK + n] = shows(
                np.concatenate([centres[:1], shifted[:n]]), np.concatenate([scales[:1], scales[:n]])
            )
    return samples, valid, pred


PIN_SHIFT_MM = 6.0  # a checker pinning another sits this much further along the point
_HYPOTHESES = 2 * MAX_STACK  # 0..15 plain, then 1..14 on a pinned checker


def hypothesis(h: int) -> tuple[int, bool]:
    """``(checkers seen on top, whether one is pinned under them)`` of hypothesis ``h``."""
    return (h, False) if h <= MAX_STACK else (h - MAX_STACK, True)


@lru_cache(maxsize=8)
def _models(lay: Layout) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """:func:`_stack_model` of points 1..24 of a layout, built once."""
    return tuple(_stack_model(lay, p) for p in range(1, 25))


@lru_cache(maxsize=8)
def all_samples(lay: Layout) -> tuple[np.ndarray, tuple[slice, ...], tuple[tuple[np.ndarray, np.ndarray], ...]]:
    """The rim samples of points 1..24 of a layout in one array (sampled at once), each point's
    slice of it, and each point's predictions as 0/1 matrices ``(pred, not pred)``: a hypothesis'
    mismatches with what is seen are then two products (whole numbers, exact in float32)."""
    models = _models(lay)
    ends = np.cumsum([0] + [len(m[0]) for m in models])
    slices = tuple(slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:]))
    preds = tuple((m[2].astype(np.float32), (~m[2]).astype(np.float32)) for m in models)
    return np.concatenate([m[0] for m in models]), slices, preds


@lru_cache(maxsize=8)
def samples_by_x(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """:func:`all_samples`' samples in order of their x (their indices), and those xs: the samples near a place are a run of them."""
    everywhere = all_samples(lay)[0]
    by_x = np.argsort(everywhere[:, 0], kind="stable")
    xs = everywhere[by_x, 0]
    by_x.setflags(write=False)
    xs.setflags(write=False)
    return by_x, xs


@lru_cache(maxsize=8)
def stacked_samples(lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`all_samples` as one block for points 1..24: each point's samples' indices in that
    array (24 x N, a point with fewer samples padded with its first), whether each is clear of
    the board's own edges (padding: not), and the predictions (24 x hypotheses x N, 0/1 float32;
    padding 0), so that every point's mismatches are two batched products (whole numbers, exact)."""
    models = _models(lay)
    _, slices, preds = all_samples(lay)
    n = max(sl.stop - sl.start for sl in slices)
    index = np.zeros((len(slices), n), np.intp)
    valid = np.zeros((len(slices), n), bool)
    pred = np.zeros((len(slices), _HYPOTHESES, n), np.float32)
    not_pred = np.zeros((len(slices), _HYPOTHESES, n), np.float32)
    for i, (sl, (p, q), (_, ok, _)) in enumerate(zip(slices, preds, models)):
        k = sl.stop - sl.start
        index[i, :k], index[i, k:] = np.arange(sl.start, sl.stop), sl.start
        valid[i, :k] = ok
        pred[i, :, :k], not_pred[i, :, :k] = p, q
    return index, valid, pred, not_pred


@lru_cache(maxsize=8)
def first_rims(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Of :func:`stacked_samples`: which samples lie on the rim of a point's first checker alone
    (24 x N), and how many of those are clear of the board's own edges on each point (24)."""
    _, valid, pred, _ = stacked_samples(lay)
    rim = pred[:, 1, :] > 0
    return rim, (rim & valid).sum(axis=1)


stacked_samples(
    profile.layout()
)  # the renderer's board, every geometry's default: built at import, not on the first frame


def as_rendered(lay: Layout) -> bool:
    """Whether ``lay`` is the renderer's board, whose drawing and stacks stand exactly where the layout puts them.

    On a real board (any other profile) the camera, calibrated on the plane of the checkers' tops,
    sees the field's drawing a few mm off the layout's and players' stacks stand a few mm off their
    slots: rims are not looked for where the palette's frame showed the board's drawing
    (:func:`quiet_mask`), and board edges are learned further from the checkers (``_LEARN_MARGIN_MM``).
    Both would change the readings' confidences and the gate on rendered frames, so they apply to real boards only.
    """
    return lay.profile.name == DEFAULT_PROFILE


_QUIET_MM = 1.5  # a rim sample this close to a learned edge of the board's own drawing is not used


@lru_cache(maxsize=8)
def quiet_mask(lay: Layout, board_edges: tuple[tuple[float, float], ...]) -> np.ndarray:
    """A ``_LABEL_PPM`` mask of where the palette's frame showed no edge of the board's own drawing
    within ``_QUIET_MM`` (a hinge, a seam down the bar, an inlay, the field's drawing a few mm off
    the layout's): only there can a rim be told on a real board."""
    h, w = int(lay.geometry.height * _LABEL_PPM), int(lay.geometry.width * _LABEL_PPM)
    busy = np.zeros((h, w), np.uint8)
    for x, y in board_edges:
        cv2.circle(busy, (int(x * _LABEL_PPM), int(y * _LABEL_PPM)), int(round(_QUIET_MM * _LABEL_PPM)), 1, -1)
    return busy == 0


@lru_cache(maxsize=8)
def bar_samples(
    lay: Layout, board_edges: tuple[tuple[float, float], ...]
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bar_rings`' places on a layout, worked out once: the bar's centre line (x, and the ys of
    the centres along it, 1 mm apart), the centres (N x 2), their rim samples (N * angles x 2) and
    which samples are clear of the board's own edges (N x angles)."""
    diameter = lay.profile.checker_diameter_mm
    x = (lay.geometry.bar[0] + lay.geometry.bar[2]) / 2
    ys = np.arange(lay.field[1] + diameter / 2, lay.field[3] - diameter / 2, 1.0)
    centres = np.c_[np.full_like(ys, x), ys]
    pts = (centres[:, None, :] + _rim_mm(lay) * _UNIT[None]).reshape(-1, 2)
    valid = np.ones(len(pts), bool)
    if diameter + 2 * _STATIC_CLEARANCE_MM > lay.geometry.bar[2] - lay.geometry.bar[0]:  # its rim meets the bar's sides
        valid = mask_at(_clearance(lay), pts) > _STATIC_CLEARANCE_MM
    if board_edges and not as_rendered(lay):
        valid &= mask_at(quiet_mask(lay, board_edges), pts)
    for a in (ys, centres, pts, valid):
        a.setflags(write=False)
    return x, ys, centres, pts, valid.reshape(len(centres), ANGLES)
