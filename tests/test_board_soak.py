"""Soak: 10,000 random checker moves on the emulated board, with 1% corrupted bytes, dropped and
duplicated frames and three unplug/replug cycles; the host's view must end identical to the
board's, and the board must show the last LED frame the host sent."""

from __future__ import annotations

import queue
import random
import time

from board_rules import Position
from firmware_bridge.cli_board import COLOURS
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.leds import LED_COUNT
from firmware_bridge.link import BoardLink
from firmware_bridge.protocol import Led, LedFrame, Snapshot
from firmware_bridge.sensing import counts_from_slots

MOVES = 10_000
REPLUG_AT = (2500, 5000, 7500)  # three unplug/replug cycles


def sensed(snapshot: Snapshot):
    return counts_from_slots(
        snapshot.readings, snapshot.slots_per_point, bar_slots=snapshot.bar_slots, tray_slots=snapshot.tray_slots
    )


def random_move(rng: random.Random, points: list[int]) -> tuple[int, int]:
    """A checker moved from a point to one empty or of its own colour; ``points`` is updated."""
    while True:
        src = rng.randrange(24)
        if points[src] == 0:
            continue
        sign = 1 if points[src] > 0 else -1
        dst = rng.randrange(24)
        if dst != src and points[dst] * sign >= 0:
            points[src] -= sign
            points[dst] += sign
            return src + 1, dst + 1


def random_frame(rng: random.Random) -> LedFrame:
    colours = list(COLOURS.values())
    return LedFrame(tuple(Led(*rng.choice(colours)) for _ in range(LED_COUNT)))


def test_soak_ten_thousand_moves_with_faults_and_replugs_ends_in_agreement():
    rng = random.Random(20261122)
    start = Position.start("backgammon")
    points = list(start.points)
    with BoardEmulator(seed=5) as emu:
        emu.set_position(start)
        link = BoardLink(emu.path, port_finder=lambda: emu.path, lost_after_s=0.8, backoff_initial_s=0.05).start()
        try:
            emu.inject(corrupt_rate=0.01, drop_rate=0.01, duplicate_rate=0.01)
            for i in range(MOVES):
                emu.move(*random_move(rng, points))
                if i % 500 == 250:
                    link.send_leds(random_frame(rng))  # may go unacknowledged under faults
                if i in REPLUG_AT:
                    emu.replug()
                while True:  # keep the queue drained as an application would
                    try:
                        link.events.get_nowait()
                    except queue.Empty:
                        break
            emu.inject()  # faults off: the next heartbeats heal whatever was lost
            want = tuple(points)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                snap = link.state
                if snap is not None and sensed(snap).points == want and link.connected:
                    break
                time.sleep(0.05)
            assert link.state is not None and sensed(link.state).points == want
            final = random_frame(rng)
            assert link.send_leds(final)
            assert emu.led_frame == final
            stats = link.stats
            # a replug that comes while the link is already reconnecting (1% of bytes corrupt
            # leaves few snapshot frames whole) is absorbed by that reconnect
            assert 1 <= stats.reconnects
            assert stats.corrupt > 0  # the faults really happened
        finally:
            link.stop()
