"""The project's own heuristic evaluator: race, contact, blocks and stacking, per variant.

Owns :func:`score_position` and :func:`value` (the same on the move generator's raw
boards), in pips-like units for the side that has just played (``docs/rules-notes.md``).
The teacher ranks plays by it where no net is shipped, and the learned nets read it as
one of their inputs. Imports ``board_rules`` only.
"""

from __future__ import annotations

import os
from itertools import accumulate
from operator import mul

from board_rules import Position, Side
from board_rules.moves import Board

try:
    if os.environ.get("TAVLI_PURE_PYTHON"):
        raise ImportError("TAVLI_PURE_PYTHON is set")
    from engine import _heuristic as _compiled
except ImportError:
    _compiled = None


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


def _pips(view: Board) -> int:
    """The owner's pips to bear off, its pinned checkers included."""
    me = view.me
    total = 25 * me[25] + sum(map(mul, _POINTS, me[1:25]))
    if view.pins is not None:
        total += sum(i for i in _POINTS if view.pins[i] == 1)
    return total


_POINTS = range(1, 25)


def _prime(view: Board, variant) -> int:
    """The longest run of points ``view``'s owner holds: one checker holds a point in the blocking
    games, two in the others."""
    least = 1 if variant.blocks else 2
    best = run = 0
    for n in view.me[1:25]:
        if n >= least:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best


_ROLLS = [(d1, d2) for d1 in range(1, 7) for d2 in range(d1, 7)]  # 21 rolls; a non-double counts twice


def _hitting_rolls(dist: int) -> tuple[tuple, tuple, tuple]:
    """The rolls (indices into :data:`_ROLLS`) that can carry a checker ``dist`` pips: with one die;
    with both dice of a non-double ``(i, d1, d2)``, one of the two landing points open; with 2 to 4
    steps of a double ``(i, stops)``, every stop (pips short of the target) open."""
    direct, both, steps = [], [], []
    for i, (d1, d2) in enumerate(_ROLLS):
        if d1 == dist or d2 == dist:
            direct.append(i)
        elif d1 != d2:
            if d1 + d2 == dist:
                both.append((i, d1, d2))
        elif dist % d1 == 0 and dist // d1 <= 4:
            steps.append((i, tuple(range(d1, dist, d1))))
    return tuple(direct), tuple(both), tuple(steps)


_BY_DISTANCE = [_hitting_rolls(dist) for dist in range(25)]


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
    conv = _OPP_POINT_MAPS[variant.geometry == "same"]
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
            direct, both, steps = _BY_DISTANCE[dist]
            for i in direct:
                if worst[i] < loss:
                    worst[i] = loss
            for i, d1, d2 in both:
                if worst[i] < loss and (open_[q - d1] or open_[q - d2]):
                    worst[i] = loss
            for i, stops in steps:
                if worst[i] < loss:
                    for k in stops:
                        if not open_[q - k]:
                            break
                    else:
                        worst[i] = loss
    return sum(w * (1 if d1 == d2 else 2) for w, (d1, d2) in zip(worst, _ROLLS)) / 36.0


_OPP_POINT_MAPS = ({p: 25 - p for p in range(1, 25)}, {p: ((p + 11) % 24) + 1 for p in range(1, 25)})
"""Our own point -> the opponent's own number for it, by ``variant.geometry == "same"``."""


_MADE = [0.0] + [2.0 + (1.5 if x <= 6 else 0.0) + (1.0 if x == 7 else 0.0) for x in range(1, 25)]
"""What a point made is worth in the hitting games: more in the home board, and the bar point."""


def _side_terms(view: Board, other: Board, closed_other: list[bool], variant, parts: list | None = None) -> float:
    """What one side has (from its own ``view``), apart from the race.

    ``other`` is the same board from the opponent's view and ``closed_other`` the points
    closed to the opponent's checkers (:func:`_closed` of ``other``). ``parts``, when
    given, gets the :data:`SIDE_PARTS` terms appended, in that order.
    """
    s = 0.0
    me = view.me
    s += 3.0 * me[0]  # borne off
    if variant.hits or variant.pins:
        made = 0.0
        for x in range(1, 25):
            if me[x] >= 2:
                made += _MADE[x]
        prime = 1.5 * _prime(view, variant) ** 1.5
        # anchors deep in the opponent's home
        shape = sum(2.0 for x in range(19, 25) if me[x] >= 2)
    else:
        made = 1.2 * sum(1 for x in range(1, 25) if me[x] >= 1)
        prime = 1.0 * _prime(view, variant) ** 1.5
        shape = 0.0
        for x in range(1, 24):
            if me[x] > 3:
                shape -= 0.6 * (me[x] - 3)  # a heavy stack wastes checkers
    s += made
    s += prime
    s += shape
    pinned = 0.0
    if view.pins is not None:
        for x in range(1, 25):
            if view.pins[x] == 2:  # an opposing checker pinned under ours
                pinned += 10.0 + (40.0 if x == 1 else 0.0) + (4.0 if x <= 6 else 0.0)
            if view.pins[x] == 1:
                pinned -= 10.0
        s += pinned
    # block: points closed in front of each opposing checker (the six it could reach)
    before = list(accumulate(closed_other, initial=0))  # before[q]: closed points among 1..q-1
    block = 0
    them = other.me
    for q in range(1, 26):
        n = them[q]
        if n:
            block += n * (before[q] - before[q - 6 if q > 7 else 1])
    s += 0.35 * block
    if parts is not None:
        parts += (made, prime, shape, pinned, 0.35 * block)
    return s


SIDE_PARTS = ("points made (or held)", "prime", "anchors (or stacking)", "pins", "block")
"""The terms of one side's :func:`_side_terms`, as :func:`value_parts` gives them."""


def score_position(position: Position, me: Side) -> float:
    """The heuristic value of ``position`` for ``me``, who has just played (higher is better)."""
    outcome = position.outcome()
    if outcome is not None:
        if outcome.winner is None:
            return 0.0
        return (1000.0 + 100.0 * outcome.base) * (1 if outcome.winner is me else -1)
    return value(Board.of(position, me), Board.of(position, me.other), position.variant)


def value(mine: Board, theirs: Board, variant) -> float:
    """:func:`score_position` of a board seen by ``mine``'s owner (``theirs``: the same board, other side)."""
    return value_parts(mine, theirs, variant)[0]


def values(boards: list[Board], variant) -> list[float]:
    """:func:`value` of each board for its owner, in one compiled call where it was built (a beam
    ranks every board it reaches after each die)."""
    if _compiled is None or not boards:
        return [value(b, b.flipped(variant), variant) for b in boards]
    rows = key_terms(b"".join(b.key() for b in boards), bytes(b.opp_off for b in boards), variant)
    width = len(rows) // (8 * len(boards))  # the value, then learned's contact and the terms
    return list(memoryview(rows).cast("d")[::width])


def key_values(keys: bytes, opp_off: int, variant) -> list[float]:
    """:func:`values` of boards given as their keys without pins (52 bytes each, one after another),
    the opponent having ``opp_off`` checkers off in each (a beam's boards:
    :data:`engine.beam.Scores`)."""
    n = len(keys) // 52
    if _compiled is None or not n:
        return values(Board.all_from_keys(keys, opp_off), variant)
    rows = key_terms(keys, bytes([opp_off]) * n, variant)
    return list(memoryview(rows).cast("d")[:: len(rows) // (8 * n)])


def key_terms(keys: bytes, opp_offs: bytes, variant) -> bytes:
    """Boards given as their keys, one after another, and their opponents' checkers off (a byte each)
    scored by the compiled module (which must be built): per board, doubles of its value, its contact
    and :func:`value_parts`' terms."""
    return _compiled.board_terms(
        keys,
        opp_offs,
        len(keys) // len(opp_offs),
        variant.hits,
        variant.pins,
        variant.blocks,
        variant.geometry == "same",
    )


def value_parts(mine: Board, theirs: Board, variant, parts: bool = False) -> tuple[float, list[float]]:
    """:func:`value`, and with ``parts`` the terms it is made of (the learned nets read them):
    the race, the bar, the shots against ``mine``, then :data:`SIDE_PARTS` for ``mine`` and for
    ``theirs`` (all 0 once every checker of ``mine`` is off). Compiled (``engine/_heuristic.c``,
    the same doubles) where it was built."""
    if _compiled is not None:
        s, terms = _compiled.value_parts(
            mine.key(), theirs.key(), variant.hits, variant.pins, variant.blocks, variant.geometry == "same"
        )
        return s, list(terms) if parts else []
    return value_parts_python(mine, theirs, variant, parts)


def value_parts_python(mine: Board, theirs: Board, variant, parts: bool = False) -> tuple[float, list[float]]:
    """:func:`value_parts` in Python: the reference the compiled terms are held to."""
    if mine.me[0] == 15:
        return 1000.0, [0.0] * (3 + 2 * len(SIDE_PARTS))
    race = float(_pips(theirs) - _pips(mine))
    closed_mine = _closed(mine, variant)  # closed to our checkers
    closed_theirs = _closed(theirs, variant)
    ours: list | None = [] if parts else None
    others: list | None = [] if parts else None
    s = (
        race
        + _side_terms(mine, theirs, closed_theirs, variant, ours)
        - _side_terms(theirs, mine, closed_mine, variant, others)
    )
    bar = shots = 0.0
    if variant.hits:
        bar = 8.0 * theirs.me[25] - 8.0 * mine.me[25]
        s += bar
    touching = contact(mine, theirs, variant)
    if touching and (variant.hits or variant.pins):
        shots = _shots(mine, theirs, closed_theirs, variant)
        s -= 1.5 * shots
    terms = [race, bar, shots, *ours, *others] if parts else []
    if not touching:
        # a pure race: pips and bear-off speed only
        s = 2.0 * race + 4.0 * (mine.me[0] - theirs.me[0])
        s -= 0.5 * sum(mine.me[x] for x in range(7, 25))
    return s, terms


def contact(mine: Board, theirs: Board, variant) -> bool:
    """Whether the two sides can still meet: some checker of one is behind one of the other."""
    if variant.geometry == "same":
        # same direction: the race is over only once both sides' checkers are all home
        return any(mine.me[x] for x in range(7, 25)) or any(theirs.me[x] for x in range(7, 25))
    theirs_back = _back(theirs)  # in their numbering; ours is 25 minus it, their bar our 0
    return _back(mine) > (25 if not theirs_back else 0 if theirs_back == 25 else 25 - theirs_back)


def _back(view: Board) -> int:
    """The owner's farthest checker from home (25: the bar), its pinned ones included; 0 when none."""
    me, pins = view.me, view.pins
    if me[25]:
        return 25
    for x in range(24, 0, -1):
        if me[x] or (pins is not None and pins[x] == 1):
            return x
    return 0
