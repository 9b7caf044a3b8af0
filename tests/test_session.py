"""The referee's session at the table: set-up, opening roll, turns, calls, cube, resignation, teaching, resume."""

import json
import random

import pytest

from board_rules import Place, Position, Roll, Side
from board_rules.legality import board_diff
from referee.errors import JournalError
from referee.journal import resume
from referee.players import choose
from referee.session import AMBER, BLUE, GREEN, RED, Referee
from referee.spec import MatchSpec
from tests.helpers import journal_events

START = Position.start("backgammon")
P = Place.point


def _new(tmp_path, spec=None, **kw):
    return Referee.new(tmp_path / "match.jsonl", spec or MatchSpec("match", 3, "backgammon"), **kw)


def _ready(ref, white=3, black=1):
    ref.board(ref.position)
    ref.opening(white, black)
    return ref


def _drive(ref, rng, *, max_steps=5000, stop=None):
    """Play on with a stand-in player and seeded dice until the match is over (or ``stop`` says so)."""
    for _ in range(max_steps):
        if ref.phase == "over" or (stop and stop(ref)):
            return
        if ref.phase == "setup":
            ref.board(ref.position)
        elif ref.phase == "opening_roll":
            ref.opening(rng.randint(1, 6), rng.randint(1, 6))
        elif ref.phase == "roll":
            ref.dice((rng.randint(1, 6), rng.randint(1, 6)))
        elif ref.phase == "play":
            _, after = choose(ref.position, ref.replay.roll, rng)
            ref.board(after)
            ref.button("end-turn")
        else:  # pragma: no cover
            raise AssertionError(f"stuck in {ref.phase}")
    raise AssertionError("the match did not end")


def test_setup_lights_the_wrong_points_until_the_board_is_right(tmp_path):
    ref = _new(tmp_path)
    assert ref.phase == "setup"
    wrong = Position.from_dict({**START.to_dict(), "points": [-2, 0, 0, 0, 1, 4] + list(START.points[6:])})
    calls = ref.board(wrong)
    assert calls.leds == {P(5): RED, P(6): RED} and ref.phase == "setup"
    calls = ref.board(START)
    assert calls.leds == {} and ref.phase == "opening_roll"
    assert "each player throws one die" in calls.says[0]


def test_a_tied_opening_roll_is_thrown_again_and_the_higher_die_starts_with_both(tmp_path):
    ref = _new(tmp_path)
    ref.board(START)
    assert "a tie" in ref.opening(4, 4).says[0] and ref.phase == "opening_roll"
    calls = ref.opening(2, 6)
    assert ref.on_roll is Side.BLACK and ref.phase == "play" and ref.replay.roll == Roll(2, 6)
    assert "black starts" in calls.says[0]


def test_an_illegal_play_is_lit_recorded_as_a_correction_and_then_put_right(tmp_path):
    ref = _ready(_new(tmp_path), 3, 1)
    assert ref.on_roll is Side.WHITE and ref.replay.roll == Roll(3, 1)
    wrong = START.play("8/4 6/5", Roll(4, 1))  # a 4 played instead of the 3
    ref.board(wrong)
    calls = ref.button("end-turn")
    assert calls.buzzer and set(calls.leds) == {P(4), P(5)} and all(c == RED for c in calls.leds.values())
    assert calls.says[0].endswith(
        "the nearest legal play is 8/5 6/5; one checker off it: white's checker on 4 belongs on 5"
    )
    assert ref.phase == "play"
    right = START.play("8/5 6/5", Roll(3, 1))
    assert ref.board(right).leds == {}
    calls = ref.button("end-turn")
    assert calls.says[0] == "white plays 8/5 6/5" and ref.on_roll is Side.BLACK and ref.phase == "roll"
    kinds = [e["type"] for e in journal_events(tmp_path / "match.jsonl")]
    assert kinds == ["match_start", "game_start", "opening_roll", "correction", "play"]


def test_a_board_no_legal_play_passes_through_is_lit_as_soon_as_it_is_seen(tmp_path):
    ref = _ready(_new(tmp_path), 3, 1)
    halfway = Position.from_dict(
        {**START.to_dict(), "points": list(START.points[:4]) + [1, 5, 0, 2] + list(START.points[8:])}
    )
    assert ref.board(halfway).leds == {}  # 8/5 so far: on the way
    bad = Position.from_dict(
        {**START.to_dict(), "points": [-2, 1] + list(START.points[2:4]) + [1, 5, 0, 1] + list(START.points[8:])}
    )
    calls = ref.board(bad)  # another checker from 8 to 2: no legal play passes through it
    assert calls.buzzer and P(2) in calls.leds and set(calls.leds) <= {P(2), P(8)}


def test_a_cocked_die_or_dice_outside_the_right_hand_board_are_thrown_again(tmp_path):
    ref = _ready(_new(tmp_path), 3, 1)
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    assert ref.on_roll is Side.BLACK and ref.phase == "roll"
    assert "cocked" in ref.dice((5, 2), cocked=True).says[0]
    assert "right-hand board" in ref.dice((5, 2), halves=("right", "left")).says[0]
    assert ref.phase == "roll"
    ref.dice((5, 2), halves=("left", "left"))
    assert ref.phase == "play" and ref.replay.roll == Roll(5, 2)


def test_the_opening_roll_seen_by_the_camera_takes_each_players_die_from_their_own_right_hand_board(tmp_path):
    ref = _new(tmp_path)
    ref.board(START)
    calls = ref.opening_dice((2, 6), ("right", "right"))  # both dice in white's right-hand board
    assert calls.buzzer and "own right-hand board" in calls.says[0] and ref.phase == "opening_roll"
    assert "cocked" in ref.opening_dice((2, 6), ("right", "left"), cocked=True).says[0]
    assert "own right-hand board" in ref.opening_dice((2, 6), ("right", None)).says[0]  # a die on the bar
    assert ref.phase == "opening_roll" and not [
        e for e in journal_events(tmp_path / "match.jsonl") if e["type"] == "opening_roll"
    ]
    calls = ref.opening_dice((2, 6), ("left", "right"))  # black's 2 on the left, white's 6 on the right
    assert "white 6, black 2: white starts" in calls.says[0]
    assert ref.phase == "play" and ref.replay.roll == Roll(6, 2) and ref.on_roll is Side.WHITE


def test_the_panel_answers_a_resignation_with_take_and_pass_and_raccoons_with_a_long_take(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("money", 0, "backgammon", cube={"beavers": True, "raccoons": True})), 3, 1)
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    assert ref.on_roll is Side.BLACK
    ref.panel("double")
    ref.panel("beaver")  # white's long press of take: beaver
    assert ref.replay.cube.offer.value == "beaver"
    calls = ref.panel("beaver")  # black, the doubler, answers with a long press of take: raccoon
    assert ref.replay.cube.offer.value == "raccoon", calls.says
    ref.panel("take")
    assert ref.replay.cube.value == 8 and ref.phase == "roll"
    ref.button("resign-1", Side.BLACK)
    assert ref.phase == "resign_answer"
    assert "refuses" in ref.panel("pass").says[0] and ref.phase == "roll"
    ref.button("resign-1", Side.BLACK)
    calls = ref.panel("take")
    assert any("accepts" in s for s in calls.says) and ref.score() == {"white": 8, "black": 0}


def test_a_roll_with_no_legal_play_is_passed_and_said(tmp_path):
    from referee.events import game_start, match_start
    from referee.journal import Journal

    closed = Position.from_dict(
        {
            "variant": "backgammon",
            "turn": "white",
            "points": [14] + [0] * 17 + [-2] * 6,  # black's home board closed, a white checker on the bar
            "bar": {"white": 1, "black": 0},
            "off": {"white": 0, "black": 3},
        }
    )
    with Journal.open(tmp_path / "m.jsonl") as j:
        j.append(match_start(MatchSpec("money", 0, "backgammon")))
        j.append(game_start(1, closed, Side.WHITE))
    ref = Referee.resume(tmp_path / "m.jsonl")
    ref.board(closed)
    assert ref.phase == "roll" and ref.on_roll is Side.WHITE
    calls = ref.dice((6, 5))
    assert any("no legal play with 6-5: the turn passes" in s for s in calls.says)
    assert ref.on_roll is Side.BLACK and ref.phase == "roll"
    assert journal_events(tmp_path / "m.jsonl")[-1]["type"] == "pass"


def test_the_cube_double_take_redouble_and_pass(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("match", 3, "backgammon")), 3, 1)
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    assert ref.phase == "roll" and ref.on_roll is Side.BLACK
    calls = ref.button("double")
    assert ref.phase == "cube_answer" and calls.says[0].startswith("black: double")
    ref.button("take")
    assert ref.replay.cube.value == 2 and ref.phase == "roll" and ref.on_roll is Side.BLACK
    assert ref.button("double").buzzer  # white owns the cube now: black may not redouble
    ref.dice((5, 2))
    _, after = choose(ref.position, ref.replay.roll, random.Random(0))
    ref.board(after)
    ref.button("end-turn")
    assert ref.on_roll is Side.WHITE
    ref.button("double")  # white owns it: redoubles to 4
    ref.button("pass")  # black passes: white wins 2
    assert ref.score() == {"white": 2, "black": 0}
    assert ref.phase == "setup" and ref.replay.game == 2


def test_no_double_in_the_crawford_game(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("match", 3, "backgammon")), 3, 1)
    ref.button("resign-2", Side.BLACK)
    ref.button("accept")
    assert ref.score() == {"white": 2, "black": 0}  # white is 1-away: the next game is the Crawford game
    _ready(ref, 1, 3)
    ref.board(ref.position.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    assert ref.on_roll is Side.WHITE and ref.phase == "roll"
    calls = ref.button("double")
    assert calls.buzzer and "rawford" in calls.says[0] and ref.phase == "roll"


def test_a_resignation_accepted_ends_the_game_at_its_level(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("match", 5, "backgammon")), 3, 1)
    ref.button("resign-2", Side.WHITE)
    assert ref.phase == "resign_answer"
    calls = ref.button("accept")
    assert ref.score() == {"white": 0, "black": 2}
    assert any("accepts" in s for s in calls.says) and ref.phase == "setup"


def test_teaching_lights_where_a_lifted_checker_may_land_and_the_best_play(tmp_path):
    ref = _ready(_new(tmp_path, teach=True), 3, 1)
    calls = ref.lifted(P(8))
    assert set(calls.leds) == {P(7), P(5), P(4)} and set(calls.leds.values()) == {GREEN}
    calls = ref.button("hint")
    assert calls.says[0] == "best play: white's 8/5 6/5" and calls.leds == {P(8): BLUE, P(6): BLUE, P(5): GREEN}
    no_teach = _ready(Referee.new(tmp_path / "other.jsonl", MatchSpec("match", 3, "backgammon")), 3, 1)
    assert no_teach.lifted(P(8)).leds == {} and no_teach.button("hint").buzzer


def test_a_whole_tavli_match_to_3_completes_with_the_score_the_journal_replays_to(tmp_path):
    ref = _new(tmp_path, MatchSpec("tavli", 3))
    _drive(ref, random.Random(1))
    state = resume(tmp_path / "match.jsonl")
    assert state.phase == "over"
    board = state.scoreboard
    assert max(board.points(Side.WHITE), board.points(Side.BLACK)) >= 3
    assert ref.score() == {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}


def _events(path):
    return [{k: v for k, v in e.items() if k != "time"} for e in journal_events(path)]


def test_a_referee_killed_mid_game_and_resumed_ends_with_the_same_record(tmp_path):
    plain = _new(tmp_path, MatchSpec("tavli", 3))
    _drive(plain, random.Random(5))
    (tmp_path / "a").mkdir()
    ref = Referee.new(tmp_path / "a" / "match.jsonl", MatchSpec("tavli", 3))
    rng = random.Random(5)
    _drive(ref, rng, stop=lambda r: r.replay.count > 40 and r.phase == "play")
    ref.close()  # the process dies here: nothing but the journal survives
    back = Referee.resume(tmp_path / "a" / "match.jsonl")
    assert back.phase == "setup"  # it waits to see the board again
    back.board(back.position)
    assert back.phase == "play"
    _drive(back, rng)
    assert _events(tmp_path / "a" / "match.jsonl") == _events(tmp_path / "match.jsonl")


def test_resumed_in_the_middle_of_a_turn_the_checkers_already_moved_stay_and_the_play_is_the_same(tmp_path):
    plain = _ready(_new(tmp_path), 3, 1)
    plain.board(START.play("8/5 6/5", Roll(3, 1)))
    plain.button("end-turn")
    (tmp_path / "a").mkdir()
    ref = _ready(Referee.new(tmp_path / "a" / "match.jsonl", MatchSpec("match", 3, "backgammon")), 3, 1)
    half = Position.from_dict({**START.to_dict(), "points": [-2, 0, 0, 0, 1, 5, 0, 2] + list(START.points[8:])})
    ref.board(half)  # 8/5 moved, then the power fails
    ref.close()
    back = Referee.resume(tmp_path / "a" / "match.jsonl")
    astray = Position.from_dict({**START.to_dict(), "points": [-2, 1, 0, 0, 0, 5, 0, 2] + list(START.points[8:])})
    assert back.board(astray).leds == {P(2): RED, P(8): RED} and back.phase == "setup"  # 8/2 is no part of a 3-1
    calls = back.board(half)  # the checker moved 8/5 may stay: the turn goes on from there
    assert calls.leds == {} and back.phase == "play" and "already moved" in calls.says[0]
    back.board(START.play("8/5 6/5", Roll(3, 1)))
    assert back.button("end-turn").says[0] == "white plays 8/5 6/5"
    assert _events(tmp_path / "a" / "match.jsonl") == _events(tmp_path / "match.jsonl")


def test_a_money_session_of_one_game_resumed_still_ends_after_it(tmp_path):
    spec = MatchSpec("money", 0, "backgammon")
    plain = _new(tmp_path, spec, games=1)
    _drive(plain, random.Random(9))
    (tmp_path / "a").mkdir()
    ref = Referee.new(tmp_path / "a" / "match.jsonl", spec, games=1)
    rng = random.Random(9)
    _drive(ref, rng, stop=lambda r: r.replay.count > 12 and r.phase == "play")
    ref.close()
    back = Referee.resume(tmp_path / "a" / "match.jsonl")
    _drive(back, rng)
    events = _events(tmp_path / "a" / "match.jsonl")
    assert events == _events(tmp_path / "match.jsonl") and events[-1]["type"] == "match_end"
    assert events[0]["match"]["games"] == 1 and [e["type"] for e in events].count("game_start") == 1


def test_a_new_referee_refuses_to_overwrite_a_journal(tmp_path):
    _new(tmp_path)
    with pytest.raises(JournalError, match="already holds a match"):
        _new(tmp_path)
    (tmp_path / "bad.jsonl").write_text('{"seq": 1}\n{not json}\n{"seq": 3}\n')
    with pytest.raises(JournalError):
        Referee.resume(tmp_path / "bad.jsonl")
    json.dumps(journal_events(tmp_path / "match.jsonl"))


def test_undo_lights_how_to_put_the_board_back_as_the_turn_began_and_the_tracker_follows(tmp_path):
    ref = _ready(_new(tmp_path), 3, 1)  # white plays 3-1
    points = list(START.points)
    points[7] -= 1  # one checker moved 8/5, the 1 not yet played
    points[4] += 1
    ref.board(Position.from_dict({**START.to_dict(), "points": points}))
    calls = ref.panel("undo_checker_move")
    assert calls.leds == {P(5): BLUE, P(8): GREEN} and "blue" in calls.says[0]
    assert ref.phase == "play" and ref.panel("undo_play").leds == {P(5): BLUE, P(8): GREEN}
    ref.board(START)  # put back
    assert "as the turn began" in ref.panel("undo_play").says[0]
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    assert "in the record" in ref.panel("undo_play").says[0]
    assert [e["type"] for e in journal_events(tmp_path / "match.jsonl")][-1] == "play"


def test_undo_of_a_hit_lights_the_bar_to_lift_from_and_the_hit_point_amber(tmp_path):
    ref = _ready(_new(tmp_path), 6, 4)  # white plays 6-4 and leaves blots
    ref.board(START.play("24/18 13/9", Roll(6, 4)))
    ref.button("end-turn")
    ref.dice((5, 3))
    before = ref.position
    hit = next(
        after
        for _, after in ((p, before.play(p, ref.replay.roll)) for p in before.legal_plays(ref.replay.roll))
        if after.bar[0]
    )
    ref.board(hit)
    calls = ref.panel("undo_play")
    assert calls.leds[Place.bar(Side.WHITE)] == BLUE and AMBER in calls.leds.values() and "hit checker" in calls.says[0]
    assert all(board_diff(before, hit)) and set(calls.leds) == set(board_diff(before, hit))


def test_a_long_press_of_take_is_a_take_where_beavers_are_not_played(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("match", 5, "backgammon")), 3, 1)
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    ref.button("end-turn")
    ref.panel("double")
    calls = ref.panel("beaver")
    assert not calls.buzzer and ref.replay.cube.value == 2 and ref.replay.cube.owner is Side.WHITE


def test_the_same_wrong_board_seen_again_keeps_its_lights_and_buzzes_until_put_right(tmp_path):
    ref = _ready(_new(tmp_path), 3, 1)
    astray = Position.from_dict({**START.to_dict(), "points": [-2, 1, 0, 0, 0, 5, 0, 2] + list(START.points[8:])})
    first = ref.board(astray)
    assert first.buzzer and first.says and first.leds
    again = ref.board(astray)  # the board's next snapshot
    assert again.buzzer and again.leds == first.leds and not again.says
    assert not ref.board(START).buzzer and not ref.board(START).buzzer


def test_a_tied_opening_roll_doubles_the_cube_up_to_the_agreed_automatic_doubles(tmp_path):
    ref = _new(tmp_path, MatchSpec("money", 0, "backgammon", cube={"automatic_doubles": 1}))
    ref.board(START)
    calls = ref.opening(4, 4)
    assert "the cube turns to 2" in calls.says[-1] and ref.replay.cube.value == 2
    assert len(ref.opening(2, 2).says) == 1 and ref.replay.cube.value == 2  # one automatic double agreed
    ref.opening(6, 1)
    events = journal_events(tmp_path / "match.jsonl")
    assert [(e["action"], e["value"]) for e in events if e["type"] == "cube"] == [("automatic", 2)]
    assert resume(tmp_path / "match.jsonl").cube.value == 2


def test_the_hint_of_a_hitting_play_lights_the_bar_amber_not_as_a_landing_point(tmp_path):
    from referee.events import game_start, match_start, roll
    from referee.journal import Journal
    from tests.helpers import make

    before = make("backgammon", {24: 2, 13: 5, 8: 3, 6: 5, 4: -1, 19: -5, 12: -5, 17: -3, 1: -1})
    path = tmp_path / "hit.jsonl"
    with Journal.open(path) as j:
        j.append(match_start(MatchSpec("money", 0, "backgammon")))
        j.append(game_start(1, before, before.turn))
        j.append(roll(before.turn, Roll(4, 2)))
    ref = Referee.resume(path, teach=True)
    ref.board(before)
    calls = ref.button("hint")
    assert calls.says[0] == "best play: white's 8/4* 6/4 (amber: the hit checker goes to the bar)"
    assert calls.leds == {P(8): BLUE, P(6): BLUE, P(4): GREEN, Place.bar(Side.BLACK): AMBER}


@pytest.mark.parametrize(
    "variant", ["backgammon", "portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy"]
)
def test_every_variant_is_set_up_with_the_wrong_points_lit_and_opens_as_its_rules_say(tmp_path, variant):
    from board_rules import find_variant

    ref = _new(tmp_path, MatchSpec("money", 0, variant))
    start = ref.position
    src = next(i for i, n in enumerate(start.points) if n > 0)
    dst = next(i for i, n in enumerate(start.points) if n == 0)
    points = list(start.points)
    points[src] -= 1
    points[dst] += 1
    calls = ref.board(Position.from_dict({**start.to_dict(), "points": points}))
    assert calls.leds == {P(src + 1): RED, P(dst + 1): RED} and ref.phase == "setup"
    assert "each player throws one die" in ref.board(start).says[0]
    assert "a tie" in ref.opening(4, 4).says[0] and ref.phase == "opening_roll"
    starter, dice = find_variant(variant).opening(2, 5)
    ref.opening(2, 5)
    assert ref.on_roll is starter is Side.BLACK
    if dice is None:  # the starter throws both dice again
        assert ref.phase == "roll"
    else:
        assert ref.phase == "play" and {ref.replay.roll.high, ref.replay.roll.low} == {2, 5}


def test_in_a_tavli_match_the_next_game_has_no_opening_roll_and_its_winner_starts(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("tavli", 3)), 6, 1)  # portes: white starts
    ref.button("resign-1", Side.WHITE)
    ref.button("accept")
    assert ref.score() == {"white": 0, "black": 1} and ref.position.variant.name == "plakoto"
    calls = ref.board(ref.position)
    assert ref.phase == "roll" and ref.on_roll is Side.BLACK and "black to roll" in calls.says[0]


def test_the_panel_cycles_the_resignation_level_and_offers_it(tmp_path):
    ref = _ready(_new(tmp_path, MatchSpec("match", 5, "backgammon")), 3, 1)
    assert ref.panel("cycle_resignation_level").says[0] == "resignation level: gammon"
    assert ref.panel("cycle_resignation_level").says[0] == "resignation level: backgammon"
    calls = ref.panel("offer_resignation")
    assert calls.says[0] == "white offers to resign (backgammon)" and ref.phase == "resign_answer"
    ref.panel("take")  # take answers a resignation: accepted
    assert ref.score() == {"white": 0, "black": 3}
    assert ref.panel("cycle_resignation_level").says[0] == "resignation level: single"  # it goes round
