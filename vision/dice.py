"""Dice in a camera image: find every die, read its top face, flag cocked dice.

Owns :func:`read_dice` and :class:`DieReading`. The reader works on any BGR
image, with or without a board: it finds pips (small round blobs darker or
lighter than what is around them), links pips of one size that sit close
together on one uniform face, and accepts a group only when it shows one of
the six pip layouts of a die (an affine fit, so a tilted camera is fine) on a
face of even colour that the pips stand out from. Checkers (large discs,
highlights, rims, the gaps between them) and the cube (a printed number) give no
such layout. A die is flagged cocked when a four, five or six shows a layout
squashed beyond what the camera's tilt explains, or when one of its sides shows
beside the top face in the face's own colour, darker. Thresholds come from
:class:`vision.config.VisionConfig` (``[dice]`` in ``vision.toml``). May import
``board_rules``; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations
from typing import Any

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision import learned_dice
from vision.config import DICE_READERS, VisionConfig, default_config
from vision.stats import median_rows


class DiceImageError(TavliError, ValueError):
    """An image (or mask) that the dice reader cannot work on: empty, not BGR, or a mask of another size."""


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die seen in an image.

    ``value`` is the top face (1..6) or None when unreadable; ``box`` is
    ``(x, y, w, h)`` in image px around the top face; ``centre`` its centre in
    image px; ``cocked`` is True for a die leaning on something (its value
    should not be trusted); ``confidence`` is 0..1.
    """

    value: int | None
    box: tuple[int, int, int, int]
    centre: tuple[float, float]
    cocked: bool = False
    confidence: float = 1.0

    def __post_init__(self) -> None:
        if self.value is not None and (isinstance(self.value, bool) or self.value not in range(1, 7)):
            raise ValueError(f"value: {self.value!r}: expected 1..6 or None")
        if len(self.box) != 4 or self.box[2] < 0 or self.box[3] < 0:
            raise ValueError(f"box: {self.box!r}: expected (x, y, w, h) with w, h >= 0")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence: {self.confidence!r}: expected 0..1")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: value, box, centre, cocked, confidence."""
        return {
            "value": None if self.value is None else int(self.value),
            "box": [int(v) for v in self.box],
            "centre": [round(float(self.centre[0]), 2), round(float(self.centre[1]), 2)],
            "cocked": bool(self.cocked),
            "confidence": round(float(self.confidence), 3),
        }


# Pip layouts in units of the pip offset from the face centre (0.27 of the side on common dice).
_LAYOUTS = {
    1: np.array([(0, 0)], float),
    2: np.array([(-1, -1), (1, 1)], float),
    3: np.array([(-1, -1), (0, 0), (1, 1)], float),
    4: np.array([(-1, -1), (1, -1), (-1, 1), (1, 1)], float),
    5: np.array([(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)], float),
    6: np.array([(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)], float),
}
_PIP_OFFSET = 0.27  # pip offset / face side on the dice this reads


@dataclass(slots=True)
class _Pip:
    x: float
    y: float
    d: float  # equivalent diameter, px
    aspect: float
    polarity: int  # 0 dark pip, 1 light pip
    contrast: float
    fill: float = 1.0
    ring: float = 0.0  # spread of grey levels just around the pip (a pip sits on a uniform face)


@dataclass(slots=True)
class _Bar:
    """A blob too long for a pip: maybe a column of pips run together (a leaning six)."""

    x: float
    y: float
    length: float  # the full axes of the ellipse of its moments, px
    width: float
    angle: float  # of its long axis, radians
    polarity: int
    contrast: float


def read_dice(
    config: VisionConfig | None,
    image: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    die_px: float | None = None,
    plane: np.ndarray | None = None,
    reader: str | None = None,
) -> list[DieReading]:
    """All dice in a BGR image (only where ``mask`` is nonzero, if given), sorted left to right.

    ``reader`` is "learned" (:mod:`vision.learned_dice`), "classical" (the pip reader described
    here) or "verified" (the network's dice that score ``learned_sure_score`` or that the classical
    reader also sees, flagged cocked where it flags them); None takes the config's ``photo_reader``
    without ``die_px`` and ``board_reader`` with it. The learned reader alone flags no die cocked.

    ``die_px`` is the side of a die in image px where it is known (a calibrated board):
    the pips are then measured on that scale (a copy scaled to ``die_target_px`` a die when
    dice are much larger or smaller, only the mask's box of it), and a die must be about that size. Without
    it the scale comes from the image's size (``kernel_frac``, ``pip_max_frac``). ``plane``
    (with ``die_px`` only) is a 3 x 3 homography from the image's px to the surface the dice
    lie on seen from above (a calibrated board's mm): a four's, five's or six's layout is then
    judged for a leaning die's squash there (``cocked_max_aspect_on_plane``), the camera's
    tilt taken out, rather than in the image (``cocked_max_aspect``). A fixed camera's
    frames are read the same way, with the mask's box and scale worked out once, by
    :func:`dice_field` and :func:`read_dice_in` (``plane`` given to the latter).

    Raises :class:`DiceImageError` for an empty or non-BGR image or a mask of another size,
    ValueError for a ``die_px`` that is not a positive number or a ``plane`` that is not a
    finite 3 x 3 matrix, or is given without ``die_px``.
    """
    cfg = config or default_config()
    _check_image(image)
    h, w = image.shape[:2]
    reader = _reader(cfg, reader, die_px)
    plane = _plane(plane, die_px)
    if die_px is not None:
        field = dice_field(cfg, (h, w), mask, die_px=die_px)
        return [] if field is None else read_dice_in(cfg, image, field, plane=plane, reader=reader)
    if mask is not None:
        mask = _mask01(mask, (h, w))
    return _by_reader(cfg, reader, lambda: _read_learned(cfg, image, mask, None), lambda: _read_photo(cfg, image, mask))


def _read_photo(cfg: VisionConfig, image: np.ndarray, mask: np.ndarray | None) -> list[DieReading]:
    """The classical reader on an image of unknown scale (``mask`` 0/1 or None), shrunk first where it is large."""
    h, w = image.shape[:2]
    scale = 1.0
    work = image
    if max(h, w) > cfg.dice_max_side_px:
        scale = cfg.dice_max_side_px / max(h, w)
        work = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
        if mask is not None:
            mask = cv2.resize(mask, (work.shape[1], work.shape[0]), interpolation=cv2.INTER_NEAREST)
    readings = _read(cfg, work, mask)
    if scale != 1.0:
        readings = [_rescale(r, 1 / scale) for r in readings]
    return sorted(readings, key=lambda r: (r.centre[0], r.centre[1]))


def _reader(cfg: VisionConfig, reader: str | None, die_px: float | None) -> str:
    if reader is None:
        return cfg.photo_dice_reader if die_px is None else cfg.board_dice_reader
    if reader not in DICE_READERS:
        raise ValueError(f"reader: {reader!r}: expected one of {', '.join(DICE_READERS)}")
    return reader


def _by_reader(cfg: VisionConfig, reader: str, learned, classical) -> list[DieReading]:
    """The readings of ``reader`` ("learned", "classical" or "verified"), from the callables that run
    each reader: only those it needs are run."""
    if reader == "classical":
        return classical()
    found = learned()
    return found if reader == "learned" else _verified(cfg, found, classical())


def _read_learned(
    cfg: VisionConfig, image: np.ndarray, mask: np.ndarray | None, die_px: float | None
) -> list[DieReading]:
    """The dice :mod:`vision.learned_dice`'s network finds (``mask`` 0/1 or None; ``die_px`` a checked
    die's side or None), as readings never flagged cocked."""
    out = []
    for f in learned_dice.find_dice(image, die_px=die_px, mask=mask, min_score=cfg.learned_min_score):
        s = f.side if die_px is None else float(die_px)
        box = (round(f.centre[0] - s / 2), round(f.centre[1] - s / 2), max(1, round(s)), max(1, round(s)))
        out.append(DieReading(f.value, box, f.centre, False, round(f.score, 3)))
    return out


def _verified(cfg: VisionConfig, learned: list[DieReading], classical: list[DieReading]) -> list[DieReading]:
    """The network's dice that score ``learned_sure_score`` or that the classical reader also sees
    (within half a die), with its cocked flag where it sees them."""
    out = []
    for r in learned:
        near = [
            c
            for c in classical
            if math.hypot(r.centre[0] - c.centre[0], r.centre[1] - c.centre[1]) <= 0.5 * max(r.box[2], 8)
        ]
        if near or r.confidence >= cfg.learned_sure_score:
            cocked = any(c.cocked for c in near)
            out.append(DieReading(r.value, r.box, r.centre, cocked, r.confidence))
    return out


def _check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
        shape = getattr(image, "shape", None)
        raise DiceImageError(f"image: shape {shape!r}: expected a non-empty BGR image (H x W x 3)")
    if image.dtype != np.uint8:
        raise DiceImageError(f"image: dtype {image.dtype!r}: expected uint8")


def _plane(plane: np.ndarray | None, die_px: float | None) -> np.ndarray | None:
    """``plane`` as a float 3 x 3 homography (None stays None). Raises ValueError for one that is
    not a finite 3 x 3 matrix, or is given without a die's size."""
    if plane is None:
        return None
    plane = np.asarray(plane, dtype=np.float64)
    if die_px is None or plane.shape != (3, 3) or not np.isfinite(plane).all():
        raise ValueError(f"plane: expected a finite 3 x 3 homography, with die_px (shape {plane.shape!r})")
    return plane


def _mask01(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A mask of an image of ``shape`` (height, width) as 0/1 px. Raises :class:`DiceImageError` for one of another size."""
    h, w = shape
    if not isinstance(mask, np.ndarray) or mask.shape[:2] != (h, w):
        raise DiceImageError(f"mask: shape {getattr(mask, 'shape', None)!r}: expected {(h, w)!r}")
    return (mask.reshape(h, w, -1)[..., 0] != 0).astype(np.uint8)


@dataclass(frozen=True, slots=True)
class DiceField:
    """Where the dice of a fixed camera's frames are read, worked out once by :func:`dice_field`:
    the frame's ``(height, width)``, the ``box`` ``(x0, y0, x1, y1)`` of it that is read (the mask's
    box and a die's margin), the ``scale`` it is read at and the box's ``size`` (width, height) at
    that scale, the ``mask`` over the scaled box (0/1, read-only; None: all of it) and a die's side
    ``die`` in scaled px."""

    frame: tuple[int, int]
    box: tuple[int, int, int, int]
    scale: float
    size: tuple[int, int]
    mask: np.ndarray | None
    die: float


def dice_field(
    config: VisionConfig | None, shape: tuple[int, int], mask: np.ndarray | None = None, *, die_px: float
) -> DiceField | None:
    """Where :func:`read_dice` with ``die_px`` reads the dice of an image of ``shape`` (height, width):
    the mask's box (the whole image without one), scaled so that a die is ``die_target_px`` across if it
    is larger than ``die_max_px`` or smaller than ``die_min_px`` (a small die's pips are a few px: too
    few to tell a pip from noise). None where the mask is empty (no die can be found).

    Raises :class:`DiceImageError` for a mask of another size, ValueError for a ``die_px`` that is
    not a positive number.
    """
    cfg = config or default_config()
    h, w = (int(v) for v in shape[:2])
    if mask is not None:
        mask = _mask01(mask, (h, w))
    if isinstance(die_px, bool) or not isinstance(die_px, (int, float)) or not math.isfinite(die_px) or die_px <= 0:
        raise ValueError(f"die_px: {die_px!r}: expected a positive number of px")
    die_px = float(die_px)
    x0, y0, x1, y1 = 0, 0, w, h
    if mask is not None:
        bx, by, bw, bh = cv2.boundingRect(mask)  # of its nonzero px
        if bw == 0 or bh == 0:
            return None
        m = int(math.ceil(die_px))
        x0, y0, x1, y1 = max(0, bx - m), max(0, by - m), min(w, bx + bw + m), min(h, by + bh + m)
        mask = mask[y0:y1, x0:x1]
    scale = 1.0
    size = (x1 - x0, y1 - y0)
    if not cfg.dice_die_min_px <= die_px <= cfg.dice_die_max_px:
        scale = cfg.dice_die_target_px / die_px
        size = (max(1, round(size[0] * scale)), max(1, round(size[1] * scale)))
        if mask is not None:
            mask = cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST)
    if mask is not None:
        mask = np.ascontiguousarray(mask)
        mask.setflags(write=False)
    return DiceField((h, w), (x0, y0, x1, y1), scale, size, mask, die_px * scale)


def read_dice_in(
    config: VisionConfig | None,
    image: np.ndarray,
    field: DiceField,
    *,
    plane: np.ndarray | None = None,
    reader: str | None = None,
) -> list[DieReading]:
    """All dice in a BGR image within its :func:`dice_field`, sorted left to right (readings in the image's px):
    as :func:`read_dice` with that field's mask and ``die_px`` (and ``plane``, the image's px to the dice's surface);
    ``reader`` as there (None: the config's ``board_reader``).

    Raises :class:`DiceImageError` for an empty or non-BGR image or one of another size than the field's,
    ValueError for a ``plane`` that is not a finite 3 x 3 matrix or an unknown ``reader``.
    """
    cfg = config or default_config()
    _check_image(image)
    if image.shape[:2] != field.frame:
        raise DiceImageError(f"image: shape {image.shape!r}: expected {field.frame!r} px, the field's frame")
    reader = _reader(cfg, reader, field.die)
    plane = _plane(plane, field.die)
    return _by_reader(
        cfg,
        reader,
        lambda: _read_learned(cfg, image, _frame_mask(field), field.die / field.scale),
        lambda: _read_field(cfg, image, field, plane),
    )


def _frame_mask(field: DiceField) -> np.ndarray | None:
    """The field's mask (0/1) over the whole frame, or None where it has none."""
    if field.mask is None:
        return None
    x0, y0, x1, y1 = field.box
    mask = np.zeros(field.frame, np.uint8)
    mask[y0:y1, x0:x1] = cv2.resize(field.mask, (x1 - x0, y1 - y0), interpolation=cv2.INTER_NEAREST)
    return mask


def _read_field(cfg: VisionConfig, image: np.ndarray, field: DiceField, plane: np.ndarray | None) -> list[DieReading]:
    """The classical reader within a :func:`dice_field` (``plane`` checked, from the image's px)."""
    x0, y0, x1, y1 = field.box
    work = image[y0:y1, x0:x1]
    scale = field.scale
    if scale != 1.0:
        work = cv2.resize(work, field.size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    if plane is not None:  # from the scaled box's px
        plane = plane @ np.array([[1 / scale, 0, x0], [0, 1 / scale, y0], [0, 0, 1.0]])
    readings = _read(cfg, work, field.mask, field.die, plane)
    out = []
    for r in readings:
        if scale != 1.0:
            r = _rescale(r, 1 / scale)
        x, y, bw, bh = r.box
        out.append(
            DieReading(r.value, (x + x0, y + y0, bw, bh), (r.centre[0] + x0, r.centre[1] + y0), r.cocked, r.confidence)
        )
    return sorted(out, key=lambda r: (r.centre[0], r.centre[1]))


def _rescale(r: DieReading, k: float) -> DieReading:
    x, y, bw, bh = r.box
    return DieReading(
        r.value,
        (round(x * k), round(y * k), round(bw * k), round(bh * k)),
        (r.centre[0] * k, r.centre[1] * k),
        r.cocked,
        r.confidence,
    )


def _read(
    cfg: VisionConfig,
    image: np.ndarray,
    mask: np.ndarray | None,
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list[DieReading]:
    """The dice of an image; ``die`` is a die's side in its px where known (None: sizes from the image's);
    ``plane`` maps its px to the plane the dice lie on, seen from above, where known."""
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
    pips: list[_Pip] = []
    labels_all = []
    bars: list[_Bar] | None = [] if die is not None else None
    for polarity, c in enumerate(contrast):
        found, labels = _find_pips(cfg, c, polarity, mask, max_d, die, bars)
        pips.extend(found)
        labels_all.append(labels)
    marks = labels_all[0] | labels_all[1]
    for p, ring in zip(pips, _ring_spreads(gray, marks, pips, die)):
        p.ring = ring
    groups = _group(cfg, pips, gray, labels_all)
    scored = []
    for g in groups:
        scored.extend(_readings(cfg, image, gray, marks, contrast, [pips[i] for i in g], die, plane))
    scored = _merge_halves(cfg, image, gray, marks, contrast, scored, die, plane)
    # one die, one reading: where two overlap (e.g. the light gaps between dark pips), keep the stronger
    scored.sort(key=lambda t: -t[1])
    readings: list[DieReading] = []
    for r, _, _ in scored:
        if all(_overlap(r, q) < 0.3 for q in readings):
            readings.append(r)
    if bars:
        readings += _run_together_sixes(cfg, gray, bars, readings, die)
    return readings


def _merge_halves(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    scored: list,
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """Two overlapping readings of one kind of pip may be the halves of one die (a six's two
    rows, not linked across its face): where their pips together show one die, keep that."""
    scored = list(scored)
    again = True
    while again:
        again = False
        for i, j in combinations(range(len(scored)), 2):
            (ra, _, pa), (rb, _, pb) = scored[i], scored[j]
            if pa[0].polarity != pb[0].polarity or len(pa) + len(pb) > 6 or _overlap(ra, rb) < 0.3:
                continue
            r, _ = _reading_of(cfg, image, gray, marks, contrast, pa + pb, die, plane)
            if r is not None and r[0].value == len(pa) + len(pb):
                scored[i] = r
                del scored[j]
                again = True
                break
    return scored


def _overlap(a: DieReading, b: DieReading) -> float:
    """Intersection over the smaller box."""
    ax, ay, aw, ah = a.box
    bx, by, bw, bh = b.box
    iw = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    ih = max(0, min(ay + ah, by + bh) - max(ay, by))
    return iw * ih / max(1, min(aw * ah, bw * bh))


def _find_pips(
    cfg: VisionConfig,
    c: np.ndarray,
    polarity: int,
    mask: np.ndarray | None,
    max_d: float,
    die: float | None = None,
    bars: list[_Bar] | None = None,
) -> tuple[list[_Pip], np.ndarray]:
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
    pips: list[_Pip] = []
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
                bars.append(_Bar(x0 + m["m10"] / a, y0 + m["m01"] / a, length, width, angle, polarity, peak))
        cut = (crop & (sub >= (cfg.dice_pip_peak_frac + cfg.dice_pip_cut_step * depth) * peak)).view(np.uint8)
        k, sl, sst, _ = cv2.connectedComponentsWithStats(cut, connectivity=4)
        # one solid peak (not a die body with its own pips in it, not a rim around a hole)
        solid = k == 2 and sst[1, cv2.CC_STAT_AREA] >= cfg.dice_pip_min_core * a
        if solid and shaped:
            marks[y0 : y0 + hh, x0 : x0 + ww][crop] = 1
            pips.append(_Pip(x0 + m["m10"] / a, y0 + m["m01"] / a, diameter, aspect, polarity, peak, fill))
            continue
        if depth >= cfg.dice_pip_cuts:
            continue
        for j in range(1, k):
            x, y, w2, h2 = (int(v) for v in sst[j, :4])
            queue.append((sl[y : y + h2, x : x + w2] == j, x0 + x, y0 + y, depth + 1))
    return pips, marks


def _run_together_sixes(
    cfg: VisionConfig, gray: np.ndarray, bars: list[_Bar], readings: list[DieReading], die: float
) -> list[DieReading]:
    """Where a die's size is known: dice whose pips run together in two parallel bars on a uniform face, a six's
    two columns, where no die was read. A leaning six's face is seen squashed and its three pips a column
    blur into one; its value is not trusted, so it is flagged cocked (thrown again), not left unseen. Bars
    as long and as far apart as a flat six's columns (its face squashed neither way) are a flat six."""
    out: list[DieReading] = []
    seen = [r.centre for r in readings]
    for a, b in combinations(bars, 2):
        if a.polarity != b.polarity or max(a.length, b.length) > cfg.dice_bar_max_length_ratio * min(
            a.length, b.length
        ):
            continue
        if max(a.contrast, b.contrast) > cfg.dice_link_max_contrast_ratio * min(a.contrast, b.contrast):
            continue
        turn = abs((a.angle - b.angle + math.pi / 2) % math.pi - math.pi / 2)
        if turn > math.radians(cfg.dice_bar_max_turn_deg):
            continue
        mean = (
            math.atan2(math.sin(2 * a.angle) + math.sin(2 * b.angle), math.cos(2 * a.angle) + math.cos(2 * b.angle)) / 2
        )
        ux, uy = math.cos(mean), math.sin(mean)
        vx, vy = b.x - a.x, b.y - a.y
        along, across = abs(vx * ux + vy * uy), abs(vx * uy - vy * ux)
        if (
            along > cfg.dice_bar_max_shift * (a.length + b.length) / 2
            or not cfg.dice_bar_min_gap_per_die * die <= across <= cfg.dice_bar_max_gap_per_die * die
        ):
            continue
        cx, cy = (a.x + b.x) / 2, (a.y + b.y) / 2
        if any(math.hypot(cx - x, cy - y) < 0.5 * die for x, y in seen):
            continue
        # the face between the columns (a six's has no pip) is uniform, and the bars stand out from it
        h, w = gray.shape
        reach = cfg.dice_bar_mid_reach * (a.length + b.length) / 2 * _BAR_MID_STEPS
        xs = np.rint(cx + reach * ux).astype(int).clip(0, w - 1)
        ys = np.rint(cy + reach * uy).astype(int).clip(0, h - 1)
        mid = gray[ys, xs].astype(np.float64)
        if mid.max() - mid.min() > cfg.dice_face_max_spread:
            continue
        if not _stand_out(cfg, gray, float(np.median(mid)), (a, b)):
            continue
        box = (int(round(cx - die / 2)), int(round(cy - die / 2)), int(round(die)), int(round(die)))
        length = (a.length + b.length) / 2
        flat = (
            length >= cfg.dice_bar_flat_min_per_die * die
            and across >= cfg.dice_bar_flat_min_gap_per_die * die
            and length >= cfg.dice_bar_flat_min_ratio * across
        )
        out.append(DieReading(6, box, (float(cx), float(cy)), not flat, 0.5))
        seen.append((cx, cy))
    return out


_BAR_MID_STEPS = np.linspace(
    -1.0, 1.0, 9
)  # where the face between two bars is looked at, as fractions of bar_mid_reach


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


def _ring_spreads(gray: np.ndarray, marks: np.ndarray, pips: list[_Pip], die: float | None = None) -> list[float]:
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
            r = min(r, max(p.d / 2 + 1.0, (p.d / 2 + die * (0.5 - _PIP_OFFSET)) / 2))
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
            out.append(float(_percentile_sorted(row[:k_free], 90) - _percentile_sorted(row[:k_free], 10)))
    return out


_RING_ANGLES = np.linspace(0, 2 * np.pi, 24, endpoint=False)
_RING_COS, _RING_SIN = np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)


def _median_of(values) -> float:
    """``np.median`` of a few numbers (the mean of the two middle ones of an even count), without
    numpy's general path (some ten times slower on a few values)."""
    s = sorted(float(v) for v in values)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def _percentile_sorted(v: np.ndarray, q: float) -> np.floating:
    """``np.percentile(v, q)`` (linear interpolation) of a sorted 1-D float array, worked out as
    numpy does for one percentile, in the array's own precision, without its general path (some
    fifty times slower on a few values)."""
    at = (len(v) - 1) * (q / 100)
    below = min(max(int(math.floor(at)), 0), len(v) - 1)
    above = min(below + 1, len(v) - 1)
    t = at - below
    a, b = v[below], v[above]
    d = b - a
    return b - d * v.dtype.type(1 - t) if t >= 0.5 else a + d * v.dtype.type(t)


def _group(cfg: VisionConfig, pips: list[_Pip], gray: np.ndarray, labels_all) -> list[list[int]]:
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


def _valid(cfg: VisionConfig, group: list[_Pip]):
    """(value, error, map) if the pips show a die layout with die-like spacing, else None."""
    pts = np.array([(p.x, p.y) for p in group])
    value, err, A = _fit_layout(pts)
    if value is None or err > cfg.dice_pattern_max_error:
        return None
    if A is not None:
        d = _median_of([p.d for p in group])
        sv = np.linalg.svd(A, compute_uv=False)
        offset = float(math.sqrt(sv[0] * sv[1])) if len(group) >= 4 else float(sv[0])
        if not cfg.dice_spacing_min_diameters <= 2 * offset / d <= cfg.dice_spacing_max_diameters:
            return None
    return value, err, A


def _least_pip(group: list[_Pip]) -> int:
    """Index of the pip least like the others of its group: flattest, smallest, faintest."""
    med_d = _median_of([p.d for p in group])
    med_c = _median_of([p.contrast for p in group])
    return min(
        range(len(group)),
        key=lambda i: group[i].aspect * min(1.0, group[i].d / med_d) * min(1.0, group[i].contrast / med_c),
    )


def _best_subset(cfg: VisionConfig, group: list[_Pip]):
    """The group, or the largest part of it that shows a die layout (side-face pips dropped)."""
    group = list(group)
    while len(group) > 6:  # too many: drop the least face-on pip (flattest, smallest, faintest)
        group.pop(_least_pip(group))
    while group:
        fit = _valid(cfg, group)
        if fit is not None:
            return group, fit
        if len(group) <= 1:
            return None
        best = None
        for i in range(len(group)):
            rest = group[:i] + group[i + 1 :]
            f = _valid(cfg, rest) if len(rest) > 1 else None
            if f is not None and (best is None or f[1] < best[1][1]):
                best = (rest, f)
        if best is not None:
            return best
        group.pop(_least_pip(group))
    return None


def _split(group: list[_Pip], ratio: float) -> tuple[list[_Pip], list[_Pip]] | None:
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
    if longest[0] < ratio * _median_of([e[0] for e in edges[:-1]]):
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


def _readings(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[_Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """The dice a group of linked pips shows (touching dice, side faces), each with a score to rank overlaps.

    Two readings are weighed: the group as it is (see :func:`_readings_whole`) and,
    if it shows no layout as a whole, the group cut in two at its longest link
    (two touching dice); the one that explains more pips wins.
    """
    whole = _readings_whole(cfg, image, gray, marks, contrast, group, die, plane)
    if len(group) >= 3 and _valid(cfg, group) is None:
        parts = _split(group, cfg.dice_split_ratio)
        if parts is not None:
            split = _readings(cfg, image, gray, marks, contrast, parts[0], die, plane) + _readings(
                cfg, image, gray, marks, contrast, parts[1], die, plane
            )
            # keep whichever explains more pips (then: fewer dice)
            if (sum(len(r[2]) for r in split), -len(split)) > (sum(len(r[2]) for r in whole), -len(whole)):
                return split
    return whole


def _readings_whole(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[_Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """The best layout in the group first, then what is left of it (a side face's pips,
    another die); a group that shows no die is tried again without the one pip that is
    not on a uniform face (a shadow's corner, a gap between checkers), or without all such
    pips where a die's size is known."""
    out = []
    rest = list(group)
    for _ in range(4):
        if not rest:
            break
        r, used = _reading_of(cfg, image, gray, marks, contrast, rest, die, plane)
        if not used:
            break
        if r is not None:
            out.append(r)
        rest = [p for p in rest if p not in used]
    if not out:
        # where a die's size is known, any number of such pips (light flecks of the board beside a
        # light-pipped die) may go; in a photo, only one (more cost right readings on development photos)
        clean = [p for p in group if p.ring <= cfg.dice_pip_ring_max_spread]
        if clean and (len(clean) == len(group) - 1 or (die is not None and len(clean) < len(group))):
            r, _ = _reading_of(cfg, image, gray, marks, contrast, clean, die, plane)
            if r is not None:
                out.append(r)
    return out


def _reading_of(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[_Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
):
    """(reading and score, or None; the pips it used, empty if no layout was found)."""
    found = _best_subset(cfg, group)
    if found is None:
        return None, []
    group, (value, err, A) = found
    if _median_of([p.ring for p in group]) > cfg.dice_pip_ring_max_spread and (die is None or len(group) < 4):
        # pips that do not sit on a uniform face; four or more in a die's layout at a die's known size
        # vouch for each other (packed small pips' halos reach the ring), and the face is checked below
        return None, group
    n = len(group)
    pts = np.array([(p.x, p.y) for p in group])
    d = _median_of([p.d for p in group])
    cx, cy = pts.mean(0)
    c = contrast[group[0].polarity]
    cocked = False
    if n <= 2:  # one or two pips have (next to) no layout to vouch for them: they must be round and solid
        flat = [p for p in group if p.aspect < cfg.dice_single_min_aspect or p.fill < cfg.dice_single_min_fill]
        if flat:
            return None, flat  # a side face's pip beside a lone one: the other is tried alone
    if n == 1:
        if not _ring_clear(
            max(cfg.dice_single_ring_max_contrast, cfg.dice_gap_peak_frac * group[0].contrast), c, cx, cy, d
        ):
            return None, group
        offset = None
    else:
        sv = np.linalg.svd(A, compute_uv=False)
        offset = float(math.sqrt(sv[0] * sv[1])) if n >= 4 else float(sv[0])
        if n >= 4:  # a leaning die's top face is seen foreshortened
            squash = sv[1] / sv[0] if plane is None else _aspect_on_plane(plane, A, cx, cy)
            cocked = squash < (cfg.dice_cocked_max_aspect if plane is None else cfg.dice_cocked_max_aspect_on_plane)
    side = offset / _PIP_OFFSET if offset else (d * cfg.dice_face_per_pip if die is None else die)
    if cocked and n >= 4:  # a leaning face is foreshortened across its tilt only: its side is along the other axis
        side = float(sv[0]) / _PIP_OFFSET
    side = max(side, d * 2.5)
    narrow = side if n < 4 else side * float(sv[1] / sv[0])  # a cocked die's face is foreshortened
    if n == 1:  # a ring of face around a lone pip, inside the face of a die of known size however it is turned
        outer = 1.7 * d if die is None else max(1.3 * d, min(1.7 * d, cfg.dice_single_face_per_die * die))
        spread, level = _face_spread(gray, marks, cx, cy, outer, d, cfg.dice_face_halo_per_pip, 1.1 * d)
        if spread > cfg.dice_face_max_spread and die is not None:
            # a leaning one: its top face, squashed along its tilt, ends both ways along it, and its side shows
            half, half_level = _across_face_spread(gray, marks, cx, cy, outer, d, cfg.dice_face_halo_per_pip, 1.1 * d)
            if (
                half <= cfg.dice_face_max_spread
                and _side_run(cfg, image, marks, cx, cy, die, d) >= cfg.dice_side_min_run
            ):
                spread, level, cocked = half, half_level, True
    else:
        spread, level = _face_spread(gray, marks, cx, cy, cfg.dice_face_radius * narrow, d, cfg.dice_face_halo_per_pip)
    if spread > cfg.dice_face_max_spread:
        return None, group  # the pips are not on one uniform face
    if not _stand_out(cfg, gray, level, group):
        return None, group  # the pips do not stand out from this face (they stand out from something else)
    if not cocked:
        if die is None:
            cocked = _side_face_shows(cfg, image, marks, cx, cy, side, d)
        else:
            cocked = _side_run(cfg, image, marks, cx, cy, die, d) >= cfg.dice_side_min_run
    if die is not None and value in (2, 4) and not cocked:
        completed, centre = _completed(cfg, value, A, pts, c, d, _median_of([p.contrast for p in group]), die)
        if (completed, value) == (4, 2):  # a four's side: the die is centred beside it, a side's span across
            cx, cy = float(centre[0]), float(centre[1])
            side = max(float(np.linalg.norm(pts[1] - pts[0])) / (2 * _PIP_OFFSET), d * 2.5)
        value = completed
    if n == 2 and die is not None and not cocked and max(p.ring for p in group) > cfg.dice_pip_ring_max_spread:
        # a flat two's pips both sit on its face: one that does not (a fleck of a checker beside a one's
        # pip) is no pip of it; a leaning two's may, beside its side face
        return None, group
    box = (int(round(cx - side / 2)), int(round(cy - side / 2)), int(round(side)), int(round(side)))
    conf = max(0.05, min(1.0, 1.0 - err))
    score = float(np.mean([p.contrast * p.fill for p in group])) * (1 + 0.1 * n)
    return (DieReading(value, box, (float(cx), float(cy)), cocked, conf), score, group), group


def _stand_out(cfg: VisionConfig, gray: np.ndarray, level: float, marks) -> bool:
    """Whether marks of one polarity (pips or bars: ``x``, ``y``, ``polarity``, ``contrast``) stand out
    from a face of grey ``level`` by face_min_contrast_frac of their median contrast, darker than it
    for dark marks, lighter for light ones: the grey at their centres, their median, against it."""
    h, w = gray.shape
    mark_level = _median_of([gray[min(h - 1, int(round(m.y))), min(w - 1, int(round(m.x)))] for m in marks])
    against = (level - mark_level) if marks[0].polarity == 0 else (mark_level - level)
    return against >= cfg.dice_face_min_contrast_frac * _median_of([m.contrast for m in marks])


def _completed(
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


def _aspect_on_plane(plane: np.ndarray, A: np.ndarray, x: float, y: float) -> float:
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


def _face_spread(
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
    return float(_percentile_sorted(v, 90) - _percentile_sorted(v, 10)), float(median)


def _across_face_spread(
    gray: np.ndarray, marks: np.ndarray, x: float, y: float, r: float, d: float, halo_per_pip: float, r_in: float
) -> tuple[float, float]:
    """As :func:`_face_spread` on a ring round (x, y), but on two opposite quarters of it (eight ways
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


def _side_face_shows(
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


def _side_run(cfg: VisionConfig, image: np.ndarray, marks: np.ndarray, x: float, y: float, die: float, d: float) -> int:
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


_RUN_ANGLES = np.linspace(0, 2 * np.pi, 32, endpoint=False)  # the directions :func:`_side_run` looks in
_RUN_COS, _RUN_SIN = np.cos(_RUN_ANGLES), np.sin(_RUN_ANGLES)


def _ring_clear(limit: float, c: np.ndarray, x: float, y: float, d: float) -> bool:
    """A lone pip must sit on a uniform face: nothing contrasting in a ring around it."""
    h, w = c.shape
    for r in (1.0 * d, 1.4 * d):
        for a in np.linspace(0, 2 * math.pi, 16, endpoint=False):
            xi, yi = int(round(x + r * math.cos(a))), int(round(y + r * math.sin(a)))
            if not (0 <= xi < w and 0 <= yi < h) or c[yi, xi] > limit:
                return False
    return True
