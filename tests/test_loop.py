"""The one table loop: ``tavli demo`` and ``tavli play`` are the same loop, so the same turn makes the same events."""

import io
import time

from rich.console import Console

from board_rules import Position, Roll
from board_rules.legality import board_diff
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink
from referee.demo import _Demo
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec

START = Position.start("backgammon")
OPENING = START.play("8/5 6/5", Roll(3, 1))


def _table_events(stream) -> list:
    got = []
    stream.subscribe(lambda item: got.append(item.event.to_dict()))
    return got


def _pump_until(session, done, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.pump(0.02)
        if done():
            return
    raise AssertionError("the table loop did not get there in time")


def test_a_demo_turn_and_a_tavli_play_turn_make_the_same_events(tmp_path):
    demo = _Demo(5, 0, True, False, tmp_path / "demo.jsonl", Console(file=io.StringIO()))
    try:
        by_demo = _table_events(demo.ref.stream)
        demo.put(START)
        demo.type("opening 3 1")
        demo.put(OPENING)
        demo.press("end_turn")  # the panel's end-of-turn button
    finally:
        demo.ref.close()
        demo.table.close()

    with BoardEmulator(seed=5, noise=0) as emu:
        link = BoardLink(emu.path).start()
        ref = Referee.new(tmp_path / "play.jsonl", MatchSpec("money", 0, "backgammon", games=1))
        by_play = _table_events(ref.stream)
        session = TableSession(ref, link=link, say=lambda s: None)
        try:
            emu.set_position(START)
            _pump_until(session, lambda: ref.seen is not None and not board_diff(ref.seen, START))
            session.command("opening 3 1")  # typed on the keyboard
            emu.set_position(OPENING)
            _pump_until(session, lambda: not board_diff(ref.seen, OPENING))
            session.command("end")
        finally:
            link.stop()
            ref.close()

    assert [e["type"] for e in by_demo] == [e["type"] for e in by_play]
    assert by_demo == by_play
    assert "play" in [e["type"] for e in by_play]
