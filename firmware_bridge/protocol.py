"""The messages of ``hardware/PROTOCOL.md``: one frozen type per message, and frames of them.

Over 500 lines on purpose: one dataclass per message, in the spec's order, to read beside it.
Owns the enumerations, the messages (``encode()`` / ``decode()``), :func:`encode_frame`,
:func:`decode_frame`, :func:`decode_raw` and the host's :class:`FrameReader`. Re-exports
the byte layer, :mod:`firmware_bridge.framing`. Pure; imports the standard library,
``board_rules.errors`` and ``framing`` only.

>>> frame = encode_frame(Ack(seq=7, msg_type=LedFrame.TYPE), seq=42)
>>> frame[-1], 0 in frame[:-1], decode_frame(frame)
(0, False, (42, Ack(seq=7, msg_type=32)))
"""

from __future__ import annotations

import enum
import zlib
from dataclasses import dataclass
from typing import ClassVar

from firmware_bridge.framing import (
    CRC_SIZE,
    HEADER_SIZE,
    MAX_ENCODED,
    MAX_FRAME,
    MAX_PAYLOAD,
    ProtocolError,
    RawFrame,
    RawFrameReader,
    cobs_decode,
    cobs_encode,
    crc16_ccitt_false,
    join_frame,
    split_frame,
)

__all__ = [
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "PROTOCOL_VERSION",
    "HEADER_SIZE",
    "CRC_SIZE",
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "MAX_ENCODED",
    "MAX_SLOTS",
    "MAX_LEDS",
    "MAX_TEXT",
    "POINTS",
    "PAIR_STRENGTH",
    "CHECKER_MIN",
    "ProtocolError",
    "SlotState",
    "Area",
    "ReportMode",
    "CalibrationKind",
    "NackReason",
    "ErrorCode",
    "SlotReading",
    "Led",
    "Hello",
    "HelloReply",
    "Snapshot",
    "Lift",
    "Put",
    "Button",
    "LedFrame",
    "Config",
    "Calibrate",
    "Ack",
    "Nack",
    "BoardError",
    "Message",
    "MESSAGE_TYPES",
    "RawFrame",
    "cobs_encode",
    "cobs_decode",
    "crc16_ccitt_false",
    "join_frame",
    "state_hash",
    "encode_frame",
    "decode_frame",
    "decode_raw",
    "split_frame",
    "FrameReader",
    "RawFrameReader",
]

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0
PROTOCOL_VERSION = (PROTOCOL_MAJOR, PROTOCOL_MINOR)

POINTS = 24
SNAPSHOT_FIXED = 11  # timestamp u32, hash u32, slots_per_point u8, bar_slots u8, tray_slots u8
MAX_SLOTS = (MAX_PAYLOAD - SNAPSHOT_FIXED) // 3  # 164
MAX_LEDS = (MAX_PAYLOAD - 1) // 4  # 126
MAX_TEXT = 200  # bytes of ASCII in a serial number or an error detail
# Field strengths (0.01 mT) fixed by the checkers' magnets (SENSING.md) that bound CONFIG's thresholds.
PAIR_STRENGTH = 700  # a pinned checker under one of the other colour
CHECKER_MIN = 950  # the least field of a lone checker


# ---------------------------------------------------------------- enumerations


class SlotState(enum.IntEnum):
    """What one hall-sensor slot reads."""

    EMPTY = 0
    WHITE = 1
    BLACK = 2
    UNCERTAIN = 3  # a field, but its polarity is not decisive (e.g. a pinned checker under a stack)


class Area(enum.IntEnum):
    """Where a slot is: on a point, on the bar, or in a bear-off tray."""

    POINT = 0
    BAR = 1
    OFF_WHITE = 2
    OFF_BLACK = 3


class ReportMode(enum.IntEnum):
    """What the board reports besides snapshots and heartbeats."""

    SNAPSHOTS = 0
    SNAPSHOTS_AND_EVENTS = 1


class CalibrationKind(enum.IntEnum):
    ZERO_EMPTY = 0  # the board is empty: record each sensor's offset
    FACTORY_DEFAULTS = 1  # forget the stored calibration


class NackReason(enum.IntEnum):
    BAD_LENGTH = 1
    UNKNOWN_TYPE = 2
    BAD_VALUE = 3
    NOT_READY = 4  # no HELLO since the board started
    BUSY = 5
    VERSION_MISMATCH = 6
    FAILED = 7  # valid, but could not be carried out (an ERROR frame says why)


class ErrorCode(enum.IntEnum):
    SENSOR_FAULT = 1
    LED_FAULT = 2
    RX_OVERFLOW = 3
    CORRUPT_FRAMES = 4
    CALIBRATION_FAILED = 5
    INTERNAL = 6


# ---------------------------------------------------------------- the snapshot's state hash


def state_hash(states: bytes) -> int:
    """The snapshot state hash: CRC-32 (IEEE, as zlib) of one state byte per slot, in slot order.

    >>> hex(state_hash(b"123456789"))
    '0xcbf43926'
    """
    return zlib.crc32(bytes(states)) & 0xFFFFFFFF


# ---------------------------------------------------------------- field helpers


def _uint(owner: str, name: str, value: object, bits: int, low: int = 0, high: int | None = None) -> None:
    top = (1 << bits) - 1 if high is None else high
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
        raise ProtocolError(f"{owner}.{name} must be an integer in {low}..{top}, not {value!r}")


def _enum(obj: object, name: str, kind: type[enum.IntEnum]) -> None:
    value = getattr(obj, name)
    try:
        member = kind(value)
    except (ValueError, TypeError):
        names = ", ".join(f"{m.name}={m.value}" for m in kind)
        raise ProtocolError(f"{type(obj).__name__}.{name} must be one of {names}, not {value!r}") from None
    object.__setattr__(obj, name, member)


def _text(owner: str, name: str, value: object, low: int = 0) -> None:
    if not isinstance(value, str) or not low <= len(value) <= MAX_TEXT or not all(" " <= ch <= "~" for ch in value):
        raise ProtocolError(f"{owner}.{name} must be {low}..{MAX_TEXT} printable ASCII characters, not {value!r}")


class _Cursor:
    """Reads little-endian fields from a payload; raises ProtocolError(reason="length")."""

    __slots__ = ("_data", "_pos", "_name")

    def __init__(self, data: bytes, name: str) -> None:
        self._data = bytes(data)
        self._pos = 0
        self._name = name

    def take(self, n: int) -> bytes:
        end = self._pos + n
        if end > len(self._data):
            raise ProtocolError(
                f"{self._name} payload {self._data[:48]!r} is too short: "
                f"expected at least {end} bytes, got {len(self._data)}",
                reason="length",
            )
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "little")

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "little")

    def text(self) -> str:
        raw = self.take(self.u8())
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            raise ProtocolError(f"{self._name} text {raw!r} is not ASCII") from None

    def end(self, strict: bool) -> None:
        if strict and self._pos != len(self._data):
            raise ProtocolError(
                f"{self._name} payload {self._data[:48]!r} is too long: "
                f"expected {self._pos} bytes, got {len(self._data)}",
                reason="length",
            )


def _u16(v: int) -> bytes:
    return v.to_bytes(2, "little")


def _u32(v: int) -> bytes:
    return v.to_bytes(4, "little")


def _text_bytes(s: str) -> bytes:
    raw = s.encode("ascii")
    return bytes([len(raw)]) + raw


def _build(cls, cursor: _Cursor, strict: bool, *args):
    """Finish a decode: check the end of the payload, then build (validation may raise)."""
    cursor.end(strict)
    return cls(*args)


# ---------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Hello:
    """HELLO (host to board): the host's protocol version; opens every session."""

    TYPE: ClassVar[int] = 0x01
    major: int = PROTOCOL_MAJOR
    minor: int = PROTOCOL_MINOR

    def __post_init__(self) -> None:
        _uint("Hello", "major", self.major, 8)
        _uint("Hello", "minor", self.minor, 8)

    def encode(self) -> bytes:
        return bytes([self.major, self.minor])

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Hello:
        c = _Cursor(payload, "HELLO")
        return _build(cls, c, strict, c.u8(), c.u8())


@dataclass(frozen=True, slots=True)
class HelloReply:
    """HELLO_REPLY (board to host): versions, serial number and capabilities."""

    TYPE: ClassVar[int] = 0x02
    reply_to: int
    serial: str
    firmware: tuple[int, int, int] = (0, 0, 0)
    slots_per_point: int = 5
    bar_slots: int = 4
    tray_slots: int = 4
    led_count: int = 27
    major: int = PROTOCOL_MAJOR
    minor: int = PROTOCOL_MINOR

    def __post_init__(self) -> None:
        _uint("HelloReply", "reply_to", self.reply_to, 16)
        _text("HelloReply", "serial", self.serial, low=1)
        if not (isinstance(self.firmware, tuple) and len(self.firmware) == 3):
            raise ProtocolError(f"HelloReply.firmware must be (major, minor, patch), not {self.firmware!r}")
        for part in self.firmware:
            _uint("HelloReply", "firmware", part, 8)
        _uint("HelloReply", "slots_per_point", self.slots_per_point, 8, low=1)
        _uint("HelloReply", "bar_slots", self.bar_slots, 8)
        _uint("HelloReply", "tray_slots", self.tray_slots, 8)
        total = POINTS * self.slots_per_point + self.bar_slots + 2 * self.tray_slots
        if total > MAX_SLOTS:
            raise ProtocolError(f"HelloReply describes {total} slots; a snapshot holds at most {MAX_SLOTS}")
        _uint("HelloReply", "led_count", self.led_count, 16, low=1, high=MAX_LEDS)
        _uint("HelloReply", "major", self.major, 8)
        _uint("HelloReply", "minor", self.minor, 8)

    @property
    def firmware_version(self) -> str:
        return ".".join(map(str, self.firmware))

    def encode(self) -> bytes:
        return (
            _u16(self.reply_to)
            + bytes([self.major, self.minor, *self.firmware])
            + bytes([self.slots_per_point, self.bar_slots, self.tray_slots])
            + _u16(self.led_count)
            + _text_bytes(self.serial)
        )

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> HelloReply:
        c = _Cursor(payload, "HELLO_REPLY")
        reply_to, major, minor = c.u16(), c.u8(), c.u8()
        firmware = (c.u8(), c.u8(), c.u8())
        spp, bar, tray, leds = c.u8(), c.u8(), c.u8(), c.u16()
        serial = c.text()
        return _build(cls, c, strict, reply_to, serial, firmware, spp, bar, tray, leds, major, minor)


@dataclass(frozen=True, slots=True)
class SlotReading:
    """One slot of a snapshot: its state and field magnitude in units of 0.01 mT."""

    state: SlotState
    strength: int = 0

    def __post_init__(self) -> None:
        _enum(self, "state", SlotState)
        _uint("SlotReading", "strength", self.strength, 16)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """SNAPSHOT (board to host): every slot, in order points 1..24, bar, white's tray, black's tray.

    Sent on every debounced change and as a heartbeat at least once a second.
    ``state_hash`` is computed from the states; a decoded hash that differs is refused.
    """

    TYPE: ClassVar[int] = 0x10
    timestamp_ms: int
    slots_per_point: int
    bar_slots: int
    tray_slots: int
    readings: tuple[SlotReading, ...]

    def __post_init__(self) -> None:
        _uint("Snapshot", "timestamp_ms", self.timestamp_ms, 32)
        _uint("Snapshot", "slots_per_point", self.slots_per_point, 8, low=1)
        _uint("Snapshot", "bar_slots", self.bar_slots, 8)
        _uint("Snapshot", "tray_slots", self.tray_slots, 8)
        readings = tuple(self.readings)
        if not all(isinstance(r, SlotReading) for r in readings):
            raise ProtocolError(f"Snapshot.readings must be SlotReading values, not {self.readings!r}")
        object.__setattr__(self, "readings", readings)
        expected = POINTS * self.slots_per_point + self.bar_slots + 2 * self.tray_slots
        if expected > MAX_SLOTS:
            raise ProtocolError(f"Snapshot describes {expected} slots; at most {MAX_SLOTS} fit in a frame")
        if len(readings) != expected:
            raise ProtocolError(
                f"Snapshot has {len(readings)} readings; {POINTS}x{self.slots_per_point} + "
                f"{self.bar_slots} + 2x{self.tray_slots} = {expected} expected",
                reason="length",
            )

    @property
    def state_hash(self) -> int:
        return state_hash(bytes(r.state for r in self.readings))

    def point(self, number: int) -> tuple[SlotReading, ...]:
        """The slots of point ``number`` (1..24), nearest the edge first."""
        if not 1 <= number <= POINTS:
            raise ProtocolError(f"point must be 1..{POINTS}, not {number!r}")
        start = (number - 1) * self.slots_per_point
        return self.readings[start : start + self.slots_per_point]

    @property
    def bar(self) -> tuple[SlotReading, ...]:
        start = POINTS * self.slots_per_point
        return self.readings[start : start + self.bar_slots]

    @property
    def off_white(self) -> tuple[SlotReading, ...]:
        start = POINTS * self.slots_per_point + self.bar_slots
        return self.readings[start : start + self.tray_slots]

    @property
    def off_black(self) -> tuple[SlotReading, ...]:
        start = POINTS * self.slots_per_point + self.bar_slots + self.tray_slots
        return self.readings[start : start + self.tray_slots]

    def encode(self) -> bytes:
        out = bytearray(_u32(self.timestamp_ms) + _u32(self.state_hash))
        out += bytes([self.slots_per_point, self.bar_slots, self.tray_slots])
        for r in self.readings:
            out.append(r.state)
            out += _u16(r.strength)
        return bytes(out)

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Snapshot:
        c = _Cursor(payload, "SNAPSHOT")
        timestamp, wire_hash = c.u32(), c.u32()
        spp, bar, tray = c.u8(), c.u8(), c.u8()
        count = POINTS * spp + bar + 2 * tray
        if count > MAX_SLOTS:
            raise ProtocolError(f"SNAPSHOT describes {count} slots; at most {MAX_SLOTS} fit in a frame")
        readings = []
        for _ in range(count):
            state = c.u8()
            readings.append(SlotReading(state, c.u16()))
        snapshot = _build(cls, c, strict, timestamp, spp, bar, tray, tuple(readings))
        if snapshot.state_hash != wire_hash:
            raise ProtocolError(
                f"SNAPSHOT state hash 0x{wire_hash:08x} does not match its states (0x{snapshot.state_hash:08x})"
            )
        return snapshot


@dataclass(frozen=True, slots=True)
class _SlotEvent:
    area: Area
    number: int
    slot: int
    state: SlotState
    timestamp_ms: int

    def __post_init__(self) -> None:
        name = type(self).__name__
        _enum(self, "area", Area)
        if self.area is Area.POINT:
            _uint(name, "number", self.number, 8, low=1, high=POINTS)
        else:
            _uint(name, "number", self.number, 8, high=0)
        _uint(name, "slot", self.slot, 8)
        _enum(self, "state", SlotState)
        if self.state is SlotState.EMPTY:
            raise ProtocolError(f"{name}.state must name a checker colour, not {self.state!r}")
        _uint(name, "timestamp_ms", self.timestamp_ms, 32)

    def encode(self) -> bytes:
        return bytes([self.area, self.number, self.slot, self.state]) + _u32(self.timestamp_ms)

    @classmethod
    def _decode(cls, payload: bytes, strict: bool, name: str):
        c = _Cursor(payload, name)
        return _build(cls, c, strict, c.u8(), c.u8(), c.u8(), c.u8(), c.u32())


@dataclass(frozen=True, slots=True)
class Lift(_SlotEvent):
    """LIFT (board to host): a checker of ``state``'s colour left a slot (``number`` 0 off the points)."""

    TYPE: ClassVar[int] = 0x11

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Lift:
        return cls._decode(payload, strict, "LIFT")


@dataclass(frozen=True, slots=True)
class Put(_SlotEvent):
    """PUT (board to host): a checker of ``state``'s colour arrived on a slot."""

    TYPE: ClassVar[int] = 0x12

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Put:
        return cls._decode(payload, strict, "PUT")


@dataclass(frozen=True, slots=True)
class Button:
    """BUTTON (board to host): a button on the board itself went down or up.

    ``button`` numbers the board's buttons from 0 (the board's HELLO_REPLY does not
    list them: a board without buttons never sends this); ``pressed`` is True when it
    went down. The host's panel (``firmware_bridge.panel``) decides short and long presses.
    """

    TYPE: ClassVar[int] = 0x13
    button: int
    pressed: bool
    timestamp_ms: int

    def __post_init__(self) -> None:
        _uint("BUTTON", "button", self.button, 8)
        if not isinstance(self.pressed, bool):
            raise ProtocolError(f"BUTTON pressed must be True or False, not {self.pressed!r}", reason="value")
        _uint("BUTTON", "timestamp_ms", self.timestamp_ms, 32)

    def encode(self) -> bytes:
        return bytes([self.button, 1 if self.pressed else 0]) + self.timestamp_ms.to_bytes(4, "little")

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Button:
        c = _Cursor(payload, "BUTTON")
        button = c.u8()
        pressed = c.u8()
        if pressed > 1:
            raise ProtocolError(f"BUTTON pressed must be 0 or 1, not {pressed!r}", reason="value")
        return _build(cls, c, strict, button, bool(pressed), c.u32())


@dataclass(frozen=True, slots=True)
class Led:
    """One LED: colour and blink mask (bit i lights phase i of eight 125 ms phases; 0xFF steady)."""

    red: int = 0
    green: int = 0
    blue: int = 0
    blink: int = 0xFF

    def __post_init__(self) -> None:
        for name in ("red", "green", "blue", "blink"):
            _uint("Led", name, getattr(self, name), 8)


@dataclass(frozen=True, slots=True)
class LedFrame:
    """LED_FRAME (host to board): the whole LED state, idempotent; LEDs in order points 1..24, bar, trays."""

    TYPE: ClassVar[int] = 0x20
    leds: tuple[Led, ...]

    def __post_init__(self) -> None:
        leds = tuple(self.leds)
        if not 1 <= len(leds) <= MAX_LEDS or not all(isinstance(led, Led) for led in leds):
            raise ProtocolError(f"LedFrame.leds must be 1..{MAX_LEDS} Led values, not {self.leds!r}")
        object.__setattr__(self, "leds", leds)

    def encode(self) -> bytes:
        out = bytearray([len(self.leds)])
        for led in self.leds:
            out += bytes([led.red, led.green, led.blue, led.blink])
        return bytes(out)

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> LedFrame:
        c = _Cursor(payload, "LED_FRAME")
        count = c.u8()
        leds = tuple(Led(*c.take(4)) for _ in range(count))
        return _build(cls, c, strict, leds)


@dataclass(frozen=True, slots=True)
class Config:
    """CONFIG (host to board): debounce, report mode, heartbeat period and sensor thresholds."""

    TYPE: ClassVar[int] = 0x21
    debounce_scans: int = 3
    report_mode: ReportMode = ReportMode.SNAPSHOTS_AND_EVENTS
    heartbeat_ms: int = 500
    empty_threshold: int = 150  # 0.01 mT: a weaker field reads EMPTY
    hysteresis: int = 30  # 0.01 mT
    polarity_margin: int = 50  # 0.01 mT: a weaker signed field than this reads UNCERTAIN

    def __post_init__(self) -> None:
        _uint("Config", "debounce_scans", self.debounce_scans, 8, low=1)
        _enum(self, "report_mode", ReportMode)
        _uint("Config", "heartbeat_ms", self.heartbeat_ms, 16, low=100, high=1000)
        _uint("Config", "empty_threshold", self.empty_threshold, 16)
        _uint("Config", "hysteresis", self.hysteresis, 16)
        _uint("Config", "polarity_margin", self.polarity_margin, 16)

    def out_of_range(self) -> tuple[str, ...]:
        """The limits of PROTOCOL.md's CONFIG this configuration breaks (empty if none).

        A board NACKs such a CONFIG ``BAD_VALUE`` and changes nothing. The ranges of
        single fields are checked when the value is made; these are the limits between
        fields: ``polarity_margin <= empty_threshold < PAIR_STRENGTH``,
        ``hysteresis <= empty_threshold`` and ``empty_threshold + hysteresis < CHECKER_MIN``.

        >>> Config(hysteresis=151).out_of_range()
        ('hysteresis 151 > empty_threshold 150',)
        """
        broken = []
        if self.polarity_margin > self.empty_threshold:
            broken.append(f"polarity_margin {self.polarity_margin!r} > empty_threshold {self.empty_threshold!r}")
        if self.empty_threshold >= PAIR_STRENGTH:
            broken.append(f"empty_threshold {self.empty_threshold!r} >= {PAIR_STRENGTH} (a pinned pair's strength)")
        if self.hysteresis > self.empty_threshold:
            broken.append(f"hysteresis {self.hysteresis!r} > empty_threshold {self.empty_threshold!r}")
        if self.empty_threshold + self.hysteresis >= CHECKER_MIN:
            broken.append(
                f"empty_threshold + hysteresis {self.empty_threshold + self.hysteresis!r} >= {CHECKER_MIN} "
                "(a lone checker's least field)"
            )
        return tuple(broken)

    def encode(self) -> bytes:
        return (
            bytes([self.debounce_scans, self.report_mode])
            + _u16(self.heartbeat_ms)
            + _u16(self.empty_threshold)
            + _u16(self.hysteresis)
            + _u16(self.polarity_margin)
        )

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Config:
        c = _Cursor(payload, "CONFIG")
        return _build(cls, c, strict, c.u8(), c.u8(), c.u16(), c.u16(), c.u16(), c.u16())


@dataclass(frozen=True, slots=True)
class Calibrate:
    """CALIBRATE (host to board): calibrate the sensors; acknowledged when done."""

    TYPE: ClassVar[int] = 0x22
    kind: CalibrationKind = CalibrationKind.ZERO_EMPTY

    def __post_init__(self) -> None:
        _enum(self, "kind", CalibrationKind)

    def encode(self) -> bytes:
        return bytes([self.kind])

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Calibrate:
        c = _Cursor(payload, "CALIBRATE")
        return _build(cls, c, strict, c.u8())


@dataclass(frozen=True, slots=True)
class Ack:
    """ACK (board to host): the frame with this sequence number and type was carried out."""

    TYPE: ClassVar[int] = 0x30
    seq: int
    msg_type: int

    def __post_init__(self) -> None:
        _uint("Ack", "seq", self.seq, 16)
        _uint("Ack", "msg_type", self.msg_type, 8)

    def encode(self) -> bytes:
        return _u16(self.seq) + bytes([self.msg_type])

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Ack:
        c = _Cursor(payload, "ACK")
        return _build(cls, c, strict, c.u16(), c.u8())


@dataclass(frozen=True, slots=True)
class Nack:
    """NACK (board to host): the frame with this sequence number and type was refused."""

    TYPE: ClassVar[int] = 0x31
    seq: int
    msg_type: int
    reason: NackReason

    def __post_init__(self) -> None:
        _uint("Nack", "seq", self.seq, 16)
        _uint("Nack", "msg_type", self.msg_type, 8)
        _enum(self, "reason", NackReason)

    def encode(self) -> bytes:
        return _u16(self.seq) + bytes([self.msg_type, self.reason])

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> Nack:
        c = _Cursor(payload, "NACK")
        return _build(cls, c, strict, c.u16(), c.u8(), c.u8())


@dataclass(frozen=True, slots=True)
class BoardError:
    """ERROR (board to host): a fault the host should know about, with a short ASCII detail."""

    TYPE: ClassVar[int] = 0x40
    code: ErrorCode
    detail: str = ""

    def __post_init__(self) -> None:
        _enum(self, "code", ErrorCode)
        _text("BoardError", "detail", self.detail)

    def encode(self) -> bytes:
        return bytes([self.code]) + _text_bytes(self.detail)

    @classmethod
    def decode(cls, payload: bytes, *, strict: bool = True) -> BoardError:
        c = _Cursor(payload, "ERROR")
        code = c.u8()
        return _build(cls, c, strict, code, c.text())


Message = Hello | HelloReply | Snapshot | Lift | Put | Button | LedFrame | Config | Calibrate | Ack | Nack | BoardError

MESSAGE_TYPES: dict[int, type] = {
    cls.TYPE: cls
    for cls in (Hello, HelloReply, Snapshot, Lift, Put, Button, LedFrame, Config, Calibrate, Ack, Nack, BoardError)
}


# ---------------------------------------------------------------- frames


def encode_frame(msg: Message, seq: int, *, version: tuple[int, int] = PROTOCOL_VERSION) -> bytes:
    """The wire bytes of ``msg`` with sequence number ``seq``: COBS-encoded, ending in 0x00.

    Raises :class:`ProtocolError` if ``seq`` is not a u16, ``msg`` is not a message
    or the frame would exceed ``MAX_FRAME`` bytes.
    """
    _uint("frame", "seq", seq, 16)
    if type(msg) not in MESSAGE_TYPES.values():
        raise ProtocolError(f"not a protocol message: {msg!r}")
    major, minor = version
    return join_frame(major, minor, seq, msg.TYPE, msg.encode(), name=f"{type(msg).__name__} payload")


def decode_raw(raw: RawFrame, *, strict: bool | None = None) -> Message:
    """The message in a raw frame; ``strict`` defaults to "the sender's minor is not newer than ours".

    The version is not checked (a board answers another major itself). Raises
    :class:`ProtocolError` (reason ``"unknown_type"``, ``"length"`` or ``"value"``).
    """
    cls = MESSAGE_TYPES.get(raw.msg_type)
    if cls is None:
        raise ProtocolError(f"unknown message type 0x{raw.msg_type:02x}", reason="unknown_type")
    if strict is None:
        strict = raw.minor <= PROTOCOL_MINOR
    return cls.decode(raw.payload, strict=strict)


def decode_frame(frame: bytes) -> tuple[int, Message]:
    """``(seq, message)`` from one frame's bytes (the trailing 0x00 may be present).

    Raises :class:`ProtocolError` whose ``reason`` says why: ``"too_long"``, ``"cobs"``,
    ``"length"`` (too short, or a payload of the wrong size), ``"crc"``, ``"version"``
    (major version mismatch), ``"unknown_type"`` or ``"value"``.
    """
    raw = split_frame(frame)
    if raw.major != PROTOCOL_MAJOR:
        raise ProtocolError(
            f"protocol major version mismatch: the other side speaks {raw.major}.{raw.minor}, "
            f"this side speaks {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}; update the firmware or the host",
            reason="version",
        )
    if raw.msg_type not in MESSAGE_TYPES:
        raise ProtocolError(
            f"unknown message type 0x{raw.msg_type:02x} in frame seq={raw.seq} payload={raw.payload[:32]!r}",
            reason="unknown_type",
        )
    return raw.seq, decode_raw(raw)


class FrameReader(RawFrameReader):
    """Turns arbitrary chunks of a byte stream into ``(seq, message)`` pairs: what a host reads with.

    As :class:`~firmware_bridge.framing.RawFrameReader`, and a frame of another major
    version, an unknown type or a bad payload is counted and skipped too. Never raises
    on bad input.

    >>> reader = FrameReader()
    >>> wire = b"junk\\x00" + encode_frame(Hello(), seq=1)
    >>> reader.feed(wire[:5]), reader.feed(wire[5:9]), reader.feed(wire[9:])
    ([], [], [(1, Hello(major=1, minor=0))])
    >>> reader.errors, reader.last_error.reason
    (1, 'cobs')
    """

    decode = staticmethod(decode_frame)
