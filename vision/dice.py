"""Dice in a camera image: find every die, read its top face, flag cocked dice.

Owns :func:`read_dice`, :func:`dice_field` and :func:`read_dice_in` (any BGR image, with or
without a board; a fixed camera's frames with their field worked out once), the choice of reader
(``learned``: :mod:`vision.learned_dice`, which flags no die cocked; ``classical``: candidates of
:mod:`vision.dice_find` read by :mod:`vision.dice_read`; ``verified``: the network's dice that
score ``learned_sure_score`` or that the classical reader also sees, flagged cocked where it flags
them) and :class:`DiceImageError`. May import ``board_rules``; must not import ``firmware_bridge``
or ``referee``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision import learned_dice
from vision.config import DICE_READERS, VisionConfig, default_config
from vision.dice_find import find_candidates
from vision.dice_read import DieReading, read_faces


class DiceImageError(TavliError, ValueError):
    """An image (or mask) that the dice reader cannot work on: empty, not BGR, or a mask of another size."""


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

    ``reader``: ``learned``, ``classical`` or ``verified`` (see the module); None takes the config's
    ``photo_reader``, or ``board_reader`` with ``die_px``: a die's side in image px where known (a
    calibrated board), the scale it is read at, a die about that size. ``plane`` (with ``die_px``)
    maps the image's px to the dice's surface seen from above, where a leaning die is judged.

    Raises :class:`DiceImageError` for an empty or non-BGR image or a mask of another size,
    ValueError for a bad ``die_px`` or ``plane`` (or one without ``die_px``), or an unknown reader.
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
    return _by_reader(
        cfg,
        reader,
        lambda score, _near: _read_learned(cfg, image, mask, None, score),
        lambda: _read_photo(cfg, image, mask),
    )


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
    readings = _classical(cfg, work, mask)
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
    each reader (``learned`` given the least score for a die and the places the classical reader saw
    dice, which the network reads closely too): only those it needs are run. The network's dice alone
    need ``learned_alone_score``; those the classical reader may verify, ``learned_min_score``."""
    if reader == "classical":
        return classical()
    if reader == "learned":
        return learned(cfg.learned_alone_score, ())
    seen = classical()
    return _verified(cfg, learned(cfg.learned_min_score, [r.centre for r in seen]), seen)


def _read_learned(
    cfg: VisionConfig,
    image: np.ndarray,
    mask: np.ndarray | None,
    die_px: float | None,
    min_score: float,
    near: Sequence[tuple[float, float]] = (),
) -> list[DieReading]:
    """The dice :mod:`vision.learned_dice`'s network finds (``mask`` 0/1 or None; ``die_px`` a checked
    die's side or None; ``near``: places to read closely, see :func:`vision.learned_dice.find_dice`),
    as readings never flagged cocked."""
    out = []
    for f in learned_dice.find_dice(image, die_px=die_px, mask=mask, min_score=min_score, near=near):
        s = f.side if die_px is None else float(die_px)
        box = (round(f.centre[0] - s / 2), round(f.centre[1] - s / 2), max(1, round(s)), max(1, round(s)))
        out.append(DieReading(f.value, box, f.centre, False, round(f.score, 3)))
    return out


def _verified(cfg: VisionConfig, learned: list[DieReading], classical: list[DieReading]) -> list[DieReading]:
    """The network's dice that score ``learned_sure_score`` (the network's score or, for a die it read
    weakly, its face classifier's) or that the classical reader also sees (within half a die), flagged
    cocked where the classical reader flags them and neither network is sure of the face: a flat die
    a real camera sees a little from the side (a photo's perspective) shows a side to the classical
    reader's test while its top reads plainly."""
    out = []
    for r in learned:
        near = [
            c
            for c in classical
            if math.hypot(r.centre[0] - c.centre[0], r.centre[1] - c.centre[1]) <= 0.5 * max(r.box[2], 8)
        ]
        if near or r.confidence >= cfg.learned_sure_score:
            cocked = any(c.cocked for c in near) and r.confidence < cfg.learned_sure_score
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
        lambda score, near: _read_learned(cfg, image, _frame_mask(field), field.die / field.scale, score, near),
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
    readings = _classical(cfg, work, field.mask, field.die, plane)
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


def _classical(
    cfg: VisionConfig,
    image: np.ndarray,
    mask: np.ndarray | None,
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list[DieReading]:
    """The classical reader on an image: its candidates found, then read (see :func:`vision.dice_read.read_faces`)."""
    return read_faces(cfg, image, find_candidates(cfg, image, mask, die), die, plane)
