"""``tavli hint``: the teacher from the command line."""

from __future__ import annotations

import json

import pytest

from board_rules import Position
from engine import cli as engine_cli
from engine import evaluate
from referee.cli import main


@pytest.fixture
def start(tmp_path):
    def write(variant: str) -> str:
        path = tmp_path / f"{variant}.json"
        path.write_text(Position.start(variant).to_json())
        return str(path)

    return write


def test_the_plays_are_ranked_best_first_with_their_idea(start, capsys):
    assert main(["hint", start("backgammon"), "--dice", "3", "1", "--by", "heuristic", "--top", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "backgammon: white to play 3-1; ranked by heuristic (the heuristic's points), 3 of 16 plays"
    assert lines[1].split()[:2] == ["1.", "8/5"] and lines[1].endswith("it makes your 5 point")
    assert [line.split()[0] for line in lines[1:]] == ["1.", "2.", "3."]


def test_a_play_made_is_judged_against_the_best(start, capsys):
    assert main(["hint", start("backgammon"), "--dice", "3", "1", "--by", "heuristic", "--played", "24/21 6/5"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("your play 24/21 6/5 gave up ") and "points of the heuristic" in last
    assert main(["hint", start("backgammon"), "--dice", "3", "1", "--by", "heuristic", "--played", "8/5 6/5"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "your play was the best"


def test_numbers_passed_on_list_each_first_leg_once_with_the_play_made(tmp_path, capsys):
    # gul-bara: white's 3-3 is blocked half-way and black plays the rest; a player's own continuation
    # of a first leg is judged by that leg's worth, not listed or counted as a play of its own
    from tests.test_evaluate import _PASSING

    path = tmp_path / "passing.json"
    path.write_text(json.dumps(_PASSING))
    played = "10/1 7/3 6/2 5/1(2) 4/1 | 9/off 8/3 7/2 6/1 5/off 4/off(2)"
    assert main(["hint", str(path), "--dice", "3", "3", "--played", played, "--by", "heuristic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("2 of 2 plays")
    rows = [line.split("|")[0].split(None, 1)[1].strip() for line in lines[1:3]]
    assert sorted(rows) == ["10/1 7/3 6/2 5/1(2) 4/1", "10/2 7/1 6/2 5/2 5/1 4/1"]
    assert lines[3].startswith("your play") and ("of 2)" in lines[3] or lines[3].endswith("the best"))


def test_json_names_the_evaluator_and_its_unit(start, capsys):
    assert main(["hint", start("long-nardy"), "--dice", "6", "5", "--json", "--played", "24/13"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "long-nardy" and out["dice"] == [6, 5]
    assert out["source"] == evaluate.evaluator("long-nardy")
    assert out["unit"] == ("equity" if out["source"] != "heuristic" else "heuristic")
    scores = [p["score"] for p in out["plays"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == min(5, out["compared"])
    assert out["played"]["rank"] >= 1 and out["played"]["loss"] >= 0


@pytest.mark.parametrize(
    "extra, said",
    [
        (["--dice", "6", "9"], "die"),
        (["--dice", "3", "1", "--played", "24/17"], "--played"),
        (["--dice", "3", "1", "--played", "hello"], "--played"),
        (["--dice", "3", "1", "--top", "0"], "--top"),
    ],
)
def test_bad_input_exits_2_with_the_field_named(start, capsys, extra, said):
    assert main(["hint", start("backgammon"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tavli hint: ") and said in err and "Traceback" not in err


def test_a_position_that_is_not_json_or_is_over_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"variant": "portes"')
    assert main(["hint", str(bad), "--dice", "3", "1"]) == 2
    assert "position" in capsys.readouterr().err
    over = tmp_path / "over.json"
    over.write_text(
        json.dumps({**Position.start("portes").to_dict(), "points": [0] * 23 + [-15], "off": {"white": 15, "black": 0}})
    )
    assert main(["hint", str(over), "--dice", "3", "1"]) == 2
    assert "game is over" in capsys.readouterr().err


def test_the_command_offers_every_evaluator():
    assert engine_cli.SOURCES == evaluate.SOURCES


def test_a_hint_ranks_the_plays_once_and_judges_on_that_ranking(start, capsys, monkeypatch):
    calls = []
    real = evaluate.rank_plays

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate, "rank_plays", counted)  # the command imports it from here when it runs
    monkeypatch.setattr("engine.explain.rank_plays", counted)
    argv = ["hint", start("backgammon"), "--dice", "3", "1", "--by", "heuristic", "--top", "2", "--played", "24/21 6/5"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(calls) == 1
    assert [p["play"] for p in out["plays"]] == ["8/5 6/5", out["plays"][1]["play"]] and len(out["plays"]) == 2
    assert out["compared"] == 16 and out["played"]["rank"] > 1 and out["played"]["loss"] > 0
