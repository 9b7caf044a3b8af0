"""The emulated table: positions put on the board come back through the host link unchanged."""

from __future__ import annotations

import random

from board_rules import Place, Position, Roll, Side
from board_rules.legality import check
from referee.table import EmulatedTable
from tests.helpers import make
from tests.positions import random_backgammon, random_plakoto, random_same_direction


def same_board(a: Position, b: Position) -> bool:
    return (a.points, a.pinned, a.bar, a.off) == (b.points, b.pinned, b.bar, b.off)


def test_positions_read_back_through_the_board_as_they_were_put():
    rng = random.Random(11)
    with EmulatedTable(seed=11) as table:
        for make_position in (random_backgammon, random_plakoto, random_same_direction) * 10:
            p = make_position(rng)
            assert same_board(table.show(p), p)


def test_a_pinned_plakoto_pair_reads_back_with_the_pin_the_game_knows():
    p = make("plakoto", {24: 13, 11: 1, 1: -13}, pinned={11: "black"})
    with EmulatedTable(seed=12) as table:
        assert same_board(table.show(p), p)


def test_the_referee_lights_exactly_the_wrong_points_on_the_board():
    before = Position.start("backgammon")
    roll = Roll(6, 5)
    wrong = make("backgammon", {**{i + 1: n for i, n in enumerate(before.points) if n}, 24: 1, 14: 1})
    with EmulatedTable(seed=13) as table:
        verdict = check(before, roll, table.show(wrong))
        assert not verdict.legal
        assert table.light(verdict.wrong)
        assert table.lit_points() == list(verdict.wrong)
        assert table.light(())
        assert table.lit_points() == []


def test_the_table_lights_black_tray_and_both_bars_share_one_led():
    with EmulatedTable(seed=14) as table:
        assert table.light([Place.off(Side.BLACK), Place.point(19)])
        assert table.lit_points() == [Place.point(19), Place.off(Side.BLACK)]
        assert table.light([Place.bar(Side.BLACK)])
        assert table.lit_points() == [Place.bar(Side.WHITE), Place.bar(Side.BLACK)]
