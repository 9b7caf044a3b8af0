"""``tavli board ...``: the emulated board and a live view of a board, from the command line.

``emulate`` runs a :class:`BoardEmulator` on a pseudo-terminal, prints its path and its
LED frame when that changes, and carries out the commands of :mod:`firmware_bridge.script`
from ``--script FILE``, then from standard input; a line that cannot be done is said and
left out. ``watch [--port PATH]`` opens a board through :class:`BoardLink`, follows it to
whichever port it comes back on, prints the board when it changes and sends the LED
commands typed. Imports ``board_rules`` types and this package only.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from board_rules import Place, Position, Side, TavliError, find_variant
from firmware_bridge import leds
from firmware_bridge.emulator import BoardEmulator
from firmware_bridge.link import CONNECTED, RECONNECTED, BoardLink, LinkEvent
from firmware_bridge.protocol import Area, BoardError, Button, Led, LedFrame, Lift, Put, Snapshot
from firmware_bridge.script import HELP, MAX_LINE, Quit, ScriptError, run_line
from firmware_bridge.sensing import SensedCounts, counts_from_slots

__all__ = [
    "COLOURS",
    "LED_HELP",
    "MAX_SCRIPT_BYTES",
    "ScriptError",
    "add_parser",
    "board_text",
    "emulate",
    "led_text",
    "parse_led_command",
    "read_script",
    "run",
    "run_script_line",
    "watch",
]

# what ``led PLACES COLOUR`` lights: the referee's colours (firmware_bridge.leds), off and white
COLOURS = {
    "off": (0, 0, 0),
    **{name: (led.red, led.green, led.blue) for name, led in leds.COLOURS.items()},
    "white": (255, 255, 255),
}
MAX_SCRIPT_BYTES = 1 << 20  # a script of a whole match is some kilobytes
PROMPT = "board> "
LED_HELP = (
    "LED commands: led PLACES COLOUR (places 1..24, bar, off-w, off-b parted by commas; "
    f"colours {', '.join(COLOURS)}), leds off, help, quit"
)


def _seconds(text: str) -> float:
    """``--seconds``: a finite number of seconds, 0 or more (argparse's ``type``)."""
    try:
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds, 0 or more")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``board emulate`` and ``board watch``."""
    board = sub.add_parser("board", help="the sensor/LED board: an emulator, and a live view of a board")
    bsub = board.add_subparsers(dest="board_command", required=True)
    p = bsub.add_parser(
        "emulate",
        help="run an emulated board on a pseudo-terminal; type commands to it (help lists them)",
        description="Commands, from --script and then typed on standard input:\n" + HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--variant", default="backgammon", help="set up this variant's starting position")
    p.add_argument(
        "--script",
        metavar="FILE",
        help="carry out these commands first (the same as typed: move 13 10, move bar 22, move 6 off, lift bar, ...)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--exit",
        action="store_true",
        help="stop when the commands end: at the end of --script, or of standard input without one "
        "(default: run until quit or Ctrl-C). Exit status 2 if a line of them was refused",
    )
    p = bsub.add_parser("watch", help="open a board and print what the host sees; type LED commands")
    p.add_argument("--port", default=None, help="a pyserial URL or device path (default: find the board by its USB id)")
    p.add_argument("--seconds", type=_seconds, default=None, help="stop after this long (default: until end of input)")
    p.add_argument("--events", action="store_true", help="print each LIFT and PUT the board reports too")


def run_script_line(emulator: BoardEmulator, line: str, out: TextIO, variant: str = "backgammon") -> None:
    """Carry out one command line on ``emulator``; raises :class:`ScriptError` quoting the line for a bad one."""
    run_line(emulator, line, out, variant)


def read_script(path: str) -> list[str]:
    """The lines of the script at ``path``; raises :class:`ScriptError` naming it if it cannot be read.

    Refused: a missing or unreadable file, a directory, more than :data:`MAX_SCRIPT_BYTES`, text that is not UTF-8.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_SCRIPT_BYTES + 1)
    except OSError as exc:
        raise ScriptError(f"--script: {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScriptError(f"--script: {path!r}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise ScriptError(f"--script: {path!r}: {exc}") from None
    if len(text) > MAX_SCRIPT_BYTES:
        raise ScriptError(f"--script: {path!r}: longer than {MAX_SCRIPT_BYTES} characters")
    return text.splitlines()


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


# ------------------------------------------------------------------ emulate


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _wait_for_foreground(stream: TextIO) -> None:
    """Wait while ``stream`` is the terminal of another process group (``tavli board emulate &``): reading would stop us."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return
    while True:
        try:
            if not os.isatty(fd) or os.tcgetpgrp(fd) == os.getpgrp():
                return
        except OSError:
            return
        time.sleep(0.5)


def _read_lines(stream: TextIO, lines: queue.Queue) -> None:
    """Put each line of ``stream`` on ``lines`` (one over :data:`MAX_LINE` cut there, its rest skipped), then None."""
    try:
        _wait_for_foreground(stream)
        while line := stream.readline(MAX_LINE + 1):
            if len(line) > MAX_LINE and not line.endswith("\n"):
                while (rest := stream.readline(MAX_LINE + 1)) and not rest.endswith("\n"):
                    pass
            lines.put(line)
    except (OSError, ValueError):  # a closed or unreadable stream ends the input
        pass
    lines.put(None)


def emulate(
    args: argparse.Namespace,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    emulator: BoardEmulator | None = None,
) -> int:
    """``tavli board emulate``: run the board and carry out ``--script``, then the commands typed on ``stdin``.

    A line that cannot be done is said on ``err`` and left out. Returns 2 if the variant
    or the script cannot be read, or (reading from a file or a pipe) a line was refused;
    0 otherwise. ``emulator``: a board to run (stopped at the end only if made here).
    """
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        variant = find_variant(args.variant)
        script = read_script(args.script) if args.script else None
    except TavliError as exc:
        print(f"tavli board emulate: {exc}", file=err, flush=True)
        return 2
    own = emulator is None
    board = BoardEmulator(seed=args.seed) if emulator is None else emulator
    path = board.start()
    refused = 0

    def carry_out(line: str, where: str, typed: bool = False) -> bool:
        """Carry out one line (``typed`` at a terminal: a refusal is not counted); False once it says quit."""
        nonlocal refused
        try:
            command = run_line(board, line, out, variant)
        except (ScriptError, OSError) as exc:  # OSError: the emulator did not answer in time
            refused += not typed
            print(f"tavli board emulate: {where}{exc}", file=err, flush=True)
            return True
        return not isinstance(command, Quit)

    try:
        board.set_position(Position.start(variant))
        print(f"emulated board on {path}", file=out, flush=True)
        going = True
        for n, line in enumerate(script or (), 1):
            going = carry_out(line, f"{args.script}:{n}: ")
            if not going:
                break
        if going and not (args.exit and script is not None):
            going = _typed(board, stdin, out, carry_out, stop_at_end=args.exit)
        if args.exit:
            print(led_text(board.led_frame), file=out, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        if own:
            board.stop()
    return 2 if refused else 0


def _typed(
    board: BoardEmulator,
    stdin: TextIO,
    out: TextIO,
    carry_out: Callable[[str, str, bool], bool],
    *,
    stop_at_end: bool,
) -> bool:
    """Carry out the lines of ``stdin`` while showing each new LED frame; False once quit.

    On a terminal: a prompt, refused lines are not counted, and the end of input (Ctrl-D)
    stops. From a file or a pipe the board runs on after the end unless ``stop_at_end``.
    """
    terminal = _is_terminal(stdin)
    if terminal:
        print("type help for the commands, quit or Ctrl-D to stop", file=out, flush=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_read_lines, args=(stdin, lines), name="board-emulate-stdin", daemon=True).start()
    shown, prompt, n = None, terminal, 0
    while True:
        frame = board.led_frame
        if frame != shown:
            print(("\n" if terminal and not prompt else "") + led_text(frame), file=out, flush=True)
            shown, prompt = frame, terminal
        if prompt:
            print(PROMPT, end="", file=out, flush=True)
            prompt = False
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if line is None:  # the end of input
            if terminal or stop_at_end:
                return True
            continue
        n += 1
        if not carry_out(line, "" if terminal else f"line {n}: ", terminal):
            return False
        prompt = terminal


# ------------------------------------------------------------------ watch


def _cut(text: str, width: int = 40) -> str:
    """``text`` as a message quotes it: stripped, and cut to ``width`` characters."""
    text = text.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def _led_place(text: str) -> Place:
    """A place in an LED command: 1..24, bar, off-w or off-b (``off`` alone is white's tray)."""
    word = text.lower()
    if word == "bar":
        return Place.bar(Side.WHITE)  # the one bar LED
    if word in ("off", "off-w"):
        return Place.off(Side.WHITE)
    if word == "off-b":
        return Place.off(Side.BLACK)
    if text.isascii() and text.isdigit() and len(text) <= 2 and 1 <= int(text) <= 24:
        return Place.point(int(text))
    raise ScriptError(f"place: {_cut(text)!r} must be 1..24, bar, off-w or off-b")


def parse_led_command(line: str) -> LedFrame:
    """``led 13 red``, ``led 13,bar,off-b amber``, ``leds off`` to a whole LED frame.

    Raises :class:`ScriptError` naming the place, the colour or the line that cannot be read.
    """
    words = line.split()
    if [w.lower() for w in words] == ["leds", "off"]:
        return LedFrame(tuple(Led() for _ in range(leds.LED_COUNT)))
    if len(words) == 3 and words[0].lower() == "led":
        colour = words[2].lower()
        if colour not in COLOURS:
            raise ScriptError(f"colour: {_cut(words[2])!r} must be one of {', '.join(COLOURS)}")
        lit = {leds.led_index(_led_place(part)) for part in words[1].split(",")}
        r, g, b = COLOURS[colour]
        return LedFrame(tuple(Led(r, g, b) if i in lit else Led() for i in range(leds.LED_COUNT)))
    raise ScriptError(f"command: {_cut(line, 80)!r} is not 'led PLACES COLOUR' or 'leds off' (help lists them)")


def _places(counts: SensedCounts) -> dict[str, str]:
    """Each occupied place of ``counts`` by its name (``13``, ``bar``, ``off``) to its checkers (``5w``, ``1w 2b``)."""
    at_least = set(counts.at_least)
    out: dict[str, str] = {}
    for n, c in enumerate(counts.points, 1):
        if n in counts.uncertain:
            out[str(n)] = (f"{abs(c)}{'+' if n in at_least else ''}{'w' if c > 0 else 'b'} " if c else "") + "pin?"
        elif c:
            out[str(n)] = f"{abs(c)}{'+' if n in at_least else ''}{'w' if c > 0 else 'b'}"
    for name, pair in (("bar", counts.bar), ("off", counts.off)):
        held = [
            f"{k}{'+' if (name, j) in at_least else ''}{'wb'[j]}"
            for j, k in enumerate(pair)
            if k or (name, j) in at_least
        ]
        if held:
            out[name] = " ".join(held)
    return out


def board_text(counts: SensedCounts, before: SensedCounts | None = None) -> str:
    """The board as one line, ``w`` white and ``b`` black checkers: ``board: points 1:2b 6:5w ... | bar 1b | off none``.

    A count with ``+`` is a lower bound (a saturated slot); ``pin?`` a pinned pair. With
    ``before``, the places that changed follow: ``(13 5w->4w, 10 ->1w)``.
    """
    now = _places(counts)
    points = [f"{k}:{v.replace(' ', '/')}" for k, v in now.items() if k.isdigit()]
    text = "board: points " + (" ".join(points) if points else "none")
    text += f" | bar {now.get('bar', 'none')} | off {now.get('off', 'none')}"
    if before is not None:
        was = _places(before)
        order = [str(n) for n in range(1, 25)] + ["bar", "off"]
        changed = [f"{k} {was.get(k, '')}->{now.get(k, '')}" for k in order if was.get(k) != now.get(k)]
        if changed:
            text += f"  ({', '.join(changed)})"
    return text


def _event_text(event: object) -> str:
    """A board event the host received, as a line (no Python reprs)."""
    if isinstance(event, (Lift, Put)):
        colour = {1: "white", 2: "black", 3: "uncertain"}.get(int(event.state), str(event.state))
        where = {
            Area.POINT: f"point {event.number}",
            Area.BAR: "bar",
            Area.OFF_WHITE: "off-w",
            Area.OFF_BLACK: "off-b",
        }[event.area]
        return f"{'lift' if isinstance(event, Lift) else 'put'}: {where} slot {event.slot} {colour}"
    if isinstance(event, Button):
        return f"button {event.button} {'down' if event.pressed else 'up'}"
    if isinstance(event, BoardError):
        return f"board error {event.code.name}: {event.detail}"
    return f"event: {type(event).__name__}"


def watch(
    args: argparse.Namespace,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    *,
    candidates: Callable[[], Sequence[str]] | None = None,
    err: TextIO | None = None,
) -> int:
    """Show the board on ``args.port`` until ``args.seconds`` pass or stdin ends; send typed LED commands.

    The board is printed when it changes (and again after each reconnect); with
    ``args.events``, each LIFT and PUT too. A line that is not an LED command is said on
    ``err`` and left out. ``candidates`` names the ports where the board may come back
    after an unplug (default: the USB serial ports, :func:`firmware_bridge.link.candidate_ports`).
    Raises :class:`~firmware_bridge.link.LinkError` if the board cannot be reached at first.
    """
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    events = getattr(args, "events", False)
    link = BoardLink(args.port, candidates=candidates).start()
    commands: queue.Queue = queue.Queue()
    threading.Thread(target=_read_lines, args=(stdin, commands), name="board-watch-stdin", daemon=True).start()
    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    shown: SensedCounts | None = None
    text = ""
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                event = link.events.get(timeout=0.1)
                if isinstance(event, Snapshot):
                    sensed = counts_from_slots(
                        event.readings, event.slots_per_point, bar_slots=event.bar_slots, tray_slots=event.tray_slots
                    )
                    if board_text(sensed) != text:
                        text = board_text(sensed)
                        print(board_text(sensed, shown), file=out, flush=True)
                        shown = sensed
                elif isinstance(event, LinkEvent):
                    print(f"link: {event.kind} {event.port or ''} {event.detail}".rstrip(), file=out, flush=True)
                    if event.kind in (CONNECTED, RECONNECTED):
                        text = ""  # the board again, as it is now
                elif events or not isinstance(event, (Lift, Put)):
                    print(_event_text(event), file=out, flush=True)
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
            if not line.strip():
                continue
            word = line.split()[0].lower()
            if word in ("quit", "exit"):
                break
            if word == "help":
                print(LED_HELP, file=out, flush=True)
                continue
            try:
                ok = link.send_leds(parse_led_command(line))
                print(f"leds: {'acknowledged' if ok else 'not acknowledged'}", file=out, flush=True)
            except ScriptError as exc:
                print(f"tavli board watch: {exc}", file=err, flush=True)
    finally:
        link.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    """Carry out a parsed ``board`` command."""
    if hasattr(sys.stdin, "reconfigure"):  # a byte that is not UTF-8 is a line refused, not the end of input
        try:
            sys.stdin.reconfigure(errors="replace")
        except (OSError, ValueError):  # pragma: no cover - a stdin that cannot be reconfigured
            pass
    if args.board_command == "emulate":
        return emulate(args)
    return watch(args)
