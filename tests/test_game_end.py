"""A game ends the moment a side has all 15 checkers off: no die is played after it, by either side.

Every path is pinned: legal plays, ``check``, ``TurnTracker``, scoring, and the referee's flow.
The gul-bara positions are those of issue 22 (independent vectors that found the fault).
"""

import pytest

from board_rules import IllegalPlayError, Place, Roll, Side
from board_rules.legality import TurnTracker, check
from board_rules.movegen import legal_plays
from referee import flow as F
from referee.flow import GameFlow
from referee.spec import MatchSpec
from tests.helpers import make, plays

FIVES = Roll(5, 5)  # escalated in gul-bara after 3 rolls: four 5s, then four 6s


def _black_bears_off_its_last(white_off: int):
    """Gul-bara, black to roll 5-5 (escalated) with one checker on its own point 1 (white's 13)."""
    white = {1: 5} if white_off == 10 else {1: 5, 2: 5, 3: 5}
    return make("gul-bara", {**white, 13: -1}, turn="black", rolls=(52, 52))


def test_gul_bara_last_checker_off_ends_the_escalation_nothing_passes():
    before = _black_bears_off_its_last(white_off=10)
    assert before.off == (10, 14)
    assert plays(before, 5, 5) == {"1/off"}
    [(play, after)] = legal_plays(before, FIVES)
    assert after.off == (10, 15)  # white bears off nothing after black has won
    outcome = after.outcome()
    assert (outcome.winner, outcome.kind, outcome.points) == (Side.BLACK, "single", 1)


def test_gul_bara_last_checker_off_keeps_a_mars_a_mars():
    before = _black_bears_off_its_last(white_off=0)
    assert plays(before, 5, 5) == {"1/off"}
    [(_, after)] = legal_plays(before, FIVES)
    assert after.off == (0, 15)
    outcome = after.outcome()
    assert (outcome.winner, outcome.kind, outcome.points) == (Side.BLACK, "gammon", 2)


def test_gul_bara_passed_numbers_stop_when_the_opponent_bears_off_its_last():
    # white moves 24/19 and is stuck; black bears off its last two with the numbers passed to it,
    # and nothing passes back to white
    before = make("gul-bara", {24: 1, 13: -1, 14: -1}, turn="white", rolls=(5, 5))
    assert plays(before, 5, 5) == {"24/19 | 2/off 1/off"}
    [(_, after)] = legal_plays(before, FIVES)
    assert after.off == (14, 15) and after.points[18] == 1
    assert after.outcome().winner is Side.BLACK


def test_check_refuses_a_board_where_the_loser_moved_after_the_game_ended():
    before = _black_bears_off_its_last(white_off=10)
    moved_on = make("gul-bara", {}, turn="white", off=(15, 15))  # white bore off its five too
    verdict = check(before, FIVES, moved_on)
    assert not verdict.legal
    assert str(verdict.play) == "1/off"
    assert verdict.wrong == (Place.point(1), Place.off(Side.WHITE))
    with pytest.raises(IllegalPlayError):
        before.play("1/off | 1/off(5)", FIVES)
    [(_, after)] = legal_plays(before, FIVES)
    assert check(before, FIVES, after).legal
    assert before.play("1/off", FIVES) == after


def test_turn_tracker_takes_the_last_checker_off_as_a_finished_play():
    before = _black_bears_off_its_last(white_off=10)
    [(_, after)] = legal_plays(before, FIVES)
    tracker = TurnTracker(before, FIVES)
    assert tracker.on_the_way(after) and tracker.is_complete(after)
    assert not tracker.on_the_way(make("gul-bara", {}, turn="white", off=(15, 15)))
    assert tracker.landing_points(before, Place.point(13)) == (Place.off(Side.BLACK),)


def test_turn_tracker_lands_nothing_once_the_game_is_over():
    # white has two checkers left: 2/off with the first 5 and 1/off with the second end it
    before = make("gul-bara", {2: 1, 1: 1, 13: -3}, rolls=(9, 9))
    assert plays(before, 5, 5) == {"2/off 1/off"}
    tracker = TurnTracker(before, FIVES)
    one_off = make("gul-bara", {1: 1, 13: -3}, rolls=(9, 9))
    assert tracker.on_the_way(one_off) and not tracker.is_complete(one_off)
    assert tracker.landing_points(one_off, Place.point(1)) == (Place.off(Side.WHITE),)
    done = make("gul-bara", {13: -3}, turn="black", rolls=(10, 9))
    assert tracker.is_complete(done)


@pytest.mark.parametrize(
    "variant", ["backgammon", "portes", "short-nardy", "plakoto", "fevga", "gul-bara", "long-nardy"]
)
@pytest.mark.parametrize("dice", [(6, 5), (1, 1), (3, 3)])
def test_every_variant_the_last_checker_off_is_a_complete_play(variant, dice):
    black = {19: -5} if variant in ("backgammon", "portes", "short-nardy", "plakoto") else {13: -5}
    before = make(variant, {1: 1, **black}, rolls=(9, 9))
    assert plays(before, *dice) == {"1/off"}
    [(_, after)] = legal_plays(before, Roll(*dice))
    assert after.off[0] == 15 and after.outcome().winner is Side.WHITE
    assert check(before, Roll(*dice), after).legal
    assert TurnTracker(before, Roll(*dice)).is_complete(after)


@pytest.mark.parametrize("variant", ["backgammon", "plakoto", "gul-bara", "long-nardy"])
def test_nothing_is_played_once_a_side_has_every_checker_off(variant):
    black = {19: -5} if variant in ("backgammon", "plakoto") else {13: -5}
    over = make(variant, {**black}, turn="black", rolls=(9, 9))  # white has borne off all 15
    assert over.off[0] == 15
    [(play, after)] = legal_plays(over, Roll(6, 6))
    assert not play and after.points == over.points and after.turn is Side.WHITE
    assert check(over, Roll(6, 6), over).legal
    tracker = TurnTracker(over, Roll(6, 6))
    assert tracker.is_complete(over)
    assert tracker.landing_points(over, Place.point(19 if variant in ("backgammon", "plakoto") else 13)) == ()


def test_the_referee_ends_a_gul_bara_game_on_the_last_checker_off():
    flow, _ = GameFlow.new(MatchSpec("money", 0, "gul-bara", games=1))
    flow.record.position = _black_bears_off_its_last(white_off=0)
    flow.record.starter_known = True
    flow.ready = True
    flow.handle(F.SeenDice((5, 5), ("left", "left")))
    moved_on = make("gul-bara", {}, turn="white", off=(15, 15), rolls=(52, 53))
    flow.handle(F.SeenBoard(moved_on))
    refused = list(flow.handle(F.Pressed("end-turn")).calls.says)
    assert "not a legal play" in refused[0] and "the nearest legal play is 1/off" in refused[0]
    [(_, after)] = legal_plays(flow.record.position, FIVES)
    flow.handle(F.SeenBoard(after))
    says = list(flow.handle(F.Pressed("end-turn")).calls.says)
    assert says[:2] == ["black plays 1/off", "black wins 2 points (gammon)"]
