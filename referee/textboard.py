"""A tavli position drawn in the terminal (rich text), as a player sees the table.

Owns the text rendering of a :class:`board_rules.Position` for the command line
and the demo; decides no rule. Imports ``board_rules`` and ``rich`` only.
"""

from __future__ import annotations

from rich.text import Text

from board_rules import Position

_WHITE = "bold white on grey23"
_BLACK = "bold red on grey23"


def _cell(position: Position, point: int) -> Text:
    n = position.points[point - 1]
    pin = position.pinned[point - 1]
    if n == 0:
        return Text("  . ", style="grey50")
    style = _WHITE if n > 0 else _BLACK
    label = f"{abs(n):>2}{'W' if n > 0 else 'B'}"
    text = Text(label, style=style)
    text.append("*" if pin else " ", style="yellow")
    return text


def _numbers(out: Text, points: list[int], bar_after: int) -> None:
    out.append(" " + "".join(f"{p:>4}" + (" |" if p == bar_after else "") for p in points) + "\n", style="cyan")


def _row(out: Text, position: Position, points: list[int], bar_after: int, tail: str) -> None:
    """One row of points, the bar drawn after ``bar_after``, then ``tail``."""
    out.append(" ")
    for p in points:
        out.append_text(_cell(position, p))
        if p == bar_after:
            out.append(" |")
    out.append(tail)


def render(position: Position, title: str | None = None) -> Text:
    """The board in white's numbering: 13..24 on top, 12..1 below, bar and off at the side.

    Checkers are shown as a count and a letter (W white, B black); ``*`` marks a point
    where a checker of the other colour is pinned underneath (plakoto).
    """
    out = Text()
    if title:
        out.append(title + "\n", style="bold")
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    _numbers(out, top, 18)
    _row(out, position, top, 18, f"   bar W{position.bar[0]} B{position.bar[1]}\n")
    _row(out, position, bottom, 7, f"   off W{position.off[0]} B{position.off[1]}\n")
    _numbers(out, bottom, 7)
    out.append(f" {position.variant.label}, {position.turn.value} to play\n", style="italic")
    return out
