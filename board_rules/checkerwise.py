"""Each checker on its own: a quick proof that no play reaches a board, in the blocking games.

Owns :func:`unreachable`. In fevga, gul-bara and long nardy the opponent's checkers stand still
through the mover's leg and the mover's checkers never block one another, so a play is, checker
by checker, which of the dice each one takes (in the dice's order) and where it stops. Where no
sharing of the dice among the checkers takes every checker to a place of the target, no play
does: :func:`board_rules.reach.Walker.paths` then need not walk millions of boards to show it
(an escalated gul-bara double one point off a legal play). The sharing keeps two rules that tie
checkers together in time: a checker is borne off only once every checker is home, and no pip is
wasted beyond the dice's sum less the pips moved. The variants' own limits (the start rule,
primes, the head) are left out, so the proof holds with them. ``docs/rules-notes.md`` says why
playing equal dice in another order changes nothing here.

``board_rules._fastgen.checkerwise`` is the same search compiled, used where it is built; this
module's search is the reference ``tests/test_checkerwise.py`` holds it to. Imports
:mod:`board_rules.fastgen` only.
"""

from __future__ import annotations

from board_rules import fastgen

WORK_CAP = 100_000
"""Past this many steps (a checker's way to stop added to a sharing of the dice so far), no proof (False):
at most a few ms compiled. The slowest escalated gul-bara double of benchmarks/bench_rules.py takes 20,000 to 40,000."""

MOST_RUNS = 8
"""Runs of equal dice a proof takes on: an escalated 1-1 has six."""

HOME = 6  # the mover's home is its points 1 to 6


def unreachable(me: list[int], target: list[int], opp: list[int], dice) -> bool:
    """Whether no play of exactly ``dice`` (in order) takes the mover's checkers from ``me`` to
    ``target`` with the opponent's ``opp`` standing still (a blocking game: a point the opponent
    holds with one checker is closed). ``me``, ``target`` and ``opp`` are 26 counts in the
    mover's numbering (0 off, 25 the bar). True is a proof; False says only that none was found
    (:data:`WORK_CAP`, more than :data:`MOST_RUNS` runs of equal dice, a checker on the bar)."""
    dice = tuple(int(d) for d in dice)
    if fastgen._compiled is not None:
        return fastgen._compiled.checkerwise(bytes(me + opp), bytes(target), bytes(dice), WORK_CAP)
    return unreachable_python(me, target, opp, dice, WORK_CAP)


def _runs(dice: tuple[int, ...]) -> list[tuple[int, int]]:
    """``dice`` as runs of equal dice in order: ``(value, length)``."""
    runs: list[tuple[int, int]] = []
    for d in dice:
        if runs and runs[-1][0] == d:
            runs[-1] = (d, runs[-1][1] + 1)
        else:
            runs.append((d, 1))
    return runs


def _options(p: int, runs, first_off: int, opp, most_waste: int, wanted) -> list[tuple[int, tuple[int, ...], int]]:
    """Where one checker on point ``p`` may stop among the places ``wanted``: ``(place, dice taken from each
    run, pips wasted)``.

    Its dice are played in order; it stops on no point the opponent holds, is borne off only from
    run ``first_off`` on (overshooting wastes pips, at most ``most_waste``) and is home once run
    ``first_off``'s dice are played (all checkers are, before the first is borne off)."""
    out: list[tuple[int, tuple[int, ...], int]] = []
    taken: list[int] = []
    last = len(runs)

    def rec(r: int, x: int, waste: int) -> None:
        if r == last:
            if x in wanted:
                out.append((x, tuple(taken), waste))
            return
        v, n = runs[r]
        for c in range(n + 1):
            if c:
                if x == 0:
                    break
                y = x - v
                if y <= 0:
                    if r < first_off or waste - y > most_waste:
                        break
                    waste -= y
                    y = 0
                elif opp[y]:
                    break
                x = y
            if r == first_off and x > HOME:
                continue
            taken.append(c)
            rec(r + 1, x, waste)
            taken.pop()

    rec(0, p, 0)
    return out


def unreachable_python(me, target, opp, dice: tuple[int, ...], cap: int = WORK_CAP) -> bool:
    """:func:`unreachable` in Python, with ``cap`` for :data:`WORK_CAP`."""
    if me[25] or target[25] or sum(me) != sum(target):
        return False
    runs = _runs(dice)
    if len(runs) > MOST_RUNS or any(n > 15 for _, n in runs):
        return False
    moved = sum(i * me[i] for i in range(1, 25)) - sum(i * target[i] for i in range(1, 25))
    most_waste = sum(dice) - moved
    borne = target[0] - me[0]
    if most_waste < 0 or borne < 0:
        return True  # more pips than the dice have, or checkers back from off
    if most_waste > 255:  # the compiled search keeps the waste in a byte
        return False
    places = [0] + [i for i in range(1, 25) if target[i]]
    left0 = tuple([borne] + [target[i] for i in places[1:]])
    slot = {place: k for k, place in enumerate(places)}
    full = tuple(n for _, n in runs)
    starts = [p for p in range(24, 0, -1) for _ in range(me[p])]
    work = 0
    # the run of the first checker borne off (every checker is home once its dice are played);
    # len(runs): none is borne off
    for first_off in range(len(runs)) if borne else (len(runs),):
        options = {p: _options(p, runs, first_off, opp, most_waste, slot) for p in set(starts)}
        layer = {(tuple(0 for _ in runs), left0, 0)}
        for p in starts:
            nxt = set()
            for taken, left, waste in layer:
                for place, dice_taken, w in options[p]:
                    k = slot[place]  # the options stop only where the target holds checkers
                    if not left[k] or waste + w > most_waste:
                        continue
                    used = tuple(a + b for a, b in zip(taken, dice_taken))
                    if any(u > n for u, n in zip(used, full)):
                        continue
                    work += 1
                    if work > cap:
                        return False
                    nxt.add((used, left[:k] + (left[k] - 1,) + left[k + 1 :], waste + w))
            layer = nxt
            if not layer:
                break
        if any(taken == full for taken, _, _ in layer):
            return False
    return True
