"""Stand-in players for the demo: they choose a legal play, the referee checks it.

The chooser is the teaching evaluator (:mod:`engine.evaluate`): gnubg's evaluation
for portes and backgammon when gnubg-nn is installed, the project's own per-variant
heuristic otherwise. It decides no rule: the legal plays come from ``board_rules``.
Imports ``board_rules`` and :mod:`engine.evaluate` only.
"""

from __future__ import annotations

import random

from board_rules import Play, Position, Roll
from engine import evaluate


def choose(position: Position, roll: Roll, rng: random.Random) -> tuple[Play, Position]:
    """The evaluator's best legal play (ties broken by ``rng``) and its resulting position."""
    return evaluate.choose(position, roll, rng)
