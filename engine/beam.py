"""Plays of a roll too big to list, built one checker move at a time by a beam search.

Owns :func:`beam_plays`. An escalated gul-bara double (up to 24 dice) can have over a million
plays; the teacher and the nets' training compare a bounded set of them, and a beam keeps the
best few boards after each die by a ranking it is given (the heuristic's, or a net's). Imports
``board_rules`` and :mod:`engine.heuristic`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from board_rules import Position, Roll, Side, Variant, fastgen
from board_rules.movegen import compiled_rules
from board_rules.moves import Board, CheckerMoves
from board_rules.variants import SAME
from engine import heuristic

BEAM_WIDTH = 10
"""Boards the beam search keeps after each die of an over-budget roll."""

KEY = 52
"""Bytes of a board's key without pins (:meth:`board_rules.moves.Board.key`): the beam's boards."""

Scores = Callable[[bytes, int, Variant], Sequence[float]]
"""``scores(keys, opp_off, variant)``: a value for each board, given by its key (:data:`KEY` bytes
each, one after another; the opponent has ``opp_off`` checkers off), for its owner, higher better."""

Step = Callable[[bytes, int], tuple[bytes, Callable[[int], tuple[int, tuple]]]]
"""``step(beam, die)``: the distinct boards one checker move of ``die`` leads to from the beam's
boards (their keys, one after another), as ``(keys, origin)``: their keys in the order found (the
beam's boards in turn, each one's checkers from its highest point down), and ``origin(j)``, the
index of the beam's board the ``j``-th came from and the checker move ``(src, dst, hit)``."""


def beam_plays(
    position: Position, roll: Roll, scores: Scores, width: int = BEAM_WIDTH, *, compiled: bool | None = None
) -> list[tuple[tuple, Board]]:
    """``(checker moves, final board seen by the mover)`` of the plays the beam ends with, for each
    order of the dice, keeping the ``width`` boards ``scores`` ranks best after each die (ties in the
    order the moves were found).

    Each checker move is made by the rules' own single-move generator
    (:class:`board_rules.moves.CheckerMoves`: where a checker may land, the start and head rules,
    forbidden primes), and only paths that play every die are kept, so every result is a legal
    play (playing all the dice is always the most that can be played). A beam that runs out of
    moves early is dropped: whether numbers then pass to the opponent is the rules' business.
    Empty for plakoto, where a pinned mother can end a play early. The blocking games take each
    die by the compiled walk where it is built (the same moves; ``compiled=False``: the Python).
    """
    v = position.variant
    if v.pins:
        return []
    side = position.turn
    played = position.rolls[0 if side is Side.WHITE else 1]
    head = v.head_limit(roll.d1, roll.d2, played)
    start = Board.of(position)
    opp_off = start.opp_off  # no move of the mover's changes it
    rules = None if compiled is False else compiled_rules(v, start, head, start.me[24])
    if rules is not None and scores is heuristic.key_values and heuristic._compiled is not None:
        return _compiled_heuristic_beam(v, start, roll, played, width, rules)
    step = _compiled_step(rules) if rules is not None else _step(v, head, start.me[24], opp_off)
    out: list[tuple[tuple, Board]] = []
    for seq in v.dice_sequences(roll.d1, roll.d2, played):
        keys, paths = bytes(start.me + start.opp), [()]
        for d in seq:
            found, origin = step(keys, d)
            if not found:
                paths = []
                break
            score = scores(found, opp_off, v)
            best = sorted(range(len(score)), key=score.__getitem__, reverse=True)[:width]  # stable: ties as found
            keys = b"".join([found[KEY * j : KEY * j + KEY] for j in best])
            paths = [paths[i] + (move,) for i, move in map(origin, best)]
        out += zip(paths, Board.all_from_keys(keys, opp_off))
    return out


def _compiled_heuristic_beam(
    v: Variant, start: Board, roll: Roll, played: int, width: int, rules: tuple
) -> list[tuple[tuple, Board]]:
    """:func:`beam_plays` ranked by the heuristic, each order of the dice walked whole by the compiled
    heuristic (``engine._heuristic.beam_blocking``, which makes its moves by ``step_blocking``): the
    same plays in the same order (``tests/test_beam.py``)."""
    whole = heuristic._compiled.beam_blocking
    key = bytes(start.me + start.opp)
    out: list[tuple[tuple, Board]] = []
    for seq in v.dice_sequences(roll.d1, roll.d2, played):
        found = whole(key, bytes(seq), width, *rules, v.geometry == SAME)
        if found is None:
            continue
        keys, paths = found
        n = 2 * len(seq)
        for i, board in enumerate(Board.all_from_keys(keys, start.opp_off)):
            path = paths[n * i : n * i + n]
            out.append((tuple((path[k], path[k + 1], False) for k in range(0, n, 2)), board))
    return out


def _step(v: Variant, head: int, head_start: int, opp_off: int) -> Step:
    """:data:`Step` by the rules' single-move generator (:class:`board_rules.moves.CheckerMoves`)."""

    def step(beam: bytes, d: int) -> tuple[bytes, Callable[[int], tuple[int, tuple]]]:
        nxt: dict[bytes, tuple[int, tuple]] = {}
        for i in range(len(beam) // KEY):
            work = Board.from_key(beam[KEY * i : KEY * i + KEY], False, opp_off)
            search = CheckerMoves(v, work, head)
            search.head_start = head_start
            for src in search.sources():
                u = search.try_move(src, d)
                if u is None:
                    continue
                nxt.setdefault(work.key(), (i, (src, u[1], u[2] or u[3])))
                search.undo(u)
        return b"".join(nxt), list(nxt.values()).__getitem__

    return step


def _compiled_step(rules: tuple) -> Step:
    """:data:`Step` by ``board_rules._fastgen.step_blocking`` (the blocking games' compiled moves):
    the same boards in the same order as :func:`_step` (``tests/test_beam.py``)."""
    step_blocking = fastgen._compiled.step_blocking

    def step(beam: bytes, d: int) -> tuple[bytes, Callable[[int], tuple[int, tuple]]]:
        keys, moves = step_blocking(beam, d, *rules)

        def origin(j: int) -> tuple[int, tuple]:
            return moves[3 * j], (moves[3 * j + 1], moves[3 * j + 2], False)

        return keys, origin

    return step
