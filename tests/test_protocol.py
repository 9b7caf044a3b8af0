"""Tests for firmware_bridge.protocol: the pure wire codec of hardware/PROTOCOL.md."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_rules.errors import TavliError
from firmware_bridge.protocol import (
    MAX_ENCODED,
    MAX_FRAME,
    MAX_LEDS,
    MAX_PAYLOAD,
    MESSAGE_TYPES,
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

# ---------------------------------------------------------------- strategies

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
ascii_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@st.composite
def snapshots(draw):
    spp = draw(st.integers(1, 6))
    bar = draw(st.integers(0, 4))
    tray = draw(st.integers(0, 4))
    count = POINTS * spp + bar + 2 * tray
    readings = draw(st.lists(st.builds(SlotReading, st.sampled_from(SlotState), u16), min_size=count, max_size=count))
    return Snapshot(draw(u32), spp, bar, tray, tuple(readings))


@st.composite
def slot_events(draw, cls):
    area = draw(st.sampled_from(Area))
    number = draw(st.integers(1, POINTS)) if area is Area.POINT else 0
    state = draw(st.sampled_from([SlotState.WHITE, SlotState.BLACK, SlotState.UNCERTAIN]))
    return cls(area, number, draw(u8), state, draw(u32))


leds = st.builds(Led, u8, u8, u8, u8)

messages = st.one_of(
    st.builds(Hello, u8, u8),
    st.builds(
        HelloReply,
        reply_to=u16,
        serial=ascii_text.filter(bool),
        firmware=st.tuples(u8, u8, u8),
        slots_per_point=st.integers(1, 6),
        bar_slots=st.integers(0, 4),
        tray_slots=st.integers(0, 4),
        led_count=st.integers(1, MAX_LEDS),
        major=u8,
        minor=u8,
    ),
    snapshots(),
    slot_events(Lift),
    slot_events(Put),
    st.builds(Button, u8, st.booleans(), u32),
    st.builds(LedFrame, st.lists(leds, min_size=1, max_size=MAX_LEDS).map(tuple)),
    st.builds(
        Config,
        st.integers(1, 255),
        st.sampled_from(ReportMode),
        st.integers(100, 1000),
        u16,
        u16,
        u16,
    ),
    st.builds(Calibrate, st.sampled_from(CalibrationKind)),
    st.builds(Ack, u16, u8),
    st.builds(Nack, u16, u8, st.sampled_from(NackReason)),
    st.builds(BoardError, st.sampled_from(ErrorCode), ascii_text),
)


def standard_board_snapshot(timestamp_ms: int = 0) -> Snapshot:
    readings = [SlotReading(SlotState.EMPTY, 3)] * (POINTS * 5 + 4 + 8)
    readings[0] = SlotReading(SlotState.WHITE, 2400)  # point 1, slot 0
    readings[5 * 23] = SlotReading(SlotState.BLACK, 2600)  # point 24, slot 0
    return Snapshot(timestamp_ms, 5, 4, 4, tuple(readings))


# ---------------------------------------------------------------- CRC and COBS


def test_crc16_ccitt_false_check_value():
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert crc16_ccitt_false(b"") == 0xFFFF


def test_cobs_known_vectors():
    assert cobs_encode(b"") == b"\x01"
    assert cobs_encode(b"\x00") == b"\x01\x01"
    assert cobs_encode(b"\x11\x22\x00\x33") == b"\x03\x11\x22\x02\x33"
    block = bytes(range(1, 255))
    assert cobs_encode(block) == b"\xff" + block + b"\x01"
    assert cobs_decode(b"\xff" + block) == block


@given(st.binary(max_size=2 * MAX_FRAME))
def test_cobs_round_trip_never_contains_zero(data):
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert len(encoded) <= len(data) + len(data) // 254 + 1
    assert cobs_decode(encoded) == data


@pytest.mark.parametrize("bad", [b"", b"\x00", b"\x05\x11", b"\x03\x11\x00"])
def test_cobs_decode_refuses_malformed_input(bad):
    with pytest.raises(ProtocolError) as info:
        cobs_decode(bad)
    assert info.value.reason == "cobs"


def test_protocol_error_is_a_tavli_error_and_a_value_error():
    assert issubclass(ProtocolError, TavliError)
    assert issubclass(ProtocolError, ValueError)


# ---------------------------------------------------------------- frames


def test_frame_layout_is_header_payload_crc_little_endian():
    frame = encode_frame(Ack(seq=0x1234, msg_type=0x20), seq=0xBEEF)
    assert frame.endswith(b"\x00") and 0 not in frame[:-1]
    body = cobs_decode(frame[:-1])
    assert body[:5] == bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR, 0xEF, 0xBE, Ack.TYPE])
    assert body[5:-2] == b"\x34\x12\x20"
    assert body[-2:] == crc16_ccitt_false(body[:-2]).to_bytes(2, "little")


def test_type_codes_are_fixed():
    assert {code: cls.__name__ for code, cls in MESSAGE_TYPES.items()} == {
        0x01: "Hello",
        0x02: "HelloReply",
        0x10: "Snapshot",
        0x11: "Lift",
        0x12: "Put",
        0x13: "Button",
        0x20: "LedFrame",
        0x21: "Config",
        0x22: "Calibrate",
        0x30: "Ack",
        0x31: "Nack",
        0x40: "BoardError",
    }


@settings(max_examples=300)
@given(messages, u16)
def test_every_message_round_trips_through_a_frame(msg, seq):
    assert type(msg).decode(msg.encode()) == msg
    frame = encode_frame(msg, seq)
    assert len(frame) <= MAX_ENCODED + 1
    assert decode_frame(frame) == (seq, msg)


def test_led_frame_round_trip():
    frame = LedFrame(tuple(Led(255, 0, 0, 0x0F) if i == 5 else Led() for i in range(27)))
    assert frame.leds[0] == Led(0, 0, 0, 0xFF)
    assert decode_frame(encode_frame(frame, 9)) == (9, frame)
    assert LedFrame.decode(frame.encode()).leds[5] == Led(255, 0, 0, 0x0F)


def test_led_frame_refuses_too_many_leds():
    with pytest.raises(ProtocolError, match="1..126"):
        LedFrame((Led(),) * (MAX_LEDS + 1))


def test_snapshot_carries_state_hash_and_refuses_a_wrong_one():
    snap = standard_board_snapshot(1234)
    assert snap.point(1)[0].state is SlotState.WHITE
    assert snap.point(24)[0].state is SlotState.BLACK
    assert len(snap.bar) == 4 and len(snap.off_white) == 4 and len(snap.off_black) == 4
    payload = bytearray(snap.encode())
    assert int.from_bytes(payload[4:8], "little") == snap.state_hash
    payload[4] ^= 0x01
    with pytest.raises(ProtocolError, match="state hash"):
        Snapshot.decode(bytes(payload))


def test_snapshot_hash_ignores_field_strength_noise():
    snap = standard_board_snapshot()
    noisy = Snapshot(5, 5, 4, 4, tuple(SlotReading(r.state, r.strength + 1) for r in snap.readings))
    assert noisy.state_hash == snap.state_hash


def test_snapshot_refuses_wrong_reading_count():
    with pytest.raises(ProtocolError, match="readings"):
        Snapshot(0, 5, 4, 4, (SlotReading(SlotState.EMPTY),) * 3)


def test_place_on_point_needs_point_number_and_a_colour():
    with pytest.raises(ProtocolError, match="number"):
        Put(Area.POINT, 0, 0, SlotState.WHITE, 0)
    with pytest.raises(ProtocolError, match="colour"):
        Put(Area.BAR, 0, 0, SlotState.EMPTY, 0)
    assert Lift(Area.POINT, 13, 2, SlotState.BLACK, 99).encode() == b"\x00\x0d\x02\x02\x63\x00\x00\x00"


def test_major_version_mismatch_refused():
    frame = encode_frame(Hello(PROTOCOL_MAJOR + 1, 0), 1, version=(PROTOCOL_MAJOR + 1, 0))
    with pytest.raises(ProtocolError, match=r"major version mismatch.*2\.0.*1\.0") as info:
        decode_frame(frame)
    assert info.value.reason == "version"


def test_newer_minor_version_may_append_fields():
    body = bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR + 1, 1, 0, Ack.TYPE]) + b"\x05\x00\x20" + b"extra"
    frame = cobs_encode(body + crc16_ccitt_false(body).to_bytes(2, "little")) + b"\x00"
    assert decode_frame(frame) == (1, Ack(5, 0x20))


def test_same_minor_version_refuses_extra_payload_bytes():
    body = bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR, 1, 0, Ack.TYPE]) + b"\x05\x00\x20\x00"
    frame = cobs_encode(body + crc16_ccitt_false(body).to_bytes(2, "little"))
    with pytest.raises(ProtocolError, match="too long") as info:
        decode_frame(frame)
    assert info.value.reason == "length"


def _raw_frame(body: bytes) -> bytes:
    return cobs_encode(body + crc16_ccitt_false(body).to_bytes(2, "little")) + b"\x00"


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"\x05\x11\x00", "cobs"),
        (cobs_encode(b"\x01\x00\x01") + b"\x00", "length"),
        (_raw_frame(bytes([PROTOCOL_MAJOR, 0, 1, 0, 0x7E])), "unknown_type"),
        (_raw_frame(bytes([PROTOCOL_MAJOR, 0, 1, 0, Ack.TYPE, 1])), "length"),
        (_raw_frame(bytes([PROTOCOL_MAJOR, 0, 1, 0, Calibrate.TYPE, 9])), "value"),
        (_raw_frame(bytes([PROTOCOL_MAJOR, 0, 1, 0]) + b"\x01" * MAX_FRAME), "too_long"),
        (b"\x01" * (MAX_ENCODED + 1), "too_long"),
    ],
)
def test_decode_frame_says_why_a_frame_is_refused(frame, reason):
    with pytest.raises(ProtocolError) as info:
        decode_frame(frame)
    assert info.value.reason == reason


def test_crc_mismatch_refused():
    body = bytearray(cobs_decode(encode_frame(Hello(), 3)[:-1]))
    body[5] ^= 0x40
    with pytest.raises(ProtocolError, match="CRC mismatch") as info:
        decode_frame(cobs_encode(bytes(body)))
    assert info.value.reason == "crc"


def test_encode_frame_refuses_bad_sequence_number():
    with pytest.raises(ProtocolError, match="65536"):
        encode_frame(Hello(), 65536)


def test_error_message_quotes_the_input():
    with pytest.raises(ProtocolError, match=r"not 'x'"):
        Ack("x", 1)  # type: ignore[arg-type]


def test_max_payload_fits_max_frame():
    assert MAX_PAYLOAD == MAX_FRAME - 7
    full = LedFrame((Led(1, 2, 3, 4),) * MAX_LEDS)
    assert len(encode_frame(full, 0)) <= MAX_ENCODED + 1


# ---------------------------------------------------------------- reader


def test_reader_skips_corrupt_frame_and_keeps_the_next():
    good = encode_frame(Hello(), 2)
    bad = bytearray(encode_frame(Ack(1, 2), 1))
    bad[-2] ^= 0x55  # the last CRC byte, still non-zero: a corrupt frame, not a split one
    assert bad[-2] != 0
    reader = FrameReader()
    assert reader.feed(bytes(bad) + good) == [(2, Hello())]
    assert reader.errors == 1
    assert reader.last_error is not None


def test_reader_joins_frame_split_across_chunks():
    wire = encode_frame(standard_board_snapshot(77), 5) + encode_frame(Ack(5, 0x20), 6)
    reader = FrameReader()
    out = []
    for i in range(0, len(wire), 7):
        out += reader.feed(wire[i : i + 7])
    assert out == [(5, standard_board_snapshot(77)), (6, Ack(5, 0x20))]
    assert reader.errors == 0


def test_reader_counts_garbage_before_first_delimiter_once():
    reader = FrameReader()
    assert reader.feed(b"\x17\x42\x99" + b"\x00\x00" + encode_frame(Hello(), 1)) == [(1, Hello())]
    assert reader.errors == 1


def test_reader_ignores_empty_frames():
    reader = FrameReader()
    assert reader.feed(b"\x00\x00\x00") == []
    assert reader.errors == 0


def test_reader_survives_overlong_run_without_delimiter():
    reader = FrameReader()
    for _ in range(10):
        assert reader.feed(b"\x01" * 300) == []
    assert reader.errors == 1
    assert reader.last_error.reason == "too_long"
    assert reader.feed(b"\x01\x01\x00" + encode_frame(Hello(), 4)) == [(4, Hello())]
    assert reader.errors == 1


@given(st.lists(st.binary(max_size=600), max_size=20))
def test_reader_never_raises_on_random_bytes(chunks):
    reader = FrameReader()
    for chunk in chunks:
        for seq, msg in reader.feed(chunk):
            assert decode_frame(encode_frame(msg, seq)) == (seq, msg)


def _corrupt(frame: bytes, index: int, flip: int) -> bytes:
    """Change one byte of the decoded frame and re-encode: the CRC must catch it."""
    body = bytearray(cobs_decode(frame[:-1]))
    body[index % len(body)] ^= flip
    return cobs_encode(bytes(body)) + b"\x00"


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(messages, st.sampled_from(["keep", "keep", "keep", "drop", "duplicate", "corrupt"]), u16, u8),
        max_size=12,
    ),
    st.binary(max_size=20).filter(lambda b: 0 not in b),
    st.lists(st.integers(1, 64), min_size=1, max_size=50),
)
def test_reader_yields_exactly_the_uncorrupted_frames_in_order(plan, garbage, cuts):
    wire = bytearray(garbage + b"\x00")
    expected = []
    corrupted = 1 if garbage else 0
    for seq, (msg, fate, index, flip) in enumerate(plan):
        frame = encode_frame(msg, seq)
        if fate == "drop":
            continue
        if fate == "corrupt":
            wire += _corrupt(frame, index, flip or 1)
            corrupted += 1
            continue
        copies = 2 if fate == "duplicate" else 1
        wire += frame * copies
        expected += [(seq, msg)] * copies
    reader = FrameReader()
    out = []
    pos, i = 0, 0
    while pos < len(wire):
        step = cuts[i % len(cuts)]
        out += reader.feed(bytes(wire[pos : pos + step]))
        pos, i = pos + step, i + 1
    assert out == expected
    assert reader.errors == corrupted
    assert reader.frames == len(expected)


def test_protocol_md_example_bytes():
    wire = bytes.fromhex("02 01 02 2a 03 30 07 04 20 fc 48 00")
    assert encode_frame(Ack(seq=7, msg_type=LedFrame.TYPE), seq=42) == wire


# ---------------------------------------------------------------- raw frames (the board's side) and CONFIG limits


def test_board_reader_passes_frames_of_another_major_that_the_host_reader_skips():
    from firmware_bridge.protocol import RawFrame, RawFrameReader, decode_raw

    hello2 = encode_frame(Hello(PROTOCOL_MAJOR + 1, 0), 3, version=(PROTOCOL_MAJOR + 1, 0))
    unknown = _raw_frame(bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR, 4, 0, 0x55]) + b"xyz")
    short_config = _raw_frame(bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR, 5, 0, Config.TYPE]) + bytes(9))
    wire = hello2 + unknown + short_config + encode_frame(Hello(), 6)
    host = FrameReader()
    assert host.feed(wire) == [(6, Hello())]  # the host still skips and counts them
    assert host.errors == 3 and host.last_error.reason == "length"
    board = RawFrameReader()
    frames = board.feed(wire)
    assert frames == [
        RawFrame(PROTOCOL_MAJOR + 1, 0, 3, Hello.TYPE, bytes([PROTOCOL_MAJOR + 1, 0])),
        RawFrame(PROTOCOL_MAJOR, PROTOCOL_MINOR, 4, 0x55, b"xyz"),
        RawFrame(PROTOCOL_MAJOR, PROTOCOL_MINOR, 5, Config.TYPE, bytes(9)),
        RawFrame(PROTOCOL_MAJOR, PROTOCOL_MINOR, 6, Hello.TYPE, bytes([PROTOCOL_MAJOR, PROTOCOL_MINOR])),
    ]
    assert board.errors == 0 and decode_raw(frames[3]) == Hello()
    with pytest.raises(ProtocolError) as info:
        decode_raw(frames[2])
    assert info.value.reason == "length"
    bad = bytearray(encode_frame(Hello(), 7))
    bad[-2] ^= 0x55
    assert board.feed(bytes(bad)) == [] and board.errors == 1 and board.last_error.reason == "crc"


@pytest.mark.parametrize(
    ("config", "broken"),
    [
        (Config(), ()),
        (Config(empty_threshold=600, hysteresis=300, polarity_margin=600), ()),  # 900 < 950: allowed
        (Config(polarity_margin=151), ("polarity_margin 151 > empty_threshold 150",)),
        (Config(empty_threshold=700), ("empty_threshold 700 >= 700 (a pinned pair's strength)",)),
        (Config(hysteresis=151), ("hysteresis 151 > empty_threshold 150",)),
        (
            Config(empty_threshold=600, hysteresis=350),
            ("empty_threshold + hysteresis 950 >= 950 (a lone checker's least field)",),
        ),
    ],
)
def test_config_names_every_limit_of_the_spec_it_breaks(config, broken):
    assert config.out_of_range() == broken


def test_config_refuses_single_fields_out_of_range_when_made():
    for kwargs in ({"debounce_scans": 0}, {"report_mode": 2}, {"heartbeat_ms": 99}, {"heartbeat_ms": 1001}):
        with pytest.raises(ProtocolError):
            Config(**kwargs)
