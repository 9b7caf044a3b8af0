"""An emulated sensor/LED board on a pseudo-terminal, speaking ``hardware/PROTOCOL.md``.

Owns :class:`BoardEmulator`: a pty whose slave path a host opens with pyserial as it
would the real board, a thread that answers HELLO, LED_FRAME, CONFIG and CALIBRATE,
sends snapshots on every change and as heartbeats, LIFT/PLACE events, and injects
faults (corrupted, dropped and duplicated bytes, slow replies, unplug and replug
under a new path). The checkers are read through :mod:`firmware_bridge.sensing`,
noise and saturation included.

Imports :mod:`firmware_bridge.protocol` and :mod:`firmware_bridge.sensing` (and
``board_rules`` types); never ``vision`` or ``referee``. Nothing is opened until
:meth:`BoardEmulator.start`.
"""

from __future__ import annotations

import os
import queue
import random
import select
import termios
import threading
import time
import tty
from dataclasses import replace
from typing import Callable

from firmware_bridge.protocol import (
    POINTS,
    PROTOCOL_MAJOR,
    Ack,
    Area,
    BoardError,
    Calibrate,
    CalibrationKind,
    Config,
    ErrorCode,
    FrameReader,
    Hello,
    HelloReply,
    LedFrame,
    Button,
    Lift,
    Nack,
    NackReason,
    Place,
    ReportMode,
    SlotState,
    Snapshot,
    encode_frame,
)
from firmware_bridge.sensing import (
    BAR_SLOTS,
    SLOTS_PER_POINT,
    TRAY_SLOTS,
    SensorConfig,
    classify,
    slot_stacks,
    stack_field,
)

__all__ = ["BoardEmulator", "LED_COUNT"]

LED_COUNT = POINTS + 3  # points 1..24, bar, white's tray, black's tray


def _sign(side) -> int:
    """+1 for white, -1 for black, from 'white' / 'black', a Side, or +1 / -1."""
    value = getattr(side, "value", side)
    if value in ("white", 1):
        return 1
    if value in ("black", -1):
        return -1
    raise ValueError(f"side must be 'white' or 'black', not {side!r}")


class BoardEmulator:
    """A sensor/LED board on a pseudo-terminal; the host cannot tell it from hardware.

    Drive it with :meth:`set_position`, :meth:`lift`, :meth:`place` and :meth:`move`
    (points 1..24, ``"bar"`` or ``"off"``); read :attr:`led_frame`; inject faults with
    :meth:`inject` and :meth:`replug`. Every action runs on the emulator's thread and
    returns once its frames are written. ``on_replug(path)`` is called with each new path.
    """

    def __init__(
        self,
        *,
        serial: str = "EMU-0001",
        firmware: tuple[int, int, int] = (1, 0, 0),
        slots_per_point: int = SLOTS_PER_POINT,
        bar_slots: int = BAR_SLOTS,
        tray_slots: int = TRAY_SLOTS,
        heartbeat_s: float = 0.5,
        noise: int = 40,
        seed: int = 0,
        sensor_config: SensorConfig = SensorConfig(),
        on_replug: Callable[[str], None] | None = None,
    ) -> None:
        self.serial = serial
        self.firmware = firmware
        self.slots_per_point = slots_per_point
        self.bar_slots = bar_slots
        self.tray_slots = tray_slots
        self.heartbeat_s = heartbeat_s
        self.noise = noise
        self.sensor_config = sensor_config
        self.on_replug = on_replug
        self.report_mode = ReportMode.SNAPSHOTS_AND_EVENTS
        self.replugged = threading.Event()
        self._rng = random.Random(seed)
        self._fault_rng = random.Random(seed + 1)
        self._faults = (0.0, 0.0, 0.0, 0.0)
        self._points = [0] * POINTS
        self._pinned = [0] * POINTS
        self._bar = [0, 0]
        self._off = [0, 0]
        self._led_frame: LedFrame | None = None
        self._ready = False
        self._seq = 0
        self._master: int | None = None
        self._slave: int | None = None
        self._path: str | None = None
        self._reader = FrameReader()
        self._commands: queue.Queue = queue.Queue()
        self._wake_r, self._wake_w = -1, -1
        self._thread: threading.Thread | None = None
        self._running = False
        self._t0 = time.monotonic()
        self._last_snapshot = 0.0
        self._last_states: bytes | None = None
        self.frames_received = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def path(self) -> str:
        """The slave path a host opens (changes on :meth:`replug`); raises RuntimeError before start."""
        if self._path is None:
            raise RuntimeError("the emulator is not started")
        return self._path

    @property
    def led_frame(self) -> LedFrame | None:
        """The last LED frame applied, or None."""
        return self._led_frame

    def start(self) -> str:
        """Open the pseudo-terminal and start the board's thread; return the path."""
        if self._running:
            return self.path
        self._open_pty()
        self._wake_r, self._wake_w = os.pipe()
        self._running = True
        self._thread = threading.Thread(target=self._run, name="board-emulator", daemon=True)
        self._thread.start()
        return self.path

    def stop(self) -> None:
        """Stop the thread and close the pseudo-terminal."""
        if not self._running:
            return
        self._running = False
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        self._close_pty()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self) -> BoardEmulator:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ driving

    def set_position(self, position) -> None:
        """Put a whole ``board_rules.Position`` on the board (one snapshot, no events)."""

        def act() -> None:
            self._points = list(position.points)
            self._pinned = list(position.pinned)
            self._bar = list(position.bar)
            self._off = list(position.off)
            self._changed()

        self._call(act)

    def lift(self, point, side=None) -> int:
        """Lift the top checker off ``point`` (1..24, "bar" or "off"; those need ``side``); return its sign.

        Raises ValueError if there is no such checker.
        """
        return self._call(lambda: self._lift(point, side))

    def place(self, point, side) -> None:
        """Place a checker of ``side`` on ``point`` (1..24, "bar" or "off").

        On a lone checker of the other colour it pins it (plakoto); raises ValueError
        on two or more of the other colour (take them off first).
        """
        self._call(lambda: self._place(point, _sign(side)))

    def move(self, src, dst, side=None) -> None:
        """Lift the top checker from ``src`` and place it on ``dst``."""

        def act() -> None:
            self._place(dst, self._lift(src, side))

        self._call(act)

    def press_button(self, button: int = 0, hold_s: float = 0.0) -> None:
        """Press and release button ``button`` on the board (a BUTTON down, then up after ``hold_s``)."""
        self._call(lambda: self._send(Button(button, True, self._now_ms())))
        if hold_s:
            time.sleep(hold_s)
        self._call(lambda: self._send(Button(button, False, self._now_ms())))

    def inject(
        self, corrupt_rate: float = 0.0, drop_rate: float = 0.0, duplicate_rate: float = 0.0, delay_s: float = 0.0
    ) -> None:
        """Faults on the bytes the board sends: per byte corrupted or dropped, per frame duplicated, and a delay before each frame."""
        for name, value in (("corrupt_rate", corrupt_rate), ("drop_rate", drop_rate), ("duplicate_rate", duplicate_rate)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in 0..1, not {value!r}")
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, not {delay_s!r}")
        self._faults = (corrupt_rate, drop_rate, duplicate_rate, delay_s)

    def replug(self) -> str:
        """Unplug and plug in again: close the pty, open one under a new path, forget the handshake."""
        self.replugged.clear()
        path = self._call(self._replug)
        self.replugged.set()
        if self.on_replug is not None:
            self.on_replug(path)
        return path

    # ------------------------------------------------------------------ the thread

    def _call(self, fn, timeout: float = 5.0):
        if not self._running:
            raise RuntimeError("the emulator is not started")
        done = threading.Event()
        box: list = []
        self._commands.put((fn, done, box))
        os.write(self._wake_w, b"x")
        if not done.wait(timeout):
            raise TimeoutError("the emulator did not answer within %r s" % timeout)
        if box and isinstance(box[0], BaseException):
            raise box[0]
        return box[0] if box else None

    def _run(self) -> None:
        while self._running:
            wait = self.heartbeat_s - (time.monotonic() - self._last_snapshot) if self._ready else 1.0
            fds = [self._wake_r] + ([self._master] if self._master is not None else [])
            try:
                readable, _, _ = select.select(fds, [], [], max(0.0, min(wait, 1.0)))
            except OSError:
                readable = []
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
                self._run_commands()
            if self._master is not None and self._master in readable:
                try:
                    data = os.read(self._master, 4096)
                except OSError:
                    data = b""
                for seq, msg in self._reader.feed(data):
                    self.frames_received += 1
                    self._handle(seq, msg)
            if self._ready and time.monotonic() - self._last_snapshot >= self.heartbeat_s:
                self._send_snapshot()

    def _run_commands(self) -> None:
        while True:
            try:
                fn, done, box = self._commands.get_nowait()
            except queue.Empty:
                return
            try:
                box.append(fn())
            except BaseException as exc:  # handed back to the caller
                box.append(exc)
            done.set()

    # ------------------------------------------------------------------ the pty

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self._master, self._slave = master, slave
        self._path = os.ttyname(slave)

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None

    def _replug(self) -> str:
        old = (self._master, self._slave)
        self._open_pty()  # before closing the old one, so the new path differs
        for fd in old:
            if fd is not None:
                os.close(fd)
        self._reader = FrameReader()
        self._ready = False
        self._last_states = None
        self._led_frame = None
        return self._path

    # ------------------------------------------------------------------ the protocol

    def _now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000) & 0xFFFFFFFF

    def _send(self, msg) -> None:
        frame = encode_frame(msg, self._seq)
        self._seq = (self._seq + 1) & 0xFFFF
        corrupt, drop, duplicate, delay = self._faults
        if delay:
            time.sleep(delay)
        rng = self._fault_rng
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
        view = memoryview(data)
        while view and self._master is not None:
            try:
                n = os.write(self._master, view)
            except BlockingIOError:
                select.select([], [self._master], [], 0.1)
                continue
            except OSError:
                return
            view = view[n:]

    def _readings(self):
        stacks = slot_stacks(
            self._points,
            self._pinned,
            tuple(self._bar),
            tuple(self._off),
            self.slots_per_point,
            bar_slots=self.bar_slots,
            tray_slots=self.tray_slots,
        )
        noise = self.noise
        out = []
        for stack in stacks:
            value = stack_field(stack)
            if noise:
                value += self._rng.randint(-noise, noise)
            out.append(classify(value, self.sensor_config))
        return tuple(out)

    def _send_snapshot(self) -> None:
        readings = self._readings()
        self._last_states = bytes(r.state for r in readings)
        self._last_snapshot = time.monotonic()
        self._send(Snapshot(self._now_ms(), self.slots_per_point, self.bar_slots, self.tray_slots, readings))

    def _changed(self, events=()) -> None:
        if not self._ready:
            return
        if self.report_mode is ReportMode.SNAPSHOTS_AND_EVENTS:
            for event in events:
                self._send(event)
        self._send_snapshot()

    def _handle(self, seq: int, msg) -> None:
        if isinstance(msg, Hello):
            if msg.major != PROTOCOL_MAJOR:
                self._send(Nack(seq, Hello.TYPE, NackReason.VERSION_MISMATCH))
            self._send(
                HelloReply(
                    reply_to=seq,
                    serial=self.serial,
                    firmware=self.firmware,
                    slots_per_point=self.slots_per_point,
                    bar_slots=self.bar_slots,
                    tray_slots=self.tray_slots,
                    led_count=LED_COUNT,
                )
            )
            if msg.major == PROTOCOL_MAJOR:
                self._ready = True
                self._send_snapshot()
            return
        if not isinstance(msg, (LedFrame, Config, Calibrate)):
            self._send(Nack(seq, msg.TYPE, NackReason.UNKNOWN_TYPE))
            return
        if not self._ready:
            self._send(Nack(seq, msg.TYPE, NackReason.NOT_READY))
            return
        if isinstance(msg, LedFrame):
            if len(msg.leds) != LED_COUNT:
                self._send(Nack(seq, msg.TYPE, NackReason.BAD_VALUE))
                return
            self._led_frame = msg
            self._send(Ack(seq, msg.TYPE))
        elif isinstance(msg, Config):
            self.report_mode = msg.report_mode
            self.heartbeat_s = msg.heartbeat_ms / 1000
            try:
                self.sensor_config = replace(
                    self.sensor_config,
                    empty_threshold=msg.empty_threshold,
                    hysteresis=msg.hysteresis,
                    polarity_margin=msg.polarity_margin,
                )
            except ValueError:
                self._send(Nack(seq, msg.TYPE, NackReason.BAD_VALUE))
                return
            self._send(Ack(seq, msg.TYPE))
            self._send_snapshot()
        else:
            empty = not any(self._points) and not any(self._pinned) and not any(self._bar) and not any(self._off)
            if msg.kind is CalibrationKind.ZERO_EMPTY and not empty:
                self._send(BoardError(ErrorCode.CALIBRATION_FAILED, "checkers on the board"))
                self._send(Nack(seq, msg.TYPE, NackReason.FAILED))
                return
            self._send(Ack(seq, msg.TYPE))

    # ------------------------------------------------------------------ checkers

    def _where(self, point):
        if point == "bar":
            return Area.BAR, 0
        if point == "off":
            return None, 0
        if isinstance(point, int) and not isinstance(point, bool) and 1 <= point <= POINTS:
            return Area.POINT, point
        raise ValueError(f"point must be 1..24, 'bar' or 'off', not {point!r}")

    def _slot_of(self, area, number: int, sign: int, nth: int) -> tuple[Area, int, int]:
        """(area, number, slot) of the ``nth`` checker (0-based, fill order) of ``sign`` there."""
        if area is Area.POINT:
            k = self.slots_per_point
            if self._pinned[number - 1]:
                return area, number, 0 if nth == 0 else 1 + (nth - 1) % max(1, k - 1)
            return area, number, nth % k
        if area is Area.BAR:
            half = (self.bar_slots + 1) // 2
            if sign > 0:
                return area, 0, nth % max(1, half)
            return area, 0, half + nth % max(1, self.bar_slots - half)
        tray = Area.OFF_WHITE if sign > 0 else Area.OFF_BLACK
        return tray, 0, nth % max(1, self.tray_slots)

    def _lift(self, point, side) -> int:
        area, number = self._where(point)
        if area is Area.POINT:
            i = number - 1
            n = self._points[i]
            if n:
                sign = 1 if n > 0 else -1
                self._points[i] -= sign
                _, _, slot = self._slot_of(area, number, sign, abs(n) - 1)
                if self._pinned[i] and n * sign == 1:
                    slot = 0
                state = SlotState.WHITE if sign > 0 else SlotState.BLACK
                if self._pinned[i] and abs(n) == 1:
                    # the pinning checker leaves; the pinned one stays alone
                    self._points[i] = self._pinned[i]
                    self._pinned[i] = 0
            else:
                raise ValueError(f"no checker on point {number!r} to lift")
        else:
            sign = _sign(side)
            store = self._bar if area is Area.BAR else self._off
            j = 0 if sign > 0 else 1
            if not store[j]:
                raise ValueError(f"no {'white' if sign > 0 else 'black'} checker on {point!r} to lift")
            store[j] -= 1
            area, number, slot = self._slot_of(area or Area.OFF_WHITE, 0, sign, store[j])
            state = SlotState.WHITE if sign > 0 else SlotState.BLACK
        self._changed([Lift(area, number, slot, state, self._now_ms())])
        return sign

    def _place(self, point, sign: int) -> None:
        area, number = self._where(point)
        state = SlotState.WHITE if sign > 0 else SlotState.BLACK
        if area is Area.POINT:
            i = number - 1
            n = self._points[i]
            if n * sign < 0:
                if abs(n) > 1 or self._pinned[i]:
                    raise ValueError(f"point {number!r} holds {n!r}: no room for a checker of the other colour")
                self._pinned[i] = n
                self._points[i] = sign
                slot = 0
            else:
                _, _, slot = self._slot_of(area, number, sign, abs(n))
                self._points[i] += sign
        else:
            store = self._bar if area is Area.BAR else self._off
            j = 0 if sign > 0 else 1
            area, number, slot = self._slot_of(area or Area.OFF_WHITE, 0, sign, store[j])
            store[j] += 1
        self._changed([Place(area, number, slot, state, self._now_ms())])
