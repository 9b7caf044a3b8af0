"""The ``tavli`` command: one entry point for every part of the project.

Sub-commands: ``rules`` (the rules engine, :mod:`board_rules.cli`), ``board`` (the
emulated board and a live view of a board, :mod:`firmware_bridge.cli_board`), ``vision``
(the camera pipeline and the renderer, :mod:`vision.cli`), ``record`` (exports of a
journal), ``play`` (the referee at a real table), ``demo`` (a refereed game on the
stand-ins), ``virtual`` (a table played in the browser) and ``hint`` (the teacher,
:mod:`engine.cli`). Exit status 2 with a
message on stderr for bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata

from board_rules import cli as rules_cli
from board_rules.errors import TavliError
from engine import cli as engine_cli
from firmware_bridge import cli_board
from referee import cli_record
from vision import cli as vision_cli


def _version() -> str:
    try:
        return metadata.version("tavli-table")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _one_line(message: str, width: int = 400) -> str:
    """An error message as one line of at most ``width`` characters (an input it quotes may be long)."""
    line = " ".join(message.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tavli",
        description="A refereed, recorded and teachable tavli table.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    rules_cli.add_parser(sub)
    cli_board.add_parser(sub)
    vision_cli.add_parser(sub)
    cli_record.add_parser(sub)
    engine_cli.add_parser(sub)
    play = sub.add_parser("play", help="referee a match at a real table (sensor board, camera, panel, keyboard)")
    what = play.add_mutually_exclusive_group()
    what.add_argument("--variant", help="one game of this variant (e.g. backgammon, plakoto, long-nardy)")
    what.add_argument(
        "--match", help="tavli:N (portes, plakoto, fevga to N), VARIANT:N (a match to N) or money:VARIANT"
    )
    what.add_argument("--resume", metavar="JOURNAL", help="carry on the match recorded in JOURNAL")
    play.add_argument("--journal", help="where to record the match (default match-DATE-TIME.jsonl)")
    play.add_argument("--board", metavar="SERIAL_URL", help="the sensor board: a serial port or pyserial URL")
    play.add_argument("--camera", metavar="DEVICE_OR_FILE", help="a camera number or a video/image file")
    play.add_argument("--geometry", help="geometry.json from 'tavli vision calibrate' (with --camera)")
    play.add_argument("--palette", help="palette.json from 'tavli vision learn' (with --camera)")
    play.add_argument(
        "--panel",
        choices=("gpio", "keyboard"),
        default="keyboard",
        help="the Raspberry Pi panel's buttons, or the keyboard only (always available)",
    )
    play.add_argument("--teach", action="store_true", help="teaching mode: landing points of a lifted checker, hints")
    rules = play.add_argument_group("what is played (a new match only; a resumed one keeps its own)")
    rules.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="a money session ends after N games (default: when you quit; --variant alone: 1)",
    )
    rules.add_argument("--jacoby", action="store_true", help="money: gammons count only once the cube was turned")
    rules.add_argument(
        "--beavers", action="store_true", help="money: a doubled player may beaver (redouble at once, keeping the cube)"
    )
    rules.add_argument("--raccoons", action="store_true", help="money: a beavered player may raccoon (needs --beavers)")
    rules.add_argument(
        "--automatic-doubles",
        type=int,
        default=0,
        metavar="N",
        help="money: up to N tied opening rolls double the cube (default 0)",
    )
    rules.add_argument("--no-crawford", action="store_true", help="match to N: no Crawford rule")
    rules.add_argument("--with-gul-bara", action="store_true", help="tavli: gul-bara is the fourth game of the cycle")
    rules.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="VARIANT.NAME=VALUE",
        help="a variant's rule option, e.g. plakoto.mother_rule=false (repeatable)",
    )
    demo = sub.add_parser(
        "demo", help="a refereed game on built-in stand-ins: emulated board, rendered camera, mock panel"
    )
    demo.add_argument("--seed", type=int, default=7, help="seed of the dice and the players (default 7)")
    demo.add_argument(
        "--match",
        type=int,
        default=None,
        metavar="N",
        help="play a backgammon match to N points, 1 or more (default: one money game)",
    )
    demo.add_argument("--quiet", action="store_true", help="print the referee's calls and the result, not every play")
    demo.add_argument(
        "--no-camera", action="store_true", help="dice typed in instead of read from rendered camera frames"
    )
    demo.add_argument(
        "--out", default="demo-match", help="where to leave the match journal and its exports (default demo-match/)"
    )
    virtual = sub.add_parser(
        "virtual", help="a virtual table played in the browser: emulated board, rendered camera, mock panel"
    )
    virtual.add_argument("--variant", default="backgammon", help="the game (default backgammon)")
    virtual.add_argument("--against", choices=["hint"], help="play against the hint engine (it plays black)")
    virtual.add_argument(
        "--teach", action="store_true", help="teaching mode: landing points, the Hint button, what each play gave up"
    )
    virtual.add_argument("--seed", type=int, default=1, help="seed of the dice (default 1)")
    virtual.add_argument("--journal", help="where to record the game (default virtual-DATE-TIME.jsonl)")
    virtual.add_argument(
        "--web", default="8080", metavar="[HOST:]PORT", help="where to serve the page (default 127.0.0.1:8080)"
    )
    for command in (play, demo):
        command.add_argument(
            "--web",
            metavar="[HOST:]PORT",
            help="serve the live table page on PORT (127.0.0.1 unless HOST is given; 0 picks a free port)",
        )
    for command in (play, demo):
        command.add_argument(
            "--broker",
            metavar="mqtt://[USER:PASS@]HOST:PORT",
            help="publish the table on the hall's MQTT broker (it plays on without one)",
        )
        command.add_argument("--hall", default="club", help="the hall's name on the broker (default club)")
        command.add_argument(
            "--table", default=None, help="this table's id in the hall, and its user on the broker (default table-1)"
        )
    hall = sub.add_parser("hall", help="the organiser's dashboard: every table of a hall from the MQTT broker")
    hall.add_argument("--broker", required=True, metavar="mqtt://hall:PASS@HOST:PORT", help="the hall's broker")
    hall.add_argument("--hall", default="club", help="the hall's name on the broker (default club)")
    hall.add_argument(
        "--web", default="8080", metavar="[HOST:]PORT", help="where to serve the dashboard (default 127.0.0.1:8080)"
    )
    hall.add_argument(
        "--delay", type=float, default=0.0, metavar="SECONDS", help="show every table this late (a broadcast delay)"
    )
    hall.add_argument("--out", default="hall", help="where the matches and their reports are kept (default hall/)")
    hall.add_argument("--for", dest="for_seconds", type=float, default=None, help=argparse.SUPPRESS)
    demo.add_argument(
        "--pace", type=float, default=0.0, metavar="SECONDS", help="wait this long between the players' actions"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rules":
            return rules_cli.run(args)
        if args.command == "board":
            return cli_board.run(args)
        if args.command == "vision":
            return vision_cli.run(args)
        if args.command == "record":
            return cli_record.run(args)
        if args.command == "hint":
            return engine_cli.run(args)
        # play, virtual and demo load the camera pipeline and the page server: only when asked for
        if args.command == "play":
            from referee.play import run_play

            return run_play(args, sys.stdin, sys.stdout)
        if args.command == "virtual":
            from referee.virtual import run_virtual

            return run_virtual(args)
        if args.command == "hall":
            from referee.hall import run_hall

            return run_hall(args)
        if args.command == "demo":
            from referee.demo import run_demo

            return run_demo(
                seed=args.seed,
                match=args.match,
                quiet=args.quiet,
                camera=not args.no_camera,
                out=args.out,
                web=args.web,
                pace=args.pace,
                broker=args.broker,
                hall=args.hall,
                table_id=args.table or "demo",
            )
    except TavliError as exc:
        where = f"tavli {args.command}" + (f" {args.rules_command}" if args.command == "rules" else "")
        print(f"{where}: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
