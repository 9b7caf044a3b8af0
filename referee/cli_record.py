"""``tavli record``: match journals from the command line (``export``, ``open``, ``analyse``).

``export JOURNAL --format mat|txt|json [-o FILE]`` writes the journal in gnubg's ``.mat``
format, as text or as JSON. ``open JOURNAL [--mat FILE] [--tty] [--dry-run]`` writes the
``.mat`` and opens it in GNU Backgammon with the settings that make gnubg score it as the
referee did (``set jacoby on|off``: gnubg takes the Jacoby rule from its own setting).
``analyse MATCH [--html REPORT] [--json]`` has gnubg analyse the match (``referee.analyse``).
A journal, file or gnubg that cannot be used is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TextIO

from board_rules.errors import TavliError
from board_rules.untrusted import check_output
from referee.export import (
    FORMATS,
    GNUBG_FALLBACK,
    export,
    export_mat,
    find_gnubg,
    gnubg_commands,
    load_record,
    mat_notes,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``record`` and its sub-commands on a parent parser."""
    record = sub.add_parser("record", help="match journals: export them for gnubg, as text or JSON, or open in gnubg")
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
    o = rsub.add_parser(
        "open",
        help="open a match journal in GNU Backgammon, scored as the referee scored it",
        description=(
            "Write the journal's .mat and open it in gnubg after the settings gnubg needs to score "
            "it as the referee did (set jacoby on|off for a money session)."
        ),
    )
    o.add_argument("journal", help="the match journal (JSON lines, as the referee writes it)")
    o.add_argument("--mat", help="where to write the .mat (default: beside the journal, with the suffix .mat)")
    o.add_argument(
        "--tty", action="store_true", help="gnubg's command line, not its window (the default without a display)"
    )
    o.add_argument("--dry-run", action="store_true", help="write the .mat and print gnubg's commands; run nothing")
    o.add_argument(
        "--gnubg", metavar="PROGRAM", help=f"gnubg's program (default: gnubg on PATH, else {GNUBG_FALLBACK})"
    )
    a = rsub.add_parser(
        "analyse",
        aliases=["analyze"],
        help="analyse a match: PR, error rate, chequer and cube errors, luck and blunders per player",
        description=(
            "Analyse a match with GNU Backgammon (backgammon games) or, for the tavli games gnubg does "
            "not play, with tavli-table's own evaluator; the report says which. gnubg's analysis is also "
            "saved as an .sgf beside the report."
        ),
    )
    a.add_argument(
        "match", metavar="MATCH", help="the match: a journal (.jsonl, as the referee writes it) or a gnubg .mat file"
    )
    a.add_argument("--html", metavar="REPORT", help="also write the report as an HTML page")
    a.add_argument("--json", action="store_true", help="print the report as JSON, not as text")
    a.add_argument(
        "--sgf",
        metavar="FILE",
        help="where gnubg's analysis goes (default: beside the HTML report, else beside MATCH, suffix .sgf)",
    )
    a.add_argument(
        "--plies", type=int, choices=(0, 1), default=0, help="gnubg's analysis depth: 0 (default, quick) or 1"
    )
    a.add_argument(
        "--gnubg", metavar="PROGRAM", help=f"gnubg's program (default: gnubg on PATH, else {GNUBG_FALLBACK})"
    )


def run(
    args: argparse.Namespace,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Carry out a parsed ``record`` command; returns the exit status (2 for a bad journal)."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    stdin = sys.stdin if stdin is None else stdin
    if args.record_command == "open":
        return _open(args, stdout, stderr, stdin)
    if args.record_command in ("analyse", "analyze"):
        return _analyse(args, stdout, stderr)
    if args.record_command != "export":  # pragma: no cover - argparse restricts it
        return 2
    where = "tavli record export"
    try:
        if args.output:  # where the export goes is checked before the work
            check_output(args.output, "-o")
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


# =============================================================================== record open


def _open(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    where = "tavli record open"
    try:
        record = load_record(args.journal)
        text = export_mat(record)
        notes = mat_notes(record)
    except TavliError as exc:
        print(f"{where}: {exc}", file=stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{where}: {args.journal!r}: cannot read it ({exc})", file=stderr)
        return 2
    mat = Path(args.mat) if args.mat else Path(args.journal).with_suffix(".mat")
    if mat.resolve() == Path(args.journal).resolve():
        print(f"{where}: {str(mat)!r} is the journal itself; name another file with --mat", file=stderr)
        return 2
    try:
        mat.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"{where}: {str(mat)!r}: cannot write it ({exc}); name another file with --mat", file=stderr)
        return 2
    print(f"wrote {mat}", file=stderr)
    for note in notes:
        print(f"note: {note}", file=stderr)
    commands = gnubg_commands(record, mat.resolve())
    if args.dry_run:
        stdout.write("".join(c + "\n" for c in commands))
        return 0
    program = find_gnubg(args.gnubg)
    if program is None:
        print(
            f"{where}: gnubg not found ({args.gnubg or 'gnubg'}); install GNU Backgammon "
            "(Debian: apt-get install gnubg) or name it with --gnubg. In gnubg, type:",
            file=stderr,
        )
        for c in commands:
            print(f"  {c}", file=stderr)
        return 2
    window = not args.tty and bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    try:
        if window:
            return _run_window(program, commands)
        return _run_tty(program, commands, stdin)
    except OSError as exc:
        print(f"{where}: cannot run {program!r} ({exc})", file=stderr)
        return 2


def _run_window(program: str, commands: list[str]) -> int:
    """gnubg's window, which runs the commands of ``-c FILE`` and stays open until it is closed."""
    with tempfile.TemporaryDirectory(prefix="tavli-gnubg-") as tmp:
        script = Path(tmp) / "open.gnubg"
        script.write_text("".join(c + "\n" for c in commands), encoding="utf-8")
        return subprocess.run([program, "-q", "-c", str(script)], check=False).returncode


def _run_tty(program: str, commands: list[str], stdin: TextIO) -> int:
    """gnubg's command line (``-t``: ``-c`` would exit after the commands): the commands are
    given first, then every line read from ``stdin`` until gnubg ends or ``stdin`` does."""
    proc = subprocess.Popen([program, "-t", "-q"], stdin=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    pipe = proc.stdin

    def send(line: str) -> bool:
        try:
            pipe.write(line)
            pipe.flush()
            return True
        except (OSError, ValueError):
            return False

    def relay() -> None:
        for line in iter(stdin.readline, ""):
            if proc.poll() is not None or not send(line):
                return
        try:
            pipe.close()
        except OSError:
            pass

    if send("".join(c + "\n" for c in commands)):
        threading.Thread(target=relay, name="gnubg-stdin", daemon=True).start()
    return proc.wait()


# =============================================================================== record analyse


def _analyse(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from referee.analyse import analyse, report_html, report_json, report_text

    where = "tavli record analyse"
    match = Path(args.match)
    if args.sgf:
        sgf = Path(args.sgf)
    elif args.html:
        sgf = Path(args.html).with_suffix(".sgf")
    else:
        sgf = match.with_suffix(".sgf")
    try:
        for path, what in ((args.html, "--html"), (str(sgf), "--sgf")):
            if path is None:
                continue
            check_output(path, what)
            if Path(path).resolve() == match.resolve():
                raise TavliError(f"{what}: {path!r} is MATCH itself; name another file")
        result = analyse(match, plies=args.plies, sgf=sgf, gnubg=args.gnubg)
    except TavliError as exc:
        print(f"{where}: {exc}", file=stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{where}: {args.match!r}: cannot read it ({exc})", file=stderr)
        return 2
    if args.html:
        try:
            Path(args.html).write_text(report_html(result), encoding="utf-8")
        except OSError as exc:
            print(f"{where}: --html: {args.html!r}: cannot write it ({exc})", file=stderr)
            return 2
        print(f"wrote {args.html}", file=stderr)
    if result.sgf:
        print(f"wrote {result.sgf}", file=stderr)
    stdout.write(report_json(result) if args.json else report_text(result))
    return 0
