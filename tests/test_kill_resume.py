"""A real ``tavli play`` process on the emulated board, killed (SIGKILL) in the middle of a turn and
resumed with ``--resume``, ends with the same record as a run that was never interrupted."""

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from board_rules import Position, Roll
from firmware_bridge.emulator import BoardEmulator
from tests.helpers import first_from, journal_events

START = Position.start("backgammon")
OPENING = START.play("8/5 6/5", Roll(3, 1))
REPLY = OPENING.play("24/18 13/11", Roll(6, 2))
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


class Player:
    """``tavli play`` in its own process: lines typed on its keyboard, what it says read back."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "play", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.heard: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def type(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def hear(self, text: str, timeout: float = 20.0) -> str:
        def said(line: str) -> bool:
            self.heard.append(line)
            return text in line

        line = first_from(self.lines, said, timeout)
        if line is None:
            raise AssertionError(f"tavli play never said {text!r}; it said {self.heard[-5:]}")
        return line

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def quit(self) -> int:
        self.type("quit")
        return self.proc.wait(timeout=20)


def _judged(emu: BoardEmulator) -> None:
    """Wait until the referee has judged the board as it is now: two more frames from the host (LED frames
    follow each snapshot it judges, and the first may answer a snapshot sent just before the change)."""
    seen = emu.frames_received
    deadline = time.monotonic() + 10
    while emu.frames_received < seen + 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)


def _game(tmp_path: Path, name: str, kill: bool) -> list[dict]:
    journal = tmp_path / name
    with BoardEmulator(seed=2, noise=0, heartbeat_s=0.2) as emu:
        emu.set_position(START)
        player = Player("--variant", "backgammon", "--board", emu.path, "--journal", str(journal))
        try:
            player.hear("the board is set")
            player.type("opening 3 1")
            player.hear("white starts")
            emu.move(8, 5)
            _judged(emu)
            if kill:  # the power fails with half the play made
                player.kill()
                player = Player("--resume", str(journal), "--board", emu.path)
                player.hear("already moved")
            emu.move(6, 5)
            _judged(emu)
            player.type("end")
            player.hear("white plays 8/5 6/5")
            player.type("roll 6 2")
            player.hear("black rolls 6-2")
            emu.move(1, 7, side="black")
            emu.move(12, 14, side="black")
            _judged(emu)
            player.type("end")
            player.hear("black plays 24/18 13/11")
            assert player.quit() == 0
        finally:
            if player.proc.poll() is None:
                player.kill()
    return [{k: v for k, v in e.items() if k != "time"} for e in journal_events(journal)]


def test_a_killed_tavli_play_resumed_on_the_emulated_board_ends_with_the_same_record(tmp_path):
    plain = _game(tmp_path, "plain.jsonl", kill=False)
    killed = _game(tmp_path, "killed.jsonl", kill=True)
    assert killed == plain
    assert [e["type"] for e in plain][-3:] == ["play", "roll", "play"]
