"""Reference answers from GNU Backgammon's engine, through the gnubg-nn package.

Used by differential tests only. gnubg-nn (PyPI ``gnubg-nn``, import name
``gnubg_nn``) is optional: it is imported on first use, never at import time,
so test modules may import this one and skip with ``available()``.
Imports nothing of ours, so it stays an independent oracle for ``board_rules``.

Layout: the same as :mod:`board_rules.gnubg_id`. Each side's half is 25 ints,
index ``i`` (0..23) = checkers on that side's *own* point ``i + 1``, index 24 =
its bar. Functions here take ``(on_roll, opponent)`` and answer in that order.

gnubg-nn's conventions, which this module hides:

- A board is ``[opponent, on_roll]``: a list of two lists of 25 ints, the side
  on roll SECOND (gnubg's ``anBoard[1]``), each in its own numbering as above.
  ``position_id`` insists on lists (a tuple raises ``ValueError: Expected 2x25
  board list``); ``moves`` also takes tuples.
- ``moves(board, d1, d2)`` (positional only) moves ``board[1]`` and returns a
  tuple of 20-letter position *keys* (``A``..``P`` nibbles), one per distinct
  resulting position, already de-duplicated. Each key decodes with
  ``board_from_position_key`` to ``(opponent, on_roll)`` tuples in the SAME
  order and numbering as the input (no side swap, no turn change).
  ``moves(board, d1, d2, 1)`` returns ``(key, ((from, to), ...))`` pairs in the
  mover's numbering, 25 = bar, 0 = off.
- When no play is legal, ``moves`` returns ``()``; but for a side with no
  checkers left it returns the unchanged position. Dice are not checked (a 7
  returns the unchanged position) and neither are checker counts.
- ``position_id(board)`` and ``board_from_position_id(pid)`` are gnubg's own
  Position ID codec (opponent half first, as in gnubg's ``positionid.c``).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from engine.evaluate import _gnubg, gnubg_available

Half = tuple[int, ...]
Board = tuple[Half, Half]  # (on_roll, opponent)
Step = tuple[int, int]  # (from, to) in the mover's numbering; 25 = bar, 0 = off

_SLOTS = 25


def available() -> bool:
    """True if gnubg-nn can be imported."""
    return gnubg_available()


def _engine() -> ModuleType:
    gnubg = _gnubg()
    if gnubg is None:
        raise ModuleNotFoundError("gnubg-nn is not installed: pip install 'gnubg-nn>=1.1.0a11,<2'")
    return gnubg


def _half(name: str, half: Sequence[int]) -> list[int]:
    counts = [int(n) for n in half]
    if len(counts) != _SLOTS or any(n < 0 for n in counts) or sum(counts) > 15:
        raise ValueError(f"{name} must be {_SLOTS} counts >= 0 totalling at most 15, not {half!r}")
    return counts


def _gnubg_board(on_roll: Sequence[int], opponent: Sequence[int]) -> list[list[int]]:
    mover = _half("on_roll", on_roll)
    other = _half("opponent", opponent)
    for i in range(24):
        if mover[i] and other[23 - i]:
            raise ValueError(f"both sides on on_roll's point {i + 1}: {on_roll!r} vs {opponent!r}")
    return [other, mover]


def _check_dice(d1: int, d2: int) -> None:
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ValueError(f"dice must be 1..6, not {(d1, d2)!r}")


def legal_plays(on_roll: Sequence[int], opponent: Sequence[int], d1: int, d2: int) -> dict[Board, tuple[Step, ...]]:
    """Each distinct result of a legal play, with one play (gnubg's steps) reaching it.

    Results are ``(on_roll, opponent)`` in the input's perspective. With no
    legal play the only result is the input itself, reached by ``()``.
    Raises ``ModuleNotFoundError`` without gnubg-nn, ``ValueError`` for bad input.
    """
    gnubg = _engine()
    board = _gnubg_board(on_roll, opponent)
    _check_dice(d1, d2)
    found: dict[Board, tuple[Step, ...]] = {}
    for key, steps in gnubg.moves(board, d1, d2, 1):
        other, mover = gnubg.board_from_position_key(key)
        found[(tuple(mover), tuple(other))] = tuple((a, b) for a, b in steps)
    if not found:
        found[(tuple(board[1]), tuple(board[0]))] = ()
    return found


def legal_results(on_roll: Sequence[int], opponent: Sequence[int], d1: int, d2: int) -> set[Board]:
    """The distinct positions ``(on_roll, opponent)`` after each legal play of ``d1``-``d2``.

    Same perspective as the input: the side that played is still first, the
    turn is not passed. With no legal play, the set holds the input unchanged.
    Raises ``ModuleNotFoundError`` without gnubg-nn, ``ValueError`` for bad input.
    """
    gnubg = _engine()
    board = _gnubg_board(on_roll, opponent)
    _check_dice(d1, d2)
    results = set()
    for key in gnubg.moves(board, d1, d2):
        other, mover = gnubg.board_from_position_key(key)
        results.add((tuple(mover), tuple(other)))
    if not results:
        results.add((tuple(board[1]), tuple(board[0])))
    return results


def position_id(on_roll: Sequence[int], opponent: Sequence[int]) -> str | None:
    """gnubg's own Position ID for this board, or None without gnubg-nn (or its function)."""
    gnubg = _gnubg()
    if gnubg is None or not hasattr(gnubg, "position_id"):
        return None
    return gnubg.position_id(_gnubg_board(on_roll, opponent))


def board_from_position_id(pid: str) -> Board | None:
    """gnubg's own decoding of ``pid`` as ``(on_roll, opponent)``, or None without gnubg-nn."""
    gnubg = _gnubg()
    if gnubg is None or not hasattr(gnubg, "board_from_position_id"):
        return None
    other, mover = gnubg.board_from_position_id(pid)
    return tuple(mover), tuple(other)
