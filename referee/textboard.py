"""A tavli position drawn in the terminal (rich text), as a player sees the table.

Owns the text rendering of a :class:`board_rules.Position` for the command line
and the demo, with the LEDs lit on it; decides no rule. Imports ``board_rules`` and ``rich`` only.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from board_rules import Position
from board_rules.places import Place, PlaceKind

# checkers in colours no LED shows: white on dark grey, black on light grey
_WHITE = "bold bright_white on grey23"
_BLACK = "bold black on grey70"
# the LEDs as the board lights them: the cell's background
_LED = {"red": "on red3", "green": "on green4", "blue": "on blue3", "amber": "on dark_orange3"}


def _cell(position: Position, point: int, led: str | None = None) -> Text:
    n = position.points[point - 1]
    pin = position.pinned[point - 1]
    if n == 0:
        text = Text("  . ", style="grey50")
    else:
        text = Text(f"{abs(n):>2}{'W' if n > 0 else 'B'}", style=_WHITE if n > 0 else _BLACK)
        text.append("*" if pin else " ", style="yellow")
    if led:
        text.stylize(_LED.get(led, "on magenta"))
    return text


def _numbers(out: Text, points: list[int], bar_after: int) -> None:
    out.append(" " + "".join(f"{p:>4}" + (" |" if p == bar_after else "") for p in points) + "\n", style="cyan")


def _row(out: Text, position: Position, points: list[int], bar_after: int, tail: Text, leds) -> None:
    """One row of points, the bar drawn after ``bar_after``, then ``tail``."""
    out.append(" ")
    for p in points:
        out.append_text(_cell(position, p, leds.get(Place.point(p))))
        if p == bar_after:
            out.append(" |")
    out.append_text(tail)


def _tail(position: Position, kind: PlaceKind, leds) -> Text:
    """``   bar W0 B1``: each side's count, lit as its place's LED is."""
    counts = position.bar if kind is PlaceKind.BAR else position.off
    out = Text(f"   {kind.value} ")
    for i, (letter, side) in enumerate((("W", "white"), ("B", "black"))):
        place = Place.bar(side) if kind is PlaceKind.BAR else Place.off(side)
        out.append(f"{letter}{counts[i]}", style=_LED.get(leds.get(place), "") if place in leds else "")
        out.append(" " if i == 0 else "\n")
    return out


def render(position: Position, title: str | None = None, leds: Mapping[Place, str] | None = None) -> Text:
    """The board in white's numbering: 13..24 on top, 12..1 below, bar and off at the side.

    Checkers are shown as a count and a letter (W white, B black); ``*`` marks a point
    where a checker of the other colour is pinned underneath (plakoto). ``leds`` (place
    to colour) light their places' cells as the board lights them.
    """
    leds = dict(leds or {})
    out = Text()
    if title:
        out.append(title + "\n", style="bold")
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    _numbers(out, top, 18)
    _row(out, position, top, 18, _tail(position, PlaceKind.BAR, leds), leds)
    _row(out, position, bottom, 7, _tail(position, PlaceKind.OFF, leds), leds)
    _numbers(out, bottom, 7)
    out.append(f" {position.variant.label}, {position.turn.value} to play\n", style="italic")
    return out
