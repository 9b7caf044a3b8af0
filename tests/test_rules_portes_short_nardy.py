"""Portes and short nardy (backgammon's movement without the cube), and the opening roll."""

from __future__ import annotations

from board_rules import Position, Side, find_variant
from tests.helpers import make, plays


def test_portes_moves_like_backgammon():
    assert plays(Position.start("portes"), 3, 1) == plays(Position.start("backgammon"), 3, 1)


def test_portes_has_no_cube_and_never_scores_three():
    assert not find_variant("portes").has_cube and find_variant("backgammon").has_cube
    # a checker left in the winner's home: a backgammon would be 3, portes gives 2
    o = make("portes", {12: -14, 3: -1}, off=(15, 0)).outcome()
    assert (o.base, o.kind) == (2, "gammon")
    assert make("portes", {12: -10}, off=(15, 5)).outcome().base == 1


def test_short_nardy_starts_as_backgammon_and_hits():
    s = Position.start("short-nardy")
    assert s.points == Position.start("backgammon").points
    p = make("short-nardy", {13: 1, 11: -1, 6: 14, 1: -14})
    assert "13/11*/5" in plays(p, 2, 6)


def test_short_nardy_romanian_scoring_simple_mars_home_mars_koks():
    def score(black, bar=0, off=0):
        return make("short-nardy", black, bar=(0, bar), off=(15, off)).outcome()

    assert (score({12: -10}, off=5).base, score({12: -10}, off=5).kind) == (1, "simple")
    assert (score({12: -15}).base, score({12: -15}).kind) == (2, "mars")
    assert (score({12: -14, 4: -1}).base, score({12: -14, 4: -1}).kind) == (3, "home-mars")
    assert (score({12: -14}, bar=1).base, score({12: -14}, bar=1).kind) == (4, "koks")


def test_short_nardy_oin_mars_option():
    o = make("short-nardy", {12: -14}, bar=(0, 1), off=(15, 0), scoring="oin-mars").outcome()
    assert (o.base, o.kind) == (2, "mars")


def test_opening_roll_higher_die_plays_both_in_backgammon():
    v = find_variant("backgammon")
    assert v.opening(6, 1) == (Side.WHITE, (6, 1))
    assert v.opening(2, 5) == (Side.BLACK, (2, 5))
    assert v.opening(4, 4) == (None, None)  # a tie is thrown again


def test_opening_roll_reroll_option():
    assert find_variant("backgammon", opening="reroll").opening(6, 1) == (Side.WHITE, None)
    assert find_variant("fevga").opening(1, 3) == (Side.BLACK, None)
    assert find_variant("portes", opening="reroll").opening(5, 3) == (Side.WHITE, None)
