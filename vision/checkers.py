"""Checkers: how many of which colour stand on each point, on the bar and in the trays.

Owns reading checkers from a calibrated camera frame. The frame is rectified to
a top-down view; a checker's top is a circle of known diameter whose rim shows
as a ring (a ridge or a step in brightness). Players stack checkers in a known
way (:func:`vision.render.checker_slot`: five along the point from its base,
then layers of 4, 3, 2 and 1 between them), so each stack height ``n`` predicts
how much of each slot's ring is visible; the reading is the ``n`` whose
prediction fits the observed rings best, and the colour is that of the visible
tops. The margin between the best and the second-best ``n`` is the confidence.
Bar checkers are rings found along the bar's centre line; borne-off checkers
stand on edge in the trays and are counted by the length of their row.

Colours come from a :class:`Palette`: learned on a frame of a known position
(the starting position, :func:`learn_palette`) or, without one, split by
lightness (white's checkers are the lighter ones). The camera cannot see a
checker pinned under a stack (plakoto): a point reports its visible stack, and
conservation (15 a side) is reported, not forced. May import ``board_rules``
types; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import cv2
import numpy as np

import json
from pathlib import Path

from board_rules import Position
from board_rules.errors import TavliError
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config
from vision.rectify import rectify
from vision.render import (
    BAR_X0,
    BAR_X1,
    CHECKER_DIAMETER_MM,
    CHECKER_STEP_MM,
    FIELD_Y0,
    FIELD_Y1,
    GEOMETRY,
    checker_slot,
)

MAX_STACK = 15
_ANGLES = 48
_OFF_STEP_MM = 13.5  # a borne-off checker on edge: its thickness plus a gap
_OFF_FIRST_MM = 6.0  # from the tray's end to the first one's centre


class PaletteError(TavliError, ValueError):
    """A palette file that cannot be read, or a position it cannot be learned from."""


@dataclass(frozen=True, slots=True)
class Palette:
    """What a board looks like, learned from a frame of a known position: mean colours (Lab,
    0..255 as OpenCV gives them) of white's and black's checker tops and of the trays, and
    ``board_edges``: board-mm places on the field where that frame showed the board's own
    drawing (triangle sides, borders, inlays), away from every checker; the occlusion test
    expects them to show whenever nothing lies on them."""

    white: tuple[float, float, float]
    black: tuple[float, float, float]
    tray: tuple[float, float, float] | None = None
    board_edges: tuple[tuple[float, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "white": list(self.white),
            "black": list(self.black),
            "tray": None if self.tray is None else list(self.tray),
            "board_edges": [[round(x, 1), round(y, 1)] for x, y in self.board_edges],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Palette:
        """Raises :class:`PaletteError` unless ``data`` holds white, black (and tray) Lab triples."""
        try:
            tray = data.get("tray")
            white, black = tuple(map(float, data["white"])), tuple(map(float, data["black"]))
            tray_t = None if tray is None else tuple(map(float, tray))
            edges = tuple((float(x), float(y)) for x, y in data.get("board_edges", ()))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise PaletteError(f"palette: {str(data)[:200]!r}: expected white, black (and tray) Lab triples and board_edges [[x, y], ...]") from None
        if len(white) != 3 or len(black) != 3 or (tray_t is not None and len(tray_t) != 3):
            raise PaletteError(f"palette: {str(data)[:200]!r}: expected white, black (and tray) Lab triples")
        return cls(white, black, tray_t, edges)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"format": "tavli-palette/1", **self.to_dict()}, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Palette:
        """Raises :class:`PaletteError` for a missing or malformed file."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise PaletteError(f"palette: {str(path)!r}: cannot read it as JSON ({exc})") from None
        return cls.from_dict(data)


@dataclass(frozen=True, slots=True)
class CheckerReading:
    """Checkers seen in one frame, in white's numbering (positive white, negative black).

    ``confidence`` holds one value in 0..1 per point (index 0 is point 1), then
    ``bar_confidence`` and ``off_confidence`` per side (white, black).
    ``issues`` lists conservation problems (more than 15 of a side, or fewer
    than 15 where no stack could hide a pinned checker).
    """

    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    confidence: tuple[float, ...]
    bar_confidence: tuple[float, float]
    off_confidence: tuple[float, float]
    issues: tuple[str, ...] = field(default=())

    def totals(self) -> tuple[int, int]:
        w = sum(v for v in self.points if v > 0) + self.bar[0] + self.off[0]
        b = -sum(v for v in self.points if v < 0) + self.bar[1] + self.off[1]
        return w, b


# ----------------------------------------------------------------- ring model


def _slot_centres(point: int) -> np.ndarray:
    return np.array([checker_slot(point, k)[:2] for k in range(MAX_STACK)], dtype=np.float64)


def _static_labels(pts_mm: np.ndarray) -> np.ndarray:
    """A label per board-mm point for the board's own drawing: 1..24 inside a point's
    triangle, 30 field, 31 bar, 32 tray, 0 frame."""
    x, y = pts_mm[..., 0], pts_mm[..., 1]
    lab = np.zeros(x.shape, np.int32)
    inside_field = (y >= FIELD_Y0) & (y < FIELD_Y1)
    lab[inside_field & (((x >= GEOMETRY.left_half[0]) & (x < GEOMETRY.left_half[2])) | ((x >= GEOMETRY.right_half[0]) & (x < GEOMETRY.right_half[2])))] = 30
    lab[inside_field & (x >= BAR_X0) & (x < BAR_X1)] = 31
    lab[inside_field & (x >= GEOMETRY.tray_white[0]) & (x < GEOMETRY.tray_white[2])] = 32
    for p in GEOMETRY.points:
        ax, ay, bx, by, cx, cy = p.x0 + 1, p.base_y, p.x1 - 1, p.base_y, p.centre_x, p.tip_y
        d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by)
        d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy)
        d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay)
        neg = (d1 < 0) | (d2 < 0) | (d3 < 0)
        pos = (d1 > 0) | (d2 > 0) | (d3 > 0)
        lab[~(neg & pos)] = p.number
    return lab


_RIM_MM = CHECKER_DIAMETER_MM / 2 - 0.6  # the rim's dark or light ring, just inside the edge
_RIM_TOLERANCE_MM = 1.0
_STATIC_CLEARANCE_MM = 2.0
_ANG = np.linspace(0, 2 * np.pi, _ANGLES, endpoint=False)
_UNIT = np.c_[np.cos(_ANG), np.sin(_ANG)]
_LABEL_PPM = 4.0


def _static_distance() -> np.ndarray:
    """Distance (board mm) from each board location (at ``_LABEL_PPM``) to the nearest edge of the board's own drawing."""
    w, h = int(GEOMETRY.width * _LABEL_PPM), int(GEOMETRY.height * _LABEL_PPM)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    labels = _static_labels(np.stack([(xs + 0.5) / _LABEL_PPM, (ys + 0.5) / _LABEL_PPM], axis=-1))
    edge = np.zeros((h, w), bool)
    edge[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    edge[1:, :] |= labels[1:, :] != labels[:-1, :]
    return cv2.distanceTransform((~edge).astype(np.uint8), cv2.DIST_L2, 5) / _LABEL_PPM


def _stack_model(point: int, clearance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rim samples of a point's slots: positions (N x 2 mm), whether each is clear of the board's
    own edges (N), and ``pred[h]``: whether hypothesis ``h`` shows a rim there (``_HYPOTHESES`` x N).

    Hypothesis ``n`` (0..15) is a plain stack of ``n``; ``16 + n - 1`` is a stack of ``n`` on a
    pinned checker (plakoto): the pinned one in the first slot, the stack shifted ``_PIN_SHIFT_MM``
    along the point on top of it.
    """
    centres = _slot_centres(point)
    direction = GEOMETRY.points[point - 1].direction
    shifted = centres + np.array([0.0, direction * _PIN_SHIFT_MM])
    rims = np.concatenate([centres, shifted[: MAX_STACK - 1]])
    samples = (rims[:, None, :] + _RIM_MM * _UNIT[None]).reshape(-1, 2)
    ix = np.clip((samples * _LABEL_PPM).astype(int), 0, [clearance.shape[1] - 1, clearance.shape[0] - 1])
    valid = clearance[ix[:, 1], ix[:, 0]] > _STATIC_CLEARANCE_MM

    def shows(stack: np.ndarray) -> np.ndarray:
        """For a stack (bottom first), where its visible rims lie among the samples."""
        dist = np.hypot(*(samples[:, None, :] - stack[None, :, :]).transpose(2, 0, 1))
        on_rim = np.abs(dist - _RIM_MM) < _RIM_TOLERANCE_MM
        inside = dist < CHECKER_DIAMETER_MM / 2 - 0.3
        covered_above = np.zeros_like(inside)  # covered_above[:, k]: inside some disc above k
        for k in range(len(stack) - 2, -1, -1):
            covered_above[:, k] = covered_above[:, k + 1] | inside[:, k + 1]
        return (on_rim & ~covered_above).any(axis=1)

    pred = np.zeros((_HYPOTHESES, len(samples)), bool)
    for n in range(1, MAX_STACK + 1):
        pred[n] = shows(centres[:n])
        if n < MAX_STACK:
            pred[MAX_STACK + n] = shows(np.concatenate([centres[:1], shifted[:n]]))
    return samples, valid, pred


_PIN_SHIFT_MM = 6.0  # a checker pinning another sits this much further along the point
_HYPOTHESES = 2 * MAX_STACK  # 0..15 plain, then 1..14 on a pinned checker


def _hypothesis(h: int) -> tuple[int, bool]:
    """``(checkers seen on top, whether one is pinned under them)`` of hypothesis ``h``."""
    return (h, False) if h <= MAX_STACK else (h - MAX_STACK, True)


_CLEARANCE = _static_distance()
_MODELS = [_stack_model(p, _CLEARANCE) for p in range(1, 25)]


def _sample(img: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """Bilinear samples of ``img`` (HxWxC) at Nx2 px: NxC."""
    n = len(pts_px)
    cols = 1024
    rows = max(1, -(-n // cols))
    flat = np.zeros((rows * cols, 2), np.float32)
    flat[:n] = pts_px
    maps = flat.reshape(rows, cols, 2)
    out = cv2.remap(img, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return out.reshape(rows * cols, -1)[:n]


def _edge_map(lab: np.ndarray, ppm: float) -> np.ndarray:
    """Orientation-free edge strength of the rectified view: the local range (dilate minus
    erode over about 2 mm) of lightness, plus half that of the colour channels."""
    k = max(3, int(round(2 * ppm)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    grad = cv2.morphologyEx(lab, cv2.MORPH_GRADIENT, kernel)
    chroma = cv2.addWeighted(grad[..., 1], 0.5, grad[..., 2], 0.5, 0, dtype=cv2.CV_32F)
    return cv2.add(grad[..., 0], chroma, dtype=cv2.CV_32F)


def _ring_fraction(v: View, centres_mm: np.ndarray) -> np.ndarray:
    """For each centre (board mm), the fraction of its rim that shows an edge: N."""
    pts = (centres_mm[:, None, :] + _RIM_MM * _UNIT[None]).reshape(-1, 2)
    return v.edges_at(pts).reshape(len(centres_mm), _ANGLES).mean(axis=1)


def _lab(image_rect: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image_rect, cv2.COLOR_BGR2LAB)


def _disc_colour(lab: np.ndarray, centre_mm, ppm: float, radius_mm: float) -> np.ndarray:
    """Median Lab colour of a disc (board mm) of the rectified view."""
    cx, cy = centre_mm[0] * ppm - 0.5, centre_mm[1] * ppm - 0.5
    rad = radius_mm * ppm
    x0, x1 = int(max(0, cx - rad)), int(min(lab.shape[1], cx + rad + 1))
    y0, y1 = int(max(0, cy - rad)), int(min(lab.shape[0], cy + rad + 1))
    if x1 <= x0 or y1 <= y0:
        return np.zeros(3, np.float32)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    m = (xs - cx) ** 2 + (ys - cy) ** 2 <= rad * rad
    return np.median(lab[y0:y1, x0:x1][m], axis=0).astype(np.float32)


# ----------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class View:
    """A frame seen from above: rectified Lab colours and edge strength at ``ppm`` px per board mm."""

    bgr: np.ndarray
    lab: np.ndarray
    edges: np.ndarray
    ppm: float
    threshold: float

    def edges_at(self, points_mm) -> np.ndarray:
        """Whether the frame shows an edge at each board-mm point (N x 2 -> N bools)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return _sample(self.edges[..., None], pts * self.ppm - 0.5)[:, 0] > self.threshold

    def lab_at(self, points_mm) -> np.ndarray:
        """Lab colours at board-mm points (N x 2 -> N x 3 float)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return _sample(self.lab, pts * self.ppm - 0.5).astype(np.float32)


def view(geometry: Geometry, image: np.ndarray, config: VisionConfig | None = None) -> View:
    """Rectify a camera frame for reading. Raises ValueError for an image that is not a BGR uint8 array."""
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected a BGR uint8 array, got {getattr(image, 'shape', type(image))!r}")
    cfg = config or default_config()
    ppm = float(cfg.read_px_per_mm)
    bgr = rectify(geometry, image, px_per_mm=ppm)
    lab = _lab(bgr)
    return View(bgr, lab, _edge_map(lab, ppm), ppm, float(cfg.edge_threshold))


def read_checkers(
    geometry: Geometry,
    image: np.ndarray | View,
    palette: Palette | None = None,
    config: VisionConfig | None = None,
    not_on_bar: tuple[float, float, float] | None = None,
    ignore: Sequence[tuple[float, float, float]] = (),
) -> CheckerReading:
    """Count the checkers on every point, the bar and the trays of a camera frame (or its :class:`View`).

    ``not_on_bar`` is a disc (x, y, radius in board mm) where no bar checker is looked for (the cube);
    ``ignore`` are discs where something else lies (dice): rims are not looked for there.

    Raises ValueError for an image that is not a BGR uint8 array.
    """
    cfg = config or default_config()
    v = image if isinstance(image, View) else view(geometry, image, cfg)
    lab, ppm = v.lab, v.ppm
    heights, confs, pinned = [], [], []
    for samples, valid, pred in _MODELS:
        for x, y, r in ignore:
            valid = valid & (np.hypot(samples[:, 0] - x, samples[:, 1] - y) > r)
        seen = v.edges_at(samples[valid])
        err = (pred[:, valid] != seen[None, :]).sum(axis=1)
        order = np.argsort(err, kind="stable")
        n, under = _hypothesis(int(order[0]))
        heights.append(n)
        pinned.append(under)
        # the runner-up that would change the count
        rival = next(int(h) for h in order[1:] if _hypothesis(int(h))[0] != n)
        confs.append(float(min(1.0, (err[rival] - err[order[0]]) / _CONFIDENT_MARGIN)))
    tops = []
    for p, n in enumerate(heights):
        if n:
            x, y = checker_slot(p + 1, n - 1)[:2]
            if pinned[p]:
                y += GEOMETRY.points[p].direction * _PIN_SHIFT_MM
            tops.append(_top_colour(lab, (x, y), ppm, ignore))
    pal = palette or _auto_palette(tops)
    points = []
    k = 0
    for p, n in enumerate(heights):
        if not n:
            points.append(0)
            continue
        side = _side_of(tops[k], pal)
        k += 1
        points.append(n if side == 0 else -n)
    bar, bar_conf = _read_bar(v, pal, cfg.bar_min_ring, not_on_bar)
    off, off_conf = _read_off(lab, ppm, pal)
    return _with_issues(CheckerReading(tuple(points), bar, off, tuple(confs), bar_conf, off_conf))



_CONFIDENT_MARGIN = 24  # rim samples: a margin this large between the best and second-best height is certain


def _side_of(colour: np.ndarray, pal: Palette) -> int:
    dw = np.linalg.norm(colour - np.array(pal.white))
    db = np.linalg.norm(colour - np.array(pal.black))
    return 0 if dw <= db else 1


def _auto_palette(tops: list[np.ndarray]) -> Palette:
    if len(tops) < 2:
        return Palette((230.0, 128.0, 128.0), (40.0, 128.0, 128.0))
    arr = np.array(tops, dtype=np.float32)
    light = arr[:, 0]
    t = float(np.median(light)) if np.ptp(light) < 1 else _otsu(light)
    hi, lo = arr[light > t], arr[light <= t]
    if not len(hi) or not len(lo):
        return Palette((230.0, 128.0, 128.0), (40.0, 128.0, 128.0))
    return Palette(tuple(map(float, hi.mean(0))), tuple(map(float, lo.mean(0))))


def _otsu(values: np.ndarray) -> float:
    v = np.sort(values)
    best, best_t = -1.0, float(v[len(v) // 2])
    for i in range(1, len(v)):
        a, b = v[:i], v[i:]
        score = len(a) * len(b) * (a.mean() - b.mean()) ** 2
        if score > best:
            best, best_t = score, float((v[i - 1] + v[i]) / 2)
    return best_t


def bar_rings(v: View, min_ring: float, exclude: tuple[float, float, float] | None = None) -> list[tuple[tuple[float, float], float]]:
    """Checkers on the bar: ``(centre_mm, rim fraction)`` of each ring found along its centre line,
    but none whose centre lies in the disc ``exclude`` (x, y, radius mm: where the cube is)."""
    x = (BAR_X0 + BAR_X1) / 2
    ys = np.arange(FIELD_Y0 + CHECKER_DIAMETER_MM / 2, FIELD_Y1 - CHECKER_DIAMETER_MM / 2, 1.0)
    centres = np.c_[np.full_like(ys, x), ys]
    s = _ring_fraction(v, centres)
    if exclude is not None:
        s[np.hypot(centres[:, 0] - exclude[0], centres[:, 1] - exclude[1]) < exclude[2]] = 0.0
    found: list[int] = []
    for i in np.argsort(-s):
        if s[i] < min_ring:
            break
        if all(abs(ys[i] - ys[j]) >= CHECKER_STEP_MM * 0.45 for j in found):
            found.append(int(i))
    return [((float(x), float(ys[i])), float(s[i])) for i in sorted(found)]


def _read_bar(v: View, pal: Palette, min_ring: float, exclude) -> tuple[tuple[int, int], tuple[float, float]]:
    counts = [0, 0]
    margins = [1.0, 1.0]
    for centre, score in bar_rings(v, min_ring, exclude):
        side = _side_of(_disc_colour(v.lab, centre, v.ppm, CHECKER_DIAMETER_MM * 0.3), pal)
        counts[side] += 1
        margins[side] = min(margins[side], float((score - min_ring) / (1 - min_ring)))
    return (counts[0], counts[1]), (margins[0], margins[1])




def _read_off(lab: np.ndarray, ppm: float, pal: Palette) -> tuple[tuple[int, int], tuple[float, float]]:
    counts, confs = [], []
    for side, tray in ((0, GEOMETRY.tray_white), (1, GEOMETRY.tray_black)):
        x0, y0, x1, y1 = tray
        xs = np.linspace(x0 + 12, x1 - 12, 5)
        along = np.arange(0.0, (y1 - y0) - 2, 0.5)
        ys = (y1 - along) if side == 0 else (y0 + along)
        pts = np.array([(x, y) for y in ys for x in xs]) * ppm - 0.5
        col = _sample(lab, pts).reshape(len(ys), len(xs), 3).astype(np.float32).mean(axis=1)
        own = np.array(pal.white if side == 0 else pal.black)
        other = np.array(pal.tray) if pal.tray is not None else _tray_guess(col)
        d_own = np.linalg.norm(col - own, axis=1)
        d_other = np.linalg.norm(col - other, axis=1)
        is_checker = d_own < d_other
        run = 0
        while run < len(is_checker) and (is_checker[run] or is_checker[run : run + 6].any()):
            run += 1
        length = along[run - 1] if run else 0.0
        n = int(round((length - 2 * _OFF_FIRST_MM + _OFF_STEP_MM) / _OFF_STEP_MM)) if length > _OFF_FIRST_MM else 0
        n = max(0, min(MAX_STACK, n))
        frac = (length - 2 * _OFF_FIRST_MM + _OFF_STEP_MM) / _OFF_STEP_MM - n if length > _OFF_FIRST_MM else 0.0
        counts.append(n)
        confs.append(float(max(0.0, 1 - 2 * abs(frac))))
    return (counts[0], counts[1]), (confs[0], confs[1])


def _tray_guess(col: np.ndarray) -> np.ndarray:
    return col[-10:].mean(axis=0)


def _with_issues(reading: CheckerReading) -> CheckerReading:
    issues = []
    w, b = reading.totals()
    for name, total in (("white", w), ("black", b)):
        if total > 15:
            issues.append(f"{name}: {total} checkers seen: more than 15")
        elif total < 15:
            issues.append(f"{name}: {total} checkers seen: {15 - total} missing (pinned under a stack, hidden or off the board)")
    return CheckerReading(reading.points, reading.bar, reading.off, reading.confidence, reading.bar_confidence, reading.off_confidence, tuple(issues))


def _top_colour(lab: np.ndarray, centre, ppm: float, ignore) -> np.ndarray:
    """The colour of a checker's top, from the part of it no die lies on."""
    radius = CHECKER_DIAMETER_MM * 0.3
    for x, y, r in ignore:
        d = float(np.hypot(centre[0] - x, centre[1] - y))
        if d < r + radius:  # a die on it: look at the far side of the top
            if d < 1e-6:
                break
            ux, uy = (centre[0] - x) / d, (centre[1] - y) / d
            far = CHECKER_DIAMETER_MM / 2 - 5
            return _disc_colour(lab, (centre[0] + ux * far, centre[1] + uy * far), ppm, 4.0)
    return _disc_colour(lab, centre, ppm, radius)


def learn_palette(geometry: Geometry, image: np.ndarray, position: Position, config: VisionConfig | None = None) -> Palette:
    """Learn the checker and tray colours from a frame of a known position (usually the start).

    Raises :class:`PaletteError` if the position has no checker of a side on a point.
    """
    v = view(geometry, image, config)
    lab, ppm = v.lab, v.ppm
    cols: dict[int, list[np.ndarray]] = {1: [], -1: []}
    for i, n in enumerate(position.points):
        if n:
            for k in range(abs(n)):
                c = checker_slot(i + 1, k)[:2]
                cols[1 if n > 0 else -1].append(_disc_colour(lab, c, ppm, CHECKER_DIAMETER_MM * 0.3))
    if not cols[1] or not cols[-1]:
        raise PaletteError("position: expected checkers of both sides on the points to learn their colours")
    tray = None
    if position.off == (0, 0):
        x0, y0, x1, y1 = GEOMETRY.tray_white
        tray = tuple(map(float, _disc_colour(lab, ((x0 + x1) / 2, (y0 + y1) / 2), ppm, 10.0)))
    white = np.median(np.array(cols[1]), axis=0)
    black = np.median(np.array(cols[-1]), axis=0)
    return Palette(tuple(map(float, white)), tuple(map(float, black)), tray, _learn_board_edges(v, position))


_EDGE_GRID_MM = 2.0


def _learn_board_edges(v: View, position: Position) -> tuple[tuple[float, float], ...]:
    """Grid places (every ``_EDGE_GRID_MM``) on the field and bar that show an edge in ``v``,
    at least 3 mm from every checker of ``position`` and from the bar's and trays' checkers."""
    xs = np.arange(GEOMETRY.left_half[0] + 1, GEOMETRY.right_half[2] - 1, _EDGE_GRID_MM)
    ys = np.arange(FIELD_Y0 + 1, FIELD_Y1 - 1, _EDGE_GRID_MM)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    clear = np.ones(len(grid), bool)
    centres = [checker_slot(i + 1, k)[:2] for i, n in enumerate(position.points) for k in range(abs(n))]
    centres += [checker_slot(i + 1, 0)[:2] for i, p in enumerate(position.pinned) if p]
    for x, y in centres:
        clear &= np.hypot(grid[:, 0] - x, grid[:, 1] - y) > CHECKER_DIAMETER_MM / 2 + 3
    if any(position.bar):
        clear &= ~((grid[:, 0] >= BAR_X0 - 3) & (grid[:, 0] <= BAR_X1 + 3))
    pts = grid[clear]
    shown = v.edges_at(pts)
    return tuple((float(x), float(y)) for x, y in pts[shown])
