"""Single checker moves (pseudo-legal): where one checker may go with one die, and what landing does.

Owns :class:`Board` (a position seen from the mover's side: ``me``, ``opp`` and, in
plakoto, ``pins``, by the mover's own point numbers; ``docs/rules-notes.md``) and
:class:`CheckerMoves`, the one place a checker move is made under the variant's hooks
(hit, pin or block; bearing off; start, head and prime rules) and undone. The
whole-turn filter lives in :mod:`board_rules.movegen`. Imports
:mod:`board_rules.position`, :mod:`board_rules.notation` and :mod:`board_rules.variants`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from board_rules.errors import IllegalPlayError
from board_rules.notation import CheckerMove, Play
from board_rules.position import CHECKERS, Position
from board_rules.side import Side
from board_rules.variants import SAME, Variant

_OPPOSITE_MAP = tuple([0] + [25 - p for p in range(1, 25)])
_SAME_MAP = tuple([0] + [((p + 11) % 24) + 1 for p in range(1, 25)])
_MIRROR = (_OPPOSITE_MAP, _SAME_MAP)  # by ``variant.geometry == SAME``: one side's point <-> the other's
_IDENTITY = tuple(range(25))
_MIRRORED = tuple(itemgetter(*m[1:25]) for m in _MIRROR)  # a list's points 1..24 read in mirrored order


def own_to_white(variant: Variant, side: Side) -> tuple[int, ...]:
    """``side``'s own point -> white's point, as a tuple indexed 1..24 (its own inverse)."""
    if side is Side.WHITE:
        return _IDENTITY
    return _MIRROR[variant.geometry == SAME]


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
    def from_key(cls, key: bytes, pins: bool, opp_off: int) -> Board:
        """The board whose :meth:`key` is ``key`` (``pins``: whether the key holds pins)."""
        return cls(list(key[0:26]), list(key[26:52]), list(key[52:78]) if pins else None, opp_off)

    @classmethod
    def all_from_keys(cls, keys: bytes, opp_off: int) -> list[Board]:
        """The boards whose keys without pins (52 bytes each) follow one another in ``keys``, the
        opponent having ``opp_off`` checkers off in each (a beam's boards)."""
        return [cls.from_key(keys[i : i + 52], False, opp_off) for i in range(0, len(keys), 52)]

    def copy(self) -> Board:
        return Board(list(self.me), list(self.opp), None if self.pins is None else list(self.pins), self.opp_off)

    @classmethod
    def of(cls, position: Position, side: Side | None = None) -> Board:
        """``position`` from ``side``'s view (default: the side to move)."""
        side = position.turn if side is None else side
        v = position.variant
        sign = side.sign
        conv = own_to_white(v, side)
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
        g = _MIRRORED[variant.geometry == SAME]  # the point map is its own inverse: new[j] = old[f[j]]
        me, opp = self.me, self.opp
        pins = None
        if self.pins is not None:
            pins = [0, *(3 - p if p else 0 for p in g(self.pins)), 0]
        return Board([self.opp_off, *g(opp), opp[0]], [me[25], *g(me), 0], pins, me[0])

    def white_view(self, variant: Variant, side: Side) -> tuple[list[int], list[int], tuple[int, int], tuple[int, int]]:
        """``(points, pinned, bar, off)`` of this board seen from ``side``, in white's numbering."""
        conv = own_to_white(variant, side)
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

    def game_over(self) -> bool:
        """Whether a side has all its checkers off: the game is over and nothing more is played."""
        return self.me[0] == CHECKERS or self.opp_off == CHECKERS

    def to_position(self, template: Position, side: Side, turn: Side, rolls: tuple[int, int]) -> Position:
        """A :class:`Position` of this board seen from ``side``; ``template`` gives the variant."""
        pts, pinned, bar, off = self.white_view(template.variant, side)
        return Position(template.variant, turn, tuple(pts), tuple(pinned), bar, off, rolls)


class CheckerMoves:
    """One side's single checker moves on a :class:`Board`, made in place and undone.

    :meth:`try_move` makes a checker move if the variant allows it now and returns its
    undo record ``(src, dst, hit, pinned, released)``, or ``None``; :meth:`undo` takes it
    back. ``head_limit``: checkers that may leave the head this turn (long nardy).

    >>> start = Position.start("backgammon")
    >>> board = Board.of(start)
    >>> record = CheckerMoves(start.variant, board).try_move(24, 6)  # 24/18
    >>> record[:3], board.me[18], board.me[24]
    ((24, 18, False), 1, 1)
    """

    __slots__ = (
        "variant",
        "b",
        "head_start",
        "head_limit",
        "own_pinned_outside",
        "own_pinned_home",
        "f",
        "pinned_block_home",
    )

    def __init__(self, variant: Variant, board: Board, head_limit: int = 15) -> None:
        self.variant = variant
        self.b = board
        self.head_start = board.me[24]
        self.head_limit = head_limit
        self.f = _MIRROR[variant.geometry == SAME]
        pins = board.pins
        self.own_pinned_outside = 0
        self.own_pinned_home = 0
        if pins is not None:
            self.own_pinned_outside = sum(1 for i in range(7, 25) if pins[i] == 1)
            self.own_pinned_home = sum(1 for i in range(1, 7) if pins[i] == 1)
        self.pinned_block_home = not getattr(variant.options, "bear_off_while_pinned", True)

    def sources(self) -> list[int]:
        """The mover's points a checker may leave now, highest first (only the bar while it holds one)."""
        me = self.b.me
        if me[25]:
            return [25]
        return [i for i in range(24, 0, -1) if me[i]]

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

    def mother_pin_ends(self) -> bool:
        """Whether the checker move just made, pinning the opponent's mother, ends the game (plakoto)."""
        v = self.variant
        return v.pins and v.mother_pin_ends_game(self.b.me[24])

    def ends_game(self, u) -> bool:
        """Whether the checker move just made (its undo record ``u``) ended the game.

        It did when it bore off the mover's last checker, or pinned the opponent's mother
        so that the game ends (plakoto). A play that ends the game is complete: the dice
        left are not played, and none pass to the opponent (gul-bara).
        """
        if u[1]:
            return bool(u[3]) and u[1] == 1 and self.mother_pin_ends()
        return self.b.me[0] == CHECKERS


def checker_moves(raw) -> tuple[CheckerMove, ...]:
    """``(src, dst, hit)`` triples (one leg of a play) as :class:`CheckerMove` values."""
    return tuple(CheckerMove(s, d, h) for s, d, h in raw)


def play_of(legs) -> Play:
    """The :class:`Play` of ``legs`` (the mover's checker moves, then any passed numbers' legs)."""
    return Play(checker_moves(legs[0]), tuple(checker_moves(leg) for leg in legs[1:]))


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
