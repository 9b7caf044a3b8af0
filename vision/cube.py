"""The doubling cube: where it lies on the bar (centre, white's side, black's side) and its value.

Owns finding the cube in the rectified view and reading the number on its top
face. The cube is found as a square outline of the cube's size along the bar
(at any turn); its face is turned upright and its number matched against
templates of 2, 4, 8, 16, 32 and 64 (a cube showing 64 in the centre is an
undoubled cube, value 1). An unreadable face gives the cube's place with value
None. May import ``board_rules`` types; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from vision.board import BAR_X0, BAR_X1, CUBE_SIZE_MM, FIELD_Y0, FIELD_Y1
from vision.checkers import FieldReading, count_bar, rings_beside_cube, rings_on, scan_bar
from vision.config import VisionConfig
from vision.profile import Layout
from vision.view import View

FACES = (2, 4, 8, 16, 32, 64)
_TEMPLATE_PX = 48  # side of the face image the number is matched in
_SLIDE_PX = 4  # how far (px of it) a number may sit off the face's centre


@dataclass(frozen=True, slots=True)
class CubeReading:
    """The cube's place (``centre``, ``white``, ``black``), its board-mm centre, the face's
    number (None if unreadable), the value that means (64 in the centre: 1) and confidences."""

    where: str
    centre_mm: tuple[float, float]
    face: int | None
    confidence: float  # of finding the cube
    face_confidence: float

    @property
    def value(self) -> int | None:
        if self.face is None:
            return None
        return 1 if (self.face == 64 and self.where == "centre") else self.face

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (Python numbers only)."""
        return {
            "where": self.where,
            "value": None if self.value is None else int(self.value),
            "face": None if self.face is None else int(self.face),
            "centre_mm": [round(float(self.centre_mm[0]), 1), round(float(self.centre_mm[1]), 1)],
            "confidence": round(float(self.confidence), 3),
            "face_confidence": round(float(self.face_confidence), 3),
        }


def _outline(half: float, angle: float, n_side: int = 12, extent: float = 0.8) -> np.ndarray:
    return _along_sides(half, angle, np.linspace(-extent, extent, n_side))


def _along_sides(half: float, angle: float, t: np.ndarray) -> np.ndarray:
    """Points on each side of a square of half-side ``half`` turned by ``angle``, at ``t`` (fractions
    of the half-side from each side's middle), offsets from its centre in mm."""
    sides = [
        np.c_[t * half, np.full(len(t), -half)],
        np.c_[np.full(len(t), half), t * half],
        np.c_[t * half, np.full(len(t), half)],
        np.c_[np.full(len(t), -half), t * half],
    ]
    pts = np.concatenate(sides)
    c, s = math.cos(angle), math.sin(angle)
    return pts @ np.array([[c, s], [-s, c]])


_ANGLES = tuple(math.radians(a) for a in range(0, 90, 10))


@dataclass(frozen=True, slots=True)
class CubeArea:
    """Where a board's cube is looked for: its bar, from side ``x0`` to side ``x1``, between the field's
    ends ``y0`` and ``y1`` (board mm, black's end first), and the cube's side ``size`` (mm)."""

    x0: float
    x1: float
    y0: float
    y1: float
    size: float


RENDERED = CubeArea(BAR_X0, BAR_X1, FIELD_Y0, FIELD_Y1, CUBE_SIZE_MM)  # the renderer's board


_OWN_EDGE_MM = 3.0  # a sample this near the bar's sides or the field's ends lies on the board's own edge
_LEAST_OUTLINE = 1 / 3  # a square shows at least this share of its outline clear of them (both ends do)


def _on_plain_bar(area: CubeArea, x, y):
    """Whether samples at board mm ``x``, ``y`` lie on the bar clear of its own edges (its sides and
    the field's ends): only there does an edge tell of a cube, or of a checker beside it. A cube on a
    bar hardly wider than itself, or at the bar's end, has sides on the board's own edges, and a square
    whose side lies along the bar's would otherwise score for it."""
    m = _OWN_EDGE_MM
    return (x >= area.x0 + m) & (x <= area.x1 - m) & (y >= area.y0 + m) & (y <= area.y1 - m)


def area_of(layout: Layout) -> CubeArea:
    """The :class:`CubeArea` of a board layout: its bar and its profile's cube."""
    bar = layout.geometry.bar
    return CubeArea(
        float(bar[0]), float(bar[2]), float(layout.field[1]), float(layout.field[3]), float(layout.profile.cube_size_mm)
    )


@lru_cache(maxsize=8)
def _squares(size: float) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """A cube of side ``size`` mm at each of :data:`_ANGLES`: its outline's samples, the face's just inside
    it and the surround's just outside the middle of each side (plain beside a cube, a checker's rim on a
    checker); offsets from its centre in mm. The insets are those of a 30 mm cube, to scale."""
    k = size / 30.0
    outlines = tuple(_outline(size / 2, a) for a in _ANGLES)
    inside = tuple(_outline(size / 2 - 4.0 * k, a) for a in _ANGLES)
    outside = tuple(_outline(size / 2 + 3.4 * k, a, 6, 0.5) for a in _ANGLES)
    return outlines, inside, outside


def find_cube(
    edges_at,
    *,
    min_score: float,
    edge_map: np.ndarray | None = None,
    ppm: float = 0.0,
    threshold: float = 0.0,
    area: CubeArea = RENDERED,
) -> tuple[tuple[float, float], float, float] | None:
    """The best square outline of the cube's size along the bar of ``area``: ``(centre_mm, angle, score)``, or None below ``min_score``.

    ``edges_at(points_mm)`` tells where the frame shows an edge. The score is the fraction of the
    outline that shows one less those of the face just inside it and of the bar just outside the
    middle of its sides (where a checker would show its rim). A coarse search over the bar (on
    ``edge_map`` at the nearest px where given: the view's edge strength at ``ppm``, an edge above
    ``threshold``) is followed by a fine one, at every angle, about its best places.
    """

    def scores(centres: np.ndarray, ks) -> np.ndarray:
        on, ins, out = _square_parts(edges_at, centres, ks, area.size, area)
        return on - ins - out  # a face is plain inside its outline, and so is the bar just beside it

    # coarse: square and diagonal over the whole bar; fine: every angle around the best few places
    coarse_ks = (0, len(_ANGLES) // 2)
    fast = (
        _coarse_scores(edge_map, float(ppm), float(threshold), coarse_ks, area)
        if edge_map is not None and ppm > 0
        else None
    )
    if fast is not None:
        centres, coarse = fast
        keep = _COARSE_KEEP_MAP
    else:
        centres = _bar_grid(area)[2]
        coarse = scores(centres, coarse_ks).max(axis=0)
        keep = _COARSE_KEEP
    best = None
    steps = np.array([(dx, dy) for dx in (-1.0, 0.0, 1.0) for dy in (-1.0, 0.0, 1.0)])
    near = np.concatenate([centres[i] + steps for i in np.argsort(-coarse, kind="stable")[:keep]])
    fine = scores(near, tuple(range(len(_ANGLES))))  # angles x centres
    # the first best in the order candidate, angle, place (as one at a time would find it)
    for c in range(len(near) // len(steps)):
        block = fine[:, c * len(steps) : (c + 1) * len(steps)]
        for k in range(len(_ANGLES)):
            j = int(np.argmax(block[k]))
            if best is None or block[k, j] > best[2]:
                best = (tuple(map(float, near[c * len(steps) + j])), _ANGLES[k], float(block[k, j]))
    if best is None or best[2] < min_score:
        return None
    return best


def _square_parts(
    edges_at, centres: np.ndarray, ks, size: float, area: CubeArea | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a square of side ``size`` mm at every centre (board mm, N x 2) and every angle index in ``ks``,
    the fractions of its outline, of the face just inside it and of the surround just outside the middle
    of its sides that show an edge: three len(ks) x N arrays, all sampled at once. With ``area``, only
    the samples on the plain bar count (:func:`_on_plain_bar`), and an outline counts as if at least
    :data:`_LEAST_OUTLINE` of it were."""
    rings = _rings(float(size), tuple(ks))
    outlines, inside, outside = _squares(float(size))
    sizes = (len(outlines[ks[0]]), len(inside[ks[0]]), len(outside[ks[0]]))
    # every centre plus every ring sample (x, y interleaved: one long run of additions, not pairs)
    pts = np.tile(centres, rings.shape[1])[None, :, :] + rings.reshape(len(ks), 1, -1)
    seen = edges_at(pts.reshape(-1, 2)).reshape(len(ks), len(centres), -1)
    a, b = sizes[0], sizes[0] + sizes[1]
    if area is None:
        return seen[..., :a].mean(axis=2), seen[..., a:b].mean(axis=2), seen[..., b:].mean(axis=2)
    xy = pts.reshape(len(ks), len(centres), -1, 2)
    plain = _on_plain_bar(area, xy[..., 0], xy[..., 1])
    hits = seen & plain
    parts = []
    for lo, hi, least in ((0, a, _LEAST_OUTLINE * a), (a, b, 1), (b, seen.shape[2], 1)):
        parts.append(hits[..., lo:hi].sum(axis=2) / np.maximum(plain[..., lo:hi].sum(axis=2), least))
    return parts[0], parts[1], parts[2]


def find_cube_near(
    edges_at, centre_mm: tuple[float, float], reach_mm: float, size: float = CUBE_SIZE_MM
) -> tuple[tuple[float, float], float, float]:
    """The square of side ``size`` mm (the renderer's cube by default) whose outline shows best against a plain face inside it, centred
    within ``reach_mm`` of ``centre_mm`` (1 mm steps, every angle): ``(centre_mm, angle, score)``, the
    score the fraction of its outline that shows an edge less that of the face just inside it.

    Unlike :func:`find_cube` it does not ask the surround to be plain: it looks where something on the
    bar was already seen (a 16th checker), so whatever square is best there is the candidate for
    the cube, to be confirmed by its face's number.
    """
    steps = np.arange(-math.floor(reach_mm), math.floor(reach_mm) + 1, 1.0)
    centres = np.stack(
        np.broadcast_arrays(centre_mm[0] + steps[None, :], centre_mm[1] + steps[:, None]), axis=-1
    ).reshape(-1, 2)
    on, ins, _ = _square_parts(edges_at, centres, tuple(range(len(_ANGLES))), size)
    score = on - ins
    k, i = np.unravel_index(int(np.argmax(score)), score.shape)
    return (float(centres[i, 0]), float(centres[i, 1])), _ANGLES[k], float(score[k, i])


@lru_cache(maxsize=16)
def _rings(size: float, ks: tuple[int, ...]) -> np.ndarray:
    """The samples of a cube's outline, face and surround at each angle index of ``ks``, stacked (len(ks) x N x 2 mm; read-only)."""
    outlines, inside, outside = _squares(size)
    out = np.stack([np.concatenate([outlines[k], inside[k], outside[k]]) for k in ks])
    out.setflags(write=False)
    return out


_COARSE_STEP_MM = 2.0
_COARSE_KEEP = 4  # places the fine search looks around, from the exact coarse scores
_COARSE_KEEP_MAP = 6  # ... from the nearest-px ones (a few more: they are rougher)


@lru_cache(maxsize=8)
def _bar_grid(area: CubeArea) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The coarse grid of cube centres along the bar of ``area`` (board mm): its columns, its rows, and every
    centre row by row (N x 2); read-only. A cube may overhang the bar's sides by 4 mm; on a bar narrower
    than that allows, its centre line alone."""
    half = area.size / 2
    xs = np.arange(area.x0 + half - 4, area.x1 - half + 4.01, _COARSE_STEP_MM)
    if not len(xs):
        xs = np.array([(area.x0 + area.x1) / 2])
    ys = np.arange(area.y0 + half, area.y1 - half + 0.01, _COARSE_STEP_MM)
    centres = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]), axis=-1).reshape(-1, 2)
    for a in (xs, ys, centres):
        a.setflags(write=False)
    return xs, ys, centres


@lru_cache(maxsize=16)
def _coarse_plain(area: CubeArea, ks: tuple[int, ...], index: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """For the ``index``-th ring of :func:`_coarse_scores` (angle by angle: outline, face, surround),
    whether each of its samples lies on the plain bar at every centre of :func:`_bar_grid`'s grid
    (nx x ny, one per sample), and how many do; worked out once per board."""
    xs, ys, _ = _bar_grid(area)
    outlines, inside, outside = _squares(area.size)
    k = ks[index // 3]
    ring = (outlines, inside, outside)[index % 3][k]
    plains = tuple(_on_plain_bar(area, (xs + ox)[:, None], (ys + oy)[None, :]).astype(np.int16) for ox, oy in ring)
    counted = np.sum(plains, axis=0).astype(np.int16)
    return plains, counted


def _coarse_scores(
    edge_map: np.ndarray, ppm: float, threshold: float, ks, area: CubeArea = RENDERED
) -> tuple[np.ndarray, np.ndarray] | None:
    """The coarse score (best over the angles ``ks``) of a cube at every centre of
    :func:`_bar_grid`'s grid on ``area``, sampling ``edge_map > threshold`` at the nearest px: the grid is
    regular, so each sample of the outline is one strided slice of the map, summed over the
    whole grid at once. Returns the centres (board mm, N x 2) and their scores (N), or None
    where the grid's step is not a whole number of px."""
    step_f = _COARSE_STEP_MM * ppm
    step = int(round(step_f))
    if step < 1 or abs(step_f - step) > 1e-6:
        return None
    xs, ys, centres = _bar_grid(area)
    outlines, inside, outside = _squares(area.size)
    nx, ny = len(xs), len(ys)
    rings = [(ring, sign) for k in ks for ring, sign in ((outlines[k], 1.0), (inside[k], -1.0), (outside[k], -1.0))]
    # px of the first centre's samples: nearest px of (centre + offset) mm
    first = [np.floor(np.array([xs[0], ys[0]]) * ppm - 0.5 + ring * ppm + 0.5).astype(int) for ring, _ in rings]
    lo = np.min([f.min(axis=0) for f in first], axis=0)
    hi = np.max([f.max(axis=0) for f in first], axis=0) + (np.array([nx, ny]) - 1) * step + 1
    h, w = edge_map.shape[:2]
    crop = np.zeros(
        (hi[1] - lo[1], hi[0] - lo[0]), np.int16
    )  # the map around the grid, zero off it (int16: the hits add up without a cast)
    sy, sx = slice(max(0, lo[1]), min(h, hi[1])), slice(max(0, lo[0]), min(w, hi[0]))
    crop[sy.start - lo[1] : sy.stop - lo[1], sx.start - lo[0] : sx.stop - lo[0]] = edge_map[sy, sx] > threshold
    # the map split by px phase (column and row modulo the step) and turned, so that one sample's
    # px over the whole grid, crop[r + step * i, c + step * j], are a block of whole rows of one phase:
    # phases[c % step, r % step][c // step + j, r // step + i]
    rows, cols = -(-crop.shape[0] // step) * step, -(-crop.shape[1] // step) * step
    turned = np.zeros((cols, rows), np.int16)
    turned[: crop.shape[1], : crop.shape[0]] = crop.T
    phases = np.ascontiguousarray(turned.reshape(cols // step, step, rows // step, step).transpose(1, 3, 0, 2))
    best = np.full((nx, ny), -np.inf, np.float32)
    for i in range(0, len(rings), 3):
        score = np.zeros((nx, ny), np.float32)
        for part, ((ring, sign), px) in enumerate(zip(rings[i : i + 3], first[i : i + 3])):
            # each sample only where it lies on the plain bar (:func:`_on_plain_bar`)
            plains, counted = _coarse_plain(area, ks, i + part)
            hits = np.zeros((nx, ny), np.int16)
            for (c, r), plain in zip((px - lo).tolist(), plains):
                hits += phases[c % step, r % step, c // step : c // step + nx, r // step : r // step + ny] * plain
            least = _LEAST_OUTLINE * len(ring) if part == 0 else 1
            score += sign * hits / np.maximum(counted, least)
        np.maximum(best, score, out=best)
    return centres, best.T.ravel()


def place_of(centre_mm: tuple[float, float], area: CubeArea = RENDERED) -> str:
    """``centre`` in the middle third of the bar of ``area``, else the side whose half of the board it is in (white at the bottom)."""
    y = centre_mm[1]
    third = (area.y1 - area.y0) / 3
    if y < area.y0 + third:
        return "black"
    if y > area.y1 - third:
        return "white"
    return "centre"


def _templates() -> dict[int, list[np.ndarray]]:
    out: dict[int, list[np.ndarray]] = {}
    n = _TEMPLATE_PX
    for face in FACES:
        img = np.zeros((n, n), np.uint8)
        text = str(face)
        scale = 0.028 * n / max(1, len(text))
        thick = max(1, n // 30)
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        cv2.putText(
            img,
            text,
            (int(n / 2 - tw / 2), int(n / 2 + th / 2)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            255,
            thick,
            cv2.LINE_AA,
        )
        img = cv2.GaussianBlur(img, (0, 0), 1.0)
        out[face] = [np.rot90(img, k).astype(np.float32) for k in range(4)]
    return out


_TEMPLATES = _templates()


def read_face(face_bgr: np.ndarray) -> tuple[int | None, float]:
    """The number on an upright square image of the cube's face: ``(face, confidence)``; None if unreadable.

    The ink is whichever of dark and light the face's middle shows less of: black numbers on a white
    cube, white or gold ones on a red or black cube."""
    grey = cv2.cvtColor(face_bgr, cv2.COLOR_BGR2GRAY) if face_bgr.ndim == 3 else face_bgr
    grey = cv2.resize(grey, (_TEMPLATE_PX, _TEMPLATE_PX), interpolation=cv2.INTER_AREA).astype(np.float32)
    m = _TEMPLATE_PX // 8
    middle = grey[m:-m, m:-m]
    light_face = float(np.median(middle)) >= (float(middle.min()) + float(middle.max())) / 2
    ink = cv2.normalize((255 - grey) if light_face else grey, None, 0, 255, cv2.NORM_MINMAX)
    ink[:m], ink[-m:], ink[:, :m], ink[:, -m:] = 0, 0, 0, 0  # the outline is not ink
    ink = cv2.GaussianBlur(ink, (0, 0), 1.0)
    # a few px of slack each way: a face cut a little off its centre still matches its number
    ink = cv2.copyMakeBorder(ink, _SLIDE_PX, _SLIDE_PX, _SLIDE_PX, _SLIDE_PX, cv2.BORDER_CONSTANT, value=0)
    scores = {}
    for face, rots in _TEMPLATES.items():
        best = -1.0
        for t in rots:
            r = cv2.matchTemplate(ink, t, cv2.TM_CCOEFF_NORMED)
            best = max(best, float(r.max()))
        scores[face] = best
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (face, s1), (_, s2) = ranked[0], ranked[1]
    confidence = max(0.0, min(1.0, (s1 - s2) / 0.15)) * max(0.0, min(1.0, s1 / 0.6))
    return (face if s1 >= 0.45 else None), confidence


def face_image(
    rectified_bgr: np.ndarray, ppm: float, centre_mm: tuple[float, float], angle: float, size: float = CUBE_SIZE_MM
) -> np.ndarray:
    """The face of a cube of side ``size`` mm cut out of a rectified view and turned upright, ``_TEMPLATE_PX`` square."""
    half = size / 2 - size / 30
    c, s = math.cos(angle), math.sin(angle)
    corners = np.array([(-half, -half), (half, -half), (half, half)]) @ np.array([[c, s], [-s, c]]) + centre_mm
    src = (corners * ppm - 0.5).astype(np.float32)
    n = _TEMPLATE_PX
    dst = np.array([(0, 0), (n - 1, 0), (n - 1, n - 1)], np.float32)
    return cv2.warpAffine(rectified_bgr, cv2.getAffineTransform(src, dst), (n, n), flags=cv2.INTER_LINEAR)


# ----------------------------------------------------------------- the cube on the bar, with the checkers beside it

Square = tuple[tuple[float, float], float, float]  # centre (board mm), angle, score: what find_cube gives


@dataclass(frozen=True, slots=True)
class BarReading:
    """The bar of one frame: the ``cube`` (None where none is reported), the ``square`` taken for it
    (one too faint to report as the cube too: no checker nor hand lies there; None for none), the
    ``rings`` of the checkers beside it, and how many of each side (white, black) they are, with the
    margin of each side's weakest ring (``confidence``)."""

    cube: CubeReading | None
    square: Square | None
    rings: list[tuple[tuple[float, float], float]]
    checkers: tuple[int, int]
    confidence: tuple[float, float]


def read_bar(
    v: View, field: FieldReading, config: VisionConfig, board_edges: tuple[tuple[float, float], ...] = ()
) -> BarReading:
    """The cube on the bar of a view and the checkers beside it, read together: each can pass for the other.

    The cube is the best square of its profile's size along the bar (:func:`find_cube`) that scores
    ``cube.min_outline``, or a fainter one (``cube.min_face_outline``) whose face shows a number
    clearly; a square of ``cube.min_shape`` is not reported but keeps checkers off its place. Where
    no square is taken and the checkers would then be 16 of a side (``field``'s and the bar's), with
    one on the bar, the cube is a square about a checker read on the bar whose face shows a number
    clearly, else the square of ``cube.min_conserve`` (kept off, not reported); each only where it
    leaves 15. A square that is a checker about the cube's size (:func:`_checker_there`) is none.
    """
    cfg, prof = config, v.layout.profile
    area = area_of(v.layout)
    best = find_cube(v.edges_at, min_score=-math.inf, edge_map=v.edges, ppm=v.ppm, threshold=v.threshold, area=area)
    shape = _scoring(best, min(cfg.cube_min_shape, cfg.cube_min_face_outline))
    face = None  # (number, confidence) once read
    if shape is not None and shape[2] < cfg.cube_min_outline:
        # a fainter square is the cube still where its face shows a number clearly
        face = _face_of(v, shape)
        if not (
            shape[2] >= cfg.cube_min_face_outline and face[0] is not None and face[1] >= cfg.cube_min_face_confidence
        ):
            face = None
            if shape[2] < cfg.cube_min_shape:
                shape = None
            # else a shape too faint to report as the cube: its place is still no checker, nor a hand (see covers)
    scan = scan_bar(v, board_edges)
    if shape is not None and _checker_there(v, scan, shape, face, cfg):
        shape, face = None, None
    found = shape if shape is not None and (shape[2] >= cfg.cube_min_outline or face is not None) else None
    others = field.totals()

    def beside(square: Square | None):
        """The bar's rings, counts and margins with ``square`` taken for the cube, and the totals of each side."""
        away = None if square is None else (square[0][0], square[0][1], prof.cube_size_mm * 0.8)
        rings = rings_on(scan, cfg.bar_min_ring, away)
        if square is not None:
            rings = rings_beside_cube(v, rings, square, prof.cube_size_mm, cfg.bar_min_ring, board_edges)
        counts, margins = count_bar(v, field.palette, cfg.bar_min_ring, rings)
        return (rings, counts, margins), tuple(t + b for t, b in zip(others, counts))

    (rings, counts, margins), totals = beside(shape)
    if shape is None and any(t == 16 and b for t, b in zip(totals, counts)):
        # a 16th checker on the bar: the cube is the likelier reading. First a checker read on the bar
        # whose face shows a number clearly (its outline lost in the surround's edges), then the best
        # square if it scores cube.min_conserve (a cube too faint to be seen as one)
        for at, _ in rings:
            square = find_cube_near(v.edges_at, at, prof.cube_size_mm * 0.4, prof.cube_size_mm)
            number = _face_of(v, square) if square[2] >= cfg.cube_min_face_outline else (None, 0.0)
            if number[0] is None or number[1] < cfg.cube_min_face_confidence:
                continue
            kept, totals = beside(square)
            if max(totals) <= 15:
                shape = found = square
                face, (rings, counts, margins) = number, kept
                break
        else:
            faint = _scoring(best, cfg.cube_min_conserve)
            kept, totals = beside(faint) if faint is not None else (None, None)
            if kept is not None and max(totals) <= 15:
                shape, (rings, counts, margins) = faint, kept
    cube = None
    if found is not None:
        centre, _, score = found
        number, face_conf = face or _face_of(v, found)
        cube = CubeReading(place_of(centre, area), centre, number, float(min(1.0, score)), face_conf)
    return BarReading(cube, shape, rings, counts, margins)


_RING_ALL_ROUND = 0.9  # a checker's rim shows this much of itself all round
_CORNER_SPAN = (0.8, 0.85, 0.9)  # where along a side's half its corner is sampled, past the outline's samples
_MIN_CORNERS = 0.75  # a cube's corners show at least this share of their samples; a checker's place few


def _checker_there(v: View, scan, square: Square, face: tuple[int | None, float] | None, cfg: VisionConfig) -> bool:
    """Whether the square taken for the cube is a checker on the bar about the cube's size: a ring
    shows all round at its place (:func:`vision.checkers.scan_bar`'s ``scan``), the square's corners
    show no edge (a circle inside a square leaves them plain; the outline's samples stop short of
    them) and its face shows no number clearly."""
    (cx, cy), angle, _ = square
    reach = v.layout.profile.cube_size_mm * 0.25
    near = (np.abs(scan.ys - cy) <= reach) & (abs(scan.x - cx) <= reach)
    if not near.any() or scan.scores[near].max() < _RING_ALL_ROUND:
        return False
    span = np.array([s * f for f in _CORNER_SPAN for s in (-1, 1)])
    corners = _along_sides(v.layout.profile.cube_size_mm / 2, angle, span) + (cx, cy)
    if float(np.mean(v.edges_at(corners))) >= _MIN_CORNERS:
        return False
    number, confidence = face or _face_of(v, square)
    return number is None or confidence < cfg.cube_min_face_confidence


def _scoring(square: Square | None, min_score: float) -> Square | None:
    """``square`` where it scores ``min_score``, as :func:`find_cube` keeps one; else None."""
    return None if square is None or square[2] < min_score else square


def _face_of(v: View, square: Square) -> tuple[int | None, float]:
    """The number on the face of a square found on the view ``v``: (number or None, confidence)."""
    centre, angle, _ = square
    size = v.layout.profile.cube_size_mm
    near = v.bgr_near(centre, size * 0.75)  # the face's corners lie within half a side times sqrt 2
    return read_face(face_image(near, v.ppm, centre, angle, size))
