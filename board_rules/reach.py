"""Targeted search: is one board reached from another by a legal play, without listing every play?

Owns the search behind :func:`board_rules.legality.check` for a *legal* result.
Listing every play of an escalated gul-bara double (up to 24 checker moves) can
mean tens of thousands of positions; asking whether one observed board is among
them need not. The search walks the same single checker moves as
:mod:`board_rules.moves` (:meth:`~board_rules.moves.CheckerMoves.try_move`), pruning every board from
which the target cannot be reached:

* checkers only move forward, so for every point ``x`` the mover must still have
  at least as many checkers on ``x`` or behind it as the target has;
* the pips still to play must be a sum of the next dice (exactly, while no
  further checker is borne off; at most, while one may be);
* an opposing checker is never added to a point (only hit or pinned away).

Then the found play must play as many dice as the roll allows (the maximum is
found by a depth-first search that stops at the first full-length path; a checker
move that pins plakoto's mother and so ends the game counts as playing them all,
as in :mod:`board_rules.movegen`), and a single die must be the larger one when
only one can be played. In plakoto the play is named by a route with the fewest
pins, as movegen names it. Gul-bara's passed numbers are followed leg by leg, each
leg pruned against its own side's target.
Imports :mod:`board_rules.moves`; nothing outside ``board_rules``.
"""

from __future__ import annotations

from board_rules.moves import Board, CheckerMoves
from board_rules.notation import Roll
from board_rules.orders import AnyOrder
from board_rules.position import Position
from board_rules.side import Side
from board_rules.variants import Variant

Moves = tuple[tuple[int, int, bool], ...]


def _pips(me: list[int]) -> int:
    return sum(i * me[i] for i in range(1, 26))


class _Walker:
    """Depth-first walks over one side's checker moves for one dice sequence."""

    def __init__(self, variant: Variant, board: Board, head_limit: int) -> None:
        self.s = CheckerMoves(variant, board, head_limit)
        self.b = board
        self.v = variant

    # ------------------------------------------------------------------ most dice playable

    def max_depth(self, dice: tuple[int, ...], at_least: int | None = None) -> int:
        """The most dice of ``dice`` (in order) that can be played; stops early at ``at_least``."""
        n = len(dice)
        goal = n if at_least is None else min(n, at_least)
        seen: set = set()
        best = 0
        s = self.s
        b = self.b

        def rec(depth: int) -> bool:
            nonlocal best
            if depth > best:
                best = depth
            if best >= goal:
                return True
            d = dice[depth]
            me = b.me
            srcs = (25,) if me[25] else [i for i in range(24, 0, -1) if me[i]]
            for src in srcs:
                u = s.try_move(src, d)
                if u is None:
                    continue
                if u[3] and u[1] == 1 and s.mother_pin_ends():
                    s.undo(u)
                    best = n
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

        rec(0)
        return best

    # ------------------------------------------------------------------ paths to a target

    def paths(
        self,
        dice: tuple[int, ...],
        depth_wanted: int,
        target: Board | None,
        limit: int = 1,
        exact: bool = True,
        ending: bool = False,
    ):
        """Up to ``limit`` ``(moves, end board key)`` playing exactly ``depth_wanted`` dice.

        With a ``target``, only boards that can still reach it are walked; with ``exact``
        the path must end on it, otherwise it may end anywhere still behind it (a later
        leg of the same side may move on). A checker move that pins the mother and so
        ends the game ends the path too, with fewer dice played; ``ending`` keeps only
        such paths.

        A single path is looked for first with equal dice played from the back
        (sources in non-increasing order: one order of every set of commuting checker
        moves), then, if none is found, in every order (a move may depend on an
        earlier one: the fevga start rule, a prime rule).
        """
        if ending:
            return self._paths(dice, depth_wanted, target, limit, exact, monotone=False, ending=True)
        if limit == 1 and target is not None and exact:
            if self.v.blocks and not self.b.me[25]:
                moves = _backward(self.b, target, dice[:depth_wanted])
                if moves is None:
                    return []  # not even reachable without the variant's own limits
                if self._replays(dice, moves):
                    return [(moves, target.key())]
                # the variant's own limits (start rule, primes) stop that path: look again
                # backwards with them, then forwards in every order (the monotone walk can
                # take seconds on an escalated gul-bara double, where the order matters)
                moves = _backward(self.b, target, dice[:depth_wanted], (self.v, self.s.head_limit, self.s.head_start))
                if moves is not None and self._replays(dice, moves):
                    return [(moves, target.key())]
                return self._paths(dice, depth_wanted, target, 1, True, monotone=False)
            found = self._paths(dice, depth_wanted, target, 1, True, monotone=True)
            if not found:
                found = self._paths(dice, depth_wanted, target, 1, True, monotone=False)
            if found and self.v.pins:
                found = self._fewest_pins(dice, depth_wanted, target, found)
            return found
        return self._paths(dice, depth_wanted, target, limit, exact, monotone=False)

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

    def _paths(self, dice, depth_wanted, target, limit, exact, monotone, spare=None, ending=False):
        """:meth:`paths` by one depth-first walk; ``spare`` (pin variants, with a target)
        bounds the pins beyond those the target needs (see :meth:`_fewest_pins`)."""
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
            hits = v.hits
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
            # ended by pinning the mother, the play may stop before every die is played
            # (movegen's _Search._rec), and only the next die is sure to be played
            if _mother_pinned_here(v, b, target):
                bigger = [dice[depth] if depth < n else 0 for depth in range(n + 1)]
            else:
                bigger = [max(dice[depth:n], default=0) for depth in range(n + 1)]
            tpins = target.pins

        crossing = [0] * 27  # per node: checkers that must still cross from x to x - 1

        def hopeless(depth: int) -> bool:
            """Prune, and fill ``crossing`` for the source filter."""
            me = b.me
            if me[0] > toff:
                return True
            cum = 0
            need = 0
            most = 0
            for x in range(25, 0, -1):
                cum += me[x]
                c = cum - tcum[x]
                if c < 0:
                    return True
                crossing[x] = c
                need += c
                if c > most:
                    most = c
            if exact:
                # each remaining checker move crosses a point at most once
                if most > n - depth and not pins:
                    return True
                reachable, total = sums[depth]
                if need > total:
                    return True
                if me[0] == toff and need not in reachable:
                    return True
                # every die still to play needs a run of that many points still to be crossed
                # (a run down to point 1 takes any die while a checker may still be borne off)
                big = bigger[depth]
                if big:
                    run = longest = 0
                    for x in range(25, 0, -1):
                        if crossing[x]:
                            run += 1
                            if run > longest:
                                longest = run
                        else:
                            run = 0
                    if longest < big and not (run and me[0] < toff):
                        return True
                if not pins:  # later legs of the other side may still move its checkers
                    opp = b.opp
                    for i in range(1, 25):
                        if opp[i] < topp[i] or (not hits and opp[i] != topp[i]):
                            return True
            return False

        def useful(src: int, d: int) -> bool:
            """Whether a checker moving ``d`` from ``src`` only crosses points it must cross."""
            lo = src - d + 1
            for x in range(src, lo - 1 if lo > 1 else 0, -1):
                if not crossing[x]:
                    return False
            return True

        def rec(depth: int, top: int, spent: int) -> bool:
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
                srcs = [i for i in srcs if useful(i, d)]
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
                if u[3] and u[1] == 1 and s.mother_pin_ends():
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


def _mother_pinned_here(v: Variant, start: Board, target: Board) -> bool:
    """Whether ``target`` has the opponent's mother pinned, not pinned at ``start``, and
    so pinned that the game ended (plakoto's mother rule, by the pinner's start count)."""
    if start.pins is None or target.pins is None:
        return False
    return target.pins[1] == 2 and start.pins[1] != 2 and v.mother_pin_ends_game(target.me[24])


def _backward(start: Board, target: Board, dice, rules: tuple[Variant, int, int] | None = None) -> Moves | None:
    """A path from ``start`` to ``target`` found backwards, for blocking games.

    Walks from the target, last die first, moving checkers back (and back onto the
    board from off); a checker may stand wherever no opposing checker does (a single
    one holds a point), so a move back is legal when the move forward is, save the
    variant's own limits (the start rule, primes). Without ``rules`` those are left to
    the caller, which replays the path forwards. With ``rules`` (the variant, its head
    limit, the checkers on the head when the turn began) every move back is also
    checked forwards, by :meth:`~board_rules.moves.CheckerMoves.try_move` on the board the move starts from, so
    those limits hold all along the path. The last dice are the largest in gul-bara's
    escalation, so this direction prunes far sooner. Returns the forward moves, or ``None``.
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
    seen: set = set()
    path: list[tuple[int, int, bool]] = []

    def feasible(i: int) -> bool:
        # each die crosses a point at most once; pips are exact until a checker is
        # borne off, which may waste some
        if me[0] - off0 > i or min(crossing[1:]) < 0 or max(crossing) > i:
            return False
        return need[0] == left[i] if me[0] == off0 else need[0] <= left[i]

    def shift(lo: int, hi: int, by: int) -> None:
        for x in range(lo, hi + 1):
            crossing[x] += by
        need[0] += by * (hi - lo + 1)

    def step(i: int, src: int, dst: int) -> bool:
        if forward is not None:
            u = forward.try_move(src, dice[i - 1])
            if u is None:
                return False
            forward.undo(u)
            if u[1] != dst:
                return False
        key = (i, bytes(me))
        if key in seen or not feasible(i - 1):
            seen.add(key)
            return False
        seen.add(key)
        path.append((src, dst, False))
        if rec(i - 1):
            return True
        path.pop()
        return False

    def rec(i: int) -> bool:
        if i == 0:
            return me == start.me
        d = dice[i - 1]
        for q in range(1, 25 - d):
            if me[q] and not opp[q + d] and crossing[q + 1] > 0:
                me[q] -= 1
                me[q + d] += 1
                shift(q + 1, q + d, -1)
                found = step(i, q + d, q)
                shift(q + 1, q + d, 1)
                me[q] += 1
                me[q + d] -= 1
                if found:
                    return True
        if me[0] > off0 and not any(me[7:26]):
            # a checker borne off with d: exactly from d, or from the highest point below d
            for p in range(min(d, 6), 0, -1):
                if p < d and any(me[p + 1 : 7]):
                    break
                me[0] -= 1
                me[p] += 1
                shift(1, p, -1)
                found = step(i, p, 0)
                shift(1, p, 1)
                me[0] += 1
                me[p] -= 1
                if found:
                    return True
        return False

    if not feasible(n) or not rec(n):
        return None
    return tuple(reversed(path))


def _best(variant: Variant, board: Board, seqs, head_limit: int) -> tuple[int, int]:
    """``(most dice playable, the die a single-die play must use or 0)`` for these sequences."""
    best = 0
    for seq in seqs:
        best = max(best, _Walker(variant, board, head_limit).max_depth(seq))
        if best == len(seq):
            break
    forced = 0
    if best == 1 and len(seqs) == 2:
        high = max(seqs[0][0], seqs[1][0])
        for seq in seqs:
            if seq[0] == high and _Walker(variant, board, head_limit).max_depth(seq, 1) >= 1:
                forced = high
    return best, forced


def _turn_setup(before: Position, roll: Roll):
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
    v, side, seqs, head, start, passes = _turn_setup(before, roll)
    target_me = Board.of(after, side)
    if target_me.opp_off != start.opp_off and not passes:
        return None
    best, forced = _best(v, start, seqs, head)
    if passes and 0 < best < len(seqs[0]):
        return _legs(v, start, side, tuple(seqs[0]), best, after)
    chosen = None
    for seq in seqs:
        if forced and seq[0] != forced:
            continue
        board = Board.of(before)
        got = _Walker(v, board, head).paths(seq, best, target_me)
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


def _legs(v: Variant, board: Board, side: Side, dice: tuple[int, ...], best: int, after: Position):
    """Legs from ``board`` (``side`` to play ``dice``, ``best`` of them playable) ending on ``after``."""
    target = Board.of(after, side)
    if best == len(dice):
        got = _Walker(v, board, 15).paths(dice, best, target)
        return (got[0][0],) if got else None
    pins = board.pins is not None
    ends = _Walker(v, board, 15).paths(dice[:best], best, target, limit=10**9, exact=False)
    for moves, key in ends:
        b = Board.from_key(key, pins, board.opp_off)
        rest = dice[best:]
        other = side.other
        ob = b.flipped(v)
        other_best = _Walker(v, ob, 15).max_depth(rest)
        if other_best == 0:
            if b.key() == target.key() and b.opp_off == target.opp_off:
                return (moves,)
            continue
        tail = _legs(v, ob, other, rest, other_best, after)
        if tail is not None:
            return (moves,) + tail
    return None


class LazyTurn:
    """A turn being made, followed without listing every play (see :class:`board_rules.legality.TurnTracker`).

    An observed board is on the way when some prefix of the dice leads to it and the
    rest of a play with the most dice can still follow from it.
    """

    def __init__(self, before: Position, roll: Roll) -> None:
        self.v, self.side, self.seqs, self.head, self.start, _ = _turn_setup(before, roll)
        self.before = before
        self.roll = roll
        self.best, self.forced = _best(self.v, self.start, self.seqs, self.head)
        self._any_order: AnyOrder | None = None

    def any_order(self) -> AnyOrder:
        """The boards of the legal plays made in any order (listed on first use)."""
        if self._any_order is None:
            self._any_order = AnyOrder(self.before, self.roll)
        return self._any_order

    def _walker(self, board: Board) -> _Walker:
        w = _Walker(self.v, board, self.head)
        w.s.head_start = self.start.me[24]  # the head rule counts this turn's departures
        return w

    def stages(self, observed: Position):
        """``(sequence, dice used)`` pairs by which ``observed`` lies on the way to a legal play.

        A play that ended the game by pinning the mother counts as using every die
        (``self.best``), as :mod:`board_rules.movegen` counts it: nothing more may be played.
        """
        target = Board.of(observed, self.side)
        if target.opp_off != self.start.opp_off:
            return []
        ended = _mother_pinned_here(self.v, self.start, target)
        out = []
        total = _pips(self.start.me) - _pips(target.me)
        for seq in self.seqs:
            if self.forced and seq[0] != self.forced:
                continue
            for j in range(0, self.best + 1):
                if target.me[0] == self.start.me[0] and sum(seq[:j]) != total:
                    continue
                if sum(seq[:j]) < total:
                    continue
                if j == 0:
                    ok = target.key() == self.start.key()
                else:
                    if ended and self._walker(Board.of(self.before)).paths(seq, j, target, ending=True):
                        out.append((seq, self.best))  # the game is over: the play is complete
                        continue
                    ok = bool(self._walker(Board.of(self.before)).paths(seq, j, target))
                if ok and self._can_finish(target, seq, j):
                    out.append((seq, j))
        return out

    def _can_finish(self, board: Board, seq, j: int) -> bool:
        need = self.best - j
        if need <= 0:
            return True
        b = Board(list(board.me), list(board.opp), None if board.pins is None else list(board.pins), board.opp_off)
        return self._walker(b).max_depth(tuple(seq[j:]), need) >= need

    def on_the_way(self, observed: Position) -> bool:
        """Whether ``observed`` is on the way: a prefix of the dice, or a legal play made in another order."""
        return bool(self.stages(observed)) or self.any_order().on_the_way(observed)

    def is_complete(self, observed: Position) -> bool:
        return any(j == self.best for _, j in self.stages(observed))

    def landing_points(self, observed: Position, src: int) -> set[int]:
        """Own points (0 = off) where a checker lifted from own point ``src`` may land now."""
        target = Board.of(observed, self.side)
        if _mother_pinned_here(self.v, self.start, target):
            return set()  # the game is over: nothing more is played
        found = self.any_order().landing_points(observed, src)
        for seq, j in self.stages(observed):
            board = Board(
                list(target.me), list(target.opp), None if target.pins is None else list(target.pins), target.opp_off
            )
            w = self._walker(board)
            at = src
            undo = []
            for k in range(j, len(seq)):
                if at == 0 or board.me[at] <= 0:
                    break
                u = w.s.try_move(at, seq[k])
                if u is None:
                    break
                undo.append(u)
                at = u[1]
                ended = u[3] and at == 1 and w.s.mother_pin_ends()
                if ended or self._can_finish(board, seq, k + 1):
                    found.add(at)
                if ended:
                    break
            for u in reversed(undo):
                w.s.undo(u)
        return found


SAMPLE_LIMIT = 3000


def sample_results(before: Position, roll: Roll, limit: int = SAMPLE_LIMIT):
    """Up to about ``limit`` legal plays found depth-first, as ``legal_results`` gives them.

    For rolls whose plays are too many to list (escalated gul-bara doubles): each leg
    keeps the first ``limit`` ends its depth-first search meets.
    """
    v, side, seqs, head, start, passes = _turn_setup(before, roll)
    best, forced = _best(v, start, seqs, head)
    out = []
    pins = start.pins is not None
    for seq in seqs:
        if forced and seq[0] != forced:
            continue
        for moves, key in _Walker(v, Board.of(before), head).paths(seq, best, None, limit=limit):
            board = Board.from_key(key, pins, start.opp_off)
            if passes and 0 < best < len(seq):
                for legs, final, fs in _sample_cascade(v, board, side, tuple(seq[best:]), limit):
                    out.append(((moves,) + legs, final, fs))
                    if len(out) >= limit:
                        return out
            else:
                out.append(((moves,), board, side))
        if len(out) >= limit:
            break
    return out


def _sample_cascade(v: Variant, board: Board, side: Side, remaining: tuple[int, ...], limit: int):
    ob = board.flipped(v)
    best = _Walker(v, ob, 15).max_depth(remaining)
    if best == 0:
        yield (), board, side
        return
    for moves, key in _Walker(v, ob, 15).paths(remaining, best, None, limit=limit):
        b = Board.from_key(key, ob.pins is not None, ob.opp_off)
        if best < len(remaining):
            for legs, final, fs in _sample_cascade(v, b, side.other, remaining[best:], limit):
                yield ((moves,) + legs), final, fs
        else:
            yield (moves,), b, side.other
