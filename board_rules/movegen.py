"""Legal plays: every way to play a roll, one per distinct resulting position.

Owns the move generator. Single checker moves (pseudo-legal: where a checker may
land, what landing does) are kept apart from the whole-turn filter (use both dice
or the larger one, variant limits), as python-chess keeps pseudo-legal and legal
moves apart. Imports :mod:`board_rules.position`, :mod:`board_rules.notation` and
:mod:`board_rules.variants`; nothing outside ``board_rules``.

Internally a position is seen from the mover's side as three lists of 26 small
integers, indexed by the mover's own point numbers:

* ``me[1..24]`` the mover's checkers on top of each point, ``me[25]`` its bar,
  ``me[0]`` its checkers borne off;
* ``opp[1..24]`` the opponent's checkers on top, ``opp[0]`` the opponent's bar;
* ``pins[1..24]`` (plakoto) ``1`` where a mover's checker is pinned underneath,
  ``2`` where an opponent's checker is pinned under the mover's.

A resulting board is keyed by ``bytes(me + opp + pins)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from board_rules import fastgen
from board_rules.errors import IllegalPlayError
from board_rules.notation import CheckerMove, Play, Roll
from board_rules.position import Position
from board_rules.side import Side
from board_rules.variants import SAME, Variant

_F_SAME = tuple([0] + [((p + 11) % 24) + 1 for p in range(1, 25)])  # involution on 1..24
_F_OPP = tuple([0] + [25 - p for p in range(1, 25)])


def _conv(variant: Variant, side: Side) -> tuple[int, ...]:
    """own point -> white point for ``side`` (index 0 unused)."""
    if side is Side.WHITE:
        return tuple(range(25))
    return _F_SAME if variant.geometry == SAME else _F_OPP


@dataclass(slots=True)
class Board:
    """The mover's view of a position (see the module docstring)."""

    me: list[int]
    opp: list[int]
    pins: list[int] | None
    opp_off: int

    def key(self) -> bytes:
        if self.pins is None:
            return bytes(self.me + self.opp)
        return bytes(self.me + self.opp + self.pins)

    @classmethod
    def of(cls, position: Position, side: Side | None = None) -> Board:
        """``position`` from ``side``'s view (default: the side to move)."""
        side = position.turn if side is None else side
        v = position.variant
        sign = side.sign
        conv = _conv(v, side)
        pts = position.points
        me = [0] * 26
        opp = [0] * 26
        for own in range(1, 25):
            c = pts[conv[own] - 1] * sign
            if c > 0:
                me[own] = c
            elif c < 0:
                opp[own] = -c
        si = 0 if side is Side.WHITE else 1
        me[25] = position.bar[si]
        me[0] = position.off[si]
        opp[0] = position.bar[1 - si]
        pins = None
        if v.pins:
            pins = [0] * 26
            pinned = position.pinned
            for own in range(1, 25):
                pv = pinned[conv[own] - 1] * sign
                if pv:
                    pins[own] = 1 if pv > 0 else 2
        return cls(me, opp, pins, position.off[1 - si])

    def flipped(self, variant: Variant) -> Board:
        """The same board from the opponent's view."""
        f = _F_SAME if variant.geometry == SAME else _F_OPP
        me = [0] * 26
        opp = [0] * 26
        for i in range(1, 25):
            me[f[i]] = self.opp[i]
            opp[f[i]] = self.me[i]
        me[0] = self.opp_off
        me[25] = self.opp[0]
        opp[0] = self.me[25]
        pins = None
        if self.pins is not None:
            pins = [0] * 26
            for i in range(1, 25):
                if self.pins[i]:
                    pins[f[i]] = 3 - self.pins[i]
        return Board(me, opp, pins, self.me[0])

    def white_view(self, variant: Variant, side: Side) -> tuple[list[int], list[int], tuple[int, int], tuple[int, int]]:
        """``(points, pinned, bar, off)`` of this board seen from ``side``, in white's numbering."""
        conv = _conv(variant, side)
        sign = side.sign
        pts = [0] * 24
        pinned = [0] * 24
        for own in range(1, 25):
            w = conv[own] - 1
            if self.me[own]:
                pts[w] = self.me[own] * sign
            elif self.opp[own]:
                pts[w] = -self.opp[own] * sign
            if self.pins is not None and self.pins[own]:
                pinned[w] = sign if self.pins[own] == 1 else -sign
        if side is Side.WHITE:
            return pts, pinned, (self.me[25], self.opp[0]), (self.me[0], self.opp_off)
        return pts, pinned, (self.opp[0], self.me[25]), (self.opp_off, self.me[0])

    def to_position(self, template: Position, side: Side, turn: Side, rolls: tuple[int, int]) -> Position:
        """A :class:`Position` of this board seen from ``side``; ``template`` gives the variant."""
        pts, pinned, bar, off = self.white_view(template.variant, side)
        return Position(template.variant, turn, tuple(pts), tuple(pinned), bar, off, rolls)


class SearchBudgetExceeded(Exception):
    """A search visited more boards than its budget allowed (internal; callers fall back)."""


class Budget:
    """Boards a search (and the searches of its passed legs) may still visit."""

    __slots__ = ("left",)

    def __init__(self, boards: int) -> None:
        self.left = boards

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise SearchBudgetExceeded


class _Search:
    """Depth-first search of one side's checker moves for a sequence of dice.

    Records, per distinct final board, the checker moves of the first path found,
    keeping only boards reached with the most dice played. In hitting games a double
    is searched with sources in non-increasing order (every play has such an order);
    elsewhere intermediate boards are memoised per depth, so transpositions are
    searched once. ``budget`` (boards visited) bounds a search whose plays are too
    many to list (escalated gul-bara doubles): past it, :class:`SearchBudgetExceeded`.
    """

    __slots__ = (
        "variant",
        "b",
        "dice",
        "n",
        "results",
        "best",
        "moves",
        "seen",
        "head_start",
        "head_limit",
        "own_pinned_outside",
        "own_pinned_home",
        "f",
        "monotone",
        "pinned_block_home",
        "budget",
    )

    def __init__(self, variant: Variant, board: Board, head_limit: int, budget: Budget | None = None) -> None:
        self.variant = variant
        self.b = board
        self.results: dict[bytes, tuple] = {}
        self.best = -1
        self.moves: list[tuple[int, int, bool]] = []
        self.head_start = board.me[24]
        self.head_limit = head_limit
        self.f = _F_SAME if variant.geometry == SAME else _F_OPP
        pins = board.pins
        self.own_pinned_outside = 0
        self.own_pinned_home = 0
        if pins is not None:
            self.own_pinned_outside = sum(1 for i in range(7, 25) if pins[i] == 1)
            self.own_pinned_home = sum(1 for i in range(1, 7) if pins[i] == 1)
        self.pinned_block_home = not getattr(variant.options, "bear_off_while_pinned", True)
        self.monotone = False
        self.budget = budget

    # -------------------------------------------------------------------- one checker move

    def outside(self) -> int:
        """Mover checkers that stop bearing off (outside home, on the bar, or pinned)."""
        me = self.b.me
        n = me[25] + self.own_pinned_outside
        for i in range(7, 25):
            n += me[i]
        if self.pinned_block_home:
            n += self.own_pinned_home
        return n

    def try_move(self, src: int, d: int):
        """Apply one checker move if pseudo-legal and allowed; return its undo record or None."""
        b = self.b
        me, opp, pins = b.me, b.opp, b.pins
        v = self.variant
        dst = src - d
        if dst <= 0:
            if self.outside():
                return None
            if dst < 0:
                for i in range(src + 1, 7):
                    if me[i] or (pins is not None and pins[i] == 1):
                        return None
            dst = 0
        hit = False
        pinned_now = False
        if dst:
            o = opp[dst]
            if pins is not None:
                pv = pins[dst]
                if pv == 1:
                    return None
                if pv == 0:
                    if o >= 2:
                        return None
                    if o == 1:
                        pinned_now = True
            elif o:
                if v.blocks or o >= 2:
                    return None
                hit = True
        # restrictions on leaving the start (fevga family) or the head (long nardy)
        if src == 24 and dst:
            if v.start_rule_limit and me[24] < 15 and not self._passed():
                return None
            if v.head_rule and self.head_start - me[24] >= self.head_limit:
                return None
        # apply
        me[src] -= 1
        released = False
        if pins is not None and src <= 24 and me[src] == 0 and pins[src] == 2:
            pins[src] = 0
            opp[src] = 1
            released = True
        if dst:
            me[dst] += 1
            if hit:
                opp[dst] = 0
                opp[0] += 1
            elif pinned_now:
                opp[dst] = 0
                pins[dst] = 2
        else:
            me[0] += 1
        undo = (src, dst, hit, pinned_now, released)
        if dst and (v.start_quarter_rule or v.trapping_prime_rule) and self._forbidden_prime(dst):
            self.undo(undo)
            return None
        return undo

    def undo(self, u) -> None:
        src, dst, hit, pinned_now, released = u
        b = self.b
        me, opp, pins = b.me, b.opp, b.pins
        if dst:
            me[dst] -= 1
            if hit:
                opp[dst] = 1
                opp[0] -= 1
            elif pinned_now:
                opp[dst] = 1
                pins[dst] = 0
        else:
            me[0] -= 1
        if released:
            pins[src] = 2
            opp[src] = 0
        me[src] += 1

    def _passed(self) -> bool:
        """Whether a checker has passed the point that frees the start (fevga family)."""
        me = self.b.me
        if me[0]:
            return True
        for i in range(1, self.variant.start_rule_limit + 1):
            if me[i]:
                return True
        return False

    def _forbidden_prime(self, dst: int) -> bool:
        """Whether landing on ``dst`` made a prime the variant forbids.

        Checked after every checker move, so a play may not pass through such a prime.
        """
        me = self.b.me
        v = self.variant
        if v.start_quarter_rule and dst >= 19:
            if me[19] and me[20] and me[21] and me[22] and me[23] and me[24]:
                return True
        if v.trapping_prime_rule:
            f = self.f  # mover point <-> opponent point (an involution)
            o = f[dst]
            lo = o
            while lo > 1 and me[f[lo - 1]]:
                lo -= 1
            hi = o
            while hi < 24 and me[f[hi + 1]]:
                hi += 1
            if hi - lo + 1 >= 6:
                # allowed only while some opposing checker is ahead of it (or borne off)
                if self.b.opp_off:
                    return False
                opp = self.b.opp
                for x in range(1, lo):
                    if opp[f[x]]:
                        return False
                return True
        return False

    def _mother_pin_ends(self) -> bool:
        v = self.variant
        return v.pins and v.mother_pin_ends_game(self.b.me[24])

    # -------------------------------------------------------------------- whole sequences

    def run(self, dice: tuple[int, ...]) -> None:
        """Search ``dice`` in this order from the current board."""
        self.dice = dice
        self.n = len(dice)
        self.seen: set = set()
        v = self.variant
        self.monotone = self.n == 4 and len(set(dice)) == 1 and not (v.pins or v.blocks)
        self._rec(0, 25)

    def _record(self, depth: int) -> None:
        if depth > self.best:
            self.best = depth
            self.results = {}
        if depth == self.best:
            k = self.b.key()
            old = self.results.get(k)
            if old is None:
                self.results[k] = (tuple(self.moves), self.dice[0] if depth else 0)
            elif self.b.pins is not None and _marks(self.moves) < _marks(old[0]):
                # a pin made and released on the way reads worse than the plain route
                self.results[k] = (tuple(self.moves), old[1])

    def _rec(self, depth: int, limit: int) -> None:
        if depth == self.n:
            self._record(depth)
            return
        if self.budget is not None:
            self.budget.spend()
        d = self.dice[depth]
        moved = False
        me = self.b.me
        if me[25]:
            srcs = (25,)
        else:
            top = limit if self.monotone and limit < 24 else 24
            srcs = [i for i in range(top, 0, -1) if me[i]]
        for src in srcs:
            u = self.try_move(src, d)
            if u is None:
                continue
            moved = True
            dst = u[1]
            mark = u[2] or u[3]
            self.moves.append((src, dst, mark))
            if u[3] and dst == 1 and self._mother_pin_ends():
                self._record(self.n)  # the game ends at once: the play is complete
            elif self.monotone:
                self._rec(depth + 1, src)
            else:
                sk = (depth, self.b.key())
                if sk not in self.seen:
                    self.seen.add(sk)
                    self._rec(depth + 1, src)
            self.moves.pop()
            self.undo(u)
        if not moved:
            self._record(depth)


def _marks(moves) -> int:
    return sum(1 for m in moves if m[2])


def _search_side(variant: Variant, board: Board, dice_seqs, head_limit: int, budget: Budget | None = None):
    """All maximal results of one side's checker moves: ``({key: (moves, first die)}, best, search)``.

    The hitting games go to :mod:`board_rules.fastgen` (same answer, ``search`` is None).
    """
    if fastgen.handles(variant, dice_seqs):
        results, best = fastgen.search(board.me, board.opp, dice_seqs)
        return results, best, None
    return _generic_search_side(variant, board, dice_seqs, head_limit, budget)


def _generic_search_side(variant: Variant, board: Board, dice_seqs, head_limit: int, budget: Budget | None = None):
    """:func:`_search_side` by the generic :class:`_Search`, for every variant.

    Raises :class:`SearchBudgetExceeded` past ``budget`` boards visited.
    """
    s = _Search(variant, board, head_limit, budget)
    results: dict[bytes, tuple] = {}
    best = -1
    for seq in dice_seqs:
        s.results = {}
        s.best = -1
        s.run(seq)
        if s.best > best:
            best = s.best
            results = dict(s.results)
        elif s.best == best:
            for k, val in s.results.items():
                old = results.get(k)
                if old is None or (board.pins is not None and _marks(val[0]) < _marks(old[0])):
                    results[k] = val
    # dice that can be played only one at a time: the larger must be played if it can
    if best == 1 and len(dice_seqs) == 2:
        high = max(dice_seqs[0][0], dice_seqs[1][0])
        if any(fd == high for _, fd in results.values()):
            results = {k: val for k, val in results.items() if val[1] == high}
    return results, best, s


def _board_from_key(key: bytes, pins: bool, opp_off: int) -> Board:
    me = list(key[0:26])
    opp = list(key[26:52])
    return Board(me, opp, list(key[52:78]) if pins else None, opp_off)


def _moves(raw) -> tuple[CheckerMove, ...]:
    return tuple(CheckerMove(s, d, h) for s, d, h in raw)


def legal_results(position: Position, roll: Roll, budget: int | None = None):
    """The legal plays as raw data: a list of ``(legs, final_board, final_side)``.

    ``legs`` is a tuple of tuples of ``(src, dst, hit)`` in each leg's mover numbering;
    ``final_board`` is a :class:`Board` seen from ``final_side``. Cheaper than
    :func:`legal_plays` (no objects are built); used by benchmarks and ``check``.
    Raises :class:`SearchBudgetExceeded` when more than ``budget`` boards would be
    searched (an escalated gul-bara double can have over a million plays).
    """
    v = position.variant
    side = position.turn
    rolls_played = position.rolls[0 if side is Side.WHITE else 1]
    d1, d2 = roll.d1, roll.d2
    seqs = v.dice_sequences(d1, d2, rolls_played)
    board = Board.of(position)
    head_limit = v.head_limit(d1, d2, rolls_played)
    shared = None if budget is None else Budget(budget)
    results, best, _ = _search_side(v, board, seqs, head_limit, shared)
    out = []
    pins = board.pins is not None
    if v.passes_unplayed(d1, d2, rolls_played) and 0 < best < len(seqs[0]):
        seen: set[bytes] = set()
        for key, (moves, _) in results.items():
            b = _board_from_key(key, pins, board.opp_off)
            for legs, final, final_side in _cascade(v, b, side, seqs[0][best:], shared):
                k = final.key() if final_side is side else final.flipped(v).key()
                if k not in seen:
                    seen.add(k)
                    out.append(((moves,) + legs, final, final_side))
        return out
    if pins:
        for key, (moves, _) in results.items():
            out.append(((moves,), _board_from_key(key, pins, board.opp_off), side))
        return out
    opp_off = board.opp_off  # the hot path of every hitting game: build the boards inline
    return [
        ((moves,), Board(list(key[:26]), list(key[26:52]), None, opp_off), side) for key, (moves, _) in results.items()
    ]


def _cascade(v: Variant, board: Board, side: Side, remaining: tuple[int, ...], budget: Budget | None = None):
    """Gul-bara: the remaining numbers pass to the opponent, and back, while someone moves."""
    other = side.other
    ob = board.flipped(v)
    results, best, _ = _search_side(v, ob, [remaining], 15, budget)
    if best <= 0:
        yield (), board, side
        return
    for key, (moves, _) in results.items():
        b = _board_from_key(key, ob.pins is not None, ob.opp_off)
        if best < len(remaining):
            for legs, final, fs in _cascade(v, b, other, remaining[best:], budget):
                yield ((moves,) + legs), final, fs
        else:
            yield (moves,), b, other


def legal_plays(position: Position, roll: Roll, budget: int | None = None) -> list[tuple[Play, Position]]:
    """Every legal play for ``roll`` with its resulting position, one per distinct position.

    A roll with no legal play gives one entry: the empty play and the position with the
    turn passed. The resulting position has the other side to move and the mover's
    ``rolls`` one higher. Raises :class:`SearchBudgetExceeded` past ``budget`` boards searched.
    """
    side = position.turn
    si = 0 if side is Side.WHITE else 1
    rolls = list(position.rolls)
    rolls[si] += 1
    rolls_t = (rolls[0], rolls[1])
    out = []
    for legs, final, final_side in legal_results(position, roll, budget):
        play = Play(_moves(legs[0]), tuple(_moves(leg) for leg in legs[1:]))
        out.append((play, final.to_position(position, final_side, side.other, rolls_t)))
    return out


def apply_moves(board: Board, variant: Variant, moves) -> None:
    """Move checkers on ``board`` (mover's view) as written, hitting or pinning what they land on.

    Checks no rule but that a checker stands on each source; used to turn a written
    play into the board it claims, which the rules then judge. Raises
    :class:`IllegalPlayError` for a move from an empty point.
    """
    me, opp, pins = board.me, board.opp, board.pins
    for m in moves:
        src, dst = m.src, m.dst
        if me[src] <= 0:
            raise IllegalPlayError(f"{m}: no checker of the mover on {'the bar' if src == 25 else src}")
        me[src] -= 1
        if pins is not None and src <= 24 and me[src] == 0 and pins[src] == 2:
            pins[src] = 0
            opp[src] = 1
        if dst == 0:
            me[0] += 1
            continue
        if opp[dst] == 1 and variant.hits:
            opp[dst] = 0
            opp[0] += 1
        elif opp[dst] == 1 and pins is not None and pins[dst] == 0:
            opp[dst] = 0
            pins[dst] = 2
        elif opp[dst]:
            raise IllegalPlayError(f"{m}: the point is held by the opponent")
        me[dst] += 1
