"""Train a game's learned evaluator by self-play with TD(lambda), as TD-Gammon was trained.

``make train-evaluator VARIANT=plakoto`` runs it and writes ``engine/models/plakoto.npz``.
Both sides are played by the net being trained, greedily (the dice explore); after each
game every position's target is its lambda-return (the next position's outputs, seen by
the side that played into it, blended with the returns further on, the game's result at
the end), and the net takes Adam steps on cross-entropy towards those targets. numpy only:
no torch is needed, and it runs on any CPU (one core); the seeds are fixed, so a run with
the same arguments writes the same weights.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

# One core a run: the net's matrices are small, and BLAS threads only wait on each other (with
# two runs on two cores a game took twice as long). Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from board_rules import Position, Roll, Side, find_variant  # noqa: E402
from engine.learned import Net, after, flip, outcome_target, score_plays  # noqa: E402

SHIPPED_GAMES = {
    "portes": 12000,
    "gul-bara": 40000,
    "plakoto": 80000,
    "fevga": 12000,
    "long-nardy": 12000,
    "short-nardy": 30000,
}
"""Self-play games the shipped nets were trained on (3000 for the games not named)."""

SHIPPED_INPUTS = {"portes": 2, "plakoto": 2, "fevga": 2, "short-nardy": 2, "gul-bara": 2}
"""The shipped nets' input sets (``engine.learned.INPUT_SETS``; 1 for the games not named)."""

SHIPPED_DECAY = {"gul-bara": 20000.0}
"""The shipped nets' learning-rate decay (``--decay``: the games after which the rate is halved; 2000
for the games not named)."""

SHIPPED_BEAM = ("gul-bara",)
"""Games whose shipped net was trained choosing a roll too big to list among a depth-first sample
and the plays of a beam ranked by the net (``--beam``), not the sample alone."""

MAX_PLIES = 2_000
"""A game longer than this is stopped and not learned from (none has come near it)."""


def opening(position_variant, rng: random.Random) -> tuple[Side, Roll | None]:
    """Who starts, and the roll it plays (None: it throws both dice again), by the variant's rule."""
    while True:
        starter, roll = position_variant.opening(rng.randint(1, 6), rng.randint(1, 6))
        if starter is not None:
            return starter, (Roll(*roll) if roll else None)


def play_game(net: Net, variant_name: str, rng: random.Random, beam: bool = False):
    """One self-play game: the chosen plays' inputs and outputs (each for its mover) and the final target.

    Returns ``(x, out, final)``: ``x`` ``(T, n)`` and ``out`` ``(T, 7)`` for the positions
    after each play, ``final`` the exact outputs of the last one (the game's result), or
    None when the game was stopped at :data:`MAX_PLIES`.
    """
    v = find_variant(variant_name)
    starter, roll = opening(v, rng)
    position = Position.start(v, starter)
    xs, outs = [], []
    for _ in range(MAX_PLIES):
        if roll is None:
            roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        scored = score_plays(net, position, roll, beam=beam)
        eq = scored.equity
        best = np.flatnonzero(eq >= eq.max() - 1e-9)
        i = int(best[rng.randrange(len(best))])
        xs.append(scored.x[i])
        outs.append(scored.out[i])
        position = after(position, scored, i)
        roll = None
        ended = position.outcome()
        if ended is not None:
            won = None if ended.winner is None else ended.winner is not position.turn
            return np.array(xs), np.array(outs), outcome_target(ended.base, won)
    return np.array(xs), np.array(outs), None


def lambda_returns(out: np.ndarray, final: np.ndarray, lam: float) -> np.ndarray:
    """Each position's TD(lambda) target, for its own mover (sides alternate every play)."""
    t = len(out)
    g = np.empty_like(out)
    g[t - 1] = final
    for k in range(t - 2, -1, -1):
        nxt = out[k + 1] if k + 1 < t - 1 else final
        g[k] = flip((1.0 - lam) * nxt + lam * g[k + 1])
    return g


class Adam:
    """Adam over a list of numpy arrays, in place."""

    def __init__(self, params: list[np.ndarray], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray], lr: float) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            mh = m / (1 - b1**self.t)
            vh = v / (1 - b2**self.t)
            p -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(p.dtype)


def gradients(net: Net, x: np.ndarray, target: np.ndarray) -> tuple[list[np.ndarray], float]:
    """Cross-entropy gradients of the net's outputs towards ``target``, and the loss."""
    h = net.hidden(x)
    y = 1.0 / (1.0 + np.exp(-(h @ net.w2 + net.b2)))
    n = len(x)
    dz = (y - target) / n
    dh = (dz @ net.w2.T) * (1.0 - h * h)
    eps = 1e-6
    loss = float(-(target * np.log(y + eps) + (1 - target) * np.log(1 - y + eps)).sum() / n)
    return [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)], loss


def train(args) -> Net:
    v = find_variant(args.variant)
    rng = random.Random(args.seed)
    init = np.random.default_rng(args.seed)
    net = Net.new(v, args.hidden, init, args.inputs)
    opt = Adam([net.w1, net.b1, net.w2, net.b2], args.lr)
    started = time.monotonic()
    plies = losses = 0.0
    for game in range(1, args.games + 1):
        x, out, final = play_game(net, v.name, rng, args.beam)
        if final is not None and len(x) > 1:
            g = lambda_returns(out, final, args.lam)
            # the last position's result is exact: learn the ones before it
            x, g = x[:-1], g[:-1]
            order = init.permutation(len(x))
            # decays with the games played only, so the checkpoint after N games is the run of --games N
            lr = args.lr / (1.0 + game / args.decay)
            for s in range(0, len(order), args.batch):
                idx = order[s : s + args.batch]
                grads, loss = gradients(net, x[idx], g[idx])
                opt.step(grads, lr)
                losses += loss
        plies += len(out)
        net.games = game
        if game % args.report == 0 or game == args.games:
            took = time.monotonic() - started
            print(
                f"{v.name}: {game} games, {plies / game:.0f} plies a game, {took / game:.2f} s a game, "
                f"loss {losses / max(1, plies):.4f}",
                flush=True,
            )
        if args.checkpoint and game % args.checkpoint == 0:
            net.save(args.out)
    net.save(args.out)
    return net


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", required=True, help="the game: portes, plakoto, fevga, gul-bara, long-nardy, ...")
    p.add_argument("--games", type=int, help="self-play games (default: as many as the shipped net's, 3000 to 80000)")
    p.add_argument("--hidden", type=int, default=64, help="hidden units (default 64)")
    p.add_argument(
        "--inputs",
        type=int,
        choices=(1, 2),
        help="input set: 1, the heuristic's score; 2, also its terms (default: the shipped net's)",
    )
    p.add_argument("--lam", type=float, default=0.7, help="TD lambda (default 0.7)")
    p.add_argument(
        "--lr",
        type=float,
        default=1e-3,
        help="Adam's learning rate at the start, decaying as 1/(1 + games/DECAY) (default 1e-3)",
    )
    p.add_argument(
        "--decay",
        type=float,
        help="games after which the learning rate is halved (default: the shipped net's, 2000 unless named)",
    )
    p.add_argument(
        "--beam",
        action=argparse.BooleanOptionalAction,
        help="choose a roll too big to list among a sample and a beam ranked by the net, not the sample "
        "alone (default: as the shipped net was trained)",
    )
    p.add_argument("--batch", type=int, default=32, help="positions per step (default 32)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--report", type=int, default=100, help="print progress every N games")
    p.add_argument("--checkpoint", type=int, default=500, help="save the weights every N games (0: only at the end)")
    p.add_argument("--out", type=Path, help="where to write the weights (default engine/models/<variant>.npz)")
    args = p.parse_args(argv)
    try:
        v = find_variant(args.variant)
    except ValueError as e:
        p.error(f"--variant: {e}")
    if args.games is None:
        args.games = SHIPPED_GAMES.get(v.name, 3000)
    if args.inputs is None:
        args.inputs = SHIPPED_INPUTS.get(v.name, 1)
    if args.decay is None:
        args.decay = SHIPPED_DECAY.get(v.name, 2000.0)
    if args.beam is None:
        args.beam = v.name in SHIPPED_BEAM
    if args.games < 1 or args.hidden < 1 or args.batch < 1 or not args.decay > 0:
        p.error("--games, --hidden and --batch must be at least 1, --decay above 0")
    args.out = args.out or ROOT / "engine" / "models" / f"{v.name}.npz"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    train(args)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
