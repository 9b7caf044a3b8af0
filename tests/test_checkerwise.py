"""Each checker on its own (board_rules.checkerwise): a proof that no play reaches a board is never wrong,
proves most boards no play reaches, and the compiled search gives the Python one's answers."""

from __future__ import annotations

import random

import pytest

from board_rules import Position, Roll, checkerwise, fastgen
from board_rules.checkerwise import unreachable, unreachable_python
from board_rules.legality import check, is_legal_result
from board_rules.reach import Walker
from tests.test_fastgen import _compiled, _path_cases

BLOCKING = ("fevga", "gul-bara", "long-nardy")


def _proof(case, cap: int = checkerwise.WORK_CAP) -> bool:
    _, board, _, seq, played, target, _ = case
    return unreachable_python(board.me, target.me, board.opp, tuple(seq[:played]), cap)


@pytest.mark.parametrize("variant", BLOCKING)
def test_a_board_proved_unreachable_is_reached_by_no_play(variant):
    cases = _path_cases(random.Random(f"checkerwise-{variant}"), variant, 400)
    proved = absent = 0
    for case in cases:
        v, board, head, seq, played, target, _ = case
        # the walk back without the variant's own limits (start rule, primes, head) finds every way there
        relaxed = Walker(v, board.copy(), head)._backward(target, seq[:played], False, None)
        if _proof(case):
            proved += 1
            assert relaxed is None, (v.name, board.me, target.me, seq[:played])
        if relaxed is None:
            absent += 1
    assert absent >= 60
    assert proved >= 0.5 * absent  # most boards no play reaches are proved so at once


@pytest.mark.parametrize("variant", BLOCKING)
def test_compiled_and_python_proofs_agree(variant, monkeypatch):
    compiled = _compiled()
    cases = _path_cases(random.Random(f"checkerwise-agree-{variant}"), variant, 600)
    for cap in (checkerwise.WORK_CAP, 40):  # a small cap: both give up at the same board
        for case in cases:
            _, board, _, seq, played, target, _ = case
            got = compiled.checkerwise(bytes(board.me + board.opp), bytes(target.me), bytes(seq[:played]), cap)
            assert got == _proof(case, cap), (board.me, target.me, seq[:played], cap)


def test_a_gul_bara_escalation_one_point_off_is_proved_illegal_without_walking_the_boards():
    # benchmarks/bench_rules.py's slowest illegal 2-2: walking it took 80-100 ms compiled, 4 s before
    from benchmarks.bench_rules import SAMPLED_2_2_BEFORE, SAMPLED_2_2_ILLEGAL_AFTER
    from board_rules.moves import Board

    before, after = Position.from_json(SAMPLED_2_2_BEFORE), Position.from_json(SAMPLED_2_2_ILLEGAL_AFTER)
    start, target = Board.of(before), Board.of(after, before.turn)
    dice = before.variant.dice_sequences(2, 2, before.rolls[1])[0]
    assert len(dice) == 20
    assert unreachable(start.me, target.me, start.opp, dice)
    assert not is_legal_result(before, Roll(2, 2), after)
    result = check(before, Roll(2, 2), after)
    assert not result.legal and result.wrong


def test_a_board_a_play_reaches_is_not_proved_unreachable():
    # the start of gul-bara, 6-5: 24/18/13 reaches 13 and is legal
    start = Position.start("gul-bara")
    from board_rules.moves import Board

    board = Board.of(start)
    target = board.copy()
    target.me[24] -= 1
    target.me[13] += 1
    assert not unreachable(board.me, target.me, board.opp, (6, 5))
    assert not unreachable(board.me, target.me, board.opp, (5, 6))
    target.me[13] -= 1
    target.me[12] += 1  # 12 pips: no play of 6-5 moves them
    assert unreachable(board.me, target.me, board.opp, (6, 5))


def test_the_compiled_proof_refuses_what_is_not_a_board():
    compiled = _compiled()
    board, target = bytes([0] * 24 + [15, 0] + [0] * 26), bytes([0] * 24 + [15, 0])
    with pytest.raises(ValueError, match="board: expected 52"):
        compiled.checkerwise(board[:-1], target, bytes([6, 5]), 100)
    with pytest.raises(ValueError, match="target: expected 26"):
        compiled.checkerwise(board, target + b"\0", bytes([6, 5]), 100)
    with pytest.raises(ValueError, match="dice: 7"):
        compiled.checkerwise(board, target, bytes([7]), 100)
    with pytest.raises(ValueError, match="target: count 16"):
        compiled.checkerwise(board, bytes([16]) + target[1:], bytes([6, 5]), 100)
    assert fastgen.COMPILED
