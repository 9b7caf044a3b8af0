"""The match as recorded: record events applied one after another, each checked by the rules.

Owns :class:`MatchRecord` (the match state machine over :mod:`referee.events`: who is
on roll, the position, the cube, the score) and :class:`Phase`. It is what a journal
replays and what the game flow (:mod:`referee.flow`) decides against; it does no I/O.
Imports ``board_rules`` and the referee's events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from board_rules import Play, Position, Roll, Side
from board_rules.cube import CubeOptions, CubeState, GameOutcome
from board_rules.errors import TavliError
from board_rules.match import Match, MoneySession, TavliMatch
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from board_rules.variants import Variant
from referee import events as E
from referee.errors import JournalError, JournalReplayError
from referee.spec import MatchSpec


class Phase(str, Enum):
    """What comes next in a match. ``SETUP`` is the table's own (the board must show the game's
    start); the record's phases are the rest."""

    GAME_START = "game_start"
    SETUP = "setup"
    OPENING_ROLL = "opening_roll"
    ROLL = "roll"
    PLAY = "play"
    CUBE_ANSWER = "cube_answer"
    RESIGN_ANSWER = "resign_answer"
    GAME_END = "game_end"
    MATCH_END = "match_end"
    OVER = "over"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class ResumeState:
    """Where a journaled match stands (see :meth:`MatchRecord.state`)."""

    spec: MatchSpec
    players: dict[str, str]
    scoreboard: Match | TavliMatch | MoneySession
    phase: Phase
    game: int = 0
    variant: Variant | None = None
    position: Position | None = None
    cube: CubeState | None = None
    roll: Roll | None = None
    roll_played: bool = True
    pending_outcome: GameOutcome | None = None
    events: int = 0
    warning: str | None = None

    @property
    def on_roll(self) -> Side | None:
        """The side to roll or play now (None between games or before the opening roll)."""
        if self.position is None or self.phase in (Phase.OPENING_ROLL, Phase.GAME_END):
            return None
        return self.position.turn


class MatchRecord:
    """The rules applied to one record event after another.

    :meth:`apply` checks an event against the match so far (raising
    :class:`JournalReplayError`, naming the line when given) and moves it on. Its fields
    are immutable values replaced on each event, so ``copy.copy`` makes a trial copy.
    """

    def __init__(self) -> None:
        self.spec: MatchSpec | None = None
        self.players: dict[str, str] = {}
        self.scoreboard = None
        self.game = 0
        self.variant: Variant | None = None
        self.position: Position | None = None
        self.cube: CubeState | None = None
        self.roll: Roll | None = None
        self.roll_played = True
        self.starter_known = False
        self.outcome: GameOutcome | None = None
        self.over = False
        self.line: int | None = None
        self.count = 0

    @classmethod
    def of(cls, events: Iterable[E.Event | E.Stamped]) -> MatchRecord:
        """The record after ``events``; raises :class:`JournalReplayError` for one the rules refuse."""
        record = cls()
        for i, event in enumerate(events, start=1):
            record.apply(event, i)
        if record.spec is None:
            raise JournalReplayError("the journal is empty: no match_start")
        return record

    # ------------------------------------------------------------------ helpers

    def fail(self, message: str) -> JournalReplayError:
        return JournalReplayError(message, self.line)

    def _need_game(self, kind: str) -> None:
        if self.position is None:
            raise self.fail(f"{kind} outside a game (no game_start before it)")
        if self.outcome is not None:
            raise self.fail(f"{kind} after the game was decided ({self.outcome.kind}); expected game_end")

    def _on_turn(self, side: Side | None, kind: str) -> None:
        if side is None or self.position.turn is None:
            raise self.fail(f"{kind} before anyone is on roll")
        if side is not self.position.turn:
            raise self.fail(f"{kind} by {side.value!r}, but {self.position.turn.value!r} is on roll")

    # ------------------------------------------------------------------ events

    def apply(self, event: E.Event | E.Stamped, line: int | None = None) -> None:
        """Check ``event`` (on journal line ``line``) and move the match on.

        Raises :class:`JournalReplayError` for an event the rules or the match refuse.
        """
        self.line = line
        if isinstance(event, E.Stamped):
            event = event.event
        if not event.journaled:
            raise self.fail(f"{event.type} is a table event, not part of the record")
        kind = event.type
        if self.over:
            raise self.fail(f"{kind} after match_end")
        if self.spec is None and kind != "match_start":
            raise self.fail(f"the journal must begin with match_start, not {kind}")
        try:
            getattr(self, "_on_" + kind)(event)
        except JournalError:
            raise
        except TavliError as exc:  # a cube or match action the rules refuse
            raise self.fail(f"{kind}: {exc}") from None
        self.count += 1

    def _on_match_start(self, e: E.MatchStarted) -> None:
        if self.spec is not None:
            raise self.fail("a second match_start")
        self.spec = e.match
        self.players = dict(e.players)
        self.scoreboard = self.spec.new_scoreboard()

    def _on_game_start(self, e: E.GameStarted) -> None:
        if self.position is not None:
            raise self.fail(f"game_start while game {self.game} is still being played (no game_end)")
        if not isinstance(self.scoreboard, MoneySession) and self.scoreboard.is_over:
            raise self.fail("game_start after the match was won")
        expected = self.scoreboard.next_variant if isinstance(self.scoreboard, TavliMatch) else self.spec.variant
        variant = e.position.variant
        wanted = self.spec.make_variant(expected)
        if variant.name != wanted.name:
            raise self.fail(f"game {e.game} is {variant.name!r}, but the match's next game is {expected!r}")
        if variant != wanted:
            raise self.fail(
                f"options: {variant.options!r} are not the match's options for {expected}: {wanted.options!r}"
            )
        if e.game != self.game + 1:
            raise self.fail(f"game {e.game!r} out of order; expected game {self.game + 1}")
        self.variant = variant
        self.position = e.position
        fixed = self.scoreboard.next_starter if isinstance(self.scoreboard, TavliMatch) else None
        if e.starter is None:
            if fixed is not None:
                raise self.fail(f"starter: null, but {fixed.value!r} won the last game and starts this one")
            self.starter_known = False
        else:
            if fixed is not None and e.starter is not fixed:
                raise self.fail(
                    f"starter: {e.starter.value!r}, but {fixed.value!r} won the last game and starts this one"
                )
            self.position = self.position.with_turn(e.starter)
            self.starter_known = True
        options = self.scoreboard.cube_options_for_next_game()
        if not variant.has_cube:
            options = CubeOptions.without_cube()
        self.cube = CubeState(options=options)
        self.game = e.game
        self.roll = None
        self.roll_played = True
        self.outcome = None

    def _on_opening_roll(self, e: E.OpeningRolled) -> None:
        self._need_game("opening_roll")
        if self.starter_known:
            raise self.fail("opening_roll, but the starter of this game is already known")
        try:
            starter, dice = self.variant.opening(e.white, e.black)
        except ValueError as exc:
            raise self.fail(f"opening_roll: {exc}") from None
        if starter is None:
            return  # a tie: throw again (an automatic double, if any, is its own cube event)
        self.position = self.position.with_turn(starter)
        self.starter_known = True
        if dice is not None:
            self.roll = Roll(*dice)
            self.roll_played = False

    def _on_roll(self, e: E.Rolled) -> None:
        self._need_game("roll")
        if not self.starter_known:
            raise self.fail("roll before the opening roll decided who starts")
        self._on_turn(e.side, "roll")
        if not self.roll_played:
            raise self.fail(f"roll, but {self.roll} has not been played yet")
        if self.cube.offer is not None or self.cube.resign_offer is not None:
            raise self.fail("roll while a double or a resignation awaits an answer")
        self.roll = e.dice
        self.roll_played = False

    def _check_roll(self, kind: str, side: Side, dice: Roll) -> None:
        self._need_game(kind)
        self._on_turn(side, kind)
        if self.roll_played or self.roll is None:
            raise self.fail(f"{kind} of {dice} without a roll to play")
        if dice != self.roll:
            raise self.fail(f"{kind} of {dice}, but the roll was {self.roll}")

    def _on_play(self, e: E.Played) -> None:
        self._check_roll("play", e.side, e.dice)
        if e.before != self.position:
            raise self.fail(f"before: the recorded position is not the position in play: {e.before.to_dict()!r}")
        try:
            after = self.position.play(e.play, e.dice)
        except ValueError as exc:
            after = self._listed(e.play, e.dice)
            if after is None:
                raise self.fail(f"play {e.play!r} by {e.side.value} with {e.dice}: {exc}") from None
        if e.after != after:
            raise self.fail(f"after: the recorded position is not what {e.play!r} gives")
        self._advance(after)

    def _listed(self, text: str, dice: Roll) -> Position | None:
        """The result of ``text`` if the move generator lists it among the legal plays.

        ``Position.play`` refuses some plays that ``legal_plays`` lists (a plakoto play that
        pins the mother, ending the game before every die is played); a listed play is legal.
        """
        try:
            wanted = Play.parse(text)
            options = legal_plays(self.position, dice, budget=200_000)
        except (ValueError, SearchBudgetExceeded):
            return None
        for option, after in options:
            if option == wanted:
                return after
        return None

    def _on_pass(self, e: E.Passed) -> None:
        self._check_roll("pass", e.side, e.dice)
        options = legal_plays(self.position, e.dice, budget=200_000)
        if len(options) != 1 or options[0][0]:
            raise self.fail(f"pass by {e.side.value} with {e.dice}, but there is a legal play: {str(options[0][0])!r}")
        self._advance(options[0][1])

    def _advance(self, after: Position) -> None:
        self.position = after
        self.roll_played = True
        board = after.outcome()
        if board is not None:
            if board.winner is None:
                self.outcome = board
            else:
                self.outcome = self.cube.outcome(board.winner, board.base, board.kind)

    def _on_cube(self, e: E.CubeActed) -> None:
        self._need_game("cube")
        action = e.action
        if action is E.CubeAction.AUTOMATIC:
            if self.starter_known:
                raise self.fail("an automatic double comes from a tied opening roll, before the game starts")
            self.cube = self.cube.automatic_double()
        else:
            side = e.side
            if action is E.CubeAction.DOUBLE:
                self._on_turn(side, "double")
                if not self.roll_played or not self.starter_known:
                    raise self.fail("a double comes before the doubler rolls")
                self.cube = self.cube.double(side)
            elif action is E.CubeAction.TAKE:
                self.cube = self.cube.take(side)
            elif action is E.CubeAction.BEAVER:
                self.cube = self.cube.beaver(side)
            elif action is E.CubeAction.RACCOON:
                self.cube = self.cube.raccoon(side)
            else:
                self.outcome = self.cube.pass_(side)
                return
        if e.value is not None and e.value != self.cube.value:
            raise self.fail(f"value: {e.value!r}, but the cube is at {self.cube.value} after {action.value}")

    def _on_resign(self, e: E.Resigned) -> None:
        self._need_game("resign")
        if e.action is E.ResignAction.OFFER:
            self.cube = self.cube.offer_resign(e.side, e.level)
        elif e.action is E.ResignAction.ACCEPT:
            self.outcome = self.cube.accept_resign(e.side)
        else:
            self.cube = self.cube.refuse_resign(e.side)

    def _on_correction(self, e: E.Corrected) -> None:
        self._need_game("correction")

    def _on_game_end(self, e: E.GameEnded) -> None:
        if self.position is None:
            raise self.fail("game_end outside a game")
        recorded = e.outcome
        expected = self.outcome
        if expected is None:
            if recorded.kind != "time" or recorded.winner is None:
                raise self.fail(
                    f"game_end {recorded.kind!r}, but game {self.game} is not decided "
                    "(only a loss on time ends a game that the board, the cube or a resignation did not)"
                )
            if self.cube.offer is not None or recorded.cube != self.cube.value:
                raise self.fail(f"game_end on time at cube {recorded.cube}, but the cube is at {self.cube.value}")
            expected = recorded
        if (recorded.winner, recorded.base, recorded.kind, recorded.cube) != (
            expected.winner,
            expected.base,
            expected.kind,
            expected.cube,
        ):
            raise self.fail(f"game_end {E.outcome_dict(recorded)!r}, but the game ended {E.outcome_dict(expected)!r}")
        self.scoreboard = self.scoreboard.record(expected)
        self.position = None
        self.variant = None
        self.cube = None
        self.roll = None
        self.roll_played = True
        self.outcome = None

    def _on_match_end(self, e: E.MatchEnded) -> None:
        if self.position is not None:
            raise self.fail(f"match_end while game {self.game} is being played")
        board = self.scoreboard
        if isinstance(board, MoneySession):
            winner = None
        else:
            if not board.is_over:
                raise self.fail(f"match_end, but nobody has reached {board.length} points")
            winner = board.winner
        if e.winner is not None and e.winner is not winner:
            raise self.fail(
                f"winner: {e.winner.value!r}, but the score says {None if winner is None else winner.value!r}"
            )
        self.over = True

    # ------------------------------------------------------------------ result

    def phase(self) -> Phase:
        if self.over:
            return Phase.OVER
        if self.position is None:
            board = self.scoreboard
            if not isinstance(board, MoneySession) and board.is_over:
                return Phase.MATCH_END
            return Phase.GAME_START
        if self.outcome is not None:
            return Phase.GAME_END
        if not self.starter_known:
            return Phase.OPENING_ROLL
        if self.cube.offer is not None:
            return Phase.CUBE_ANSWER
        if self.cube.resign_offer is not None:
            return Phase.RESIGN_ANSWER
        if not self.roll_played:
            return Phase.PLAY
        return Phase.ROLL

    def score(self) -> dict[str, int]:
        board = self.scoreboard
        return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}

    def state(self, warning: str | None = None) -> ResumeState:
        return ResumeState(
            spec=self.spec,
            players=dict(self.players),
            scoreboard=self.scoreboard,
            phase=self.phase(),
            game=self.game,
            variant=self.variant,
            position=self.position,
            cube=self.cube,
            roll=self.roll,
            roll_played=self.roll_played,
            pending_outcome=self.outcome,
            events=self.count,
            warning=warning,
        )
