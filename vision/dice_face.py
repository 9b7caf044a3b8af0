"""Dice: what the image shows around a group of pips, for the read stage to judge it by.

Owns the tests of a die's face: whether it is uniform around the pips (:func:`face_spread`,
:func:`across_face_spread`, :func:`ring_clear`) and the pips stand out from it
(:func:`stands_out`), whether a side of a leaning die shows beside it (:func:`side_face_shows`,
:func:`side_run`) or the layout is squashed on the dice's plane (:func:`aspect_on_plane`), and what
a two or four becomes once its missing pips are looked for (:func:`completed_value`). Imports
``vision.config`` and ``vision.stats``; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.config import VisionConfig
from vision.stats import median_of, median_rows, percentile_sorted


def stands_out(cfg: VisionConfig, gray: np.ndarray, level: float, marks) -> bool:
    """Whether marks of one polarity (pips or bars: ``x``, ``y``, ``polarity``, ``contrast``) stand out
    from a face of grey ``level`` by face_min_contrast_frac of their median contrast, darker than it
    for dark marks, lighter for light ones: the grey at their centres, their median, against it."""
    h, w = gray.shape
    mark_level = median_of([gray[min(h - 1, int(round(m.y))), min(w - 1, int(round(m.x)))] for m in marks])
    against = (level - mark_level) if marks[0].polarity == 0 else (mark_level - level)
    return against >= cfg.dice_face_min_contrast_frac * median_of([m.contrast for m in marks])


def completed_value(
    cfg: VisionConfig, value: int, A: np.ndarray, pts: np.ndarray, c: np.ndarray, d: float, contrast: float, die: float
) -> tuple[int, np.ndarray]:
    """Where a die's size is known, the value of a two or four once the places of the pips the finder
    missed (faint, or run into a neighbour at a few px a pip) are looked at in the contrast image ``c``,
    and the centre of the die that value shows: a four whose centre stands out by probe_min_frac of its
    pips' ``contrast`` is a five, one whose two middle places of a six do is a six (its centre is the
    four's); a two whose pips are closer than two_min_span_per_die of a die (a face's side, not its
    diagonal) and whose two places beside them on one side stand out is a four, centred between the
    two sides."""
    r = max(1, int(round(d / 3)))
    floor = cfg.dice_probe_min_frac * contrast

    def shows(*xy: np.ndarray) -> bool:
        return all(_peak_near(c, float(x), float(y), r) >= floor for x, y in xy)

    centre = pts.mean(0)
    if value == 4:
        mid = shows(centre)
        six = any(shows(centre + A @ q, centre - A @ q) for q in (np.array([1.0, 0.0]), np.array([0.0, 1.0])))
        if mid != six:
            return (5 if mid else 6), centre
    elif value == 2 and float(np.linalg.norm(pts[1] - pts[0])) < cfg.dice_two_min_span_per_die * die:
        w = np.array([pts[0][1] - pts[1][1], pts[1][0] - pts[0][0]])  # the side, turned a right angle
        for way in (w, -w):
            if shows(pts[0] + way, pts[1] + way):
                return 4, centre + way / 2
    return value, centre


def _peak_near(c: np.ndarray, x: float, y: float, r: int) -> float:
    """The highest value of ``c`` within ``r`` px (a square) of (x, y); 0 outside the image."""
    h, w = c.shape
    xi, yi = int(round(x)), int(round(y))
    x0, x1, y0, y1 = max(0, xi - r), min(w, xi + r + 1), max(0, yi - r), min(h, yi + r + 1)
    return float(c[y0:y1, x0:x1].max()) if x0 < x1 and y0 < y1 else 0.0


def aspect_on_plane(plane: np.ndarray, A: np.ndarray, x: float, y: float) -> float:
    """Minor over major axis of a pip layout's map ``A`` (layout units to px) at (x, y), seen on
    the plane that the homography ``plane`` maps the image's px to: its derivative there times ``A``."""
    H = plane
    den = H[2, 0] * x + H[2, 1] * y + H[2, 2]
    u = (H[0, 0] * x + H[0, 1] * y + H[0, 2]) / den
    v = (H[1, 0] * x + H[1, 1] * y + H[1, 2]) / den
    J = np.array([[H[0, 0] - u * H[2, 0], H[0, 1] - u * H[2, 1]], [H[1, 0] - v * H[2, 0], H[1, 1] - v * H[2, 1]]]) / den
    sv = np.linalg.svd(J @ A, compute_uv=False)
    return float(sv[1] / sv[0])


def _face_ring(
    gray: np.ndarray, marks: np.ndarray, x: float, y: float, r: float, d: float, halo_per_pip: float, r_in: float
):
    """The face round (x, y) from ``r_in`` to ``r`` px out, pips and their halo (``halo_per_pip`` of a
    pip's diameter round each: blur and a JPEG's ringing) left out: (the grey levels of the window
    round it, which of its px are that face, and each px's offsets dx, dy from (x, y)),
    or None where the window inside the image is under 2 x 2 px."""
    h, w = gray.shape
    ri = int(math.ceil(r))
    x0, y0, x1, y1 = max(0, int(x) - ri), max(0, int(y) - ri), min(w, int(x) + ri + 1), min(h, int(y) + ri + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    yy, xx = np.mgrid[y0:y1, x0:x1]
    dx, dy = xx - x, yy - y
    rr = dx**2 + dy**2
    halo = max(1, int(round(halo_per_pip * d)))
    pipmask = cv2.dilate(marks[y0:y1, x0:x1], np.ones((2 * halo + 1, 2 * halo + 1), np.uint8))
    return gray[y0:y1, x0:x1], (rr <= r * r) & (rr >= r_in * r_in) & (pipmask == 0), dx, dy


def face_spread(
    gray: np.ndarray, marks: np.ndarray, x: float, y: float, r: float, d: float, halo_per_pip: float, r_in: float = 0.0
) -> tuple[float, float]:
    """Spread (90th - 10th percentile) of grey levels on the face around (x, y), pips and their halo
    left out (see :func:`_face_ring`), and their median."""
    ring = _face_ring(gray, marks, x, y, r, d, halo_per_pip, r_in)
    if ring is None:
        return 255.0, 0.0
    window, face, _, _ = ring
    v = window[face]
    if v.size < 8:
        return 0.0, float(np.median(window))
    v = np.sort(v).astype(np.float64)
    k = len(v) // 2
    median = v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2
    return float(percentile_sorted(v, 90) - percentile_sorted(v, 10)), float(median)


def across_face_spread(
    gray: np.ndarray, marks: np.ndarray, x: float, y: float, r: float, d: float, halo_per_pip: float, r_in: float
) -> tuple[float, float]:
    """As :func:`face_spread` on a ring round (x, y), but on two opposite quarters of it (eight ways
    turned), those where the spread is least: (that spread, its median)."""
    ring = _face_ring(gray, marks, x, y, r, d, halo_per_pip, r_in)
    if ring is None:
        return 255.0, 0.0
    window, face, dx, dy = ring
    angle = np.arctan2(dy, dx)[face]
    values = window[face].astype(np.float64)
    best = (255.0, 0.0)
    for start in np.linspace(0, np.pi, 8, endpoint=False):
        v = values[((angle - start) % np.pi) < np.pi / 2]
        if v.size >= 8:
            lo, hi, mid = np.percentile(v, (10, 90, 50))
            best = min(best, (float(hi - lo), float(mid)))
    return best


def side_face_shows(
    cfg: VisionConfig, image: np.ndarray, marks: np.ndarray, x: float, y: float, side: float, d: float
) -> bool:
    """True if a side of the die shows beside its top face (a leaning die): half a face away
    from the pips' centre, over a quarter of the way round, the face's own colour, darker."""
    h, w = image.shape[:2]
    r = max(2, int(round(0.3 * side)))
    x0, y0, x1, y1 = max(0, int(x) - r), max(0, int(y) - r), min(w, int(x) + r + 1), min(h, int(y) + r + 1)
    halo = 2 * max(1, int(round(0.25 * d))) + 1
    free = cv2.dilate(marks[y0:y1, x0:x1], np.ones((halo, halo), np.uint8)) == 0
    if free.sum() < 8:
        return False
    face = np.median(image[y0:y1, x0:x1][free].astype(np.float32), axis=0) + 1.0
    ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    shaded = np.ones(16, bool)
    for k in (cfg.dice_side_near, cfg.dice_side_far):
        xs = np.round(x + k * side * np.cos(ang)).astype(int)
        ys = np.round(y + k * side * np.sin(ang)).astype(int)
        ok = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        seen = image[ys.clip(0, h - 1), xs.clip(0, w - 1)].astype(np.float32) + 1.0
        shade = seen @ face / float(face @ face)  # the best k with seen ~ k * face...
        tint = np.linalg.norm(seen - shade[:, None] * face, axis=1) / float(np.linalg.norm(face))  # ...and how far off
        shaded &= (
            ok
            & (shade >= cfg.dice_side_min_shade)
            & (shade <= cfg.dice_side_max_shade)
            & (tint <= cfg.dice_side_max_tint)
        )
    run = best = 0
    for v in np.concatenate([shaded, shaded]):  # longest run of shaded directions, round the circle
        run = run + 1 if v else 0
        best = max(best, run)
    return min(best, 16) >= cfg.dice_side_min_directions


def side_run(cfg: VisionConfig, image: np.ndarray, marks: np.ndarray, x: float, y: float, die: float, d: float) -> int:
    """Where a die's size is known: the longest run of the 32 directions round the top face's
    centre in which the side of a leaning die shows, the face's own colour, darker, all the
    way from side_run_near to side_run_far of a die's side (a flat die's face is there)."""
    h, w = image.shape[:2]
    r = max(2, int(round(0.3 * die)))
    x0, y0, x1, y1 = max(0, int(x) - r), max(0, int(y) - r), min(w, int(x) + r + 1), min(h, int(y) + r + 1)
    halo = 2 * max(1, int(round(0.25 * d))) + 1
    free = cv2.dilate(marks[y0:y1, x0:x1], np.ones((halo, halo), np.uint8)) == 0
    if free.sum() < 8:
        return 0
    face = median_rows(image[y0:y1, x0:x1][free].T).astype(np.float32) + 1.0
    shaded = np.ones(32, bool)
    for k in np.linspace(cfg.dice_side_run_near, cfg.dice_side_run_far, 3):
        xs = np.round(x + k * die * _RUN_COS).astype(int)
        ys = np.round(y + k * die * _RUN_SIN).astype(int)
        ok = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        seen = image[ys.clip(0, h - 1), xs.clip(0, w - 1)].astype(np.float32) + 1.0
        shade = seen @ face / float(face @ face)
        tint = np.linalg.norm(seen - shade[:, None] * face, axis=1) / float(np.linalg.norm(face))
        shaded &= (
            ok
            & (shade >= cfg.dice_side_min_shade)
            & (shade <= cfg.dice_side_run_max_shade)
            & (tint <= cfg.dice_side_max_tint)
        )
    run = best = 0
    for v in np.concatenate([shaded, shaded]):
        run = run + 1 if v else 0
        best = max(best, run)
    return min(best, 32)


_RUN_ANGLES = np.linspace(0, 2 * np.pi, 32, endpoint=False)  # the directions :func:`side_run` looks in
_RUN_COS, _RUN_SIN = np.cos(_RUN_ANGLES), np.sin(_RUN_ANGLES)


def ring_clear(limit: float, c: np.ndarray, x: float, y: float, d: float) -> bool:
    """A lone pip must sit on a uniform face: nothing contrasting in a ring around it."""
    h, w = c.shape
    for r in (1.0 * d, 1.4 * d):
        for a in np.linspace(0, 2 * math.pi, 16, endpoint=False):
            xi, yi = int(round(x + r * math.cos(a))), int(round(y + r * math.sin(a)))
            if not (0 <= xi < w and 0 <= yi < h) or c[yi, xi] > limit:
                return False
    return True
