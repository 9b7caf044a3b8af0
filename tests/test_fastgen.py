"""The fast generator of the hitting games gives exactly the generic search's answer.

:mod:`board_rules.fastgen` serves backgammon, portes and short nardy; the generic
:func:`board_rules.movegen.generic_search_side` stays the reference (and keeps serving every
other variant), so both are run on the same random positions and compared: the same
resulting boards, the same number of dice played, the same play text per board.
"""

from __future__ import annotations

import random

import pytest

from board_rules import Play, find_variant
from board_rules.fastgen import handles
from board_rules.movegen import generic_search_side, search_side
from board_rules.moves import Board, checker_moves
from tests.helpers import make, plays
from tests.positions import random_backgammon

HITTING = ("backgammon", "portes", "short-nardy")


def _texts(results: dict) -> dict[bytes, str]:
    return {key: str(Play(checker_moves(moves))) for key, (moves, _) in results.items()}


def _both(position, d1: int, d2: int):
    v = position.variant
    seqs = v.dice_sequences(d1, d2, 0)
    fast, fast_best, search = search_side(v, Board.of(position), seqs, 15)
    assert search is None  # really the fast path
    slow, slow_best, _ = generic_search_side(v, Board.of(position), seqs, 15)
    return (fast, fast_best), (slow, slow_best)


@pytest.mark.parametrize("variant", HITTING)
def test_fast_and_generic_search_agree_on_random_positions(variant):
    rng = random.Random(f"fastgen-{variant}")
    doubles = 0
    for i in range(1000):
        position = random_backgammon(rng, variant)
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        doubles += d1 == d2
        (fast, fast_best), (slow, slow_best) = _both(position, d1, d2)
        where = f"{position.to_json()} {d1}-{d2}"
        assert fast_best == slow_best, where
        # the same boards in the same order, each with the same checker moves and first die
        assert fast == slow and list(fast) == list(slow), where
        if i % 5 == 0:  # what a player sees (building plays is the slow part of this test)
            assert set(_texts(fast).values()) == set(_texts(slow).values()), where
    assert doubles > 100


def test_fast_and_generic_search_agree_on_every_roll_of_crowded_positions():
    rng = random.Random(11)
    for _ in range(20):
        # the mover on many points, the opponent's blots and points in its way
        pts = [0] * 24
        for p in rng.sample(range(1, 25), 10):
            pts[p - 1] = 1
        for _ in range(5):
            pts[rng.choice([i for i in range(24) if pts[i] > 0])] += 1
        free = [i for i in range(24) if pts[i] == 0]
        black = 0
        for i in rng.sample(free, 8):
            n = rng.choice((1, 1, 2, 3))
            if black + n <= 15:
                pts[i] = -n
                black += n
        position = make("backgammon", dict(enumerate(pts, start=1)))
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                (fast, fast_best), (slow, slow_best) = _both(position, d1, d2)
                where = f"{position.to_json()} {d1}-{d2}"
                assert fast_best == slow_best, where
                assert fast == slow and list(fast) == list(slow), where


def test_fast_path_serves_exactly_the_hitting_games_without_pins():
    for name in HITTING:
        v = find_variant(name)
        assert handles(v, v.dice_sequences(6, 5, 0)) and handles(v, v.dice_sequences(3, 3, 0))
    for name in ("plakoto", "tapa", "fevga", "gul-bara", "long-nardy"):
        v = find_variant(name)
        assert not handles(v, v.dice_sequences(6, 5, 0)) and not handles(v, v.dice_sequences(3, 3, 5))


def test_fast_path_bears_off_from_below_only_without_checkers_above():
    # the 6 bears off the highest checker, from 5; the 2 plays before it (5/3, then 3/off) or after
    p = make("backgammon", {5: 1, 3: 1, 2: 1, 24: -15}, off=(12, 0))
    assert plays(p, 6, 2) == {"5/off", "5/off 3/1", "5/off 2/off"}


def test_fast_path_enters_both_checkers_before_playing_the_rest_of_a_double():
    p = make("backgammon", {6: 13, 19: -1, 20: -2, 1: -12}, bar=(2, 0))
    assert plays(p, 3, 3) == {"bar/19 bar/19*", "bar/22 bar/19* 6/3", "bar/22 bar/19*/16", "bar/22(2) 6/3(2)"}
