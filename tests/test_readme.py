"""A newcomer types every command the README shows, in order, in an empty folder: none raises.

Each ``tavli`` line of the README's ``sh`` blocks (and the profile file its heredoc writes)
runs in one fresh folder with the project's ``tavli`` first on PATH and nothing on stdin. A
line may succeed, or fail for want of what a newcomer lacks (a board on /dev/ttyACM0, a
camera, a file the README leaves to the reader) with exit 1 or 2 and a message; it never
prints a traceback and never hangs. Only the emulator and the board watcher serve until
stopped; they are stopped after a while.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# these run until stopped: they are stopped after SERVE_S
SERVES = ("tavli board emulate --variant", "tavli board watch", "tavli hall")
LIMIT_S = 60
SERVE_S = 8  # long enough to start, open its port or say it waits


def readme_commands(text: str) -> list[str]:
    """The README's shell lines that a newcomer would type: ``tavli ...`` lines and heredocs, in order."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            heredoc = re.search(r"<<'?(\w+)'?\s*$", line)
            if heredoc:
                end = lines.index(heredoc.group(1), i + 1)
                commands.append("\n".join(lines[i : end + 1]))
                i = end + 1
                continue
            if line.startswith("tavli "):
                commands.append(line)
            i += 1
    return commands


def test_the_readme_shows_its_commands():
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 30
    assert any(c.startswith("tavli play --resume") for c in commands)


def test_every_readme_command_runs_without_a_traceback_or_a_hang(tmp_path):
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("DISPLAY", None)
    outcomes = []
    for command in commands:
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=SERVE_S if command.startswith(SERVES) else LIMIT_S,
            )
        except subprocess.TimeoutExpired as exc:
            served = command.startswith(SERVES)
            assert served, f"{command!r} still ran after {LIMIT_S} s"  # a hang
            out = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
            assert "Traceback" not in out, f"{command!r}:\n{out[-2000:]}"
            outcomes.append((command, "served"))
            continue
        out = done.stdout + done.stderr
        assert "Traceback" not in out, f"{command!r}:\n{out[-2000:]}"
        assert done.returncode in (0, 1, 2), f"{command!r}: exit {done.returncode}\n{out[-2000:]}"
        if done.returncode:
            assert done.stderr.strip(), f"{command!r}: exit {done.returncode} without a word"
        outcomes.append((command, done.returncode))
    print(f"README: {len(outcomes)} commands, " + ", ".join(f"{c.split(' #')[0][:50]} -> {o}" for c, o in outcomes))
