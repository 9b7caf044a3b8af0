"""Invariants of the rules engine, checked with hypothesis on random positions of every variant."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_rules import CheckerMove, Play, Position, Roll, Side
from board_rules.ids import position_from_id, position_id
from board_rules.legality import TurnTracker, check, is_legal_result
from board_rules.movegen import legal_plays
from board_rules.reach import sample_results
from tests.positions import random_backgammon, random_plakoto, random_same_direction

GENERATORS = {
    "backgammon": lambda rng: random_backgammon(rng, "backgammon"),
    "portes": lambda rng: random_backgammon(rng, "portes"),
    "short-nardy": lambda rng: random_backgammon(rng, "short-nardy"),
    "plakoto": lambda rng: random_plakoto(rng, "plakoto"),
    "tapa": lambda rng: random_plakoto(rng, "tapa"),
    "fevga": lambda rng: random_same_direction(rng, "fevga"),
    # escalated gul-bara doubles have thousands of plays: tested on their own (test_gul_bara_check)
    "gul-bara": lambda rng: random_same_direction(rng, "gul-bara", rolls=(rng.randint(0, 2), rng.randint(0, 2))),
    "long-nardy": lambda rng: random_same_direction(rng, "long-nardy"),
}

positions = st.builds(
    lambda name, seed: GENERATORS[name](random.Random(seed)),
    st.sampled_from(sorted(GENERATORS)),
    st.integers(0, 2**32),
)
rolls = st.builds(Roll, st.integers(1, 6), st.integers(1, 6))
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def total(position: Position, side: Side) -> int:
    idx = 0 if side is Side.WHITE else 1
    on_board = sum(v * side.sign for v in position.points if v * side.sign > 0)
    pinned = sum(1 for v in position.pinned if v == side.sign)
    return on_board + pinned + position.bar[idx] + position.off[idx]


@fast
@given(positions, rolls)
def test_every_play_keeps_fifteen_checkers_a_side(position, roll):
    for _play, after in legal_plays(position, roll):
        assert total(after, Side.WHITE) == 15 and total(after, Side.BLACK) == 15


@fast
@given(positions, rolls)
def test_resulting_positions_are_distinct_and_pass_the_turn(position, roll):
    results = legal_plays(position, roll)
    assert results, "a roll always has at least the passed turn"
    boards = [(a.points, a.pinned, a.bar, a.off) for _, a in results]
    assert len(boards) == len(set(boards))
    mover = 0 if position.turn is Side.WHITE else 1
    for _play, after in results:
        assert after.turn is position.turn.other
        assert after.rolls[mover] == position.rolls[mover] + 1


@fast
@given(positions, rolls)
def test_every_legal_play_is_checked_legal_and_its_text_round_trips(position, roll):
    results = legal_plays(position, roll)
    for play, after in results[:: max(1, len(results) // 6)]:
        assert Play.parse(str(play)) == play
        verdict = check(position, roll, after)
        assert verdict.legal and verdict.wrong == ()
        assert is_legal_result(position, roll, after)
        assert position.play(str(play), roll) == after


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6))
def test_gul_bara_escalated_double_results_are_checked_legal(seed, d):
    rng = random.Random(seed)
    position = random_same_direction(rng, "gul-bara", rolls=(4, 4))
    roll = Roll(d, d)
    for legs, board, side in sample_results(position, roll, limit=3):
        play = Play(
            tuple(CheckerMove(*m) for m in legs[0]), tuple(tuple(CheckerMove(*m) for m in leg) for leg in legs[1:])
        )
        after = board.to_position(position, side, position.turn.other, position.rolls)
        assert is_legal_result(position, roll, after)
        assert Play.parse(str(play)) == play
        assert position.play(play, roll).points == after.points


@fast
@given(positions)
def test_position_json_round_trips(position):
    assert Position.from_json(position.to_json()) == position


@fast
@given(st.integers(0, 2**32))
def test_position_id_round_trips(seed):
    p = random_backgammon(random.Random(seed))
    assert position_from_id(position_id(p), p.variant, p.turn) == p


@settings(max_examples=60, deadline=None)
@given(positions, rolls)
def test_turn_tracker_sees_every_legal_result_and_the_start_as_on_the_way(position, roll):
    tracker = TurnTracker(position, roll)
    assert tracker.on_the_way(position)
    for _play, after in legal_plays(position, roll):
        if _play.then:  # gul-bara passed numbers are not followed mid-turn
            continue
        assert tracker.on_the_way(after) and tracker.is_complete(after)
