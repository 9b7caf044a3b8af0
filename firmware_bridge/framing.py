"""The byte layer of ``hardware/PROTOCOL.md``: COBS, CRC-16 and the frame header.

Owns the frame sizes, :class:`ProtocolError`, :func:`join_frame` (header, payload and
CRC to wire bytes), :func:`split_frame` (wire bytes to a :class:`RawFrame`, checked for
COBS, length and CRC only) and :class:`RawFrameReader`. It knows no message type:
:mod:`firmware_bridge.protocol` builds on it. Pure: stdlib and ``board_rules.errors``.

>>> raw = split_frame(join_frame(1, 0, 42, 0x30, bytes([7, 0, 0x20])))
>>> raw.seq, raw.msg_type, raw.payload
(42, 48, b'\\x07\\x00 ')
"""

from __future__ import annotations

from dataclasses import dataclass

from board_rules.errors import TavliError

__all__ = [
    "HEADER_SIZE",
    "CRC_SIZE",
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "MAX_ENCODED",
    "ProtocolError",
    "cobs_encode",
    "cobs_decode",
    "crc16_ccitt_false",
    "join_frame",
    "RawFrame",
    "split_frame",
    "RawFrameReader",
]

HEADER_SIZE = 5  # major u8, minor u8, seq u16 LE, type u8
CRC_SIZE = 2
MAX_FRAME = 512  # decoded bytes: header + payload + CRC
MAX_PAYLOAD = MAX_FRAME - HEADER_SIZE - CRC_SIZE  # 505
MAX_ENCODED = MAX_FRAME + MAX_FRAME // 254 + 1  # 515: COBS bytes, delimiter not counted


class ProtocolError(TavliError, ValueError):
    """A frame or message that breaks ``hardware/PROTOCOL.md``.

    ``reason`` is one of ``"cobs"``, ``"too_long"``, ``"crc"``, ``"unknown_type"``,
    ``"length"``, ``"version"``, ``"value"``.
    """

    def __init__(self, message: str, reason: str = "value") -> None:
        super().__init__(message)
        self.reason = reason


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data``: the result contains no 0x00 byte and no delimiter.

    >>> cobs_encode(b"\\x11\\x00\\x22")
    b'\\x02\\x11\\x02"'
    """
    out = bytearray()
    for block in bytes(data).split(b"\x00"):
        while len(block) >= 254:
            out.append(0xFF)
            out += block[:254]
            block = block[254:]
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Undo :func:`cobs_encode` (``data`` without its 0x00 delimiter).

    Raises :class:`ProtocolError` (reason ``"cobs"``) on empty input, a zero byte
    or a block that runs past the end.

    >>> cobs_decode(b'\\x02\\x11\\x02"')
    b'\\x11\\x00"'
    """
    data = bytes(data)
    if not data:
        raise ProtocolError("bad COBS: empty frame", reason="cobs")
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ProtocolError(f"bad COBS: zero byte at offset {i} in {data[:32]!r}", reason="cobs")
        end = i + code
        if end > n:
            raise ProtocolError(
                f"bad COBS: block at offset {i} needs {code - 1} bytes, only {n - i - 1} left in {data[:32]!r}",
                reason="cobs",
            )
        block = data[i + 1 : end]
        if 0 in block:
            raise ProtocolError(f"bad COBS: zero byte inside block at offset {i} in {data[:32]!r}", reason="cobs")
        out += block
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, xorout 0.

    >>> hex(crc16_ccitt_false(b"123456789"))
    '0x29b1'
    """
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def _check_field(name: str, value: object, bits: int) -> None:
    top = (1 << bits) - 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ProtocolError(f"frame.{name} must be an integer in 0..{top}, not {value!r}")


def join_frame(major: int, minor: int, seq: int, msg_type: int, payload: bytes, *, name: str = "payload") -> bytes:
    """The wire bytes of one frame: header, ``payload`` and CRC, COBS-encoded, ending in 0x00.

    Raises :class:`ProtocolError` if a header field is out of range, or (reason
    ``"too_long"``) if the payload exceeds ``MAX_PAYLOAD``; ``name`` names the payload
    in that message.
    """
    _check_field("seq", seq, 16)
    _check_field("major", major, 8)
    _check_field("minor", minor, 8)
    _check_field("msg_type", msg_type, 8)
    payload = bytes(payload)
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"{name} of {len(payload)} bytes exceeds {MAX_PAYLOAD}", "too_long")
    body = bytes([major, minor]) + seq.to_bytes(2, "little") + bytes([msg_type]) + payload
    body += crc16_ccitt_false(body).to_bytes(2, "little")
    return cobs_encode(body) + b"\x00"


@dataclass(frozen=True, slots=True)
class RawFrame:
    """A frame whose COBS, length and CRC are good, not yet checked for version, type or payload.

    What a board works from: it answers a HELLO of another major version, an unknown
    type or a payload of the wrong size (PROTOCOL.md rules 2 and 6, the NACK reasons).
    :func:`firmware_bridge.protocol.decode_raw` makes it a message.
    """

    major: int
    minor: int
    seq: int
    msg_type: int
    payload: bytes


def split_frame(frame: bytes) -> RawFrame:
    """The header and payload of one frame's bytes (the trailing 0x00 may be present).

    Checks COBS, the length and the CRC only. Raises :class:`ProtocolError` whose
    ``reason`` is ``"too_long"``, ``"cobs"``, ``"length"`` (shorter than header and
    CRC) or ``"crc"``.
    """
    frame = bytes(frame)
    if frame.endswith(b"\x00"):
        frame = frame[:-1]
    if len(frame) > MAX_ENCODED:
        raise ProtocolError(f"frame of {len(frame)} encoded bytes exceeds {MAX_ENCODED}", reason="too_long")
    body = cobs_decode(frame)
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(body)} bytes exceeds {MAX_FRAME}", reason="too_long")
    if len(body) < HEADER_SIZE + CRC_SIZE:
        raise ProtocolError(
            f"frame {body!r} is too short: header and CRC need {HEADER_SIZE + CRC_SIZE} bytes", reason="length"
        )
    wire_crc = int.from_bytes(body[-2:], "little")
    crc = crc16_ccitt_false(body[:-2])
    if crc != wire_crc:
        raise ProtocolError(
            f"CRC mismatch: frame says 0x{wire_crc:04x}, computed 0x{crc:04x} over {body[:-2][:32]!r}", reason="crc"
        )
    return RawFrame(body[0], body[1], int.from_bytes(body[2:4], "little"), body[4], body[HEADER_SIZE:-2])


class RawFrameReader:
    """Turns arbitrary chunks of a byte stream into :class:`RawFrame` values; what a board reads with.

    Splits on 0x00; counts (``errors``, ``last_error``) and skips every frame that does
    not split, garbage before the first delimiter and runs of over ``MAX_ENCODED`` bytes
    without one. Never raises on bad input.

    >>> reader = RawFrameReader()
    >>> reader.feed(b"junk\\x00" + join_frame(2, 0, 3, 0x01, b"\\x02\\x00"))
    [RawFrame(major=2, minor=0, seq=3, msg_type=1, payload=b'\\x02\\x00')]
    >>> reader.errors, reader.last_error.reason
    (1, 'cobs')
    """

    decode = staticmethod(split_frame)  # what one delimited frame becomes; a subclass may decode further

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._discarding = False
        self.errors = 0
        self.frames = 0
        self.last_error: ProtocolError | None = None

    def feed(self, data: bytes) -> list:
        """The frames completed by ``data``, in order."""
        data = bytes(data)
        out: list = []
        start = 0
        while True:
            end = data.find(0, start)
            if end < 0:
                self._append(data[start:])
                return out
            self._append(data[start:end])
            self._finish(out)
            start = end + 1

    def _append(self, chunk: bytes) -> None:
        if self._discarding or not chunk:
            return
        self._buffer += chunk
        if len(self._buffer) > MAX_ENCODED:
            self._fail(ProtocolError(f"no delimiter within {MAX_ENCODED} bytes: frame too long", reason="too_long"))
            self._buffer.clear()
            self._discarding = True

    def _finish(self, out: list) -> None:
        if self._discarding:
            self._discarding = False
            return
        if not self._buffer:
            return
        frame = bytes(self._buffer)
        self._buffer.clear()
        try:
            out.append(self.decode(frame))
        except ProtocolError as exc:
            self._fail(exc)
        else:
            self.frames += 1

    def _fail(self, exc: ProtocolError) -> None:
        self.errors += 1
        self.last_error = exc
