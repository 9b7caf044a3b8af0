"""``tavli record``: match journals from the command line (so far: ``export``).

Owns argument parsing and file I/O for :mod:`referee.export`; the lead wires
:func:`add_parser` / :func:`run` into ``referee.cli``. Imports ``board_rules`` and
``referee`` modules only.

``tavli record export JOURNAL --format mat|txt|json [-o FILE]`` writes the journal in
gnubg's ``.mat`` match format (backgammon and portes games), as plain text or as JSON;
to standard output without ``-o``. A journal that cannot be read or replayed, or a
format it cannot be written in, prints a message on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from board_rules.errors import TavliError
from referee.export import FORMATS, export


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``record`` and its sub-commands on a parent parser."""
    record = sub.add_parser("record", help="match journals: export them for gnubg, as text or JSON")
    rsub = record.add_subparsers(dest="record_command", required=True)
    e = rsub.add_parser("export", help="write a match journal as a gnubg .mat file, plain text or JSON")
    e.add_argument("journal", help="the match journal (JSON lines, as the referee writes it)")
    e.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default="txt",
        help="mat: gnubg/Jellyfish match file (backgammon and portes games); txt; json (default txt)",
    )
    e.add_argument("-o", "--output", help="file to write (default: standard output)")


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Carry out a parsed ``record`` command; returns the exit status (2 for a bad journal)."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    if args.record_command != "export":  # pragma: no cover - argparse restricts it
        return 2
    where = "tavli record export"
    try:
        text = export(args.journal, args.format)
    except TavliError as exc:
        print(f"{where}: {exc}", file=stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{where}: {args.journal!r}: cannot read it ({exc})", file=stderr)
        return 2
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"{where}: {args.output!r}: cannot write it ({exc})", file=stderr)
            return 2
        print(f"wrote {args.output}", file=stderr)
    else:
        stdout.write(text)
    return 0
