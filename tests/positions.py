"""Random positions for tests and benchmarks, drawn from an injected ``random.Random``.

Backgammon-board positions of every kind a game meets: contact with blots, checkers
on the bar, bear-offs, races. Same-direction and plakoto positions for the other
variants. Deterministic for a given seed.
"""

from __future__ import annotations

import random

from board_rules import Position, Side, find_variant


def _spread(rng: random.Random, pts: list[int], sign: int, n: int, allowed: list[int]) -> int:
    """Put ``n`` checkers of ``sign`` on ``allowed`` points (white numbering, 1-based) not held by
    the other colour; returns how many could not be placed."""
    left = 0
    for _ in range(n):
        for _try in range(40):
            p = rng.choice(allowed)
            if pts[p - 1] * sign >= 0:
                pts[p - 1] += sign
                break
        else:
            left += 1
    return left


def random_backgammon(rng: random.Random, variant: str = "backgammon") -> Position:
    """A random backgammon-board position (both sides 15 checkers), either side on roll."""
    v = find_variant(variant)
    kind = rng.choice(("contact", "contact", "bar", "bearoff", "race", "late"))
    pts = [0] * 24
    bar = [0, 0]
    off = [0, 0]
    for si, sign in ((0, 1), (1, -1)):
        home = list(range(1, 7)) if sign > 0 else list(range(19, 25))
        everywhere = list(range(1, 25))
        n = 15
        if kind == "bar":
            bar[si] = rng.randint(0, 3) if si == 0 else rng.randint(0, 2)
            n -= bar[si]
        if kind in ("bearoff", "late"):
            off[si] = rng.randint(0, 12)
            n -= off[si]
        if kind == "bearoff" or (kind == "late" and rng.random() < 0.5):
            allowed = home
        elif kind == "race":
            allowed = list(range(1, 13)) if sign > 0 else list(range(13, 25))
        elif kind == "bar" and si == 1:
            # the opponent makes points in the mover's entry area (white's 19..24 is black's home)
            allowed = home * 3 + everywhere
        else:
            allowed = everywhere
        off[si] += _spread(rng, pts, sign, n, allowed)
    if 15 in off:  # a finished game: draw again
        return random_backgammon(rng, variant)
    turn = rng.choice((Side.WHITE, Side.BLACK))
    return Position(v, turn, tuple(pts), (0,) * 24, (bar[0], bar[1]), (off[0], off[1]))


def random_same_direction(rng: random.Random, variant: str = "fevga", rolls=None, **options) -> Position:
    """A random fevga/gul-bara/long-nardy position: one checker per point holds it.

    ``rolls`` (white, black) defaults to random counts 0..30.
    """
    v = find_variant(variant, **options)
    pts = [0] * 24
    off = [0, 0]
    if rolls is None:
        rolls = (rng.randint(0, 30), rng.randint(0, 30))
    sides = ((0, Side.WHITE), (1, Side.BLACK))
    left = []
    for _si, side in sides:
        on_start = rng.randint(0, 15)
        pts[v.white_point(side, 24) - 1] += on_start * side.sign
        left.append(15 - on_start)
    for si, side in sides:
        for _ in range(left[si]):
            for _try in range(40):
                own = rng.randint(1, 23) if rng.random() < 0.8 else rng.randint(1, 6)
                w = v.white_point(side, own)
                if pts[w - 1] * side.sign >= 0:
                    pts[w - 1] += side.sign
                    break
            else:
                off[si] += 1
    if 15 in off:
        return random_same_direction(rng, variant, rolls, **options)
    turn = rng.choice((Side.WHITE, Side.BLACK))
    return Position(v, turn, tuple(pts), (0,) * 24, (0, 0), (off[0], off[1]), tuple(rolls))


def random_plakoto(rng: random.Random, variant: str = "plakoto", **options) -> Position:
    """A random plakoto position with some pinned checkers."""
    v = find_variant(variant, **options)
    while True:
        pts = [0] * 24
        pinned = [0] * 24
        off = [0, 0]
        for si, side in ((0, Side.WHITE), (1, Side.BLACK)):
            start = v.white_point(side, 24)
            on_start = rng.randint(0, 15)
            pts[start - 1] += on_start * side.sign
            n = 15 - on_start
            _ = si
            off[si] += _spread(rng, pts, side.sign, n, list(range(1, 25)))
        # pin some lone checkers under an opposing one
        for i in range(24):
            if abs(pts[i]) == 1 and rng.random() < 0.3:
                sign = 1 if pts[i] > 0 else -1
                # the pinner comes from the other side's off pile (keeps counts valid)
                oi = 0 if sign < 0 else 1
                if off[oi]:
                    off[oi] -= 1
                    pinned[i] = sign
                    pts[i] = -sign
        try:
            return Position(
                v, rng.choice((Side.WHITE, Side.BLACK)), tuple(pts), tuple(pinned), (0, 0), (off[0], off[1])
            )
        except ValueError:
            continue
