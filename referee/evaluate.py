"""The teaching evaluator: the best play for a roll, and the plays ranked.

Owns :func:`best_play`, :func:`rank_plays`, :func:`candidate_plays` and the project's
own per-variant heuristic (:func:`score_position`: race, contact, blocks and stacking,
in pips-like units for the side that has just played; ``docs/rules-notes.md``).
Backgammon and portes are ranked by gnubg's neural net (0-ply) when the optional
``gnubg_nn`` module imports; everything else by the heuristic, one ply deep over
:func:`board_rules.movegen.legal_plays`. It decides no rule. Imports ``board_rules``
(and ``gnubg_nn``, lazily) only.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from types import ModuleType

from board_rules import Play, Position, Roll, Side
from board_rules.movegen import SearchBudgetExceeded, legal_plays, legal_results
from board_rules.moves import Board, CheckerMoves, play_of
from board_rules.reach import sample_results

GNUBG_VARIANTS = ("backgammon", "portes")
"""Variants ranked by gnubg's evaluation when gnubg-nn is installed."""

PLAY_BUDGET = 2_000
"""Boards a full listing of the legal plays may visit before the evaluator samples instead."""

SAMPLE_LIMIT = 60
"""How many plays, found depth-first, are compared when a full listing is over budget."""

BEAM_WIDTH = 10
"""Boards the beam search keeps after each die of an over-budget roll."""


@dataclass(frozen=True, slots=True)
class RankedPlay:
    """One legal play, its resulting position and its score for the mover (higher is better).

    ``source`` is ``"gnubg"`` (``score`` is gnubg's cubeless equity) or ``"heuristic"``.
    """

    play: Play
    position: Position
    score: float
    source: str


# =============================================================================== the legal plays


def _rolls_after(position: Position) -> tuple[int, int]:
    rolls = list(position.rolls)
    rolls[0 if position.turn is Side.WHITE else 1] += 1
    return rolls[0], rolls[1]


def _sampled(position: Position, roll: Roll, limit: int) -> list[tuple[Play, Position]]:
    """Up to ``limit`` legal plays found depth-first (:func:`board_rules.reach.sample_results`)."""
    side = position.turn
    rolls = _rolls_after(position)
    out: list[tuple[Play, Position]] = []
    seen: set[Position] = set()
    for legs, final, final_side in sample_results(position, roll, limit=limit):
        after = final.to_position(position, final_side, side.other, rolls)
        if after not in seen:
            seen.add(after)
            out.append((play_of(legs), after))
    return out


def candidate_plays(position: Position, roll: Roll) -> tuple[list[tuple[Play, Position]], bool]:
    """The legal plays to compare, and whether they are all of them.

    Lists every legal play when that takes at most :data:`PLAY_BUDGET` boards of search.
    Past it (an escalated gul-bara double: up to 24 checker moves and over a million
    plays) it returns ``False`` with a bounded set instead: about :data:`SAMPLE_LIMIT`
    legal plays found depth-first by :func:`board_rules.reach.sample_results`, plus the
    plays a beam search finds (:data:`BEAM_WIDTH` boards kept after each die, ranked by
    the heuristic), each confirmed legal by :func:`board_rules.legality.check`. Every play
    offered is legal; a better one may exist among those not searched.
    """
    try:
        return legal_plays(position, roll, budget=PLAY_BUDGET), True
    except SearchBudgetExceeded:
        return _bounded(position, roll), False


def _bounded(position: Position, roll: Roll) -> list[tuple[Play, Position]]:
    """The bounded set :func:`candidate_plays` compares when a full listing is over budget."""
    out = _sampled(position, roll, SAMPLE_LIMIT)
    seen = {after for _, after in out}
    for play, after in _beam(position, roll):
        if after not in seen:
            seen.add(after)
            out.append((play, after))
    return out


def random_play(position: Position, roll: Roll, rng: random.Random) -> tuple[Play, Position]:
    """A legal play chosen at random (among a depth-first sample when the plays are too many to list)."""
    try:
        options = legal_plays(position, roll, budget=PLAY_BUDGET)
    except SearchBudgetExceeded:
        options = _sampled(position, roll, 20)
    return options[rng.randrange(len(options))]


def _beam(position: Position, roll: Roll) -> list[tuple[Play, Position]]:
    """Plays built one checker move at a time, keeping the :data:`BEAM_WIDTH` best boards after each die.

    Each checker move is made by the rules' own single-move generator
    (:class:`board_rules.moves.CheckerMoves`: where a checker may land, the start and
    head rules, forbidden primes), and only paths that play every die are kept, so every
    result is a legal play (playing all the dice is always the most that can be played).
    A beam that runs out of moves early is dropped: whether numbers then pass to the
    opponent is the rules' business. Not used for plakoto, where a pinned mother can end
    a play early.
    """
    v = position.variant
    if v.pins:
        return []
    side = position.turn
    played = position.rolls[0 if side is Side.WHITE else 1]
    head = v.head_limit(roll.d1, roll.d2, played)
    start = Board.of(position)
    rolls = _rolls_after(position)
    found: dict[Position, Play] = {}
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
            beam = sorted(nxt.values(), key=lambda bm: -_value(bm[0], bm[0].flipped(v), v))[:BEAM_WIDTH]
        for b, moves in beam:
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


# =============================================================================== the heuristic


def _closed(view: Board, variant) -> list[bool]:
    """Per point 1..24 (index 0 unused), whether it is closed to the view owner's checkers.

    Two opposing checkers close a point; one does in the blocking games (fevga, gul-bara,
    long nardy); in plakoto so does an own checker pinned there.
    """
    opp = view.opp
    if view.pins is not None:
        pins = view.pins
        return [False] + [opp[x] >= 2 or pins[x] == 1 for x in range(1, 25)]
    least = 1 if variant.blocks else 2
    return [False] + [opp[x] >= least for x in range(1, 25)]


def _holds(view: Board, variant, x: int) -> bool:
    """Whether the view owner holds point ``x`` against the opponent."""
    n = view.me[x]
    if variant.blocks:
        return n >= 1
    return n >= 2


def _pips(view: Board) -> int:
    total = 25 * view.me[25]
    for i in range(1, 25):
        total += i * view.me[i]
        if view.pins is not None and view.pins[i] == 1:
            total += i
    return total


def _prime(view: Board, variant) -> int:
    best = run = 0
    for x in range(1, 25):
        if _holds(view, variant, x):
            run += 1
            best = max(best, run)
        else:
            run = 0
    return best


_ROLLS = [(d1, d2) for d1 in range(1, 7) for d2 in range(d1, 7)]  # 21 rolls; a non-double counts twice


def _shots(mine: Board, theirs: Board, closed_theirs: list[bool], variant) -> float:
    """The expected cost of ``mine``'s blots being hit (or pinned) with the opponent's next roll.

    Direct shots and combinations (both dice, or a double's steps), each intermediate
    landing point open; the cost of a hit is the pips the checker loses (in plakoto: a
    pinned checker, and the mother, our last checker on our start, the game).
    """
    pins = mine.pins
    # a lone checker; one sitting on a pinned opposing checker (plakoto) is safe
    blots = [p for p in range(1, 25) if mine.me[p] == 1 and not (pins is not None and pins[p] == 2)]
    if not blots:
        return 0.0
    f = theirs  # the opponent's view of the same board
    conv = _opp_point_map(variant)
    open_ = [not c for c in closed_theirs]
    sources = [q for q in range(1, 26) if f.me[q] > 0 and (q < 25 or variant.hits)]
    worst = [0.0] * len(_ROLLS)
    for p in blots:
        t = conv[p]
        loss = float(25 - p) if variant.hits else 10.0 + (25 - p) / 2
        if pins is not None and p == 24:
            loss += 60.0
        for q in sources:
            dist = q - t
            if not 0 < dist <= 24:
                continue
            for i, (d1, d2) in enumerate(_ROLLS):
                if worst[i] >= loss:
                    continue
                if d1 == dist or d2 == dist:
                    worst[i] = loss
                elif d1 != d2:
                    if d1 + d2 == dist and (open_[q - d1] or open_[q - d2]):
                        worst[i] = loss
                elif dist % d1 == 0 and dist // d1 <= 4 and all(open_[q - k * d1] for k in range(1, dist // d1)):
                    worst[i] = loss
    return sum(w * (1 if d1 == d2 else 2) for w, (d1, d2) in zip(worst, _ROLLS)) / 36.0


@functools.cache
def _opp_point_map(variant) -> dict[int, int]:
    """Our own point -> the opponent's own number for it."""
    if variant.geometry == "same":
        return {p: ((p + 11) % 24) + 1 for p in range(1, 25)}
    return {p: 25 - p for p in range(1, 25)}


def _side_terms(view: Board, other: Board, closed_other: list[bool], variant) -> float:
    """What one side has (from its own ``view``), apart from the race.

    ``other`` is the same board from the opponent's view and ``closed_other`` the points
    closed to the opponent's checkers (:func:`_closed` of ``other``).
    """
    s = 0.0
    me = view.me
    s += 3.0 * me[0]  # borne off
    if variant.hits or variant.pins:
        for x in range(1, 25):
            if me[x] >= 2:
                s += 2.0 + (1.5 if x <= 6 else 0.0) + (1.0 if x == 7 else 0.0)
        s += 1.5 * _prime(view, variant) ** 1.5
        # anchors deep in the opponent's home
        s += sum(2.0 for x in range(19, 25) if me[x] >= 2)
    else:
        held = sum(1 for x in range(1, 25) if me[x] >= 1)
        s += 1.2 * held
        s += 1.0 * _prime(view, variant) ** 1.5
        for x in range(1, 24):
            if me[x] > 3:
                s -= 0.6 * (me[x] - 3)  # a heavy stack wastes checkers
    if view.pins is not None:
        for x in range(1, 25):
            if view.pins[x] == 2:  # an opposing checker pinned under ours
                s += 10.0 + (40.0 if x == 1 else 0.0) + (4.0 if x <= 6 else 0.0)
            if view.pins[x] == 1:
                s -= 10.0
    # block: points closed in front of each opposing checker (the six it could reach)
    before = [0] * 26  # before[q]: closed points among 1..q-1
    for x in range(1, 26):
        before[x] = before[x - 1] + (1 if x > 1 and closed_other[x - 1] else 0)
    block = 0
    them = other.me
    for q in range(1, 26):
        if them[q]:
            block += them[q] * (before[q] - before[max(1, q - 6)])
    s += 0.35 * block
    return s


def score_position(position: Position, me: Side) -> float:
    """The heuristic value of ``position`` for ``me``, who has just played (higher is better)."""
    outcome = position.outcome()
    if outcome is not None:
        if outcome.winner is None:
            return 0.0
        return (1000.0 + 100.0 * outcome.base) * (1 if outcome.winner is me else -1)
    return _value(Board.of(position, me), Board.of(position, me.other), position.variant)


def _value(mine: Board, theirs: Board, variant) -> float:
    """:func:`score_position` of a board seen by ``mine``'s owner (``theirs``: the same board, other side)."""
    if mine.me[0] == 15:
        return 1000.0
    race = float(_pips(theirs) - _pips(mine))
    closed_mine = _closed(mine, variant)  # closed to our checkers
    closed_theirs = _closed(theirs, variant)
    s = race + _side_terms(mine, theirs, closed_theirs, variant) - _side_terms(theirs, mine, closed_mine, variant)
    if variant.hits:
        s += 8.0 * theirs.me[25] - 8.0 * mine.me[25]
    contact = _contact(mine, theirs, variant)
    if contact and (variant.hits or variant.pins):
        s -= 1.5 * _shots(mine, theirs, closed_theirs, variant)
    if not contact:
        # a pure race: pips and bear-off speed only
        s = 2.0 * race + 4.0 * (mine.me[0] - theirs.me[0])
        s -= 0.5 * sum(mine.me[x] for x in range(7, 25))
    return s


def _contact(mine: Board, theirs: Board, variant) -> bool:
    """Whether the two sides can still meet: some checker of one is behind one of the other."""
    my_back = max(
        (x for x in range(1, 26) if mine.me[x] or (mine.pins is not None and x <= 24 and mine.pins[x] == 1)), default=0
    )
    conv = _opp_point_map(variant)
    if variant.geometry == "same":
        # same direction: the race is over only once both sides' checkers are all home
        return any(mine.me[x] for x in range(7, 25)) or any(theirs.me[x] for x in range(7, 25))
    their_back_in_my_numbering = min(
        (
            conv[q] if q <= 24 else 0
            for q in range(1, 26)
            if theirs.me[q] or (theirs.pins is not None and q <= 24 and theirs.pins[q] == 1)
        ),
        default=25,
    )
    return my_back > their_back_in_my_numbering


# =============================================================================== the API


def rank_plays(position: Position, roll: Roll, n: int | None = None) -> list[RankedPlay]:
    """The legal plays of ``roll`` from ``position``, best first (at most ``n`` of them).

    Backgammon and portes are ranked by gnubg-nn's 0-ply equity when it is installed,
    every other case by :func:`score_position`. A roll with no legal play gives one entry,
    the empty play. Over-budget rolls compare a sample (see :func:`candidate_plays`).
    Raises :class:`board_rules.errors.InvalidRollError` for bad dice.
    """
    options, _ = candidate_plays(position, roll)
    return _rank(position, roll, options, n)


def _rank(position: Position, roll: Roll, options: list[tuple[Play, Position]], n: int | None) -> list[RankedPlay]:
    me = position.turn
    scores = None
    source = "heuristic"
    if position.variant.name in GNUBG_VARIANTS and len(options) > 1:
        scores = _gnubg_scores(position, roll, options)
        if scores is not None:
            source = "gnubg"
    if scores is None:
        scores = [score_position(after, me) for _, after in options]
    ranked = sorted(
        (RankedPlay(p, after, sc, source) for (p, after), sc in zip(options, scores)),
        key=lambda r: (-r.score, str(r.play)),
    )
    return ranked if n is None else ranked[:n]


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
    rolls = _rolls_after(position)
    best: float | None = None
    top: list[tuple] = []
    for legs, final, final_side in results:
        mine = final if final_side is me else final.flipped(v)
        theirs = mine.flipped(v)
        after = None
        if mine.me[0] == 15 or theirs.me[0] == 15 or (mine.pins is not None and mine.pins[1] == 2):
            # the game may be over (all borne off, a mother pinned): score it as a Position
            after = final.to_position(position, final_side, me.other, rolls)
            score = score_position(after, me)
        else:
            score = _value(mine, theirs, v)
        if best is None or score > best:
            best, top = score, [(legs, final, final_side, after)]
        elif score == best:
            top.append((legs, final, final_side, after))
    out = []
    for legs, final, final_side, after in top:
        if after is None:
            after = final.to_position(position, final_side, me.other, rolls)
        out.append((play_of(legs), after))
    out.sort(key=lambda pa: str(pa[0]))
    return out


def _top(position: Position, roll: Roll) -> list[tuple[Play, Position]]:
    """The best plays (all tied for first), the way :func:`rank_plays` orders them."""
    if position.variant.name in GNUBG_VARIANTS and gnubg_available():
        ranked = rank_plays(position, roll)
    else:
        fast = _best_by_heuristic(position, roll)
        if fast is not None:
            return fast
        ranked = _rank(position, roll, _bounded(position, roll), None)
    return [(r.play, r.position) for r in ranked if r.score == ranked[0].score]


def best_play(position: Position, roll: Roll) -> Play | None:
    """The best legal play of ``roll`` from ``position`` (:func:`rank_plays`'s first);
    None when no play is legal (the turn passes)."""
    best = _top(position, roll)[0][0]
    return best if best else None


def choose(position: Position, roll: Roll, rng: random.Random | None = None) -> tuple[Play, Position]:
    """The best play and its resulting position (ties broken by ``rng``, if given)."""
    top = _top(position, roll)
    return top[0] if rng is None or len(top) == 1 else rng.choice(top)
