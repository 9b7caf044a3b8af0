"""Trust: whether a frame can be read at all, and when a reading is stable.

Owns the occlusion test and the stability gate. The board's own drawing (triangle sides, the
borders of the field and the bar) is known from the board layout, so its edges must show wherever
no checker, die or cube lies: a region where too many are missing is occluded, and its frame is
not read. :class:`Gate` turns per-frame readings into a status: ``occluded``, ``board-not-found``,
``settling`` or ``stable`` (the same reading ``stable_frames`` frames in a row, without motion).
May import ``board_rules`` types; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from vision.board import CHECKER_DIAMETER_MM
from vision.profile import Layout, layout

STATUSES = ("stable", "settling", "occluded", "board-not-found")
_STEP_MM = 2.0


def _segment(a, b, step: float = _STEP_MM) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = max(2, int(np.linalg.norm(b - a) / step) + 1)
    t = np.linspace(0.0, 1.0, n)[:, None]
    return a + t * (b - a)


_REGION_NAMES = tuple(str(n) for n in range(1, 25)) + ("bar",)
_BAR = _REGION_NAMES.index("bar")


def _region_index(lay: Layout, pts: np.ndarray) -> np.ndarray:
    """Index into ``_REGION_NAMES`` of each board-mm point's region: the point whose column holds it or
    the bar, a point on the field's border counting for the region just inside; -1 for none (off the
    field's sides, or a margin beside a half's outer points)."""
    g, (fx0, fy0, fx1, fy1) = lay.geometry, lay.field
    out = np.full(len(pts), -1, np.int64)
    for i, (x, y) in enumerate(pts):
        cx, cy = min(max(x, fx0 + 0.5), fx1 - 0.5), min(max(y, fy0 + 0.5), fy1 - 0.5)
        p = lay.point_at(cx, cy)
        if p is not None:
            out[i] = p - 1
        elif g.bar[0] <= cx < g.bar[2]:
            out[i] = _BAR
    return out


@lru_cache(maxsize=8)
def static_samples(lay: Layout | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Board-mm points on a layout's own edges (triangle sides, the halves' borders; the renderer's
    board by default) and their region indices: the ``samples`` :func:`occlusion` takes."""
    g = (lay or layout()).geometry
    pts = []
    for p in g.points:
        base_l, base_r, tip = (p.x0 + 1, p.base_y), (p.x1 - 1, p.base_y), (p.centre_x, p.tip_y)
        inward = 1.5 * p.direction  # keep clear of the field's border, sampled on its own
        pts.append(_segment((base_l[0], base_l[1] + inward), tip)[:-2])
        pts.append(_segment((base_r[0], base_r[1] + inward), tip)[:-2])
    for x0, y0, x1, y1 in (g.left_half, g.right_half):
        pts.append(_segment((x0 + 1, y0), (x1 - 1, y0)))
        pts.append(_segment((x0 + 1, y1), (x1 - 1, y1)))
        pts.append(_segment((x0, y0 + 1), (x0, y1 - 1)))
        pts.append(_segment((x1, y0 + 1), (x1, y1 - 1)))
    samples = np.concatenate(pts)
    index = _region_index(lay or layout(), samples)
    return samples[index >= 0], index[index >= 0]


@dataclass(frozen=True, slots=True)
class Occlusion:
    """Per region (``"1"``..``"24"``, ``"bar"``), the fraction of the board's own edges that
    should show there and do not; ``occluded`` lists the regions over the limit, ``hands`` those
    under a hand (:func:`hands`)."""

    missing: dict[str, float]
    occluded: tuple[str, ...]
    seen_fraction: float  # of all the board's own edges that should show, the fraction that does
    hands: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (Python numbers only)."""
        return {
            "occluded": [str(r) for r in self.occluded],
            "missing": {str(k): round(float(v), 3) for k, v in self.missing.items()},
            "seen": round(float(self.seen_fraction), 3),
            "hands": [str(r) for r in self.hands],
        }


@lru_cache(maxsize=8)
def learned_samples(
    board_edges: tuple[tuple[float, float], ...], lay: Layout | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Board edges learned from a reference frame (:attr:`vision.checkers.Palette.board_edges`) as
    samples and their region indices on a layout (the renderer's board by default); an edge in no
    point's column and off the bar (a margin beside a half's outer points) is left out."""
    pts = np.asarray(board_edges, dtype=np.float64).reshape(-1, 2)
    index = _region_index(lay or layout(), pts)
    return pts[index >= 0], index[index >= 0]


def occlusion(
    edges_at,
    covers: Sequence[tuple[float, float, float]],
    *,
    max_missing: float,
    min_samples: int = 6,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
    bar_sides: tuple[float, float] = (),
) -> Occlusion:
    """Which regions hide the board's own edges.

    ``edges_at(points_mm) -> bool array`` tells where the frame shows an edge;
    ``covers`` are discs ``(x, y, radius)`` in board mm where a checker, die or
    cube was read (its own rim explains what lies under it). A region is occluded
    when more than ``max_missing`` of at least ``min_samples`` expected edge
    samples are missing. ``samples`` are the board's edges learned from a
    reference frame (:func:`learned_samples`) or a layout's (:func:`static_samples`); without
    them, the edges of the renderer's board (triangle sides, field borders) are used.
    ``bar_sides``: the x (board mm) of the bar's two sides, whose samples are not expected where the
    frame shows a side nowhere along it while the points beside it show theirs (:func:`_faint_bar_sides`).
    """
    pts, index = samples if samples is not None and len(samples[0]) else static_samples()
    expected = np.ones(len(pts), bool)
    if len(covers):
        by_x = np.argsort(pts[:, 0], kind="stable")
        xs = pts[by_x, 0]
        cx, cy, cr = np.asarray(covers, dtype=np.float64).reshape(-1, 3).T
        # only samples this close across can lie in a disc: each disc's run of the samples by x, all at once
        lo, hi = np.searchsorted(xs, cx - cr - 1), np.searchsorted(xs, cx + cr + 1)
        runs = hi - lo
        disc = np.repeat(np.arange(len(cx)), runs)
        near = by_x[np.arange(runs.sum()) - np.repeat(np.cumsum(runs) - runs - lo, runs)]
        outside = np.hypot(pts[near, 0] - cx[disc], pts[near, 1] - cy[disc]) > cr[disc]
        expected[near[~outside]] = False
    seen = np.zeros(len(pts), bool)
    if expected.any():
        seen[expected] = edges_at(pts[expected])
    if bar_sides:
        expected &= ~_faint_bar_sides(pts, index, expected, seen, bar_sides)
    n_exp = np.bincount(index, weights=expected, minlength=len(_REGION_NAMES))
    n_miss = np.bincount(index, weights=expected & ~seen, minlength=len(_REGION_NAMES))
    valid = n_exp >= min_samples
    frac = np.where(valid, n_miss / np.maximum(n_exp, 1), 0.0)
    faint = _faint_points(frac, valid)
    missing = {name: float(frac[i]) for i, name in enumerate(_REGION_NAMES) if valid[i]}
    occluded = tuple(
        name for i, name in enumerate(_REGION_NAMES) if valid[i] and frac[i] > max_missing and not faint[i]
    )
    counted = expected & ~faint[index]
    total = float(counted.sum())
    return Occlusion(missing, occluded, float(seen[counted].sum() / total) if total else 1.0)


def _faint_points(frac: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per region, whether its point is one of a row's points of one colour whose sides the frame does
    not all show (more than ``_SHOWN_MISSING`` missing), at least three of them, while every point of
    the other colour between them shows its sides: a board whose points of one colour are near the
    field's (dark points on a dark field, light ones in a lamp's light). Anything over the board covers
    neighbouring points of both colours, so those points are not held back for it; the points between
    them still are, wherever they are short."""
    faint = np.zeros(len(_REGION_NAMES), bool)
    dim = valid & (frac > _SHOWN_MISSING)
    shown = valid & (frac <= _SHOWN_MISSING)
    for row in (range(0, 12), range(12, 24)):
        for parity in (0, 1):
            members = [i for i in row if i % 2 == parity]
            lit = [i for i in members if dim[i]]
            between = [i for i in row if i % 2 != parity and lit and lit[0] < i < lit[-1]]
            if len(lit) >= 3 and shown[between].all():
                faint[members] = True
    return faint


def _faint_bar_sides(
    pts: np.ndarray, index: np.ndarray, expected: np.ndarray, seen: np.ndarray, bar_sides: tuple[float, float]
) -> np.ndarray:
    """The samples of each side of the bar that the frame hardly shows (more than ``_FAINT_MISSING``
    missing) while the board's other edges near it, the sides of the points beside it, show (at most
    ``_SHOWN_MISSING`` missing): a bar of the field's colour, or a folding board's hinge, has no side
    to show. A hand over the bar hides the sides of the points beside it too."""
    out = np.zeros(len(pts), bool)
    for x in bar_sides:
        line = expected & (np.abs(pts[:, 0] - x) < _BAR_SIDE_MM)
        if not line.any() or (line & ~seen).sum() <= _FAINT_MISSING * line.sum():
            continue
        beside = expected & ~line & (np.abs(pts[:, 0] - x) < _BESIDE_MM) & (index != _BAR)
        if beside.sum() >= 6 and (beside & ~seen).sum() <= _SHOWN_MISSING * beside.sum():
            out |= line
    return out


_BAR_SIDE_MM = 0.5  # a sample this near a bar side's x lies on it
_BESIDE_MM = 30.0  # the board's edges this near a bar side are those of the points beside it
_SHOWN_MISSING = 0.15  # a point shows its sides when it misses no more than this of them
_FAINT_MISSING = 0.3  # a bar side misses more than this to be looked at as the board's


# Skin in OpenCV's 8-bit Lab (L, a and b ranges): hands in daylight and lamplight, light and dark.
_SKIN_LAB = ((40, 235), (133, 165), (133, 170))
_HAND_PX_PER_MM = 1.0  # a hand is looked for at this many px a mm (at 0.5 its fingers were lost)
_CLASS_BORDER_MM = 2.5  # px this near a border between the board's colours are left out (drawing, warp)
_FOREIGN_WEIGHTS = np.array([0.5, 1.0, 1.0], np.float32)  # lightness counted half: light and shade
# An arm comes in over the field's edge and reaches into it, at least this share of its extent along
# that edge; shade or a reflection of the frame lies along the edge instead.
_ARM_MIN_DEPTH = 1 / 3
# Where the photo shows the frame beyond the field, an arm covers at least this share of it along the
# patch's side, at these distances out from the field's edge (mm).
_ARM_FROM_BEYOND = 1 / 3
_BEYOND_MM = (4.0, 8.0, 12.0)
# a frame whose colours all round the field spread so far that only px further than this (Lab units, as
# the foreign test counts them) would be foreign tells nothing at that distance, and is not looked at
# there: a dark lip beside a pale frame, a stream's overlays, a product photo's white ground
_BEYOND_MAX_LAB = 80.0
# A sleeve is told apart channel by channel: a px further from its colour than this many times the
# colour's median distance in any one Lab channel (and these Lab units) is foreign. A faded or
# grained board spreads its lightness widely, and a dark sleeve over it differs in hue as much.
_APART_SPREAD = 4.0
_APART_MIN_LAB = np.array([16.0, 8.0, 8.0], np.float32)
# its pieces between the triangles (the borders between the board's colours are not looked at) are
# joined across this many mm
_APART_JOIN_MM = 12.0
# the far end of an arm, this share of its depth into the field, is its hand
_HAND_END = 1 / 3
# board-mm points (N x 2) -> the photo's Lab colours there (N x 3) and whether the photo shows each (N)
Beyond = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@lru_cache(maxsize=8)
def _board_classes(lay: Layout, scale: float, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per px of a view at ``scale`` px a mm: the board colour it should show (0 and 1 the triangles of odd
    and even points, 2 the field between them; -1 off the field or near a border between two of them)
    and its region (an index into ``_REGION_NAMES``, -1 for none)."""
    h, w = shape
    g = lay.geometry
    masks = [np.zeros((h, w), np.uint8) for _ in range(3)]
    region = np.full((h, w), -1, np.int8)

    def rect(img, x0, y0, x1, y1, value) -> None:
        img[max(0, int(y0 * scale)) : max(0, int(y1 * scale)), max(0, int(x0 * scale)) : max(0, int(x1 * scale))] = (
            value
        )

    for x0, y0, x1, y1 in (g.left_half, g.right_half):
        rect(masks[2], x0, y0, x1, y1, 1)
    for p in g.points:
        tri = np.array([[p.x0, p.base_y], [p.x1, p.base_y], [p.centre_x, p.tip_y]]) * scale
        cv2.fillPoly(masks[p.number % 2], [np.round(tri).astype(np.int32)], 1)
        lo, hi = sorted((p.base_y, lay.mid_y))
        rect(region, p.x0, lo, p.x1, hi, p.number - 1)
    rect(region, *g.bar, _BAR)
    masks[2] &= 1 - (masks[0] | masks[1])
    r = max(1, int(round(_CLASS_BORDER_MM * scale)))
    kernel = np.ones((2 * r + 1, 2 * r + 1), np.uint8)
    border = np.zeros((h, w), bool)
    for m in masks:
        border |= cv2.dilate(m, kernel) != cv2.erode(m, kernel)
    classes = np.full((h, w), -1, np.int8)
    for c, m in enumerate(masks):
        classes[(m > 0) & ~border] = c
    return classes, region


def hands(
    lab: np.ndarray,
    lay: Layout,
    ppm: float,
    covers: Sequence[tuple[float, float, float]],
    *,
    min_checkers: float,
    min_skin: float,
    min_lab: float,
    spread: float,
    beyond: Beyond | None = None,
) -> tuple[str, ...]:
    """The regions (``"1"``..``"24"``, ``"bar"``) under a hand on a real board's view (``lab``: its Lab px at
    ``ppm`` px a board mm on ``lay``). Each of the board's colours (the two triangles', the field's) is
    told from the frame itself: its median, and how far its px lie from it. A px further than ``spread``
    times that median distance (and ``min_lab``) is foreign; so is one further in any one channel than
    :data:`_APART_SPREAD` times that channel's (a sleeve over a faded board), whose patches are joined
    across the borders between the board's colours. A patch of foreign px at least ``min_checkers``
    checker tops in area, where nothing read lies (``covers``: discs in board mm), is a hand where it
    comes in over the field's edge, reaching into the field (:data:`_ARM_MIN_DEPTH`), and at least
    ``min_skin`` of it, or of its far end, is skin-coloured (:func:`_hand_in`); with ``beyond``
    (board-mm points -> the photo's Lab there and whether it shows them:
    :meth:`vision.view.View.photo_lab_at`), also from beyond it, where the photo shows the frame
    (:func:`_from_beyond`). The edge test (:func:`occlusion`) misses a hand whose fingers show edges
    enough, or over checkers read under it."""
    step = max(1, int(round(ppm / _HAND_PX_PER_MM)))
    small = (
        lab
        if step == 1
        else cv2.resize(lab, (lab.shape[1] // step, lab.shape[0] // step), interpolation=cv2.INTER_AREA)
    )
    scale = ppm / step
    classes, region = _board_classes(lay, scale, small.shape[:2])
    fx0, fy0, fx1, fy1 = (max(0, int(v * scale)) for v in lay.field)
    field = (slice(fy0, fy1 + 1), slice(fx0, fx1 + 1))  # the rest of the view is never foreign
    small, classes, region = small[field], classes[field], region[field]
    free = (classes >= 0).astype(np.uint8)
    for x, y, r in covers:
        centre = (int(round(x * scale)) - fx0, int(round(y * scale)) - fy0)
        cv2.circle(free, centre, int(round((r + 1.0) * scale)), 0, -1)
    d = lay.profile.checker_diameter_mm
    least = min_checkers * np.pi * (d / 2 * scale) ** 2
    (l0, l1), (a0, a1), (b0, b1) = _SKIN_LAB
    skin_px = cv2.inRange(small, (l0 + 1, a0 + 1, b0 + 1), (l1 - 1, a1 - 1, b1 - 1)) & free
    if cv2.countNonZero(skin_px) < least * min_skin:  # too little skin on the field for a hand: most frames
        return ()
    known = np.where(free > 0, classes, -1)
    few, few_known = small[::2, ::2], known[::2, ::2]  # each colour's median and spread: every other px is enough
    foreign = np.zeros(classes.shape, np.uint8)  # far from its colour, the channels summed
    apart = np.zeros(classes.shape, bool)  # far from its colour in one channel
    for c in range(3):
        values = few[few_known == c]
        if len(values) < 12:
            continue
        centre = np.median(values, axis=0)
        dev = np.abs(values - centre)
        spread_c = float(np.median(dev @ _FOREIGN_WEIGHTS))
        # distance (lightness counted half, city-block) of every px from this colour, in OpenCV for speed
        diff = cv2.absdiff(small, (*(float(v) for v in np.round(centre)), 0.0))
        far = cv2.transform(diff, _FOREIGN_WEIGHTS[None, :])
        here = known == c
        foreign |= (here & (far > max(min_lab, spread * spread_c))).view(np.uint8)
        near = np.maximum(_APART_MIN_LAB, _APART_SPREAD * np.median(dev, axis=0))
        apart |= here & (cv2.inRange(diff, (0.0, 0.0, 0.0), tuple(float(v) for v in near)) == 0)
    r = max(1, int(round(0.2 * d * scale)))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    opened = cv2.morphologyEx(foreign, cv2.MORPH_OPEN, disc)
    apart_opened = cv2.morphologyEx(apart.view(np.uint8), cv2.MORPH_OPEN, disc)
    j = max(1, int(round(_APART_JOIN_MM / 2 * scale)))
    joined = cv2.morphologyEx(
        apart_opened, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * j + 1, 2 * j + 1))
    )
    reach = 0.5 * d * scale
    under: set[int] = set()
    rings: Rings = {}
    for patches, px in ((opened, opened), (joined, apart_opened)):
        n, labels, stats, _ = cv2.connectedComponentsWithStats(patches)
        for i in range(1, n):
            x, y, w, h = stats[i, :4]
            blob = (labels[y : y + h, x : x + w] == i) & (px[y : y + h, x : x + w] > 0)
            if np.count_nonzero(blob) < least:
                continue
            ys, xs = np.nonzero(blob)  # the box of the foreign px themselves, not of the gaps joined
            blob = blob[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
            x, y, w, h = x + xs.min(), y + ys.min(), blob.shape[1], blob.shape[0]
            # an arm comes in over the field's edge and reaches into it: a patch in the middle of the field is
            # a logo or a cup, one lying along its edge shade or the frame's reflection
            gaps = {"l": x, "r": small.shape[1] - (x + w), "t": y, "b": small.shape[0] - (y + h)}
            touching = [side for side, gap in gaps.items() if gap <= reach]
            deep = [side for side in touching if (w, h)[side in "tb"] >= _ARM_MIN_DEPTH * (h, w)[side in "tb"]]
            if not deep or not _hand_in(blob, skin_px[y : y + h, x : x + w] > 0, deep, min_skin):
                continue
            if beyond is not None:
                rings = rings or _frame_rings(lay, beyond)  # looked at once, for whichever patches need it
                box_mm = ((x + fx0) / scale, (y + fy0) / scale, (x + w + fx0) / scale, (y + h + fy0) / scale)
                if not _from_beyond(rings, box_mm, touching, min_lab, spread):
                    continue
            under.update(int(k) for k in np.unique(region[y : y + h, x : x + w][blob]) if k >= 0)
    return tuple(_REGION_NAMES[k] for k in sorted(under))


def _hand_in(blob: np.ndarray, skin: np.ndarray, sides: Sequence[str], min_skin: float) -> bool:
    """Whether a patch (``blob`` in its box; ``skin``: the box's skin-coloured px) is skin-coloured enough
    to be a hand: at least ``min_skin`` of it, or of its far end (:data:`_HAND_END` of its depth) from one
    of the field's ``sides`` it comes in over, as a hand at the end of a sleeve is."""
    if np.count_nonzero(skin & blob) >= min_skin * np.count_nonzero(blob):
        return True
    ys, xs = np.nonzero(blob)
    h, w = blob.shape
    for side in sides:
        depth = {"l": xs, "r": w - 1 - xs, "t": ys, "b": h - 1 - ys}[side]
        end = depth >= depth.max() - _HAND_END * (depth.max() - depth.min())
        if np.count_nonzero(skin[ys[end], xs[end]]) >= min_skin * np.count_nonzero(end):
            return True
    return False


def _beyond_points(lay: Layout, side: str, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Board-mm points just beyond the field's ``side`` (``l``, ``t``, ``r``, ``b``), every ``step`` mm along
    it, one row at each of :data:`_BEYOND_MM` out from its edge (rows x along x 2), and where along the
    side each column lies."""
    x0, y0, x1, y1 = lay.field
    along = np.arange(y0, y1, step) if side in "lr" else np.arange(x0, x1, step)
    out = np.asarray(_BEYOND_MM)[:, None]
    if side in "lr":
        xs = x0 - out if side == "l" else x1 + out
        pts = np.stack(np.broadcast_arrays(xs, along[None, :]), axis=-1)
    else:
        ys = y0 - out if side == "t" else y1 + out
        pts = np.stack(np.broadcast_arrays(along[None, :], ys), axis=-1)
    return pts, along


# the frame all round the field as :func:`_from_beyond` looks at it: per side (``l``, ``t``, ``r``, ``b``),
# where along the side each column lies, and the photo's Lab there and whether it shows it (rows x columns)
Rings = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _frame_rings(lay: Layout, beyond: Beyond) -> Rings:
    """The frame beyond each of the field's sides (:func:`_beyond_points`, every 3 mm) as the photo shows it."""
    rows = len(_BEYOND_MM)
    rings = {}
    for side in "ltrb":
        pts, along = _beyond_points(lay, side, 3.0)
        lab, seen = beyond(pts.reshape(-1, 2))
        rings[side] = (along, lab.reshape(rows, -1, 3), seen.reshape(rows, -1))
    return rings


def _from_beyond(rings: Rings, box_mm, sides: Sequence[str], min_lab: float, spread: float) -> bool:
    """Whether a patch at the field's ``sides`` (its box ``box_mm``) comes in from beyond the field, as an
    arm does: at least :data:`_ARM_FROM_BEYOND` of the frame beyond it (``rings``: :func:`_frame_rings`) is
    off the photo or unlike the frame all round the field at that distance, over the distances where that
    frame is even enough to tell (:data:`_BEYOND_MAX_LAB`). A stack of skin-coloured checkers the reading
    missed lies on the field alone, the frame beyond it as it is elsewhere."""
    rows = len(_BEYOND_MM)
    labs = {side: (lab, seen) for side, (_, lab, seen) in rings.items()}
    for side in sides:
        lo, hi = (box_mm[1], box_mm[3]) if side in "lr" else (box_mm[0], box_mm[2])
        along = rings[side][0]
        span = (along >= lo) & (along <= hi)
        if not span.any():
            continue
        arm = np.ones((rows, int(span.sum())), bool)
        told = np.ones(rows, bool)
        for row in range(rows):
            rest = [lab[row][seen[row] & (~span if other == side else True)] for other, (lab, seen) in labs.items()]
            rest = np.concatenate(rest)
            if len(rest) < 12:  # the frame hardly shows: nothing to tell an arm by
                continue
            centre = np.median(rest, axis=0)
            limit = max(min_lab, spread * float(np.median(np.abs(rest - centre) @ _FOREIGN_WEIGHTS)))
            if limit > _BEYOND_MAX_LAB:  # a frame this varied at this distance tells nothing there
                told[row] = False
                continue
            lab, seen = labs[side]
            arm[row] = ~seen[row][span] | ((np.abs(lab[row][span] - centre) @ _FOREIGN_WEIGHTS) > limit)
        if told.any() and arm[told].mean() >= _ARM_FROM_BEYOND:
            return True
    return False


def checker_covers(
    points: Sequence[int], slot_centre, bar_centres=(), diameter: float = CHECKER_DIAMETER_MM
) -> list[tuple[float, float, float]]:
    """Discs (board mm) covered by the checkers (of ``diameter`` mm) of a reading: every slot of every stack, and the bar's."""
    r = diameter / 2 + 1.5
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
    return int(
        cv2.countNonZero(
            cv2.threshold(cv2.absdiff(previous_small, current_small), threshold, 255, cv2.THRESH_BINARY)[1]
        )
    )


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

    def update(
        self, key: Any, *, occluded: bool = False, board_found: bool = True, moving: bool = False
    ) -> tuple[str, int]:
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
