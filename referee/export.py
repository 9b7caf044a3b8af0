"""Export a match journal: gnubg's ``.mat`` match file, plain text and JSON.

Owns :func:`export_mat` (the Jellyfish/gnubg match text that gnubg, XG and other
programs import; backgammon and portes games only), :func:`export_text` and
:func:`export_json` (every variant) and :func:`export` (by format name). Each first
replays the journal through the rules, so a journal with an illegal play is refused,
never exported. How each game action is written in ``.mat`` is in ``docs/referee.md``.
Imports ``board_rules`` and the referee's journal, record and events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from board_rules import Position, Side
from referee.errors import JournalError, JournalReplayError
from referee.events import Event, Stamped
from referee.journal import read_journal
from referee.record import MatchRecord
from referee.spec import MatchSpec

FORMATS = ("mat", "txt", "json")
MAT_VARIANTS = ("backgammon", "portes")


class ExportError(JournalError):
    """A journal that cannot be written in the format asked for (e.g. no backgammon game for ``.mat``)."""


# =============================================================================== the games of a journal


@dataclass
class Game:
    """One game as the journal tells it: its start, its events in order, and its result."""

    number: int
    variant: str
    label: str
    options: dict[str, Any]
    start: dict[str, Any]
    starter: str | None
    score_before: dict[str, int]
    events: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    final: dict[str, Any] | None = None


@dataclass
class Record:
    """A journal read for export: the match, the players, the games and the result."""

    spec: MatchSpec
    players: dict[str, str]
    started: str | None
    games: list[Game]
    match_end: dict[str, Any] | None
    final_score: dict[str, int]
    warning: str | None = None


def _score(board) -> dict[str, int]:
    return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}


def build_record(events: Iterable[Stamped | Event], warning: str | None = None) -> Record:
    """The games of a journal's events, each play checked by the rules on the way.

    Raises :class:`referee.journal.JournalReplayError` for an event the rules refuse.
    """
    r = MatchRecord()
    games: list[Game] = []
    started = None
    match_end = None
    for line, item in enumerate(events, start=1):
        event = item.to_dict()
        kind = event["type"]
        score_before = _score(r.scoreboard) if r.scoreboard is not None else None
        r.apply(item, line)
        if kind == "match_start":
            started = event.get("time")
        elif kind == "game_start":
            games.append(
                Game(
                    number=event["game"],
                    variant=r.variant.name,
                    label=r.variant.label,
                    options=dict(event.get("options") or {}),
                    start=event["position"],
                    starter=event["starter"],
                    score_before=score_before,
                    final=event["position"],
                )
            )
        elif kind == "match_end":
            match_end = event
        elif games:
            game = games[-1]
            game.events.append(event)
            if kind == "play":
                game.final = event["after"]
            elif kind == "pass" and r.position is not None:
                game.final = r.position.to_dict()
            elif kind == "game_end":
                game.outcome = event["outcome"]
    if r.spec is None:
        raise JournalReplayError("the journal is empty: no match_start")
    return Record(r.spec, dict(r.players), started, games, match_end, _score(r.scoreboard), warning)


def _side_name(record: Record, side: str | None) -> str:
    if side is None:
        return "nobody"
    return f"{side} ({record.players.get(side, side)})"


# =============================================================================== .mat


def _mat_name(name: str) -> str:
    """A player name gnubg's importer reads back: no colon, no line break, at most 31 characters."""
    clean = " ".join(str(name).replace(":", " ").split()) or "player"
    return clean[:31]


def _points(n: int) -> str:
    return f"Wins {n} point" + ("" if n == 1 else "s")


def _mat_cells(game: Game) -> list[tuple[int, str]]:
    """The game's actions as (column, text): column 0 is white (gnubg's player 0), 1 black."""
    cells: list[tuple[int, str]] = []
    col = {"white": 0, "black": 1}
    for e in game.events:
        kind = e["type"]
        if kind in ("play", "pass"):
            d1, d2 = e["dice"]
            text = e["play"] if kind == "play" else ""
            cells.append((col[e["side"]], f"{d1}{d2}: {text}".rstrip() + ("" if text else " ")))
        elif kind == "cube":
            action = e["action"]
            side = e.get("side")
            if action == "double":
                cells.append((col[side], f" Doubles => {e['value'] * 2 if e.get('value') else 2}"))
            elif action == "take":
                cells.append((col[side], " Takes"))
            elif action == "pass":
                cells.append((col[side], " Drops"))
            elif action in ("beaver", "raccoon"):
                cells.append((col[side], f" {action.capitalize()}s => {e.get('value')}"))
    return cells


def _mat_game(game: Game, index: int, record: Record) -> list[str]:
    white = _mat_name(record.players.get("white", "white"))
    black = _mat_name(record.players.get("black", "black"))
    s = game.score_before
    lines = [f" Game {index}", " %-31s%s : %d" % (f"{white} : {s['white']}", black, s["black"])]
    i = 0
    cur = ""
    for column, text in _mat_cells(game):
        if i % 2 != column:
            if i % 2 == 0:  # white has no action in this slot: an empty left column
                cur = f"{(i >> 1) + 1:3d}) " + " " * 28
            else:
                lines.append(cur.rstrip())
                cur = ""
            i += 1
        if i % 2 == 0:
            cur = f"{(i >> 1) + 1:3d}) {text:<27} "
        else:
            lines.append(cur + text)
            cur = ""
        i += 1
    winner = None if game.outcome is None else game.outcome.get("winner")
    words = None if winner is None else _points(game.outcome["points"])
    # "Wins" goes in the winner's column; after white's action, black's win shares its
    # line, as gnubg writes it (a separate line there reads as a resignation in a new game)
    if cur and winner == "black":
        lines.append(cur + words)
    else:
        if cur:
            lines.append(cur.rstrip())
        if words is not None:
            lines.append(("      " if winner == "white" else " " * 34) + words)
    lines.append("")
    return lines


def export_mat(record: Record) -> str:
    """The backgammon and portes games of ``record`` in gnubg's ``.mat`` match format.

    Raises :class:`ExportError` when the record holds no such game.
    """
    games = [g for g in record.games if g.variant in MAT_VARIANTS]
    if not games:
        kinds = sorted({g.variant for g in record.games}) or ["none"]
        raise ExportError(
            f"format mat: gnubg's match format holds backgammon and portes games only; this journal has {kinds}"
        )
    spec = record.spec
    length = spec.length if spec.kind in ("tavli", "match") else 0
    date = time = "?"
    if record.started:
        try:
            when = datetime.fromisoformat(record.started)
            date, time = when.strftime("%Y.%m.%d"), when.strftime("%H.%M")
        except ValueError:
            pass
    cube = spec.cube if spec.kind == "money" else {}
    variation = (
        "Backgammon" if all(g.variant == "backgammon" for g in games) else "Backgammon (portes games of a tavli match)"
    )
    header = [
        '; [Site "tavli-table"]',
        f'; [Player 1 "{_mat_name(record.players.get("white", "white"))}"]',
        f'; [Player 2 "{_mat_name(record.players.get("black", "black"))}"]',
        f'; [EventDate "{date}"]',
        f'; [EventTime "{time}"]',
        f'; [Variation "{variation}"]',
        f'; [Crawford "{"On" if spec.kind == "match" and spec.crawford_rule else "Off"}"]',
        f'; [Jacoby "{"On" if cube.get("jacoby") else "Off"}"]',
        f'; [Beaver "{"On" if cube.get("beavers") else "Off"}"]',
        '; [CubeLimit "64"]',
        "",
        f" {length} point match",
        "",
    ]
    body: list[str] = []
    for index, game in enumerate(games, start=1):
        body.extend(_mat_game(game, index, record))
    return "\n".join(header + body) + "\n"


# =============================================================================== plain text


def _spec_text(spec: MatchSpec) -> str:
    if spec.kind == "tavli":
        cycle = spec.order or (("portes", "plakoto", "fevga") + (("gul-bara",) if spec.with_gul_bara else ()))
        return f"tavli match to {spec.length} ({', '.join(cycle)})"
    if spec.kind == "match":
        return f"{spec.variant} match to {spec.length}" + ("" if spec.crawford_rule else " (no Crawford rule)")
    extras = [k for k in ("beavers", "raccoons", "jacoby") if spec.cube.get(k)]
    if spec.cube.get("automatic_doubles"):
        extras.append(f"{spec.cube['automatic_doubles']} automatic double(s)")
    return f"{spec.variant} money session" + (f" ({', '.join(extras)})" if extras else "")


def _board_text(position: dict[str, Any]) -> str:
    """A one-line board: white's counts by point, pins, bar and off."""
    pts = position["points"]
    cells = [f"{i + 1}:{'W' if n > 0 else 'B'}{abs(n)}" for i, n in enumerate(pts) if n]
    pins = position.get("pinned") or {}
    extra = [f"pinned {p}:{c}" for p, c in sorted(pins.items(), key=lambda kv: int(kv[0]))]
    bar, off = position["bar"], position["off"]
    return " ".join(cells + extra) + f"  bar W{bar['white']} B{bar['black']}  off W{off['white']} B{off['black']}"


def export_text(record: Record) -> str:
    """A readable record of every game, for any variant."""
    names = record.players
    out = [
        f"tavli-table record: {_spec_text(record.spec)}",
        f"white: {names.get('white')}    black: {names.get('black')}",
    ]
    if record.started:
        out.append(f"started {record.started}")
    for game in record.games:
        s = game.score_before
        out.append("")
        variant = game.label if game.label == game.variant else f"{game.variant} ({game.label})"
        out.append(f"game {game.number}: {variant}    score white {s['white']} - black {s['black']}")
        if game.starter:
            out.append(f"  {game.starter} starts")
        turn = 0
        for e in game.events:
            kind = e["type"]
            if kind == "opening_roll":
                w, b = e["white"], e["black"]
                out.append(f"  opening roll: white {w}, black {b}" + ("  (tie: again)" if w == b else ""))
            elif kind == "roll":
                continue
            elif kind in ("play", "pass"):
                turn += 1
                d = "-".join(map(str, e["dice"]))
                text = e["play"] if kind == "play" else "(no legal play: the turn passes)"
                out.append(f"  {turn:>3}. {e['side']:<5} {d}  {text}")
            elif kind == "cube":
                action = e["action"]
                who = e.get("side") or "the tied opening roll"
                out.append(f"       cube: {who} {action}s" + (f" (cube {e['value']})" if e.get("value") else ""))
            elif kind == "resign":
                level = e.get("level")
                what = {1: "a single game", 2: "a gammon", 3: "a backgammon"}.get(level, "")
                out.append(
                    f"       {e['side']} {e['action']}s"
                    + (f" to resign {what}" if e["action"] == "offer" else " the resignation")
                )
            elif kind == "correction":
                wrong = ", ".join(map(str, e["wrong"]))
                expected = e.get("expected")
                out.append(
                    f"       referee: {e['side']}'s board was wrong at {wrong}"
                    + (f"; the nearest legal play is {expected}" if expected else "")
                )
        if game.final is not None:
            out.append(f"  board: {_board_text(game.final)}")
        if game.outcome is not None:
            o = game.outcome
            if o["winner"] is None:
                out.append("  result: a draw")
            else:
                out.append(
                    f"  result: {_side_name(record, o['winner'])} wins {o['points']} ({o['kind']}, cube {o['cube']})"
                )
    out.append("")
    fs = record.final_score
    if record.match_end is not None:
        winner = record.match_end.get("winner")
        out.append(
            f"final: white {fs['white']} - black {fs['black']}"
            + (f"; {_side_name(record, winner)} wins the match" if winner else "")
        )
    else:
        out.append(f"not finished: white {fs['white']} - black {fs['black']}")
    if record.warning:
        out.append(f"note: {record.warning}")
    return "\n".join(out) + "\n"


# =============================================================================== JSON


def export_json(record: Record) -> str:
    """The record as one JSON document (``format`` ``"tavli-table-record"``, version 1), any variant."""
    games = []
    for g in record.games:
        games.append(
            {
                "number": g.number,
                "variant": g.label,
                "options": g.options,
                "start": g.start,
                "starter": g.starter,
                "score_before": g.score_before,
                "events": [{k: v for k, v in e.items() if k != "seq"} for e in g.events],
                "final": g.final,
                "result": g.outcome,
            }
        )
    doc = {
        "format": "tavli-table-record",
        "version": 1,
        "match": record.spec.to_dict(),
        "players": record.players,
        "started": record.started,
        "games": games,
        "score": record.final_score,
        "finished": record.match_end is not None,
        "winner": None if record.match_end is None else record.match_end.get("winner"),
    }
    if record.warning:
        doc["warning"] = record.warning
    return json.dumps(doc, indent=1) + "\n"


def export(path, fmt: str) -> str:
    """The journal at ``path`` in format ``fmt`` (``mat``, ``txt`` or ``json``).

    Raises :class:`referee.journal.JournalError` for a journal that cannot be read or
    replayed, :class:`ExportError` for a format the journal cannot be written in, and
    ``OSError`` when the file cannot be read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"format: {fmt!r} must be one of {list(FORMATS)}")
    contents = read_journal(path)
    try:
        record = build_record(contents.events, contents.warning)
        if fmt == "mat":
            return export_mat(record)
    except JournalError as exc:
        raise exc.at(path) from None
    if fmt == "txt":
        return export_text(record)
    return export_json(record)


def final_position(record: Record) -> Position | None:
    """The last game's position at the end of the record (for checks against other programs)."""
    if not record.games or record.games[-1].final is None:
        return None
    return Position.from_dict(record.games[-1].final)
