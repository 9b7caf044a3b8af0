"""Exporting a match journal: gnubg's .mat (checked by importing it into gnubg itself), text and JSON."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from board_rules import Position, Roll, Side
from board_rules.cube import GameOutcome
from board_rules.ids import position_id
from referee import cli_record
from referee import events as E
from referee import journal as J
from referee.export import (
    ExportError,
    build_record,
    export,
    export_json,
    export_mat,
    export_text,
    final_position,
    gnubg_settings,
)
from referee.record import ResumeState
from referee.spec import MatchSpec
from tests.test_journal import record_match

DATA = Path(__file__).parent / "data"


# =============================================================================== gnubg itself


def _gnubg_binary() -> str | None:
    found = shutil.which("gnubg")
    if found:
        return found
    return "/usr/games/gnubg" if os.access("/usr/games/gnubg", os.X_OK) else None


def _require_gnubg() -> str:
    """gnubg's path; skips the test without it, fails it when TAVLI_REQUIRE_GNUBG=1."""
    binary = _gnubg_binary()
    if binary is None:
        reason = "GNU Backgammon is not installed (Debian: apt-get install --no-install-recommends gnubg)"
        if os.environ.get("TAVLI_REQUIRE_GNUBG") == "1":
            pytest.fail(reason + ", and TAVLI_REQUIRE_GNUBG=1 requires it")
        pytest.skip(reason)
    return binary


@pytest.fixture
def gnubg(tmp_path):
    """Import a .mat file into GNU Backgammon (Debian package ``gnubg``) and report what it holds."""
    binary = _require_gnubg()
    home = tmp_path / "gnubg-home"
    home.mkdir()

    def run(mat: Path, settings: list[str] | tuple[str, ...] = ()) -> dict:
        """``settings``: gnubg commands before the import (``referee.export.gnubg_settings``)."""
        commands = tmp_path / "commands.txt"
        commands.write_text("".join(f"{c}\n" for c in settings) + f"import mat {mat}\nshow score\nshow board\nquit\n")
        out = subprocess.run(
            [binary, "-t", "-q", "-c", str(commands)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "HOME": str(home)},
        )
        text = out.stdout + out.stderr
        ids = re.findall(r"Position ID: (\S+)", text)
        score = re.search(r"The score \(after (\d+) games?\) is: (.+?) (\d+), (.+?) (\d+)", text)
        problems = [line for line in text.splitlines() if re.search(r"WARNING|Unrecognised|not a valid", line)]
        return {
            "position_id": ids[-1] if ids else None,
            "games": int(score.group(1)) if score else None,
            "score": (int(score.group(3)), int(score.group(5))) if score else None,
            "problems": problems,
            "output": text,
        }

    return run


def test_without_gnubg_the_import_tests_skip_unless_it_is_required(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "_gnubg_binary", lambda: None)
    monkeypatch.delenv("TAVLI_REQUIRE_GNUBG", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        _require_gnubg()
    monkeypatch.setenv("TAVLI_REQUIRE_GNUBG", "1")
    with pytest.raises(pytest.fail.Exception, match="TAVLI_REQUIRE_GNUBG=1 requires it"):
        _require_gnubg()


def _ids_either_turn(position: Position) -> set[str]:
    return {position_id(position.with_turn(Side.WHITE)), position_id(position.with_turn(Side.BLACK))}


def _exported(tmp_path: Path, spec: MatchSpec, seed: int, **kw) -> tuple[Path, ResumeState, object]:
    journal = tmp_path / "m.jsonl"
    record_match(journal, spec, seed, **kw)
    mat = tmp_path / "m.mat"
    mat.write_text(export(journal, "mat"))
    record = build_record(J.read_journal(journal).events)
    return mat, J.resume(journal), record


@pytest.mark.parametrize("seed", [8, 21, 33])
def test_gnubg_imports_a_backgammon_match_with_our_score_and_final_board(tmp_path, gnubg, seed):
    mat, state, record = _exported(tmp_path, MatchSpec("match", 5), seed, cube_rate=0.1, resign_rate=0.01)
    seen = gnubg(mat)
    assert seen["problems"] == [], seen["output"][-2000:]
    assert seen["games"] == state.scoreboard.games_played
    assert seen["score"] == (state.scoreboard.white_score, state.scoreboard.black_score)
    assert seen["position_id"] in _ids_either_turn(final_position(record))


@pytest.mark.parametrize("stop", [40, 95, 150])
def test_gnubg_reaches_our_board_in_the_middle_of_a_game(tmp_path, gnubg, stop):
    mat, state, record = _exported(tmp_path, MatchSpec("match", 7), 5, stop_after=stop)
    seen = gnubg(mat)
    assert seen["problems"] == [], seen["output"][-2000:]
    assert seen["position_id"] in _ids_either_turn(final_position(record))
    if state.position is not None:  # the game is still being played: our board is gnubg's board
        assert seen["position_id"] in _ids_either_turn(state.position)


def test_gnubg_imports_a_money_session(tmp_path, gnubg):
    mat, state, record = _exported(tmp_path, MatchSpec("money", variant="backgammon"), 13, games=3, cube_rate=0.15)
    assert " 0 point match" in mat.read_text()
    seen = gnubg(mat, gnubg_settings(record))
    assert seen["problems"] == [], seen["output"][-2000:]
    assert seen["games"] == 3
    assert seen["score"] == (state.scoreboard.white_points, state.scoreboard.black_points)
    assert seen["position_id"] in _ids_either_turn(final_position(record))


def test_gnubg_imports_the_portes_games_of_a_tavli_match_as_backgammon(tmp_path, gnubg):
    mat, _, record = _exported(tmp_path, MatchSpec("tavli", 7), 3)
    portes = [g for g in record.games if g.variant == "portes"]
    text = mat.read_text()
    assert len(portes) >= 2 and text.count(" Game ") == len(portes)
    seen = gnubg(mat)
    assert seen["problems"] == [], seen["output"][-2000:]
    assert seen["games"] == len(portes)
    assert seen["position_id"] in _ids_either_turn(Position.from_dict(portes[-1].final))


# =============================================================================== the .mat layout


def _small_match(path: Path) -> None:
    bg = Position.start("backgammon")
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(MatchSpec("match", 3), "Anna Maria", "Ni:kos"))
        jr.append(E.game_start(1, bg, None))
        jr.append(E.opening_roll(3, 1))
        a = bg.with_turn(Side.WHITE).play("8/5 6/5", Roll(3, 1))
        jr.append(E.play(Side.WHITE, Roll(3, 1), "8/5 6/5", bg.with_turn(Side.WHITE), a))
        jr.append(E.roll(Side.BLACK, Roll(6, 4)))
        b = a.play("24/18 13/9", Roll(6, 4))
        jr.append(E.play(Side.BLACK, Roll(6, 4), "24/18 13/9", a, b))
        jr.append(E.cube("double", Side.WHITE, 1))
        jr.append(E.cube("pass", Side.BLACK, 1))
        jr.append(E.game_end(GameOutcome(Side.WHITE, 1, "pass")))


def test_mat_layout_follows_gnubg(tmp_path):
    path = tmp_path / "m.jsonl"
    _small_match(path)
    text = export(path, "mat")
    header, _, body = text.partition(" 3 point match\n")
    assert header.startswith('; [Site "tavli-table"]\n')
    assert '; [Player 1 "Anna Maria"]' in header and '; [Player 2 "Ni kos"]' in header
    assert body == (
        "\n"
        " Game 1\n"
        " Anna Maria : 0                 Ni kos : 0\n"
        "  1) 31: 8/5 6/5                 64: 24/18 13/9\n"
        "  2)  Doubles => 2                Drops\n"
        "      Wins 1 point\n"
        "\n"
    )


def test_mat_refuses_a_journal_without_backgammon_or_portes(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, MatchSpec("money", variant="plakoto"), 1, games=1)
    with pytest.raises(ExportError, match="backgammon and portes games only; this journal has \\['plakoto'\\]"):
        export(path, "mat")


# =============================================================================== text and JSON, every variant


@pytest.mark.parametrize(
    "variant", ["plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy", "portes", "backgammon"]
)
def test_text_and_json_exports_of_every_variant(tmp_path, variant):
    path = tmp_path / "m.jsonl"
    written = record_match(path, MatchSpec("money", variant=variant), 2, games=1)
    plays = [e for e in written if e["type"] == "play"]
    text = export(path, "txt")
    assert f"game 1: {variant}" in text
    assert text.count(f" {plays[-1]['side']:<5} ") >= 1
    assert plays[-1]["play"] in text
    assert "result: " in text and "final: white" in text
    doc = json.loads(export(path, "json"))
    assert doc["format"] == "tavli-table-record" and doc["version"] == 1
    assert doc["finished"] is True
    (game,) = doc["games"]
    assert game["variant"] == variant
    assert [e["play"] for e in game["events"] if e["type"] == "play"] == [e["play"] for e in plays]
    assert Position.from_dict(game["final"]) == Position.from_dict(plays[-1]["after"])
    assert game["result"] == written[-2]["outcome"]


def test_text_export_of_a_tavli_match_names_games_cube_corrections_and_result(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, MatchSpec("tavli", 3, with_gul_bara=True), 10, correction_rate=0.2)
    text = export(path, "txt")
    assert text.startswith("tavli-table record: tavli match to 3 (portes, plakoto, fevga, gul-bara)\n")
    assert "white: Anna    black: Nikos" in text
    assert "game 1: portes" in text and "game 2: plakoto" in text
    assert "referee: " in text and "wins the match" in text


def test_an_unfinished_journal_exports_as_unfinished(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, MatchSpec("tavli", 3), 10, stop_after=20)
    assert "not finished: white 0 - black 0" in export(path, "txt")
    assert json.loads(export(path, "json"))["finished"] is False


def test_export_refuses_a_journal_with_an_illegal_play(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, MatchSpec("match", 3), 4, stop_after=10)
    k = next(i for i, e in enumerate(written) if e["type"] == "play")
    written[k] = {**written[k], "play": "6/off"}
    path.write_text("".join(json.dumps(e) + "\n" for e in written))
    for fmt in ("mat", "txt", "json"):
        with pytest.raises(J.JournalReplayError, match=rf"line {k + 1}: play '6/off'"):
            export(path, fmt)


def test_fixture_journal_exports():
    """tests/data/portes-match.jsonl: a tavli match to 1 (one portes game), kept as a fixed fixture."""
    journal = DATA / "portes-match.jsonl"
    assert J.resume(journal).phase == "over"
    text = export(journal, "mat")
    assert " 1 point match" in text and "Wins" in text
    record = build_record(J.read_journal(journal).events)
    assert export_mat(record) == text
    assert json.loads(export_json(record))["winner"] in ("white", "black")
    assert export_text(record).endswith("wins the match\n")


def test_gnubg_imports_the_fixture_journal(tmp_path, gnubg):
    journal = DATA / "portes-match.jsonl"
    record = build_record(J.read_journal(journal).events)
    mat = tmp_path / "fixture.mat"
    mat.write_text(export(journal, "mat"))
    seen = gnubg(mat)
    assert seen["problems"] == [] and seen["games"] == 1
    assert seen["position_id"] in _ids_either_turn(final_position(record))


# =============================================================================== the command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tavli")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_record.add_parser(sub)
    return parser


def test_cli_export_writes_each_format(tmp_path):
    journal = tmp_path / "m.jsonl"
    record_match(journal, MatchSpec("match", 3), 4)
    for fmt in ("mat", "txt", "json"):
        out = tmp_path / f"out.{fmt}"
        args = _parser().parse_args(["record", "export", str(journal), "--format", fmt, "-o", str(out)])
        err = io.StringIO()
        assert cli_record.run(args, stderr=err) == 0
        assert out.read_text() == export(journal, fmt)
    stdout = io.StringIO()
    args = _parser().parse_args(["record", "export", str(journal), "--format", "txt"])
    assert cli_record.run(args, stdout=stdout) == 0
    assert stdout.getvalue() == export(journal, "txt")


@pytest.mark.parametrize(
    "content, message",
    [
        (
            (
                '{"seq":1,"time":"t","type":"match_start","match":{"kind":"tavli","length":3},"players":{"white":"a","black":"b"}}\n'
                "not json\n{}\n"
            ),
            "line 2: corrupt event",
        ),
        (
            '{"seq":1,"time":"t","type":"roll","side":"white","dice":[1,2]}\n',
            "line 1: the journal must begin with match_start",
        ),
        ("", "the journal is empty"),
    ],
)
def test_cli_bad_journal_exits_2_with_a_message(tmp_path, content, message):
    journal = tmp_path / "bad.jsonl"
    journal.write_text(content)
    err = io.StringIO()
    args = _parser().parse_args(["record", "export", str(journal), "--format", "json"])
    assert cli_record.run(args, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("tavli record export: ")
    assert message in err.getvalue()


def test_cli_missing_journal_or_unwritable_format_exits_2(tmp_path):
    err = io.StringIO()
    args = _parser().parse_args(["record", "export", str(tmp_path / "none.jsonl"), "--format", "txt"])
    assert cli_record.run(args, stderr=err) == 2
    assert re.search("cannot (read it|be read)", err.getvalue()), err.getvalue()
    journal = tmp_path / "p.jsonl"
    record_match(journal, MatchSpec("money", variant="fevga"), 1, games=1)
    err = io.StringIO()
    args = _parser().parse_args(["record", "export", str(journal), "--format", "mat"])
    assert cli_record.run(args, stderr=err) == 2 and "backgammon and portes games only" in err.getvalue()
