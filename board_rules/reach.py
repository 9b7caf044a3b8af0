"""Targeted search: is one board reached from another by a legal play, without listing every play?

Owns :func:`find_play` and :class:`PlayFinder` (behind :func:`board_rules.legality.check`),
:class:`Walker` and :func:`sample_results`. The walk makes the single checker moves of
:mod:`board_rules.moves`, pruning every board the target cannot be reached from
(checkers only move forward; the pips left must be a sum of the next dice; no opposing
checker is added to a point). The play found plays the most dice the roll allows;
plakoto's takes the route with the fewest pins; gul-bara's passed numbers are followed
leg by leg. In the blocking games walks back from the target and forwards take turns
within growing budgets of boards (``docs/rules-notes.md``). Where ``board_rules._fastgen`` is
built, the walks of the blocking games are its compiled twins (:mod:`board_rules.fastgen`), held
to these by ``tests/test_fastgen.py``. Imports :mod:`board_rules.moves`, :mod:`board_rules.backward`,
:mod:`board_rules.fastgen`, :mod:`board_rules.checkerwise` and :mod:`board_rules.movegen`'s budget
and compiled rules.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from board_rules import checkerwise, fastgen
from board_rules.backward import backward_path, highest_point, most_waste
from board_rules.movegen import COMPILED_DICE, Budget, SearchBudgetExceeded, compiled_rules
from board_rules.moves import Board, CheckerMoves
from board_rules.notation import Roll
from board_rules.position import CHECKERS, Position
from board_rules.side import Side
from board_rules.variants import Variant

Moves = tuple[tuple[int, int, bool], ...]


def _low_table(steps: set[int], opp) -> tuple[int, ...]:
    """For each point (index 1 to 24; 0 unused), the lowest point (1 or above) its checker reaches by
    moves of ``steps`` over points the opponent does not hold (its own checkers never close a point
    in the blocking games). Moves only go down, so each point's answer builds on the lower ones'."""
    return _low_table_of(frozenset(steps), tuple(opp))


@lru_cache(maxsize=1024)
def _low_table_of(steps: frozenset[int], opp: tuple[int, ...]) -> tuple[int, ...]:
    """:func:`_low_table`, kept: a check's repairs ask it of the same few boards again and again."""
    low = [0] * 25
    for p in range(1, 25):
        low[p] = min([p] + [low[p - d] for d in steps if p - d >= 1 and not opp[p - d]])
    return tuple(low)


def _most_in_room(me, low: tuple[int, ...], dice: tuple[int, ...], depth: int) -> int:
    """How many of ``dice`` from ``depth`` on can at most be played from ``me``, a checker on point p
    reaching no lower than ``low[p]``: where one cannot reach home no checker is borne off, so each die
    moves a checker by its number and together they move no more than the checkers' room (the rules'
    own limits only take moves away). All of them where every checker may reach home."""
    room = 0
    shut_in = False
    for p in range(1, 25):
        if me[p]:
            shut_in = shut_in or low[p] > checkerwise.HOME
            room += me[p] * (p - low[p])
    n = len(dice)
    if not shut_in:
        return n - depth
    k = depth
    while k < n and dice[k] <= room:
        room -= dice[k]
        k += 1
    return k - depth


# the compiled max_depth's answers (most dice, boards visited) and the sharings', oldest first
_DEPTHS: dict[tuple, tuple] = {}
_DEPTHS_KEPT = 256
_DEPTHS_LOCK = threading.Lock()


def _keep(args: tuple, answer: tuple) -> None:
    """``answer`` kept in ``_DEPTHS`` under ``args``, the oldest dropped past ``_DEPTHS_KEPT``."""
    with _DEPTHS_LOCK:  # tables of a hall may check in threads
        if len(_DEPTHS) >= _DEPTHS_KEPT:
            del _DEPTHS[next(iter(_DEPTHS))]
        _DEPTHS[args] = answer


def forget() -> None:
    """Forget the kept answers of the walks and sharings, and the room tables (benchmarks time each
    check from cold)."""
    with _DEPTHS_LOCK:
        _DEPTHS.clear()
    _low_table_of.cache_clear()


# Boards each walk of :meth:`Walker._blocking_path` may visit in its first round (four times more each round).
FIRST_BUDGET = 100
# Steps of the depth-first sharing before the first round's walks (checkerwise.FIND_CAP after it).
FIRST_FIND = 300


def pips(me: list[int]) -> int:
    """The pips the mover needs to bear off every checker of ``me`` (bar counts 25)."""
    return sum(i * me[i] for i in range(1, 26))


class Walker:
    """Depth-first walks over one side's checker moves for one dice sequence."""

    def __init__(self, variant: Variant, board: Board, head_limit: int) -> None:
        self.s = CheckerMoves(variant, board, head_limit)
        self.b = board
        self.v = variant

    # ------------------------------------------------------------------ most dice playable

    def max_depth(self, dice: tuple[int, ...], at_least: int | None = None, budget: Budget | None = None) -> int:
        """The most dice of ``dice`` (in order) that can be played; stops early at ``at_least``.

        Past ``budget`` boards, :class:`SearchBudgetExceeded` (the board is left as it was).
        """
        n = len(dice)
        goal = min(n if at_least is None else min(n, at_least), self._pips_bound(dice))
        if self._room_counts(dice) and pips(self.b.me) > sum(dice[:goal]):
            known, goal = self._shared_depth_kept(dice, goal)
            if known is not None:
                return known
        compiled = self._compiled_depth(dice, goal, budget)
        if compiled is not None:
            return compiled
        lows = self._lows(dice)
        seen: set = set()
        best = 0
        s = self.s
        b = self.b

        def rec(depth: int) -> bool:
            nonlocal best
            if budget is not None:
                budget.spend()
            if depth > best:
                best = depth
            if best >= goal:
                return True
            if lows is not None and depth + _most_in_room(b.me, lows[depth], dice, depth) <= best:
                return False  # shut in: the dice left cannot take this board past the deepest yet
            d = dice[depth]
            me = b.me
            srcs = (25,) if me[25] else [i for i in range(24, 0, -1) if me[i]]
            for src in srcs:
                u = s.try_move(src, d)
                if u is None:
                    continue
                if (u[1] == 0 or u[3]) and s.ends_game(u):
                    s.undo(u)
                    best = n  # the game is over: the play is complete
                    return True
                key = (depth, b.key())
                done = False
                if key not in seen:
                    seen.add(key)
                    done = rec(depth + 1)
                s.undo(u)
                if done:
                    return True
            return False

        saved = (list(b.me), list(b.opp), None if b.pins is None else list(b.pins))
        try:
            rec(0)
        except SearchBudgetExceeded:
            b.me[:], b.opp[:] = saved[0], saved[1]
            if saved[2] is not None:
                b.pins[:] = saved[2]
            raise
        return best

    def _shared_depth_kept(self, dice: tuple[int, ...], goal: int) -> tuple[int | None, int]:
        """:meth:`_shared_depth`, its answers kept with the compiled walks' (a check's repairs ask about
        the same few boards again and again, and a sharing is played out in Python)."""
        rules = self._compiled_rules()
        if rules is None:
            return self._shared_depth(dice, goal)
        b = self.b
        args = ("shared", bytes(b.me + b.opp), bytes(dice), goal, *rules)
        known = _DEPTHS.get(args)
        if known is None:
            known = self._shared_depth(dice, goal)
            _keep(args, known)
        return known

    def _shared_depth(self, dice: tuple[int, ...], goal: int) -> tuple[int | None, int]:
        """``(most dice, goal)``: how many of the first ``goal`` dice can be played where sharings of
        them among the checkers (:func:`~board_rules.checkerwise.sharing`) settle it, else None, and
        the fewer dice the walk need look for. A sharing played in an order the variant allows
        (:meth:`_shared_moves`) shows that its dice can be played; where none exists, the first ``k``
        dice cannot be (the game cannot end on the way: the mover has more pips than they move), and
        ``k - 1`` are tried. Saves :meth:`max_depth` the walk where checkers must wait behind the
        opponent's points for the number that jumps them, which meets dead ends by the hundred
        thousand. The sharings together take at most :data:`~board_rules.checkerwise.SHARE_CAP` steps."""
        left = checkerwise.SHARE_CAP
        k = goal
        while k > 0 and left > 0:
            shares, proof, steps = checkerwise.sharing(self.b.me, self.b.opp, dice[:k], left)
            if shares is not None and self._shared_moves(dice[:k], shares) is not None:
                return k, k
            if not proof:
                return None, k
            left -= steps
            k -= 1
        return (0, 0) if k == 0 else (None, k)

    def _shared_moves(self, dice: tuple[int, ...], shares) -> Moves | None:
        """The checker moves of ``shares`` (``[(point, dice taken per run), ...]``) in the dice's order,
        each allowed when it is made, or None where this order finds none; the board is left as it was.
        Each die goes to the first checker still owed one of its run whose move the variant allows, the
        farthest back first (the one that opens the start rule's way), the one owed the most first among
        checkers on one point (checkers alike: their shares may be swapped)."""
        s = self.s
        at = [p for p, _ in shares]
        owed = [sum(t) for _, t in shares]
        done = []
        r = -1
        for k, d in enumerate(dice):
            if k == 0 or d != dice[k - 1]:
                r += 1
                left = [t[r] for _, t in shares]
            move = None
            for c in sorted((c for c in range(len(at)) if left[c]), key=lambda c: (-at[c], -owed[c])):
                move = s.try_move(at[c], d)
                if move is not None:
                    at[c] = move[1]
                    left[c] -= 1
                    owed[c] -= 1
                    break
            if move is None:
                break
            done.append(move)
        for u in reversed(done):
            s.undo(u)
        return tuple((u[0], u[1], u[2]) for u in done) if len(done) == len(dice) else None

    def _room_counts(self, dice: tuple[int, ...]) -> bool:
        """Whether the checkers' room (:func:`_most_in_room`) can bound a walk of ``dice``: more than
        four dice, in a blocking game, without pins or a checker on the bar."""
        return len(dice) > 4 and self.v.blocks and self.b.pins is None and not self.b.me[25]

    def _lows(self, dice: tuple[int, ...]) -> list[tuple[int, ...]] | None:
        """Per depth of a walk of ``dice``, :func:`_low_table` of the numbers left; None where the
        room does not count (:meth:`_room_counts`)."""
        if not self._room_counts(dice):
            return None
        out: list[tuple[int, ...]] = [()] * len(dice)
        steps: set[int] = set()
        low: tuple[int, ...] = ()
        for k in range(len(dice) - 1, -1, -1):
            if dice[k] not in steps:
                steps.add(dice[k])
                low = _low_table(steps, self.b.opp)
            out[k] = low
        return out

    def _pips_bound(self, dice: tuple[int, ...]) -> int:
        """At most how many of ``dice`` (in order) a blocking game's mover can play, where a checker
        shut in behind the opponent's points rules out bearing off (:func:`_most_in_room`);
        ``len(dice)`` where every checker may reach home. Saves :meth:`max_depth` the proof, walking
        every board the dice reach, that an escalated gul-bara double's mover cannot play more (the
        walk itself asks the same of every board it reaches, by :meth:`_lows`)."""
        if not self._room_counts(dice):
            return len(dice)
        return _most_in_room(self.b.me, _low_table(set(dice), self.b.opp), dice, 0)

    def _compiled_rules(self) -> tuple | None:
        """:func:`~board_rules.movegen.compiled_rules` for this walker's variant, board and limits."""
        return compiled_rules(self.v, self.b, self.s.head_limit, self.s.head_start)

    def _compiled_depth(self, dice: tuple[int, ...], goal: int, budget: Budget | None) -> int | None:
        """:meth:`max_depth` by ``board_rules._fastgen`` where :meth:`_compiled_rules` allows; None elsewhere."""
        rules = self._compiled_rules()
        if rules is None:
            return None
        b = self.b
        args = (bytes(b.me + b.opp), bytes(dice), goal, *rules)
        # a check asks the same question more than once (the most dice, then the nearest play): the
        # answers of walks that ran to the end are kept, and spend the budget as the walk did
        known = _DEPTHS.get(args)
        if known is None:
            known = fastgen._compiled.max_depth(*args, -1 if budget is None else max(0, budget.left))
            if budget is None or known[1] <= budget.left:
                _keep(args, known)
        if budget is not None:
            budget.spend(known[1])
        return known[0]

    # ------------------------------------------------------------------ paths to a target

    def paths(
        self,
        dice: tuple[int, ...],
        depth_wanted: int,
        target: Board | None,
        limit: int = 1,
        exact: bool = True,
        ending: bool = False,
        budget: Budget | None = None,
        enough: int | None = None,
    ):
        """Up to ``limit`` ``(moves, end board key)`` playing exactly ``depth_wanted`` dice.

        With a ``target``, only boards that can still reach it are walked; with ``exact`` the
        path must end on it, else anywhere behind it (a later leg may move on). A pin of the
        mother that ends the game ends the path too; ``ending`` keeps only such paths. A single
        path is looked for first with equal dice played from the back (one order of every set
        of commuting checker moves), then in every order (the start rule, prime rules). Past
        ``budget`` boards, :class:`SearchBudgetExceeded`, and the walker's board is not to be used again.
        ``enough`` (no target): once one path is found, stop after that many boards with the paths found.
        """
        if enough is not None:
            return self._paths(dice, depth_wanted, None, limit, exact, monotone=False, enough=enough)
        if ending:
            return self._paths(dice, depth_wanted, target, limit, exact, monotone=False, ending=True, budget=budget)
        if limit == 1 and target is not None and exact:
            if self.v.blocks and not self.b.me[25]:
                return self._blocking_path(dice, depth_wanted, target, budget)
            found = self._paths(dice, depth_wanted, target, 1, True, monotone=True, budget=budget)
            if not found:
                found = self._paths(dice, depth_wanted, target, 1, True, monotone=False, budget=budget)
            if found and self.v.pins:
                found = self._fewest_pins(dice, depth_wanted, target, found)
            return found
        return self._paths(dice, depth_wanted, target, limit, exact, monotone=False, budget=budget)

    def _blocking_path(self, dice, depth_wanted: int, target: Board, budget: Budget | None = None):
        """:meth:`paths` to ``target`` in the blocking games: backwards, then forwards, by turns.

        Walking back from the target (:func:`~board_rules.backward.backward_path`, without
        the variant's own limits, then with them) and walking forwards in every order each
        settle some boards in a few hundred boards visited and others only after millions,
        and which one depends on the board. So each walks in turn within a budget of boards
        that grows fourfold a round until one settles it: a path found (and replayed under
        every rule), the forward walk finished (its answer is exact), or each backward walk
        finished without a path (it relaxes the rules: none exists). A play that bears off
        the last checker ends with the die that does, so each such prefix of the dice is tried.
        Where two rounds settle nothing, each checker is taken on its own
        (:func:`~board_rules.checkerwise.share_to`): a prefix that no sharing of its dice among the
        checkers reaches is settled at once, and a sharing that plays in an order the variant allows
        is the path.
        ``budget`` bounds the boards of every walk together.
        """

        def walk(fn, *args):
            given = boards if budget is None else max(1, min(boards, budget.left))
            mine = Budget(given)
            try:
                return fn(*args, mine)
            finally:
                if budget is not None:
                    budget.spend(given - max(mine.left, 0))

        if self.b.opp[1:25] != target.opp[1:25]:
            return []  # the opponent's checkers stand still through the mover's leg
        ends = target.me[0] == CHECKERS and self.b.me[0] < CHECKERS
        open_ = list(range(1, depth_wanted + 1)) if ends else [depth_wanted]  # lengths not yet settled
        key = target.key()
        boards = FIRST_BUDGET
        while True:
            if boards == 16 * FIRST_BUDGET:  # two rounds settled nothing: try each checker on its own
                for k in list(open_):
                    proof, shares = checkerwise.share_to(self.b.me, target.me, self.b.opp, dice[:k])
                    if proof:
                        open_.remove(k)
                    elif shares is not None and (moves := self._shared_moves(dice[:k], shares)) is not None:
                        return [(moves, key)]
            for k in list(open_):
                try:
                    moves = walk(self._backward, target, dice[:k], False)
                    if moves is None:
                        open_.remove(k)  # not even reachable without the variant's own limits
                        continue
                    if self._replays(dice, moves):
                        return [(moves, key)]
                    # the variant's own limits (start rule, primes) stop that path: look again with them
                    moves = walk(self._backward, target, dice[:k], True)
                    if moves is not None and self._replays(dice, moves):
                        return [(moves, key)]
                except SearchBudgetExceeded:
                    if budget is not None and budget.left <= 0:
                        raise
            if not open_:
                return []
            # a sharing found depth first (a few dozen steps where one exists), played in an order the
            # variant allows, is the path: briefly after the first backward walks (which settle most of
            # the boards a check's repairs ask about), longer in the second round
            if boards in (FIRST_BUDGET, 4 * FIRST_BUDGET):
                found = self._shared_path(dice, open_, target, FIRST_FIND if boards == FIRST_BUDGET else None)
                if found or not open_:
                    return found
            ahead = Walker(self.v, self.b.copy(), self.s.head_limit)  # a walk stopped midway leaves its board so
            ahead.s.head_start = self.s.head_start
            try:
                return walk(ahead._forward, dice, depth_wanted, target)
            except SearchBudgetExceeded:
                if budget is not None and budget.left <= 0:
                    raise
                boards *= 4

    def _shared_path(self, dice, open_: list[int], target: Board, cap: int | None):
        """``[(moves, target key)]`` where a sharing of the first ``k`` dice (``k`` in ``open_``) found depth
        first (:func:`~board_rules.checkerwise.find_sharing`, within ``cap`` steps in all) plays in an order
        the variant allows (:meth:`_shared_moves`), else ``[]``; each ``k`` that the search proves no play
        reaches the target with is taken out of ``open_``."""
        left = checkerwise.FIND_CAP if cap is None else cap
        for order in checkerwise.ORDERS:  # each within a share of the steps
            share = left // len(checkerwise.ORDERS)
            for k in list(open_):
                shares, proof, steps = checkerwise.find_sharing(
                    self.b.me, target.me, self.b.opp, dice[:k], share, order
                )
                if proof:
                    open_.remove(k)
                elif shares is not None and (moves := self._shared_moves(dice[:k], shares)) is not None:
                    return [(moves, target.key())]
                share -= steps
                if share <= 0:
                    break
        return []

    def _backward(self, target: Board, dice, limits: bool, budget: Budget | None):
        """:func:`~board_rules.backward.backward_path` from this walker's board to ``target``, with the
        variant's own limits if ``limits``; compiled where :meth:`_compiled_rules` allows."""
        rules = self._compiled_rules()
        if rules is None or len(dice) > COMPILED_DICE or target.pins is not None:
            own = (self.v, self.s.head_limit, self.s.head_start) if limits else None
            return backward_path(self.b, target, dice, own, budget)
        b = self.b
        moves, boards = fastgen._compiled.backward_path(
            bytes(b.me + b.opp),
            bytes(target.me + target.opp),
            bytes(dice),
            limits,
            *rules,
            -1 if budget is None else max(0, budget.left),
        )
        if budget is not None:
            budget.spend(boards)
        return moves

    def _forward(self, dice, depth_wanted: int, target: Board, budget: Budget | None):
        return self._paths(dice, depth_wanted, target, 1, True, monotone=False, budget=budget)

    def _fewest_pins(self, dice, depth_wanted: int, target: Board, found):
        """``found`` (one path to ``target``), or a path to it that pins fewer times.

        A pin made and released on the way reads worse than the plain route, as
        :mod:`board_rules.movegen` writes it (``24/19``, not ``24/23*/19``). Every path
        pins once for each pin the target has and the start has not; a pin beyond those
        is *spare*: on a point the target leaves unpinned, or again after releasing a pin
        the target has. Paths are looked for with no spare pin, then one, and so on.
        """
        spare = _pins_made(found[0][0]) - _least_pins(self.b, target)
        for allowed in range(spare):
            for monotone in (True, False):
                better = self._paths(dice, depth_wanted, target, 1, True, monotone, spare=allowed)
                if better:
                    return better
        return found

    def _replays(self, dice, moves) -> bool:
        """Whether ``moves`` (one per die) are legal in order under every rule of the variant."""
        s = self.s
        done = []
        ok = True
        for d, (src, dst, _hit) in zip(dice, moves):
            u = s.try_move(src, d)
            if u is None or u[1] != dst:
                ok = False
                break
            done.append(u)
        for u in reversed(done):
            s.undo(u)
        return ok

    def _paths(
        self, dice, depth_wanted, target, limit, exact, monotone, spare=None, ending=False, budget=None, enough=None
    ):
        """:meth:`paths` by one depth-first walk; ``spare`` (pin variants, with a target)
        bounds the pins beyond those the target needs (see :meth:`_fewest_pins`); past
        ``budget`` boards, :class:`~board_rules.movegen.SearchBudgetExceeded`. Compiled where
        :meth:`_compiled_rules` allows, for walks in every order with no pins to count."""
        if not monotone and spare is None and not ending and depth_wanted <= COMPILED_DICE:
            rules = self._compiled_rules()
            if rules is not None and (target is None or target.pins is None):
                found, boards = fastgen._compiled.forward_paths(
                    bytes(self.b.me + self.b.opp),
                    None if target is None else bytes(target.me + target.opp),
                    bytes(dice[:depth_wanted]),
                    exact,
                    limit,
                    -1 if enough is None else enough,
                    *rules,
                    -1 if budget is None else max(0, budget.left),
                )
                if budget is not None:
                    budget.spend(boards)
                return found
        n = depth_wanted
        s = self.s
        b = self.b
        v = self.v
        found: list[tuple[Moves, bytes]] = []
        ends: set[bytes] = set()
        seen: set = set()
        moves: list[tuple[int, int, bool]] = []
        if target is not None:
            tme = target.me
            tcum = [0] * 27
            for x in range(25, 0, -1):
                tcum[x] = tcum[x + 1] + tme[x]
            toff = tme[0]
            topp = target.opp
            pins = v.pins
            # sums of the next j dice from each depth
            sums = []
            for depth in range(n + 1):
                acc = 0
                row = {0}
                for d in dice[depth:n]:
                    acc += d
                    row.add(acc)
                sums.append((row, acc))
            # the largest die still to play at each depth; when the target is a game that
            # ended (the last checker off, the mother pinned), the play may stop before every
            # die is played (movegen's _Search._rec), and only the next die is sure to be played
            if ends_here(v, b, target):
                bigger = [dice[depth] if depth < n else 0 for depth in range(n + 1)]
                wastes = None  # the play may stop before its last dice: no lower bound on the pips
            else:
                bigger = [max(dice[depth:n], default=0) for depth in range(n + 1)]
                # every die still to play moves its pips, less what the checkers still to bear off waste
                high = highest_point(tme)
                wastes = [most_waste(dice[depth:n], high) for depth in range(n + 1)]
            tpins = target.pins

        crossing = [0] * 27  # per node: checkers that must still cross from x to x - 1
        down = [0] * 27  # per node: how many points from x down all have checkers still to cross
        # in the mover's leg the opponent's checkers change only by hits and pins: otherwise compare them once
        hitting = v.hits and not v.pins
        if target is not None and exact and not v.hits and not v.pins and b.opp[1:25] != target.opp[1:25]:
            return []

        def hopeless(depth: int) -> bool:
            """Prune, and fill ``crossing`` for the source filter."""
            me = b.me
            if me[0] > toff:
                return True
            cum = need = most = run = longest = 0
            for x in range(25, 0, -1):
                cum += me[x]
                c = cum - tcum[x]
                if c < 0:
                    return True
                crossing[x] = c
                if c:
                    need += c
                    if c > most:
                        most = c
                    run += 1
                    if run > longest:
                        longest = run
                else:
                    run = 0
            below = 0
            for x in range(1, 26):
                below = below + 1 if crossing[x] else 0
                down[x] = below
            if exact:
                # each remaining checker move crosses a point at most once
                if most > n - depth and not pins:
                    return True
                reachable, total = sums[depth]
                if need > total:
                    return True
                if me[0] == toff and need not in reachable:
                    return True
                if wastes is not None:
                    left = wastes[depth]
                    off = toff - me[0]
                    if off >= len(left) or need < total - left[off]:
                        return True
                # every die still to play needs a run of that many points still to be crossed
                # (a run down to point 1 takes any die while a checker may still be borne off)
                big = bigger[depth]
                if big and longest < big and not (run and me[0] < toff):
                    return True
                if hitting:  # a hit only adds to the opponent's bar; later legs may still move its checkers
                    opp = b.opp
                    for i in range(1, 25):
                        if opp[i] < topp[i]:
                            return True
            return False

        visited = 0

        def rec(depth: int, top: int, spent: int) -> bool:
            nonlocal visited
            if budget is not None:
                budget.spend()
            if enough is not None:
                visited += 1
                if found and visited > enough:
                    return True
            if target is not None and hopeless(depth):
                return False
            if depth == n:
                if ending:
                    return False
                k = b.key()
                if target is None or not exact or k == target_key:
                    if k not in ends:
                        ends.add(k)
                        found.append((tuple(moves), k))
                    return len(found) >= limit
                return False
            d = dice[depth]
            me = b.me
            if me[25]:
                srcs = [25]
            else:
                if not (monotone and depth and dice[depth - 1] == d):
                    top = 24
                srcs = [i for i in range(min(top, 24), 0, -1) if me[i]]
            if target is not None:
                # a checker moving d from i crosses only points it must cross: min(d, i) of them from i down
                srcs = [i for i in srcs if down[i] >= (d if d < i else i)]
                # try first the checker moves that end where some checker must stop
                # (more checkers cross into the point than cross out of it)
                srcs.sort(key=lambda i: 0 if i - d > 0 and crossing[i - d] < crossing[i - d + 1] else 1)
            for src in srcs:
                u = s.try_move(src, d)
                if u is None:
                    continue
                cost = spent
                if spare is not None:
                    if u[3] and tpins[u[1]] != 2:
                        cost += 1  # a pin the target does not keep
                    if u[4] and tpins[src] == 2:
                        cost += 1  # a pin the target keeps, released: it must be made again
                    if cost > spare:
                        s.undo(u)
                        continue
                moves.append((src, u[1], u[2] or u[3]))
                if (u[1] == 0 or u[3]) and s.ends_game(u):
                    # the game ends here: a complete play only if it is the wanted end
                    k = b.key()
                    if (target is None or not exact or k == target_key) and k not in ends:
                        ends.add(k)
                        found.append((tuple(moves), k))
                    done = len(found) >= limit
                else:
                    # the source bounds the next one only while the same die follows
                    key = (depth, b.key(), src if monotone and depth + 1 < n and dice[depth + 1] == d else 0, cost)
                    done = False
                    if key not in seen:
                        seen.add(key)
                        done = rec(depth + 1, src, cost)
                moves.pop()
                s.undo(u)
                if done:
                    return True
            return False

        target_key = target.key() if target is not None else b""
        rec(0, 25, 0)
        return found


def ends_here(v: Variant, start: Board, target: Board) -> bool:
    """Whether the game, not over at ``start``, is over at ``target`` by the mover's play:
    its last checker borne off, or the opponent's mother pinned so that the game ends."""
    if target.me[0] == CHECKERS:
        return start.me[0] < CHECKERS
    return mother_pinned_here(v, start, target)


def mother_pinned_here(v: Variant, start: Board, target: Board) -> bool:
    """Whether ``target`` has the opponent's mother pinned, not pinned at ``start``, and
    so pinned that the game ended (plakoto's mother rule, by the pinner's start count)."""
    if start.pins is None or target.pins is None:
        return False
    return target.pins[1] == 2 and start.pins[1] != 2 and v.mother_pin_ends_game(target.me[24])


def most_dice(variant: Variant, board: Board, seqs, head_limit: int) -> tuple[int, int]:
    """``(most dice playable, the die a single-die play must use or 0)`` for these sequences.

    A play that ends the game plays them all; none is playable once the game is over.
    """
    if board.game_over():
        return 0, 0
    best = 0
    for seq in seqs:
        best = max(best, Walker(variant, board, head_limit).max_depth(seq))
        if best == len(seq):
            break
    forced = 0
    if best == 1 and len(seqs) == 2:
        high = max(seqs[0][0], seqs[1][0])
        for seq in seqs:
            if seq[0] == high and Walker(variant, board, head_limit).max_depth(seq, 1) >= 1:
                forced = high
    return best, forced


def turn_setup(before: Position, roll: Roll):
    """``(variant, side, dice sequences, head limit, start board, passes unplayed)`` of a roll."""
    v = before.variant
    side = before.turn
    rp = before.rolls[0 if side is Side.WHITE else 1]
    return (
        v,
        side,
        v.dice_sequences(roll.d1, roll.d2, rp),
        v.head_limit(roll.d1, roll.d2, rp),
        Board.of(before),
        v.passes_unplayed(roll.d1, roll.d2, rp),
    )


def find_play(before: Position, roll: Roll, after: Position):
    """The legs of a legal play of ``roll`` from ``before`` whose board is ``after``'s, or ``None``.

    Compares boards only (points, pins, bar, off). Legs are tuples of ``(src, dst, hit)``
    in each leg's mover numbering, as :func:`board_rules.movegen.legal_results` gives them.
    """
    return PlayFinder(before, roll).legs(after)


class PlayFinder:
    """:func:`find_play` for one roll, asked about many boards: the turn's set-up and the
    most dice playable (when first needed) are worked out once."""

    def __init__(self, before: Position, roll: Roll) -> None:
        self.before = before
        self.v, self.side, self.seqs, self.head, self.start, self.passes = turn_setup(before, roll)
        self._most: tuple[int, int] | None = None

    @property
    def best(self) -> int:
        """The most dice playable (:func:`most_dice`)."""
        if self._most is None:
            self._most = most_dice(self.v, self.start, self.seqs, self.head)
        return self._most[0]

    @property
    def forced(self) -> int:
        """The die a single-die play must use, or 0 (:func:`most_dice`)."""
        self.best  # noqa: B018 - works out both
        return self._most[1]

    def legs(self, after: Position, budget: Budget | None = None):
        """:func:`find_play`'s answer for ``after``; past ``budget`` boards, :class:`SearchBudgetExceeded`."""
        v, side, seqs, head, start, passes = self.v, self.side, self.seqs, self.head, self.start, self.passes
        target_me = Board.of(after, side)
        if target_me.opp_off != start.opp_off and not passes:
            return None
        if passes and self._most is None and start.pins is None:
            # Proving how many dice of an escalation can be played can take a long search; a
            # board the mover's checkers reach only with every die needs none: a path to it
            # plays them all, and without one no legal play gets there.
            seq = tuple(seqs[0])
            if pips(start.me) - pips(target_me.me) > sum(seq[:-1]):
                got = Walker(v, Board.of(self.before), head).paths(seq, len(seq), target_me, budget=budget)
                return (got[0][0],) if got else None
        best = self.best
        if passes and 0 < best < len(seqs[0]):
            return _legs(v, start.copy(), side, tuple(seqs[0]), best, after, budget)
        chosen = None
        for seq in seqs:
            if self.forced and seq[0] != self.forced:
                continue
            board = Board.of(self.before)
            got = Walker(v, board, head).paths(seq, best, target_me, budget=budget)
            if got and (chosen is None or _pins_made(got[0][0]) < _pins_made(chosen)):
                chosen = got[0][0]
                if start.pins is None or _pins_made(chosen) == _least_pins(start, target_me):
                    break
        return None if chosen is None else (chosen,)


def _pins_made(moves: Moves) -> int:
    return sum(1 for m in moves if m[2])


def _least_pins(start: Board, target: Board) -> int:
    """Pins every play from ``start`` to ``target`` makes: those the target has and the start has not."""
    return sum(1 for i in range(1, 25) if target.pins[i] == 2 and start.pins[i] != 2)


def _legs(v: Variant, board: Board, side: Side, dice: tuple[int, ...], best: int, after: Position, budget=None):
    """Legs from ``board`` (``side`` to play ``dice``, ``best`` of them playable) ending on ``after``."""
    target = Board.of(after, side)
    if best == len(dice):
        got = Walker(v, board, 15).paths(dice, best, target, budget=budget)
        return (got[0][0],) if got else None
    pins = board.pins is not None
    rest = dice[best:]
    end = None
    if not pins and target.me[0] == board.me[0]:
        # none borne off: the mover's checkers move exactly the pips of its dice, these and any of the
        # rest that pass back to it later
        moved, played = pips(board.me) - pips(target.me), sum(dice[:best])
        if moved < played or moved > played + sum(rest) or 0 < moved - played < min(rest):
            return None
        if moved == played:
            # no later leg of its own: its leg ends on the target's checkers, the opponent's as they were
            end = Board(list(target.me), list(board.opp), None, board.opp_off)
    if end is not None:
        ends = Walker(v, board, 15).paths(dice[:best], best, end, budget=budget)
    else:
        ends = Walker(v, board, 15).paths(dice[:best], best, target, limit=10**9, exact=False, budget=budget)
    for moves, key in ends:
        b = Board.from_key(key, pins, board.opp_off)
        other = side.other
        ob = b.flipped(v)
        other_best = Walker(v, ob, 15).max_depth(rest, budget=budget)
        if other_best == 0:
            if b.key() == target.key() and b.opp_off == target.opp_off:
                return (moves,)
            continue
        tail = _legs(v, ob, other, rest, other_best, after, budget)
        if tail is not None:
            return (moves,) + tail
    return None


SAMPLE_LIMIT = 3000

SAMPLE_BOARDS = 3000
"""Boards each leg of :func:`sample_results` walks once it has found a play, before it stops with those found."""


def sample_results(before: Position, roll: Roll, limit: int = SAMPLE_LIMIT, boards: int = SAMPLE_BOARDS):
    """Up to about ``limit`` legal plays found depth-first, as ``legal_results`` gives them.

    For rolls whose plays are too many to list (escalated gul-bara doubles): the mover's
    leg keeps the first ``limit`` ends its depth-first search meets, and each of them is
    followed by the first end met of each leg of passed numbers after it. The sample is of
    the mover's own checker moves; the passed numbers' legs (the opponent's to choose) are
    one way of playing them, as cheap to find as the first legal one. Each leg's walk
    stops ``boards`` boards after its first end (a leg whose ends are few and far between
    would otherwise be walked whole).
    """
    v, side, seqs, head, start, passes = turn_setup(before, roll)
    best, forced = most_dice(v, start, seqs, head)
    out = []
    pins = start.pins is not None
    for seq in seqs:
        if forced and seq[0] != forced:
            continue
        for moves, key in Walker(v, Board.of(before), head).paths(seq, best, None, limit=limit, enough=boards):
            board = Board.from_key(key, pins, start.opp_off)
            if passes and 0 < best < len(seq):
                for legs, final, fs in _sample_cascade(v, board, side, tuple(seq[best:]), 1, boards):
                    out.append(((moves,) + legs, final, fs))
                    if len(out) >= limit:
                        return out
            else:
                out.append(((moves,), board, side))
        if len(out) >= limit:
            break
    return out


def _sample_cascade(v: Variant, board: Board, side: Side, remaining: tuple[int, ...], limit: int, boards: int):
    ob = board.flipped(v)
    best = Walker(v, ob, 15).max_depth(remaining)
    if best == 0:
        yield (), board, side
        return
    for moves, key in Walker(v, ob, 15).paths(remaining, best, None, limit=limit, enough=boards):
        b = Board.from_key(key, ob.pins is not None, ob.opp_off)
        if best < len(remaining):
            for legs, final, fs in _sample_cascade(v, b, side.other, remaining[best:], limit, boards):
                yield ((moves,) + legs), final, fs
        else:
            yield (moves,), b, side.other
