"""Checkers: how many of which colour stand on each point, on the bar and in the trays.

Owns reading checkers from a calibrated camera frame. The frame is rectified to
a top-down view; a checker's top is a circle of known diameter whose rim shows
as a ring (a ridge or a step in brightness). Every place (points, slots, bar,
trays, the field and the board's own drawing) and the checker's size come from
the geometry's board layout (:attr:`vision.calibrate.Geometry.layout`; the
renderer's board by default), and the stack models are built once per layout.
Players stack checkers in a known way (:meth:`vision.profile.Layout.checker_slot`:
a row along the point from its base, then shorter layers between them), so
each stack height ``n`` predicts how much of each slot's ring is visible; the
reading is the ``n`` whose prediction fits the observed rings best, and the
colour is that of the visible tops. The margin between the best and the second-best ``n`` is the confidence.
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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from board_rules import Position
from board_rules.errors import TavliError
from vision import profile
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config
from vision.profile import DEFAULT_PROFILE, Layout
from vision.rectify import board_rect_to_rectified, rectified_size, rectify
from vision.stats import median_rows

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
            raise PaletteError(
                f"palette: {str(data)[:200]!r}: expected white, black (and tray) Lab triples and board_edges [[x, y], ...]"
            ) from None
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
_ANG = np.linspace(0, 2 * np.pi, _ANGLES, endpoint=False)
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


def _at(mask: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    """Values of a ``_LABEL_PPM`` board map (clearance, quiet) at board-mm points."""
    ix = np.clip((pts_mm * _LABEL_PPM).astype(int), 0, [mask.shape[1] - 1, mask.shape[0] - 1])
    return mask[ix[..., 1], ix[..., 0]]


def _stack_model(lay: Layout, point: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rim samples of a point's slots: positions (N x 2 mm), whether each is clear of the board's
    own edges (N), and ``pred[h]``: whether hypothesis ``h`` shows a rim there (``_HYPOTHESES`` x N).

    Hypothesis ``n`` (0..15) is a plain stack of ``n``; ``16 + n - 1`` is a stack of ``n`` on a
    pinned checker (plakoto): the pinned one in the first slot, the stack shifted ``_PIN_SHIFT_MM``
    along the point on top of it.
    """
    rim, diameter = _rim_mm(lay), lay.profile.checker_diameter_mm
    centres = np.array([lay.checker_slot(point, k)[:2] for k in range(MAX_STACK)], dtype=np.float64)
    direction = lay.geometry.points[point - 1].direction
    shifted = centres + np.array([0.0, direction * _PIN_SHIFT_MM])
    rims = np.concatenate([centres, shifted[: MAX_STACK - 1]])
    samples = (rims[:, None, :] + rim * _UNIT[None]).reshape(-1, 2)
    valid = _at(_clearance(lay), samples) > _STATIC_CLEARANCE_MM

    def shows(stack: np.ndarray) -> np.ndarray:
        """For a stack (bottom first), where its visible rims lie among the samples."""
        dist = np.hypot(*(samples[:, None, :] - stack[None, :, :]).transpose(2, 0, 1))
        on_rim = np.abs(dist - rim) < _RIM_TOLERANCE_MM
        inside = dist < diameter / 2 - 0.3
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


@lru_cache(maxsize=8)
def _models(lay: Layout) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """:func:`_stack_model` of points 1..24 of a layout, built once."""
    return tuple(_stack_model(lay, p) for p in range(1, 25))


@lru_cache(maxsize=8)
def _all_samples(lay: Layout) -> tuple[np.ndarray, tuple[slice, ...], tuple[tuple[np.ndarray, np.ndarray], ...]]:
    """The rim samples of points 1..24 of a layout in one array (sampled at once), each point's
    slice of it, and each point's predictions as 0/1 matrices ``(pred, not pred)``: a hypothesis'
    mismatches with what is seen are then two products (whole numbers, exact in float32)."""
    models = _models(lay)
    ends = np.cumsum([0] + [len(m[0]) for m in models])
    slices = tuple(slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:]))
    preds = tuple((m[2].astype(np.float32), (~m[2]).astype(np.float32)) for m in models)
    return np.concatenate([m[0] for m in models]), slices, preds


@lru_cache(maxsize=8)
def _samples_by_x(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_all_samples`' samples in order of their x (their indices), and those xs: the samples near a place are a run of them."""
    everywhere = _all_samples(lay)[0]
    by_x = np.argsort(everywhere[:, 0], kind="stable")
    xs = everywhere[by_x, 0]
    by_x.setflags(write=False)
    xs.setflags(write=False)
    return by_x, xs


@lru_cache(maxsize=8)
def _stacked_samples(lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_all_samples` as one block for points 1..24: each point's samples' indices in that
    array (24 x N, a point with fewer samples padded with its first), whether each is clear of
    the board's own edges (padding: not), and the predictions (24 x hypotheses x N, 0/1 float32;
    padding 0), so that every point's mismatches are two batched products (whole numbers, exact)."""
    models = _models(lay)
    _, slices, preds = _all_samples(lay)
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
def _first_rims(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Of :func:`_stacked_samples`: which samples lie on the rim of a point's first checker alone
    (24 x N), and how many of those are clear of the board's own edges on each point (24)."""
    _, valid, pred, _ = _stacked_samples(lay)
    rim = pred[:, 1, :] > 0
    return rim, (rim & valid).sum(axis=1)


_stacked_samples(
    profile.layout()
)  # the renderer's board, every geometry's default: built at import, not on the first frame


def _as_rendered(lay: Layout) -> bool:
    """Whether ``lay`` is the renderer's board, whose drawing and stacks stand exactly where the layout puts them.

    On a real board (any other profile) the camera, calibrated on the plane of the checkers' tops,
    sees the field's drawing a few mm off the layout's and players' stacks stand a few mm off their
    slots: rims are not looked for where the palette's frame showed the board's drawing
    (:func:`_quiet`), and board edges are learned further from the checkers (``_LEARN_MARGIN_MM``).
    Both would change the readings' confidences and the gate on rendered frames, so they apply to real boards only.
    """
    return lay.profile.name == DEFAULT_PROFILE


_QUIET_MM = 1.5  # a rim sample this close to a learned edge of the board's own drawing is not used


@lru_cache(maxsize=8)
def _quiet(lay: Layout, board_edges: tuple[tuple[float, float], ...]) -> np.ndarray:
    """A ``_LABEL_PPM`` mask of where the palette's frame showed no edge of the board's own drawing
    within ``_QUIET_MM`` (a hinge, a seam down the bar, an inlay, the field's drawing a few mm off
    the layout's): only there can a rim be told on a real board."""
    h, w = int(lay.geometry.height * _LABEL_PPM), int(lay.geometry.width * _LABEL_PPM)
    busy = np.zeros((h, w), np.uint8)
    for x, y in board_edges:
        cv2.circle(busy, (int(x * _LABEL_PPM), int(y * _LABEL_PPM)), int(round(_QUIET_MM * _LABEL_PPM)), 1, -1)
    return busy == 0


def _sample(img: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """Bilinear samples of ``img`` (HxWxC) at Nx2 px: NxC."""
    n = len(pts_px)
    cols = 1024
    rows = max(1, -(-n // cols))
    flat = np.zeros((rows * cols, 2), np.float32)
    flat[:n] = pts_px
    out = cv2.remap(
        img, flat.reshape(rows, cols, 2), None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )  # one two-channel map: no copies
    return out.reshape(rows * cols, -1)[:n]


def _edge_map(lab: np.ndarray, ppm: float, blur_mm: float = 0.0, dst: np.ndarray | None = None) -> np.ndarray:
    """Orientation-free edge strength of the rectified view: the local range (dilate minus
    erode over about 2 mm) of lightness, plus half that of the colour channels, after a
    Gaussian blur of ``blur_mm`` (a range over some 20 px grows with the camera's noise: a
    sensor's few grey levels of noise alone would pass the edge threshold)."""
    k = max(3, int(round(2 * ppm)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    if blur_mm > 0:
        lab = cv2.GaussianBlur(lab, (0, 0), blur_mm * ppm)
    grad = cv2.morphologyEx(lab, cv2.MORPH_GRADIENT, kernel)
    # one pass over the three channels; a sum above 255 is an edge all the same
    return cv2.transform(grad, _EDGE_WEIGHTS, dst=dst)


_EDGE_WEIGHTS = np.array([[1.0, 0.5, 0.5]], np.float32)  # lightness, and half of each colour channel
_NOISE_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)


def noise_grey(image: np.ndarray, side: int = 512) -> float:
    """The camera's noise, in grey levels (sigma), estimated on the middle ``side`` px square of a
    BGR frame from the mean absolute response to a kernel that cancels edges and slopes (Immerkaer)."""
    h, w = image.shape[:2]
    y0, x0 = max(0, (h - side) // 2), max(0, (w - side) // 2)
    grey = cv2.cvtColor(image[y0 : y0 + side, x0 : x0 + side], cv2.COLOR_BGR2GRAY).astype(np.float32)
    if min(grey.shape) < 3:
        return 0.0
    response = cv2.filter2D(grey, -1, _NOISE_KERNEL)[1:-1, 1:-1]
    return float(np.sqrt(np.pi / 2) * np.abs(response).mean() / 6)


def _disc_colour(lab: np.ndarray, centre_mm, ppm: float, radius_mm: float) -> np.ndarray:
    """Median Lab colour of a disc (board mm) of the rectified view."""
    at = _disc_px(
        float(centre_mm[0] * ppm - 0.5), float(centre_mm[1] * ppm - 0.5), float(radius_mm * ppm), lab.shape[:2]
    )
    if at is None:
        return np.zeros(3, np.float32)
    ys, xs = at
    return median_rows(lab[ys, xs].T).astype(np.float32)


@lru_cache(maxsize=1024)
def _disc_px(cx: float, cy: float, rad: float, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """The px (rows, columns, row by row) of a view of ``shape`` within ``rad`` of (cx, cy), in
    the box :func:`_disc_colour` looks in; None for an empty box. A layout's slots are the same
    places on every frame: each disc is worked out once."""
    x0, x1 = int(max(0, cx - rad)), int(min(shape[1], cx + rad + 1))
    y0, y1 = int(max(0, cy - rad)), int(min(shape[0], cy + rad + 1))
    if x1 <= x0 or y1 <= y0:
        return None
    ys, xs = np.ogrid[y0:y1, x0:x1]
    m = (xs - cx) ** 2 + (ys - cy) ** 2 <= rad * rad
    rows, cols = np.nonzero(m)
    return rows + y0, cols + x0


# ----------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class View:
    """A frame seen from above: rectified Lab colours and edge strength at ``ppm`` px per board mm,
    and the board layout whose mm they are. Its BGR px are worked out only where asked for
    (:meth:`bgr_near`: the cube's face); ``frame`` is ``(geometry, image)`` they come from."""

    lab: np.ndarray
    edges: np.ndarray
    ppm: float
    threshold: float
    layout: Layout = field(default_factory=profile.layout)
    frame: tuple[Geometry, np.ndarray] | None = None

    def bgr_near(self, centre_mm, radius_mm: float) -> np.ndarray:
        """The rectified frame's BGR px (the view's size) within ``radius_mm`` across and down of a
        board-mm place, and a px more; black elsewhere. Raises ValueError for a view without its frame."""
        if self.frame is None:
            raise ValueError("view: made without its frame: expected view(geometry, image)")
        h, w = self.edges.shape
        x0, y0 = (int(np.floor((c - radius_mm) * self.ppm - 1.5)) for c in centre_mm)
        x1, y1 = (int(np.ceil((c + radius_mm) * self.ppm + 1.5)) for c in centre_mm)
        window = slice(min(h, max(0, y0)), min(h, max(0, y1))), slice(min(w, max(0, x0)), min(w, max(0, x1)))
        return rectify(self.frame[0], self.frame[1], px_per_mm=self.ppm, window=window)

    def edges_at(self, points_mm) -> np.ndarray:
        """Whether the frame shows an edge at each board-mm point (N x 2 -> N bools)."""
        return self.edge_strength_at(points_mm) > self.threshold

    def edge_strength_at(self, points_mm) -> np.ndarray:
        """The edge strength at each board-mm point (N x 2 -> N floats; an edge above ``threshold``)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return _sample(self.edges[..., None], pts * self.ppm - 0.5)[:, 0]

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
    noise = noise_grey(image)
    blur = cfg.edge_blur_mm_per_grey * noise if noise > cfg.edge_blur_above_noise else 0.0
    window = _reading_window(geometry.layout, ppm, blur)
    # Lab worked out on the frame's px that the window draws on, then warped: a fixed camera's
    # frame holds the field and trays in about a third of the top-down view's px
    lab = rectify(geometry, image, px_per_mm=ppm, window=window, code=cv2.COLOR_BGR2LAB)
    edges = np.zeros(lab.shape[:2], np.uint8)
    _edge_map(lab[window], ppm, blur, dst=edges[window])
    return View(lab, edges, ppm, float(cfg.edge_threshold), geometry.layout, (geometry, image))


def _reading_window(lay: Layout, ppm: float, blur_mm: float) -> tuple[slice, slice]:
    """The rows and columns of the rectified view that a reading looks at: the field and the
    trays, where every rim, colour, cube and board edge is sampled, and a margin around them wide
    enough that the edge map there is the same as on the whole view (the blur's and the range's
    reach, and a px for bilinear sampling). The board's frame beyond them is not worked out."""
    g = lay.geometry
    boxes = (lay.field, g.tray_white, g.tray_black)
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    m = 3 * blur_mm + 6 / ppm + 1.0  # the blur reaches 3 sigma and a px, the range about 1 mm and a px
    width, height = rectified_size(ppm)
    rows, cols = board_rect_to_rectified((x0 - m, y0 - m, x1 + m, y1 + m), ppm)
    return slice(max(0, rows.start), min(height, rows.stop)), slice(max(0, cols.start), min(width, cols.stop))


@dataclass(frozen=True, slots=True)
class FieldReading:
    """The checkers on the points and in the trays of one frame (as in :class:`CheckerReading`) and
    the palette their colours were told by. The bar is read apart, where the cube may lie (:meth:`with_bar`)."""

    points: tuple[int, ...]
    confidence: tuple[float, ...]
    off: tuple[int, int]
    off_confidence: tuple[float, float]
    palette: Palette

    def totals(self) -> tuple[int, int]:
        """Checkers of each side (white, black) on the points and in the trays."""
        w = sum(v for v in self.points if v > 0) + self.off[0]
        b = -sum(v for v in self.points if v < 0) + self.off[1]
        return w, b

    def with_bar(self, bar: tuple[int, int], bar_confidence: tuple[float, float]) -> CheckerReading:
        """The whole reading: these points and trays, the bar's checkers, and the conservation issues."""
        return _with_issues(
            CheckerReading(self.points, bar, self.off, self.confidence, bar_confidence, self.off_confidence)
        )


def read_field(
    v: View, palette: Palette | None, config: VisionConfig, ignore: Sequence[tuple[float, float, float]] = ()
) -> FieldReading:
    """Count the checkers on every point and in both trays of a view, at the places of its layout.

    ``ignore`` are discs (x, y, radius in board mm) where something else lies (dice): rims are not
    looked for there. On a real board (a profile other than the renderer's) with a palette that
    learned the board's edges, rims are not looked for where its frame showed the board's own
    drawing either. Without a palette, the checkers' colours are split by lightness.
    """
    lay, lab, ppm = v.layout, v.lab, v.ppm
    board_edges = palette.board_edges if palette is not None else ()
    quiet = _quiet(lay, board_edges) if board_edges and not _as_rendered(lay) else None
    heights, confs, pinned = [], [], []
    everywhere = _all_samples(lay)[0]
    strength = v.edge_strength_at(everywhere)  # every point's samples at once
    shown = strength > v.threshold
    usable = np.ones(len(everywhere), bool)
    if quiet is not None:
        usable &= _at(quiet, everywhere)
    by_x, xs = _samples_by_x(lay)
    for x, y, r in ignore:
        lo, hi = np.searchsorted(xs, (x - r - 1, x + r + 1))  # only samples this close across can lie in the disc
        near = by_x[lo:hi]
        usable[near] &= np.hypot(everywhere[near, 0] - x, everywhere[near, 1] - y) > r
    index, valid, pred, not_pred = _stacked_samples(lay)
    valid = valid & usable[index]
    seen = shown[index]
    # mismatches: a rim predicted where none shows, or none predicted where one shows (every point at once)
    errs = (
        np.matmul(pred, (valid & ~seen).astype(np.float32)[:, :, None])
        + np.matmul(not_pred, (valid & seen).astype(np.float32)[:, :, None])
    )[:, :, 0].astype(np.int64)
    orders = np.argsort(errs, axis=1, kind="stable")
    rim_one, rim_one_clear = _first_rims(lay)
    for i, (err, order) in enumerate(zip(errs, orders)):
        n, under = _hypothesis(int(order[0]))
        if n == 0:  # a lone checker whose rim is faint (a dark one on a point of its colour, a small noisy frame)
            on = valid[i] & rim_one[i]
            k = int(on.sum())
            if (
                k >= _FAINT_MIN_CLEAR * rim_one_clear[i] > 0
                and (strength[index[i][on]] > config.faint_rim_frac * v.threshold).sum()
                >= config.faint_rim_min_share * k
            ):
                n, under = 1, False
        heights.append(n)
        pinned.append(under)
        # the runner-up that would change the count
        rival = next(int(h) for h in order[1:] if _hypothesis(int(h))[0] != n)
        confs.append(float(min(1.0, (err[rival] - err[order[0]]) / _CONFIDENT_MARGIN)))
    tops = []
    for p, n in enumerate(heights):
        if n:
            x, y = lay.checker_slot(p + 1, n - 1)[:2]
            if pinned[p]:
                y += lay.geometry.points[p].direction * _PIN_SHIFT_MM
            tops.append(_top_colour(lab, (x, y), ppm, ignore, lay.profile.checker_diameter_mm))
    pal = palette or _auto_palette(tops)
    points = []
    k = 0
    for n in heights:
        if not n:
            points.append(0)
            continue
        side = _side_of(tops[k], pal)
        k += 1
        points.append(n if side == 0 else -n)
    off, off_conf = _read_off(v, pal, config.tray_max_gap_per_step)
    return FieldReading(tuple(points), tuple(confs), off, off_conf, pal)


def read_checkers(
    geometry: Geometry,
    image: np.ndarray | View,
    palette: Palette | None = None,
    config: VisionConfig | None = None,
    not_on_bar: tuple[float, float, float] | None = None,
    ignore: Sequence[tuple[float, float, float]] = (),
    rings: Sequence[tuple[tuple[float, float], float]] | None = None,
) -> CheckerReading:
    """Count the checkers on every point, the bar and the trays of a camera frame (or its :class:`View`),
    at the places of the geometry's layout (a view's own layout): :func:`read_field`, then the bar.

    ``not_on_bar`` is a disc (x, y, radius in board mm) where no bar checker is looked for (the cube);
    ``ignore`` as in :func:`read_field`. ``rings`` are the bar's rings where the caller found them
    already (:func:`bar_rings` of the view with ``config.bar_min_ring``, ``not_on_bar`` and the
    palette's board edges); they are looked for otherwise.

    Raises ValueError for an image that is not a BGR uint8 array.
    """
    cfg = config or default_config()
    v = image if isinstance(image, View) else view(geometry, image, cfg)
    field = read_field(v, palette, cfg, ignore)
    if rings is None:
        rings = bar_rings(v, cfg.bar_min_ring, not_on_bar, palette.board_edges if palette is not None else ())
    return field.with_bar(*count_bar(v, field.palette, cfg.bar_min_ring, rings))


# a faint rim is trusted only where next to all of it is in view: no die on it (one half under a
# die showed the die's own edges there)
_FAINT_MIN_CLEAR = 0.9
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


def bar_rings(
    v: View,
    min_ring: float,
    exclude: tuple[float, float, float] | None = None,
    board_edges: tuple[tuple[float, float], ...] = (),
) -> list[tuple[tuple[float, float], float]]:
    """Checkers on the bar of the view's layout: ``(centre_mm, rim fraction)`` of each ring found
    along its centre line, but none whose centre lies in the disc ``exclude`` (x, y, radius mm:
    where the cube is).

    Where a checker is about as wide as the bar, a ring is judged on its rim samples clear of the
    board's own edges (the bar's sides and ends); on a real board with a palette's ``board_edges``,
    also clear of whatever its frame showed there. A centre with fewer than a third of its rim clear scores 0.
    """
    return rings_on(scan_bar(v, board_edges), min_ring, exclude)


@dataclass(frozen=True, slots=True)
class BarScan:
    """How much of a checker's rim shows (0..1) at each centre along the bar's centre line (``x``,
    the centres' ``ys`` 1 mm apart; read-only), and the layout's checker step: :func:`scan_bar`."""

    x: float
    ys: np.ndarray
    centres: np.ndarray
    scores: np.ndarray
    step: float


def scan_bar(v: View, board_edges: tuple[tuple[float, float], ...] = ()) -> BarScan:
    """The bar of a view scanned for checkers' rims once; :func:`rings_on` finds the rings wherever the cube is."""
    lay = v.layout
    x, ys, centres, pts, valid = _bar_samples(lay, board_edges)
    shown = v.edges_at(pts).reshape(len(centres), _ANGLES) & valid
    n_valid = valid.sum(axis=1)
    s = np.where(n_valid >= _ANGLES // 3, shown.sum(axis=1) / np.maximum(n_valid, 1), 0.0)
    s.setflags(write=False)
    return BarScan(x, ys, centres, s, lay.profile.checker_step_mm)


def rings_on(
    scan: BarScan, min_ring: float, exclude: tuple[float, float, float] | None = None
) -> list[tuple[tuple[float, float], float]]:
    """The checkers of a :func:`scan_bar`: ``(centre_mm, rim fraction)`` of each ring of at least
    ``min_ring``, a step apart, none centred in the disc ``exclude`` (x, y, radius mm: the cube)."""
    s, ys, centres = scan.scores, scan.ys, scan.centres
    if exclude is not None:
        s = s.copy()
        s[np.hypot(centres[:, 0] - exclude[0], centres[:, 1] - exclude[1]) < exclude[2]] = 0.0
    found: list[int] = []
    for i in np.argsort(-s):
        if s[i] < min_ring:
            break
        if all(abs(ys[i] - ys[j]) >= scan.step * 0.45 for j in found):
            found.append(int(i))
    return [((float(scan.x), float(ys[i])), float(s[i])) for i in sorted(found)]


@lru_cache(maxsize=8)
def _bar_samples(
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
        valid = _at(_clearance(lay), pts) > _STATIC_CLEARANCE_MM
    if board_edges and not _as_rendered(lay):
        valid &= _at(_quiet(lay, board_edges), pts)
    for a in (ys, centres, pts, valid):
        a.setflags(write=False)
    return x, ys, centres, pts, valid.reshape(len(centres), _ANGLES)


def count_bar(v: View, pal: Palette, min_ring: float, rings) -> tuple[tuple[int, int], tuple[float, float]]:
    """Checkers on the bar from its rings (:func:`bar_rings`): how many of each side, and the margin of the weakest ring of each."""
    counts = [0, 0]
    margins = [1.0, 1.0]
    for centre, score in rings:
        side = _side_of(_disc_colour(v.lab, centre, v.ppm, v.layout.profile.checker_diameter_mm * 0.3), pal)
        counts[side] += 1
        margins[side] = min(margins[side], float((score - min_ring) / (1 - min_ring)))
    return (counts[0], counts[1]), (margins[0], margins[1])


def _read_off(v: View, pal: Palette, max_gap_per_step: float) -> tuple[tuple[int, int], tuple[float, float]]:
    """Borne-off checkers: the length of each side's row in its tray, sampled across the tray's middle half.
    The row goes on past a break of up to ``max_gap_per_step`` of a checker's step on edge (a rim, a seam)."""
    lab = v.lab
    counts, confs = [], []
    gap = int(max_gap_per_step * _OFF_STEP_MM / 0.5)  # samples are 0.5 mm apart
    for side, (along, pts, across) in enumerate(_tray_samples(v.layout, v.ppm)):
        col = _sample(lab, pts).reshape(len(along), across, 3).astype(np.float32).mean(axis=1)
        own = np.array(pal.white if side == 0 else pal.black)
        other = np.array(pal.tray) if pal.tray is not None else _tray_guess(col)
        d_own = np.linalg.norm(col - own, axis=1)
        d_other = np.linalg.norm(col - other, axis=1)
        is_checker = d_own < d_other
        # the row runs on while a checker shows at a sample or within the next gap samples
        seen = np.concatenate([[0], np.cumsum(is_checker)])
        ahead = np.minimum(np.arange(len(is_checker)) + max(gap, 1), len(is_checker))
        goes_on = seen[ahead] > seen[:-1]
        run = int(np.argmin(goes_on)) if not goes_on.all() else len(goes_on)
        length = along[run - 1] if run else 0.0
        n = int(round((length - 2 * _OFF_FIRST_MM + _OFF_STEP_MM) / _OFF_STEP_MM)) if length > _OFF_FIRST_MM else 0
        n = max(0, min(MAX_STACK, n))
        frac = (length - 2 * _OFF_FIRST_MM + _OFF_STEP_MM) / _OFF_STEP_MM - n if length > _OFF_FIRST_MM else 0.0
        counts.append(n)
        confs.append(float(max(0.0, 1 - 2 * abs(frac))))
    return (counts[0], counts[1]), (confs[0], confs[1])


@lru_cache(maxsize=8)
def _tray_samples(lay: Layout, ppm: float) -> tuple[tuple[np.ndarray, np.ndarray, int], ...]:
    """:func:`_read_off`'s samples of white's tray and black's, worked out once: for each, the
    distances along the tray from its start (0.5 mm apart), the samples (view px, row by row: each
    distance across the tray's middle half) and how many there are across."""
    g = lay.geometry
    out = []
    for side, tray in ((0, g.tray_white), (1, g.tray_black)):
        x0, y0, x1, y1 = tray
        inset = min(12.0, (x1 - x0) * 0.24)
        xs = np.linspace(x0 + inset, x1 - inset, 5)
        along = np.arange(0.0, (y1 - y0) - 2, 0.5)
        ys = (y1 - along) if side == 0 else (y0 + along)
        pts = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]), axis=-1).reshape(-1, 2) * ppm - 0.5  # row by row
        along.setflags(write=False)
        pts.setflags(write=False)
        out.append((along, pts, len(xs)))
    return tuple(out)


def _tray_guess(col: np.ndarray) -> np.ndarray:
    return col[-10:].mean(axis=0)


def _with_issues(reading: CheckerReading) -> CheckerReading:
    issues = []
    w, b = reading.totals()
    for name, total in (("white", w), ("black", b)):
        if total > 15:
            issues.append(f"{name}: {total} checkers seen: more than 15")
        elif total < 15:
            issues.append(
                f"{name}: {total} checkers seen: {15 - total} missing (pinned under a stack, hidden or off the board)"
            )
    return CheckerReading(
        reading.points,
        reading.bar,
        reading.off,
        reading.confidence,
        reading.bar_confidence,
        reading.off_confidence,
        tuple(issues),
    )


def _top_colour(lab: np.ndarray, centre, ppm: float, ignore, diameter: float) -> np.ndarray:
    """The colour of a checker's top, from the part of it no die lies on: the top inside its rim
    (a metal rim is bright on a dark checker) clear of the dice, where enough of it is; else a
    small disc on the far side of the top from the die."""
    radius = diameter * 0.3
    for x, y, r in ignore:
        d = float(np.hypot(centre[0] - x, centre[1] - y))
        if d < r + radius:  # a die on it
            inner = diameter / 2 - _TOP_RIM_MM
            at = _disc_px(float(centre[0] * ppm - 0.5), float(centre[1] * ppm - 0.5), float(inner * ppm), lab.shape[:2])
            if at is not None:
                ys, xs = at
                free = np.ones(len(ys), bool)
                for x2, y2, r2 in ignore:
                    free &= np.hypot((xs + 0.5) / ppm - x2, (ys + 0.5) / ppm - y2) > r2
                if free.sum() >= np.pi * (_TOP_MIN_FREE_MM * ppm) ** 2:
                    return median_rows(lab[ys[free], xs[free]].T).astype(np.float32)
            if d < 1e-6:
                break
            ux, uy = (centre[0] - x) / d, (centre[1] - y) / d
            far = diameter / 2 - 5
            return _disc_colour(lab, (centre[0] + ux * far, centre[1] + uy * far), ppm, 4.0)
    return _disc_colour(lab, centre, ppm, radius)


_TOP_RIM_MM = 4.5  # a checker's top is looked at this far inside its edge when a die lies on it (a metal rim's ring is 1.2-3.8 mm in)
_TOP_MIN_FREE_MM = 2.0  # ... where a disc of this radius's worth of it is clear of the die


def learn_palette(
    geometry: Geometry, image: np.ndarray, position: Position, config: VisionConfig | None = None
) -> Palette:
    """Learn the checker and tray colours, and where the board's own drawing shows, from a frame
    of a known position (usually the start) on the geometry's layout.

    Raises :class:`PaletteError` if the position has no checker of a side on a point.
    """
    v = view(geometry, image, config)
    lay, lab, ppm = v.layout, v.lab, v.ppm
    diameter = lay.profile.checker_diameter_mm
    cols: dict[int, list[np.ndarray]] = {1: [], -1: []}
    for i, n in enumerate(position.points):
        for k in range(abs(n)):
            cols[1 if n > 0 else -1].append(_disc_colour(lab, lay.checker_slot(i + 1, k)[:2], ppm, diameter * 0.3))
    if not cols[1] or not cols[-1]:
        raise PaletteError("position: expected checkers of both sides on the points to learn their colours")
    tray = None
    if position.off == (0, 0):
        x0, y0, x1, y1 = lay.geometry.tray_white
        tray = tuple(map(float, _disc_colour(lab, ((x0 + x1) / 2, (y0 + y1) / 2), ppm, min(10.0, (x1 - x0) / 3))))
    white = np.median(np.array(cols[1]), axis=0)
    black = np.median(np.array(cols[-1]), axis=0)
    return Palette(tuple(map(float, white)), tuple(map(float, black)), tray, _learn_board_edges(v, position))


_EDGE_GRID_MM = 2.0
# How far beyond a checker's edge a learned board edge must lie: players' stacks on a real board
# stand up to 5 mm off their slots, and a rim learned as the board's own edge makes the empty
# point look covered later; the renderer stacks checkers exactly on their slots (:func:`_as_rendered`).
_LEARN_MARGIN_MM = 8.0
_LEARN_MARGIN_RENDERED_MM = 3.0


def _learn_board_edges(v: View, position: Position) -> tuple[tuple[float, float], ...]:
    """Grid places (every ``_EDGE_GRID_MM``) on the field and bar that show an edge in ``v``,
    clear of every checker of ``position`` (by ``_LEARN_MARGIN_MM``) and of the bar when checkers are on it."""
    lay = v.layout
    g, (fx0, fy0, fx1, fy1) = lay.geometry, lay.field
    xs = np.arange(fx0 + 1, fx1 - 1, _EDGE_GRID_MM)
    ys = np.arange(fy0 + 1, fy1 - 1, _EDGE_GRID_MM)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    clear = np.ones(len(grid), bool)
    centres = [lay.checker_slot(i + 1, k)[:2] for i, n in enumerate(position.points) for k in range(abs(n))]
    centres += [lay.checker_slot(i + 1, 0)[:2] for i, p in enumerate(position.pinned) if p]
    margin = _LEARN_MARGIN_RENDERED_MM if _as_rendered(lay) else _LEARN_MARGIN_MM
    reach = lay.profile.checker_diameter_mm / 2 + margin
    for x, y in centres:
        clear &= np.hypot(grid[:, 0] - x, grid[:, 1] - y) > reach
    if any(position.bar):
        clear &= ~((grid[:, 0] >= g.bar[0] - 3) & (grid[:, 0] <= g.bar[2] + 3))
    pts = grid[clear]
    shown = v.edges_at(pts)
    return tuple((float(x), float(y)) for x, y in pts[shown])
