"""Plays of a roll too big to list, built one checker move at a time by a beam search.

Owns :func:`beam_plays`. An escalated gul-bara double (up to 24 dice) can have over a million
plays; the teacher and the nets' training compare a bounded set of them, and a beam keeps the
best few boards after each die by a ranking it is given (the heuristic's, or a net's). Imports
``board_rules`` only.
"""

from __future__ import annotations

from collections.abc import Callable

from board_rules import Position, Roll, Side
from board_rules.moves import Board, CheckerMoves

BEAM_WIDTH = 10
"""Boards the beam search keeps after each die of an over-budget roll."""

Scores = Callable[[list[Board], object], list[float]]
"""``scores(boards, variant)``: a value per board for its owner, higher better."""


def beam_plays(position: Position, roll: Roll, scores: Scores, width: int = BEAM_WIDTH) -> list[tuple[tuple, Board]]:
    """``(checker moves, final board seen by the mover)`` of the plays the beam ends with, for each
    order of the dice, keeping the ``width`` boards ``scores`` ranks best after each die (ties in the
    order the moves were found).

    Each checker move is made by the rules' own single-move generator
    (:class:`board_rules.moves.CheckerMoves`: where a checker may land, the start and head rules,
    forbidden primes), and only paths that play every die are kept, so every result is a legal
    play (playing all the dice is always the most that can be played). A beam that runs out of
    moves early is dropped: whether numbers then pass to the opponent is the rules' business.
    Empty for plakoto, where a pinned mother can end a play early.
    """
    v = position.variant
    if v.pins:
        return []
    side = position.turn
    played = position.rolls[0 if side is Side.WHITE else 1]
    head = v.head_limit(roll.d1, roll.d2, played)
    start = Board.of(position)
    out: list[tuple[tuple, Board]] = []
    for seq in v.dice_sequences(roll.d1, roll.d2, played):
        beam: list[tuple[Board, tuple]] = [(start, ())]
        for d in seq:
            nxt: dict[bytes, tuple[Board, tuple]] = {}
            for b, moves in beam:
                work = b.copy()
                search = CheckerMoves(v, work, head)
                search.head_start = start.me[24]
                for src in search.sources():
                    u = search.try_move(src, d)
                    if u is None:
                        continue
                    key = work.key()
                    if key not in nxt:
                        nxt[key] = (work.copy(), moves + ((src, u[1], u[2] or u[3]),))
                    search.undo(u)
            if not nxt:
                beam = []
                break
            found = list(nxt.values())
            score = scores([b for b, _ in found], v)
            order = sorted(range(len(found)), key=lambda i: -score[i])  # stable: ties keep the search's order
            beam = [found[i] for i in order[:width]]
        out += [(moves, b) for b, moves in beam]
    return out
