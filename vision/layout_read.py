"""Reading a frame on any board layout (:mod:`vision.profile`): checkers, dice and occlusion.

Owns the layout-driven twins of :func:`vision.checkers.read_checkers`,
:func:`vision.checkers.learn_palette` and :func:`vision.observe.read_frame`: the
same ring model, palette, gate and statuses, with every place (points, slots,
bar, trays, the board's own edges) taken from ``geometry.layout`` instead of
the renderer's module constants. For the ``rendered`` profile it reads as
those functions do (pinned by a test), so they can be folded into
:mod:`vision.checkers` and :mod:`vision.observe` by passing the layout through.
The cube is not looked for (:mod:`vision.cube` knows only the renderer's
places). May import ``board_rules`` types; must not import ``firmware_bridge``
or ``referee``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import cv2
import numpy as np

from board_rules import Position
from vision import checkers as _c
from vision import gate as _gate
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config
from vision.observe import DieObservation, Observation
from vision.profile import Layout


def _rim_mm(lay: Layout) -> float:
    return lay.profile.checker_diameter_mm / 2 - 0.6


def _static_labels(lay: Layout, pts_mm: np.ndarray) -> np.ndarray:
    """As :func:`vision.checkers._static_labels`, on the layout's regions."""
    g, (fx0, fy0, fx1, fy1) = lay.geometry, lay.field
    x, y = pts_mm[..., 0], pts_mm[..., 1]
    lab = np.zeros(x.shape, np.int32)
    inside = (y >= fy0) & (y < fy1)
    lab[inside & (((x >= g.left_half[0]) & (x < g.left_half[2])) | ((x >= g.right_half[0]) & (x < g.right_half[2])))] = 30
    lab[inside & (x >= g.bar[0]) & (x < g.bar[2])] = 31
    lab[inside & (x >= g.tray_white[0]) & (x < g.tray_white[2])] = 32
    for p in g.points:
        ax, ay, bx, by, cx, cy = p.x0 + 1, p.base_y, p.x1 - 1, p.base_y, p.centre_x, p.tip_y
        d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by)
        d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy)
        d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay)
        lab[~(((d1 < 0) | (d2 < 0) | (d3 < 0)) & ((d1 > 0) | (d2 > 0) | (d3 > 0)))] = p.number
    return lab


def _clearance(lay: Layout) -> np.ndarray:
    g, ppm = lay.geometry, _c._LABEL_PPM
    w, h = int(g.width * ppm), int(g.height * ppm)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    labels = _static_labels(lay, np.stack([(xs + 0.5) / ppm, (ys + 0.5) / ppm], axis=-1))
    edge = np.zeros((h, w), bool)
    edge[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    edge[1:, :] |= labels[1:, :] != labels[:-1, :]
    return cv2.distanceTransform((~edge).astype(np.uint8), cv2.DIST_L2, 5) / ppm


@lru_cache(maxsize=8)
def _models(lay: Layout) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per point, as :func:`vision.checkers._stack_model`: rim samples, which are clear of the
    board's own edges, and each hypothesis' predicted rims."""
    clearance = _clearance(lay)
    rim, diameter = _rim_mm(lay), lay.profile.checker_diameter_mm
    out = []
    for point in range(1, 25):
        centres = np.array([lay.checker_slot(point, k)[:2] for k in range(_c.MAX_STACK)], dtype=np.float64)
        direction = lay.geometry.points[point - 1].direction
        shifted = centres + np.array([0.0, direction * _c._PIN_SHIFT_MM])
        rims = np.concatenate([centres, shifted[: _c.MAX_STACK - 1]])
        samples = (rims[:, None, :] + rim * _c._UNIT[None]).reshape(-1, 2)
        ix = np.clip((samples * _c._LABEL_PPM).astype(int), 0, [clearance.shape[1] - 1, clearance.shape[0] - 1])
        valid = clearance[ix[:, 1], ix[:, 0]] > _c._STATIC_CLEARANCE_MM

        def shows(stack: np.ndarray) -> np.ndarray:
            dist = np.hypot(*(samples[:, None, :] - stack[None, :, :]).transpose(2, 0, 1))
            on_rim = np.abs(dist - rim) < _c._RIM_TOLERANCE_MM
            inside = dist < diameter / 2 - 0.3
            covered_above = np.zeros_like(inside)
            for k in range(len(stack) - 2, -1, -1):
                covered_above[:, k] = covered_above[:, k + 1] | inside[:, k + 1]
            return (on_rim & ~covered_above).any(axis=1)

        pred = np.zeros((_c._HYPOTHESES, len(samples)), bool)
        for n in range(1, _c.MAX_STACK + 1):
            pred[n] = shows(centres[:n])
            if n < _c.MAX_STACK:
                pred[_c.MAX_STACK + n] = shows(np.concatenate([centres[:1], shifted[:n]]))
        out.append((samples, valid, pred))
    return out


def read_checkers(
    geometry: Geometry,
    image: np.ndarray | _c.View,
    palette: _c.Palette | None = None,
    config: VisionConfig | None = None,
    ignore: Sequence[tuple[float, float, float]] = (),
) -> _c.CheckerReading:
    """Count the checkers on every point, the bar and the tray of a frame on ``geometry.layout``
    (as :func:`vision.checkers.read_checkers`, without the cube's disc). With a palette that
    learned the board's edges, rims are not looked for where that frame showed the board's own
    drawing (:func:`_quiet`): a camera calibrated on the plane of the checkers' tops sees the
    field's drawing a few mm off the layout's.

    Raises ValueError for an image that is not a BGR uint8 array.
    """
    cfg = config or default_config()
    lay = geometry.layout
    v = image if isinstance(image, _c.View) else _c.view(geometry, image, cfg)
    diameter = lay.profile.checker_diameter_mm
    quiet = _quiet(lay, palette.board_edges) if palette is not None and palette.board_edges else None
    heights, confs, pinned = [], [], []
    for samples, valid, pred in _models(lay):
        if quiet is not None:  # where the palette's frame showed the board's own drawing, a rim cannot be told
            ix = np.clip((samples * _c._LABEL_PPM).astype(int), 0, [quiet.shape[1] - 1, quiet.shape[0] - 1])
            valid = valid & quiet[ix[:, 1], ix[:, 0]]
        for x, y, r in ignore:
            valid = valid & (np.hypot(samples[:, 0] - x, samples[:, 1] - y) > r)
        seen = v.edges_at(samples[valid])
        err = (pred[:, valid] != seen[None, :]).sum(axis=1)
        order = np.argsort(err, kind="stable")
        n, under = _c._hypothesis(int(order[0]))
        heights.append(n)
        pinned.append(under)
        rival = next(int(h) for h in order[1:] if _c._hypothesis(int(h))[0] != n)
        confs.append(float(min(1.0, (err[rival] - err[order[0]]) / _c._CONFIDENT_MARGIN)))
    tops = []
    for p, n in enumerate(heights):
        if n:
            x, y = lay.checker_slot(p + 1, n - 1)[:2]
            if pinned[p]:
                y += lay.geometry.points[p].direction * _c._PIN_SHIFT_MM
            tops.append(_top_colour(v, (x, y), diameter, ignore))
    pal = palette or _c._auto_palette(tops)
    points, k = [], 0
    for n in heights:
        if not n:
            points.append(0)
            continue
        side = _c._side_of(tops[k], pal)
        k += 1
        points.append(n if side == 0 else -n)
    bar, bar_conf = _read_bar(v, lay, pal, cfg.bar_min_ring, quiet)
    off, off_conf = _read_off(v, lay, pal)
    return _c._with_issues(_c.CheckerReading(tuple(points), bar, off, tuple(confs), bar_conf, off_conf))


def _top_colour(v: _c.View, centre, diameter: float, ignore) -> np.ndarray:
    radius = diameter * 0.3
    for x, y, r in ignore:
        d = float(np.hypot(centre[0] - x, centre[1] - y))
        if d < r + radius:
            if d < 1e-6:
                break
            ux, uy = (centre[0] - x) / d, (centre[1] - y) / d
            far = diameter / 2 - 5
            return _c._disc_colour(v.lab, (centre[0] + ux * far, centre[1] + uy * far), v.ppm, 4.0)
    return _c._disc_colour(v.lab, centre, v.ppm, radius)


@lru_cache(maxsize=8)
def _clearance_of(lay: Layout) -> np.ndarray:
    return _clearance(lay)


_QUIET_MM = 1.5  # a rim sample this close to a learned edge of the board's own drawing is not used


@lru_cache(maxsize=8)
def _quiet(lay: Layout, board_edges: tuple[tuple[float, float], ...]) -> np.ndarray:
    """A mask (at ``_LABEL_PPM``) of where a learned frame showed no edge of the board's own
    drawing within ``_QUIET_MM`` (hinges, a seam down the bar, inlays): only there can a rim be told."""
    ppm = _c._LABEL_PPM
    h, w = int(lay.geometry.height * ppm), int(lay.geometry.width * ppm)
    busy = np.zeros((h, w), np.uint8)
    for x, y in board_edges:
        cv2.circle(busy, (int(x * ppm), int(y * ppm)), int(round(_QUIET_MM * ppm)), 1, -1)
    return busy == 0


def bar_rings(v: _c.View, lay: Layout, min_ring: float, quiet: np.ndarray | None = None) -> list[tuple[tuple[float, float], float]]:
    """Checkers on the bar: ``(centre_mm, rim fraction)`` of each ring found along its centre line.

    Only rim samples clear of the board's own edges count (the bar's sides, where a checker is
    wider than the bar, and with ``quiet`` from :func:`_quiet` whatever a learned frame showed there)."""
    d, step = lay.profile.checker_diameter_mm, lay.profile.checker_step_mm
    x = (lay.geometry.bar[0] + lay.geometry.bar[2]) / 2
    ys = np.arange(lay.field[1] + d / 2, lay.field[3] - d / 2, 1.0)
    centres = np.c_[np.full_like(ys, x), ys]
    pts = (centres[:, None, :] + _rim_mm(lay) * _c._UNIT[None]).reshape(-1, 2)
    clearance = _clearance_of(lay)
    ix = np.clip((pts * _c._LABEL_PPM).astype(int), 0, [clearance.shape[1] - 1, clearance.shape[0] - 1])
    valid = clearance[ix[:, 1], ix[:, 0]] > _c._STATIC_CLEARANCE_MM
    if quiet is not None:
        valid &= quiet[ix[:, 1], ix[:, 0]]
    valid = valid.reshape(len(centres), _c._ANGLES)
    shown = v.edges_at(pts).reshape(len(centres), _c._ANGLES) & valid
    n_valid = valid.sum(axis=1)
    s = np.where(n_valid >= _c._ANGLES // 3, shown.sum(axis=1) / np.maximum(n_valid, 1), 0.0)
    found: list[int] = []
    for i in np.argsort(-s):
        if s[i] < min_ring:
            break
        if all(abs(ys[i] - ys[j]) >= step * 0.45 for j in found):
            found.append(int(i))
    return [((float(x), float(ys[i])), float(s[i])) for i in sorted(found)]


def _read_bar(v: _c.View, lay: Layout, pal: _c.Palette, min_ring: float, quiet: np.ndarray | None = None):
    counts, margins = [0, 0], [1.0, 1.0]
    for centre, score in bar_rings(v, lay, min_ring, quiet):
        side = _c._side_of(_c._disc_colour(v.lab, centre, v.ppm, lay.profile.checker_diameter_mm * 0.3), pal)
        counts[side] += 1
        margins[side] = min(margins[side], float((score - min_ring) / (1 - min_ring)))
    return (counts[0], counts[1]), (margins[0], margins[1])


def _read_off(v: _c.View, lay: Layout, pal: _c.Palette):
    """As :func:`vision.checkers._read_off`, in the layout's trays (sampled across their middle 60 %)."""
    counts, confs = [], []
    first, step = _c._OFF_FIRST_MM, _c._OFF_STEP_MM
    for side, tray in ((0, lay.geometry.tray_white), (1, lay.geometry.tray_black)):
        x0, y0, x1, y1 = tray
        inset = min(12.0, (x1 - x0) * 0.2)
        xs = np.linspace(x0 + inset, x1 - inset, 5)
        along = np.arange(0.0, (y1 - y0) - 2, 0.5)
        ys = (y1 - along) if side == 0 else (y0 + along)
        pts = np.array([(x, y) for y in ys for x in xs]) * v.ppm - 0.5
        col = _c._sample(v.lab, pts).reshape(len(ys), len(xs), 3).astype(np.float32).mean(axis=1)
        own = np.array(pal.white if side == 0 else pal.black)
        other = np.array(pal.tray) if pal.tray is not None else _c._tray_guess(col)
        is_checker = np.linalg.norm(col - own, axis=1) < np.linalg.norm(col - other, axis=1)
        run = 0
        while run < len(is_checker) and (is_checker[run] or is_checker[run : run + 6].any()):
            run += 1
        length = along[run - 1] if run else 0.0
        n = int(round((length - 2 * first + step) / step)) if length > first else 0
        n = max(0, min(_c.MAX_STACK, n))
        frac = (length - 2 * first + step) / step - n if length > first else 0.0
        counts.append(n)
        confs.append(float(max(0.0, 1 - 2 * abs(frac))))
    return (counts[0], counts[1]), (confs[0], confs[1])


def learn_palette(geometry: Geometry, image: np.ndarray, position: Position, config: VisionConfig | None = None) -> _c.Palette:
    """Learn checker and tray colours, and where the board's own drawing shows, from a frame of a
    known position on ``geometry.layout`` (as :func:`vision.checkers.learn_palette`).

    Raises :class:`~vision.checkers.PaletteError` if the position has no checker of a side on a point.
    """
    lay = geometry.layout
    v = _c.view(geometry, image, config)
    d = lay.profile.checker_diameter_mm
    cols: dict[int, list[np.ndarray]] = {1: [], -1: []}
    for i, n in enumerate(position.points):
        for k in range(abs(n)):
            cols[1 if n > 0 else -1].append(_c._disc_colour(v.lab, lay.checker_slot(i + 1, k)[:2], v.ppm, d * 0.3))
    if not cols[1] or not cols[-1]:
        raise _c.PaletteError("position: expected checkers of both sides on the points to learn their colours")
    tray = None
    if position.off == (0, 0):
        x0, y0, x1, y1 = lay.geometry.tray_white
        tray = tuple(map(float, _c._disc_colour(v.lab, ((x0 + x1) / 2, (y0 + y1) / 2), v.ppm, min(10.0, (x1 - x0) / 3))))
    white = np.median(np.array(cols[1]), axis=0)
    black = np.median(np.array(cols[-1]), axis=0)
    return _c.Palette(tuple(map(float, white)), tuple(map(float, black)), tray, _learn_board_edges(v, lay, position))


# How far from a checker's slot a learned board edge must be. vision.checkers uses 3 mm, right
# for the renderer's neat stacks; players' stacks on a real board stand up to 5 mm off their
# slots, and a rim learned as the board's own edge makes the empty point look covered later.
_LEARN_MARGIN_MM = 8.0


def _learn_board_edges(v: _c.View, lay: Layout, position: Position) -> tuple[tuple[float, float], ...]:
    g, (fx0, fy0, fx1, fy1) = lay.geometry, lay.field
    xs = np.arange(fx0 + 1, fx1 - 1, _c._EDGE_GRID_MM)
    ys = np.arange(fy0 + 1, fy1 - 1, _c._EDGE_GRID_MM)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    clear = np.ones(len(grid), bool)
    centres = [lay.checker_slot(i + 1, k)[:2] for i, n in enumerate(position.points) for k in range(abs(n))]
    centres += [lay.checker_slot(i + 1, 0)[:2] for i, p in enumerate(position.pinned) if p]
    for x, y in centres:
        clear &= np.hypot(grid[:, 0] - x, grid[:, 1] - y) > lay.profile.checker_diameter_mm / 2 + _LEARN_MARGIN_MM
    if any(position.bar):
        clear &= ~((grid[:, 0] >= g.bar[0] - 3) & (grid[:, 0] <= g.bar[2] + 3))
    pts = grid[clear]
    shown = v.edges_at(pts)
    return tuple((float(x), float(y)) for x, y in pts[shown])


# ----------------------------------------------------------------- the board's own edges, per region


def _region_index(lay: Layout, pts: np.ndarray) -> np.ndarray:
    """Index into the gate's region names of each board-mm point (a border sample counts for the region just inside the
    field); -1 for one in no region (the margins beside a half's outer points)."""
    names = _gate._REGION_NAMES
    g, (fx0, fy0, fx1, fy1) = lay.geometry, lay.field
    out = []
    for x, y in pts:
        cx, cy = min(max(x, fx0 + 0.5), fx1 - 0.5), min(max(y, fy0 + 0.5), fy1 - 0.5)
        p = lay.point_at(cx, cy)
        name = str(p) if p is not None else "bar" if g.bar[0] <= cx < g.bar[2] else "border"
        out.append(names.index(name) if name in names else -1)
    return np.array(out, dtype=np.int64)


@lru_cache(maxsize=8)
def static_samples(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """The layout's own edges (triangle sides, the halves' borders) as board-mm samples and their
    region indices, in the form :func:`vision.gate.occlusion` takes as ``samples``."""
    pts = []
    g = lay.geometry
    for p in g.points:
        base_l, base_r, tip = (p.x0 + 1, p.base_y), (p.x1 - 1, p.base_y), (p.centre_x, p.tip_y)
        inward = 1.5 * p.direction
        pts.append(_gate._segment((base_l[0], base_l[1] + inward), tip)[:-2])
        pts.append(_gate._segment((base_r[0], base_r[1] + inward), tip)[:-2])
    for x0, y0, x1, y1 in (g.left_half, g.right_half):
        pts.append(_gate._segment((x0 + 1, y0), (x1 - 1, y0)))
        pts.append(_gate._segment((x0 + 1, y1), (x1 - 1, y1)))
        pts.append(_gate._segment((x0, y0 + 1), (x0, y1 - 1)))
        pts.append(_gate._segment((x1, y0 + 1), (x1, y1 - 1)))
    samples = np.concatenate(pts)
    index = _region_index(lay, samples)
    return samples[index >= 0], index[index >= 0]


@lru_cache(maxsize=8)
def _learned_samples(lay: Layout, board_edges: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, np.ndarray]:
    pts = np.array(board_edges, dtype=np.float64).reshape(-1, 2)
    index = _region_index(lay, pts)
    return pts[index >= 0], index[index >= 0]


# ----------------------------------------------------------------- one frame


def _read_dice(cfg: VisionConfig, geometry: Geometry, image: np.ndarray) -> list[DieObservation]:
    from vision.dice import read_dice

    lay = geometry.layout
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(geometry.to_image(lay.field_corners_mm)).astype(np.int32), 255)
    size = lay.profile.die_size_mm
    out = []
    for d in read_dice(cfg, image, mask=mask):
        mm = geometry.to_board([d.centre])[0]
        x, y, w, h = d.box
        corners = geometry.to_board([(x, y), (x + w, y), (x + w, y + h), (x, y + h)])
        side_mm = float(np.sqrt(abs(cv2.contourArea(corners.astype(np.float32)))))
        if not size * 0.6 <= side_mm <= size * 1.8:
            continue
        out.append(DieObservation(None if d.cocked else d.value, (float(d.centre[0]), float(d.centre[1])), (float(mm[0]), float(mm[1])),
                                  lay.half_at(float(mm[0]), float(mm[1])), bool(d.cocked), float(d.confidence), tuple(int(v) for v in d.box)))
    return out


def read_frame(geometry: Geometry, image: np.ndarray, palette: _c.Palette | None = None, config: VisionConfig | None = None) -> Observation:
    """Read one frame on ``geometry.layout``, as :func:`vision.observe.read_frame` does (statuses
    ``board-not-found``, ``occluded``, ``settling``), without the cube; a reading with more than
    15 checkers of a side is ``occluded`` too (a hand read as checkers), where ``observe`` passes it on.

    Raises ValueError for an image that is not a BGR uint8 array.
    """
    cfg = config or default_config()
    lay = geometry.layout
    v = _c.view(geometry, image, cfg)
    dice = _read_dice(cfg, geometry, image)
    size = lay.profile.die_size_mm
    on_board = [(d.centre_mm[0], d.centre_mm[1], size * (1.1 if d.cocked else 0.9)) for d in dice]
    reading = read_checkers(geometry, v, palette, cfg, on_board)
    rings = bar_rings(v, lay, cfg.bar_min_ring, _quiet(lay, palette.board_edges) if palette is not None and palette.board_edges else None)
    covers = [(x, y, lay.profile.checker_diameter_mm / 2 + 1.5) for i, n in enumerate(reading.points)
              for x, y, _ in (lay.checker_slot(i + 1, k) for k in range(min(abs(n), 15)))]
    covers += [(x, y, lay.profile.checker_diameter_mm / 2 + 1.5) for (x, y), _ in rings]
    covers += [(d.centre_mm[0], d.centre_mm[1], size * 0.9) for d in dice]
    if palette is not None and palette.board_edges:
        samples = _learned_samples(lay, palette.board_edges)
    else:
        samples = static_samples(lay)
    occ = _gate.occlusion(v.edges_at, covers, max_missing=cfg.max_missing_edges, samples=samples)
    if occ.seen_fraction < cfg.min_seen_edges:
        return Observation("board-not-found", None, (), None, occ, messages=("the board is not in view",))
    if occ.occluded:
        return Observation("occluded", None, (), None, occ, messages=(f"something over the board at {', '.join(occ.occluded)}",))
    over = [name for name, total in zip(("white", "black"), reading.totals()) if total > 15]
    if over:  # no position has 16 checkers of a side: a hand or sleeve read as checkers (vision.observe reports these settling)
        return Observation("occluded", None, (), None, occ, messages=(f"more than 15 {' and '.join(over)} checkers seen: something over the board?",))
    return Observation("settling", reading, tuple(dice), None, occ, frames_held=1)
