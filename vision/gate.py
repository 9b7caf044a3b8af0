"""Trust: whether a frame can be read at all, and when a reading is stable.

Owns the occlusion test and the stability gate. The board's own drawing (the
sides of the 24 triangles, the borders of the field and the bar) is known from
the calibration, so its edges must show wherever no checker, die or cube lies
on them. A hand, an arm or a sleeve hides them: a region where too many of
them are missing is occluded, and a frame with an occluded region is never
read. :class:`Gate` turns per-frame readings into a status: ``occluded``,
``board-not-found``, ``settling`` (changed or moving, or not yet held long
enough) or ``stable`` (the same reading for ``stable_frames`` frames in a
row, without motion). May import ``board_rules`` types; must not import
``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import cv2
import numpy as np

from vision.render import BAR_X0, BAR_X1, CHECKER_DIAMETER_MM, FIELD_Y0, FIELD_Y1, GEOMETRY

STATUSES = ("stable", "settling", "occluded", "board-not-found")
_STEP_MM = 2.0


def _segment(a, b, step: float = _STEP_MM) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = max(2, int(np.linalg.norm(b - a) / step) + 1)
    t = np.linspace(0.0, 1.0, n)[:, None]
    return a + t * (b - a)


def _region_of(x: float, y: float) -> str:
    p = GEOMETRY.point_at(x, y)
    if p is not None:
        return str(p)
    if BAR_X0 <= x < BAR_X1:
        return "bar"
    return "border"


def _static_samples() -> tuple[np.ndarray, tuple[str, ...]]:
    """Board-mm points on the board's own edges, and the region each belongs to."""
    pts = []
    for p in GEOMETRY.points:
        base_l, base_r, tip = (p.x0 + 1, p.base_y), (p.x1 - 1, p.base_y), (p.centre_x, p.tip_y)
        inward = 1.5 * p.direction  # keep clear of the field's border, sampled on its own
        pts.append(_segment((base_l[0], base_l[1] + inward), tip)[:-2])
        pts.append(_segment((base_r[0], base_r[1] + inward), tip)[:-2])
    for x0, y0, x1, y1 in (GEOMETRY.left_half, GEOMETRY.right_half):
        pts.append(_segment((x0 + 1, y0), (x1 - 1, y0)))
        pts.append(_segment((x0 + 1, y1), (x1 - 1, y1)))
        pts.append(_segment((x0, y0 + 1), (x0, y1 - 1)))
        pts.append(_segment((x1, y0 + 1), (x1, y1 - 1)))
    samples = np.concatenate(pts)
    regions = []
    for x, y in samples:
        # a border sample belongs to the region just inside the field
        cx = min(max(x, GEOMETRY.left_half[0] + 0.5), GEOMETRY.right_half[2] - 0.5)
        cy = min(max(y, FIELD_Y0 + 0.5), FIELD_Y1 - 0.5)
        regions.append(_region_of(cx, cy))
    return samples, tuple(regions)


STATIC_SAMPLES, STATIC_REGIONS = _static_samples()
_REGION_NAMES = tuple(sorted(set(STATIC_REGIONS), key=lambda r: (not r.isdigit(), int(r) if r.isdigit() else 0, r)))
_REGION_INDEX = np.array([_REGION_NAMES.index(r) for r in STATIC_REGIONS])


@dataclass(frozen=True, slots=True)
class Occlusion:
    """Per region (``"1"``..``"24"``, ``"bar"``), the fraction of the board's own edges that
    should show there and do not; ``occluded`` lists the regions over the limit."""

    missing: dict[str, float]
    occluded: tuple[str, ...]
    seen_fraction: float  # of all the board's own edges that should show, the fraction that does

    def to_dict(self) -> dict[str, Any]:
        return {"occluded": list(self.occluded), "missing": {k: round(v, 3) for k, v in self.missing.items()}, "seen": round(self.seen_fraction, 3)}


@lru_cache(maxsize=8)
def learned_samples(board_edges: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, np.ndarray]:
    """Board edges learned from a reference frame as samples and their region indices."""
    pts = np.asarray(board_edges, dtype=np.float64).reshape(-1, 2)
    index = np.array([_REGION_NAMES.index(_region_of(x, y)) if _region_of(x, y) in _REGION_NAMES else _REGION_NAMES.index("border")
                      for x, y in pts], dtype=np.int64)
    return pts, index


def occlusion(
    edges_at,
    covers: Sequence[tuple[float, float, float]],
    *,
    max_missing: float,
    min_samples: int = 6,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
) -> Occlusion:
    """Which regions hide the board's own edges.

    ``edges_at(points_mm) -> bool array`` tells where the frame shows an edge;
    ``covers`` are discs ``(x, y, radius)`` in board mm where a checker, die or
    cube was read (its own rim explains what lies under it). A region is occluded
    when more than ``max_missing`` of at least ``min_samples`` expected edge
    samples are missing. ``samples`` are the board's edges learned from a
    reference frame (:func:`learned_samples`); without them, the edges of the
    standard layout (triangle sides, field borders) are used.
    """
    pts, index = samples if samples is not None and len(samples[0]) else (STATIC_SAMPLES, _REGION_INDEX)
    expected = np.ones(len(pts), bool)
    for x, y, r in covers:
        expected &= np.hypot(pts[:, 0] - x, pts[:, 1] - y) > r
    seen = np.zeros(len(pts), bool)
    if expected.any():
        seen[expected] = edges_at(pts[expected])
    n_exp = np.bincount(index, weights=expected, minlength=len(_REGION_NAMES))
    n_miss = np.bincount(index, weights=expected & ~seen, minlength=len(_REGION_NAMES))
    missing = {}
    occluded = []
    for i, name in enumerate(_REGION_NAMES):
        if name == "border" or n_exp[i] < min_samples:
            continue
        frac = float(n_miss[i] / n_exp[i])
        missing[name] = frac
        if frac > max_missing:
            occluded.append(name)
    total = float(expected.sum())
    return Occlusion(missing, tuple(occluded), float(seen[expected].sum() / total) if total else 1.0)


def checker_covers(points: Sequence[int], slot_centre, bar_centres=()) -> list[tuple[float, float, float]]:
    """Discs (board mm) covered by the checkers of a reading: every slot of every stack, and the bar's."""
    r = CHECKER_DIAMETER_MM / 2 + 1.5
    out = []
    for i, v in enumerate(points):
        for k in range(min(abs(v), 15)):
            x, y = slot_centre(i + 1, k)
            out.append((x, y, r))
    out.extend((x, y, r) for x, y in bar_centres)
    return out


def small_grey(image: np.ndarray) -> np.ndarray:
    """A frame's grey levels at a quarter of its size: what motion and change are judged on."""
    g = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    return cv2.resize(g, (max(1, g.shape[1] // 4), max(1, g.shape[0] // 4)), interpolation=cv2.INTER_AREA)


def changed_px(previous_small: np.ndarray | None, current_small: np.ndarray, threshold: float) -> int | None:
    """How many px of two :func:`small_grey` images differ by more than ``threshold`` (None: nothing to compare)."""
    if previous_small is None or previous_small.shape != current_small.shape:
        return None
    return int(cv2.countNonZero(cv2.threshold(cv2.absdiff(previous_small, current_small), threshold, 255, cv2.THRESH_BINARY)[1]))


def motion(previous: np.ndarray | None, current: np.ndarray, threshold: float) -> float:
    """Fraction of pixels whose grey level changed by more than ``threshold`` between two frames (0 without a previous one)."""
    if previous is None or previous.shape != current.shape:
        return 0.0
    b = small_grey(current)
    return changed_px(small_grey(previous), b, threshold) / b.size


class Gate:
    """Per-frame readings in, a status out: a reading is ``stable`` only after it held,
    unchanged and without motion, for ``stable_frames`` frames in a row.

    ``update(key, occluded=..., board_found=..., moving=...)`` takes the frame's
    reading as a hashable ``key`` (what must not change: counts, dice, cube) and
    returns ``(status, frames_held)``. An occluded frame or a lost board resets the
    count and motion restarts it: the pipeline never reports a reading taken through a hand.
    """

    def __init__(self, stable_frames: int) -> None:
        if not isinstance(stable_frames, int) or stable_frames < 1:
            raise ValueError(f"stable_frames: {stable_frames!r}: expected an integer >= 1")
        self.stable_frames = stable_frames
        self._key: Any = None
        self._held = 0

    def reset(self) -> None:
        self._key, self._held = None, 0

    def update(self, key: Any, *, occluded: bool = False, board_found: bool = True, moving: bool = False) -> tuple[str, int]:
        if not board_found:
            self.reset()
            return "board-not-found", 0
        if occluded:
            self.reset()
            return "occluded", 0
        if moving or key != self._key:  # a frame that moved or changed starts a new hold
            self._key, self._held = key, 1
        else:
            self._held += 1
        return ("stable" if self._held >= self.stable_frames else "settling"), self._held
