"""The match journal: an append-only record of a match, one JSON line per event.

Owns :class:`Journal` (the writer: each event is written as one line, flushed and
``os.fsync``-ed before :meth:`Journal.append` returns), :func:`read_journal` (the
reader: a torn last line from a power loss mid-write is dropped and reported, a
corrupt line before it is an error naming its line number), :func:`resume` (the
journal replayed through the rules to the exact state to continue from) and the
event builders (:func:`match_start`, :func:`game_start`, :func:`play` ...).
Imports ``board_rules`` only; the clock is injected.

Every event is a JSON object with ``seq`` (1, 2, 3 ... in file order), ``time``
(ISO 8601, UTC) and ``type``, one of:

========================  ===================================================================
``match_start``           ``match``: the match spec (see :class:`MatchSpec`), ``players``
``game_start``            ``game`` (1, 2 ...), ``variant``, ``options``, ``position`` (Position
                          JSON), ``starter`` (a side, or null when an opening roll decides)
``opening_roll``          ``white``, ``black``: each side's die
``roll``                  ``side``, ``dice``
``play``                  ``side``, ``dice``, ``play`` (gnubg text), ``before``, ``after``
``pass``                  ``side``, ``dice``: no legal play, the turn passes
``cube``                  ``action`` (double, take, pass, beaver, raccoon, automatic), ``side``
                          (null for automatic), ``value``: the cube's value after the action
                          (a double offered leaves it unchanged until it is taken)
``resign``                ``action`` (offer, accept, refuse), ``side``, ``level`` (1, 2, 3)
``correction``            ``side``, ``dice``, ``wrong`` (points), ``rejected`` (the board seen),
                          ``expected`` (the nearest legal play, or null)
``game_end``              ``outcome``: ``winner``, ``base``, ``kind``, ``cube``, ``cube_owner``,
                          ``points``
``match_end``             ``winner`` (null for a session), ``score``
========================  ===================================================================

Sides are ``"white"`` and ``"black"``; dice are ``[d1, d2]``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board_rules import Play, Position, Roll, Side, find_variant
from board_rules.cube import CubeOptions, CubeState, GameOutcome
from board_rules.errors import TavliError
from board_rules.match import Match, MoneySession, TavliMatch
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from board_rules.variants import Variant

log = logging.getLogger(__name__)

EVENT_TYPES = (
    "match_start",
    "game_start",
    "opening_roll",
    "roll",
    "play",
    "pass",
    "cube",
    "resign",
    "correction",
    "game_end",
    "match_end",
)
CUBE_ACTIONS = ("double", "take", "pass", "beaver", "raccoon", "automatic")
RESIGN_ACTIONS = ("offer", "accept", "refuse")
MATCH_KINDS = ("tavli", "match", "money")

# fields each event must carry (besides seq, time and type)
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


class JournalError(TavliError, ValueError):
    """A journal that cannot be read or replayed.

    ``line`` is the 1-based line number and ``path`` the file, when known; the message
    starts with them: ``'m.jsonl': line 5: ...``.
    """

    def __init__(self, message: str, line: int | None = None, path: str | os.PathLike | None = None) -> None:
        where = "" if path is None else f"{str(path)!r}: "
        where += "" if line is None else f"line {line}: "
        super().__init__(where + message)
        self.detail = message
        self.line = line
        self.path = path

    def at(self, path: str | os.PathLike) -> JournalError:
        """The same error, naming the journal file."""
        return type(self)(self.detail, self.line, path)


class JournalReplayError(JournalError):
    """A journal whose events break the rules when replayed (an illegal play, a cube action out of turn)."""


# =============================================================================== the match spec


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """What is being played: a tavli match, a match to N points, or a money session.

    ``kind`` is ``"tavli"`` (portes, plakoto, fevga [, gul-bara] in turn, to ``length``),
    ``"match"`` (games of ``variant`` to ``length`` points, Crawford rule unless
    ``crawford_rule`` is False) or ``"money"`` (a session of ``variant`` games; ``cube``
    holds beavers, raccoons, jacoby and automatic_doubles; ``games`` ends it after that many
    games, None when the players stop). ``variant_options`` maps a
    variant name to its options (``{"plakoto": {"mother_rule": False}}``).
    Raises :class:`JournalError` for a spec that does not make sense.

    >>> MatchSpec("tavli", 3).new_scoreboard().next_variant
    'portes'
    """

    kind: str
    length: int = 0
    variant: str = "backgammon"
    crawford_rule: bool = True
    with_gul_bara: bool = False
    order: tuple[str, ...] | None = None
    any_length: bool = False
    opening_roll_after_draw: bool = False
    cube: dict[str, Any] = field(default_factory=dict)
    variant_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    games: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in MATCH_KINDS:
            raise JournalError(f"match.kind: {self.kind!r} must be one of {list(MATCH_KINDS)}")
        if self.games is not None and (self.kind != "money" or not isinstance(self.games, int) or self.games < 1):
            raise JournalError(f"match.games: {self.games!r}: a money session's number of games (1 or more), or null")
        try:
            self.new_scoreboard()
            for name in self.variant_options:
                self.make_variant(name)
            if self.kind != "tavli":
                self.make_variant(self.variant)
        except TavliError as exc:
            raise JournalError(f"match: {exc}") from None

    def make_variant(self, name: str) -> Variant:
        """The variant ``name`` with this spec's options for it."""
        base = find_variant(name)
        opts = self.variant_options.get(base.name, self.variant_options.get(name, {}))
        return find_variant(name, **opts)

    def new_scoreboard(self) -> Match | TavliMatch | MoneySession:
        """The score before the first game."""
        if self.kind == "tavli":
            return TavliMatch(
                self.length,
                with_gul_bara=self.with_gul_bara,
                order=self.order,
                any_length=self.any_length,
                opening_roll_after_draw=self.opening_roll_after_draw,
            )
        if self.kind == "match":
            return Match(self.length, crawford_rule=self.crawford_rule)
        enabled = find_variant(self.variant).has_cube
        return MoneySession(CubeOptions(enabled=enabled, **self.cube) if enabled else CubeOptions.without_cube())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "tavli":
            out.update(
                length=self.length,
                with_gul_bara=self.with_gul_bara,
                order=None if self.order is None else list(self.order),
                any_length=self.any_length,
                opening_roll_after_draw=self.opening_roll_after_draw,
            )
        elif self.kind == "match":
            out.update(length=self.length, variant=self.variant, crawford_rule=self.crawford_rule)
        else:
            out.update(variant=self.variant, cube=dict(self.cube))
            if self.games is not None:
                out["games"] = self.games
        out["variant_options"] = {k: dict(v) for k, v in self.variant_options.items()}
        return out

    @classmethod
    def from_dict(cls, data: Any) -> MatchSpec:
        """A spec from its JSON form; raises :class:`JournalError`."""
        if not isinstance(data, dict):
            raise JournalError(f"match: {data!r} must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        extra = set(data) - known
        if extra:
            raise JournalError(f"match: unknown field(s) {sorted(extra)!r}; known: {sorted(known)}")
        if "kind" not in data:
            raise JournalError("match.kind: missing")
        kwargs = dict(data)
        if kwargs.get("order") is not None:
            kwargs["order"] = tuple(kwargs["order"])
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise JournalError(f"match: {exc}") from None


# =============================================================================== event builders


def _side(side: Side | str) -> str:
    return Side(side).value


def _dice(roll: Roll) -> list[int]:
    return [roll.d1, roll.d2]


def outcome_dict(outcome: GameOutcome) -> dict[str, Any]:
    """A :class:`GameOutcome` as JSON."""
    return {
        "winner": None if outcome.winner is None else outcome.winner.value,
        "base": outcome.base,
        "kind": outcome.kind,
        "cube": outcome.cube,
        "cube_owner": None if outcome.cube_owner is None else outcome.cube_owner.value,
        "points": outcome.points,
    }


def outcome_from_dict(data: Any) -> GameOutcome:
    """A :class:`GameOutcome` from its JSON form; raises :class:`JournalError`."""
    if not isinstance(data, dict):
        raise JournalError(f"outcome: {data!r} must be a JSON object")
    try:
        winner = None if data.get("winner") is None else Side.parse(data["winner"])
        owner = None if data.get("cube_owner") is None else Side.parse(data["cube_owner"])
        return GameOutcome(winner, data["base"], data["kind"], cube=data.get("cube", 1), cube_owner=owner)
    except (KeyError, ValueError) as exc:
        raise JournalError(f"outcome: {data!r}: {exc}") from None


def match_start(spec: MatchSpec, white: str = "white", black: str = "black") -> dict[str, Any]:
    """The first event: what is played and by whom."""
    return {"type": "match_start", "match": spec.to_dict(), "players": {"white": white, "black": black}}


def game_start(game: int, position: Position, starter: Side | None) -> dict[str, Any]:
    """A new game of ``position.variant`` from ``position``; ``starter`` None: an opening roll decides."""
    options = {}
    opts = position.variant.options
    for name in getattr(opts, "__dataclass_fields__", {}):
        value = getattr(opts, name)
        options[name] = list(value) if isinstance(value, tuple) else value
    return {
        "type": "game_start",
        "game": game,
        "variant": position.variant.name,
        "options": options,
        "position": position.to_dict(),
        "starter": None if starter is None else _side(starter),
    }


def opening_roll(white_die: int, black_die: int) -> dict[str, Any]:
    return {"type": "opening_roll", "white": white_die, "black": black_die}


def roll(side: Side, dice: Roll) -> dict[str, Any]:
    return {"type": "roll", "side": _side(side), "dice": _dice(dice)}


def play(side: Side, dice: Roll, the_play: Play | str, before: Position, after: Position) -> dict[str, Any]:
    return {
        "type": "play",
        "side": _side(side),
        "dice": _dice(dice),
        "play": str(the_play),
        "before": before.to_dict(),
        "after": after.to_dict(),
    }


def pass_turn(side: Side, dice: Roll) -> dict[str, Any]:
    """No legal play for ``dice``: the turn passes."""
    return {"type": "pass", "side": _side(side), "dice": _dice(dice)}


def cube(action: str, side: Side | None, value: int) -> dict[str, Any]:
    """A cube action by ``side`` (None for an automatic double); ``value`` is the cube's value
    after it: unchanged by a double until it is taken, doubled by a take, beaver, raccoon or
    automatic double, and for a pass the value the game is lost at."""
    return {"type": "cube", "action": action, "side": None if side is None else _side(side), "value": value}


def resign(action: str, side: Side, level: int | None = None) -> dict[str, Any]:
    return {"type": "resign", "action": action, "side": _side(side), "level": None if level is None else int(level)}


def correction(
    side: Side, dice: Roll | None, wrong: Iterable[int | str], rejected: Position, expected: Play | str | None = None
) -> dict[str, Any]:
    """The referee refused a board: ``wrong`` are the points it named, ``rejected`` the board it saw."""
    return {
        "type": "correction",
        "side": _side(side),
        "dice": None if dice is None else _dice(dice),
        "wrong": list(wrong),
        "rejected": rejected.to_dict(),
        "expected": None if expected is None else str(expected),
    }


def game_end(outcome: GameOutcome, score: dict[str, int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "game_end", "outcome": outcome_dict(outcome)}
    if score is not None:
        out["score"] = dict(score)
    return out


def match_end(winner: Side | None, score: dict[str, int]) -> dict[str, Any]:
    return {"type": "match_end", "winner": None if winner is None else _side(winner), "score": dict(score)}


# =============================================================================== writing


def _utc_now() -> datetime:
    return datetime.now(UTC)


def check_event(event: Any, line: int | None = None) -> None:
    """Raise :class:`JournalError` unless ``event`` is an object of a known type with its fields."""
    if not isinstance(event, dict):
        raise JournalError(f"an event must be a JSON object, not {event!r}", line)
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        raise JournalError(f"type: {kind!r} is not one of {list(EVENT_TYPES)}", line)
    missing = [name for name in _REQUIRED[kind] if name not in event]
    if missing:
        raise JournalError(f"{kind} event lacks {missing!r}", line)


class Journal:
    """An open journal file: :meth:`append` writes one event per line and syncs it to disk.

    Open with :meth:`Journal.open`. An existing journal is continued: its sequence numbers
    go on, and a torn last line (a power loss mid-write) is cut off first, so that the
    next event starts on a line of its own. ``clock`` returns the time of each event
    (an aware :class:`datetime`; default: now, UTC).
    """

    def __init__(self, path: Path, file, next_seq: int, clock: Callable[[], datetime], dropped: str | None) -> None:
        self.path = path
        self._file = file
        self.next_seq = next_seq
        self._clock = clock
        self.dropped = dropped  # what a torn last line held, when one was cut off on opening

    @classmethod
    def open(cls, path: str | os.PathLike, clock: Callable[[], datetime] | None = None) -> Journal:
        """Open (or create) the journal at ``path`` for appending.

        Raises :class:`JournalError` when an existing journal is corrupt before its last line
        and ``OSError`` when the file cannot be opened.
        """
        p = Path(path)
        existed = p.exists()
        next_seq = 1
        dropped = None
        if existed:
            read = read_journal(p)
            next_seq = len(read.events) + 1
            dropped = read.torn
            size = p.stat().st_size
            if read.good_bytes < size:  # a torn last line, or zero bytes after a power loss
                with open(p, "r+b") as f:
                    f.truncate(read.good_bytes)
                    f.flush()
                    os.fsync(f.fileno())
            if read.good_bytes:
                with open(p, "rb") as f:
                    f.seek(read.good_bytes - 1)
                    whole_line = f.read(1) == b"\n"
                if not whole_line:  # the last event lost only its newline: end its line first
                    with open(p, "ab") as f:
                        f.write(b"\n")
                        f.flush()
                        os.fsync(f.fileno())
        f = open(p, "ab")
        if not existed:
            _fsync_dir(p)
        return cls(p, f, next_seq, clock or _utc_now, dropped)

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Write ``event`` (with its next ``seq`` and the ``time``) and sync it; returns what was written.

        Raises :class:`JournalError` for an event of unknown type or lacking a field,
        ``OSError`` when the disk refuses it.
        """
        if self._file is None:
            raise JournalError("the journal is closed", None, self.path)
        check_event(event)
        stamped = {"seq": self.next_seq, "time": self._clock().isoformat(timespec="milliseconds")}
        stamped.update((k, v) for k, v in event.items() if k not in ("seq", "time"))
        data = (json.dumps(stamped, separators=(",", ":")) + "\n").encode("utf-8")
        self._file.write(data)
        self._file.flush()
        os.fsync(self._file.fileno())
        self.next_seq += 1
        return stamped

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fsync_dir(path: Path) -> None:
    """Make a new file's directory entry durable (where the platform allows it)."""
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


# =============================================================================== reading


@dataclass(frozen=True, slots=True)
class JournalContents:
    """What :func:`read_journal` found: the events, and a torn last line if there was one.

    ``torn`` is the text of a last line cut short (dropped), ``warning`` says so in words,
    ``good_bytes`` is the length of the file up to the end of the last whole event.
    """

    events: tuple[dict[str, Any], ...]
    torn: str | None = None
    warning: str | None = None
    good_bytes: int = 0


def read_journal(path: str | os.PathLike) -> JournalContents:
    """Every event of the journal at ``path``, in order.

    A last line without its newline that is not a whole JSON event (a power loss
    mid-write) is dropped and reported in ``warning`` (and logged); every event before it
    is kept. Raises :class:`JournalError` naming the line for a corrupt line before the
    last one, an event of unknown type or a sequence number out of order, and ``OSError``
    when the file cannot be read.
    """
    raw = Path(path).read_bytes()
    events: list[dict[str, Any]] = []
    torn = None
    warning = None
    pos = 0
    good = 0
    line_no = 0
    while pos < len(raw):
        end = raw.find(b"\n", pos)
        last = end < 0
        chunk = raw[pos:] if last else raw[pos:end]
        line_no += 1
        next_pos = len(raw) if last else end + 1
        if not chunk.strip() and not last:
            raise JournalError("empty line in the middle of the journal", line_no, path)
        if last and not chunk.strip(b"\x00 \t\r"):
            break  # trailing zero bytes after a power loss: nothing was written there
        try:
            event = json.loads(chunk.decode("utf-8"))
            check_event(event, line_no)
        except (UnicodeDecodeError, json.JSONDecodeError, JournalError) as exc:
            if last:
                torn = chunk.decode("utf-8", errors="replace")
                warning = (
                    f"{str(path)!r}: line {line_no}: the last line is cut short (a write interrupted by a "
                    f"power loss?) and was ignored: {torn[:60]!r}; the {len(events)} events before it are kept"
                )
                log.warning(warning)
                break
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise JournalError(f"corrupt event ({detail}): {chunk[:80]!r}", line_no, path) from None
        if event.get("seq") != len(events) + 1:
            raise JournalError(f"seq {event.get('seq')!r} out of order; expected {len(events) + 1}", line_no, path)
        events.append(event)
        pos = next_pos
        good = next_pos if not last else len(raw)
    return JournalContents(tuple(events), torn, warning, good)


# =============================================================================== replaying


@dataclass(frozen=True, slots=True)
class ResumeState:
    """Where a journaled match stands: everything needed to carry on.

    ``scoreboard`` is the :class:`Match`, :class:`TavliMatch` or :class:`MoneySession`
    after the finished games. While a game is in progress: ``game`` its number,
    ``variant``, ``position`` (its ``turn`` is the side on roll, or the starter once
    known), ``cube`` (a :class:`CubeState`, also for games without a cube, where it
    holds resignations), ``roll`` the last roll and ``roll_played`` whether it has been
    played (False: the side on roll must play it now). ``phase`` names what comes next:
    ``"game_start"``, ``"opening_roll"``, ``"roll"`` (the side on roll may double or
    roll), ``"play"``, ``"cube_answer"``, ``"resign_answer"``, ``"game_end"`` (the game
    is decided, its result not yet recorded), ``"match_end"`` or ``"over"``.
    """

    spec: MatchSpec
    players: dict[str, str]
    scoreboard: Match | TavliMatch | MoneySession
    phase: str
    game: int = 0
    variant: Variant | None = None
    position: Position | None = None
    cube: CubeState | None = None
    roll: Roll | None = None
    roll_played: bool = True
    pending_outcome: GameOutcome | None = None
    events: int = 0
    warning: str | None = None

    @property
    def on_roll(self) -> Side | None:
        """The side to roll or play now (None between games or before the opening roll)."""
        if self.position is None or self.phase in ("opening_roll", "game_end"):
            return None
        return self.position.turn


class Replay:
    """The rules applied to one journal event after another.

    :meth:`apply` checks an event against the state so far (raising
    :class:`JournalReplayError` naming its line) and moves the state on; :meth:`state`
    is the :class:`ResumeState`. Used by :func:`resume`, :func:`replay` and the exporter;
    a live referee may use it to check each event before it journals it.
    """

    def __init__(self) -> None:
        self.spec: MatchSpec | None = None
        self.players: dict[str, str] = {}
        self.scoreboard = None
        self.game = 0
        self.variant: Variant | None = None
        self.position: Position | None = None
        self.cube: CubeState | None = None
        self.roll: Roll | None = None
        self.roll_played = True
        self.starter_known = False
        self.outcome: GameOutcome | None = None
        self.over = False
        self.line = 0
        self.count = 0

    # ------------------------------------------------------------------ helpers

    def fail(self, message: str) -> JournalReplayError:
        return JournalReplayError(message, self.line)

    def _need_game(self, kind: str) -> None:
        if self.position is None:
            raise self.fail(f"{kind} outside a game (no game_start before it)")
        if self.outcome is not None:
            raise self.fail(f"{kind} after the game was decided ({self.outcome.kind}); expected game_end")

    def _side(self, event: dict, name: str = "side") -> Side:
        try:
            return Side.parse(event.get(name))
        except ValueError as exc:
            raise self.fail(f"{name}: {exc}") from None

    def _roll(self, event: dict) -> Roll:
        try:
            return Roll.from_values(event.get("dice"))
        except ValueError as exc:
            raise self.fail(f"dice: {exc}") from None

    def _position(self, data: Any, name: str) -> Position:
        try:
            return Position.from_dict(data, self.variant)
        except ValueError as exc:
            raise self.fail(f"{name}: {exc}") from None

    def _on_turn(self, side: Side, kind: str) -> None:
        if side is not self.position.turn:
            raise self.fail(f"{kind} by {side.value!r}, but {self.position.turn.value!r} is on roll")

    # ------------------------------------------------------------------ events

    def apply(self, event: dict[str, Any], line: int) -> None:
        """Check ``event`` (on journal line ``line``) and move the state on.

        Raises :class:`JournalReplayError` for an event the rules or the match refuse.
        """
        self.line = line
        check_event(event, line)
        self.count += 1
        kind = event["type"]
        if self.over:
            raise self.fail(f"{kind} after match_end")
        if self.spec is None and kind != "match_start":
            raise self.fail(f"the journal must begin with match_start, not {kind}")
        try:
            getattr(self, "_on_" + kind)(event)
        except JournalError:
            raise
        except TavliError as exc:  # a cube or match action the rules refuse
            raise self.fail(f"{kind}: {exc}") from None

    def _on_match_start(self, e: dict) -> None:
        if self.spec is not None:
            raise self.fail("a second match_start")
        try:
            self.spec = MatchSpec.from_dict(e["match"])
        except JournalError as exc:
            raise self.fail(str(exc)) from None
        players = e["players"]
        if not isinstance(players, dict) or set(players) != {"white", "black"}:
            raise self.fail(f"players: {players!r} must name 'white' and 'black'")
        self.players = {k: str(v) for k, v in players.items()}
        self.scoreboard = self.spec.new_scoreboard()

    def _on_game_start(self, e: dict) -> None:
        if self.position is not None:
            raise self.fail(f"game_start while game {self.game} is still being played (no game_end)")
        if not isinstance(self.scoreboard, MoneySession) and self.scoreboard.is_over:
            raise self.fail("game_start after the match was won")
        expected = self.scoreboard.next_variant if isinstance(self.scoreboard, TavliMatch) else self.spec.variant
        name = e["variant"]
        options = e.get("options") or {}
        if not isinstance(options, dict):
            raise self.fail(f"options: {options!r} must be an object of option name to value")
        try:
            variant = find_variant(name, **options)
        except ValueError as exc:
            raise self.fail(f"variant: {exc}") from None
        wanted = self.spec.make_variant(expected)
        if variant.name != wanted.name:
            raise self.fail(f"game {e['game']} is {name!r}, but the match's next game is {expected!r}")
        if variant != wanted:
            raise self.fail(f"options: {options!r} are not the match's options for {expected}: {wanted.options!r}")
        if e["game"] != self.game + 1:
            raise self.fail(f"game {e['game']!r} out of order; expected game {self.game + 1}")
        self.variant = variant
        self.position = self._position(e["position"], "position")
        starter = e["starter"]
        fixed = self.scoreboard.next_starter if isinstance(self.scoreboard, TavliMatch) else None
        if starter is None:
            if fixed is not None:
                raise self.fail(f"starter: null, but {fixed.value!r} won the last game and starts this one")
            self.starter_known = False
        else:
            side = self._side(e, "starter")
            if fixed is not None and side is not fixed:
                raise self.fail(f"starter: {side.value!r}, but {fixed.value!r} won the last game and starts this one")
            self.position = self.position.with_turn(side)
            self.starter_known = True
        options = self.scoreboard.cube_options_for_next_game()
        if not variant.has_cube:
            options = CubeOptions.without_cube()
        self.cube = CubeState(options=options)
        self.game = e["game"]
        self.roll = None
        self.roll_played = True
        self.outcome = None

    def _on_opening_roll(self, e: dict) -> None:
        self._need_game("opening_roll")
        if self.starter_known:
            raise self.fail("opening_roll, but the starter of this game is already known")
        try:
            starter, dice = self.variant.opening(e["white"], e["black"])
        except ValueError as exc:
            raise self.fail(f"opening_roll: {exc}") from None
        if starter is None:
            return  # a tie: throw again (an automatic double, if any, is its own cube event)
        self.position = self.position.with_turn(starter)
        self.starter_known = True
        if dice is not None:
            self.roll = Roll(*dice)
            self.roll_played = False

    def _on_roll(self, e: dict) -> None:
        self._need_game("roll")
        if not self.starter_known:
            raise self.fail("roll before the opening roll decided who starts")
        side = self._side(e)
        self._on_turn(side, "roll")
        if not self.roll_played:
            raise self.fail(f"roll, but {self.roll} has not been played yet")
        if self.cube.offer is not None or self.cube.resign_offer is not None:
            raise self.fail("roll while a double or a resignation awaits an answer")
        self.roll = self._roll(e)
        self.roll_played = False

    def _check_roll(self, e: dict, kind: str) -> tuple[Side, Roll]:
        self._need_game(kind)
        side = self._side(e)
        self._on_turn(side, kind)
        dice = self._roll(e)
        if self.roll_played or self.roll is None:
            raise self.fail(f"{kind} of {dice} without a roll to play")
        if dice != self.roll:
            raise self.fail(f"{kind} of {dice}, but the roll was {self.roll}")
        return side, dice

    def _on_play(self, e: dict) -> None:
        side, dice = self._check_roll(e, "play")
        before = self._position(e["before"], "before")
        if before != self.position:
            raise self.fail(f"before: the recorded position is not the position in play: {e['before']!r}")
        text = e["play"]
        try:
            after = self.position.play(str(text), dice)
        except ValueError as exc:
            after = self._listed(str(text), dice)
            if after is None:
                raise self.fail(f"play {text!r} by {side.value} with {dice}: {exc}") from None
        recorded = self._position(e["after"], "after")
        if recorded != after:
            raise self.fail(f"after: the recorded position is not what {text!r} gives")
        self._advance(after)

    def _listed(self, text: str, dice: Roll) -> Position | None:
        """The result of ``text`` if the move generator lists it among the legal plays.

        ``Position.play`` (``legality.check``) refuses some plays that ``legal_plays`` lists:
        a plakoto play that pins the mother and so ends the game before every die is
        played. Both are the rules' own answers; a play the generator lists is legal.
        """
        try:
            wanted = Play.parse(text)
            options = legal_plays(self.position, dice, budget=200_000)
        except (ValueError, SearchBudgetExceeded):
            return None
        for option, after in options:
            if option == wanted:
                return after
        return None

    def _on_pass(self, e: dict) -> None:
        side, dice = self._check_roll(e, "pass")
        options = legal_plays(self.position, dice, budget=200_000)
        if len(options) != 1 or options[0][0]:
            raise self.fail(f"pass by {side.value} with {dice}, but there is a legal play: {str(options[0][0])!r}")
        self._advance(options[0][1])

    def _advance(self, after: Position) -> None:
        self.position = after
        self.roll_played = True
        board = after.outcome()
        if board is not None:
            if board.winner is None:
                self.outcome = board
            else:
                self.outcome = self.cube.outcome(board.winner, board.base, board.kind)

    def _on_cube(self, e: dict) -> None:
        self._need_game("cube")
        action = e["action"]
        if action not in CUBE_ACTIONS:
            raise self.fail(f"action: {action!r} is not one of {list(CUBE_ACTIONS)}")
        if action == "automatic":
            if self.starter_known:
                raise self.fail("an automatic double comes from a tied opening roll, before the game starts")
            self.cube = self.cube.automatic_double()
        else:
            side = self._side(e)
            if action == "double":
                self._on_turn(side, "double")
                if not self.roll_played or not self.starter_known:
                    raise self.fail("a double comes before the doubler rolls")
                self.cube = self.cube.double(side)
            elif action == "take":
                self.cube = self.cube.take(side)
            elif action == "beaver":
                self.cube = self.cube.beaver(side)
            elif action == "raccoon":
                self.cube = self.cube.raccoon(side)
            else:
                self.outcome = self.cube.pass_(side)
                return
        value = e.get("value")
        if value is not None and value != self.cube.value:
            raise self.fail(f"value: {value!r}, but the cube is at {self.cube.value} after {action}")

    def _on_resign(self, e: dict) -> None:
        self._need_game("resign")
        action = e["action"]
        side = self._side(e)
        if action == "offer":
            self.cube = self.cube.offer_resign(side, e.get("level"))
        elif action == "accept":
            self.outcome = self.cube.accept_resign(side)
        elif action == "refuse":
            self.cube = self.cube.refuse_resign(side)
        else:
            raise self.fail(f"action: {action!r} is not one of {list(RESIGN_ACTIONS)}")

    def _on_correction(self, e: dict) -> None:
        self._need_game("correction")
        self._side(e)
        self._position(e["rejected"], "rejected")
        wrong = e["wrong"]
        if not isinstance(wrong, list) or not all(
            w in ("bar", "off") or (type(w) is int and 1 <= w <= 24) for w in wrong
        ):
            raise self.fail(f"wrong: {wrong!r} must be a list of points 1..24, 'bar' or 'off'")

    def _on_game_end(self, e: dict) -> None:
        if self.position is None:
            raise self.fail("game_end outside a game")
        try:
            recorded = outcome_from_dict(e["outcome"])
        except JournalError as exc:
            raise self.fail(str(exc)) from None
        expected = self.outcome
        if expected is None:
            if recorded.kind != "time" or recorded.winner is None:
                raise self.fail(
                    f"game_end {recorded.kind!r}, but game {self.game} is not decided "
                    "(only a loss on time ends a game that the board, the cube or a resignation did not)"
                )
            if self.cube.offer is not None or recorded.cube != self.cube.value:
                raise self.fail(f"game_end on time at cube {recorded.cube}, but the cube is at {self.cube.value}")
            expected = recorded
        if (recorded.winner, recorded.base, recorded.kind, recorded.cube) != (
            expected.winner,
            expected.base,
            expected.kind,
            expected.cube,
        ):
            raise self.fail(f"game_end {outcome_dict(recorded)!r}, but the game ended {outcome_dict(expected)!r}")
        self.scoreboard = self.scoreboard.record(expected)
        self.position = None
        self.variant = None
        self.cube = None
        self.roll = None
        self.roll_played = True
        self.outcome = None

    def _on_match_end(self, e: dict) -> None:
        if self.position is not None:
            raise self.fail(f"match_end while game {self.game} is being played")
        board = self.scoreboard
        if isinstance(board, MoneySession):
            winner = None
        else:
            if not board.is_over:
                raise self.fail(f"match_end, but nobody has reached {board.length} points")
            winner = board.winner
        recorded = e["winner"]
        if recorded is not None and (winner is None or recorded != winner.value):
            raise self.fail(f"winner: {recorded!r}, but the score says {None if winner is None else winner.value!r}")
        self.over = True

    # ------------------------------------------------------------------ result

    def phase(self) -> str:
        if self.over:
            return "over"
        if self.position is None:
            board = self.scoreboard
            if not isinstance(board, MoneySession) and board.is_over:
                return "match_end"
            return "game_start"
        if self.outcome is not None:
            return "game_end"
        if not self.starter_known:
            return "opening_roll"
        if self.cube.offer is not None:
            return "cube_answer"
        if self.cube.resign_offer is not None:
            return "resign_answer"
        if not self.roll_played:
            return "play"
        return "roll"

    def state(self, warning: str | None = None) -> ResumeState:
        return ResumeState(
            spec=self.spec,
            players=dict(self.players),
            scoreboard=self.scoreboard,
            phase=self.phase(),
            game=self.game,
            variant=self.variant,
            position=self.position,
            cube=self.cube,
            roll=self.roll,
            roll_played=self.roll_played,
            pending_outcome=self.outcome,
            events=self.count,
            warning=warning,
        )


def replay(events: Iterable[dict[str, Any]]) -> ResumeState:
    """The state after ``events`` (as :func:`read_journal` gives them), every play checked.

    Raises :class:`JournalReplayError` naming the event's line for an event the rules refuse.
    """
    r = Replay()
    for i, event in enumerate(events, start=1):
        r.apply(event, i)
    if r.spec is None:
        raise JournalReplayError("the journal is empty: no match_start")
    return r.state()


def resume(path: str | os.PathLike) -> ResumeState:
    """Replay the journal at ``path`` through the rules and return the state to continue from.

    Every play is checked against the rules again; a torn last line is dropped (see
    :func:`read_journal`) and reported in ``warning``. Raises :class:`JournalError` for a
    corrupt journal and :class:`JournalReplayError` (naming the line) for an event the
    rules refuse: an illegal play, a roll out of turn, a result that does not follow.
    """
    contents = read_journal(path)
    r = Replay()
    try:
        for i, event in enumerate(contents.events, start=1):
            r.apply(event, i)
    except JournalError as exc:
        raise exc.at(path) from None
    if r.spec is None:
        raise JournalReplayError("the journal is empty: no match_start", None, path)
    return r.state(contents.warning)
