"""The match journal: append-only JSON lines, torn tails, corrupt lines, and resuming through the rules."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board_rules import Position, Roll, Side, find_variant
from board_rules.cube import CubeOptions, CubeState, GameOutcome, Resignation
from board_rules.errors import TavliError
from board_rules.match import MoneySession, TavliMatch
from engine.evaluate import random_play
from referee import events as E
from referee import journal as J
from referee.spec import MatchSpec

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


def fixed_clock():
    """A clock that ticks one second per event, from T0."""
    state = {"t": T0}

    def tick():
        state["t"] += timedelta(seconds=1)
        return state["t"]

    return tick


def record_match(
    path: Path,
    spec: MatchSpec,
    seed: int,
    *,
    games: int = 2,
    cube_rate: float = 0.0,
    resign_rate: float = 0.0,
    correction_rate: float = 0.0,
    stop_after: int | None = None,
    white: str = "Anna",
    black: str = "Nikos",
):
    """Play a whole match with random legal plays and journal every event.

    Money sessions stop after ``games`` games. ``cube_rate`` is the chance a side doubles
    when it may (the answer is a take two times in three), ``resign_rate`` the chance a side
    offers to resign before rolling, ``correction_rate`` the chance the referee refuses a
    slipped board before the real play. ``stop_after`` stops after that many events
    (mid-game). Returns the list of events written.
    """
    rng = random.Random(seed)
    written: list[dict] = []
    with J.Journal.open(path, clock=fixed_clock()) as jr:

        def put(event):
            if stop_after is not None and len(written) >= stop_after:
                raise _Stop
            written.append(jr.append(event).to_dict())

        try:
            put(E.match_start(spec, white, black))
            board = spec.new_scoreboard()
            number = 0
            while True:
                if isinstance(board, MoneySession):
                    if board.games_played >= games:
                        break
                elif board.is_over:
                    break
                number += 1
                name = board.next_variant if isinstance(board, TavliMatch) else spec.variant
                variant = spec.make_variant(name)
                starter = board.next_starter if isinstance(board, TavliMatch) else None
                position = Position.start(variant, starter or Side.WHITE)
                put(E.game_start(number, position, starter))
                options = board.cube_options_for_next_game() if variant.has_cube else None
                cube = (
                    CubeState(options=options) if options is not None else CubeState(options=CubeOptions.without_cube())
                )
                first = None
                while starter is None:
                    w, b = rng.randint(1, 6), rng.randint(1, 6)
                    put(E.opening_roll(w, b))
                    starter, dice = variant.opening(w, b)
                    if starter is None and cube.options.automatic_doubles:
                        new = cube.automatic_double()
                        if new.value != cube.value:
                            cube = new
                            put(E.cube("automatic", None, cube.value))
                    if starter is not None:
                        position = position.with_turn(starter)
                        first = Roll(*dice) if dice else None
                outcome = None
                while outcome is None:
                    side = position.turn
                    if first is None:
                        if resign_rate and rng.random() < resign_rate:
                            level = rng.choice([1, 2])
                            put(E.resign("offer", side, level))
                            cube = cube.offer_resign(side, level)
                            if rng.random() < 0.5:
                                put(E.resign("accept", side.other))
                                outcome = cube.accept_resign(side.other)
                                break
                            put(E.resign("refuse", side.other))
                            cube = cube.refuse_resign(side.other)
                        if cube_rate and cube.can_double(side) and rng.random() < cube_rate:
                            put(E.cube("double", side, cube.value))
                            cube = cube.double(side)
                            if rng.random() < 2 / 3:
                                cube = cube.take(side.other)
                                put(E.cube("take", side.other, cube.value))
                            else:
                                put(E.cube("pass", side.other, cube.value))
                                outcome = cube.pass_(side.other)
                                break
                        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
                        put(E.roll(side, roll))
                    else:
                        roll, first = first, None
                    the_play, after = random_play(position, roll, rng)
                    if not the_play:
                        put(E.pass_turn(side, roll))
                    else:
                        if correction_rate and rng.random() < correction_rate:
                            wrong = _slipped(after, side)
                            if wrong is not None:
                                put(E.correction(side, roll, [1], wrong, the_play))
                        put(E.play(side, roll, the_play, position, after))
                    position = after
                    result = position.outcome()
                    if result is not None:
                        outcome = (
                            result if result.winner is None else cube.outcome(result.winner, result.base, result.kind)
                        )
                board = board.record(outcome)
                put(E.game_end(outcome, _score(board)))
            winner = None if isinstance(board, MoneySession) else board.winner
            put(E.match_end(winner, _score(board)))
        except _Stop:
            pass
    return written


class _Stop(Exception):
    pass


def _score(board) -> dict[str, int]:
    return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}


def _slipped(after: Position, side: Side) -> Position | None:
    pts = list(after.points)
    for w in range(2, 25):
        if pts[w - 1] * side.sign > 0 and pts[w - 2] * side.sign >= 0:
            pts[w - 1] -= side.sign
            pts[w - 2] += side.sign
            try:
                return Position(after.variant, after.turn, tuple(pts), after.pinned, after.bar, after.off, after.rolls)
            except ValueError:
                return None
    return None


TAVLI = MatchSpec("tavli", 3)
BG_MATCH = MatchSpec("match", 5)
MONEY = MatchSpec("money", variant="backgammon", cube={"beavers": True, "jacoby": True, "automatic_doubles": 1})


# =============================================================================== writing and reading


def test_every_event_is_one_json_line_with_seq_and_time(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=1)
    lines = path.read_text().splitlines()
    assert len(lines) == len(written) > 10
    for i, line in enumerate(lines, start=1):
        event = json.loads(line)
        assert event["seq"] == i
        assert datetime.fromisoformat(event["time"]).tzinfo is not None
        assert event["type"] in E.EVENT_TYPES
    assert json.loads(lines[0])["type"] == "match_start"
    assert json.loads(lines[-1])["type"] == "match_end"


def test_append_syncs_every_event_to_disk(tmp_path, monkeypatch):
    synced = []
    real = J.os.fsync
    monkeypatch.setattr(J.os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    with J.Journal.open(tmp_path / "m.jsonl") as jr:
        jr.append(E.match_start(TAVLI))
        before = len(synced)
        jr.append(E.game_start(1, Position.start("portes"), None))
        jr.append(E.opening_roll(6, 5))
    assert len(synced) - before == 2


def test_append_refuses_what_is_not_a_record_event(tmp_path):
    with J.Journal.open(tmp_path / "m.jsonl") as jr:
        with pytest.raises(J.JournalError, match="'teleport'"):
            jr.append({"type": "teleport"})
        with pytest.raises(J.JournalError, match="a table event is streamed, not journaled"):
            jr.append(E.Called(("hello",)))
    assert (tmp_path / "m.jsonl").read_text() == ""


def test_an_event_line_of_unknown_type_or_missing_fields_is_corrupt(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"seq":1,"time":"t","type":"teleport"}\n{"seq":2}\n')
    with pytest.raises(J.JournalError, match="line 1: .*'teleport'"):
        J.read_journal(path)
    path.write_text('{"seq":1,"time":"t","type":"roll","side":"white"}\n{"seq":2}\n')
    with pytest.raises(J.JournalError, match="line 1: .*lacks"):
        J.read_journal(path)


def test_reopening_continues_the_sequence(tmp_path):
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(TAVLI))
    with J.Journal.open(path) as jr:
        assert jr.append(E.game_start(1, Position.start("portes"), None)).seq == 2
    assert [e.seq for e in J.read_journal(path).events] == [1, 2]


def test_a_torn_last_line_is_ignored_and_reported_and_earlier_events_kept(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=2)
    whole = path.read_bytes()
    cut = whole[: len(whole) - 17]  # power lost in the middle of the last event
    path.write_bytes(cut)
    read = J.read_journal(path)
    assert tuple(e.to_dict() for e in read.events) == tuple(written[:-1])
    assert read.torn is not None and read.warning is not None
    assert f"line {len(written)}" in read.warning and "ignored" in read.warning
    state = J.resume(path)
    assert state.warning == read.warning
    assert state.phase == "match_end"  # the match was won; only match_end was lost


def test_trailing_zero_bytes_after_a_power_loss_are_not_an_event(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=2, stop_after=5)
    path.write_bytes(path.read_bytes() + b"\x00" * 40)
    assert tuple(e.to_dict() for e in J.read_journal(path).events) == tuple(written)


def test_reopening_after_a_torn_line_cuts_it_off_before_appending(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, TAVLI, seed=3, stop_after=6)
    path.write_bytes(path.read_bytes() + b'{"seq":7,"time":"2026-11-22T10:0')
    with J.Journal.open(path) as jr:
        assert jr.dropped is not None
        assert jr.append(E.opening_roll(3, 3)).seq == 7
    read = J.read_journal(path)
    assert read.torn is None and len(read.events) == 7


def test_a_corrupt_middle_line_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, TAVLI, seed=4, stop_after=8)
    lines = path.read_text().splitlines(keepends=True)
    lines[4] = lines[4][:1] + "#garbage#" + lines[4][1:]
    path.write_text("".join(lines))
    with pytest.raises(J.JournalError, match=r"m.jsonl': line 5: ") as info:
        J.read_journal(path)
    assert info.value.line == 5
    assert isinstance(info.value, TavliError) and isinstance(info.value, ValueError)
    with pytest.raises(J.JournalError):
        J.Journal.open(path)  # never append to a corrupt journal


def test_a_sequence_number_out_of_order_is_an_error(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, TAVLI, seed=4, stop_after=4)
    lines = path.read_text().splitlines(keepends=True)
    del lines[1]
    path.write_text("".join(lines))
    with pytest.raises(J.JournalError, match="line 2: seq 3 out of order; expected 2"):
        J.read_journal(path)


# =============================================================================== resuming


@pytest.mark.parametrize("stop", [1, 2, 3, 5, 9, 14, 30, 61])
def test_resume_mid_tavli_match_gives_the_state_the_recorder_had(tmp_path, stop):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=5, stop_after=stop)
    state = J.resume(path)
    assert state.events == len(written) == stop
    last = written[-1]
    if last["type"] == "play":
        assert state.position == Position.from_dict(last["after"], state.variant)
        assert state.roll_played and state.phase in ("roll", "game_end")
    if last["type"] == "roll":
        assert state.roll == Roll(*last["dice"]) and not state.roll_played
        assert state.phase == "play" and state.on_roll is Side(last["side"])
    if last["type"] == "game_start":
        assert state.phase in ("opening_roll", "roll")


def test_resume_of_a_finished_tavli_match_has_the_final_score(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=6)
    state = J.resume(path)
    assert state.phase == "over"
    assert isinstance(state.scoreboard, TavliMatch) and state.scoreboard.is_over
    assert written[-1]["score"] == {"white": state.scoreboard.white_score, "black": state.scoreboard.black_score}
    assert written[-1]["winner"] == state.scoreboard.winner.value


def test_resume_replays_cube_actions_and_resignations_of_a_money_session(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, MONEY, seed=7, games=4, cube_rate=0.2, resign_rate=0.03)
    kinds = {(e["type"], e.get("action")) for e in written}
    assert ("cube", "double") in kinds and ("cube", "take") in kinds
    state = J.resume(path)
    assert state.phase == "over"
    assert state.scoreboard.games_played == 4
    # mid-game, right after a take: the cube is turned and owned by the taker
    take = next(i for i, e in enumerate(written) if e.get("action") == "take")
    partial = tmp_path / "p.jsonl"
    partial.write_text("".join(json.dumps(e) + "\n" for e in written[: take + 1]))
    mid = J.resume(partial)
    assert mid.cube.value == written[take]["value"] and mid.cube.owner is Side(written[take]["side"])
    assert mid.phase == "roll"


def test_resume_of_a_backgammon_match_to_5(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, BG_MATCH, seed=8, cube_rate=0.1)
    state = J.resume(path)
    assert state.phase == "over" and state.scoreboard.is_over
    assert written[-1]["winner"] == state.scoreboard.winner.value


def test_resume_after_an_opening_roll_that_is_played_waits_for_that_play(tmp_path):
    spec = MatchSpec("match", 3, variant="backgammon")
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start("backgammon"), None))
        jr.append(E.opening_roll(4, 4))
        jr.append(E.opening_roll(3, 5))
    state = J.resume(path)
    assert state.phase == "play" and state.on_roll is Side.BLACK
    assert state.roll == Roll(3, 5) and not state.roll_played
    assert state.cube.value == 1


def test_resume_rejects_an_illegal_recorded_play_naming_its_line(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=9, stop_after=12)
    k = next(i for i, e in enumerate(written) if e["type"] == "play")
    bad = dict(written[k])
    bad["play"] = "24/1"
    written[k] = bad
    path.write_text("".join(json.dumps(e) + "\n" for e in written))
    with pytest.raises(J.JournalReplayError, match=rf"m.jsonl': line {k + 1}: play '24/1'") as info:
        J.resume(path)
    assert info.value.line == k + 1


def test_resume_rejects_a_play_whose_recorded_result_differs(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=9, stop_after=12)
    k = next(i for i, e in enumerate(written) if e["type"] == "play")
    bad = json.loads(json.dumps(written[k]))
    bad["after"]["off"]["white"] += 0  # same
    pts = bad["after"]["points"]
    i = next(i for i in range(23) if pts[i] > 0 and pts[i + 1] >= 0)
    pts[i] -= 1
    pts[i + 1] += 1
    written[k] = bad
    path.write_text("".join(json.dumps(e) + "\n" for e in written))
    with pytest.raises(J.JournalReplayError, match=rf"line {k + 1}: after:"):
        J.resume(path)


def test_resume_rejects_a_roll_out_of_turn(tmp_path):
    spec = MatchSpec("tavli", 3)
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start("portes"), Side.WHITE))
        jr.append(E.roll(Side.BLACK, Roll(3, 1)))
    with pytest.raises(J.JournalReplayError, match="line 3: roll by 'black', but 'white' is on roll"):
        J.resume(path)


def test_resume_rejects_a_game_result_the_board_does_not_show(tmp_path):
    spec = MatchSpec("tavli", 3)
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start("portes"), Side.WHITE))
        jr.append(E.game_end(GameOutcome(Side.WHITE, 1, "single")))
    with pytest.raises(J.JournalReplayError, match="line 3: game_end 'single', but game 1 is not decided"):
        J.resume(path)


def test_resume_rejects_the_wrong_variant_for_the_tavli_cycle(tmp_path):
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(TAVLI))
        jr.append(E.game_start(1, Position.start("fevga"), Side.WHITE))
    with pytest.raises(J.JournalReplayError, match="line 2: game 1 is 'fevga', but the match's next game is 'portes'"):
        J.resume(path)


def test_a_pass_is_checked_to_have_no_legal_play(tmp_path):
    spec = MatchSpec("tavli", 3)
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start("portes"), Side.WHITE))
        jr.append(E.roll(Side.WHITE, Roll(6, 5)))
        jr.append(E.pass_turn(Side.WHITE, Roll(6, 5)))
    with pytest.raises(
        J.JournalReplayError, match="line 4: pass by white with 6-5, but there is a legal play: '24/13'"
    ):
        J.resume(path)


def test_a_resignation_accepted_ends_the_game_at_its_level(tmp_path):
    spec = MatchSpec("match", 7)
    path = tmp_path / "m.jsonl"
    start = Position.start("backgammon")
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, start, Side.WHITE))
        jr.append(E.cube("double", Side.WHITE, 1))
        jr.append(E.cube("take", Side.BLACK, 2))
        jr.append(E.resign("offer", Side.BLACK, Resignation.GAMMON))
        jr.append(E.resign("accept", Side.WHITE))
    state = J.resume(path)
    assert state.phase == "game_end"
    assert state.pending_outcome.points == 4 and state.pending_outcome.winner is Side.WHITE
    with J.Journal.open(path) as jr:
        jr.append(E.game_end(state.pending_outcome))
    state = J.resume(path)
    assert state.phase == "game_start" and state.scoreboard.white_score == 4


def test_corrections_are_recorded_and_replayed(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=10, correction_rate=0.3, stop_after=40)
    assert any(e["type"] == "correction" for e in written)
    assert J.resume(path).events == 40


@pytest.mark.parametrize("variant", ["gul-bara", "long-nardy", "short-nardy", "plakoto"])
def test_resume_replays_a_money_session_of_each_variant(tmp_path, variant):
    spec = MatchSpec("money", variant=variant)
    path = tmp_path / "m.jsonl"
    written = record_match(path, spec, seed=11, games=1)
    state = J.resume(path)
    assert state.phase == "over" and state.scoreboard.games_played == 1
    assert written[-2]["type"] == "game_end"


def test_match_spec_round_trips_and_refuses_nonsense():
    for spec in (
        TAVLI,
        BG_MATCH,
        MONEY,
        MatchSpec("tavli", 5, with_gul_bara=True, variant_options={"plakoto": {"mother_rule": False}}),
    ):
        assert MatchSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    with pytest.raises(J.JournalError, match="kind"):
        MatchSpec("chess", 3)
    with pytest.raises(J.JournalError, match="3, 5 or 7"):
        MatchSpec("tavli", 4)
    assert (
        MatchSpec("tavli", 3, variant_options={"plakoto": {"mother_rule": False}}).make_variant("plakoto").label
        == "tapa"
    )
    assert find_variant("plakoto") != MatchSpec(
        "tavli", 3, variant_options={"plakoto": {"mother_rule": False}}
    ).make_variant("plakoto")


def test_resume_rejects_a_game_played_with_other_options_than_the_match(tmp_path):
    spec = MatchSpec(
        "tavli", 3, order=("plakoto", "portes", "fevga"), variant_options={"plakoto": {"mother_rule": False}}
    )
    path = tmp_path / "m.jsonl"
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start("plakoto"), Side.WHITE))  # mother rule on: not this match's
    with pytest.raises(J.JournalReplayError, match="line 2: options: .* are not the match's options for plakoto"):
        J.resume(path)
    path.unlink()
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(spec))
        jr.append(E.game_start(1, Position.start(spec.make_variant("plakoto")), Side.WHITE))
    state = J.resume(path)
    assert state.variant.label == "tapa" and state.phase == "roll"


def test_replay_checks_events_given_directly():
    with pytest.raises(J.JournalError, match="line 1: type: 'nonsense'"):
        J.replay([{"type": "nonsense"}])
    with pytest.raises(J.JournalReplayError, match="empty"):
        J.replay([])


def test_reopening_after_a_last_event_that_lost_only_its_newline(tmp_path):
    path = tmp_path / "m.jsonl"
    written = record_match(path, TAVLI, seed=3, stop_after=4)
    path.write_bytes(path.read_bytes()[:-1])
    assert tuple(e.to_dict() for e in J.read_journal(path).events) == tuple(written)
    with J.Journal.open(path) as jr:
        assert jr.dropped is None
        jr.append(E.opening_roll(2, 5))
    assert [e.seq for e in J.read_journal(path).events] == [1, 2, 3, 4, 5]


def test_reopening_after_zero_bytes_at_the_end(tmp_path):
    path = tmp_path / "m.jsonl"
    record_match(path, TAVLI, seed=3, stop_after=4)
    path.write_bytes(path.read_bytes() + b"\x00" * 100)
    with J.Journal.open(path) as jr:
        jr.append(E.opening_roll(2, 5))
    assert len(J.read_journal(path).events) == 5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("variant_options", ["BACKGAMMON"]),
        ("variant_options", {"plakoto": ["mother_rule"]}),
        ("cube", ["beavers"]),
    ],
)
def test_a_spec_whose_tables_are_not_objects_is_refused_with_the_field_named(field, value):
    data = {**MONEY.to_dict(), field: value}
    with pytest.raises(J.JournalError, match=f"match.{field}"):
        MatchSpec.from_dict(data)
