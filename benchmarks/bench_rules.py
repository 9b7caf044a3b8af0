"""Benchmark of the rules engine (not a test): legal plays against gnubg-nn, and ``check`` latency.

Run ``.venv/bin/python benchmarks/bench_rules.py`` (or ``make bench``) from the repository.

1. Legal plays: the same 10,000 random backgammon positions and rolls (seeded, from
   ``tests/positions.py``) through our :func:`board_rules.movegen.legal_results`, end to
   end, and through gnubg-nn's ``moves()`` on boards converted once up front. Machines
   are shared and noisy, so both are timed in the same process, in alternating rounds,
   and the best round of each is compared; so is our search in Python alone (the
   reference the compiled ``board_rules/_fastgen.c`` is tested against). Targets: ours
   at least 5,000 positions/s, and at least half of gnubg-nn's rate (issue 22).
2. ``check`` latency: every single :func:`board_rules.legality.is_legal_result` and
   :func:`board_rules.legality.check` call is timed, on (i) those backgammon positions
   with their last legal result as ``after`` (the whole list is scanned), (ii) crowded
   positions rolling 1-1, (iii) gul-bara's escalated doubles (the mover has played at
   least 3 rolls, so 1-1 is four ones, four twos, ... four sixes, numbers the mover
   cannot play passing to the opponent), issue 22's fuzz case (a legal 1-1 that took
   4 s) and the slowest two of 2,000 sampled ones (``--gul-bara 2000 --seed 7``: a 1-1
   walked in Python, a 4-4 once the walk was compiled) and a 1-1 whose mover is shut in one
   number short (found by a hint) among them, and among the illegal ones
   the slowest of the 2,000 once every walk was compiled (a 2-2), (iv) long nardy doubles: off a full head on the first roll (6-6, 4-4 and 3-3
   let two checkers leave it) and later, crowded heads behind the opponent's blocks, (v) the
   escalated doubles of gul-bara games the heuristic plays against itself (``--games``).
   Each group again with one checker a point off (illegal: ``check`` finds the nearest
   legal play). The worst call of each is printed with its position.
3. Mid-turn queries: a :class:`board_rules.legality.TurnTracker` built per roll, then
   ``on_the_way`` and ``landing_points`` on every board the mover's leg of a legal play
   passes through, each call timed, on the cases of (ii) to (iv).

Target: every call under 10 ms. A call still running after ``--limit`` seconds is
stopped (SIGALRM) and counted as at least that long. ``--quick`` leaves out 1 and (i).
"""

from __future__ import annotations

import argparse
import gc
import random
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: board_rules, tests

from board_rules import Position, Roll, Side, fastgen, reach  # noqa: E402
from board_rules.ids import halves  # noqa: E402
from board_rules.legality import TurnTracker, check, is_legal_result  # noqa: E402
from board_rules.movegen import legal_results  # noqa: E402
from board_rules.moves import Board, apply_moves, checker_moves  # noqa: E402
from board_rules.places import Place  # noqa: E402
from board_rules.reach import sample_results  # noqa: E402
from referee.demo import slip  # noqa: E402
from tests import gnubg_oracle  # noqa: E402
from tests.positions import random_backgammon, random_same_direction  # noqa: E402

TARGET_RATE = 5_000  # positions/s, ours
TARGET_MS = 10.0  # per check call and mid-turn query

# issue 22: a legal gul-bara 1-1 (escalated) whose check took 4.0-4.3 s through the command line
FUZZ_BEFORE = (
    '{"variant": "gul-bara", "turn": "white", "points": [2, 3, -4, 1, 1, 0, 1, 1, 1, 2, 1, 0, -2, -4, 0, 1, 1, '
    '-1, 0, -2, 0, 0, -2, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 12, "black": 11}}'
)
FUZZ_AFTER = (
    '{"variant": "gul-bara", "turn": "black", "points": [3, 3, -4, 4, 0, 0, 0, 0, 0, 0, 0, 0, -2, -4, 0, 0, 0, '
    '-1, 0, -2, 0, 0, -2, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 5, "black": 0}, '
    '"rolls": {"white": 12, "black": 11}}'
)

# the slowest of 2,000 sampled escalations (seed 7): 1.35 s to judge a legal 1-1 whose last two sixes pass
SAMPLED_BEFORE = (
    '{"variant": "gul-bara", "turn": "white", "points": [-1, 0, -1, 1, 0, 1, 1, 1, -1, 0, 1, -4, -2, -1, -1, -2, '
    '-1, 1, 0, 0, 1, -1, 1, 7], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 15, "black": 5}}'
)

# the slowest of those 2,000 with the most-dice walk compiled: 50 ms to judge a legal 4-4 (the walk's
# Python path to the observed board)
SAMPLED_4_4_BEFORE = (
    '{"variant": "gul-bara", "turn": "white", "points": [1, 1, 1, 1, 3, 2, 0, 0, 0, -1, 1, -13, 0, -1, 1, 0, '
    '1, 0, 0, 0, 1, 0, 0, 2], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 10, "black": 24}}'
)

# the slowest of those 2,000 with every walk compiled: 87-130 ms to find the nearest legal play to an
# illegal 2-2 (proving how many dice it can play walks 409,601 boards back and 147,242 forwards)
SAMPLED_2_2_BEFORE = (
    '{"variant": "gul-bara", "turn": "black", "points": [1, 1, -1, 0, 1, -1, 1, 0, -1, 0, 0, 1, -1, -1, -2, -2, '
    '-1, 0, -1, -2, -1, -1, 0, 10], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 7, "black": 19}}'
)
SAMPLED_2_2_ILLEGAL_AFTER = (
    '{"variant": "gul-bara", "turn": "white", "points": [1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, -4, 0, -4, -3, -2, '
    '0, 0, 0, 0, 0, 0, 10], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 2}, '
    '"rolls": {"white": 7, "black": 20}}'
)

# found by a hint in benchmarks/bench_evaluator.py: a legal 1-1 whose mover, five checkers shut in, plays
# 23 of its 24 numbers; proving that the 24th cannot be played walked every board the first 23 reach
# (180-210 ms) until the checkers' room to move was counted
BLOCKED_1_1_BEFORE = (
    '{"variant": "gul-bara", "turn": "black", "points": [1, 6, 2, 2, 1, 1, 1, 1, 0, 0, 0, -5, 0, 0, -2, 0, 0, '
    '-1, -1, -1, -1, -3, -1, 0], "bar": {"white": 0, "black": 0}, "off": {"white": 0, "black": 0}, '
    '"rolls": {"white": 11, "black": 10}}'
)


class Stopped(Exception):
    """A timed call ran past the limit."""


def _alarm(_signum, _frame):
    raise Stopped


def timed(limit: float, fn, *args):
    """``(seconds, result)`` of ``fn(*args)``; ``(limit, None)`` if stopped after ``limit`` seconds.

    Each call starts cold: the answers the rules keep between calls (``board_rules.reach``'s most
    dice of a blocking game's walk) are forgotten first, as for the first frame of a new roll."""
    reach.forget()
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.perf_counter()
    try:
        result = fn(*args)
    except Stopped:
        return limit, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - t0, result


# ---------------------------------------------------------------------------------- inputs


def backgammon_cases(n: int, seed: int) -> list[tuple[Position, Roll]]:
    rng = random.Random(seed)
    return [(random_backgammon(rng), Roll(rng.randint(1, 6), rng.randint(1, 6))) for _ in range(n)]


def crowded(rng: random.Random) -> Position:
    """The side to move spread over 11-14 points, opposing blots in its way: many plays for 1-1."""
    pts = [0] * 24
    spots = rng.sample(range(2, 25), rng.randint(11, 14))
    for p in spots:
        pts[p - 1] = 1
    for _ in range(15 - len(spots)):
        pts[rng.choice(spots) - 1] += 1
    free = [p for p in range(1, 25) if not pts[p - 1]]
    rng.shuffle(free)
    blots = free[: rng.randint(3, 7)]
    for p in blots:
        pts[p - 1] = -1
    rest = 15 - len(blots)
    for p in free[len(blots) : len(blots) + 2]:  # the rest on up to two points, or borne off
        n = rng.randint(0, rest)
        pts[p - 1] = -n
        rest -= n
    bar, off = (0, 0), (0, rest)
    turn = Side.WHITE
    if rng.random() < 0.5:  # the same layout for black to move
        pts = [-pts[24 - i] for i in range(1, 25)]
        bar, off, turn = bar[::-1], off[::-1], Side.BLACK
    return Position(Position.start("backgammon").variant, turn, tuple(pts), (0,) * 24, bar, off)


def gul_bara_games(games: int, seed: int) -> list[tuple[Position, Roll, Position, tuple]]:
    """The escalated doubles of ``games`` gul-bara games the heuristic plays against itself:
    ``(position, roll, the position its play leaves, the play's legs)``. Real games reach what
    random positions seldom do: a mover shut in behind the opponent's points half-way through."""
    from engine import evaluate
    from training.train_evaluator import opening

    rng = random.Random(seed)
    v = Position.start("gul-bara").variant
    out = []
    for _ in range(games):
        starter, roll = opening(v, rng)
        position = Position.start(v, starter)
        while position.outcome() is None:
            roll = roll or Roll(rng.randint(1, 6), rng.randint(1, 6))
            play, after = evaluate.choose(position, roll, rng, by="heuristic")
            if roll.d1 == roll.d2 and len(play.moves) > 4:
                out.append((position, roll, after, reach.find_play(position, roll, after)))
            position, roll = after, None
    return out


def gul_bara_escalated(rng: random.Random) -> Position:
    """A random gul-bara position whose side to move has played at least 3 rolls."""
    while True:
        try:
            p = random_same_direction(rng, "gul-bara")
        except ValueError:
            continue  # tests/positions.py can draw both sides onto black's start point; draw again
        si = 0 if p.turn is Side.WHITE else 1
        rolls = list(p.rolls)
        rolls[si] = max(rolls[si], 3)
        return replace(p, rolls=(rolls[0], rolls[1]))


def long_nardy_cases(rng: random.Random, n: int) -> list[tuple[Position, Roll]]:
    """Long nardy doubles: the first roll off a full head, and crowded heads behind the opponent's blocks."""
    out = []
    start = Position.start("long-nardy")
    v = start.variant
    for i in range(n // 4):  # the first roll of the game: 6-6, 4-4 and 3-3 let two checkers leave the head
        d = (6, 4, 3, 5, 2, 1)[i % 6]
        out.append((replace(start, turn=rng.choice((Side.WHITE, Side.BLACK))), Roll(d, d)))
    while len(out) < n:
        try:
            p = random_same_direction(rng, "long-nardy", rolls=(rng.randint(0, 9), rng.randint(0, 9)))
        except ValueError:
            continue
        if p.count(p.turn, v.white_point(p.turn, 24)) < 5:
            continue  # a crowded head: the head rule and the blocks decide which plays exist
        d = rng.randint(1, 6)
        out.append((p, Roll(d, d)))
    return out


def some_result(position: Position, roll: Roll) -> tuple[tuple, Position]:
    """A legal play's legs and result, found depth-first (listing them all can mean over a million plays)."""
    legs, final, final_side = sample_results(position, roll, limit=25)[-1]
    si = 0 if position.turn is Side.WHITE else 1
    rolls = list(position.rolls)
    rolls[si] += 1
    return legs, final.to_position(position, final_side, position.turn.other, (rolls[0], rolls[1]))


def last_result(position: Position, roll: Roll) -> Position:
    """The last legal result of ``roll`` as a position (what ``check`` compares boards with)."""
    _legs, final, final_side = legal_results(position, roll)[-1]
    si = 0 if position.turn is Side.WHITE else 1
    rolls = list(position.rolls)
    rolls[si] += 1
    return final.to_position(position, final_side, position.turn.other, (rolls[0], rolls[1]))


# ---------------------------------------------------------------------------------- sections


def bench_plays(cases, rounds: int) -> None:
    import gnubg_nn

    boards = []
    for position, roll in cases:
        on_roll, opponent = halves(position, position.turn)
        boards.append(([list(opponent), list(on_roll)], roll.d1, roll.d2))  # gnubg: side on roll second

    # the same answers, counted outside the timing
    ours_n = sum(len(legal_results(p, r)) for p, r in cases)
    gnubg_n = sum(len(gnubg_nn.moves(b, d1, d2)) or 1 for b, d1, d2 in boards)  # () when no play
    n = len(cases)
    print(
        f"legal plays: {n:,} random backgammon positions and rolls, {ours_n:,} distinct results "
        f"(gnubg {gnubg_n:,}: {'same' if ours_n == gnubg_n else 'DIFFERENT'})"
    )

    best_ours = best_py = best_gnubg = float("inf")
    moves = gnubg_nn.moves
    compiled, compiled_position = fastgen._compiled, fastgen.position_results
    settle()
    for i in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        for position, roll in cases:
            legal_results(position, roll)
        ours = time.perf_counter() - t0
        gc.collect()
        fastgen._compiled = None  # the Python search, in the same process
        fastgen.position_results = None
        try:
            t0 = time.perf_counter()
            for position, roll in cases:
                legal_results(position, roll)
            python = time.perf_counter() - t0
        finally:
            fastgen._compiled = compiled
            fastgen.position_results = compiled_position
        gc.collect()
        t0 = time.perf_counter()
        for board, d1, d2 in boards:
            moves(board, d1, d2)
        gnubg = time.perf_counter() - t0
        best_ours, best_py, best_gnubg = min(best_ours, ours), min(best_py, python), min(best_gnubg, gnubg)
        print(
            f"  round {i + 1}: ours {n / ours:9,.0f}/s   ours in Python {n / python:9,.0f}/s   "
            f"gnubg {n / gnubg:9,.0f}/s   ratio ours/gnubg {gnubg / ours:.3f}"
        )
    rate, py_rate, ref = n / best_ours, n / best_py, n / best_gnubg
    kind = "compiled search" if compiled is not None else "Python search: board_rules._fastgen was not built"
    print(f"  best:    ours {rate:9,.0f}/s ({kind})   ours in Python {py_rate:9,.0f}/s   gnubg {ref:9,.0f}/s")
    print(f"  ratio ours/gnubg {rate / ref:.3f} (target 0.5)   ours in Python/gnubg {py_rate / ref:.3f}")
    verdict = "yes" if rate >= TARGET_RATE else "NO"
    print(f"  ours >= {TARGET_RATE:,} positions/s: {verdict}")


def settle() -> None:
    """Collect, then exempt the benchmark's own inputs from later collections (``gc.freeze``):
    a full collection walking 10,000 stored positions is the benchmark's cost, not the call's."""
    gc.collect()
    gc.freeze()


def bench_check(label: str, cases, limit: float, expect_legal: bool = True) -> None:
    """Time every single call of both functions; print the worst of each."""
    settle()
    names = ("is_legal_result", "check")
    worst = dict.fromkeys(names, (0.0, None))
    total = dict.fromkeys(names, 0.0)
    stopped = dict.fromkeys(names, 0)
    for position, roll, after in cases:
        for name, fn in (("is_legal_result", is_legal_result), ("check", check)):
            seconds, result = timed(limit, fn, position, roll, after)
            if result is None:
                stopped[name] += 1
            elif expect_legal and not (result if name == "is_legal_result" else result.legal):
                raise AssertionError(f"{name} says a legal result is illegal: {position.to_json()} {roll}")
            total[name] += seconds
            if seconds > worst[name][0]:
                worst[name] = (seconds, (position, roll, after))
    print(f"check {label}: {len(cases):,} calls each")
    report(names, worst, total, dict.fromkeys(names, len(cases)), stopped, limit)


def passed_through(position: Position, legs) -> list[tuple[Position, Place]]:
    """The boards the mover's own leg passes through, each with the place its next checker leaves."""
    v = position.variant
    side = position.turn
    board = Board.of(position)
    out = []
    for m in checker_moves(legs[0]):
        src = Place.bar(side) if m.src == 25 else Place.point(v.white_point(side, m.src))
        out.append((board.to_position(position, side, side, position.rolls), src))
        apply_moves(board, v, [m])
    return out


def bench_mid_turn(label: str, cases, limit: float) -> None:
    """Time building a :class:`TurnTracker`, and each ``on_the_way`` and ``landing_points`` on the way."""
    settle()
    names = ("TurnTracker()", "on_the_way", "landing_points")
    worst = dict.fromkeys(names, (0.0, None))
    total = dict.fromkeys(names, 0.0)
    calls = dict.fromkeys(names, 0)
    stopped = dict.fromkeys(names, 0)

    def note(name, seconds, result, where):
        calls[name] += 1
        total[name] += seconds
        stopped[name] += result is None
        if seconds > worst[name][0]:
            worst[name] = (seconds, where)

    for position, roll, legs in cases:
        where = (position, roll)
        seconds, tracker = timed(limit, TurnTracker, position, roll)
        note("TurnTracker()", seconds, tracker, where)
        if tracker is None:
            continue
        for board, src in passed_through(position, legs):
            seconds, ok = timed(limit, tracker.on_the_way, board)
            if ok is False:
                raise AssertionError(f"on_the_way refuses a board on the way: {position.to_json()} {roll}")
            note("on_the_way", seconds, ok, where)
            seconds, landing = timed(limit, tracker.landing_points, board, src)
            if landing == ():
                raise AssertionError(f"landing_points: nowhere for a checker of a legal play: {position.to_json()}")
            note("landing_points", seconds, landing, where)
    print(f"mid-turn {label}: {len(cases):,} rolls")
    report(names, worst, total, calls, stopped, limit)


def report(names, worst, total, calls, stopped, limit: float) -> None:
    """Print each call's worst and mean time against the target, and where the worst was."""
    for name in names:
        seconds, where = worst[name]
        ms = seconds * 1e3
        mean = total[name] / max(calls[name], 1) * 1e3
        over = f" (>= {limit:g} s: stopped, {stopped[name]} calls)" if stopped[name] else ""
        verdict = "yes" if ms < TARGET_MS else "NO"
        print(
            f"  {name:16} worst {ms:8.1f} ms{over}, mean {mean:6.2f} ms of {calls[name]:,}; "
            f"under {TARGET_MS:g} ms: {verdict}"
        )
        if where is not None and ms >= TARGET_MS:
            print(f"    worst at roll {where[1]}: {where[0].to_json()}")
            if len(where) > 2:
                print(f"    observed after it: {where[2].to_json()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=10_000, help="backgammon positions (default 10,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds of each engine (default 3)")
    parser.add_argument("--crowded", type=int, default=300, help="crowded 1-1 positions (default 300)")
    parser.add_argument("--gul-bara", type=int, default=60, help="gul-bara escalated doubles (default 60)")
    parser.add_argument("--long-nardy", type=int, default=60, help="long nardy doubles (default 60)")
    parser.add_argument(
        "--games", type=int, default=100, help="gul-bara games whose escalated doubles are checked (default 100)"
    )
    parser.add_argument("--limit", type=float, default=2.0, help="seconds before a call is stopped")
    parser.add_argument("--quick", action="store_true", help="leave out gnubg and the backgammon checks")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)

    cases = backgammon_cases(args.positions, args.seed)
    if not args.quick:
        if not gnubg_oracle.available():
            print("gnubg-nn is not installed: pip install 'gnubg-nn>=1.1.0a11,<2'", file=sys.stderr)
            return 2
        bench_plays(cases, args.rounds)
        print()
        bench_check("(i) backgammon, last legal result", [(p, r, last_result(p, r)) for p, r in cases], args.limit)

    rng = random.Random(args.seed + 1)
    one_one = Roll(1, 1)
    crowded_cases = []
    for _ in range(args.crowded):
        p = crowded(rng)
        legs, final, final_side = legal_results(p, one_one)[-1]
        crowded_cases.append((p, one_one, last_result(p, one_one), legs))
    most = max(len(legal_results(p, r)) for p, r, _, _ in crowded_cases)

    rng = random.Random(args.seed + 2)
    gul_cases = []
    for _ in range(args.gul_bara):
        p = gul_bara_escalated(rng)
        d = rng.randint(1, 6)
        gul_cases.append((p, Roll(d, d), *reversed(some_result(p, Roll(d, d)))))
    fuzz = Position.from_json(FUZZ_BEFORE)
    gul_cases.append((fuzz, one_one, Position.from_json(FUZZ_AFTER), some_result(fuzz, one_one)[0]))
    sampled = Position.from_json(SAMPLED_BEFORE)
    gul_cases.append((sampled, one_one, *reversed(some_result(sampled, one_one))))
    sampled = Position.from_json(SAMPLED_4_4_BEFORE)
    gul_cases.append((sampled, Roll(4, 4), *reversed(some_result(sampled, Roll(4, 4)))))
    blocked = Position.from_json(BLOCKED_1_1_BEFORE)
    gul_cases.append((blocked, one_one, *reversed(some_result(blocked, one_one))))

    rng = random.Random(args.seed + 3)
    nardy_cases = [(p, r, *reversed(some_result(p, r))) for p, r in long_nardy_cases(rng, args.long_nardy)]

    groups = (
        (f"(ii) crowded 1-1 (up to {most:,} plays)", crowded_cases),
        ("(iii) gul-bara escalated doubles", gul_cases),
        ("(iv) long nardy doubles, head and blocks", nardy_cases),
        (f"(v) gul-bara escalated doubles of {args.games} games", gul_bara_games(args.games, args.seed + 5)),
    )
    for label, group in groups:
        bench_check(f"{label}, a legal result", [c[:3] for c in group], args.limit)
    # the same observations with one checker one point off: check must find the nearest legal play
    rng = random.Random(args.seed + 4)
    backgammon = [] if args.quick else [("(i) backgammon", [(p, r, last_result(p, r)) for p, r in cases[:2000]])]
    for label, group in backgammon + [(label, [c[:3] for c in group]) for label, group in groups]:
        wrong = [(p, r, slip(a, a.turn.other, rng)) for p, r, a in group]
        wrong = [(p, r, a) for p, r, a in wrong if a is not None]
        if label.startswith("(iii)"):
            before = Position.from_json(SAMPLED_2_2_BEFORE)
            wrong.append((before, Roll(2, 2), Position.from_json(SAMPLED_2_2_ILLEGAL_AFTER)))
        bench_check(f"{label}, one checker a point off (illegal)", wrong, args.limit, expect_legal=False)
    for label, group in groups:
        bench_mid_turn(label, [(p, r, legs) for p, r, _, legs in group], args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
