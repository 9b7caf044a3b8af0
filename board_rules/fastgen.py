"""Fast legal plays for the hitting games: backgammon, portes, short nardy.

Owns :func:`search`: for the variants :func:`handles` accepts (hits; no pins, blocks or
limits on leaving a point) it returns exactly what the generic search behind
:func:`board_rules.movegen.search_side` returns: per distinct final board the first
path found, and the most dice played (``tests/test_fastgen.py`` compares the two). The
board is one ``bytearray``, the mover's ``me`` then ``opp`` (``docs/rules-notes.md``),
so ``bytes(board)`` is the same key. Imports only :mod:`board_rules.variants`.

``board_rules/_fastgen.c`` is the same search compiled, built by ``pip install`` where a
C compiler is found (:data:`COMPILED`); this module's Python search is the reference it
is tested against, and what runs where it was not built.
"""

from __future__ import annotations

import os
from bisect import bisect_left

from board_rules.variants import Variant

try:
    if os.environ.get("TAVLI_PURE_PYTHON"):
        raise ImportError("TAVLI_PURE_PYTHON is set")
    from board_rules import _fastgen as _compiled
except ImportError:
    _compiled = None

COMPILED = _compiled is not None
"""Whether the compiled search runs (``TAVLI_PURE_PYTHON=1`` in the environment turns it off)."""


def handles(variant: Variant, dice_seqs) -> bool:
    """Whether :func:`search` gives the generic search's answer for ``variant`` and ``dice_seqs``."""
    if not variant.hits or variant.pins or variant.blocks:
        return False
    if variant.start_rule_limit or variant.head_rule or variant.start_quarter_rule or variant.trapping_prime_rule:
        return False
    if len(dice_seqs) == 1:
        seq = dice_seqs[0]
        return len(seq) == 4 and seq[0] == seq[1] == seq[2] == seq[3]
    if len(dice_seqs) == 2:
        a, b = dice_seqs
        return len(a) == 2 and a[0] != a[1] and tuple(b) == (a[1], a[0])
    return False


def search(me: list[int], opp: list[int], dice_seqs) -> tuple[dict[bytes, tuple], int]:
    """``({final board key: (checker moves, first die)}, most dice played)`` for the mover.

    ``me`` and ``opp`` are the mover's view (see :mod:`board_rules.movegen`); they are
    not changed. Only for what :func:`handles` accepts.
    """
    if _compiled is not None:
        d1, d2 = dice_seqs[0][0], dice_seqs[0][1]
        return _compiled.search(bytes(me + opp), d1, d2)
    return search_python(me, opp, dice_seqs)


def results(me: list[int], opp: list[int], dice_seqs, board_type, opp_off: int, side) -> list[tuple]:
    """What :func:`board_rules.movegen.legal_results` returns for these dice, in :func:`search`'s
    order: ``[((checker moves,), board_type(me, opp, None, opp_off), side), ...]`` (``board_type``:
    :class:`board_rules.moves.Board`)."""
    if _compiled is not None:
        return _compiled.results(bytes(me + opp), dice_seqs[0][0], dice_seqs[0][1], board_type, opp_off, side)
    found, _ = search_python(me, opp, dice_seqs)
    return [((m,), board_type.from_key(k, False, opp_off), side) for k, (m, _) in found.items()]


position_results = _compiled.position_results if _compiled is not None else None
"""``position_results(points, conv, sign, me_bar, me_off, opp_bar, d1, d2, board_type, opp_off, side)``:
what :func:`results` returns for the mover's board, read straight from a position's 24 ``points``
(white's numbering, white positive; the mover's point ``i`` is white's ``conv[i]``, its counts times
``sign``) without building the board first. None where the compiled module is not in use: build
the board and call :func:`results`."""


def search_python(me: list[int], opp: list[int], dice_seqs) -> tuple[dict[bytes, tuple], int]:
    """:func:`search` in Python: the reference the compiled search is held to."""
    board = bytearray(me + opp)
    if len(dice_seqs) == 1:
        return _doubles(board, dice_seqs[0][0])
    d1, d2 = dice_seqs[0]
    return _two_dice(board, d1, d2)


def _two_dice(b: bytearray, d1: int, d2: int) -> tuple[dict[bytes, tuple], int]:
    """Both orders of two different dice, then the larger die if only one can be played.

    In the second order, two different checkers that neither enter nor bear off give a
    board the first order has already found (the same checker moves in the other
    order, equally legal), so once the first order played both dice only the same
    checker moving on, entering and bearing off are searched again.
    """
    bar = b[25]
    out = bar + sum(b[7:25])  # mover checkers outside home, bar included
    points = [i for i in range(24, 0, -1) if b[i]]
    neg = [-i for i in points]  # ascending, for bisect
    srcs = [25] if bar else points
    found: dict[bytes, tuple] = {}
    best = -1
    for da, db in ((d1, d2), (d2, d1)):
        skip = best == 2 and not bar
        moved = False
        for s1 in srcs:
            # ---- first checker move: s1 by da
            t1 = s1 - da
            if t1 <= 0:
                if out:
                    break  # every later source bears off too
                if t1 < 0 and any(b[s1 + 1 : 7]):
                    continue
                t1 = 0
                h1 = False
            else:
                o = b[26 + t1]
                if o > 1:
                    continue
                h1 = o == 1
            moved = True
            b[s1] -= 1
            b[t1] += 1
            if h1:
                b[26 + t1] = 0
                b[26] += 1
            out1 = out - 1 if s1 > 6 and t1 < 7 else out
            m1 = (s1, t1, h1)
            if not t1 and b[0] == 15:  # the last checker is off: the game ends, the play is complete
                if best < 2:
                    best = 2
                    found.clear()
                key = bytes(b)
                if key not in found:
                    found[key] = ((m1,), da)
                b[s1] += 1
                b[0] -= 1
                continue
            # ---- sources of the second checker move, highest first
            if skip and t1 and out1:
                cand = (t1,)  # only the same checker onwards can give a new board
            elif b[25]:
                cand = (25,)
            elif t1 and b[t1] == 1:
                i = bisect_left(neg, -t1)
                cand = points[:i]
                cand.append(t1)
                cand += points[i:]
            else:
                cand = points
            moved2 = False
            for s2 in cand:
                if not b[s2]:
                    continue
                # ---- second checker move: s2 by db
                t2 = s2 - db
                if t2 <= 0:
                    if out1:
                        break
                    if t2 < 0 and any(b[s2 + 1 : 7]):
                        continue
                    t2 = 0
                    h2 = False
                else:
                    if skip and t1 and s2 != t1:
                        continue  # two checkers, found in the first order
                    o = b[26 + t2]
                    if o > 1:
                        continue
                    h2 = o == 1
                moved2 = True
                b[s2] -= 1
                b[t2] += 1
                if h2:
                    b[26 + t2] = 0
                    b[26] += 1
                    key = bytes(b)
                    b[26 + t2] = 1
                    b[26] -= 1
                else:
                    key = bytes(b)
                b[s2] += 1
                b[t2] -= 1
                if best < 2:
                    best = 2
                    found.clear()
                if key not in found:
                    found[key] = ((m1, (s2, t2, h2)), da)
            if not moved2 and best <= 1:
                if best < 1:
                    best = 1
                    found.clear()
                key = bytes(b)
                if key not in found:
                    found[key] = ((m1,), da)
            b[s1] += 1
            b[t1] -= 1
            if h1:
                b[26 + t1] = 1
                b[26] -= 1
        if not moved and best <= 0:
            best = 0
            found.setdefault(bytes(b), ((), 0))
    # dice that can be played only one at a time: the larger must be played if it can
    if best == 1:
        high = d1 if d1 > d2 else d2
        if any(fd == high for _, fd in found.values()):
            found = {k: val for k, val in found.items() if val[1] == high}
    return found, best


def _doubles(b: bytearray, d: int) -> tuple[dict[bytes, tuple], int]:
    """Up to four checker moves of ``d``, sources in non-increasing order.

    Every play has such an order, and it is the one order in which bearing off is
    least restricted, so each result is reached by exactly one path.
    """
    found: dict[bytes, tuple] = {}
    best = [-1]
    path: list[tuple] = [(), (), ()]

    def record(depth: int, played: int | None = None) -> None:
        """Record the board after ``depth`` checker moves, ranked as ``played`` dice (default ``depth``)."""
        rank = depth if played is None else played
        if rank > best[0]:
            best[0] = rank
            found.clear()
        key = bytes(b)
        if key not in found:
            found[key] = (tuple(path[:depth]), d if depth else 0)

    def rec(depth: int, cand, out: int) -> None:
        """Checker moves ``depth`` (0..2) from ``cand``: the occupied points not above the
        last source, highest first (or the bar); ``out`` as in :func:`_two_dice`."""
        moved = False
        n = len(cand)
        for i in range(n):
            src = cand[i]
            if not b[src]:
                continue
            dst = src - d
            if dst <= 0:
                if out:
                    break
                if dst < 0 and any(b[src + 1 : 7]):
                    continue
                dst = 0
                hit = False
            else:
                o = b[26 + dst]
                if o > 1:
                    continue
                hit = o == 1
            moved = True
            b[src] -= 1
            b[dst] += 1
            if hit:
                b[26 + dst] = 0
                b[26] += 1
            # the next sources: this one and lower, and the landing point if it is new
            if b[25]:
                nxt = cand
            elif src == 25:
                nxt = [p for p in range(24, 0, -1) if b[p]]
            elif dst and b[dst] == 1:
                j = i + 1
                while j < n and cand[j] > dst:
                    j += 1
                nxt = cand[i:j]
                nxt.append(dst)
                nxt += cand[j:]
            else:
                nxt = cand[i:]
            path[depth] = (src, dst, hit)
            out2 = out - 1 if src > 6 and dst < 7 else out
            if not dst and b[0] == 15:
                record(depth + 1, 4)  # the last checker is off: the game ends, the play is complete
            elif depth < 2:
                rec(depth + 1, nxt, out2)
            else:
                last(nxt, out2)
            b[src] += 1
            b[dst] -= 1
            if hit:
                b[26 + dst] = 1
                b[26] -= 1
        if not moved and depth >= best[0]:
            record(depth)

    def last(cand, out: int) -> None:
        """The fourth checker move, recording each result."""
        moved = False
        for src in cand:
            if not b[src]:
                continue
            dst = src - d
            if dst <= 0:
                if out:
                    break
                if dst < 0 and any(b[src + 1 : 7]):
                    continue
                dst = 0
                hit = False
            else:
                o = b[26 + dst]
                if o > 1:
                    continue
                hit = o == 1
            if not moved:
                moved = True
                if best[0] < 4:
                    best[0] = 4
                    found.clear()
            b[src] -= 1
            b[dst] += 1
            if hit:
                b[26 + dst] = 0
                b[26] += 1
                key = bytes(b)
                b[26 + dst] = 1
                b[26] -= 1
            else:
                key = bytes(b)
            b[src] += 1
            b[dst] -= 1
            if key not in found:
                found[key] = ((path[0], path[1], path[2], (src, dst, hit)), d)
        if not moved and best[0] <= 3:
            record(3)

    bar = b[25]
    rec(0, (25,) if bar else [p for p in range(24, 0, -1) if b[p]], bar + sum(b[7:25]))
    return found, best[0]
