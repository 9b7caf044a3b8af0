"""Fevga, gul-bara and long nardy: both sides run the same way and one checker holds a point."""

from __future__ import annotations

from board_rules import Position, Roll, Side, find_variant
from tests.helpers import make, plays

# ------------------------------------------------------------------------------------ fevga


def test_fevga_starts_white_on_24_and_black_on_12():
    s = Position.start("fevga")
    assert s.points[23] == 15 and s.points[11] == -15


def test_fevga_opening_runs_one_checker():
    assert plays(Position.start("fevga"), 6, 5) == {"24/13"}
    assert plays(Position.start("fevga"), 3, 3) == {"24/15"}  # 24/12 is black's start


def test_fevga_black_moves_12_to_1_then_24_to_13_in_its_own_numbering():
    s = Position.start("fevga", Side.BLACK)
    after = s.play("24/13", Roll(6, 5))
    assert after.points[11] == -14 and after.points[0] == -1  # white's 12 -> white's 1


def test_fevga_single_checker_holds_a_point():
    # black's single checker on white's 18 blocks 24/18
    p = make("fevga", {24: 15, 18: -1, 12: -14})
    assert plays(p, 6, 5) == {"24/13"}
    p = make("fevga", {24: 15, 18: -1, 19: -1, 12: -13})
    assert plays(p, 6, 5) == {""}


def test_fevga_second_checker_waits_for_first_to_pass_opponent_start():
    # the first checker on 13 has not passed black's start (12): no second checker may leave
    p = make("fevga", {24: 14, 13: 1, 16: -15})
    assert plays(p, 2, 1) == {"13/10", "24/23 13/11"}


def test_fevga_second_checker_may_leave_once_first_reached_third_quarter_option():
    p = make("fevga", {24: 14, 13: 1, 16: -15}, second_checker="third-quarter")
    assert plays(p, 2, 1) == {"13/10", "24/23 13/11", "24/22 13/12"}


def test_fevga_may_not_hold_all_six_points_of_its_starting_quarter():
    p = make("fevga", {24: 10, 23: 1, 22: 1, 21: 1, 20: 1, 10: 1, 12: -15})
    got = plays(p, 5, 1)
    free = plays(make("fevga", {24: 10, 23: 1, 22: 1, 21: 1, 20: 1, 10: 1, 12: -15}, start_quarter_rule=False), 5, 1)
    assert free - got == {"24/19 10/9", "24/23 24/19"}


def test_fevga_trapping_prime_option_forbids_six_prime_with_every_opponent_behind():
    # white holds 5..9 and lands on 10 or 4: six in a row with every black checker behind
    base = {24: 8, 9: 1, 8: 1, 7: 1, 6: 1, 5: 1, 16: 2, 12: -15}
    free = plays(make("fevga", base), 6, 1)
    got = plays(make("fevga", base, trapping_prime_rule=True), 6, 1)
    assert free - got == {"16/15 16/10", "24/23 16/10"}
    assert got <= free


def test_fevga_scores_one_or_two():
    assert make("fevga", {13: -15}, off=(15, 0)).outcome().base == 2
    assert make("fevga", {13: -14}, off=(15, 1)).outcome().base == 1


# ------------------------------------------------------------------------------------ gul-bara


def test_gul_bara_doubles_are_plain_in_the_first_rolls():
    p = make("gul-bara", {24: 14, 5: 1, 12: -15}, rolls=(2, 3))
    assert plays(p, 5, 5) == {"24/14(2)", "24/19 24/9", "24/19(2) 24/14", "24/19(4)", "24/4"}


def test_gul_bara_double_escalates_to_six_six_after_the_first_rolls():
    p = make("gul-bara", {24: 14, 5: 1, 12: -15}, rolls=(3, 0))
    got = p.legal_plays(Roll(5, 5))
    assert "24/19(4) 24/18(4)" in {str(x) for x in got}
    for play in got:  # four fives then four sixes: eight checker moves, 44 pips
        assert sum(m.src - m.dst for m in play.moves) == 44 or any(m.dst == 0 for m in play.moves)


def test_gul_bara_escalation_after_option():
    p = make("gul-bara", {24: 14, 5: 1, 12: -15}, rolls=(1, 0), escalation_after=1)
    assert "24/19(4) 24/18(4)" in plays(p, 5, 5)


def test_gul_bara_unplayed_numbers_pass_to_the_opponent():
    # white plays one six (16/10), then 10/4 and 24/18 are blocked: three sixes pass to black
    p = make("gul-bara", {24: 14, 16: 1, 18: -1, 4: -1, 12: -13}, rolls=(3, 3))
    assert plays(p, 6, 6) == {"16/10 | 24/18(3)", "16/10 | 24/18(2) 16/10", "16/10 | 24/18 16/4"}
    after = p.play("16/10 | 24/18(3)", Roll(6, 6))
    assert after.turn is Side.BLACK and after.rolls == (4, 3) and after.points[5] == -3


def test_gul_bara_unplayed_numbers_are_lost_with_the_option():
    p = make("gul-bara", {24: 14, 16: 1, 18: -1, 4: -1, 12: -13}, rolls=(3, 3), unplayed="lost")
    assert plays(p, 6, 6) == {"16/10"}


def test_gul_bara_nothing_passes_when_the_side_moved_no_checker():
    p = make("gul-bara", {24: 14, 10: 1, 18: -1, 4: -1, 12: -13}, rolls=(3, 3))
    assert plays(p, 6, 6) == {""}


# ------------------------------------------------------------------------------------ long nardy


def test_long_nardy_only_one_checker_leaves_the_head_per_turn():
    p = make("long-nardy", {24: 15, 12: -15}, rolls=(1, 1))
    assert plays(p, 2, 2) == {"24/16"}
    assert plays(p, 6, 6) == {"24/18"}


def test_long_nardy_first_roll_six_six_four_four_three_three_take_two_from_the_head():
    s = Position.start("long-nardy")
    assert plays(s, 6, 6) == {"24/18(2)"}
    assert plays(s, 4, 4) == {"24/16(2)"}
    assert plays(s, 3, 3) == {"24/18(2)", "24/21 24/15"}
    assert plays(s, 2, 2) == {"24/16"}
    assert plays(s, 6, 5) == {"24/13"}


def test_long_nardy_no_six_block_unless_an_opposing_checker_is_ahead():
    # white holds 20..24; landing on 19 makes six in a row with every black checker behind it
    white = {24: 10, 23: 1, 22: 1, 21: 1, 20: 1, 10: 1}
    blocked = plays(make("long-nardy", {**white, 12: -15}, rolls=(5, 5)), 5, 3)
    free = plays(make("long-nardy", {**white, 12: -15}, rolls=(5, 5), trapping_prime_rule=False), 5, 3)
    assert free - blocked == {"24/19 10/7"} and blocked <= free
    # one black checker on white's 17 has passed the block: it is allowed
    ahead = plays(make("long-nardy", {**white, 17: -1, 12: -14}, rolls=(5, 5)), 5, 3)
    assert "24/19 10/7" in ahead


def test_long_nardy_oin_and_mars():
    o = make("long-nardy", {13: -14}, off=(15, 1)).outcome()
    assert (o.base, o.kind) == (1, "oin")
    assert make("long-nardy", {5: -15}, off=(15, 0)).outcome().kind == "mars"


def test_long_nardy_romanian_scoring_table():
    def score(black):
        return make("long-nardy", black, off=(15, 15 - sum(-n for n in black.values())), scoring="romanian").outcome()

    assert score({14: -15}).base == 2  # all in its own home, nothing off: mars
    assert score({3: -1, 14: -14}).base == 3  # black's own 15 (white 3) is in white's home
    assert (score({10: -1, 14: -14}).base, score({10: -1, 14: -14}).kind) == (4, "koks")  # black's own 21
    assert score({14: -10}).base == 1


def test_long_nardy_head_doubles_option():
    s = Position.start(find_variant("long-nardy", head_doubles=(6,)))
    assert plays(s, 6, 6) == {"24/18(2)"}
    assert plays(s, 4, 4) == {"24/16"}  # one checker only: 24/20/16, then 12 is black's head
