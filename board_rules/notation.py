"""Rolls, checker moves and plays, with gnubg's notation.

Owns :class:`Roll`, :class:`CheckerMove` and :class:`Play` and their text forms.
Imports only :mod:`board_rules.errors`; knows nothing of positions or variants.

Points in a :class:`CheckerMove` are in the *mover's own* numbering, as gnubg
writes them: 25 is the bar (or nothing, in variants without one) and 0 is off.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from board_rules.errors import InvalidMoveTextError, InvalidRollError

BAR = 25
OFF = 0


@dataclass(frozen=True, slots=True)
class Roll:
    """The two dice thrown for a turn.

    >>> Roll.parse("6-5")
    Roll(d1=6, d2=5)
    >>> str(Roll(3, 3)), Roll(3, 3).is_double
    ('3-3', True)
    """

    d1: int
    d2: int

    def __post_init__(self) -> None:
        for name in ("d1", "d2"):
            value = getattr(self, name)
            if type(value) is not int or not 1 <= value <= 6:
                raise InvalidRollError(f"die {name} must be an integer 1..6, not {value!r}")

    @property
    def is_double(self) -> bool:
        return self.d1 == self.d2

    @property
    def high(self) -> int:
        return max(self.d1, self.d2)

    @property
    def low(self) -> int:
        return min(self.d1, self.d2)

    @classmethod
    def parse(cls, text: str) -> Roll:
        """``"6-5"``, ``"65"`` or ``"6 5"`` to a roll; raises :class:`InvalidRollError`."""
        m = re.fullmatch(r"\s*(\d)\s*[-, ]?\s*(\d)\s*", str(text))
        if not m:
            raise InvalidRollError(f"a roll is two dice such as '6-5', not {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    @classmethod
    def from_values(cls, values: object) -> Roll:
        """A roll from a JSON-like pair ``[d1, d2]``; raises :class:`InvalidRollError`."""
        if not isinstance(values, (list, tuple)) or len(values) != 2:
            raise InvalidRollError(f"dice must be a pair [d1, d2], not {values!r}")
        return cls(values[0], values[1])

    def __str__(self) -> str:
        return f"{self.d1}-{self.d2}"


@dataclass(frozen=True, slots=True, order=True)
class CheckerMove:
    """One checker going from ``src`` to ``dst`` in the mover's numbering.

    ``src`` 25 is the bar, ``dst`` 0 is off; ``hit`` marks a hit (or a pin, in plakoto)
    on ``dst``. A move of several pips without a hit on the way may stand for several
    dice (gnubg writes ``24/13`` for a 6 and a 5 played by one checker).

    >>> CheckerMove.parse("bar/22*")
    CheckerMove(src=25, dst=22, hit=True)
    >>> str(CheckerMove(6, 0))
    '6/off'
    """

    src: int
    dst: int
    hit: bool = False

    def __post_init__(self) -> None:
        if type(self.src) is not int or not 1 <= self.src <= 25:
            raise InvalidMoveTextError(f"a checker move starts on 1..24 or the bar (25), not {self.src!r}")
        if type(self.dst) is not int or not 0 <= self.dst <= 24:
            raise InvalidMoveTextError(f"a checker move ends on 1..24 or off (0), not {self.dst!r}")
        if self.dst >= self.src:
            raise InvalidMoveTextError(f"a checker moves towards its home: {self.src}/{self.dst} goes backwards")
        if self.hit and self.dst == OFF:
            raise InvalidMoveTextError("a checker borne off cannot hit")

    @property
    def pips(self) -> int:
        return self.src - self.dst

    @classmethod
    def parse(cls, text: str) -> CheckerMove:
        """``"13/11*"``, ``"bar/22"``, ``"6/off"`` to a move; raises :class:`InvalidMoveTextError`."""
        moves = _parse_chain(text)
        if len(moves) != 1:
            raise InvalidMoveTextError(f"expected one checker move like '13/11', not {text!r}")
        return moves[0]

    def __str__(self) -> str:
        return f"{_point_text(self.src)}/{_point_text(self.dst)}{'*' if self.hit else ''}"


def _point_text(p: int) -> str:
    return "bar" if p == BAR else "off" if p == OFF else str(p)


def _parse_point(text: str, whole: str) -> int:
    t = text.strip().lower()
    if t == "bar":
        return BAR
    if t == "off":
        return OFF
    if t.isdigit() and 0 <= int(t) <= 25:
        return int(t)
    raise InvalidMoveTextError(f"{text!r} is not a point (1..24, bar or off) in {whole!r}")


def _parse_chain(text: str) -> list[CheckerMove]:
    """``"24/18*/13"`` to its checker moves (one per hop)."""
    parts = str(text).strip().split("/")
    if len(parts) < 2:
        raise InvalidMoveTextError(f"a checker move looks like '13/11', not {text!r}")
    points: list[tuple[int, bool]] = []
    for part in parts:
        part = part.strip()
        hit = part.endswith("*")
        points.append((_parse_point(part.rstrip("*"), text), hit))
    if points[0][1]:
        raise InvalidMoveTextError(f"a hit mark belongs after a landing point, not the start, in {text!r}")
    moves = []
    for (a, _), (b, hit) in zip(points, points[1:]):
        moves.append(CheckerMove(a, b, hit))
    return moves


_GROUP = re.compile(r"^(?P<chain>[^()]+?)(?:\((?P<n>\d+)\))?$")


def canonical_moves(moves) -> tuple[CheckerMove, ...]:
    """The one canonical order and grouping of a play's checker moves.

    Hops of one checker through a point where nothing was hit are merged (``24/18 18/13``
    becomes ``24/13``), then moves are sorted from the back: two orders of the same
    checker moves give the same tuple.

    >>> canonical_moves([CheckerMove(8, 5), CheckerMove(13, 8)])
    (CheckerMove(src=13, dst=5, hit=False),)
    """
    pending = sorted(moves, key=lambda m: (-m.src, -m.dst, m.hit))
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(pending):
            if a.hit or a.dst == OFF:
                continue
            for j, b in enumerate(pending):
                if j != i and b.src == a.dst:
                    rest = [m for k, m in enumerate(pending) if k not in (i, j)]
                    pending = sorted(rest + [CheckerMove(a.src, b.dst, b.hit)], key=lambda m: (-m.src, -m.dst, m.hit))
                    merged = True
                    break
            if merged:
                break
    return tuple(pending)


def format_moves(moves: tuple[CheckerMove, ...]) -> str:
    """gnubg text for canonical moves: chains through hits, ``(n)`` for repeats."""
    remaining = list(moves)
    chains: list[str] = []
    while remaining:
        first = remaining.pop(0)
        hops = [first]
        while hops[-1].hit:
            nxt = next((m for m in remaining if m.src == hops[-1].dst), None)
            if nxt is None:
                break
            remaining.remove(nxt)
            hops.append(nxt)
        text = _point_text(hops[0].src) + "".join(f"/{_point_text(h.dst)}{'*' if h.hit else ''}" for h in hops)
        chains.append(text)
    counts = Counter(chains)
    out: list[str] = []
    for chain in chains:
        if chain in counts:
            n = counts.pop(chain)
            out.append(chain if n == 1 else f"{chain}({n})")
    return " ".join(out)


def parse_moves(text: str) -> tuple[CheckerMove, ...]:
    """gnubg text of one side's checker moves to canonical moves."""
    moves: list[CheckerMove] = []
    for token in str(text).split():
        m = _GROUP.match(token)
        if not m:
            raise InvalidMoveTextError(f"cannot read {token!r} in {text!r}")
        n = int(m.group("n") or 1)
        if not 1 <= n <= 15:  # up to 4 in a double, more in gul-bara's escalated doubles
            raise InvalidMoveTextError(f"a repeat count is 1..15, not {n} in {text!r}")
        moves.extend(_parse_chain(m.group("chain")) * n)
    return canonical_moves(moves)


@dataclass(frozen=True, slots=True)
class Play:
    """The whole turn for one roll: the mover's checker moves, in canonical form.

    ``then`` holds further legs played from the same roll by alternating sides, which
    only gul-bara's passed numbers produce: ``then[0]`` by the opponent, ``then[1]`` by
    the mover again, and so on, each in its own side's numbering. Its text separates
    legs with ``" | "``. The empty play (no legal move, the turn passes) is ``""``.

    >>> p = Play.parse("13/11 24/18")
    >>> str(p)
    '24/18 13/11'
    >>> Play.parse(str(p)) == p
    True
    >>> str(Play.parse("8/5 8/5 6/3(2)"))
    '8/5(2) 6/3(2)'
    """

    moves: tuple[CheckerMove, ...] = ()
    then: tuple[tuple[CheckerMove, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "moves", canonical_moves(self.moves))
        object.__setattr__(self, "then", tuple(canonical_moves(leg) for leg in self.then))

    @classmethod
    def parse(cls, text: str) -> Play:
        """gnubg text to a play; raises :class:`InvalidMoveTextError`."""
        legs = str(text).split("|")
        first = parse_moves(legs[0])
        return cls(first, tuple(parse_moves(leg) for leg in legs[1:]))

    @property
    def legs(self) -> tuple[tuple[CheckerMove, ...], ...]:
        return (self.moves,) + self.then

    def __str__(self) -> str:
        return " | ".join(format_moves(leg) for leg in self.legs)

    def __bool__(self) -> bool:
        return bool(self.moves) or any(self.then)
