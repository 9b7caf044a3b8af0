"""The host side of the serial link to the sensor/LED board (``hardware/PROTOCOL.md``).

Over 500 lines on purpose: BoardLink's state is shared by two threads under one lock, kept in one place.

Owns the port (a pyserial URL, or the board found by USB id), the HELLO handshake, the
link thread that decodes frames, unacknowledged commands with retries, and reconnects
to the same board (:class:`BoardIdentity`) on whichever port it comes back
(:func:`candidate_ports`, :func:`ports_to_try`). Messages and :class:`LinkEvent` values
arrive on :attr:`BoardLink.events`. Opens nothing at import time.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Self

import serial
import serial.tools.list_ports

from board_rules.errors import TavliError
from firmware_bridge.protocol import (
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    Ack,
    BoardError,
    Button,
    Calibrate,
    CalibrationKind,
    Config,
    ErrorCode,
    FrameReader,
    Hello,
    HelloReply,
    LedFrame,
    Lift,
    Message,
    Nack,
    NackReason,
    Put,
    Snapshot,
    encode_frame,
)

__all__ = [
    "BOARD_USB_IDS",
    "BoardIdentity",
    "BoardLink",
    "LinkError",
    "LinkEvent",
    "LinkStats",
    "candidate_ports",
    "find_port",
    "ports_to_try",
]

log = logging.getLogger(__name__)

CONNECTED = "connected"
DISCONNECTED = "disconnected"
RECONNECTED = "reconnected"
REFUSED = "refused"

# USB (vendor, product) ids the board shows up as, most specific first (WIRING.md: an Arduino
# Mega 2560). To support another bridge, add its pair here; find_port prefers earlier entries.
BOARD_USB_IDS: tuple[tuple[int, int], ...] = (
    (0x2341, 0x0042),  # Arduino Mega 2560 R3, ATmega16U2 bridge
    (0x2341, 0x0010),  # Arduino Mega 2560 (first revision, ATmega8U2)
    (0x2A03, 0x0042),  # Mega 2560 R3 sold under arduino.org's vendor id, and clones of it
    (0x1A86, 0x7523),  # CH340 clones (a generic USB-serial chip: last, other devices use it too)
)
CALIBRATE_TIMEOUT_S = 2.0  # PROTOCOL.md CALIBRATE: the board ACKs within 2 s


class LinkError(TavliError, OSError):
    """The board could not be reached, refused the handshake, or speaks another major version."""


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """A change of the link's health, put on :attr:`BoardLink.events` between the board's messages.

    ``kind`` is ``"connected"`` (after :meth:`BoardLink.start`), ``"disconnected"``,
    ``"reconnected"`` (after a fresh handshake and snapshot; ``port`` names the port
    now in use, which may differ from before) or ``"refused"`` (a board of another
    major version answered a reconnect; the link gives up). ``hello`` is the board's
    HELLO_REPLY for connected / reconnected; ``detail`` says why for the others.
    """

    kind: str
    port: str | None = None
    detail: str = ""
    hello: HelloReply | None = None

    def __post_init__(self) -> None:
        if self.kind not in (CONNECTED, DISCONNECTED, RECONNECTED, REFUSED):
            raise ValueError(
                f"LinkEvent.kind must be connected, disconnected, reconnected or refused, not {self.kind!r}"
            )


@dataclass(frozen=True, slots=True)
class LinkStats:
    """Counters since the link was made: valid frames, corrupt frames skipped, command re-sends, reconnects."""

    frames: int = 0
    corrupt: int = 0
    retries: int = 0
    reconnects: int = 0


def find_port(
    vid: int | None = None,
    pid: int | None = None,
    comports: Callable[[], Any] | None = None,
    *,
    usb_ids: Sequence[tuple[int, int]] = BOARD_USB_IDS,
) -> str:
    """The device path of the board's serial port, found by its USB vendor and product id.

    With ``vid`` and ``pid``, the first port (by name) with exactly those ids; without
    them, a port with one of ``usb_ids`` (default :data:`BOARD_USB_IDS`), earlier pairs
    first, then by name. Raises :class:`LinkError` if no such port is present and
    ``ValueError`` if only one of ``vid`` and ``pid`` is given.
    """
    if (vid is None) != (pid is None):
        raise ValueError(f"find_port needs both vid and pid or neither, not vid={vid!r}, pid={pid!r}")
    wanted = [(vid, pid)] if vid is not None else list(usb_ids)
    ports = list((comports or serial.tools.list_ports.comports)())
    for pair in wanted:
        found = sorted(p.device for p in ports if (p.vid, p.pid) == tuple(pair))
        if found:
            return found[0]
    names = ", ".join(f"{v:04x}:{p:04x}" for v, p in wanted)
    raise LinkError(f"no serial port with USB id {names} is present (ports: {sorted(p.device for p in ports)!r})")


@dataclass(frozen=True, slots=True)
class BoardIdentity:
    """Which board this is: the ``serial`` its HELLO_REPLY reports, and its port's USB serial number if it has one.

    The link takes back only a board whose HELLO_REPLY reports the same ``serial``;
    ``usb_serial`` (pyserial's ``ListPortInfo.serial_number``, None for a port that is
    not a USB device or reports none) tells apart boards flashed with the same serial
    and spares opening ports that belong to another USB device.
    """

    serial: str
    usb_serial: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.serial, str) or not self.serial:
            raise ValueError(f"BoardIdentity.serial must be a non-empty string, not {self.serial!r}")
        if self.usb_serial is not None and not isinstance(self.usb_serial, str):
            raise ValueError(f"BoardIdentity.usb_serial must be a string or None, not {self.usb_serial!r}")


def candidate_ports(
    ports: Sequence[Any], identity: BoardIdentity | None, usb_ids: Sequence[tuple[int, int]] = BOARD_USB_IDS
) -> tuple[str, ...]:
    """The devices among ``ports`` (``serial.tools.list_ports.comports()`` entries) that may be the board.

    First the ports whose USB serial number is ``identity.usb_serial``, then the ports
    with one of ``usb_ids`` (earlier pairs first, then by name) whose USB serial number
    is unknown, or any when ``identity.usb_serial`` is unknown. A port with another USB
    serial number is another device and is left out, as is every port without a USB id.
    Pure: the ports are data.
    """
    known = identity.usb_serial if identity is not None else None
    same = sorted(p.device for p in ports if known is not None and getattr(p, "serial_number", None) == known)
    out = dict.fromkeys(same)
    for pair in usb_ids:
        for p in sorted(ports, key=lambda p: p.device):
            serial_number = getattr(p, "serial_number", None)
            if (p.vid, p.pid) == tuple(pair) and (known is None or serial_number is None):
                out.setdefault(p.device)
    return tuple(out)


def ports_to_try(
    home: str | None, last: str | None, candidates: Sequence[str], identity: BoardIdentity | None
) -> tuple[str, ...]:
    """The ports to ask for a lost board, in order: ``home`` (named, or found first), ``last`` used, ``candidates``.

    A board whose identity was never learned is looked for on ``home`` only; once it
    is known, on every port given, each once. Pure.

    >>> ports_to_try("/dev/ttyACM0", "/dev/ttyACM0", ["/dev/ttyACM1", "/dev/ttyACM0"], BoardIdentity("MEGA-7"))
    ('/dev/ttyACM0', '/dev/ttyACM1')
    >>> ports_to_try("/dev/ttyACM0", None, ["/dev/ttyACM1"], None)
    ('/dev/ttyACM0',)
    """
    if identity is None:
        return (home,) if home else ()
    return tuple(dict.fromkeys(p for p in (home, last, *candidates) if p))


class _Pending:
    """One unacknowledged command: its exact frame (re-sent unchanged), deadline and outcome.

    ``retries`` is how often it is re-sent after ``wait_s`` without an answer; when
    they are used up the board is treated as lost if ``lose`` is set, otherwise the
    command alone fails. ``nack`` and ``error`` keep the board's refusal and the
    ERROR frame that explained it.
    """

    __slots__ = ("deadline", "done", "error", "frame", "key", "lose", "nack", "ok", "retries", "tries", "wait_s")

    def __init__(
        self, key: tuple[int, int], frame: bytes, now: float, wait_s: float, retries: int, lose: bool = True
    ) -> None:
        self.key = key
        self.frame = frame
        self.wait_s = wait_s
        self.deadline = now + wait_s
        self.retries = retries
        self.lose = lose
        self.tries = 0
        self.done = threading.Event()
        self.ok = False
        self.nack: Nack | None = None
        self.error: BoardError | None = None

    def finish(self, ok: bool, nack: Nack | None = None) -> None:
        self.ok = ok
        self.nack = nack
        self.done.set()


class _Refused(LinkError):
    """The board speaks another major version: never retried."""


class _Stranger(LinkError):
    """Another board answered HELLO: its serial is not the one the link is looking for."""


class BoardLink:
    """The host end of the board link: handshake, reader thread, LED commands, reconnects.

    ``port`` is any pyserial URL; None finds the board by USB id. The first connect learns
    the board's :attr:`identity`; after a disconnect the link tries that port, the last
    port used, then ``candidates()`` (default: the USB serial ports), and takes back only
    the same board. A ``port_finder`` names the port at every reconnect instead.
    ``opener`` and ``clock`` are injectable for tests; ``config`` is sent after every
    handshake (one that breaks CONFIG's limits raises ``ValueError``).

    >>> link = BoardLink("loop://")  # opens nothing until start()
    >>> link.state is None, link.connected
    (True, False)
    """

    def __init__(
        self,
        port: str | None = None,
        *,
        vid: int | None = None,
        pid: int | None = None,
        port_finder: Callable[[], str | None] | None = None,
        candidates: Callable[[], Sequence[str]] | None = None,
        lost_after_s: float = 2.5,
        retry_after_s: float = 0.2,
        retries: int = 5,
        hello_timeout_s: float = 1.0,
        hello_retries: int = 3,
        backoff_initial_s: float = 0.1,
        backoff_max_s: float = 5.0,
        config: Config | None = None,
        opener: Callable[..., Any] = serial.serial_for_url,
        clock: Callable[[], float] = time.monotonic,
        comports: Callable[[], Any] | None = None,
        usb_ids: Sequence[tuple[int, int]] = BOARD_USB_IDS,
    ) -> None:
        if (vid is None) != (pid is None):
            raise LinkError(f"BoardLink needs both vid and pid or neither; got vid={vid!r}, pid={pid!r}")
        if port is None and port_finder is None and vid is None and not usb_ids:
            raise LinkError(
                "BoardLink needs a port, a port_finder, vid and pid, or usb_ids; "
                f"got port={port!r}, vid={vid!r}, pid={pid!r}, usb_ids={usb_ids!r}"
            )
        if config is not None and config.out_of_range():
            raise ValueError(f"BoardLink config {config!r} breaks CONFIG's limits: {'; '.join(config.out_of_range())}")
        for name, value in (
            ("lost_after_s", lost_after_s),
            ("retry_after_s", retry_after_s),
            ("hello_timeout_s", hello_timeout_s),
            ("backoff_initial_s", backoff_initial_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if not value > 0:
                raise ValueError(f"BoardLink {name} must be a positive number of seconds, not {value!r}")
        if retries < 0 or hello_retries < 0:
            raise ValueError(
                f"BoardLink retries must be >= 0, not retries={retries!r}, hello_retries={hello_retries!r}"
            )
        self._given_port = port
        self._vid, self._pid = vid, pid
        self._usb_ids = tuple(usb_ids)
        self._port_finder = port_finder
        self._candidates = candidates
        self._comports = comports
        self.lost_after_s = lost_after_s
        self.retry_after_s = retry_after_s
        self.retries = retries
        self.hello_timeout_s = hello_timeout_s
        self.hello_retries = hello_retries
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self._config = config
        self._opener = opener
        self._clock = clock
        self._read_timeout = min(0.02, retry_after_s / 4)

        self.events: queue.Queue[Message | LinkEvent] = queue.Queue()
        self._lock = threading.RLock()  # guards everything below that both threads touch
        self._serial: Any = None
        self._port: str | None = None
        self._home: str | None = None  # the port named, or found at the first connect
        self._last_port: str | None = None
        self._identity: BoardIdentity | None = None
        self._hello: HelloReply | None = None
        self._state: Snapshot | None = None
        self._led_frame: LedFrame | None = None
        self._pending: dict[tuple[int, int], _Pending] = {}
        self._seq = 0
        self._stats = {"frames": 0, "corrupt": 0, "retries": 0, "reconnects": 0}
        self._reader = FrameReader()
        self._backlog: collections.deque[Message] = collections.deque()
        self._last_frame = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ public

    @property
    def state(self) -> Snapshot | None:
        """The latest snapshot; None before the first and from a disconnect until a fresh one arrives."""
        with self._lock:
            return self._state

    @property
    def hello(self) -> HelloReply | None:
        """The board's HELLO_REPLY of the current connection (None while disconnected)."""
        with self._lock:
            return self._hello

    @property
    def port(self) -> str | None:
        """The port of the current connection (None while disconnected)."""
        with self._lock:
            return self._port

    @property
    def identity(self) -> BoardIdentity | None:
        """The board this link takes back after a disconnect; None before the first connect."""
        with self._lock:
            return self._identity

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._serial is not None and self._state is not None

    @property
    def led_frame(self) -> LedFrame | None:
        """The current LED frame: the last one given to :meth:`send_leds`, re-sent after every reconnect."""
        with self._lock:
            return self._led_frame

    @property
    def stats(self) -> LinkStats:
        with self._lock:
            return LinkStats(**self._stats)

    def start(self) -> Self:
        """Open the port, handshake, wait for the first snapshot, then start the link thread.

        Puts ``LinkEvent("connected")`` and that first snapshot on :attr:`events`.
        Raises :class:`LinkError` if the port cannot be opened, the board does not
        answer, or it speaks another protocol major version.
        """
        if self._thread is not None:
            raise LinkError("BoardLink.start() called twice")
        self._stop.clear()
        port = self._find_port()
        self._connect(port, CONNECTED)
        self._home = port
        self._thread = threading.Thread(target=self._run, name=f"BoardLink({port})", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the link thread, close the port and fail any command still waiting for its ACK."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def send_leds(self, frame: LedFrame) -> bool:
        """Make ``frame`` the current LED frame and send it; True once the board ACKs it.

        The frame is re-sent unchanged (same ``seq``) every ``retry_after_s`` up to
        ``retries`` times; only an ACK naming its ``seq`` and type LED_FRAME counts.
        False on a NACK, when the board is disconnected (the frame is sent after the
        reconnect) or when every retry went unanswered (the board is then treated as lost).
        Raises :class:`TypeError` if ``frame`` is not a :class:`LedFrame`.
        """
        if not isinstance(frame, LedFrame):
            raise TypeError(f"send_leds expects a LedFrame, not {frame!r}")
        with self._lock:
            self._led_frame = frame
            if not self.connected:
                return False
            entry = self._submit(frame)
        if entry is None:
            return False
        entry.done.wait(self.retry_after_s * (self.retries + 1) + 1.0)
        return entry.ok

    def calibrate(
        self, kind: CalibrationKind | int = CalibrationKind.ZERO_EMPTY, *, timeout_s: float = CALIBRATE_TIMEOUT_S
    ) -> None:
        """Send CALIBRATE ``kind`` and return once the board ACKs it (PROTOCOL.md "CALIBRATE").

        ``ZERO_EMPTY`` records each sensor's offset (the board must be empty);
        ``FACTORY_DEFAULTS`` forgets them. Sent once, awaited ``timeout_s`` (a re-send
        could only be NACKed ``BUSY``). Raises :class:`LinkError` if the board is not
        connected, refuses (naming the NACK reason and the board's ERROR detail),
        disconnects or does not answer in time; ``ValueError`` for an unknown ``kind``.
        """
        msg = Calibrate(kind)
        if not timeout_s > 0:
            raise ValueError(f"calibrate timeout_s must be a positive number of seconds, not {timeout_s!r}")
        with self._lock:
            port = self._port
            entry = self._submit(msg, wait_s=timeout_s, retries=0, lose=False) if self.connected else None
        if entry is None:
            raise LinkError(f"cannot calibrate ({msg.kind.name}): the board is not connected")
        if not entry.done.wait(timeout_s + 1.0):  # the link thread normally ends it at timeout_s
            with self._lock:
                self._pending.pop(entry.key, None)
        if entry.ok:
            return
        if entry.nack is not None:
            detail = f": {entry.error.detail}" if entry.error is not None and entry.error.detail else ""
            raise LinkError(
                f"board on {port!r} refused CALIBRATE {msg.kind.name}: NACK {entry.nack.reason.name}{detail}"
            )
        if not self.connected:
            raise LinkError(f"board on {port!r} was lost before it answered CALIBRATE {msg.kind.name}")
        raise LinkError(f"board on {port!r} did not answer CALIBRATE {msg.kind.name} within {timeout_s} s")

    # ------------------------------------------------------------ connecting

    def _find_port(self) -> str:
        if self._port_finder is not None and (self._thread is not None or self._given_port is None):
            port = self._port_finder()
            if not port:
                raise LinkError(f"port_finder {self._port_finder!r} found no port")
            return port
        if self._given_port is not None:
            return self._given_port
        return find_port(self._vid, self._pid, self._comports, usb_ids=self._usb_ids)

    def _connect(self, port: str, kind: str, identity: BoardIdentity | None = None) -> None:
        """Open ``port``, handshake, wait for a snapshot; emit ``kind``, the snapshot, re-send LEDs.

        With ``identity``, a board reporting another serial is closed again (:class:`_Stranger`).
        """
        try:
            ser = self._opener(port, baudrate=115200, timeout=self._read_timeout, write_timeout=1.0)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise LinkError(f"cannot open board port {port!r}: {exc}") from exc
        try:
            hello, snapshot = self._handshake(ser, port, identity)
        except LinkError:
            _quiet_close(ser)
            raise
        except (serial.SerialException, OSError) as exc:
            _quiet_close(ser)
            raise LinkError(f"board on {port!r} failed during the handshake: {exc}") from exc
        except BaseException:
            _quiet_close(ser)
            raise
        usb_serial = self._usb_serial_of(port)
        with self._lock:
            self._serial, self._port, self._hello, self._state = ser, port, hello, snapshot
            old = self._identity
            if usb_serial is None and old is not None and old.serial == hello.serial:
                usb_serial = old.usb_serial  # found on a port without USB facts: still that board
            self._identity = BoardIdentity(hello.serial, usb_serial)
            self._last_port = port
            self._last_frame = self._clock()
            if kind == RECONNECTED:
                self._stats["reconnects"] += 1
            if self._config is not None:
                self._submit(self._config)
            if self._led_frame is not None:
                self._submit(self._led_frame)
        self.events.put(LinkEvent(kind, port=port, hello=hello))
        while self._backlog:  # starts with the first snapshot's own message (and any LIFT / PUT before it)
            self._dispatch(self._backlog.popleft())

    def _usb_serial_of(self, port: str) -> str | None:
        """The USB serial number ``comports()`` reports for ``port`` (a symlink is followed); None if none."""
        if not port.startswith("/") and not port.upper().startswith("COM"):
            return None  # a URL (loop://, socket://): no USB device behind it
        device = os.path.realpath(port) if port.startswith("/") else port
        try:
            ports = list((self._comports or serial.tools.list_ports.comports)())
        except Exception:  # listing ports is a nicety here: the handshake already succeeded
            log.debug("listing serial ports failed", exc_info=True)
            return None
        for p in ports:
            if p.device in (port, device):
                return getattr(p, "serial_number", None) or None
        return None

    def _handshake(self, ser: Any, port: str, identity: BoardIdentity | None = None) -> tuple[HelloReply, Snapshot]:
        self._reader = FrameReader()
        self._backlog.clear()
        seq = self._next_seq()
        wire = b"\x00" + encode_frame(Hello(), seq)
        reply: HelloReply | None = None
        for attempt in range(self.hello_retries + 1):
            if attempt:
                self._count("retries")
            self._write(ser, wire)
            deadline = self._clock() + self.hello_timeout_s
            while reply is None:
                msg = self._next_message(ser, deadline, handshaking=True)
                if msg is None:
                    break
                if isinstance(msg, HelloReply) and msg.reply_to == seq:
                    reply = msg
                elif isinstance(msg, Nack) and msg.seq == seq and msg.msg_type == Hello.TYPE:
                    if msg.reason == NackReason.VERSION_MISMATCH:
                        raise _Refused(_mismatch_text("another major version"))
                    raise LinkError(f"board on {port!r} refused HELLO: {msg!r}")
            if reply is not None:
                break
        if reply is None:
            raise LinkError(
                f"no HELLO_REPLY from {port!r} within {self.hello_timeout_s} s, {self.hello_retries + 1} tries"
            )
        if reply.major != PROTOCOL_MAJOR:
            raise _Refused(_mismatch_text(f"{reply.major}.{reply.minor}"))
        if identity is not None and reply.serial != identity.serial:
            raise _Stranger(f"the board on {port!r} is {reply.serial!r}, not {identity.serial!r}")
        deadline = self._clock() + self.lost_after_s
        early: list[Message] = []  # LIFT / PUT / ERROR before the first snapshot
        while True:
            msg = self._next_message(ser, deadline, handshaking=True)
            if msg is None:
                raise LinkError(f"board on {port!r} answered HELLO but sent no SNAPSHOT within {self.lost_after_s} s")
            if isinstance(msg, Snapshot):
                # delivered in order after the connected event: early messages, this snapshot, the rest
                self._backlog.extendleft(reversed([*early, msg]))
                return reply, msg
            if isinstance(msg, (Lift, Put, Button, BoardError)):
                early.append(msg)

    def _next_message(self, ser: Any, deadline: float, handshaking: bool = False) -> Message | None:
        while not self._backlog:
            if self._clock() >= deadline or self._stop.is_set():
                return None
            for msg in self._read(ser, handshaking):
                self._backlog.append(msg)
        return self._backlog.popleft()

    # ------------------------------------------------------------ the link thread

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                ser = self._serial
            if ser is None:
                if not self._reconnect():
                    return
                continue
            try:
                messages = self._read(ser)
            except (serial.SerialException, OSError) as exc:
                self._lose(f"serial error on {self._port!r}: {exc}")
                continue
            for msg in messages:
                if self._serial is not ser:
                    break  # lost while dispatching (NACK NOT_READY): drop the rest, no stale state
                self._dispatch(msg)
            if self._serial is not ser:
                continue
            now = self._clock()
            if now - self._last_frame > self.lost_after_s:
                self._lose(f"no frame from the board for {self.lost_after_s} s")
                continue
            self._check_pending(now)

    def _read(self, ser: Any, handshaking: bool = False) -> list[Message]:
        """Read what is waiting (or wait one read timeout) and decode it, counting corrupt frames."""
        data = ser.read(ser.in_waiting or 1)
        out: list[Message] = []
        if not data:
            return out
        start = 0
        while start < len(data):  # feed one delimited piece at a time so every error is seen
            end = data.find(0, start)
            piece = data[start:] if end < 0 else data[start : end + 1]
            start = len(data) if end < 0 else end + 1
            errors = self._reader.errors
            decoded = self._reader.feed(piece)
            if self._reader.errors != errors:
                self._count("corrupt", self._reader.errors - errors)
                err = self._reader.last_error
                log.warning("skipped a corrupt frame: %s", err)
                if handshaking and err is not None and err.reason == "version":
                    raise _Refused(str(err))
            if decoded:
                with self._lock:
                    self._stats["frames"] += len(decoded)
                    self._last_frame = self._clock()
                out.extend(msg for _seq, msg in decoded)
        return out

    def _dispatch(self, msg: Message) -> None:
        if isinstance(msg, (Ack, Nack)):
            with self._lock:
                entry = self._pending.pop((msg.seq, msg.msg_type), None)
            if entry is None:
                return  # matches no command of ours: ignored (rule 5)
            entry.finish(isinstance(msg, Ack), msg if isinstance(msg, Nack) else None)
            if isinstance(msg, Nack) and msg.reason == NackReason.NOT_READY:
                self._lose("the board restarted (NACK NOT_READY): re-handshaking")
            return
        if isinstance(msg, Snapshot):
            with self._lock:
                self._state = msg
        elif isinstance(msg, BoardError) and msg.code == ErrorCode.CALIBRATION_FAILED:
            with self._lock:  # the reason for the NACK FAILED that follows it
                for entry in self._pending.values():
                    if entry.key[1] == Calibrate.TYPE:
                        entry.error = msg
        elif not isinstance(msg, (Lift, Put, Button, BoardError)):
            return  # a late HELLO_REPLY or a host-bound type: nothing for the application
        self.events.put(msg)

    def _check_pending(self, now: float) -> None:
        with self._lock:
            ser = self._serial
            due = [p for p in self._pending.values() if now >= p.deadline]
        for entry in due:
            if entry.tries >= entry.retries:
                seq, msg_type = entry.key
                if not entry.lose:  # this command alone fails; the heartbeat watchdog judges the board
                    with self._lock:
                        self._pending.pop(entry.key, None)
                    entry.finish(False)
                    continue
                self._lose(f"command seq={seq} type=0x{msg_type:02x} unacknowledged after {entry.tries + 1} sends")
                return
            entry.tries += 1
            entry.deadline = now + entry.wait_s
            self._count("retries")
            try:
                self._write(ser, entry.frame)
            except (serial.SerialException, OSError) as exc:
                self._lose(f"serial error on {self._port!r}: {exc}")
                return

    def _lose(self, reason: str) -> None:
        with self._lock:
            port = self._port
        log.warning("board lost: %s", reason)
        self._close()
        self.events.put(LinkEvent(DISCONNECTED, port=port, detail=reason))

    def _reconnect(self) -> bool:
        """Try to reconnect with exponential backoff until it works (True) or the link stops or is refused."""
        delay = self.backoff_initial_s
        while not self._stop.is_set():
            try:
                self._connect_again()
                return True
            except _Refused as exc:
                self.events.put(LinkEvent(REFUSED, detail=str(exc)))
                return False
            except LinkError as exc:
                log.info("reconnect failed, next try in %.2f s: %s", delay, exc)
            except Exception:  # e.g. a port_finder that raised: the link thread must not die of it
                log.exception("reconnect failed unexpectedly, next try in %.2f s", delay)
            if self._stop.wait(delay):
                break
            delay = min(delay * 2, self.backoff_max_s)
        return False

    def _connect_again(self) -> None:
        """One round: the port_finder's port, or every port of :func:`ports_to_try` until the same board answers.

        Raises :class:`LinkError` naming each port's failure when none did, and
        ``_Refused`` if the board on the home port speaks another major version.
        """
        if self._port_finder is not None:
            self._connect(self._find_port(), RECONNECTED)
            return
        with self._lock:
            identity = self._identity
        candidates: Sequence[str] = ()
        if identity is not None:
            if self._candidates is not None:
                candidates = list(self._candidates())
            else:
                ports = list((self._comports or serial.tools.list_ports.comports)())
                candidates = candidate_ports(ports, identity, self._wanted_usb_ids())
        failures = []
        for port in ports_to_try(self._home, self._last_port, candidates, identity):
            if self._stop.is_set():
                break
            try:
                self._connect(port, RECONNECTED, identity)
                return
            except _Refused:
                if port == self._home:
                    raise
                failures.append(f"{port!r} speaks another major version")
            except LinkError as exc:
                failures.append(str(exc))
        raise LinkError("the board did not answer: " + ("; ".join(failures) or "no port to try"))

    def _wanted_usb_ids(self) -> tuple[tuple[int, int], ...]:
        if self._vid is not None and self._pid is not None:
            return ((self._vid, self._pid),)
        return self._usb_ids

    # ------------------------------------------------------------ helpers

    def _submit(
        self, msg: Message, *, wait_s: float | None = None, retries: int | None = None, lose: bool = True
    ) -> _Pending | None:
        with self._lock:
            ser = self._serial
            if ser is None:
                return None
            seq = self._next_seq()
            entry = _Pending(
                (seq, msg.TYPE),
                encode_frame(msg, seq),
                self._clock(),
                self.retry_after_s if wait_s is None else wait_s,
                self.retries if retries is None else retries,
                lose,
            )
            self._pending[entry.key] = entry
            try:
                self._write(ser, entry.frame)
            except (serial.SerialException, OSError) as exc:
                log.warning("write to %r failed: %s", self._port, exc)  # the retry or the reader will notice
        return entry

    def _write(self, ser: Any, data: bytes) -> None:
        with self._lock:
            ser.write(data)

    def _next_seq(self) -> int:
        with self._lock:
            self._seq = (self._seq + 1) & 0xFFFF
            return self._seq

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._stats[name] += n

    def _close(self) -> None:
        with self._lock:
            ser, self._serial = self._serial, None
            self._port, self._hello, self._state = None, None, None
            pending, self._pending = list(self._pending.values()), {}
        for entry in pending:
            entry.finish(False)
        if ser is not None:
            _quiet_close(ser)


def _mismatch_text(board_version: str) -> str:
    return (
        f"protocol major version mismatch: the other side speaks {board_version}, "
        f"this side speaks {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}; update the firmware or the host"
    )


def _quiet_close(ser: Any) -> None:
    try:
        ser.close()
    except Exception:  # closing a vanished device may fail; it is gone either way
        log.debug("closing the port failed", exc_info=True)
