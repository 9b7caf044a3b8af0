"""gnubg Position IDs of our positions (backgammon and portes).

Owns the mapping between :class:`Position` and the two halves that
:mod:`board_rules.gnubg_id` encodes: each side's checkers on its own points 1..24
and its bar, the side on roll first. Imports only ``board_rules``.
"""

from __future__ import annotations

from board_rules.errors import InvalidPositionError
from board_rules.gnubg_id import decode_position_id, encode_position_id
from board_rules.position import Position
from board_rules.side import Side
from board_rules.variants import Variant, find_variant


def halves(position: Position, side: Side) -> tuple[list[int], list[int]]:
    """``(side's half, the other side's half)``: 25 counts each, own numbering, bar last."""
    out = []
    for s in (side, side.other):
        si = 0 if s is Side.WHITE else 1
        half = [position.count(s, position.variant.white_point(s, own)) for own in range(1, 25)]
        out.append(half + [position.bar[si]])
    return out[0], out[1]


def _require_backgammon_board(variant: Variant) -> None:
    if variant.pins or variant.geometry != "opposite" or not variant.hits:
        raise InvalidPositionError(
            f"variant: gnubg Position IDs exist for backgammon-board games only, not {variant.label!r}",
            "variant",
            variant.label,
        )


def position_id(position: Position) -> str:
    """gnubg's Position ID of ``position``, the side to move on roll.

    Raises :class:`InvalidPositionError` for variants gnubg does not play.

    >>> position_id(Position.start("backgammon"))
    '4HPwATDgc/ABMA'
    """
    _require_backgammon_board(position.variant)
    on_roll, opponent = halves(position, position.turn)
    return encode_position_id(on_roll, opponent)


def position_from_id(pid: str, variant: Variant | str = "backgammon", turn: Side = Side.WHITE) -> Position:
    """The position of a gnubg Position ID, ``turn`` on roll; checkers not on board or bar are off.

    Raises :class:`InvalidIdError` for a bad ID.

    >>> position_from_id("4HPwATDgc/ABMA") == Position.start("backgammon")
    True
    """
    v = find_variant(variant) if isinstance(variant, str) else variant
    _require_backgammon_board(v)
    on_roll, opponent = decode_position_id(pid)
    pts = [0] * 24
    bar = [0, 0]
    off = [0, 0]
    for s, half in ((turn, on_roll), (turn.other, opponent)):
        si = 0 if s is Side.WHITE else 1
        for own in range(1, 25):
            pts[v.white_point(s, own) - 1] += half[own - 1] * s.sign
        bar[si] = half[24]
        off[si] = 15 - sum(half)
    return Position(v, turn, tuple(pts), (0,) * 24, (bar[0], bar[1]), (off[0], off[1]))
