"""Small helpers for tests: positions drawn by hand, waiting on a queue, and the compiled modules."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable
from typing import Any

from board_rules import Position, Roll, Side, find_variant


def compiled(module, name: str):
    """``module`` (a compiled twin, or None where it is not in use); skips without it, and fails when
    TAVLI_REQUIRE_COMPILED=1 (CI builds it). ``name``: the module's import name, for the message."""
    if module is None:
        import pytest

        if os.environ.get("TAVLI_REQUIRE_COMPILED") == "1":
            pytest.fail(f"{name} was not built, and TAVLI_REQUIRE_COMPILED=1 requires it")
        pytest.skip(f"{name} is not in use (not built, or TAVLI_PURE_PYTHON set)")
    return module


def first_from(q: queue.Queue, wanted: Callable[[Any], bool], timeout: float) -> Any | None:
    """The first item taken off ``q`` within ``timeout`` s that ``wanted`` accepts (the items before
    it are taken off and dropped; ``wanted`` may record or assert on them), or None if none came."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            item = q.get(timeout=left)
        except queue.Empty:
            break
        if wanted(item):
            return item
    return None


def make(variant, points=None, *, turn="white", bar=(0, 0), off=None, pinned=None, rolls=(0, 0), **options) -> Position:
    """A position from ``{white point: signed count}``; ``off`` defaults to what makes 15 a side."""
    v = find_variant(variant, **options) if isinstance(variant, str) else variant
    pts = [0] * 24
    for p, n in (points or {}).items():
        pts[p - 1] = n
    pins = [0] * 24
    for p, colour in (pinned or {}).items():
        pins[p - 1] = 1 if colour == "white" else -1
    if off is None:
        white = sum(n for n in pts if n > 0) + sum(1 for x in pins if x > 0) + bar[0]
        black = -sum(n for n in pts if n < 0) + sum(1 for x in pins if x < 0) + bar[1]
        off = (15 - white, 15 - black)
    return Position(v, Side(turn), tuple(pts), tuple(pins), tuple(bar), tuple(off), tuple(rolls))


def plays(position: Position, d1: int, d2: int) -> set[str]:
    """The set of legal play texts."""
    return {str(p) for p in position.legal_plays(Roll(d1, d2))}


def journal_events(path) -> list[dict]:
    """The journal's events as their JSON objects (what the file holds, line by line)."""
    from referee.journal import read_journal

    return [e.to_dict() for e in read_journal(path).events]
