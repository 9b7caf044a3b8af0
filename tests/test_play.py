"""``tavli play``'s loop on stand-ins: keyboard only, the emulated board (unplugged and replugged
mid-turn), a killed referee resumed; fusion of board and camera."""

import time

import pytest

from board_rules import Place, Position, Roll, Side
from board_rules.legality import board_diff
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink
from referee.fusion import MIN_CONFIDENCE, BoardSeen, fuse
from referee.loop import TableSession
from referee.play import match_spec
from referee.session import AMBER, Referee
from referee.spec import MatchSpec
from tests.helpers import journal_events, make

START = Position.start("backgammon")
P = Place.point
OPENING = START.play("8/5 6/5", Roll(3, 1))
REPLY = OPENING.play("24/18 13/11", Roll(6, 2))


class ScriptedCamera:
    """A camera stand-in: the observations put in ``next`` come out one per read; ``down`` as a stopped camera."""

    down = False

    def __init__(self):
        self.next = []

    def read(self):
        return self.next.pop(0) if self.next else None


def _pump_until(session, cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.pump(0.05)
        if cond():
            return
    raise AssertionError("the table session did not get there in time")


def _events(path):
    return [{k: v for k, v in e.items() if k != "time"} for e in journal_events(path)]


def test_match_specs_from_the_command_line():
    assert match_spec(None, "tavli:5") == MatchSpec("tavli", 5)
    assert match_spec(None, "backgammon:7") == MatchSpec("match", 7, "backgammon")
    assert match_spec(None, "money:plakoto") == MatchSpec("money", 0, "plakoto")
    assert match_spec("fevga", None) == MatchSpec("money", 0, "fevga", games=1)  # one game


def test_keyboard_only_table_plays_and_stops_keeping_the_journal(tmp_path):
    lines = [
        f"board {START.to_json()}",
        "opening 3 1",
        "lift 8",
        "hint",
        f"board {OPENING.to_json()}",
        "end",
        "score",
        "quit",
    ]
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"), teach=True)
    said = []
    session = TableSession(ref, lines=lines, say=said.append)
    assert session.run() == 0
    text = "\n".join(said)
    assert "white 3, black 1: white starts" in text and "from white's 8: 4, 5, 7" in text and "best play:" in text
    assert "white plays 8/5 6/5" in text and "stopped" in text
    assert [e["type"] for e in journal_events(tmp_path / "m.jsonl")][-1] == "play"


def _board_session(tmp_path, emu, name):
    link = BoardLink(emu.path, port_finder=lambda: emu.path, lost_after_s=0.6, backoff_initial_s=0.05).start()
    ref = Referee.new(tmp_path / name, MatchSpec("match", 3, "backgammon"))
    said = []
    return TableSession(ref, link=link, say=said.append), said


def _play_two_turns(session, emu, *, unplug=False):
    ref = session.referee
    emu.set_position(START)
    _pump_until(session, lambda: ref.phase == "opening_roll")
    session.command("opening 3 1")
    assert ref.phase == "play"
    emu.move(8, 5)  # half of the play; then the board is unplugged mid-turn
    if unplug:
        emu.replug()
        _pump_until(session, lambda: any("plug it back" in s for s in session.said_log))
        _pump_until(session, lambda: any("board back" in s for s in session.said_log))
    emu.move(6, 5)
    _pump_until(session, lambda: session.board_seen is not None and not board_diff(session.board_seen, OPENING))
    session.command("end")
    assert ref.on_roll is Side.BLACK
    session.command("roll 6 2")
    emu.set_position(REPLY)
    _pump_until(session, lambda: session.board_seen is not None and not board_diff(session.board_seen, REPLY))
    session.command("end")
    assert ref.on_roll is Side.WHITE and ref.phase == "roll"


def test_board_unplugged_and_replugged_mid_turn_pauses_and_ends_with_the_same_record(tmp_path):
    results = []
    for name, unplug in (("plain.jsonl", False), ("unplugged.jsonl", True)):
        with BoardEmulator(seed=3, noise=0) as emu:
            session, said = _board_session(tmp_path, emu, name)
            session.said_log = said
            try:
                _play_two_turns(session, emu, unplug=unplug)
                lit = emu.led_frame
            finally:
                session.link.stop()
                session.referee.close()
        results.append(_events(tmp_path / name))
    assert results[0] == results[1]
    assert lit is not None


def test_wrong_board_lights_the_points_on_the_emulated_board(tmp_path):
    with BoardEmulator(seed=4, noise=0) as emu:
        session, said = _board_session(tmp_path, emu, "m.jsonl")
        try:
            emu.set_position(START)
            _pump_until(session, lambda: session.referee.phase == "opening_roll")
            session.command("opening 3 1")
            emu.move(8, 2)  # no legal play of 3-1 moves a checker from 8 to 2
            _pump_until(session, lambda: any("no legal play passes" in s for s in said))
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and (
                emu.led_frame is None or not any(led.red for led in emu.led_frame.leds)
            ):
                time.sleep(0.02)
            red = [i + 1 for i, led in enumerate(emu.led_frame.leds) if (led.red, led.green, led.blue) == (255, 0, 0)]
            assert 2 in red
        finally:
            session.link.stop()
            session.referee.close()


def test_a_killed_referee_resumed_from_its_journal_ends_with_the_same_record(tmp_path):
    def turns(session, stop_after_opening):
        session.command(f"board {START.to_json()}")
        session.command("opening 3 1")
        if stop_after_opening:
            return
        session.command(f"board {OPENING.to_json()}")
        session.command("end")
        session.command("roll 6 2")
        session.command(f"board {REPLY.to_json()}")
        session.command("end")

    whole = TableSession(Referee.new(tmp_path / "a.jsonl", MatchSpec("match", 3, "backgammon")), say=lambda s: None)
    turns(whole, False)
    whole.referee.close()
    first = TableSession(Referee.new(tmp_path / "b.jsonl", MatchSpec("match", 3, "backgammon")), say=lambda s: None)
    turns(first, True)
    del first  # killed: only the journal is left
    back = TableSession(Referee.resume(tmp_path / "b.jsonl"), say=lambda s: None)
    assert back.referee.phase == "setup"
    back.command(f"board {START.to_json()}")  # the board is seen again as it was
    assert back.referee.phase == "play"
    back.command(f"board {OPENING.to_json()}")
    back.command("end")
    back.command("roll 6 2")
    back.command(f"board {REPLY.to_json()}")
    back.command("end")
    back.referee.close()
    assert _events(tmp_path / "a.jsonl") == _events(tmp_path / "b.jsonl")


def test_fusion_takes_each_point_from_the_source_that_sees_it_and_reports_disagreement():
    board = OPENING
    same = fuse(board, board, (board.points, board.bar, board.off))
    assert same.disagree == () and same.position == board and same.source == "both"
    cam = list(board.points)
    cam[12] = 4  # the camera sees 4 on 13 where the board reads 5
    differ = fuse(board, board, (tuple(cam), board.bar, board.off))
    assert differ.disagree == (P(13),) and differ.position == board
    # a stack of 6 on 13 where the board's slots read only "at least 5": the camera's count is taken
    board_reads = Position.from_dict(
        {**board.to_dict(), "points": [-2, 0, 0, 0, 2, 4, 0, 2, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2]}
    )
    truth = [-2, 0, 0, 0, 2, 4, 0, 1, 0, 0, 0, -5, 6, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2]
    fused = fuse(board, board_reads, (tuple(truth), board.bar, board.off), board_uncertain=(13,))
    assert fused.disagree == (P(8),)  # 8 is within the board's slots: a real disagreement, said, not guessed
    assert fuse(board, None, (board.points, board.bar, board.off)).source == "camera"
    assert fuse(board, board).source == "board"


def test_session_marks_points_where_board_and_camera_disagree_amber(tmp_path):
    said = []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, say=said.append)
    cam = list(START.points)
    cam[12] = 4
    session.readings.camera_seen = (tuple(cam), START.bar, START.off)
    shown = []
    ref.stream.subscribe(lambda item: shown.append(item.event))
    session.command(f"board {START.to_json()}")
    assert [e.leds for e in shown if e.type == "leds"][-1] == ((P(13), AMBER),)
    assert said[-1] == "referee: board and camera disagree at white's 13"


def test_a_camera_reading_older_than_the_boards_last_change_is_no_disagreement():
    """Checkers moved since the camera's last settled frame: the board's count stands, with no amber, until
    the camera has seen the board as it is now; then what the camera sees differently is a disagreement."""
    from types import SimpleNamespace

    from referee.flow import Phase
    from referee.inputs import Readings, SeenBoard

    def frame(points):
        checkers = SimpleNamespace(points=tuple(points), bar=START.bar, off=START.off, confidence=None)
        return SimpleNamespace(checkers=checkers, dice=(), cube=None)

    readings = Readings()
    readings.board(START, START)
    readings.observation(frame(START.points), Phase.ROLL, START)
    assert readings.board(None, START) == [SeenBoard(START, ())]
    moved = OPENING.with_turn(Side.WHITE)
    [seen] = readings.board(moved, START)  # the camera still shows the start
    assert seen.disagree == () and seen.position.points == OPENING.points
    readings.observation(frame(OPENING.points), Phase.ROLL, START)
    assert readings.board(None, START)[0].disagree == ()
    wrong = list(OPENING.points)
    wrong[12] = 4  # the camera now misses one of white's five on 13
    readings.observation(frame(wrong), Phase.ROLL, START)
    assert readings.board(None, START)[0].disagree == (P(13),)


def test_a_flood_of_snapshots_neither_holds_the_loop_nor_is_judged_one_by_one(tmp_path):
    """A board that sends faster than the rules judge (a slow Pi, escalated doubles) must not keep
    ``pump`` from returning, and only the newest of the snapshots waiting is judged."""
    import queue
    import threading

    from firmware_bridge.protocol import Snapshot
    from referee.inputs import observed_position

    with BoardEmulator(seed=1, noise=0) as emu:
        link = BoardLink(emu.path).start()
        try:
            emu.set_position(START)
            deadline = time.monotonic() + 10
            snap = None
            while snap is None and time.monotonic() < deadline:
                event = link.events.get(timeout=1)
                if isinstance(event, Snapshot):
                    try:
                        snap = event if not board_diff(observed_position(event, START), START) else None
                    except ValueError:  # the board before set_position reached it
                        pass
        finally:
            link.stop()
    assert snap is not None

    class Flooding:
        events: queue.Queue = queue.Queue()
        frames: list = []

        def send_leds(self, frame):
            self.frames.append(frame)

    flood = Flooding()
    stop = threading.Event()

    def feed():
        while not stop.is_set():
            for _ in range(20):
                flood.events.put(snap)
                put.append(1)
            time.sleep(0.001)

    put: list[int] = []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, link=flood, say=lambda s: None)
    judged = []
    real_board = session.readings.board
    session.readings.board = lambda seen, like: (judged.append(seen), real_board(seen, like))[1]
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        done = threading.Event()
        threading.Thread(target=lambda: (session.pump(0.2), done.set()), daemon=True).start()
        assert done.wait(30), "pump never returned under a flood of snapshots"
    finally:
        stop.set()
        feeder.join()
    assert ref.phase != "setup"  # the newest board was judged: the start position is set up
    assert 0 < len(judged) < len(put) / 5, (len(judged), len(put))


def test_a_hand_that_stays_over_the_board_is_said_once_and_so_is_the_clear_view_after(tmp_path):
    from vision.observe import Observation

    cam = ScriptedCamera()
    said = []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, camera=cam, say=said.append, hand_pause_s=0.2)
    cam.next = [Observation("occluded", None, (), None, None, messages=("something over the board at 13",))]
    session.pump(0.05)
    assert not said  # a hand passing over the board is normal play
    _pump_until(session, lambda: any("over the board for" in s for s in said), timeout=5)
    session.pump(0.3)
    assert sum("over the board for" in s for s in said) == 1
    cam.next = [Observation("settling", None, (), None, None)]
    session.pump(0.05)
    assert said[-1].startswith("the camera sees the board again")
    assert ref.phase == "setup" and [e["type"] for e in journal_events(tmp_path / "m.jsonl")] == [
        "match_start",
        "game_start",
    ]


def test_a_camera_only_table_reads_the_opening_roll_calls_a_die_off_the_field_and_ends_the_turn_when_the_dice_are_lifted(
    tmp_path,
):
    from vision.checkers import CheckerReading
    from vision.observe import DieObservation, Observation

    def seen(pos, *dice):
        reading = CheckerReading(tuple(pos.points), tuple(pos.bar), tuple(pos.off), (1.0,) * 24, (1.0, 1.0), (1.0, 1.0))
        # (value, half[, x in mm]): a die thrown anew lands elsewhere
        dies = tuple(
            DieObservation(d[0], (0.0, 0.0), (float(d[2] if len(d) > 2 else 0), 0.0), d[1], False, 1.0, (0, 0, 10, 10))
            for d in dice
        )
        return Observation("stable", reading, dies, None, None, frames_held=3)

    cam, said = ScriptedCamera(), []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, camera=cam, say=said.append)
    cam.next = [seen(START), seen(START, (5, "left"))]  # set up; black's die is down, white's not yet
    session.pump(0.1)
    assert ref.phase == "opening_roll" and not any("throw again" in s for s in said)
    cam.next = [seen(START, (5, "left"), (3, "right"))]  # white's 3 in white's right-hand board
    session.pump(0.1)
    assert ref.phase == "play" and ref.on_roll is Side.BLACK and (ref.replay.roll.high, ref.replay.roll.low) == (5, 3)
    black_played = ref.position.play("13/8 13/10", ref.replay.roll)
    cam.next = [seen(black_played, (5, "left"), (3, "right")), seen(black_played)]  # the play, then the dice lifted
    session.pump(0.1)
    assert ref.phase == "roll" and ref.on_roll is Side.WHITE
    cam.next = [seen(black_played, (6, "right"))]  # white threw both; one came to rest off the playing field
    session.pump(0.1)
    assert ref.phase == "roll" and "throw both dice again" in said[-1]
    cam.next = [seen(black_played, (6, "right", 50), (4, "right", 80))]
    session.pump(0.1)
    assert ref.phase == "play" and (ref.replay.roll.high, ref.replay.roll.low) == (6, 4)
    assert [e["type"] for e in journal_events(tmp_path / "m.jsonl")][-3:] == ["opening_roll", "play", "roll"]

    # white plays and ends the turn with the button; the dice stay where they fell; the board is seen again
    white_played = ref.position.play("24/18 13/9", ref.replay.roll)
    cam.next = [seen(white_played, (6, "right", 50), (4, "right", 80))]
    session.pump(0.1)
    session.command("end")
    session.pump(0.1)
    assert ref.phase == "roll" and ref.on_roll is Side.BLACK
    said.clear()
    cam.next = [seen(white_played, (6, "right", 50), (4, "right", 80))]  # the same dice, still lying: not black's throw
    session.pump(0.1)
    assert ref.phase == "roll" and not any("throw" in s or "rolls" in s for s in said), said
    cam.next = [seen(white_played), seen(white_played, (2, "left"), (1, "left"))]  # picked up, then black throws
    session.pump(0.1)
    assert ref.phase == "play" and (ref.replay.roll.high, ref.replay.roll.low) == (2, 1)


def test_fusion_finishes_heaps_the_board_counts_only_as_at_least():
    # the board reads the heap of 5 on 13 as "at least 4"
    points = list(START.points)
    points[12] = 4
    board = BoardSeen(tuple(points), START.pinned, START.bar, START.off, {P(13): 4})
    assert fuse(START, board).position == START  # alone, the count of 15 finishes white's one heap
    assert fuse(START, board, (START.points, START.bar, START.off)).position == START  # the camera counts it
    too_few = list(START.points)
    too_few[12] = 3
    fused = fuse(START, board, (tuple(too_few), START.bar, START.off))
    assert fused.disagree == (P(13),) and fused.position == START  # fewer than the board's "at least": said
    # two heaps of one colour: the count of 15 cannot split them, the camera can
    points[5] = 4
    two = BoardSeen(tuple(points), START.pinned, START.bar, START.off, {P(13): 4, P(6): 4})
    with pytest.raises(ValueError):
        fuse(START, two)
    assert fuse(START, two, (START.points, START.bar, START.off)).position == START
    # a heap in white's tray
    late = make("backgammon", {1: 6, 19: -15}, off=(9, 0))
    tray = BoardSeen(late.points, late.pinned, late.bar, (7, 0), {Place.off(Side.WHITE): 7})
    assert fuse(late, tray).position == late


def test_a_point_the_camera_is_unsure_of_is_the_boards_and_not_a_disagreement():
    cam = list(START.points)
    cam[18] = -4  # a dark checker missed on 19, where the camera is unsure
    unsure = [1.0] * 24
    unsure[18] = MIN_CONFIDENCE / 2
    fused = fuse(START, START, (tuple(cam), START.bar, START.off), camera_confidence=unsure)
    assert fused.disagree == () and fused.position == START
    sure = fuse(START, START, (tuple(cam), START.bar, START.off), camera_confidence=[1.0] * 24)
    assert sure.disagree == (P(19),)


def test_heaped_checkers_on_the_emulated_board_are_counted_and_two_heaps_are_asked_to_be_laid_out(tmp_path):
    with BoardEmulator(seed=5, noise=0) as emu:
        session, said = _board_session(tmp_path, emu, "m.jsonl")
        ref = session.referee
        try:
            emu.set_position(START)
            emu.lay(6, [5, 0, 0, 0, 0])  # white's five on 6 heaped on one slot: the board reads "at least 4"
            emu.lay(19, [5, 0, 0, 0, 0])  # and black's on 19
            _pump_until(session, lambda: ref.phase == "opening_roll")  # the set-up is right: each heap counted as 5
            session.command("opening 3 1")
            emu.move(8, 5)
            emu.move(6, 5)
            _pump_until(
                session, lambda: ref.seen is not None and not board_diff(ref.seen, OPENING)
            )  # 19's heap counted too
            emu.lay(6, [4, 0, 0, 0, 0])
            emu.lay(13, [5, 0, 0, 0, 0])  # two white heaps that saturate: the board alone cannot tell them apart
            _pump_until(session, lambda: any("cannot count the heaped checkers" in s for s in said))
            time.sleep(1.2)  # snapshots repeat (heartbeat): the call is made once
            session.pump(0.05)
            text = [s for s in said if "cannot count" in s]
            assert len(text) == 1 and "on white's 6, 13:" in text[0]
            # a camera that counts the heaps: the same board fuses into the right position
            session.readings.camera_seen = (OPENING.points, OPENING.bar, OPENING.off)
            session.readings.camera_confidence = (1.0,) * 24
            session._feed(session.readings.board(None, ref.position))
            assert not board_diff(ref.seen, OPENING)
            session.command("end")
            assert ref.on_roll is Side.BLACK
        finally:
            session.link.stop()
            ref.close()


def test_while_the_board_is_unplugged_the_turn_is_not_judged_and_is_when_it_is_back(tmp_path):
    plugged = [True]
    with BoardEmulator(seed=6, noise=0) as emu:
        link = BoardLink(
            emu.path, port_finder=lambda: emu.path if plugged[0] else None, lost_after_s=0.6, backoff_initial_s=0.05
        ).start()
        ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("match", 3, "backgammon"))
        said = []
        session = TableSession(ref, link=link, say=said.append)
        try:
            emu.set_position(START)
            _pump_until(session, lambda: ref.phase == "opening_roll")
            session.command("opening 3 1")
            emu.move(8, 5)
            plugged[0] = False
            emu.replug()  # the cable is pulled, and stays out
            _pump_until(session, lambda: any("plug it back" in s for s in said))
            emu.move(6, 5)  # the player finishes the play meanwhile, and ends the turn: the referee cannot see it
            session.command("end")
            assert "the board is unplugged: the turn cannot be judged" in said[-1]
            assert (
                ref.phase == "play" and [e["type"] for e in journal_events(tmp_path / "m.jsonl")][-1] == "opening_roll"
            )
            plugged[0] = True
            _pump_until(session, lambda: any("board back" in s for s in said))
            _pump_until(session, lambda: ref.seen is not None and not board_diff(ref.seen, OPENING))
            session.command("end")
            assert ref.on_roll is Side.BLACK and "referee: white plays 8/5 6/5" in said
        finally:
            link.stop()
            ref.close()


def test_a_camera_that_stops_pauses_the_turn_and_its_last_reading_is_not_fused(tmp_path):
    from vision.checkers import CheckerReading
    from vision.observe import Observation

    cam, said = ScriptedCamera(), []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, camera=cam, say=said.append)
    reading = CheckerReading(START.points, START.bar, START.off, (1.0,) * 24, (1.0, 1.0), (1.0, 1.0))
    cam.next = [Observation("stable", reading, (), None, None, frames_held=3)]
    session.pump(0.1)
    session.command("opening 3 1")
    assert ref.phase == "play" and session.camera_seen is not None
    cam.down = True  # unplugged
    session.pump(0.05)
    assert session.camera_seen is None
    session.command("end")
    assert said[-1].startswith("referee: the camera gives no frames: the turn cannot be judged") and ref.phase == "play"
    cam.down = False
    played = CheckerReading(OPENING.points, START.bar, START.off, (1.0,) * 24, (1.0, 1.0), (1.0, 1.0))
    cam.next = [Observation("stable", played, (), None, None, frames_held=3)]
    session.pump(0.1)
    session.command("end")
    assert ref.on_roll is Side.BLACK


def test_a_camera_source_that_cannot_be_opened_is_down_and_said_once(tmp_path):
    from referee.play import CameraSource
    from vision.calibrate import calibrate
    from vision.render import render

    geometry = calibrate(render(START, seed=1).image)
    said = []
    cam = CameraSource(str(tmp_path / "no-such-video.mp4"), geometry, say=said.append)
    assert cam.read() is None and cam.down and cam.read() is None
    assert len(said) == 1 and "gives no frames" in said[0]


def test_dice_that_lay_before_are_no_new_throw_while_they_lie_or_are_picked_up_one_by_one(tmp_path):
    from vision.checkers import CheckerReading
    from vision.observe import DieObservation, Observation

    def seen(pos, *dice):  # dice: (value, half, x in mm)
        reading = CheckerReading(tuple(pos.points), tuple(pos.bar), tuple(pos.off), (1.0,) * 24, (1.0, 1.0), (1.0, 1.0))
        dies = tuple(
            DieObservation(v, (0.0, 0.0), (float(x), 0.0), half, False, 1.0, (0, 0, 10, 10)) for v, half, x in dice
        )
        return Observation("stable", reading, dies, None, None, frames_held=3)

    start = Position.start("fevga")
    cam, said = ScriptedCamera(), []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "fevga"))
    session = TableSession(ref, camera=cam, say=said.append)
    cam.next = [seen(start), seen(start, (2, "left", 10)), seen(start, (2, "left", 10), (5, "right", 200))]
    session.pump(0.1)
    assert ref.phase == "roll" and ref.on_roll is Side.WHITE  # fevga's starter throws both dice again
    said.clear()
    cam.next = [seen(start, (2, "left", 10), (5, "right", 200)), seen(start, (2, "left", 10))]  # white lifts its die
    session.pump(0.1)
    assert ref.phase == "roll" and not any("throw" in s for s in said), said
    cam.next = [seen(start, (2, "left", 10), (6, "right", 300), (3, "right", 340))]  # black's die still lies
    session.pump(0.1)
    assert ref.phase == "play" and (ref.replay.roll.high, ref.replay.roll.low) == (6, 3)
    played = ref.position.play(ref.position.legal_plays(ref.replay.roll)[0], ref.replay.roll)
    cam.next = [seen(played, (6, "right", 300), (3, "right", 340))]
    session.pump(0.1)
    session.command("end")
    assert ref.phase == "roll" and ref.on_roll is Side.BLACK
    said.clear()
    cam.next = [seen(played, (3, "right", 340)), seen(played)]  # the dice picked up one at a time
    session.pump(0.1)
    assert ref.phase == "roll" and not any("throw" in s for s in said), said
    cam.next = [seen(played, (4, "left", 20), (4, "left", 60))]
    session.pump(0.1)
    assert ref.phase == "play" and ref.on_roll is Side.BLACK and ref.replay.roll.high == 4


def test_the_camera_alone_follows_plakoto_pins_from_the_game_so_far():
    before = make("plakoto", {24: 13, 6: 1, 5: -1, 1: -14}, turn="white", pinned={})
    cam = list(before.points)
    cam[23], cam[4] = 12, 1  # white moved 24/5 onto black's lone checker: the camera sees one white there
    pinned = fuse(before, None, (tuple(cam), before.bar, before.off)).position
    assert pinned.pinned[4] == -1 and pinned.points[4] == 1
    # the pinning checker leaves: the pinned one shows again and is free
    later = pinned.with_turn(Side.WHITE)
    cam[4], cam[3] = -1, 1
    freed = fuse(later, None, (tuple(cam), later.bar, later.off)).position
    assert freed.pinned[4] == 0 and freed.points[4] == -1


def test_a_cube_the_camera_sees_out_of_place_keeps_the_bar_amber_and_is_said_once(tmp_path):
    from vision.checkers import CheckerReading
    from vision.cube import CubeReading
    from vision.observe import Observation

    reading = CheckerReading(OPENING.points, START.bar, START.off, (1.0,) * 24, (1.0, 1.0), (1.0, 1.0))

    def seen(where, face, x=0.0):
        return Observation("stable", reading, (), CubeReading(where, (x, 0.0), face, 1.0, 1.0), None, frames_held=3)

    cam, said, shown = ScriptedCamera(), [], []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("match", 5, "backgammon"))
    session = TableSession(ref, camera=cam, say=said.append)
    session.command(f"board {START.to_json()}")
    session.command("opening 3 1")
    session.command(f"board {OPENING.to_json()}")
    session.command("end")
    session.command("double")
    session.command("take")  # white owns the cube at 2 now
    ref.stream.subscribe(lambda item: item.type == "leds" and shown.append(dict(item.event.leds)))
    cam.next = [seen("centre", 64), seen("centre", 64, x=1.0)]  # not moved yet; seen again a little apart
    session.pump(0.1)
    assert sum("the cube should be at white showing 2" in s for s in said) == 1
    assert shown and shown[-1].get(Place.bar(Side.WHITE)) == AMBER  # still amber after the board's call that follows
    cam.next = [seen("white", 2)]
    session.pump(0.1)
    assert Place.bar(Side.WHITE) not in shown[-1]


def test_the_keyboard_resigns_for_either_side_and_play_takes_the_rule_options(tmp_path):
    from referee.cli import build_parser
    from referee.errors import JournalError

    said = []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("match", 5, "backgammon"))
    session = TableSession(ref, say=said.append)
    session.command(f"board {START.to_json()}")
    session.command("opening 3 1")  # white on roll
    session.command("resign 2 black")
    assert "black offers to resign (gammon)" in said[-1]
    session.command("accept")
    assert ref.score() == {"white": 2, "black": 0}
    ref.close()

    def spec(*argv):
        args = build_parser().parse_args(["play", *argv])
        return match_spec(args.variant, args.match, args)

    money = spec(
        "--match", "money:backgammon", "--jacoby", "--beavers", "--raccoons", "--automatic-doubles", "2", "--games", "3"
    )
    assert (
        money.cube == {"jacoby": True, "beavers": True, "raccoons": True, "automatic_doubles": 2} and money.games == 3
    )
    assert spec("--match", "backgammon:7", "--no-crawford").crawford_rule is False
    tavli = spec("--match", "tavli:5", "--with-gul-bara", "--option", "plakoto.mother_rule=false")
    assert tavli.with_gul_bara and tavli.variant_options == {"plakoto": {"mother_rule": False}}
    assert spec("--variant", "fevga").games == 1
    for bad in (
        ["--match", "backgammon:7", "--jacoby"],
        ["--match", "money:backgammon", "--raccoons"],
        ["--match", "tavli:x"],
        ["--variant", "plakoto", "--option", "mother_rule"],
    ):
        with pytest.raises(JournalError):
            spec(*bad)


def test_tavli_play_runs_from_the_command_line_and_resumes(tmp_path, capsys):
    import io
    import sys

    from referee.cli import main

    journal = tmp_path / "m.jsonl"
    lines = io.StringIO(f"board {START.to_json()}\nopening 3 1\nquit\n")
    old = sys.stdin
    sys.stdin = lines
    try:
        assert main(["play", "--variant", "backgammon", "--journal", str(journal)]) == 0
        out = capsys.readouterr().out
        assert f"journal: {journal}" in out and "white starts" in out and "stopped" in out
        sys.stdin = io.StringIO(f"board {OPENING.to_json()}\nend\nquit\n")
        assert main(["play", "--resume", str(journal)]) == 0
        out = capsys.readouterr().out
        assert "resumed" in out and "white plays 8/5 6/5" in out
        assert main(["play", "--match", "backgammon:3", "--jacoby", "--journal", str(tmp_path / "x.jsonl")]) == 2
        assert "not an option of a match" in capsys.readouterr().err
    finally:
        sys.stdin = old
    assert [e["type"] for e in journal_events(journal)][-1] == "play"


def test_a_camera_only_table_on_rendered_frames_sets_up_opens_and_follows_a_turn(tmp_path):
    from vision.calibrate import calibrate
    from vision.checkers import learn_palette
    from vision.observe import Pipeline
    from vision.render import FIELD_Y0, FIELD_Y1, GEOMETRY, DieSpec, camera_pose, render

    base = render(START, seed=5, scene_seed=5)
    geometry = calibrate(base.image)
    pipe = Pipeline(geometry, learn_palette(geometry, base.image, START))
    y = (FIELD_Y0 + FIELD_Y1) / 2
    right = (GEOMETRY.right_half[0] + GEOMETRY.right_half[2]) / 2
    left = (GEOMETRY.left_half[0] + GEOMETRY.left_half[2]) / 2

    class RenderedCamera:
        """The renderer as the camera: each read draws the scene as it is now and feeds the pipeline."""

        down = False
        scene: tuple = (START, [])

        def read(self):
            position, dice = self.scene
            return pipe.feed(render(position, camera=camera_pose(5), seed=77, scene_seed=5, noise=0, dice=dice).image)

    cam, said = RenderedCamera(), []
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    session = TableSession(ref, camera=cam, say=said.append)
    _pump_until(session, lambda: ref.phase == "opening_roll", timeout=30)
    cam.scene = (
        START,
        [DieSpec(1, (left, y)), DieSpec(3, (right, y))],
    )  # black's die on the left, white's on the right
    _pump_until(session, lambda: ref.phase == "play", timeout=30)
    assert ref.on_roll is Side.WHITE and (ref.replay.roll.high, ref.replay.roll.low) == (3, 1)
    cam.scene = (OPENING, [DieSpec(1, (left, y)), DieSpec(3, (right, y))])  # played, the dice still lying
    _pump_until(session, lambda: ref.seen is not None and not board_diff(ref.seen, OPENING), timeout=30)
    assert ref.phase == "play"
    cam.scene = (OPENING, [])  # the dice picked up: the turn ends
    _pump_until(session, lambda: ref.phase == "roll", timeout=30)
    assert ref.on_roll is Side.BLACK and "referee: white plays 8/5 6/5" in said
    ref.close()


def test_board_and_rendered_camera_fused_count_the_heaps_the_board_alone_cannot(tmp_path):
    from vision.calibrate import calibrate
    from vision.checkers import learn_palette
    from vision.observe import Pipeline
    from vision.render import camera_pose, render

    base = render(START, seed=6, scene_seed=6)
    geometry = calibrate(base.image)
    pipe = Pipeline(geometry, learn_palette(geometry, base.image, START))

    class RenderedCamera:
        down = False

        def read(self):
            return pipe.feed(render(START, camera=camera_pose(6), seed=78, scene_seed=6, noise=0).image)

    with BoardEmulator(seed=9, noise=0) as emu:
        link = BoardLink(emu.path).start()
        ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
        said = []
        session = TableSession(ref, link=link, say=said.append)
        try:
            emu.set_position(
                START, layouts={6: [5, 0, 0, 0, 0], 13: [5, 0, 0, 0, 0]}
            )  # two white heaps: "at least 4" twice
            _pump_until(session, lambda: any("cannot count the heaped checkers on white's 6, 13" in s for s in said))
            assert ref.phase == "setup"
            session.camera = RenderedCamera()  # the camera counts the stacks: the set-up is right
            _pump_until(session, lambda: ref.phase == "opening_roll", timeout=30)
            assert not any("disagree" in s for s in said)
        finally:
            link.stop()
            ref.close()


def test_a_checker_lifted_on_the_emulated_board_lights_its_landing_points_green_in_teaching_mode(tmp_path):
    from referee.table import COLOURS

    with BoardEmulator(seed=10, noise=0) as emu:
        link = BoardLink(emu.path).start()
        ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"), teach=True)
        session = TableSession(ref, link=link, say=lambda s: None)
        try:
            emu.set_position(START)
            _pump_until(session, lambda: ref.phase == "opening_roll")
            session.command("opening 3 1")
            emu.lift(8)  # white takes a checker off 8 into the hand

            def green():
                frame = emu.led_frame
                return frame is not None and {i + 1 for i, led in enumerate(frame.leds[:24]) if led == COLOURS["green"]}

            _pump_until(session, lambda: green() == {4, 5, 7})
        finally:
            link.stop()
            ref.close()


def test_a_camera_source_of_another_resolution_is_read_at_the_calibrated_size(tmp_path):
    """A video (or a camera) giving the calibrated picture at half the size: its frames are scaled up."""
    import cv2

    from referee.play import CameraSource
    from vision.calibrate import calibrate
    from vision.render import render

    frame = render(START, seed=2)
    geometry = calibrate(frame.image)
    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 480))
    assert writer.isOpened()
    for _ in range(5):
        writer.write(cv2.resize(frame.image, (640, 480), interpolation=cv2.INTER_AREA))
    writer.release()
    said = []
    cam = CameraSource(str(video), geometry, say=said.append)
    seen = [obs for obs in (cam.read() for _ in range(5)) if obs is not None]
    assert seen and seen[-1].status == "stable" and seen[-1].checkers.points == START.points
    assert said == []
