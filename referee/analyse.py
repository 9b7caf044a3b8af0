"""Analysed records: gnubg's verdict on a backgammon match, our evaluator's on the other games.

Owns :func:`analyse` (a journal or a ``.mat`` to an :class:`Analysis`), the script gnubg
runs inside itself (:data:`GNUBG_SCRIPT`, ``gnubg -t -q -p``), the translation of what it
writes (:func:`from_gnubg`, pure), the analysis of tavli games gnubg does not play by the
project's own evaluator (:func:`analyse_with_evaluator`, pure) and the three reports
(:func:`report_text`, :func:`report_html`, :func:`report_json`). Running gnubg is the one
side effect, in :func:`run_gnubg`. gnubg's figures, and how they are derived from its
statistics, are in ``docs/analysis.md``. Imports ``board_rules`` and ``referee`` modules;
nothing imports it but the command line.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board_rules import Position, Roll, Side
from board_rules.errors import TavliError
from board_rules.gnubg_id import GAME_PLAYING, MatchState, encode_match_id
from board_rules.ids import position_from_id
from board_rules.untrusted import parse_json, read_text
from engine.evaluate import candidate_plays, score_position
from referee.errors import JournalError
from referee.export import Record, export_mat, find_gnubg, gnubg_settings, load_record, mat_notes
from referee.svgboard import render as board_svg
from referee.textboard import render as text_board

PLIES = (0, 1)
"""The analysis depths offered: quick enough for a hall that analyses every match."""

GNUBG_TIMEOUT_S = 600
MAX_MATCH_BYTES = 8 << 20  # a journal of a long session is some megabytes

HEURISTIC_MARKS = ((20.0, "very bad"), (10.0, "bad"), (5.0, "doubtful"))
"""Our evaluator's marks by loss, in its pip-like units (gnubg's defaults are 0.16, 0.08, 0.04 EMG)."""

HEURISTIC_UNITS = "pip-like units"

WHY_NOT_GNUBG = {
    "portes": "portes has no cube and no backgammons",
    "plakoto": "plakoto pins a blot instead of hitting it",
    "fevga": "in fevga both sides run the same way round and one checker holds a point",
    "gul-bara": "in gul-bara both sides run the same way round and one checker holds a point",
    "long-nardy": "in long nardy both sides run the same way round and one checker holds a point",
    "short-nardy": "short nardy starts otherwise and scores otherwise",
}
"""Why gnubg, which plays backgammon only, cannot judge each other variant."""

_SIDES = {"X": "white", "O": "black"}  # gnubg's player 0 is white (the .mat's left column)


class AnalysisError(TavliError, ValueError):
    """A match that cannot be analysed: missing, not a match, or an option that makes no sense."""


class EngineError(TavliError, OSError):
    """gnubg missing, or gnubg that did not finish its analysis."""


# =============================================================================== what a report holds


@dataclass(frozen=True, slots=True)
class Mistake:
    """One decision marked by the engine: where it was, what was done and what was best.

    ``kind`` is ``"chequer"`` or ``"cube"``; ``loss`` the equity given away (EMG for gnubg,
    pip-like units for our evaluator); ``position_id`` gnubg's Position ID with the side
    that acts on roll, ``match_id`` its Match ID (gnubg games only); ``board`` the board
    drawn as text and ``position`` as Position JSON (``docs/position-json.md``).
    """

    game: int
    turn: int
    side: str
    kind: str
    mark: str
    action: str
    best: str
    loss: float | None
    dice: tuple[int, int] | None
    position_id: str | None
    match_id: str | None
    board: str
    position: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "turn": self.turn,
            "side": self.side,
            "kind": self.kind,
            "mark": self.mark,
            "action": self.action,
            "best": self.best,
            "loss": None if self.loss is None else round(self.loss, 4),
            "dice": None if self.dice is None else list(self.dice),
            "position_id": self.position_id,
            "match_id": self.match_id,
            "board": self.board,
            "position": self.position,
        }


@dataclass(frozen=True, slots=True)
class Errors:
    """A player's chequer or cube decisions: how many counted, how many marked, what they cost."""

    decisions: int
    marked: dict[str, int]
    total: float
    rate: float | None  # per decision, in thousandths of the unit (mEMG for gnubg)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "marked": dict(self.marked),
            "errors": sum(self.marked.values()),
            "error_total": round(self.total, 4),
            "error_rate": None if self.rate is None else round(self.rate, 2),
        }


@dataclass(frozen=True, slots=True)
class PlayerReport:
    """One player's figures. ``pr`` (performance rating) and ``error_rate`` (mEMG per decision)
    are gnubg's scale; our evaluator gives ``pr`` None and its own ``error_rate``."""

    side: str
    name: str
    pr: float | None
    error_rate: float | None
    chequer: Errors
    cube: Errors | None
    luck: float | None
    luck_rate: float | None
    blunders: tuple[Mistake, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pr": None if self.pr is None else round(self.pr, 2),
            "error_rate": None if self.error_rate is None else round(self.error_rate, 2),
            "chequer": self.chequer.to_dict(),
            "cube": None if self.cube is None else self.cube.to_dict(),
            "luck": None if self.luck is None else round(self.luck, 4),
            "luck_rate": None if self.luck_rate is None else round(self.luck_rate, 2),
            "blunders": [b.to_dict() for b in self.blunders],
        }


@dataclass(frozen=True, slots=True)
class Analysis:
    """The analysis of one match: which engine, how deep, each player's figures and the notes."""

    match: str
    engine: str
    plies: int
    units: str
    length: int
    games: int
    players: dict[str, PlayerReport]
    notes: tuple[str, ...] = ()
    sgf: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "tavli-table-analysis",
            "version": 1,
            "match": self.match,
            "engine": self.engine,
            "plies": self.plies,
            "units": self.units,
            "length": self.length,
            "games": self.games,
            "players": {side: p.to_dict() for side, p in self.players.items()},
            "notes": list(self.notes),
            "sgf": self.sgf,
        }


# =============================================================================== gnubg, inside itself

GNUBG_SCRIPT = r'''
import gnubg, json
P = json.loads(PARAMS)


def done(doc):
    with open(P["out"], "w") as fh:
        json.dump(doc, fh)


def trim(action):
    """The action with the engine's move list cut to the best play and the one played."""
    a = dict(action)
    an = a.get("analysis")
    if isinstance(an, dict) and an.get("moves"):
        an = dict(an)
        moves = an.pop("moves")
        i = an.get("imove", 0)
        an["best"] = moves[0]
        an["played"] = moves[i] if 0 <= i < len(moves) else None
        an["choices"] = len(moves)
        a["analysis"] = an
    return a


for command in P["settings"]:
    gnubg.command(command)
gnubg.command('import mat "%s"' % P["mat"])
m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
if not m or not m.get("games"):
    done({"error": "not a match gnubg can import"})
else:
    for what in ("chequerplay", "cubedecision"):
        gnubg.command("set analysis %s evaluation plies %d" % (what, P["plies"]))
    gnubg.command("analyse match")
    if P.get("sgf"):
        gnubg.command('save match "%s"' % P["sgf"])
    m = gnubg.match(analysis=1, boards=1, statistics=1, verbose=0)
    games = [{"info": g["info"], "stats": g.get("stats"), "game": [trim(a) for a in g["game"]]} for g in m["games"]]
    done({"match-info": m["match-info"], "stats": m["stats"], "games": games, "version": P["version"]})
'''
"""The Python gnubg runs (``gnubg -t -q -p``): import, analyse, save the ``.sgf``, write JSON."""


def run_gnubg(
    program: str,
    mat_text: str,
    settings: list[str],
    plies: int,
    sgf: Path | None = None,
    timeout: float = GNUBG_TIMEOUT_S,
) -> dict[str, Any]:
    """gnubg's analysis of the ``.mat`` text (its match, statistics and marked decisions, as JSON).

    Runs in a folder of its own with ``HOME`` there, so that no user setting changes the
    figures; copies the ``.sgf`` gnubg saves to ``sgf``. Raises :class:`EngineError` when
    gnubg cannot be run or writes nothing, :class:`AnalysisError` when it imports no match.
    """
    with tempfile.TemporaryDirectory(prefix="tavli-analyse-") as tmp:
        work = Path(tmp)
        (work / "match.mat").write_text(mat_text, encoding="utf-8")
        params = {
            "settings": settings,
            "mat": str(work / "match.mat"),
            "plies": plies,
            "sgf": str(work / "analysis.sgf") if sgf is not None else None,
            "out": str(work / "analysis.json"),
            "version": _gnubg_version(program),
        }
        script = work / "analyse.py"
        script.write_text(f"PARAMS = {json.dumps(json.dumps(params))}\n" + GNUBG_SCRIPT, encoding="utf-8")
        try:
            proc = subprocess.run(
                [program, "-t", "-q", "-p", str(script)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                cwd=work,
                env={**os.environ, "HOME": str(work)},
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise EngineError(f"gnubg: cannot run {program!r} ({exc})") from None
        out = work / "analysis.json"
        if not out.exists():
            tail = " ".join((proc.stdout + proc.stderr).split())[-200:]
            raise EngineError(f"gnubg: {program!r} wrote no analysis (exit {proc.returncode}; has it Python?): {tail}")
        doc = parse_json(out.read_text(encoding="utf-8"), "gnubg's analysis", EngineError)
        if "error" in doc:
            raise AnalysisError(f"MATCH: {doc['error']}")
        if sgf is not None:
            try:
                shutil.copyfile(work / "analysis.sgf", sgf)
            except OSError as exc:
                raise AnalysisError(f"--sgf: {str(sgf)!r}: cannot write it ({exc.strerror or exc})") from None
        return doc


def _gnubg_version(program: str) -> str:
    try:
        out = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "gnubg"
    first = (out.stdout or "").strip().splitlines()
    return first[0] if first else "gnubg"


# =============================================================================== gnubg's figures


def _play_text(move: Any) -> str:
    """gnubg's checker moves ``[[13, 7], [8, 7]]`` (25 the bar, 0 off) in gnubg's notation."""
    if not move:
        return "no legal play"
    steps = [f"{'bar' if a == 25 else a}/{'off' if b <= 0 else b}" for a, b in move]
    seen: dict[str, int] = {}
    for step in steps:
        seen[step] = seen.get(step, 0) + 1
    return " ".join(step if n == 1 else f"{step}({n})" for step, n in seen.items())


def _cube_loss(an: dict[str, Any], money: bool, action: str) -> float | None:
    """The equity a cube action gave away (EMG), for a money game; None in a match, where gnubg's
    Python gives the cubeful equities as match winning chances without the pass's."""
    if not money or "nd-cubeful-eq" not in an or "dt-cubeful-eq" not in an:
        return None
    nd, dt = float(an["nd-cubeful-eq"]), float(an["dt-cubeful-eq"])
    double = min(dt, 1.0)  # the opponent answers at its best; a pass gives the doubler 1
    best = max(nd, double)
    return {"no double": best - nd, "double": best - double, "take": dt - min(dt, 1.0), "drop": 1.0 - double}.get(
        action
    )


# what gnubg's very bad mark on a cube action says was right
_CUBE_RIGHT = {"no double": "double", "double": "no double", "take": "pass", "drop": "take"}


@dataclass
class _GameState:
    """What a Match ID needs that gnubg's match dictionary does not hold per action."""

    length: int
    score: tuple[int, int]
    crawford: bool
    jacoby: bool
    cube: int = 1
    owner: Side | None = None

    def match_id(self, mover: Side, turn: Side, dice: tuple[int, int], offered: bool = False) -> str | None:
        try:
            state = MatchState(
                cube_value=self.cube,
                cube_owner=self.owner,
                dice_owner=mover,
                crawford=self.crawford,
                game_state=GAME_PLAYING,
                turn=turn,
                double_offered=offered,
                resign=0,
                dice=dice,
                match_length=self.length,
                score=self.score,
                jacoby=self.jacoby,
            )
            return encode_match_id(state)
        except ValueError:
            return None


def _position(pid: str | None, side: Side) -> Position | None:
    if not pid:
        return None
    try:
        return position_from_id(pid, "backgammon", side)
    except ValueError:
        return None


def _crawford_games(infos: list[dict[str, Any]], length: int, rule: bool) -> list[bool]:
    """Which games are the Crawford game: the first where one side stands one point from the match."""
    out, seen = [], False
    for info in infos:
        x, o = info.get("score-X", 0), info.get("score-O", 0)
        at = length > 0 and rule and (x == length - 1) != (o == length - 1)
        out.append(at and not seen)
        seen = seen or at
    return out


def _blunder(at: tuple[int, int], side: Side, kind: str, what: tuple, ids: tuple, on_roll: Side, title: str) -> Mistake:
    """A blunder gnubg marked: ``at`` (game, turn), ``what`` (action, best, loss, dice), ``ids`` (Position, Match ID)."""
    action, best, loss, dice = what
    pid, mid = ids
    position = _position(pid, on_roll)
    return Mistake(
        game=at[0],
        turn=at[1],
        side=side.value,
        kind=kind,
        mark="very bad",
        action=action,
        best=best,
        loss=loss,
        dice=dice,
        position_id=pid,
        match_id=mid,
        board="" if position is None else text_board(position, title=f"game {at[0]}, turn {at[1]}: {title}").plain,
        position=None if position is None else position.to_dict(),
    )


def _own_cube_blunder(
    st: _GameState, an: dict[str, Any], action: str, at: tuple[int, int], side: Side, pid: str | None, title: str
) -> Mistake:
    """A blunder in ``side``'s own cube decision before its roll (``double`` or ``no double``)."""
    loss = _cube_loss(an, st.length == 0, action)
    mid = st.match_id(side, side, (0, 0))
    return _blunder(at, side, "cube", (action, _CUBE_RIGHT[action], loss, None), (pid, mid), side, title)


def _mistakes(doc: dict[str, Any], jacoby: bool) -> dict[str, list[Mistake]]:
    """Every decision gnubg marked ``very bad`` (a blunder), per side, in match order."""
    info = doc["match-info"]
    length = int(info.get("match-length") or 0)
    infos = [g["info"] for g in doc["games"]]
    crawford = _crawford_games(infos, length, "Crawford" in (info.get("rules") or []))
    found: dict[str, list[Mistake]] = {"white": [], "black": []}
    for number, (g, craw) in enumerate(zip(doc["games"], crawford), start=1):
        gi = g["info"]
        st = _GameState(length, (gi.get("score-X", 0), gi.get("score-O", 0)), craw, jacoby)
        turn = 0
        last_double_pid, last_double = None, {}

        for a in g["game"]:
            kind = a.get("action")
            player = a.get("player")
            if player not in _SIDES:
                continue
            side = Side(_SIDES[player])
            an = a.get("analysis") or {}
            pid = a.get("board")
            if kind == "move":
                turn += 1
                dice = tuple(sorted(a.get("dice") or (0, 0), reverse=True))
                if an.get("cube-skill") == "very bad":  # a double missed before this roll
                    title = f"{side.value} to decide the cube"
                    found[side.value].append(_own_cube_blunder(st, an, "no double", (number, turn), side, pid, title))
                if an.get("skill") == "very bad":
                    best_play, played = an.get("best") or {}, an.get("played") or {}
                    loss = None
                    if "score" in best_play and "score" in played:
                        loss = float(best_play["score"]) - float(played["score"])
                    action, best = _play_text(a.get("move")), _play_text(best_play.get("move"))
                    mid = st.match_id(side, side, dice)
                    title = f"{side.value} to play {dice[0]}{dice[1]}"
                    found[side.value].append(
                        _blunder((number, turn), side, "chequer", (action, best, loss, dice), (pid, mid), side, title)
                    )
            elif kind == "double":
                last_double_pid, last_double = pid, an
                if an.get("skill") == "very bad":
                    title = f"{side.value} doubles"
                    found[side.value].append(_own_cube_blunder(st, an, "double", (number, turn), side, pid, title))
            elif kind in ("take", "drop"):
                if an.get("skill") == "very bad":
                    doubler = side.other
                    mid = st.match_id(doubler, side, (0, 0), offered=True)
                    what = (kind, _CUBE_RIGHT[kind], _cube_loss(last_double, length == 0, kind), None)
                    title = f"{side.value} answers {doubler.value}'s double"
                    found[side.value].append(
                        _blunder((number, turn), side, "cube", what, (last_double_pid, mid), doubler, title)
                    )
                if kind == "take":
                    st.cube *= 2
                    st.owner = side
    return found


def _marked(moves: dict[str, Any]) -> dict[str, int]:
    m = moves.get("marked") or {}
    return {k: int(m.get(k, 0)) for k in ("doubtful", "bad", "very bad")}


_CUBE_ERRORS = (
    "missed-double-below-cp",
    "missed-double-above-cp",
    "wrong-double-below-dp",
    "wrong-double-above-tg",
    "wrong-take",
    "wrong-drop",
)


def from_gnubg(doc: dict[str, Any], match: str, plies: int, jacoby: bool = True) -> Analysis:
    """The :class:`Analysis` of what :data:`GNUBG_SCRIPT` wrote (pure: no gnubg needed).

    Per player, as gnubg's ``show statistics match`` derives them: the error rate is
    1000 × (chequer + cube error, EMG) / (unforced plays + close cube decisions), the PR
    half of it (500 × EMG per decision); luck is the sum of gnubg's luck, in EMG.
    """
    info = doc["match-info"]
    stats = doc["stats"]
    blunders = _mistakes(doc, jacoby)
    players = {}
    for player, side in _SIDES.items():
        s = stats[player]
        moves, cube, dice = s["moves"], s["cube"], s["dice"]
        # gnubg's Python gives the chequer error as a total but the cube's per close decision:
        # the cube's total is the sum of its kinds of error, as show statistics adds them
        chequer_err = float(moves["error-skill"])
        cube_err = sum(float(cube.get(f"err-{k}-skill", 0.0)) for k in _CUBE_ERRORS)
        unforced, close = int(moves["unforced-moves"]), int(cube["close-cube"])
        decisions = unforced + close
        rate = 1000.0 * (chequer_err + cube_err) / decisions if decisions else None
        total_moves = int(moves["total-moves"])
        players[side] = PlayerReport(
            side=side,
            name=str(info.get(player, {}).get("name", side)),
            pr=None if rate is None else rate / 2,
            error_rate=rate,
            chequer=Errors(
                unforced, _marked(moves), chequer_err, 1000.0 * chequer_err / unforced if unforced else None
            ),
            cube=Errors(
                close,
                {k.replace("-", " "): int(cube.get(k, 0)) for k in _CUBE_ERRORS},
                cube_err,
                1000.0 * cube_err / close if close else None,
            ),
            luck=float(dice["luck"]),
            luck_rate=1000.0 * float(dice["luck"]) / total_moves if total_moves else None,
            blunders=tuple(blunders[side]),
        )
    return Analysis(
        match=match,
        engine=str(doc.get("version") or "gnubg"),
        plies=plies,
        units="EMG",
        length=int(info.get("match-length") or 0),
        games=len(doc["games"]),
        players=players,
    )


# =============================================================================== our evaluator


def _heuristic_mark(loss: float) -> str | None:
    for threshold, mark in HEURISTIC_MARKS:
        if loss >= threshold:
            return mark
    return None


def analyse_with_evaluator(record: Record, match: str) -> Analysis:
    """Every play of ``record`` judged by the project's heuristic (:func:`engine.evaluate.score_position`).

    0 ply: each legal play's resulting position is scored for the mover and the best
    compared with the one played; the loss is in the heuristic's pip-like units. There is
    no cube in these games and no luck, PR or gnubg ID is given. Pure: no gnubg needed.
    """
    tally = {s: {"plays": 0, "total": 0.0, "marked": {"doubtful": 0, "bad": 0, "very bad": 0}} for s in _SIDES.values()}
    blunders: dict[str, list[Mistake]] = {s: [] for s in _SIDES.values()}
    for game in record.games:
        turn = 0
        for e in game.events:
            if e["type"] not in ("play", "pass"):
                continue
            turn += 1
            if e["type"] == "pass":
                continue
            before = Position.from_dict(e["before"])
            after = Position.from_dict(e["after"])
            roll = Roll(*e["dice"])
            me = before.turn
            options, _ = candidate_plays(before, roll)
            if len({a for _, a in options}) < 2:
                continue  # a forced play is no decision
            scored = [(score_position(a, me), str(p), a) for p, a in options]
            best_score, best_play, _ = max(scored, key=lambda t: (t[0], t[1]))
            loss = max(0.0, best_score - score_position(after, me))
            t = tally[me.value]
            t["plays"] += 1
            t["total"] += loss
            mark = _heuristic_mark(loss)
            if mark:
                t["marked"][mark] += 1
            if mark == "very bad":
                d = f"{roll.d1}{roll.d2}"
                title = f"game {game.number} ({game.label}), turn {turn}: {me.value} to play {d}"
                blunders[me.value].append(
                    Mistake(
                        game=game.number,
                        turn=turn,
                        side=me.value,
                        kind="chequer",
                        mark=mark,
                        action=e["play"],
                        best=best_play,
                        loss=loss,
                        dice=(max(roll.d1, roll.d2), min(roll.d1, roll.d2)),
                        position_id=None,
                        match_id=None,
                        board=text_board(before, title=title).plain,
                        position=before.to_dict(),
                    )
                )
    players = {}
    for side, t in tally.items():
        rate = t["total"] / t["plays"] if t["plays"] else None
        players[side] = PlayerReport(
            side=side,
            name=record.players.get(side, side),
            pr=None,
            error_rate=rate,
            chequer=Errors(t["plays"], t["marked"], t["total"], rate),
            cube=None,
            luck=None,
            luck_rate=None,
            blunders=tuple(blunders[side]),
        )
    names = sorted({g.variant for g in record.games})
    why = "; ".join(WHY_NOT_GNUBG.get(n, f"gnubg does not play {n}") for n in names)
    notes = (
        f"Not analysed by gnubg: {why}. These games are judged by tavli-table's own evaluator (a heuristic, "
        "0 ply: every legal play's position scored for the mover); its losses are in its pip-like units, not "
        "EMG, so there is no PR, and no luck or cube analysis.",
    )
    spec = record.spec
    return Analysis(
        match=match,
        engine="tavli-table evaluator (heuristic)",
        plies=0,
        units=HEURISTIC_UNITS,
        length=spec.length if spec.kind in ("tavli", "match") else 0,
        games=len(record.games),
        players=players,
        notes=notes,
    )


# =============================================================================== the whole analysis


_MAT_LENGTH = re.compile(r"^\s*(\d+)\s+point\s+match\s*$", re.M | re.I)


def _mat_settings(text: str) -> tuple[list[str], bool, list[str]]:
    """gnubg's settings for a ``.mat`` we did not write from a journal: its header's Jacoby and cube."""
    length = _MAT_LENGTH.search(text)
    if length is None:
        raise AnalysisError("MATCH: no ' N point match' line: not a .mat match file")
    jacoby = re.search(r'^;\s*\[Jacoby\s+"Off"\]', text, re.M | re.I) is None
    portes = re.search(r'^;\s*\[Variation\s+"[^"\n]*portes', text, re.M | re.I) is not None
    settings = []
    if int(length.group(1)) == 0:
        settings.append(f"set jacoby {'on' if jacoby else 'off'}")
    settings.append(f"set cube use {'off' if portes else 'on'}")
    notes = ["the .mat holds portes games: gnubg analyses them as backgammon (it counts backgammons)"] if portes else []
    return settings, jacoby, notes


def _is_journal(text: str) -> bool:
    return text.lstrip().startswith("{")


def analyse(
    path: str | os.PathLike,
    plies: int = 0,
    sgf: str | os.PathLike | None = None,
    gnubg: str | None = None,
) -> Analysis:
    """The analysis of the match at ``path``: a journal (exported to ``.mat`` first) or a ``.mat``.

    A record of backgammon games goes to gnubg (``gnubg`` the program, found as
    :func:`referee.export.find_gnubg` finds it), which also saves its analysis as ``sgf``; any other
    game is judged by :func:`analyse_with_evaluator`. Raises :class:`AnalysisError`
    for a missing file or one that is no match, :class:`referee.errors.JournalError`
    for a journal that cannot be replayed and :class:`EngineError` when gnubg is missing
    or fails.
    """
    if plies not in PLIES:
        raise AnalysisError(f"--plies: {plies!r} must be one of {list(PLIES)}")
    shown = str(path)
    text = read_text(path, "MATCH", AnalysisError, limit=MAX_MATCH_BYTES)
    notes: list[str] = []
    if _is_journal(text):
        try:
            record = load_record(path)
        except OSError as exc:
            raise AnalysisError(f"MATCH: {shown!r}: cannot read it ({exc})") from None
        if not record.games:
            raise AnalysisError(f"MATCH: {shown!r}: the journal holds no game")
        if any(g.variant != "backgammon" for g in record.games):
            return analyse_with_evaluator(record, shown)
        try:
            mat = export_mat(record)
            settings = gnubg_settings(record)
            notes = [f"the .mat: {note}" for note in mat_notes(record)]
        except JournalError as exc:
            raise exc.at(path) from None
        cube = record.spec.cube if record.spec.kind == "money" else {}
        jacoby = bool(cube.get("jacoby"))
    else:
        mat = text
        settings, jacoby, notes = _mat_settings(text)
    program = find_gnubg(gnubg)
    if program is None:
        raise EngineError(
            f"gnubg: {gnubg or 'gnubg'!r} not found; install GNU Backgammon (Debian: apt-get install gnubg) "
            "or name it with --gnubg"
        )
    doc = run_gnubg(program, mat, settings, plies, Path(sgf) if sgf is not None else None)
    analysis = from_gnubg(doc, shown, plies, jacoby)
    return Analysis(
        analysis.match,
        analysis.engine,
        analysis.plies,
        analysis.units,
        analysis.length,
        analysis.games,
        analysis.players,
        tuple(notes),
        None if sgf is None else str(sgf),
    )


# =============================================================================== reports


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _summary_rows(a: Analysis) -> list[tuple[str, str, str]]:
    w, b = a.players["white"], a.players["black"]
    gnubg = a.units == "EMG"
    rows = [
        ("player", f"{w.name} (white)", f"{b.name} (black)"),
        ("PR", _fmt(w.pr), _fmt(b.pr)),
        (
            "error rate (mEMG per decision)" if gnubg else "error rate (loss per play)",
            _fmt(w.error_rate),
            _fmt(b.error_rate),
        ),
        ("chequer decisions", str(w.chequer.decisions), str(b.chequer.decisions)),
        ("chequer errors (doubtful/bad/very bad)", _marks(w.chequer), _marks(b.chequer)),
        (f"chequer error total ({a.units})", _fmt(w.chequer.total, 3), _fmt(b.chequer.total, 3)),
    ]
    if w.cube is not None and b.cube is not None:
        rows += [
            ("cube decisions (close or actual)", str(w.cube.decisions), str(b.cube.decisions)),
            ("cube errors", str(sum(w.cube.marked.values())), str(sum(b.cube.marked.values()))),
            (f"cube error total ({a.units})", _fmt(w.cube.total, 3), _fmt(b.cube.total, 3)),
        ]
    rows.append(("luck (EMG; mEMG per roll)" if gnubg else "luck", _luck(w), _luck(b)))
    rows.append(("blunders", str(len(w.blunders)), str(len(b.blunders))))
    return rows


def _marks(e: Errors) -> str:
    m = e.marked
    return f"{m.get('doubtful', 0)}/{m.get('bad', 0)}/{m.get('very bad', 0)}"


def _luck(p: PlayerReport) -> str:
    if p.luck is None:
        return "n/a"
    return f"{p.luck:+.3f}; " + ("n/a" if p.luck_rate is None else f"{p.luck_rate:+.1f}")


def _engine_line(a: Analysis) -> str:
    return f"analysed by {a.engine} at {a.plies} ply"


def _blunder_head(m: Mistake) -> str:
    loss = "" if m.loss is None else f", loses {m.loss:.3f}"
    dice = "" if m.dice is None else f"{m.dice[0]}{m.dice[1]}: "
    return f"game {m.game}, turn {m.turn}, {m.side} ({m.kind}): {dice}{m.action}; best {m.best}{loss}"


def report_text(a: Analysis) -> str:
    """The report for the terminal: the figures side by side, then each blunder with its board."""
    out = [
        f"analysis of {a.match}: {a.games} game(s)" + (f", match to {a.length}" if a.length else ""),
        _engine_line(a),
    ]
    out += [f"note: {n}" for n in a.notes]
    rows = _summary_rows(a)
    width = max(len(r[0]) for r in rows)
    out.append("")
    out += [f"{r[0]:<{width}}  {r[1]:>22}  {r[2]:>22}" for r in rows]
    for side, p in a.players.items():
        out.append("")
        out.append(f"blunders of {p.name} ({side}): {len(p.blunders) or 'none'}")
        for m in p.blunders:
            out.append("")
            out.append("  " + _blunder_head(m))
            if m.position_id:
                out.append(f"  Position ID: {m.position_id}   Match ID: {m.match_id or 'n/a'}")
            out.append(m.board.rstrip("\n"))
    if a.sgf:
        out += ["", f"gnubg's analysis: {a.sgf}"]
    return "\n".join(out) + "\n"


def report_json(a: Analysis) -> str:
    """The report as one JSON document (``format`` ``"tavli-table-analysis"``, version 1)."""
    return json.dumps(a.to_dict(), indent=1) + "\n"


def report_html(a: Analysis) -> str:
    """The report as one self-contained HTML page: the figures, then each blunder with its board."""
    e = html.escape
    rows = _summary_rows(a)
    head = "".join(f"<th>{e(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Analysis: {e(a.players['white'].name)} v {e(a.players['black'].name)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .6em;text-align:right}"
        "td:first-child{text-align:left}pre{background:#f4f1ea;padding:.5em;display:inline-block}"
        ".note{background:#fff3c4;padding:.5em}</style></head><body>",
        f"<h1>{e(a.players['white'].name)} (white) v {e(a.players['black'].name)} (black)</h1>",
        f"<p>{e(a.match)}: {a.games} game(s)" + (f", match to {a.length}" if a.length else "") + "</p>",
        f"<p><strong>{e(_engine_line(a))}</strong></p>",
        *(f'<p class="note">{e(n)}</p>' for n in a.notes),
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
    ]
    for side, p in a.players.items():
        parts.append(f"<h2>Blunders of {e(p.name)} ({side}): {len(p.blunders) or 'none'}</h2>")
        for m in p.blunders:
            ids = ""
            if m.position_id:
                ids = f"<br>Position ID <code>{e(m.position_id)}</code> Match ID <code>{e(m.match_id or 'n/a')}</code>"
            board = f"<pre>{e(m.board)}</pre>"
            if m.position is not None:
                board = f"<figure>{board_svg(Position.from_dict(m.position), title=m.board.splitlines()[0])}</figure>"
            parts.append(f"<p>{e(_blunder_head(m))}{ids}</p>{board}")
    if a.sgf:
        parts.append(f"<p>gnubg's analysis, to open in gnubg: <code>{e(a.sgf)}</code></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
