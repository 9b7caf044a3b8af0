"""The keyboard at a table without sensors or camera: every line answered in words, short forms of boards."""

import pytest

from board_rules import Position, Roll, Side
from board_rules.ids import position_id
from referee.keyboard import COMMANDS, KeyboardError, dice, moved, typed_board
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec

START = Position.start("backgammon")


def _session(tmp_path, **kw):
    said, drawn = [], []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon", games=1))
    session = TableSession(ref, say=said.append, draw=lambda board, leds: drawn.append((board, dict(leds))), **kw)
    return ref, session, said, drawn


def test_help_lists_every_command_and_each_line_says_what_the_table_waits_for(tmp_path):
    ref, session, said, drawn = _session(tmp_path)
    session.command("help")
    listing = said[-2]
    assert listing.startswith("commands:") and all(f"  {c}" in listing or f"| {c}" in listing for c in COMMANDS)
    assert said[-1] == "> set up the board (typed: board start)"
    session.command("opening 5 3")
    assert "referee: no opening roll yet: the board is not set up" in said
    session.command("board start")
    assert (
        drawn
        and drawn[-1][0] == START
        and said[-1] == ("> each player throws one die for the opening (typed: opening W B)")
    )
    session.command("opening 3 1")
    assert said[-1] == "> white plays 3-1 (typed: move P Q ..., then end)"
    session.command("move 8 5")
    session.command("move 6 5")
    session.command("end")
    assert ref.record.phase() == "roll" and said[-1] == "> black to roll (typed: roll D1 D2), or to double"
    session.command("score")
    assert "score: white 0, black 0" in said
    ref.close()


@pytest.mark.parametrize(
    "line, words",
    [
        ("board", "board: give start, a gnubg Position ID, Position JSON or a file"),
        ("lift", "lift: give the point a checker was lifted from"),
        ("roll", "roll: give two dice"),
        ("roll ² 3", "roll: the first die: '²' is not a number 1..6"),
        ("roll 7 7", "roll: the first die: '7' is not a number 1..6"),
        ("resign 9", "resign: the level: '9' is not a number 1..3"),
        ("move 13", "move: give where from and where to"),
        ("move 3 4", "move: no checker on 3"),
        ("board " + "[" * 100_000 + "]" * 100_000, "board: a line of 200000 characters is no position"),
        ('board {"variant": "backgammon", "a": ' + "[" * 5000 + "]" * 5000 + "}", "board: not Position JSON"),
        ("board /no/such/file", "board: '/no/such/file': cannot read it"),
        ("board /dev/zero", "board: '/dev/zero': over 64000 bytes"),
        ("teleport", "unknown command 'teleport'; type help"),
    ],
)
def test_a_line_that_cannot_be_done_is_said_and_the_game_goes_on(tmp_path, line, words):
    ref, session, said, _ = _session(tmp_path)
    session.command(line)
    assert any(words in s for s in said), said
    session.command("board start")
    assert ref.phase == "opening_roll"  # the session goes on
    ref.close()


def test_short_forms_of_a_board_and_a_checker_moved_on_it():
    like = START
    assert typed_board("start", like) == START
    after = START.play("13/7 13/9", Roll(6, 4))
    assert (
        typed_board(position_id(after.with_turn(like.turn)), like).points == after.points
    )  # as the side on roll sees it
    assert moved(START, "13", "7", like.turn).points[6] == 1
    blot = START.play("24/23 13/11", Roll(1, 2))  # white leaves a blot on 23
    hit = moved(blot.with_turn(Side.BLACK), "19", "23", Side.BLACK)  # black, from its 6 point, hits it
    assert hit.bar == (1, 0) and hit.points[22] == -1
    assert dice("3-5", "roll") == (3, 5) and dice("35", "roll") == (3, 5)
    with pytest.raises(KeyboardError, match="board: give start"):
        typed_board("  ", like)
