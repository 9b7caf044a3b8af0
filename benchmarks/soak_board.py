"""Soak of the board link under line faults (not a test): prints what the host saw at each fault profile.

Run ``benchmarks/soak_board.py`` (or ``make soak-board``). Profiles: the
presets ``realistic`` and ``harsh`` by default, or any ``FaultProfile.parse`` text. For each,
``tests/test_board_soak.py``'s :func:`soak` plays checker moves and LED frames through the
host link to the emulated board with ``--replugs`` scripted unplugs; printed: frames, faults,
LED frames sent / acknowledged, snapshots received / agreeing, corrupt frames and the time
to recover after each kind of fault. The reference, run first, is the same soak without
faults; agreeing snapshots a second are a ratio to it.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from firmware_bridge.emulator_pty import FAULT_PRESETS, FaultKind, FaultProfile  # noqa: E402
from tests.test_board_soak import LED_EVERY, MOVE_S, RECOVERED_FROM, SoakFigures, soak  # noqa: E402


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def counts(faults: dict[FaultKind, int], kinds) -> str:
    return ", ".join(f"{kind.value} {faults.get(kind, 0)}" for kind in kinds)


def report(name: str, f: SoakFigures, reference: SoakFigures | None) -> None:
    print(f"== {name}: {f.profile}" if name in FAULT_PRESETS else f"== {name}")
    print(
        f"  run              {f.seconds:.1f} s, {f.moves:,} checker moves, {f.board_frames:,} frames from the board"
        f" ({f.bytes_lost} bytes lost to a full line)"
    )
    unplugs = f.faults.get(FaultKind.UNPLUG, 0)
    print(
        f"  faults to host   {counts(f.faults, list(FaultKind))} ({f.scripted_unplugs} of {unplugs} unplugs scripted)"
    )
    print(f"  faults to board  {counts(f.faults_to_board, (FaultKind.LOSS, FaultKind.CORRUPT, FaultKind.BURST))}")
    lost = f.leds_sent - f.leds_acked - f.leds_resent
    shown = f" (shown after {max(f.led_show_s):.3f} s at most)" if f.led_show_s else ""
    print(
        f"  LED frames       {f.leds_sent} sent, {f.leds_acked} acknowledged"
        f" ({f.leds_acked / max(1, f.leds_sent):.1%}),"
        f" {f.leds_resent} shown after a re-send{shown}, {lost} never shown; {f.retries} re-sends by the link"
    )
    rate = f.agreed / f.seconds if f.seconds else 0.0
    ratio = f" ({rate / (reference.agreed / reference.seconds):.2f} of no faults)" if reference else ""
    print(
        f"  snapshots        {f.snapshots:,} received, {f.agreed:,} agreed with the board,"
        f" {f.snapshots - f.agreed} did not; {rate:.0f} agreeing a second{ratio}"
    )
    print(f"  link counted     {f.frames:,} frames valid, {f.corrupt} corrupt, {f.reconnects} reconnects")
    for kind in RECOVERED_FROM:
        times = f.recovery_s.get(kind, [])
        if times:
            print(
                f"  recovery {kind.value:<8}n={len(times):<4} p50 {statistics.median(times) * 1000:7.1f} ms"
                f"  p95 {pct(times, 95) * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms"
            )
    if f.unrecovered:
        print(f"  not recovered    {len(f.unrecovered)} faults had no agreeing snapshot after them")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="*", default=["realistic", "harsh"], help="presets or name=value words")
    parser.add_argument("--seconds", type=float, default=30.0, help="faulted run per profile (default 30)")
    parser.add_argument("--replugs", type=int, default=3, help="scripted unplugs per run (default 3)")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    try:
        profiles = [(text, FaultProfile.parse(text)) for text in args.profiles]
    except ValueError as exc:
        parser.error(str(exc))
    logging.disable(logging.WARNING)  # the link logs every corrupt frame and lost board
    print(
        f"soak of the board link: {args.seconds:g} s a profile, a checker move every {MOVE_S * 1000:g} ms,"
        f" an LED frame every {LED_EVERY} moves, {args.replugs} scripted unplugs, seed {args.seed}"
    )
    started = time.monotonic()
    reference = soak(FaultProfile(), seconds=args.seconds, seed=args.seed, replugs=args.replugs)
    report("reference: no faults", reference, None)
    for name, profile in profiles:
        report(name, soak(profile, seconds=args.seconds, seed=args.seed, replugs=args.replugs), reference)
    print(f"took {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
