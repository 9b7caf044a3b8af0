"""Is an observed position the result of a legal play, or on the way to one?

Owns :func:`check` (a finished turn) and :class:`TurnTracker` (a turn being made:
whether the board is on the way to some legal play, and where a lifted checker
may land). The referee asks these; it never decides a rule itself. The nearest legal
play of an illegal board is looked for among boards a few checkers away first
(:func:`_repairs`), then among the plays listed. Imports
:mod:`board_rules.moves`, :mod:`board_rules.movegen`, :mod:`board_rules.reach` and :mod:`board_rules.turn`; nothing outside
``board_rules``.

Places are :class:`~board_rules.places.Place`: a point in white's numbering, a side's bar or tray.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from board_rules.errors import IllegalPlayError
from board_rules.movegen import Budget, SearchBudgetExceeded, legal_results, search_side
from board_rules.moves import Board, apply_moves, play_of
from board_rules.notation import Play, Roll
from board_rules.places import PLACES, Place
from board_rules.position import Position
from board_rules.reach import PlayFinder, find_play
from board_rules.side import Side
from board_rules.turn import LazyTurn

# Boards a search for the nearest legal play may visit before it settles for the
# nearest among those found (only escalated gul-bara doubles come near it).
NEAREST_BUDGET = 4_000
ESCALATION_BUDGET = 800  # the same for an escalated gul-bara double, which seldom lists in fewer
# How many plays, found depth-first, it then compares instead.
NEAREST_SAMPLE = 200
# Boards the search of the repaired boards (one side's checkers moved, :func:`_repairs`) may visit in all,
# and how many such boards it tries at most, before the nearest legal play is looked for among every play.
REPAIR_BUDGET = 3_000
REPAIR_MOST = 200
FIRST_REPAIR_BUDGET = 50  # boards for each candidate in the first round (four times more each round)


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


class _DiffCounter:
    """How many places a board differs in from ``want`` (both in one side's view), counted on their keys."""

    __slots__ = ("pins", "me", "opp", "pinned", "ends", "opp_off")

    def __init__(self, want: Board) -> None:
        key = want.key()
        self.pins = want.pins is not None
        self.me = int.from_bytes(key[1:25], "big")
        self.opp = int.from_bytes(key[27:51], "big")
        self.pinned = int.from_bytes(key[53:77], "big") if self.pins else 0
        self.ends = (key[0], key[25], key[26])  # the mover's tray and bar, the opponent's bar
        self.opp_off = want.opp_off

    def count(self, board: Board) -> int:
        return self.count_key(board.key(), board.opp_off)

    def count_key(self, key: bytes, opp_off: int) -> int:
        x = (int.from_bytes(key[1:25], "big") ^ self.me) | (int.from_bytes(key[27:51], "big") ^ self.opp)
        if self.pins:
            x |= int.from_bytes(key[53:77], "big") ^ self.pinned
        n = 24 - x.to_bytes(24, "big").count(0)
        ends = self.ends
        return n + (key[0] != ends[0]) + (key[25] != ends[1]) + (key[26] != ends[2]) + (opp_off != self.opp_off)


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
    finder = PlayFinder(before, roll)
    legs = finder.legs(after)
    if legs is not None:
        return CheckResult(True, play_of(legs), (), _after(before, after))
    if not finder.passes:
        near = _nearest_listed(finder, after)
    elif not before.variant.pins:
        near = _repaired(finder, after)
    else:
        near = None
    return near if near is not None else _nearest(before, roll, after)


def _nearest_listed(finder: PlayFinder, after: Position) -> CheckResult | None:
    """The nearest legal result among every play of a roll that passes nothing, listed as board keys.

    What :func:`_nearest` finds, the first nearest in the order plays are listed, without
    building a board for each; ``None`` when they are too many to list (or the game is over).
    """
    v, side, start = finder.v, finder.side, finder.start
    if start.game_over():
        return None
    try:
        results, _, _ = search_side(v, start.copy(), finder.seqs, finder.head, Budget(NEAREST_BUDGET))
    except SearchBudgetExceeded:
        return None
    counter = _DiffCounter(Board.of(after, side))
    floor = 1 if v.pins else 2  # two valid boards differ in no place or in two (a pin alone differs in one)
    best = None
    for key, (moves, _) in results.items():
        n = counter.count_key(key, start.opp_off)
        if best is None or n < best[0]:
            best = (n, key, moves)
            if n <= floor:
                break
    if best is None:
        return None
    _, key, moves = best
    final = Board.from_key(key, start.pins is not None, start.opp_off)
    diff = _diff(final.white_view(v, side), (after.points, after.pinned, after.bar, after.off))
    before = finder.before
    si = 0 if side is Side.WHITE else 1
    rolls = list(before.rolls)
    rolls[si] += 1
    nearest = final.to_position(before, side, side.other, (rolls[0], rolls[1]))
    return CheckResult(False, play_of((moves,)), _places(diff), nearest)


def _repaired(finder: PlayFinder, after: Position) -> CheckResult | None:
    """The nearest legal result when one is ``after`` with a few checkers of one side moved elsewhere.

    Two boards of 15 checkers a side that differ differ in at least two places, so such a
    legal result is as near as any: no listing of every play is needed. The candidates of
    :func:`_repairs` are searched in rounds, each within a budget of boards that grows
    fourfold a round (a legal one is found in few boards, proving one illegal can take
    many); ``None`` when none is found within :data:`REPAIR_BUDGET` boards in all.
    """
    candidates = list(_repairs(finder, after))
    left = REPAIR_BUDGET
    boards = FIRST_REPAIR_BUDGET
    while candidates and left > 0:
        unsettled = []
        for candidate in candidates:
            given = min(boards, left)
            if given <= 0:
                break
            mine = Budget(given)
            try:
                legs = finder.legs(candidate, mine)
            except SearchBudgetExceeded:
                legs = False
            left -= given - max(mine.left, 0)
            if legs is False:
                unsettled.append(candidate)
            elif legs is not None:
                before = finder.before
                return CheckResult(False, play_of(legs), board_diff(candidate, after), _after(before, candidate))
        candidates = unsettled
        boards *= 4
    return None


def _repairs(finder: PlayFinder, after: Position):
    """Boards of ``after`` with ``k`` checkers of one side moved from one place to another (no pins).

    Only those the roll could give: when no number passes, the mover's pips moved must be
    what its dice can move (exactly, while no checker is borne off) and the opponent's
    checkers are as they were (the blocking games); when numbers pass, one checker of
    either side moves, and the pips of all legs together are those of the first dice. At
    most :data:`REPAIR_MOST`, nearest first.
    """
    v, mover = finder.v, finder.side
    passes = finder.passes and 0 < finder.best < len(finder.seqs[0])
    sums = {sum(seq[: finder.best]) for seq in finder.seqs}
    seq = finder.seqs[0]
    prefixes = {sum(seq[:m]) for m in range(finder.best, len(seq) + 1)}  # pips of all legs together
    views = {}
    for side in (mover, mover.other):
        si = 0 if side is Side.WHITE else 1
        count = [0] * 26  # the side's checkers by own place: 0 off, 1..24 points, 25 bar
        free = [True] * 26  # own places the side may hold: not the opponent's points
        for own in range(1, 25):
            n = after.points[v.white_point(side, own) - 1] * side.sign
            count[own] = max(n, 0)
            free[own] = n >= 0
        count[0], count[25] = after.off[si], after.bar[si]
        free[25] = v.hits
        ref = Board.of(finder.before, side)
        moved = sum(i * (ref.me[i] - count[i]) for i in range(1, 26))  # pips this side has moved
        views[side] = (count, free, ref.me[0], moved)
    bore_off = any(views[x][0][0] != views[x][2] for x in views)
    out = []
    for side in (mover, mover.other):
        if not passes and side is not mover and v.hits:
            continue  # hits change the opponent's checkers: repair the mover's alone
        count, free, off0, moved = views[side]
        others = views[side.other][3]
        for a in range(26):
            for b in range(26):
                if a == b or not count[a] or not free[b]:
                    continue
                for k in range(1, count[a] + 1):
                    now = moved + k * (a - b)
                    if not passes:
                        if side is mover:
                            off = count[0] + (k if b == 0 else -k if a == 0 else 0)
                            if off == off0 and now not in sums:
                                continue
                            if off != off0 and now > max(sums):
                                continue
                        elif now != 0:
                            continue
                    elif now < 0:
                        continue
                    elif not bore_off and a and b and now + others not in prefixes:
                        continue  # the legs together play the first dice of the escalation
                    out.append((k, abs(a - b), side, a, b))
    out.sort(key=lambda c: c[:2])
    for k, _, side, a, b in out[:REPAIR_MOST]:
        si = 0 if side is Side.WHITE else 1
        points, bar, off = list(after.points), list(after.bar), list(after.off)
        for own, n in ((a, -k), (b, k)):
            if own == 0:
                off[si] += n
            elif own == 25:
                bar[si] += n
            else:
                points[v.white_point(side, own) - 1] += n * side.sign
        try:
            yield replace(after, points=tuple(points), bar=(bar[0], bar[1]), off=(off[0], off[1]))
        except ValueError:
            continue  # not a position the rules accept


def _nearest(before: Position, roll: Roll, after: Position) -> CheckResult:
    v = before.variant
    exhaustive = True
    seqs = v.dice_sequences(roll.d1, roll.d2, before.rolls[0 if before.turn is Side.WHITE else 1])
    try:
        results = legal_results(before, roll, budget=NEAREST_BUDGET if len(seqs[0]) <= 4 else ESCALATION_BUDGET)
    except SearchBudgetExceeded:
        # too many plays to compare: settle for those a bounded search finds
        exhaustive = False
        results = _some_results(before, roll)
    # count differing places in each result's own view (cheap), name them for the nearest alone
    wants = {}
    floor = 1 if v.pins else 2  # two valid boards differ in no place or in two (a pin alone differs in one)
    best = None
    for legs, final, final_side in results:
        want = wants.get(final_side)
        if want is None:
            want = wants[final_side] = _DiffCounter(Board.of(after, final_side))
        n = want.count(final)
        if best is None or n < best[0]:
            best = (n, legs, final, final_side)
            if n <= floor:
                break
    assert best is not None  # there is always at least the passed turn
    _, legs, final, final_side = best
    diff = _diff(final.white_view(v, final_side), (after.points, after.pinned, after.bar, after.off))
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
