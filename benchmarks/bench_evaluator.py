"""Benchmark of the learned evaluators (not a test): their games against today's heuristic, and hint time.

Run ``.venv/bin/python benchmarks/bench_evaluator.py`` (or ``make bench-evaluator``).

For each game type, ``--games`` games (default 2,000) in pairs that share a seed: the
learned net (:mod:`engine.learned`, through :func:`engine.evaluate.choose` with
``by="learned"``) plays white in one and black in the other, against the heuristic
(``by="heuristic"``, the teacher's evaluator before the nets), with the same dice as
long as the two games agree. Cubeless; each game scores its outcome's points (single,
gammon or mars, backgammon, koks). Printed: games won and points a game for the net, each
with a 95% interval, and the target (70% of the games won). For backgammon the net plays
gnubg-nn 0-ply instead, as a yardstick (no target; the heuristic when there is no
backgammon net). Every play is timed: the mean and
p99 milliseconds a hint takes with each evaluator, and their ratio, in the same process.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core a process (--jobs): BLAS threads only contend
os.environ.setdefault("OMP_NUM_THREADS", "1")

from board_rules import Position, Roll, find_variant  # noqa: E402
from engine import evaluate, learned  # noqa: E402
from training.train_evaluator import opening  # noqa: E402

TARGET_WON = 0.70
GAMES_OF = ("portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy")
MAX_PLIES = 2_000


def _use_weights(folder: str | None) -> None:
    """Read the nets from ``folder`` instead of the package's (to measure a run before shipping it)."""
    if folder is None:
        return

    def from_folder(name: str):
        path = Path(folder) / f"{name}.npz"
        return learned.Net.load(path) if path.is_file() else None

    learned.shipped = functools.cache(from_folder)  # the evaluator looks its nets up through this name


def play_pair(task: tuple[str, int, str, str, str | None]) -> list[tuple[int, list[float], list[float]]]:
    """Two games on one seed, ours white then black: ``(our points, our ms, the other's ms)`` each."""
    variant, seed, ours, other, weights = task
    _use_weights(weights)
    v = find_variant(variant)
    results = []
    for net_side in ("white", "black"):
        dice = random.Random(seed)
        ties = random.Random(seed + 1)
        starter, roll = opening(v, dice)
        position = Position.start(v, starter)
        times: dict[str, list[float]] = {ours: [], other: []}
        points = 0
        for _ in range(MAX_PLIES):
            if roll is None:
                roll = Roll(dice.randint(1, 6), dice.randint(1, 6))
            by = ours if position.turn.value == net_side else other
            t = time.perf_counter()
            _, position = evaluate.choose(position, roll, ties, by=by)
            times[by].append((time.perf_counter() - t) * 1e3)
            roll = None
            ended = position.outcome()
            if ended is not None:
                if ended.winner is not None:
                    points = ended.base if ended.winner.value == net_side else -ended.base
                break
        results.append((points, times[ours], times[other]))
    return results


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval (normal approximation)."""
    m = statistics.fmean(values)
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    return m, 1.96 * sd / math.sqrt(len(values))


def p99(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.99 * len(s)))] if s else 0.0


def run(variant: str, games: int, seed: int, jobs: int, weights: str | None) -> dict:
    other = "gnubg" if variant == "backgammon" else "heuristic"
    ours = "learned" if learned.shipped(variant) is not None else "heuristic"
    tasks = [(variant, seed * 1_000_003 + 2 * k, ours, other, weights) for k in range(max(1, games // 2))]
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            pairs = list(pool.map(play_pair, tasks, chunksize=4))
    else:
        _use_weights(weights)
        pairs = [play_pair(t) for t in tasks]
    took = time.perf_counter() - started
    points = [p for pair in pairs for p, _, _ in pair]
    net_ms = [t for pair in pairs for _, ts, _ in pair for t in ts]
    other_ms = [t for pair in pairs for _, _, ts in pair for t in ts]
    won = [1.0 if p > 0 else 0.0 for p in points]
    w, wi = interval(won)
    ppg, pi = interval([float(p) for p in points])
    line = (
        f"{variant}: {'the net' if ours == 'learned' else ours} against {other}, {len(points)} games: won {sum(won):.0f} "
        f"({100 * w:.1f}% +- {100 * wi:.1f}), {ppg:+.3f} +- {pi:.3f} points a game"
    )
    if other == "heuristic" and ours == "learned":
        line += f"; target {100 * TARGET_WON:.0f}%: {'met' if w >= TARGET_WON else 'not met'}"
    print(line)
    print(
        f"  hint ms: {ours} mean {statistics.fmean(net_ms):.2f}, p99 {p99(net_ms):.1f}, max {max(net_ms):.1f}; "
        f"{other} mean {statistics.fmean(other_ms):.2f}, p99 {p99(other_ms):.1f}, max {max(other_ms):.1f}; "
        f"ratio {ours}/{other} (means) {statistics.fmean(net_ms) / statistics.fmean(other_ms):.2f}; "
        f"{took:.0f} s",
        flush=True,
    )
    return {"variant": variant, "won": w, "won_95": wi, "ppg": ppg, "ppg_95": pi, "games": len(points)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", default=",".join(GAMES_OF), help="comma-separated games (backgammon: against gnubg)")
    p.add_argument("--games", type=int, default=2000, help="games per game type, in pairs (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="seed of the dice (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="processes playing games at once (default 1)")
    p.add_argument("--weights", help="a folder of <variant>.npz to measure instead of the shipped nets")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    for name in names:
        try:
            v = find_variant(name)
        except ValueError as e:
            p.error(f"--variants: {e}")
        if name == "backgammon" and not evaluate.gnubg_available():
            p.error("--variants: backgammon is measured against gnubg-nn, which is not installed")
    if args.games < 2 or args.jobs < 1:
        p.error("--games must be at least 2 and --jobs at least 1")
    _use_weights(args.weights)
    for name in names:
        v = find_variant(name)
        if learned.shipped(v.name) is None and v.name != "backgammon":
            print(f"{v.name}: no learned net (engine/models/{v.name}.npz): skipped")
            continue
        run(v.name, args.games, args.seed, args.jobs, args.weights)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
