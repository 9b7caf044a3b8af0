"""The referee bound to its journal: the game flow, its event stream, and the journal subscribed to it.

Owns :class:`Referee`, what scripts, tests and the table loop hold: each input goes to
the pure :class:`~referee.flow.GameFlow`, and the step's events are published on
:attr:`Referee.stream`, whose first subscriber is the journal (each record event
flushed and synced before the next subscriber sees it). The loop
(:mod:`referee.loop`) subscribes the LEDs, the buzzer and the terminal; a page or a
broker may subscribe too. A referee resumed from its journal (:meth:`Referee.resume`)
is in exactly the state the journal says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from board_rules import Position, Side
from board_rules.places import Place
from referee import flow as F
from referee.errors import JournalError
from referee.flow import AMBER, BLUE, BUTTONS, GREEN, RED, RIGHT_HAND_HALF, Calls, GameFlow
from referee.journal import Journal, read_journal
from referee.record import MatchRecord, Phase
from referee.spec import MatchSpec
from referee.stream import EventStream, JournalSink

__all__ = ["AMBER", "BLUE", "BUTTONS", "GREEN", "RED", "RIGHT_HAND_HALF", "Calls", "Referee"]


class Referee:
    """A match at a table, refereed and journaled. Make one with :meth:`new` or :meth:`resume`."""

    def __init__(self, flow: GameFlow, journal: Journal, stream: EventStream | None = None) -> None:
        self.flow = flow
        self.journal = journal
        self.stream = stream or EventStream()
        self.stream.subscribe(JournalSink(journal))

    @classmethod
    def new(
        cls,
        path: str | Path,
        spec: MatchSpec,
        *,
        white: str = "white",
        black: str = "black",
        teach: bool = False,
        games: int | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> Referee:
        """Start a new match journaled at ``path`` (which must not hold a journal yet); a money
        session ends after ``games`` games (None: when the players stop)."""
        p = Path(path)
        if p.exists() and p.stat().st_size:
            raise JournalError(f"journal: {str(p)!r} already holds a match; resume it or choose another file")
        if games is not None:
            spec = replace(spec, games=games)  # journaled with the match, so a resumed session ends there too
        flow, step = GameFlow.new(spec, white=white, black=black, teach=teach)
        ref = cls(flow, Journal.open(p, clock=clock), EventStream(clock))
        ref.stream.publish_all(step.events)
        return ref

    @classmethod
    def resume(cls, path: str | Path, *, teach: bool = False, clock: Callable[[], datetime] | None = None) -> Referee:
        """Carry on the match journaled at ``path``, in exactly the state the journal gives.

        Raises :class:`~referee.errors.JournalError` for a missing or corrupt journal.
        """
        contents = read_journal(path)
        try:
            flow, step = GameFlow.replay(contents.events, teach=teach)
        except JournalError as exc:
            raise exc.at(path) from None
        ref = cls(flow, Journal.open(path, clock=clock), EventStream(clock))
        ref.stream.publish_all(step.events)
        return ref

    def close(self) -> None:
        self.journal.close()

    # ------------------------------------------------------------------ state

    @property
    def record(self) -> MatchRecord:
        return self.flow.record

    replay = record  # the match as recorded (the name older callers use)

    @property
    def phase(self) -> Phase:
        return self.flow.phase

    @property
    def position(self) -> Position | None:
        return self.flow.position

    @property
    def scoreboard(self):
        return self.flow.record.scoreboard

    @property
    def on_roll(self) -> Side | None:
        return self.flow.on_roll

    @property
    def seen(self) -> Position | None:
        return self.flow.seen

    @property
    def ready(self) -> bool:
        return self.flow.ready

    @property
    def teach(self) -> bool:
        return self.flow.teach

    def score(self) -> dict[str, int]:
        return self.flow.score()

    # ------------------------------------------------------------------ inputs

    def handle(self, what: F.Input) -> Calls:
        """Give ``what`` to the flow and publish what it did; returns the calls."""
        step = self.flow.handle(what)
        self.stream.publish_all(step.events)
        return step.calls

    def board(self, seen: Position, disagree: tuple[Place, ...] = ()) -> Calls:
        return self.handle(F.SeenBoard(seen, disagree))

    def dice(
        self, values: tuple[int, int] | None, *, halves: tuple[str | None, ...] = (), cocked: bool = False
    ) -> Calls:
        return self.handle(F.SeenDice(values, tuple(halves), cocked))

    def opening(self, white_die: int, black_die: int) -> Calls:
        return self.handle(F.TypedOpening(white_die, black_die))

    def opening_dice(
        self, values: tuple[int, int], halves: tuple[str | None, str | None], *, cocked: bool = False
    ) -> Calls:
        return self.handle(F.SeenOpeningDice(values, halves, cocked))

    def button(self, name: str, side: Side | None = None) -> Calls:
        return self.handle(F.Pressed(name, side))

    def panel(self, action: str, side: Side | None = None) -> Calls:
        return self.handle(F.PanelAction(action, side))

    def lifted(self, where: Place) -> Calls:
        return self.handle(F.Lifted(where))

    def cube_seen(self, where: str | None, value: int | None) -> Calls:
        return self.handle(F.SeenCube(where, value))

    def conflict(self, places) -> Calls:
        return self.handle(F.Conflict(tuple(places)))

    def notice(self, *says: str, buzzer: bool = False, leds: dict[Place, str] | None = None) -> Calls:
        return self.handle(F.Notice(tuple(says), buzzer, dict(leds or {})))
