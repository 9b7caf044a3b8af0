"""The emulated board's end of its serial line: a pseudo-terminal, with injected faults.

Owns :class:`PtyPort`: a raw, echo-free pseudo-terminal whose slave path a host opens
with pyserial as it would the real board; a replug reopens it under a new path; frames
written to the host may be corrupted, dropped, duplicated or delayed on purpose
(:meth:`PtyPort.inject`); a host that reads nothing loses bytes after a while, as a
USB-serial bridge does, and the board never blocks.

Stand-in code, for :mod:`firmware_bridge.emulator` only. Stdlib only (POSIX).
"""

from __future__ import annotations

import os
import random
import select
import termios
import time
import tty

__all__ = ["PtyPort", "WRITE_STALL_S"]

WRITE_STALL_S = 1.0  # a frame for a host that reads nothing waits this long, then is lost


class PtyPort:
    """A pseudo-terminal for one emulated board: :meth:`open`, :meth:`reopen`, :meth:`read`, :meth:`send`."""

    def __init__(self, fault_seed: int = 1) -> None:
        self.write_stall_s = WRITE_STALL_S  # how long a frame waits for a host that does not read
        self.bytes_lost = 0  # bytes dropped because the host did not read them
        self._rng = random.Random(fault_seed)
        self._faults = (0.0, 0.0, 0.0, 0.0)
        self.fd: int | None = None  # the board's end (the master), non-blocking; None while closed
        self._slave: int | None = None
        self.path: str | None = None  # what a host opens

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
        return self.path

    def close(self) -> None:
        for fd in (self.fd, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self._slave = None

    def reopen(self) -> str:
        """Unplug and plug in again: a new pseudo-terminal first (so the path differs), then close the old one."""
        old = (self.fd, self._slave)
        path = self.open()
        for fd in old:
            if fd is not None:
                os.close(fd)
        return path

    def read(self) -> bytes:
        """What the host sent (up to 4096 bytes); empty if nothing or the line is gone."""
        if self.fd is None:
            return b""
        try:
            return os.read(self.fd, 4096)
        except OSError:
            return b""

    def inject(
        self, corrupt_rate: float = 0.0, drop_rate: float = 0.0, duplicate_rate: float = 0.0, delay_s: float = 0.0
    ) -> None:
        """Faults on what :meth:`send` writes: per byte corrupted or dropped, per frame duplicated, a delay before each.

        Raises ValueError for a rate outside 0..1 or a negative delay.
        """
        for name, value in (
            ("corrupt_rate", corrupt_rate),
            ("drop_rate", drop_rate),
            ("duplicate_rate", duplicate_rate),
        ):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in 0..1, not {value!r}")
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, not {delay_s!r}")
        self._faults = (corrupt_rate, drop_rate, duplicate_rate, delay_s)

    def send(self, frame: bytes) -> None:
        """Write one frame to the host, through the injected faults."""
        corrupt, drop, duplicate, delay = self._faults
        if delay:
            time.sleep(delay)
        rng = self._rng
        out = bytearray()
        for byte in frame:
            if drop and rng.random() < drop:
                continue
            if corrupt and rng.random() < corrupt:
                byte ^= rng.randrange(1, 256)
            out.append(byte)
        if duplicate and rng.random() < duplicate:
            out += bytes(out)  # a frame sent twice
        self._write(bytes(out))

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
