"""``tavli record analyse``: gnubg's figures per player, checked against gnubg's own
``show statistics match`` for the same file; our evaluator for the games gnubg does not
play; the JSON shape; bad input is one line and exit status 2."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from board_rules import Position
from board_rules.ids import position_id
from referee import cli_record
from referee.analyse import EngineError, analyse
from referee.export import export_mat, gnubg_settings, load_record
from referee.spec import MatchSpec
from tests.test_export import _require_gnubg
from tests.test_record_gnubg import Plan, journal

DATA = Path(__file__).parent / "data"
DEMO = DATA / "demo-match-3.jsonl"  # tavli demo --match 3 --seed 7
PORTES = DATA / "portes-match.jsonl"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tavli")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_record.add_parser(sub)
    return parser


def analyse_cli(*argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["record", "analyse", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = cli_record.run(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def gnubg() -> str:
    return _require_gnubg()


def _money(tmp_path: Path) -> Path:
    """A money session with doubles taken, a redouble and doubles passed (random plays)."""
    path = tmp_path / "money.jsonl"
    plans = [Plan(cube=((2, "take"), (3, "take"))), Plan(cube=((3, "pass"),)), Plan(cube=((2, "take"), (5, "pass")))]
    journal(path, MatchSpec("money", variant="backgammon"), plans)
    return path


# =============================================================================== gnubg's own statistics


def gnubg_statistics(binary: str, mat: Path, settings: list[str], home: Path) -> dict[str, tuple[float, float]]:
    """gnubg's ``show statistics match`` after ``analyse match`` at 0 ply, read from its text:
    per line label, the two players' first figure (white's, black's)."""
    home.mkdir(exist_ok=True)
    commands = home / "commands.txt"
    commands.write_text(
        "".join(f"{c}\n" for c in settings)
        + f'import mat "{mat}"\n'
        + "set analysis chequerplay evaluation plies 0\n"
        + "set analysis cubedecision evaluation plies 0\n"
        + "analyse match\nshow statistics match\nquit\n"
    )
    out = subprocess.run(
        [binary, "-t", "-q", "-c", str(commands)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(home)},
    ).stdout
    sections: dict[str, tuple[float, float]] = {}
    section = ""
    number = r"([-+]?\d+(?:\.\d+)?)"
    for line in out.splitlines():
        if line.strip() in ("Chequerplay statistics", "Luck statistics", "Cube statistics", "Overall statistics"):
            section = line.split()[0].lower()
            continue
        found = re.match(rf"^(\S.*?)\s{{2,}}{number}\s.*?\s{{2,}}{number}", line)
        if found and section:
            label = re.sub(r"\s*\((MWC|Points)\)$", "", found.group(1).strip())  # a match's, a session's
            sections[f"{section}: {label}"] = (float(found.group(2)), float(found.group(3)))
        # a cube error line: per player, a count and, when not 0, its cost: "2 (-2.465 ( -4.103))"
        costs = re.match(r"^(Wrong \w+|Missed \w+).*?\)\)\s+(.*)$", line)
        if costs and section == "cube":
            per = re.findall(r"(\d+)(?: \(([-+]?\d+\.\d+))?", costs.group(2))
            sections[f"cube cost: {costs.group(1)}"] = tuple(float(e or 0) for _, e in per[:2])
    assert "overall: Error rate mEMG" in sections, out[-3000:]
    return sections


def _check_against_gnubg(report: dict, stats: dict[str, tuple[float, float]]) -> None:
    w, b = report["players"]["white"], report["players"]["black"]
    for i, p in enumerate((w, b)):
        # gnubg prints signed figures to 3 decimals (totals) or 1 (rates); ours are to 4 and 2
        assert -stats["overall: Error rate mEMG"][i] == pytest.approx(p["error_rate"], abs=0.056)
        assert -stats["chequerplay: Error total EMG"][i] == pytest.approx(p["chequer"]["error_total"], abs=6e-4)
        assert -stats["cube: Error total EMG"][i] == pytest.approx(p["cube"]["error_total"], abs=6e-4)
        assert stats["luck: Luck total EMG"][i] == pytest.approx(p["luck"], abs=6e-4)
        assert stats["luck: Luck rate mEMG"][i] == pytest.approx(p["luck_rate"], abs=0.056)
        assert stats["chequerplay: Unforced moves"][i] == p["chequer"]["decisions"]
        assert stats["cube: Close or actual cube decisions"][i] == p["cube"]["decisions"]
        marked = p["chequer"]["marked"]
        assert stats["chequerplay: Moves marked very bad"][i] == marked["very bad"]
        assert stats["chequerplay: Moves marked bad"][i] == marked["bad"]
        assert stats["chequerplay: Moves marked doubtful"][i] == marked["doubtful"]
        # the PR is half the error rate: 500 x EMG lost per decision
        assert p["pr"] == pytest.approx(p["error_rate"] / 2, abs=0.01)


def test_the_demo_match_gives_a_pr_per_player_and_a_blunder_list(tmp_path, gnubg):
    code, out, err = analyse_cli(str(DEMO), "--json", "--sgf", str(tmp_path / "demo.sgf"))
    assert code == 0, err
    report = json.loads(out)
    assert report["engine"].startswith("GNU Backgammon") and report["plies"] == 0
    assert set(report["players"]) == {"white", "black"}
    names = {side: p["name"] for side, p in report["players"].items()}
    assert names == {"white": "Alice", "black": "Bob"}
    for p in report["players"].values():
        assert isinstance(p["pr"], float) and isinstance(p["error_rate"], float) and p["pr"] > 0
    blunders = [m for p in report["players"].values() for m in p["blunders"]]
    assert blunders, "the demo's players make blunders gnubg marks very bad"
    for m in blunders:
        assert m["mark"] == "very bad" and m["kind"] in ("chequer", "cube")
        assert re.fullmatch(r"[A-Za-z0-9+/]{14}", m["position_id"])
        assert re.fullmatch(r"[A-Za-z0-9+/]{12}", m["match_id"])
        assert "13  14  15" in m["board"] and "backgammon" in m["board"]
    sgf = (tmp_path / "demo.sgf").read_text()
    assert sgf.startswith("(;FF[4]GM[6]") and "PW[Alice]" in sgf and "DA[" in sgf  # cube analysis kept


def test_the_figures_are_gnubgs_show_statistics_match_for_the_same_file(tmp_path, gnubg):
    code, out, err = analyse_cli(str(DEMO), "--json", "--sgf", str(tmp_path / "a.sgf"))
    assert code == 0, err
    record = load_record(DEMO)
    mat = tmp_path / "demo.mat"
    mat.write_text(export_mat(record))
    stats = gnubg_statistics(gnubg, mat, gnubg_settings(record), tmp_path / "home")
    _check_against_gnubg(json.loads(out), stats)


def test_a_money_session_with_passed_doubles_agrees_with_gnubg_and_prices_each_cube_blunder(tmp_path, gnubg):
    path = _money(tmp_path)
    report = analyse(path).to_dict()
    record = load_record(path)
    mat = tmp_path / "money.mat"
    mat.write_text(export_mat(record))
    stats = gnubg_statistics(gnubg, mat, gnubg_settings(record), tmp_path / "home")
    _check_against_gnubg(report, stats)
    passed = 0
    for side, i in (("white", 0), ("black", 1)):
        drops = [m for m in report["players"][side]["blunders"] if m["action"] == "drop"]
        passed += len(drops)
        # every wrong pass of this session is very bad: their losses add up to gnubg's cost of them
        assert sum(m["loss"] for m in drops) == pytest.approx(-stats["cube cost: Wrong passes"][i], abs=2e-3)
    assert passed == 2


def test_blunder_ids_are_ids_gnubg_reads_back_unchanged(tmp_path, gnubg):
    report = analyse(_money(tmp_path)).to_dict()
    blunders = [m for p in report["players"].values() for m in p["blunders"]][:12]
    assert blunders
    script = tmp_path / "ids.py"
    pairs = [(m["position_id"], m["match_id"]) for m in blunders]
    script.write_text(
        "import gnubg, json\n"
        f"for pid, mid in json.loads({json.dumps(json.dumps(pairs))}):\n"
        "    gnubg.command('new session')\n"
        "    gnubg.command('set matchid ' + mid)\n"
        "    gnubg.command('set board ' + pid)\n"
        "    print('IDS', gnubg.positionid(), gnubg.matchid())\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    out = subprocess.run(
        [gnubg, "-t", "-q", "-p", str(script)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "HOME": str(home)},
    ).stdout
    seen = re.findall(r"^IDS (\S+) (\S+)$", out, re.M)
    assert seen == pairs, out[-2000:]


def test_a_mat_file_is_analysed_as_its_journal_is(tmp_path, gnubg):
    mat = tmp_path / "demo.mat"
    mat.write_text(export_mat(load_record(DEMO)))
    from_mat = analyse(mat).to_dict()
    from_journal = analyse(DEMO).to_dict()
    for side in ("white", "black"):
        assert from_mat["players"][side] == from_journal["players"][side]


def test_the_html_report_and_the_sgf_lie_side_by_side(tmp_path, gnubg):
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir()
    code, out, err = analyse_cli(str(DEMO), "--html", str(report))
    assert code == 0, err
    page = report.read_text()
    assert "<title>Analysis: Alice v Bob</title>" in page
    assert "at 0 ply" in page and "PR" in page and "Position ID <code>" in page and "<svg" in page
    assert (tmp_path / "out" / "report.sgf").read_text().startswith("(;FF[4]GM[6]")
    assert "PR" in out and "blunders of Alice (white)" in out and "Position ID:" in out


# =============================================================================== our evaluator


def test_a_portes_match_is_judged_by_our_evaluator_and_says_so(tmp_path):
    code, out, err = analyse_cli(str(PORTES), "--json", "--gnubg", str(tmp_path / "no-gnubg"))
    assert code == 0, err  # no gnubg needed
    report = json.loads(out)
    assert report["engine"] == "tavli-table evaluator (heuristic)" and report["plies"] == 0
    assert report["sgf"] is None
    (note,) = report["notes"]
    assert note.startswith("Not analysed by gnubg: portes has no cube and no backgammons.")
    for p in report["players"].values():
        assert p["pr"] is None and p["cube"] is None and p["luck"] is None
        assert p["error_rate"] > 0 and p["chequer"]["decisions"] > 0
        for m in p["blunders"]:
            assert m["position_id"] is None and "portes" in m["board"]
    code, text, _ = analyse_cli(str(PORTES), "--gnubg", str(tmp_path / "no-gnubg"))
    assert "analysed by tavli-table evaluator (heuristic) at 0 ply" in text and "Not analysed by gnubg" in text


def test_a_tavli_match_names_each_game_gnubg_cannot_judge(tmp_path):
    path = tmp_path / "tavli.jsonl"
    journal(path, MatchSpec("tavli", 3), [Plan()])
    report = analyse(path).to_dict()
    (note,) = report["notes"]
    assert "plakoto pins a blot" in note and "portes has no cube" in note
    assert report["games"] >= 2


# =============================================================================== the JSON shape


def test_the_json_shape(tmp_path):
    code, out, err = analyse_cli(str(PORTES), "--json", "--gnubg", str(tmp_path / "no-gnubg"))
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {
        "format", "version", "match", "engine", "plies", "units", "length", "games", "players", "notes", "sgf",
    }  # fmt: skip
    assert (report["format"], report["version"]) == ("tavli-table-analysis", 1)
    for p in report["players"].values():
        assert set(p) == {"name", "pr", "error_rate", "chequer", "cube", "luck", "luck_rate", "blunders"}
        assert set(p["chequer"]) == {"decisions", "marked", "errors", "error_total", "error_rate"}
        assert set(p["chequer"]["marked"]) == {"doubtful", "bad", "very bad"}
        for m in p["blunders"]:
            assert set(m) == {
                "game", "turn", "side", "kind", "mark", "action", "best", "loss", "dice",
                "position_id", "match_id", "board", "position",
            }  # fmt: skip


def test_the_json_shape_of_gnubgs_analysis(tmp_path, gnubg):
    report = analyse(DEMO).to_dict()
    for p in report["players"].values():
        assert set(p["cube"]) == {"decisions", "marked", "errors", "error_total", "error_rate"}
        assert "wrong take" in p["cube"]["marked"] and "missed double above cp" in p["cube"]["marked"]
        assert isinstance(p["luck"], float) and isinstance(p["luck_rate"], float)
    assert report["units"] == "EMG" and report["length"] == 3 and report["games"] == 2


# =============================================================================== bad input


def _one_line(code: int, err: str, *words: str) -> None:
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


def test_a_missing_match_is_one_line_naming_match(tmp_path):
    code, _, err = analyse_cli(str(tmp_path / "nothing.jsonl"))
    _one_line(code, err, "MATCH", "nothing.jsonl")


def test_a_file_that_is_no_match_is_one_line(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\nworld\n")
    code, _, err = analyse_cli(str(text))
    _one_line(code, err, "MATCH", "point match")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "match_start"\n')
    code, _, err = analyse_cli(str(broken))
    _one_line(code, err, "broken.jsonl")
    folder = tmp_path / "folder"
    folder.mkdir()
    code, _, err = analyse_cli(str(folder))
    _one_line(code, err, "MATCH")


def test_a_mat_gnubg_cannot_import_is_one_line(tmp_path, gnubg):
    mat = tmp_path / "bad.mat"
    mat.write_text(" 3 point match\n\n Game 1\n nonsense\n")
    code, _, err = analyse_cli(str(mat))
    _one_line(code, err, "MATCH")


def test_gnubg_missing_is_one_line_naming_gnubg(tmp_path):
    code, _, err = analyse_cli(str(DEMO), "--gnubg", str(tmp_path / "no-gnubg"), "--sgf", str(tmp_path / "x.sgf"))
    _one_line(code, err, "gnubg", "not found", "--gnubg")
    with pytest.raises(EngineError):
        analyse(DEMO, gnubg=str(tmp_path / "no-gnubg"))


def test_a_report_that_cannot_be_written_is_one_line_naming_the_option(tmp_path):
    code, _, err = analyse_cli(str(DEMO), "--html", str(tmp_path / "missing" / "r.html"))
    _one_line(code, err, "--html")
    code, _, err = analyse_cli(str(DEMO), "--sgf", str(DEMO))
    _one_line(code, err, "--sgf")


def test_bad_input_from_the_real_command_line_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "record", "analyse", str(tmp_path / "none.mat")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    _one_line(proc.returncode, proc.stderr, "MATCH")


def test_the_html_report_of_our_evaluator_draws_each_blunder_and_says_who_judged(tmp_path):
    page = tmp_path / "portes.html"
    code, _, err = analyse_cli(str(PORTES), "--html", str(page), "--gnubg", str(tmp_path / "no-gnubg"))
    assert code == 0, err
    text = page.read_text()
    assert "Not analysed by gnubg" in text and "tavli-table evaluator (heuristic) at 0 ply" in text
    assert "<svg" in text and "Position ID" not in text
    assert not (tmp_path / "portes.sgf").exists()


def test_the_portes_games_of_a_tavli_mat_go_to_gnubg_with_a_note(tmp_path, gnubg):
    path = tmp_path / "tavli.jsonl"
    journal(path, MatchSpec("tavli", 5), [Plan()])
    mat = tmp_path / "tavli.mat"
    mat.write_text(export_mat(load_record(path)))
    report = analyse(mat, sgf=tmp_path / "tavli.sgf").to_dict()
    assert report["engine"].startswith("GNU Backgammon")
    assert any("portes games" in n for n in report["notes"])
    assert all(p["cube"]["decisions"] == 0 for p in report["players"].values())  # set cube use off


def test_one_ply_is_offered_and_said(tmp_path, gnubg):
    code, out, err = analyse_cli(str(DEMO), "--plies", "1", "--sgf", str(tmp_path / "d.sgf"))
    assert code == 0, err
    assert "at 1 ply" in out


def test_each_chequer_blunder_is_the_journals_position_before_that_play(tmp_path, gnubg):
    """gnubg's Position ID of a blunder, our own encoder's of the journal's board: the same turn, the same ID."""
    path = _money(tmp_path)
    record = load_record(path)
    report = analyse(path).to_dict()
    chequer = [m for p in report["players"].values() for m in p["blunders"] if m["kind"] == "chequer"]
    assert len(chequer) > 10
    for m in chequer:
        turns = [e for e in record.games[m["game"] - 1].events if e["type"] in ("play", "pass")]
        event = turns[m["turn"] - 1]
        assert event["side"] == m["side"]
        assert sorted(event["dice"], reverse=True) == m["dice"]
        before, drawn = Position.from_dict(event["before"]), Position.from_dict(m["position"])
        assert position_id(before) == m["position_id"]
        assert (drawn.points, drawn.bar, drawn.off, drawn.turn) == (before.points, before.bar, before.off, before.turn)


def test_a_game_just_begun_has_no_pr_yet_rather_than_a_perfect_one(tmp_path, gnubg):
    begun = tmp_path / "begun.jsonl"
    begun.write_text("".join(DEMO.read_text().splitlines(keepends=True)[:3]))
    report = analyse(begun).to_dict()
    for p in report["players"].values():
        assert p["chequer"]["decisions"] == 0 and p["pr"] is None and p["error_rate"] is None
