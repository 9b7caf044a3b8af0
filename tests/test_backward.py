"""Plays found backwards from the board they end on (board_rules.backward), for the blocking games."""

from __future__ import annotations

import random

import pytest

from board_rules import Roll, Side
from board_rules.backward import backward_path
from board_rules.moves import Board
from board_rules.reach import sample_results
from tests.positions import random_same_direction


def _replayed(start: Board, moves) -> list[int]:
    """The mover's checkers after ``moves`` (src, dst, _) from ``start``, no rule checked."""
    me = list(start.me)
    for src, dst, _ in moves:
        me[src] -= 1
        me[dst] += 1
    return me


@pytest.mark.parametrize("seed", range(6))
def test_every_legal_result_of_a_double_is_found_backwards_and_its_moves_play_the_dice(seed):
    # runs of equal dice are walked back in one order of their moves only: no result may be lost by it
    rng = random.Random(seed)
    variant = ("gul-bara", "fevga", "long-nardy")[seed % 3]
    checked = 0
    while checked < 40:
        rolls = (rng.randint(2, 6), rng.randint(2, 6)) if variant == "gul-bara" else None
        position = random_same_direction(rng, variant, rolls=rolls)
        d = rng.randint(1, 6)
        side = position.turn
        start = Board.of(position, side)
        si = 0 if side is Side.WHITE else 1
        seq = position.variant.dice_sequences(d, d, position.rolls[si])[0]
        for legs, final, final_side in sample_results(position, Roll(d, d), limit=10):
            if final_side is not side or len(legs) != 1:
                continue  # numbers passed to the opponent: the mover's leg alone is walked back elsewhere
            moves = legs[0]
            dice = tuple(seq[: len(moves)])
            found = backward_path(start, final, dice)
            assert found is not None, (position.to_json(), d, moves)
            assert len(found) == len(dice)
            assert all(src - dst == die or (dst == 0 and src <= die) for (src, dst, _), die in zip(found, dice))
            assert _replayed(start, found) == list(final.me)
            checked += 1
