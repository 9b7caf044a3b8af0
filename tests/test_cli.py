"""The ``tavli rules`` command line: output shapes, and bad input exiting 2 with a named field."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest

from board_rules import Position
from referee.cli import main


def run(argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def start(variant):
    return Position.start(variant).to_json()


def test_rules_start_prints_the_starting_position():
    code, out, _ = run(["rules", "start", "fevga"])
    data = json.loads(out)
    assert code == 0 and data["points"][23] == 15 and data["points"][11] == -15 and data["turn"] == "white"


def test_rules_start_accepts_an_alias_and_options():
    code, out, _ = run(["rules", "start", "tapa"])
    assert json.loads(out)["variant"] == "tapa"
    code, out, _ = run(["rules", "start", "long-nardy", "--option", "scoring=romanian"])
    assert code == 0


def test_rules_plays_prints_play_and_position_per_result(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(start("backgammon"))
    code, out, _ = run(["rules", "plays", "--dice", "3", "1", str(f)])
    data = json.loads(out)
    assert code == 0 and len(data) == 16
    assert {"play", "position"} == set(data[0])
    assert any(d["play"] == "8/5 6/5" for d in data)


def test_rules_plays_with_no_legal_play_prints_the_passed_turn():
    p = {
        "variant": "backgammon",
        "turn": "white",
        "points": [14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, -2, -2, -2, -2],
        "bar": {"white": 1, "black": 0},
        "off": {"white": 0, "black": 3},
    }
    code, out, _ = run(["rules", "plays", "--dice", "6", "6", "-"], json.dumps(p))
    data = json.loads(out)
    assert code == 0 and len(data) == 1 and data[0]["play"] == ""
    assert data[0]["position"]["points"] == p["points"] and data[0]["position"]["turn"] == "black"


def test_rules_plays_batch_prints_one_array_per_line_in_order():
    lines = [
        json.dumps({"position": json.loads(start("backgammon")), "dice": [3, 1]}),
        json.dumps({"position": json.loads(start("fevga")), "dice": [6, 5]}),
    ]
    code, out, _ = run(["rules", "plays", "--batch"], "\n".join(lines) + "\n")
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [len(r) for r in rows] == [16, 1] and rows[1][0]["play"] == "24/13"


def test_rules_plays_batch_reports_a_bad_line_and_goes_on():
    lines = [
        "{not json",
        json.dumps({"position": json.loads(start("portes")), "dice": [7, 1]}),
        json.dumps({"position": json.loads(start("portes")), "dice": [2, 1]}),
    ]
    code, out, err = run(["rules", "plays", "--batch"], "\n".join(lines))
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 2 and "error" in rows[0] and "error" in rows[1] and isinstance(rows[2], list)
    assert "line 1" in err and "7" in err


def test_rules_check_says_legal_with_the_play(tmp_path):
    before = Position.start("backgammon")
    from board_rules import Roll

    after = before.play("13/11 24/18", Roll(6, 2))
    (tmp_path / "b.json").write_text(before.to_json())
    (tmp_path / "a.json").write_text(after.to_json())
    code, out, _ = run(["rules", "check", "--dice", "6", "2", str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    assert json.loads(out) == {"legal": True, "play": "24/18 13/11", "wrong": []}


def test_rules_check_lights_the_wrong_points(tmp_path):
    before = Position.start("backgammon")
    pts = list(before.points)
    pts[23] -= 1
    pts[13] += 1  # 24/14 with a 6-2: one pip too far
    after = {**before.to_dict(), "points": pts}
    (tmp_path / "b.json").write_text(before.to_json())
    (tmp_path / "a.json").write_text(json.dumps(after))
    code, out, _ = run(["rules", "check", "--dice", "6", "2", str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    data = json.loads(out)
    assert code == 0 and data["legal"] is False and 14 in data["wrong"] and len(data["wrong"]) <= 2


def test_rules_id_prints_gnubg_position_id():
    code, out, _ = run(["rules", "id", "-"], start("backgammon"))
    assert (code, out.strip()) == (0, "4HPwATDgc/ABMA")


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d["points"].__setitem__(5, 6), "checkers.white"),  # 16 white checkers
        (lambda d: d.__setitem__("variant", "chess"), "variant"),
        (lambda d: d.__setitem__("turn", "red"), "turn"),
        (lambda d: d["points"].pop(), "points"),
        (lambda d: d.__setitem__("pinned", {"6": "black"}), "pinned"),  # pins outside plakoto
        (lambda d: d["bar"].__setitem__("white", -1), "bar.white"),
        (lambda d: d.__setitem__("extra", 1), "extra"),
    ],
)
def test_invalid_position_exits_2_naming_the_field(mutate, field):
    data = json.loads(start("backgammon"))
    mutate(data)
    code, out, err = run(["rules", "plays", "--dice", "3", "1", "-"], json.dumps(data))
    assert code == 2 and out == "" and field in err


def test_bad_json_exits_2():
    code, _, err = run(["rules", "plays", "--dice", "3", "1", "-"], "{oops")
    assert code == 2 and "not valid JSON" in err


def test_dice_out_of_range_exit_2():
    code, _, err = run(["rules", "plays", "--dice", "0", "7", "-"], start("portes"))
    assert code == 2 and "0" in err


def test_unknown_option_exits_2():
    code, _, err = run(["rules", "start", "fevga", "--option", "colour=blue"])
    assert code == 2 and "colour" in err


def test_console_script_exits_2_with_message_on_stderr():
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "rules", "start", "checkers"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown variant 'checkers'" in proc.stderr and proc.stdout == ""


def test_demo_referees_a_game_on_the_emulated_table_with_camera_board_and_panel(tmp_path):
    from referee.journal import resume

    code, out, _ = run(["demo", "--quiet", "--seed", "3", "--out", str(tmp_path)])
    assert code == 0, out
    assert "camera: rendered frames" in out and "panel: gpiozero mock pins" in out
    assert "not a legal play" in out and "double" in out and "take" in out  # the slip was caught; the cube was used
    agreed, compared = map(int, re.search(r"board and camera agreed on (\d+) of (\d+) places", out).groups())
    assert (
        compared >= 26 * 10 and agreed >= 0.99 * compared
    )  # the camera's checkers fused with the board's at each throw
    assert resume(tmp_path / "match-3.jsonl").phase == "over"
    mat = (tmp_path / "match-3.mat").read_text()
    assert "Doubles => 2" in mat and "Takes" in mat
    assert (tmp_path / "match-3.txt").exists()


def test_demo_match_to_3_completes_with_the_score_of_its_record(tmp_path):
    from board_rules import Side
    from referee.journal import resume

    code, out, _ = run(["demo", "--quiet", "--seed", "4", "--match", "3", "--no-camera", "--out", str(tmp_path)])
    assert code == 0, out
    state = resume(tmp_path / "match-4.jsonl")
    board = state.scoreboard
    assert state.phase == "over" and board.is_over
    assert f"white (Alice) {board.points(Side.WHITE)}, black (Bob) {board.points(Side.BLACK)}" in out


def test_rules_plays_gives_up_clearly_when_a_roll_has_too_many_plays():
    from tests.helpers import make

    p = make("gul-bara", {24: 14, 5: 1, 12: -15}, rolls=(3, 0))
    code, out, err = run(["rules", "plays", "--dice", "1", "1", "--budget", "50", "-"], p.to_json())
    assert code == 2 and out == "" and "too many plays" in err and "--budget" in err
    code, out, _ = run(["rules", "plays", "--dice", "5", "5", "-"], p.to_json())  # fives, then sixes
    assert code == 0 and "24/19(4) 24/18(4)" in {d["play"] for d in json.loads(out)}


def test_version_and_a_demo_match_of_no_points_are_answered_plainly():
    code, out, _ = run(["--version"])
    assert code == 0 and out.startswith("tavli ")
    code, out, err = run(["demo", "--match", "0"])
    assert code == 2 and "--match: 0: a match is to 1 point or more" in err and out == ""
