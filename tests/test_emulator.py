"""Tests for firmware_bridge.emulator: the board on a pseudo-terminal, driven as a host would with pyserial."""

from __future__ import annotations

import time

import pytest
import serial

from board_rules import Position
from firmware_bridge.emulator import LED_COUNT, BoardEmulator
from firmware_bridge.protocol import (
    Ack,
    FrameReader,
    Hello,
    HelloReply,
    Led,
    LedFrame,
    Lift,
    Place,
    Snapshot,
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
    place = host.wait_for(lambda m: isinstance(m, Place))
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
