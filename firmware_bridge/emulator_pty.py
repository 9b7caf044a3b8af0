"""The emulated board's end of its serial line: a pseudo-terminal, with injected faults.

Owns :class:`PtyPort`, a raw, echo-free pseudo-terminal a host opens as it
would the real board, and the fault model: :class:`FaultProfile` (per frame: loss,
corruption, bursts, duplicates, stalls, unplugs; the older per-byte knobs) and
:class:`Fault`, one logged fault. A host that reads nothing loses bytes after a while, as
a USB-serial bridge does; the board never blocks. The presets (:data:`FAULT_PRESETS`):

* ``realistic``: a sound USB CDC cable, its rare faults made frequent enough to see;
* ``harsh``: a failing cable beside a motor.

For :mod:`firmware_bridge.emulator` only. Stdlib only (POSIX).
"""

from __future__ import annotations

import collections
import enum
import os
import random
import select
import termios
import time
import tty
from dataclasses import dataclass, fields

__all__ = ["FAULT_PRESETS", "Fault", "FaultKind", "FaultProfile", "PtyPort", "WRITE_STALL_S"]

WRITE_STALL_S = 1.0  # a frame for a host that reads nothing waits this long, then is lost
FAULT_LOG_SIZE = 100_000  # the most recent faults kept in PtyPort.fault_log


class FaultKind(enum.Enum):
    """What a fault did to the line."""

    LOSS = "loss"  # a whole frame never arrived
    CORRUPT = "corrupt"  # one byte of a frame changed
    BURST = "burst"  # a run of bytes garbled, from inside one frame on into the next
    DUPLICATE = "duplicate"  # a frame arrived twice
    STALL = "stall"  # the line stopped for a while
    UNPLUG = "unplug"  # the cable was pulled (or the board replugged); the board reset


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault put on the line: when (``time.monotonic()``), what, and whether on the way to the host."""

    at: float
    kind: FaultKind
    to_host: bool = True


_RATES = ("frame_loss", "frame_corrupt", "burst", "duplicate", "stall", "unplug", "byte_corrupt", "byte_drop")
_SECONDS = ("stall_s", "unplug_s", "delay_s")


@dataclass(frozen=True, slots=True)
class FaultProfile:
    """Faults on the emulated line. Rates are probabilities per frame (per byte for ``byte_*``), each 0..1.

    Both ways: ``frame_loss``, ``frame_corrupt`` (one byte changed), ``burst`` (``burst_bytes``
    bytes garbled, running on into the next frames). To the host only: ``duplicate``,
    ``stall`` (nothing for ``stall_s`` first), ``unplug`` (after the frame, the cable is out
    for ``unplug_s``; the board resets and comes back on a new pseudo-terminal), ``byte_corrupt``,
    ``byte_drop``, and ``delay_s`` before every frame. ``parse`` takes a preset's name or
    ``name=value`` words, as ``str`` writes them. Raises ValueError for a value out of range.
    """

    frame_loss: float = 0.0
    frame_corrupt: float = 0.0
    burst: float = 0.0
    burst_bytes: int = 32
    duplicate: float = 0.0
    stall: float = 0.0
    stall_s: float = 0.03
    unplug: float = 0.0
    unplug_s: float = 0.5
    byte_corrupt: float = 0.0
    byte_drop: float = 0.0
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        for name in _RATES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"FaultProfile {name} must be a number in 0..1, not {value!r}")
        for name in _SECONDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 60.0:
                raise ValueError(f"FaultProfile {name} must be 0..60 seconds, not {value!r}")
        if type(self.burst_bytes) is not int or not 1 <= self.burst_bytes <= 4096:
            raise ValueError(f"FaultProfile burst_bytes must be an integer 1..4096, not {self.burst_bytes!r}")

    @property
    def inbound(self) -> bool:
        """True if frames the host sends are faulted too."""
        return bool(self.frame_loss or self.frame_corrupt or self.burst)

    @classmethod
    def parse(cls, text: str) -> FaultProfile:
        """A preset's name, or ``name=value`` words (the others at their defaults); raises ValueError."""
        text = text.strip()
        if text in FAULT_PRESETS:
            return FAULT_PRESETS[text]
        names = {f.name for f in fields(cls)}
        values: dict[str, float | int] = {}
        for word in text.split():
            name, eq, value = word.partition("=")
            if not eq or name not in names:
                raise ValueError(
                    f"fault {word!r} must be a preset ({', '.join(FAULT_PRESETS)}) or name=value, "
                    f"name one of {', '.join(sorted(names))}"
                )
            if name in values:
                raise ValueError(f"fault {name!r} is named twice in {text!r}")
            if not value.isascii():
                raise ValueError(f"fault {name}: {value!r} is not a number")
            try:
                values[name] = int(value) if name == "burst_bytes" else float(value)
            except ValueError:
                raise ValueError(f"fault {name}: {value!r} is not a number") from None
        return cls(**values)

    def __str__(self) -> str:
        default = FaultProfile()
        return " ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        )


FAULT_PRESETS: dict[str, FaultProfile] = {
    "realistic": FaultProfile(frame_loss=1e-3, frame_corrupt=1e-4, stall=1e-3, stall_s=0.03, unplug=1e-4, unplug_s=0.5),
    "harsh": FaultProfile(
        frame_loss=1e-2,
        frame_corrupt=1e-2,
        burst=5e-3,
        burst_bytes=64,
        duplicate=1e-2,
        stall=2e-3,
        stall_s=0.15,
        unplug=5e-4,
        unplug_s=1.0,
    ),
}


class _Direction:
    """Per-frame loss, corruption and bursts on one direction of the line; a burst runs on across frames."""

    def __init__(self, rng: random.Random, to_host: bool, log) -> None:
        self._rng = rng
        self._to_host = to_host
        self._log = log
        self.burst_left = 0

    def apply(self, frame: bytes, profile: FaultProfile) -> bytes:
        rng = self._rng
        if profile.frame_loss and rng.random() < profile.frame_loss:
            self._log(FaultKind.LOSS, self._to_host)
            return b""
        out = bytearray(frame)
        if profile.frame_corrupt and out and rng.random() < profile.frame_corrupt:
            out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
            self._log(FaultKind.CORRUPT, self._to_host)
        start = 0
        if not self.burst_left and profile.burst and out and rng.random() < profile.burst:
            self.burst_left, start = profile.burst_bytes, rng.randrange(len(out))
            self._log(FaultKind.BURST, self._to_host)
        while self.burst_left and start < len(out):
            out[start] = rng.randrange(256)
            start += 1
            self.burst_left -= 1
        return bytes(out)


class PtyPort:
    """A pseudo-terminal for one emulated board: :meth:`open`, :meth:`reopen`, :meth:`read`, :meth:`send`.

    Faults (:meth:`inject`) are counted in :attr:`fault_counts` and logged in :attr:`fault_log`.
    An unplug closes the line at once; :attr:`unplug_due` then says when the board should
    :meth:`plug_in` again (the emulator resets the board then).
    """

    def __init__(self, fault_seed: int = 1) -> None:
        self.write_stall_s = WRITE_STALL_S  # how long a frame waits for a host that does not read
        self.bytes_lost = 0  # bytes dropped because the host did not read them
        self._rng = random.Random(fault_seed)
        self.profile = FaultProfile()
        self.fault_log: collections.deque[Fault] = collections.deque(maxlen=FAULT_LOG_SIZE)
        self.fault_counts: collections.Counter[FaultKind] = collections.Counter()
        self.frames_sent = 0  # frames handed to send (before faults)
        self.unplug_due: float | None = None  # when an unplugged cable goes back in (time.monotonic())
        self._out = _Direction(self._rng, True, self._log)
        self._in = _Direction(self._rng, False, self._log)
        self._inbound = bytearray()  # host bytes up to the next delimiter, held to fault them frame by frame
        self.fd: int | None = None  # the board's end (the master), non-blocking; None while closed
        self._slave: int | None = None
        self.path: str | None = None  # what a host opens

    def _log(self, kind: FaultKind, to_host: bool = True) -> None:
        self.fault_log.append(Fault(time.monotonic(), kind, to_host))
        self.fault_counts[kind] += 1

    def open(self) -> str:
        """Open a new pseudo-terminal (raw, no echo) and return its slave path."""
        master, slave = os.openpty()
        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        os.set_blocking(master, False)  # a full line waits in send, for a while only
        self.fd, self._slave = master, slave
        self.path = os.ttyname(slave)
        self._inbound.clear()
        self._out.burst_left = self._in.burst_left = 0
        return self.path

    def close(self) -> None:
        for fd in (self.fd, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self._slave = None
        self.unplug_due = None

    def reopen(self) -> str:
        """Unplug and plug in again: a new pseudo-terminal first (so the path differs), then close the old one."""
        self._log(FaultKind.UNPLUG)
        return self._replace()

    def plug_in(self) -> str:
        """End an unplug (:attr:`unplug_due`): a new pseudo-terminal; its path may be the old one."""
        return self._replace()

    def _replace(self) -> str:
        old = (self.fd, self._slave)
        self.unplug_due = None  # plugged in again, if it was out
        path = self.open()
        for fd in old:
            if fd is not None:
                os.close(fd)
        return path

    def _unplug(self) -> None:
        """Pull the cable: the host's end hangs up now and the path is gone (None) until :meth:`plug_in`."""
        self.close()
        self.path = None
        self.unplug_due = time.monotonic() + self.profile.unplug_s
        self._log(FaultKind.UNPLUG)

    def read(self) -> bytes:
        """What the host sent (up to 4096 bytes), through the faults; empty if nothing or the line is gone."""
        if self.fd is None:
            return b""
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            return b""
        if not self.profile.inbound and not self._inbound:
            return data
        self._inbound += data
        end = self._inbound.rfind(0)
        if end < 0:
            return b""
        whole, self._inbound = bytes(self._inbound[: end + 1]), self._inbound[end + 1 :]
        out = bytearray()
        for frame in whole.split(b"\x00")[:-1]:
            out += self._in.apply(frame + b"\x00", self.profile)
        return bytes(out)

    def inject(
        self,
        corrupt_rate: float = 0.0,
        drop_rate: float = 0.0,
        duplicate_rate: float = 0.0,
        delay_s: float = 0.0,
        *,
        profile: FaultProfile | None = None,
    ) -> None:
        """Faults on the line: a :class:`FaultProfile`, or the older knobs (per byte sent corrupted or dropped,
        per frame duplicated, a delay before each). No arguments: no faults.

        Raises ValueError for a rate outside 0..1, a negative delay, or both a profile and knobs.
        """
        if profile is None:
            for name, value in (
                ("corrupt_rate", corrupt_rate),
                ("drop_rate", drop_rate),
                ("duplicate_rate", duplicate_rate),
            ):
                if not 0.0 <= value <= 1.0:
                    raise ValueError(f"{name} must be in 0..1, not {value!r}")
            if delay_s < 0:
                raise ValueError(f"delay_s must be >= 0, not {delay_s!r}")
            profile = FaultProfile(
                byte_corrupt=corrupt_rate, byte_drop=drop_rate, duplicate=duplicate_rate, delay_s=delay_s
            )
        elif corrupt_rate or drop_rate or duplicate_rate or delay_s:
            raise ValueError(f"inject takes a profile or rates, not both: profile={profile!r}")
        elif not isinstance(profile, FaultProfile):
            raise ValueError(f"inject profile must be a FaultProfile, not {profile!r}")
        self.profile = profile

    def send(self, frame: bytes) -> None:
        """Write one frame to the host, through the injected faults."""
        p, rng = self.profile, self._rng
        self.frames_sent += 1
        if p.delay_s:
            time.sleep(p.delay_s)
        if p.stall and rng.random() < p.stall:
            self._log(FaultKind.STALL)
            time.sleep(p.stall_s)
        out = bytearray()
        for byte in frame:
            if p.byte_drop and rng.random() < p.byte_drop:
                continue
            if p.byte_corrupt and rng.random() < p.byte_corrupt:
                byte ^= rng.randrange(1, 256)
            out.append(byte)
        if out != frame:  # the per-byte faults hit this frame
            self._log(FaultKind.CORRUPT)
        out = bytearray(self._out.apply(bytes(out), p))
        if p.duplicate and out and rng.random() < p.duplicate:
            out += bytes(out)  # a frame sent twice
            self._log(FaultKind.DUPLICATE)
        self._write(bytes(out))
        if p.unplug and self.fd is not None and rng.random() < p.unplug:
            self._unplug()

    def _write(self, data: bytes) -> None:
        """Write, waiting at most ``write_stall_s`` for room; what does not fit is lost (:attr:`bytes_lost`)."""
        view = memoryview(data)
        deadline = time.monotonic() + self.write_stall_s
        while view and self.fd is not None:
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.bytes_lost += len(view)
                    return
                select.select([], [self.fd], [], min(0.1, left))
                continue
            except OSError:
                return
            view = view[n:]
