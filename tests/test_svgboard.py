"""The SVG board of reports: every checker drawn where the text board puts it."""

from __future__ import annotations

import re

from board_rules import Position
from referee.svgboard import _x, render


def test_the_start_draws_thirty_checkers_on_four_points_a_side():
    svg = render(Position.start("backgammon"), title="start")
    discs = re.findall(r'<circle cx="(\d+)" cy="\d+" r="13" fill="(#[0-9a-f]+)"', svg)
    assert len(discs) == 30
    assert {x for x, _ in discs} == {str(_x(p)) for p in (1, 6, 8, 12, 13, 17, 19, 24)}
    assert 'aria-label="start"' in svg and svg.endswith("</svg>")


def test_points_run_as_the_text_board_draws_them():
    assert [_x(p) for p in (13, 18, 19, 24)] == [15, 165, 225, 375]  # the bar between 18 and 19
    assert [_x(p) for p in (12, 7, 6, 1)] == [15, 165, 225, 375]


def test_a_pinned_checker_is_marked_at_its_point():
    position = Position.from_dict(
        {
            "variant": "plakoto",
            "turn": "white",
            "points": [-12] + [0] * 11 + [-3] + [0] * 10 + [14],
            "pinned": {"13": "white"},
            "bar": {"white": 0, "black": 0},
            "off": {"white": 0, "black": 0},
        }
    )
    svg = render(position)
    assert svg.count('stroke="#e0b000"') == 1
