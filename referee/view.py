"""The table as a page shows it: one JSON-ready view, kept up to date from the referee's event stream.

Owns :class:`TableView`: subscribe it to a :class:`~referee.stream.EventStream` and it keeps
what a person watching the table wants to see now (the board as last seen, pip counts,
the dice, the cube and its owner, the LEDs lit, the referee's last calls, the phase,
the score and the plays so far), with the sequence number of the last event it took.
Pure: no I/O, no threads (the page server reads it under its lock).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from board_rules import Position, Side
from referee import events as E

CALLS_KEPT = 30


class TableView:
    """What the table shows now, built from events in order (see the module docstring)."""

    def __init__(self, players: dict[str, str] | None = None) -> None:
        self.lock = threading.Lock()
        self.seq = 0
        self.players = dict(players or {"white": "white", "black": "black"})
        self.game = 0
        self.variant = ""
        self.position: Position | None = None
        self.dice: list[int] = []
        self.cube: dict[str, Any] = {"value": 1, "owner": None, "used": False}
        self.leds: dict[str, str] = {}
        self.calls: deque[dict[str, Any]] = deque(maxlen=CALLS_KEPT)
        self.phase = ""
        self.on_roll: str | None = None
        self.score = {"white": 0, "black": 0}
        self.plays: list[dict[str, Any]] = []
        self.over = False

    def prime(self, flow, seq: int = 0) -> None:
        """Start from where a game flow stands now (a page opened mid-match, or on a resumed one)."""
        record = flow.record
        with self.lock:
            self.seq = seq
            self.players = dict(record.players)
            self.game = record.game
            self.variant = record.variant.label if record.variant is not None else ""
            self.position = flow.seen or record.position
            if record.cube is not None:
                owner = record.cube.owner
                has_cube = record.variant is not None and record.variant.has_cube
                self.cube = {
                    "value": record.cube.value,
                    "owner": None if owner is None else owner.value,
                    "used": has_cube,
                }
            self.dice = [record.roll.d1, record.roll.d2] if record.roll is not None and not record.roll_played else []
            self.leds = {_place_key(p): c for p, c in flow.leds.items()}
            self.phase = flow.phase.value
            self.on_roll = None if flow.on_roll is None else flow.on_roll.value
            self.score = flow.score()
            self.over = record.over

    def __call__(self, item: E.Stamped) -> None:
        with self.lock:
            self.take(item)

    def take(self, item: E.Stamped) -> None:
        """Move the view on by one stamped event."""
        e = item.event
        self.seq = item.seq
        if isinstance(e, E.MatchStarted):
            self.players = dict(e.players)
        elif isinstance(e, E.GameStarted):
            self.game, self.variant = e.game, e.position.variant.label
            self.position, self.dice, self.plays = e.position, [], []
            self.cube = {"value": 1, "owner": None, "used": e.position.variant.has_cube}
        elif isinstance(e, E.OpeningRolled):
            self.dice = [e.white, e.black]
        elif isinstance(e, E.Rolled):
            self.dice = [e.dice.d1, e.dice.d2]
        elif isinstance(e, E.Played | E.Passed):
            text = e.play if isinstance(e, E.Played) else "(no legal play)"
            self.plays.append({"side": e.side.value, "dice": [e.dice.d1, e.dice.d2], "play": text})
            if isinstance(e, E.Played):
                self.position = e.after
            self.dice = []
        elif isinstance(e, E.CubeActed):
            if e.action in (E.CubeAction.TAKE, E.CubeAction.BEAVER, E.CubeAction.RACCOON):
                self.cube = {**self.cube, "value": e.value or self.cube["value"] * 2, "owner": e.side.value}
            elif e.action is E.CubeAction.AUTOMATIC:
                self.cube = {**self.cube, "value": e.value or self.cube["value"] * 2, "owner": None}
        elif isinstance(e, E.MatchEnded):
            self.over = True
            self.score = dict(e.score)
        elif isinstance(e, E.PositionSeen):
            self.position = e.position
        elif isinstance(e, E.LedsLit):
            self.leds = {_place_key(p): colour for p, colour in e.leds}
        elif isinstance(e, E.Called):
            self.calls.append({"seq": item.seq, "says": list(e.says), "buzzer": e.buzzer})
        elif isinstance(e, E.PhaseChanged):
            self.phase, self.on_roll = e.phase, None if e.on_roll is None else e.on_roll.value
        elif isinstance(e, E.ScoreChanged):
            self.score = dict(e.score)

    def to_dict(self) -> dict[str, Any]:
        """The view as JSON-ready data (read it under :attr:`lock` when another thread feeds the view)."""
        pos = self.position
        pips = None
        if pos is not None:
            pips = {s.value: pos.pip_count(s) for s in (Side.WHITE, Side.BLACK)}
        return {
            "seq": self.seq,
            "players": self.players,
            "game": self.game,
            "variant": self.variant,
            "phase": self.phase,
            "on_roll": self.on_roll,
            "position": None if pos is None else pos.to_dict(),
            "pips": pips,
            "dice": list(self.dice),
            "cube": dict(self.cube),
            "leds": dict(self.leds),
            "calls": list(self.calls),
            "score": dict(self.score),
            "plays": list(self.plays),
            "over": self.over,
        }


def _place_key(place) -> str:
    """A place as the page names it: ``"13"`` (white's numbering), ``"bar-white"``, ``"off-black"``."""
    if place.is_point:
        return str(place.number)
    return f"{place.kind.value}-{place.side.value}"
