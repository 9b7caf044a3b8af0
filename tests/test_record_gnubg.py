"""gnubg scores each kind of record as the referee did: every game's winner and points, the
score before it and the final score, read from GNU Backgammon itself after it imports the
``.mat`` with the commands ``tavli record open`` gives it (``referee.export.gnubg_commands``)."""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from board_rules import Position, Roll, Side, find_variant
from board_rules.cube import CubeOptions, CubeState, GameOutcome
from board_rules.match import MoneySession, TavliMatch
from board_rules.movegen import legal_plays
from board_rules.variants import Variant
from engine.evaluate import random_play
from referee import cli_record
from referee import events as E
from referee import journal as J
from referee.export import Game, Record, export_mat, gnubg_commands, load_record, mat_notes
from referee.spec import MatchSpec
from tests.test_export import _require_gnubg

# =============================================================================== records of each kind


@dataclass(frozen=True)
class Plan:
    """How one game goes.

    ``cube``: (turn, answer) pairs, the side on roll doubling before its turn-th roll
    (answers take, pass, beaver, beaver-pass, raccoon); ``resign``: (turn, level), the side
    on roll resigning then, accepted; ``tie``: a tied opening roll first; ``stays_back``: that
    side always keeps the most checkers back (on the bar and in the other's home board).
    ``want``, ``winner``, ``gnubg_backgammon``: the game is played again, with other dice,
    until it ends so (``gnubg_backgammon``: a gammon gnubg would count as a backgammon).
    """

    cube: tuple[tuple[int, str], ...] = ()
    resign: tuple[int, int] | None = None
    tie: bool = False
    want: str | None = None
    winner: str | None = None
    stays_back: str | None = None
    gnubg_backgammon: bool = False

    def wanted(self, outcome: GameOutcome, final: Position) -> bool:
        if self.want is not None and outcome.kind != self.want:
            return False
        if self.winner is not None and (outcome.winner is None or outcome.winner.value != self.winner):
            return False
        if self.gnubg_backgammon:
            return outcome.kind == "gammon" and find_variant("backgammon").score_win(final, outcome.winner)[0] == 3
        return True


def _kept_back(position: Position, side: Side) -> int:
    """``side``'s checkers on the bar and in the other side's home board (its own points 19 to 24)."""
    v = position.variant
    home = sum(position.count(side, v.white_point(side, own)) for own in range(19, 25))
    return home + position.bar[0 if side is Side.WHITE else 1]


def _answer(cube: CubeState, side: Side, answer: str, ev: list) -> GameOutcome | CubeState:
    """``side``'s double answered by the other side; a GameOutcome when it ends the game."""
    other = side.other
    ev.append(E.cube("double", side, cube.value))
    cube = cube.double(side)
    if answer == "pass":
        ev.append(E.cube("pass", other, cube.value))
        return cube.pass_(other)
    if answer == "take":
        cube = cube.take(other)
        ev.append(E.cube("take", other, cube.value))
        return cube
    cube = cube.beaver(other)
    ev.append(E.cube("beaver", other, cube.value))
    if answer == "beaver-pass":
        ev.append(E.cube("pass", side, cube.value))
        return cube.pass_(side)
    if answer == "raccoon":
        cube = cube.raccoon(side)
        ev.append(E.cube("raccoon", side, cube.value))
        cube = cube.take(other)
        ev.append(E.cube("take", other, cube.value))
        return cube
    cube = cube.take(side)
    ev.append(E.cube("take", side, cube.value))
    return cube


def _one_game(variant: Variant, cube: CubeState, rng: random.Random, plan: Plan, starter: Side | None):
    """The events of one game after its game_start, its outcome and its last position
    (``starter``: the side the match says starts, without an opening roll)."""
    ev: list = []
    position, first = Position.start(variant, Side.WHITE), None
    if starter is None and plan.tie:
        ev.append(E.opening_roll(3, 3))
        if cube.options.automatic_doubles:
            cube = cube.automatic_double()
            ev.append(E.cube("automatic", None, cube.value))
    while starter is None:
        w, b = rng.randint(1, 6), rng.randint(1, 6)
        ev.append(E.opening_roll(w, b))
        starter, dice = variant.opening(w, b)
        if starter is not None and dice:
            first = Roll(*dice)
    position, turn = position.with_turn(starter), 0
    while True:
        side = position.turn
        if first is None:
            if plan.resign is not None and turn == plan.resign[0]:
                ev.append(E.resign("offer", side, plan.resign[1]))
                cube = cube.offer_resign(side, plan.resign[1])
                ev.append(E.resign("accept", side.other))
                return ev, cube.accept_resign(side.other), position
            for at, answer in plan.cube:
                if turn == at and cube.can_double(side):
                    cube = _answer(cube, side, answer, ev)
                    if isinstance(cube, GameOutcome):
                        return ev, cube, position
            roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
            ev.append(E.roll(side, roll))
        else:
            roll, first = first, None
        if plan.stays_back == side.value:
            the_play, after = max(legal_plays(position, roll), key=lambda pa: _kept_back(pa[1], side))
        else:
            the_play, after = random_play(position, roll, rng)
        ev.append(E.play(side, roll, the_play, position, after) if the_play else E.pass_turn(side, roll))
        position, turn = after, turn + 1
        result = position.outcome()
        if result is not None:
            return ev, cube.outcome(result.winner, result.base, result.kind), position


def _score(board) -> dict[str, int]:
    return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}


def journal(path: Path, spec: MatchSpec, plans: list[Plan], seed: int = 1, tries: int = 200) -> None:
    """Journal a match game by game as ``plans`` say (the last plan again until a match is over)."""
    rng = random.Random(seed)
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec, "Anna", "Nikos"))
        board, number = spec.new_scoreboard(), 0
        while True:
            if isinstance(board, MoneySession) and number == len(plans):
                break
            if not isinstance(board, MoneySession) and board.is_over:
                break
            plan = plans[min(number, len(plans) - 1)]
            number += 1
            name = board.next_variant if isinstance(board, TavliMatch) else spec.variant
            variant = spec.make_variant(name)
            starter = board.next_starter if isinstance(board, TavliMatch) else None
            options = board.cube_options_for_next_game() if variant.has_cube else CubeOptions.without_cube()
            for _ in range(tries):
                cube = CubeState(options=options)
                ev, outcome, final = _one_game(variant, cube, random.Random(rng.random()), plan, starter)
                if plan.wanted(outcome, final):
                    break
            else:
                raise AssertionError(f"game {number}: no game in {tries} ended as {plan}")
            jr.append(E.game_start(number, Position.start(variant, Side.WHITE), starter))
            for event in ev:
                jr.append(event)
            board = board.record(outcome)
            jr.append(E.game_end(outcome, _score(board)))
        jr.append(E.match_end(None if isinstance(board, MoneySession) else board.winner, _score(board)))


def _centred_gammon(g: Game) -> bool:
    return g.outcome["kind"] == "gammon" and g.outcome["cube_owner"] is None


KINDS = {
    # white's gammon makes it 2-0: game 2 is the Crawford game, won by black; then a doubled game
    "match to 3, Crawford": (
        MatchSpec("match", 3),
        [Plan(want="gammon", winner="white"), Plan(want="single", winner="black"), Plan(cube=((2, "take"),))],
        lambda r: [g.score_before["white"] for g in r.games][:2] == [0, 2] and len(r.games) >= 3,
    ),
    "match to 5: a pass, resignations, a redouble": (
        MatchSpec("match", 5),
        [
            Plan(cube=((3, "pass"),)),
            Plan(resign=(6, 2)),
            Plan(cube=((2, "take"),), resign=(5, 1)),
            Plan(cube=((2, "take"), (3, "take"))),
            Plan(),
        ],
        lambda r: [g.outcome["kind"] for g in r.games][:3] == ["pass", "resign", "resign"],
    ),
    "money, Jacoby on": (
        MatchSpec("money", variant="backgammon", cube={"jacoby": True}),
        [Plan(want="gammon"), Plan(resign=(4, 2)), Plan(cube=((2, "take"),), want="gammon"), Plan(want="single")],
        lambda r: _centred_gammon(r.games[0]) and r.games[0].scored == 1 and r.games[1].scored == 1,
    ),
    "money, Jacoby off": (
        MatchSpec("money", variant="backgammon"),
        [Plan(want="gammon"), Plan(resign=(4, 2)), Plan(want="single")],
        lambda r: _centred_gammon(r.games[0]) and r.games[0].scored == 2 and r.games[1].scored == 2,
    ),
    "money, doubled and taken, redoubled and passed": (
        MatchSpec("money", variant="backgammon"),
        [Plan(cube=((2, "take"), (3, "take"))), Plan(cube=((3, "pass"),)), Plan(cube=((2, "take"), (5, "pass")))],
        lambda r: r.games[0].outcome["cube"] == 4 and [g.scored for g in r.games[1:]] == [1, 2],
    ),
    "money, beavers and raccoons": (
        MatchSpec("money", variant="backgammon", cube={"beavers": True, "raccoons": True, "jacoby": True}),
        [Plan(cube=((2, "beaver"),)), Plan(cube=((2, "beaver-pass"),)), Plan(cube=((2, "raccoon"),))],
        lambda r: [g.outcome["cube"] for g in r.games] == [4, 2, 8] and r.games[1].scored == 2,
    ),
    "tavli match: its portes games": (
        MatchSpec("tavli", 5),
        [Plan()],
        lambda r: sum(g.variant == "portes" for g in r.games) >= 2 and len(r.games) > 2,
    ),
    "portes money: a gammon gnubg would count a backgammon": (
        MatchSpec("money", variant="portes"),
        [Plan(stays_back="black", winner="white", gnubg_backgammon=True), Plan(want="gammon")],
        lambda r: r.games[0].scored == 2 and r.games[1].scored == 2,
    ),
}


# =============================================================================== gnubg's view of a record


@dataclass
class Seen:
    """What gnubg holds after the import: each game's info (``score-X``, ``score-O``, ``winner``
    X or O, ``points-won``), the match's rules, the final score it shows, and its complaints."""

    games: list[dict]
    rules: list[str]
    final: tuple[int, int] | None
    problems: list[str]
    output: str


GNUBG_SCRIPT = """\
import gnubg, json, sys
for command in json.loads({commands!r}):
    gnubg.command(command)
m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
print("RESULT " + json.dumps({{"rules": m["match-info"].get("rules") or [], "games": [g["info"] for g in m["games"]]}}))
sys.stdout.flush()
gnubg.command("show score")
"""


def gnubg_view(binary: str, commands: list[str], home: Path) -> Seen:
    """Run ``commands`` in gnubg (its Python: ``gnubg -t -p``) and read back the match it holds."""
    script = home / "view.py"
    script.write_text(GNUBG_SCRIPT.format(commands=json.dumps(commands)))
    out = subprocess.run(
        [binary, "-t", "-q", "-p", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "HOME": str(home)},
    )
    text = out.stdout + out.stderr
    found = re.search(r"^RESULT (.*)$", text, re.M)
    assert found, f"gnubg did not report the match (has it Python?):\n{text[-3000:]}"
    result = json.loads(found.group(1))
    score = re.search(r"The score \(after \d+ games?\) is: .+? (\d+), .+? (\d+)", text)
    problems = [
        line
        for line in text.splitlines()
        if re.search(r"WARNING|Unrecognised|not a valid|doesn't follow|[Ee]rror", line)
    ]
    return Seen(
        result["games"],
        list(result["rules"]),
        (int(score.group(1)), int(score.group(2))) if score else None,
        problems,
        text,
    )


def _ours(record: Record) -> tuple[list[Game], tuple[int, int]]:
    games = [g for g in record.games if g.variant in ("backgammon", "portes")]
    if record.spec.kind == "tavli":  # gnubg sees the portes games only: its score is the last one's
        last = games[-1].score_after
        return games, (last["white"], last["black"])
    return games, (record.final_score["white"], record.final_score["black"])


def _per_game(games: list[Game]) -> list[tuple]:
    return [
        (g.score_before["white"], g.score_before["black"], "X" if g.outcome["winner"] == "white" else "O", g.scored)
        for g in games
    ]


def _gnubg_per_game(seen: Seen) -> list[tuple]:
    return [(g["score-X"], g["score-O"], g["winner"], g["points-won"]) for g in seen.games]


@pytest.fixture
def gnubg_home(tmp_path) -> tuple[str, Path]:
    binary = _require_gnubg()
    home = tmp_path / "gnubg-home"
    home.mkdir()
    return binary, home


@pytest.mark.parametrize("kind", list(KINDS))
def test_gnubg_scores_every_game_of_the_record_as_we_did(tmp_path, gnubg_home, kind):
    spec, plans, shows_the_kind = KINDS[kind]
    path = tmp_path / "m.jsonl"
    journal(path, spec, plans)
    record = load_record(path)
    assert shows_the_kind(record), f"the record is not of its kind: {[g.outcome for g in record.games]}"
    mat = tmp_path / "m.mat"
    mat.write_text(export_mat(record))
    binary, home = gnubg_home
    seen = gnubg_view(binary, gnubg_commands(record, mat), home)
    games, final = _ours(record)
    assert seen.problems == [], seen.output[-3000:]
    assert _gnubg_per_game(seen) == _per_game(games), mat.read_text()
    assert seen.final == final
    if spec.kind != "tavli":  # gnubg's own points, added up, reach our final score
        won = [sum(g["points-won"] for g in seen.games if g["winner"] == x) for x in "XO"]
        assert tuple(won) == final
    if spec.kind == "money":
        assert ("Jacoby" in seen.rules) is bool(spec.cube.get("jacoby"))


def test_gnubg_alone_scores_a_jacoby_off_gammon_as_1_which_is_why_open_sets_jacoby(tmp_path, gnubg_home):
    """gnubg reads the Jacoby rule of a money session from its setting (on by default), never from the file."""
    spec, plans, _ = KINDS["money, Jacoby off"]
    path = tmp_path / "m.jsonl"
    journal(path, spec, plans[:1])
    record = load_record(path)
    mat = tmp_path / "m.mat"
    mat.write_text(export_mat(record))
    assert '; [Jacoby "Off"]' in mat.read_text()
    binary, home = gnubg_home
    plain = gnubg_view(binary, [f'import mat "{mat}"'], home)
    assert (record.games[0].scored, plain.games[0]["points-won"]) == (2, 1)
    assert gnubg_commands(record, mat)[0] == "set jacoby off"


def test_a_portes_game_gnubg_would_count_a_backgammon_ends_as_the_gammon_resigned(tmp_path):
    spec, plans, _ = KINDS["portes money: a gammon gnubg would count a backgammon"]
    path = tmp_path / "m.jsonl"
    journal(path, spec, plans[:1])
    record = load_record(path)
    (game,) = record.games
    turns = [e for e in game.events if e["type"] in ("play", "pass")]
    last = turns[-1]["play"]
    text = export_mat(record)
    body = text.partition(" 0 point match")[2]
    assert len(re.findall(r"\b[1-6][1-6]: ", body)) == len(turns) - 1
    assert body.rstrip().endswith("Wins 2 points")
    (note,) = mat_notes(record)
    assert note.startswith(f"game 1: white's last play ({last}) is left out") and "backgammon (3 points)" in note
    assert f"; {note}" in text


def test_automatic_doubles_are_named_as_what_the_mat_cannot_say(tmp_path):
    path = tmp_path / "m.jsonl"
    journal(path, MatchSpec("money", variant="backgammon", cube={"automatic_doubles": 1}), [Plan(tie=True), Plan()])
    record = load_record(path)
    assert [g.cube_start for g in record.games] == [2, 1]
    (note,) = mat_notes(record)
    assert note.startswith("game 1: the cube began at 2 (automatic doubles)")


# =============================================================================== tavli record open


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tavli")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_record.add_parser(sub)
    return parser


def _jacoby_off_journal(tmp_path: Path) -> Path:
    path = tmp_path / "money.jsonl"
    journal(path, MatchSpec("money", variant="backgammon"), [Plan(want="gammon")])
    return path


def test_open_dry_run_writes_the_mat_beside_the_journal_and_prints_gnubgs_commands(tmp_path):
    path = _jacoby_off_journal(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    args = _parser().parse_args(["record", "open", str(path), "--dry-run"])
    assert cli_record.run(args, stdout=out, stderr=err) == 0
    mat = tmp_path / "money.mat"
    assert mat.read_text() == export_mat(load_record(path))
    assert out.getvalue() == f'set jacoby off\nset cube use on\nimport mat "{mat.resolve()}"\n'
    assert err.getvalue() == f"wrote {mat}\n"


def test_open_runs_gnubgs_command_line_with_jacoby_off_and_our_score(tmp_path, gnubg_home, monkeypatch, capfd):
    binary, home = gnubg_home
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    path = _jacoby_off_journal(tmp_path)
    mat = tmp_path / "out" / "x.mat"
    mat.parent.mkdir()
    args = _parser().parse_args(["record", "open", str(path), "--mat", str(mat), "--gnubg", binary])
    assert cli_record.run(args, stdin=io.StringIO("show score\nquit\n")) == 0
    shown = capfd.readouterr().out
    ours = load_record(path).final_score
    assert f"is: Anna {ours['white']}, Nikos {ours['black']} (money session, without Jacoby rule)" in shown
    assert max(ours.values()) >= 2


def test_open_in_a_window_gives_gnubg_the_commands_with_c(tmp_path, monkeypatch):
    fake = tmp_path / "fake-gnubg"
    fake.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat "$3" > {tmp_path}/commands\n')
    fake.chmod(0o755)
    monkeypatch.setenv("DISPLAY", ":0")
    path = _jacoby_off_journal(tmp_path)
    args = _parser().parse_args(["record", "open", str(path), "--gnubg", str(fake)])
    assert cli_record.run(args, stderr=io.StringIO()) == 0
    assert (tmp_path / "args").read_text().startswith("-q -c ")
    assert (tmp_path / "commands").read_text().splitlines()[0] == "set jacoby off"


def test_open_without_gnubg_says_what_to_type_and_exits_2(tmp_path):
    path = _jacoby_off_journal(tmp_path)
    err = io.StringIO()
    args = _parser().parse_args(["record", "open", str(path), "--gnubg", str(tmp_path / "none")])
    assert cli_record.run(args, stderr=err) == 2
    assert "gnubg not found" in err.getvalue() and "  set jacoby off\n" in err.getvalue()
    assert (tmp_path / "money.mat").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["none.jsonl"], "cannot (read it|be read)"),
        (["money.jsonl", "--mat", "no/such/dir/x.mat"], "cannot write it"),
        (["money.jsonl", "--mat", "./money.jsonl"], "is the journal itself"),
    ],
)
def test_open_bad_journal_or_mat_path_exits_2(tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    _jacoby_off_journal(tmp_path)
    err = io.StringIO()
    args = _parser().parse_args(["record", "open", *argv, "--dry-run"])
    assert cli_record.run(args, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("tavli record open: ") and re.search(message, err.getvalue())
