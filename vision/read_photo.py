"""One photo of a board, read without calibrating the camera first.

Owns :func:`read_photo` (the field found or taken at given corners by
:func:`vision.find_board.find_field`, the calibration and profile it gives, the checker colours
decided from the photo where no palette is given, then :func:`vision.observe.read_frame`),
:func:`photo_palette` and :func:`gnubg_id` (the gnubg Position and Match IDs of a reading and its
dice; it says when the reading makes no position). May import ``board_rules`` types; must not
import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from board_rules import Position, Side, find_variant
from board_rules.errors import InvalidPositionError
from board_rules.gnubg_id import GAME_PLAYING, MatchState, encode_match_id
from board_rules.ids import position_id
from vision.calibrate import CalibrationError, Geometry
from vision.checkers import Palette
from vision.config import VisionConfig, default_config
from vision.field_model import side_px
from vision.find_board import BoardNotFoundError, FieldConfig, FieldFit, find_field
from vision.learned_checkers import decode, fit_of_slots, slot_chances
from vision.observe import Observation, read_frame, snapped_edges
from vision.view import View, view

# a place where a checker would stand holds one where its colour is at least this far (Lab) from the bare point's
_CHECKER_MIN_CONTRAST = 22.0
# the two checker colours are at least this far apart (Lab), or the photo does not tell them
_SIDES_MIN_CONTRAST = 30.0


@dataclass(frozen=True, slots=True)
class PhotoReading:
    """What :func:`read_photo` made of a photo: the field, the calibration it gives, the palette used
    (given, decided from the photo, or None: white is then the lighter side) and the observation."""

    field: FieldFit
    geometry: Geometry
    palette: Palette | None
    observation: Observation


def read_photo(
    image: np.ndarray,
    *,
    corners: Sequence[Sequence[float]] | None = None,
    palette: Palette | None = None,
    home: str = "right",
    white_at: str | None = None,
    config: VisionConfig | None = None,
    field_config: FieldConfig | None = None,
) -> PhotoReading:
    """Read checkers, dice and cube from one photo (BGR uint8) of a board with no calibration.

    The field is found (or taken at ``corners``: four image px, clockwise, the first two along one row
    of twelve points), its bar and points fitted to the photo, white's home on ``home`` as white sees
    it, the checker colours decided from the photo unless ``palette`` is given. ``white_at`` says
    which of the field's rows white sits at: ``bottom`` (the photo's bottom row, or the row of the
    last two ``corners``), ``top``, or ``auto`` (the default without corners): the way round that
    gives both sides fewer pips to go (:func:`turned_is_likelier`).

    Raises :class:`vision.find_board.BoardNotFoundError` where no field is found,
    :class:`vision.calibrate.CalibrationError` for bad corners, home side or ``white_at``, ValueError
    for an image that is not BGR uint8.
    """
    white_at = white_at or ("bottom" if corners is not None else "auto")
    if white_at not in WHITE_AT:
        raise CalibrationError(f"white_at: {white_at!r}: expected one of {', '.join(WHITE_AT)}")
    cfg = config or default_config()
    try:
        fit = find_field(field_config, image, corners)
    except BoardNotFoundError as exc:
        hidden = _under_hand(exc, image, palette, home, cfg)
        if hidden is None:
            raise
        return hidden
    if white_at == "top":
        fit = fit.turned()
    fit = found = aspect_by_checkers(fit, image, home, cfg)
    if fit.source == "found":
        fit = sides_by_checkers(fit, image, home, cfg)
    moved = fit is not found
    fit = rows_by_checkers(fit, image, home, cfg)
    found = replace(found, checkers_per_row=fit.checkers_per_row)
    reading = _read_at(fit, image, palette, home, cfg)
    if reading.observation.checkers is None and moved:
        # the sides moved off the board's own edges (a network unsure of this board): read where found
        as_found = _read_at(found, image, palette, home, cfg)
        if as_found.observation.checkers is not None:
            fit, reading = found, as_found
    if white_at == "auto" and turned_is_likelier(reading.observation):
        reading = _read_at(fit.turned(), image, palette, home, cfg)
        obs = reading.observation
        said = "white sits at the photo's top: both sides have fewer pips to go that way round"
        reading = replace(reading, observation=replace(obs, messages=obs.messages + (said,)))
    return reading


WHITE_AT = ("auto", "bottom", "top")


def _under_hand(
    exc: BoardNotFoundError, image: np.ndarray, palette: Palette | None, home: str, cfg: VisionConfig
) -> PhotoReading | None:
    """The reading at a fit too weak to be taken for the field (``exc.weak_fit``) where a hand lies over
    it, which is why it fits so little: the photo is then ``occluded``, a board under an arm. None where
    there is no such fit or no hand over it (the photo has no board). Such a fit may lie off the field,
    what lies beyond its sides not the frame: the hand need not come in over it."""
    if exc.weak_fit is None:
        return None
    reading = _read_at(exc.weak_fit, image, palette, home, cfg, over_frame=False)
    obs = reading.observation
    if obs.occlusion is None or not obs.occlusion.hands:
        return None
    said = f"the field was found only in part (score {exc.weak_fit.score:.2f}), a hand over it"
    return replace(reading, observation=replace(obs, messages=obs.messages + (said,)))


# How much taller or shorter than fitted a field may be: a field's height comes from the camera's
# perspective (:func:`vision.field_model.field_aspect`), which a view nearly straight on leaves loose.
ASPECT_TRIES = (0.94, 0.97, 1.0, 1.03, 1.06, 1.09, 1.12)


def aspect_by_checkers(fit: FieldFit, image: np.ndarray, home: str, cfg: VisionConfig) -> FieldFit:
    """``fit`` with the height of its field (its aspect, times one of :data:`ASPECT_TRIES`) at which the
    learned checker reader's slots best fit the checkers (:func:`vision.learned_checkers.fit_of_slots`):
    the WBF stream's fitted field is 11% too tall for its measured board, and its stacks of four to six
    then read one or two short. On a board without checkers the choice hardly matters: each point reads
    empty at any of them."""
    best, best_fit = None, fit
    for factor in ASPECT_TRIES:
        trial = replace(fit, aspect=fit.aspect * factor)
        score = _slot_fit(trial, image, home, cfg)
        if score == -np.inf:
            continue
        if best is None or score > best + 1e-9:
            best, best_fit = score, trial
    return best_fit


# How far a found field's side is tried moved out or in, as a share of the field's mean side, and how much
# better (in the mean log-likelihood a slot of :func:`fit_of_slots`) the slots must fit in all to keep the
# moves: on a board with few checkers the fit hardly changes, and the field's own edges stay where found.
SIDE_STEPS = (0.006, 0.003)
SIDE_MIN_GAIN = 0.006


def _slot_fit(fit: FieldFit, image: np.ndarray, home: str, cfg: VisionConfig) -> float:
    """:func:`fit_of_slots` of the photo read at ``fit``; -inf where the fit makes no calibration."""
    try:
        return fit_of_slots(view(fit.geometry((image.shape[1], image.shape[0]), home), image, cfg))
    except (BoardNotFoundError, CalibrationError):
        return -np.inf


def _side_moved(fit: FieldFit, side: int, px: float) -> FieldFit:
    """``fit`` with its ``side`` (0 the first two corners' side, then clockwise) moved ``px`` out of the field."""
    c = np.array(fit.corners, np.float64)
    a, b = side, (side + 1) % 4
    d = c[b] - c[a]
    normal = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
    if np.dot(normal, (c[a] + c[b]) / 2 - c.mean(axis=0)) < 0:
        normal = -normal
    c[[a, b]] += normal * px
    return replace(fit, corners=tuple((float(x), float(y)) for x, y in c))


def sides_by_checkers(fit: FieldFit, image: np.ndarray, home: str, cfg: VisionConfig) -> FieldFit:
    """``fit`` with its sides moved, one at a time while a move helps, out or in by each of
    :data:`SIDE_STEPS` of its mean side, to where the learned checker reader's slots best fit the checkers
    (:func:`vision.learned_checkers.fit_of_slots`); the moves kept only where together they gain
    :data:`SIDE_MIN_GAIN` (a third of it after the first step, or the rest is not tried). The finder puts
    a side on the photo's strongest edge there, which a strip of the frame beside the field, or a lens's
    bow, can move by a third of a checker; a stack then reads a checker short and a triangle's dark base
    as a checker."""
    mean_side = side_px(np.array(fit.corners, np.float64))
    start = best = _slot_fit(fit, image, home, cfg)
    moved = fit
    for step in SIDE_STEPS:
        for _ in range(2):
            better = False
            for side in range(4):
                for sign in (-1.0, 1.0):
                    trial = _side_moved(moved, side, sign * step * mean_side)
                    score = _slot_fit(trial, image, home, cfg)
                    if score > best + 1e-9:
                        best, moved, better = score, trial, True
            if not better:
                break
        if best < start + SIDE_MIN_GAIN / 3:  # the first moves gained next to nothing: the field stays
            return fit
    return moved if best >= start + SIDE_MIN_GAIN else fit


# the network's chance of a checker in a sixth place along a point, beyond a row of five of its colour, at which
# the photo's players are taken to line six along a point (the WBF board's): on the labelled photos an empty
# sixth place gave up to 0.90, most sixth checkers 0.96-0.99 (docs/vision-notes.md, "Reading one photo")
SIX_SURE = 0.95


def rows_by_checkers(fit: FieldFit, image: np.ndarray, home: str, cfg: VisionConfig) -> FieldFit:
    """``fit`` with six checkers to a row (:attr:`FieldFit.checkers_per_row`) where a point of the photo shows
    six lined along it: a run of six from the base, its sixth place's checker at least :data:`SIX_SURE`
    (the learned checker reader), the sixth place lying within its half of the field. A board whose
    players stack after five (the renderer's) shows none, and keeps five: a row of six read as five
    puts a checker on the bar that is not there."""
    if fit.checkers_per_row >= 6:
        return fit
    trial = replace(fit, checkers_per_row=6)
    try:
        v = view(trial.geometry((image.shape[1], image.shape[0]), home), image, cfg)
    except (BoardNotFoundError, CalibrationError):
        return fit
    lay = v.layout
    point = lay.geometry.points[0]
    sixth = abs(lay.checker_slot(1, 5)[1] - point.base_y)
    if sixth > lay.profile.field_height_mm / 2 - lay.profile.checker_diameter_mm / 4:
        return fit
    _, probs = slot_chances(v)
    for chances in probs:
        n, side, _ = decode(chances)
        if n == 6 and chances[5, 1 if side > 0 else 2] >= SIX_SURE:
            return trial
    return fit


def _read_at(
    fit: FieldFit, image: np.ndarray, palette: Palette | None, home: str, cfg: VisionConfig, over_frame: bool = True
) -> PhotoReading:
    geometry = fit.geometry((image.shape[1], image.shape[0]), home)
    v = view(geometry, image, cfg)
    used = palette if palette is not None else photo_palette(geometry, image, cfg, fit)
    if used is not None and not used.board_edges:
        used = replace(used, board_edges=snapped_edges(v, fit.board_edges(geometry.layout)))
    obs = read_frame(geometry, image, used, cfg, photo=True, sides=palette, over_frame=over_frame)
    return PhotoReading(fit, geometry, used, obs)


def turned_is_likelier(obs: Observation) -> bool:
    """Whether a reading is likelier turned half round (white sitting at the other row).

    In the backgammon family both sides start 167 pips from home and come nearer as the game goes
    on, while turning the board round moves a checker twelve points. So the way round with fewer
    pips to go for both sides together is the likelier. False where nothing was read, or on a tie.
    """
    if obs.checkers is None:
        return False
    points = obs.checkers.points

    def pips(pts) -> int:
        return sum(i * n if n > 0 else (25 - i) * -n for i, n in enumerate(pts, start=1))

    return pips(points[12:] + points[:12]) < pips(points)


def photo_palette(
    geometry: Geometry, image: np.ndarray, config: VisionConfig | None = None, field: FieldFit | None = None
) -> Palette | None:
    """The two checker colours of a photo: where the first checker of each point would stand, the colour
    of that place is compared with the bare point's (the ``field``'s colour of that point's region where
    given, else the median, over the six points of its colour in its row, of the colour near their tips);
    places far from it hold a checker, and their colours split in two (the lighter is white's). None where
    fewer than two such places are seen or their colours do not split.

    Raises ValueError for an image that is not BGR uint8.
    """
    _, colours = _first_checkers(view(geometry, image, config), field)
    if len(colours) < 2:
        return None
    colours = np.array(colours, np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.5)
    cv2.setRNGSeed(2)
    _, labels, centres = cv2.kmeans(colours, 2, None, criteria, 3, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    if min(np.bincount(labels, minlength=2)) == 0 or np.linalg.norm(centres[0] - centres[1]) < _SIDES_MIN_CONTRAST:
        return None
    groups = [np.median(colours[labels == k], axis=0) for k in (0, 1)]
    light, dark = sorted(groups, key=lambda c: -float(c[0]))
    return Palette(tuple(float(v) for v in light), tuple(float(v) for v in dark))  # type: ignore[arg-type]


def _first_checkers(v: View, field: FieldFit | None) -> tuple[list[tuple[float, float]], list[np.ndarray]]:
    """The places (board mm) where a point's first checker stands in the view, and their colours: those whose
    colour is ``_CHECKER_MIN_CONTRAST`` from the bare point's (see :func:`photo_palette`)."""
    lay = v.layout
    x0, y0, x1, y1 = lay.field
    radius = lay.profile.checker_diameter_mm * 0.3
    offsets = np.array(
        [
            (dx, dy)
            for dx in np.linspace(-radius, radius, 5)
            for dy in np.linspace(-radius, radius, 5)
            if dx * dx + dy * dy <= radius * radius
        ]
    )
    places, colours, bare, kinds = [], [], {}, []
    for p in lay.geometry.points:
        x, y, _ = lay.checker_slot(p.number, 0)
        places.append((x, y))
        colours.append(np.median(v.lab_at(offsets + (x, y)), axis=0))
        # the bare point: the field's colour of its region, or near the tips, where checkers rarely reach
        kind = (
            int(field.region_at([(p.centre_x - x0) / (x1 - x0)], [(p.base_y + 2 * p.direction - y0) / (y1 - y0)])[0])
            if field
            else None
        )
        colour = field.colours[kind] if field is not None and field.colours and kind is not None else None
        if colour is not None:
            kinds.append(("region", kind))
            bare[("region", kind)] = [np.array(colour, np.float64)]
        else:
            ts = np.linspace(0.7, 0.85, 4)
            along = np.c_[np.full(len(ts), p.centre_x), p.base_y + (p.tip_y - p.base_y) * ts]
            kinds.append(("tips", p.direction, p.number % 2))
            bare.setdefault(kinds[-1], []).append(np.median(v.lab_at(along), axis=0))
    seen = [np.linalg.norm(c - np.median(bare[k], axis=0)) >= _CHECKER_MIN_CONTRAST for c, k in zip(colours, kinds)]
    return [p for p, ok in zip(places, seen) if ok], [c for c, ok in zip(colours, seen) if ok]


@dataclass(frozen=True, slots=True)
class GnubgId:
    """The gnubg IDs of a reading: ``position_id`` and ``match_id`` (a money game, no score: the cube and the
    dice as read), the side ``on_roll`` and the ``dice`` ((0, 0) where not two were read); ``notes`` say what
    was assumed."""

    position_id: str
    match_id: str
    on_roll: Side
    dice: tuple[int, int]
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        """``POSITIONID:MATCHID``, as gnubg's "paste ID" takes it."""
        return f"{self.position_id}:{self.match_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "gnubg_id": str(self),
            "position_id": self.position_id,
            "match_id": self.match_id,
            "on_roll": self.on_roll.value,
            "dice": list(self.dice),
            "notes": list(self.notes),
        }


def gnubg_id(observation: Observation, on_roll: Side | None = None) -> GnubgId:
    """The gnubg IDs of what ``observation`` shows. The side on roll is ``on_roll`` where given; else the side
    whose right-hand half the two dice lie in (white's right is the right half as white sees the board, black's
    the left), else white. The Position ID holds only the checkers on the points and the bar: those not seen are
    taken as borne off.

    Raises :class:`~board_rules.errors.InvalidPositionError` where the observation holds no reading (occluded,
    board not found) or more than 15 checkers of a side.
    """
    c = observation.checkers
    if c is None:
        raise InvalidPositionError(
            f"observation: {observation.status!r}: no checkers were read, so there is no position to give an ID",
            "status",
            observation.status,
        )
    notes = []
    values = [d.value for d in observation.dice if d.value is not None and d.half is not None]
    halves = {d.half for d in observation.dice if d.value is not None and d.half is not None}
    dice = (values[0], values[1]) if len(values) == 2 else (0, 0)
    if on_roll is None:
        if len(values) == 2 and len(halves) == 1:
            on_roll = Side.WHITE if halves == {"right"} else Side.BLACK
        else:
            on_roll = Side.WHITE
            notes.append("white taken to be on roll (no two dice in one half tell who rolled)")
    if len(values) != 2:
        notes.append(f"{len(values)} dice read: the Match ID holds no roll")
    bar = (int(c.bar[0]), int(c.bar[1]))
    off = []
    for side, sign in ((0, 1), (1, -1)):
        seen = sum(v * sign for v in c.points if v * sign > 0) + bar[side]
        if seen > 15:
            raise InvalidPositionError(
                f"checkers.{('white', 'black')[side]}: {seen} seen on the points and bar: no position has more than 15",
                f"checkers.{('white', 'black')[side]}",
                seen,
            )
        off.append(15 - seen)
    position = Position(
        find_variant("backgammon"), on_roll, tuple(int(v) for v in c.points), bar=bar, off=(off[0], off[1])
    )
    cube_value, cube_owner = 1, None
    if observation.cube is not None and observation.cube.value is not None:
        cube_value = int(observation.cube.value)
        cube_owner = {"white": Side.WHITE, "black": Side.BLACK}.get(observation.cube.where)
    match = MatchState(cube_value, cube_owner, on_roll, False, GAME_PLAYING, on_roll, False, 0, dice, 0, (0, 0))
    return GnubgId(position_id(position), encode_match_id(match), on_roll, match.dice, tuple(notes))
