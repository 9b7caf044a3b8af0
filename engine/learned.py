"""Learned per-game evaluators: a small network that scores a board for the side that has just played.

One net per variant, trained by self-play with TD(lambda) (``training/train_evaluator.py``,
``make train-evaluator VARIANT=...``), its weights shipped as ``engine/models/<variant>.npz``
and run here in numpy (one hidden layer: a few hundred microseconds for all the plays of a
roll on a Raspberry Pi). The net sees a board the way TD-Gammon's did (per point, each
side's checkers in four units), plus the bar, the trays, the plakoto pins, both pip counts,
whether the sides can still meet, and the project's own heuristic (:func:`engine.heuristic.value`).

Its seven outputs are probabilities for the side that has just played, the opponent to
roll: win, win by 2 points or more (gammon, mars), by 3 or more, by 4 (koks), and lose by
2, 3 and 4 or more; :func:`equity` turns them into points per game, cubeless.
Imports ``board_rules``, :mod:`engine.heuristic` and numpy only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from board_rules import Position, Roll, Side, Variant
from board_rules.movegen import (
    Budget,
    SearchBudgetExceeded,
    compiled_pin_rules,
    compiled_rules,
    legal_results,
    result_keys,
    search_side,
)
from board_rules.moves import Board
from board_rules.position import CHECKERS
from board_rules.reach import sample_results
from engine import heuristic
from engine.beam import beam_plays
from engine.heuristic import contact, value_parts

OUTPUTS = 7
"""win, win >= 2, win >= 3, win >= 4, lose >= 2, lose >= 3, lose >= 4 (points, before the cube)."""

_FLIP = np.array([0, 4, 5, 6, 1, 2, 3])


def flip(out: np.ndarray) -> np.ndarray:
    """The same outputs seen by the other side (``out``: ``(..., 7)``)."""
    f = out[..., _FLIP].copy()
    f[..., 0] = 1.0 - out[..., 0]
    return f


def equity(out: np.ndarray) -> np.ndarray:
    """Cubeless points per game for the outputs' side, from ``(..., 7)`` outputs."""
    return 2.0 * out[..., 0] - 1.0 + out[..., 1:4].sum(axis=-1) - out[..., 4:7].sum(axis=-1)


def outcome_target(points: int, won: bool | None) -> np.ndarray:
    """The outputs a finished game should have had: ``points`` won (or lost); ``won`` None for a draw."""
    t = np.zeros(OUTPUTS, dtype=np.float32)
    if won is None:
        t[0] = 0.5
        return t
    if won:
        t[0] = 1.0
        t[1 : min(points, 4)] = 1.0
    else:
        t[4 : 4 + min(points, 4) - 1] = 1.0
    return t


# =============================================================================== features


@functools.cache
def _their_numbers(geometry_same: bool) -> np.ndarray:
    """Our point 1..24 (index) -> the opponent's own number for it (their pips to go from there)."""
    if geometry_same:
        return np.array([0] + [((p + 11) % 24) + 1 for p in range(1, 25)], dtype=np.float32)
    return np.array([0] + [25 - p for p in range(1, 25)], dtype=np.float32)


INPUT_SETS = (1, 2)
"""1: the heuristic's score alone; 2: also the terms it is made of (:func:`engine.heuristic.value_parts`)."""

_PART_SCALES = np.array([50.0, 25.0, 10.0] + [25.0] * 10, dtype=np.float32)
"""What each of the heuristic's terms is divided by before its tanh: race, bar, shots, each side's five."""


def feature_count(variant: Variant, inputs: int = 1) -> int:
    """How many inputs the net of ``variant`` reads (``inputs``: its input set, :data:`INPUT_SETS`)."""
    return 24 * 4 * 2 + 4 + (48 if variant.pins else 0) + 5 + (len(_PART_SCALES) if inputs == 2 else 0)


def features(boards: list[Board], variant: Variant, inputs: int = 1) -> np.ndarray:
    """The net's inputs for each board, seen by its owner, who has just played: ``(n, feature_count)``.

    The boards' counts, the heuristic's terms and contact come from ``engine/_heuristic.c`` in one
    call where it was built (:func:`_board_arrays`), else from Python per board; the inputs are the
    same float32 values either way (``tests/test_learned.py``)."""
    return _inputs(_board_arrays(boards, variant, inputs), len(boards), variant, inputs)


def _inputs(arrays, n: int, variant: Variant, inputs: int) -> np.ndarray:
    """:func:`features` from :func:`_board_arrays`'s arrays of ``n`` boards."""
    me, opp, pins, opp_off, touching, value, parts = arrays
    cols = []
    for side in (me[:, 1:25], opp[:, 1:25]):
        cols += [side >= 1, side >= 2, side >= 3, np.maximum(side - 3.0, 0.0) / 2.0]
    cols.append(np.stack([me[:, 25] / 2.0, opp[:, 0] / 2.0, me[:, 0] / 15.0, opp_off / 15.0], axis=1))
    same = variant.geometry == "same"
    mine_pips = (me[:, 1:25] * np.arange(1, 25, dtype=np.float32)).sum(axis=1) + 25.0 * me[:, 25]
    their_pips = (opp[:, 1:25] * _their_numbers(same)[1:]).sum(axis=1) + 25.0 * opp[:, 0]
    if variant.pins:
        pins = pins[:, 1:25]
        cols += [pins == 1, pins == 2]
        # a pinned checker of ours still has its pips to go; so has one of theirs under ours
        mine_pips += (np.arange(1, 25, dtype=np.float32) * (pins == 1)).sum(axis=1)
        their_pips += (_their_numbers(same)[1:] * (pins == 2)).sum(axis=1)
    cols.append(
        np.stack(
            [
                mine_pips / 150.0,
                their_pips / 150.0,
                (their_pips - mine_pips) / 50.0,
                touching,
                np.tanh(value / 50.0),
            ],
            axis=1,
        )
    )
    if inputs == 2:
        cols.append(np.tanh(parts.reshape(n, -1) / _PART_SCALES))
    return np.concatenate([c.reshape(n, -1).astype(np.float32) for c in cols], axis=1)


def _board_arrays(boards: list[Board], variant: Variant, inputs: int):
    """float32 arrays of the boards: ``me``, ``opp``, ``pins`` (None where the game does not pin),
    the opponents' checkers off, contact, the heuristic's value and (input set 2) its terms."""
    n = len(boards)
    if heuristic._compiled is not None and n:
        return _key_arrays(b"".join([b.key() for b in boards]), bytes([b.opp_off for b in boards]), variant, inputs)
    me = np.array([b.me for b in boards], dtype=np.float32).reshape(n, 26)
    opp = np.array([b.opp for b in boards], dtype=np.float32).reshape(n, 26)
    pins = np.array([b.pins for b in boards], dtype=np.float32).reshape(n, 26) if variant.pins else None
    opp_off = np.array([b.opp_off for b in boards], dtype=np.float32)
    theirs = [b.flipped(variant) for b in boards]
    touching = np.array([contact(b, t, variant) for b, t in zip(boards, theirs)], dtype=np.float32)
    scored = [value_parts(b, t, variant, inputs == 2) for b, t in zip(boards, theirs)]
    value = np.array([v for v, _ in scored], dtype=np.float32)
    parts = np.array([p for _, p in scored], dtype=np.float32).reshape(n, -1) if inputs == 2 else None
    return me, opp, pins, opp_off, touching, value, parts


def _key_arrays(keys: bytes, opp_offs: bytes, variant: Variant, inputs: int):
    """:func:`_board_arrays` of boards given as their keys, one after another, and their opponents'
    checkers off (one byte each), by ``engine/_heuristic.c``."""
    n = len(opp_offs)
    key_len = len(keys) // n
    raw = np.frombuffer(keys, dtype=np.uint8).reshape(n, key_len).astype(np.float32)
    terms = np.frombuffer(heuristic.key_terms(keys, opp_offs, variant), dtype=np.float64).reshape(n, -1)
    return (
        raw[:, :26],
        raw[:, 26:52],
        raw[:, 52:78] if key_len == 78 else None,
        np.frombuffer(opp_offs, dtype=np.uint8).astype(np.float32),
        terms[:, 1].astype(np.float32),
        terms[:, 0].astype(np.float32),
        terms[:, 2:].astype(np.float32) if inputs == 2 else None,
    )


# =============================================================================== the net


@dataclass
class Net:
    """One hidden layer (tanh) and seven sigmoid outputs; the weights are numpy arrays."""

    variant: str
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    games: int = 0
    inputs: int = 1
    """Its input set (:data:`INPUT_SETS`)."""

    @classmethod
    def new(cls, variant: Variant, hidden: int, rng: np.random.Generator, inputs: int = 1) -> Net:
        n = feature_count(variant, inputs)
        return cls(
            variant.name,
            (rng.standard_normal((n, hidden)) * (1.0 / np.sqrt(n))).astype(np.float32),
            np.zeros(hidden, dtype=np.float32),
            (rng.standard_normal((hidden, OUTPUTS)) * (1.0 / np.sqrt(hidden))).astype(np.float32),
            np.zeros(OUTPUTS, dtype=np.float32),
            inputs=inputs,
        )

    def features(self, boards: list[Board], variant: Variant) -> np.ndarray:
        """This net's inputs for ``boards`` (:func:`features` of its input set)."""
        return features(boards, variant, self.inputs)

    def hidden(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x @ self.w1 + self.b1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The outputs for inputs ``x`` ``(n, features)``: ``(n, 7)`` probabilities."""
        return 1.0 / (1.0 + np.exp(-(self.hidden(x) @ self.w2 + self.b2)))

    def save(self, path) -> None:
        np.savez_compressed(
            path,
            variant=self.variant,
            w1=self.w1,
            b1=self.b1,
            w2=self.w2,
            b2=self.b2,
            games=self.games,
            inputs=self.inputs,
        )

    @classmethod
    def load(cls, source) -> Net:
        with np.load(source, allow_pickle=False) as z:
            return cls(
                str(z["variant"]),
                z["w1"].astype(np.float32),
                z["b1"].astype(np.float32),
                z["w2"].astype(np.float32),
                z["b2"].astype(np.float32),
                int(z["games"]),
                int(z["inputs"]) if "inputs" in z.files else 1,  # nets saved before input sets had 1
            )


@functools.cache
def shipped(variant_name: str) -> Net | None:
    """The net shipped for ``variant_name`` (``engine/models/<name>.npz``), or None when there is none."""
    ref = resources.files("engine") / "models" / f"{variant_name}.npz"
    if not ref.is_file():
        return None
    with ref.open("rb") as fh:
        return Net.load(fh)


# =============================================================================== choosing a play

PLAY_BUDGET = 2_000
"""Boards a full listing of a roll's plays may visit; past it a depth-first sample is compared."""

SAMPLE_LIMIT = 60
"""How many plays, found depth-first, are compared when a full listing is over budget."""


@dataclass(frozen=True, slots=True)
class Scored:
    """A roll's plays as the move generator gives them, scored for the mover.

    ``results``: ``(legs, final_board, final_side)`` per play; ``x``: the net's inputs;
    ``out``: outputs for the mover ``(n, 7)``, exact where the game is over; ``complete``:
    whether these are all the legal plays.
    """

    results: list
    x: np.ndarray
    out: np.ndarray
    complete: bool

    @property
    def equity(self) -> np.ndarray:
        return equity(self.out)


def rolls_after(position: Position) -> tuple[int, int]:
    """Both sides' rolls played once the side on roll has played this one."""
    rolls = list(position.rolls)
    rolls[0 if position.turn is Side.WHITE else 1] += 1
    return rolls[0], rolls[1]


def score_plays(
    net: Net, position: Position, roll: Roll, budget: int = PLAY_BUDGET, *, sample: bool = True, beam: bool = False
) -> Scored:
    """Every legal play of ``roll`` scored by ``net``; when they are too many to list, a
    depth-first sample of them (``sample``), and with ``beam`` also the plays of a beam search
    ranked by the net (:func:`engine.beam.beam_plays`), or :class:`SearchBudgetExceeded`."""
    try:
        results, complete = legal_results(position, roll, budget=budget), True
    except SearchBudgetExceeded:
        if not sample:
            raise
        results, complete = sample_results(position, roll, limit=SAMPLE_LIMIT), False
        if beam:
            side = position.turn
            seen = {(fs, f.key()) for _, f, fs in results}
            for moves, board in beam_plays(position, roll, functools.partial(key_scores, net)):
                if (side, board.key()) not in seen:
                    seen.add((side, board.key()))
                    results.append(((moves,), board, side))
    v = position.variant
    me = position.turn
    boards = [final if final_side is me else final.flipped(v) for _, final, final_side in results]
    x = net.features(boards, v)
    out = net(x)
    rolls = rolls_after(position)
    for i, (b, (_, final, final_side)) in enumerate(zip(boards, results)):
        if may_have_ended(b):  # its outcome is exact
            ended = final.to_position(position, final_side, me.other, rolls).outcome()
            if ended is not None:
                won = None if ended.winner is None else ended.winner is me
                out[i] = outcome_target(ended.base, won)
    return Scored(results, x, out, complete)


def board_scores(net: Net, boards: list[Board], variant: Variant) -> list[float]:
    """The net's equity of each board for its owner, who has just played, all in one pass."""
    return [float(e) for e in equity(net(net.features(boards, variant)))]


def key_scores(net: Net, keys: bytes, opp_off: int, variant: Variant) -> list[float]:
    """:func:`board_scores` of boards given as their keys without pins (52 bytes each, one after
    another), the opponent having ``opp_off`` checkers off in each (:data:`engine.beam.Scores`)."""
    n = len(keys) // 52
    if not n:
        return []
    if heuristic._compiled is None:
        return board_scores(net, Board.all_from_keys(keys, opp_off), variant)
    x = _inputs(_key_arrays(keys, bytes([opp_off]) * n, variant, net.inputs), n, variant, net.inputs)
    return equity(net(x)).tolist()


def may_have_ended(board: Board) -> bool:
    """Whether the game may be over on ``board``, the mover's view after its play: a side has every
    checker off, or the opponent's mother (on the mover's 1 point) is pinned. Its outcome says."""
    return board.game_over() or (board.pins is not None and board.pins[1] == 2)


def after(position: Position, scored: Scored, i: int) -> Position:
    """The position after the ``i``-th play of ``scored``, the opponent to roll."""
    _, final, final_side = scored.results[i]
    return final.to_position(position, final_side, position.turn.other, rolls_after(position))


def score_positions(net: Net, positions: list[Position], me: Side) -> np.ndarray:
    """``me``'s outputs ``(n, 7)`` in each position, ``me`` having just played (exact where the game is over)."""
    if not positions:
        return np.zeros((0, OUTPUTS), dtype=np.float32)
    v = positions[0].variant
    out = net(net.features([Board.of(p, me) for p in positions], v))
    for i, p in enumerate(positions):
        ended = p.outcome()
        if ended is not None:
            out[i] = outcome_target(ended.base, None if ended.winner is None else ended.winner is me)
    return out


# =============================================================================== one ply deeper

ROLLS = tuple((a, b) for a in range(1, 7) for b in range(a, 7))
"""The 21 distinct rolls; a non-double comes 2 times in 36, a double once."""


def reply_values(net: Net, positions: list[Position], budget: int = PLAY_BUDGET) -> np.ndarray:
    """The equity of the side that has just played in each position, one ply deeper than
    :func:`score_positions`: the mean over the opponent's 21 rolls of the opponent's best reply
    by the net, seen from the side that played (gnubg's 1-ply).

    A finished game is worth its outcome. A roll whose replies are too many to list within
    ``budget`` boards (an escalated gul-bara double) is answered by the plays of a beam search
    ranked by the heuristic (:data:`REPLY_BEAM` boards kept after each die), the best of them by
    the net; where the beam finds none, the roll counts at the position's own 0-ply value.
    Every reply of every position is scored by one pass of the net. Where the compiled search
    lists the replies (plakoto, and the games that block without hitting), they are read as
    board keys, with no board objects, and the same values.
    """
    if not positions:
        return np.zeros(0, dtype=np.float32)
    v = positions[0].variant
    me = positions[0].turn.other
    flat = equity(score_positions(net, positions, me)).astype(np.float64)  # also every finished game's value
    first_board = Board.of(positions[0])  # whether the compiled search takes this game (each roll asks its limits)
    keyed = heuristic._compiled is not None and (
        compiled_pin_rules(v, first_board) is not None or compiled_rules(v, first_board, 15, 0) is not None
    )
    boards: list = []  # the replies' boards (their keys where keyed), each seen by the opponent
    offs = bytearray()
    ends: list[tuple[int, np.ndarray]] = []  # (reply, the outputs of its finished game)
    segments: list[tuple[int, int, int, int]] = []  # (position, weight, first reply or -1, replies)
    finished = np.array([p.outcome() is not None for p in positions])
    for i, p in enumerate(positions):
        if finished[i]:
            continue
        them = p.turn
        start = Board.of(p) if keyed else None
        played = p.rolls[0 if them is Side.WHITE else 1]
        for a, b in ROLLS:
            weight = 1 if a == b else 2
            first = len(boards)
            try:
                if keyed and not v.passes_unplayed(a, b, played):
                    seqs = v.dice_sequences(a, b, played)
                    found, _, _ = search_side(v, start.copy(), seqs, v.head_limit(a, b, played), Budget(budget))
                    _add_keys(boards, offs, ends, found, start, p, me)
                elif keyed and (finals := result_keys(p, Roll(a, b), budget)) is not None:
                    _add_finals(boards, offs, ends, finals, p, me)  # numbers passed on (gul-bara)
                else:
                    for _, final, final_side in legal_results(p, Roll(a, b), budget=budget):
                        _add_reply(boards, offs, ends, final if final_side is them else final.flipped(v), p, me, keyed)
            except SearchBudgetExceeded:
                del boards[first:]
                del offs[first:]
                ends = [e for e in ends if e[0] < first]
                for final in _beam_replies(p, Roll(a, b)):
                    _add_reply(boards, offs, ends, final, p, me, keyed)
                if len(boards) == first:
                    segments.append((i, weight, -1, 0))
                    continue
            segments.append((i, weight, first, len(boards) - first))
    if not boards:
        out = np.zeros((0, OUTPUTS), dtype=np.float32)
    elif keyed:
        out = net(_inputs(_key_arrays(b"".join(boards), bytes(offs), v, net.inputs), len(boards), v, net.inputs))
    else:
        out = net(net.features(boards, v))
    for at, target in ends:
        out[at] = target
    theirs = equity(out).astype(np.float64)
    total = np.zeros(len(positions))
    for i, weight, first, n in segments:
        total[i] += weight * (flat[i] if first < 0 else -theirs[first : first + n].max())
    return np.where(finished, flat, total / 36.0).astype(np.float32)


REPLY_BEAM = 3
"""Boards the beam keeps after each die of a reply too big to list (:func:`reply_values`)."""


def _beam_replies(position: Position, roll: Roll) -> list[Board]:
    """The distinct boards, seen by the side on roll, that a beam ranked by the heuristic ends
    with for ``roll``: the replies :func:`reply_values` compares for an escalated double."""
    seen: dict[bytes, Board] = {}
    for _, board in beam_plays(position, roll, heuristic.key_values, width=REPLY_BEAM):
        seen.setdefault(board.key(), board)
    return list(seen.values())


def _add_keys(boards: list, offs: bytearray, ends: list, found, start: Board, position: Position, me: Side) -> None:
    """Append the replies the compiled search ``found`` (board keys, seen by the side that
    replied) to :func:`reply_values`' lists, noting those that end the game."""
    pins = start.pins is not None
    for key in found:
        if key[0] == CHECKERS or (pins and key[53] == 2):  # all off, or the mother pinned: it may be over
            final = Board.from_key(key, pins, start.opp_off)
            _end(ends, len(boards), final.to_position(position, me.other, me, rolls_after(position)), me.other)
        boards.append(key)
    offs.extend(bytes([start.opp_off]) * len(found))


def _add_finals(boards: list, offs: bytearray, ends: list, finals, position: Position, me: Side) -> None:
    """Append the replies :func:`board_rules.movegen.result_keys` gave (keys seen by the side that
    replied, with their opponent's checkers off) to :func:`reply_values`' lists, noting those that end
    the game."""
    for key, opp_off in finals:
        if key[0] == CHECKERS or opp_off == CHECKERS:  # all off: it is over
            final = Board.from_key(key, False, opp_off)
            _end(ends, len(boards), final.to_position(position, me.other, me, rolls_after(position)), me.other)
        boards.append(key)
    offs.extend(bytes(opp_off for _, opp_off in finals))


def _add_reply(boards: list, offs: bytearray, ends: list, board: Board, position: Position, me: Side, keyed: bool):
    """Append one reply ``board`` (seen by the side that replied) to :func:`reply_values`' lists."""
    if may_have_ended(board):
        _end(ends, len(boards), board.to_position(position, me.other, me, rolls_after(position)), me.other)
    boards.append(board.key() if keyed else board)
    offs.append(board.opp_off)


def _end(ends: list, at: int, position: Position, them: Side) -> None:
    """Note the reply ``at`` as a finished game, if ``position`` (after it) is one."""
    ended = position.outcome()
    if ended is not None:
        ends.append((at, outcome_target(ended.base, None if ended.winner is None else ended.winner is them)))
