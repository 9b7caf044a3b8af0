"""Tests for firmware_bridge.emulator: the board on a pseudo-terminal, driven as a host would with pyserial."""

from __future__ import annotations

import time

import pytest
import serial

from board_rules import Position
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.leds import LED_COUNT
from firmware_bridge.protocol import (
    PROTOCOL_MAJOR,
    Ack,
    Area,
    BoardError,
    Button,
    Calibrate,
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
    Put,
    SlotState,
    Snapshot,
    cobs_encode,
    crc16_ccitt_false,
    encode_frame,
)
from firmware_bridge.sensing import counts_from_slots
from tests.helpers import make

TIMEOUT = 5.0


class Host:
    """A host side: a pyserial port and a FrameReader; waits on frames with a deadline, never sleeps."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, 115200, timeout=0.05)
        self.reader = FrameReader()
        self.seq = 0
        self.pending: list = []

    def send(self, msg) -> int:
        self.seq += 1
        self.port.write(encode_frame(msg, self.seq))
        return self.seq

    def wait_for(self, predicate, timeout: float = TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            while self.pending:
                msg = self.pending.pop(0)
                if predicate(msg):
                    return msg
            if time.monotonic() >= deadline:
                break
            self.pending.extend(msg for _, msg in self.reader.feed(self.port.read(4096)))
        raise AssertionError("no matching frame within %r s" % timeout)

    def send_raw(self, seq: int, msg_type: int, payload: bytes, version=(PROTOCOL_MAJOR, 0)) -> int:
        """A frame built by hand (any version, type or payload), as a buggy or foreign host might send."""
        body = bytes([version[0], version[1], seq & 0xFF, seq >> 8, msg_type]) + payload
        self.port.write(cobs_encode(body + crc16_ccitt_false(body).to_bytes(2, "little")) + b"\x00")
        return seq

    def reply_to(self, seq: int, msg_type: int):
        """The ACK or NACK naming ``seq`` and ``msg_type``."""
        return self.wait_for(lambda m: isinstance(m, (Ack, Nack)) and (m.seq, m.msg_type) == (seq, msg_type))

    def quiet(self, timeout: float = 0.3) -> list:
        """Everything the board sends within ``timeout`` (for asserting that no answer comes)."""
        deadline = time.monotonic() + timeout
        got = list(self.pending)
        self.pending.clear()
        while time.monotonic() < deadline:
            got.extend(msg for _, msg in self.reader.feed(self.port.read(4096)))
        return got

    def handshake(self) -> HelloReply:
        self.port.write(b"\x00")
        seq = self.send(Hello())
        return self.wait_for(lambda m: isinstance(m, HelloReply) and m.reply_to == seq)

    def close(self) -> None:
        self.port.close()


def counts(snapshot: Snapshot):
    return counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )


@pytest.fixture
def board():
    emulator = BoardEmulator(seed=7)
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def host(board):
    h = Host(board.path)
    yield h
    h.close()


def test_handshake_answers_hello_with_capabilities_then_a_snapshot(board, host):
    reply = host.handshake()
    assert reply.serial == "EMU-0001"
    assert (reply.slots_per_point, reply.bar_slots, reply.tray_slots, reply.led_count) == (5, 8, 5, LED_COUNT)
    host.wait_for(lambda m: isinstance(m, Snapshot))


def test_board_sends_nothing_before_hello(board, host):
    board.set_position(Position.start("backgammon"))
    assert host.port.read(4096) == b""


def test_snapshot_after_set_position_decodes_to_the_same_counts(board, host):
    host.handshake()
    position = make("backgammon", {6: 15, 19: -13}, bar=(0, 2))
    board.set_position(position)
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).bar == (0, 2))
    got = counts(snap)
    assert (got.points, got.bar, got.off, got.uncertain) == (position.points, position.bar, position.off, ())


def test_heartbeat_repeats_the_snapshot(host):
    host.handshake()
    first = host.wait_for(lambda m: isinstance(m, Snapshot))
    second = host.wait_for(lambda m: isinstance(m, Snapshot), timeout=1.5)
    assert second.timestamp_ms > first.timestamp_ms
    assert second.state_hash == first.state_hash


def test_move_sends_lift_and_place_then_the_snapshot(board, host):
    host.handshake()
    board.set_position(Position.start("backgammon"))
    board.move(24, 18)
    lift = host.wait_for(lambda m: isinstance(m, Lift))
    assert (lift.number, lift.slot) == (24, 1)
    place = host.wait_for(lambda m: isinstance(m, Put))
    assert (place.number, place.slot, place.state) == (18, 0, 1)
    snap = host.wait_for(lambda m: isinstance(m, Snapshot))
    assert counts(snap).points[17] == 1 and counts(snap).points[23] == 1


def test_led_frame_is_acked_by_seq_and_type_and_kept(board, host):
    host.handshake()
    frame = LedFrame(tuple(Led(i, 255 - i, 3, 0x0F) for i in range(LED_COUNT)))
    seq = host.send(frame)
    ack = host.wait_for(lambda m: isinstance(m, Ack))
    assert (ack.seq, ack.msg_type) == (seq, LedFrame.TYPE)
    assert board.led_frame == frame


def test_corrupted_bytes_are_counted_by_the_host_and_a_later_snapshot_heals(board, host):
    host.handshake()
    board.inject(corrupt_rate=0.05)
    position = make("backgammon", {1: 15, 24: -15})
    board.set_position(position)
    deadline = time.monotonic() + TIMEOUT
    while host.reader.errors == 0 and time.monotonic() < deadline:
        host.pending.extend(m for _, m in host.reader.feed(host.port.read(4096)))
    assert host.reader.errors > 0
    board.inject()
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).points == position.points, timeout=2.0)
    assert counts(snap).off == (0, 0)


def test_replug_gives_a_new_path_and_the_old_one_fails(board, host):
    host.handshake()
    seen = []
    board.on_replug = seen.append
    old = board.path
    new = board.replug()
    assert new != old and board.path == new and seen == [new] and board.replugged.is_set()
    with pytest.raises(serial.SerialException):
        for _ in range(3):
            host.port.write(encode_frame(Hello(), 99))
            host.port.read(4096)
    again = Host(new)
    try:
        again.handshake()
        again.wait_for(lambda m: isinstance(m, Snapshot))
    finally:
        again.close()


# ---------------------------------------------------------------- as the firmware answers (hardware/firmware/board.c)


@pytest.mark.parametrize(
    ("version", "payload"),
    [((PROTOCOL_MAJOR + 1, 0), bytes([PROTOCOL_MAJOR + 1, 0])), ((PROTOCOL_MAJOR, 0), bytes([PROTOCOL_MAJOR + 1, 0]))],
    ids=["major-in-header", "major-in-payload"],
)
def test_hello_of_another_major_gets_nack_version_mismatch_and_the_frozen_reply(board, host, version, payload):
    host.port.write(b"\x00")
    seq = host.send_raw(34, Hello.TYPE, payload, version=version)
    assert host.reply_to(seq, Hello.TYPE) == Nack(seq, Hello.TYPE, NackReason.VERSION_MISMATCH)
    reply = host.wait_for(lambda m: isinstance(m, HelloReply))
    assert (reply.reply_to, reply.major, reply.serial) == (seq, PROTOCOL_MAJOR, "EMU-0001")
    # and nothing else until a HELLO of our major: no snapshot, commands NOT_READY
    assert not any(isinstance(m, Snapshot) for m in host.quiet(0.7))
    seq = host.send(Config())
    assert host.reply_to(seq, Config.TYPE) == Nack(seq, Config.TYPE, NackReason.NOT_READY)
    host.handshake()
    host.wait_for(lambda m: isinstance(m, Snapshot))


def test_a_command_of_another_major_is_counted_corrupt_not_answered(board, host):
    host.handshake()
    host.send_raw(40, Config.TYPE, Config().encode(), version=(PROTOCOL_MAJOR + 1, 0))
    got = host.wait_for(lambda m: isinstance(m, (Ack, Nack, BoardError)))
    assert got == BoardError(ErrorCode.CORRUPT_FRAMES, "1 corrupt frames received")
    assert board.corrupt_frames == 1


def test_garbage_is_reported_in_error_corrupt_frames_at_most_once_a_second(board, host):
    host.handshake()
    host.port.write(b"\x17\x42\x99\x00line noise\x00")
    first = host.wait_for(lambda m: isinstance(m, BoardError))
    assert first == BoardError(ErrorCode.CORRUPT_FRAMES, "2 corrupt frames received")
    reported = time.monotonic()
    host.port.write(b"\x01\x02\x00")
    second = host.wait_for(lambda m: isinstance(m, BoardError))
    assert second.detail == "3 corrupt frames received" and time.monotonic() - reported >= 0.9


def test_unknown_types_wrong_lengths_and_newer_minors_are_answered_as_the_firmware_does(board, host):
    seq = host.send(LedFrame(tuple(Led() for _ in range(LED_COUNT))))
    assert host.reply_to(seq, LedFrame.TYPE).reason == NackReason.NOT_READY  # before any HELLO
    seq = host.send_raw(29, 0x55, b"xyz")
    assert host.reply_to(seq, 0x55).reason == NackReason.UNKNOWN_TYPE  # unknown even before HELLO
    host.handshake()
    seq = host.send_raw(30, Config.TYPE, bytes(9))
    assert host.reply_to(seq, Config.TYPE).reason == NackReason.BAD_LENGTH
    seq = host.send_raw(31, Hello.TYPE, bytes([PROTOCOL_MAJOR]))
    assert host.reply_to(seq, Hello.TYPE).reason == NackReason.BAD_LENGTH
    seq = host.send(Ack(1, 2))
    assert host.reply_to(seq, Ack.TYPE).reason == NackReason.UNKNOWN_TYPE
    seq = host.send_raw(32, Config.TYPE, Config(heartbeat_ms=200).encode() + b"\x01", version=(PROTOCOL_MAJOR, 1))
    assert host.reply_to(seq, Config.TYPE) == Ack(seq, Config.TYPE)  # a newer minor may append fields
    assert board.heartbeat_s == 0.2
    seq = host.send_raw(33, LedFrame.TYPE, bytes([0]))
    assert host.reply_to(seq, LedFrame.TYPE).reason == NackReason.BAD_VALUE
    seq = host.send_raw(34, Calibrate.TYPE, bytes([2]))
    assert host.reply_to(seq, Calibrate.TYPE).reason == NackReason.BAD_VALUE


@pytest.mark.parametrize(
    "payload",
    [
        Config(hysteresis=151).encode(),  # hysteresis > empty_threshold
        Config(empty_threshold=600, hysteresis=350).encode(),  # empty_threshold + hysteresis >= 950
        Config(polarity_margin=200).encode(),  # polarity_margin > empty_threshold
        Config(empty_threshold=700).encode(),  # empty_threshold >= 700, a pinned pair
        bytes([0, 1, 0xF4, 1, 150, 0, 30, 0, 50, 0]),  # debounce_scans 0
        bytes([3, 2, 0xF4, 1, 150, 0, 30, 0, 50, 0]),  # report_mode 2
        bytes([3, 1, 99, 0, 150, 0, 30, 0, 50, 0]),  # heartbeat_ms 99
        bytes([3, 1, 0xE9, 3, 150, 0, 30, 0, 50, 0]),  # heartbeat_ms 1001
    ],
    ids=[
        "hysteresis",
        "threshold-plus-hysteresis",
        "polarity-margin",
        "threshold",
        "debounce",
        "report-mode",
        "heartbeat-low",
        "heartbeat-high",
    ],
)
def test_config_out_of_range_is_nacked_bad_value_and_changes_nothing(board, host, payload):
    host.handshake()
    before = (board.heartbeat_s, board.report_mode, board.sensor_config, board.debounce_scans)
    seq = host.send_raw(50, Config.TYPE, payload)
    assert host.reply_to(seq, Config.TYPE) == Nack(seq, Config.TYPE, NackReason.BAD_VALUE)
    assert (board.heartbeat_s, board.report_mode, board.sensor_config, board.debounce_scans) == before


def test_config_at_its_limits_is_acked_then_a_snapshot_follows(board, host):
    host.handshake()
    host.wait_for(lambda m: isinstance(m, Snapshot))
    config = Config(debounce_scans=255, heartbeat_ms=1000, empty_threshold=600, hysteresis=349, polarity_margin=600)
    seq = host.send(config)
    assert host.reply_to(seq, Config.TYPE) == Ack(seq, Config.TYPE)
    host.wait_for(lambda m: isinstance(m, Snapshot), timeout=0.5)
    assert (board.heartbeat_s, board.sensor_config.hysteresis, board.debounce_scans) == (1.0, 349, 255)


def test_a_pin_is_a_place_of_uncertain_colour_and_its_end_a_lift_of_uncertain_colour(board, host):
    host.handshake()
    board.set_position(make("plakoto", {5: -1, 24: 14, 1: -14}))
    host.wait_for(lambda m: isinstance(m, Snapshot))
    board.place(5, "white")  # pins the black checker on white's point 5
    place = host.wait_for(lambda m: isinstance(m, (Put, Lift)))
    assert (place.area, place.number, place.slot, place.state) == (Area.POINT, 5, 0, SlotState.UNCERTAIN)
    assert isinstance(place, Put)
    snap = host.wait_for(lambda m: isinstance(m, Snapshot))
    sensed = counts(snap)
    assert sensed.uncertain == (5,) and sensed.points[4] == 0
    pinned = [0] * 24
    pinned[4] = -1
    assert sensed.resolved_points(pinned)[4] == 1  # the referee, knowing black is pinned, reads white's pinner
    board.place(5, "white")  # a second pinning checker goes beside the pair
    second = host.wait_for(lambda m: isinstance(m, (Put, Lift)))
    assert (type(second), second.number, second.slot, second.state) == (Put, 5, 1, SlotState.WHITE)
    board.lift(5)
    board.lift(5)  # the pinning checker leaves
    lifts = [host.wait_for(lambda m: isinstance(m, (Put, Lift))) for _ in range(2)]
    assert [(type(m), m.slot, m.state) for m in lifts] == [(Lift, 1, SlotState.WHITE), (Lift, 0, SlotState.UNCERTAIN)]
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).points[4] == -1)
    assert counts(snap).uncertain == ()


def test_led_frame_repeated_with_the_same_seq_is_shown_and_acked_again(board, host):
    host.handshake()
    frame = LedFrame(tuple(Led(i, 0, 0, 0x55) for i in range(LED_COUNT)))
    wire = encode_frame(frame, 60)
    for _ in range(2):
        host.port.write(wire)
        assert host.reply_to(60, LedFrame.TYPE) == Ack(60, LedFrame.TYPE)
    assert board.led_frame == frame
    seq = host.send(LedFrame(frame.leds[:-1]))
    assert host.reply_to(seq, LedFrame.TYPE) == Nack(seq, LedFrame.TYPE, NackReason.BAD_VALUE)
    assert board.led_frame == frame


def test_a_checker_on_a_saturated_slot_changes_no_class_so_sends_no_event(board, host):
    host.handshake()
    board.set_position(make("backgammon", {}, bar=(15, 0), off=(0, 15)))  # white's bar half: 4, 4, 4, 3
    host.wait_for(lambda m: isinstance(m, Snapshot))
    board.place("bar", "white")  # slot 3 goes from 3 to 4 high
    board.place("bar", "white")  # a fifth on slot 0: still 2200, saturated, no change to report
    board.place(1, "white")
    events = [host.wait_for(lambda m: isinstance(m, (Put, Lift))) for _ in range(2)]
    assert [(e.area, e.number, e.slot) for e in events] == [(Area.BAR, 0, 3), (Area.POINT, 1, 0)]


def test_board_button_is_not_sent_before_hello(board, host):
    board.press_button(1)
    assert host.quiet(0.2) == []
    host.handshake()
    board.press_button(1)
    down = host.wait_for(lambda m: isinstance(m, Button))
    assert (down.button, down.pressed) == (1, True)


def test_replug_resets_the_configuration_but_keeps_the_calibration(board, host):
    host.handshake()
    seq = host.send(Config(heartbeat_ms=200, report_mode=0))
    assert host.reply_to(seq, Config.TYPE) == Ack(seq, Config.TYPE)
    seq = host.send(Calibrate())
    assert host.reply_to(seq, Calibrate.TYPE) == Ack(seq, Calibrate.TYPE)
    assert board.calibrated and board.heartbeat_s == 0.2
    before = host.wait_for(lambda m: isinstance(m, Snapshot))
    board.replug()
    assert board.calibrated and board.heartbeat_s == 0.5 and board.report_mode == 1 and board.led_frame is None
    again = Host(board.path)
    try:
        again.handshake()
        after = again.wait_for(lambda m: isinstance(m, Snapshot))
        assert after.timestamp_ms < before.timestamp_ms  # the board clock restarted with the board
    finally:
        again.close()


def test_calibrate_zero_empty_keeps_the_board_busy_then_acks():
    with BoardEmulator(seed=8, calibrate_s=0.3) as board:
        host = Host(board.path)
        try:
            host.handshake()
            seq = host.send(Calibrate())
            busy = host.send(LedFrame(tuple(Led() for _ in range(LED_COUNT))))
            assert host.reply_to(busy, LedFrame.TYPE).reason == NackReason.BUSY
            again = host.send(Calibrate())
            assert host.reply_to(again, Calibrate.TYPE).reason == NackReason.BUSY
            assert host.reply_to(seq, Calibrate.TYPE) == Ack(seq, Calibrate.TYPE)
            assert board.calibrated and not board.calibrating
        finally:
            host.close()


def test_calibrate_with_a_checker_on_is_refused_with_error_then_nack_failed(board, host):
    host.handshake()
    board.place(3, "black")  # point 3 slot 0 is slot 10 of the snapshot
    seq = host.send(Calibrate())
    error = host.wait_for(lambda m: isinstance(m, BoardError))
    assert error == BoardError(
        ErrorCode.CALIBRATION_FAILED, "slot 10 reads 1200 (0.01 mT) from VCC/2: is a checker on the board?"
    )
    assert host.reply_to(seq, Calibrate.TYPE) == Nack(seq, Calibrate.TYPE, NackReason.FAILED)
    assert not board.calibrated


def test_calibrate_accepts_a_pinned_pair_as_the_firmware_does_and_factory_defaults_forget_it(board, host):
    from firmware_bridge.protocol import CalibrationKind

    host.handshake()
    board.place(5, "black")  # on a board that is otherwise empty, trays included
    board.place(5, "white")
    seq = host.send(Calibrate())  # the pair reads 700, under the 900 limit: the board takes it as offset
    assert host.reply_to(seq, Calibrate.TYPE) == Ack(seq, Calibrate.TYPE)
    snap = host.wait_for(lambda m: isinstance(m, Snapshot))
    assert snap.point(5)[0].state == SlotState.EMPTY  # calibrated away, as on the real board
    seq = host.send(Calibrate(CalibrationKind.FACTORY_DEFAULTS))
    assert host.reply_to(seq, Calibrate.TYPE) == Ack(seq, Calibrate.TYPE)
    assert not board.calibrated
    snap = host.wait_for(lambda m: isinstance(m, Snapshot))
    assert snap.point(5)[0].state == SlotState.UNCERTAIN


def test_checkers_laid_in_a_heap_read_as_the_heap_reads_until_the_place_changes(board, host):
    host.handshake()
    start = Position.start("backgammon")
    board.set_position(start)
    board.lay(6, [5, 0, 0, 0, 0])  # a player heaps the five on 6 on one slot: it saturates at 4
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).at_least == (6,))
    assert counts(snap).points[5] == 4
    board.move(6, 5)  # the heap is touched: its checkers lie in the fill order again
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).points[4] == 1)
    assert counts(snap).points[5] == 4 and counts(snap).at_least == ()
    with pytest.raises(ValueError, match="adding up"):
        board.lay(13, [6, 0, 0, 0, 0])  # 13 holds five


def test_a_checker_put_on_a_blocked_point_lies_on_top_and_reads_as_both_colours(board, host):
    host.handshake()
    start = Position.start("backgammon")
    board.set_position(start)
    board.move(24, 19)  # onto black's five: the board cannot refuse a hand, it reads what lies there
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and 19 in counts(m).uncertain)
    assert counts(snap).points[18] == -4 and counts(snap).at_least == ()  # slot 0: a black with a white on top
    assert board.lift(19) == 1  # the stranger on top comes off first
    board.place(24, "white")
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).points == start.points)
    assert counts(snap).uncertain == ()


def test_a_host_that_stops_reading_loses_bytes_but_never_stalls_the_board(board, host):
    """The real board's USB-serial bridge drops what the host does not read; the emulator waited
    for room for ever, so a starved host made every later action time out."""
    host.handshake()
    board.write_stall_s = 0.02
    pos = Position.start("backgammon")
    start = time.monotonic()
    while board.bytes_lost == 0 and time.monotonic() - start < 30:
        board.set_position(pos)  # every call sends a snapshot the host does not read
    assert board.bytes_lost > 0
    t0 = time.monotonic()
    board.move(1, 2)  # still answers at once
    assert time.monotonic() - t0 < 1.0
    host.quiet(0.5)  # the host reads again: what is left of the lost frames is skipped
    board.move(2, 1)
    host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).points == pos.points)  # and the board is heard again


def test_a_board_replugged_three_times_answers_on_each_new_path_with_its_own_serial():
    with BoardEmulator(seed=8, serial="EMU-REPLUG") as emu:
        paths = [emu.path]
        for _ in range(3):
            paths.append(emu.replug())
            assert paths[-1] != paths[-2]
            host = Host(paths[-1])
            try:
                assert host.handshake().serial == "EMU-REPLUG"  # what the host finds it again by
                host.wait_for(lambda m: isinstance(m, Snapshot))
            finally:
                host.close()


def test_a_checker_comes_off_the_bar_and_is_borne_off_without_its_side_named(board, host):
    host.handshake()
    board.set_position(make("backgammon", {6: 5, 8: 3, 13: 5, 24: 1, 1: -2, 12: -5, 17: -3, 19: -5}, bar=(1, 0)))
    board.move("bar", 22)  # only white has a checker on the bar
    lift = host.wait_for(lambda m: isinstance(m, Lift))
    assert (lift.area, lift.state) == (Area.BAR, SlotState.WHITE)
    board.move(6, "off")  # the checker on 6 is white: white's tray
    put = host.wait_for(lambda m: isinstance(m, Put) and m.area is not Area.POINT)
    assert (put.area, put.state) == (Area.OFF_WHITE, SlotState.WHITE)
    snap = host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).off == (1, 0))
    assert (counts(snap).points[21], counts(snap).points[5], counts(snap).bar) == (1, 4, (0, 0))
    assert board.lift("off") == 1  # back into the hand from the one tray that holds any
    with pytest.raises(ValueError, match="^bar: no checker there to lift$"):
        board.lift("bar")
    with pytest.raises(ValueError, match="^off: no checker there to lift$"):
        board.move("off", 6)


def test_a_bar_that_holds_both_sides_needs_the_side_named(board, host):
    host.handshake()
    board.set_position(make("backgammon", {6: 5, 8: 3, 13: 5, 24: 1, 1: -1, 12: -5, 17: -3, 19: -5}, bar=(1, 1)))
    with pytest.raises(ValueError, match="^bar: both sides have checkers there; name the side, white or black$"):
        board.move("bar", 22)
    board.move("bar", 3, "black")
    host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).bar == (1, 0) and counts(m).points[2] == -1)
    board.move("bar", 22)  # now only white is left there
    host.wait_for(lambda m: isinstance(m, Snapshot) and counts(m).bar == (0, 0) and counts(m).points[21] == 1)


def test_a_move_that_cannot_land_lifts_nothing(board, host):
    """A move onto a point with a checker of each colour on top used to lift its checker and lose it."""
    host.handshake()
    start = Position.start("backgammon")
    board.set_position(start)
    board.move(24, 19)  # a white on black's five
    host.wait_for(lambda m: isinstance(m, Snapshot) and 19 in counts(m).uncertain)
    with pytest.raises(ValueError, match="a checker of each colour on top already"):
        board.move(1, 19)  # a black from 1 onto that white
    quiet = host.quiet(0.3)
    assert not any(isinstance(m, (Lift, Put)) for m in quiet)  # nothing lifted from 1, nothing put
    snap = host.wait_for(lambda m: isinstance(m, Snapshot), timeout=1.5)
    assert counts(snap).points[0] == -2
