"""The host link and the board emulator together, through a real pseudo-terminal, as at the table."""

from __future__ import annotations

import io
import threading
import time

import pytest

from board_rules import Position
from firmware_bridge.cli_board import ScriptError, led_text, parse_led_command, run_script_line
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink, LinkEvent
from firmware_bridge.protocol import Snapshot
from firmware_bridge.sensing import counts_from_slots
from tests.helpers import first_from


def sensed(snapshot: Snapshot):
    return counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )


def wait_for(link: BoardLink, predicate, timeout: float = 5.0):
    event = first_from(link.events, predicate, timeout)
    if event is None:
        raise AssertionError("the expected event did not come")
    return event


def test_host_sees_the_emulated_board_and_lights_its_leds():
    with BoardEmulator(seed=1, noise=0) as emu:
        emu.set_position(Position.start("portes"))
        link = BoardLink(emu.path).start()
        try:
            snap = wait_for(link, lambda e: isinstance(e, Snapshot))
            assert sensed(snap).points == Position.start("portes").points
            emu.move(13, 10)
            want = list(Position.start("portes").points)
            want[12] -= 1
            want[9] += 1
            wait_for(link, lambda e: isinstance(e, Snapshot) and sensed(e).points == tuple(want))
            frame = parse_led_command("led 13,10 red")
            assert link.send_leds(frame)
            assert emu.led_frame == frame
            assert "13:#ff0000" in led_text(emu.led_frame)
        finally:
            link.stop()


def test_link_follows_the_emulator_through_a_replug_under_a_new_path():
    with BoardEmulator(seed=2, noise=0) as emu:
        emu.set_position(Position.start("backgammon"))
        link = BoardLink(emu.path, port_finder=lambda: emu.path, lost_after_s=0.6, backoff_initial_s=0.05).start()
        try:
            frame = parse_led_command("led 24 amber")
            assert link.send_leds(frame)
            old = emu.path
            new = emu.replug()
            assert new != old
            wait_for(link, lambda e: isinstance(e, LinkEvent) and e.kind == "disconnected")
            event = wait_for(link, lambda e: isinstance(e, LinkEvent) and e.kind == "reconnected", timeout=10)
            assert event.port == new
            deadline = time.monotonic() + 5
            while emu.led_frame != frame and time.monotonic() < deadline:
                time.sleep(0.02)
            assert emu.led_frame == frame  # the current LED frame was sent again
        finally:
            link.stop()


def test_script_lines_drive_the_emulator_and_bad_lines_are_named():
    with BoardEmulator(seed=3, noise=0) as emu:
        emu.set_position(Position.start("backgammon"))
        out = io.StringIO()
        run_script_line(emu, "move 13 10  # a comment", out)
        with pytest.raises(ScriptError, match="'jump 3'"):
            run_script_line(emu, "jump 3", out)
        with pytest.raises(ScriptError, match="'99'"):
            run_script_line(emu, "lift 99", out)


def test_led_commands_parse_and_refuse_nonsense():
    frame = parse_led_command("led 1,24,bar green")
    lit = [i for i, led in enumerate(frame.leds) if led.green]
    assert lit == [0, 23, 24]
    assert all(led.red == led.green == led.blue == 0 for led in parse_led_command("leds off").leds)
    with pytest.raises(ScriptError):
        parse_led_command("led 13 purple")


def test_board_watch_prints_the_board_and_sends_typed_led_commands():
    import argparse

    from firmware_bridge.cli_board import watch

    with BoardEmulator(seed=4, noise=0) as emu:
        emu.set_position(Position.start("backgammon"))
        out = io.StringIO()
        code = watch(
            argparse.Namespace(port=emu.path, seconds=None), stdin=io.StringIO("led 13 red\nled 99 red\n"), out=out
        )
        assert code == 0
        text = out.getvalue()
        assert "link: connected" in text and "leds: acknowledged" in text
        assert emu.led_frame == parse_led_command("led 13 red")


def test_board_emulate_command_runs_a_script_and_exits(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "moves.txt"
    script.write_text("move 13 10\nlift 6\nplace 5 white\n")
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "board", "emulate", "--script", str(script), "--exit"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "emulated board on /dev/" in proc.stdout and "LEDs:" in proc.stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("jump 3\n")
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "board", "emulate", "--script", str(bad), "--exit"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "'jump 3'" in proc.stderr


def test_a_button_pressed_on_the_board_reaches_the_host_down_then_up():
    from firmware_bridge.protocol import Button

    with BoardEmulator(seed=6, noise=0) as emu:
        emu.set_position(Position.start("backgammon"))
        link = BoardLink(emu.path).start()
        try:
            emu.press_button(2)
            down = wait_for(link, lambda e: isinstance(e, Button))
            up = wait_for(link, lambda e: isinstance(e, Button))
            assert (down.button, down.pressed, up.button, up.pressed) == (2, True, 2, False)
            assert up.timestamp_ms >= down.timestamp_ms
        finally:
            link.stop()


def test_link_calibrates_the_emulated_board_and_reports_its_refusals():
    from firmware_bridge.link import LinkError
    from firmware_bridge.protocol import CalibrationKind

    with BoardEmulator(seed=7, noise=0, calibrate_s=0.4) as emu:
        link = BoardLink(emu.path).start()
        try:
            link.calibrate()  # an empty board: the offsets are recorded
            assert emu.calibrated
            link.calibrate(CalibrationKind.FACTORY_DEFAULTS)
            assert not emu.calibrated

            emu.place(7, "white")
            with pytest.raises(LinkError, match=r"NACK FAILED: slot 30 reads 1200 .*is a checker on the board\?"):
                link.calibrate()
            assert not emu.calibrated and link.connected
            emu.lift(7)

            outcome: list = []
            first = threading.Thread(target=lambda: outcome.append(link.calibrate()))
            first.start()
            deadline = time.monotonic() + 5
            while not emu.calibrating and time.monotonic() < deadline:
                time.sleep(0.01)
            with pytest.raises(LinkError, match="NACK BUSY"):
                link.calibrate()  # one at a time
            assert link.send_leds(parse_led_command("led 1 red")) is False  # BUSY too
            first.join(5)
            assert outcome == [None] and emu.calibrated and link.connected
            assert link.send_leds(parse_led_command("led 1 red")) is True
        finally:
            link.stop()
