"""Boards a player passes through making a legal play in any order of its checker moves.

Owns :class:`AnyOrder`. At a real table the checker moves of a play are made in any
order, a checker may be carried over several dice at once, and a hit checker may go
to the bar before or after the hitter arrives. A board with no checker in a hand is
then the start with some of the play's checker moves made (whatever the rules would
say of that order), and any of the checkers the play hits on the bar. :class:`AnyOrder`
lists those boards for every legal play once per roll and answers whether an observed
board is one of them. Imports :mod:`board_rules.movegen` and :mod:`board_rules.moves`;
nothing outside ``board_rules``.
"""

from __future__ import annotations

from board_rules.movegen import Budget, SearchBudgetExceeded, search_side
from board_rules.moves import Board
from board_rules.notation import Roll
from board_rules.position import Position
from board_rules.side import Side

# Boards the listing of the mover's plays may visit.
PLAYS_BUDGET = 20_000
# Checker moves of a play beyond which its orders are not listed (2**n boards each): every roll but
# gul-bara's escalated doubles, whose prefixes :class:`~board_rules.reach.LazyTurn` follows alone.
MOST_MOVES = 4
# Boards listed for one roll at most.
MOST_BOARDS = 50_000


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
