"""The keyboard at the table: what each typed line means, and what the table waits for. Pure.

Owns :data:`HELP` (every command, one line each), :func:`waiting` (what the referee waits
for now, in words), :func:`dice` (typed dice, ASCII digits 1..6), :func:`typed_board` (a
board typed in: ``start``, a gnubg Position ID, Position JSON or a file) and :func:`moved`
(one checker moved on a typed board, ``move 13 7``). Errors are :class:`KeyboardError`,
naming what was typed. Imports ``board_rules`` and the referee's record.
"""

from __future__ import annotations

from dataclasses import replace

from board_rules import Position, Side
from board_rules.errors import TavliError
from board_rules.ids import position_from_id
from board_rules.untrusted import parse_json, read_text
from referee.record import Phase

MAX_LINE = 20_000  # a Position JSON is some 300 characters; a longer line is not one
MAX_FILE = 64_000

HELP = (
    ("roll D1 D2", "the dice thrown, typed in (roll 3 5)"),
    ("opening W B", "the opening roll: white's die and black's"),
    ("end", "end the turn (the panel's end-of-turn button)"),
    ("double | take | pass | beaver | raccoon", "the cube"),
    ("resign 1|2|3 [white|black]", "offer to resign a single game, a gammon or a backgammon"),
    ("accept | refuse", "answer a resignation"),
    ("hint", "the best play (teaching mode, --teach)"),
    ("lift P", "a checker lifted from P (a point or bar): where it may land (teaching mode)"),
    ("board start | board ID | board JSON | board FILE", "the board as it stands, typed in (no board or camera)"),
    ("move P Q", "one checker from P to Q on the typed board (white's numbering; bar, off)"),
    ("show", "draw the board"),
    ("score", "the score"),
    ("help", "this list"),
    ("quit", "stop; the journal keeps the match (tavli play --resume JOURNAL)"),
)
COMMANDS = (
    "roll",
    "opening",
    "end",
    "double",
    "take",
    "pass",
    "beaver",
    "raccoon",
    "resign",
    "accept",
    "refuse",
    "hint",
    "lift",
    "board",
    "move",
    "show",
    "score",
    "help",
    "quit",
)


class KeyboardError(TavliError, ValueError):
    """A typed line that cannot be done; the message names what was typed."""


def help_text() -> str:
    width = max(len(u) for u, _ in HELP)
    return "\n".join(f"  {usage:<{width}}  {what}" for usage, what in HELP)


def waiting(flow) -> str:
    """What the table waits for now, in words (with the command that does it when typed)."""
    phase, side = flow.phase, flow.on_roll
    who = side.value if side is not None else ""
    if phase is Phase.SETUP:
        return "set up the board (typed: board start)"
    if phase is Phase.OPENING_ROLL:
        return "each player throws one die for the opening (typed: opening W B)"
    if phase is Phase.ROLL:
        return f"{who} to roll (typed: roll D1 D2), or to double"
    if phase is Phase.PLAY:
        return f"{who} plays {flow.record.roll} (typed: move P Q ..., then end)"
    if phase is Phase.CUBE_ANSWER:
        return "take or pass the double"
    if phase is Phase.RESIGN_ANSWER:
        return "accept or refuse the resignation"
    if phase is Phase.OVER:
        return "the match is over"
    return str(phase)


def number(text: str, what: str, low: int, high: int) -> int:
    """A whole number typed in ASCII digits, ``low``..``high``; raises :class:`KeyboardError` naming ``what``."""
    t = text.strip()
    if not (t.isascii() and t.isdigit() and len(t) <= 3 and low <= int(t) <= high):
        raise KeyboardError(f"{what}: {text!r} is not a number {low}..{high}")
    return int(t)


def dice(text: str, what: str) -> tuple[int, int]:
    """Two dice typed in (``3 5``, ``3-5``, ``35``)."""
    t = text.replace("-", " ").split()
    if len(t) == 1 and len(t[0]) == 2:
        t = list(t[0])
    if len(t) != 2:
        raise KeyboardError(f"{what}: give two dice, e.g. {what} 3 5, not {text!r}")
    return number(t[0], f"{what}: the first die", 1, 6), number(t[1], f"{what}: the second die", 1, 6)


def typed_board(text: str, like: Position | None) -> Position:
    """A board typed in: ``start`` (the game's start), a gnubg Position ID (backgammon boards),
    Position JSON, or the name of a file holding it. ``like`` gives the variant and turn."""
    t = text.strip()
    if not t:
        raise KeyboardError("board: give start, a gnubg Position ID, Position JSON or a file holding it")
    if len(t) > MAX_LINE:
        raise KeyboardError(f"board: a line of {len(t)} characters is no position")
    if like is None:
        raise KeyboardError("board: no game on the table")
    if t == "start":
        return Position.start(like.variant, like.turn)
    if t.startswith("{"):
        return _json(t, like)
    if len(t) == 14 and t.isascii() and " " not in t:
        try:
            return position_from_id(t, like.variant, like.turn)
        except (ValueError, TavliError) as exc:
            raise KeyboardError(f"board: {t!r} is not a gnubg Position ID of this board ({exc})") from None
    try:
        text = read_text(t, "board", KeyboardError, MAX_FILE)
    except KeyboardError as exc:
        raise KeyboardError(f"{exc}; give start, a gnubg Position ID, Position JSON or a file holding it") from None
    return _json(text, like)


def _json(text: str, like: Position) -> Position:
    return Position.from_dict(parse_json(text, "board: not Position JSON", KeyboardError), like.variant)


def _place(text: str, mover: Side) -> tuple[str, int]:
    """("point", n) or ("bar" | "off", side index) as typed in white's numbering."""
    t = text.strip().lower()
    if t in ("bar", "off"):
        return t, 0 if mover is Side.WHITE else 1
    return "point", number(t, "move: the point", 1, 24)


def moved(position: Position, src: str, dst: str, mover: Side) -> Position:
    """``position`` with the top checker of ``src`` put on ``dst`` (points in white's numbering, ``bar``
    and ``off`` the mover's); a lone checker of the other side there goes to its bar, or is pinned
    where the variant pins. Raises :class:`KeyboardError` for a checker that is not there."""
    points, pinned = list(position.points), list(position.pinned)
    bar, off = list(position.bar), list(position.off)
    kind, where = _place(src, mover)
    if kind == "point":
        n = points[where - 1]
        if n == 0:
            raise KeyboardError(f"move: no checker on {where}")
        sign = 1 if n > 0 else -1
        points[where - 1] -= sign
        if pinned[where - 1] and points[where - 1] == 0:  # the pinning checker leaves: the pinned one is free
            points[where - 1], pinned[where - 1] = pinned[where - 1], 0
    else:
        store = bar if kind == "bar" else off
        if not store[where]:
            raise KeyboardError(f"move: no {mover.value} checker on the {kind}")
        store[where] -= 1
        sign = mover.sign
    kind, to = _place(dst, Side.WHITE if sign > 0 else Side.BLACK)
    if kind == "point":
        there = points[to - 1]
        if there * sign < 0 and abs(there) == 1 and not pinned[to - 1]:
            if position.variant.pins:
                pinned[to - 1] = there
                points[to - 1] = sign
            else:
                bar[0 if there > 0 else 1] += 1
                points[to - 1] = sign
        elif there * sign < 0:
            raise KeyboardError(f"move: {to} is held by the other side")
        else:
            points[to - 1] += sign
    else:
        (bar if kind == "bar" else off)[to] += 1
    try:
        return replace(position, points=tuple(points), pinned=tuple(pinned), bar=tuple(bar), off=tuple(off))
    except ValueError as exc:
        raise KeyboardError(f"move: {exc}") from None
