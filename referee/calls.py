"""What the referee shows: the colours it lights places in, its calls, and the words for places and plays.

Owns :class:`Calls` (a colour per place, the buzzer, the words), the colour names,
:func:`places_text` (places in one side's numbering, saying whose) and the helpers that
compare what two boards hold at a place. Pure; imports ``board_rules``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from board_rules import Position, Roll, Side
from board_rules.places import Place
from board_rules.variants import Variant

RED, GREEN, BLUE, AMBER = "red", "green", "blue", "amber"
BUTTONS = (
    "end-turn",
    "double",
    "take",
    "pass",
    "beaver",
    "raccoon",
    "resign-1",
    "resign-2",
    "resign-3",
    "accept",
    "refuse",
    "hint",
)
# the half of the board where each side's dice must come to rest: the thrower's right-hand board
RIGHT_HAND_HALF = {Side.WHITE: "right", Side.BLACK: "left"}
LEVELS = ("", "single", "gammon", "backgammon")


@dataclass(frozen=True, slots=True)
class Calls:
    """What the referee wants shown now: ``leds`` maps places to a colour (red: wrong, green:
    may land / best play's target, blue: best play's source, amber: the sources disagree);
    ``buzzer`` sounds; ``says`` are the referee's words."""

    leds: Mapping[Place, str] = field(default_factory=dict)
    buzzer: bool = False
    says: tuple[str, ...] = ()


def places_text(places: Iterable[Place], side: Side, variant: Variant | None = None) -> str:
    """``"white's 7, 13, bar"``: places in ``side``'s numbering (``variant``'s), lowest first, saying whose it is."""

    def key(p: Place) -> tuple:
        return (0, p.number_for(side, variant)) if p.is_point else (1, p.sort_key())

    return f"{side.value}'s " + ", ".join(p.label(side, variant) for p in sorted(places, key=key))


def one_checker_off(position: Position, roll: Roll, seen: Position, verdict) -> str:
    """``"; one checker off it: ..."`` when ``seen`` is the nearest legal result but for one checker
    in the wrong place; else ``""``. In the mover's numbering, like the rest of the call."""
    if verdict.play is None:
        return ""
    nearest = position.play(str(verdict.play), roll)
    mover = position.turn
    diff = sum(abs(held(seen, s, w) - held(nearest, s, w)) for s in (Side.WHITE, Side.BLACK) for w in verdict.wrong)
    if diff != 2:
        return ""
    for side in (mover, mover.other):
        extra = [w for w in verdict.wrong if held(seen, side, w) > held(nearest, side, w)]
        short = [w for w in verdict.wrong if held(seen, side, w) < held(nearest, side, w)]
        if len(extra) == len(short) == 1:
            (a,), (b,) = extra, short
            if held(seen, side, a) - held(nearest, side, a) == 1:
                v = position.variant
                return f"; one checker off it: {side.value}'s checker on {a.label(mover, v)} belongs on {b.label(mover, v)}"
    return ""


def held(position: Position, side: Side, where: Place) -> int:
    """How many of ``side``'s checkers ``where`` holds (another side's bar or tray holds none of them)."""
    i = 0 if side is Side.WHITE else 1
    if where.is_point:
        return position.count(side, where.number)
    if where.side is not side:
        return 0
    return (position.bar if where.kind.value == "bar" else position.off)[i]


def more(now: Position, before: Position, side: Side, where: Place) -> bool:
    return held(now, side, where) > held(before, side, where)
