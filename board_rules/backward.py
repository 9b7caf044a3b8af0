"""A play's checker moves found backwards from the board it ends on, for the blocking games.

Owns :func:`backward_path`, which :class:`board_rules.reach.Walker` tries first in
fevga, gul-bara and long nardy: walking from the target, last die first, prunes far
sooner than walking forwards when the last dice are the largest (gul-bara's
escalation). Imports :mod:`board_rules.moves` and :mod:`board_rules.variants`;
nothing outside ``board_rules``.
"""

from __future__ import annotations

from board_rules.moves import Board, CheckerMoves
from board_rules.variants import Variant

Moves = tuple[tuple[int, int, bool], ...]


def most_waste(dice, highest: int = 1) -> list[int]:
    """``[w0, w1, ...]``: the most pips ``k`` checkers borne off can waste with some of ``dice``.

    A checker borne off from point ``p`` with die ``d`` wastes ``d - p``, and only when no
    checker stands above ``p``. A checker seen later on point ``highest`` stood there or
    higher, so ``p >= highest``: give the highest point occupied on the board that follows
    these dice (1 when none is) and each die wastes at most ``d - highest``.
    """
    out = [0]
    for d in sorted(dice, reverse=True):
        out.append(out[-1] + max(0, d - highest))
    return out


def highest_point(me) -> int:
    """The highest of the mover's points 1..25 (25 the bar) holding a checker of ``me``; 1 if none."""
    for x in range(25, 1, -1):
        if me[x]:
            return x
    return 1


def backward_path(
    start: Board, target: Board, dice, rules: tuple[Variant, int, int] | None = None, budget=None
) -> Moves | None:
    """A path from ``start`` to ``target`` found backwards, as forward moves, or ``None`` (blocking games).

    Walks from the target, last die first, moving checkers back (and back from off): in
    the blocking games a move back is legal when the move forward is, save the variant's
    own limits (start rule, primes). Without ``rules`` the caller replays the path
    forwards to check those; with ``rules`` (the variant, its head limit, the checkers on
    the head when the turn began) each move back is also checked forwards by
    :meth:`~board_rules.moves.CheckerMoves.try_move`. Without ``rules`` each run of equal dice is
    walked back in one order of its moves only (the lowest point first): the same paths exist, a
    third fewer boards are visited on escalated gul-bara doubles. ``budget`` (a
    :class:`~board_rules.movegen.Budget` of boards) stops a long walk with
    :class:`~board_rules.movegen.SearchBudgetExceeded`.
    """
    opp = start.opp
    if any(opp[i] != target.opp[i] for i in range(1, 25)) or target.me[0] < start.me[0]:
        return None
    n = len(dice)
    left = [sum(dice[:i]) for i in range(n + 1)]  # pips of the first i dice
    me = list(target.me)
    forward = None
    if rules is not None:
        # a forward search on this very list: try_move sees the board before each move back
        forward = CheckerMoves(rules[0], Board(me, list(opp), None, start.opp_off), rules[1])
        forward.head_start = rules[2]
    off0 = start.me[0]
    # crossing[x]: checkers that the first dice must carry from x or behind to below x
    crossing = [0] * 26
    scum = cum = 0
    for x in range(25, 0, -1):
        scum += start.me[x]
        cum += me[x]
        crossing[x] = scum - cum
    need = [sum(crossing)]
    # (i, board) -> the lowest point a move back of the same run of equal dice could still start from there when the
    # walk left it without a path; a later visit with that bound or a higher one is as hopeless
    seen: dict = {}
    # Without the variant's own limits a run of equal dice needs one order of its moves back: from the lowest
    # point up (a move back from q only adds a checker above q, so every move back from below q can come first).
    ordered = rules is None
    path: list[tuple[int, int, bool]] = []

    wastes: dict = {}  # (h, i): most_waste of the first i dice when the board after them has nothing above h

    def waste(h: int, i: int) -> list[int]:
        w = wastes.get((h, i))
        if w is None:
            w = wastes[h, i] = most_waste(dice[:i], h)
        return w

    def feasible(i: int) -> bool:
        # each die crosses a point at most once; pips are exact until a checker is
        # borne off, which wastes less than its die
        off = me[0] - off0
        if off > i or min(crossing[1:]) < 0 or max(crossing) > i:
            return False
        if not off:
            return need[0] == left[i]
        return left[i] - waste(min(highest_point(me), 6), i)[off] <= need[0] <= left[i]

    def shift(lo: int, hi: int, by: int) -> None:
        for x in range(lo, hi + 1):
            crossing[x] += by
        need[0] += by * (hi - lo + 1)

    def step(i: int, src: int, dst: int, low: int) -> bool:
        if budget is not None:
            budget.spend()  # each move back tried counts a board
        if forward is not None:
            u = forward.try_move(src, dice[i - 1])
            if u is None:
                return False
            forward.undo(u)
            if u[1] != dst:
                return False
        key = (i, bytes(me))
        was = seen.get(key)
        if (was is not None and was <= low) or not feasible(i - 1):
            seen[key] = 0
            return False
        path.append((src, dst, False))
        if rec(i - 1, low):
            return True
        seen[key] = low if was is None else min(was, low)
        path.pop()
        return False

    def rec(i: int, low: int = 0) -> bool:
        if i == 0:
            return me == start.me
        d = dice[i - 1]
        same = ordered and i >= 2 and dice[i - 2] == d  # the next die goes on with this run
        for q in range(max(1, low), 25 - d):
            if me[q] and not opp[q + d] and crossing[q + 1] > 0:
                me[q] -= 1
                me[q + d] += 1
                shift(q + 1, q + d, -1)
                found = step(i, q + d, q, q if same else 0)
                shift(q + 1, q + d, 1)
                me[q] += 1
                me[q + d] -= 1
                if found:
                    return True
        if low == 0 and me[0] > off0 and not any(me[7:26]):
            # a checker borne off with d: exactly from d, or from the highest point below d
            for p in range(min(d, 6), 0, -1):
                if p < d and any(me[p + 1 : 7]):
                    break
                me[0] -= 1
                me[p] += 1
                shift(1, p, -1)
                found = step(i, p, 0, 0)
                shift(1, p, 1)
                me[0] += 1
                me[p] -= 1
                if found:
                    return True
        return False

    if not feasible(n) or not rec(n):
        return None
    return tuple(reversed(path))
