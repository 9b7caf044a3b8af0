"""Dice: which of the six pip layouts a group of pips shows, and the parts of a group that show one.

Owns :func:`fit_group` (an affine fit of the pips' centres to a layout, so a tilted camera is
fine, with die-like spacing), :func:`best_subset` (the largest part of a group that shows a layout:
side faces' pips dropped) and :func:`split_group` (two touching dice linked into one group, cut at
its longest link). Imports ``vision.config``, ``vision.stats`` and :mod:`vision.dice_find`; must
not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations, permutations

import cv2
import numpy as np

from vision.config import VisionConfig
from vision.dice_find import Pip
from vision.stats import median_of

# Pip layouts in units of the pip offset from the face centre (0.27 of the side on common dice).
_LAYOUTS = {
    1: np.array([(0, 0)], float),
    2: np.array([(-1, -1), (1, 1)], float),
    3: np.array([(-1, -1), (0, 0), (1, 1)], float),
    4: np.array([(-1, -1), (1, -1), (-1, 1), (1, 1)], float),
    5: np.array([(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)], float),
    6: np.array([(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)], float),
}


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _fit_layout(pts: np.ndarray) -> tuple[int | None, float, np.ndarray | None]:
    """Best affine fit of the pip centres to a die layout: (value, error in pip offsets, 2x2 map, read-only).

    A group's fit is asked for more than once (as a whole, then again before it is cut in
    two): the fits of the last few hundred sets of centres are kept."""
    pts = np.ascontiguousarray(pts, dtype=np.float64)
    return _fit_layout_of(len(pts), pts.tobytes())


@lru_cache(maxsize=512)
def _fit_layout_of(n: int, data: bytes) -> tuple[int | None, float, np.ndarray | None]:
    value, err, A = _fit_layout_once(np.frombuffer(data, np.float64).reshape(n, 2))
    if A is not None:
        A = A.copy()
        A.setflags(write=False)
    return value, err, A


def _fit_layout_once(pts: np.ndarray) -> tuple[int | None, float, np.ndarray | None]:
    n = len(pts)
    if n == 1 or n > 6:
        return (1 if n == 1 else None), 0.0, None
    c = pts - pts.mean(0)
    layout = _LAYOUTS[n]
    if n in (2, 3):
        if n == 2:
            v = c[1] - c[0]
            A = np.outer(v / 2, np.array([1, 1]) / 2)
            return 2, 0.0, A
        # three in a line, evenly spaced: the middle one at the centroid
        far = np.argsort(-np.linalg.norm(c, axis=1))
        mid = far[-1]
        ends = far[:2]
        v = c[ends[0]] - c[ends[1]]
        L = np.linalg.norm(v)
        err = np.linalg.norm(c[mid]) / (L / 2 + 1e-9)
        perp = abs(_cross(v / (L + 1e-9), c[mid])) / (L / 2 + 1e-9)
        return 3, float(max(err, perp)), np.outer(v / 2, np.array([1, 1]) / 2)
    best: tuple[int | None, float, np.ndarray | None] = (None, 9.0, None)
    # anchor the fit on the three observed pips spanning the largest triangle and try every
    # three layout pips for them (at most 6 * 5 * 4); the affine map absorbs the camera's tilt
    idx = list(range(n))
    tri = max(combinations(idx, 3), key=lambda t: abs(_cross(c[t[1]] - c[t[0]], c[t[2]] - c[t[0]])))
    anchor = c[list(tri)].astype(np.float32)
    for perm in permutations(idx, 3):
        src = layout[list(perm)]
        if abs(_cross(src[1] - src[0], src[2] - src[0])) < 1e-6:
            continue
        M = cv2.getAffineTransform(src.astype(np.float32), anchor).astype(float)
        mapped = layout @ M[:, :2].T + M[:, 2]
        dd = np.linalg.norm(mapped[:, None, :] - c[None, :, :], axis=2)
        # each observed point to its nearest mapped point, one to one
        if len(set(dd.argmin(0).tolist())) != n:
            continue
        scale = math.sqrt(abs(np.linalg.det(M[:, :2]))) + 1e-9
        err = float(dd.min(0).max() / scale)
        if err < best[1]:
            best = (n, err, M[:, :2])
    return best


def fit_group(cfg: VisionConfig, group: list[Pip]):
    """(value, error, map) if the pips show a die layout with die-like spacing, else None."""
    pts = np.array([(p.x, p.y) for p in group])
    value, err, A = _fit_layout(pts)
    if value is None or err > cfg.dice_pattern_max_error:
        return None
    if A is not None:
        d = median_of([p.d for p in group])
        sv = np.linalg.svd(A, compute_uv=False)
        offset = float(math.sqrt(sv[0] * sv[1])) if len(group) >= 4 else float(sv[0])
        if not cfg.dice_spacing_min_diameters <= 2 * offset / d <= cfg.dice_spacing_max_diameters:
            return None
    return value, err, A


def _least_pip(group: list[Pip]) -> int:
    """Index of the pip least like the others of its group: flattest, smallest, faintest."""
    med_d = median_of([p.d for p in group])
    med_c = median_of([p.contrast for p in group])
    return min(
        range(len(group)),
        key=lambda i: group[i].aspect * min(1.0, group[i].d / med_d) * min(1.0, group[i].contrast / med_c),
    )


def best_subset(cfg: VisionConfig, group: list[Pip]):
    """The group, or the largest part of it that shows a die layout (side-face pips dropped)."""
    group = list(group)
    while len(group) > 6:  # too many: drop the least face-on pip (flattest, smallest, faintest)
        group.pop(_least_pip(group))
    while group:
        fit = fit_group(cfg, group)
        if fit is not None:
            return group, fit
        if len(group) <= 1:
            return None
        best = None
        for i in range(len(group)):
            rest = group[:i] + group[i + 1 :]
            f = fit_group(cfg, rest) if len(rest) > 1 else None
            if f is not None and (best is None or f[1] < best[1][1]):
                best = (rest, f)
        if best is not None:
            return best
        group.pop(_least_pip(group))
    return None


def split_group(group: list[Pip], ratio: float) -> tuple[list[Pip], list[Pip]] | None:
    """Two touching dice linked into one group: cut the longest link of the group's spanning tree
    if it is clearly longer than its other links; None if no link stands out."""
    n = len(group)
    xy = np.array([(p.x, p.y) for p in group])
    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    inside, edges = [0], []
    best = dist[0].copy()
    parent = np.zeros(n, int)
    left = set(range(1, n))
    while left:
        j = min(left, key=lambda k: best[k])
        edges.append((best[j], parent[j], j))
        left.discard(j)
        inside.append(j)
        for k in left:
            if dist[j, k] < best[k]:
                best[k], parent[k] = dist[j, k], j
    edges.sort()
    longest = edges[-1]
    if longest[0] < ratio * median_of([e[0] for e in edges[:-1]]):
        return None
    # the two sides of the cut: grow from one end without the cut edge
    adj: dict[int, list[int]] = {i: [] for i in range(n)}
    for _, a, b in edges[:-1]:
        adj[a].append(b)
        adj[b].append(a)
    seen, stack = {longest[1]}, [longest[1]]
    while stack:
        for k in adj[stack.pop()]:
            if k not in seen:
                seen.add(k)
                stack.append(k)
    return [group[i] for i in sorted(seen)], [group[i] for i in range(n) if i not in seen]
