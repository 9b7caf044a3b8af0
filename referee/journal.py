"""The match journal: an append-only file of record events, one JSON line each.

Owns :class:`Journal` (each event written as one line and ``os.fsync``-ed; one process
holds it at a time, by an OS lock), :func:`read_journal` (a torn last line is dropped
and reported; a corrupt line before it names its line) and :func:`resume`. It persists
events and knows no rules (:mod:`referee.events`, :class:`referee.record.MatchRecord`).
A write the disk refuses is cut back to the last whole event, so it can be appended
again later; a journal removed while open is written again at its path.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from referee.errors import JournalError, JournalReplayError
from referee.events import Decoder, Event, Stamped, check_event
from referee.record import MatchRecord, ResumeState

try:
    import fcntl
except ImportError:  # pragma: no cover - not a POSIX system: no lock
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

__all__ = [
    "MAX_JOURNAL_BYTES",
    "MAX_LINE_BYTES",
    "Journal",
    "JournalBusyError",
    "JournalContents",
    "JournalError",
    "JournalFileError",
    "JournalReplayError",
    "JournalWriteError",
    "read_journal",
    "replay",
    "resume",
]

MAX_LINE_BYTES = 64 * 1024  # the longest event line read (a record event is well under 1 KiB)
MAX_JOURNAL_BYTES = 32 * 1024 * 1024  # the largest journal read (a backgammon game is some 20 KB)


class JournalFileError(JournalError, OSError):
    """The journal's file cannot be opened, read or created (missing, a directory, read-only ...)."""


class JournalBusyError(JournalFileError):
    """Another referee (another process, or another :class:`Journal` in this one) holds the journal open."""


class JournalWriteError(JournalFileError):
    """The disk refused an event (full, file too large, read-only, the file removed); ``reason`` says why.

    The file is left ending on the last whole event, so the same event may be appended again.
    """

    def __init__(self, message: str, line: int | None = None, path: str | os.PathLike | None = None) -> None:
        super().__init__(message, line, path)
        self.reason = message

    @classmethod
    def of(cls, exc: OSError, path: str | os.PathLike) -> JournalWriteError:
        error = cls(f"cannot be written ({_reason(exc)})", None, path)
        error.reason = _reason(exc)
        return error


def _reason(exc: OSError) -> str:
    """An OS error in words, without the path (the journal's messages name it once)."""
    return exc.strerror or str(exc) or type(exc).__name__


def _utc_now() -> datetime:
    return datetime.now(UTC)


# =============================================================================== writing


class Journal:
    """An open journal file: :meth:`append` writes one event per line and syncs it to disk.

    Open with :meth:`Journal.open`, which locks the file for this journal's life (an
    advisory ``flock``: a second :meth:`open`, in this process or another, is refused).
    An existing journal is continued: its sequence numbers go on, and a torn last line
    (a power loss mid-write) is cut off first, so that the next event starts on a line
    of its own. ``clock`` returns the time of each event (an aware :class:`datetime`;
    default: now, UTC). ``size`` is the length of the file up to its last whole event.
    """

    def __init__(
        self,
        path: Path,
        file,
        next_seq: int,
        clock: Callable[[], datetime],
        dropped: str | None,
        size: int = 0,
    ) -> None:
        self.path = path
        self._file = file  # unbuffered (io.FileIO), opened for appending, locked
        self.next_seq = next_seq
        self._clock = clock
        self.dropped = dropped  # what a torn last line held, when one was cut off on opening
        self.size = size
        self._notes: list[str] = []

    @classmethod
    def open(cls, path: str | os.PathLike, clock: Callable[[], datetime] | None = None) -> Journal:
        """Open (or create) the journal at ``path`` for appending, and lock it.

        Raises :class:`JournalBusyError` when another referee holds it open,
        :class:`JournalFileError` when it cannot be opened for writing (missing folder,
        read-only, a directory, not a regular file) and :class:`JournalError` naming the
        line when an existing journal is corrupt before its last line.
        """
        p = Path(path)
        fd, created = _open_for_append(p)
        try:
            _lock(fd, p)
            size = os.fstat(fd).st_size
            with open(fd, "rb", closefd=False) as f:
                read = _read(f, p, size)
            good = read.good_bytes
            if good < size:  # a torn last line, or zero bytes after a power loss
                os.ftruncate(fd, good)
                os.fsync(fd)
            if good and os.pread(fd, 1, good - 1) != b"\n":  # the last event lost only its newline
                _write_all(fd, b"\n")
                os.fsync(fd)
                good += 1
            if created:
                _fsync_dir(p)
        except JournalError:
            _discard(fd, p, created)
            raise
        except OSError as exc:
            _discard(fd, p, created)
            raise JournalFileError(f"cannot be written ({_reason(exc)})", None, p) from None
        return cls(p, open(fd, "ab", buffering=0), len(read.events) + 1, clock or _utc_now, read.torn, good)

    def now(self) -> str:
        """The time an event appended now is stamped with (ISO 8601, milliseconds)."""
        return self._clock().isoformat(timespec="milliseconds")

    def append(self, event: Event, at: str | None = None) -> Stamped:
        """Write ``event`` (with its next ``seq`` and the time ``at``, default :meth:`now`) and sync it;
        returns what was written.

        Raises :class:`JournalError` for a table event (not part of the record) or a closed
        journal, and :class:`JournalWriteError` when the disk refuses it: then the file ends
        on the last whole event again, ``seq`` is not used up and the same event may be
        appended again.
        """
        if self._file is None:
            raise JournalError("the journal is closed", None, self.path)
        if not isinstance(event, Event):
            raise JournalError(f"an event must be one of referee.events' record events, not {event!r}")
        if not event.journaled:
            raise JournalError(f"{event.type}: a table event is streamed, not journaled")
        stamped = Stamped(self.next_seq, at or self.now(), event)
        data = (json.dumps(stamped.to_dict(), separators=(",", ":")) + "\n").encode("utf-8")
        try:
            self._ready()
            fd = self._file.fileno()
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            self._cut_back()
            raise JournalWriteError.of(exc, self.path) from None
        self.size += len(data)
        self.next_seq += 1
        return stamped

    def take_notes(self) -> list[str]:
        """What the journal did that the players should hear (a removed journal written again), once."""
        notes, self._notes = self._notes, []
        return notes

    def _ready(self) -> None:
        """Before a write: the file at :attr:`path` is this journal's and ends on its last whole event.

        A removed journal is put back; a file put in its place raises ``OSError``.
        """
        fd = self._file.fileno()
        mine = os.fstat(fd)
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            self._put_back()
            return
        if (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino):
            raise OSError(errno.EEXIST, "another file took its place; move that file away")
        if mine.st_size != self.size:  # the rest of a line whose write failed
            os.ftruncate(fd, self.size)

    def _cut_back(self) -> None:
        """Cut off what a failed write left after the last whole event (tried again before the next write)."""
        try:
            os.ftruncate(self._file.fileno(), self.size)
        except OSError:
            pass  # _ready cuts it before the next write

    def _put_back(self) -> None:
        """Write the journal again at its path from the open file (its every whole event), and hold that."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except OSError as exc:
            raise OSError(exc.errno, f"it was removed and cannot be made again: {_reason(exc)}") from None
        try:
            _lock(fd, self.path)
            old = self._file.fileno()
            done = 0
            while done < self.size:
                chunk = os.pread(old, min(1 << 20, self.size - done), done)
                if not chunk:
                    raise OSError(errno.EIO, "the open journal is shorter than what was written to it")
                _write_all(fd, chunk)
                done += len(chunk)
            os.fsync(fd)
            _fsync_dir(self.path)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(self.path)  # made by O_EXCL and locked here: nobody else's file
            except OSError:
                pass
            raise
        self._file.close()
        self._file = open(fd, "ab", buffering=0)
        note = (
            f"the journal {str(self.path)!r} was removed while the match was on: "
            f"written again from the {self.next_seq - 1} events the referee holds"
        )
        log.warning(note)
        self._notes.append(note)

    @property
    def closed(self) -> bool:
        return self._file is None

    def close(self) -> None:
        """Close the file and give up its lock."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_for_append(path: Path) -> tuple[int, bool]:
    """A descriptor of ``path`` open for reading and appending, and whether this call created the file."""
    created = False
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
    except IsADirectoryError:
        raise JournalFileError("is a directory, not a journal", None, path) from None
    except (PermissionError, OSError) as exc:
        if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
            raise JournalFileError(
                f"cannot be written ({_reason(exc)}); a read-only journal can be exported "
                "(tavli record export) but not played on",
                None,
                path,
            ) from None
        raise JournalFileError(f"cannot be opened for writing ({_reason(exc)})", None, path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JournalFileError("is not a regular file, so not a journal", None, path)
    return fd, created


def _lock(fd: int, path: Path) -> None:
    """Take the journal's advisory lock without waiting; raise :class:`JournalBusyError` when another holds it."""
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalBusyError(
            "another referee has it open (a second 'tavli play' on this journal?); stop that one first",
            None,
            path,
        ) from None
    except OSError as exc:  # a file system without locks: go on unlocked
        log.warning("%r: cannot be locked (%s): a second referee on it would not be stopped", str(path), _reason(exc))


def _discard(fd: int, path: Path, created: bool) -> None:
    """Close ``fd``; remove the file when this process created it and nothing is in it."""
    try:
        if created and os.fstat(fd).st_size == 0:
            os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # pragma: no cover - a regular file writes something or raises
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]


def _fsync_dir(path: Path) -> None:
    """Make a new file's directory entry durable (where the platform allows it)."""
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


# =============================================================================== reading


@dataclass(frozen=True, slots=True)
class JournalContents:
    """What :func:`read_journal` found: the events, and a torn last line if there was one.

    ``torn`` is the text of a last line cut short (dropped), ``warning`` says so in words,
    ``good_bytes`` is the length of the file up to the end of the last whole event.
    """

    events: tuple[Stamped, ...]
    torn: str | None = None
    warning: str | None = None
    good_bytes: int = 0


def read_journal(path: str | os.PathLike) -> JournalContents:
    """Every event of the journal at ``path``, in order.

    A last line without its newline that is not a whole JSON event (a power loss
    mid-write) is dropped and reported in ``warning`` (and logged); every event before it
    is kept, and so are zero bytes at the end. Raises :class:`JournalError` naming the
    line for a corrupt line before the last one (not JSON, not UTF-8, longer than
    :data:`MAX_LINE_BYTES`), an event of unknown type or a sequence number out of order,
    and :class:`JournalFileError` for a file that cannot be read (missing, a directory,
    not a regular file, over :data:`MAX_JOURNAL_BYTES`).
    """
    p = Path(path)
    try:
        st = os.stat(p)
        if stat.S_ISDIR(st.st_mode):
            raise JournalFileError("is a directory, not a journal", None, path)
        if not stat.S_ISREG(st.st_mode):  # a device or a pipe might never end
            raise JournalFileError("is not a regular file, so not a journal", None, path)
        with open(p, "rb") as f:
            return _read(f, path, os.fstat(f.fileno()).st_size)
    except OSError as exc:
        if isinstance(exc, JournalError):
            raise
        raise JournalFileError(f"cannot read it ({_reason(exc)})", None, path) from None


def _read(f: BinaryIO, path: str | os.PathLike, size: int) -> JournalContents:
    """The events of the journal file ``f`` (``size`` bytes long), read line by line."""
    if size > MAX_JOURNAL_BYTES:
        raise JournalFileError(f"{size} bytes: larger than any journal ({MAX_JOURNAL_BYTES} bytes at most)", None, path)
    events: list[Stamped] = []
    decoder = Decoder()
    torn = None
    warning = None
    good = 0
    line_no = 0
    while chunk := f.readline(MAX_LINE_BYTES + 1):
        line_no += 1
        last = not chunk.endswith(b"\n")
        body = chunk if last else chunk[:-1]
        if last and _only_zeros(body, f):
            break  # trailing zero bytes after a power loss: nothing was written there
        if len(chunk) > MAX_LINE_BYTES:
            raise JournalError(f"longer than {MAX_LINE_BYTES} bytes: not an event", line_no, path)
        if not body.strip() and not last:
            raise JournalError("empty line in the middle of the journal", line_no, path)
        try:
            data = json.loads(body.decode("utf-8"))
            check_event(data, line_no)
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, too deep, not an event
            if last:
                torn = body.decode("utf-8", errors="replace")
                warning = (
                    f"{str(path)!r}: line {line_no}: the last line is cut short (a write interrupted by a "
                    f"power loss?) and was ignored: {torn[:60]!r}; the {len(events)} events before it are kept"
                )
                log.warning(warning)
                break
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            if isinstance(exc, JournalError):
                detail = exc.detail
            elif isinstance(exc, RecursionError):
                detail = "nested too deep"
            raise JournalError(f"corrupt event ({detail}): {body[:80]!r}", line_no, path) from None
        if data.get("seq") != len(events) + 1:
            raise JournalError(f"seq {data.get('seq')!r} out of order; expected {len(events) + 1}", line_no, path)
        try:
            events.append(decoder.decode(data, line_no))
        except JournalError as exc:
            raise exc.at(path) from None
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise JournalError(f"corrupt event ({type(exc).__name__}: {exc})", line_no, path) from None
        good += len(chunk)
    return JournalContents(tuple(events), torn, warning, good)


def _only_zeros(body: bytes, f: BinaryIO) -> bool:
    """Whether ``body`` (a line without a newline) and the rest of ``f`` are zero bytes and blanks only."""
    if body.strip(b"\x00 \t\r"):
        return False
    while block := f.read(1 << 16):
        if block.strip(b"\x00 \t\r\n"):
            return False
    return True


# =============================================================================== replaying


def replay(events: Iterable[Event | Stamped | dict]) -> ResumeState:
    """The state after ``events`` (typed, or their JSON objects), every play checked by the rules.

    Raises :class:`JournalError` naming the event's line for an event that cannot be read, and
    :class:`JournalReplayError` for one the rules refuse.
    """
    decoder = Decoder()
    typed = [decoder.decode(e, i) if isinstance(e, dict) else e for i, e in enumerate(events, start=1)]
    return MatchRecord.of(typed).state()


def resume(path: str | os.PathLike) -> ResumeState:
    """Replay the journal at ``path`` through the rules and return the state to continue from.

    A torn last line is dropped (see :func:`read_journal`) and reported in ``warning``. Raises
    :class:`JournalError` for a corrupt journal and :class:`JournalReplayError` (naming the
    line) for an event the rules refuse.
    """
    contents = read_journal(path)
    try:
        record = MatchRecord.of(contents.events)
    except JournalError as exc:
        raise exc.at(path) from None
    return record.state(contents.warning)
