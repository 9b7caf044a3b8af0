"""The referee bound to its journal: the game flow, its event stream, and the journal subscribed to it.

Owns :class:`Referee`: each input goes to the pure :class:`~referee.flow.GameFlow` and
the step's events are published on :attr:`Referee.stream`, whose first subscriber is the
journal. The loop subscribes the LEDs, the buzzer and the terminal; a page may too. A
resumed referee is in the state its journal says. A journal the disk refuses pauses the
game: the unwritten events are written first, in order, once it can be
(:meth:`Referee.retry_journal`), and inputs meanwhile are held and judged then.
"""

from __future__ import annotations

import logging
from collections import deque
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

log = logging.getLogger(__name__)

MAX_HELD = 1000  # inputs held while the journal cannot be written (consecutive boards count as one)


class Referee:
    """A match at a table, refereed and journaled. Make one with :meth:`new` or :meth:`resume`."""

    def __init__(self, flow: GameFlow, journal: Journal, stream: EventStream | None = None) -> None:
        self.flow = flow
        self.journal = journal
        self.stream = stream or EventStream()
        self.journal_sink = JournalSink(journal)
        self.stream.subscribe(self.journal_sink)
        self._held: deque[F.Input] = deque()  # inputs that came while the journal could not be written
        self._paused_said = False

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
        session ends after ``games`` games (None: when the players stop).

        Raises :class:`~referee.errors.JournalError` when ``path`` holds a match already,
        :class:`~referee.journal.JournalBusyError` when another referee has it open and
        :class:`~referee.journal.JournalFileError` when it cannot be created or written (a
        file this call created is removed again).
        """
        p = Path(path)
        if p.is_file() and p.stat().st_size:
            raise JournalError(f"journal: {str(p)!r} already holds a match; resume it or choose another file")
        if games is not None:
            spec = replace(spec, games=games)  # journaled with the match, so a resumed session ends there too
        flow, step = GameFlow.new(spec, white=white, black=black, teach=teach)
        existed = p.exists()
        journal = Journal.open(p, clock=clock)
        if journal.size:  # written between the look above and the lock
            journal.close()
            raise JournalError(f"journal: {str(p)!r} already holds a match; resume it or choose another file")
        ref = cls(flow, journal, EventStream(clock))
        ref._start(step, remove=not existed)
        return ref

    @classmethod
    def resume(cls, path: str | Path, *, teach: bool = False, clock: Callable[[], datetime] | None = None) -> Referee:
        """Carry on the match journaled at ``path``, in exactly the state the journal gives.

        Raises :class:`~referee.errors.JournalError` (naming the line) for a corrupt or empty
        journal, :class:`~referee.journal.JournalFileError` for one that cannot be read or
        written (missing, a directory, read-only) and
        :class:`~referee.journal.JournalBusyError` when another referee has it open.
        """
        contents = read_journal(path)
        try:
            flow, step = GameFlow.replay(contents.events, teach=teach)
        except JournalError as exc:
            raise exc.at(path) from None
        journal = Journal.open(path, clock=clock)
        if journal.next_seq != len(contents.events) + 1:  # written between the reading and the lock
            journal.close()
            raise JournalError("changed while it was being opened; try again", None, path)
        ref = cls(flow, journal, EventStream(clock))
        ref._start(step)
        return ref

    def _start(self, step: F.Step, *, remove: bool = False) -> None:
        """Publish the first step; a journal the disk refuses now stops the start (nothing is played yet)."""
        self.stream.publish_all(step.events)
        if self.journal_sink.pending:
            error = self.journal_sink.error
            if remove and self.journal.size == 0:
                self.journal.path.unlink(missing_ok=True)  # still locked here: the file this start made
            self.journal.close()
            raise error

    def close(self) -> None:
        """Write what is still pending (judging the inputs held) and close the journal.

        What the disk still refuses then is said and logged: the journal keeps the match
        up to the event before it, so a resume carries on from there.
        """
        if self.journal.closed:
            return
        if self.journal_sink.pending or self._held:
            self.retry_journal()
        lost, held = len(self.journal_sink.pending), len(self._held)
        if lost or held:
            error = self.journal_sink.error
            text = (
                f"the journal could not be written ({error.reason if error else 'closed'}): "
                f"{lost} record event{'s' if lost != 1 else ''} of the match and {held} input"
                f"{'s' if held != 1 else ''} held are not in it; {str(self.journal.path)!r} holds the match up to "
                f"its event {self.journal.next_seq - 1}, and a resume carries on from there"
            )
            log.error(text)
            self._notice(text, buzzer=True)
        self.journal.close()

    # ------------------------------------------------------------------ the journal

    @property
    def journal_paused(self) -> bool:
        """True while record events wait for the disk (the game is paused)."""
        return bool(self.journal_sink.pending)

    def retry_journal(self) -> bool:
        """Try the events the disk refused again; once they are written, judge the inputs held meanwhile,
        in order. Returns True when nothing waits for the disk."""
        sink = self.journal_sink
        if sink.pending:
            sink.retry()
        self._say_journal()
        while self._held and not sink.pending:
            self._handle(self._held.popleft())
        return not sink.pending

    def _say_journal(self) -> None:
        """Say what the journal did: a pause once when it begins, once when it ends, a removed file put back."""
        for note in self.journal.take_notes():
            self._notice(note)
        for _ in range(2):  # saying it publishes, which may write the pending events
            sink = self.journal_sink
            if sink.pending and not self._paused_said:
                self._paused_said = True
                reason = sink.error.reason if sink.error is not None else "?"
                self._notice(
                    f"the journal cannot be written ({reason}): the game is paused until it can; "
                    "what is done meanwhile is judged then",
                    buzzer=True,
                )
            elif not sink.pending and self._paused_said:
                self._paused_said = False
                self._notice("the journal is written again: the game goes on")
            else:
                return

    def _notice(self, text: str, *, buzzer: bool = False) -> None:
        self.stream.publish_all(self.flow.handle(F.Notice((text,), buzzer)).events)

    def _hold(self, what: F.Input) -> None:
        held = self._held
        if isinstance(what, F.SeenBoard) and held and isinstance(held[-1], F.SeenBoard):
            held[-1] = what  # a board is the whole board: the newest one says all the older one did
        elif len(held) < MAX_HELD:
            held.append(what)
        else:
            log.warning("the journal cannot be written and %d inputs wait: %r is not judged", len(held), what)

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
        """Give ``what`` to the flow and publish what it did; returns the calls.

        While the journal cannot be written, ``what`` is held (a Notice excepted) and judged
        once it can; the calls returned then are the lights as they are, with no words.
        """
        if self.journal_sink.pending:
            self.retry_journal()
        if self.journal_sink.pending and not isinstance(what, F.Notice):
            self._hold(what)
            return Calls(self.flow.leds)
        return self._handle(what)

    def _handle(self, what: F.Input) -> Calls:
        step = self.flow.handle(what)
        self.stream.publish_all(step.events)
        self._say_journal()
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
