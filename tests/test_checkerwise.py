"""Each checker on its own (board_rules.checkerwise): a proof that no play reaches a board is never wrong,
proves most boards no play reaches, and the compiled search gives the Python one's answers."""

from __future__ import annotations

import random

import pytest

from board_rules import Position, Roll, checkerwise, fastgen, reach
from board_rules.checkerwise import unreachable, unreachable_python
from board_rules.legality import check, is_legal_result
from board_rules.reach import Walker, pips
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


_BOARD, _TARGET = bytes([0] * 24 + [15, 0] + [0] * 26), bytes([0] * 24 + [15, 0])


@pytest.mark.parametrize("search", ["checkerwise", "find_sharing"])
@pytest.mark.parametrize(
    ("board", "target", "dice", "message"),
    [
        (_BOARD[:-1], _TARGET, bytes([6, 5]), "board: expected 52"),
        (_BOARD, _TARGET + b"\0", bytes([6, 5]), "target: expected 26"),
        (_BOARD, _TARGET[:-1], bytes([6, 5]), "target: expected 26"),
        (_BOARD, bytes([16]) + _TARGET[1:], bytes([6, 5]), "target: count 16"),
        (_BOARD, _TARGET, bytes([7]), "dice: 7"),
        (_BOARD, _TARGET, bytes([0]), "dice: 0"),
    ],
)
def test_the_compiled_searches_to_a_target_refuse_what_is_not_a_board(search, board, target, dice, message):
    with pytest.raises(ValueError, match=message):
        getattr(_compiled(), search)(board, target, dice, 100)
    assert fastgen.COMPILED


def test_the_compiled_depth_first_search_refuses_an_unknown_order_and_proves_a_board_it_takes():
    compiled = _compiled()
    with pytest.raises(ValueError, match="order: expected 0, 1 or 2, got 3"):
        compiled.find_sharing(_BOARD, _TARGET, bytes([6, 5]), 100, 3)
    # every checker must stay on 24, so none can take a die: proved at once, no way tried
    assert compiled.find_sharing(_BOARD, _TARGET, bytes([6, 5]), 100) == (None, True, 0)


# ------------------------------------------------------------------ every die played: sharings


def _sharing_cases(variant: str, count: int):
    from tests.test_fastgen import _walkers

    walks = _walkers(random.Random(f"sharing-{variant}"), variant)
    return [next(walks) for _ in range(count)]


@pytest.mark.parametrize("variant", BLOCKING)
def test_compiled_and_python_sharings_agree(variant):
    compiled = _compiled()
    for walker, seq in _sharing_cases(variant, 300):
        b = walker.b
        for cap in (checkerwise.SHARE_CAP, 30):  # a small cap: both give up at the same step
            got = compiled.sharing(bytes(b.me + b.opp), bytes(seq), cap)
            assert got == checkerwise.sharing_python(b.me, b.opp, tuple(seq), cap), (b.me, b.opp, seq, cap)


@pytest.mark.parametrize("variant", BLOCKING)
def test_a_sharing_gives_each_checker_a_way_it_can_go_and_every_die_to_one(variant):
    found = 0
    for walker, seq in _sharing_cases(variant, 300):
        b = walker.b
        shares, proof, _ = checkerwise.sharing(b.me, b.opp, seq)
        if shares is None:
            continue
        found += 1
        runs = checkerwise._runs(tuple(seq))
        assert not proof
        assert sorted(p for p, _ in shares) == sorted(p for p in range(1, 25) for _ in range(b.me[p]))
        assert [sum(t[r] for _, t in shares) for r in range(len(runs))] == [n for _, n in runs]
        for p, taken in shares:  # a way of that checker when some run (or none) is the first to bear off
            assert any(taken in checkerwise._ways(p, runs, f, b.opp) for f in range(len(runs) + 1))
    assert found >= 150


@pytest.mark.parametrize("variant", BLOCKING)
def test_sharings_settle_the_most_dice_as_the_walk_does(variant, monkeypatch):
    # a sharing played in a legal order shows the dice can be played; where none exists, they cannot
    cases = _sharing_cases(variant, 400)
    goals = [random.Random(k).choice((None, 1, len(seq))) for k, (_, seq) in enumerate(cases)]
    settled = 0
    got = []
    for (walker, seq), goal in zip(cases, goals):
        board = walker.b.copy()
        got.append(walker.max_depth(seq, goal))
        assert walker.b.key() == board.key()  # the board is left as it was
        most = min(len(seq), goal or len(seq))
        if walker._room_counts(seq) and pips(walker.b.me) > sum(seq[:most]):
            settled += walker._shared_depth(seq, most)[0] is not None
    monkeypatch.setattr(Walker, "_shared_depth", lambda self, dice, goal: (None, goal))
    reach.forget()  # the sharings' answers kept so far
    assert got == [walker.max_depth(seq, goal) for (walker, seq), goal in zip(cases, goals)]
    assert settled >= 60


def test_checkers_waiting_behind_a_block_for_the_six_are_settled_without_walking(monkeypatch):
    # benchmarks/bench_rules.py group (v): white's 1-1 with two checkers behind black's points 13 to 17,
    # which must stand on 18 when the sixes come; walking found its 24-die play after 223,366 boards
    from board_rules.movegen import Budget
    from board_rules.moves import Board

    position = Position.from_json(WAITING_FOR_THE_SIX)
    v = position.variant
    dice = tuple(v.dice_sequences(1, 1, 21)[0])
    budget = Budget(10**9)
    assert Walker(v, Board.of(position), 15).max_depth(dice, None, budget) == 24
    assert budget.left == 10**9
    walker = Walker(v, Board.of(position), 15)
    shares, _, _ = checkerwise.sharing(walker.b.me, walker.b.opp, dice)
    moves = walker._shared_moves(dice, shares)
    assert [m[:2] for m in moves if m[0] in (23, 24)] == [(23, 18), (24, 18)]  # each waits on 18 ...
    assert sum(1 for m in moves if m[:2] == (18, 12)) == 2  # ... for a six
    monkeypatch.setattr(Walker, "_shared_depth", lambda self, dice, goal: (None, goal))
    reach.forget()  # the sharings' answers kept so far
    walked = Budget(10**9)
    assert Walker(v, Board.of(position), 15).max_depth(dice, None, walked) == 24
    assert 10**9 - walked.left > 100_000


WAITING_FOR_THE_SIX = (
    '{"variant": "gul-bara", "turn": "white", "points": [2, 1, 1, 3, 0, -1, 1, 1, 1, 1, 1, 1, -5, -3, -3, -2, '
    '-1, 0, 0, 0, 0, 0, 1, 1], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 21, "black": 22}}'
)


@pytest.mark.parametrize("variant", BLOCKING)
def test_a_sharing_to_a_board_played_in_order_reaches_that_board(variant):
    played = 0
    for case in _path_cases(random.Random(f"share-to-{variant}"), variant, 300):
        v, board, head, seq, k, target, _ = case
        proof, shares = checkerwise.share_to(board.me, target.me, board.opp, seq[:k])
        assert proof == unreachable(board.me, target.me, board.opp, seq[:k])
        if shares is None:
            continue
        moves = Walker(v, board.copy(), head)._shared_moves(tuple(seq[:k]), shares)
        if moves is None:
            continue
        played += 1
        assert _played(v, board, head, seq, moves) == target.key()
    assert played >= 100


def _played(v, board, head, dice, moves) -> bytes:
    """The key of ``board`` after ``moves``, each of them allowed with its die when it is made."""
    from board_rules.moves import CheckerMoves

    after = board.copy()
    s = CheckerMoves(v, after, head)
    for d, (src, dst, _) in zip(dice, moves):
        u = s.try_move(src, d)
        assert u is not None and u[1] == dst
    return after.key()


def test_the_compiled_sharing_refuses_what_is_not_a_board():
    compiled = _compiled()
    board = bytes([0] * 24 + [15, 0] + [0] * 26)
    with pytest.raises(ValueError, match="board: expected 52"):
        compiled.sharing(board[:-1], bytes([6, 5]), 100)
    with pytest.raises(ValueError, match="dice: 7"):
        compiled.sharing(board, bytes([7]), 100)
    assert compiled.sharing(board, bytes([6, 5]), 100)[0] is not None


def test_a_whole_escalation_that_bears_off_is_reached_by_its_sharing():
    # benchmarks/bench_rules.py group (v): white's 1-1 bears off 7 with a checker behind black's points;
    # taking the checkers with the fewest ways first, the sharing is found well within WORK_CAP (about
    # 70,000 steps in Python; 840,000 farthest first), and played in order it is the check's path
    from board_rules.moves import Board, CheckerMoves

    before = Position.from_json(
        '{"variant": "gul-bara", "turn": "white", "points": [1, 1, 1, 1, 2, 1, 2, 2, 1, 2, 0, 0, -2, -2, 0, 0, -2, '
        '-8, -1, 0, 1, 0, 0, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
        '"rolls": {"white": 18, "black": 19}}'
    )
    after = Position.from_json(
        '{"variant": "gul-bara", "turn": "black", "points": [1, 1, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, 0, 0, -2, '
        '-8, -1, 0, 0, 0, 0, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 7, "black": 0}, '
        '"rolls": {"white": 19, "black": 19}}'
    )
    start, target = Board.of(before), Board.of(after, before.turn)
    dice = tuple(before.variant.dice_sequences(1, 1, 18)[0])
    proof, shares = checkerwise.share_to(start.me, target.me, start.opp, dice)
    assert not proof and shares is not None
    moves = Walker(before.variant, start.copy(), 15)._shared_moves(dice, shares)
    board = start.copy()
    s = CheckerMoves(before.variant, board, 15)
    assert moves is not None and all(s.try_move(src, d) for d, (src, _, _) in zip(dice, moves))
    assert board.key() == target.key()
    assert check(before, Roll(1, 1), after).legal


@pytest.mark.parametrize("variant", BLOCKING)
def test_compiled_and_python_depth_first_sharings_agree(variant):
    compiled = _compiled()
    for case in _path_cases(random.Random(f"find-{variant}"), variant, 300):
        _, board, _, seq, k, target, _ = case
        for cap in (checkerwise.FIND_CAP, 30):  # a small cap: both give up at the same step
            for order in checkerwise.ORDERS:
                got = compiled.find_sharing(bytes(board.me + board.opp), bytes(target.me), bytes(seq[:k]), cap, order)
                want = checkerwise._find_python(board.me, target.me, board.opp, tuple(seq[:k]), cap, order)
                assert got == want, (board.me, target.me, seq[:k], cap, order)


@pytest.mark.parametrize("variant", BLOCKING)
def test_a_sharing_found_depth_first_takes_each_checker_to_the_board_and_plays_in_order_to_it(variant):
    found = played = 0
    for case in _path_cases(random.Random(f"find-to-{variant}"), variant, 300):
        v, board, head, seq, k, target, _ = case
        dice = tuple(seq[:k])
        shares, proof, steps = checkerwise.find_sharing(board.me, target.me, board.opp, dice, order=k % 3)
        assert steps <= checkerwise.FIND_CAP
        if shares is None:
            continue
        found += 1
        assert not proof and not unreachable(board.me, target.me, board.opp, dice)
        runs = checkerwise._runs(dice)
        assert sorted(p for p, _ in shares) == sorted(p for p in range(1, 25) for _ in range(board.me[p]))
        assert [sum(t[r] for _, t in shares) for r in range(len(runs))] == [n for _, n in runs]
        ends = sorted(max(0, p - sum(n * value for n, (value, _) in zip(t, runs))) for p, t in shares)
        assert ends == sorted(x for x in range(0, 25) for _ in range(target.me[x] - (board.me[0] if x == 0 else 0)))
        moves = Walker(v, board.copy(), head)._shared_moves(dice, shares)
        if moves is None:
            continue
        played += 1
        assert _played(v, board, head, dice, moves) == target.key()
    assert found >= 100 and played >= 80, (found, played)


@pytest.mark.parametrize("variant", BLOCKING)
def test_a_board_the_depth_first_search_proves_unreachable_is_reached_by_no_play(variant):
    cases = _path_cases(random.Random(f"find-proof-{variant}"), variant, 400)
    proved = absent = 0
    for v, board, head, seq, played, target, _ in cases:
        relaxed = Walker(v, board.copy(), head)._backward(target, seq[:played], False, None)
        shares, proof, _ = checkerwise.find_sharing(board.me, target.me, board.opp, seq[:played], order=played % 3)
        if proof:
            proved += 1
            assert shares is None and relaxed is None, (v.name, board.me, target.me, seq[:played])
        if relaxed is None:
            absent += 1
    assert absent >= 60
    assert proved >= 0.5 * absent


def test_a_leg_is_not_found_to_a_board_where_the_opponents_checkers_moved():
    # fevga: the mover's checkers can reach the observed board's, but one of the opponent's moved too
    before = Position.from_json(
        '{"variant": "fevga", "turn": "black", "points": [0, -1, 0, 0, -1, -2, 0, 0, -1, 1, 0, -1, -1, 0, -3, -1, '
        '1, -1, -1, 0, -1, -1, 0, 13], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
        '"rolls": {"white": 27, "black": 12}}'
    )
    seen = Position.from_json(
        '{"variant": "fevga", "turn": "white", "points": [0, -1, 0, 0, -2, -1, 0, 0, -1, 1, 0, -1, -2, 0, -2, -1, '
        '1, -1, -1, -1, 0, -1, 1, 12], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
        '"rolls": {"white": 27, "black": 13}}'
    )
    assert not is_legal_result(before, Roll(1, 1), seen)
    assert not check(before, Roll(1, 1), seen).legal
