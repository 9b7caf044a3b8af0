"""Bad input over every ``tavli`` subcommand: exit 2 and one line naming the field, never a traceback or a hang.

A table of malformed command lines and files (issue 19, items 6 and 7): each case runs through
:func:`referee.cli.main` in the test's process under an alarm, or as a subprocess with a
timeout where the command would serve or emulate for ever when the input were good. The
test prints how many cases it ran and how many tracebacks and hangs it saw.
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from board_rules import InvalidPositionError, Position
from referee.cli import main

ROOT = Path(__file__).resolve().parents[1]
IN_PROCESS_S = 30  # a case still running after this long is a hang
SUBPROCESS_S = 30
MEMORY_BYTES = 3 << 30  # more address space than this for one case is a file read without end


@dataclass(frozen=True)
class Case:
    """``argv`` (``{t}`` is the case's temporary folder) fed ``stdin``; stderr must name ``names``."""

    argv: tuple[str, ...]
    names: str
    stdin: str = ""
    subprocess: bool = False
    code: int = 2
    files: dict = field(default_factory=dict)


def _png_header(width: int, height: int) -> bytes:
    """A PNG file whose header states ``width`` x ``height`` and whose pixels are a few zero bytes."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def _start(variant: str = "backgammon") -> dict:
    return Position.start(variant).to_dict()


def _with(variant: str = "backgammon", **fields) -> str:
    return json.dumps({**_start(variant), **fields})


DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BIG = "9" * 5000
START = json.dumps(_start())
BIG_POINTS = START.replace('"points": [-2', f'"points": [{BIG}', 1)
NON_UTF8 = START.encode().replace(b"backgammon", b"backgammon\xff\xfe", 1)

FILES = {
    "start.json": START,
    "deep.json": DEEP,
    "deep-object.json": DEEP_OBJECT,
    "big.json": BIG_POINTS,
    "latin1.json": NON_UTF8,
    "empty.json": "",
    "pinned-sup.json": _with("plakoto", pinned={"\u00b2": "white"}),
    "pinned-arabic.json": _with("plakoto", pinned={"\u0661\u0662": "white"}),
    "rolls.json": _with(rolls={"white": 10**18, "black": 0}),
    "giga.png": _png_header(40_000, 40_000),
    "near-giga.png": _png_header(30_000, 30_000),
    "zero.png": _png_header(0, 0),
    "text.png": "not an image",
    "profile5.toml": "board_profile = 5\n",
    "profile-table5.toml": "[board_profile]\nmine = 5\n",
    "profile-str.toml": '[board_profile.mine]\npoint_width_mm = "wide"\n',
    "profile-nan.toml": "[board_profile.mine]\npoint_width_mm = nan\n",
    "profile-neg.toml": "[board_profile.mine]\npoint_width_mm = -5.0\n",
    "profile-latin1.toml": b"[board_profile.mine\xff]\n",
    "config-bad.toml": "[checkers]\nno_such_threshold = 1\n",
    "config-str.toml": '[dice]\nphoto_reader = "guess"\n',
    "config-nan.toml": "[calibrate]\nmax_reprojection_px = nan\n",
    "palette-nan.json": '{"white": [NaN, 128, 128], "black": [40, 128, 128]}',
    "palette-inf.json": '{"white": [1e999, 128, 128], "black": [40, 128, 128]}',
    "palette-range.json": '{"white": [900, 128, 128], "black": [40, 128, 128]}',
    "palette-deep.json": DEEP,
    "palette-big.json": '{"white": [' + BIG + ', 128, 128], "black": [40, 128, 128]}',
    "palette-edges.json": '{"white": [200, 128, 128], "black": [40, 128, 128], "board_edges": [[1e999, 5]]}',
    "geometry-deep.json": DEEP_OBJECT,
    "geometry-big.json": '{"homography": [[' + BIG + "]]}",
    "geometry-latin1.json": b'{"source": "\xff"}',
    "script-latin1.txt": b"move 13 10\xff\n",
    "script-sleep.txt": "sleep -1\n",
    "script-inject.txt": "inject corrupt=2\n",
    "script-lift.txt": "lift 3\n",
    "script-point.txt": "move \u00b2 3\n",
    "journal-latin1.jsonl": b'{"seq": 0, "type": "\xff"}\n',
    "journal-deep.jsonl": DEEP + "\n",
    "journal-big.jsonl": '{"seq": ' + BIG + "}\n",
    "a-file": "just a file\n",
}

T = "{t}"
CASES: dict[str, Case] = {
    # ---------------------------------------------------------------- rules
    "rules plays deep JSON": Case(("rules", "plays", "--dice", "3", "1", f"{T}/deep.json"), "position"),
    "rules plays deep object": Case(("rules", "plays", "--dice", "3", "1", f"{T}/deep-object.json"), "position"),
    "rules plays 5000-digit point": Case(("rules", "plays", "--dice", "3", "1", f"{T}/big.json"), "position"),
    "rules plays not UTF-8": Case(("rules", "plays", "--dice", "3", "1", f"{T}/latin1.json"), "latin1.json"),
    "rules plays empty file": Case(("rules", "plays", "--dice", "3", "1", f"{T}/empty.json"), "position"),
    "rules plays a folder": Case(("rules", "plays", "--dice", "3", "1", T), "position"),
    "rules plays no such file": Case(("rules", "plays", "--dice", "3", "1", f"{T}/nope.json"), "nope.json"),
    "rules plays /dev/zero": Case(("rules", "plays", "--dice", "3", "1", "/dev/zero"), "/dev/zero"),
    "rules plays pinned superscript": Case(("rules", "plays", "--dice", "3", "1", f"{T}/pinned-sup.json"), "pinned"),
    "rules plays pinned arabic digits": Case(
        ("rules", "plays", "--dice", "3", "1", f"{T}/pinned-arabic.json"), "pinned"
    ),
    "rules plays rolls 10**18": Case(("rules", "plays", "--dice", "3", "1", f"{T}/rolls.json"), "rolls"),
    "rules plays deep stdin": Case(("rules", "plays", "--dice", "3", "1"), "position", stdin=DEEP),
    "rules plays big stdin": Case(("rules", "plays", "--dice", "3", "1"), "position", stdin=BIG_POINTS),
    "rules plays dice 7": Case(("rules", "plays", "--dice", "7", "1", f"{T}/start.json"), "7"),
    "rules plays dice superscript": Case(("rules", "plays", "--dice", "\u00b2", "1", f"{T}/start.json"), "--dice"),
    "rules plays dice 5000 digits": Case(("rules", "plays", "--dice", BIG, "1", f"{T}/start.json"), "--dice"),
    "rules plays budget negative": Case(
        ("rules", "plays", "--budget", "-1", "--dice", "3", "1", f"{T}/start.json"), "--budget"
    ),
    "rules plays budget backgammon": Case(
        ("rules", "plays", "--budget", "1", "--dice", "3", "3", f"{T}/start.json"), "budget"
    ),
    "rules plays batch deep": Case(("rules", "plays", "--batch"), "line 1", stdin=DEEP + "\n"),
    "rules plays batch big": Case(
        ("rules", "plays", "--batch"), "line 1", stdin='{"position": ' + BIG_POINTS + ', "dice": [3, 1]}\n'
    ),
    "rules plays batch dice": Case(
        ("rules", "plays", "--batch"), "line 1", stdin='{"position": ' + START + ', "dice": [3, ' + BIG + "]}\n"
    ),
    "rules plays option deep": Case(
        ("rules", "plays", "-O", "x=" + DEEP, "--dice", "3", "1", f"{T}/start.json"), "option"
    ),
    "rules plays option big": Case(
        ("rules", "plays", "-O", "x=" + BIG, "--dice", "3", "1", f"{T}/start.json"), "option"
    ),
    "rules start option superscript": Case(("rules", "start", "plakoto", "-O", "mother_rule=\u00b2"), "mother_rule"),
    "rules start option unknown": Case(("rules", "start", "plakoto", "-O", "\u00b2=1"), "\u00b2"),
    "rules start empty variant": Case(("rules", "start", ""), "variant"),
    "rules start unknown variant": Case(("rules", "start", "chess"), "chess"),
    "rules check not UTF-8": Case(
        ("rules", "check", f"{T}/latin1.json", f"{T}/start.json", "--dice", "3", "1"), "latin1.json"
    ),
    "rules check deep": Case(("rules", "check", f"{T}/start.json", f"{T}/deep.json", "--dice", "3", "1"), "position"),
    "rules id deep": Case(("rules", "id", f"{T}/deep.json"), "position"),
    "rules id decode junk": Case(("rules", "id", "--decode", "\u00b2\u00b2\u00b2"), "\u00b2"),
    "rules id decode long": Case(("rules", "id", "--decode", "A" * 100_000), "ID"),
    "rules outcome big": Case(("rules", "outcome", f"{T}/big.json"), "position"),
    "rules outcome rolls": Case(("rules", "outcome", f"{T}/rolls.json"), "rolls"),
    # ---------------------------------------------------------------- board (an emulator runs for ever: subprocess)
    "board emulate missing script": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/nope.txt"), "nope.txt", subprocess=True
    ),
    "board emulate folder script": Case(("board", "emulate", "--exit", "--script", T), "--script", subprocess=True),
    "board emulate script not UTF-8": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/script-latin1.txt"), "script-latin1.txt", subprocess=True
    ),
    "board emulate script /dev/zero": Case(
        ("board", "emulate", "--exit", "--script", "/dev/zero"), "/dev/zero", subprocess=True
    ),
    "board emulate script sleep -1": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/script-sleep.txt"), "sleep", subprocess=True
    ),
    "board emulate script corrupt=2": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/script-inject.txt"), "corrupt", subprocess=True
    ),
    "board emulate script lift from empty point": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/script-lift.txt"), "lift 3", subprocess=True
    ),
    "board emulate script superscript point": Case(
        ("board", "emulate", "--exit", "--script", f"{T}/script-point.txt"), "\u00b2", subprocess=True
    ),
    "board emulate typed superscript point": Case(
        ("board", "emulate", "--exit"), "\u00b2", stdin="move \u00b2 3\n", subprocess=True
    ),
    "board emulate unknown variant": Case(("board", "emulate", "--exit", "--variant", "chess"), "chess"),
    "board emulate empty variant": Case(("board", "emulate", "--exit", "--variant", ""), "variant"),
    "board emulate seed superscript": Case(("board", "emulate", "--seed", "\u00b2"), "--seed"),
    "board watch seconds negative": Case(("board", "watch", "--seconds", "-1"), "--seconds"),
    "board watch seconds nan": Case(("board", "watch", "--seconds", "nan"), "--seconds"),
    "board watch seconds superscript": Case(("board", "watch", "--seconds", "\u00b2"), "--seconds"),
    # ---------------------------------------------------------------- vision
    "vision calibrate no such folder": Case(
        ("vision", "calibrate", f"{T}/board.png", "-o", "/no/such/dir/g.json"), "/no/such/dir/g.json"
    ),
    "vision calibrate output in /proc": Case(("vision", "calibrate", f"{T}/board.png", "-o", "/proc/g.json"), "-o"),
    "vision calibrate output a folder": Case(("vision", "calibrate", f"{T}/board.png", "-o", T), "-o"),
    "vision calibrate gigapixel": Case(("vision", "calibrate", f"{T}/giga.png", "-o", f"{T}/g.json"), "giga.png"),
    "vision calibrate near gigapixel": Case(
        ("vision", "calibrate", f"{T}/near-giga.png", "-o", f"{T}/g.json"), "near-giga.png"
    ),
    "vision calibrate zero size": Case(("vision", "calibrate", f"{T}/zero.png", "-o", f"{T}/g.json"), "zero.png"),
    "vision calibrate not an image": Case(("vision", "calibrate", f"{T}/text.png", "-o", f"{T}/g.json"), "text.png"),
    "vision calibrate a folder": Case(("vision", "calibrate", T, "-o", f"{T}/g.json"), "image"),
    "vision calibrate /dev/zero": Case(("vision", "calibrate", "/dev/zero", "-o", f"{T}/g.json"), "/dev/zero"),
    "vision calibrate profile board_profile = 5": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile5.toml", "-o", f"{T}/g.json"),
        "profile5.toml",
    ),
    "vision calibrate profile table = 5": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile-table5.toml", "-o", f"{T}/g.json"),
        "profile-table5.toml",
    ),
    "vision calibrate profile text value": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile-str.toml", "-o", f"{T}/g.json"),
        "point_width_mm",
    ),
    "vision calibrate profile nan": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile-nan.toml", "-o", f"{T}/g.json"),
        "point_width_mm",
    ),
    "vision calibrate profile negative": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile-neg.toml", "-o", f"{T}/g.json"),
        "point_width_mm",
    ),
    "vision calibrate profile not UTF-8": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/profile-latin1.toml", "-o", f"{T}/g.json"),
        "profile-latin1.toml",
    ),
    "vision calibrate profile missing": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", f"{T}/nope.toml", "-o", f"{T}/g.json"), "nope.toml"
    ),
    "vision calibrate profile unknown": Case(
        ("vision", "calibrate", f"{T}/board.png", "--profile", "\u00b2", "-o", f"{T}/g.json"), "\u00b2"
    ),
    "vision calibrate corners superscript": Case(
        ("vision", "calibrate", f"{T}/board.png", "--corners", "\u00b2,1,2,3,4,5,6,7", "-o", f"{T}/g.json"),
        "--corners",
    ),
    "vision calibrate corners nan": Case(
        ("vision", "calibrate", f"{T}/board.png", "--corners", "nan,1,2,3,4,5,6,7", "-o", f"{T}/g.json"), "--corners"
    ),
    "vision calibrate corners 5000 digits": Case(
        ("vision", "calibrate", f"{T}/board.png", "--corners", BIG + ",1,2,3,4,5,6,7", "-o", f"{T}/g.json"),
        "--corners",
    ),
    "vision read geometry deep": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry-deep.json"), "geometry"
    ),
    "vision read geometry big": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry-big.json"), "geometry"
    ),
    "vision read geometry not UTF-8": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry-latin1.json"), "geometry"
    ),
    "vision read geometry board_profile 5": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry-profile5.json"), "board_profile"
    ),
    "vision read geometry /dev/zero": Case(("vision", "read", f"{T}/board.png", "--geometry", "/dev/zero"), "geometry"),
    "vision read geometry a folder": Case(("vision", "read", f"{T}/board.png", "--geometry", T), "geometry"),
    "vision read palette NaN": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--palette", f"{T}/palette-nan.json"),
        "palette",
    ),
    "vision read palette overflow": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--palette", f"{T}/palette-inf.json"),
        "palette",
    ),
    "vision read palette out of range": Case(
        (
            "vision",
            "read",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--palette",
            f"{T}/palette-range.json",
        ),
        "palette",
    ),
    "vision read palette deep": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--palette", f"{T}/palette-deep.json"),
        "palette",
    ),
    "vision read palette big": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--palette", f"{T}/palette-big.json"),
        "palette",
    ),
    "vision read palette edges overflow": Case(
        (
            "vision",
            "read",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--palette",
            f"{T}/palette-edges.json",
        ),
        "palette",
    ),
    "vision read palette /dev/zero": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--palette", "/dev/zero"), "palette"
    ),
    "vision read config unknown key": Case(
        ("vision", "read", f"{T}/board.png", "--config", f"{T}/config-bad.toml"), "no_such_threshold"
    ),
    "vision read config bad reader": Case(
        ("vision", "read", f"{T}/board.png", "--config", f"{T}/config-str.toml"), "guess"
    ),
    "vision read config nan": Case(
        ("vision", "read", f"{T}/board.png", "--config", f"{T}/config-nan.toml"), "max_reprojection_px"
    ),
    "vision read config /dev/zero": Case(("vision", "read", f"{T}/board.png", "--config", "/dev/zero"), "/dev/zero"),
    "vision read annotate no such folder": Case(
        ("vision", "read", f"{T}/board.png", "--geometry", f"{T}/geometry.json", "--annotate", "/no/such/a.png"),
        "/no/such/a.png",
    ),
    "vision read gigapixel": Case(("vision", "read", f"{T}/giga.png"), "giga.png"),
    "vision learn output no such folder": Case(
        (
            "vision",
            "learn",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--position",
            f"{T}/start.json",
            "-o",
            "/no/such/dir/p.json",
        ),
        "/no/such/dir/p.json",
    ),
    "vision learn output in /proc": Case(
        (
            "vision",
            "learn",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--position",
            f"{T}/start.json",
            "-o",
            "/proc/p.json",
        ),
        "-o",
    ),
    "vision learn position not UTF-8": Case(
        (
            "vision",
            "learn",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--position",
            f"{T}/latin1.json",
            "-o",
            f"{T}/p.json",
        ),
        "latin1.json",
    ),
    "vision learn position deep": Case(
        (
            "vision",
            "learn",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--position",
            f"{T}/deep.json",
            "-o",
            f"{T}/p.json",
        ),
        "position",
    ),
    "vision learn position pinned superscript": Case(
        (
            "vision",
            "learn",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--position",
            f"{T}/pinned-sup.json",
            "-o",
            f"{T}/p.json",
        ),
        "pinned",
    ),
    "vision grab camera superscript": Case(("vision", "grab", "--camera", "\u00b2", "-o", f"{T}/x.png"), "\u00b2"),
    "vision grab camera arabic": Case(("vision", "grab", "--camera", "\u0661", "-o", f"{T}/x.png"), "\u0661"),
    "vision grab camera 5000 digits": Case(("vision", "grab", "--camera", BIG, "-o", f"{T}/x.png"), "camera"),
    "vision grab no such video": Case(("vision", "grab", "--camera", f"{T}/nope.mp4", "-o", f"{T}/x.png"), "nope.mp4"),
    "vision grab size superscript": Case(("vision", "grab", "--size", "\u00b2x\u00b2", "-o", f"{T}/x.png"), "--size"),
    "vision grab size zero": Case(("vision", "grab", "--size", "0x0", "-o", f"{T}/x.png"), "--size"),
    "vision grab size 5000 digits": Case(("vision", "grab", "--size", BIG + "x1", "-o", f"{T}/x.png"), "--size"),
    "vision grab settle negative": Case(("vision", "grab", "--settle", "-1", "-o", f"{T}/x.png"), "--settle"),
    "vision grab output no such folder": Case(
        ("vision", "grab", "--camera", f"{T}/nope.mp4", "-o", "/no/such/x.png"), "/no/such/x.png"
    ),
    "vision dice gigapixel": Case(("vision", "dice", f"{T}/giga.png"), "giga.png"),
    "vision dice config unknown key": Case(
        ("vision", "dice", f"{T}/board.png", "--config", f"{T}/config-bad.toml"), "no_such_threshold"
    ),
    "vision dice geometry deep": Case(
        ("vision", "dice", f"{T}/board.png", "--geometry", f"{T}/geometry-deep.json"), "geometry"
    ),
    "vision render deep": Case(("vision", "render", f"{T}/deep.json", "-o", f"{T}/x.png"), "position"),
    "vision render big": Case(("vision", "render", f"{T}/big.json", "-o", f"{T}/x.png"), "position"),
    "vision render not UTF-8": Case(("vision", "render", f"{T}/latin1.json", "-o", f"{T}/x.png"), "latin1.json"),
    "vision render /dev/zero": Case(("vision", "render", "/dev/zero", "-o", f"{T}/x.png"), "/dev/zero"),
    "vision render pinned superscript": Case(
        ("vision", "render", f"{T}/pinned-sup.json", "-o", f"{T}/x.png"), "pinned"
    ),
    "vision render truth no such folder": Case(
        ("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--truth", "/no/such/dir/t.json"),
        "/no/such/dir/t.json",
    ),
    "vision render truth in /proc": Case(
        ("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--truth", "/proc/t.json"), "--truth"
    ),
    "vision render output in /proc": Case(("vision", "render", f"{T}/start.json", "-o", "/proc/x.png"), "/proc/x.png"),
    "vision render output not an image": Case(("vision", "render", f"{T}/start.json", "-o", f"{T}/x.txt"), "x.txt"),
    "vision render cube superscript": Case(
        ("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--cube", "\u00b2", "centre"), "cube"
    ),
    "vision render cube 5000 digits": Case(
        ("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--cube", BIG, "centre"), "cube"
    ),
    "vision render die 7": Case(("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--dice", "7"), "7"),
    "vision render die 5000 digits": Case(
        ("vision", "render", f"{T}/start.json", "-o", f"{T}/x.png", "--dice", BIG), "--dice"
    ),
    # ---------------------------------------------------------------- record
    "record export /dev/zero": Case(("record", "export", "/dev/zero"), "/dev/zero"),
    "record export a folder": Case(("record", "export", T), "journal"),
    "record export missing": Case(("record", "export", f"{T}/nope.jsonl"), "nope.jsonl"),
    "record export not UTF-8": Case(("record", "export", f"{T}/journal-latin1.jsonl"), "line 1"),
    "record export deep line": Case(("record", "export", f"{T}/journal-deep.jsonl"), "line 1"),
    "record export big number": Case(("record", "export", f"{T}/journal-big.jsonl"), "line 1"),
    "record export output no such folder": Case(
        ("record", "export", "{demo}", "-o", "/no/such/dir/m.txt"), "/no/such/dir/m.txt"
    ),
    "record open /dev/zero": Case(("record", "open", "/dev/zero", "--dry-run"), "/dev/zero"),
    "record open mat no such folder": Case(
        ("record", "open", "{demo}", "--dry-run", "--mat", "/no/such/dir/m.mat"), "/no/such/dir/m.mat"
    ),
    # ---------------------------------------------------------------- play
    "play games 0": Case(("play", "--games", "0"), "--games"),
    "play games negative": Case(("play", "--games", "-3"), "--games"),
    "play games superscript": Case(("play", "--games", "\u00b2"), "--games"),
    "play empty variant": Case(("play", "--variant", ""), "--variant"),
    "play unknown variant": Case(("play", "--variant", "chess"), "chess"),
    "play match :3": Case(("play", "--match", ":3"), "--match"),
    "play match money:": Case(("play", "--match", "money:"), "--match"),
    "play match money:chess": Case(("play", "--match", "money:chess"), "chess"),
    "play match tavli:superscript": Case(("play", "--match", "tavli:\u00b2"), "--match"),
    "play match tavli:arabic": Case(("play", "--match", "tavli:\u0663"), "--match"),
    "play match tavli:0": Case(("play", "--match", "tavli:0"), "--match"),
    "play match 5000 digits": Case(("play", "--match", "backgammon:" + BIG), "--match"),
    "play match chess:3": Case(("play", "--match", "chess:3"), "chess"),
    "play match empty": Case(("play", "--match", ""), "--match"),
    "play option superscript": Case(("play", "--option", "plakoto.mother_rule=\u00b2"), "mother_rule"),
    "play option no variant": Case(("play", "--option", "\u00b2"), "--option"),
    "play option unknown variant": Case(("play", "--option", "chess.x=1"), "chess"),
    "play option unknown name": Case(("play", "--variant", "plakoto", "--option", "plakoto.colour=1"), "colour"),
    "play option 5000 digits": Case(("play", "--option", "plakoto.mother_rule=" + BIG), "mother_rule"),
    "play automatic doubles negative": Case(("play", "--automatic-doubles", "-1"), "automatic_doubles"),
    "play resume missing": Case(("play", "--resume", f"{T}/nope.jsonl"), "nope.jsonl"),
    "play resume a folder": Case(("play", "--resume", T), "journal"),
    "play resume /dev/zero": Case(("play", "--resume", "/dev/zero"), "/dev/zero"),
    "play resume not UTF-8": Case(("play", "--resume", f"{T}/journal-latin1.jsonl"), "line 1"),
    "play resume deep": Case(("play", "--resume", f"{T}/journal-deep.jsonl"), "line 1"),
    "play journal no such folder": Case(("play", "--journal", "/no/such/dir/j.jsonl"), "/no/such/dir/j.jsonl"),
    "play journal in /proc": Case(("play", "--journal", "/proc/j.jsonl"), "/proc/j.jsonl"),
    "play journal a folder": Case(("play", "--journal", T), "journal"),
    "play camera without geometry": Case(("play", "--camera", f"{T}/board.png"), "--geometry"),
    "play camera superscript": Case(
        ("play", "--journal", f"{T}/j.jsonl", "--camera", "\u00b2", "--geometry", f"{T}/geometry.json"), "--camera"
    ),
    "play camera 5000 digits": Case(
        ("play", "--journal", f"{T}/j.jsonl", "--camera", BIG, "--geometry", f"{T}/geometry.json"), "--camera"
    ),
    "play geometry deep": Case(
        ("play", "--camera", f"{T}/board.png", "--geometry", f"{T}/geometry-deep.json"), "geometry"
    ),
    "play palette NaN": Case(
        (
            "play",
            "--camera",
            f"{T}/board.png",
            "--geometry",
            f"{T}/geometry.json",
            "--palette",
            f"{T}/palette-nan.json",
        ),
        "palette",
    ),
    "play web superscript": Case(("play", "--journal", f"{T}/j.jsonl", "--web", "\u00b2"), "\u00b2"),
    "play web port too big": Case(("play", "--journal", f"{T}/j.jsonl", "--web", "99999"), "99999"),
    # ---------------------------------------------------------------- demo
    "demo match 0": Case(("demo", "--match", "0", "--out", f"{T}/d"), "--match"),
    "demo match negative": Case(("demo", "--match", "-2", "--out", f"{T}/d"), "--match"),
    "demo match superscript": Case(("demo", "--match", "\u00b2"), "--match"),
    "demo out a file": Case(("demo", "--out", f"{T}/a-file"), "a-file"),
    "demo out in /proc": Case(("demo", "--out", "/proc/demo"), "/proc/demo"),
    "demo out under a file": Case(("demo", "--out", f"{T}/a-file/d"), "a-file"),
    "demo pace negative": Case(("demo", "--pace", "-1", "--out", f"{T}/d"), "--pace"),
    "demo pace nan": Case(("demo", "--pace", "nan", "--out", f"{T}/d"), "--pace"),
    "demo web superscript": Case(("demo", "--web", "\u00b2", "--out", f"{T}/d"), "\u00b2"),
    "demo seed 5000 digits": Case(("demo", "--seed", BIG, "--out", f"{T}/d"), "--seed"),
    # ---------------------------------------------------------------- virtual (serves for ever: subprocess)
    "virtual empty variant": Case(("virtual", "--variant", "", "--web", "0"), "variant", subprocess=True),
    "virtual unknown variant": Case(("virtual", "--variant", "chess", "--web", "0"), "chess", subprocess=True),
    "virtual web superscript": Case(("virtual", "--web", "\u00b2"), "\u00b2", subprocess=True),
    "virtual journal no such folder": Case(
        ("virtual", "--journal", "/no/such/dir/v.jsonl", "--web", "0"), "/no/such/dir/v.jsonl", subprocess=True
    ),
    "virtual journal in /proc": Case(("virtual", "--journal", "/proc/v.jsonl", "--web", "0"), "/proc", subprocess=True),
    "virtual journal a folder": Case(("virtual", "--journal", T, "--web", "0"), "journal", subprocess=True),
}


class _Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Hang()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The files the cases name: malformed ones, a rendered board, its geometry and a short journal."""
    t = tmp_path_factory.mktemp("bad-input")
    for name, body in FILES.items():
        (t / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    from vision.calibrate import calibrate
    from vision.render import render

    frame = render(Position.start("backgammon"), seed=1)
    import cv2

    cv2.imwrite(str(t / "board.png"), frame.image)
    geometry = calibrate(frame.image)
    geometry.save(t / "geometry.json")
    (t / "geometry-profile5.json").write_text(json.dumps({**geometry.to_dict(), "board_profile": 5}))
    demo = ROOT / "tests" / "data" / "demo-match-3.jsonl"  # a backgammon match the referee recorded
    (t / "demo.jsonl").write_bytes(demo.read_bytes())
    return t


def _argv(case: Case, t: Path) -> list[str]:
    return [a.replace("{t}", str(t)).replace("{demo}", str(t / "demo.jsonl")) for a in case.argv]


def _address_space() -> int:
    """This process's virtual memory now, in bytes (VmSize)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _in_process(argv: list[str], stdin: str) -> tuple[object, str, str | None]:
    """(exit status, stderr, traceback or "hang" or None)."""
    err = io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), io.StringIO(), err
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(IN_PROCESS_S)
    limits = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + MEMORY_BYTES, limits[1]))
    fault = None
    code: object = None
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except _Hang:
        fault = "hang"
    except BaseException:  # noqa: BLE001 - what the test looks for
        fault = traceback.format_exc()
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdin, sys.stdout, sys.stderr = old
    return code, err.getvalue(), fault


def _subprocess(argv: list[str], stdin: str, cwd: Path) -> tuple[object, str, str | None]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "referee.cli", *argv],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_S,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired as exc:
        return None, (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else "", "hang"
    fault = done.stderr if "Traceback (most recent call last)" in done.stderr else None
    return done.returncode, done.stderr, fault


def _one_line(stderr: str) -> bool:
    """One line of message, or argparse's usage followed by its one ``error:`` line."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if lines and lines[0].startswith("usage:"):
        return ": error: " in lines[-1]
    return len(lines) == 1


def test_bad_input_over_every_subcommand_exits_2_naming_the_field(folder, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a play or demo that did start leaves its journal here, not in the checkout
    failures, tracebacks, hangs = [], 0, 0
    for name, case in CASES.items():
        argv = _argv(case, folder)
        if case.subprocess:
            code, err, fault = _subprocess(argv, case.stdin, tmp_path)
        else:
            code, err, fault = _in_process(argv, case.stdin)
        if fault == "hang":
            hangs += 1
            failures.append(f"{name}: still running after {SUBPROCESS_S if case.subprocess else IN_PROCESS_S} s")
        elif fault is not None:
            tracebacks += 1
            failures.append(f"{name}: traceback\n{fault[-1500:]}")
        elif code != case.code:
            failures.append(f"{name}: exit {code!r}, not {case.code}; stderr {err[-400:]!r}")
        elif not _one_line(err):
            failures.append(f"{name}: not one line on stderr: {err[-600:]!r}")
        elif case.names.lower() not in err.lower():
            failures.append(f"{name}: the message does not name {case.names!r}: {err[-300:]!r}")
    with capsys.disabled():
        print(
            f"\nbad input: {len(CASES)} cases over every subcommand, {tracebacks} tracebacks, {hangs} hangs, "
            f"{len(failures)} failures"
        )
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("key", ["\u00b2", "\u0661", "\u00bd", "01x", "+3", " 3"])
def test_a_pinned_key_that_is_no_ascii_point_number_is_an_invalid_position(key):
    data = {**_start("plakoto"), "pinned": {key: "white"}}
    with pytest.raises(InvalidPositionError) as info:
        Position.from_dict(data)
    assert info.value.field == "pinned" and info.value.value == key


def test_rolls_beyond_any_game_are_an_invalid_position():
    with pytest.raises(InvalidPositionError) as info:
        Position.from_json(_with(rolls={"white": 10**18, "black": 0}))
    assert info.value.field == "rolls.white"
