"""Is an observed position the result of a legal play, or on the way to one?

Owns :func:`check` (a finished turn), :class:`TurnTracker` (a turn being made:
whether the board is on the way to some legal play, and where a lifted checker
may land). The referee asks these; it never decides a rule itself. Imports
:mod:`board_rules.movegen` and the value types; nothing outside ``board_rules``.

Locations are white's point numbers 1..24 and the strings ``"bar"`` and ``"off"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from board_rules.movegen import Board, _conv, _Search, _search_side, legal_plays, legal_results
from board_rules.notation import Play, Roll
from board_rules.position import Position
from board_rules.side import Side


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on a finished turn.

    ``play`` is the legal play (when ``legal``) or the nearest legal play (when not);
    ``wrong`` lists the locations where ``after`` differs from that nearest legal result,
    sorted, points first then ``"bar"`` and ``"off"``; ``nearest`` is that result.
    """

    legal: bool
    play: Play | None
    wrong: tuple[int | str, ...] = ()
    nearest: Position | None = None

    def to_dict(self) -> dict:
        return {"legal": self.legal, "play": None if self.play is None else str(self.play), "wrong": list(self.wrong)}


def board_diff(a: Position, b: Position) -> tuple[int | str, ...]:
    """Locations where two positions differ (points, pins, bar, off); turn and rolls are ignored.

    >>> from board_rules import Position
    >>> s = Position.start("portes")
    >>> board_diff(s, s)
    ()
    """
    out: list[int | str] = [
        i + 1 for i in range(24) if a.points[i] != b.points[i] or a.pinned[i] != b.pinned[i]
    ]
    if a.bar != b.bar:
        out.append("bar")
    if a.off != b.off:
        out.append("off")
    return tuple(out)


def check(before: Position, roll: Roll, after: Position) -> CheckResult:
    """Whether ``after`` is the result of a legal play of ``roll`` from ``before``.

    Only the board is compared (points, pins, bar, off): an observation cannot see whose
    turn it is. If no play is legal, the unchanged board is the legal result (the turn
    passes). If ``after`` is not legal, ``wrong`` is the smallest set of locations that
    differ from the nearest legal result, for lighting exactly what is wrong.
    """
    best: tuple[int, Play, Position, tuple] | None = None
    for play, result in legal_plays(before, roll):
        diff = board_diff(result, after)
        if not diff:
            return CheckResult(True, play, (), result)
        if best is None or len(diff) < best[0]:
            best = (len(diff), play, result, diff)
    assert best is not None  # legal_plays always gives at least the passed turn
    _, play, result, diff = best
    return CheckResult(False, play, diff, result)


def is_legal_result(before: Position, roll: Roll, after: Position) -> bool:
    """Cheaper yes/no form of :func:`check` (no objects are built)."""
    # ``after`` is seen from each result's side once, instead of each result flipped
    targets: dict[Side, Board] = {}
    for _legs, final, final_side in legal_results(before, roll):
        target = targets.get(final_side)
        if target is None:
            target = targets[final_side] = Board.of(after, final_side)
        if (final.me, final.opp, final.opp_off, final.pins) == (target.me, target.opp, target.opp_off, target.pins):
            return True
    return False


class TurnTracker:
    """Follows a turn while the player makes it, one checker move at a time.

    Built once per roll. :meth:`on_the_way` says whether an observed board can still
    become a legal play; :meth:`landing_points` lists where a checker lifted from a
    point may be put down now (one die or several with the same checker).
    Gul-bara's passed numbers are not followed: only the mover's own leg.
    """

    def __init__(self, before: Position, roll: Roll) -> None:
        self.before = before
        self.roll = roll
        self.side = before.turn
        v = before.variant
        self.variant = v
        rp = before.rolls[0 if self.side is Side.WHITE else 1]
        seqs = v.dice_sequences(roll.d1, roll.d2, rp)
        board = Board.of(before)
        self._opp_off = board.opp_off
        self._pins = board.pins is not None
        head = v.head_limit(roll.d1, roll.d2, rp)
        finals, _best, _ = _search_side(v, board, seqs, head)
        self.final_keys = set(finals)
        # the edge graph of every order of every dice sequence
        self._children: dict[bytes, set[tuple[int, int, bytes]]] = {}
        self._good: set[bytes] = set()
        start = board.key()
        for seq in seqs:
            s = _Search(v, Board.of(before), head, record_edges=True)
            s.run(seq)
            graph: dict[tuple[int, bytes], list] = s.edges or {}
            good_nodes: dict[tuple[int, bytes], bool] = {}

            def good(depth: int, key: bytes) -> bool:
                node = (depth, key)
                if node in good_nodes:
                    return good_nodes[node]
                good_nodes[node] = False
                ok = key in self.final_keys
                for src, dst, _hit, child in graph.get(node, ()):
                    if good(depth + 1, child):
                        ok = True
                        self._link(key, src, dst, child)
                good_nodes[node] = ok
                if ok:
                    self._good.add(key)
                return ok

            good(0, start)
        self._good.update(self.final_keys)

    def _link(self, parent: bytes, src: int, dst: int, child: bytes) -> None:
        self._children.setdefault(parent, set()).add((src, dst, child))
        self._good.add(child)

    def _key(self, position: Position) -> bytes:
        return Board.of(position, self.side).key()

    def on_the_way(self, observed: Position) -> bool:
        """Whether ``observed`` is the start, an intermediate or a final board of some legal play."""
        return self._key(observed) in self._good

    def is_complete(self, observed: Position) -> bool:
        """Whether ``observed`` is the board of a finished legal play."""
        return self._key(observed) in self.final_keys

    def landing_points(self, observed: Position, lifted_from: int | str) -> tuple[int | str, ...]:
        """Where a checker lifted from ``lifted_from`` (white's point, or ``"bar"``) may land now.

        Empty when ``observed`` is not on the way to a legal play. Includes points reached
        by playing several dice with the same checker, and ``"off"``.
        """
        key = self._key(observed)
        if key not in self._good:
            return ()
        conv = _conv(self.variant, self.side)
        src = 25 if lifted_from == "bar" else conv[int(lifted_from)]
        found: set[int] = set()
        frontier = [(key, src)]
        visited = set()
        while frontier:
            k, s = frontier.pop()
            if (k, s) in visited:
                continue
            visited.add((k, s))
            for src2, dst, child in self._children.get(k, ()):
                if src2 == s:
                    found.add(dst)
                    if dst:
                        frontier.append((child, dst))
        out: list[int | str] = sorted(conv[d] for d in found if d)
        if 0 in found:
            out.append("off")
        return tuple(out)

