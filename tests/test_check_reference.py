"""``check``'s and the mid-turn queries' fast paths against the reference: every legal play listed.

The fast paths (walks back and forth within budgets, the nearest play by counted places,
landing points by the dice in order, boards extended by one checker move) must say what
listing every legal result says: the same verdict, a nearest legal result that differs
from the observed board in as few places as any legal result does, the same landings.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_rules import Position, Roll, Side, find_variant
from board_rules.backward import highest_point, most_waste
from board_rules.legality import board_diff, check, is_legal_result
from board_rules.movegen import SearchBudgetExceeded, legal_plays, legal_results
from board_rules.moves import Board, apply_moves, checker_moves
from board_rules.reach import sample_results
from board_rules.turn import LazyTurn
from referee.demo import slip
from tests.helpers import make
from tests.positions import random_backgammon, random_plakoto, random_same_direction

GENERATORS = {
    "backgammon": lambda rng: random_backgammon(rng, "backgammon"),
    "plakoto": lambda rng: random_plakoto(rng, "plakoto"),
    "fevga": lambda rng: random_same_direction(rng, "fevga"),
    "gul-bara": lambda rng: random_same_direction(rng, "gul-bara", rolls=(rng.randint(3, 9), rng.randint(3, 9))),
    "long-nardy": lambda rng: random_same_direction(rng, "long-nardy", rolls=(rng.randint(0, 1), rng.randint(0, 1))),
}
REFERENCE_BUDGET = 20_000  # boards the reference listing may search; rolls with more plays are skipped
settle = settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _case(name: str, seed: int, d1: int, d2: int):
    """A position, a roll and every legal result (the reference), or None when there are too many to list."""
    rng = random.Random(seed)
    while True:
        try:
            position = GENERATORS[name](rng)
            break
        except ValueError:  # tests/positions.py can draw both sides onto one point: draw again
            continue
    roll = Roll(d1, d2)
    try:
        results = [after for _, after in legal_plays(position, roll, budget=REFERENCE_BUDGET)]
    except SearchBudgetExceeded:
        return None
    return position, roll, results, rng


@settle
@given(st.sampled_from(sorted(GENERATORS)), st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6))
def test_check_agrees_with_every_legal_result_listed(name, seed, d1, d2):
    case = _case(name, seed, d1, d2)
    if case is None:
        return
    position, roll, results, rng = case
    observed = [rng.choice(results)]
    for after in list(observed):
        for side in (Side.WHITE, Side.BLACK):
            slipped = slip(after, side, rng)
            if slipped is not None:
                observed.append(slipped)
    for seen in observed:
        nearest = min(len(board_diff(r, seen)) for r in results)
        verdict = check(position, roll, seen)
        where = f"{position.to_json()} {roll} {seen.to_json()}"
        assert verdict.legal is (nearest == 0) is is_legal_result(position, roll, seen), where
        if verdict.exhaustive:
            assert len(verdict.wrong) == nearest, where
            assert verdict.nearest in results or verdict.legal, where


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([1, 2, 3, 4, 5, 6]))
def test_gul_bara_escalations_check_as_the_listing_says(seed, d):
    # escalated doubles with few enough plays to list: the walks within budgets against the whole list
    case = _case("gul-bara", seed, d, d)
    if case is None:
        return
    position, roll, results, rng = case
    after = rng.choice(results)
    assert check(position, roll, after).legal
    slipped = slip(after, position.turn, rng)
    if slipped is not None:
        legal = any(not board_diff(r, slipped) for r in results)
        assert is_legal_result(position, roll, slipped) is legal, f"{position.to_json()} {roll} {slipped.to_json()}"


def test_issue_22_fuzz_case_is_legal():
    before = Position.from_json(
        '{"variant": "gul-bara", "turn": "white", "points": [2, 3, -4, 1, 1, 0, 1, 1, 1, 2, 1, 0, -2, -4, 0, 1, 1, '
        '-1, 0, -2, 0, 0, -2, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
        '"rolls": {"white": 12, "black": 11}}'
    )
    after = Position.from_json(
        '{"variant": "gul-bara", "turn": "black", "points": [3, 3, -4, 4, 0, 0, 0, 0, 0, 0, 0, 0, -2, -4, 0, 0, 0, '
        '-1, 0, -2, 0, 0, -2, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 5, "black": 0}, '
        '"rolls": {"white": 12, "black": 11}}'
    )
    verdict = check(before, Roll(1, 1), after)
    assert verdict.legal
    assert before.play(verdict.play, Roll(1, 1)).points == after.points


HITTING = {
    "backgammon": lambda rng: random_backgammon(rng, "backgammon"),
    "portes": lambda rng: random_backgammon(rng, "portes"),
    "short-nardy": lambda rng: random_backgammon(rng, "short-nardy"),
}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(HITTING)), st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6))
def test_landing_points_agree_with_every_play_made_in_any_order(name, seed, d1, d2):
    # the dice in order alone, where they do, against AnyOrder's listing of every play's boards
    rng = random.Random(seed)
    position, roll = HITTING[name](rng), Roll(d1, d2)
    results = legal_results(position, roll)
    turn = LazyTurn(position, roll)
    for legs, _, _ in rng.sample(results, min(2, len(results))):
        board = Board.of(position)
        for move in checker_moves(legs[0]):
            seen = board.to_position(position, position.turn, position.turn, position.rolls)
            for src in [i for i in range(25, 0, -1) if board.me[i]]:
                fast, listed = turn.landing_points(seen, src), turn.landing_points_listed(seen, src)
                assert fast == listed, f"{position.to_json()} {roll} {seen.to_json()} from {src}"
            apply_moves(board, position.variant, [move])


def test_a_turn_follows_a_long_escalation_one_checker_move_at_a_time():
    # each board found as the last one with one checker moved on: the whole leg, one board after another
    before = Position.from_json(
        '{"variant": "gul-bara", "turn": "white", "points": [1, 1, 2, 1, 1, 2, 1, 0, 1, 0, 0, -11, 1, -1, -2, -1, '
        '1, 1, 1, 0, 1, 0, 0, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
        '"rolls": {"white": 7, "black": 25}}'
    )
    roll = Roll(2, 2)
    legs, final, _ = sample_results(before, roll, limit=5)[-1]
    turn, fresh = LazyTurn(before, roll), None
    board = Board.of(before)
    for move in checker_moves(legs[0]):
        apply_moves(board, before.variant, [move])
        seen = board.to_position(before, before.turn, before.turn, before.rolls)
        fresh = LazyTurn(before, roll)  # no boards remembered: found by a search
        assert turn.stages(seen) == fresh.stages(seen) != []
    assert turn.is_complete(final.to_position(before, before.turn, before.turn.other, before.rolls)) or len(legs) > 1


def test_checkers_borne_off_waste_no_pip_while_a_checker_stands_higher():
    # a checker borne off from p with die d wastes d - p, only with nothing above p: a board
    # with a checker on point h bounds each die's waste before it by d - h
    assert most_waste((6, 6, 5, 5)) == [0, 5, 10, 14, 18]
    assert most_waste((6, 6, 5, 5), highest=4) == [0, 2, 4, 5, 6]
    assert most_waste((6, 6, 5, 5), highest=6) == [0, 0, 0, 0, 0]
    assert highest_point([3] + [0] * 25) == 1  # nothing left: the last one off may waste d - 1
    assert highest_point([0, 1, 0, 0, 2] + [0] * 21) == 4


def _bearing_off(rng: random.Random, name: str):
    """White bearing off in ``name``: up to 15 checkers on its home points, now and then one or two
    still outside, black's checkers in its own home (none on white's)."""
    v = find_variant(name)
    points: dict[int, int] = {}
    for _ in range(rng.randint(1, 15)):
        p = rng.choice((1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 7, 8, 9) if rng.random() < 0.3 else (1, 2, 3, 4, 5, 6))
        points[p] = points.get(p, 0) + 1
    for _ in range(15):
        p = v.white_point(Side.BLACK, rng.randint(1, 6))
        if points.get(p, 0) <= 0:
            points[p] = points.get(p, 0) - 1
    rolls = (rng.randint(3, 9), rng.randint(3, 9))  # gul-bara's doubles escalate
    return make(name, points, rolls=rolls)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(GENERATORS)), st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6))
def test_every_board_on_the_way_to_a_bear_off_keeps_its_dice_count(name, seed, d1, d2):
    # the waste bound prunes dice counts and walks: no count a board is reached with may be lost
    rng = random.Random(seed)
    position, roll = _bearing_off(rng, name), Roll(d1, d2)
    for legs, final, final_side in rng.sample(sample_results(position, roll), 1):
        turn = LazyTurn(position, roll)
        board = Board.of(position)
        moves = checker_moves(legs[0])
        for j, move in enumerate(moves):
            seen = board.to_position(position, position.turn, position.turn, position.rolls)
            where = f"{position.to_json()} {roll} after {j} moves"
            assert any(k == j for _, k in LazyTurn(position, roll).stages(seen)), where
            assert turn.on_the_way(seen), where
            apply_moves(board, position.variant, [move])
        rolls = (position.rolls[0] + 1, position.rolls[1])
        after = final.to_position(position, final_side, position.turn.other, rolls)
        assert is_legal_result(position, roll, after), f"{position.to_json()} {roll} {after.to_json()}"


def _escalations(games: int, seed: int):
    """``(position, roll, legs)`` of the escalated doubles in ``games`` gul-bara games the heuristic plays
    against itself, as benchmarks/bench_rules.py group (v) takes them: real games bear off in escalations."""
    from board_rules.reach import find_play
    from engine import evaluate

    rng = random.Random(seed)
    v = Position.start("gul-bara").variant
    for _ in range(games):
        while (opening := v.opening(rng.randint(1, 6), rng.randint(1, 6)))[0] is None:
            pass
        starter, first = opening
        position, roll = Position.start(v, starter), Roll(*first) if first else None
        while position.outcome() is None:
            roll = roll or Roll(rng.randint(1, 6), rng.randint(1, 6))
            play, after = evaluate.choose(position, roll, rng, by="heuristic")
            if roll.d1 == roll.d2 and len(play.moves) > 4:
                yield position, roll, find_play(position, roll, after)
            position, roll = after, None


def test_landings_found_from_the_cheap_stages_first_are_every_stages_landings(monkeypatch):
    # where a board lies after several counts of dice (checkers borne off), counts whose next dice
    # could add no landing are not searched: the landings are those of every stage all the same
    from board_rules import turn

    not_searched = []
    may_land = turn._may_land_elsewhere
    monkeypatch.setattr(turn, "_may_land_elsewhere", lambda *a: may_land(*a) or not_searched.append(a))
    boards = 0
    for position, roll, legs in _escalations(12, 3):
        fast, full = LazyTurn(position, roll), LazyTurn(position, roll)
        full._landings_known_first = lambda *args: None
        board = Board.of(position)
        for move in checker_moves(legs[0]):
            seen = board.to_position(position, position.turn, position.turn, position.rolls)
            if board.me[0] > 0:
                boards += 1
                for src in sorted({move.src, *(i for i in range(6, 0, -1) if board.me[i])}):
                    assert fast.landing_points(seen, src) == full.landing_points(seen, src), (
                        f"{position.to_json()} {roll} {seen.to_json()} from {src}"
                    )
            fast.on_the_way(seen)
            full.on_the_way(seen)
            apply_moves(board, position.variant, [move])
    assert boards >= 60 and len(not_searched) >= 60, (boards, len(not_searched))


def test_a_count_of_dice_whose_next_die_adds_a_landing_is_searched_all_the_same():
    # 4-4 escalated: white's last two checkers, on 1 and 2, lie there after all 12 dice (the play is
    # complete) and after 11, when the last six may still bear the one on 2 off: both counts count
    from board_rules.reach import find_play

    before = Position.from_json(
        '{"variant": "gul-bara", "turn": "white", "points": [0, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, '
        '-1, 0, 0, 0, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 7, "black": 14}, '
        '"rolls": {"white": 5, "black": 5}}'
    )
    roll = Roll(4, 4)
    board = Board.of(before)
    board.me[1], board.me[2], board.me[0] = 1, 1, 13
    for x in range(3, 25):
        board.me[x] = 0
    after = board.to_position(before, before.turn, before.turn.other, (6, 5))
    legs = find_play(before, roll, after)
    turn, board = LazyTurn(before, roll), Board.of(before)
    for move in checker_moves(legs[0]):
        turn.on_the_way(board.to_position(before, before.turn, before.turn, before.rolls))
        apply_moves(board, before.variant, [move])
    seen = board.to_position(before, before.turn, before.turn, before.rolls)
    assert sorted(j for _, j in LazyTurn(before, roll).stages(seen)) == [11, 12]
    assert turn.landing_points(seen, 2) == {0}
