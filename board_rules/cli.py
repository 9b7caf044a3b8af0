"""``tavli rules ...``: the thin command line of the rules engine.

The only module of ``board_rules`` that reads files and writes to the terminal;
everything it prints is computed by the pure modules. Errors exit with status 2
and a message on stderr that names the field and the value.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from board_rules.errors import InvalidPositionError, TavliError, TooManyPlaysError
from board_rules.legality import check
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from board_rules.notation import Roll
from board_rules.position import Position
from board_rules.side import Side
from board_rules.untrusted import MAX_TEXT_BYTES, is_digits, parse_json, read_text, whole_number
from board_rules.variants import find_variant

PLAYS_BUDGET = 1_000_000


def _option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"an option is NAME=VALUE, not {text!r}")
    name, raw = text.split("=", 1)
    try:
        value = parse_json(raw, f"option {name.strip()}", argparse.ArgumentTypeError)
    except argparse.ArgumentTypeError:
        if raw.lstrip()[:1] in ("[", "{") or is_digits(raw.strip().lstrip("-"), len(raw)):
            raise  # meant as JSON or a number, and not one: say why
        value = raw  # a word, e.g. third-quarter
    if isinstance(value, list):
        value = tuple(value)
    return name.strip().replace("-", "_"), value


def _budget(text: str) -> int:
    """``--budget``: a whole number of boards, 1 or more (argparse's ``type``)."""
    return whole_number(text, "--budget", 1, 10**12, argparse.ArgumentTypeError)


def _die(text: str) -> int:
    """A die of ``--dice``: 1..6 in ASCII digits (argparse's ``type``)."""
    return whole_number(text, "--dice", 1, 6, argparse.ArgumentTypeError)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``rules`` and its sub-commands on a parent parser."""
    rules = sub.add_parser("rules", help="the rules engine: starting positions, legal plays, checks, IDs")
    rsub = rules.add_subparsers(dest="rules_command", required=True)

    def with_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--option",
            "-O",
            action="append",
            type=_option,
            default=[],
            metavar="NAME=VALUE",
            help="a variant option, e.g. second_checker=third-quarter (repeatable)",
        )

    p = rsub.add_parser("start", help="print a variant's starting position")
    p.add_argument("variant")
    p.add_argument("--turn", choices=("white", "black"), default="white")
    with_options(p)

    p = rsub.add_parser("plays", help="print every legal play for a position and a roll")
    p.add_argument("position", nargs="?", default="-", help="Position JSON file, or - for stdin")
    p.add_argument("--dice", nargs=2, type=_die, metavar=("D1", "D2"))
    p.add_argument(
        "--batch", action="store_true", help='read JSON lines {"position": ..., "dice": [d1, d2]} from stdin'
    )
    p.add_argument(
        "--budget",
        type=_budget,
        default=PLAYS_BUDGET,
        metavar="BOARDS",
        help=f"give up (exit 2) past this many boards searched (default {PLAYS_BUDGET:,}; "
        "an escalated gul-bara double can have over a million plays)",
    )
    with_options(p)

    p = rsub.add_parser("check", help="is AFTER the result of a legal play from BEFORE?")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--dice", nargs=2, type=_die, metavar=("D1", "D2"), required=True)
    with_options(p)

    p = rsub.add_parser("id", help="gnubg Position ID of a backgammon or portes position")
    p.add_argument("position", nargs="?", default="-")
    p.add_argument("--decode", metavar="ID", help="print the position of a Position ID instead")
    p.add_argument("--variant", default="backgammon", help="variant for --decode")
    with_options(p)

    p = rsub.add_parser("outcome", help="whether the game is over in a position, and its score")
    p.add_argument("position", nargs="?", default="-")
    with_options(p)


def _read(path: str, stdin: TextIO) -> str:
    """A Position JSON file's text (``-``: standard input), read up to ``MAX_TEXT_BYTES``."""
    if path != "-":
        return read_text(path, "position file", InvalidPositionError)
    text = stdin.read(MAX_TEXT_BYTES + 1)
    if len(text) > MAX_TEXT_BYTES:
        raise InvalidPositionError(f"position: standard input: over {MAX_TEXT_BYTES} characters: no position")
    return text


def _variant_for(data: Any, options: list[tuple[str, Any]]):
    if not options:
        return None
    name = data.get("variant") if isinstance(data, dict) else None
    if not isinstance(name, str):
        return None
    return find_variant(name, **dict(options))


def _load(text: str, options: list[tuple[str, Any]]) -> Position:
    data = parse_json(text, "position", InvalidPositionError)
    return Position.from_dict(data, _variant_for(data, options))


def read_position(path: str, stdin: TextIO, options: Sequence[tuple[str, Any]] = ()) -> Position:
    """The Position JSON in file ``path`` (``-``: standard input), read within the size cap and checked.

    Raises :class:`InvalidPositionError` naming what is wrong."""
    return _load(_read(path, stdin), list(options))


def _plays_json(position: Position, roll: Roll, budget: int | None = PLAYS_BUDGET) -> list[dict]:
    try:
        plays = legal_plays(position, roll, budget=budget)
    except SearchBudgetExceeded:
        raise TooManyPlaysError(
            f"dice: {roll} has too many plays here to list (more than {budget:,} boards searched); "
            "raise --budget, or ask `tavli rules check` about one result"
        ) from None
    return [{"play": str(play), "position": after.to_dict()} for play, after in plays]


def run(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Carry out a parsed ``rules`` command; returns the exit status.

    Raises :class:`TavliError` for bad input (the caller prints it and exits 2).
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    cmd = args.rules_command
    if cmd == "start":
        v = find_variant(args.variant, **dict(args.option))
        print(json.dumps(Position.start(v, Side(args.turn)).to_dict()), file=stdout)
        return 0
    if cmd == "plays":
        if args.batch:
            return _batch(args.option, stdin, stdout, args.budget)
        if args.dice is None:
            raise InvalidPositionError("dice: missing; give --dice D1 D2 (or --batch)", "dice", None)
        position = read_position(args.position, stdin, args.option)
        print(json.dumps(_plays_json(position, Roll(*args.dice), args.budget)), file=stdout)
        return 0
    if cmd == "check":
        before = read_position(args.before, stdin, args.option)
        after = read_position(args.after, stdin, args.option)
        if after.variant != before.variant:
            raise InvalidPositionError(
                f"variant: after is {after.variant.label!r} but before is {before.variant.label!r}",
                "variant",
                after.variant.label,
            )
        print(json.dumps(check(before, Roll(*args.dice), after).to_dict()), file=stdout)
        return 0
    if cmd == "id":
        from board_rules.ids import position_from_id, position_id

        if args.decode:
            v = find_variant(args.variant, **dict(args.option))
            print(json.dumps(position_from_id(args.decode, v).to_dict()), file=stdout)
        else:
            print(position_id(read_position(args.position, stdin, args.option)), file=stdout)
        return 0
    if cmd == "outcome":
        position = read_position(args.position, stdin, args.option)
        result = position.outcome()
        out = {"over": result is not None}
        if result is not None:
            out.update(
                winner=None if result.winner is None else result.winner.value, kind=result.kind, points=result.base
            )
        print(json.dumps(out), file=stdout)
        return 0
    raise AssertionError(cmd)  # argparse guarantees a known command


def _batch(options: list[tuple[str, Any]], stdin: TextIO, stdout: TextIO, budget: int | None = PLAYS_BUDGET) -> int:
    """One JSON array per input line, in order; a bad line prints ``{"error": ...}`` and the rest go on."""
    status = 0
    for lineno, line in enumerate(stdin, 1):
        if not line.strip():
            continue
        try:
            item = parse_json(line, f"line {lineno}", InvalidPositionError)
            if not isinstance(item, dict) or "position" not in item or "dice" not in item:
                raise InvalidPositionError(
                    f'line {lineno}: expected {{"position": ..., "dice": [d1, d2]}}, not {line.strip()[:80]!r}',
                    "line",
                    lineno,
                )
            position = Position.from_dict(item["position"], _variant_for(item["position"], options))
            out = _plays_json(position, Roll.from_values(item["dice"]), budget)
        except TavliError as exc:
            status = 2
            print(f"tavli rules plays: line {lineno}: {exc}", file=sys.stderr)
            out = {"error": str(exc)}
        print(json.dumps(out), file=stdout, flush=True)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for ``python -m board_rules.cli`` (the same as ``tavli rules``)."""
    parser = argparse.ArgumentParser(prog="tavli")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except TavliError as exc:
        print(f"tavli rules {args.rules_command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
