"""Stand-in players for the demo: they choose a legal play, the referee checks it.

Owns a simple one-ply chooser (race, blots, made points, pins). It decides no rule:
the legal plays come from ``board_rules``. Imports ``board_rules`` only. The
teaching evaluator of issue 5 will replace it.
"""

from __future__ import annotations

import random

from board_rules import Play, Position, Roll, Side
from board_rules.movegen import legal_plays


def _score(after: Position, me: Side) -> float:
    v = after.variant
    opp = me.other
    mi, oi = (0, 1) if me is Side.WHITE else (1, 0)
    score = float(after.pip_count(opp) - after.pip_count(me))
    score += 4.0 * (after.off[mi] - after.off[oi])
    score += 6.0 * after.bar[oi] - 6.0 * after.bar[mi]
    for w in range(1, 25):
        n = after.count(me, w)
        if after.pinned[w - 1] == opp.sign:
            score += 5.0  # an opposing checker pinned under ours
        if after.pinned[w - 1] == me.sign:
            score -= 5.0
        if v.hits or v.pins:
            if n == 1 and after.pinned[w - 1] != opp.sign:
                score -= 2.0  # a blot
            elif n >= 2:
                score += 1.5  # a made point
        elif n >= 1:
            score += 0.8  # one checker holds a point
    return score


def choose(position: Position, roll: Roll, rng: random.Random) -> tuple[Play, Position]:
    """A good-looking legal play (ties broken by ``rng``) and its resulting position."""
    options = legal_plays(position, roll)
    me = position.turn
    scored = [(_score(after, me) + rng.random() * 0.01, i) for i, (_, after) in enumerate(options)]
    _, i = max(scored)
    return options[i]
