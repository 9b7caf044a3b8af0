"""The link finds its board again wherever it comes back, by its identity, and takes back no other board.

The choice of ports is pure (:func:`candidate_ports`, :func:`ports_to_try`) and tested
as data. The rest runs the emulator on pseudo-terminals: it replugs under a new name,
again and again, while another board sits on another port. Nothing sleeps but polling
waits with a deadline.
"""

from __future__ import annotations

import argparse
import io
import os
import queue
import threading
import time
from types import SimpleNamespace

import pytest
import serial

from board_rules import Position
from firmware_bridge.cli_board import parse_led_command, watch
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardIdentity, BoardLink, LinkEvent, candidate_ports, ports_to_try
from firmware_bridge.protocol import Snapshot
from firmware_bridge.sensing import counts_from_slots
from tests.helpers import first_from
from tests.test_link import FakeBoard

WAIT = 5.0  # seconds any single expected event may take
FAST = {
    "lost_after_s": 0.6,
    "hello_timeout_s": 0.3,
    "hello_retries": 1,
    "backoff_initial_s": 0.02,
    "backoff_max_s": 0.2,
}
MEGA = (0x2341, 0x0042)
CH340 = (0x1A86, 0x7523)


def usb(device, ids=MEGA, serial_number=None):
    """A ``list_ports.comports()`` entry."""
    vid, pid = ids if ids else (None, None)
    return SimpleNamespace(device=device, vid=vid, pid=pid, serial_number=serial_number)


def next_link_event(link: BoardLink, kind: str, timeout: float = WAIT) -> LinkEvent:
    event = first_from(link.events, lambda e: isinstance(e, LinkEvent) and e.kind == kind, timeout)
    if event is None:
        pytest.fail(f"no {kind!r} link event within {timeout} s")
    return event


def wait_until(predicate, timeout: float = WAIT, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            pytest.fail(f"{what} did not hold within {timeout} s")
        time.sleep(0.01)


@pytest.fixture
def hold():
    """Keep a pseudo-terminal's name taken after its board is unplugged, as a host holding /dev/ttyACM0 does.

    The kernel gives a replugged board a number nobody holds; holding every old one
    makes each replug come back under a name never used before. The fd is never read,
    so it takes no bytes from the link.
    """
    fds: list[int] = []

    def take(path: str) -> None:
        fds.append(os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))

    yield take
    for fd in fds:
        os.close(fd)


def points(snapshot: Snapshot) -> tuple[int, ...]:
    return counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    ).points


# ------------------------------------------------------------ the choice of ports, as data


def test_a_board_never_connected_is_looked_for_on_the_named_port_only():
    assert ports_to_try("/dev/ttyACM0", None, ["/dev/ttyACM1"], None) == ("/dev/ttyACM0",)
    assert ports_to_try(None, None, ["/dev/ttyACM1"], None) == ()


def test_a_known_board_is_looked_for_on_the_named_port_then_the_last_then_each_candidate_once():
    me = BoardIdentity("MEGA-7")
    order = ports_to_try("/dev/ttyACM0", "/dev/ttyACM1", ["/dev/ttyACM2", "/dev/ttyACM0", "/dev/ttyACM1"], me)
    assert order == ("/dev/ttyACM0", "/dev/ttyACM1", "/dev/ttyACM2")
    assert ports_to_try("/dev/ttyACM0", "/dev/ttyACM0", [], me) == ("/dev/ttyACM0",)


def test_the_port_with_the_boards_usb_serial_number_comes_first_and_other_devices_are_left_out():
    ports = [
        usb("/dev/ttyS0", ids=None),  # a UART without a USB id: never the board
        usb("/dev/ttyACM0", serial_number="OTHER-MEGA"),  # another Mega: another USB serial number
        usb("/dev/ttyUSB0", CH340),  # a clone that reports no serial number: may be the board
        usb("/dev/ttyACM3", (0x2E8A, 0x000A), serial_number="PICO"),  # not a board's USB id
        usb("/dev/ttyACM1", serial_number="95530343"),  # the board, back under another name
    ]
    me = BoardIdentity("MEGA-0001", usb_serial="95530343")
    assert candidate_ports(ports, me) == ("/dev/ttyACM1", "/dev/ttyUSB0")


def test_without_a_known_usb_serial_number_every_port_with_a_boards_usb_id_is_a_candidate():
    ports = [
        usb("/dev/ttyUSB0", CH340),
        usb("/dev/ttyACM1", serial_number="B"),
        usb("/dev/ttyACM0", serial_number="A"),
        usb("/dev/ttyS0", ids=None),
    ]
    assert candidate_ports(ports, BoardIdentity("EMU-0001")) == ("/dev/ttyACM0", "/dev/ttyACM1", "/dev/ttyUSB0")
    assert candidate_ports(ports, None, usb_ids=[CH340]) == ("/dev/ttyUSB0",)


def test_a_board_identity_needs_a_serial():
    with pytest.raises(ValueError, match="BoardIdentity.serial must be a non-empty string, not ''"):
        BoardIdentity("")


# ------------------------------------------------------------ on pseudo-terminals


def test_link_follows_the_emulator_replugged_under_a_new_name_again_and_again(hold):
    with BoardEmulator(seed=11, noise=0, serial="EMU-FOLLOW") as emu:
        emu.set_position(Position.start("backgammon"))
        link = BoardLink(emu.path, candidates=lambda: [emu.path], **FAST).start()
        try:
            assert link.identity == BoardIdentity("EMU-FOLLOW")
            seen = {emu.path}
            for n, dest in enumerate((10, 9, 11, 7)):
                frame = parse_led_command(f"led {dest} amber")
                assert link.send_leds(frame)
                hold(emu.path)
                new = emu.replug()
                assert new not in seen  # a name never used before: the named port does not come back
                seen.add(new)
                next_link_event(link, "disconnected")
                back = next_link_event(link, "reconnected")
                assert back.port == new and back.hello.serial == "EMU-FOLLOW" and link.port == new
                wait_until(lambda f=frame: emu.led_frame == f, what="the LED frame re-sent after the replug")
                emu.move(13, dest)  # and the board is read again where it now is
                want = (4 - n, 1)
                moved = first_from(
                    link.events,
                    lambda e, d=dest, w=want: isinstance(e, Snapshot) and (points(e)[12], points(e)[d - 1]) == w,
                    WAIT,
                )
                assert moved is not None
            assert link.stats.reconnects == 4
        finally:
            link.stop()


def test_another_board_on_another_port_is_not_taken_back():
    with (
        BoardEmulator(seed=12, noise=0, serial="EMU-MINE") as mine,
        BoardEmulator(seed=13, noise=0, serial="EMU-OTHER") as other,
    ):
        rounds, offer_mine = [0], threading.Event()
        probed_twice = threading.Event()

        def candidates() -> list[str]:
            rounds[0] += 1
            if rounds[0] >= 3:
                probed_twice.set()  # two whole rounds asked the other board and refused it
            return [other.path, mine.path] if offer_mine.is_set() else [other.path]

        link = BoardLink(mine.path, candidates=candidates, **FAST).start()
        try:
            mine.replug()  # unplugged: its new port is not offered yet
            next_link_event(link, "disconnected")
            assert probed_twice.wait(WAIT)
            assert other.frames_received > 0  # it was asked who it is
            assert not link.connected and link.events.empty()  # and it was not taken
            offer_mine.set()
            back = next_link_event(link, "reconnected")
            assert back.port == mine.path and back.hello.serial == "EMU-MINE"
        finally:
            link.stop()


def test_another_board_on_the_named_port_is_not_taken_back_either():
    with (
        BoardEmulator(seed=14, noise=0, serial="EMU-MINE") as mine,
        BoardEmulator(seed=15, noise=0, serial="EMU-OTHER") as other,
    ):
        behind = {"/dev/ttyACM0": mine.path}  # what the named port is, from moment to moment

        def opener(port, **kwargs):
            return serial.serial_for_url(behind[port], **kwargs)

        link = BoardLink("/dev/ttyACM0", opener=opener, candidates=lambda: [], comports=lambda: [], **FAST).start()
        try:
            behind["/dev/ttyACM0"] = other.path  # another board is plugged in where ours was
            new = mine.replug()
            next_link_event(link, "disconnected")
            wait_until(lambda: other.frames_received >= 2, what="the other board asked twice")
            assert not link.connected
            behind["/dev/ttyACM0"] = new  # ours is back
            assert next_link_event(link, "reconnected").hello.serial == "EMU-MINE"
        finally:
            link.stop()


def test_a_usb_board_back_as_another_tty_is_found_by_its_usb_serial_number_and_no_other_device_is_opened():
    with BoardEmulator(seed=16, noise=0, serial="MEGA-0001") as emu:
        behind = {"/dev/ttyACM0": emu.path}
        comports = [usb("/dev/ttyACM0", serial_number="95530343"), usb("/dev/ttyACM2", serial_number="OTHER")]
        opened: list[str] = []

        def opener(port, **kwargs):
            opened.append(port)
            if port not in behind:
                raise serial.SerialException(f"could not open port {port}: no such device")
            return serial.serial_for_url(behind[port], **kwargs)

        link = BoardLink("/dev/ttyACM0", opener=opener, comports=lambda: list(comports), **FAST).start()
        try:
            assert link.identity == BoardIdentity("MEGA-0001", usb_serial="95530343")
            comports[0] = usb("/dev/ttyACM1", serial_number="95530343")  # the kernel gave it another name
            del behind["/dev/ttyACM0"]
            behind["/dev/ttyACM1"] = emu.replug()
            assert next_link_event(link, "reconnected").port == "/dev/ttyACM1"
            assert "/dev/ttyACM2" not in opened  # a device with another USB serial number is never opened
            assert link.identity == BoardIdentity("MEGA-0001", usb_serial="95530343")
        finally:
            link.stop()


def test_a_candidate_of_another_major_version_is_skipped_not_a_refusal():
    stranger = FakeBoard(version=(2, 0), serial="FAKE-V2")
    try:
        with BoardEmulator(seed=17, noise=0, serial="EMU-MINE") as emu:
            link = BoardLink(emu.path, candidates=lambda: [stranger.path, emu.path], **FAST).start()
            try:
                new = emu.replug()
                kinds = []
                back = first_from(
                    link.events,
                    lambda e: isinstance(e, LinkEvent) and (kinds.append(e.kind) or e.kind == "reconnected"),
                    WAIT,
                )
                assert back is not None and back.port == new and "refused" not in kinds
            finally:
                link.stop()
    finally:
        stranger.stop()


class Lines(io.TextIOBase):
    """What ``watch`` prints, one line at a time on a queue."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self._part = ""

    def write(self, text: str) -> int:
        self._part += text
        *done, self._part = self._part.split("\n")
        for line in done:
            self.lines.put(line)
        return len(text)


def test_board_watch_on_a_port_follows_the_board_replugged_under_new_names(hold):
    with BoardEmulator(seed=18, noise=0, serial="EMU-WATCH") as emu:
        emu.set_position(Position.start("backgammon"))
        read_end, write_end = os.pipe()
        stdin = os.fdopen(read_end, encoding="utf-8")
        out = Lines()
        result: list[int] = []
        args = argparse.Namespace(port=emu.path, seconds=None)
        thread = threading.Thread(
            target=lambda: result.append(watch(args, stdin=stdin, out=out, candidates=lambda: [emu.path])), daemon=True
        )
        thread.start()
        try:
            assert first_from(out.lines, lambda line: line.startswith("link: connected"), WAIT) is not None
            seen = {emu.path}
            for _ in range(3):
                hold(emu.path)
                new = emu.replug()
                assert new not in seen
                seen.add(new)
                back = first_from(out.lines, lambda line: line.startswith("link: reconnected"), WAIT)
                assert back == f"link: reconnected {new}"
                assert first_from(out.lines, lambda line: line.startswith("board: points"), WAIT) is not None
        finally:
            os.close(write_end)  # end of input: watch returns
            thread.join(WAIT)
            stdin.close()
        assert result == [0]
