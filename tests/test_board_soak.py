"""Soak of the board link under the faults a USB cable shows (``FAULT_PRESETS``: realistic, harsh).

Random checker moves and LED frames go through the real host link to the emulated board
while the faults are on, with scripted unplugs besides the profile's. Checked as each one
arrives, during the faults: every snapshot shows a position the board had, none older than
the last one shown. At the end: every LED frame was acknowledged, or shown on the board
after the link re-sent it, and every fault was followed by an agreeing snapshot within
``RECOVERY_LIMIT_S``. :func:`soak` returns the figures ``benchmarks/soak_board.py`` prints.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import queue
import random
import re
import select
import threading
import time
from dataclasses import dataclass, field

import pytest

from board_rules import Position
from firmware_bridge.cli_board import COLOURS
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.emulator_pty import FAULT_PRESETS, Fault, FaultKind, FaultProfile, PtyPort
from firmware_bridge.leds import LED_COUNT
from firmware_bridge.link import BoardLink, LinkEvent
from firmware_bridge.protocol import Led, LedFrame, Snapshot
from firmware_bridge.sensing import counts_from_slots

MOVE_S = 0.01  # one checker move every 10 ms: about 400 frames a second from the board
LED_EVERY = 10  # an LED frame every 10 checker moves
RECOVERY_LIMIT_S = 5.0  # every fault is followed by an agreeing snapshot within this
SETTLE_S = 30.0  # the longest the end of a run waits for the host to catch up
_runs = itertools.count(1)
RECOVERED_FROM = (FaultKind.LOSS, FaultKind.CORRUPT, FaultKind.BURST, FaultKind.STALL, FaultKind.UNPLUG)


def sensed(snapshot: Snapshot):
    return counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )


def random_move(rng: random.Random, points: list[int]) -> tuple[int, int, tuple[int, ...]]:
    """A checker moved from a point to one empty or of its own colour: (from, to, the points while it is lifted).

    ``points`` is updated to the position after the move.
    """
    while True:
        src = rng.randrange(24)
        if points[src] == 0:
            continue
        sign = 1 if points[src] > 0 else -1
        dst = rng.randrange(24)
        if dst != src and points[dst] * sign >= 0:
            points[src] -= sign
            lifted = tuple(points)
            points[dst] += sign
            return src + 1, dst + 1, lifted


def random_frame(rng: random.Random) -> LedFrame:
    colours = list(COLOURS.values())
    return LedFrame(tuple(Led(*rng.choice(colours)) for _ in range(LED_COUNT)))


class BoardHistory:
    """The positions the board has had, in order; which of them a snapshot may still show.

    The driver announces a position (:meth:`expect`) before the board takes it, so a
    snapshot may show any position from the last one shown up to the newest announced.
    """

    def __init__(self, points: tuple[int, ...]) -> None:
        self._lock = threading.Lock()
        self._states = [points]
        self._lower = 0  # the index of the position the last agreeing snapshot showed

    def expect(self, *states: tuple[int, ...]) -> None:
        with self._lock:
            self._states.extend(states)

    @property
    def current(self) -> tuple[int, ...]:
        with self._lock:
            return self._states[-1]

    def agrees(self, points: tuple[int, ...]) -> bool:
        """True if ``points`` is a position the board had, no older than the last one shown."""
        with self._lock:
            for j in range(self._lower, len(self._states)):
                if self._states[j] == points:
                    self._lower = j
                    return True
            return False


class Watcher(threading.Thread):
    """Drains the link's events as an application would, checking each snapshot the moment it arrives."""

    def __init__(self, link: BoardLink, board: BoardHistory) -> None:
        super().__init__(name="soak-watcher", daemon=True)
        self.link = link
        self.board = board
        self.stop = threading.Event()
        self.connection = 0  # counts connected / reconnected events: the board clock restarts with each boot
        self.received: list[tuple[float, int, int]] = []  # (received at, connection, board ms) of agreeing snapshots
        self.disagreements: list[str] = []
        self.snapshots = 0
        self.last_points: tuple[int, ...] | None = None

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                event = self.link.events.get(timeout=0.05)
            except queue.Empty:
                continue
            now = time.monotonic()
            if isinstance(event, LinkEvent):
                self.connection += event.kind in ("connected", "reconnected")
            elif isinstance(event, Snapshot):
                self.snapshots += 1
                points = sensed(event).points
                self.last_points = points
                if self.board.agrees(points):
                    self.received.append((now, self.connection, event.timestamp_ms))
                else:
                    self.disagreements.append(
                        f"at {now:.3f} the host was shown {points} on {self.link.port!r}, never the board's since"
                    )

    def sent_and_received(self) -> list[tuple[float, float]]:
        """(sent at, received at) of each agreeing snapshot, oldest first, on ``time.monotonic()``'s clock.

        The board stamps a snapshot with its clock since boot; each boot's start is taken
        as the earliest (received at - board time) of that connection: the least latency.
        """
        boots: dict[int, float] = {}
        for received, connection, ms in self.received:
            boots[connection] = min(boots.get(connection, math.inf), received - ms / 1000)
        return sorted((boots[c] + ms / 1000, received) for received, c, ms in self.received)


@dataclass
class SoakFigures:
    """What one soak measured."""

    profile: FaultProfile
    seconds: float = 0.0
    moves: int = 0
    board_frames: int = 0
    bytes_lost: int = 0  # to a line the host did not read in time
    faults: dict[FaultKind, int] = field(default_factory=dict)  # put on frames to the host
    faults_to_board: dict[FaultKind, int] = field(default_factory=dict)
    scripted_unplugs: int = 0
    snapshots: int = 0  # received by the host
    agreed: int = 0
    frames: int = 0  # valid frames counted by the link
    corrupt: int = 0  # corrupt frames counted (and skipped) by the link
    retries: int = 0
    reconnects: int = 0
    leds_sent: int = 0
    leds_acked: int = 0  # acknowledged at the first send_leds
    leds_resent: int = 0  # not acknowledged then, shown on the board after the link re-sent it
    led_show_s: list[float] = field(default_factory=list)  # send_leds to shown, for the re-sent ones
    recovery_s: dict[FaultKind, list[float]] = field(default_factory=dict)
    unrecovered: list[Fault] = field(default_factory=list)


def recovery(faults: tuple[Fault, ...], snapshots: list[tuple[float, float]]) -> tuple[dict, list]:
    """Seconds from each fault to the receipt of the first agreeing snapshot the board sent after it."""
    sent = [s for s, _ in snapshots]
    first_received = [r for _, r in snapshots]  # from each snapshot on, the earliest receipt
    for i in range(len(first_received) - 2, -1, -1):
        first_received[i] = min(first_received[i], first_received[i + 1])
    times: dict[FaultKind, list[float]] = {kind: [] for kind in RECOVERED_FROM}
    unrecovered = []
    for fault in faults:
        if not fault.to_host or fault.kind not in times:
            continue
        i = bisect.bisect_right(sent, fault.at)
        if i == len(sent):
            unrecovered.append(fault)
        else:
            times[fault.kind].append(first_received[i] - fault.at)
    return times, unrecovered


def soak(
    profile: FaultProfile,
    *,
    seconds: float,
    seed: int = 1,
    replugs: int = 1,
    move_s: float = MOVE_S,
    led_every: int = LED_EVERY,
) -> SoakFigures:
    """Play random checker moves and LED frames for ``seconds`` under ``profile``, with ``replugs`` scripted unplugs.

    Raises AssertionError the moment the host is shown a position the board never had since.
    """
    rng = random.Random(seed)
    start = Position.start("backgammon")
    points = list(start.points)
    board = BoardHistory(tuple(points))
    figures = SoakFigures(profile)
    replug_at = [seconds * (k + 1) / (replugs + 1) for k in range(replugs)]
    # a pseudo-terminal number freed by an unplug may go to another process's emulator: the link asks
    # only for this board's path (none while its cable is out), and a serial of its own keeps strangers out
    with BoardEmulator(serial=f"SOAK-{os.getpid()}-{next(_runs)}", seed=seed) as emu:

        def path() -> str | None:
            try:
                return emu.path
            except RuntimeError:
                return None

        emu.set_position(start)
        link = BoardLink(emu.path, port_finder=path).start()
        watcher = Watcher(link, board)
        watcher.start()
        shown: list[float] = []  # when each LED frame was sent, if the board does not show it yet
        frame: LedFrame | None = None
        try:
            emu.inject(profile=profile)
            t0 = next_at = time.monotonic()
            while (now := time.monotonic()) < t0 + seconds:
                src, dst, lifted = random_move(rng, points)
                board.expect(lifted, tuple(points))
                emu.move(src, dst)
                figures.moves += 1
                if shown and emu.led_frame == frame:
                    figures.leds_resent += 1
                    figures.led_show_s.append(time.monotonic() - shown.pop())
                if not shown and figures.moves % led_every == 0:
                    frame = random_frame(rng)
                    figures.leds_sent += 1
                    sent_at = time.monotonic()
                    if link.send_leds(frame) and emu.led_frame == frame:
                        figures.leds_acked += 1
                    else:  # lost on the way, or the board reset since: the link sends it again
                        shown.append(sent_at)
                if replug_at and now - t0 >= replug_at[0]:
                    replug_at.pop(0)
                    emu.replug()
                    figures.scripted_unplugs += 1
                assert not watcher.disagreements, watcher.disagreements[0]
                next_at = max(next_at + move_s, time.monotonic())  # no rush to catch up after a stall
                time.sleep(max(0.0, next_at - time.monotonic()))
            faults_off = time.monotonic()
            figures.seconds = faults_off - t0
            log = emu.fault_log()
            emu.inject()  # the faults end; whatever the host still lacks comes with the next heartbeats
            deadline = faults_off + SETTLE_S
            while time.monotonic() < deadline and not (
                watcher.received
                and watcher.received[-1][0] > faults_off + 0.6  # a heartbeat sent after the faults ended
                and watcher.last_points == board.current
                and (not shown or emu.led_frame == frame)
            ):
                time.sleep(0.05)
            assert not watcher.disagreements, watcher.disagreements[0]
            if shown and emu.led_frame == frame:
                figures.leds_resent += 1
                figures.led_show_s.append(time.monotonic() - shown.pop())
            figures.recovery_s, figures.unrecovered = recovery(log, watcher.sent_and_received())
            for fault in log:
                counts = figures.faults if fault.to_host else figures.faults_to_board
                counts[fault.kind] = counts.get(fault.kind, 0) + 1
            figures.board_frames = emu.frames_sent
            figures.bytes_lost = emu.bytes_lost
            figures.snapshots, figures.agreed = watcher.snapshots, len(watcher.received)
            stats = link.stats
            figures.frames, figures.corrupt = stats.frames, stats.corrupt
            figures.retries, figures.reconnects = stats.retries, stats.reconnects
            assert watcher.last_points == board.current, "the host never caught up with the board"
            assert frame is None or emu.led_frame == frame == link.led_frame
        finally:
            watcher.stop.set()
            watcher.join(timeout=5)
            link.stop()
    return figures


def check(figures: SoakFigures) -> None:
    """What every soak must show, whatever the profile."""
    assert figures.snapshots == figures.agreed > 0
    assert figures.leds_sent > 0
    assert figures.leds_acked + figures.leds_resent == figures.leds_sent, "an LED frame was never shown"
    assert not figures.unrecovered, f"no agreeing snapshot after {figures.unrecovered[0]}"
    worst = max((s for times in figures.recovery_s.values() for s in times), default=0.0)
    assert worst < RECOVERY_LIMIT_S, f"a fault took {worst:.2f} s to recover from"
    assert figures.faults.get(FaultKind.UNPLUG, 0) >= figures.scripted_unplugs >= 1
    assert figures.reconnects >= 1


class Line:
    """A :class:`PtyPort` and the host's end of it, for the fault model's own tests."""

    def __init__(self, profile: FaultProfile, seed: int = 3) -> None:
        self.port = PtyPort(fault_seed=seed)
        self.port.open()
        self.port.inject(profile=profile)
        self.host = os.open(self.port.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)

    def received(self) -> bytes:
        out = b""
        while select.select([self.host], [], [], 0.05)[0]:
            out += os.read(self.host, 65536)
        return out

    def close(self) -> None:
        os.close(self.host)
        self.port.close()


FRAMES = [bytes([1 + k % 250]) * 40 + b"\x00" for k in range(200)]


@pytest.mark.parametrize("preset", sorted(FAULT_PRESETS))
def test_fault_profile_round_trips_through_its_text(preset):
    profile = FAULT_PRESETS[preset]
    assert FaultProfile.parse(preset) is profile and FaultProfile.parse(str(profile)) == profile
    assert str(FaultProfile()) == "" and FaultProfile.parse("") == FaultProfile()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("frame_loss=2", "frame_loss must be a number in 0..1, not 2.0"),
        ("stall_s=-1", "stall_s must be 0..60 seconds, not -1.0"),
        ("burst_bytes=0", "burst_bytes must be an integer 1..4096, not 0"),
        ("burst_bytes=1.5", "burst_bytes: '1.5' is not a number"),
        ("stall=\u00b2", "stall: '\u00b2' is not a number"),
        ("burst_bytes=\u0661\u0662", "burst_bytes: '\u0661\u0662' is not a number"),
        ("loss=0.1", "fault 'loss=0.1' must be a preset"),
        ("gentle", "fault 'gentle' must be a preset (realistic, harsh)"),
        ("unplug=0.1 unplug=0.2", "fault 'unplug' is named twice"),
    ],
)
def test_fault_profile_refuses_bad_text_naming_the_field(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        FaultProfile.parse(text)


def test_old_knobs_are_a_per_byte_profile():
    port = PtyPort()
    port.inject(0.01, 0.02, 0.03, 0.1)
    assert port.profile == FaultProfile(byte_corrupt=0.01, byte_drop=0.02, duplicate=0.03, delay_s=0.1)
    with pytest.raises(ValueError, match="corrupt_rate must be in 0..1"):
        port.inject(corrupt_rate=1.5)
    with pytest.raises(ValueError, match="a profile or rates, not both"):
        port.inject(0.01, profile=FAULT_PRESETS["harsh"])


def test_frame_loss_drops_whole_frames_and_the_rest_arrive_intact():
    line = Line(FaultProfile(frame_loss=0.2))
    try:
        for frame in FRAMES:
            line.port.send(frame)
        pieces = line.received().split(b"\x00")[:-1]
        lost = line.port.fault_counts[FaultKind.LOSS]
        assert 10 < lost < 80 and len(pieces) == len(FRAMES) - lost
        assert all(piece + b"\x00" in FRAMES for piece in pieces)
    finally:
        line.close()


def test_frame_corruption_changes_exactly_one_byte_of_a_frame():
    line = Line(FaultProfile(frame_corrupt=1.0))
    try:
        line.port.send(FRAMES[0])
        got = line.received()
        assert len(got) == len(FRAMES[0]) and sum(a != b for a, b in zip(got, FRAMES[0])) == 1
    finally:
        line.close()


def test_a_burst_runs_on_into_the_next_frame():
    line = Line(FaultProfile(burst=1.0, burst_bytes=60))
    try:
        line.port.send(FRAMES[0])
        line.port.send(FRAMES[1])
        got = line.received()
        assert len(got) == 2 * len(FRAMES[0]) and got[41:] != FRAMES[1]  # at most 41 of 60 bytes fit in the first
        assert line.port.fault_counts[FaultKind.BURST] == 1  # one burst, not two
    finally:
        line.close()


def test_frames_from_the_host_are_lost_whole_too():
    line = Line(FaultProfile(frame_loss=1.0))
    try:
        os.write(line.host, FRAMES[0] + FRAMES[1][:10])
        select.select([line.port.fd], [], [], 1)
        assert line.port.read() == b""
        assert [f.to_host for f in line.port.fault_log] == [False]  # the half frame waits for its end
    finally:
        line.close()


def test_an_unplug_closes_the_line_until_it_is_due_back():
    line = Line(FaultProfile(unplug=1.0, unplug_s=0.2))
    try:
        line.port.send(FRAMES[0])
        assert line.port.fd is None and line.port.path is None and line.port.unplug_due is not None
        assert [f.kind for f in line.port.fault_log] == [FaultKind.UNPLUG]
        path = line.port.plug_in()
        assert line.port.fd is not None and line.port.unplug_due is None and path == line.port.path
    finally:
        line.close()


def test_quick_soak_realistic_faults_host_agrees_with_the_board_throughout():
    figures = soak(FAULT_PRESETS["realistic"], seconds=4, seed=7)
    check(figures)
    assert figures.moves > 200


def test_quick_soak_harsh_faults_host_agrees_as_soon_as_a_clean_snapshot_passes():
    figures = soak(FAULT_PRESETS["harsh"], seconds=4, seed=11)
    check(figures)
    assert figures.corrupt > 0 and figures.faults.get(FaultKind.LOSS, 0) > 0  # the faults really happened
    assert figures.leds_acked >= 0.8 * figures.leds_sent


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["realistic", "harsh"])
def test_soak_thirty_seconds_with_three_scripted_unplugs(preset):
    figures = soak(FAULT_PRESETS[preset], seconds=30, seed=20261122, replugs=3)
    check(figures)
    assert figures.faults.get(FaultKind.LOSS, 0) > 0 and figures.faults.get(FaultKind.STALL, 0) > 0
    assert figures.leds_acked >= 0.8 * figures.leds_sent
