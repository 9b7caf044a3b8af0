"""Plays of a roll too big to list, built one checker move at a time by a beam search.

Owns :func:`beam_plays`. An escalated gul-bara double (up to 24 dice) can have over a million
plays; the teacher and the nets' training compare a bounded set of them, and a beam keeps the
best few boards after each die by a ranking it is given (the heuristic's, or a net's). Imports
``board_rules`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from board_rules import Position, Roll, Side, Variant, fastgen
from board_rules.movegen import compiled_rules
from board_rules.moves import Board, CheckerMoves

BEAM_WIDTH = 10
"""Boards the beam search keeps after each die of an over-budget roll."""

KEY = 52
"""Bytes of a board's key without pins (:meth:`board_rules.moves.Board.key`): the beam's boards."""

Scores = Callable[[bytes, int, Variant], Sequence[float]]
"""``scores(keys, opp_off, variant)``: a value for each board, given by its key (:data:`KEY` bytes
each, one after another; the opponent has ``opp_off`` checkers off), for its owner, higher better."""

Step = Callable[[list[tuple[bytes, tuple]], int], list[tuple[bytes, int, tuple]]]
"""``step(beam, die)``: each distinct board one checker move of ``die`` leads to from the beam's
boards (``(key, moves so far)``), as ``(key, the beam board moved from, the move)``, in the order
found: the beam's boards in turn, each one's checkers from its highest point down."""


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
    step = _compiled_step(rules) if rules is not None else _step(v, head, start.me[24], opp_off)
    out: list[tuple[tuple, Board]] = []
    for seq in v.dice_sequences(roll.d1, roll.d2, played):
        beam: list[tuple[bytes, tuple]] = [(bytes(start.me + start.opp), ())]
        for d in seq:
            found = step(beam, d)
            if not found:
                beam = []
                break
            score = scores(b"".join([key for key, _, _ in found]), opp_off, v)
            order = sorted(range(len(found)), key=lambda i: -score[i])  # stable: ties keep the search's order
            beam = [(found[i][0], beam[found[i][1]][1] + (found[i][2],)) for i in order[:width]]
        out += [(moves, Board(list(key[:26]), list(key[26:]), None, opp_off)) for key, moves in beam]
    return out


def _step(v: Variant, head: int, head_start: int, opp_off: int) -> Step:
    """:data:`Step` by the rules' single-move generator (:class:`board_rules.moves.CheckerMoves`)."""

    def step(beam: list[tuple[bytes, tuple]], d: int) -> list[tuple[bytes, int, tuple]]:
        nxt: dict[bytes, tuple[bytes, int, tuple]] = {}
        for i, (key, _) in enumerate(beam):
            work = Board.from_key(key, False, opp_off)
            search = CheckerMoves(v, work, head)
            search.head_start = head_start
            for src in search.sources():
                u = search.try_move(src, d)
                if u is None:
                    continue
                reached = work.key()
                if reached not in nxt:
                    nxt[reached] = (reached, i, (src, u[1], u[2] or u[3]))
                search.undo(u)
        return list(nxt.values())

    return step


def _compiled_step(rules: tuple) -> Step:
    """:data:`Step` by ``board_rules._fastgen.step_blocking`` (the blocking games' compiled moves):
    the same boards in the same order as :func:`_step` (``tests/test_beam.py``)."""
    step_blocking = fastgen._compiled.step_blocking

    def step(beam: list[tuple[bytes, tuple]], d: int) -> list[tuple[bytes, int, tuple]]:
        keys, moves = step_blocking(b"".join([key for key, _ in beam]), d, *rules)
        nxt: dict[bytes, tuple[bytes, int, tuple]] = {}
        for j in range(len(moves) // 3):
            key = keys[KEY * j : KEY * j + KEY]
            if key not in nxt:
                i, src, dst = moves[3 * j : 3 * j + 3]
                nxt[key] = (key, i, (src, dst, False))
        return list(nxt.values())

    return step
