"""The referee's events: typed, frozen, JSON-serialisable, one vocabulary for the journal and the stream.

(Some 580 lines in one module: each event's type beside its JSON form.)

Record events (:data:`RECORD_EVENTS`: match and game starts, rolls, plays, cube
actions ...) are the match: the journal persists them and replaying them gives the
match back. Table events (:data:`TABLE_EVENTS`: calls, LED frames, positions seen,
phase and score) say what the table shows now; they are streamed, not journaled.
:class:`Stamped` adds a sequence number and time; :class:`Decoder` reads an event back
from JSON, naming the field it refuses. Imports ``board_rules`` and :mod:`referee.spec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from board_rules import Position, Roll, Side, find_variant
from board_rules.cube import GameOutcome
from board_rules.places import Place
from board_rules.variants import Variant
from referee.errors import JournalError, JournalReplayError
from referee.spec import MatchSpec


class CubeAction(str, Enum):
    DOUBLE = "double"
    TAKE = "take"
    PASS = "pass"
    BEAVER = "beaver"
    RACCOON = "raccoon"
    AUTOMATIC = "automatic"


class ResignAction(str, Enum):
    OFFER = "offer"
    ACCEPT = "accept"
    REFUSE = "refuse"


def _side(side: Side | None) -> str | None:
    return None if side is None else side.value


def _dice(roll: Roll | None) -> list[int] | None:
    return None if roll is None else [roll.d1, roll.d2]


def outcome_dict(outcome: GameOutcome) -> dict[str, Any]:
    """A :class:`GameOutcome` as JSON."""
    return {
        "winner": _side(outcome.winner),
        "base": outcome.base,
        "kind": outcome.kind,
        "cube": outcome.cube,
        "cube_owner": _side(outcome.cube_owner),
        "points": outcome.points,
    }


class Event:
    """Base of every event: ``type`` is its name in JSON, :meth:`to_dict` its JSON object."""

    type: ClassVar[str]
    journaled: ClassVar[bool] = True

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every event overrides it
        raise NotImplementedError


# =============================================================================== record events


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    """The first event: what is played and by whom."""

    type: ClassVar[str] = "match_start"
    match: MatchSpec
    players: Mapping[str, str] = field(default_factory=lambda: {"white": "white", "black": "black"})

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "match": self.match.to_dict(), "players": dict(self.players)}


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    """Game ``game`` of ``position.variant`` from ``position``; ``starter`` None: an opening roll decides."""

    type: ClassVar[str] = "game_start"
    game: int
    position: Position
    starter: Side | None

    def to_dict(self) -> dict[str, Any]:
        options = {}
        opts = self.position.variant.options
        for name in getattr(opts, "__dataclass_fields__", {}):
            value = getattr(opts, name)
            options[name] = list(value) if isinstance(value, tuple) else value
        return {
            "type": self.type,
            "game": self.game,
            "variant": self.position.variant.name,
            "options": options,
            "position": self.position.to_dict(),
            "starter": _side(self.starter),
        }


@dataclass(frozen=True, slots=True)
class OpeningRolled(Event):
    """The opening roll: one die thrown by each side."""

    type: ClassVar[str] = "opening_roll"
    white: int
    black: int

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "white": self.white, "black": self.black}


@dataclass(frozen=True, slots=True)
class Rolled(Event):
    type: ClassVar[str] = "roll"
    side: Side
    dice: Roll

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "side": self.side.value, "dice": _dice(self.dice)}


@dataclass(frozen=True, slots=True)
class Played(Event):
    """``side`` played ``play`` (gnubg's text, in the mover's numbering) with ``dice``."""

    type: ClassVar[str] = "play"
    side: Side
    dice: Roll
    play: str
    before: Position
    after: Position

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "side": self.side.value,
            "dice": _dice(self.dice),
            "play": self.play,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Passed(Event):
    """No legal play for ``dice``: the turn passes."""

    type: ClassVar[str] = "pass"
    side: Side
    dice: Roll

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "side": self.side.value, "dice": _dice(self.dice)}


@dataclass(frozen=True, slots=True)
class CubeActed(Event):
    """A cube action by ``side`` (None for an automatic double); ``value`` is the cube's value after it
    (unchanged by a double until it is taken; for a pass, the value the game is lost at)."""

    type: ClassVar[str] = "cube"
    action: CubeAction
    side: Side | None
    value: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "action": self.action.value, "side": _side(self.side), "value": self.value}


@dataclass(frozen=True, slots=True)
class Resigned(Event):
    type: ClassVar[str] = "resign"
    action: ResignAction
    side: Side
    level: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "action": self.action.value, "side": self.side.value, "level": self.level}


@dataclass(frozen=True, slots=True)
class Corrected(Event):
    """The referee refused a board: ``wrong`` are the places it named, ``rejected`` the board it saw,
    ``expected`` the nearest legal play (gnubg's text) or None."""

    type: ClassVar[str] = "correction"
    side: Side
    dice: Roll | None
    wrong: tuple[Place, ...]
    rejected: Position
    expected: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "side": self.side.value,
            "dice": _dice(self.dice),
            "wrong": [p.to_json() for p in self.wrong],
            "rejected": self.rejected.to_dict(),
            "expected": self.expected,
        }


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    type: ClassVar[str] = "game_end"
    outcome: GameOutcome
    score: Mapping[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "outcome": outcome_dict(self.outcome)}
        if self.score is not None:
            out["score"] = dict(self.score)
        return out


@dataclass(frozen=True, slots=True)
class MatchEnded(Event):
    """The match is over: ``winner`` (None for a money session) and the final ``score``."""

    type: ClassVar[str] = "match_end"
    winner: Side | None
    score: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "winner": _side(self.winner), "score": dict(self.score)}


# =============================================================================== table events


@dataclass(frozen=True, slots=True)
class Called(Event):
    """The referee's words, and whether the buzzer sounds with them."""

    type: ClassVar[str] = "call"
    journaled: ClassVar[bool] = False
    says: tuple[str, ...]
    buzzer: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "says": list(self.says), "buzzer": self.buzzer}


@dataclass(frozen=True, slots=True)
class LedsLit(Event):
    """The LED frame the referee wants now: a colour per lit place, every other place dark."""

    type: ClassVar[str] = "leds"
    journaled: ClassVar[bool] = False
    leds: tuple[tuple[Place, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "leds": {str(p): colour for p, colour in self.leds}}


@dataclass(frozen=True, slots=True)
class PositionSeen(Event):
    """A new board seen on the table (by the sensor board, the camera or both)."""

    type: ClassVar[str] = "position"
    journaled: ClassVar[bool] = False
    position: Position

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "position": self.position.to_dict()}


@dataclass(frozen=True, slots=True)
class PhaseChanged(Event):
    type: ClassVar[str] = "phase"
    journaled: ClassVar[bool] = False
    phase: str
    on_roll: Side | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "phase": self.phase, "on_roll": _side(self.on_roll)}


@dataclass(frozen=True, slots=True)
class ScoreChanged(Event):
    type: ClassVar[str] = "score"
    journaled: ClassVar[bool] = False
    score: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "score": dict(self.score)}


RECORD_EVENTS: tuple[type[Event], ...] = (
    MatchStarted,
    GameStarted,
    OpeningRolled,
    Rolled,
    Played,
    Passed,
    CubeActed,
    Resigned,
    Corrected,
    GameEnded,
    MatchEnded,
)
TABLE_EVENTS: tuple[type[Event], ...] = (Called, LedsLit, PositionSeen, PhaseChanged, ScoreChanged)
RECORD_TYPES = tuple(cls.type for cls in RECORD_EVENTS)
EVENT_TYPES = RECORD_TYPES  # what a journal may hold


# =============================================================================== builders, by JSON name


def match_start(spec: MatchSpec, white: str = "white", black: str = "black") -> MatchStarted:
    return MatchStarted(spec, {"white": white, "black": black})


def game_start(game: int, position: Position, starter: Side | None) -> GameStarted:
    return GameStarted(game, position, starter)


def opening_roll(white_die: int, black_die: int) -> OpeningRolled:
    return OpeningRolled(white_die, black_die)


def roll(side: Side, dice: Roll) -> Rolled:
    return Rolled(side, dice)


def play(side: Side, dice: Roll, the_play, before: Position, after: Position) -> Played:
    return Played(side, dice, str(the_play), before, after)


def pass_turn(side: Side, dice: Roll) -> Passed:
    return Passed(side, dice)


def cube(action: str, side: Side | None, value: int | None) -> CubeActed:
    return CubeActed(CubeAction(action), side, value)


def resign(action: str, side: Side, level: int | None = None) -> Resigned:
    return Resigned(ResignAction(action), side, None if level is None else int(level))


def correction(side: Side, dice: Roll | None, wrong, rejected: Position, expected=None) -> Corrected:
    places = tuple(Place.parse(w) for w in wrong)
    return Corrected(side, dice, places, rejected, None if expected is None else str(expected))


def game_end(outcome: GameOutcome, score: Mapping[str, int] | None = None) -> GameEnded:
    return GameEnded(outcome, None if score is None else dict(score))


def match_end(winner: Side | None, score: Mapping[str, int]) -> MatchEnded:
    return MatchEnded(winner, dict(score))


@dataclass(frozen=True, slots=True)
class Stamped:
    """An event with the sequence number (1, 2, 3 ...) and time (ISO 8601, UTC) it was journaled or streamed under."""

    seq: int
    time: str
    event: Event

    @property
    def type(self) -> str:
        return self.event.type

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": self.time, **self.event.to_dict()}


# =============================================================================== reading back

# fields each record event must carry in JSON (besides seq, time and type)
_REQUIRED: dict[str, tuple[str, ...]] = {
    "match_start": ("match", "players"),
    "game_start": ("game", "variant", "position", "starter"),
    "opening_roll": ("white", "black"),
    "roll": ("side", "dice"),
    "play": ("side", "dice", "play", "before", "after"),
    "pass": ("side", "dice"),
    "cube": ("action", "side"),
    "resign": ("action", "side"),
    "correction": ("side", "rejected", "wrong"),
    "game_end": ("outcome",),
    "match_end": ("winner",),
}


def check_event(data: Any, line: int | None = None) -> None:
    """Raise :class:`JournalError` unless ``data`` is a JSON object of a known record type with its fields."""
    if not isinstance(data, dict):
        raise JournalError(f"an event must be a JSON object, not {data!r}", line)
    kind = data.get("type")
    if kind not in RECORD_TYPES:
        raise JournalError(f"type: {kind!r} is not one of {list(RECORD_TYPES)}", line)
    missing = [name for name in _REQUIRED[kind] if name not in data]
    if missing:
        raise JournalError(f"{kind} event lacks {missing!r}", line)


class Decoder:
    """Reads record events back from JSON, in order: a game's positions are read with the
    variant (and its options) its ``game_start`` named. Raises :class:`JournalError` naming the field."""

    def __init__(self) -> None:
        self.variant: Variant | None = None

    def decode(self, data: Any, line: int | None = None) -> Stamped:
        check_event(data, line)
        kind = data["type"]
        fail = _Fail(kind, line)
        event = getattr(self, "_" + kind)(data, fail)
        seq = data.get("seq", 0)
        if type(seq) is not int:
            raise fail("seq", seq, "must be a whole number")
        return Stamped(seq, str(data.get("time", "")), event)

    # each reader takes the JSON object and a failure maker
    def _match_start(self, d: dict, fail: _Fail) -> Event:
        players = d["players"]
        if not isinstance(players, dict) or set(players) != {"white", "black"}:
            raise fail("players", players, "must name 'white' and 'black'")
        try:
            spec = MatchSpec.from_dict(d["match"])
        except JournalError as exc:
            raise JournalReplayError(exc.detail, fail.line) from None
        return MatchStarted(spec, {k: str(v) for k, v in players.items()})

    def _game_start(self, d: dict, fail: _Fail) -> Event:
        options = d.get("options") or {}
        if not isinstance(options, dict):
            raise fail("options", options, "must be an object of option name to value")
        try:
            variant = find_variant(d["variant"], **options)
        except (ValueError, TypeError) as exc:
            raise fail("variant", d["variant"], str(exc)) from None
        self.variant = variant
        if type(d["game"]) is not int:
            raise fail("game", d["game"], "must be a whole number")
        return GameStarted(d["game"], self._position(d, "position", fail), self._maybe_side(d, "starter", fail))

    def _opening_roll(self, d: dict, fail: _Fail) -> Event:
        for name in ("white", "black"):
            if type(d[name]) is not int:
                raise fail(name, d[name], "must be a die, 1..6")
        return OpeningRolled(d["white"], d["black"])

    def _roll(self, d: dict, fail: _Fail) -> Event:
        return Rolled(self._side(d, "side", fail), self._dice(d, fail))

    def _play(self, d: dict, fail: _Fail) -> Event:
        if not isinstance(d["play"], str):
            raise fail("play", d["play"], "must be a play in gnubg's notation")
        return Played(
            self._side(d, "side", fail),
            self._dice(d, fail),
            d["play"],
            self._position(d, "before", fail),
            self._position(d, "after", fail),
        )

    def _pass(self, d: dict, fail: _Fail) -> Event:
        return Passed(self._side(d, "side", fail), self._dice(d, fail))

    def _cube(self, d: dict, fail: _Fail) -> Event:
        try:
            action = CubeAction(d["action"])
        except ValueError:
            raise fail("action", d["action"], f"must be one of {[a.value for a in CubeAction]}") from None
        value = d.get("value")
        if value is not None and type(value) is not int:
            raise fail("value", value, "must be the cube's value")
        side = None if action is CubeAction.AUTOMATIC else self._side(d, "side", fail)
        return CubeActed(action, side, value)

    def _resign(self, d: dict, fail: _Fail) -> Event:
        try:
            action = ResignAction(d["action"])
        except ValueError:
            raise fail("action", d["action"], f"must be one of {[a.value for a in ResignAction]}") from None
        level = d.get("level")
        if level is not None and level not in (1, 2, 3):
            raise fail("level", level, "must be 1, 2 or 3")
        return Resigned(action, self._side(d, "side", fail), level)

    def _correction(self, d: dict, fail: _Fail) -> Event:
        wrong = d["wrong"]
        if not isinstance(wrong, list):
            raise fail("wrong", wrong, "must be a list of places")
        places = []
        for w in wrong:
            if w in ("bar", "off"):  # journals before places had sides named the bar or the trays alone
                places += [Place.bar(s) if w == "bar" else Place.off(s) for s in (Side.WHITE, Side.BLACK)]
                continue
            try:
                places.append(Place.from_json(w))
            except (ValueError, TypeError):
                raise fail("wrong", wrong, "must be a list of points 1..24, bars and trays") from None
        dice = None if d.get("dice") is None else self._dice(d, fail)
        expected = d.get("expected")
        if expected is not None and not isinstance(expected, str):
            raise fail("expected", expected, "must be a play in gnubg's notation or null")
        return Corrected(
            self._side(d, "side", fail), dice, tuple(places), self._position(d, "rejected", fail), expected
        )

    def _game_end(self, d: dict, fail: _Fail) -> Event:
        data = d["outcome"]
        if not isinstance(data, dict):
            raise fail("outcome", data, "must be a JSON object")
        try:
            winner = None if data.get("winner") is None else Side.parse(data["winner"])
            owner = None if data.get("cube_owner") is None else Side.parse(data["cube_owner"])
            outcome = GameOutcome(winner, data["base"], data["kind"], cube=data.get("cube", 1), cube_owner=owner)
        except (KeyError, ValueError, TypeError) as exc:
            raise fail("outcome", data, str(exc)) from None
        score = d.get("score")
        if score is not None and not isinstance(score, dict):
            raise fail("score", score, "must be an object of side to points")
        return GameEnded(outcome, score)

    def _match_end(self, d: dict, fail: _Fail) -> Event:
        score = d.get("score", {})
        if not isinstance(score, dict):
            raise fail("score", score, "must be an object of side to points")
        return MatchEnded(self._maybe_side(d, "winner", fail), score)

    # field readers
    def _side(self, d: dict, name: str, fail: _Fail) -> Side:
        try:
            return Side.parse(d.get(name))
        except (ValueError, TypeError) as exc:
            raise fail(name, d.get(name), str(exc)) from None

    def _maybe_side(self, d: dict, name: str, fail: _Fail) -> Side | None:
        return None if d.get(name) is None else self._side(d, name, fail)

    def _dice(self, d: dict, fail: _Fail) -> Roll:
        try:
            return Roll.from_values(d.get("dice"))
        except (ValueError, TypeError) as exc:
            raise fail("dice", d.get("dice"), str(exc)) from None

    def _position(self, d: dict, name: str, fail: _Fail) -> Position:
        try:
            return Position.from_dict(d[name], self.variant)
        except ValueError as exc:
            raise JournalReplayError(f"{name}: {exc}", fail.line) from None


@dataclass(frozen=True, slots=True)
class _Fail:
    kind: str
    line: int | None

    def __call__(self, name: str, value: Any, expected: str) -> JournalReplayError:
        return JournalReplayError(f"{self.kind}.{name}: {value!r}: {expected}", self.line)


def decode_all(items: Any) -> list[Stamped]:
    """Record events from their JSON objects, in order (see :class:`Decoder`)."""
    decoder = Decoder()
    return [decoder.decode(item, i) for i, item in enumerate(items, start=1)]
