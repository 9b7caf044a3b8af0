"""The teacher's fast paths over escalated doubles and passed numbers give what the reference paths
give: the beam search's compiled step (``board_rules._fastgen.step_blocking``) and its boards scored
by their keys, and :func:`board_rules.movegen.result_keys` against :func:`legal_results`."""

from __future__ import annotations

import functools
import random

import pytest

from board_rules import Position, Roll, fastgen
from board_rules.legality import is_legal_result
from board_rules.movegen import SearchBudgetExceeded, legal_results, result_keys
from board_rules.moves import Board
from engine import evaluate, heuristic, learned
from engine.beam import beam_plays
from tests.helpers import compiled

ROLLS = [Roll(a, b) for a in range(1, 7) for b in range(a, 7)]


@functools.cache
def _game(variant: str, seed: int) -> tuple[Position, ...]:
    """The positions of one game the heuristic plays against itself."""
    dice, ties = random.Random(seed), random.Random(seed + 1)
    pos = Position.start(variant)
    out = []
    for _ in range(400):
        if pos.outcome() is not None:
            break
        out.append(pos)
        _, pos = evaluate.choose(pos, Roll(dice.randint(1, 6), dice.randint(1, 6)), ties, by="heuristic")
    return tuple(out)


def _keyed(plays: list) -> list:
    return [(moves, b.key(), b.opp_off) for moves, b in plays]


def _by_key_values(keys: bytes, opp_off: int, v) -> list[float]:
    """The heuristic's ranking, not recognised as it: the beam takes it a die at a time."""
    return heuristic.key_values(keys, opp_off, v)


@pytest.mark.parametrize("scores", ["heuristic", "heuristic a die at a time", "net"])
@pytest.mark.parametrize(("variant", "seed"), [("gul-bara", 1), ("gul-bara", 2), ("long-nardy", 1), ("fevga", 1)])
def test_the_compiled_beam_finds_the_pythons_moves_in_its_order(variant, seed, scores):
    compiled(fastgen._compiled, "board_rules._fastgen")
    rank = {
        "heuristic": heuristic.key_values,
        "heuristic a die at a time": _by_key_values,
        "net": functools.partial(learned.key_scores, learned.shipped(variant)),
    }[scores]
    checked = 0
    for pos in _game(variant, seed)[::3]:
        for roll in (Roll(1, 1), Roll(3, 3), Roll(6, 5), Roll(2, 1)):
            for width in (3, 10):
                want = beam_plays(pos, roll, rank, width, compiled=False)
                assert _keyed(beam_plays(pos, roll, rank, width)) == _keyed(want)
                checked += bool(want)
    assert checked > 20


def test_a_beams_plays_are_legal_plays_of_the_roll():
    pos = _game("gul-bara", 3)[20]
    found = 0
    for roll in ROLLS:
        for _, board in beam_plays(pos, roll, heuristic.key_values, 3):
            after = board.to_position(pos, pos.turn, pos.turn.other, learned.rolls_after(pos))
            assert is_legal_result(pos, roll, after)
            found += 1
    assert found > len(ROLLS)


def test_boards_scored_by_their_keys_score_as_boards():
    pos = _game("gul-bara", 4)[10]
    v = pos.variant
    plays = beam_plays(pos, Roll(2, 2), heuristic.key_values, 10, compiled=False)
    boards = [b for _, b in plays]
    keys = b"".join(b.key() for b in boards)
    assert heuristic.key_values(keys, boards[0].opp_off, v) == heuristic.values(boards, v)
    net = learned.shipped("gul-bara")
    got = learned.key_scores(net, keys, boards[0].opp_off, v)
    assert got == learned.board_scores(net, boards, v)
    assert heuristic.key_values(b"", 0, v) == [] and learned.key_scores(net, b"", 0, v) == []


def test_boards_scored_by_their_keys_without_the_compiled_heuristic(monkeypatch):
    pos = _game("gul-bara", 4)[10]
    v = pos.variant
    boards = [b for _, b in beam_plays(pos, Roll(3, 3), heuristic.key_values, 10)]
    keys = b"".join(b.key() for b in boards)
    want = heuristic.key_values(keys, boards[0].opp_off, v)
    net = learned.shipped("gul-bara")
    want_net = learned.key_scores(net, keys, boards[0].opp_off, v)
    monkeypatch.setattr(heuristic, "_compiled", None)
    assert heuristic.key_values(keys, boards[0].opp_off, v) == pytest.approx(want)
    assert learned.key_scores(net, keys, boards[0].opp_off, v) == pytest.approx(want_net, abs=1e-5)


@pytest.mark.parametrize("variant", ["gul-bara", "long-nardy", "fevga"])
def test_result_keys_are_the_legal_results_seen_by_the_side_on_roll(variant):
    passed_on = 0
    for seed in (1, 2, 3, 4):
        for pos in _game(variant, seed)[::2]:
            v = pos.variant
            for roll in ROLLS:
                try:
                    results = legal_results(pos, roll, budget=2_000)
                except SearchBudgetExceeded:
                    with pytest.raises(SearchBudgetExceeded):
                        result_keys(pos, roll, budget=2_000)
                    continue
                mover = [f if fs is pos.turn else f.flipped(v) for _, f, fs in results]
                assert result_keys(pos, roll, budget=2_000) == [(b.key(), b.opp_off) for b in mover]
                passed_on += any(len(legs) > 1 for legs, _, _ in results)
    assert passed_on > 0 if variant == "gul-bara" else passed_on == 0


def test_result_keys_leave_the_hitting_and_pinning_games_to_legal_results():
    for variant in ("backgammon", "portes", "plakoto"):
        assert result_keys(Position.start(variant), Roll(6, 5)) is None


def test_a_flipped_board_is_the_same_board_seen_by_the_other_side():
    for variant in ("backgammon", "plakoto", "gul-bara", "long-nardy"):
        start = Position.start(variant)
        for pos in [start, *(_game(variant, 5)[:30] if variant != "backgammon" else [])]:
            v = pos.variant
            mine, theirs = Board.of(pos), Board.of(pos, pos.turn.other)
            assert mine.flipped(v) == theirs and theirs.flipped(v) == mine


MIRROR = bytes(range(25))
"""A point map the compiled calls accept (each point to itself): their refusals are what is tested."""


def _start_key() -> bytes:
    start = Board.of(Position.start("gul-bara"))
    return bytes(start.me + start.opp)


def test_step_blocking_names_what_it_refuses():
    fg = compiled(fastgen._compiled, "board_rules._fastgen")
    board, mirror = _start_key(), MIRROR
    with pytest.raises(ValueError, match="boards: expected up to 255 boards of 52 counts"):
        fg.step_blocking(board[:-1], 1, 15, -1, 0, 0, 0, mirror, 0)
    with pytest.raises(ValueError, match="die: 7 is not 1 to 6"):
        fg.step_blocking(board, 7, 15, -1, 0, 0, 0, mirror, 0)
    with pytest.raises(ValueError, match="mirror: expected 25 bytes"):
        fg.step_blocking(board, 1, 15, -1, 0, 0, 0, mirror[:-1], 0)
    with pytest.raises(ValueError, match="boards: count 16 at index 0 is over 15"):
        fg.step_blocking(bytes([16]) + board[1:], 1, 15, -1, 0, 0, 0, mirror, 0)
    assert fg.step_blocking(b"", 1, 15, -1, 0, 0, 0, mirror, 0) == (b"", b"")


def test_step_blocking_gives_each_board_reached_once():
    fg = compiled(fastgen._compiled, "board_rules._fastgen")
    pos = _game("gul-bara", 2)[12]
    start = Board.of(pos)
    board, mirror = bytes(start.me + start.opp), MIRROR
    keys, moves = fg.step_blocking(board, 2, 15, -1, 0, 0, 0, mirror, 0)
    assert len(keys) == 52 * (len(moves) // 3) > 52
    assert len({keys[i : i + 52] for i in range(0, len(keys), 52)}) == len(moves) // 3
    # the same board twice: its second copy reaches nothing new; a board reached from two boards counts once
    assert fg.step_blocking(board + board, 2, 15, -1, 0, 0, 0, mirror, 0) == (keys, moves)
    again, more = fg.step_blocking(board + keys[:52], 2, 15, -1, 0, 0, 0, mirror, 0)
    assert (
        again[: len(keys)] == keys and len(set(again[i : i + 52] for i in range(0, len(again), 52))) == len(more) // 3
    )


def test_beam_blocking_names_what_it_refuses():
    h = compiled(heuristic._compiled, "engine._heuristic")
    key, mirror = _start_key(), MIRROR
    with pytest.raises(ValueError, match="start: expected a board key of 52 bytes"):
        h.beam_blocking(key[:-1], b"\x01", 3, 15, -1, 0, 0, 0, mirror, 0, True)
    with pytest.raises(ValueError, match="dice: 7 is not 1 to 6"):
        h.beam_blocking(key, b"\x01\x07", 3, 15, -1, 0, 0, 0, mirror, 0, True)
    with pytest.raises(ValueError, match="dice: expected 1 to 64 dice"):
        h.beam_blocking(key, b"", 3, 15, -1, 0, 0, 0, mirror, 0, True)
    with pytest.raises(ValueError, match="width: 0 is not 1 to 255"):
        h.beam_blocking(key, b"\x01", 0, 15, -1, 0, 0, 0, mirror, 0, True)
    with pytest.raises(ValueError, match="mirror: point 1 maps to 0, not 1 to 24"):
        h.beam_blocking(key, b"\x01", 3, 15, -1, 0, 0, 0, bytes(25), 0, True)
    all_off = bytes([15] + [0] * 25 + [0] * 12 + [15] + [0] * 13)  # nothing left to move: no beam
    assert h.beam_blocking(all_off, b"\x01", 3, 15, -1, 0, 0, 0, mirror, 0, True) is None
