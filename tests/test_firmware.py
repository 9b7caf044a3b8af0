"""Tests for the board firmware (hardware/firmware/): its portable C against the Python codec, and the built
ATmega2560 image on simavr against the host link.

Three layers, all built through ``make -C hardware/firmware`` into its git-ignored ``build/``:

* the portable logic (COBS, CRC, frames, debounce, protocol, LEDs) compiled with the host's gcc and loaded
  through ctypes: every vector comes from ``firmware_bridge.protocol`` and the C side must produce and accept
  the identical bytes; plus the C unit tests (``make host-test``, under AddressSanitizer);
* the AVR image: flash and RAM use from avr-size;
* end to end: ``sim/simboard`` runs the .elf in simavr with its UART on a pseudo-terminal; ``BoardLink`` opens
  that as it would the real board while the test places and lifts checkers through the harness and reads the
  LED colours it decodes from the data pin's edges.

Without the toolchain (avr-gcc, avr-libc, simavr headers) the tests skip, unless TAVLI_REQUIRE_FIRMWARE=1
(CI), where they fail.
"""

from __future__ import annotations

import ctypes
import os
import queue
import random
import re
import shutil
import subprocess
import threading
import time
import zlib
from pathlib import Path

import pytest

from firmware_bridge.link import BoardLink, LinkEvent
from firmware_bridge.protocol import (
    Ack,
    Area,
    BoardError,
    Button,
    Calibrate,
    CalibrationKind,
    Config,
    ErrorCode,
    FrameReader,
    Hello,
    HelloReply,
    Led,
    LedFrame,
    Lift,
    Nack,
    NackReason,
    ProtocolError,
    Put,
    ReportMode,
    SlotReading,
    SlotState,
    Snapshot,
    cobs_decode,
    cobs_encode,
    crc16_ccitt_false,
    decode_frame,
    encode_frame,
)
from firmware_bridge.sensing import classify, counts_from_slots
from tests.helpers import first_from

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "hardware" / "firmware"
BUILD = FIRMWARE / "build"
SLOTS = 138
CHANNELS = 144
LEDS = 27
SERIAL = "MEGA-0001"
SCAN_RATE_FLOOR_HZ = 40.0  # the whole board, 138 slots x 4 conversions, in simulated time

# ---------------------------------------------------------------- toolchain


def _missing_tools() -> list[str]:
    missing = [tool for tool in ("make", "gcc", "avr-gcc", "avr-objcopy", "avr-size") if shutil.which(tool) is None]
    for header, package in (
        ("/usr/lib/avr/include/avr/io.h", "avr-libc"),
        ("/usr/include/simavr/sim_avr.h", "libsimavr-dev"),
        ("/usr/include/gelf.h", "libelf-dev"),
    ):
        if not Path(header).exists():
            missing.append(package)
    return missing


def _require_toolchain() -> None:
    missing = _missing_tools()
    if not missing:
        return
    reason = (
        f"firmware toolchain missing: {', '.join(missing)} "
        "(apt-get install gcc-avr avr-libc binutils-avr simavr libsimavr-dev libelf-dev)"
    )
    if os.environ.get("TAVLI_REQUIRE_FIRMWARE") == "1":
        pytest.fail(reason + "; TAVLI_REQUIRE_FIRMWARE=1 requires it")
    pytest.skip(reason)


def _make(*targets: str) -> str:
    _require_toolchain()
    proc = subprocess.run(
        ["make", "-C", str(FIRMWARE), "-j2", *targets],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.fail(f"make {' '.join(targets)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


# ---------------------------------------------------------------- the portable logic through ctypes


class Firmware:
    """The host build of board.c and the codec (host/hal_host.c's fw_* functions)."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        u8p = ctypes.POINTER(ctypes.c_uint8)
        sig = {
            "fw_reset": (None, [ctypes.c_int]),
            "fw_set_tx_limit": (None, [ctypes.c_uint32]),
            "fw_set_rx_lost": (None, [ctypes.c_uint16]),
            "fw_rx": (None, [u8p, ctypes.c_uint32, ctypes.c_uint32]),
            "fw_scan_raw": (None, [ctypes.POINTER(ctypes.c_uint16), ctypes.c_uint32]),
            "fw_scan_fields": (
                None,
                [ctypes.POINTER(ctypes.c_int16), ctypes.POINTER(ctypes.c_int16), ctypes.c_uint32],
            ),
            "fw_sum_for_field": (ctypes.c_uint16, [ctypes.c_int32]),
            "fw_poll": (None, [ctypes.c_uint32]),
            "fw_tx_take": (ctypes.c_uint32, [u8p, ctypes.c_uint32]),
            "fw_led_take": (ctypes.c_uint32, [u8p, ctypes.POINTER(ctypes.c_uint16)]),
            "fw_corrupt": (ctypes.c_uint32, []),
            "fw_zero": (ctypes.c_int16, [ctypes.c_uint16]),
            "fw_ee_valid": (ctypes.c_int, []),
            "fw_cobs_encode": (ctypes.c_uint32, [u8p, ctypes.c_uint32, u8p]),
            "fw_cobs_decode": (ctypes.c_int, [u8p, ctypes.c_uint32, u8p]),
            "fw_crc16": (ctypes.c_uint16, [u8p, ctypes.c_uint32]),
            "fw_crc32": (ctypes.c_uint32, [u8p, ctypes.c_uint32]),
            "fw_encode_frame": (
                ctypes.c_uint32,
                [ctypes.c_uint16, ctypes.c_uint8, u8p, ctypes.c_uint32, u8p],
            ),
            "fw_decode_frame": (
                ctypes.c_int,
                [u8p, ctypes.c_uint32, u8p, u8p, ctypes.POINTER(ctypes.c_uint32)],
            ),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib
        self.now = 0
        self.fields = [0] * SLOTS
        self.bias = [0] * SLOTS

    @staticmethod
    def _buf(data: bytes):
        return (ctypes.c_uint8 * max(1, len(data))).from_buffer_copy(bytes(data) or b"\x00")

    # codec
    def cobs_encode(self, data: bytes) -> bytes:
        out = (ctypes.c_uint8 * (len(data) + len(data) // 254 + 2))()
        n = self.lib.fw_cobs_encode(self._buf(data), len(data), out)
        return bytes(out[:n])

    def cobs_decode(self, data: bytes) -> bytes | None:
        out = (ctypes.c_uint8 * (len(data) + 2))()
        n = self.lib.fw_cobs_decode(self._buf(data), len(data), out)
        return None if n < 0 else bytes(out[:n])

    def crc16(self, data: bytes) -> int:
        return self.lib.fw_crc16(self._buf(data), len(data))

    def crc32(self, data: bytes) -> int:
        return self.lib.fw_crc32(self._buf(data), len(data))

    def encode_frame(self, seq: int, msg_type: int, payload: bytes) -> bytes:
        out = (ctypes.c_uint8 * 600)()
        n = self.lib.fw_encode_frame(seq, msg_type, self._buf(payload), len(payload), out)
        return bytes(out[:n])

    def decode_frame(self, wire: bytes):
        """(status, header bytes, payload) for one frame without its delimiter."""
        header = (ctypes.c_uint8 * 5)()
        payload = (ctypes.c_uint8 * 600)()
        length = ctypes.c_uint32(0)
        status = self.lib.fw_decode_frame(self._buf(wire), len(wire), header, payload, ctypes.byref(length))
        return status, bytes(header), bytes(payload[: length.value])

    # the board
    def reset(self, keep_eeprom: bool = False) -> None:
        self.lib.fw_reset(1 if keep_eeprom else 0)
        self.lib.fw_set_tx_limit(1023)
        self.now = 0
        self.fields = [0] * SLOTS
        self.bias = [0] * SLOTS

    def send(self, data: bytes) -> list:
        self.lib.fw_rx(self._buf(data), len(data), self.now)
        return self.take()

    def command(self, msg, seq: int, version=(1, 0)) -> list:
        return self.send(b"\x00" + encode_frame(msg, seq, version=version))

    def scan(self, n: int = 1, step_ms: int = 17) -> list:
        fields = (ctypes.c_int16 * SLOTS)(*self.fields)
        bias = (ctypes.c_int16 * SLOTS)(*self.bias)
        for _ in range(n):
            self.now += step_ms
            self.lib.fw_scan_fields(fields, bias, self.now)
            self.lib.fw_poll(self.now)
        return self.take()

    def scan_raw(self, sums: list[int]) -> list:
        self.now += 17
        self.lib.fw_scan_raw((ctypes.c_uint16 * CHANNELS)(*sums), self.now)
        self.lib.fw_poll(self.now)
        return self.take()

    def advance(self, ms: int) -> list:
        self.now += ms
        self.lib.fw_poll(self.now)
        return self.take()

    def raw_output(self) -> bytes:
        out = (ctypes.c_uint8 * 65536)()
        n = self.lib.fw_tx_take(out, len(out))
        return bytes(out[:n])

    def take(self) -> list:
        """The board's frames since the last call, decoded by the Python codec; each must re-encode identically."""
        wire = self.raw_output()
        frames = []
        for chunk in wire.split(b"\x00")[:-1]:
            seq, msg = decode_frame(chunk)
            assert encode_frame(msg, seq) == chunk + b"\x00", f"{msg!r} is not byte-identical to the Python codec"
            frames.append((seq, msg))
        assert not wire or wire.endswith(b"\x00")
        return frames

    def leds(self) -> tuple[int, bytes]:
        out = (ctypes.c_uint8 * 400)()
        n = ctypes.c_uint16(0)
        writes = self.lib.fw_led_take(out, ctypes.byref(n))
        return writes, bytes(out[: n.value])

    def hello(self, seq: int = 1) -> list:
        self.scan()
        return self.command(Hello(), seq)


@pytest.fixture(scope="module")
def fw() -> Firmware:
    _make("host-lib")
    firmware = Firmware(BUILD / "host" / "libtavlifw.so")
    firmware.reset()
    return firmware


@pytest.fixture
def board(fw: Firmware) -> Firmware:
    fw.reset()
    return fw


def msgs(frames) -> list:
    return [msg for _seq, msg in frames]


# ---------------------------------------------------------------- C unit tests


def test_c_unit_tests_pass_under_address_sanitizer():
    out = _make("host-test")
    assert re.search(r"\d+ checks, 0 failed", out), out


# ---------------------------------------------------------------- codec vectors from the Python codec


def _vectors() -> list[bytes]:
    rng = random.Random(6)
    vectors = [b"", b"\x00", b"\x00\x00", b"\x11\x00\x22", b"123456789", bytes(range(256))]
    for n in (1, 253, 254, 255, 256, 507, 508, 509, 512):
        vectors.append(bytes([0x5A]) * n)
        vectors.append(bytes([0x5A]) * n + b"\x00")
        vectors.append(b"\x00" + bytes([0x5A]) * n)
    for _ in range(200):
        n = rng.randrange(0, 520)
        zero_rate = rng.choice((0.0, 0.01, 0.3))
        vectors.append(bytes(0 if rng.random() < zero_rate else rng.randrange(1, 256) for _ in range(n)))
    return vectors


def test_crc16_and_crc32_match_the_python_codec(fw):
    assert fw.crc16(b"123456789") == 0x29B1
    assert fw.crc32(b"123456789") == 0xCBF43926
    for data in _vectors():
        assert fw.crc16(data) == crc16_ccitt_false(data)
        assert fw.crc32(data) == zlib.crc32(data)


def test_cobs_encoding_is_byte_identical_and_round_trips(fw):
    for data in _vectors():
        encoded = cobs_encode(data)
        assert fw.cobs_encode(data) == encoded, data[:20]
        assert fw.cobs_decode(encoded) == data


def test_cobs_decoder_accepts_and_refuses_what_the_python_decoder_does(fw):
    rng = random.Random(7)
    cases = [b"", b"\x01", b"\x02", b"\x05\x11\x22", b"\xff" + b"\x33" * 254 + b"\x01", b"\x03\x00\x01"]
    for _ in range(300):  # short codes, so blocks often end inside the data, and a few zeros
        n = rng.randrange(1, 40)
        cases.append(bytes(rng.randrange(0, 256) if rng.random() < 0.1 else rng.randrange(1, 8) for _ in range(n)))
    for data in cases:
        try:
            expected = cobs_decode(data)
        except ProtocolError:
            expected = None
        assert fw.cobs_decode(data) == expected, data


def _one_of_each() -> list:
    readings = tuple(SlotReading(SlotState(i % 4), (i * 97) % 2300 if i % 4 else 0) for i in range(SLOTS))
    return [
        Hello(),
        HelloReply(reply_to=513, serial=SERIAL, firmware=(1, 0, 0), slots_per_point=5, bar_slots=8, tray_slots=5),
        Snapshot(123456789, 5, 8, 5, readings),
        Lift(Area.POINT, 24, 4, SlotState.BLACK, 0xFFFFFFFF),
        Put(Area.OFF_BLACK, 0, 2, SlotState.UNCERTAIN, 99),
        Button(3, True, 77),
        LedFrame(tuple(Led(i, 255 - i, i * 9 % 256, 0x0F if i % 2 else 0xFF) for i in range(LEDS))),
        LedFrame(tuple(Led(1, 2, 3) for _ in range(126))),
        Config(5, ReportMode.SNAPSHOTS, 1000, 200, 40, 60),
        Calibrate(CalibrationKind.FACTORY_DEFAULTS),
        Ack(7, LedFrame.TYPE),
        Nack(0xFFFF, Config.TYPE, NackReason.BAD_VALUE),
        BoardError(ErrorCode.CORRUPT_FRAMES, "12 corrupt frames received"),
    ]


@pytest.mark.parametrize("seq", [0, 42, 0x00FF, 0xFF00, 0xFFFF])
def test_every_message_type_frames_identically_in_c_and_python(fw, seq):
    for msg in _one_of_each():
        wire = encode_frame(msg, seq)
        assert fw.encode_frame(seq, msg.TYPE, msg.encode()) == wire, msg
        status, header, payload = fw.decode_frame(wire[:-1])
        assert status == 0
        assert header == bytes([1, 0, seq & 0xFF, seq >> 8, msg.TYPE])
        assert payload == msg.encode()


def test_the_protocol_documents_example_frame(fw):
    wire = bytes.fromhex("02 01 02 2A 03 30 07 04 20 FC 48 00")
    assert fw.encode_frame(42, Ack.TYPE, Ack(7, LedFrame.TYPE).encode()) == wire


def test_c_frame_decoder_rejects_corrupt_frames_for_the_python_reasons(fw):
    rng = random.Random(8)
    reasons = {-1: "cobs", -2: "too_long", -3: "length", -4: "crc"}
    frames = [encode_frame(msg, 9)[:-1] for msg in _one_of_each()]
    cases = []
    for frame in frames:
        for _ in range(20):
            bad = bytearray(frame)
            i = rng.randrange(len(bad))
            bad[i] ^= rng.randrange(1, 256)
            if 0 not in bad:
                cases.append(bytes(bad))
        cases.append(frame[: rng.randrange(1, len(frame))])
    cases += [b"\x01", b"\x02\x01", cobs_encode(b"\x01\x00\x01\x00"), b"\x07" * 600, cobs_encode(bytes(513))]
    for case in cases:
        status, _header, _payload = fw.decode_frame(case)
        try:
            decode_frame(case)
            expected = 0
        except ProtocolError as exc:
            expected = exc.reason
        if expected == 0 or expected in ("version", "unknown_type", "length", "value") and status == 0:
            # header, CRC and COBS are fine: the board's handler checks version, type and payload length
            assert status == 0 or reasons.get(status) == expected, case
        else:
            assert reasons.get(status) == expected, (case, status, expected)


# ---------------------------------------------------------------- the board's conversation (portable logic)


def _hello_reply(seq: int) -> HelloReply:
    return HelloReply(
        reply_to=seq, serial=SERIAL, firmware=(1, 0, 0), slots_per_point=5, bar_slots=8, tray_slots=5, led_count=LEDS
    )


def test_board_says_nothing_before_hello_and_answers_commands_not_ready(board):
    assert board.scan(100) == []
    assert board.advance(3000) == []
    frames = board.command(LedFrame(tuple(Led() for _ in range(LEDS))), seq=5)
    assert msgs(frames) == [Nack(5, LedFrame.TYPE, NackReason.NOT_READY)]


def test_hello_gets_the_reply_then_a_snapshot_of_every_slot(board):
    board.fields[0] = 1200
    board.fields[7] = -1700
    frames = board.hello(seq=77)
    assert [type(m) for m in msgs(frames)] == [HelloReply, Snapshot]
    assert frames[0] == (0, _hello_reply(77))
    snap = frames[1][1]
    assert snap.timestamp_ms == board.now
    assert [r.state for r in snap.readings[:8]] == [1, 0, 0, 0, 0, 0, 0, 2]
    assert abs(snap.readings[0].strength - 1200) <= 3 and abs(snap.readings[7].strength - 1700) <= 3


def test_snapshot_states_match_the_python_sensing_model(board):
    rng = random.Random(9)
    levels = (0, 0, 1200, -1200, 1700, -2000, 2200, 700, -700, 40, -80)
    fields = [rng.choice(levels) + rng.randint(-60, 60) for _ in range(SLOTS)]
    board.fields = fields
    board.hello()
    board.scan(3)
    snap = msgs(board.advance(1000))[0]
    for field, reading in zip(fields, snap.readings):
        assert reading.state == classify(field).state, field
        assert abs(reading.strength - abs(field)) <= 3
    assert snap.state_hash == zlib.crc32(bytes(r.state for r in snap.readings))


def test_heartbeat_snapshots_follow_the_configured_period(board):
    board.hello()
    assert board.advance(499) == []
    assert [type(m) for m in msgs(board.advance(1))] == [Snapshot]
    frames = board.command(Config(heartbeat_ms=200), seq=2)
    assert msgs(frames)[0] == Ack(2, Config.TYPE) and isinstance(msgs(frames)[1], Snapshot)
    assert board.advance(199) == []
    assert [type(m) for m in msgs(board.advance(1))] == [Snapshot]


def test_a_change_counts_after_debounce_scans_equal_scans(board):
    board.hello()
    board.fields[12] = 1200  # point 3 slot 2
    assert board.scan(2) == []
    frames = msgs(board.scan(1))
    assert frames[0] == Put(Area.POINT, 3, 2, SlotState.WHITE, board.now)
    assert isinstance(frames[1], Snapshot) and frames[1].readings[12].state == SlotState.WHITE
    board.command(Config(debounce_scans=5), seq=3)
    board.fields[12] = 0
    assert board.scan(4) == []
    assert msgs(board.scan(1))[0] == Lift(Area.POINT, 3, 2, SlotState.WHITE, board.now)


def test_a_transient_shorter_than_the_debounce_is_ignored(board):
    board.hello()
    board.fields[50] = -1200
    assert board.scan(2) == []
    board.fields[50] = 0
    assert board.scan(10) == []


def test_events_name_area_number_slot_and_stack_changes(board):
    board.hello()
    cases = [
        (4, 1200, Put(Area.POINT, 1, 4, SlotState.WHITE, 0)),
        (4, 1700, Put(Area.POINT, 1, 4, SlotState.WHITE, 0)),  # a second checker on the same slot
        (4, 1200, Lift(Area.POINT, 1, 4, SlotState.WHITE, 0)),
        (4, 700, Put(Area.POINT, 1, 4, SlotState.UNCERTAIN, 0)),  # pinned under a checker of the other colour
        (125, -1200, Put(Area.BAR, 0, 5, SlotState.BLACK, 0)),
        (129, 1200, Put(Area.OFF_WHITE, 0, 1, SlotState.WHITE, 0)),
        (137, -1200, Put(Area.OFF_BLACK, 0, 4, SlotState.BLACK, 0)),
        (137, 0, Lift(Area.OFF_BLACK, 0, 4, SlotState.BLACK, 0)),
    ]
    for slot, field, expected in cases:
        board.fields[slot] = field
        frames = msgs(board.scan(3))
        assert len(frames) == 2 and isinstance(frames[1], Snapshot), frames
        assert frames[0] == type(expected)(expected.area, expected.number, expected.slot, expected.state, board.now)


def test_report_mode_0_sends_snapshots_only(board):
    board.hello()
    board.command(Config(report_mode=ReportMode.SNAPSHOTS), seq=4)
    board.fields[0] = 1200
    assert [type(m) for m in msgs(board.scan(3))] == [Snapshot]


def test_hysteresis_around_the_empty_threshold(board):
    board.hello()
    board.fields[3] = 170  # above 150 but below 150 + 30: stays EMPTY
    assert board.scan(5) == []
    board.fields[3] = 190
    assert msgs(board.scan(3))[1].readings[3].state == SlotState.UNCERTAIN
    board.fields[3] = 130  # below 150 but above 150 - 30: stays UNCERTAIN
    assert board.scan(5) == []


def test_config_out_of_range_is_nacked_and_changes_nothing(board):
    board.hello()
    bad = [
        Config(debounce_scans=1, heartbeat_ms=100, empty_threshold=700),
        Config(polarity_margin=200),
        Config(hysteresis=151),
    ]
    for seq, cfg in enumerate(bad, start=10):
        assert msgs(board.command(cfg, seq)) == [Nack(seq, Config.TYPE, NackReason.BAD_VALUE)]
    raw = [  # debounce 0, report mode 2, heartbeat 50 ms
        bytes([0, 1, 0xF4, 1, 150, 0, 30, 0, 50, 0]),
        bytes([3, 2, 0xF4, 1, 150, 0, 30, 0, 50, 0]),
        bytes([3, 1, 50, 0, 150, 0, 30, 0, 50, 0]),
    ]
    for seq, payload in enumerate(raw, start=20):
        frame = _raw_frame(seq, Config.TYPE, payload)
        assert msgs(board.send(frame)) == [Nack(seq, Config.TYPE, NackReason.BAD_VALUE)]
    assert board.advance(499) == []  # still the default heartbeat


def _raw_frame(seq: int, msg_type: int, payload: bytes, version=(1, 0)) -> bytes:
    body = bytes([version[0], version[1], seq & 0xFF, seq >> 8, msg_type]) + payload
    body += crc16_ccitt_false(body).to_bytes(2, "little")
    return b"\x00" + cobs_encode(body) + b"\x00"


def test_receive_overflows_are_reported(board):
    board.hello()
    board.lib.fw_set_rx_lost(17)
    errors = [m for m in msgs(board.advance(1)) if isinstance(m, BoardError)]
    assert errors == [BoardError(ErrorCode.RX_OVERFLOW, "17 received bytes lost")]
    assert [m for m in msgs(board.advance(500)) if isinstance(m, BoardError)] == []


def test_wrong_lengths_unknown_types_and_versions_are_answered(board):
    board.hello()
    assert msgs(board.send(_raw_frame(30, Config.TYPE, bytes(9)))) == [Nack(30, Config.TYPE, NackReason.BAD_LENGTH)]
    assert msgs(board.send(_raw_frame(31, 0x55, b"xyz"))) == [Nack(31, 0x55, NackReason.UNKNOWN_TYPE)]
    assert msgs(board.command(Ack(1, 2), 32)) == [Nack(32, Ack.TYPE, NackReason.UNKNOWN_TYPE)]
    # a newer minor may append fields
    longer = _raw_frame(33, Config.TYPE, Config().encode() + b"\x01", version=(1, 1))
    assert msgs(board.send(longer))[0] == Ack(33, Config.TYPE)
    # HELLO from another major: NACK, the frozen HELLO_REPLY, and nothing else until a good HELLO
    frames = board.send(_raw_frame(34, Hello.TYPE, bytes([2, 0]), version=(2, 0)))
    assert msgs(frames) == [Nack(34, Hello.TYPE, NackReason.VERSION_MISMATCH), _hello_reply(34)]
    assert board.advance(2000) == []
    assert msgs(board.command(Config(), 35)) == [Nack(35, Config.TYPE, NackReason.NOT_READY)]
    assert [type(m) for m in msgs(board.command(Hello(), 36))] == [HelloReply, Snapshot]


def test_led_frame_is_shown_then_acked_and_is_idempotent(board):
    board.hello()
    frame = LedFrame(tuple(Led(i * 3, 100 - i, i * 7, 0xFF) for i in range(LEDS)))
    writes_before, _ = board.leds()
    for seq in (40, 40, 41):
        assert msgs(board.command(frame, seq)) == [Ack(seq, LedFrame.TYPE)]
    writes, grb = board.leds()
    assert writes == writes_before + 3
    assert grb == b"".join(bytes([led.green, led.red, led.blue]) for led in frame.leds)
    assert msgs(board.command(LedFrame(frame.leds[:26]), 42)) == [Nack(42, LedFrame.TYPE, NackReason.BAD_VALUE)]


def test_blink_masks_follow_the_board_clock_phases(board):
    board.hello()
    board.now = 1000  # phase 0
    steady = tuple(Led(0, 0, 9, 0xFF) for _ in range(LEDS - 2))
    frame = LedFrame((Led(255, 0, 0, 0x0F), Led(0, 255, 0, 0x55)) + steady)
    board.command(frame, 50)
    seen = []
    for phase in range(8):
        board.now = 1000 + 125 * phase
        board.advance(0)
        _, grb = board.leds()
        seen.append((grb[1], grb[3], grb[8]))  # LED 0 red, LED 1 green, LED 2 blue
    assert [s[0] for s in seen] == [255] * 4 + [0] * 4
    assert [s[1] for s in seen] == [255, 0] * 4
    assert [s[2] for s in seen] == [9] * 8


def test_bright_frames_are_scaled_to_the_power_cap(board):
    board.hello()
    board.command(LedFrame(tuple(Led(255, 255, 255) for _ in range(LEDS))), 60)
    _, grb = board.leds()
    assert sum(grb) <= 12750 and len(set(grb)) == 1 and grb[0] > 0


def test_calibration_zeroes_offsets_and_refuses_a_checker(board):
    board.hello()
    board.bias[10] = 400  # a sensor whose quiescent output is 4 mT off
    frames = msgs(board.scan(3))
    assert frames[-1].readings[10].state == SlotState.UNCERTAIN
    assert msgs(board.command(Calibrate(), 70)) == []
    assert msgs(board.command(LedFrame(tuple(Led() for _ in range(LEDS))), 71)) == [
        Nack(71, LedFrame.TYPE, NackReason.BUSY)
    ]
    frames = msgs(board.scan(8))
    assert Ack(70, Calibrate.TYPE) in frames
    assert board.lib.fw_ee_valid() == 1
    lift = next(m for m in msgs(board.scan(3)) if isinstance(m, Lift))
    assert (lift.area, lift.number, lift.slot, lift.state) == (Area.POINT, 3, 0, SlotState.UNCERTAIN)
    board.reset(keep_eeprom=True)  # the offsets survive a reset
    board.bias[10] = 400
    assert msgs(board.hello())[1].readings[10].state == SlotState.EMPTY
    board.fields[20] = 1200
    board.scan(3)
    board.command(Calibrate(), 72)
    frames = msgs(board.scan(8))
    assert isinstance(frames[0], BoardError) and frames[0].code == ErrorCode.CALIBRATION_FAILED
    assert "slot 20" in frames[0].detail
    assert frames[1] == Nack(72, Calibrate.TYPE, NackReason.FAILED)
    assert msgs(board.command(Calibrate(CalibrationKind.FACTORY_DEFAULTS), 73)) == [Ack(73, Calibrate.TYPE)]
    assert board.lib.fw_ee_valid() == 0


def test_garbage_is_counted_skipped_and_reported_once_a_second(board):
    rng = random.Random(10)
    board.hello()
    for _ in range(30):
        garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 700)))
        board.send(garbage)
    board.send(b"\x55" * 2000)  # far past the 516-byte limit without a delimiter
    corrupt = board.lib.fw_corrupt()
    assert corrupt >= 20
    frames = msgs(board.command(Config(), 80))
    assert Ack(80, Config.TYPE) in frames
    errors = [m for m in frames if isinstance(m, BoardError)]
    assert errors and errors[0].code == ErrorCode.CORRUPT_FRAMES
    assert errors[0].detail.startswith(f"{board.lib.fw_corrupt()} corrupt frames")
    board.send(b"\x01\x02\x00")
    assert [m for m in msgs(board.advance(10)) if isinstance(m, BoardError)] == []  # not again within a second
    assert [m.code for m in msgs(board.advance(1000)) if isinstance(m, BoardError)] == [ErrorCode.CORRUPT_FRAMES]


def test_garbage_streams_then_a_hello_always_get_the_reply(board):
    rng = random.Random(11)
    for trial in range(40):
        board.reset()
        board.scan()
        n = rng.randrange(0, 3000)
        stream = bytes(0 if rng.random() < 0.1 else rng.randrange(256) for _ in range(n))
        board.send(stream)
        frames = msgs(board.command(Hello(), trial))
        assert _hello_reply(trial) in frames, trial


def test_a_full_transmit_queue_defers_the_snapshot_without_blocking(board):
    board.hello()
    board.lib.fw_set_tx_limit(100)  # the host stopped reading: room for small frames only
    board.fields[0] = 1200
    frames = msgs(board.scan(3))
    assert [type(m) for m in frames] == [Put]
    assert board.scan(5) == []
    board.lib.fw_set_tx_limit(1023)
    frames = msgs(board.scan(1))
    assert [type(m) for m in frames] == [Snapshot] and frames[0].readings[0].state == SlotState.WHITE


def test_sensor_faults_are_reported(board):
    board.hello()
    sums = [board.lib.fw_sum_for_field(0)] * SLOTS + [0] * 6
    sums[140] = 1000  # a grounded spare channel reads 0.8 V: a stuck select line
    errors = [m for m in msgs(board.scan_raw(sums)) if isinstance(m, BoardError)]
    assert errors and errors[0].code == ErrorCode.SENSOR_FAULT and "spare channel 140" in errors[0].detail


# ---------------------------------------------------------------- the AVR image


def test_the_image_builds_and_fits_the_atmega2560():
    out = _make("all")
    flash = int(re.search(r"Program:\s+(\d+) bytes", out).group(1))
    ram = int(re.search(r"Data:\s+(\d+) bytes", out).group(1))
    assert flash < 32 * 1024  # of 256 KB (8 KB of it the bootloader's)
    assert ram <= 6 * 1024  # of 8 KB: at least 2 KB stay for the stack
    assert (BUILD / "avr" / "tavli-board.hex").exists()


# ---------------------------------------------------------------- pins, wiring, bill of materials


def _pins_h() -> dict[str, tuple[str, int, str]]:
    text = (FIRMWARE / "pins.h").read_text()
    return {
        name: (port, int(bit), label)
        for name, port, bit, label in re.findall(r"^#define PIN_(\w+) ([A-L]), (\d), (\w+)$", text, re.M)
    }


def _wiring_pins() -> dict[str, tuple[str, int, str]]:
    text = (ROOT / "hardware" / "WIRING.md").read_text()
    rows = re.findall(r"^\| (D\d+|A\d+) \| P([A-L])(\d) \| `(\w+)` \|", text, re.M)
    return {name: (port, int(bit), label) for label, port, bit, name in rows}


def test_pins_h_and_the_wiring_table_agree():
    pins = _pins_h()
    assert len(pins) == 18
    assert _wiring_pins() == pins
    for m in range(9):  # mux m is read on ADC input m, mux 8 on ADC7 with mux 7 (hal_avr.c relies on it)
        assert pins[f"MUX{m}_SIG"][2] == f"A{min(m, 7)}"
    assert [pins[f"MUX_S{k}"][:2] for k in range(4)] == [("A", k) for k in range(4)]


def test_bill_of_materials_matches_the_firmware():
    import csv

    rows = list(csv.DictReader((ROOT / "hardware" / "bom.csv").open()))
    qty = {row["ref"]: int(row["quantity"]) for row in rows}
    parts = " ".join(row["part"] + " " + row["manufacturer_part_number"] for row in rows)
    assert "Arduino Mega 2560" in parts and "ATmega2560" in parts
    assert "Pico" not in parts
    assert qty["H1-H138"] == SLOTS and qty["U2-U10"] == 9 and qty["D1-D27"] == LEDS
    config = (FIRMWARE / "config.h").read_text()
    assert "#define MUX_COUNT 9" in config and "#define LED_COUNT 27" in config


def test_flashing_guide_names_the_real_targets_and_programmer():
    guide = (ROOT / "hardware" / "FLASHING.md").read_text()
    makefile = (FIRMWARE / "Makefile").read_text()
    for needle in ("make -C hardware/firmware", "flash PORT=", "-c wiring", "atmega2560", "tavli-board.hex"):
        assert needle in guide, needle
    assert "-c wiring" in makefile and "-p $(MCU)" in makefile


# ---------------------------------------------------------------- end to end: the .elf on simavr


class Sim:
    """sim/simboard with the firmware: commands in, PTY / OK / LEDS / STATS lines out."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [str(BUILD / "sim" / "simboard"), str(BUILD / "avr" / "tavli-board.elf")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.leds: queue.Queue[str] = queue.Queue()
        self.crash: str | None = None
        threading.Thread(target=self._read, daemon=True).start()
        self.path = self.expect("PTY ", 20).split()[1]

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("CRASHED"):
                self.crash = line.strip()
            (self.leds if line.startswith("LEDS ") else self.lines).put(line.rstrip("\n"))

    def expect(self, prefix: str, timeout: float = 20.0) -> str:
        def wanted(line: str) -> bool:
            if line.startswith(prefix):
                return True
            assert not line.startswith(("ERR", "CRASHED")), line
            return False

        line = first_from(self.lines, wanted, timeout)
        if line is None:
            raise AssertionError(f"simboard printed no {prefix!r} line within {timeout} s")
        return line

    def send(self, command: str) -> None:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def do(self, command: str) -> str:
        self.send(command)
        return self.expect("OK t_ms=")

    def led_frame(self, want, timeout: float = 20.0) -> str:
        line = first_from(self.leds, want, timeout)
        if line is None:
            raise AssertionError("no matching LED frame on the data pin")
        return line

    def close(self) -> None:
        """Stop the harness; raises AssertionError if the simulated CPU crashed on the way."""
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        assert self.crash is None, self.crash


def _link(path: str) -> BoardLink:
    # simulated time runs near real time here, slower on a loaded machine: generous timeouts
    return BoardLink(
        path, lost_after_s=15.0, retry_after_s=1.5, retries=5, hello_timeout_s=5.0, hello_retries=3, config=Config()
    )


def _next(link: BoardLink, kind, timeout: float = 20.0, where=lambda m: True):
    def wanted(msg) -> bool:
        assert not (isinstance(msg, LinkEvent) and msg.kind == "disconnected"), msg
        return isinstance(msg, kind) and where(msg)

    msg = first_from(link.events, wanted, timeout)
    if msg is None:
        raise AssertionError(f"no {kind.__name__} from the simulated board within {timeout} s")
    return msg


@pytest.fixture(scope="module")
def sim():
    _make("all", "sim")
    board = Sim()
    link = _link(board.path).start()
    try:
        yield board, link
    finally:
        link.stop()
        board.close()


def test_sim_handshake_reports_the_boards_capabilities(sim):
    board, link = sim
    hello = link.hello
    assert hello.serial == SERIAL and hello.firmware == (1, 0, 0)
    assert (hello.slots_per_point, hello.bar_slots, hello.tray_slots, hello.led_count) == (5, 8, 5, LEDS)
    assert len(link.state.readings) == SLOTS


def test_sim_snapshot_shows_checkers_placed_through_the_harness(sim):
    board, link = sim
    for slot in range(5):
        board.do(f"place point 6 slot {slot} black")
    board.do("place point 6 slot 0 black")  # the sixth goes on slot 0 again
    for slot in range(2):
        board.do(f"place point 24 slot {slot} white")
    board.do("place bar slot 1 white")
    board.do("place off_black slot 0 black")
    snap = _next(
        link,
        Snapshot,
        where=lambda s: (
            counts_from_slots(s.readings).points[5] == -6
            and counts_from_slots(s.readings).points[23] == 2
            and counts_from_slots(s.readings).bar == (1, 0)
            and counts_from_slots(s.readings).off == (0, 1)
        ),
    )
    counts = counts_from_slots(snap.readings)
    assert counts.uncertain == ()
    assert sum(abs(n) for n in counts.points) == 8


def test_sim_lift_and_place_events_carry_the_board_clock(sim):
    board, link = sim
    board.do("place point 12 slot 0 white")
    first = _next(link, Put, where=lambda m: m.number == 12)
    assert (first.area, first.slot, first.state) == (Area.POINT, 0, SlotState.WHITE)
    board.do("lift point 12 slot 0")
    lift = _next(link, Lift, where=lambda m: m.number == 12)
    assert (lift.area, lift.slot, lift.state) == (Area.POINT, 0, SlotState.WHITE)
    assert lift.timestamp_ms > first.timestamp_ms
    snap = _next(link, Snapshot, where=lambda s: s.timestamp_ms >= lift.timestamp_ms)
    assert snap.point(12)[0].state == SlotState.EMPTY


def test_sim_led_frame_from_the_host_is_decoded_from_the_data_pin(sim):
    board, link = sim
    frame = LedFrame(tuple(Led((i * 37) % 256, (i * 91 + 5) % 256, (255 - i * 9) % 256) for i in range(LEDS)))
    want = " ".join(f"{led.red:02x}{led.green:02x}{led.blue:02x}" for led in frame.leds)
    assert link.send_leds(frame)
    line = board.led_frame(lambda line: line.endswith(want))
    fields = dict(part.split("=") for part in line.split()[1:5])
    assert fields["n"] == str(LEDS) and fields["bad_bits"] == "0"
    assert int(fields["max_gap_ns"]) < 50_000  # interrupts between LEDs never reach the 50 us latch
    blink = LedFrame((Led(0, 0, 200, 0x0F),) + frame.leds[1:])
    assert link.send_leds(blink)
    rest = want.split(" ", 1)[1]
    board.led_frame(lambda line: line.endswith("0000c8 " + rest))
    board.led_frame(lambda line: line.endswith("000000 " + rest))  # phases 4..7: off


def test_sim_board_recovers_after_garbage_bytes(sim):
    board, link = sim
    rng = random.Random(12)
    garbage = bytes(rng.randrange(256) for _ in range(300)) + b"\x42" * 700  # ends without a delimiter
    fd = os.open(board.path, os.O_WRONLY | os.O_NOCTTY)
    try:
        os.write(fd, garbage)
    finally:
        os.close(fd)
    frame = LedFrame(tuple(Led(1, 2, 3) for _ in range(LEDS)))
    assert link.send_leds(frame)  # the first copy may be glued to the garbage; the retry gets through
    error = _next(link, BoardError, where=lambda e: e.code == ErrorCode.CORRUPT_FRAMES)
    assert "corrupt frames" in error.detail
    board.do("place point 2 slot 0 black")
    place = _next(link, Put, where=lambda m: m.number == 2)
    assert place.state == SlotState.BLACK
    assert link.connected


def test_sim_scan_rate_in_simulated_time(sim):
    board, _link_ = sim
    board.send("stats")
    line = board.expect("STATS ")
    stats = dict(part.split("=") for part in line.split()[1:])
    assert int(stats["scans"]) > 50
    assert float(stats["scan_hz"]) >= SCAN_RATE_FLOOR_HZ, line


class RawHost:
    """The host end on the pty with the codec only: for commands BoardLink has no method for."""

    def __init__(self, path: str) -> None:
        import serial

        self.port = serial.serial_for_url(path, baudrate=115200, timeout=0.05)
        self.reader = FrameReader()
        self.backlog: list = []
        self.seq = 0

    def send(self, msg) -> int:
        self.seq += 1
        self.port.write(b"\x00" + encode_frame(msg, self.seq))
        return self.seq

    def wait(self, where, timeout: float = 20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while self.backlog:
                msg = self.backlog.pop(0)
                if where(msg):
                    return msg
            self.backlog += [msg for _seq, msg in self.reader.feed(self.port.read(4096))]
        raise AssertionError(f"no matching frame from the simulated board within {timeout} s")

    def close(self) -> None:
        self.port.close()


def test_sim_calibration_and_sensor_faults_on_the_avr_build():
    _make("all", "sim")
    board = Sim()
    host = RawHost(board.path)
    try:
        board.do("bias 40 400")  # point 9 slot 0's sensor sits 4 mT off
        seq = host.send(Hello())
        host.wait(lambda m: isinstance(m, HelloReply) and m.reply_to == seq)
        host.wait(lambda m: isinstance(m, Snapshot) and m.readings[40].state == SlotState.UNCERTAIN)
        seq = host.send(Calibrate())
        host.wait(lambda m: m == Ack(seq, Calibrate.TYPE))
        host.wait(lambda m: isinstance(m, Snapshot) and m.readings[40].state == SlotState.EMPTY)
        board.do("place point 9 slot 0 white")
        host.wait(lambda m: isinstance(m, Snapshot) and m.readings[40].state == SlotState.WHITE)
        seq = host.send(Calibrate())
        error = host.wait(lambda m: isinstance(m, BoardError))
        assert error.code == ErrorCode.CALIBRATION_FAILED and "slot 40" in error.detail
        host.wait(lambda m: m == Nack(seq, Calibrate.TYPE, NackReason.FAILED))
        board.do("spare 2 800")  # a grounded spare channel reads 0.8 V: a select line is stuck
        fault = host.wait(lambda m: isinstance(m, BoardError) and m.code == ErrorCode.SENSOR_FAULT)
        assert re.fullmatch(r"spare channel 140 reads (79\d|80\d) mV", fault.detail), fault.detail
    finally:
        host.close()
        board.close()
