"""``tavli board emulate`` and ``tavli board watch``: one command language typed or scripted, and a readable watch.

The commands are driven through the CLI functions with a StringIO standard input; the
board they leave is read back as a host reads it, through a link on the pseudo-terminal.
"""

from __future__ import annotations

import argparse
import io
import os
import queue
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_rules import Position, Side
from board_rules.places import PlaceKind
from firmware_bridge.cli_board import board_text, emulate, parse_led_command, watch
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink
from firmware_bridge.protocol import Snapshot
from firmware_bridge.script import (
    HELP,
    InjectFaults,
    LayCheckers,
    LiftChecker,
    MoveChecker,
    PressButton,
    PutChecker,
    Quit,
    Replug,
    ScriptError,
    SetBoard,
    Sleep,
    parse_command,
)
from firmware_bridge.sensing import SensedCounts, counts_from_slots
from tests.helpers import first_from, make

WAIT = 10.0
START = Position.start("backgammon")  # white 6:5 8:3 13:5 24:2, black 1:2 12:5 17:3 19:5
ON_THE_BAR = make("backgammon", {6: 5, 8: 3, 13: 5, 24: 1, 1: -2, 12: -5, 17: -3, 19: -5}, bar=(1, 0))


def args(script=None, exit=True, variant="backgammon") -> argparse.Namespace:
    return argparse.Namespace(variant=variant, script=script, seed=0, exit=exit)


def run_emulate(stdin: str, emu: BoardEmulator, **kw) -> tuple[int, str, str]:
    """``tavli board emulate`` on ``emu`` with ``stdin`` typed: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = emulate(args(**kw), stdin=io.StringIO(stdin), out=out, err=err, emulator=emu)
    return code, out.getvalue(), err.getvalue()


def board_of(emu: BoardEmulator) -> SensedCounts:
    """The board as a host reads it from ``emu`` now."""
    link = BoardLink(emu.path).start()
    try:
        snap = first_from(link.events, lambda e: isinstance(e, Snapshot), WAIT)
        assert snap is not None, "no snapshot from the emulator"
        return counts_from_slots(
            snap.readings, snap.slots_per_point, bar_slots=snap.bar_slots, tray_slots=snap.tray_slots
        )
    finally:
        link.stop()


@pytest.fixture
def emu():
    board = BoardEmulator(seed=5, noise=0)
    yield board
    board.stop()


# ------------------------------------------------------------------ the language


@pytest.mark.parametrize(
    "line, command",
    [
        ("move 13 10", MoveChecker(13, 10)),
        ("move bar 22", MoveChecker(PlaceKind.BAR, 22)),
        ("move bar 3 black", MoveChecker(PlaceKind.BAR, 3, Side.BLACK)),
        ("move 6 off", MoveChecker(6, PlaceKind.OFF)),
        ("MOVE Off 6 White", MoveChecker(PlaceKind.OFF, 6, Side.WHITE)),
        ("lift bar", LiftChecker(PlaceKind.BAR)),
        ("lift 3", LiftChecker(3)),
        ("put 5 white", PutChecker(5, Side.WHITE)),
        ("place off black", PutChecker(PlaceKind.OFF, Side.BLACK)),
        ("lay 6 5,0,0,0,0", LayCheckers(6, (5, 0, 0, 0, 0))),
        ("lay off 2,1,0,0,0 black", LayCheckers(PlaceKind.OFF, (2, 1, 0, 0, 0), Side.BLACK)),
        ("set start", SetBoard(START)),
        ("set 4HPwATDgc/ABMA", SetBoard(START)),
        (f"set {ON_THE_BAR.to_json()}", SetBoard(ON_THE_BAR)),
        ("sleep 0.25", Sleep(0.25)),
        ("press 2", PressButton(2)),
        ("press 0 1.5", PressButton(0, 1.5)),
        ("inject corrupt=0.01 delay=0.1", InjectFaults(corrupt=0.01, delay=0.1)),
        ("inject", InjectFaults()),
        ("replug  # a comment", Replug()),
        ("quit", Quit()),
    ],
)
def test_each_command_parses_and_its_text_parses_back_to_it(line, command):
    assert parse_command(line) == command
    assert parse_command(str(command)) == command


@pytest.mark.parametrize(
    "line, message",
    [
        ("sleep -1", "seconds: '-1' must be a number 0..3600"),
        ("sleep nan", "seconds: 'nan' must be a number 0..3600"),
        ("sleep 1e3", "seconds: '1e3' must be a number 0..3600"),
        ("sleep ١", "seconds: '١' must be a number 0..3600"),  # an Arabic-Indic digit: float() takes it
        ("inject corrupt=2", "corrupt: '2' must be a number 0..1"),
        ("inject delay=9", "delay: '9' must be a number 0..0.5"),
        ("inject corrupt", "fault: 'corrupt' must be corrupt=R, drop=R, duplicate=R or delay=S"),
        ("inject drop=0.1 drop=0.2", "drop: 'drop=0.2' is named twice"),
        ("lift ²", "place: '²' must be a point 1..24, bar or off"),
        ("move ² 5", "src: '²' must be a point 1..24, bar or off"),
        ("move 13 25", "dst: '25' must be a point 1..24, bar or off"),
        ("put 5 green", "side: 'green' must be white or black"),
        ("move 6 off black", "side: 'black' is given only from the bar or off; point 6 has its own"),
        ("press 256", "button: '256' must be 0..255"),
        ("press ³", "button: '³' must be 0..255"),
        ("lay bar 1,0,0,0", "side: None must be named for bar: white or black"),
        ("lay 6 5,x", "heights: '5,x' must be heights 0..15 parted by commas"),
        ("move 13", "move: takes SRC DST [white|black]"),
        ("jump 3", "command: 'jump' is not one of move, lift, put"),
        ("set " + "[" * 5000, "line: "),
        ("set {" + '"a": [' * 50, "nests deeper than 8"),
        (
            'set {"variant": "backgammon", "turn": "white", "points": [0], "bar": {}, "off": {}}',
            "points: [0] must be a list of exactly 24",
        ),
        ("set 4HPwATDgc/ABM", "position: a Position ID has 14 characters, not 13"),
    ],
)
def test_a_line_that_cannot_be_read_is_refused_naming_the_field_and_value(line, message):
    with pytest.raises(ScriptError) as caught:
        parse_command(line)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_line_is_a_command_that_prints_back_to_itself_or_a_script_error(line):
    try:
        command = parse_command(line)
    except ScriptError:
        return
    assert command is None or parse_command(str(command)) == command


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["move", "lift", "put", "lay", "sleep", "press", "inject", "set"]),
    st.lists(st.sampled_from(["bar", "off", "white", "black", "1", "24", "0", "²", "-1", "=", "corrupt=1", "5,0"])),
)
def test_any_words_after_a_command_are_a_command_or_a_script_error(cmd, words):
    try:
        parse_command(" ".join([cmd, *words]))
    except ScriptError:
        pass


# ------------------------------------------------------------------ tavli board emulate


def test_typed_commands_take_a_checker_off_the_bar_and_bear_one_off(emu):
    typed = f"set {ON_THE_BAR.to_json()}\nmove bar 22\nmove 6 off\nlift bar\nmove off 5\n"
    code, out, err = run_emulate(typed, emu)
    assert err == "tavli board emulate: line 4: 'lift bar': bar: no checker there to lift\n"
    assert code == 2  # from a pipe, a refused line is an error in the end
    assert out.startswith("emulated board on /dev/") and "Traceback" not in out + err
    board = board_of(emu)
    assert (board.points[21], board.points[5], board.points[4], board.bar, board.off) == (1, 4, 1, (0, 0), (0, 0))


def test_every_failing_line_of_the_issue_is_said_in_one_line_and_the_board_goes_on(emu):
    bad = [
        "move bar 22",
        "lift bar",
        "move off 6",
        "lift 3",
        "sleep -1",
        "inject corrupt=2",
        "lift ²",
        "move ² 5",
        "jump 3",
        "set " + "{" * 3000,
        "move 1 bar black",
    ]
    code, out, err = run_emulate("\n".join([*bad, "move 13 10"]) + "\n", emu)
    lines = err.splitlines()
    assert len(lines) == len(bad) and "Traceback" not in err
    for n, (line, said) in enumerate(zip(bad, lines), 1):
        assert said.startswith(f"tavli board emulate: line {n}: {line[:77]!r}"[: 40 + len(str(n))]), said
    assert "bar: no checker there to lift" in lines[0]
    assert "point 3: no checker there to lift" in lines[3]
    assert "seconds: '-1'" in lines[4] and "corrupt: '2'" in lines[5] and "'²'" in lines[6] and "'²'" in lines[7]
    assert "command: 'jump'" in lines[8]
    assert code == 2
    board = board_of(emu)
    assert (board.points[12], board.points[9], board.points[0]) == (4, 1, -2)  # only the last line moved a checker


def test_a_script_and_typed_lines_speak_one_language_and_quit_stops(emu, tmp_path):
    script = tmp_path / "moves.txt"
    script.write_text("move 13 10\nlift bar\nmove 6 off\n", encoding="utf-8")
    code, out, err = run_emulate("move 10 9\nquit\nmove 9 8\n", emu, script=str(script), exit=False)
    assert err == f"tavli board emulate: {script}:2: 'lift bar': bar: no checker there to lift\n"
    assert code == 2
    board = board_of(emu)
    assert (board.points[12], board.points[9], board.points[8], board.points[7], board.off) == (4, 0, 1, 3, (1, 0))


def test_with_exit_the_board_stops_at_the_end_of_the_script_and_reads_no_input(emu, tmp_path):
    script = tmp_path / "moves.txt"
    script.write_text("move 24 18\n", encoding="utf-8")
    code, out, err = run_emulate("move 13 10\n", emu, script=str(script))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "LEDs: (none yet)"
    board = board_of(emu)
    assert (board.points[23], board.points[17], board.points[12]) == (1, 1, 5)


def test_help_lists_every_command_and_replug_says_the_new_path(emu):
    code, out, err = run_emulate("help\nreplug\n", emu)
    assert (code, err) == (0, "")
    assert HELP in out
    for command in ("move", "lift", "put", "lay", "set", "sleep", "press", "inject", "replug", "help", "quit"):
        assert f"\n  {command} " in HELP
    assert f"replugged: {emu.path}\n" in out


def test_a_terminal_gets_a_prompt_and_ctrl_d_stops(emu):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.StringIO(), io.StringIO()
    code = emulate(args(exit=False), stdin=Terminal("lift 3\nmove 13 10\n"), out=out, err=err, emulator=emu)
    assert code == 0  # a person saw the refusal: not an error of the run
    assert err.getvalue() == "tavli board emulate: 'lift 3': point 3: no checker there to lift\n"
    assert "type help for the commands" in out.getvalue() and out.getvalue().count("board> ") == 3
    assert board_of(emu).points[9] == 1


@pytest.mark.parametrize("what", ["missing", "directory", "not utf-8", "too long"])
def test_a_script_that_cannot_be_read_is_exit_2_with_one_line(tmp_path, what):
    path = tmp_path / "script.txt"
    if what == "directory":
        path.mkdir()
    elif what == "not utf-8":
        path.write_bytes(b"move 13 10\n\xff\xfe\n")
    elif what == "too long":
        path.write_text("# " + "x" * (1 << 20) + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = emulate(args(script=str(path)), stdin=io.StringIO(""), out=out, err=err)
    assert code == 2 and out.getvalue() == ""
    assert err.getvalue().startswith(f"tavli board emulate: --script: {str(path)!r}: ")
    assert err.getvalue().count("\n") == 1


def test_the_command_line_refuses_a_missing_script_without_a_traceback(tmp_path):
    missing = tmp_path / "missing.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "board", "emulate", "--script", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"tavli board emulate: --script: {str(missing)!r}: No such file or directory\n"


# ------------------------------------------------------------------ tavli board watch


class Lines(io.TextIOBase):
    """What ``watch`` prints, one line at a time on a queue."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.all: list[str] = []
        self._part = ""

    def write(self, text: str) -> int:
        self._part += text
        *done, self._part = self._part.split("\n")
        for line in done:
            self.all.append(line)
            self.lines.put(line)
        return len(text)


def test_the_board_is_drawn_readably():
    counts = SensedCounts(points=START.points, bar=(0, 1), off=(2, 0), uncertain=())
    assert board_text(counts) == "board: points 1:2b 6:5w 8:3w 12:5b 13:5w 17:3b 19:5b 24:2w | bar 1b | off 2w"
    moved = counts._replace(points=(-2, 0, 0, 0, 0, 5, 0, 3, 0, 1, 0, -5, 4) + START.points[13:])
    assert board_text(moved, counts).endswith("  (10 ->1w, 13 5w->4w)")
    empty = SensedCounts(points=(0,) * 24, bar=(0, 0), off=(0, 0), uncertain=(7,), at_least=(6,))
    assert board_text(empty) == "board: points 7:pin? | bar none | off none"


def test_board_watch_prints_the_board_once_while_it_does_not_change():
    with BoardEmulator(seed=6, noise=0, heartbeat_s=0.05) as emu:
        emu.set_position(START)
        out = io.StringIO()
        code = watch(argparse.Namespace(port=emu.path, seconds=0.8), stdin=io.StringIO(""), out=out)
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("link: connected /dev/")
    assert [line for line in lines if line.startswith("board:")] == [
        "board: points 1:2b 6:5w 8:3w 12:5b 13:5w 17:3b 19:5b 24:2w | bar none | off none"
    ]  # about 16 heartbeats came, and no repeat


def test_board_watch_prints_each_change_and_refuses_bad_led_commands():
    with BoardEmulator(seed=7, noise=0) as emu:
        emu.set_position(START)
        read_end, write_end = os.pipe()
        stdin = os.fdopen(read_end, encoding="utf-8")
        out, err = Lines(), io.StringIO()
        result: list[int] = []
        thread = threading.Thread(
            target=lambda: result.append(watch(argparse.Namespace(port=emu.path, seconds=None), stdin, out, err=err)),
            daemon=True,
        )
        thread.start()
        try:
            assert first_from(out.lines, lambda line: line.startswith("board:"), WAIT) is not None
            emu.move(13, 10)  # lifted (one snapshot), then put down (another)
            lifted = first_from(out.lines, lambda line: line.startswith("board:"), WAIT)
            assert lifted is not None and lifted.endswith(" 13:4w 17:3b 19:5b 24:2w | bar none | off none  (13 5w->4w)")
            put = first_from(out.lines, lambda line: line.startswith("board:"), WAIT)
            assert put is not None and put.endswith(
                " 10:1w 12:5b 13:4w 17:3b 19:5b 24:2w | bar none | off none  (10 ->1w)"
            )
            typed = "led ² red\nled 13 purple\nled 99 red\nblink\nled 13,² red\nhelp\nled 13,off-b red\n"
            os.write(write_end, typed.encode())
            assert first_from(out.lines, lambda line: line == "leds: acknowledged", WAIT) is not None
        finally:
            os.close(write_end)  # end of input: watch returns
            thread.join(WAIT)
            stdin.close()
    assert result == [0]
    assert emu.led_frame == parse_led_command("led 13,off-b red")
    assert err.getvalue().splitlines() == [
        "tavli board watch: place: '²' must be 1..24, bar, off-w or off-b",
        "tavli board watch: colour: 'purple' must be one of off, red, green, blue, amber, white",
        "tavli board watch: place: '99' must be 1..24, bar, off-w or off-b",
        "tavli board watch: command: 'blink' is not 'led PLACES COLOUR' or 'leds off' (help lists them)",
        "tavli board watch: place: '²' must be 1..24, bar, off-w or off-b",
    ]
    assert any(line.startswith("LED commands: led PLACES COLOUR") for line in out.all)
    assert not any("[" in line or "Snapshot(" in line or "Lift(" in line for line in out.all)


def test_a_command_built_in_code_is_checked_as_a_parsed_one():
    with pytest.raises(ScriptError, match="src: 'bar' must be a point 1..24, PlaceKind.BAR or PlaceKind.OFF"):
        MoveChecker("bar", 3)  # the text, not the PlaceKind
    with pytest.raises(ScriptError, match="seconds: -1 must be a number 0..3600"):
        Sleep(-1)
    with pytest.raises(ScriptError, match="corrupt: nan must be a number 0..1"):
        InjectFaults(corrupt=float("nan"))
    with pytest.raises(ScriptError, match="side: None must be white or black"):
        PutChecker(5, None)
