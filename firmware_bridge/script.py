"""The board emulator's command language: one line, one frozen command, carried out on a :class:`BoardEmulator`.

(Some 520 lines in one module: each command's parsing, text and action side by side.)

Owns :class:`ScriptError`, the commands (move, lift, put, lay, set, sleep, press, inject,
replug, help, quit), :func:`parse_command` (pure; each command's ``str`` parses back to
it), :func:`run_command` and :data:`HELP`. ``tavli board emulate`` reads it from
``--script FILE`` and from what is typed. Stand-in code: production never imports it.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from board_rules import InvalidPositionError, Position, Side, TavliError, Variant, find_variant
from board_rules.ids import position_from_id
from board_rules.places import PlaceKind

if TYPE_CHECKING:  # pragma: no cover
    from firmware_bridge.emulator import BoardEmulator

__all__ = [
    "HELP",
    "MAX_LINE",
    "Command",
    "Help",
    "InjectFaults",
    "LayCheckers",
    "LiftChecker",
    "MoveChecker",
    "PressButton",
    "PutChecker",
    "Quit",
    "Replug",
    "ScriptError",
    "SetBoard",
    "Sleep",
    "Spot",
    "parse_command",
    "parse_spot",
    "run_command",
    "run_line",
]

MAX_LINE = 4096  # characters in one line: a Position JSON takes about 300
MAX_SLEEP_S = 3600.0
MAX_HOLD_S = 10.0
MAX_DELAY_S = 0.5  # an injected delay before each frame: longer ones stall every answer of the emulator
MAX_JSON_DEPTH = 8  # Position JSON nests 2 deep

HELP = """\
commands (places are white's points 1..24, bar and off; # starts a comment):
  move SRC DST [white|black]   lift the top checker from SRC and put it on DST: move 13 10, move bar 22, move 6 off
                               (the side is needed only where both sides have checkers on SRC's bar or tray)
  lift PLACE [white|black]     lift a checker into the hand: lift 6, lift bar, lift off black
  put PLACE white|black        put a checker down (also: place): put 5 white, put bar black
  lay PLACE H,H,... [side]     pile the checkers of PLACE as these heights per slot: lay 6 6,0,0,0,0
  set start|ID|JSON            the whole board at once: the variant's start, a gnubg Position ID, or Position JSON
  sleep SECONDS                wait (0..3600)
  press N [SECONDS]            press the board's button N (0..255), held SECONDS (0..10)
  inject [corrupt=R] [drop=R] [duplicate=R] [delay=S]
                               faults on what the board sends (rates 0..1, delay 0..0.5 s; those not named are off)
  replug                       unplug and plug in again: the board comes back on a new path
  help                         this list
  quit                         stop the board"""


class ScriptError(TavliError, ValueError):
    """A line of an emulator script or a watch command that cannot be read or carried out."""


Spot = int | PlaceKind  # a point 1..24, PlaceKind.BAR or PlaceKind.OFF (the side is told apart)
_SPOTS = {"bar": PlaceKind.BAR, "off": PlaceKind.OFF}
_DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?|\.[0-9]{1,9}")


def _shown(text: str, width: int = 40) -> str:
    """``text`` as a message quotes it: stripped, and cut to ``width`` characters."""
    text = text.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def _bad(field: str, value: object, expected: str) -> ScriptError:
    return ScriptError(f"{field}: {value!r} {expected}")


def parse_spot(text: str, field: str = "place") -> Spot:
    """A place as the emulator names it: ``"13"`` (ASCII digits, 1..24), ``"bar"`` or ``"off"``; raises :class:`ScriptError`."""
    word = text.lower()
    if word in _SPOTS:
        return _SPOTS[word]
    if text.isascii() and text.isdigit() and len(text) <= 2 and 1 <= int(text) <= 24:
        return int(text)
    raise _bad(field, text, "must be a point 1..24, bar or off")


def _check_spot(field: str, spot: object) -> None:
    if isinstance(spot, PlaceKind) and spot is not PlaceKind.POINT:
        return
    if type(spot) is not int or not 1 <= spot <= 24:
        raise _bad(field, spot, "must be a point 1..24, PlaceKind.BAR or PlaceKind.OFF")


def _check_side(field: str, side: object, *, optional: bool) -> None:
    if not (isinstance(side, Side) or (optional and side is None)):
        raise _bad(field, side, "must be white or black")


def _side(text: str, field: str = "side") -> Side:
    try:
        return Side(text.lower())
    except ValueError:
        raise _bad(field, text, "must be white or black") from None


def _number(field: str, text: str, high: float) -> float:
    """A decimal written in ASCII digits (no sign, no exponent), 0..``high``."""
    if not _DECIMAL.fullmatch(text) or float(text) > high:
        raise _bad(field, text, f"must be a number 0..{high:g}")
    return float(text)


def _check_number(field: str, value: object, high: float) -> None:
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value <= high:
        raise _bad(field, value, f"must be a number 0..{high:g}")


def _fmt(value: float) -> str:
    """A number as :func:`_number` reads it back: ASCII digits, no exponent."""
    return f"{value:.9f}".rstrip("0").rstrip(".") or "0"


def _spot_text(spot: Spot) -> str:
    return str(spot)


def _side_suffix(side: Side | None) -> str:
    return "" if side is None else f" {side.value}"


# ------------------------------------------------------------------ the commands


@dataclass(frozen=True, slots=True)
class MoveChecker:
    """``move SRC DST [side]``: lift the top checker of ``src`` and put it on ``dst``.

    ``side`` names whose checker, on a bar or tray both sides use; a point's checker says its own.
    """

    src: Spot
    dst: Spot
    side: Side | None = None

    def __post_init__(self) -> None:
        _check_spot("src", self.src)
        _check_spot("dst", self.dst)
        _check_side("side", self.side, optional=True)
        if self.side is not None and isinstance(self.src, int):
            raise _bad("side", self.side.value, f"is given only from the bar or off; point {self.src} has its own")

    def __str__(self) -> str:
        return f"move {_spot_text(self.src)} {_spot_text(self.dst)}{_side_suffix(self.side)}"


@dataclass(frozen=True, slots=True)
class LiftChecker:
    """``lift PLACE [side]``: lift the top checker of ``at`` into the hand."""

    at: Spot
    side: Side | None = None

    def __post_init__(self) -> None:
        _check_spot("place", self.at)
        _check_side("side", self.side, optional=True)
        if self.side is not None and isinstance(self.at, int):
            raise _bad("side", self.side.value, f"is given only for the bar or off; point {self.at} has its own")

    def __str__(self) -> str:
        return f"lift {_spot_text(self.at)}{_side_suffix(self.side)}"


@dataclass(frozen=True, slots=True)
class PutChecker:
    """``put PLACE side``: put a checker of ``side`` down on ``at`` (from the hand)."""

    at: Spot
    side: Side

    def __post_init__(self) -> None:
        _check_spot("place", self.at)
        _check_side("side", self.side, optional=False)

    def __str__(self) -> str:
        return f"put {_spot_text(self.at)} {self.side.value}"


@dataclass(frozen=True, slots=True)
class LayCheckers:
    """``lay PLACE H,H,... [side]``: the checkers of ``at`` piled as ``heights`` per slot (``side`` for a bar or tray)."""

    at: Spot
    heights: tuple[int, ...]
    side: Side | None = None

    def __post_init__(self) -> None:
        _check_spot("place", self.at)
        _check_side("side", self.side, optional=isinstance(self.at, int))
        if self.side is not None and isinstance(self.at, int):
            raise _bad("side", self.side.value, f"is given only for the bar or off; point {self.at} has its own")
        if (
            not isinstance(self.heights, tuple)
            or not 1 <= len(self.heights) <= 16
            or any(type(h) is not int or not 0 <= h <= 15 for h in self.heights)
        ):
            raise _bad("heights", self.heights, "must be 1..16 heights of 0..15 checkers")

    def __str__(self) -> str:
        return f"lay {_spot_text(self.at)} {','.join(map(str, self.heights))}{_side_suffix(self.side)}"


@dataclass(frozen=True, slots=True)
class SetBoard:
    """``set JSON``: every checker of ``position`` on the board at once (also ``set start`` and ``set ID``)."""

    position: Position

    def __post_init__(self) -> None:
        if not isinstance(self.position, Position):
            raise _bad("position", self.position, "must be a Position")

    def __str__(self) -> str:
        return f"set {self.position.to_json()}"


@dataclass(frozen=True, slots=True)
class Sleep:
    """``sleep SECONDS``: wait before the next command."""

    seconds: float

    def __post_init__(self) -> None:
        _check_number("seconds", self.seconds, MAX_SLEEP_S)

    def __str__(self) -> str:
        return f"sleep {_fmt(self.seconds)}"


@dataclass(frozen=True, slots=True)
class PressButton:
    """``press N [SECONDS]``: press the board's button ``button``, held ``hold_s``."""

    button: int
    hold_s: float = 0.0

    def __post_init__(self) -> None:
        if type(self.button) is not int or not 0 <= self.button <= 255:
            raise _bad("button", self.button, "must be 0..255")
        _check_number("hold", self.hold_s, MAX_HOLD_S)

    def __str__(self) -> str:
        return f"press {self.button}" + (f" {_fmt(self.hold_s)}" if self.hold_s else "")


@dataclass(frozen=True, slots=True)
class InjectFaults:
    """``inject corrupt=R drop=R duplicate=R delay=S``: faults on the bytes the board sends (those not named are off)."""

    corrupt: float = 0.0
    drop: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0

    def __post_init__(self) -> None:
        for name in ("corrupt", "drop", "duplicate"):
            _check_number(name, getattr(self, name), 1.0)
        _check_number("delay", self.delay, MAX_DELAY_S)

    def __str__(self) -> str:
        named = [
            f"{name}={_fmt(getattr(self, name))}"
            for name in ("corrupt", "drop", "duplicate", "delay")
            if getattr(self, name)
        ]
        return " ".join(["inject", *named])


@dataclass(frozen=True, slots=True)
class Replug:
    """``replug``: unplug the board and plug it in again; it comes back on a new path."""

    def __str__(self) -> str:
        return "replug"


@dataclass(frozen=True, slots=True)
class Help:
    """``help``: the list of commands."""

    def __str__(self) -> str:
        return "help"


@dataclass(frozen=True, slots=True)
class Quit:
    """``quit``: stop the board."""

    def __str__(self) -> str:
        return "quit"


Command = (
    MoveChecker
    | LiftChecker
    | PutChecker
    | LayCheckers
    | SetBoard
    | Sleep
    | PressButton
    | InjectFaults
    | Replug
    | Help
    | Quit
)

# ------------------------------------------------------------------ parsing


def _json_depth(text: str) -> int:
    """How deep the brackets of ``text`` nest, outside its strings."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _position(text: str, variant: Variant) -> Position:
    """``start``, a gnubg Position ID or Position JSON, for ``set``."""
    if text.lower() == "start":
        return Position.start(variant)
    try:
        if text.startswith("{"):
            if _json_depth(text) > MAX_JSON_DEPTH:
                raise _bad("position", _shown(text), f"nests deeper than {MAX_JSON_DEPTH}")
            return Position.from_json(text, variant)
        if len(text) > 20:
            raise _bad("position", _shown(text), "is neither start, a gnubg Position ID nor Position JSON")
        return position_from_id(text, variant)
    except ScriptError:
        raise
    except InvalidPositionError as exc:  # its message names the field
        raise ScriptError(str(exc)) from None
    except (ValueError, RecursionError) as exc:  # InvalidIdError, a bare int() of a pinned key
        raise ScriptError(f"position: {exc}") from None


def _usage(cmd: str, usage: str) -> ScriptError:
    return ScriptError(f"{cmd}: takes {usage}")


def parse_command(line: str, variant: Variant | str = "backgammon") -> Command | None:
    """The command written on ``line``, or None for a blank line or a comment.

    ``variant`` is the board's game, for ``set start`` and ``set ID``. Raises
    :class:`ScriptError` naming the field and the value for anything else.
    """
    if len(line) > MAX_LINE:
        raise _bad("line", _shown(line), f"is longer than {MAX_LINE} characters")
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    cmd, rest = word.lower(), rest.strip()
    args = rest.split()
    if cmd == "move":
        if len(args) not in (2, 3):
            raise _usage(cmd, "SRC DST [white|black]: move 13 10, move bar 22 black")
        side = _side(args[2]) if len(args) == 3 else None
        return MoveChecker(parse_spot(args[0], "src"), parse_spot(args[1], "dst"), side)
    if cmd == "lift":
        if len(args) not in (1, 2):
            raise _usage(cmd, "PLACE [white|black]: lift 6, lift bar black")
        return LiftChecker(parse_spot(args[0]), _side(args[1]) if len(args) == 2 else None)
    if cmd in ("put", "place"):
        if len(args) != 2:
            raise _usage(cmd, "PLACE white|black: put 5 white")
        return PutChecker(parse_spot(args[0]), _side(args[1]))
    if cmd == "lay":
        if len(args) not in (2, 3):
            raise _usage(cmd, "PLACE H,H,... [white|black]: lay 6 6,0,0,0,0")
        parts = args[1].split(",")
        if not all(p.isascii() and p.isdigit() and len(p) <= 2 for p in parts):
            raise _bad("heights", args[1], "must be heights 0..15 parted by commas")
        at = parse_spot(args[0])
        side = _side(args[2]) if len(args) == 3 else None
        if side is None and not isinstance(at, int):
            raise _bad("side", None, f"must be named for {at}: white or black")
        return LayCheckers(at, tuple(int(p) for p in parts), side)
    if cmd == "set":
        if not rest:
            raise _usage(cmd, "start, a gnubg Position ID or Position JSON")
        v = find_variant(variant) if isinstance(variant, str) else variant
        return SetBoard(_position(rest, v))
    if cmd == "sleep":
        if len(args) != 1:
            raise _usage(cmd, "SECONDS: sleep 0.5")
        return Sleep(_number("seconds", args[0], MAX_SLEEP_S))
    if cmd == "press":
        if len(args) not in (1, 2):
            raise _usage(cmd, "N [SECONDS]: press 0, press 1 2.5")
        if not (args[0].isascii() and args[0].isdigit() and len(args[0]) <= 3 and int(args[0]) <= 255):
            raise _bad("button", args[0], "must be 0..255")
        hold = _number("hold", args[1], MAX_HOLD_S) if len(args) == 2 else 0.0
        return PressButton(int(args[0]), hold)
    if cmd == "inject":
        faults: dict[str, float] = {}
        for arg in args:
            key, eq, value = arg.partition("=")
            key = key.lower()
            if not eq or key not in ("corrupt", "drop", "duplicate", "delay"):
                raise _bad("fault", arg, "must be corrupt=R, drop=R, duplicate=R or delay=S")
            if key in faults:
                raise _bad(key, arg, "is named twice")
            faults[key] = _number(key, value, MAX_DELAY_S if key == "delay" else 1.0)
        return InjectFaults(**faults)
    bare = {"replug": Replug, "help": Help, "quit": Quit, "exit": Quit}
    if cmd in bare:
        if args:
            raise _usage(cmd, "nothing more")
        return bare[cmd]()
    raise _bad("command", word, "is not one of move, lift, put, lay, set, sleep, press, inject, replug, help, quit")


# ------------------------------------------------------------------ carrying out


def _emulator_place(spot: Spot) -> int | str:
    return spot if isinstance(spot, int) else spot.value


def run_command(
    emulator: BoardEmulator,
    command: Command,
    out: TextIO,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Carry out ``command`` on a started ``emulator``; ``replug`` and ``help`` print to ``out``; ``quit`` does nothing.

    Raises :class:`ScriptError`, and the board is as before, for a command that cannot be
    done there (no checker to lift, a bar both sides use and no side named, a heap that
    does not fit the place).
    """
    try:
        if isinstance(command, MoveChecker):
            emulator.move(_emulator_place(command.src), _emulator_place(command.dst), command.side)
        elif isinstance(command, LiftChecker):
            emulator.lift(_emulator_place(command.at), command.side)
        elif isinstance(command, PutChecker):
            emulator.place(_emulator_place(command.at), command.side)
        elif isinstance(command, LayCheckers):
            emulator.lay(_emulator_place(command.at), command.heights, command.side)
        elif isinstance(command, SetBoard):
            emulator.set_position(command.position)
        elif isinstance(command, Sleep):
            sleep(command.seconds)
        elif isinstance(command, PressButton):
            emulator.press_button(command.button, command.hold_s)
        elif isinstance(command, InjectFaults):
            emulator.inject(command.corrupt, command.drop, command.duplicate, command.delay)
        elif isinstance(command, Replug):
            print(f"replugged: {emulator.replug()}", file=out, flush=True)
        elif isinstance(command, Help):
            print(HELP, file=out, flush=True)
    except ScriptError:
        raise
    except ValueError as exc:
        raise ScriptError(str(exc)) from None


def run_line(emulator: BoardEmulator, line: str, out: TextIO, variant: Variant | str = "backgammon") -> Command | None:
    """Parse ``line`` and carry it out on ``emulator``; return the command (None for a blank line).

    Raises :class:`ScriptError` quoting the line, then naming the field and the value.
    """
    try:
        command = parse_command(line, variant)
        if command is not None:
            run_command(emulator, command, out)
    except ScriptError as exc:
        reason = " ".join(str(exc).split())
        reason = reason if len(reason) <= 200 else reason[:197] + "..."
        raise ScriptError(f"{_shown(line, 80)!r}: {reason}") from None
    return command
