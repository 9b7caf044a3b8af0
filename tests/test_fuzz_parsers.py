"""Fuzz every parser of outside input (issue 19): each gives a value or its own error, never another exception.

Position JSON, geometry, palette, board profiles, the vision config, match specs, journal
lines, keyboard lines in a live session, emulator script lines, LED commands, panel and fault
words, places, rolls, move texts, gnubg IDs, web addresses and protocol frames. Inputs are
valid documents with fields replaced, dropped or added, and free text; hypothesis keeps each
test to a bounded number of examples, so the suite runs in CI.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_rules import Position
from board_rules.errors import TavliError
from board_rules.gnubg_id import MatchState
from board_rules.ids import position_from_id
from board_rules.notation import Play, Roll, parse_moves
from board_rules.places import Place
from board_rules.variants import find_variant
from firmware_bridge.cli_board import parse_led_command
from firmware_bridge.emulator_pty import FaultProfile
from firmware_bridge.panel import PanelEvent
from firmware_bridge.protocol import FrameReader, Hello, LedFrame, encode_frame
from firmware_bridge.script import parse_command
from referee.events import Decoder
from referee.journal import read_journal
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec
from referee.web import parse_address
from vision.calibrate import Geometry, calibrate
from vision.checkers import Palette
from vision.config import VisionConfig
from vision.profile import read_profile_file

# TAVLI_FUZZ_EXAMPLES=5000 for a longer hunt than CI's
EXAMPLES = settings(
    max_examples=int(os.environ.get("TAVLI_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
DATA = Path(__file__).with_name("data")

# JSON values: what a file or a typed line may hold in place of any field
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["white", "black", "1", "\u00b2", "\u0663", "24", "bar", "off", "backgammon", "plakoto", ""])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
deep = st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)


def mutated(document: dict) -> st.SearchStrategy[dict]:
    """``document`` with some of its fields (at any depth) replaced, dropped, or added."""
    paths = list(_paths(document))

    def apply(edits) -> dict:
        doc = json.loads(json.dumps(document))
        for path, action, value in edits:
            parent = doc
            for key in path[:-1]:
                try:
                    parent = parent[key]
                except (KeyError, IndexError, TypeError):
                    break
            else:
                key = path[-1]
                if isinstance(parent, dict) and action == "drop":
                    parent.pop(key, None)
                elif isinstance(parent, dict) or (
                    isinstance(parent, list) and isinstance(key, int) and key < len(parent)
                ):
                    parent[key] = value
        return doc

    edit = st.tuples(
        st.sampled_from(paths) | st.text(max_size=6).map(lambda k: (k,)),
        st.sampled_from(["set", "set", "drop"]),
        json_values,
    )
    return st.lists(edit, min_size=1, max_size=3).map(apply)


def _paths(doc, prefix=()):
    if isinstance(doc, dict):
        items = doc.items()
    elif isinstance(doc, list):
        items = enumerate(doc)
    else:
        return
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


def texts_of(document: dict) -> st.SearchStrategy[str]:
    """JSON text: ``document`` mutated, cut short, or replaced by other text."""
    whole = json.dumps(document)
    return (
        mutated(document).map(json.dumps)
        | st.integers(0, len(whole)).map(lambda n: whole[:n])
        | deep
        | st.text(max_size=60)
    )


def refused_or_read(parse, value, *errors: type[BaseException]):
    """``parse(value)``; an error of ``errors`` (default: a :class:`TavliError`) is a refusal, fine."""
    refusals = tuple(errors) or (TavliError,)
    try:
        return parse(value)
    except refusals:
        return None


# ----------------------------------------------------------------- documents

START = {v: Position.start(v).to_dict() for v in ("backgammon", "plakoto", "gul-bara", "long-nardy")}


@EXAMPLES
@given(st.sampled_from(sorted(START)).flatmap(lambda v: texts_of(START[v])))
def test_position_json(text):
    position = refused_or_read(Position.from_json, text)
    if position is not None:
        assert Position.from_json(position.to_json()) == position


@pytest.fixture(scope="module")
def geometry_doc():
    """A geometry calibrated at made-up field corners of a blank frame."""
    corners = [(100.0, 100.0), (900.0, 100.0), (900.0, 700.0), (100.0, 700.0)]
    return calibrate(np.zeros((800, 1000, 3), np.uint8), corners=corners, field=True).to_dict()


@EXAMPLES
@given(data=st.data())
def test_geometry_json(geometry_doc, data):
    refused_or_read(Geometry.from_json, data.draw(texts_of(geometry_doc)))


PALETTE = {"white": [230.0, 128.0, 130.0], "black": [40.0, 130.0, 126.0], "tray": [90.0, 128.0, 128.0]}


@EXAMPLES
@given(mutated(PALETTE) | json_values)
def test_palette(data):
    refused_or_read(Palette.from_dict, data)


def _toml_texts(valid: str) -> st.SearchStrategy[str]:
    lines = valid.splitlines()
    return (
        st.lists(st.sampled_from(lines) | st.text(max_size=30), max_size=8).map("\n".join)
        | st.tuples(st.integers(0, len(lines)), st.sampled_from(lines), st.text(max_size=20)).map(
            lambda t: "\n".join([*lines[: t[0]], t[1].split("=")[0] + "= " + repr(t[2]), *lines[t[0] :]])
        )
        | st.tuples(st.integers(0, len(lines)), scalars).map(
            lambda t: "\n".join([*lines[: t[0]], f"checkers_per_row = {json.dumps(t[1])}", *lines[t[0] :]])
        )
    )


PROFILE = """[board_profile.club]
checker_mm = 38.0
checkers_per_row = 5
point_margin_mm = 2.0
"""


@EXAMPLES
@given(_toml_texts(PROFILE) | st.just("board_profile = 5"))
def test_board_profile_file(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "profiles.toml")
        path.write_text(text, encoding="utf-8")
        refused_or_read(lambda p: read_profile_file(p, "club"), path)


CONFIG = """[dice]
reader = "classical"
[gate]
stable_frames = 3
"""


@EXAMPLES
@given(_toml_texts(CONFIG))
def test_vision_config_file(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "vision.toml")
        path.write_text(text, encoding="utf-8")
        refused_or_read(VisionConfig.load, path)


SPEC = MatchSpec("tavli", 5, "portes").to_dict()


@EXAMPLES
@given(mutated(SPEC) | json_values)
def test_match_spec(data):
    refused_or_read(MatchSpec.from_dict, data)


# ----------------------------------------------------------------- journals

JOURNAL = [json.loads(line) for line in (DATA / "portes-match.jsonl").read_text(encoding="utf-8").splitlines()[:40]]


@EXAMPLES
@given(st.integers(0, len(JOURNAL) - 1).flatmap(lambda i: st.tuples(st.just(i), mutated(JOURNAL[i]) | json_values)))
def test_journal_line(case):
    at, line = case
    decoder = Decoder()
    for n, good in enumerate(JOURNAL[:at], 1):
        decoder.decode(good, n)
    refused_or_read(lambda d: decoder.decode(d, at + 1), line)


@EXAMPLES
@given(st.lists(st.binary(max_size=40) | st.sampled_from([json.dumps(e).encode() for e in JOURNAL]), max_size=6))
def test_journal_file(lines):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "match.jsonl")
        path.write_bytes(b"\n".join(lines))
        refused_or_read(read_journal, path)


# ----------------------------------------------------------------- typed lines

WORDS = ["roll", "opening", "end", "resign", "double", "take", "pass", "hint", "lift", "board", "move", "show"]
ARGS = [
    "3 1",
    "6 6",
    "7 7",
    "0",
    "\u00b2 1",
    "13",
    "bar",
    "off",
    "99",
    "-1",
    "start",
    "13 7",
    "24 off",
    "4HPwATDgc/ABMA",
]
lines = (
    st.tuples(st.sampled_from(WORDS), st.sampled_from(ARGS) | st.text(max_size=20)).map(" ".join)
    | st.text(max_size=40)
    | deep.map(lambda d: "board " + d)
)


OPENINGS = [[], ["board start"], ["board start", "opening 3 1"], ["board start", "opening 6 6"]]


@EXAMPLES
@given(st.sampled_from(OPENINGS), st.lists(lines, min_size=1, max_size=4))
def test_keyboard_lines_in_a_live_session(before, typed):
    """A session without devices, at one of a few moments of a game, takes any typed lines."""
    with tempfile.TemporaryDirectory() as folder:
        ref = Referee.new(Path(folder, "match.jsonl"), MatchSpec("money", 0, "backgammon"))
        try:
            session = TableSession(ref, say=lambda text: None)
            for line in [*before, *typed]:
                session.command(line)  # a line that cannot be done is said; nothing is raised
            read_journal(ref.journal.path)  # the match record stays whole
        finally:
            ref.close()


FRAMES = [encode_frame(Hello(), seq=1), encode_frame(Hello(), seq=2)[:-3]]

SCRIPT = ["move 13 10", "move bar 22 black", "lift 3", "put 4", "set start", "sleep 0.01", "inject corrupt=1"]


@EXAMPLES
@given(
    st.tuples(st.sampled_from([s.split()[0] for s in SCRIPT]), st.sampled_from(ARGS) | st.text(max_size=20)).map(
        " ".join
    )
    | st.sampled_from(SCRIPT)
    | st.text(max_size=40)
)
def test_emulator_script_line(line):
    refused_or_read(parse_command, line)


@EXAMPLES
@given(
    st.tuples(
        st.just("led"), st.sampled_from(["13", "bar", "off-b", "13,bar", "\u00b2", "99"]), st.text(max_size=8)
    ).map(" ".join)
    | st.text(max_size=30)
)
def test_led_command(line):
    frame = refused_or_read(parse_led_command, line)
    assert frame is None or isinstance(frame, LedFrame)


@EXAMPLES
@given(st.text(max_size=30))
def test_small_words(text):
    for parse in (
        PanelEvent.parse,
        FaultProfile.parse,
        Place.parse,
        Roll.parse,
        parse_moves,
        Play.parse,
        MatchState.parse,
        lambda t: position_from_id(t, find_variant("backgammon")),
        parse_address,
        find_variant,
    ):
        refused_or_read(parse, text, TavliError, ValueError)


@EXAMPLES
@given(st.lists(st.binary(max_size=64) | st.just(b"\x00") | st.sampled_from(FRAMES), max_size=8))
def test_protocol_frames(chunks):
    """The host's frame reader never raises: a bad frame is counted and skipped; good ones still read."""
    reader = FrameReader()
    got = [item for chunk in chunks for item in reader.feed(chunk)]
    assert all(isinstance(seq, int) for seq, _ in got)
    clean = FrameReader()
    assert clean.feed(b"\x00" + FRAMES[0]) == [(1, Hello())]  # after any junk, a whole frame reads


@pytest.mark.parametrize("line", ["double", "take", "pass", "beaver", "resign 1"])
def test_cube_and_resign_before_the_opening_roll_are_refused_with_a_message(tmp_path, line):
    """Found by the keyboard fuzz: these raised AttributeError (nobody on roll) and ended the session."""
    ref = Referee.new(tmp_path / "match.jsonl", MatchSpec("money", 0, "backgammon"))
    said: list[str] = []
    try:
        session = TableSession(ref, say=said.append)
        session.command("board start")
        session.command(line)
        assert any("nobody is on roll yet" in s or "no game in progress" in s for s in said), said
    finally:
        ref.close()
