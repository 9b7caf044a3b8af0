"""A tavli position drawn as SVG, for reports (``tavli record analyse --html``).

Owns :func:`render`: the board in white's numbering as :mod:`referee.textboard` draws
it (13..24 along the top, 12..1 along the bottom, the bar between 18 and 19, the trays
on the right); decides no rule. Imports ``board_rules`` only.
"""

from __future__ import annotations

from html import escape

from board_rules import Position

W = 30  # a point's width
H = 150  # a half board's height: a point's length and a gap
R = 13  # a checker's radius
SHOWN = 5  # checkers drawn on a point; more are counted on the last


def _x(point: int) -> int:
    """The centre of ``point``'s column (the bar is one column wide, after 18 and after 7)."""
    if point >= 13:
        col = point - 13 + (1 if point >= 19 else 0)
    else:
        col = 12 - point + (1 if point <= 6 else 0)
    return col * W + W // 2


def _stack(out: list[str], x: int, top: bool, n: int, colour: str, label: str = "") -> None:
    fill, ink = ("#f4f1ea", "#222") if colour == "white" else ("#222", "#f4f1ea")
    for i in range(min(n, SHOWN)):
        y = (R + 2 + 2 * R * i) if top else (2 * H - R - 2 - 2 * R * i)
        out.append(f'<circle cx="{x}" cy="{y}" r="{R}" fill="{fill}" stroke="#777"/>')
        if i == min(n, SHOWN) - 1 and (n > SHOWN or label):
            text = label or str(n)
            out.append(f'<text x="{x}" y="{y + 4}" font-size="11" fill="{ink}">{escape(text)}</text>')


def render(position: Position, title: str | None = None) -> str:
    """The SVG of ``position`` (checkers as discs, a count where more than five share a place;
    a pinned checker as a small disc of its colour at the point's tip)."""
    width, height, margin = 15 * W, 2 * H, 16
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height + 2 * margin}" width="{width}" '
        f'height="{height + 2 * margin}" role="img" aria-label="{escape(title or "the board")}">',
        '<g font-family="sans-serif" font-size="10" text-anchor="middle">',
        f'<g transform="translate(0,{margin})">',
        f'<rect x="0" y="0" width="{13 * W}" height="{height}" fill="#2f6b4a"/>',
        f'<rect x="{6 * W}" y="0" width="{W}" height="{height}" fill="#5b3a21"/>',
        f'<rect x="{13 * W}" y="0" width="{2 * W}" height="{height}" fill="#5b3a21"/>',
    ]
    for point in range(1, 25):
        x, top = _x(point), point >= 13
        shade = "#c8a165" if point % 2 else "#8b2f1f"
        tip = H - 20 if top else H + 20
        base = 0 if top else height
        out.append(f'<polygon points="{x - W // 2},{base} {x + W // 2},{base} {x},{tip}" fill="{shade}"/>')
        out.append(f'<text x="{x}" y="{-4 if top else height + 12}">{point}</text>')
        n = position.points[point - 1]
        if n:
            colour = "white" if n > 0 else "black"
            _stack(out, x, top, abs(n), colour)
            if position.pinned[point - 1]:
                fill = "#222" if colour == "white" else "#f4f1ea"  # the other colour, pinned underneath
                y = tip - 6 if top else tip + 6
                out.append(f'<circle cx="{x}" cy="{y}" r="5" fill="{fill}" stroke="#e0b000" stroke-width="2"/>')
    for i, colour in enumerate(("white", "black")):
        bar, off = position.bar[i], position.off[i]
        top = colour == "black"  # each side's bar and tray on its own half: white's home is bottom right
        if bar:
            _stack(out, 6 * W + W // 2, top, bar, colour, str(bar))
        if off:
            _stack(out, 13 * W + W, colour == "black", off, colour, str(off))
    out.append("</g></g></svg>")
    return "".join(out)
