"""The referee end to end on the emulated table: a game of every variant played to the end
through the board emulator, and each kind of illegal play caught with the right points lit."""

import random
import time

import pytest

from board_rules import Position, Roll, Side
from board_rules.legality import board_diff
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink
from referee.events import game_start, match_start, roll
from referee.export import export
from referee.journal import Journal, resume
from referee.loop import TableSession
from referee.players import choose
from referee.session import RED, Referee
from referee.spec import MatchSpec
from tests.helpers import journal_events, make
from tests.test_export import gnubg as gnubg  # the fixture

VARIANTS = ["backgammon", "portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy"]


def _pump_until(session, cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.pump(0.02)
        if cond():
            return
    raise AssertionError("the table session did not get there in time")


def _play_out(
    path, spec: MatchSpec, rng: random.Random, games: int | None = None, max_steps: int = 1500, cube_rate: float = 0.0
) -> list[str]:
    """Play a match at the emulated table to its end: the board emulator shows each play, the
    keyboard gives the dice and ends each turn; stand-in players choose legal plays and, with
    ``cube_rate``, double before rolling (taken seven times in ten). Returns what the referee said."""
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
                    if cube_rate and rng.random() < cube_rate:
                        session.command("double")  # refused where the rules say no (Crawford, not the owner)
                        if ref.phase == "cube_answer":
                            session.command("take" if rng.random() < 0.7 else "pass")
                            continue
                    session.command(f"roll {rng.randint(1, 6)} {rng.randint(1, 6)}")
                elif ref.phase == "play":
                    _, after = choose(ref.position, ref.replay.roll, rng)
                    emu.set_position(after)
                    _pump_until(
                        session,
                        lambda after=after: (
                            session.board_seen is not None and not board_diff(session.board_seen, after)
                        ),
                    )
                    session.command("end")
                    assert ref.phase != "play", f"a legal play was not accepted: {ref.position.to_dict()} {heard[-3:]}"
                # every step moves the game on, or the loop says where it stopped instead of spinning for hours
                stuck = stuck + 1 if (ref.phase, ref.replay.count) == before else 0
                assert stuck < 5, f"the game stands still in phase {ref.phase} at {ref.position.to_dict()}"
            assert ref.phase == "over"
            return heard
        finally:
            link.stop()
            ref.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_game_of_every_variant_plays_to_the_end_on_the_emulated_board(tmp_path, variant):
    _play_out(tmp_path / "m.jsonl", MatchSpec("money", 0, variant), random.Random(VARIANTS.index(variant)), games=1)
    state = resume(tmp_path / "m.jsonl")
    assert state.phase == "over" and state.scoreboard.games_played == 1
    assert max(state.scoreboard.points(Side.WHITE), state.scoreboard.points(Side.BLACK)) >= 1 or variant in ("plakoto",)


@pytest.fixture(scope="module")
def match_to_3(tmp_path_factory):
    """A backgammon match to 3 with the cube, played out on the emulated board (once for the tests below)."""
    path = tmp_path_factory.mktemp("match") / "m.jsonl"
    _play_out(path, MatchSpec("match", 3, "backgammon"), random.Random(33), max_steps=5000, cube_rate=0.3)
    return path


def test_a_backgammon_match_to_3_with_the_cube_completes_on_the_emulated_board_with_the_score_of_its_games(match_to_3):
    events = journal_events(match_to_3)
    ends = [e["outcome"] for e in events if e["type"] == "game_end"]
    score = {"white": 0, "black": 0}
    for outcome in ends:
        score[outcome["winner"]] += outcome["points"]
    (match_end,) = [e for e in events if e["type"] == "match_end"]
    assert match_end["score"] == score and max(score.values()) >= 3
    assert match_end["winner"] == max(score, key=score.get)
    assert any(e["type"] == "cube" and e["action"] == "take" for e in events)  # the cube was used
    state = resume(match_to_3)
    assert (
        state.phase == "over"
        and {"white": state.scoreboard.points(Side.WHITE), "black": state.scoreboard.points(Side.BLACK)} == score
    )


def test_gnubg_reads_the_referees_own_record_of_the_match_as_the_same_match(match_to_3, gnubg, tmp_path):
    events = journal_events(match_to_3)
    (match_end,) = [e for e in events if e["type"] == "match_end"]
    mat = tmp_path / "m.mat"
    mat.write_text(export(match_to_3, "mat"))
    seen = gnubg(mat)
    assert seen["problems"] == [], seen["output"][-2000:]
    assert seen["games"] == sum(e["type"] == "game_end" for e in events)
    assert seen["score"] == (match_end["score"]["white"], match_end["score"]["black"])


def _journal_at(tmp_path, before: Position, dice: Roll):
    """A journal whose game stands at ``before`` with ``dice`` just rolled by the side on turn."""
    path = tmp_path / f"{before.variant.name}.jsonl"
    with Journal.open(path) as j:
        j.append(match_start(MatchSpec("money", 0, before.variant.name)))
        j.append(game_start(1, before, before.turn))
        j.append(roll(before.turn, dice))
    return path


def _caught(tmp_path, before: Position, dice: Roll, hands, wrong_board: Position | None, lit: set) -> list[str]:
    """On the emulated board: ``before`` is set up, the player's ``hands`` (emulator calls) make an illegal
    play, the end-turn is pressed (unless the board alone gives it away); exactly ``lit`` is lit red."""
    ref = Referee.resume(_journal_at(tmp_path, before, dice))
    with BoardEmulator(seed=8, noise=0) as emu:
        link = BoardLink(emu.path).start()
        said: list[str] = []
        session = TableSession(ref, link=link, say=said.append)
        try:
            emu.set_position(before)
            _pump_until(session, lambda: ref.phase == "play")
            for hand in hands:
                hand(emu)
            if wrong_board is not None:
                _pump_until(session, lambda: ref.seen is not None and not board_diff(ref.seen, wrong_board))
                session.command("end")
                assert any("not a legal play" in s for s in said), said
            deadline = time.monotonic() + 5
            red: set = set()
            while time.monotonic() < deadline and red != lit:
                session.pump(0.02)
                red = set(_lit(emu, RED))
            assert red == lit, (red, said[-2:])
            assert ref.phase == "play"  # the turn goes on until it is put right
            return said
        finally:
            link.stop()
            ref.close()


def _lit(emu, colour) -> list:
    from referee.table import COLOURS

    frame = emu.led_frame
    names: list = list(range(1, 25)) + ["bar", "off"]
    return [] if frame is None else [names[i] for i, led in enumerate(frame.leds[:26]) if led == COLOURS[colour]]


def _moves(*moves):
    """White's checkers moved by hand on the emulated board, (src, dst): dst 0 is off."""
    return [lambda emu, a=a, b=b: emu.move(a, "off" if b == 0 else b, side="white") for a, b in moves]


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
    return Position.from_dict(
        {
            **before.to_dict(),
            "points": pts,
            "off": {"white": off[0], "black": off[1]},
            "bar": {"white": bar[0], "black": bar[1]},
        }
    )


def test_wrong_distance_is_caught(tmp_path):
    before = Position.start("backgammon")
    # 8/4 is a 4: the checker on 4 and the 5 it should be on
    _caught(tmp_path, before, Roll(3, 1), _moves((8, 4), (6, 5)), _moved(before, (8, 4), (6, 5)), {4, 5})


def test_not_using_both_dice_is_caught(tmp_path):
    before = Position.start("backgammon")
    # the 1 is still to play: the nearest legal board lights where one more checker would go (24/23)
    said = _caught(tmp_path, before, Roll(3, 1), _moves((8, 5)), _moved(before, (8, 5)), {23, 24})
    assert "the nearest legal play is 24/23 8/5" in said[-1]


def test_not_entering_from_the_bar_first_is_caught(tmp_path):
    before = make("backgammon", {24: 1, 13: 5, 8: 3, 6: 5, 19: -5, 12: -5, 17: -3, 1: -2}, bar=(1, 0))
    said = _caught(
        tmp_path, before, Roll(6, 3), _moves((13, 7), (13, 10)), _moved(before, (13, 7), (13, 10)), {"bar", 22, 13, 10}
    )
    assert "one checker off" not in said[-1]  # two checkers are wrong: bar/22 not played, 13/10 played


def test_bearing_off_too_early_is_caught(tmp_path):
    before = make("backgammon", {8: 1, 6: 4, 5: 5, 4: 5, 19: -15})
    _caught(tmp_path, before, Roll(6, 1), _moves((6, 0), (5, 4)), _moved(before, (6, 0), (5, 4)), {"off", 2, 6, 8})


def test_landing_on_a_blocked_point_is_lit_at_once(tmp_path):
    before = Position.start("backgammon")
    # 24/19 puts a white checker on black's five on 19: both colours there, lit before any end-turn
    said = _caught(tmp_path, before, Roll(5, 1), _moves((24, 19)), None, {19})
    assert any("a checker on a point that is not open to it" in s for s in said)


def test_a_second_checker_off_the_head_in_long_nardy_is_caught(tmp_path):
    before = make("long-nardy", {24: 15, 12: -15}, rolls=(1, 1))
    _caught(
        tmp_path, before, Roll(5, 3), _moves((24, 19), (24, 21)), _moved(before, (24, 19), (24, 21)), {16, 19, 21, 24}
    )


def test_leaving_fevgas_start_too_early_is_caught(tmp_path):
    before = make("fevga", {24: 14, 13: 1, 16: -15}, rolls=(1, 1))
    _caught(
        tmp_path, before, Roll(2, 1), _moves((24, 22), (13, 12)), _moved(before, (24, 22), (13, 12)), {11, 12, 22, 23}
    )


def test_moving_a_pinned_checker_is_caught(tmp_path):
    before = make("plakoto", {24: 12, 11: -1, 1: -14}, pinned={11: "white"}, rolls=(3, 3))
    # white's checker pinned under black's on 11 is taken from under it and moved 11/9 with the 2
    pts = list(before.points)
    pts[8] += 1
    moved = _moved(Position.from_dict({**before.to_dict(), "points": pts, "pinned": {}}), (24, 23))

    def from_under(emu):
        emu.lift(11)  # black's pinning checker comes off
        emu.lift(11)  # the pinned white one
        emu.place(11, "black")
        emu.place(9, "white")

    said = _caught(tmp_path, before, Roll(2, 1), [from_under, *_moves((24, 23))], moved, {9, 11, 22, 24})
    assert "not a legal play" in said[-1]
