"""Each checker on its own: a quick proof that no play reaches a board, in the blocking games, or a
sharing of the dice that may be a play.

Owns :func:`unreachable` and :func:`share_to` (a sharing to a board, every state listed),
:func:`find_sharing` (one to a board, depth first) and :func:`sharing` (every die played). In
fevga, gul-bara and long nardy the opponent's checkers stand still through the mover's leg and
the mover's checkers never block one another, so a play is, checker by checker, which of the dice
each one takes (in the dice's order) and where it stops. Where no sharing of the dice among the
checkers takes every checker to a place of the target, no play does:
:func:`board_rules.reach.Walker.paths` then need not walk millions of boards to show it (an
escalated gul-bara double one point off a legal play). The sharing keeps two rules that tie
checkers together in time: a checker is borne off only once every checker is home, and no pip is
wasted beyond the dice's sum less the pips moved. The variants' own limits (the start rule,
primes, the head) are left out, so the proof holds with them. ``docs/rules-notes.md`` says why
playing equal dice in another order changes nothing here.

``board_rules._fastgen`` has each search compiled, used where it is built; this module's searches
are the references ``tests/test_checkerwise.py`` holds them to. Imports
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
    return _share_to_python(me, target, opp, dice, cap, False)[0]


def share_to(me: list[int], target: list[int], opp: list[int], dice) -> tuple[bool, list | None]:
    """``(proof, sharing)``: :func:`unreachable`'s answer and, where a sharing of the dice takes
    every checker to a place of the target, the first found, ``[(point, taken per run), ...]`` one
    per checker. A sharing keeps the two rules that tie checkers in time only in part
    (a bear-off's overshoot is allowed whatever stands above): it is a play only where an order of its
    moves is legal (:meth:`board_rules.reach.Walker._shared_moves`)."""
    dice = tuple(int(d) for d in dice)
    if fastgen._compiled is not None:
        return fastgen._compiled.checkerwise(bytes(me + opp), bytes(target), bytes(dice), WORK_CAP, True)
    return _share_to_python(me, target, opp, dice, WORK_CAP, True)


def _to_target(me, target, dice: tuple[int, ...]):
    """What the searches to a target share before they search: None where they do not take the board (a
    checker on the bar, other checkers than the target's, dice of more than ``MOST_RUNS`` runs or a run of
    more than 15, more pips to waste than the compiled searches keep in a byte), True where no play
    reaches the target (more pips than the dice have, checkers back from off), else ``(runs, most_waste,
    borne, slot, left0)``: the pips the dice may waste, the checkers borne off, each place the target
    holds (off first) by its index in ``left0``, the checkers each of them still wants."""
    if me[25] or target[25] or sum(me) != sum(target):
        return None
    runs = _runs(dice)
    if len(runs) > MOST_RUNS or any(n > 15 for _, n in runs):
        return None
    moved = sum(i * me[i] for i in range(1, 25)) - sum(i * target[i] for i in range(1, 25))
    most_waste = sum(dice) - moved
    borne = target[0] - me[0]
    if most_waste < 0 or borne < 0:
        return True
    if most_waste > 255:
        return None
    places = [0] + [i for i in range(1, 25) if target[i]]
    slot = {place: k for k, place in enumerate(places)}
    return runs, most_waste, borne, slot, tuple([borne] + [target[i] for i in places[1:]])


def _share_to_python(me, target, opp, dice: tuple[int, ...], cap: int, want: bool) -> tuple[bool, list | None]:
    """:func:`share_to` in Python (the sharing only if ``want``): the reference of the compiled search."""
    setup = _to_target(me, target, dice)
    if setup is None or setup is True:
        return setup is True, None
    runs, most_waste, borne, slot, left0 = setup
    full = tuple(n for _, n in runs)
    starts = [p for p in range(24, 0, -1) for _ in range(me[p])]
    work = 0
    # the run of the first checker borne off (every checker is home once its dice are played);
    # len(runs): none is borne off
    for first_off in range(len(runs)) if borne else (len(runs),):
        options = {p: _options(p, runs, first_off, opp, most_waste, slot) for p in set(starts)}
        # the checkers with the fewest ways first (farthest first among equals): the sets of sharings
        # stay far smaller than taking the farthest first (docs/rules-notes.md)
        order = sorted(starts, key=lambda p: (len(options[p]), -p))
        # each state of a layer (dice taken per run, targets left, pips wasted) keeps the first that
        # led to it: (the state before, the dice the checker took), in the compiled search's order
        layer: dict = {(tuple(0 for _ in runs), left0, 0): None}
        layers = [layer]
        for p in order:
            nxt: dict = {}
            for state in layer:
                taken, left, waste = state
                for place, dice_taken, w in options[p]:
                    k = slot[place]  # the options stop only where the target holds checkers
                    if not left[k] or waste + w > most_waste:
                        continue
                    used = tuple(a + b for a, b in zip(taken, dice_taken))
                    if any(u > n for u, n in zip(used, full)):
                        continue
                    work += 1
                    if work > cap:
                        return False, None
                    key = (used, left[:k] + (left[k] - 1,) + left[k + 1 :], waste + w)
                    if key not in nxt:
                        nxt[key] = (state, dice_taken)
            layer = nxt
            layers.append(layer)
            if not layer:
                break
        for state in layer:
            if state[0] == full:
                if not want:
                    return False, None
                shares = []
                for i in range(len(order), 0, -1):
                    state, dice_taken = layers[i][state]
                    shares.append((order[i - 1], dice_taken))
                return False, shares[::-1]
    return True, None


# ------------------------------------------------------------------ a sharing to a target, depth first

FIND_CAP = 10_000
"""Steps (a checker's way added) before :func:`find_sharing` gives up: a fraction of a millisecond compiled."""


ORDERS = (1, 0, 2)
"""The orders :meth:`board_rules.reach.Walker._shared_path` tries the checkers' ways in, in turn: each
finds in a few dozen steps sharings the others take thousands for (escalated gul-bara doubles)."""


def find_sharing(
    me: list[int], target: list[int], opp: list[int], dice, cap: int = FIND_CAP, order: int = 0
) -> tuple[list | None, bool, int]:
    """``(sharing, proof, steps)``: a sharing of ``dice`` that takes every checker to a place of ``target``,
    as :func:`share_to` gives one, looked for depth first, so found in a few dozen steps where one exists
    (:func:`share_to` lists every state of each checker's layer); else None, and ``proof`` True where the
    search ran to its end (no play reaches ``target``, as :func:`unreachable` proves). ``steps`` past
    ``cap``: given up. The latest run is tried first as the first to bear off, then each earlier one: a
    play bears off late far more often than early. Each checker's ways are tried as :func:`_options`
    lists them (``order`` 0), the most dice of the last run first, then of the run before and so on
    (1), or the most of the first run first (2)."""
    dice = tuple(int(d) for d in dice)
    if fastgen._compiled is not None:
        return fastgen._compiled.find_sharing(bytes(me + opp), bytes(target), bytes(dice), cap, order)
    return _find_python(me, target, opp, dice, cap, order)


def _find_python(me, target, opp, dice: tuple[int, ...], cap: int, order: int = 0) -> tuple[list | None, bool, int]:
    """:func:`find_sharing` in Python: the reference of the compiled search, step for step."""
    setup = _to_target(me, target, dice)
    if setup is None or setup is True:
        return None, setup is True, 0
    runs, most_waste, borne, slot, left0 = setup
    starts = [p for p in range(24, 0, -1) for _ in range(me[p])]
    ways_by = {0: None, 1: lambda o: tuple(-t for t in reversed(o[1])), 2: lambda o: tuple(-t for t in o[1])}[order]
    search = _Finder(tuple(n for _, n in runs), slot, most_waste, cap)
    for first_off in range(len(runs) - 1, -1, -1) if borne else (len(runs),):
        options = {p: _options(p, runs, first_off, opp, most_waste, slot) for p in set(starts)}
        if ways_by:
            options = {p: sorted(o, key=ways_by) for p, o in options.items()}
        got = search.run(sorted(starts, key=lambda p: (len(options[p]), -p)), options, left0)
        if got:
            return search.chosen, False, search.steps
        if got is None:
            return None, False, search.steps
    return None, True, search.steps


class _Finder:
    """:func:`_find_python`'s depth-first search for one run first to bear off; ``steps`` count on over runs."""

    def __init__(self, full: tuple[int, ...], slot: dict[int, int], most_waste: int, cap: int) -> None:
        self.full, self.slot, self.most_waste, self.cap = full, slot, most_waste, cap
        self.steps = 0

    def run(self, checkers: list[int], options: dict, left0: tuple[int, ...]) -> bool | None:
        """Whether a sharing takes ``checkers`` (points, in the order taken) to the target; None past the cap."""
        self.checkers, self.options = checkers, options
        # the most of each run the checkers from i on can take, and the most pips they can waste
        self.most = [[0] * len(self.full)]
        self.wastes = [0]
        for p in reversed(checkers):
            self.most.append(
                [m + max((t[r] for _, t, _ in options[p]), default=0) for r, m in enumerate(self.most[-1])]
            )
            self.wastes.append(self.wastes[-1] + max((w for _, _, w in options[p]), default=0))
        self.most.reverse()
        self.wastes.reverse()
        self.failed: set = set()
        self.chosen: list = []
        return self._rec(0, tuple(0 for _ in self.full), left0, 0, 0)

    def _rec(self, i: int, used: tuple, left: tuple, waste: int, lo: int) -> bool | None:
        full = self.full
        if i == len(self.checkers):
            return used == full
        if any(u + m < n for u, m, n in zip(used, self.most[i], full)):
            return False
        if waste + self.wastes[i] < self.most_waste:  # every die played wastes exactly most_waste
            return False
        same = i > 0 and self.checkers[i - 1] == self.checkers[i]  # checkers on one point take their ways in order
        key = (i, used, left, waste)
        if not same and key in self.failed:
            return False
        ways = self.options[self.checkers[i]]
        for j in range(lo if same else 0, len(ways)):
            place, taken, w = ways[j]
            k = self.slot[place]
            if not left[k] or waste + w > self.most_waste:
                continue
            u = tuple(a + b for a, b in zip(used, taken))
            if any(x > n for x, n in zip(u, full)):
                continue
            self.steps += 1
            if self.steps > self.cap:
                return None
            self.chosen.append((self.checkers[i], taken))
            got = self._rec(i + 1, u, left[:k] + (left[k] - 1,) + left[k + 1 :], waste + w, j)
            if got is not False:
                return got
            self.chosen.pop()
        if not same:
            self.failed.add(key)
        return False


# ------------------------------------------------------------------ every die played: a sharing with no target

SHARE_CAP = 20_000
"""Steps (a checker's share added) before :func:`sharing` gives up: about a millisecond compiled."""


def sharing(me: list[int], opp: list[int], dice, cap: int = SHARE_CAP) -> tuple[list | None, bool, int]:
    """``(sharing, proof, steps)``: which dice of each run (``dice`` as runs of equal dice) each of the
    mover's checkers takes so that every die is played, with the opponent's ``opp`` standing still, as
    ``[(point, taken per run), ...]`` one per checker; else None, and ``proof`` True
    where the search ran to its end: then no play of the blocking games plays every die, unless it
    bears off the last checker first. ``steps`` past ``cap``: given up.

    Like :func:`unreachable`, the sharing keeps bearing off for when every checker is home (each run
    tried as the first to bear off; none first) and leaves out the rest of the rules (the start rule,
    primes, bearing off from below with checkers above): a sharing is a play only in an order the
    variant allows (:meth:`board_rules.reach.Walker._shared_moves`)."""
    dice = tuple(int(d) for d in dice)
    if fastgen._compiled is not None:
        return fastgen._compiled.sharing(bytes(me + opp), bytes(dice), cap)
    return sharing_python(me, opp, dice, cap)


def _ways(p: int, runs, first_off: int, opp) -> list[tuple[int, ...]]:
    """The dice one checker on ``p`` may take from each run, in order: :func:`_options` with every
    place wanted and no bound on the pips wasted, in its order."""
    return [taken for _, taken, _ in _options(p, runs, first_off, opp, 10**9, range(25))]


def sharing_python(me, opp, dice: tuple[int, ...], cap: int = SHARE_CAP) -> tuple[list | None, bool, int]:
    """:func:`sharing` in Python: the reference the compiled search is held to.

    For none borne off, then each run as the first to bear off: depth-first over the checkers, those
    with the fewest ways first (a checker shut in behind the opponent's points has a few, and decides
    the rest), each checker's ways with the most dice first; checkers on one point take their ways in a
    non-decreasing order (they are alike), and a checker is not tried where the ones left cannot take
    the dice left of some run, or move the pips left, even with their most. A state that failed
    (checker, dice taken so far, first way allowed) is not tried again."""
    if me[25]:
        return None, False, 0
    runs = _runs(dice)
    if len(runs) > MOST_RUNS or any(n > 15 for _, n in runs):
        return None, False, 0
    steps = 0
    for first_off in [len(runs), *range(len(runs))]:
        try:
            shares, steps = _share(me, opp, runs, first_off, steps, cap)
        except _OverCap:
            return None, False, cap + 1
        if shares is not None:
            return shares, False, steps
    return None, True, steps


def _share(me, opp, runs, first_off: int, steps: int, cap: int) -> tuple[list | None, int]:
    """:func:`sharing_python`'s search with run ``first_off`` the first to bear off: ``(sharing or None,
    steps)``, the steps counted on from ``steps``; past ``cap``, :class:`_OverCap`."""
    full = tuple(n for _, n in runs)
    nr = len(runs)
    points = [p for p in range(24, 0, -1) if me[p]]
    ways = {p: sorted(_ways(p, runs, first_off, opp), key=lambda t: -sum(t)) for p in points}
    checkers = [p for p in sorted(points, key=lambda p: (len(ways[p]), -p)) for _ in range(me[p])]
    n = len(checkers)
    most = [[0] * nr for _ in range(n + 1)]  # per checker: the most of each run it and those after take
    pips = [0] * (n + 1)  # per checker: the most pips it and those after move
    for i in range(n - 1, -1, -1):
        options = ways[checkers[i]]
        for r in range(nr):
            most[i][r] = most[i + 1][r] + max((t[r] for t in options), default=0)
        pips[i] = pips[i + 1] + max((sum(c * v for c, (v, _) in zip(t, runs)) for t in options), default=0)
    failed: set = set()
    chosen: list[tuple[int, tuple[int, ...]]] = []

    def rec(i: int, used: tuple[int, ...], lo: int) -> bool:
        nonlocal steps
        if i == n:
            return used == full
        if any(used[r] + most[i][r] < full[r] for r in range(nr)):
            return False
        if sum((full[r] - used[r]) * runs[r][0] for r in range(nr)) > pips[i]:
            return False
        p = checkers[i]
        same = i > 0 and checkers[i - 1] == p
        key = (i, used, lo if same else 0)
        if key in failed:
            return False
        options = ways[p]
        for j in range(lo if same else 0, len(options)):
            t = options[j]
            nxt = tuple(a + b for a, b in zip(used, t))
            if any(a > b for a, b in zip(nxt, full)):
                continue
            steps += 1
            if steps > cap:
                raise _OverCap
            chosen.append((p, t))
            if rec(i + 1, nxt, j):
                return True
            chosen.pop()
        failed.add(key)
        return False

    return (chosen if rec(0, (0,) * nr, 0) else None), steps


class _OverCap(Exception):
    """:func:`sharing_python` ran past its cap."""
