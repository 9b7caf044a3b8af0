"""What goes into the game flow: its input types, and what the table's raw readings mean. Pure, no devices.

Owns the inputs (:class:`SeenBoard`, :class:`SeenDice`, :class:`Pressed` ...) and :class:`Readings`: it keeps the last board the sensor board read and the last
checkers the camera saw, fuses them (:func:`referee.fusion.fuse`), tells fresh dice
from dice that lay before, and turns each reading into the flow's inputs
(:mod:`referee.flow`). A reading that is not a position yet (a checker in a hand, a
heap the board cannot count) gives a notice at most once while it lasts.
Imports ``board_rules``, the sensor board's codec and sensing model, and the referee's fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from board_rules import Position, Side
from board_rules.places import Place
from firmware_bridge.protocol import Snapshot
from firmware_bridge.sensing import counts_from_slots
from referee.calls import AMBER, places_text
from referee.fusion import BoardSeen, fuse
from referee.record import Phase

# =============================================================================== what goes in


@dataclass(frozen=True, slots=True)
class SeenBoard:
    """A board seen on the table (by the sensor board, the camera or both, fused); ``disagree``:
    the places where the board and the camera disagree (lit amber; the board's count was kept)."""

    position: Position
    disagree: tuple[Place, ...] = ()


@dataclass(frozen=True, slots=True)
class SeenDice:
    """Dice at rest (``values``, 0 for a die whose face was not read), or picked up (``values`` None: that
    ends the turn). ``halves``: where each die lies (``"left"``/``"right"`` as white sees it, None off the
    field); empty when typed in."""

    values: tuple[int, int] | None
    halves: tuple[str | None, ...] = ()
    cocked: bool = False


@dataclass(frozen=True, slots=True)
class SeenOpeningDice:
    """The opening roll as the camera sees it: one die in each player's right-hand board (0 for a die whose
    face was not read)."""

    values: tuple[int, int]
    halves: tuple[str | None, str | None]
    cocked: bool = False


@dataclass(frozen=True, slots=True)
class TypedOpening:
    """The opening roll typed in: white's die and black's."""

    white: int
    black: int


@dataclass(frozen=True, slots=True)
class Pressed:
    """A button (:data:`BUTTONS`); ``side`` is who pressed it where that is known."""

    button: str
    side: Side | None = None


@dataclass(frozen=True, slots=True)
class PanelAction:
    """An action of the Raspberry Pi panel (:data:`firmware_bridge.panel.ACTIONS`)."""

    action: str
    side: Side | None = None


@dataclass(frozen=True, slots=True)
class Lifted:
    """A checker lifted from ``place``."""

    place: Place


@dataclass(frozen=True, slots=True)
class SeenCube:
    """The cube where the camera sees it (``centre``, ``white``, ``black``) and the value on top."""

    where: str | None
    value: int | None = None


@dataclass(frozen=True, slots=True)
class Conflict:
    """Checkers of both colours on ``places`` where no pin can explain them."""

    places: tuple[Place, ...]


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the table itself has to say (a heap the board cannot count, a bad command), with LEDs to light."""

    says: tuple[str, ...]
    buzzer: bool = False
    leds: Mapping[Place, str] = field(default_factory=dict)


Input = (
    SeenBoard
    | SeenDice
    | SeenOpeningDice
    | TypedOpening
    | Pressed
    | PanelAction
    | Lifted
    | SeenCube
    | Conflict
    | Notice
)


# =============================================================================== raw readings


class Readings:
    """The table's latest readings, and the flow inputs each new one makes."""

    def __init__(self) -> None:
        self.board_seen: Position | BoardSeen | None = None
        self.camera_seen: tuple | None = None  # (points, bar, off) as the camera counts them
        self.camera_confidence: tuple[float, ...] | None = None  # the camera's per point, with camera_seen
        self._unusable_said: tuple[str, ...] | None = None  # what was last said of a reading that is no position
        self._turn_dice: tuple | None = None  # the dice of the turn in play as the camera saw them
        self._board_at_camera: Position | BoardSeen | None = None  # the board's reading when the camera's came

    def forget_camera(self) -> None:
        """The camera's view is gone (a hand over the board, the camera down): what it saw is no longer the board."""
        self.camera_seen = self.camera_confidence = None

    def camera_is_stale(self) -> bool:
        """Whether the board has changed since the camera's reading: a checker moved that the camera has
        not yet seen settle (a hand over it, dice still rolling, a camera that sees only stills)."""
        return (
            self.camera_seen is not None
            and self.board_seen is not None
            and self._board_at_camera is not None
            and self.board_seen != self._board_at_camera
        )

    def board(self, seen: Position | BoardSeen | None, like: Position | None) -> list[Input]:
        """A new board reading (None: only the camera's changed); ``like`` is the position in play."""
        if seen is not None:
            self.board_seen = seen
        if like is None or (self.board_seen is None and self.camera_seen is None):
            return []
        try:
            fused = self._fuse(like)
        except ValueError as exc:
            if seen is None:
                return []
            board = self.board_seen
            heaps = [p for p in (board.uncountable() if isinstance(board, BoardSeen) else ())]
            if heaps and self.camera_seen is None:  # two heaps of a colour: the count of 15 cannot finish both
                where = places_text(dict.fromkeys(heaps), like.turn, like.variant)
                notice = Notice(
                    (f"the board cannot count the heaped checkers on {where}: lay them along the point",),
                    leds={h: AMBER for h in heaps},
                )
                return self._once(notice)
            if str(getattr(exc, "field", "")).startswith("checkers.") and getattr(exc, "value", 15) < 15:
                return []  # a checker in a hand: the board is on its way somewhere
            return self._once(Notice((f"board reading not usable yet ({exc})",)))
        self._unusable_said = None
        return [SeenBoard(fused.position, tuple(fused.disagree))]

    def _fuse(self, like: Position):
        """The board and the camera fused; a stale camera reading (see :meth:`camera_is_stale`) is left
        out, so that it neither disagrees with a move it has not seen nor counts a heap as it was, unless
        the board cannot be read without it (two heaps of a side)."""
        if self.camera_is_stale():
            try:
                return fuse(like, self.board_seen, None)
            except ValueError:
                pass
        return fuse(like, self.board_seen, self.camera_seen, camera_confidence=self.camera_confidence)

    def _once(self, notice: Notice) -> list[Input]:
        """``notice`` about an unusable reading, but not again while the reading stays so (snapshots repeat)."""
        if notice.says == self._unusable_said:
            return []
        self._unusable_said = notice.says
        return [notice]

    def observation(self, obs: Any, phase: Phase, like: Position | None) -> list[Input]:
        """A stable camera observation (see :class:`vision.observe.Observation`): its checkers, dice and cube."""
        c = obs.checkers
        self.camera_seen = (c.points, c.bar, c.off)
        self._board_at_camera = self.board_seen
        self.camera_confidence = c.confidence
        out: list[Input] = []
        dice = list(obs.dice)
        if phase is Phase.PLAY or not dice:
            self._turn_dice = dice_lying(dice) or None  # the dice of the turn being played, as they lie
        # dice that lay before (the last turn's, a tied opening's, a throw refused or passed) are no new
        # throw, neither while they lie nor as they are picked up one by one
        stale = list(self._turn_dice or ())
        fresh = []
        for d in dice:
            key = dice_lying([d])[0]
            if key in stale:
                stale.remove(key)
            else:
                fresh.append(d)
        if phase is Phase.ROLL and fresh:
            if len(fresh) == 2:
                self._turn_dice = dice_lying(dice)
                values = tuple(d.value or 0 for d in fresh)
                out.append(SeenDice(values, tuple(d.half for d in fresh), any(d.cocked for d in fresh)))
            elif len(fresh) == len(dice):  # thrown and at rest: one is off the playing field, or a third lies there
                self._turn_dice = dice_lying(dice)
                say = f"{len(dice)} dice at rest on the playing field: a die off it is thrown again; throw both dice again"
                out.append(Notice((say,), buzzer=True))
        elif phase is Phase.OPENING_ROLL and len(fresh) == 2:  # one die alone: the other player has yet to throw
            self._turn_dice = dice_lying(dice)
            values = (fresh[0].value or 0, fresh[1].value or 0)
            out.append(SeenOpeningDice(values, (fresh[0].half, fresh[1].half), any(d.cocked for d in fresh)))
        elif phase is Phase.PLAY and not obs.dice:
            out.append(SeenDice(None))  # the dice were picked up: the turn ends
        if obs.cube is not None:
            out.append(SeenCube(obs.cube.where, obs.cube.value))
        return out


def dice_lying(dice: Sequence[Any]) -> tuple:
    """Dice as they lie: values, halves and board places to 10 mm (a new throw lands elsewhere)."""
    keys = [(d.value, d.half, round(d.centre_mm[0] / 10), round(d.centre_mm[1] / 10)) for d in dice]
    return tuple(sorted(keys, key=lambda k: tuple((v is not None, 0 if v is None else v) for v in k)))


def lifted_place(area: str, number: int, side) -> Place:
    """The place a checker was lifted from, as the board's Lift names it (``point`` n or ``bar``)."""
    return Place.bar(side) if area == "bar" else Place.point(number)


# =============================================================================== the sensor board


def read_board(snapshot: Snapshot, like: Position) -> BoardSeen:
    """What a snapshot shows, given ``like`` (the position before): counts, pins and lower bounds.

    The board cannot tell who is pinned under whom (plakoto): the referee knows it from
    the game so far. A pinned pair where ``like`` has a pin keeps that pin; a pinned pair
    where ``like`` has a single checker is a new pin of that checker; a pin of ``like``
    no longer read as a pair is released. Checkers heaped against the fill order are
    counted as a lower bound (``at_least``). Raises ``ValueError`` for both colours on
    a point where no pin can explain them.
    """
    sensed = counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )
    pins = [0] * 24
    for p in sensed.uncertain:
        if like.pinned[p - 1]:
            pins[p - 1] = like.pinned[p - 1]
        elif like.variant.pins and abs(like.points[p - 1]) == 1 and p not in sensed.at_least:
            pins[p - 1] = 1 if like.points[p - 1] > 0 else -1
    points = sensed.resolved_points(pins) if sensed.uncertain else sensed.points
    return BoardSeen.counted(points, pins, sensed.bar, sensed.off, sensed.at_least)


def observed_position(snapshot: Snapshot, like: Position) -> Position:
    """The position a snapshot shows, with the turn and rolls of ``like`` (the position before).

    See :func:`read_board`; a side's one heap the board counts only as "at least" is
    finished by the count of 15. Raises ``ValueError`` for a reading that is not a
    valid position (a misread, a checker in a hand, or both colours on a point where
    no pin can explain them).
    """
    return read_board(snapshot, like).completed(like)
