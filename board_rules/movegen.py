"""Legal plays: every way to play a roll, one per distinct resulting position.

Owns the whole-turn search: every sequence of single checker moves
(:mod:`board_rules.moves`, pseudo-legal) that plays the most dice, the larger die
when only one can be played, gul-bara's passed numbers, one play per resulting
board. The hitting games go through :mod:`board_rules.fastgen` (the same answer).
Imports :mod:`board_rules.moves`, :mod:`board_rules.position`,
:mod:`board_rules.notation` and :mod:`board_rules.variants`; nothing outside ``board_rules``.
"""

from __future__ import annotations

from operator import itemgetter

from board_rules import fastgen
from board_rules.moves import _MIRROR, Board, CheckerMoves, own_to_white, play_of
from board_rules.notation import Play, Roll
from board_rules.position import CHECKERS, Position
from board_rules.side import Side
from board_rules.variants import SAME, Variant


class SearchBudgetExceeded(Exception):
    """A search visited more boards than its budget allowed (internal; callers fall back)."""


class Budget:
    """Boards a search (and the searches of its passed legs) may still visit."""

    __slots__ = ("left",)

    def __init__(self, boards: int) -> None:
        self.left = boards

    def spend(self, boards: int = 1) -> None:
        self.left -= boards
        if self.left < 0:
            raise SearchBudgetExceeded


class _Search(CheckerMoves):
    """Depth-first search of one side's checker moves for a sequence of dice.

    Records, per distinct final board, the checker moves of the first path found,
    keeping only boards reached with the most dice played; a play that ends the game
    (the last checker off, the mother pinned) is complete. In hitting games a double
    is searched with sources in non-increasing order (every play has such an order);
    elsewhere intermediate boards are memoised per depth, so transpositions are
    searched once. ``budget`` (boards visited) bounds a search whose plays are too
    many to list (escalated gul-bara doubles): past it, :class:`SearchBudgetExceeded`.
    """

    __slots__ = ("dice", "n", "results", "best", "moves", "seen", "monotone", "budget")

    def __init__(self, variant: Variant, board: Board, head_limit: int, budget: Budget | None = None) -> None:
        super().__init__(variant, board, head_limit)
        self.results: dict[bytes, tuple] = {}
        self.best = -1
        self.moves: list[tuple[int, int, bool]] = []
        self.monotone = False
        self.budget = budget

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
            if (dst == 0 or (u[3] and dst == 1)) and self.ends_game(u):
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


def search_side(variant: Variant, board: Board, dice_seqs, head_limit: int, budget: Budget | None = None):
    """All maximal results of one side's checker moves: ``({key: (moves, first die)}, best, search)``.

    The hitting games go to :mod:`board_rules.fastgen` (same answer, ``search`` is None).
    """
    if fastgen.handles(variant, dice_seqs):
        results, best = fastgen.search(board.me, board.opp, dice_seqs)
        if budget is not None:  # fastgen counts no boards: it visited at least the ones it found
            budget.spend(len(results))
        return results, best, None
    rules = compiled_rules(variant, board, head_limit, board.me[24])
    if rules is not None and all(len(seq) <= COMPILED_DICE for seq in dice_seqs):
        return _compiled_search_side(board, dice_seqs, rules, budget)
    rules = compiled_pin_rules(variant, board)
    if rules is not None and all(len(seq) <= 4 for seq in dice_seqs):
        return _compiled_pins_side(board, dice_seqs, rules, budget)
    return generic_search_side(variant, board, dice_seqs, head_limit, budget)


COMPILED_DICE = 64
"""The most dice a compiled walk of the blocking games takes (an escalated gul-bara double has 24)."""

_MIRROR_BYTES = tuple(bytes(m) for m in _MIRROR)


def compiled_rules(variant: Variant, board: Board, head_limit: int, head_start: int) -> tuple | None:
    """The variant's limits as ``board_rules._fastgen``'s walks of the blocking games take them (after
    the board and dice), where it is built and the game blocks without hitting or pinning (the
    opponent's checkers stand still all turn); None elsewhere. ``head_start``: the checkers on the
    head when the turn began (long nardy)."""
    if fastgen._compiled is None or not variant.blocks or variant.hits or variant.pins or board.pins is not None:
        return None
    return (
        head_start,
        head_limit if variant.head_rule else -1,
        variant.start_rule_limit,
        bool(variant.start_quarter_rule),
        bool(variant.trapping_prime_rule),
        _MIRROR_BYTES[variant.geometry == SAME],
        board.opp_off,
    )


def compiled_pin_rules(variant: Variant, board: Board) -> tuple | None:
    """Plakoto's options as ``board_rules._fastgen.search_pins`` takes them (mother rule, its
    exception, bearing off while pinned), where it is built and the game pins and has none of
    the other limits; None elsewhere."""
    if (
        fastgen._compiled is None
        or not variant.pins
        or board.pins is None
        or variant.hits
        or variant.blocks
        or variant.head_rule
        or variant.start_rule_limit
        or variant.start_quarter_rule
        or variant.trapping_prime_rule
    ):
        return None
    o = variant.options
    return (
        bool(o.mother_rule),
        bool(o.mother_exception),
        bool(getattr(o, "bear_off_while_pinned", True)),
    )


def _compiled_pins_side(board: Board, dice_seqs, rules: tuple, budget: Budget | None):
    """:func:`generic_search_side`'s answer for plakoto by ``board_rules._fastgen.search_pins``."""
    return _compiled_side(fastgen._compiled.search_pins, board.key(), dice_seqs, rules, budget, pins=True)


def _larger_die(results: dict, best: int, dice_seqs) -> dict:
    """Dice that can be played only one at a time: the larger must be played if it can."""
    if best == 1 and len(dice_seqs) == 2:
        high = max(dice_seqs[0][0], dice_seqs[1][0])
        if any(fd == high for _, fd in results.values()):
            return {k: val for k, val in results.items() if val[1] == high}
    return results


def _compiled_search_side(board: Board, dice_seqs, rules: tuple, budget: Budget | None):
    """:func:`generic_search_side`'s answer by ``board_rules._fastgen.search_blocking``."""
    return _compiled_side(fastgen._compiled.search_blocking, bytes(board.me + board.opp), dice_seqs, rules, budget)


def _compiled_side(search, key: bytes, dice_seqs, rules: tuple, budget: Budget | None, pins: bool = False):
    """Each dice order searched by the compiled ``search(key, dice, *rules, budget)``, merged as
    :func:`generic_search_side` merges them (with ``pins``, the plainer route to a board kept)."""
    results: dict[bytes, tuple] = {}
    best = -1
    for seq in dice_seqs:
        found, seq_best, boards = search(key, bytes(seq), *rules, -1 if budget is None else max(0, budget.left))
        if budget is not None:
            budget.spend(boards)  # past the budget: SearchBudgetExceeded
        if seq_best > best:
            best = seq_best
            results = dict(found)
        elif seq_best == best:
            for k, val in found:
                old = results.get(k)
                if old is None or (pins and _marks(val[0]) < _marks(old[0])):
                    results[k] = val
    return _larger_die(results, best, dice_seqs), best, None


def generic_search_side(variant: Variant, board: Board, dice_seqs, head_limit: int, budget: Budget | None = None):
    """:func:`search_side` by the generic :class:`_Search`, for every variant.

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
    return _larger_die(results, best, dice_seqs), best, s


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
    if CHECKERS in position.off:  # a side has every checker off: nothing is played
        return [(((),), Board.of(position), side)]
    if fastgen.handles(v, seqs):  # the hitting games: boards built by the (compiled) search itself
        if fastgen.position_results is not None:  # which reads the position too
            si = 0 if side is Side.WHITE else 1
            bar, off = position.bar, position.off
            conv = _to_white_bytes(v, side)
            out = fastgen.position_results(
                position.points, conv, side.sign, bar[si], off[si], bar[1 - si], d1, d2, Board, off[1 - si], side
            )
        else:
            board = Board.of(position)
            out = fastgen.results(board.me, board.opp, seqs, Board, board.opp_off, side)
        if budget is not None and len(out) > budget:
            raise SearchBudgetExceeded
        return out
    board = Board.of(position)
    head_limit = v.head_limit(d1, d2, rolls_played)
    shared = None if budget is None else Budget(budget)
    results, best, _ = search_side(v, board, seqs, head_limit, shared)
    out = []
    pins = board.pins is not None
    if v.passes_unplayed(d1, d2, rolls_played) and 0 < best < len(seqs[0]):
        seen: set[bytes] = set()
        for key, (moves, _) in results.items():
            b = Board.from_key(key, pins, board.opp_off)
            for legs, final, final_side in _cascade(v, b, side, seqs[0][best:], shared):
                k = final.key() if final_side is side else final.flipped(v).key()
                if k not in seen:
                    seen.add(k)
                    out.append(((moves,) + legs, final, final_side))
        return out
    if pins:
        for key, (moves, _) in results.items():
            out.append(((moves,), Board.from_key(key, pins, board.opp_off), side))
        return out
    opp_off = board.opp_off
    return [
        ((moves,), Board(list(key[:26]), list(key[26:52]), None, opp_off), side) for key, (moves, _) in results.items()
    ]


def result_keys(position: Position, roll: Roll, budget: int | None = None) -> list[tuple[bytes, int]] | None:
    """:func:`legal_results`' distinct final boards for a game that neither hits nor pins, each as
    its key seen by the side on roll and that side's opponent's checkers off, in the same order;
    None in the other games. Gul-bara's passed numbers are followed on keys, with no board objects
    (one ply deeper, the teacher values every reply). Raises :class:`SearchBudgetExceeded` as
    :func:`legal_results` does."""
    v = position.variant
    if v.hits or v.pins or CHECKERS in position.off:
        return None
    side = position.turn
    rolls_played = position.rolls[0 if side is Side.WHITE else 1]
    seqs = v.dice_sequences(roll.d1, roll.d2, rolls_played)
    board = Board.of(position)
    shared = None if budget is None else Budget(budget)
    results, best, _ = search_side(v, board, seqs, v.head_limit(roll.d1, roll.d2, rolls_played), shared)
    if not (v.passes_unplayed(roll.d1, roll.d2, rolls_played) and 0 < best < len(seqs[0])):
        return [(key, board.opp_off) for key in results]
    found: dict[bytes, int] = {}
    flip = _KEY_FLIP[v.geometry == SAME]
    for key in results:
        _cascade_keys(v, key, board.opp_off, True, seqs[0][best:], shared, found, flip)
    return list(found.items())


_OPP = 26  # where a key's opponent counts begin
_KEY_FLIP = tuple(
    itemgetter(52, *(_OPP + m[j] for j in range(1, 25)), _OPP, 25, *(m[j] for j in range(1, 25)), 53) for m in _MIRROR
)
"""A key (52 bytes) with its opponent's checkers off and a 0 after it -> the same board's key seen by
the opponent (:meth:`board_rules.moves.Board.flipped`), by ``variant.geometry == SAME``."""


def _cascade_keys(v: Variant, key: bytes, opp_off: int, roller: bool, remaining, budget, found: dict, flip) -> None:
    """:func:`_cascade` on keys: ``key`` (with ``opp_off``) the board seen by the side that has just
    moved (``roller``: the side on roll); each final board goes into ``found`` as the roller sees it."""
    other = bytes(flip(key + bytes((opp_off, 0))))
    other_off = key[0]
    results, best, _ = search_side(v, Board.from_key(other, False, other_off), [remaining], 15, budget)
    if best <= 0:
        final, final_off = (key, opp_off) if roller else (other, other_off)
        found.setdefault(final, final_off)
        return
    for k in results:
        if best < len(remaining):
            _cascade_keys(v, k, other_off, not roller, remaining[best:], budget, found, flip)
        elif roller:  # the roller's opponent moved last
            found.setdefault(bytes(flip(k + bytes((other_off, 0)))), k[0])
        else:
            found.setdefault(k, other_off)


_TO_WHITE: dict[tuple[bool, Side], bytes] = {}


def _to_white_bytes(v: Variant, side: Side) -> bytes:
    """:func:`board_rules.moves.own_to_white` as bytes, for :func:`board_rules.fastgen.position_results`."""
    key = (v.geometry == SAME, side)
    conv = _TO_WHITE.get(key)
    if conv is None:
        conv = _TO_WHITE[key] = bytes(own_to_white(v, side))
    return conv


def _cascade(v: Variant, board: Board, side: Side, remaining: tuple[int, ...], budget: Budget | None = None):
    """Gul-bara: the remaining numbers pass to the opponent, and back, while someone moves."""
    other = side.other
    ob = board.flipped(v)
    results, best, _ = search_side(v, ob, [remaining], 15, budget)
    if best <= 0:
        yield (), board, side
        return
    for key, (moves, _) in results.items():
        b = Board.from_key(key, ob.pins is not None, ob.opp_off)
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
        out.append((play_of(legs), final.to_position(position, final_side, side.other, rolls_t)))
    return out
