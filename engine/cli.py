"""``tavli hint``: the teacher from the command line, for a position typed, pasted or read from a photo.

Ranks the plays of a roll by the game's evaluator (gnubg, the learned net or the
heuristic: :func:`engine.evaluate.evaluator`), says the idea of each, and with
``--played`` what the play made gave up. Bad input exits 2 with the field named.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from board_rules import IllegalPlayError, InvalidPositionError, Roll, TavliError
from board_rules.cli import read_position

SOURCES = ("gnubg", "learned", "heuristic")  # engine.evaluate.SOURCES, not imported: numpy loads only when run


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``hint`` on a parent parser."""
    p = sub.add_parser("hint", help="the best plays of a roll in a position, each with its idea; judge a play made")
    p.add_argument("position", nargs="?", default="-", help="Position JSON file, or - for stdin")
    p.add_argument("--dice", nargs=2, type=int, metavar=("D1", "D2"), required=True, help="the roll")
    p.add_argument(
        "--played", metavar="PLAY", help='the play made, in gnubg notation ("24/18 13/11*"): what it gave up'
    )
    p.add_argument("--top", type=int, default=5, metavar="N", help="how many plays to list (default 5)")
    p.add_argument(
        "--by", choices=SOURCES, help="the evaluator (default: gnubg, else the game's net, else the heuristic)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run ``tavli hint``; raises :class:`board_rules.TavliError` subclasses for bad input."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    from engine.evaluate import evaluator, first_legs, rank_plays
    from engine.explain import idea, judge

    if args.top < 1:
        raise InvalidPositionError(f"--top: {args.top!r} must be at least 1", "top", args.top)
    position = read_position(args.position, stdin)
    roll = Roll(*args.dice)
    if position.outcome() is not None:
        raise InvalidPositionError("position: the game is over in it: there is nothing to play", "position", None)
    played_after = None
    if args.played is not None:
        try:
            played_after = position.play(args.played, roll)
        except TavliError as exc:
            raise IllegalPlayError(f"--played: {args.played!r}: {exc}") from None
    by = evaluator(position.variant.name, args.by)
    every = rank_plays(position, roll, by=by, include=played_after)
    verdict = judge(position, roll, played_after, by=by, ranked=every)
    ranked = first_legs(every)[: args.top]
    rows = [(str(r.play) or "(no legal play)", r.score, idea(position, r.position) if r.play else None) for r in ranked]
    deeper = sum(1 for r in ranked if r.ply)
    if args.json:
        out = {
            "variant": position.variant.name,
            "turn": position.turn.value,
            "dice": [roll.d1, roll.d2],
            "source": ranked[0].source,
            "unit": verdict.unit,
            "plays": [{"play": p, "score": round(s, 4), "idea": i, "ply": r.ply} for (p, s, i), r in zip(rows, ranked)],
            "compared": verdict.plays,
        }
        if played_after is not None:
            out["played"] = {
                "play": args.played,
                "loss": verdict.loss,
                "rank": verdict.rank,
                "said": verdict.played_line(),
            }
        print(json.dumps(out), file=stdout)
        return 0
    unit = "cubeless equity, points a game" if verdict.unit == "equity" else "the heuristic's points"
    print(
        f"{position.variant.name}: {position.turn.value} to play {roll}; ranked by {ranked[0].source} ({unit}), "
        f"{len(rows)} of {verdict.plays} plays" + (f", the first {deeper} one ply deeper" if deeper else ""),
        file=stdout,
    )
    width = max(len(p) for p, _, _ in rows)
    for k, (p, s, i) in enumerate(rows, 1):
        print(f"{k:>3}. {p:<{width}}  {s:+8.3f}" + (f"  {i}" if i else ""), file=stdout)
    if played_after is not None:
        print(verdict.played_line(), file=stdout)
    return 0
