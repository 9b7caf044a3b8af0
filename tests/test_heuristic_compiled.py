"""The teacher's heuristic compiled (engine/_heuristic.c): the same terms as the Python, to the last bit,
on random boards of every game, both sides' views, races, bear-offs and pins."""

from __future__ import annotations

import random

import pytest

from board_rules import Position, Side
from board_rules.moves import Board
from engine import heuristic
from tests.helpers import compiled
from tests.positions import random_backgammon, random_plakoto, random_same_direction


def _compiled():
    """The compiled module (:func:`tests.helpers.compiled`)."""
    return compiled(heuristic._compiled, "engine._heuristic")


def _positions(variant: str, count: int, rng: random.Random) -> list[Position]:
    draw = {
        "backgammon": random_backgammon,
        "portes": random_backgammon,
        "short-nardy": random_backgammon,
        "plakoto": random_plakoto,
    }.get(variant, random_same_direction)
    out = []
    while len(out) < count:
        try:
            out.append(draw(rng, variant))
        except ValueError:
            continue  # a draw that puts both sides on one start point: draw again
    return out


def _views(position: Position, side: Side) -> tuple[Board, Board]:
    return Board.of(position, side), Board.of(position, side.other)


@pytest.mark.parametrize(
    "variant", ["backgammon", "portes", "short-nardy", "plakoto", "fevga", "gul-bara", "long-nardy"]
)
def test_compiled_terms_are_the_python_terms_to_the_last_bit(variant):
    _compiled()
    rng = random.Random(f"heuristic-{variant}")
    checked = 0
    for position in _positions(variant, 400, rng):
        for side in (Side.WHITE, Side.BLACK):
            mine, theirs = _views(position, side)
            got = heuristic.value_parts(mine, theirs, position.variant, parts=True)
            want = heuristic.value_parts_python(mine, theirs, position.variant, parts=True)
            assert got[0] == want[0] and got[1] == want[1], (position.to_json(), side)
            checked += 1
    assert checked == 800
    # races: both sides' checkers home, some off (the two views need not be of one board here)
    v = Position.start(variant).variant
    for _ in range(200):
        views = []
        for _side in range(2):
            me = [0] * 26
            me[0] = rng.randint(0, 14)
            for _ in range(15 - me[0]):
                me[rng.randint(1, 6)] += 1
            views.append(Board(me, [0] * 26, [0] * 26 if v.pins else None, 0))
        mine, theirs = views
        mine.opp[19:25], theirs.opp[19:25] = theirs.me[6:0:-1], mine.me[6:0:-1]
        assert not heuristic.contact(mine, theirs, v)
        assert heuristic.value_parts(mine, theirs, v, True) == heuristic.value_parts_python(mine, theirs, v, True)


@pytest.mark.parametrize("variant", ["backgammon", "plakoto", "gul-bara"])
def test_compiled_terms_of_the_start_and_of_every_checker_off(variant):
    _compiled()
    start = Position.start(variant)
    mine, theirs = _views(start, Side.WHITE)
    assert heuristic.value_parts(mine, theirs, start.variant, True) == heuristic.value_parts_python(
        mine, theirs, start.variant, True
    )
    mine.me[0], mine.me[24] = 15, 0  # every checker of ours off: 1000 and no terms
    assert heuristic.value_parts(mine, theirs, start.variant, True) == (1000.0, [0.0] * 13)


@pytest.mark.parametrize("variant", ["portes", "plakoto", "fevga", "gul-bara", "long-nardy"])
def test_values_of_many_boards_in_one_call_are_each_boards_value(variant):
    _compiled()
    rng = random.Random(f"values-{variant}")
    boards = [Board.of(p, rng.choice((Side.WHITE, Side.BLACK))) for p in _positions(variant, 200, rng)]
    boards[0].me[0], boards[0].me[1:] = 15, [0] * 25  # every checker off: 1000
    v = Position.start(variant).variant
    got = heuristic.values(boards, v)
    assert got == [heuristic.value_parts_python(b, b.flipped(v), v)[0] for b in boards]
    assert got[0] == 1000.0 and heuristic.values([], v) == []


def test_the_compiled_terms_refuse_what_is_not_a_board_key():
    compiled = _compiled()
    key = Board.of(Position.start("backgammon")).key()
    with pytest.raises(ValueError, match="mine: expected a board key of 52 or 78 bytes"):
        compiled.value_parts(key[:-1], key, True, False, False, False)
    with pytest.raises(ValueError, match="theirs: count 16"):
        compiled.value_parts(key, bytes([16]) + key[1:], True, False, False, False)
