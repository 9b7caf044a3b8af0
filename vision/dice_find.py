"""Dice, first stage: the candidates in an image, pips linked into groups that may each be a die.

Owns :func:`find_candidates`: pips are small round blobs darker or lighter than what is around
them, cut apart where blur ran a few together, each with the spread of the face around it; pips
of one kind and size close together, a uniform face between them, are linked into groups. Where a
die's size is known, columns of a six's pips run together are kept too (:class:`PipColumn`).
Thresholds: ``[dice]`` of ``vision.toml``. Must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.config import VisionConfig
from vision.stats import percentile_sorted

PIP_OFFSET = 0.27  # pip offset / face side on the dice this reads


@dataclass(slots=True)
class Pip:
    x: float
    y: float
    d: float  # equivalent diameter, px
    aspect: float
    polarity: int  # 0 dark pip, 1 light pip
    contrast: float
    fill: float = 1.0
    ring: float = 0.0  # spread of grey levels just around the pip (a pip sits on a uniform face)


@dataclass(slots=True)
class PipColumn:
    """A blob too long for a pip: maybe a column of pips run together (a leaning six)."""

    x: float
    y: float
    length: float  # the full axes of the ellipse of its moments, px
    width: float
    angle: float  # of its long axis, radians
    polarity: int
    contrast: float


@dataclass(frozen=True, slots=True)
class Candidates:
    """What :func:`find_candidates` found in an image: its grey levels, the contrast images of dark
    and light pips, the pips, the px they cover (``marks``: both kinds; ``labels``: each kind's),
    the columns of pips run together (None where a die's size is not known) and ``groups`` of
    linked pips (indices into ``pips``): each a die, or a few touching, or none."""

    gray: np.ndarray
    contrast: tuple[np.ndarray, np.ndarray]
    pips: list[Pip]
    marks: np.ndarray
    labels: tuple[np.ndarray, np.ndarray]
    columns: list[PipColumn] | None
    groups: list[list[int]]


def find_candidates(
    cfg: VisionConfig, image: np.ndarray, mask: np.ndarray | None, die: float | None = None
) -> Candidates:
    """The pips of a BGR image (only where the 0/1 ``mask`` is nonzero, if given) and their groups;
    ``die`` is a die's side in its px where known (None: sizes from the image's)."""
    h, w = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if die is None:
        k = max(5, int(round(cfg.dice_kernel_frac * min(h, w))) | 1)
        se = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        max_d = cfg.dice_pip_max_frac * min(h, w)
    else:  # a square window a little wider than a pip is enough, and far cheaper
        k = max(5, int(round(cfg.dice_kernel_per_die * die)) | 1)
        se = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
        max_d = cfg.dice_pip_max_per_die * die
    contrast = (cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, se), cv2.morphologyEx(gray, cv2.MORPH_TOPHAT, se))
    pips: list[Pip] = []
    labels_all = []
    columns: list[PipColumn] | None = [] if die is not None else None
    for polarity, c in enumerate(contrast):
        found, labels = _find_pips(cfg, c, polarity, mask, max_d, die, columns)
        pips.extend(found)
        labels_all.append(labels)
    marks = labels_all[0] | labels_all[1]
    for p, ring in zip(pips, _ring_spreads(gray, marks, pips, die)):
        p.ring = ring
    groups = _group(cfg, pips, gray, labels_all)
    return Candidates(gray, contrast, pips, marks, (labels_all[0], labels_all[1]), columns, groups)


def _find_pips(
    cfg: VisionConfig,
    c: np.ndarray,
    polarity: int,
    mask: np.ndarray | None,
    max_d: float,
    die: float | None = None,
    bars: list[PipColumn] | None = None,
) -> tuple[list[Pip], np.ndarray]:
    """Round blobs of the contrast image ``c`` at most ``max_d`` px across: the pips, and a label image marking their pixels.
    Blobs shaped like a column of a six's pips run together are added to ``bars`` where given (``die`` known)."""
    binary = (
        cv2.threshold(c, cfg.dice_pip_min_contrast - 1, 1, cv2.THRESH_BINARY)[1]
        if c.dtype == np.uint8
        else (c >= cfg.dice_pip_min_contrast).astype(np.uint8)
    )
    if mask is not None:
        binary = cv2.bitwise_and(binary, mask)
    n, labels, stats, pts = _components(binary)
    area = stats[:, cv2.CC_STAT_AREA]
    bw, bh = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    ok = (area >= cfg.dice_pip_min_area_px) & (np.maximum(bw, bh) <= 6 * max_d)
    ok[0] = False
    if die is not None:
        ok &= _pip_like(cfg, c, pts, labels, stats, ok, die)
    marks = np.zeros(c.shape, np.uint8)
    pips: list[Pip] = []
    # (blob mask, x0, y0, cuts so far): a blob that is not round may be pips run together
    # by blur; it is cut at a fraction of its peak contrast, a higher one at each try
    queue = [
        (labels[y : y + hh, x : x + ww] == i, int(x), int(y), 0)
        for i, (x, y, ww, hh) in ((i, stats[i, :4]) for i in np.flatnonzero(ok))
    ]
    while queue:
        crop, x0, y0, depth = queue.pop()
        hh, ww = crop.shape
        sub = c[y0 : y0 + hh, x0 : x0 + ww]
        m = cv2.moments(crop.view(np.uint8), binaryImage=True)
        a = m["m00"]
        if a < cfg.dice_pip_min_area_px:
            continue
        # the eigenvalues of the blob's covariance, in closed form (a 2 x 2 symmetric matrix)
        cxx, cyy, cxy = m["mu20"] / a, m["mu02"] / a, m["mu11"] / a
        half, root = (cxx + cyy) / 2, math.hypot((cxx - cyy) / 2, cxy)
        l1, l2 = max(half + root, 1e-6), max(half - root, 1e-6)
        aspect = math.sqrt(l2 / l1)
        # filled ellipse: area = 4 pi sqrt(l1 l2); pixelised small blobs get +1/12 px^2 of slack
        fill = min(
            1.0,
            max(a / (4 * math.pi * math.sqrt(l1 * l2)), a / (4 * math.pi * math.sqrt((l1 + 1 / 12) * (l2 + 1 / 12)))),
        )
        diameter = 2 * math.sqrt(a / math.pi)
        shaped = aspect >= cfg.dice_pip_min_aspect and fill >= cfg.dice_pip_min_fill and max(hh, ww) <= max_d
        if not shaped and depth >= cfg.dice_pip_cuts:
            continue  # no pip, and cut often enough
        peak = float(sub[crop].max())
        if bars is not None and depth == 0 and not shaped and die is not None:
            length, width = 4 * math.sqrt(l1), 4 * math.sqrt(l2)
            if (
                cfg.dice_bar_min_per_die * die <= length <= cfg.dice_bar_max_per_die * die
                and width <= cfg.dice_bar_max_width_per_die * die
                and aspect <= cfg.dice_bar_max_aspect
                and fill >= cfg.dice_pip_min_fill
            ):
                angle = 0.5 * math.atan2(2 * cxy, cxx - cyy)
                bars.append(PipColumn(x0 + m["m10"] / a, y0 + m["m01"] / a, length, width, angle, polarity, peak))
        cut = (crop & (sub >= (cfg.dice_pip_peak_frac + cfg.dice_pip_cut_step * depth) * peak)).view(np.uint8)
        k, sl, sst, _ = cv2.connectedComponentsWithStats(cut, connectivity=4)
        # one solid peak (not a die body with its own pips in it, not a rim around a hole)
        solid = k == 2 and sst[1, cv2.CC_STAT_AREA] >= cfg.dice_pip_min_core * a
        if solid and shaped:
            marks[y0 : y0 + hh, x0 : x0 + ww][crop] = 1
            pips.append(Pip(x0 + m["m10"] / a, y0 + m["m01"] / a, diameter, aspect, polarity, peak, fill))
            continue
        if depth >= cfg.dice_pip_cuts:
            continue
        for j in range(1, k):
            x, y, w2, h2 = (int(v) for v in sst[j, :4])
            queue.append((sl[y : y + h2, x : x + w2] == j, x0 + x, y0 + y, depth + 1))
    return pips, marks


def _components(binary: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """The 8-connected components of a 0/1 image: their count (the background, label 0, included),
    the label image, each one's stats as ``cv2.connectedComponentsWithStats`` gives them (left,
    top, width, height, area; the background's all 0) and the nonzero px (N x 2 x, y, row by row).

    The labels are Grana's block-based labelling's; the stats are measured on the nonzero px only,
    several times faster on a sparse image than OpenCV's, which visits every background px too.
    """
    n, labels = cv2.connectedComponentsWithAlgorithm(binary, 8, cv2.CV_32S, cv2.CCL_GRANA)
    # the nonzero px row by row, as cv2.findNonZero gives them (numpy finds them in a 0/1 image several times faster)
    ys, xs = np.divmod(np.flatnonzero(binary.view(bool)), binary.shape[1])
    pts = np.empty((len(xs), 2), np.int32)
    pts[:, 0], pts[:, 1] = xs, ys
    xs, ys = pts[:, 0], pts[:, 1]
    lab = labels[ys, xs]
    big = np.iinfo(np.int32).max
    lo_x, lo_y = np.full(n, big, np.int32), np.full(n, big, np.int32)
    hi_x, hi_y = np.full(n, -1, np.int32), np.full(n, -1, np.int32)
    np.minimum.at(lo_x, lab, xs)
    np.minimum.at(lo_y, lab, ys)
    np.maximum.at(hi_x, lab, xs)
    np.maximum.at(hi_y, lab, ys)
    area = np.bincount(lab, minlength=n).astype(np.int32)
    stats = np.zeros((n, 5), np.int32)
    seen = area > 0
    stats[seen, cv2.CC_STAT_LEFT], stats[seen, cv2.CC_STAT_TOP] = lo_x[seen], lo_y[seen]
    stats[seen, cv2.CC_STAT_WIDTH], stats[seen, cv2.CC_STAT_HEIGHT] = (hi_x - lo_x + 1)[seen], (hi_y - lo_y + 1)[seen]
    stats[:, cv2.CC_STAT_AREA] = area
    return n, labels, stats, pts


def _pip_like(
    cfg: VisionConfig, c: np.ndarray, pts: np.ndarray, labels: np.ndarray, stats: np.ndarray, ok: np.ndarray, die: float
) -> np.ndarray:
    """Where a die's size is known, the blobs worth a closer look, all measured at once: blobs
    that stand out by pip_min_peak somewhere, no larger than a few pips, and round and solid
    or small enough to be a few pips run together. ``pts`` are the blobs' px (N x 2 x, y, row by row)."""
    area = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    big = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    ok = ok & (area <= cfg.dice_blob_max_area_per_die2 * die * die) & (big <= cfg.dice_blob_max_per_die * die)
    lab = labels[pts[:, 1], pts[:, 0]]
    strong = c[pts[:, 1], pts[:, 0]] > cfg.dice_pip_min_peak - 1
    if not strong.any():
        return ok & False
    n = len(area)
    ok &= np.bincount(lab[strong], minlength=n) > 0
    keep = ok[lab]  # only the px of blobs still in the running are measured (each one's px all, in their order)
    lab, pts = lab[keep], pts[keep]
    xs, ys = pts[:, 0].astype(np.float64), pts[:, 1].astype(np.float64)
    a = np.maximum(np.bincount(lab, minlength=n), 1)
    mx, my = np.bincount(lab, xs, n) / a, np.bincount(lab, ys, n) / a
    cxx = np.bincount(lab, xs * xs, n) / a - mx * mx
    cyy = np.bincount(lab, ys * ys, n) / a - my * my
    cxy = np.bincount(lab, xs * ys, n) / a - mx * my
    half, det = (cxx + cyy) / 2, cxx * cyy - cxy * cxy
    root = np.sqrt(np.maximum(half * half - det, 0))
    l1, l2 = np.maximum(half + root, 1e-6), np.maximum(half - root, 1e-6)
    aspect = np.sqrt(l2 / l1)
    fill = np.maximum(a / (4 * np.pi * np.sqrt(l1 * l2)), a / (4 * np.pi * np.sqrt((l1 + 1 / 12) * (l2 + 1 / 12))))
    round_ = (aspect >= cfg.dice_pip_min_aspect) & (fill >= cfg.dice_pip_min_fill)
    return ok & (round_ | (area <= cfg.dice_blob_cut_max_area_per_die2 * die * die))


def _ring_spreads(gray: np.ndarray, marks: np.ndarray, pips: list[Pip], die: float | None = None) -> list[float]:
    """Each pip's spread (90th - 10th percentile) of the grey levels on a circle just outside it, other
    pips left out (their circles' px all found at once).

    Where a die's size is known, the circle stays on the face for a corner pip too: no further
    out than halfway from the pip's edge to the face's (a dark rim or shadow there is not the face)."""
    if not pips:
        return []
    h, w = gray.shape
    radii = []
    for p in pips:
        r = p.d / 2 + max(2.0, 0.3 * p.d)
        if die is not None:
            r = min(r, max(p.d / 2 + 1.0, (p.d / 2 + die * (0.5 - PIP_OFFSET)) / 2))
        radii.append(r)
    r = np.array(radii)[:, None]
    xs = np.round(np.array([p.x for p in pips])[:, None] + r * _RING_COS).astype(int)
    ys = np.round(np.array([p.y for p in pips])[:, None] + r * _RING_SIN).astype(int)
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    xc, yc = xs.clip(0, w - 1), ys.clip(0, h - 1)
    free = inside & (marks[yc, xc] == 0)
    # each circle's free grey levels first, in order, the rest after them
    v = np.sort(np.where(free, gray[yc, xc].astype(np.float32), np.float32(np.inf)), axis=1)
    out = []
    for k_in, k_free, row in zip(inside.sum(axis=1).tolist(), free.sum(axis=1).tolist(), v):
        if k_in < 12:
            out.append(255.0)
        elif k_free < 6:  # packed among other pips: nothing left to judge by
            out.append(0.0)
        else:
            out.append(float(percentile_sorted(row[:k_free], 90) - percentile_sorted(row[:k_free], 10)))
    return out


_RING_ANGLES = np.linspace(0, 2 * np.pi, 24, endpoint=False)
_RING_COS, _RING_SIN = np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)


def _group(cfg: VisionConfig, pips: list[Pip], gray: np.ndarray, labels_all) -> list[list[int]]:
    n = len(pips)
    if n == 0:
        return []
    xy = np.array([(p.x, p.y) for p in pips])
    d = np.array([p.d for p in pips])
    pol = np.array([p.polarity for p in pips])
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    dm = (d[:, None] + d[None, :]) / 2
    ratio = np.maximum(d[:, None], d[None, :]) / np.minimum(d[:, None], d[None, :])
    cand = (
        (dist <= cfg.dice_link_max_diameters * dm)
        & (ratio <= cfg.dice_link_max_size_ratio)
        & (pol[:, None] == pol[None, :])
    )
    cand &= dist >= 1.0 * dm
    con = np.array([p.contrast for p in pips])
    cand &= np.maximum(con[:, None], con[None, :]) <= cfg.dice_link_max_contrast_ratio * np.minimum(
        con[:, None], con[None, :]
    )
    ii, jj = np.nonzero(np.triu(cand, 1))
    limit = np.maximum(cfg.dice_gap_max_contrast, cfg.dice_gap_peak_frac * np.minimum(con[ii], con[jj]))
    clear = _gaps_clear(xy[ii], xy[jj], (d[ii] + d[jj]) / 4 + 1, limit, gray, labels_all, pol[ii])
    for i, j in zip(ii[clear].tolist(), jj[clear].tolist()):
        a, b = find(i), find(j)
        if a != b:
            parent[a] = b
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _gaps_clear(
    a: np.ndarray, b: np.ndarray, r: np.ndarray, limit: np.ndarray, gray: np.ndarray, labels_all, polarity: np.ndarray
) -> np.ndarray:
    """For each pair of pips of one polarity (centres a[k], b[k]; radius r[k]), whether the face between
    them is uniform: its grey levels, away from pips of that polarity (``labels_all[polarity[k]]`` marks
    them), vary by at most ``limit[k]`` (no edge, gap or shadow between two dice on the way) and it lies
    within the image. All pairs at once."""
    h, w = gray.shape
    if not len(a):
        return np.zeros(0, bool)
    length = np.hypot(*(b - a).T)
    keep = _GAP_REACH[None, :] * length[:, None] >= r[:, None]  # not within r of either pip
    xy = np.rint(a[:, None, :] + (b - a)[:, None, :] * _GAP_STEPS[None, :, None]).astype(np.int64)
    xi, yi = xy[..., 0], xy[..., 1]
    inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    xc, yc = xi.clip(0, w - 1), yi.clip(0, h - 1)
    marked = np.where(polarity[:, None] == 0, labels_all[0][yc, xc], labels_all[1][yc, xc])
    free = keep & inside & (marked == 0)
    grey = gray[yc, xc].astype(np.int64)
    spread = np.where(free, grey, -1).max(axis=1) - np.where(free, grey, 256).min(axis=1)
    within = ~(keep & ~inside).any(axis=1)
    return within & ((free.sum(axis=1) < 2) | (spread <= limit))


_GAP_STEPS = np.linspace(0.05, 0.95, 19)  # where the face between two pips is looked at, as fractions of the way
_GAP_REACH = np.minimum(_GAP_STEPS, 1 - _GAP_STEPS)  # ... and those fractions' distances from the nearer pip
