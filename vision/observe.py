"""Observations: everything the camera reads from one frame, and whether to trust it.

Owns :class:`Observation` (the JSON ``tavli-observation/1``), :func:`read_frame` (one frame's
stages in order: view, dice, checkers, cube and bar, gate) and :class:`Pipeline` (a camera's
frames in order: motion and the stability gate). An observation is not a rules ``Position``: it
carries counts (white's numbering, ``position-json.md``'s signs), dice and cube with confidences;
an occluded frame or a lost board carries no counts at all. May import ``board_rules`` types;
must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision.calibrate import CalibrationError, Geometry, check
from vision.checkers import HOME_BOARDS, CheckerReading, FieldReading, Palette, off_board, read_field, trays_told
from vision.config import VisionConfig, default_config
from vision.cube import BarReading, CubeReading, read_bar
from vision.dice import DiceField, dice_field, read_dice_in
from vision.find_board import BoardNotFoundError, find_field
from vision.gate import (
    STATUSES,
    Gate,
    Occlusion,
    changed_px,
    checker_covers,
    hands,
    learned_samples,
    occlusion,
    small_grey,
    static_samples,
)
from vision.learned_checkers import checker_reader, learned_field, slot_places
from vision.rectify import prepare
from vision.rims import as_rendered
from vision.view import View, view

FORMAT = "tavli-observation/1"


@dataclass(frozen=True, slots=True)
class DieObservation:
    """A die seen on the table: value (None if unreadable or cocked), where, and how sure."""

    value: int | None
    centre: tuple[float, float]  # image px
    centre_mm: tuple[float, float]
    half: str | None  # "left" / "right" half of the playing field as white sees it; None off the field
    cocked: bool
    confidence: float
    box: tuple[int, int, int, int]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (Python numbers and bools, whatever types the reader handed over)."""
        return {
            "value": None if self.value is None else int(self.value),
            "centre": [round(float(self.centre[0]), 1), round(float(self.centre[1]), 1)],
            "centre_mm": [round(float(self.centre_mm[0]), 1), round(float(self.centre_mm[1]), 1)],
            "half": self.half,
            "cocked": bool(self.cocked),
            "confidence": round(float(self.confidence), 3),
            "box": [int(v) for v in self.box],
        }


def _round3(v: float) -> float:
    """A confidence as a Python float to 3 places (a numpy float32 is no JSON number)."""
    return round(float(v), 3)


def none_first(values: tuple) -> tuple:
    """A sort key for tuples whose fields may be None (a die with no value, a die off the field): None first."""
    return tuple((v is not None, 0 if v is None else v) for v in values)


@dataclass(frozen=True, slots=True)
class Observation:
    """One frame's reading and its status (``stable``, ``settling``, ``occluded``, ``board-not-found``).

    ``checkers`` is None unless the status is ``stable`` or ``settling``.
    """

    status: str
    checkers: CheckerReading | None
    dice: tuple[DieObservation, ...]
    cube: CubeReading | None
    occlusion: Occlusion | None
    frames_held: int = 0
    drift_px: float | None = None
    messages: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status: {self.status!r}: expected one of {STATUSES}")

    @property
    def trusted(self) -> bool:
        return self.status == "stable"

    def key(self) -> tuple:
        """What must hold unchanged for the reading to become stable."""
        c = self.checkers
        counts = None if c is None else (c.points, c.bar, c.off)
        dice = tuple(sorted(((d.value, d.half, d.cocked) for d in self.dice), key=none_first))
        cube = None if self.cube is None else (self.cube.where, self.cube.face)
        return counts, dice, cube

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: the ``tavli-observation/1`` object ``tavli vision read`` prints."""
        c = self.checkers
        out: dict[str, Any] = {"format": FORMAT, "status": self.status, "frames_held": self.frames_held}
        if c is not None:
            w, b = c.totals()
            out.update(
                points=[int(v) for v in c.points],
                bar={"white": int(c.bar[0]), "black": int(c.bar[1])},
                off={"white": int(c.off[0]), "black": int(c.off[1])},
                conservation={"white": int(w), "black": int(b), "issues": [str(s) for s in c.issues]},
            )
        else:
            out.update(points=None, bar=None, off=None, conservation=None)
        out["dice"] = [d.to_dict() for d in self.dice] if c is not None else []
        out["cube"] = self.cube.to_dict() if (self.cube is not None and c is not None) else None
        conf: dict[str, Any] = {}
        if c is not None:
            conf = {
                "points": [_round3(v) for v in c.confidence],
                "bar": {"white": _round3(c.bar_confidence[0]), "black": _round3(c.bar_confidence[1])},
                "off": {"white": _round3(c.off_confidence[0]), "black": _round3(c.off_confidence[1])},
                "dice": [_round3(d.confidence) for d in self.dice],
                "cube": None if self.cube is None else _round3(min(self.cube.confidence, self.cube.face_confidence)),
            }
        out["confidence"] = conf
        out["occlusion"] = None if self.occlusion is None else self.occlusion.to_dict()
        out["drift_px"] = None if self.drift_px is None else round(float(self.drift_px), 2)
        out["messages"] = [str(m) for m in self.messages]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def _field_mask(geometry: Geometry, shape: tuple[int, int]) -> np.ndarray:
    corners = geometry.to_image(geometry.layout.field_corners_mm)
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    return mask


def die_px(geometry: Geometry, die_mm: float) -> float:
    """A die's side in image px on this camera: the field's area in px over its area in mm, squared off."""
    lay = geometry.layout
    mm = np.float32(lay.field_corners_mm)
    px = geometry.to_image(lay.field_corners_mm).astype(np.float32)
    return die_mm * float(np.sqrt(abs(cv2.contourArea(px)) / abs(cv2.contourArea(mm))))


@lru_cache(maxsize=8)
def _dice_field(config: VisionConfig, geometry: Geometry, shape: tuple[int, int]) -> DiceField | None:
    """Where a camera's frames of ``shape`` (height, width) are read for dice: the field, at a die's size on it (a fixed camera: once)."""
    return dice_field(
        config, shape, _field_mask(geometry, shape), die_px=die_px(geometry, geometry.layout.profile.die_size_mm)
    )


def too_small_to_read(config: VisionConfig, geometry: Geometry) -> float | None:
    """A real board's die size in px where it is under ``dice_min_legible_px`` (its faces are not read),
    else None. The renderer's crisp dice are read at any size."""
    if as_rendered(geometry.layout):
        return None
    side = die_px(geometry, geometry.layout.profile.die_size_mm)
    return side if side < config.dice_min_legible_px else None


def read_dice_on_board(config: VisionConfig, geometry: Geometry, image: np.ndarray) -> list[DieObservation]:
    """The dice on a calibrated board's playing field (never on its frame, trays, clocks or score cards), read at
    a die's known size by the config's ``board_reader`` on the renderer's board, ``real_board_reader`` on any
    other; ``image`` is a frame at the geometry's size. On a real board whose dice are too few px across to
    read (:func:`too_small_to_read`) the dice are found, each with no value.

    Raises :class:`vision.dice.DiceImageError` for an image that is not BGR or not the geometry's size.
    """
    lay = geometry.layout
    die_mm = lay.profile.die_size_mm
    legible = too_small_to_read(config, geometry) is None
    out = []
    reader = None if as_rendered(lay) else config.real_board_dice_reader  # None: the config's board_reader
    where = _dice_field(config, geometry, image.shape[:2])
    for d in (
        read_dice_in(config, image, where, plane=np.linalg.inv(geometry.matrix), reader=reader)
        if where is not None
        else ()
    ):
        mm = geometry.to_board([d.centre])[0]
        # on a calibrated board a die's size is known: a "die" the size of a checker is not one
        x, y, w, h = d.box
        corners = geometry.to_board([(x, y), (x + w, y), (x + w, y + h), (x, y + h)])
        side_mm = float(np.sqrt(abs(cv2.contourArea(corners.astype(np.float32)))))
        if not die_mm * 0.6 <= side_mm <= die_mm * 1.8:
            continue
        out.append(
            DieObservation(
                d.value if legible and not d.cocked else None,
                (float(d.centre[0]), float(d.centre[1])),
                (float(mm[0]), float(mm[1])),
                lay.half_at(float(mm[0]), float(mm[1])),
                bool(d.cocked),
                float(d.confidence),
                tuple(int(v) for v in d.box),
            )
        )
    return out


def dice_discs(dice: list[DieObservation], die_mm: float) -> list[tuple[float, float, float]]:
    """Where the dice lie, as discs (x, y, radius in board mm) that the checker readers look past."""
    return [(d.centre_mm[0], d.centre_mm[1], die_mm * (1.1 if d.cocked else 0.9)) for d in dice]


# the board's own edges are looked for up to this far (mm) across them from where the fitted field puts them
_SNAP_MM = 3.0


def snapped_edges(v, edges: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    """Each of the board's own edges moved across itself (along y on the field's long borders, along x
    elsewhere: the triangles' sides, the halves' ends) to where the photo shows it strongest, within
    ``_SNAP_MM``: a fitted field is a few px off here and there. One the photo shows nowhere near stays."""
    if not edges:
        return edges
    pts = np.array(edges, np.float64)
    x0, y0, x1, y1 = v.layout.field
    across_y = (np.abs(pts[:, 1] - y0) < 1.5) | (np.abs(pts[:, 1] - y1) < 1.5)
    steps = np.arange(-_SNAP_MM, _SNAP_MM + 1e-9, 0.5)
    shift = np.where(across_y[:, None, None], np.array([0.0, 1.0]), np.array([1.0, 0.0])) * steps[None, :, None]
    probes = pts[:, None, :] + shift
    strength = v.edge_strength_at(probes.reshape(-1, 2)).reshape(len(pts), len(steps))
    best = np.argmax(strength - 1e-3 * np.abs(steps)[None, :], axis=1)  # the nearest of equal ones
    moved = np.where(
        (strength[np.arange(len(pts)), best] > v.threshold)[:, None], probes[np.arange(len(pts)), best], pts
    )
    return tuple((float(x), float(y)) for x, y in moved)


def read_frame(
    geometry: Geometry,
    image: np.ndarray,
    palette: Palette | None = None,
    config: VisionConfig | None = None,
    reader: str | None = None,
    photo: bool = False,
    sides: Palette | None = None,
    over_frame: bool = True,
) -> Observation:
    """Read one camera frame on the geometry's board layout, each stage once: the view from above
    (:func:`vision.view.view`), the dice (:func:`read_dice_on_board`), the checkers on the points and
    in the trays (:func:`vision.checkers.read_field`, clear of the dice; the points read again by
    ``reader``, by default ``vision.toml``'s, see :func:`vision.learned_checkers.learned_field`), the cube and the checkers
    beside it on the bar (:func:`vision.cube.read_bar`), then the gate. The status is
    ``board-not-found``, ``occluded`` (also for more than 15 checkers of a side) or ``settling``: one
    frame alone is never ``stable`` (:class:`Pipeline`).

    ``photo``: the geometry is a field fitted to one photo (:func:`vision.read_photo.read_photo`), whose
    trays are not in the fit and whose bar is only as wide as fitted: the checkers on the bar and
    borne off are not read but told by the rules from those on the points
    (:func:`vision.checkers.off_board`), the board's own edges, where ``palette`` has none, are those of
    the field model fitted to the frame, the gate judges the points by ``photo_max_missing_edges``,
    not the bar, and the learned reader tells the sides by ``sides`` (the palette a player gave; a
    ``palette`` decided from the photo is the classical reader's alone) or, without it, by the
    colours of the checkers it found, split so that neither side has more than 15 (so it is on a real
    board read without a palette too). On a real board, a side whose checkers are its tray's colour,
    or whose tray reads as far more than its points leave of 15, has its borne-off checkers told by
    the rules.

    ``over_frame``: a hand must come in over the frame where the photo shows it (:func:`vision.gate.hands`'s
    ``beyond``); not for a field fitted too weakly to say where the frame lies.

    Raises ValueError for an image that is not a BGR uint8 array.
    """
    cfg = config or default_config()
    v = view(geometry, image, cfg)
    prof = v.layout.profile
    dice = read_dice_on_board(cfg, geometry, image)
    on_board = dice_discs(dice, prof.die_size_mm)
    classical = read_field(v, palette, cfg, on_board)
    if photo:  # no trays in a fitted field: what the classical reader saw beside it is not a tray's
        classical = FieldReading(classical.points, classical.confidence, (0, 0), (0.0, 0.0), classical.palette)
    # a side whose checkers are its tray's colour cannot be counted there, and a false count would
    # refuse the points' tall stacks as more than 15 (learned_checkers.combine): none is taken, and
    # the rules tell it once the points are read
    told = (True, True) if photo or as_rendered(v.layout) else trays_told(v, classical.palette, cfg.tray_min_contrast)
    told = tuple(t and not _too_many_off(classical.points, classical.off, s) for s, t in enumerate(told))
    if not all(told):
        off = tuple(n if t else 0 for n, t in zip(classical.off, told))
        classical = FieldReading(
            classical.points, classical.confidence, off, classical.off_confidence, classical.palette
        )  # type: ignore[arg-type]
    field = learned_field(
        v,
        classical,
        reader or checker_reader(rendered=as_rendered(v.layout)),
        sides if photo else palette,
        on_board,
        most=15 if photo or (palette is None and not as_rendered(v.layout)) else None,
    )
    board_edges = palette.board_edges if palette is not None else ()
    if photo and not board_edges and not as_rendered(v.layout):
        board_edges = _edges_of_photo(geometry, image, v)
    bar = read_bar(v, field, cfg, board_edges)
    messages: tuple[str, ...] = ()
    if not photo and not as_rendered(v.layout):
        told = tuple(t and not _too_many_off(field.points, field.off, s, bar.checkers[s]) for s, t in enumerate(told))
    if not all(told):
        field, messages = _trays_by_rules(field, told)
    if photo:
        field, stacked = _stacked_by_rules(field, classical.points, slot_places(v.layout)[2], cfg.photo_most_on_bar)
        messages += stacked
        on_bar, off = off_board(field.points)
        told = tuple(1.0 if n == 0 else 0.5 for n in on_bar), tuple(1.0 if n == 0 else 0.5 for n in off)
        field = FieldReading(field.points, field.confidence, off, told[1], field.palette)  # type: ignore[arg-type]
        bar = BarReading(bar.cube, bar.square, [], on_bar, told[0])  # type: ignore[arg-type]
        if any(on_bar) or any(off):
            messages += (
                f"a photo's bar and trays are not read: {on_bar[0]} white and {on_bar[1]} black on the bar, "
                f"{off[0]} white and {off[1]} black borne off, told from the checkers on the points",
            )
    small = too_small_to_read(cfg, geometry) if dice else None
    if small is not None:
        messages += (
            f"the dice are about {small:.0f} px across, too few to read their faces "
            f"(at least {cfg.dice_min_legible_px:g}): bring the camera closer or give it more px",
        )
    reading = field.with_bar(bar.checkers, bar.confidence)
    return _gated(geometry, image, cfg, v, reading, dice, bar, board_edges, photo, messages, over_frame)


def _stacked_by_rules(
    field: FieldReading, classical: Sequence[int], per_row: int, most_on_bar: int
) -> tuple[FieldReading, tuple[str, ...]]:
    """``field`` with a side's checkers missing from the points put on its stack whose first row is full, where
    more are missing than ``most_on_bar`` and the side still has a checker outside its home board (which
    :func:`vision.checkers.off_board` would put them all on the bar for): a photo shows a stack in layers
    as its first row, and no game has so many on the bar. Of several full rows, the one the classical
    reader (``classical``) counts most on. Returns the field and a message for each side so mended."""
    points = list(field.points)
    conf = list(field.confidence)
    said: list[str] = []
    for name, sign, home in (("white", 1, HOME_BOARDS[0]), ("black", -1, HOME_BOARDS[1])):
        mine = [i for i, n in enumerate(points) if n * sign > 0]
        missing = 15 - sum(abs(points[i]) for i in mine)
        full = [i for i in mine if abs(points[i]) >= per_row]
        if missing <= most_on_bar or not full or all(i in home for i in mine):
            continue
        i = max(full, key=lambda j: (abs(classical[j]), -j))
        points[i] += sign * missing
        conf[i] = min(conf[i], 0.5)
        said.append(
            f"{missing} more of {name}'s checkers put on its stack on point {i + 1}: a photo shows a stack in layers "
            f"as its first row, and more than {most_on_bar} are not on the bar"
        )
    if not said:
        return field, ()
    return replace(field, points=tuple(points), confidence=tuple(conf)), tuple(said)


def reads_as_photo(geometry: Geometry, palette: Palette | None) -> bool:
    """Whether one frame of a real board is read as a photo (``read_frame(photo=True)``): nothing was learned
    of the board from a frame of a known position (no palette with its edges), so neither its trays nor its
    drawing can be told from what the camera's profile says of them. The renderer's board is never."""
    return not (palette is not None and palette.board_edges) and not as_rendered(geometry.layout)


def _edges_of_photo(geometry: Geometry, image: np.ndarray, v: View) -> tuple[tuple[float, float], ...]:
    """The board's own edges that one frame shows: the field model fitted at the geometry's field corners
    (:func:`vision.find_board.find_field`), its edges where its regions differ, snapped to the frame's.
    None where the model fits nothing there."""
    try:
        fit = find_field(None, image, geometry.to_image(v.layout.field_corners_mm).tolist())
    except (BoardNotFoundError, CalibrationError):
        return ()
    return snapped_edges(v, fit.board_edges(v.layout))


def _too_many_off(points: tuple[int, ...], off: tuple[int, int], side: int, on_bar: int = 0) -> bool:
    """Whether a side's tray was read as more checkers than its points and bar leave of 15, by more than
    ``_TRAY_EXCESS`` (a reflection or the tray's own colour taken for a row of them): that tray is not
    read. One or two too many is as likely a false checker on the points, and is held back."""
    on = sum(n for n in points if n > 0) if side == 0 else sum(-n for n in points if n < 0)
    return on + on_bar + off[side] > 15 + _TRAY_EXCESS and on + on_bar <= 15


_TRAY_EXCESS = 2


def _trays_by_rules(field: FieldReading, told: tuple[bool, bool]) -> tuple[FieldReading, tuple[str, ...]]:
    """``field`` with the borne-off checkers of each side not ``told`` from its tray (by colour,
    :func:`vision.checkers.trays_told`, or read as far more than 15 in all, :func:`_too_many_off`) told
    by the rules from the points (:func:`vision.checkers.off_board`), at half confidence, and a message
    saying so."""
    _, by_rules = off_board(field.points)
    off = tuple(field.off[s] if told[s] else by_rules[s] for s in (0, 1))
    conf = tuple(field.off_confidence[s] if told[s] else 0.5 for s in (0, 1))
    sides = " and ".join(name for name, t in zip(("white", "black"), told) if not t)
    message = (
        f"{sides}'s tray not read (its checkers' colour, or more than 15 in all): borne off {off[0]} white, "
        f"{off[1]} black, told from the points"
    )
    return FieldReading(field.points, field.confidence, off, conf, field.palette), (message,)  # type: ignore[arg-type]


def _hand_limits(cfg: VisionConfig) -> dict[str, float]:
    return {
        "min_checkers": cfg.hand_min_checkers,
        "min_skin": cfg.hand_min_skin,
        "min_lab": cfg.foreign_min_lab,
        "spread": cfg.foreign_spread,
    }


def _gated(
    geometry: Geometry,
    image: np.ndarray,
    cfg: VisionConfig,
    v: View,
    reading: CheckerReading,
    dice: list[DieObservation],
    bar: BarReading,
    board_edges: tuple[tuple[float, float], ...],
    photo: bool = False,
    messages: tuple[str, ...] = (),
    over_frame: bool = True,
) -> Observation:
    """The gate: a frame's observation once the board's own edges are looked for wherever nothing read lies
    (in a ``photo``, as :func:`read_frame` says; ``over_frame`` too). ``messages`` go with a reading that passes."""
    lay = v.layout
    prof = lay.profile
    covers = checker_covers(
        reading.points, lambda p, k: lay.checker_slot(p, k)[:2], [c for c, _ in bar.rings], prof.checker_diameter_mm
    )
    if lay.eye is not None:  # seen standing up, a checker hides the board from its foot to its top
        covers += checker_covers(reading.points, lambda p, k: lay.checker_top(p, k)[:2], (), prof.checker_diameter_mm)
    covers += [(d.centre_mm[0], d.centre_mm[1], prof.die_size_mm * 0.9) for d in dice]
    if bar.square is not None:
        covers.append((bar.square[0][0], bar.square[0][1], prof.cube_size_mm * 0.75))
    samples = learned_samples(board_edges, lay) if board_edges else ()
    if not len(samples) or not len(samples[0]):
        samples = static_samples(lay)
    occ = occlusion(
        v.edges_at,
        covers,
        max_missing=cfg.photo_max_missing_edges if photo else cfg.max_missing_edges,
        samples=samples,
        bar_sides=() if as_rendered(lay) else (lay.geometry.left_half[2], lay.geometry.right_half[0]),
    )
    if photo:
        occ = Occlusion(occ.missing, tuple(r for r in occ.occluded if r != "bar"), occ.seen_fraction)
    if occ.seen_fraction < cfg.min_seen_edges:
        drift = check(geometry, image, cfg) if geometry.source == "markers" else None
        msg = (
            "the board is not where the calibration put it: camera knocked? recalibrate"
            if drift is not None
            else "the board is not in view"
        )
        return Observation("board-not-found", None, (), None, occ, drift_px=drift, messages=(msg,))
    if occ.occluded:
        return Observation(
            "occluded", None, (), None, occ, messages=(f"something over the board at {', '.join(occ.occluded)}",)
        )
    under_hand = (
        ()
        if as_rendered(lay)
        else hands(
            v.lab, lay, v.ppm, covers, **_hand_limits(cfg), beyond=v.photo_lab_at if v.frame and over_frame else None
        )
    )
    if under_hand:
        occ = replace(occ, hands=under_hand)
        return Observation(
            "occluded", None, (), None, occ, messages=(f"a hand over the board at {', '.join(under_hand)}",)
        )
    over = [name for name, total in zip(("white", "black"), reading.totals()) if total > 15]
    if over:
        return Observation(
            "occluded",
            None,
            (),
            None,
            occ,
            messages=(f"more than 15 {' and '.join(over)} checkers seen: something over the board?",),
        )
    return Observation("settling", reading, tuple(dice), bar.cube, occ, frames_held=1, messages=messages)


class FrameSizeError(TavliError, ValueError):
    """A frame whose picture is not the calibrated one's at any scale (another aspect: a camera mode that crops)."""


def at_calibrated_size(geometry: Geometry, image: np.ndarray, max_aspect_change: float = 0.01) -> np.ndarray:
    """``image`` at the size ``geometry`` was calibrated at (its homography is in those px): as it is, or
    scaled where the camera gives the same picture at another resolution (a webcam opened at its
    default, a still taken at full size), its aspect within ``max_aspect_change``.

    Raises :class:`FrameSizeError` for a frame of another aspect (a mode that crops the picture: recalibrate).
    """
    h, w = image.shape[:2]
    cw, ch = geometry.image_size
    if (w, h) == (cw, ch):
        return image
    if abs((w / h) / (cw / ch) - 1) > max_aspect_change:
        raise FrameSizeError(
            f"the camera gives {w}x{h} px frames, the geometry was calibrated at {cw}x{ch}: "
            "another picture, not a scaled one; recalibrate at this size"
        )
    return cv2.resize(image, (cw, ch), interpolation=cv2.INTER_AREA if w > cw else cv2.INTER_LINEAR)


class Pipeline:
    """A fixed camera's frames in order: each :meth:`feed` returns the frame's observation with
    its status from the stability gate (``stable`` once the same reading held ``stable_frames``
    frames without motion)."""

    def __init__(self, geometry: Geometry, palette: Palette | None = None, config: VisionConfig | None = None) -> None:
        self.geometry = geometry
        self.palette = palette
        self.config = config or default_config()
        self.gate = Gate(self.config.stable_frames)
        prepare(geometry, self.config.read_px_per_mm)  # a fixed camera: its rectifying maps, before its first frame
        self._previous: np.ndarray | None = None  # quarter-size grey of the frame before
        self._read: tuple[np.ndarray, Observation] | None = None  # ... of the frame last read, and its reading
        self._since_read = 0
        self.frames_read = 0  # how many frames were read afresh (the others reused a reading)

    def feed(self, image: np.ndarray) -> Observation:
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"image: expected a BGR uint8 array, got {getattr(image, 'shape', type(image))!r}")
        cfg = self.config
        try:
            image = at_calibrated_size(self.geometry, image)
        except FrameSizeError as exc:
            self.gate.update(None, board_found=False)
            self._previous = self._read = None
            return Observation("board-not-found", None, (), None, None, messages=(str(exc),))
        small = small_grey(image)
        obs = self._reuse(small)
        if obs is None:
            obs = read_frame(self.geometry, image, self.palette, cfg)
            self._read, self._since_read = (small, obs), 0
            self.frames_read += 1
        moved = changed_px(self._previous, small, cfg.motion_grey_levels)
        moving = moved is not None and moved / small.size > cfg.max_motion_fraction
        self._previous = small
        status, held = self.gate.update(
            obs.key(), occluded=obs.status == "occluded", board_found=obs.status != "board-not-found", moving=moving
        )
        if status in ("occluded", "board-not-found"):
            return obs
        messages = obs.messages + (("motion over the board",) if moving else ())
        return Observation(status, obs.checkers, obs.dice, obs.cube, obs.occlusion, held, obs.drift_px, messages)

    def _reuse(self, small: np.ndarray) -> Observation | None:
        """The last frame's reading when this frame is the same picture (a fixed camera over a still board)."""
        if self._read is None:
            return None
        self._since_read += 1
        if self._since_read >= self.config.reread_every_frames:
            return None
        n = changed_px(self._read[0], small, self.config.motion_grey_levels)
        return None if n is None or n >= self.config.reread_changed_px else self._read[1]
