"""Is an observed position the result of a legal play, or on the way to one?

Owns :func:`check` (a finished turn) and :class:`TurnTracker` (a turn being made:
whether the board is on the way to some legal play, and where a lifted checker
may land). The referee asks these; it never decides a rule itself. Imports
:mod:`board_rules.moves`, :mod:`board_rules.movegen`, :mod:`board_rules.reach` and :mod:`board_rules.turn`; nothing outside
``board_rules``.

Places are :class:`~board_rules.places.Place`: a point in white's numbering, a side's bar or tray.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from board_rules.errors import IllegalPlayError
from board_rules.movegen import SearchBudgetExceeded, legal_results
from board_rules.moves import Board, apply_moves, play_of
from board_rules.notation import Play, Roll
from board_rules.places import PLACES, Place
from board_rules.position import Position
from board_rules.reach import find_play
from board_rules.side import Side
from board_rules.turn import LazyTurn

# Boards a search for the nearest legal play may visit before it settles for the
# nearest among those found (only escalated gul-bara doubles come near it).
NEAREST_BUDGET = 4_000
# How many plays, found depth-first, it then compares instead.
NEAREST_SAMPLE = 200


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on a finished turn.

    ``play`` is the legal play (when ``legal``) or the nearest legal play (when not);
    ``wrong`` lists the places where ``after`` differs from that nearest legal result,
    sorted (points, then the bars, then the trays); ``nearest`` is the legal result
    (``after`` itself, with the turn passed, when ``legal``). ``exhaustive`` is False
    when the plays were too many to compare them all and the nearest is the nearest
    among those searched.
    """

    legal: bool
    play: Play | None
    wrong: tuple[Place, ...] = ()
    nearest: Position | None = None
    exhaustive: bool = True

    def to_dict(self) -> dict:
        return {
            "legal": self.legal,
            "play": None if self.play is None else str(self.play),
            "wrong": [p.to_json() for p in self.wrong],
        }


def board_diff(a: Position, b: Position) -> tuple[Place, ...]:
    """Places where two positions differ (points, pins, each side's bar and tray), sorted; turn and rolls are ignored.

    >>> from board_rules import Position
    >>> s = Position.start("backgammon")
    >>> board_diff(s, s)
    ()
    >>> from dataclasses import replace
    >>> board_diff(s, replace(s, points=(-1,) + s.points[1:], bar=(0, 1)))
    (Place.point(1), Place.bar(Side.BLACK))
    """
    return _places(_diff((a.points, a.pinned, a.bar, a.off), (b.points, b.pinned, b.bar, b.off)))


def _diff(a, b) -> tuple[int, ...]:
    """:func:`board_diff` of two ``(points, pinned, bar, off)`` views, as indices into :data:`PLACES`."""
    out = [i for i in range(24) if a[0][i] != b[0][i] or a[1][i] != b[1][i]]
    for k in (0, 1):
        if a[2][k] != b[2][k]:
            out.append(24 + k)
    for k in (0, 1):
        if a[3][k] != b[3][k]:
            out.append(26 + k)
    return tuple(out)


def _places(indices) -> tuple[Place, ...]:
    return tuple(PLACES[i] for i in indices)


def _after(before: Position, after: Position) -> Position:
    """``after``'s board with the turn passed and the mover's roll counted."""
    si = 0 if before.turn is Side.WHITE else 1
    rolls = list(before.rolls)
    rolls[si] += 1
    return replace(after, turn=before.turn.other, rolls=(rolls[0], rolls[1]))


def check(before: Position, roll: Roll, after: Position) -> CheckResult:
    """Whether ``after`` is the result of a legal play of ``roll`` from ``before``.

    Only the board is compared (points, pins, bar, off): an observation cannot see whose
    turn it is. If no play is legal, the unchanged board is the legal result (the turn
    passes). If ``after`` is not legal, ``wrong`` is the smallest set of locations that
    differ from the nearest legal result, for lighting exactly what is wrong.
    """
    legs = find_play(before, roll, after)
    if legs is not None:
        return CheckResult(True, play_of(legs), (), _after(before, after))
    return _nearest(before, roll, after)


def _nearest(before: Position, roll: Roll, after: Position) -> CheckResult:
    v = before.variant
    exhaustive = True
    try:
        results = legal_results(before, roll, budget=NEAREST_BUDGET)
    except SearchBudgetExceeded:
        # too many plays to compare: settle for those a bounded search finds
        exhaustive = False
        results = _some_results(before, roll)
    want = (after.points, after.pinned, after.bar, after.off)
    best = None
    for legs, final, final_side in results:
        diff = _diff(final.white_view(v, final_side), want)
        if best is None or len(diff) < len(best[0]):
            best = (diff, legs, final, final_side)
            if len(diff) <= 1:
                break
    assert best is not None  # there is always at least the passed turn
    diff, legs, final, final_side = best
    si = 0 if before.turn is Side.WHITE else 1
    rolls = list(before.rolls)
    rolls[si] += 1
    nearest = final.to_position(before, final_side, before.turn.other, (rolls[0], rolls[1]))
    return CheckResult(False, play_of(legs), _places(diff), nearest, exhaustive)


def _some_results(before: Position, roll: Roll):
    """Legal plays found by a bounded search (the first ones of each leg)."""
    from board_rules.reach import sample_results

    return sample_results(before, roll, limit=NEAREST_SAMPLE)


def apply_play(position: Position, roll: Roll, play: Play | str) -> Position:
    """The position after ``play`` (text or :class:`Play`) for ``roll``.

    Raises :class:`IllegalPlayError` if it is not a legal play (naming the nearest one).
    """
    want = Play.parse(play) if isinstance(play, str) else play
    v = position.variant
    side = position.turn
    board = Board.of(position)
    try:
        for i, leg in enumerate(want.legs):
            if i:
                board = board.flipped(v)
                side = side.other
            apply_moves(board, v, leg)
        claimed = board.to_position(position, side, position.turn.other, position.rolls)
    except (IllegalPlayError, ValueError) as exc:
        raise IllegalPlayError(f"{str(want)!r} cannot be played here: {exc}") from None
    verdict = check(position, roll, claimed)
    if not verdict.legal:
        raise IllegalPlayError(
            f"{str(want)!r} is not a legal play for {roll} here; the nearest legal play is {str(verdict.play)!r}"
        )
    return verdict.nearest


def is_legal_result(before: Position, roll: Roll, after: Position) -> bool:
    """Cheaper yes/no form of :func:`check`."""
    return find_play(before, roll, after) is not None


class TurnTracker:
    """Follows a turn while the player makes it, one checker move at a time.

    Built once per roll. :meth:`on_the_way` says whether a player making a legal play
    (in any order) passes through an observed board; :meth:`landing_points` lists where
    a checker lifted from a point may be put down now (one die or several with the same
    checker). Gul-bara's passed numbers are not followed: only the mover's own leg.
    """

    def __init__(self, before: Position, roll: Roll) -> None:
        self.before = before
        self.roll = roll
        self.side = before.turn
        self._turn = LazyTurn(before, roll)

    def on_the_way(self, observed: Position) -> bool:
        """Whether ``observed`` is the start, an intermediate or a final board of some legal play.

        Its checker moves may be made in any order, and a checker it hits may go to the bar
        before the hitter arrives (:mod:`board_rules.turn`).
        """
        return self._turn.on_the_way(observed)

    def is_complete(self, observed: Position) -> bool:
        """Whether ``observed`` is the board of a finished legal play."""
        return self._turn.is_complete(observed) or is_legal_result(self.before, self.roll, observed)

    def landing_points(self, observed: Position, lifted_from: Place) -> tuple[Place, ...]:
        """Where a checker lifted from ``lifted_from`` (a point, or the mover's bar) may land now.

        Empty when ``observed`` is not on the way to a legal play. Includes points reached
        by playing several dice with the same checker, and the mover's tray. Raises
        ``ValueError`` for a tray or the other side's bar.
        """
        if lifted_from.is_point:
            src = self._own(lifted_from.number)
        elif lifted_from == Place.bar(self.side):
            src = 25
        else:
            raise ValueError(f"a checker of {self.side.value} is not lifted from {str(lifted_from)!r}")
        found = self._turn.landing_points(observed, src)
        out = [Place.point(self._own(d)) for d in found if d]
        out.sort()
        if 0 in found:
            out.append(Place.off(self.side))
        return tuple(out)

    def _own(self, n: int) -> int:
        """The mover's own number of white's point ``n`` (and back: the map is its own inverse)."""
        return self.before.variant.own_point(self.side, n)
