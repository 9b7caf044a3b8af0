"""Backgammon's rules (and those it shares with every variant), each pinned down by a drawn position."""

from __future__ import annotations

import pytest

from board_rules import IllegalPlayError, Position, Roll, Side
from tests.helpers import make, plays


def test_opening_three_one_has_sixteen_plays():
    got = plays(Position.start("backgammon"), 3, 1)
    assert "8/5 6/5" in got and "24/23 24/21" in got and "24/20" in got
    assert len(got) == 16


def test_must_play_both_dice_when_possible():
    # 24/19 alone would use one die; 18 is blocked, so only the 5 then the 6 plays both
    p = make("backgammon", {24: 1, 1: 14, 18: -3, 2: -12})
    assert plays(p, 6, 5) == {"24/13"}


def test_larger_die_must_be_played_when_only_one_can():
    # 24/18 and 24/19 are both open, but neither can go on to 13
    p = make("backgammon", {24: 1, 1: 14, 13: -3, 12: -2, 2: -10})
    # a 6 and a 5 from 24 end on 18/19, then 13 and 12 are blocked
    assert plays(p, 6, 5) == {"24/18"}


def test_only_die_that_can_be_played_is_played():
    # 24/18 is blocked, 24/19 open, 19/13 blocked: only the 5 plays
    p = make("backgammon", {24: 1, 1: 14, 18: -2, 13: -2, 2: -11})
    assert plays(p, 6, 5) == {"24/19"}


def test_doubles_are_played_four_times():
    p = make("backgammon", {24: 1, 1: 14, 2: -15})
    assert plays(p, 5, 5) == {"24/4"}


def test_checker_on_bar_enters_before_any_other_moves():
    p = make("backgammon", {6: 14, 1: -15}, bar=(1, 0))
    got = plays(p, 3, 1)
    assert all(t.startswith("bar/") for t in got)
    # bar/22 or bar/24, then the other die (bar/21 is one checker entering and moving on)
    assert got == {"bar/21", "bar/22 6/5", "bar/24 6/3"}


def test_closed_board_passes_the_turn():
    p = make("backgammon", {19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2, 6: 14}, bar=(1, 0))
    result = p.legal_plays(Roll(6, 6))
    assert [str(x) for x in result] == [""]
    after = p.play("", Roll(6, 6))
    assert after.points == p.points and after.turn is Side.BLACK and after.rolls == (1, 0)


def test_blot_is_hit_and_goes_to_the_bar():
    p = make("backgammon", {13: 1, 11: -1, 6: 14, 1: -14})
    assert plays(p, 2, 6) == {"13/11*/5", "13/5", "13/7 6/4"}
    after = p.play("13/11*/5", Roll(2, 6))
    assert after.bar == (0, 1) and after.points[10] == 0 and after.points[4] == 1


def test_point_with_two_opposing_checkers_is_blocked():
    p = make("backgammon", {13: 1, 6: 14, 11: -2, 1: -13})
    assert not any("/11" in t for t in plays(p, 2, 1))


def test_bearing_off_needs_every_checker_home():
    p = make("backgammon", {7: 1, 6: 14, 24: -15})
    got = plays(p, 6, 1)
    # 6/off first is illegal (7 is outside); 7/6 brings everyone home, then 6/off (written 7/off)
    assert got == {"7/off", "7/1 6/5"}


def test_bearing_off_with_a_larger_die_only_from_the_highest_point():
    p = make("backgammon", {3: 1, 2: 1, 24: -15})
    assert plays(p, 6, 5) == {"3/off 2/off"}
    p = make("backgammon", {5: 1, 2: 1, 24: -15})
    # the 6 must take the highest checker; 2/off with the 6 is never allowed
    assert plays(p, 6, 1) == {"5/off 2/1", "5/off"}


def test_larger_die_cannot_bear_off_a_lower_checker_while_a_higher_one_stands():
    p = make("backgammon", {5: 1, 1: 1, 24: -15})
    got = plays(p, 6, 4)
    assert "1/off" not in " ".join(t for t in got if not t.startswith("5"))
    assert got == {"5/off 1/off", "5/off"}  # 5/off, or 5/1 then 1/off (written 5/off)


def test_black_moves_from_one_towards_twenty_four_in_its_own_numbering():
    p = Position.start("backgammon", Side.BLACK)
    after = p.play("24/18 13/8", Roll(6, 5))
    assert after.points[0] == -1 and after.points[6] == -1 and after.points[11] == -4 and after.points[16] == -4


def test_illegal_play_is_refused_with_the_legal_ones_named():
    with pytest.raises(IllegalPlayError, match="24/14"):
        Position.start("backgammon").play("24/14", Roll(6, 5))


def test_two_orders_of_the_same_checker_moves_are_one_play():
    got = Position.start("backgammon").legal_plays(Roll(6, 5))
    results = [p for p in got]
    assert len(results) == len(set(results))


def test_single_gammon_backgammon_scores():
    def won(black_points, black_bar=0, black_off=0):
        p = make("backgammon", black_points, bar=(0, black_bar), off=(15, black_off))
        return p.outcome()

    assert won({12: -10}, black_off=5).kind == "single"
    o = won({12: -15})
    assert (o.winner, o.kind, o.base) == (Side.WHITE, "gammon", 2)
    assert won({12: -14, 3: -1}).kind == "backgammon"  # a checker in white's home board
    assert won({12: -14}, black_bar=1).base == 3  # a checker on the bar
    assert make("backgammon", {6: 1, 12: -15}, off=(14, 0)).outcome() is None
