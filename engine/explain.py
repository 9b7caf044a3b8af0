"""The teacher's explanations: the one idea behind a play, and a verdict on the play made.

Owns :func:`idea` (a hit, a pin, the race, a point made and the block it grows, an
escape or a bear-off: the first of them, in that order, that comparing the positions
before and after a play can say for a beginner), :func:`judge` with its
:class:`Verdict` (the best play, its idea, and what the play made gave up, in the
evaluator's own unit) and :func:`contact` (whether the sides can still meet). Reads the
rules through ``board_rules``' public API only. The scores come from
:func:`engine.evaluate.rank_plays`.
"""

from __future__ import annotations

from dataclasses import dataclass

from board_rules import Place, Play, Position, Roll, Side, Variant
from engine.evaluate import RankedPlay, first_legs, rank_plays

EQUITY_SOURCES = ("gnubg", "learned")
"""Sources whose scores are cubeless equity for the mover (points per game)."""

_DIGITS = {"equity": 3, "heuristic": 1}
"""Decimals a loss is said to; a loss that rounds to zero is the best play's."""


# =============================================================================== the idea


def _holds(variant: Variant, n: int) -> bool:
    """Whether ``n`` checkers hold a point (one does in the blocking games)."""
    return n >= (1 if variant.blocks else 2)


def _own(position: Position, side: Side, w: int) -> int:
    return position.variant.own_point(side, w)


def _points(numbers: list[int]) -> str:
    """``"your 7 point"``, ``"your 4 and 5 points"``, ``"your 4, 5 and 7 points"``."""
    words = [str(n) for n in sorted(numbers)]
    if len(words) == 1:
        return f"your {words[0]} point"
    return f"your {', '.join(words[:-1])} and {words[-1]} points"


def _label(position: Position, side: Side, w: int) -> int:
    """White's point ``w`` as ``side`` names it (:meth:`board_rules.Place.label`)."""
    return int(Place.point(w).label(side, position.variant))


def _reach(position: Position, side: Side) -> set[int]:
    """White's numbers of every point ``side``'s checkers still stand on or will pass."""
    v = position.variant
    i = 0 if side is Side.WHITE else 1
    if position.bar[i]:
        return set(range(1, 25))
    out: set[int] = set()
    for w in range(1, 25):
        if position.count(side, w) or position.pinned[w - 1] == side.sign:
            out.update(v.white_point(side, k) for k in range(1, v.own_point(side, w) + 1))
    return out


def contact(position: Position) -> bool:
    """Whether the two sides can still meet: some point one side stands on or will pass, the other does too."""
    return bool(_reach(position, Side.WHITE) & _reach(position, Side.BLACK))


def _longest_block(position: Position, side: Side) -> tuple[int, int]:
    """The longest run of points ``side`` holds, as (length, its lowest own point number)."""
    v = position.variant
    best = (0, 0)
    run = 0
    for own in range(1, 25):
        if _holds(v, position.count(side, v.white_point(side, own))):
            run += 1
            if run > best[0]:
                best = (run, own - run + 1)
        else:
            run = 0
    return best


def _behind(position: Position, side: Side) -> tuple[int, int]:
    """``side``'s checkers still to pass an opposing checker, and those in the opponent's home board
    or on the bar (opposite-direction games: each side numbers the other's home 19..24)."""
    other = side.other
    i = 0 if side is Side.WHITE else 1
    opp = [
        _own(position, side, w)
        for w in range(1, 25)
        if position.count(other, w) or position.pinned[w - 1] == other.sign
    ]
    rearmost = 0 if position.bar[1 - i] or not opp else min(opp)
    behind = back = position.bar[i]
    for w in range(1, 25):
        n = position.count(side, w)
        own = _own(position, side, w)
        behind += n if own > rearmost else 0
        back += n if own >= 19 else 0
    return behind, back


def idea(before: Position, after: Position) -> str | None:
    """The one idea behind the play from ``before`` to ``after``, said to its mover; None when none can be said.

    In this order, the first that holds: a hit (variants that hit), a pin (plakoto), the
    race (no contact left: bearing off, or moving pips), a point newly held (two checkers,
    or one in the blocking games; and the block it grows, three or more points in a row), a
    back checker escaped (opposite-direction games), checkers borne off. Points are named
    in the mover's numbering, as the referee's calls name them.
    """
    v = before.variant
    side, other = before.turn, before.turn.other
    i = 0 if side is Side.WHITE else 1
    if before == after:
        return None

    if v.hits and after.bar[1 - i] > before.bar[1 - i]:
        hit = [_label(before, side, w) for w in range(1, 25) if before.count(other, w) and not after.count(other, w)]
        if len(hit) == 1:
            return f"it hits: the checker on {_points(hit)} goes to the bar"
        return f"it hits: the checkers on {_points(hit)} go to the bar"

    if v.pins:
        pinned = [w for w in range(1, 25) if after.pinned[w - 1] == other.sign and before.pinned[w - 1] != other.sign]
        if pinned:
            where = _points([_label(before, side, w) for w in pinned])
            if any(_own(before, other, w) == 24 for w in pinned):
                return f"it pins the opponent's mother, their last checker on their start ({where})"
            if len(pinned) > 1:
                return f"it pins the opponent's checkers on {where}: they cannot move until you leave"
            return f"it pins the opponent's checker on {where}: it cannot move until you leave"

    off = after.off[i] - before.off[i]
    bears = f"it bears off {'a checker' if off == 1 else f'{off} checkers'}"
    if not contact(after):
        if off:
            return bears
        return "it breaks contact: it's a race now: move pips" if contact(before) else "it's a race now: move pips"

    made = [w for w in range(1, 25) if _holds(v, after.count(side, w)) and not _holds(v, before.count(side, w))]
    if made:
        said = f"it makes {_points([_label(before, side, w) for w in made])}"
        length, low = _longest_block(after, side)
        if length >= 3 and length > _longest_block(before, side)[0]:
            kind = "a prime" if length >= 6 else "a block"
            said += f": {kind} of {length} points in a row, your {low} to {low + length - 1}"
        elif v.blocks and any(after.count(side, w) == 1 for w in made):
            said += " (in this game one checker holds a point)"
        return said

    if v.geometry == "opposite":
        (behind_before, back_before), (behind_after, back_after) = _behind(before, side), _behind(after, side)
        if behind_after < behind_before:
            n = behind_before - behind_after
            return f"it runs {'a back checker' if n == 1 else f'{n} back checkers'} past all the opponent's checkers"
        if back_after < back_before:
            return "it brings a back checker out of the opponent's home board"

    if off:
        return bears
    return None


# =============================================================================== the verdict


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the teacher says of one roll: the best play and, when one was made, what it gave up.

    ``score`` is the best play's, ``source`` the evaluator's (:class:`engine.evaluate.RankedPlay`:
    ``"gnubg"`` and ``"learned"`` score cubeless equity for the mover, ``"heuristic"`` its own
    points). ``plays`` is how many plays were compared. When ``played_after`` is given,
    ``played`` and ``played_score`` are its play and score, ``loss`` is the best score less
    it (never negative) and ``rank`` its place among the plays (ties share one); all four
    are None when the play made was not among those compared (its cost is then not known).
    """

    best: Play
    best_after: Position
    score: float
    source: str
    idea: str | None
    plays: int
    played_after: Position | None = None
    played: Play | None = None
    played_score: float | None = None
    loss: float | None = None
    rank: int | None = None

    def __post_init__(self) -> None:
        if self.loss is not None and self.loss < 0:
            raise ValueError(f"loss: {self.loss!r}: the best play's score less the play made's is never negative")
        if self.plays < 1:
            raise ValueError(f"plays: {self.plays!r}: at least one play (the empty one) is compared")

    @property
    def unit(self) -> str:
        """``"equity"`` (cubeless, points per game) or ``"heuristic"`` (the heuristic's own points)."""
        return "equity" if self.source in EQUITY_SOURCES else "heuristic"

    @property
    def forced(self) -> bool:
        """Whether there was only one play (or none)."""
        return self.plays <= 1

    @property
    def played_best(self) -> bool | None:
        """Whether the play made was as good as the best, to the precision the loss is said to; None if not known."""
        if self.loss is None:
            return None
        return round(self.loss, _DIGITS[self.unit]) == 0

    def best_line(self) -> str:
        """``"best play: 13/7 8/7; it makes your 7 point"``, or ``"no legal play"``."""
        if not self.best:
            return "no legal play"
        return f"best play: {self.best}" + (f"; {self.idea}" if self.idea else "")

    def played_line(self, who: str = "your") -> str | None:
        """``"your play 24/18 13/12 gave up 0.084 in equity (3rd of 16)"``; None when no play was judged."""
        if self.played_after is None:
            return None
        if self.loss is None:
            return f"{who} play was not among the {self.plays} plays compared: what it gave up is not known"
        if self.played_best:
            return f"{who} play was the best"
        if self.unit == "equity":
            amount = f"{self.loss:.3f} in equity"
        else:
            amount = f"{self.loss:.1f} points of the heuristic"
        return f"{who} play {self.played} gave up {amount} ({_ordinal(self.rank)} of {self.plays})"

    def lines(self) -> list[str]:
        """The best play with its idea, then what the play made gave up (when one was judged)."""
        played = self.played_line()
        return [self.best_line()] + ([played] if played else [])

    def text(self) -> str:
        return "\n".join(self.lines())


def judge(
    position: Position,
    roll: Roll,
    played_after: Position | None = None,
    *,
    by: str | None = None,
    ranked: list[RankedPlay] | None = None,
) -> Verdict:
    """The teacher's verdict on ``roll`` from ``position``: the best play, its idea and, when
    ``played_after`` (the position the mover's play left) is given, what that play gave up.

    Plays are matched by resulting position among :func:`engine.evaluate.rank_plays`'s.
    ``by`` picks the evaluator (:data:`engine.evaluate.SOURCES`). ``ranked``: where the caller
    already holds ``rank_plays(position, roll, by=by, include=played_after)`` in full, that list
    (not ranked again). Raises what ``rank_plays`` raises (:class:`board_rules.InvalidRollError`
    for bad dice, ValueError for a bad ``by``).
    """
    if ranked is None:
        ranked = rank_plays(position, roll, by=by, include=played_after)
    top = ranked[0]
    fields: dict = {}
    if played_after is not None:
        fields["played_after"] = played_after
        mine = next((r for r in ranked if r.position == played_after), None)
        if mine is not None:
            fields.update(
                played=mine.play,
                played_score=mine.score,
                loss=max(0.0, top.score - mine.score),
                rank=1 + sum(1 for r in ranked if (r.ply, r.score) > (mine.ply, mine.score)),
            )
    return Verdict(
        best=top.play,
        best_after=top.position,
        score=top.score,
        source=top.source,
        idea=idea(position, top.position) if top.play else None,
        plays=len(first_legs(ranked)),
        **fields,
    )
