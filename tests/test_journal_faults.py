"""The journal under faults: one referee owns it at a time, a disk that refuses a write pauses the game
(nothing lost or reordered), every damaged file is loaded or refused in one line, and a start that fails
leaves no journal behind."""

from __future__ import annotations

import errno
import io
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from board_rules import Position, Roll
from board_rules.errors import TavliError
from referee import events as E
from referee import flow as F
from referee import journal as J
from referee.cli import main
from referee.flow import GameFlow
from referee.loop import TableSession
from referee.players import choose
from referee.session import Referee
from referee.spec import MatchSpec
from referee.stream import TerminalSink
from tests.helpers import journal_events

ROOT = Path(__file__).resolve().parents[1]
START = Position.start("backgammon")
OPENED = START.play("8/5 6/5", Roll(3, 1))
SPEC = MatchSpec("money", 0, "backgammon", games=1)
PAUSED = "referee: the journal cannot be written"
BACK = "referee: the journal is written again: the game goes on"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX files and flock")
MAX_LINE_BYTES = getattr(J, "MAX_LINE_BYTES", 64 * 1024)
MAX_JOURNAL_BYTES = getattr(J, "MAX_JOURNAL_BYTES", 32 * 1024 * 1024)


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``tavli ARGV`` in this process: exit status, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def game_inputs(seed: int, spec: MatchSpec = SPEC) -> list[F.Input]:
    """The inputs of a whole game by a stand-in player with seeded dice (decided on a flow without a journal)."""
    flow, _ = GameFlow.new(spec)
    rng = random.Random(seed)
    inputs: list[F.Input] = []

    def give(what: F.Input) -> None:
        inputs.append(what)
        flow.handle(what)

    while flow.phase != "over":
        if flow.phase == "setup":
            give(F.SeenBoard(flow.position))
        elif flow.phase == "opening_roll":
            give(F.TypedOpening(rng.randint(1, 6), rng.randint(1, 6)))
        elif flow.phase == "roll":
            give(F.SeenDice((rng.randint(1, 6), rng.randint(1, 6))))
        else:
            _, after = choose(flow.position, flow.record.roll, rng)
            give(F.SeenBoard(after))
            give(F.Pressed("end-turn"))
    return inputs


def untimed(path: Path) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "time"} for e in journal_events(path)]


def whole_lines(path: Path) -> bool:
    """The file ends on a whole event and every line is one."""
    raw = path.read_bytes()
    return raw.endswith(b"\n") and J.read_journal(path).torn is None


class Disk:
    """``os.write`` and ``os.fsync`` that refuse one file while ``refuse`` is an errno (half a line gets out)."""

    def __init__(self, monkeypatch, path: Path) -> None:
        self.path = path
        self.refuse: int | None = None
        self.on_fsync = False  # refuse at fsync (after the whole line was written) instead
        self.refused = 0
        real_write, real_fsync = os.write, os.fsync

        def write(fd, data):
            if self.refuse and not self.on_fsync and self._ours(fd):
                self.refused += 1
                real_write(fd, bytes(data)[: max(1, len(data) // 2)])
                raise OSError(self.refuse, os.strerror(self.refuse))
            return real_write(fd, data)

        def fsync(fd):
            if self.refuse and self.on_fsync and self._ours(fd):
                self.refused += 1
                raise OSError(self.refuse, os.strerror(self.refuse))
            return real_fsync(fd)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)

    def _ours(self, fd: int) -> bool:
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except OSError:
            return False


def listening(ref: Referee) -> list[str]:
    said: list[str] = []
    ref.stream.subscribe(TerminalSink(said.append))
    return said


# =============================================================================== 1. one referee a journal


def test_a_journal_open_in_this_process_cannot_be_opened_again_until_it_is_closed(tmp_path):
    path = tmp_path / "m.jsonl"
    first = Referee.new(path, SPEC)
    before = path.read_bytes()
    with pytest.raises(J.JournalBusyError, match=r"m.jsonl': another referee has it open") as info:
        J.Journal.open(path)
    assert isinstance(info.value, TavliError) and isinstance(info.value, OSError)
    with pytest.raises(J.JournalBusyError):
        Referee.resume(path)
    assert path.read_bytes() == before
    first.close()
    Referee.resume(path).close()


HOLDER = """
import sys
from referee.journal import Journal
journal = Journal.open(sys.argv[1])
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_journal_another_process_holds_is_refused_in_one_line_and_left_as_it_was(tmp_path):
    path = tmp_path / "m.jsonl"
    Referee.new(path, SPEC).close()
    before = path.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(J.JournalBusyError, match="another referee has it open"):
            J.Journal.open(path)
        code, out, err = run(["play", "--resume", str(path)])
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"tavli play: {str(path)!r}: another referee has it open")
        assert path.read_bytes() == before
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    Referee.resume(path).close()  # the lock went with the process


def test_a_second_tavli_play_resume_on_one_journal_exits_2_and_the_first_plays_on(tmp_path):
    path = tmp_path / "m.jsonl"
    ref = Referee.new(path, MatchSpec("money", 0, "backgammon", games=1))
    ref.board(START)
    ref.opening(3, 1)
    ref.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "play", "--resume", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        assert first.stdout.readline().startswith(f"resumed {path}")
        second = subprocess.run(
            [sys.executable, "-m", "referee.cli", "play", "--resume", str(path)],
            input="",
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=60,
        )
        assert second.returncode == 2 and second.stdout == ""
        assert second.stderr.count("\n") == 1 and "another referee has it open" in second.stderr
        first.stdin.write(f"board {OPENED.to_json()}\nend\nquit\n")
        first.stdin.flush()
        assert first.wait(timeout=30) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert [e["seq"] for e in journal_events(path)] == list(range(1, 5))  # one writer: 1..4, nothing doubled


# =============================================================================== 2. a disk that refuses a write


@pytest.mark.parametrize(
    ("refuse", "on_fsync", "words"),
    [
        (errno.ENOSPC, False, "No space left on device"),
        (errno.EFBIG, False, "File too large"),
        (errno.EROFS, False, "Read-only file system"),
        (errno.EIO, True, "Input/output error"),
    ],
)
def test_a_refused_write_leaves_the_file_on_its_last_whole_event_and_the_event_can_be_appended_again(
    tmp_path, monkeypatch, refuse, on_fsync, words
):
    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    with J.Journal.open(path) as jr:
        jr.append(E.match_start(SPEC))
        before = path.read_bytes()
        disk.refuse, disk.on_fsync = refuse, on_fsync
        event = E.game_start(1, START, None)
        with pytest.raises(J.JournalWriteError, match=rf"m.jsonl': cannot be written \({words}\)") as info:
            jr.append(event)
        assert isinstance(info.value, OSError) and info.value.reason == words
        assert path.read_bytes() == before and jr.next_seq == 2 and disk.refused == 1
        disk.refuse = None
        assert jr.append(event).seq == 2
    assert whole_lines(path) and [e["type"] for e in journal_events(path)] == ["match_start", "game_start"]


def test_a_journal_the_disk_refuses_pauses_the_game_holds_the_inputs_and_goes_on_in_order(tmp_path, monkeypatch):
    inputs = game_inputs(2)
    plain = Referee.new(tmp_path / "plain.jsonl", SPEC)
    for what in inputs:
        plain.handle(what)
    plain.close()

    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    ref = Referee.new(path, SPEC)
    said = listening(ref)
    full_at = next(i for i, w in enumerate(inputs) if isinstance(w, F.Pressed) and i > 20)  # a play is recorded
    for i, what in enumerate(inputs):
        if i == full_at:
            disk.refuse = errno.ENOSPC
            written = path.read_bytes()
        calls = ref.handle(what)
        if i == full_at:
            assert ref.journal_paused and path.read_bytes() == written
        if i == full_at + 6:  # the disk was freed: the pending play is written first, then what was held
            assert ref.journal_paused and calls.says == () and path.read_bytes() == written
            assert ref.phase == "roll"  # the flow waits where the last judged input left it
            disk.refuse = None
            assert ref.retry_journal() is True
    ref.close()
    paused = [s for s in said if s.startswith(PAUSED)]
    assert paused == [
        f"{PAUSED} (No space left on device): the game is paused until it can; what is done meanwhile is judged then"
    ]
    assert said.count(BACK) == 1 and said.index(paused[0]) < said.index(BACK)
    assert whole_lines(path) and untimed(path) == untimed(tmp_path / "plain.jsonl")


def test_a_pending_event_keeps_the_time_it_happened(tmp_path, monkeypatch):
    from datetime import UTC, datetime, timedelta

    ticks = {"t": datetime(2026, 1, 1, tzinfo=UTC)}

    def clock():
        ticks["t"] += timedelta(seconds=1)
        return ticks["t"]

    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    ref = Referee.new(path, SPEC, clock=clock)
    ref.board(START)
    disk.refuse = errno.ENOSPC
    ref.opening(3, 1)
    happened = ticks["t"]
    for _ in range(5):
        assert ref.retry_journal() is False
    disk.refuse = None
    assert ref.retry_journal() is True
    ref.close()
    last = journal_events(path)[-1]
    assert last["type"] == "opening_roll" and datetime.fromisoformat(last["time"]) <= happened < ticks["t"]


def test_the_table_loop_offers_the_journal_again_and_says_the_pause_and_its_end(tmp_path, monkeypatch):
    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    ref = Referee.new(path, SPEC)
    said: list[str] = []
    session = TableSession(ref, say=said.append)
    ref.board(START)
    disk.refuse = errno.EFBIG
    session.command("opening 3 1")
    session.command(f"board {OPENED.to_json()}")
    session.command("end")
    assert sum(s.startswith(PAUSED + " (File too large)") for s in said) == 1
    assert not any("plays 8/5 6/5" in s for s in said)
    session.pump(0.01)
    assert BACK not in said  # still refused: the loop only offers it again
    disk.refuse = None
    session.pump(0.01)
    assert said.count(BACK) == 1 and any("white plays 8/5 6/5" in s for s in said)
    ref.close()
    assert [e["type"] for e in journal_events(path)][-2:] == ["opening_roll", "play"] and whole_lines(path)


def test_a_journal_removed_while_playing_is_written_again_from_the_open_file(tmp_path):
    path = tmp_path / "m.jsonl"
    ref = Referee.new(path, SPEC)
    said = listening(ref)
    ref.board(START)
    path.unlink()
    ref.opening(3, 1)
    assert not ref.journal_paused
    assert any("was removed while the match was on: written again from the 2 events" in s for s in said)
    assert [e["seq"] for e in journal_events(path)] == [1, 2, 3]
    with pytest.raises(J.JournalBusyError):  # the file put back is locked too
        J.Journal.open(path)
    ref.close()


def test_a_file_put_in_the_journals_place_is_never_overwritten_and_the_game_waits(tmp_path):
    path = tmp_path / "m.jsonl"
    ref = Referee.new(path, SPEC)
    said = listening(ref)
    ref.board(START)
    path.unlink()
    path.write_text("someone else's\n")
    ref.opening(3, 1)
    assert ref.journal_paused and path.read_text() == "someone else's\n"
    assert any("another file took its place; move that file away" in s for s in said)
    path.rename(tmp_path / "theirs.txt")
    assert ref.retry_journal() is True and BACK in said
    ref.close()
    assert [e["type"] for e in journal_events(path)] == ["match_start", "game_start", "opening_roll"]


def test_a_journal_whose_folder_went_waits_for_the_folder(tmp_path):
    folder = tmp_path / "usb"
    folder.mkdir()
    path = folder / "m.jsonl"
    ref = Referee.new(path, SPEC)
    said = listening(ref)
    ref.board(START)
    shutil.rmtree(folder)
    ref.opening(3, 1)
    assert ref.journal_paused and any("cannot be made again: No such file or directory" in s for s in said)
    folder.mkdir()
    assert ref.retry_journal() is True
    ref.close()
    assert [e["seq"] for e in journal_events(path)] == [1, 2, 3] and whole_lines(path)


def test_closing_while_the_journal_is_refused_says_what_is_not_in_it(tmp_path, monkeypatch):
    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    ref = Referee.new(path, SPEC)
    said = listening(ref)
    ref.board(START)
    disk.refuse = errno.ENOSPC
    ref.opening(3, 1)
    ref.button("end-turn")
    ref.close()
    assert any("1 record event of the match and 1 input held are not in it" in s for s in said)
    disk.refuse = None
    back = Referee.resume(path)  # resumable: the match as it was before the event not written
    assert whole_lines(path) and back.record.phase() == "opening_roll"
    back.close()


def test_a_new_match_on_a_disk_that_refuses_its_first_events_is_not_started_and_leaves_no_file(tmp_path, monkeypatch):
    path = tmp_path / "m.jsonl"
    disk = Disk(monkeypatch, path)
    disk.refuse = errno.ENOSPC
    with pytest.raises(J.JournalWriteError, match="No space left on device"):
        Referee.new(path, SPEC)
    assert not path.exists()


FILE_TOO_LARGE = """
import resource, sys
from pathlib import Path
from referee.session import Referee
from referee.stream import TerminalSink
from tests.test_journal_faults import SPEC, game_inputs

out = Path(sys.argv[1])
inputs = game_inputs(3)
plain = Referee.new(out / "plain.jsonl", SPEC)
for what in inputs:
    plain.handle(what)
plain.close()
ref = Referee.new(out / "m.jsonl", SPEC)
ref.stream.subscribe(TerminalSink(print))
resource.setrlimit(resource.RLIMIT_FSIZE, (ref.journal.size + 1000, resource.RLIM_INFINITY))
paused_at = None
for i, what in enumerate(inputs):
    ref.handle(what)
    if ref.journal_paused and paused_at is None:
        paused_at = i
    if paused_at is not None and i == paused_at + 8:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        ref.retry_journal()
ref.close()
print("paused at input", paused_at, "of", len(inputs))
"""


def test_file_too_large_in_a_real_process_pauses_the_game_and_loses_nothing(tmp_path):
    resource = pytest.importorskip("resource")
    assert resource.RLIMIT_FSIZE
    proc = subprocess.run(
        [sys.executable, "-c", FILE_TOO_LARGE, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.splitlines()
    assert [s for s in said if s.startswith(PAUSED)] == [
        f"{PAUSED} (File too large): the game is paused until it can; what is done meanwhile is judged then"
    ]
    assert said.count(BACK) == 1
    path = tmp_path / "m.jsonl"
    assert whole_lines(path) and untimed(path) == untimed(tmp_path / "plain.jsonl")
    assert untimed(path)[-1]["type"] == "match_end"


# =============================================================================== 3. damaged journals


def _zeros(path: Path) -> None:
    path.write_bytes(b"\x00" * 4096)


def _zero_lines(path: Path) -> None:
    path.write_bytes(b"\x00" * 100 + b"\n" + b"\x00" * 100)


def _non_utf8(path: Path) -> None:
    Referee.new(path, SPEC).close()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b'{"seq":2,"type":"\xff\xfe"}\n' + b"".join(lines[1:]))


def _huge_line(path: Path) -> None:
    Referee.new(path, SPEC).close()
    path.write_bytes(path.read_bytes() + b"[" * (MAX_LINE_BYTES + 10) + b"\n")


def _deep_line(path: Path) -> None:
    Referee.new(path, SPEC).close()
    path.write_bytes(b"[" * 50_000 + b"\n" + path.read_bytes())


def _huge_file(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(MAX_JOURNAL_BYTES + 1)  # sparse: no disk used


DAMAGED = {
    "empty": (lambda p: p.write_bytes(b""), "the journal is empty: no match_start"),
    "zero-filled": (_zeros, "the journal is empty: no match_start"),
    "zero lines": (_zero_lines, "line 1: corrupt event"),
    "missing": (lambda p: None, "cannot read it (No such file or directory)"),
    "a directory": (lambda p: p.mkdir(), "is a directory, not a journal"),
    "non-UTF-8": (_non_utf8, "line 2: corrupt event"),
    "a huge line": (_huge_line, f"line 3: longer than {MAX_LINE_BYTES} bytes: not an event"),
    "deeply nested": (_deep_line, "line 1: corrupt event (nested too deep)"),
    "a huge file": (_huge_file, "larger than any journal"),
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_journal_is_refused_in_one_line_by_play_resume_and_record_export(tmp_path, damage):
    path = tmp_path / "m.jsonl"
    make, words = DAMAGED[damage]
    make(path)
    for argv, where in (
        (["play", "--resume", str(path)], "tavli play"),
        (["record", "export", str(path)], "tavli record export"),
    ):
        code, out, err = run(argv)
        assert code == 2 and out == "", (argv, out)
        assert err.count("\n") == 1 and err.startswith(f"{where}: {str(path)!r}: "), err
        assert words in err
    with pytest.raises(TavliError, match=re.escape(words)):
        Referee.resume(path)


def test_a_device_is_not_read_as_a_journal(tmp_path):
    code, _, err = run(["record", "export", os.devnull])
    assert code == 2 and "is not a regular file, so not a journal" in err and err.count("\n") == 1


def test_a_read_only_journal_is_replayed_and_exported_but_resuming_it_says_it_cannot_be_written(tmp_path, monkeypatch):
    path = tmp_path / "m.jsonl"
    ref = Referee.new(path, SPEC)
    ref.board(START)
    ref.opening(3, 1)
    ref.close()
    path.chmod(0o444)
    if os.geteuid() == 0:  # root writes through any mode: refuse as the kernel does for anyone else
        real_open = os.open

        def read_only(p, flags, *args, **kw):
            if Path(p) == path and flags & (os.O_WRONLY | os.O_RDWR):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(p))
            return real_open(p, flags, *args, **kw)

        monkeypatch.setattr(os, "open", read_only)
    before = path.read_bytes()
    assert J.resume(path).phase == "play"
    code, out, _ = run(["record", "export", str(path), "--format", "txt"])
    assert code == 0 and out
    code, out, err = run(["play", "--resume", str(path)])
    assert code == 2 and err.count("\n") == 1
    assert f"{str(path)!r}: cannot be written (Permission denied); a read-only journal can be exported" in err
    assert path.read_bytes() == before


def test_mutated_journals_load_or_are_refused_as_journal_errors(tmp_path):
    base = tmp_path / "base.jsonl"
    ref = Referee.new(base, SPEC)
    for what in game_inputs(4):
        ref.handle(what)
    ref.close()
    raw = base.read_bytes()
    rng = random.Random(5)
    path = tmp_path / "m.jsonl"
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(150):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(data))
            how = rng.random()
            if how < 0.2:
                del data[k:]  # a power loss: a torn last line, which loads
            elif how < 0.55:
                data[k] = rng.randrange(256)
            elif how < 0.75:
                del data[k : k + rng.randint(1, 30)]
            else:
                data[k:k] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
        path.write_bytes(bytes(data))
        try:
            J.read_journal(path)
            J.resume(path)
            Referee.resume(path).close()
            outcomes["loaded"] += 1
        except J.JournalError:
            outcomes["refused"] += 1
    print(f"mutated journals: {outcomes}")
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == 150


# =============================================================================== 4. the journal is made once the game can start


def test_a_start_that_fails_to_open_the_board_leaves_no_journal_and_the_next_start_is_not_refused(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    no_board = str(tmp_path / "no-such-port")
    for _ in range(2):
        code, out, err = run(["play", "--variant", "backgammon", "--board", no_board])
        assert code == 2 and err.count("\n") == 1 and "no-such-port" in err
        assert "already holds a match" not in err
        assert list(tmp_path.glob("*.jsonl")) == []
    code, _, err = run(["play", "--variant", "backgammon", "--board", no_board, "--journal", "m.jsonl"])
    assert code == 2 and not (tmp_path / "m.jsonl").exists()


def test_a_resume_that_fails_to_open_the_board_leaves_the_journal_as_it_was(tmp_path):
    path = tmp_path / "m.jsonl"
    ref = Referee.new(path, SPEC)
    ref.close()
    path.write_bytes(path.read_bytes() + b'{"seq":3,"ti')  # a torn line: cut off only by a resume that starts
    before = path.read_bytes()
    code, _, err = run(["play", "--resume", str(path), "--board", str(tmp_path / "no-such-port")])
    assert code == 2 and "no-such-port" in err and path.read_bytes() == before
