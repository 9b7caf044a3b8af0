"""Checkers: how many of which colour stand on each point, on the bar and in the trays.

(Some 510 lines in one module: points, bar and trays share the palette and the view they read.)

Owns reading checkers from a :class:`~vision.view.View`: a point reads the stack height
whose predicted rims (:mod:`vision.rims`) fit best, its colour the visible top's; bar
checkers are rings along the bar; borne-off checkers the length of their row. Colours
come from a :class:`Palette` or are split by lightness. May import ``board_rules``
types; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from board_rules import Position
from board_rules.errors import TavliError
from board_rules.untrusted import read_json
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config
from vision.light import CHECKER_COVER, even, light_map
from vision.profile import Layout
from vision.rims import (
    ANGLES,
    MAX_STACK,
    PIN_SHIFT_MM,
    all_samples,
    as_rendered,
    bar_samples,
    first_rims,
    hypothesis,
    mask_at,
    quiet_mask,
    samples_by_x,
    stacked_samples,
)
from vision.stats import median_rows
from vision.view import View, disc_colour, disc_px, sample_px, view

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
    expects them to show whenever nothing lies on them. ``evened``: white's and black's colours as
    the field's median light shows them (:mod:`vision.light`), where that frame showed its field:
    the learned reader tells the sides by them under a lamp that lights one row more."""

    white: tuple[float, float, float]
    black: tuple[float, float, float]
    tray: tuple[float, float, float] | None = None
    board_edges: tuple[tuple[float, float], ...] = ()
    evened: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "white": list(self.white),
            "black": list(self.black),
            "tray": None if self.tray is None else list(self.tray),
            "board_edges": [[round(x, 1), round(y, 1)] for x, y in self.board_edges],
            "evened": None if self.evened is None else {"white": list(self.evened[0]), "black": list(self.evened[1])},
        }

    @classmethod
    def from_dict(cls, data: Any) -> Palette:
        """Raises :class:`PaletteError` unless ``data`` holds white, black (and tray) Lab triples."""
        try:
            tray = data.get("tray")
            white, black = tuple(map(float, data["white"])), tuple(map(float, data["black"]))
            tray_t = None if tray is None else tuple(map(float, tray))
            edges = tuple((float(x), float(y)) for x, y in data.get("board_edges", ()))
            ev = data.get("evened")
            evened = None if ev is None else (tuple(map(float, ev["white"])), tuple(map(float, ev["black"])))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise PaletteError(
                f"palette: {str(data)[:200]!r}: expected white, black (and tray) Lab triples, board_edges [[x, y], ...]"
                " (and evened: {white, black} Lab triples)"
            ) from None
        if len(white) != 3 or len(black) != 3 or (tray_t is not None and len(tray_t) != 3):
            raise PaletteError(f"palette: {str(data)[:200]!r}: expected white, black (and tray) Lab triples")
        named = [("white", white), ("black", black), ("tray", tray_t or (0.0, 0.0, 0.0))]
        named += [] if evened is None else [("evened.white", evened[0]), ("evened.black", evened[1])]
        for name, lab in named:
            if len(lab) != 3 or not all(0.0 <= v <= 255.0 for v in lab):  # NaN fails too
                raise PaletteError(f"palette: {name}: {list(lab)!r}: expected a Lab colour, three numbers 0..255")
        for x, y in edges:
            if not (math.isfinite(x) and math.isfinite(y)):
                raise PaletteError(f"palette: board_edges: {[x, y]!r}: expected places in board mm")
        return cls(white, black, tray_t, edges, evened)  # type: ignore[arg-type]

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"format": "tavli-palette/1", **self.to_dict()}, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Palette:
        """Raises :class:`PaletteError` for a missing or malformed file."""
        data = read_json(path, "palette", PaletteError)
        try:
            return cls.from_dict(data)
        except PaletteError as exc:
            raise PaletteError(f"{str(path)!r}: {exc}") from None


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
    quiet = quiet_mask(lay, board_edges) if board_edges and not as_rendered(lay) else None
    heights, confs, pinned = [], [], []
    everywhere = all_samples(lay)[0]
    strength = v.edge_strength_at(everywhere)  # every point's samples at once
    shown = strength > v.threshold
    usable = np.ones(len(everywhere), bool)
    if quiet is not None:
        usable &= mask_at(quiet, everywhere)
    by_x, xs = samples_by_x(lay)
    for x, y, r in ignore:
        lo, hi = np.searchsorted(xs, (x - r - 1, x + r + 1))  # only samples this close across can lie in the disc
        near = by_x[lo:hi]
        usable[near] &= np.hypot(everywhere[near, 0] - x, everywhere[near, 1] - y) > r
    index, valid, pred, not_pred = stacked_samples(lay)
    valid = valid & usable[index]
    seen = shown[index]
    # mismatches: a rim predicted where none shows, or none predicted where one shows (every point at once)
    errs = (
        np.matmul(pred, (valid & ~seen).astype(np.float32)[:, :, None])
        + np.matmul(not_pred, (valid & seen).astype(np.float32)[:, :, None])
    )[:, :, 0].astype(np.int64)
    orders = np.argsort(errs, axis=1, kind="stable")
    rim_one, rim_one_clear = first_rims(lay)
    for i, (err, order) in enumerate(zip(errs, orders)):
        n, under = hypothesis(int(order[0]))
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
        rival = next(int(h) for h in order[1:] if hypothesis(int(h))[0] != n)
        confs.append(float(min(1.0, (err[rival] - err[order[0]]) / _CONFIDENT_MARGIN)))
    tops = []
    for p, n in enumerate(heights):
        if n:
            x, y = lay.checker_top(p + 1, n - 1)[:2]
            if pinned[p]:
                y += lay.geometry.points[p].direction * PIN_SHIFT_MM
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
    x, ys, centres, pts, valid = bar_samples(lay, board_edges)
    shown = v.edges_at(pts).reshape(len(centres), ANGLES) & valid
    n_valid = valid.sum(axis=1)
    s = np.where(n_valid >= ANGLES // 3, shown.sum(axis=1) / np.maximum(n_valid, 1), 0.0)
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


_CUBE_CLEAR_MM = 2.5  # a rim sample this near the cube's outline, or on it, does not show a checker


def rings_beside_cube(
    v: View,
    rings: list[tuple[tuple[float, float], float]],
    square: tuple[tuple[float, float], float, float],
    size: float,
    min_ring: float,
    board_edges: tuple[tuple[float, float], ...] = (),
) -> list[tuple[tuple[float, float], float]]:
    """``rings`` (of :func:`rings_on`) with those next to the cube ``square`` (centre mm, angle, score;
    side ``size`` mm) judged again on their rim samples clear of it: on a bar hardly wider than a
    checker, the cube's side and the bar's sides can make most of a ring where there is none. A ring
    keeps its place if it still shows ``min_ring`` of the samples left (at least a third of them)."""
    (cx, cy), angle, _ = square
    x, ys, centres, pts, valid = bar_samples(v.layout, board_edges)
    rim = pts.reshape(len(centres), ANGLES, 2)
    reach = size / 2 * math.sqrt(2) + v.layout.profile.checker_diameter_mm / 2 + _CUBE_CLEAR_MM
    c, s = math.cos(-angle), math.sin(-angle)
    out = []
    for centre, score in rings:
        if math.hypot(centre[0] - cx, centre[1] - cy) > reach:
            out.append((centre, score))
            continue
        i = int(np.argmin(np.abs(ys - centre[1])))
        p = rim[i]
        u = (p[:, 0] - cx) * c - (p[:, 1] - cy) * s  # the samples in the cube's own axes
        w = (p[:, 0] - cx) * s + (p[:, 1] - cy) * c
        outside = np.hypot(np.maximum(np.abs(u) - size / 2, 0), np.maximum(np.abs(w) - size / 2, 0))
        ok = valid[i] & (outside > _CUBE_CLEAR_MM)
        if ok.sum() < ANGLES // 3:
            continue
        judged = float(np.count_nonzero(v.edges_at(p) & ok) / ok.sum())
        if judged >= min_ring:
            out.append((centre, judged))
    return out


def count_bar(v: View, pal: Palette, min_ring: float, rings) -> tuple[tuple[int, int], tuple[float, float]]:
    """Checkers on the bar from its rings (:func:`bar_rings`): how many of each side, and the margin of the weakest ring of each."""
    counts = [0, 0]
    margins = [1.0, 1.0]
    for centre, score in rings:
        side = _side_of(disc_colour(v.lab, centre, v.ppm, v.layout.profile.checker_diameter_mm * 0.3), pal)
        counts[side] += 1
        margins[side] = min(margins[side], float((score - min_ring) / (1 - min_ring)))
    return (counts[0], counts[1]), (margins[0], margins[1])


def _read_off(v: View, pal: Palette, max_gap_per_step: float) -> tuple[tuple[int, int], tuple[float, float]]:
    """Borne-off checkers: the length of each side's row in its tray, sampled across the tray's middle half.
    The row goes on past a break of up to ``max_gap_per_step`` of a checker's step on edge (a rim, a seam)."""
    counts, confs = [], []
    gap = int(max_gap_per_step * _OFF_STEP_MM / 0.5)  # samples are 0.5 mm apart
    for side, (along, col) in enumerate(_tray_columns(v)):
        own, other = _tray_colours(pal, side, col)
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


def _tray_columns(v: View) -> list[tuple[np.ndarray, np.ndarray]]:
    """For white's tray and black's: the distances along it from its start and the mean Lab colour across
    its middle half at each."""
    out = []
    for along, pts, across in _tray_samples(v.layout, v.ppm):
        out.append((along, sample_px(v.lab, pts).reshape(len(along), across, 3).astype(np.float32).mean(axis=1)))
    return out


def trays_told(v: View, pal: Palette, min_contrast: float) -> tuple[bool, bool]:
    """Whether white's checkers and black's can be told from their tray by colour: the side's colour lies
    at least ``min_contrast`` (Lab) from the tray's (the palette's, or the tray's far end where the
    palette has none). A tray of its checkers' colour shows no row of them to count."""
    told = []
    for side, (_, col) in enumerate(_tray_columns(v)):
        own, other = _tray_colours(pal, side, col)
        told.append(bool(np.linalg.norm(own - other) >= min_contrast))
    return told[0], told[1]


def _tray_colours(pal: Palette, side: int, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A side's checker colour and its tray's (the palette's, or the far end of the tray's colours ``col``)."""
    own = np.array(pal.white if side == 0 else pal.black)
    return own, np.array(pal.tray) if pal.tray is not None else _tray_guess(col)


# each side's home board (white, black): indices 0..23 of the points in white's numbering
HOME_BOARDS = (range(0, 6), range(18, 24))


def off_board(points: tuple[int, ...]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The checkers of each side (white, black) not on the points, told apart by the rules rather than
    read: ``(bar, off)``. A side's checkers short of 15 are on the bar where it still has a checker
    outside its home board (points 1-6 for white, 19-24 for black, white's numbering), for a checker
    is borne off only once all are home; otherwise they are borne off. More than 15 leave none."""
    bar, off = [0, 0], [0, 0]
    for s, sign, home in ((0, 1, HOME_BOARDS[0]), (1, -1, HOME_BOARDS[1])):
        mine = [i for i, v in enumerate(points) if v * sign > 0]
        missing = max(0, 15 - sum(abs(points[i]) for i in mine))
        if any(i not in home for i in mine):
            bar[s] = missing
        else:
            off[s] = missing
    return (bar[0], bar[1]), (off[0], off[1])


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
            at = disc_px(float(centre[0] * ppm - 0.5), float(centre[1] * ppm - 0.5), float(inner * ppm), lab.shape[:2])
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
            return disc_colour(lab, (centre[0] + ux * far, centre[1] + uy * far), ppm, 4.0)
    return disc_colour(lab, centre, ppm, radius)


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
    places: dict[int, list[tuple[float, float]]] = {1: [], -1: []}
    for i, n in enumerate(position.points):
        for k in range(abs(n)):
            places[1 if n > 0 else -1].append(lay.checker_slot(i + 1, k)[:2])
    cols = {side: [disc_colour(lab, at, ppm, diameter * 0.3) for at in places[side]] for side in places}
    if not cols[1] or not cols[-1]:
        raise PaletteError("position: expected checkers of both sides on the points to learn their colours")
    tray = None
    if position.off == (0, 0):
        x0, y0, x1, y1 = lay.geometry.tray_white
        tray = tuple(map(float, disc_colour(lab, ((x0 + x1) / 2, (y0 + y1) / 2), ppm, min(10.0, (x1 - x0) / 3))))
    white = np.median(np.array(cols[1]), axis=0)
    black = np.median(np.array(cols[-1]), axis=0)
    return Palette(
        tuple(map(float, white)),
        tuple(map(float, black)),
        tray,
        _learn_board_edges(v, position),
        _evened_sides(v, places, cols),
    )


def _evened_sides(
    v: View, places: dict[int, list[tuple[float, float]]], cols: dict[int, list[np.ndarray]]
) -> tuple[tuple[float, float, float], tuple[float, float, float]] | None:
    """White's (1) and black's (-1) median colours, each checker's ``cols`` at its ``places`` (board mm),
    as the field's median light shows them; None where the field does not show."""
    radius = CHECKER_COVER * v.layout.profile.checker_diameter_mm
    light = light_map(v, [(x, y, radius) for side in places.values() for x, y in side])
    if light is None:
        return None
    out = []
    for side in (1, -1):
        evened = even(np.array(cols[side]), light.at(places[side]))
        out.append(tuple(round(float(c), 1) for c in np.clip(np.median(evened, axis=0), 0, 255)))
    return out[0], out[1]


_EDGE_GRID_MM = 2.0


# How far beyond a checker's edge a learned board edge must lie: players' stacks on a real board
# stand up to 5 mm off their slots, and a rim learned as the board's own edge makes the empty
# point look covered later; the renderer stacks checkers exactly on their slots (:func:`as_rendered`).
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
    margin = _LEARN_MARGIN_RENDERED_MM if as_rendered(lay) else _LEARN_MARGIN_MM
    reach = lay.profile.checker_diameter_mm / 2 + margin
    for x, y in centres:
        clear &= np.hypot(grid[:, 0] - x, grid[:, 1] - y) > reach
    if any(position.bar):
        clear &= ~((grid[:, 0] >= g.bar[0] - 3) & (grid[:, 0] <= g.bar[2] + 3))
    pts = grid[clear]
    shown = v.edges_at(pts)
    return tuple((float(x), float(y)) for x, y in pts[shown])
