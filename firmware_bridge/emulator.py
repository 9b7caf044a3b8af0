"""An emulated sensor/LED board on a pseudo-terminal, speaking ``hardware/PROTOCOL.md``.

Over 500 lines on purpose: one thread owns the board's whole state, as the firmware's main loop does.
Owns :class:`BoardEmulator`, which answers a host as ``hardware/firmware/board.c`` does
(handshake, LED_FRAME, CONFIG, CALIBRATE, every NACK, snapshots and heartbeats,
LIFT/PUT as SENSING.md derives them, ERROR ``CORRUPT_FRAMES``). Its checkers are
:mod:`~firmware_bridge.emulator_checkers`, its line :mod:`~firmware_bridge.emulator_pty`.
What it leaves out: ``docs/firmware-notes.md``. A stand-in that production code never
imports; nothing is opened until :meth:`BoardEmulator.start`.
"""

from __future__ import annotations

import os
import queue
import random
import select
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from firmware_bridge.emulator_checkers import EmulatedCheckers, side_sign
from firmware_bridge.emulator_pty import Fault, FaultKind, FaultProfile, PtyPort
from firmware_bridge.leds import LED_COUNT
from firmware_bridge.protocol import (
    POINTS,
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    Ack,
    Area,
    BoardError,
    Button,
    Calibrate,
    CalibrationKind,
    Config,
    ErrorCode,
    Hello,
    HelloReply,
    LedFrame,
    Lift,
    Nack,
    NackReason,
    ProtocolError,
    Put,
    RawFrame,
    RawFrameReader,
    ReportMode,
    SlotReading,
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
    stack_field,
)

__all__ = ["BoardEmulator", "CAL_MAX_OFFSET"]

CAL_MAX_OFFSET = 900  # 0.01 mT: ZERO_EMPTY fails if a sensor reads more than this (a checker is on)
CALIBRATE_S = 0.16  # ZERO_EMPTY averages 8 scans of about 19 ms (SENSING.md)
ERROR_REPORT_S = 1.0  # ERROR CORRUPT_FRAMES at most once a second
_COMMANDS = {cls.TYPE: cls for cls in (Hello, LedFrame, Config, Calibrate)}  # what a board accepts


def _wanted_length(msg_type: int, payload: bytes) -> int:
    """The payload length a command of this type must have (at least, from a newer minor), as the firmware reckons it."""
    if msg_type == LedFrame.TYPE:
        return 1 + 4 * payload[0] if payload else 1
    return {Hello.TYPE: 2, Config.TYPE: 10, Calibrate.TYPE: 1}[msg_type]


class BoardEmulator:
    """A sensor/LED board on a pseudo-terminal; the host cannot tell it from hardware.

    Drive it with :meth:`set_position`, :meth:`lift`, :meth:`place` and :meth:`move`
    (points 1..24, ``"bar"`` or ``"off"``); read :attr:`led_frame`; inject faults with
    :meth:`inject` and :meth:`replug`. Every action runs on the emulator's thread and
    returns once its frames are written. ``on_replug(path)`` is called with each new path
    (after a profile's unplug, on a thread of its own).
    ``heartbeat_s``, ``sensor_config`` and report mode 1 are the board's defaults, which
    a CONFIG changes until the next replug; ``calibrate_s`` is how long ZERO_EMPTY keeps
    the board busy.
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
        sensor_config: SensorConfig = SensorConfig(),  # noqa: B008 (frozen: shared safely)
        calibrate_s: float = CALIBRATE_S,
        on_replug: Callable[[str], None] | None = None,
    ) -> None:
        self.serial = serial
        self.firmware = firmware
        self.slots_per_point = slots_per_point
        self.bar_slots = bar_slots
        self.tray_slots = tray_slots
        self.noise = noise
        self.calibrate_s = calibrate_s
        self.on_replug = on_replug
        self._defaults = (heartbeat_s, sensor_config)
        self.heartbeat_s = heartbeat_s
        self.sensor_config = sensor_config
        self.report_mode = ReportMode.SNAPSHOTS_AND_EVENTS
        self.debounce_scans = 3
        self.replugged = threading.Event()
        self._rng = random.Random(seed)
        self._port = PtyPort(fault_seed=seed + 1)
        self._checkers = EmulatedCheckers(slots_per_point, bar_slots, tray_slots)
        slots = POINTS * slots_per_point + bar_slots + 2 * tray_slots
        self._offsets = [0] * slots  # recorded by CALIBRATE ZERO_EMPTY; kept across a reset, as in EEPROM
        self.calibrated = False
        self._calibrating: tuple[int, float] | None = None  # (seq of the CALIBRATE, when it is done)
        self._classes: list[tuple[int, int]] | None = None  # each slot's (state, stack height) as last read
        self._current: tuple[SlotReading, ...] = ()
        self._led_frame: LedFrame | None = None
        self._ready = False
        self._seq = 0
        self._reader = RawFrameReader()
        self._commands: queue.Queue = queue.Queue()
        self._wake_r, self._wake_w = -1, -1
        self._thread: threading.Thread | None = None
        self._running = False
        self._t0 = time.monotonic()
        self._last_snapshot = 0.0
        self.frames_received = 0
        self.corrupt_frames = 0
        self._corrupt_reported = 0
        self._corrupt_report_at = float("-inf")

    # ------------------------------------------------------------------ lifecycle

    @property
    def path(self) -> str:
        """The slave path a host opens (changes on :meth:`replug`); RuntimeError before start and while unplugged."""
        if self._port.path is None:
            raise RuntimeError("the emulator is not started, or its cable is out")
        return self._port.path

    @property
    def write_stall_s(self) -> float:
        """How long a frame waits for a host that does not read, then is lost."""
        return self._port.write_stall_s

    @write_stall_s.setter
    def write_stall_s(self, seconds: float) -> None:
        self._port.write_stall_s = seconds

    @property
    def bytes_lost(self) -> int:
        """Bytes dropped because the host did not read them."""
        return self._port.bytes_lost

    @property
    def led_frame(self) -> LedFrame | None:
        """The last LED frame applied, or None."""
        return self._led_frame

    @property
    def calibrating(self) -> bool:
        """True while a CALIBRATE ZERO_EMPTY is under way (commands are NACKed ``BUSY``)."""
        return self._calibrating is not None

    def start(self) -> str:
        """Open the pseudo-terminal and start the board's thread; return the path."""
        if self._running:
            return self.path
        self._port.open()
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
        self._port.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self) -> BoardEmulator:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ driving

    def set_position(self, position, layouts=None) -> None:
        """Put a whole ``board_rules.Position`` on the board at once: one snapshot, no events.

        A convenience no real board offers (its checkers arrive one at a time): the
        snapshot is sent even if nothing changed. ``layouts`` lays some places' checkers
        in heaps, as :meth:`lay` does (point number, or ``("bar"|"off", side)`` with side
        0 white, 1 black, to heights per slot).
        """

        def act() -> None:
            self._checkers.set_position(position, layouts)
            self._changed(events=False, force=True)

        self._call(act)

    def lay(self, point, heights, side=None) -> None:
        """Lay the checkers on ``point`` (1..24, or "bar" / "off" with ``side``) as ``heights`` per slot.

        A player who piles checkers instead of laying them in the fill order: e.g.
        ``lay(6, [6, 0, 0, 0, 0])`` for six checkers in one pile. The slots read what
        such a pile reads (saturation included). The layout holds until a checker is
        lifted from or placed on that place. Raises ValueError if ``heights`` does not
        fit the place's slots or add up to its checkers.
        """

        def act() -> None:
            self._checkers.lay(point, heights, side)
            self._changed()

        self._call(act)

    def lift(self, point, side=None) -> int:
        """Lift the top checker off ``point`` (1..24, "bar" or "off"); return its sign.

        On the bar or a tray, ``side`` names whose checker; it may be left out where only
        one side has checkers there. Raises ValueError if there is no such checker, or
        both sides have checkers there and ``side`` is not given.
        """
        return self._call(lambda: self._lift(point, side))

    def place(self, point, side) -> None:
        """Place a checker of ``side`` on ``point`` (1..24, "bar" or "off").

        On a lone checker of the other colour it pins it (plakoto: the board reports a
        PUT of state UNCERTAIN). On two or more of the other colour (a blocked point)
        it lies on top of their stack, as a player may put it there, and is the first
        lifted from that point; the slot reads what such a stack reads.
        """
        self._call(lambda: self._place(point, side_sign(side)))

    def move(self, src, dst, side=None) -> None:
        """Lift the top checker from ``src`` and place it on ``dst`` (``side`` as for :meth:`lift`).

        Raises ValueError, and moves nothing, if the checker cannot be lifted or put there.
        """

        def act() -> None:
            sign = self._checkers.top(src, side)
            self._checkers.check_place(dst, sign)
            self._place(dst, self._lift(src, side))

        self._call(act)

    def press_button(self, button: int = 0, hold_s: float = 0.0) -> None:
        """Press and release button ``button`` on the board (a BUTTON down, then up after ``hold_s``).

        Nothing is sent before the host's HELLO, as for every board frame.
        """
        self._call(lambda: self._send_if_ready(Button(button, True, self._now_ms())))
        if hold_s:
            time.sleep(hold_s)
        self._call(lambda: self._send_if_ready(Button(button, False, self._now_ms())))

    def inject(
        self,
        corrupt_rate: float = 0.0,
        drop_rate: float = 0.0,
        duplicate_rate: float = 0.0,
        delay_s: float = 0.0,
        *,
        profile: FaultProfile | None = None,
    ) -> None:
        """Faults on the line: a :class:`~firmware_bridge.emulator_pty.FaultProfile` (e.g. ``FAULT_PRESETS["harsh"]``),
        or per byte sent corrupted or dropped, per frame duplicated, and a delay before each frame.

        No arguments: no faults. Raises ValueError as :meth:`PtyPort.inject` does.
        """
        self._port.inject(corrupt_rate, drop_rate, duplicate_rate, delay_s, profile=profile)

    @property
    def faults(self) -> FaultProfile:
        """The faults now on the line."""
        return self._port.profile

    def fault_log(self) -> tuple[Fault, ...]:
        """The faults put on the line so far (the latest 100,000), oldest first."""
        return self._call(lambda: tuple(self._port.fault_log)) if self._running else tuple(self._port.fault_log)

    def fault_counts(self) -> dict[FaultKind, int]:
        """How many faults of each kind were put on the line so far."""
        port = self._port
        return self._call(lambda: dict(port.fault_counts)) if self._running else dict(port.fault_counts)

    @property
    def frames_sent(self) -> int:
        """Frames the board has written to its line (before faults)."""
        return self._port.frames_sent

    def replug(self) -> str:
        """Unplug and plug in again: close the pty, open one under a new path, reset the board.

        As a real board's reset: the handshake, configuration, LED frame, sequence
        counter, board clock and corrupt-frame count start over; the calibration is kept.
        """
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

    def _next_wait(self) -> float:
        now = time.monotonic()
        waits = [1.0]
        if self._ready:
            waits.append(self.heartbeat_s - (now - self._last_snapshot))
            if self.corrupt_frames != self._corrupt_reported:
                waits.append(self._corrupt_report_at + ERROR_REPORT_S - now)
        if self._calibrating is not None:
            waits.append(self._calibrating[1] - now)
        if self._port.unplug_due is not None:
            waits.append(self._port.unplug_due - now)
        return max(0.0, min(waits))

    def _run(self) -> None:
        while self._running:
            fds = [self._wake_r] + ([self._port.fd] if self._port.fd is not None else [])
            try:
                readable, _, _ = select.select(fds, [], [], self._next_wait())
            except OSError:
                readable = []
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
                self._run_commands()
            if self._port.fd is not None and self._port.fd in readable:
                data = self._port.read()
                errors = self._reader.errors
                frames = self._reader.feed(data)
                self.corrupt_frames += self._reader.errors - errors
                for raw in frames:
                    self.frames_received += 1
                    self._handle(raw)
            self._poll()
            self._unplugged()

    def _poll(self) -> None:
        """What the firmware's main loop does besides receiving: calibration, heartbeat, error reports."""
        now = time.monotonic()
        if self._calibrating is not None and now >= self._calibrating[1]:
            self._finish_calibration()
        if not self._ready:
            return
        if now - self._last_snapshot >= self.heartbeat_s:
            self._changed(force=True)
        if self.corrupt_frames != self._corrupt_reported and now - self._corrupt_report_at >= ERROR_REPORT_S:
            self._send(BoardError(ErrorCode.CORRUPT_FRAMES, f"{self.corrupt_frames} corrupt frames received"))
            self._corrupt_reported = self.corrupt_frames
            self._corrupt_report_at = now

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

    # ------------------------------------------------------------------ a replug

    def _replug(self) -> str:
        path = self._port.reopen()
        self._reset()
        return path

    def _unplugged(self) -> None:
        """A profile's unplug: the board is off while the cable is out, then boots on a new pseudo-terminal."""
        due = self._port.unplug_due
        if due is None:
            return
        if self._ready:  # the cable is out: the board is off
            self._reset()
            self.replugged.clear()
        if time.monotonic() >= due:
            path = self._port.plug_in()
            self._reset()
            self.replugged.set()
            if self.on_replug is not None:
                threading.Thread(target=self.on_replug, args=(path,), daemon=True).start()

    def _reset(self) -> None:
        """The board resets: everything but the calibration (EEPROM) starts over."""
        self._reader = RawFrameReader()
        self._ready = False
        self._classes = None
        self._led_frame = None
        self._seq = 0
        self._t0 = time.monotonic()  # the board clock counts from its boot
        self._calibrating = None
        self.heartbeat_s, self.sensor_config = self._defaults
        self.report_mode = ReportMode.SNAPSHOTS_AND_EVENTS
        self.debounce_scans = 3
        self.corrupt_frames = self._corrupt_reported = 0
        self._corrupt_report_at = float("-inf")

    # ------------------------------------------------------------------ sending

    def _now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000) & 0xFFFFFFFF

    def _send(self, msg) -> None:
        frame = encode_frame(msg, self._seq)
        self._seq = (self._seq + 1) & 0xFFFF
        self._port.send(frame)

    def _send_if_ready(self, msg) -> None:
        if self._ready:
            self._send(msg)

    # ------------------------------------------------------------------ sensing

    def _class_of(self, reading: SlotReading) -> tuple[int, int]:
        """What the firmware debounces: the state and, for a colour, the stack height."""
        if reading.state in (SlotState.WHITE, SlotState.BLACK):
            return reading.state, self.sensor_config.height(reading.strength)
        return reading.state, 0

    def _where(self, slot: int) -> tuple[Area, int, int]:
        """(area, number, slot on it) of slot index ``slot`` in snapshot order."""
        k, points = self.slots_per_point, POINTS * self.slots_per_point
        if slot < points:
            return Area.POINT, slot // k + 1, slot % k
        if slot < points + self.bar_slots:
            return Area.BAR, 0, slot - points
        t = slot - points - self.bar_slots
        return (Area.OFF_WHITE if t < self.tray_slots else Area.OFF_BLACK), 0, t % max(1, self.tray_slots)

    def _slot_events(self, slot: int, old: tuple[int, int], new: tuple[int, int], now: int) -> list:
        """LIFT / PUT for one slot's change of class, as the firmware's ``change_events`` (SENSING.md "Events")."""
        where = self._where(slot)
        (a, old_height), (c, new_height) = old, new
        if a == c:  # same colour, another stack height
            return [(Put if new_height > old_height else Lift)(*where, c, now)]
        if a == SlotState.EMPTY:
            return [Put(*where, c, now)]
        if c == SlotState.EMPTY:
            return [Lift(*where, a, now)]
        if c == SlotState.UNCERTAIN:  # a checker of either colour landed on a lone one: a pin
            return [Put(*where, SlotState.UNCERTAIN, now)]
        if a == SlotState.UNCERTAIN:  # the pinning checker left
            return [Lift(*where, SlotState.UNCERTAIN, now)]
        return [Lift(*where, a, now), Put(*where, c, now)]  # white became black at once

    def _scan(self, now: int) -> tuple[list, bool]:
        """Read every slot; return the LIFT / PUT events of the class changes and whether any changed."""
        previous = self._classes
        readings = []
        for i, stack in enumerate(self._checkers.stacks()):
            value = stack_field(stack) - self._offsets[i]
            if self.noise:
                value += self._rng.randint(-self.noise, self.noise)
            before = previous[i][0] if previous is not None else SlotState.EMPTY
            readings.append(classify(value, self.sensor_config, previous=before))
        classes = [self._class_of(r) for r in readings]
        self._current = tuple(readings)
        self._classes = classes
        if previous is None:  # the first scan after a reset sets the state, as the firmware's
            return [], False
        events = []
        for i, (old, new) in enumerate(zip(previous, classes)):
            if old != new:
                events.extend(self._slot_events(i, old, new, now))
        return events, bool(events)

    def _send_snapshot(self, now: int) -> None:
        self._last_snapshot = time.monotonic()
        self._send(Snapshot(now, self.slots_per_point, self.bar_slots, self.tray_slots, self._current))

    def _changed(self, events: bool = True, force: bool = False) -> None:
        """Scan; when ready, send the events (report mode 1) and a snapshot if a class changed (or ``force``)."""
        now = self._now_ms()
        found, changed = self._scan(now)
        if not self._ready:
            return
        if events and self.report_mode is ReportMode.SNAPSHOTS_AND_EVENTS:
            for event in found:
                self._send(event)
        if changed or force:
            self._send_snapshot(now)

    # ------------------------------------------------------------------ the protocol

    def _hello_reply(self, seq: int) -> None:
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

    def _refuse_hello(self, seq: int) -> None:
        """A HELLO of another major version (PROTOCOL.md rule 2): NACK, our frozen HELLO_REPLY, then not ready."""
        self._send(Nack(seq, Hello.TYPE, NackReason.VERSION_MISMATCH))
        self._hello_reply(seq)
        self._ready = False

    def _handle(self, raw: RawFrame) -> None:
        """Answer one received frame in the firmware's order of checks (``board.c`` ``handle``)."""
        seq, msg_type, payload = raw.seq, raw.msg_type, raw.payload
        if raw.major != PROTOCOL_MAJOR:  # only HELLO's layout is frozen across majors
            if msg_type == Hello.TYPE:
                self._refuse_hello(seq)
            else:
                self.corrupt_frames += 1
            return
        cls = _COMMANDS.get(msg_type)
        if cls is None:
            self._send(Nack(seq, msg_type, NackReason.UNKNOWN_TYPE))
            return
        want = _wanted_length(msg_type, payload)
        length_ok = len(payload) >= want if raw.minor > PROTOCOL_MINOR else len(payload) == want
        if cls is Hello:
            if not length_ok:
                self._send(Nack(seq, msg_type, NackReason.BAD_LENGTH))
            elif payload[0] != PROTOCOL_MAJOR:
                self._refuse_hello(seq)
            else:
                self._hello_reply(seq)
                self._ready = True
                self._changed(events=False, force=True)  # the snapshot at once
            return
        for refused, reason in (
            (not self._ready, NackReason.NOT_READY),
            (not length_ok, NackReason.BAD_LENGTH),
            (self._calibrating is not None, NackReason.BUSY),
        ):
            if refused:
                self._send(Nack(seq, msg_type, reason))
                return
        try:
            msg = cls.decode(payload[:want], strict=True)
        except ProtocolError:
            self._send(Nack(seq, msg_type, NackReason.BAD_VALUE))
            return
        if isinstance(msg, LedFrame):
            self._led_frame_command(seq, msg)
        elif isinstance(msg, Config):
            self._config_command(seq, msg)
        else:
            self._calibrate_command(seq, msg)

    def _led_frame_command(self, seq: int, msg: LedFrame) -> None:
        if len(msg.leds) != LED_COUNT:
            self._send(Nack(seq, msg.TYPE, NackReason.BAD_VALUE))
            return
        self._led_frame = msg  # shown, then acknowledged; a repeat is shown and ACKed again
        self._send(Ack(seq, msg.TYPE))

    def _config_command(self, seq: int, msg: Config) -> None:
        try:
            if msg.out_of_range():
                raise ValueError(msg.out_of_range())
            sensor_config = replace(
                self.sensor_config,
                empty_threshold=msg.empty_threshold,
                hysteresis=msg.hysteresis,
                polarity_margin=msg.polarity_margin,
            )
        except ValueError:  # nothing changes
            self._send(Nack(seq, msg.TYPE, NackReason.BAD_VALUE))
            return
        self.sensor_config = sensor_config
        self.debounce_scans = msg.debounce_scans
        self.report_mode = msg.report_mode
        self.heartbeat_s = msg.heartbeat_ms / 1000
        self._send(Ack(seq, msg.TYPE))
        self._changed(force=True)  # then a snapshot

    def _calibrate_command(self, seq: int, msg: Calibrate) -> None:
        if msg.kind is CalibrationKind.ZERO_EMPTY:
            self._calibrating = (seq, time.monotonic() + self.calibrate_s)  # answered when done
            return
        self._offsets = [0] * len(self._offsets)  # FACTORY_DEFAULTS: forget the stored calibration
        self.calibrated = False
        self._send(Ack(seq, msg.TYPE))
        self._changed()

    def _finish_calibration(self) -> None:
        seq, _ = self._calibrating
        self._calibrating = None
        fields = [stack_field(stack) for stack in self._checkers.stacks()]  # the average of 8 scans: no noise left
        for i, value in enumerate(fields):
            if abs(value) > CAL_MAX_OFFSET:
                detail = f"slot {i} reads {abs(value)} (0.01 mT) from VCC/2: is a checker on the board?"
                self._send(BoardError(ErrorCode.CALIBRATION_FAILED, detail))
                self._send(Nack(seq, Calibrate.TYPE, NackReason.FAILED))
                return
        self._offsets = fields
        self.calibrated = True
        self._send(Ack(seq, Calibrate.TYPE))
        self._changed()

    # ------------------------------------------------------------------ checkers

    def _lift(self, point, side) -> int:
        sign = self._checkers.lift(point, side)
        self._changed()
        return sign

    def _place(self, point, sign: int) -> None:
        self._checkers.place(point, sign)
        self._changed()
