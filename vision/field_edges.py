"""The found field's sides moved onto the photo's edges, and its proportions onto the edges across its points' sides.

Owns :func:`snap_to_edges` (each side of the field onto a line through the strongest colour change
across it, where the model's regions on either side differ) and :func:`fit_sides` (the bar, margin
and point length that put the model's triangle sides on the photo's strongest edges, the corners
fixed). Imports :mod:`vision.field_model`; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.field_model import PARAM_HI, PARAM_LO, Grid, Scorer, lab_of, meet, model_labels, side_px, unit_to_image

# the final fit to the photo's edges: at most this many px on the long side; searched this far across each edge, then
# nearer; a move of a corner beyond this share of the field's mean side is not taken
_SNAP_SIDE_PX = 1600
_SNAP_REACH = (0.025, 0.012, 0.006, 0.004)  # of the field's mean side, and at least 2 px
_SNAP_MAX_MOVE = 0.04
SNAP_MIN_KEEP = 0.45  # of the fit's score before (it is steep: a few px lose a good part of it)
_SNAP_MIN_CONTRAST = 20.0


def snap_to_edges(image: np.ndarray, corners: np.ndarray, params: np.ndarray, colours: np.ndarray) -> np.ndarray:
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
    lab = lab_of(small, 0.7)
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
        regions = model_labels(
            Grid(q[:, 0], q[:, 1], np.c_[q, np.ones(len(q))], (1, len(q))), np.asarray(params, np.float64)
        ).reshape(2, -1)
        contrast = np.nan_to_num(np.linalg.norm(colours[regions[0]] - colours[regions[1]], axis=1), nan=0.0)
        usable.append(contrast >= _SNAP_MIN_CONTRAST)
    for share in _SNAP_REACH:
        reach = max(2.0, round(2 * share * side_px(current)) / 2)
        hom = unit_to_image(current)
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
        meets = [meet(lines[k - 1][0], lines[k - 1][1], lines[k][0], lines[k][1]) for k in range(4)]
        if any(m is None for m in meets):
            return corners
        current = np.array(meets)  # top-left is where the left side (3) meets the top (0), and so on
    if np.linalg.norm(current - start, axis=1).max() > _SNAP_MAX_MOVE * side_px(start):
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


def fit_sides(scorer: Scorer, corners: np.ndarray, params: np.ndarray) -> np.ndarray:
    """The proportions (bar, margin, point length) that put the model's triangle sides where the photo shows
    the strongest edges across them (:meth:`Scorer.side_edges`), the corners fixed: each in turn over a
    range about its fit, twice."""
    hom = unit_to_image(corners)
    if hom is None:
        return params
    best = np.asarray(params, np.float64).copy()
    spans = (0.015, 0.006, 0.03)
    for _ in range(2):
        for i, span in enumerate(spans):
            trials = []
            for x in np.linspace(best[i] - span, best[i] + span, 13):
                p = best.copy()
                p[i] = min(PARAM_HI[i], max(PARAM_LO[i], x))
                trials.append((scorer.side_edges(hom, p), -abs(x - best[i]), p))
            best = max(trials, key=lambda t: (t[0], t[1]))[2]
    return best
