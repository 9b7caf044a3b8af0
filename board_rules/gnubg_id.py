"""GNU Backgammon's Position ID and Match ID: encode and decode.

Owns the two codecs and :class:`MatchState`, the fields a Match ID holds. A board is
two halves of 25 ints, each side's checkers on its own points 1..24 then its bar; the
Position ID writes the side *not* on roll first, as gnubg's code does (bit layouts in
``docs/rules-notes.md``). Imports only :mod:`board_rules.errors` and :mod:`board_rules.side`.

>>> START = (0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)
>>> ON_BAR = START[:23] + (1, 1)
>>> encode_position_id(ON_BAR, START), decode_position_id('4HPwATDgc/ABUA') == (ON_BAR, START)
('4HPwATDgc/ABUA', True)
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import operator
from collections.abc import Sequence

from board_rules.errors import InvalidIdError, InvalidPositionError
from board_rules.side import Side

__all__ = [
    "GAME_DROPPED",
    "GAME_NONE",
    "GAME_OVER",
    "GAME_PLAYING",
    "GAME_RESIGNED",
    "MATCH_ID_LENGTH",
    "MAX_CUBE",
    "MAX_MATCH_LENGTH",
    "MatchState",
    "POSITION_ID_LENGTH",
    "decode_match_id",
    "decode_position_id",
    "encode_match_id",
    "encode_position_id",
]

POSITION_ID_LENGTH = 14
MATCH_ID_LENGTH = 12

#: gnubg's ``gamestate`` values, as stored in bits 8-10 of the Match ID.
GAME_NONE = 0  #: no game started yet
GAME_PLAYING = 1  #: a game is being played
GAME_OVER = 2  #: the game is over (borne off)
GAME_RESIGNED = 3  #: the game ended by an accepted resignation
GAME_DROPPED = 4  #: the game ended by a passed (dropped) double

#: Largest cube accepted (gnubg's match-play limit, ``MAXCUBELEVEL`` 7).
MAX_CUBE = 64
#: Longest match gnubg's ``MatchFromKey`` accepts (``MAXSCORE``).
MAX_MATCH_LENGTH = 64
_MAX_FIELD_15 = (1 << 15) - 1  # money-session scores: whatever 15 bits hold

_CHECKERS = 15
_SLOTS = 25
_KEY_BITS = 80
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

_PLAYER_SIDE = (Side.WHITE, Side.BLACK)  # gnubg's player 0, player 1

Half = tuple[int, ...]


# --------------------------------------------------------------------------
# Position ID


def _board_problem(on_roll: Half, opponent: Half) -> str | None:
    """What gnubg's ``CheckPosition`` objects to in this board, or None."""
    for name, half in (("on_roll", on_roll), ("opponent", opponent)):
        total = sum(half)
        if total > _CHECKERS:
            return f"{name} has {total} checkers on the board, at most {_CHECKERS} allowed"
    for i in range(24):
        if on_roll[i] and opponent[23 - i]:
            return f"both sides on one point: on_roll's point {i + 1} is opponent's point {24 - i}"
    closed = all(on_roll[i] >= 2 and opponent[i] >= 2 for i in range(6))
    if closed and on_roll[24] and opponent[24]:
        return "both sides on the bar against closed home boards"
    return None


def _half(name: str, value: object) -> Half:
    """``value`` as a 25-tuple of checker counts; raises InvalidPositionError."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidPositionError(f"{name} must be a sequence of {_SLOTS} ints, not {value!r}", name, value)
    if len(value) != _SLOTS:
        raise InvalidPositionError(
            f"{name} must have {_SLOTS} entries (points 1-24, bar), not {len(value)}: {value!r}",
            name,
            value,
        )
    counts = []
    for i, n in enumerate(value):
        field = f"{name}[{i}]"
        if isinstance(n, bool):
            raise InvalidPositionError(f"{field} must be an int, not {n!r}", field, n)
        try:
            n = operator.index(n)
        except TypeError:
            raise InvalidPositionError(f"{field} must be an int, not {n!r}", field, n) from None
        if not 0 <= n <= _CHECKERS:
            raise InvalidPositionError(f"{field} must be 0..{_CHECKERS}, not {n!r}", field, n)
        counts.append(n)
    return tuple(counts)


def encode_position_id(on_roll: Sequence[int], opponent: Sequence[int]) -> str:
    """The 14-character gnubg Position ID of this board.

    ``on_roll`` and ``opponent`` are 25 ints each, in the module's layout.
    Raises :class:`InvalidPositionError` for a malformed half, more than 15
    checkers a side, both sides on one point, or both sides on the bar against
    closed boards (the boards gnubg refuses to decode).

    >>> encode_position_id([0] * 25, [0] * 25)
    'AAAAAAAAAAAAAA'
    >>> encode_position_id([0] * 25, [0] * 23 + [16, 0])
    Traceback (most recent call last):
    ...
    board_rules.errors.InvalidPositionError: opponent[23] must be 0..15, not 16
    """
    mover = _half("on_roll", on_roll)
    other = _half("opponent", opponent)
    problem = _board_problem(mover, other)
    if problem:
        raise InvalidPositionError(f"no Position ID for {mover!r} vs {other!r}: {problem}")
    key = bytearray(_KEY_BITS // 8)
    bit = 0
    for half in (other, mover):  # gnubg: anBoard[0] (not on roll) first
        for n in half:
            for _ in range(n):
                key[bit >> 3] |= 1 << (bit & 7)
                bit += 1
            bit += 1
    return base64.b64encode(bytes(key)).decode("ascii")[:POSITION_ID_LENGTH]


def _b64_key(text: object, length: int, what: str) -> bytes:
    """Decode ``length`` Base64 characters (no padding) to bytes; raises InvalidIdError."""
    if not isinstance(text, str):
        raise InvalidIdError(f"a {what} must be a str, not {text!r}")
    if len(text) != length:
        raise InvalidIdError(f"a {what} has {length} characters, not {len(text)}: {text!r}")
    bad = sorted({ch for ch in text if ch not in _B64})
    if bad:
        raise InvalidIdError(f"{what} {text!r} has characters outside A-Z a-z 0-9 + /: {''.join(bad)!r}")
    pad = -len(text) % 4
    try:
        return base64.b64decode(text + "=" * pad, validate=True)
    except binascii.Error as exc:  # pragma: no cover - characters checked above
        raise InvalidIdError(f"{what} {text!r} is not Base64: {exc}") from None


def decode_position_id(pid: str) -> tuple[Half, Half]:
    """The board ``(on_roll, opponent)`` that the Position ID ``pid`` describes.

    Raises :class:`InvalidIdError` if ``pid`` is not 14 Base64 characters, holds more than
    15 checkers a side or stray bits after the board, or describes a board gnubg rejects
    (both sides on one point; both on the bar against closed boards).

    >>> on_roll, opponent = decode_position_id('4HPwATDgc/ABMA')
    >>> on_roll[5], on_roll[7], on_roll[12], on_roll[23], sum(on_roll)
    (5, 3, 5, 2, 15)
    >>> decode_position_id('4HPwATDgc/ABM')
    Traceback (most recent call last):
    ...
    board_rules.errors.InvalidIdError: a Position ID has 14 characters, not 13: '4HPwATDgc/ABM'
    """
    key = int.from_bytes(_b64_key(pid, POSITION_ID_LENGTH, "Position ID"), "little")
    if _B64.index(pid[-1]) & 0x0F:  # 14 characters carry 84 bits; the last 4 are padding
        raise InvalidIdError(
            f"Position ID {pid!r} has bits set past its 80-bit key (its last character must be one of {_B64[::16]!r})"
        )
    counts: list[int] = []
    run = 0
    bit = 0
    while bit < _KEY_BITS and len(counts) < 2 * _SLOTS:
        if key >> bit & 1:
            run += 1
        else:
            counts.append(run)
            run = 0
        bit += 1
    if len(counts) < 2 * _SLOTS:
        raise InvalidIdError(f"Position ID {pid!r} holds more checkers than a board can (at most {_CHECKERS} a side)")
    if key >> bit:
        raise InvalidIdError(f"Position ID {pid!r} has bits set after the end of the board")
    opponent, on_roll = tuple(counts[:_SLOTS]), tuple(counts[_SLOTS:])
    problem = _board_problem(on_roll, opponent)
    if problem:
        raise InvalidIdError(f"Position ID {pid!r} is not a legal board: {problem}")
    return on_roll, opponent


# --------------------------------------------------------------------------
# Match ID


def _player(side: Side) -> int:
    return 0 if side is Side.WHITE else 1


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True, slots=True)
class MatchState:
    """The state a gnubg Match ID records: cube, turn, dice, score (fields: ``docs/rules-notes.md``).

    gnubg's player 0 is :attr:`Side.WHITE`, player 1 :attr:`Side.BLACK`; ``score`` is
    ``(white's, black's)``; ``cube_owner`` None while centred; ``dice_owner`` the side on
    roll (``fMove``), ``turn`` the side that must act (``fTurn``); ``dice`` ``(0, 0)``
    before rolling, else higher die first; ``match_length`` 0 for money. Raises
    :class:`InvalidIdError` (a ``ValueError``) for values no Match ID can hold.

    >>> MatchState(1, None, Side.WHITE, False, GAME_PLAYING, Side.WHITE, False, 0,
    ...            (2, 5), 0, (0, 0)).dice
    (5, 2)
    """

    cube_value: int
    cube_owner: Side | None
    dice_owner: Side
    crawford: bool
    game_state: int
    turn: Side
    double_offered: bool
    resign: int
    dice: tuple[int, int]
    match_length: int
    score: tuple[int, int]
    jacoby: bool = True

    def __post_init__(self) -> None:
        cube = self.cube_value
        if not _is_int(cube) or not 1 <= cube <= MAX_CUBE or cube & (cube - 1):
            raise InvalidIdError(f"cube_value must be a power of two from 1 to {MAX_CUBE}, not {cube!r}")
        if self.cube_owner is not None and not isinstance(self.cube_owner, Side):
            raise InvalidIdError(f"cube_owner must be a Side or None (centred), not {self.cube_owner!r}")
        for name in ("dice_owner", "turn"):
            value = getattr(self, name)
            if not isinstance(value, Side):
                raise InvalidIdError(f"{name} must be a Side, not {value!r}")
        for name in ("crawford", "double_offered", "jacoby"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise InvalidIdError(f"{name} must be True or False, not {value!r}")
        if not _is_int(self.game_state) or not 0 <= self.game_state <= 7:
            raise InvalidIdError(f"game_state must be 0..7, not {self.game_state!r}")
        if not _is_int(self.resign) or not 0 <= self.resign <= 3:
            raise InvalidIdError(
                f"resign must be 0 (none), 1 (single), 2 (gammon) or 3 (backgammon), not {self.resign!r}"
            )
        dice = self.dice
        if (
            not isinstance(dice, tuple)
            or len(dice) != 2
            or not all(_is_int(d) and 0 <= d <= 6 for d in dice)
            or (0 in dice and dice != (0, 0))
        ):
            raise InvalidIdError(f"dice must be two ints 1..6, or (0, 0) before rolling, not {dice!r}")
        if dice[0] < dice[1]:
            object.__setattr__(self, "dice", (dice[1], dice[0]))
        length = self.match_length
        if not _is_int(length) or not 0 <= length <= MAX_MATCH_LENGTH:
            raise InvalidIdError(f"match_length must be 0 (money) or 1..{MAX_MATCH_LENGTH}, not {length!r}")
        score = self.score
        top = length if length else _MAX_FIELD_15
        if not isinstance(score, tuple) or len(score) != 2 or not all(_is_int(s) and 0 <= s <= top for s in score):
            limit = f"the match length {length}" if length else f"{_MAX_FIELD_15} (money)"
            raise InvalidIdError(f"score must be (white's, black's), each 0 to {limit}, not {score!r}")
        if self.crawford and not length:
            raise InvalidIdError("crawford must be False in a money game (match_length 0)")

    @classmethod
    def parse(cls, mid: str) -> MatchState:
        """The state in Match ID ``mid``; same as :func:`decode_match_id`."""
        return decode_match_id(mid)

    def __str__(self) -> str:
        """This state's Match ID; same as :func:`encode_match_id`."""
        return encode_match_id(self)


# (offset, width) of each field of the Match key, as in gnubg's matchid.c.
_CUBE = (0, 4)
_OWNER = (4, 2)
_MOVE = (6, 1)
_CRAWFORD = (7, 1)
_STATE = (8, 3)
_TURN = (11, 1)
_DOUBLED = (12, 1)
_RESIGN = (13, 2)
_DIE1 = (15, 3)
_DIE2 = (18, 3)
_LENGTH = (21, 15)
_SCORE0 = (36, 15)
_SCORE1 = (51, 15)
_NO_JACOBY = (66, 1)
_USED_BITS = 67
_CENTRED = 3


def encode_match_id(state: MatchState) -> str:
    """The 12-character gnubg Match ID of ``state``.

    Raises ``TypeError`` if ``state`` is not a :class:`MatchState` (whose
    constructor has already checked every field).

    >>> encode_match_id(MatchState(1, None, Side.BLACK, False, GAME_NONE, Side.BLACK,
    ...                            False, 0, (0, 0), 0, (0, 0)))
    'cAgAAAAAAAAA'
    """
    if not isinstance(state, MatchState):
        raise TypeError(f"encode_match_id needs a MatchState, not {state!r}")
    owner = _CENTRED if state.cube_owner is None else _player(state.cube_owner)
    fields = (
        (_CUBE, state.cube_value.bit_length() - 1),
        (_OWNER, owner),
        (_MOVE, _player(state.dice_owner)),
        (_CRAWFORD, int(state.crawford)),
        (_STATE, state.game_state),
        (_TURN, _player(state.turn)),
        (_DOUBLED, int(state.double_offered)),
        (_RESIGN, state.resign),
        (_DIE1, state.dice[0]),
        (_DIE2, state.dice[1]),
        (_LENGTH, state.match_length),
        (_SCORE0, state.score[0]),
        (_SCORE1, state.score[1]),
        (_NO_JACOBY, int(not state.jacoby)),
    )
    key = 0
    for (offset, _width), value in fields:
        key |= value << offset
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(mid: str) -> MatchState:
    """The :class:`MatchState` that the Match ID ``mid`` describes.

    Raises :class:`InvalidIdError` if ``mid`` is not 12 Base64 characters or holds what
    gnubg never writes: a cube above 64, cube-owner bits ``10``, a die of 7, one die
    without the other, a match longer than 64, a score above the match length, a Crawford
    money game, or bits set past bit 66.

    >>> decode_match_id('cAgAAAAAAAA')
    Traceback (most recent call last):
    ...
    board_rules.errors.InvalidIdError: a Match ID has 12 characters, not 11: 'cAgAAAAAAAA'
    """
    key = int.from_bytes(_b64_key(mid, MATCH_ID_LENGTH, "Match ID"), "little")

    def get(field: tuple[int, int]) -> int:
        offset, width = field
        return key >> offset & ((1 << width) - 1)

    if key >> _USED_BITS:
        raise InvalidIdError(f"Match ID {mid!r} has bits set past bit {_USED_BITS - 1}")
    owner = get(_OWNER)
    if owner == 2:
        raise InvalidIdError(f"Match ID {mid!r} has cube owner bits 10 (gnubg writes 00, 01 or 11)")
    try:
        return MatchState(
            cube_value=1 << get(_CUBE),
            cube_owner=None if owner == _CENTRED else _PLAYER_SIDE[owner],
            dice_owner=_PLAYER_SIDE[get(_MOVE)],
            crawford=bool(get(_CRAWFORD)),
            game_state=get(_STATE),
            turn=_PLAYER_SIDE[get(_TURN)],
            double_offered=bool(get(_DOUBLED)),
            resign=get(_RESIGN),
            dice=(get(_DIE1), get(_DIE2)),
            match_length=get(_LENGTH),
            score=(get(_SCORE0), get(_SCORE1)),
            jacoby=not get(_NO_JACOBY),
        )
    except InvalidIdError as exc:
        raise InvalidIdError(f"Match ID {mid!r} does not decode: {exc}") from None
