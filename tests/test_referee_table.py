"""The referee end to end on the emulated table: a game of every variant played to the end
through the board emulator, and each kind of illegal play caught with the right points lit."""

import random
import time

import pytest

from board_rules import Position, Roll, Side
from board_rules.legality import board_diff
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink
from referee.journal import Journal, MatchSpec, game_start, match_start, read_journal, resume, roll
from referee.players import choose
from referee.play import TableSession
from referee.session import RED, Referee
from tests.helpers import make

VARIANTS = ["backgammon", "portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy"]


def _pump_until(session, cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.pump(0.02)
        if cond():
            return
    raise AssertionError("the table session did not get there in time")


def _play_out(path, spec: MatchSpec, rng: random.Random, games: int | None = None, max_steps: int = 1500) -> None:
    """Play a match at the emulated table to its end: the board emulator shows each play, the
    keyboard gives the dice and ends each turn; stand-in players choose legal plays."""
    with BoardEmulator(seed=5, noise=0) as emu:
        link = BoardLink(emu.path).start()
        ref = Referee.new(path, spec, games=games)
        heard: list[str] = []
        session = TableSession(ref, link=link, say=heard.append)
        try:
            stuck = 0
            for _ in range(max_steps):
                if ref.phase == "over":
                    break
                before = (ref.phase, ref.replay.count)
                if ref.phase == "setup":
                    target = ref.position
                    emu.set_position(target)
                    _pump_until(session, lambda: ref.phase != "setup")
                elif ref.phase == "opening_roll":
                    session.command(f"opening {rng.randint(1, 6)} {rng.randint(1, 6)}")
                elif ref.phase == "roll":
                    session.command(f"roll {rng.randint(1, 6)} {rng.randint(1, 6)}")
                elif ref.phase == "play":
                    _, after = choose(ref.position, ref.replay.roll, rng)
                    emu.set_position(after)
                    _pump_until(session, lambda: session.board_seen is not None and not board_diff(session.board_seen, after))
                    session.command("end")
                    assert ref.phase != "play", f"a legal play was not accepted: {ref.position.to_dict()} {heard[-3:]}"
                # every step moves the game on, or the loop says where it stopped instead of spinning for hours
                stuck = stuck + 1 if (ref.phase, ref.replay.count) == before else 0
                assert stuck < 5, f"the game stands still in phase {ref.phase} at {ref.position.to_dict()}"
            assert ref.phase == "over"
        finally:
            link.stop()
            ref.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_game_of_every_variant_plays_to_the_end_on_the_emulated_board(tmp_path, variant):
    _play_out(tmp_path / "m.jsonl", MatchSpec("money", 0, variant), random.Random(VARIANTS.index(variant)), games=1)
    state = resume(tmp_path / "m.jsonl")
    assert state.phase == "over" and state.scoreboard.games_played == 1
    assert max(state.scoreboard.points(Side.WHITE), state.scoreboard.points(Side.BLACK)) >= 1 or variant in ("plakoto",)


def test_a_backgammon_match_to_3_completes_on_the_emulated_board_with_the_score_of_its_games(tmp_path):
    _play_out(tmp_path / "m.jsonl", MatchSpec("match", 3, "backgammon"), random.Random(33), max_steps=5000)
    events = read_journal(tmp_path / "m.jsonl").events
    ends = [e["outcome"] for e in events if e["type"] == "game_end"]
    score = {"white": 0, "black": 0}
    for outcome in ends:
        score[outcome["winner"]] += outcome["points"]
    (match_end,) = [e for e in events if e["type"] == "match_end"]
    assert match_end["score"] == score and max(score.values()) >= 3
    assert match_end["winner"] == max(score, key=score.get)
    state = resume(tmp_path / "m.jsonl")
    assert state.phase == "over" and {"white": state.scoreboard.points(Side.WHITE), "black": state.scoreboard.points(Side.BLACK)} == score


def _at(tmp_path, before: Position, dice: Roll) -> Referee:
    """A referee whose game stands at ``before`` with ``dice`` just rolled by the side on turn."""
    path = tmp_path / f"{before.variant.name}.jsonl"
    with Journal.open(path) as j:
        j.append(match_start(MatchSpec("money", 0, before.variant.name)))
        j.append(game_start(1, before, before.turn))
        j.append(roll(before.turn, dice))
    ref = Referee.resume(path)
    ref.board(before)
    assert ref.phase == "play"
    return ref


def _caught(ref: Referee, wrong_board: Position, offending) -> None:
    ref.board(wrong_board)
    calls = ref.button("end-turn")
    assert calls.buzzer and "not a legal play" in calls.says[0], calls
    assert calls.leds and set(offending) <= set(calls.leds) and set(calls.leds.values()) == {RED}, calls.leds
    assert ref.phase == "play"  # the turn goes on until it is put right


def _moved(before: Position, *moves) -> Position:
    """``before`` with white's checkers moved (src, dst) by hand: dst 0 is off."""
    pts = list(before.points)
    off = list(before.off)
    bar = list(before.bar)
    for src, dst in moves:
        if src == "bar":
            bar[0] -= 1
        else:
            pts[src - 1] -= 1
        if dst == 0:
            off[0] += 1
        else:
            pts[dst - 1] += 1
    return Position.from_dict({**before.to_dict(), "points": pts, "off": {"white": off[0], "black": off[1]},
                               "bar": {"white": bar[0], "black": bar[1]}})


def test_wrong_distance_is_caught(tmp_path):
    before = Position.start("backgammon")
    _caught(_at(tmp_path, before, Roll(3, 1)), _moved(before, (8, 4), (6, 5)), {4})


def test_not_using_both_dice_is_caught(tmp_path):
    before = Position.start("backgammon")
    # the 1 is still to play: the nearest legal board lights where one more checker would go (24/23)
    _caught(_at(tmp_path, before, Roll(3, 1)), _moved(before, (8, 5)), set())


def test_not_entering_from_the_bar_first_is_caught(tmp_path):
    before = make("backgammon", {24: 1, 13: 5, 8: 3, 6: 5, 19: -5, 12: -5, 17: -3, 1: -2}, bar=(1, 0))
    _caught(_at(tmp_path, before, Roll(6, 3)), _moved(before, (13, 7), (13, 10)), {"bar"})


def test_bearing_off_too_early_is_caught(tmp_path):
    before = make("backgammon", {8: 1, 6: 4, 5: 5, 4: 5, 19: -15})
    _caught(_at(tmp_path, before, Roll(6, 1)), _moved(before, (6, 0), (5, 4)), {"off"})


def test_landing_on_a_blocked_point_is_lit_at_once(tmp_path):
    before = Position.start("backgammon")
    ref = _at(tmp_path, before, Roll(5, 1))
    calls = ref.conflict([19])  # a white checker put on black's five on 19 (24/19): both colours seen there
    assert calls.buzzer and calls.leds == {19: RED}


def test_a_second_checker_off_the_head_in_long_nardy_is_caught(tmp_path):
    before = make("long-nardy", {24: 15, 12: -15}, rolls=(1, 1))
    _caught(_at(tmp_path, before, Roll(5, 3)), _moved(before, (24, 19), (24, 21)), {21})


def test_leaving_fevgas_start_too_early_is_caught(tmp_path):
    before = make("fevga", {24: 14, 13: 1, 16: -15}, rolls=(1, 1))
    _caught(_at(tmp_path, before, Roll(2, 1)), _moved(before, (24, 22), (13, 12)), {22})


def test_moving_a_pinned_checker_is_caught(tmp_path):
    before = make("plakoto", {24: 12, 11: -1, 1: -14}, pinned={11: "white"}, rolls=(3, 3))
    # white's checker pinned under black's on 11 is moved 11/9 with the 2
    pts = list(before.points)
    pts[8] += 1
    moved = Position.from_dict({**before.to_dict(), "points": pts, "pinned": {}})
    moved = _moved(moved, (24, 23))
    _caught(_at(tmp_path, before, Roll(2, 1)), moved, {9})
