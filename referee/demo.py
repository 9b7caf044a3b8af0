"""``tavli demo``: a refereed tavli match on built-in stand-ins, no hardware needed.

Two stand-in players (:mod:`referee.players`) play a tavli match (portes,
plakoto, fevga, to 3 points by default) with seeded dice on the emulated table
(:mod:`referee.table`): each play is put on an emulated sensor board, read back by
the host link through a pseudo-terminal, and checked by the referee
(:func:`board_rules.legality.check`). Once a game a player "slips" and puts a
checker one point off: the referee lights the wrong points red on the board until
the play is put right. The camera (issue 3) and the full referee (issue 5) come later.
"""

from __future__ import annotations

import random
from dataclasses import replace

from rich.console import Console

from board_rules import Position, Roll, Side, find_variant
from board_rules.legality import check
from board_rules.match import TavliMatch
from referee.players import choose
from referee.table import EmulatedTable
from referee.textboard import render

MAX_TURNS = 600


def slip(after: Position, side: Side, rng: random.Random) -> Position | None:
    """``after`` with one of ``side``'s checkers put one point further on (a player's slip)."""
    pts = list(after.points)
    own = [w for w in range(2, 25) if pts[w - 1] * side.sign > 0 and pts[w - 2] * side.sign >= 0]
    if not own:
        return None
    w = rng.choice(own)
    pts[w - 1] -= side.sign
    pts[w - 2] += side.sign
    try:
        return replace(after, points=tuple(pts))
    except ValueError:
        return None


def _opening(variant, rng: random.Random, console: Console, quiet: bool) -> tuple[Side, Roll | None]:
    while True:
        w, b = rng.randint(1, 6), rng.randint(1, 6)
        starter, dice = variant.opening(w, b)
        if not quiet:
            console.print(f"  opening roll: white {w}, black {b}" + ("  (tie: again)" if starter is None else ""))
        if starter is not None:
            return starter, (Roll(*dice) if dice else None)


def play_game(
    variant_name: str, starter: Side | None, rng: random.Random, console: Console, quiet: bool,
    table: EmulatedTable | None = None,
):
    """Play one refereed game (on ``table`` when given); returns its outcome."""
    variant = find_variant(variant_name)
    first_roll = None
    if starter is None:
        starter, first_roll = _opening(variant, rng, console, quiet)
    position = Position.start(variant, starter)
    slip_turn = rng.randint(4, 12)
    for turn in range(MAX_TURNS):
        roll = first_roll or Roll(rng.randint(1, 6), rng.randint(1, 6))
        first_roll = None
        side = position.turn
        play, after = choose(position, roll, rng)
        if turn == slip_turn:
            wrong = slip(after, side, rng)
            if wrong is not None:
                seen = table.show(wrong) if table else wrong
                verdict = check(position, roll, seen)
                if not verdict.legal:
                    lit = ""
                    if table is not None and table.light(verdict.wrong):
                        lit = f"; the board lights {', '.join(map(str, table.lit_points()))} red"
                    console.print(
                        f"  [red]referee:[/red] {side.value} {roll}: that is not a legal play; "
                        f"wrong at {', '.join(map(str, verdict.wrong))}{lit}. Put right: {verdict.play or '(pass)'}"
                    )
        seen = table.show(after) if table else after
        verdict = check(position, roll, seen)
        assert verdict.legal, "the stand-in player chose an illegal play, or the board misread it"
        if table is not None and table.lit_points():
            table.light(())
        if not quiet:
            console.print(f"  {turn + 1:>3}. {side.value:<5} {roll}  {str(play) or '(no legal play: turn passes)'}")
        position = after
        outcome = position.outcome()
        if outcome is not None:
            console.print(render(position, title=f"  end of {variant.label}"))
            return outcome
    raise RuntimeError(f"{variant_name} did not finish in {MAX_TURNS} turns")


def run_demo(seed: int = 7, points: int = 3, quiet: bool = False, board: bool = True) -> int:
    """Play a refereed tavli match to ``points`` (on the emulated table with ``board``); returns the exit status."""
    console = Console(highlight=False)
    rng = random.Random(seed)
    match = TavliMatch(points)
    table = EmulatedTable(seed=seed) if board else None
    where = f"on the emulated table (board on {table.emulator.path})" if table else "without a board"
    console.print(f"[bold]tavli-table demo[/bold]: a refereed tavli match to {points} (seed {seed}), {where}\n")
    console.print(render(Position.start("portes"), title="  the table, set up for portes"))
    try:
        while not match.is_over:
            match = _next_game(match, rng, console, quiet, table)
    finally:
        if table is not None:
            table.close()
    console.print(f"[bold green]{match.winner.value} wins the match[/bold green]")
    return 0


def _next_game(match: TavliMatch, rng: random.Random, console: Console, quiet: bool, table) -> TavliMatch:
    """Play the match's next game and return the match with its result."""
    name = match.next_variant
    console.print(f"[bold]game {match.games_played + 1}: {name}[/bold]")
    outcome = play_game(name, match.next_starter, rng, console, quiet, table)
    match = match.record(outcome)
    who = "draw" if outcome.winner is None else f"{outcome.winner.value} wins {outcome.points} ({outcome.kind})"
    console.print(f"  result: {who}; match white {match.points(Side.WHITE)} - black {match.points(Side.BLACK)}\n")
    return match
