"""A turn being made: the boards a player passes through on the way to a legal play.

Owns :class:`LazyTurn`, behind :class:`board_rules.legality.TurnTracker`, and
:class:`AnyOrder`. :class:`LazyTurn` follows the dice in order without listing every
play, and remembers the boards it found, so that the next board (one checker moved on)
needs no search; :class:`AnyOrder` lists, once per roll and only when the dice in order
cannot answer, the boards of each legal play made in any order: some of its checker
moves made, and any of the checkers it hits on the bar (``docs/rules-notes.md``). Imports :mod:`board_rules.movegen`, :mod:`board_rules.moves`
and :mod:`board_rules.reach`; nothing outside ``board_rules``.
"""

from __future__ import annotations

from board_rules.backward import highest_point, most_waste
from board_rules.movegen import Budget, SearchBudgetExceeded, search_side
from board_rules.moves import Board
from board_rules.notation import Roll
from board_rules.position import Position
from board_rules.reach import Walker, ends_here, most_dice, pips, turn_setup
from board_rules.side import Side

# Boards the listing of the mover's plays may visit.
PLAYS_BUDGET = 20_000
# Checker moves of a play beyond which its orders are not listed (2**n boards each): every roll but
# gul-bara's escalated doubles, whose prefixes :class:`LazyTurn` follows alone.
MOST_MOVES = 4
# Boards listed for one roll at most.
MOST_BOARDS = 50_000
# Boards on the way whose stages a turn remembers.
REMEMBERED = 64


class AnyOrder:
    """The boards passed through by the legal plays of ``roll`` from ``before``, made in any order.

    ``complete`` is False when the plays were too many to list: then only boards of the
    plays listed are known.
    """

    def __init__(self, before: Position, roll: Roll) -> None:
        self.side = before.turn
        self.start = Board.of(before)
        self.hits = before.variant.hits
        self.plays: list[tuple[tuple[int, int, bool], ...]] = []
        # mover's checkers (bytes) -> (play index, moves made as a bit mask, points that must be hit by now)
        self.boards: dict[bytes, list[tuple[int, int, tuple[int, ...]]]] = {}
        self.complete = True
        v = before.variant
        rolls_played = before.rolls[0 if self.side is Side.WHITE else 1]
        seqs = v.dice_sequences(roll.d1, roll.d2, rolls_played)
        if self.start.game_over():
            return  # nothing is played once a side has every checker off
        if any(len(seq) > MOST_MOVES for seq in seqs):
            self.complete = False  # an escalated gul-bara double: too many plays of too many moves
            return
        head = v.head_limit(roll.d1, roll.d2, rolls_played)
        try:  # the mover's own checker moves: numbers passed to the opponent are not followed
            results, _, _ = search_side(v, Board.of(before), seqs, head, Budget(PLAYS_BUDGET))
        except SearchBudgetExceeded:
            self.complete = False
            return
        size = 0
        for moves, _ in results.values():
            if size + (1 << len(moves)) > MOST_BOARDS:
                self.complete = False
                continue
            size += 1 << len(moves)
            self._add(moves)

    def _add(self, moves: tuple[tuple[int, int, bool], ...]) -> None:
        index = len(self.plays)
        self.plays.append(moves)
        start = self.start.me
        for mask in range(1 << len(moves)):
            me = list(start)
            for i, (src, dst, _) in enumerate(moves):
                if mask >> i & 1:
                    me[src] -= 1
                    me[dst] += 1
            if min(me) < 0:
                continue  # a checker moved on from where no checker stands yet
            must = tuple(dst for src, dst, hit in moves if hit and dst and me[dst]) if self.hits else ()
            self.boards.setdefault(bytes(me), []).append((index, mask, must))

    # ------------------------------------------------------------------ queries

    def matches(self, observed: Position) -> list[tuple[int, int]]:
        """``(play index, moves made)`` for every way ``observed`` lies on a legal play made in some order."""
        target = Board.of(observed, self.side)
        entries = self.boards.get(bytes(target.me))
        if not entries or target.opp_off != self.start.opp_off:
            return []
        if self.hits:
            return self._hit_matches(target, entries)
        return [(i, mask) for i, mask, _ in entries if self._board(i, mask, target.me) == target.key()]

    def _hit_matches(self, target: Board, entries) -> list[tuple[int, int]]:
        """Entries whose hit checkers on the bar (``target`` against the start) the play hits."""
        before, now = self.start.opp, target.opp
        lifted = {p for p in range(1, 25) if before[p] != now[p]}
        if any(before[p] != 1 or now[p] for p in lifted) or now[0] != before[0] + len(lifted):
            return []
        out = []
        for i, mask, must in entries:
            hit = {dst for _, dst, h in self.plays[i] if h}
            if lifted <= hit and lifted.issuperset(must):
                out.append((i, mask))
        return out

    def _board(self, index: int, mask: int, me: list[int]) -> bytes:
        """The key of the board with the moves of ``mask`` made (no hits: the opponent only pinned or released)."""
        opp = list(self.start.opp)
        pins = self.start.pins
        if pins is None:
            return bytes(me + opp)
        pins = list(pins)
        for p in range(1, 25):
            if pins[p] == 2 and not me[p]:  # the pinning checker left: the pinned one is free
                pins[p] = 0
                opp[p] = 1
            elif not pins[p] and opp[p] == 1 and me[p]:  # a lone checker covered: pinned
                pins[p] = 2
                opp[p] = 0
        return bytes(me + opp + pins)

    def on_the_way(self, observed: Position) -> bool:
        return bool(self.matches(observed))

    def landing_points(self, observed: Position, src: int) -> set[int]:
        """Own points (0 = off) where a checker lifted from own point ``src`` may land now, by the moves still to make."""
        found: set[int] = set()
        for i, mask in self.matches(observed):
            rest = [(s, d) for k, (s, d, _) in enumerate(self.plays[i]) if not mask >> k & 1]
            _follow(rest, src, found)
        return found


def _follow(rest: list[tuple[int, int]], at: int, found: set[int]) -> None:
    """Every point a checker on ``at`` reaches by the checker moves ``rest``, one after another."""
    for k, (s, d) in enumerate(rest):
        if s == at:
            found.add(d)
            if d:
                _follow(rest[:k] + rest[k + 1 :], d, found)


def _may_land_elsewhere(src: int, dice, found: set[int]) -> bool:
    """Whether a checker on own point ``src`` moved by the first few of ``dice`` in turn could stop on a
    place not in ``found`` (0 = off), whatever stands in its way."""
    at = src
    for d in dice:
        at = max(at - d, 0)
        if at not in found:
            return True
        if at == 0:
            return False
    return False


class LazyTurn:
    """A turn being made, followed without listing every play (see :class:`board_rules.legality.TurnTracker`).

    An observed board is on the way when some prefix of the dice leads to it and the
    rest of a play with the most dice can still follow from it, or when it is one of
    :class:`AnyOrder`'s boards (a legal play made in another order).
    """

    def __init__(self, before: Position, roll: Roll) -> None:
        self.v, self.side, self.seqs, self.head, self.start, _ = turn_setup(before, roll)
        self.before = before
        self.roll = roll
        self.best, self.forced = most_dice(self.v, self.start, self.seqs, self.head)
        self._any_order: AnyOrder | None = None
        # boards found on the way, by key: their stages (the last few asked about), and the
        # (sequence, dice used) boards a next observed board may extend by one checker move
        self._stages: dict[bytes, list] = {}
        self._reached: list[tuple[Board, tuple[int, ...], int]] = [(self.start, seq, 0) for seq in self.seqs]

    def any_order(self) -> AnyOrder:
        """The boards of the legal plays made in any order (listed on first use)."""
        if self._any_order is None:
            self._any_order = AnyOrder(self.before, self.roll)
        return self._any_order

    def _walker(self, board: Board) -> Walker:
        w = Walker(self.v, board, self.head)
        w.s.head_start = self.start.me[24]  # the head rule counts this turn's departures
        return w

    def stages(self, observed: Position):
        """``(sequence, dice used)`` pairs by which ``observed`` lies on the way to a legal play.

        A play that ended the game (the last checker off, the mother pinned) counts as using
        every die (``self.best``), as :mod:`board_rules.movegen` counts it: nothing more may be played.
        """
        target = Board.of(observed, self.side)
        if target.opp_off != self.start.opp_off:
            return []
        key = target.key()
        known = self._stages.get(key)
        if known is not None:
            return known
        out = self._find_stages(target)
        if len(self._stages) >= REMEMBERED:
            self._stages.clear()
        self._stages[key] = out
        for seq, j in out:
            self._reached.append((target, seq, j))
        del self._reached[:-REMEMBERED]
        return out

    def _extends(self, target: Board, seq, j: int) -> bool:
        """Whether ``target`` is a board already found after ``j - 1`` dice of ``seq``, and one checker move more.

        Players make a play one checker move at a time, so the board seen next is most
        often the last one found with one more checker moved: no search is needed for it.
        """
        key = target.key()
        d = seq[j - 1]
        for board, s, k in reversed(self._reached):
            if k != j - 1 or s != seq:
                continue
            b = board.copy()
            w = self._walker(b)
            for src in w.s.sources():
                u = w.s.try_move(src, d)
                if u is None:
                    continue
                same = b.key() == key and not w.s.ends_game(u)
                w.s.undo(u)
                if same:
                    return True
        return False

    def _candidates(self, target: Board):
        """``(sequence, dice used)`` pairs whose pips ``target`` may have moved (all of them, or
        fewer where checkers were borne off)."""
        total = pips(self.start.me) - pips(target.me)
        off = target.me[0] - self.start.me[0]  # checkers borne off: each wastes less than its die
        high = highest_point(target.me)
        for seq in self.seqs:
            if self.forced and seq[0] != self.forced:
                continue
            for j in range(0, self.best + 1):
                played = sum(seq[:j])
                if played < total or (played > total and (off <= 0 or off > j)):
                    continue
                if played > total and played - total > most_waste(seq[:j], high)[off]:
                    continue
                yield seq, j

    def _one_more_move(self, target: Board) -> bool:
        """Whether ``target`` is a board found lately with one checker moved on, and the play can still
        be finished from it: :meth:`on_the_way` without every stage (with checkers borne off, the dice
        used can be ambiguous, and each count a board is not reached with takes a search to rule out)."""
        if target.key() in self._stages or ends_here(self.v, self.start, target):
            return False
        for seq, j in self._candidates(target):
            if j and self._extends(target, seq, j) and self._can_finish(target, seq, j):
                self._reached.append((target, seq, j))
                del self._reached[:-REMEMBERED]
                return True
        return False

    def _find_stages(self, target: Board):
        """:meth:`stages` of a board not asked about lately."""
        ended = ends_here(self.v, self.start, target)
        out = []
        for seq, j in self._candidates(target):
            if j and ended and self._walker(Board.of(self.before)).paths(seq, j, target, ending=True):
                out.append((seq, self.best))  # the game is over: the play is complete
                continue
            ok = (j and self._extends(target, seq, j)) or self._reached_by(target, seq, j)
            if ok and self._can_finish(target, seq, j):
                out.append((seq, j))
        return out

    def _reached_by(self, target: Board, seq, j: int) -> bool:
        """Whether the first ``j`` dice of ``seq`` can take the start to ``target``: a search but for ``j`` 0."""
        if j == 0:
            return target.key() == self.start.key()
        return bool(self._walker(Board.of(self.before)).paths(seq, j, target))

    def _can_finish(self, board: Board, seq, j: int) -> bool:
        need = self.best - j
        if need <= 0:
            return True
        b = Board(list(board.me), list(board.opp), None if board.pins is None else list(board.pins), board.opp_off)
        return self._walker(b).max_depth(tuple(seq[j:]), need) >= need

    def on_the_way(self, observed: Position) -> bool:
        """Whether ``observed`` is on the way: a prefix of the dice, or a legal play made in another order."""
        target = Board.of(observed, self.side)
        if target.opp_off == self.start.opp_off and self._one_more_move(target):
            return True
        return bool(self.stages(observed)) or self.any_order().on_the_way(observed)

    def is_complete(self, observed: Position) -> bool:
        return any(j == self.best for _, j in self.stages(observed))

    def landing_points(self, observed: Position, src: int) -> set[int]:
        """Own points (0 = off) where a checker lifted from own point ``src`` may land now.

        The landings of the plays made in another order (:class:`AnyOrder`, listed once per
        roll: the slow part) are looked up only where they can add one (:meth:`_in_order_will_do`).
        """
        target = Board.of(observed, self.side)
        if ends_here(self.v, self.start, target) or self.start.game_over():
            return set()  # the game is over: nothing more is played
        if target.key() not in self._stages and target.opp_off == self.start.opp_off:
            found = self._landings_known_first(observed, target, src)
            if found is not None:
                return found
        stages = self.stages(observed)
        return self._landings_in_order(target, src, stages, self._landings_in_any_order(observed, target, src, stages))

    def _landings_in_any_order(self, observed: Position, target: Board, src: int, on_the_way) -> set[int]:
        """The landings of ``src`` by :class:`AnyOrder`'s plays, or none where ``observed`` is ``on_the_way``
        in order and the dice in order find them all (:meth:`_in_order_will_do`)."""
        if on_the_way and self._in_order_will_do(target, src):
            return set()
        return self.any_order().landing_points(observed, src)

    def _landings_known_first(self, observed: Position, target: Board, src: int) -> set[int] | None:
        """:meth:`landing_points` from the stages found without a search (the board one checker move on
        from one found lately), then from each other count of dice only where its dice could take the
        checker somewhere not yet found; None where no stage is found so cheaply.

        With checkers borne off, a board may lie after several counts of dice, and ruling out a count
        it does not lie after takes a search: a count whose next dice lead only to landings already
        found need not be ruled out."""
        known, open_ = [], []
        for seq, j in self._candidates(target):
            if j == 0 or not self._extends(target, seq, j):
                open_.append((seq, j))
            elif self._can_finish(target, seq, j):
                known.append((seq, j))
        if not known:
            return None
        found = self._landings_in_order(target, src, known, self._landings_in_any_order(observed, target, src, known))
        for seq, j in open_:
            if not _may_land_elsewhere(src, seq[j:], found):
                continue
            if self._reached_by(target, seq, j) and self._can_finish(target, seq, j):
                known.append((seq, j))
                found = self._landings_in_order(target, src, [(seq, j)], found)
        self._reached.extend((target, seq, j) for seq, j in known)
        del self._reached[:-REMEMBERED]
        return found

    def landing_points_listed(self, observed: Position, src: int) -> set[int]:
        """:meth:`landing_points` always with :class:`AnyOrder`'s listing: the reference it is tested against."""
        target = Board.of(observed, self.side)
        if ends_here(self.v, self.start, target) or self.start.game_over():
            return set()
        found = self.any_order().landing_points(observed, src)
        return self._landings_in_order(target, src, self.stages(observed), found)

    def _in_order_will_do(self, board: Board, src: int) -> bool:
        """Whether the dice in order find every landing of a checker lifted from ``src`` on ``board``.

        So in the hitting games without other limits (backgammon, portes, short nardy), on a
        board some prefix of the dice reaches, unless a checker waits on the bar while another
        moves, or the lifted checker could reach the tray (bearing off in another order, as
        from a lower point before a higher one): the only checker moves that a play made in
        another order allows before their turn.
        """
        v = self.v
        if not v.hits or v.pins or v.blocks or v.start_rule_limit or v.head_rule:
            return False
        me = board.me
        if me[25] and src != 25:
            return False
        reach = sum(self.seqs[0])  # the most pips the dice move
        home = sum((x - 6) * me[x] for x in range(7, 26))  # pips before every checker is home
        return src - reach > 0 or home >= reach  # the lifted checker cannot reach the tray in any order

    def _landings_in_order(self, target: Board, src: int, stages, found: set[int]) -> set[int]:
        """``found`` with the landings of ``src`` by the dice in order after each of ``stages``."""
        for seq, j in stages:
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
                ended = (at == 0 or u[3]) and w.s.ends_game(u)
                if ended or self._can_finish(board, seq, k + 1):
                    found.add(at)
                if ended:
                    break
            for u in reversed(undo):
                w.s.undo(u)
        return found
