"""Plakoto's (and tapa's) rules, each pinned down by a drawn position."""

from __future__ import annotations

import pytest

from board_rules import InvalidPositionError, Place, Position, Roll, Side
from board_rules.legality import TurnTracker, check
from board_rules.movegen import legal_plays
from tests.helpers import make, plays


def test_plakoto_starts_with_fifteen_on_each_start_point():
    s = Position.start("plakoto")
    assert s.points[23] == 15 and s.points[0] == -15 and sum(abs(x) for x in s.points) == 30


def test_plakoto_opening_six_five():
    assert plays(Position.start("plakoto"), 6, 5) == {"24/13", "24/19 24/18"}


def test_plakoto_blot_is_pinned_not_hit():
    p = make("plakoto", {24: 13, 13: 1, 11: -1, 1: -14})
    after = p.play("24/23 13/11*", Roll(2, 1))
    assert after.points[10] == 1 and after.pinned[10] == -1 and after.bar == (0, 0)
    assert after.to_dict()["pinned"] == {"11": "black"}


def test_plakoto_pin_made_and_released_on_the_way_reads_as_the_plain_route():
    p = make("plakoto", {24: 13, 13: 1, 11: -1, 1: -14})
    assert plays(p, 2, 1) == {"13/10", "24/21", "24/22 13/12", "24/23 13/11*", "24/23 24/22"}


def test_plakoto_pinned_checker_cannot_move():
    # black's checker pinned on white's 11 stays; only its start point moves
    p = make("plakoto", {24: 12, 11: 1, 1: -14}, pinned={11: "black"}, turn="black")
    assert plays(p, 2, 1) == {"24/21", "24/23 24/22"}


def test_plakoto_pinned_side_cannot_land_on_the_pin():
    # white's single checker pins black on white 11 (black's 14): black cannot land there
    p = make("plakoto", {24: 14, 11: 1, 8: -1, 1: -13}, pinned={11: "black"}, turn="black")
    got = plays(p, 6, 3)
    assert not any(t.split()[i].endswith("/14") for t in got for i in range(len(t.split())))
    assert "8/14" not in " ".join(got)


def test_plakoto_pinner_leaving_releases_the_pinned_checker():
    p = make("plakoto", {24: 13, 11: 1, 1: -13}, pinned={11: "black"})
    after = p.play("11/5 24/23", Roll(6, 1))
    assert after.points[10] == -1 and after.pinned[10] == 0


def test_plakoto_two_on_a_pin_keep_it_when_one_leaves():
    p = make("plakoto", {24: 12, 11: 2, 1: -13}, pinned={11: "black"})
    after = p.play("11/5 24/23", Roll(6, 1))
    assert after.points[10] == 1 and after.pinned[10] == -1


def test_plakoto_mother_pinned_ends_the_game_at_once_for_two_points():
    # black's last checker on its start (white's 1) is its mother; white has left its own start
    p = make("plakoto", {6: 14, 7: 1, 1: -1, 20: -14})
    got = plays(p, 6, 1)
    assert "7/1*" in got  # the 1 is not played: the game is over
    o = p.play("7/1*", Roll(6, 1)).outcome()
    assert (o.winner, o.base, o.kind) == (Side.WHITE, 2, "mother")


def test_plakoto_mother_pin_does_not_end_the_game_while_the_pinner_has_checkers_on_its_start():
    p = make("plakoto", {24: 3, 6: 11, 7: 1, 1: -1, 20: -14})
    assert "7/1*" not in plays(p, 6, 1)
    assert p.play("24/23 7/1*", Roll(6, 1)).outcome() is None


def test_plakoto_mother_pin_ends_at_once_with_the_exception_off():
    p = make("plakoto", {24: 3, 6: 11, 7: 1, 1: -1, 20: -14}, mother_exception=False)
    assert "7/1*" in plays(p, 6, 1)
    assert p.play("7/1*", Roll(6, 1)).outcome().kind == "mother"


def test_plakoto_both_mothers_pinned_is_a_draw():
    # white pinned black's mother while keeping one on its own start; black pins back
    p = make("plakoto", {24: 1, 1: 1, 6: 12, 20: -13, 18: -1}, pinned={1: "black"}, turn="black")
    assert p.outcome() is None
    after = p.play("7/1*", Roll(6, 1))  # black's 7 is white's 18; black's 1 is white's 24
    o = after.outcome()
    assert o.winner is None and o.kind == "draw" and o.points == 0


def test_plakoto_both_mothers_pinned_first_pinner_wins_option():
    p = make(
        "plakoto",
        {24: 1, 1: 1, 6: 12, 20: -13, 18: -1},
        pinned={1: "black"},
        turn="black",
        both_mothers_pinned="first-pinner-wins",
    )
    o = p.play("7/1*", Roll(6, 1)).outcome()
    assert o.winner is Side.WHITE and o.base == 2


def test_tapa_has_no_mother_rule():
    p = make("tapa", {6: 14, 7: 1, 1: -1, 20: -14})
    assert plays(p, 6, 1) == {"7/1* 6/5", "7/off"}
    assert p.play("7/1* 6/5", Roll(6, 1)).outcome() is None
    assert p.variant.label == "tapa"


def test_plakoto_bearing_off_needs_every_checker_free():
    # white's checker pinned on white's 3 (inside its home) stops bearing off by default
    p = make("plakoto", {6: 13, 3: -1, 20: -13}, pinned={3: "white"}, off=(1, 1))
    assert not any("off" in t for t in plays(p, 6, 5))


def test_plakoto_bear_off_while_pinned_at_home_option():
    p = make("plakoto", {6: 13, 3: -1, 20: -13}, pinned={3: "white"}, off=(1, 1), bear_off_while_pinned=True)
    assert plays(p, 6, 5) == {"6/1 6/off"}
    assert plays(p, 6, 6) == {"6/off(4)"}


def test_plakoto_pinned_checker_outside_home_stops_bearing_off_even_with_the_option():
    p = make("plakoto", {6: 13, 9: -1, 20: -13}, pinned={9: "white"}, off=(1, 1), bear_off_while_pinned=True)
    assert not any("off" in t for t in plays(p, 6, 5))


def test_plakoto_pinned_checker_needs_opposing_checker_on_top():
    with pytest.raises(InvalidPositionError, match="pinned"):
        make("plakoto", {24: 14, 11: -1, 1: -13}, pinned={11: "black"}, off=(0, 0))


def test_pins_are_refused_outside_plakoto():
    with pytest.raises(InvalidPositionError, match="pinned"):
        make("portes", {24: 14, 11: 1, 1: -14}, pinned={11: "black"})


def test_plakoto_loser_with_nothing_off_loses_two():
    o = make("plakoto", {20: -15}, off=(15, 0)).outcome()
    assert (o.base, o.kind) == (2, "gammon")
    assert make("plakoto", {20: -10}, off=(15, 5)).outcome().base == 1


def test_pinning_the_mother_ends_the_turn_before_every_die_is_played():
    # black to play 3-2; black's 3 is white's 22, black's 1 is white's 24, where white's
    # mother stands alone; black has left its own start (white's 1), so the pin ends the game
    p = make(
        "plakoto",
        {2: -1, 3: 3, 4: 3, 5: 1, 6: -1, 12: -1, 13: -3, 14: -3, 15: 2, 18: 2, 20: 1, 22: -1, 23: -4, 24: 1},
        pinned={4: "black", 12: "white", 14: "white"},
        turn="black",
        rolls=(25, 25),
    )
    roll = Roll(3, 2)
    assert plays(p, 3, 2) == {
        "3/1*",
        "23/20*/18",
        "23/20* 3/1*",
        "23/20* 19/17",
        "23/20* 13/11",
        "23/20* 11/9",
        "19/14",
        "19/16 3/1*",
        "19/16 13/11",
        "19/16 11/9",
        "19/17 12/9",
        "19/17 11/8",
        "13/11 12/9",
        "13/8",
        "12/9 11/9",
        "12/9 3/1*",
        "11/9 11/8",
        "11/6",
        "11/8 3/1*",
    }
    after = p.play("3/1*", roll)  # the 3 is not played: the game is over
    o = after.outcome()
    assert (o.winner, o.base, o.kind) == (Side.BLACK, 2, "mother")
    verdict = check(p, roll, after)
    assert verdict.legal and str(verdict.play) == "3/1*" and verdict.wrong == ()
    for play, result in legal_plays(p, roll):
        verdict = check(p, roll, result)
        assert verdict.legal and str(verdict.play) == str(play)
    # followed checker by checker: the pin finishes the turn and nothing more may be played
    t = TurnTracker(p, roll)
    assert t.on_the_way(after) and t.is_complete(after)
    assert all(t.landing_points(after, Place.point(point)) == () for point in range(1, 25))


def test_plakoto_check_names_a_pin_made_and_released_on_the_way_by_the_plain_route():
    # 13/11*/10 and 13/10 end on the same board: the check names it as the move generator does
    p = make("plakoto", {24: 13, 13: 1, 11: -1, 1: -14})
    after = p.play("13/10", Roll(2, 1))
    assert after.points[10] == -1 and after.pinned[10] == 0
    assert str(check(p, Roll(2, 1), after).play) == "13/10"
