"""``tavli board ...``: the emulated board and a live view of a board, from the command line.

``tavli board emulate`` runs a :class:`BoardEmulator` on a pseudo-terminal, prints
its path and the LED frame it shows, and plays an optional script. ``tavli board
watch [--port PATH]`` opens any board (real or emulated) through :class:`BoardLink`
(without ``--port``, the board found by its USB id, ``link.BOARD_USB_IDS``),
follows it to whichever port it comes back on after an unplug (the same board only,
by its identity), prints the board as the host sees it, and sends LED commands typed on stdin.
Imports ``board_rules`` types and this package only.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from board_rules import Place, Position, Side, find_variant
from board_rules.errors import TavliError
from firmware_bridge import leds
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import BoardLink, LinkEvent
from firmware_bridge.protocol import Led, LedFrame, Snapshot
from firmware_bridge.sensing import counts_from_slots

# what ``led PLACES COLOUR`` lights: the referee's colours (firmware_bridge.leds), off and white
COLOURS = {
    "off": (0, 0, 0),
    **{name: (led.red, led.green, led.blue) for name, led in leds.COLOURS.items()},
    "white": (255, 255, 255),
}


class ScriptError(TavliError, ValueError):
    """A line of an emulator script or a watch command that cannot be read."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``board emulate`` and ``board watch``."""
    board = sub.add_parser("board", help="the sensor/LED board: an emulator, and a live view of a board")
    bsub = board.add_subparsers(dest="board_command", required=True)
    p = bsub.add_parser("emulate", help="run an emulated board on a pseudo-terminal and print its path")
    p.add_argument("--variant", default="backgammon", help="set up this variant's starting position")
    p.add_argument(
        "--script",
        help="a file of lines: place P white|black, lift P, move A B, sleep S, "
        "replug, inject corrupt=0.01 drop=0 duplicate=0 delay=0",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--exit", action="store_true", help="stop when the script ends (default: run until Ctrl-C)")
    p = bsub.add_parser("watch", help="open a board and print what the host sees; type LED commands")
    p.add_argument("--port", default=None, help="a pyserial URL or device path (default: find the board by its USB id)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long (default: until end of input)")


def _point(text: str) -> int | str:
    if text in ("bar", "off"):
        return text
    if text.isdigit() and 1 <= int(text) <= 24:
        return int(text)
    raise ScriptError(f"a point is 1..24, bar or off, not {text!r}")


_TRAYS = {"off": Place.off(Side.WHITE), "off-w": Place.off(Side.WHITE), "off-b": Place.off(Side.BLACK)}


def _led_place(text: str) -> Place:
    """A place in an LED command: 1..24, bar, off-w or off-b (``off`` alone is white's tray)."""
    if text == "bar":
        return Place.bar(Side.WHITE)  # the one bar LED
    if text in _TRAYS:
        return _TRAYS[text]
    if text.isdigit() and 1 <= int(text) <= 24:
        return Place.point(int(text))
    raise ScriptError(f"an LED's place is 1..24, bar, off-w or off-b, not {text!r}")


def run_script_line(emulator: BoardEmulator, line: str, out: TextIO) -> None:
    """Carry out one script line on ``emulator``; raises :class:`ScriptError` for a bad line."""
    words = line.split("#", 1)[0].split()
    if not words:
        return
    cmd, args = words[0], words[1:]
    if cmd == "place" and len(args) == 2 and args[1] in ("white", "black"):
        emulator.place(_point(args[0]), Side(args[1]))
    elif cmd == "lift" and len(args) == 1:
        emulator.lift(_point(args[0]))
    elif cmd == "move" and len(args) == 2:
        emulator.move(_point(args[0]), _point(args[1]))
    elif cmd == "sleep" and len(args) == 1:
        time.sleep(float(args[0]))
    elif cmd == "replug" and not args:
        print(f"replugged: {emulator.replug()}", file=out, flush=True)
    elif cmd == "inject":
        kw = {}
        for a in args:
            key, _, value = a.partition("=")
            if key not in ("corrupt", "drop", "duplicate", "delay"):
                raise ScriptError(f"inject takes corrupt=, drop=, duplicate=, delay=; not {a!r}")
            kw[
                {"corrupt": "corrupt_rate", "drop": "drop_rate", "duplicate": "duplicate_rate", "delay": "delay_s"}[key]
            ] = float(value)
        emulator.inject(**kw)
    else:
        raise ScriptError(f"cannot read script line {line.strip()!r}")


def led_text(frame: LedFrame | None) -> str:
    """The LED frame as a line: lit LEDs by their place (points 1..24, bar, off-w, off-b)."""
    if frame is None:
        return "LEDs: (none yet)"
    names = [str(i) for i in range(1, 25)] + ["bar", "off-w", "off-b"]
    lit = [
        f"{names[i]}:#{led.red:02x}{led.green:02x}{led.blue:02x}"
        for i, led in enumerate(frame.leds)
        if (led.red, led.green, led.blue) != (0, 0, 0)
    ]
    return "LEDs: " + (" ".join(lit) if lit else "all off")


def emulate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    emulator = BoardEmulator(seed=args.seed)
    path = emulator.start()
    try:
        emulator.set_position(Position.start(find_variant(args.variant)))
        print(f"emulated board on {path}", file=out, flush=True)
        if args.script:
            with open(args.script, encoding="utf-8") as fh:
                for line in fh:
                    run_script_line(emulator, line, out)
        if args.exit:
            print(led_text(emulator.led_frame), file=out, flush=True)
            return 0
        shown = None
        while True:  # until Ctrl-C: show the LED frame whenever it changes
            frame = emulator.led_frame
            if frame != shown:
                print(led_text(frame), file=out, flush=True)
                shown = frame
            time.sleep(0.1)
    except KeyboardInterrupt:
        return 0
    finally:
        emulator.stop()


def parse_led_command(line: str) -> LedFrame:
    """``led 13 red``, ``led 13,bar,off-b amber``, ``leds off`` to a whole LED frame; raises :class:`ScriptError`."""
    words = line.split()
    if words == ["leds", "off"]:
        return LedFrame(tuple(Led() for _ in range(leds.LED_COUNT)))
    if len(words) == 3 and words[0] == "led" and words[2] in COLOURS:
        r, g, b = COLOURS[words[2]]
        lit = {leds.led_index(_led_place(part)) for part in words[1].split(",")}
        return LedFrame(tuple(Led(r, g, b) if i in lit else Led() for i in range(leds.LED_COUNT)))
    raise ScriptError(f"LED commands are 'led POINTS COLOUR' or 'leds off', not {line.strip()!r}")


def watch(
    args: argparse.Namespace,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    *,
    candidates: Callable[[], Sequence[str]] | None = None,
) -> int:
    """Show the board on ``args.port`` until ``args.seconds`` pass or stdin ends; send typed LED commands.

    ``candidates`` names the ports where the board may come back after an unplug
    (default: the USB serial ports, :func:`firmware_bridge.link.candidate_ports`).
    Raises :class:`~firmware_bridge.link.LinkError` if the board cannot be reached at first.
    """
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    link = BoardLink(args.port, candidates=candidates).start()
    commands: queue.Queue = queue.Queue()

    def read_commands() -> None:
        for line in stdin:
            commands.put(line)
        commands.put(None)

    threading.Thread(target=read_commands, daemon=True).start()
    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                event = link.events.get(timeout=0.1)
                if isinstance(event, Snapshot):
                    sensed = counts_from_slots(
                        event.readings, event.slots_per_point, bar_slots=event.bar_slots, tray_slots=event.tray_slots
                    )
                    print(
                        f"board: points {list(sensed.points)} bar {sensed.bar} off {sensed.off}"
                        + (f" uncertain {list(sensed.uncertain)}" if sensed.uncertain else ""),
                        file=out,
                        flush=True,
                    )
                elif isinstance(event, LinkEvent):
                    print(f"link: {event.kind} {event.port or ''} {event.detail}".rstrip(), file=out, flush=True)
                else:
                    print(f"event: {event}", file=out, flush=True)
            except queue.Empty:
                pass
            try:
                line = commands.get_nowait()
            except queue.Empty:
                continue
            if line is None:
                if deadline is None:
                    break
                continue
            if line.strip():
                try:
                    ok = link.send_leds(parse_led_command(line))
                    print(f"leds: {'acknowledged' if ok else 'not acknowledged'}", file=out, flush=True)
                except ScriptError as exc:
                    print(f"tavli board watch: {exc}", file=sys.stderr)
    finally:
        link.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    """Carry out a parsed ``board`` command."""
    if args.board_command == "emulate":
        return emulate(args)
    return watch(args)
