"""The teaching evaluator: the best play for a roll, and the plays ranked.

Owns :func:`best_play`, :func:`rank_plays` and :func:`candidate_plays`. Plays are
ranked one ply deep over :func:`board_rules.movegen.legal_plays` by the first of:
gnubg's neural net (0-ply; backgammon and portes, when the optional ``gnubg_nn``
imports), the game's learned net (:mod:`engine.learned`, where it beat the heuristic),
and the project's heuristic (:func:`engine.heuristic.score_position`). It decides no rule.
Imports ``board_rules`` and ``engine`` (and ``gnubg_nn``, lazily) only.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from board_rules import Play, Position, Roll, Side
from board_rules.movegen import SearchBudgetExceeded, legal_plays, legal_results
from board_rules.moves import checker_moves, play_of
from board_rules.notation import canonical_moves
from board_rules.reach import sample_results
from engine import learned
from engine.beam import beam_plays
from engine.heuristic import key_values, score_position, value
from engine.learned import PLAY_BUDGET, SAMPLE_LIMIT, may_have_ended, rolls_after

GNUBG_VARIANTS = ("backgammon", "portes")
"""Variants ranked by gnubg's evaluation when gnubg-nn is installed."""


@dataclass(frozen=True, slots=True)
class RankedPlay:
    """One legal play, its resulting position and its score for the mover (higher is better).

    ``source`` is ``"gnubg"`` or ``"learned"`` (``score`` is the cubeless equity, in
    points per game) or ``"heuristic"`` (the heuristic's pips-like units).
    """

    play: Play
    position: Position
    score: float
    source: str
    ply: int = 0
    """1 where the score looks one ply deeper (:data:`LOOKAHEAD_GAMES`); such plays are ranked first."""


# =============================================================================== the legal plays


def _sampled(position: Position, roll: Roll, limit: int) -> list[tuple[Play, Position]]:
    """Up to ``limit`` legal plays found depth-first (:func:`board_rules.reach.sample_results`)."""
    side = position.turn
    rolls = rolls_after(position)
    out: list[tuple[Play, Position]] = []
    seen: set[Position] = set()
    for legs, final, final_side in sample_results(position, roll, limit=limit):
        after = final.to_position(position, final_side, side.other, rolls)
        if after not in seen:
            seen.add(after)
            out.append((play_of(legs), after))
    return out


def candidate_plays(
    position: Position, roll: Roll, net: learned.Net | None = None
) -> tuple[list[tuple[Play, Position]], bool]:
    """The legal plays to compare, and whether they are all of them.

    Lists every legal play when that takes at most :data:`PLAY_BUDGET` boards of search.
    Past it (an escalated gul-bara double: up to 24 checker moves and over a million
    plays) it returns ``False`` with a bounded set instead: about :data:`SAMPLE_LIMIT`
    legal plays found depth-first by :func:`board_rules.reach.sample_results`, plus the
    plays a beam search finds (:data:`engine.beam.BEAM_WIDTH` boards kept after each die, ranked by
    the heuristic) and, given the game's ``net``, the plays of a second beam ranked by the
    net. Every play offered is legal; a better one may exist among those not searched.
    """
    try:
        return legal_plays(position, roll, budget=PLAY_BUDGET), True
    except SearchBudgetExceeded:
        return _bounded(position, roll, net), False


def _bounded(position: Position, roll: Roll, net: learned.Net | None = None) -> list[tuple[Play, Position]]:
    """The bounded set :func:`candidate_plays` compares when a full listing is over budget."""
    out = _sampled(position, roll, SAMPLE_LIMIT)
    seen = {after for _, after in out}
    beams = _beam(position, roll)
    if net is not None:
        beams += _beam(position, roll, functools.partial(_net_scores, net))
    for play, after in beams:
        if after not in seen:
            seen.add(after)
            out.append((play, after))
    return out


def _net_scores(net: learned.Net, keys: bytes, opp_off: int, v) -> list[float]:
    """The net's equity of each board for its owner, all in one pass (a beam ranked by the net)."""
    return learned.key_scores(net, keys, opp_off, v)


def random_play(position: Position, roll: Roll, rng: random.Random) -> tuple[Play, Position]:
    """A legal play chosen at random (among a depth-first sample when the plays are too many to list)."""
    try:
        options = legal_plays(position, roll, budget=PLAY_BUDGET)
    except SearchBudgetExceeded:
        options = _sampled(position, roll, 20)
    return options[rng.randrange(len(options))]


def _beam(position: Position, roll: Roll, scores=key_values) -> list[tuple[Play, Position]]:
    """The plays :func:`engine.beam.beam_plays` builds, ranked after each die by ``scores``
    (:data:`engine.beam.Scores`; the heuristic's unless given), one per resulting position: each a
    legal play."""
    side = position.turn
    rolls = rolls_after(position)
    found: dict[Position, Play] = {}
    for moves, b in beam_plays(position, roll, scores):
        after = b.to_position(position, side, side.other, rolls)
        if after not in found:
            found[after] = play_of([moves])
    return [(play, after) for after, play in found.items()]


# =============================================================================== gnubg


@functools.cache
def _gnubg() -> ModuleType | None:
    try:
        import gnubg_nn
    except ImportError:
        return None
    return gnubg_nn


def gnubg_available() -> bool:
    """True when gnubg-nn can be imported (backgammon and portes are then ranked by gnubg)."""
    return _gnubg() is not None


def _halves(position: Position, side: Side) -> tuple[tuple[int, ...], tuple[int, ...]]:
    from board_rules.ids import halves

    a, b = halves(position, side)
    return tuple(a), tuple(b)


def _gnubg_scores(position: Position, roll: Roll, options: list[tuple[Play, Position]]) -> list[float] | None:
    """gnubg's equity for the mover after each play, or None when gnubg cannot rank them all."""
    gnubg = _gnubg()
    if gnubg is None:
        return None
    side = position.turn
    mover, other = _halves(position, side)
    try:
        _, ranked = gnubg.best_move([list(other), list(mover)], roll.d1, roll.d2, list=1)
    except Exception:  # pragma: no cover - gnubg-nn refusing a board is not ours to crash on
        return None
    # each ranked entry is (position key, checker moves, probabilities, equity for the mover);
    # the key decodes to the two halves after the play, the mover's first (the board as the
    # opponent, now on roll, sees it); the other order is tried too, should a version differ
    decoded = [(gnubg.board_from_position_key(entry[0]), float(entry[-1])) for entry in ranked]
    wanted = [_halves(after, side) for _, after in options]
    for flip in (False, True):
        equity = {((b, a) if flip else (a, b)): eq for (a, b), eq in decoded}
        equity = {(tuple(a), tuple(b)): eq for (a, b), eq in equity.items()}
        if all(key in equity for key in wanted):
            return [equity[key] for key in wanted]
    return None


# =============================================================================== the API

SOURCES = ("gnubg", "learned", "heuristic")
"""The evaluators, strongest first; ``by=`` picks one (falling back down the list when it cannot rank)."""


LEARNED_BEATS_HEURISTIC = ("portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy")
"""Games whose shipped net won most of its games against the heuristic (``make bench-evaluator``):
the net ranks their plays by default (every taught game now; ``by="heuristic"`` still asks it)."""


LOOKAHEAD_GAMES = ("plakoto", "gul-bara")
"""Games whose net's best plays are compared one ply deeper (:func:`engine.learned.reply_values`):
where that won more games against the heuristic than the net alone (``make bench-evaluator``)."""

LOOKAHEAD_PLAYS = 4
"""At most this many plays, the net's best, are looked at one ply deeper."""

LOOKAHEAD_WINDOW = 0.16
"""... and only those within this much equity of the net's best (gnubg's 0-ply move filter)."""


def _deeper(equities, include: int | None = None) -> list[int]:
    """Which plays (indices into ``equities``, the net's) to look at one ply deeper: the
    :data:`LOOKAHEAD_PLAYS` best within :data:`LOOKAHEAD_WINDOW` of the best, and ``include``."""
    order = sorted(range(len(equities)), key=lambda i: -equities[i])
    top = equities[order[0]]
    chosen = [i for i in order[:LOOKAHEAD_PLAYS] if equities[i] >= top - LOOKAHEAD_WINDOW]
    if include is not None and include not in chosen:
        chosen.append(include)
    return chosen


def evaluator(variant_name: str, by: str | None = None) -> str:
    """Which evaluator ranks ``variant_name``'s plays: ``by`` when given (one of :data:`SOURCES`),
    else gnubg where it plays the game, the game's net where it beat the heuristic
    (:data:`LEARNED_BEATS_HEURISTIC`), else the heuristic. Raises ValueError for an unknown ``by``."""
    if by is not None:
        if by not in SOURCES:
            raise ValueError(f"by: {by!r} must be one of {list(SOURCES)}")
        return by
    if variant_name in GNUBG_VARIANTS and gnubg_available():
        return "gnubg"
    if variant_name in LEARNED_BEATS_HEURISTIC and learned.shipped(variant_name) is not None:
        return "learned"
    return "heuristic"


def rank_plays(
    position: Position, roll: Roll, n: int | None = None, *, by: str | None = None, include: Position | None = None
) -> list[RankedPlay]:
    """The legal plays of ``roll`` from ``position``, best first (at most ``n`` of them).

    Ranked by :func:`evaluator`'s choice, or by ``by`` (one of :data:`SOURCES`) when
    given. In :data:`LOOKAHEAD_GAMES` the net's best plays are scored one ply deeper and
    ranked first (``ply`` 1), then the rest by the net; ``include``, a position a play
    leaves (the play a player made), is scored as deep as the best. In gul-bara, numbers
    passed on are played by the side they pass to: one play per first leg, worth what that
    side's choices leave (:func:`_by_first_leg`), and ``include``'s with its first leg's
    worth. A roll with no legal play gives one entry, the empty play. Over-budget rolls
    compare a sample (see :func:`candidate_plays`). Raises
    :class:`board_rules.errors.InvalidRollError` for bad dice.
    """
    options, _ = candidate_plays(position, roll, _net_of(position, by))
    return _rank(position, roll, options, n, by, include)


def _net_of(position: Position, by: str | None) -> learned.Net | None:
    """The net that ranks ``position``'s plays by :func:`evaluator`'s choice, or None."""
    v = position.variant.name
    return learned.shipped(v) if evaluator(v, by) == "learned" else None


def _rank(
    position: Position,
    roll: Roll,
    options: list[tuple[Play, Position]],
    n: int | None,
    by: str | None = None,
    include: Position | None = None,
) -> list[RankedPlay]:
    me = position.turn
    v = position.variant.name
    by = evaluator(v, by)
    scores = None
    source = "heuristic"
    if by == "gnubg" and v in GNUBG_VARIANTS and len(options) > 1:
        scores = _gnubg_scores(position, roll, options)
        if scores is not None:
            source = "gnubg"
        else:
            by = "learned"
    net = learned.shipped(v) if by == "learned" else None
    plies = [0] * len(options)
    if scores is None and net is not None:
        scores = [float(e) for e in learned.equity(learned.score_positions(net, [a for _, a in options], me))]
        source = "learned"
        if v in LOOKAHEAD_GAMES and len(options) > 1:
            keep = next((i for i, (_, a) in enumerate(options) if a == include), None)
            chosen = _deeper(scores, keep)
            for i, value in zip(chosen, learned.reply_values(net, [options[i][1] for i in chosen])):
                scores[i], plies[i] = float(value), 1
    if scores is None:
        scores = [score_position(after, me) for _, after in options]
    if any(play.then for play, _ in options):
        keep = [i for i, (_, a) in enumerate(options) if a == include]
        picked, scores = _by_first_leg([play.legs for play, _ in options], scores, keep)
        options, plies = [options[i] for i in picked], [plies[i] for i in picked]
    ranked = sorted(
        (RankedPlay(p, after, sc, source, ply) for (p, after), sc, ply in zip(options, scores, plies)),
        key=lambda r: (-r.ply, -r.score),
    )
    _ties_by_writing(ranked)
    return ranked if n is None else ranked[:n]


def _ties_by_writing(ranked: list[RankedPlay]) -> None:
    """Order each run of plays tied on depth and score by how the play is written (in place), so a
    ranking never depends on the order the move generator found them; only tied plays are written."""
    i = 0
    while i < len(ranked):
        j = i + 1
        while j < len(ranked) and (ranked[j].ply, ranked[j].score) == (ranked[i].ply, ranked[i].score):
            j += 1
        if j - i > 1:
            ranked[i:j] = sorted(ranked[i:j], key=lambda r: str(r.play))
        i = j


def _by_first_leg(plays: list[tuple], scores: list[float], keep: Sequence[int] = ()) -> tuple[list[int], list[float]]:
    """Gul-bara's numbers passed on are played by the side they pass to, so a play is worth what
    its first leg (the mover's own moves) is worth when each later leg is chosen by its side: the
    opponent's (``then[0]``, ``then[2]``, ...) the worst for the mover among the plays that share
    the legs before it, the mover's the best. ``plays`` are each play's legs (:attr:`Play.legs`, or
    any one value per leg alike for the same moves) and ``scores`` the mover's, one per play. Returns
    one play per first leg (the one those choices lead to) and ``keep``'s, with each its first leg's worth."""
    values = list(scores)

    def worth(members: list[int], depth: int) -> tuple[float, int]:
        ends = [i for i in members if len(plays[i]) == depth]
        nexts: dict[tuple, list[int]] = {}
        for i in members:
            if len(plays[i]) > depth:
                nexts.setdefault(plays[i][depth], []).append(i)
        options = [(values[i], i) for i in ends] + [worth(m, depth + 1) for m in nexts.values()]
        # the opponent plays the odd legs (then[0] is leg 1): the mover's worst; the mover the even ones
        if depth % 2 == 1:
            return min(options, key=lambda o: (o[0], o[1]))
        return max(options, key=lambda o: (o[0], -o[1]))

    firsts: dict[tuple, list[int]] = {}
    for i, legs in enumerate(plays):
        firsts.setdefault(legs[0], []).append(i)
    chosen: dict[int, float] = {}
    for members in firsts.values():
        v, i = worth(members, 1)
        chosen[i] = v
        for k in keep:
            if k in members:
                chosen[k] = v
    picked = sorted(chosen)
    return picked, [chosen[i] for i in picked]


def first_legs(ranked: list[RankedPlay]) -> list[RankedPlay]:
    """``ranked`` with one play per first leg, the first of each: what a player chooses where
    gul-bara's numbers pass on (:func:`rank_plays` adds ``include``'s play beside its first leg's).
    Elsewhere every play is its own first leg, and ``ranked`` is returned as it is."""
    if not any(r.play.then for r in ranked):
        return ranked
    seen: set = set()
    out = []
    for r in ranked:
        if r.play.moves not in seen:
            seen.add(r.play.moves)
            out.append(r)
    return out


def _best_by_heuristic(position: Position, roll: Roll) -> list[tuple[Play, Position]] | None:
    """The plays the heuristic scores highest (ties, in :func:`rank_plays`'s order), or None.

    The same scores as :func:`rank_plays`, computed on the move generator's raw boards so
    that only the winners become :class:`Position` objects. None when the plays are too
    many to list (then :func:`rank_plays` compares a bounded set).
    """
    try:
        results = legal_results(position, roll, budget=PLAY_BUDGET)
    except SearchBudgetExceeded:
        return None
    v = position.variant
    me = position.turn
    rolls = rolls_after(position)
    scores: list[float] = []
    afters: list[Position | None] = []
    for _, final, final_side in results:
        mine = final if final_side is me else final.flipped(v)
        after = None
        if may_have_ended(mine):  # score it as a Position, whose outcome says
            after = final.to_position(position, final_side, me.other, rolls)
            scores.append(score_position(after, me))
        else:
            scores.append(value(mine, mine.flipped(v), v))
        afters.append(after)
    out = []
    for i in _winners(results, scores):
        legs, final, final_side = results[i]
        after = afters[i] or final.to_position(position, final_side, me.other, rolls)
        out.append((play_of(legs), after))
    out.sort(key=lambda pa: str(pa[0]))
    return out


def _winners(results: list, scores: list[float]) -> list[int]:
    """Which of the move generator's ``results`` score best by ``scores`` (the mover's), each play
    worth its first leg's worth where numbers pass on (:func:`_by_first_leg`)."""
    if any(len(legs) > 1 for legs, _, _ in results):
        # each leg as its play writes it, worked out once: an escalation's results share their legs
        canon: dict[tuple, tuple] = {}
        for legs, _, _ in results:
            for leg in legs:
                if leg not in canon:
                    canon[leg] = canonical_moves(checker_moves(leg))
        picked, worth = _by_first_leg([tuple(canon[leg] for leg in legs) for legs, _, _ in results], scores)
    else:
        picked, worth = list(range(len(scores))), scores
    best = max(worth)
    return [i for i, x in zip(picked, worth) if x == best]


def _best_by_net(position: Position, roll: Roll, net: learned.Net) -> list[tuple[Play, Position]] | None:
    """The plays the learned net scores highest (ties, in :func:`rank_plays`'s order), or None when
    the plays are too many to list. Only the winners become :class:`Position` objects."""
    try:
        scored = learned.score_plays(net, position, roll, budget=PLAY_BUDGET, sample=False)
    except SearchBudgetExceeded:
        return None
    eq = [float(e) for e in scored.equity]
    if position.variant.name in LOOKAHEAD_GAMES and len(eq) > 1:
        if any(len(legs) > 1 for legs, _, _ in scored.results):  # numbers pass on: each side plays its own
            options = [
                (play_of(legs), learned.after(position, scored, i)) for i, (legs, _, _) in enumerate(scored.results)
            ]
            ranked = _rank(position, roll, options, None, "learned")
            return [(r.play, r.position) for r in ranked if (r.ply, r.score) == (ranked[0].ply, ranked[0].score)]
        chosen = _deeper(eq)
        if len(chosen) > 1:  # one play alone within the window needs no deeper look
            afters = [learned.after(position, scored, i) for i in chosen]
            values = [float(x) for x in learned.reply_values(net, afters)]
            best = max(values)
            out = [(play_of(scored.results[i][0]), a) for i, a, x in zip(chosen, afters, values) if x == best]
            out.sort(key=lambda pa: str(pa[0]))
            return out
    out = [(play_of(scored.results[i][0]), learned.after(position, scored, i)) for i in _winners(scored.results, eq)]
    out.sort(key=lambda pa: str(pa[0]))
    return out


def _top(position: Position, roll: Roll, by: str | None = None) -> list[tuple[Play, Position]]:
    """The best plays (all tied for first), the way :func:`rank_plays` orders them."""
    v = position.variant.name
    by = evaluator(v, by)
    if by == "gnubg" and v in GNUBG_VARIANTS and gnubg_available():
        ranked = rank_plays(position, roll, by=by)
    else:
        net = learned.shipped(v) if by == "learned" else None
        fast = _best_by_net(position, roll, net) if net is not None else _best_by_heuristic(position, roll)
        if fast is not None:
            return fast
        ranked = _rank(position, roll, _bounded(position, roll, net), None, by)
    return [(r.play, r.position) for r in ranked if (r.ply, r.score) == (ranked[0].ply, ranked[0].score)]


def best_play(position: Position, roll: Roll, *, by: str | None = None) -> Play | None:
    """The best legal play of ``roll`` from ``position`` (:func:`rank_plays`'s first);
    None when no play is legal (the turn passes)."""
    best = _top(position, roll, by)[0][0]
    return best if best else None


def choose(
    position: Position, roll: Roll, rng: random.Random | None = None, *, by: str | None = None
) -> tuple[Play, Position]:
    """The best play and its resulting position (ties broken by ``rng``, if given)."""
    top = _top(position, roll, by)
    return top[0] if rng is None or len(top) == 1 else rng.choice(top)
