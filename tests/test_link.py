"""Tests for firmware_bridge.link: the host side of the board link, against a fake board on a pseudo-terminal.

The fake board is a thread on the master side of ``os.openpty()``; the host opens
the slave path through ``serial_for_url`` as it would a USB device. Nothing sleeps:
tests wait on the link's event queue or on threading events, with timeouts.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from types import SimpleNamespace

import pytest

from firmware_bridge.link import (
    BOARD_USB_IDS,
    BoardLink,
    LinkError,
    LinkEvent,
    LinkStats,
    find_port,
)
from firmware_bridge.protocol import (
    Ack,
    Area,
    BoardError,
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
    SlotReading,
    SlotState,
    Snapshot,
    encode_frame,
)
from tests.helpers import first_from

WAIT = 3.0  # seconds any single expected event may take
SLOTS = (5, 4, 4)  # slots per point, bar slots, tray slots (HelloReply's defaults)
FRAME = LedFrame(tuple(Led(red=i * 9, blink=0x0F if i % 2 else 0xFF) for i in range(27)))


def snapshot(timestamp_ms: int, mark: SlotState = SlotState.EMPTY) -> Snapshot:
    """All slots empty except slot 0 of point 1, which reads ``mark``."""
    spp, bar, tray = SLOTS
    count = 24 * spp + bar + 2 * tray
    readings = (SlotReading(mark, 900 if mark else 0),) + (SlotReading(SlotState.EMPTY, 0),) * (count - 1)
    return Snapshot(timestamp_ms, spp, bar, tray, readings)


def ack_all(seq, msg):
    return [Ack(seq, msg.TYPE)]


class FakeBoard:
    """A board on the master end of a pty: answers HELLO, sends snapshots every ``heartbeat_s``, ACKs commands.

    ``reply(seq, msg)`` gives the replies to a command (default: one ACK).
    ``release`` cleared holds snapshots back; ``mute()`` makes the board go silent.
    """

    def __init__(
        self, *, version=(1, 0), heartbeat_s=0.05, reply=ack_all, mark=SlotState.EMPTY, serial="FAKE-1", early=()
    ):
        self.master, self.slave = os.openpty()  # the slave stays open here so the master never sees EIO
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.version = version
        self.heartbeat_s = heartbeat_s
        self.reply = reply
        self.mark = mark
        self.serial = serial
        self.early = list(early)  # sent after HELLO_REPLY, before the first snapshot
        self.received: list[tuple[int, object]] = []
        self.got_hello = threading.Event()
        self.got_leds = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self._muted = threading.Event()
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._reader = FrameReader()
        self._seq = 0
        self._greeted = False
        self._last_snapshot = 0.0
        self._clock_ms = 1000
        self._thread = threading.Thread(target=self._run, name=f"FakeBoard({self.path})", daemon=True)
        self._thread.start()

    def send(self, msg) -> None:
        self._seq = (self._seq + 1) & 0xFFFF
        self.inject(encode_frame(msg, self._seq, version=self.version))

    def inject(self, data: bytes) -> None:
        with self._write_lock:
            try:
                os.write(self.master, data)
            except (BlockingIOError, OSError):
                pass  # nobody reading: the bytes are lost, as on a real wire

    def mute(self) -> None:
        self._muted.set()

    def unplug(self) -> None:
        """Close the master end: the host's reads of the slave fail at once."""
        self._stop.set()
        self._thread.join(WAIT)
        if self.master is not None:
            os.close(self.master)
            self.master = None

    def stop(self) -> None:
        self.unplug()
        os.close(self.slave)

    def _snapshot(self) -> None:
        self._clock_ms += 50
        self._last_snapshot = time.monotonic()
        self.send(snapshot(self._clock_ms, self.mark))

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], self.heartbeat_s / 2)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    data = b""
                for seq, msg in self._reader.feed(data):
                    self.received.append((seq, msg))
                    if not self._muted.is_set():
                        self._answer(seq, msg)
            due = time.monotonic() - self._last_snapshot >= self.heartbeat_s
            if self._greeted and due and self.release.is_set() and not self._muted.is_set():
                self._snapshot()

    def _answer(self, seq, msg) -> None:
        if isinstance(msg, Hello):
            self.got_hello.set()
            if msg.major != self.version[0]:
                self.send(Nack(seq, Hello.TYPE, NackReason.VERSION_MISMATCH))
            self.send(HelloReply(seq, self.serial, (1, 2, 3), *SLOTS, major=self.version[0], minor=self.version[1]))
            self._greeted = msg.major == self.version[0]
            for early in self.early:
                self.send(early)
            if self._greeted and self.release.is_set():
                self._snapshot()
            return
        for reply in self.reply(seq, msg):
            self.send(reply)
        if isinstance(msg, LedFrame):
            self.got_leds.set()

    def led_frames(self) -> list[tuple[int, LedFrame]]:
        return [(seq, msg) for seq, msg in self.received if isinstance(msg, LedFrame)]


@pytest.fixture
def boards():
    made: list[FakeBoard] = []

    def make(**kwargs) -> FakeBoard:
        board = FakeBoard(**kwargs)
        made.append(board)
        return board

    yield make
    for board in made:
        board.stop()


@pytest.fixture
def links():
    made: list[BoardLink] = []

    def make(port, **kwargs) -> BoardLink:
        options = {
            "lost_after_s": 1.0,
            "retry_after_s": 0.1,
            "retries": 3,
            "hello_timeout_s": 0.3,
            "hello_retries": 1,
            "backoff_initial_s": 0.02,
            "backoff_max_s": 0.2,
        }
        link = BoardLink(port, **{**options, **kwargs})
        made.append(link)
        return link

    yield make
    for link in made:
        link.stop()


def next_event(link: BoardLink, kind: type | str, timeout: float = WAIT):
    """The next event on ``link.events`` of this message type or LinkEvent kind, skipping others."""

    def of_kind(event) -> bool:
        if isinstance(kind, str):
            return isinstance(event, LinkEvent) and event.kind == kind
        return isinstance(event, kind)

    event = first_from(link.events, of_kind, timeout)
    if event is None:
        pytest.fail(f"no {kind!r} event within {timeout} s")
    return event


def test_handshake_emits_connected_then_the_first_snapshot(boards, links):
    board = boards()
    link = links(board.path).start()
    connected = link.events.get(timeout=WAIT)
    first = link.events.get(timeout=WAIT)
    assert connected == LinkEvent("connected", port=board.path, hello=connected.hello)
    assert connected.hello.serial == "FAKE-1" and connected.hello.firmware_version == "1.2.3"
    assert isinstance(first, Snapshot) and link.state is not None
    assert isinstance(board.received[0][1], Hello)
    assert link.connected and link.port == board.path


def test_lift_before_the_first_snapshot_is_delivered_after_connected_and_in_order(boards, links):
    lift = Lift(Area.POINT, 6, 0, SlotState.WHITE, 1234)
    board = boards(early=[lift])
    link = links(board.path).start()
    kinds = [link.events.get(timeout=WAIT) for _ in range(3)]
    assert isinstance(kinds[0], LinkEvent) and kinds[0].kind == "connected"
    assert kinds[1] == lift and isinstance(kinds[2], Snapshot)


def test_major_version_mismatch_is_refused_with_a_clear_message(boards, links):
    board = boards(version=(2, 0))
    link = links(board.path)
    expected = (
        "protocol major version mismatch: the other side speaks 2.0, this side speaks 1.0; "
        "update the firmware or the host"
    )
    with pytest.raises(LinkError, match=expected) as info:
        link.start()
    assert isinstance(info.value, OSError)
    assert not link.connected and link.state is None


def test_corrupt_bytes_between_frames_are_counted_and_the_link_keeps_going(boards, links):
    board = boards()
    link = links(board.path).start()
    next_event(link, Snapshot)
    flipped = bytearray(encode_frame(snapshot(5), 77))
    flipped[20] = flipped[20] ^ 0x01 or 0x02  # a bit error inside the frame: its CRC fails
    board.inject(b"\x00line noise\x00" + bytes(flipped))
    before = link.stats.frames
    next_event(link, Snapshot)
    next_event(link, Snapshot)
    stats = link.stats
    assert stats.corrupt == 2 and stats.frames > before
    assert link.send_leds(FRAME) is True
    assert link.connected


def test_ack_for_another_seq_or_type_does_not_complete_send_leds(boards, links):
    def wrong_replies(seq, msg):
        if isinstance(msg, LedFrame):
            return [Ack((seq + 1) & 0xFFFF, LedFrame.TYPE), Ack(seq, Config.TYPE)]
        return [Ack(seq, msg.TYPE)]

    board = boards(reply=wrong_replies)
    link = links(board.path, retries=2, retry_after_s=0.05).start()
    assert link.send_leds(FRAME) is False
    sends = board.led_frames()
    # the same frame, same seq, three times (a busy machine may have the link back and the frame
    # sent afresh, under a new seq, by the time they are counted)
    assert [seq for seq, _ in sends].count(sends[0][0]) == 3 and all(seq != sends[0][0] for seq, _ in sends[3:])
    assert link.stats.retries == 2
    assert next_event(link, "disconnected").detail.startswith("command seq=")  # unacknowledged: the board is lost


def test_replies_are_matched_by_seq_and_type_never_by_order(boards, links):
    def other_nack_first(seq, msg):
        return [Nack((seq + 7) & 0xFFFF, LedFrame.TYPE, NackReason.BAD_VALUE), Ack(seq, msg.TYPE)]

    board = boards(reply=other_nack_first)
    link = links(board.path).start()
    assert link.send_leds(FRAME) is True
    assert link.stats.retries == 0 and link.led_frame == FRAME


def test_dropped_ack_leads_to_a_resend_of_the_same_frame(boards, links):
    dropped = []

    def drop_first_led_ack(seq, msg):
        if isinstance(msg, LedFrame) and not dropped:
            dropped.append(seq)
            return []
        return [Ack(seq, msg.TYPE)]

    board = boards(reply=drop_first_led_ack)
    link = links(board.path).start()
    assert link.send_leds(FRAME) is True
    assert [seq for seq, _ in board.led_frames()] == dropped * 2
    assert link.stats.retries == 1


def test_silent_board_is_disconnected_then_reconnected_on_the_new_port_with_leds_resent(boards, links):
    first = boards()
    second = boards(mark=SlotState.WHITE, serial="FAKE-2")
    second.release.clear()  # the replugged board holds its first snapshot until the test has looked
    ports = [first.path]
    link = links(first.path, port_finder=lambda: ports[-1], lost_after_s=0.4).start()
    assert link.send_leds(FRAME) is True

    ports.append(second.path)  # the board comes back under another name
    first.mute()
    lost = next_event(link, "disconnected")
    assert lost.port == first.path and "no frame" in lost.detail
    assert link.state is None and not link.connected

    assert second.got_hello.wait(WAIT)
    assert link.state is None  # handshaked, but no fresh snapshot yet: no stale state
    second.release.set()

    back = next_event(link, "reconnected")
    assert back.port == second.path and back.hello.serial == "FAKE-2"
    fresh = link.events.get(timeout=WAIT)
    assert isinstance(fresh, Snapshot) and fresh.point(1)[0].state is SlotState.WHITE
    assert link.state.point(1)[0].state is SlotState.WHITE
    assert second.got_leds.wait(WAIT)
    assert second.led_frames()[0][1] == FRAME
    assert link.stats.reconnects >= 1


def test_unplugged_board_serial_error_disconnects_then_reconnects_where_port_finder_points(boards, links):
    board = boards()
    replugged = boards(serial="FAKE-2")
    ports = [board.path]
    link = links(board.path, port_finder=lambda: ports[-1]).start()
    next_event(link, Snapshot)
    ports.append(replugged.path)
    board.unplug()  # the host's next read fails with an I/O error, long before lost_after_s
    lost = next_event(link, "disconnected")
    assert "serial error" in lost.detail
    assert next_event(link, "reconnected").port == replugged.path
    assert link.connected and link.hello.serial == "FAKE-2"


def test_board_found_by_usb_vendor_and_product_id(boards, links):
    board = boards()
    ports = [
        SimpleNamespace(device="/dev/ttyS0", vid=None, pid=None),
        SimpleNamespace(device=board.path, vid=0x2341, pid=0x0042),
    ]
    assert find_port(0x2341, 0x0042, lambda: ports) == board.path
    link = links(None, vid=0x2341, pid=0x0042, comports=lambda: ports).start()
    assert next_event(link, "connected").port == board.path
    with pytest.raises(LinkError, match="2341:0010"):
        find_port(0x2341, 0x0010, lambda: ports)


@pytest.mark.parametrize(
    ("vid", "pid"),
    [(0x2341, 0x0042), (0x2341, 0x0010), (0x2A03, 0x0042), (0x1A86, 0x7523)],
    ids=["mega-16u2", "mega-8u2", "arduino-org", "ch340-clone"],
)
def test_every_known_mega_2560_usb_id_is_found_without_naming_it(vid, pid):
    ports = [
        SimpleNamespace(device="/dev/ttyACM9", vid=0x2E8A, pid=0x000A),  # a Raspberry Pi Pico: not the board
        SimpleNamespace(device="/dev/ttyUSB3", vid=vid, pid=pid),
    ]
    assert (vid, pid) in BOARD_USB_IDS
    assert find_port(comports=lambda: ports) == "/dev/ttyUSB3"


def test_genuine_mega_is_preferred_to_a_ch340_and_the_id_list_is_extensible(boards, links):
    board = boards()
    ports = [
        SimpleNamespace(device="/dev/ttyUSB0", vid=0x1A86, pid=0x7523),
        SimpleNamespace(device=board.path, vid=0x2341, pid=0x0042),
    ]
    assert find_port(comports=lambda: ports) == board.path
    link = links(None, comports=lambda: ports).start()  # no port, no vid/pid: the known ids
    assert next_event(link, "connected").port == board.path
    pico = [SimpleNamespace(device="/dev/ttyACM0", vid=0x2E8A, pid=0x000A)]
    with pytest.raises(LinkError, match="2341:0042, 2341:0010, 2a03:0042, 1a86:7523"):
        find_port(comports=lambda: pico)
    assert find_port(comports=lambda: pico, usb_ids=BOARD_USB_IDS + ((0x2E8A, 0x000A),)) == "/dev/ttyACM0"
    with pytest.raises(ValueError):
        find_port(0x2341, None, lambda: ports)


def test_calibrate_not_answered_in_time_fails_alone_and_the_link_stays_up(boards, links):
    def no_calibrate_answer(seq, msg):
        return [] if isinstance(msg, Calibrate) else [Ack(seq, msg.TYPE)]

    board = boards(reply=no_calibrate_answer)
    link = links(board.path).start()
    started = time.monotonic()
    with pytest.raises(LinkError, match="did not answer CALIBRATE ZERO_EMPTY within 0.3 s"):
        link.calibrate(timeout_s=0.3)
    assert 0.3 <= time.monotonic() - started < 2.0
    assert [msg for _, msg in board.received if isinstance(msg, Calibrate)] == [Calibrate()]  # sent once
    assert link.connected and link.send_leds(FRAME) is True


def test_calibrate_refused_names_the_reason_and_the_boards_error(boards, links):
    def refuse(seq, msg):
        if isinstance(msg, Calibrate):
            return [
                BoardError(ErrorCode.CALIBRATION_FAILED, "slot 7 reads 1200"),
                Nack(seq, msg.TYPE, NackReason.FAILED),
            ]
        return [Ack(seq, msg.TYPE)]

    board = boards(reply=refuse)
    link = links(board.path).start()
    with pytest.raises(LinkError, match="refused CALIBRATE ZERO_EMPTY: NACK FAILED: slot 7 reads 1200"):
        link.calibrate()
    assert link.connected
    unlinked = links(board.path)
    with pytest.raises(LinkError, match="not connected"):
        unlinked.calibrate()


def test_a_config_breaking_the_specs_limits_is_refused_before_anything_is_sent():
    with pytest.raises(ValueError, match="hysteresis 151 > empty_threshold 150"):
        BoardLink("loop://", config=Config(hysteresis=151))


def test_nothing_is_opened_before_start():
    opened = []
    link = BoardLink("loop://", opener=lambda *a, **k: opened.append(a))
    assert opened == [] and link.state is None and link.stats == LinkStats()
