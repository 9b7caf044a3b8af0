"""Benchmark of the board link (not a test): latency through a real pseudo-terminal.

Run ``.venv/bin/python benchmarks/bench_board.py`` (or ``make bench-board``).

1. LED command round trip: :meth:`BoardLink.send_leds` to the board's ACK, against
   the emulated board on a pseudo-terminal; p50 and p99 over ``--n`` commands.
2. Checker placed to host event: a checker moved on the emulated board until the
   host's queue hands over the PUT event; p50 and p99.
The reference, measured in the same process, is a bare pseudo-terminal round trip
(one byte written on one side and read on the other, and back); each figure is also
printed as a ratio to it, since these machines are shared and noisy. Target: p99
under 20 ms for both.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import select
import statistics
import sys
import time
import tty
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board_rules import Position  # noqa: E402
from firmware_bridge.cli_board import COLOURS  # noqa: E402
from firmware_bridge.emulator import BoardEmulator  # noqa: E402
from firmware_bridge.leds import LED_COUNT  # noqa: E402
from firmware_bridge.link import BoardLink  # noqa: E402
from firmware_bridge.protocol import Led, LedFrame, Put  # noqa: E402

TARGET_MS = 20.0


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def pty_round_trip(n: int) -> list[float]:
    """Seconds for one byte there and back over a bare pseudo-terminal."""
    master, slave = os.openpty()
    tty.setraw(slave)
    out = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(master, b"x")
            select.select([slave], [], [], 1)
            os.read(slave, 1)
            os.write(slave, b"y")
            select.select([master], [], [], 1)
            os.read(master, 1)
            out.append(time.perf_counter() - t0)
    finally:
        os.close(master)
        os.close(slave)
    return out


def report(label: str, samples: list[float], ref: float) -> bool:
    p50, p99 = pct(samples, 50) * 1e3, pct(samples, 99) * 1e3
    ok = p99 < TARGET_MS
    print(
        f"{label:34} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"(x{p50 / ref:,.0f} / x{p99 / ref:,.0f} the bare pty)  p99 under {TARGET_MS:g} ms: {'yes' if ok else 'NO'}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    ref_samples = pty_round_trip(args.n)
    ref = statistics.median(ref_samples) * 1e3
    print(f"reference: bare pseudo-terminal round trip p50 {ref:.3f} ms, p99 {pct(ref_samples, 99) * 1e3:.3f} ms")
    with BoardEmulator(seed=1) as emu:
        emu.set_position(Position.start("backgammon"))
        link = BoardLink(emu.path).start()
        try:
            leds = []
            colours = list(COLOURS.values())
            for _ in range(args.n):
                frame = LedFrame(tuple(Led(*rng.choice(colours)) for _ in range(LED_COUNT)))
                t0 = time.perf_counter()
                assert link.send_leds(frame)
                leds.append(time.perf_counter() - t0)
            places = []
            src, dst = 13, 10
            for _ in range(args.n):
                while True:  # drain what came before
                    try:
                        link.events.get_nowait()
                    except queue.Empty:
                        break
                t0 = time.perf_counter()
                emu.move(src, dst)
                while True:
                    event = link.events.get(timeout=2)
                    if isinstance(event, Put):
                        places.append(time.perf_counter() - t0)
                        break
                src, dst = dst, src
        finally:
            link.stop()
    ok = report("LED frame sent -> acknowledged", leds, ref)
    ok &= report("checker placed -> host event", places, ref)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
