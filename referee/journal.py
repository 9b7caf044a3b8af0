"""The match journal: an append-only file of record events, one JSON line each.

Owns :class:`Journal` (each event written as one line, flushed and ``os.fsync``-ed
before :meth:`Journal.append` returns), :func:`read_journal` (a torn last line from a
power loss is dropped and reported; a corrupt line before it is an error naming its
line) and :func:`resume`. It persists events and knows no rules: the events are
:mod:`referee.events`, whether the rules allow them is :class:`referee.record.MatchRecord`.
Each line holds ``seq`` (1, 2, 3 ...), ``time`` (ISO 8601, UTC) and the event's fields.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.errors import JournalError, JournalReplayError
from referee.events import Decoder, Event, Stamped, check_event
from referee.record import MatchRecord, ResumeState

log = logging.getLogger(__name__)

__all__ = ["Journal", "JournalContents", "JournalError", "JournalReplayError", "read_journal", "replay", "resume"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


# =============================================================================== writing


class Journal:
    """An open journal file: :meth:`append` writes one event per line and syncs it to disk.

    Open with :meth:`Journal.open`. An existing journal is continued: its sequence numbers
    go on, and a torn last line (a power loss mid-write) is cut off first, so that the
    next event starts on a line of its own. ``clock`` returns the time of each event
    (an aware :class:`datetime`; default: now, UTC).
    """

    def __init__(self, path: Path, file, next_seq: int, clock: Callable[[], datetime], dropped: str | None) -> None:
        self.path = path
        self._file = file
        self.next_seq = next_seq
        self._clock = clock
        self.dropped = dropped  # what a torn last line held, when one was cut off on opening

    @classmethod
    def open(cls, path: str | os.PathLike, clock: Callable[[], datetime] | None = None) -> Journal:
        """Open (or create) the journal at ``path`` for appending.

        Raises :class:`JournalError` when an existing journal is corrupt before its last line
        and ``OSError`` when the file cannot be opened.
        """
        p = Path(path)
        existed = p.exists()
        next_seq = 1
        dropped = None
        if existed:
            read = read_journal(p)
            next_seq = len(read.events) + 1
            dropped = read.torn
            size = p.stat().st_size
            if read.good_bytes < size:  # a torn last line, or zero bytes after a power loss
                with open(p, "r+b") as f:
                    f.truncate(read.good_bytes)
                    f.flush()
                    os.fsync(f.fileno())
            if read.good_bytes:
                with open(p, "rb") as f:
                    f.seek(read.good_bytes - 1)
                    whole_line = f.read(1) == b"\n"
                if not whole_line:  # the last event lost only its newline: end its line first
                    with open(p, "ab") as f:
                        f.write(b"\n")
                        f.flush()
                        os.fsync(f.fileno())
        f = open(p, "ab")
        if not existed:
            _fsync_dir(p)
        return cls(p, f, next_seq, clock or _utc_now, dropped)

    def append(self, event: Event) -> Stamped:
        """Write ``event`` (with its next ``seq`` and the ``time``) and sync it; returns what was written.

        Raises :class:`JournalError` for a table event (not part of the record), ``OSError``
        when the disk refuses it.
        """
        if self._file is None:
            raise JournalError("the journal is closed", None, self.path)
        if not isinstance(event, Event):
            raise JournalError(f"an event must be one of referee.events' record events, not {event!r}")
        if not event.journaled:
            raise JournalError(f"{event.type}: a table event is streamed, not journaled")
        stamped = Stamped(self.next_seq, self._clock().isoformat(timespec="milliseconds"), event)
        data = (json.dumps(stamped.to_dict(), separators=(",", ":")) + "\n").encode("utf-8")
        self._file.write(data)
        self._file.flush()
        os.fsync(self._file.fileno())
        self.next_seq += 1
        return stamped

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    is kept. Raises :class:`JournalError` naming the line for a corrupt line before the
    last one, an event of unknown type or a sequence number out of order, and ``OSError``
    when the file cannot be read.
    """
    raw = Path(path).read_bytes()
    events: list[Stamped] = []
    decoder = Decoder()
    torn = None
    warning = None
    pos = 0
    good = 0
    line_no = 0
    while pos < len(raw):
        end = raw.find(b"\n", pos)
        last = end < 0
        chunk = raw[pos:] if last else raw[pos:end]
        line_no += 1
        next_pos = len(raw) if last else end + 1
        if not chunk.strip() and not last:
            raise JournalError("empty line in the middle of the journal", line_no, path)
        if last and not chunk.strip(b"\x00 \t\r"):
            break  # trailing zero bytes after a power loss: nothing was written there
        try:
            data = json.loads(chunk.decode("utf-8"))
            check_event(data, line_no)
        except (UnicodeDecodeError, json.JSONDecodeError, JournalError) as exc:
            if last:
                torn = chunk.decode("utf-8", errors="replace")
                warning = (
                    f"{str(path)!r}: line {line_no}: the last line is cut short (a write interrupted by a "
                    f"power loss?) and was ignored: {torn[:60]!r}; the {len(events)} events before it are kept"
                )
                log.warning(warning)
                break
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise JournalError(f"corrupt event ({detail}): {chunk[:80]!r}", line_no, path) from None
        if data.get("seq") != len(events) + 1:
            raise JournalError(f"seq {data.get('seq')!r} out of order; expected {len(events) + 1}", line_no, path)
        try:
            events.append(decoder.decode(data, line_no))
        except JournalError as exc:
            raise exc.at(path) from None
        pos = next_pos
        good = next_pos if not last else len(raw)
    return JournalContents(tuple(events), torn, warning, good)


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
