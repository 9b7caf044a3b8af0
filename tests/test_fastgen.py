"""The fast generator of the hitting games gives exactly the generic search's answer.

:mod:`board_rules.fastgen` serves backgammon, portes and short nardy; the generic
:func:`board_rules.movegen.generic_search_side` stays the reference (and keeps serving every
other variant), so both are run on the same random positions and compared: the same
resulting boards, the same number of dice played, the same play text per board. Where
``board_rules/_fastgen.c`` was built, it is held to the Python search the same way.
"""

from __future__ import annotations

import random

import pytest

from board_rules import Play, Position, Roll, Side, fastgen, find_variant, movegen, reach
from board_rules.fastgen import handles
from board_rules.movegen import generic_search_side, legal_results, search_side
from board_rules.moves import Board, checker_moves
from tests.helpers import compiled, make, plays
from tests.positions import random_backgammon, random_same_direction

HITTING = ("backgammon", "portes", "short-nardy")


def _texts(results: dict) -> dict[bytes, str]:
    return {key: str(Play(checker_moves(moves))) for key, (moves, _) in results.items()}


def _both(position, d1: int, d2: int):
    v = position.variant
    seqs = v.dice_sequences(d1, d2, 0)
    fast, fast_best, search = search_side(v, Board.of(position), seqs, 15)
    assert search is None  # really the fast path
    slow, slow_best, _ = generic_search_side(v, Board.of(position), seqs, 15)
    return (fast, fast_best), (slow, slow_best)


@pytest.mark.parametrize("variant", HITTING)
def test_fast_and_generic_search_agree_on_random_positions(variant):
    rng = random.Random(f"fastgen-{variant}")
    doubles = 0
    for i in range(1000):
        position = random_backgammon(rng, variant)
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        doubles += d1 == d2
        (fast, fast_best), (slow, slow_best) = _both(position, d1, d2)
        where = f"{position.to_json()} {d1}-{d2}"
        assert fast_best == slow_best, where
        # the same boards in the same order, each with the same checker moves and first die
        assert fast == slow and list(fast) == list(slow), where
        if i % 5 == 0:  # what a player sees (building plays is the slow part of this test)
            assert set(_texts(fast).values()) == set(_texts(slow).values()), where
    assert doubles > 100


def test_fast_and_generic_search_agree_on_every_roll_of_crowded_positions():
    rng = random.Random(11)
    for _ in range(20):
        # the mover on many points, the opponent's blots and points in its way
        pts = [0] * 24
        for p in rng.sample(range(1, 25), 10):
            pts[p - 1] = 1
        for _ in range(5):
            pts[rng.choice([i for i in range(24) if pts[i] > 0])] += 1
        free = [i for i in range(24) if pts[i] == 0]
        black = 0
        for i in rng.sample(free, 8):
            n = rng.choice((1, 1, 2, 3))
            if black + n <= 15:
                pts[i] = -n
                black += n
        position = make("backgammon", dict(enumerate(pts, start=1)))
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                (fast, fast_best), (slow, slow_best) = _both(position, d1, d2)
                where = f"{position.to_json()} {d1}-{d2}"
                assert fast_best == slow_best, where
                assert fast == slow and list(fast) == list(slow), where


def test_fast_path_serves_exactly_the_hitting_games_without_pins():
    for name in HITTING:
        v = find_variant(name)
        assert handles(v, v.dice_sequences(6, 5, 0)) and handles(v, v.dice_sequences(3, 3, 0))
    for name in ("plakoto", "tapa", "fevga", "gul-bara", "long-nardy"):
        v = find_variant(name)
        assert not handles(v, v.dice_sequences(6, 5, 0)) and not handles(v, v.dice_sequences(3, 3, 5))


def test_fast_path_bears_off_from_below_only_without_checkers_above():
    # the 6 bears off the highest checker, from 5; the 2 plays before it (5/3, then 3/off) or after
    p = make("backgammon", {5: 1, 3: 1, 2: 1, 24: -15}, off=(12, 0))
    assert plays(p, 6, 2) == {"5/off", "5/off 3/1", "5/off 2/off"}


def test_fast_path_enters_both_checkers_before_playing_the_rest_of_a_double():
    p = make("backgammon", {6: 13, 19: -1, 20: -2, 1: -12}, bar=(2, 0))
    assert plays(p, 3, 3) == {"bar/19 bar/19*", "bar/22 bar/19* 6/3", "bar/22 bar/19*/16", "bar/22(2) 6/3(2)"}


# ---------------------------------------------------------------- the compiled search


def _compiled():
    """The compiled module (:func:`tests.helpers.compiled`)."""
    return compiled(fastgen._compiled, "board_rules._fastgen")


def _endgame(rng: random.Random, variant: str) -> Position:
    """The mover bearing off its last few checkers (some behind), the opponent anywhere."""
    pts = [0] * 24
    mine = rng.randint(1, 4)
    for _ in range(mine):
        pts[rng.choice((1, 2, 3, 4, 5, 6, 6, 8)) - 1] += 1
    theirs = 0
    for _ in range(rng.randint(0, 15)):
        p = rng.randint(9, 24)
        if pts[p - 1] <= 0:
            pts[p - 1] -= 1
            theirs += 1
    return Position(find_variant(variant), Side.WHITE, tuple(pts), (0,) * 24, (0, 0), (15 - mine, 15 - theirs))


@pytest.mark.parametrize("variant", HITTING)
def test_compiled_and_python_search_give_the_same_results_in_the_same_order(variant):
    compiled = _compiled()
    rng = random.Random(f"compiled-{variant}")
    ended = 0
    for i in range(1500):
        position = _endgame(rng, variant) if i % 3 == 0 else random_backgammon(rng, variant)
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        v = position.variant
        seqs = v.dice_sequences(d1, d2, 0)
        board = Board.of(position)
        want = fastgen.search_python(board.me, board.opp, seqs)
        got = compiled.search(bytes(board.me + board.opp), d1, d2)
        where = f"{position.to_json()} {d1}-{d2}"
        assert got == want and list(got[0].items()) == list(want[0].items()), where
        ended += any(key[0] == 15 for key in got[0])
        # the boards built for legal_results: the same as the Python module builds from the keys
        built = compiled.results(bytes(board.me + board.opp), d1, d2, Board, board.opp_off, position.turn)
        assert [(legs, b, s) for legs, b, s in built] == [
            ((m,), Board.from_key(k, False, board.opp_off), position.turn) for k, (m, _) in want[0].items()
        ], where
    assert ended > 100  # the game-ending bear-offs were met


def test_compiled_search_builds_boards_that_are_plain_boards():
    _compiled()
    position = Position.start("backgammon", Side.WHITE)
    results = legal_results(position, Roll(3, 1))
    assert len(results) == 16
    legs, final, side = results[0]
    assert type(final) is Board and side is Side.WHITE and final.pins is None and final.opp_off == 0
    assert all(b.me is not final.me and b.opp is not final.opp for _, b, _ in results[1:])  # its own lists
    assert Board.from_key(final.key(), False, 0) == final


def test_compiled_search_refuses_what_is_not_a_board():
    compiled = _compiled()
    start = Board.of(Position.start("backgammon", Side.WHITE))
    key = bytes(start.me + start.opp)
    for bad, dice, field in (
        (key[:51], (3, 1), "board"),
        (bytes([16]) + key[1:], (3, 1), "board"),
        (key, (0, 1), "dice"),
        (key, (3, 7), "dice"),
    ):
        with pytest.raises(ValueError, match=field):
            compiled.search(bad, *dice)
        with pytest.raises(ValueError, match=field):
            compiled.results(bad, *dice, Board, 0, Side.WHITE)
    with pytest.raises(TypeError):
        compiled.search("not bytes", 3, 1)


@pytest.mark.parametrize("variant", HITTING)
def test_results_read_from_a_position_are_those_of_its_board_for_either_side(variant, monkeypatch):
    compiled = _compiled()
    rng = random.Random(f"position-{variant}")
    cases = []
    for i in range(600):
        position = _endgame(rng, variant) if i % 3 == 0 else random_backgammon(rng, variant)
        if i % 2:  # the same checkers, black to move
            position = Position(
                position.variant, Side.BLACK, position.points, position.pinned, position.bar, position.off
            )
        cases.append((position, Roll(rng.randint(1, 6), rng.randint(1, 6))))
    for position, roll in cases:
        side = position.turn
        si = 0 if side is Side.WHITE else 1
        bar, off = position.bar, position.off
        conv = movegen._to_white_bytes(position.variant, side)
        got = compiled.position_results(
            position.points, conv, side.sign, bar[si], off[si], bar[1 - si], roll.d1, roll.d2, Board, off[1 - si], side
        )
        board = Board.of(position)
        assert got == compiled.results(bytes(board.me + board.opp), roll.d1, roll.d2, Board, board.opp_off, side)
    # legal_results reads the position in C, or builds the board and searches it in Python: the same plays
    fast = [legal_results(position, roll) for position, roll in cases]
    monkeypatch.setattr(fastgen, "_compiled", None)
    monkeypatch.setattr(fastgen, "position_results", None)
    assert [legal_results(position, roll) for position, roll in cases] == fast


def test_a_position_that_is_not_one_is_refused_by_the_compiled_search():
    compiled = _compiled()
    start = Position.start("backgammon", Side.WHITE)
    conv = movegen._to_white_bytes(start.variant, Side.WHITE)
    args = (start.points, conv, 1, 0, 0, 0, 3, 1, Board, 0, Side.WHITE)
    assert len(compiled.position_results(*args)) == 16
    for at, bad, field in (
        (0, start.points[:23], "points"),
        (0, (16,) + start.points[1:], "points"),
        (0, ("two",) + start.points[1:], "integer"),
        (4, "one", "me_off"),
        (1, conv[:24], "conv"),
        (1, bytes([0]) * 25, "conv"),
        (2, 2, "sign"),
        (3, 16, "bar and off"),
        (6, 7, "dice"),
    ):
        with pytest.raises((ValueError, TypeError), match=field):
            compiled.position_results(*args[:at], bad, *args[at + 1 :])


def _walkers(rng, variant: str):
    """(Walker, dice) pairs of random positions of a blocking game: its legal dice sequences, and
    runs of random dice (an escalated gul-bara double is up to 24 of them)."""
    from board_rules.reach import Walker

    while True:
        try:
            position = random_same_direction(rng, variant)
        except ValueError:
            continue  # tests/positions.py can draw both sides onto one start point: draw again
        v = position.variant
        board = Board.of(position)
        d1 = rng.randint(1, 6)
        d2 = d1 if variant == "gul-bara" and rng.random() < 0.3 else rng.randint(1, 6)
        played = rng.choice((0, 1, 5))  # gul-bara: doubles after the third roll escalate to 24 dice
        seqs = [tuple(s) for s in v.dice_sequences(d1, d2, played)]
        head = v.head_limit(d1, d2, played)
        seqs.append(tuple(d for k in range(rng.randint(1, 6)) for d in [rng.randint(1, 6)] * 4))
        for seq in seqs:
            yield Walker(v, board, head), seq


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_compiled_and_python_walks_find_the_same_most_dice_in_the_blocking_games(variant, monkeypatch):
    from board_rules.movegen import Budget, SearchBudgetExceeded
    from board_rules.reach import Walker

    compiled = _compiled()
    monkeypatch.setattr(Walker, "_shared_depth", lambda self, dice, goal: (None, goal))  # the walks themselves
    reach.forget()  # the sharings' answers kept so far
    rng = random.Random(f"depth-{variant}")
    walks = _walkers(rng, variant)
    cases = [next(walks) for _ in range(400)]
    got = []
    for walker, seq in cases:
        goal = rng.choice((None, 1, len(seq)))
        budget = Budget(rng.choice((20, 10**9)))
        before = (list(walker.b.me), list(walker.b.opp))
        try:
            got.append((walker.max_depth(seq, goal, budget), budget.left))
        except SearchBudgetExceeded:
            got.append(("over", None))
        assert (walker.b.me, walker.b.opp) == before  # the board is left as it was
    monkeypatch.setattr(fastgen, "_compiled", None)  # the Python walk, the reference
    rng = random.Random(f"depth-{variant}")
    walks = _walkers(rng, variant)
    want = []
    for walker, seq in [next(walks) for _ in range(400)]:
        goal = rng.choice((None, 1, len(seq)))
        budget = Budget(rng.choice((20, 10**9)))
        try:
            want.append((walker.max_depth(seq, goal, budget), budget.left))
        except SearchBudgetExceeded:
            want.append(("over", None))
    assert got == want
    assert compiled is not None and sum(g[0] == "over" for g in got) >= 3  # budgets ran out, as in Python


def test_compiled_and_python_walks_agree_on_escalated_gul_bara_doubles(monkeypatch):
    # four of each number from the double's up to six: where some cannot be played the walk is exhaustive
    from dataclasses import replace

    from board_rules.reach import most_dice

    _compiled()
    rng = random.Random("escalations")
    cases = []
    while len(cases) < 40:
        try:
            position = random_same_direction(rng, "gul-bara")
        except ValueError:
            continue
        position = replace(position, rolls=(5, 5))
        d = rng.randint(1, 6)
        v = position.variant
        cases.append((v, Board.of(position), v.dice_sequences(d, d, 5), v.head_limit(d, d, 5)))
    got = [most_dice(*case) for case in cases]
    monkeypatch.setattr(fastgen, "_compiled", None)
    assert got == [most_dice(*case) for case in cases]
    assert any(best < len(seqs[0]) for (best, _), (_, _, seqs, _) in zip(got, cases))  # some numbers pass


def test_compiled_and_python_walks_agree_on_the_hardest_escalation(monkeypatch):
    # benchmarks/bench_rules.py's hardest escalation: 99,805 boards to prove that 1-1 plays 22 of 24 numbers
    # by walking them all, 495 now that a board whose checkers lack the room for more dice is not walked on,
    # none where the checkers' sharings of the dice settle it (tests/test_checkerwise.py)
    from benchmarks.bench_rules import SAMPLED_BEFORE
    from board_rules.movegen import Budget
    from board_rules.reach import Walker

    _compiled()
    shared = Walker._shared_depth
    monkeypatch.setattr(Walker, "_shared_depth", lambda self, dice, goal: (None, goal))
    reach.forget()  # the sharings' answers kept so far
    position = Position.from_json(SAMPLED_BEFORE)
    v = position.variant

    def walks():
        out = []
        for d in (1, 2, 3):
            budget = Budget(10**9)
            walker = Walker(v, Board.of(position), v.head_limit(d, d, 15))
            out.append((walker.max_depth(tuple(v.dice_sequences(d, d, 15)[0]), None, budget), 10**9 - budget.left))
        return out

    got = walks()
    monkeypatch.setattr(fastgen, "_compiled", None)
    assert got == walks() and got[0] == (22, 495)
    monkeypatch.setattr(Walker, "_shared_depth", shared)
    reach.forget()  # the sharings' answers kept so far
    assert walks()[0] == (22, 0)


def test_the_compiled_walk_refuses_what_is_not_a_walk():
    compiled = _compiled()
    board, mirror = bytes(52), bytes([0, *range(24, 0, -1)])
    good = (board, bytes([1]), 1, 15, -1, 0, False, False, mirror, 0, 1000)
    assert compiled.max_depth(*good) == (0, 1)  # no checker to move: no die played, one board visited
    for at, bad, field in (
        (0, board[:51], "board"),
        (0, bytes([16]) + board[1:], "board"),
        (1, bytes([7]), "dice"),
        (8, mirror[:24], "mirror"),
        (8, bytes(25), "mirror"),
        (5, 30, "start_rule_limit"),
    ):
        with pytest.raises(ValueError, match=field):
            compiled.max_depth(*good[:at], bad, *good[at + 1 :])


def _path_cases(rng, variant: str, count: int):
    """``(variant, board, head limit, dice, target, budget)`` for the walks to a target of a blocking
    game: a board some of the dice reach by random checker moves (sometimes one checker moved on a
    point more, which no play may reach), one position in four the mover's last checkers bearing off."""
    from board_rules.moves import CheckerMoves

    walks = _walkers(rng, variant)
    out = []
    while len(out) < count:
        walker, seq = next(walks)
        v = walker.v
        if len(out) % 4 == 3:
            try:
                position = _endgame(rng, variant)
            except ValueError:
                continue
            walker = type(walker)(v, Board.of(position), walker.s.head_limit)
        board = walker.b.copy()
        s = CheckerMoves(v, board, walker.s.head_limit)
        played = 0
        for d in seq[: rng.randint(0, len(seq))]:
            srcs = s.sources()
            rng.shuffle(srcs)
            if not any(s.try_move(src, d) for src in srcs):
                break
            played += 1
        if rng.random() < 0.3:  # one checker a point on, where it may stand
            src = rng.choice([i for i in range(2, 25) if board.me[i]] or [0])
            if src and not board.opp[src - 1]:
                board.me[src] -= 1
                board.me[src - 1] += 1
        budget = rng.choice((None, 5, 40, 300))
        out.append((v, walker.b, walker.s.head_limit, seq, played, board, budget))
    return out


def _forward_walks(cases):
    from board_rules.movegen import Budget, SearchBudgetExceeded
    from board_rules.reach import Walker

    out = []
    for v, board, head, seq, played, target, size in cases:
        walker = Walker(v, board.copy(), head)
        budget = None if size is None else Budget(size)
        try:
            out.append((walker._forward(seq, played, target, budget), None if budget is None else budget.left))
        except SearchBudgetExceeded:
            out.append(("over", budget.left))
    return out


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_compiled_and_python_forward_walks_find_the_same_path_to_a_board(variant, monkeypatch):
    _compiled()
    cases = _path_cases(random.Random(f"forward-{variant}"), variant, 600)
    got = _forward_walks(cases)
    monkeypatch.setattr(fastgen, "_compiled", None)  # the Python walk, the reference
    assert got == _forward_walks(cases)
    assert sum(g[0] == "over" for g in got) >= 20  # budgets ran out, as in Python
    assert sum(bool(g[0]) and g[0] != "over" for g in got) >= 100  # paths found
    assert sum(g[0] == [] for g in got) >= 100  # and proved absent


def _backward_walks(cases):
    from board_rules.movegen import Budget, SearchBudgetExceeded
    from board_rules.reach import Walker

    out = []
    for i, (v, board, head, seq, played, target, size) in enumerate(cases):
        dice = seq[:played] if i % 5 else seq  # mostly the dice that reached it
        for limits in (False, True):
            walker = Walker(v, board.copy(), head)
            budget = None if size is None else Budget(size)
            try:
                out.append((walker._backward(target, dice, limits, budget), None if budget is None else budget.left))
            except SearchBudgetExceeded:
                out.append(("over", budget.left))
            assert walker.b == board  # the start is left as it was
    return out


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_compiled_and_python_walks_back_find_the_same_path_from_a_board(variant, monkeypatch):
    _compiled()
    cases = _path_cases(random.Random(f"backward-{variant}"), variant, 600)
    got = _backward_walks(cases)
    monkeypatch.setattr(fastgen, "_compiled", None)  # backward.backward_path, the reference
    assert got == _backward_walks(cases)
    assert sum(g[0] == "over" for g in got) >= 20  # budgets ran out, as in Python
    assert sum(g[0] not in ("over", None) for g in got) >= 200  # paths found
    assert sum(g[0] is None for g in got) >= 100  # and proved absent


def _ends_walks(cases):
    """Walker._paths's other walks: every end behind the target, and the first ends met (no target)."""
    from board_rules.movegen import Budget, SearchBudgetExceeded
    from board_rules.reach import Walker

    out = []
    for i, (v, board, head, seq, played, target, size) in enumerate(cases):
        for kind in ("behind", "sample", "exact"):
            walker = Walker(v, board.copy(), head)
            budget = None if size is None or kind == "sample" else Budget(size * 4)
            try:
                if kind == "behind":
                    got = walker._paths(seq, max(0, played - 1), target, 10**9, False, False, budget=budget)
                elif kind == "sample":
                    got = walker._paths(seq, played, None, 1 + i % 50, True, False, enough=(5, 100, 3000)[i % 3])
                else:
                    got = walker._paths(seq, played, target, 1 + i % 3, True, False, budget=budget)
                out.append((got, None if budget is None else budget.left))
            except SearchBudgetExceeded:
                out.append(("over", budget.left))
    return out


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_compiled_and_python_walks_find_the_same_ends_in_the_same_order(variant, monkeypatch):
    _compiled()
    cases = _path_cases(random.Random(f"ends-{variant}"), variant, 300)
    got = _ends_walks(cases)
    monkeypatch.setattr(fastgen, "_compiled", None)  # Walker._paths in Python, the reference
    assert got == _ends_walks(cases)
    assert sum(g[0] == "over" for g in got) >= 10  # budgets ran out, as in Python
    assert sum(len(g[0]) > 1 for g in got if g[0] != "over") >= 100  # many ends, in one order


def test_the_compiled_walks_refuse_what_is_not_a_walk():
    compiled = _compiled()
    board, mirror = bytes(52), bytes([0, *range(24, 0, -1)])
    rules = (15, -1, 0, False, False, mirror, 0, 1000)
    forward = (board, board, bytes([1]), True, 1, -1, *rules)
    backward = (board, board, bytes([1]), False, *rules)
    assert compiled.forward_paths(*forward) == ([], 1)  # no checker to move: one board, no path
    assert compiled.backward_path(*backward) == (None, 0)  # the dice cannot carry nothing anywhere
    # (where in forward's arguments, where in backward's): the board, target and dice first, the rules last
    for (fw, bw), bad, field in (
        ((0, 0), board[:51], "board"),
        ((1, 1), board[:51], "target"),
        ((1, 1), bytes([16]) + board[1:], "target"),
        ((2, 2), bytes([7]), "dice"),
        ((2, 2), bytes([1]) * 65, "dice"),
        ((11, 9), mirror[:24], "mirror"),
        ((11, 9), bytes(25), "mirror"),
        ((8, 6), 30, "start_rule_limit"),
    ):
        with pytest.raises(ValueError, match=field):
            compiled.forward_paths(*forward[:fw], bad, *forward[fw + 1 :])
        with pytest.raises(ValueError, match=field):
            compiled.backward_path(*backward[:bw], bad, *backward[bw + 1 :])
    with pytest.raises(ValueError, match="limit"):
        compiled.forward_paths(*forward[:4], 0, *forward[5:])
    with pytest.raises(TypeError, match="target"):
        compiled.forward_paths(board, 3, *forward[2:])
    with pytest.raises(TypeError):
        compiled.forward_paths("not bytes", *forward[1:])
    with pytest.raises(TypeError):
        compiled.backward_path(*backward[:4], "not an int", *backward[5:])


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_compiled_and_python_searches_list_the_same_plays_of_the_blocking_games(variant, monkeypatch):
    from board_rules.movegen import Budget, SearchBudgetExceeded

    _compiled()
    rng = random.Random(f"search-{variant}")
    cases = []
    while len(cases) < 300:
        try:
            position = _endgame(rng, variant) if len(cases) % 4 == 3 else random_same_direction(rng, variant)
        except ValueError:
            continue
        v = position.variant
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        played = rng.choice((0, 1, 5))  # gul-bara: doubles after the third roll escalate to 24 dice
        budget = rng.choice((5, 30, 400, 5000, None if played < 3 else 5000))  # escalations can list millions
        cases.append((v, Board.of(position), v.dice_sequences(d1, d2, played), v.head_limit(d1, d2, played), budget))
    got = []
    for v, board, seqs, head, size in cases:
        budget = None if size is None else Budget(size)
        try:
            results, best, search = search_side(v, board.copy(), seqs, head, budget)
            assert search is None  # really the compiled search
            got.append((list(results.items()), best, None if budget is None else budget.left))
        except SearchBudgetExceeded:
            got.append(("over", None, None))
    want = []
    for v, board, seqs, head, size in cases:
        budget = None if size is None else Budget(size)
        try:
            results, best, _ = generic_search_side(v, board.copy(), seqs, head, budget)
            want.append((list(results.items()), best, None if budget is None else budget.left))
        except SearchBudgetExceeded:
            want.append(("over", None, None))
    assert got == want  # the same plays in the same order, the same boards spent
    assert sum(g[0] == "over" for g in got) >= 10
    assert sum(g[1] is not None and g[1] < len(seqs[0]) for g, (_, _, seqs, _, _) in zip(got, cases)) >= 10
    # legal_results (gul-bara's passed numbers searched for the opponent too) as with the Python search
    positions = [(p, Roll(d, d)) for p, d in _escalations(rng, variant, 30)]
    fast = _listings(positions)
    monkeypatch.setattr(fastgen, "_compiled", None)
    assert _listings(positions) == fast


def _listings(positions):
    from board_rules.movegen import SearchBudgetExceeded

    out = []
    for position, roll in positions:
        try:
            out.append(legal_results(position, roll, budget=5000))
        except SearchBudgetExceeded:
            out.append("over")
    return out


def _escalations(rng, variant: str, count: int):
    """Positions of ``variant`` whose side to move has played five rolls, with a number for a double."""
    from dataclasses import replace

    out = []
    while len(out) < count:
        try:
            position = random_same_direction(rng, variant)
        except ValueError:
            continue
        out.append((replace(position, rolls=(5, 5)), rng.randint(1, 6)))
    return out


@pytest.mark.parametrize(
    "options", ({}, {"mother_exception": False}, {"mother_rule": False}, {"bear_off_while_pinned": True})
)
def test_compiled_and_python_searches_list_the_same_plakoto_plays(options, monkeypatch):
    from board_rules.movegen import Budget, SearchBudgetExceeded
    from tests.positions import random_plakoto

    _compiled()
    rng = random.Random(f"pins-{sorted(options.items())}")
    cases = []
    while len(cases) < 400:
        position = random_plakoto(rng, **options)
        v = position.variant
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        budget = rng.choice((0, 3, 20, 2000, None))
        cases.append((v, Board.of(position), v.dice_sequences(d1, d2, 0), budget))

    def listed(search):
        out = []
        for v, board, seqs, size in cases:
            budget = None if size is None else Budget(size)
            try:
                results, best, _ = search(v, board.copy(), seqs, 15, budget)
                out.append((list(results.items()), best, None if budget is None else budget.left))
            except SearchBudgetExceeded:
                out.append(("over", None, None))
        return out

    got = listed(search_side)
    assert got == listed(generic_search_side)  # the same plays in the same order, the same boards spent
    assert sum(g[0] == "over" for g in got) >= 20
    assert sum(any(m[2] for _, (moves, _) in g[0] for m in moves) for g in got if g[0] != "over") >= 50  # pins made
    monkeypatch.setattr(fastgen, "_compiled", None)  # search_side now runs the Python: it must not be the same object
    assert movegen.compiled_pin_rules(cases[0][0], cases[0][1]) is None


def test_the_compiled_plakoto_search_refuses_what_is_not_a_board():
    compiled = _compiled()
    board = Board.of(Position.start("plakoto")).key()
    assert compiled.search_pins(board, bytes((6, 5)), True, True, False, -1)[1] == 2
    with pytest.raises(ValueError, match="board"):
        compiled.search_pins(board[:52], bytes((6, 5)), True, True, False, -1)
    with pytest.raises(ValueError, match="board"):
        compiled.search_pins(board[:60] + bytes([3]) + board[61:], bytes((6, 5)), True, True, False, -1)
    with pytest.raises(ValueError, match="dice"):
        compiled.search_pins(board, bytes((6, 7)), True, True, False, -1)
    with pytest.raises(ValueError, match="dice"):
        compiled.search_pins(board, bytes(5 * [2]), True, True, False, -1)
    with pytest.raises(TypeError):
        compiled.search_pins("not bytes", bytes((6, 5)), True, True, False, -1)


@pytest.mark.parametrize("variant", ("fevga", "gul-bara", "long-nardy"))
def test_a_mover_shut_in_plays_no_more_dice_than_its_checkers_have_room_for(variant, monkeypatch):
    # the room of a shut-in mover's checkers only stops the walk sooner: the most dice are the whole walk's
    from benchmarks.bench_rules import BLOCKED_1_1_BEFORE
    from board_rules.movegen import Budget
    from board_rules.reach import Walker

    rng = random.Random(f"room-{variant}")
    walks = _walkers(rng, variant)
    cases = [next(walks) for _ in range(600)]
    bounds = [walker._pips_bound(seq) for walker, seq in cases]
    got = [walker.max_depth(seq) for walker, seq in cases]  # compiled, the room looked at on every board
    assert all(g <= b <= len(seq) for g, b, (_, seq) in zip(got, bounds, cases))
    assert sum(b < len(seq) for b, (_, seq) in zip(bounds, cases)) >= 3  # some movers are shut in
    monkeypatch.setattr(Walker, "_lows", lambda self, dice: None)  # the walk without the room
    monkeypatch.setattr(Walker, "_pips_bound", lambda self, dice: len(dice))
    monkeypatch.setattr(fastgen, "_compiled", None)  # the Python walk of every board, the reference
    assert got == [walker.max_depth(seq) for walker, seq in cases]
    monkeypatch.undo()
    if variant == "gul-bara":  # the blocked 1-1 of benchmarks/bench_rules.py plays 23 of its 24 numbers
        position = Position.from_json(BLOCKED_1_1_BEFORE)
        budget = Budget(10**9)
        walker = Walker(position.variant, Board.of(position), 15)
        assert walker.max_depth(tuple(d for d in range(1, 7) for _ in range(4)), None, budget) == 23
        assert 10**9 - budget.left < 1000  # walking every board the first 23 dice reach took 0.37 s
