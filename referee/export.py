"""Export a match journal: gnubg's ``.mat`` match file, plain text and JSON.

(Some 520 lines in one module: the three formats read one replayed record.)

Owns :func:`export_mat` (backgammon and portes games), :func:`gnubg_settings` and
:func:`mat_notes` (what gnubg must be told before it imports the file, and what the
format cannot say), :func:`find_gnubg` (which gnubg to run), :func:`export_text`,
:func:`export_json` and :func:`export`. Each replays the journal through the rules
first, so an illegal play is never exported.
The ``.mat`` conventions and gnubg's scoring are in ``docs/referee.md``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from board_rules import Position, Side, find_variant
from board_rules.match import MoneySession
from referee.errors import JournalError, JournalReplayError
from referee.events import Event, Stamped
from referee.journal import read_journal
from referee.record import MatchRecord
from referee.spec import MatchSpec

FORMATS = ("mat", "txt", "json")
MAT_VARIANTS = ("backgammon", "portes")
GNUBG_FALLBACK = "/usr/games/gnubg"
"""Where Debian installs gnubg, off the usual PATH."""


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
    score_after: dict[str, int] | None = None
    cube_start: int = 1

    @property
    def scored(self) -> int | None:
        """The points the winner scored (the Jacoby rule applied); None for a draw or an unfinished game."""
        if self.outcome is None or self.outcome.get("winner") is None or self.score_after is None:
            return None
        side = self.outcome["winner"]
        return self.score_after[side] - self.score_before[side]


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
                game.score_after = _score(r.scoreboard)
            elif kind == "cube" and event["action"] == "automatic":
                game.cube_start = event["value"]
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


def _gnubg_base(game: Game) -> int | None:
    """What gnubg, reading the game as backgammon, counts a win on the board (1, 2 or 3, before
    the cube); None for a game that did not end on the board."""
    o = game.outcome
    if o is None or o.get("winner") is None or o["kind"] in ("pass", "resign", "time") or game.final is None:
        return None
    return find_variant("backgammon").score_win(Position.from_dict(game.final), Side(o["winner"]))[0]


def _last_play_left_out(game: Game) -> bool:
    """True for a game gnubg would count otherwise than its variant did (a portes game where
    the loser still has a checker in the winner's home board: gnubg counts a backgammon).

    gnubg scores a game that ends on the board by its own count, whatever the ``.mat``
    says; it scores a resignation as the ``Wins`` line says. Such a game is written up to
    its last play and ends with ``Wins N points``: the loser resigns what it lost.
    """
    base = _gnubg_base(game)
    return base is not None and base != game.outcome["base"]


def _mat_cells(game: Game) -> list[tuple[int, str]]:
    """The game's actions as (column, text): column 0 is white (gnubg's player 0), 1 black.

    A beaver or a raccoon is written ``Doubles => N`` (the cube doubled again while a double
    awaits its answer, which gnubg reads as a beaver), each answered by its own ``Takes`` or
    ``Drops``: gnubg reads ``Beavers`` as a beaver to be taken at the next roll, and after
    one that was dropped it drops every later roll of the file.
    """
    cells: list[tuple[int, str]] = []
    col = {"white": 0, "black": 1}
    events = game.events
    if _last_play_left_out(game):
        last = max(i for i, e in enumerate(events) if e["type"] == "play")
        events = events[:last] + events[last + 1 :]
    for e in events:
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
            elif action in ("beaver", "raccoon"):  # its value: the cube before the take
                cells.append((col[side], f" Doubles => {e['value'] * 2}"))
            elif action == "take":
                cells.append((col[side], " Takes"))
            elif action == "pass":
                cells.append((col[side], " Drops"))
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
    # the points scored (Jacoby applied): gnubg reads a resignation's level from them
    words = None if winner is None else _points(game.scored)
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


def _mat_games(record: Record) -> list[Game]:
    games = [g for g in record.games if g.variant in MAT_VARIANTS]
    if not games:
        kinds = sorted({g.variant for g in record.games}) or ["none"]
        raise ExportError(
            f"format mat: gnubg's match format holds backgammon and portes games only; this journal has {kinds}"
        )
    return games


def gnubg_settings(record: Record) -> list[str]:
    """The gnubg commands to give before ``import mat`` so that gnubg scores the record as we did.

    gnubg takes the Jacoby rule of an imported money session from its own setting
    (``set jacoby``, on unless changed), not from the file; ``set cube use`` keeps its
    analysis from doubling in games played without a cube. Raises :class:`ExportError`
    when the record has no game ``.mat`` can hold.
    """
    _mat_games(record)
    spec = record.spec
    board = spec.new_scoreboard()
    cube = spec.kind != "tavli" and find_variant(spec.variant).has_cube
    out = []
    if isinstance(board, MoneySession):
        out.append(f"set jacoby {'on' if board.options.jacoby else 'off'}")
    out.append(f"set cube use {'on' if cube else 'off'}")
    return out


def find_gnubg(program: str | None = None) -> str | None:
    """The gnubg program to run: ``program`` when given, else gnubg on PATH or Debian's /usr/games/gnubg;
    None when there is none."""
    if program:
        return shutil.which(program) or (program if os.access(program, os.X_OK) else None)
    found = shutil.which("gnubg")
    if found:
        return found
    return GNUBG_FALLBACK if os.access(GNUBG_FALLBACK, os.X_OK) else None


def gnubg_commands(record: Record, mat_path) -> list[str]:
    """:func:`gnubg_settings`, then the ``import mat`` of the file at ``mat_path``."""
    return [*gnubg_settings(record), f'import mat "{mat_path}"']


def mat_notes(record: Record) -> list[str]:
    """What the ``.mat`` of ``record`` cannot say as it happened, one line each (empty when nothing).

    A game begun with the cube turned by automatic doubles: the format starts every game at 1,
    so gnubg scores its cube actions and its end from there. A game whose last play is left
    out (see :func:`export_mat`). Raises :class:`ExportError` as :func:`export_mat`.
    """
    notes = []
    for index, game in enumerate(_mat_games(record), start=1):
        if game.cube_start > 1:
            notes.append(
                f"game {index}: the cube began at {game.cube_start} (automatic doubles); the .mat format "
                "starts every game at 1, so gnubg scores this game from a cube at 1"
            )
        if _last_play_left_out(game):
            o = game.outcome
            last = [e for e in game.events if e["type"] == "play"][-1]
            notes.append(
                f"game {index}: {o['winner']}'s last play ({last['play']}) is left out and {o['winner']} "
                f"wins {game.scored} by resignation: gnubg would count the {game.variant} {o['kind']} "
                f"as a backgammon ({_gnubg_base(game) * o['cube']} points)"
            )
    return notes


def export_mat(record: Record) -> str:
    """The backgammon and portes games of ``record`` in gnubg's ``.mat`` match format.

    Each game's ``Wins`` line gives the points scored (the Jacoby rule applied), which is
    what gnubg reads a resignation's level from. A game gnubg would count otherwise than
    its variant did (a portes game where gnubg sees a backgammon) is written without its
    last play and ends as a resignation of what was lost; :func:`mat_notes` says which,
    also as comment lines in the header. Raises :class:`ExportError` when the record holds
    no backgammon or portes game.
    """
    games = _mat_games(record)
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
        *(f"; {note}" for note in mat_notes(record)),
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


def load_record(path) -> Record:
    """The journal at ``path`` read and replayed for export.

    Raises :class:`referee.journal.JournalError` for a journal that cannot be read or
    replayed, and ``OSError`` when the file cannot be read.
    """
    contents = read_journal(path)
    try:
        return build_record(contents.events, contents.warning)
    except JournalError as exc:
        raise exc.at(path) from None


def export(path, fmt: str) -> str:
    """The journal at ``path`` in format ``fmt`` (``mat``, ``txt`` or ``json``).

    Raises :class:`referee.journal.JournalError` for a journal that cannot be read or
    replayed, :class:`ExportError` for a format the journal cannot be written in, and
    ``OSError`` when the file cannot be read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"format: {fmt!r} must be one of {list(FORMATS)}")
    record = load_record(path)
    if fmt == "mat":
        try:
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
