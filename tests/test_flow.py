"""The game flow: pure inputs to events, every call's exact text in one numbering, the event stream."""

import json

from board_rules import Place, Position, Roll, Side
from board_rules.movegen import legal_plays
from referee import events as E
from referee import flow as F
from referee.flow import AMBER, GREEN, RED, GameFlow
from referee.journal import read_journal
from referee.record import Phase
from referee.session import Referee
from referee.spec import MatchSpec
from tests.helpers import make

P = Place.point
MONEY = MatchSpec("money", 0, "backgammon", games=1)


def _flow(teach=False) -> GameFlow:
    flow, _ = GameFlow.new(MONEY, teach=teach)
    return flow


def _says(step: F.Step) -> list[str]:
    return list(step.calls.says)


def _black_to_play_3_1(teach=False) -> GameFlow:
    flow = _flow(teach)
    flow.handle(F.SeenBoard(flow.position))
    flow.handle(F.TypedOpening(1, 3))  # black's 3 beats white's 1: black plays 3-1
    assert flow.phase is Phase.PLAY and flow.on_roll is Side.BLACK
    return flow


def test_the_flow_is_pure_and_its_steps_carry_the_record_and_table_events():
    flow, step = GameFlow.new(MONEY)
    assert [type(e) for e in step.events] == [
        E.MatchStarted,
        E.GameStarted,
        E.LedsLit,
        E.Called,
        E.PhaseChanged,
        E.ScoreChanged,
    ]
    assert [e.type for e in step.records] == ["match_start", "game_start"]
    assert step.calls.says == ("game 1: backgammon; set up the board",)
    assert flow.phase is Phase.SETUP and flow.phase == "setup"


def test_every_kind_of_call_says_its_places_in_one_numbering_and_whose():
    flow = _flow()
    start = flow.position
    wrong = make("backgammon", {**{i + 1: n for i, n in enumerate(start.points) if n}, 6: 4, 5: 1})
    step = flow.handle(F.SeenBoard(wrong))
    assert _says(step) == ["set up backgammon: white's 5, 6 not right yet"]
    assert step.calls.leds == {P(5): RED, P(6): RED}
    assert _says(flow.handle(F.SeenBoard(start))) == ["the board is set: each player throws one die"]
    assert _says(flow.handle(F.TypedOpening(2, 2))) == ["white 2, black 2: a tie, throw again"]
    assert _says(flow.handle(F.TypedOpening(1, 3))) == ["white 1, black 3: black starts", "black plays 1-3"]

    # black's 8/5 6/5 is white's 17/20 19/20; black slips the checker from its 6 to its 4 (white's 21):
    # the board is then nearest to black's 8/4, but for one checker on black's 5 that belongs on its 6
    roll = flow.record.roll
    right = start.with_turn(Side.BLACK).play("8/5 6/5", roll)
    pts = list(right.points)
    pts[19] += 1  # one black checker less on white's 20 (black's 5)
    pts[20] -= 1  # ... and one on white's 21 (black's 4)
    slipped = Position(right.variant, Side.BLACK, tuple(pts), right.pinned, right.bar, right.off, right.rolls)
    step = flow.handle(F.SeenBoard(slipped))
    assert _says(step) == ["black's 5, 6: no legal play passes through this board"] and step.calls.buzzer
    assert step.calls.leds == {P(19): RED, P(20): RED}
    step = flow.handle(F.Pressed("end-turn"))
    assert _says(step) == [
        "black 1-3: not a legal play: black's 5, 6 wrong; the nearest legal play is 8/4; "
        "one checker off it: black's checker on 5 belongs on 6"
    ]
    assert [e.type for e in step.records] == ["correction"]
    assert step.records[0].to_dict()["wrong"] == [19, 20]  # journaled in white's numbering, as Position JSON
    flow.handle(F.SeenBoard(right))
    assert _says(flow.handle(F.Pressed("end-turn"))) == ["black plays 8/5 6/5", "white to roll"]

    # out of turn: white's checker moved before white rolls
    moved = make("backgammon", {**{i + 1: n for i, n in enumerate(right.points) if n}, 24: 1, 23: 1})
    step = flow.handle(F.SeenBoard(moved))
    assert _says(step) == ["white's 23, 24: the board changed out of turn; put it back"]
    flow.handle(F.SeenBoard(right))
    assert _says(flow.handle(F.SeenDice((6, 5), ("left", "left")))) == [
        "the dice must come to rest in white's right-hand board: throw again"
    ]
    assert _says(flow.handle(F.SeenDice((6, 5), cocked=True))) == ["a cocked die: throw again"]
    assert _says(flow.handle(F.SeenDice((6, 0), ("right", "right")))) == [
        "a die whose face the camera could not read: throw again where it sees the dice clearly"
    ]
    assert _says(flow.handle(F.SeenDice((6, 5), ("right", "right")))) == ["white rolls 6-5"]
    step = flow.handle(F.Conflict((P(13),)))
    assert _says(step) == ["white's 13: a checker on a point that is not open to it"]


def test_a_teaching_flow_names_the_lifted_checkers_landings_in_the_movers_numbering():
    flow = _black_to_play_3_1(teach=True)
    step = flow.handle(F.Lifted(P(19)))  # black's 6
    assert _says(step) == ["from black's 6: 5, 3, 2"]  # 2 with both dice
    assert step.calls.leds == {P(20): GREEN, P(22): GREEN, P(23): GREEN}


def test_the_cube_seen_out_of_place_lights_both_bars_amber_until_it_is_right():
    flow = _black_to_play_3_1()
    step = flow.handle(F.SeenCube("white", 2))
    assert _says(step) == ["the cube should be at centre showing 64"]
    assert step.calls.leds == {Place.bar(Side.WHITE): AMBER, Place.bar(Side.BLACK): AMBER}
    assert flow.handle(F.SeenCube("centre", 1)).calls.leds == {}  # the camera reads a centred 64 as value 1


def test_a_board_and_camera_disagreement_is_lit_amber_and_said_once_per_board():
    flow = _black_to_play_3_1()
    step = flow.handle(F.SeenBoard(flow.position, (P(1),)))
    assert step.calls.leds == {P(1): AMBER}
    assert _says(step) == ["board and camera disagree at black's 24"]


def test_every_event_of_a_game_is_numbered_and_json(tmp_path):
    ref = Referee.new(tmp_path / "m.jsonl", MONEY)
    streamed = []
    ref.stream.subscribe(streamed.append)
    ref.board(ref.position)
    ref.opening(3, 1)
    play, after = legal_plays(ref.position, ref.record.roll)[0]
    ref.board(after)
    ref.button("end-turn")
    ref.close()
    assert [s.seq for s in streamed] == list(range(streamed[0].seq, streamed[0].seq + len(streamed)))
    kinds = {s.type for s in streamed}
    assert {"position", "call", "phase", "opening_roll", "play"} <= kinds
    for s in streamed:
        assert json.loads(json.dumps(s.to_dict()))["seq"] == s.seq
    journaled = [s.event for s in read_journal(tmp_path / "m.jsonl").events]
    assert [e.type for e in journaled] == ["match_start", "game_start", "opening_roll", "play"]
    assert journaled[-1] == next(s.event for s in streamed if s.type == "play")


def test_a_flow_replayed_from_its_journal_is_in_the_same_state(tmp_path):
    ref = Referee.new(tmp_path / "m.jsonl", MONEY)
    ref.board(ref.position)
    ref.opening(6, 5)
    _, after = legal_plays(ref.position, ref.record.roll)[0]
    ref.board(after)
    ref.button("end-turn")
    ref.dice((4, 4))
    ref.close()
    flow, step = GameFlow.replay(read_journal(tmp_path / "m.jsonl").events)
    assert step.records == ()
    assert (flow.record.phase(), flow.position, flow.record.roll) == (Phase.PLAY, ref.position, Roll(4, 4))
    assert flow.phase is Phase.SETUP  # the table must show the board again before the turn goes on


def test_the_cube_resignation_pass_and_game_end_calls_say_exactly_this():
    flow = _flow()
    flow.handle(F.SeenBoard(flow.position))
    flow.handle(F.TypedOpening(3, 1))
    _, after = legal_plays(flow.position, flow.record.roll)[0]
    flow.handle(F.SeenBoard(after))
    flow.handle(F.Pressed("end-turn"))
    assert _says(flow.handle(F.Pressed("double"))) == ["black: double (cube at 1)"]
    assert _says(flow.handle(F.Pressed("take"))) == ["white: take (cube at 2)"]
    assert _says(flow.handle(F.Pressed("resign-2"))) == ["black offers to resign (gammon)"]
    assert _says(flow.handle(F.Pressed("refuse"))) == ["white refuses the resignation"]
    step = flow.handle(F.Pressed("resign-1"))
    assert _says(step) == ["black offers to resign (single)"]
    step = flow.handle(F.Pressed("accept"))
    assert _says(step) == [
        "white accepts the resignation",
        "white wins 2 points (resign)",
        "session over: white 2, black 0",
    ]
    assert [e.type for e in step.records] == ["resign", "game_end", "match_end"]
    assert flow.phase is Phase.OVER


def test_a_roll_with_no_legal_play_passes_in_words():
    closed = make("backgammon", {19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2, 12: -3}, bar=(1, 0), off=(14, 0))
    flow, _ = GameFlow.new(MatchSpec("money", 0, "backgammon", games=1))
    flow.record.position = closed  # a position mid-game: the record accepts what the flow records from it
    flow.record.starter_known = True
    flow.ready = True
    step = flow.handle(F.SeenDice((6, 5), ("right", "right")))
    assert _says(step) == ["white rolls 6-5", "white has no legal play with 6-5: the turn passes", "black to roll"]
    assert [e.type for e in step.records] == ["roll", "pass"]
