"""The game flow: a match at a physical table, decided without I/O.

(Some 600 lines in one module: one state machine, whose decisions all read one state.)

Owns :class:`GameFlow` and :class:`Step`: a typed input (:mod:`referee.inputs`) goes
in, a step comes out with the record events to journal, the table events to show
and the :class:`~referee.calls.Calls`. The match is a :class:`~referee.record.MatchRecord`;
each record event is tried on a copy first. A flow replayed from a journal
(:meth:`GameFlow.replay`) is in the state the journal says and waits for the board
to be seen again. Calls name points in one numbering and say whose. Imports
``board_rules`` and the referee's pure modules; in teaching mode, when a hint or a
play is judged, :mod:`engine.explain` too.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

from board_rules import Position, Roll, Side
from board_rules.legality import TurnTracker, board_diff, check
from board_rules.match import MoneySession, TavliMatch
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from board_rules.places import Place
from referee import events as E
from referee.calls import (
    AMBER,
    BLUE,
    BUTTONS,
    GREEN,
    LEVELS,
    RED,
    RIGHT_HAND_HALF,
    Calls,
    more,
    one_checker_off,
    places_text,
)
from referee.errors import JournalError, JournalReplayError
from referee.inputs import (
    Conflict,
    Input,
    Lifted,
    Notice,
    PanelAction,
    Pressed,
    SeenBoard,
    SeenCube,
    SeenDice,
    SeenOpeningDice,
    TypedOpening,
)
from referee.record import MatchRecord, Phase
from referee.spec import MatchSpec

__all__ = [
    "AMBER",
    "BLUE",
    "GREEN",
    "RED",
    "Calls",
    "Conflict",
    "GameFlow",
    "Input",
    "Lifted",
    "Notice",
    "PanelAction",
    "Pressed",
    "SeenBoard",
    "SeenCube",
    "SeenDice",
    "SeenOpeningDice",
    "Step",
    "TypedOpening",
]

_UNREAD = "a die whose face the camera could not read: throw again where it sees the dice clearly"


@dataclass(frozen=True, slots=True)
class Step:
    """What one input did: ``events`` in order (record events to journal, table events to show) and the calls."""

    events: tuple[E.Event, ...]
    calls: Calls

    @property
    def records(self) -> tuple[E.Event, ...]:
        return tuple(e for e in self.events if e.journaled)


# =============================================================================== the flow


class GameFlow:
    """A match at a table, refereed (see the module docstring). Make one with :meth:`new` or :meth:`replay`."""

    def __init__(self, record: MatchRecord, *, teach: bool = False, dice_rule: bool = True) -> None:
        self.record = record
        self.teach = teach
        self.dice_rule = dice_rule  # dice must land in the thrower's right-hand board
        self.seen: Position | None = None
        self.ready = False  # the board showed the game's start position
        self._tracker: TurnTracker | None = None
        self._last_good: Position | None = None
        self._leds: dict[Place, str] = {}
        self._resign_level = 1
        self._cube_wrong: str | None = None  # what was said of a cube the camera sees out of place
        self._out: list[E.Event] = []
        self._shown: tuple = ()  # the last phase, score and LEDs streamed

    # ------------------------------------------------------------------ making one

    @classmethod
    def new(
        cls, spec: MatchSpec, *, white: str = "white", black: str = "black", teach: bool = False
    ) -> tuple[GameFlow, Step]:
        """A new match: the flow, and the step that records its start and its first game's."""
        flow = cls(MatchRecord(), teach=teach)
        flow._record(E.MatchStarted(spec, {"white": white, "black": black}))
        says = flow._next_game()
        return flow, flow._step(Calls(says=tuple(says)))

    @classmethod
    def replay(cls, events: Iterable[E.Event | E.Stamped], *, teach: bool = False) -> tuple[GameFlow, Step]:
        """The flow after a journal's ``events``, and the step that carries on from there (the next
        game's start when the last game was decided). Raises :class:`JournalReplayError`."""
        flow = cls(MatchRecord.of(events), teach=teach)
        says: list[str] = []
        if flow.record.phase() in (Phase.GAME_END, Phase.GAME_START, Phase.MATCH_END):
            says = flow._next_game()
        return flow, flow._step(Calls(says=tuple(says)))

    # ------------------------------------------------------------------ state

    @property
    def phase(self) -> Phase:
        p = self.record.phase()
        if p in (Phase.OPENING_ROLL, Phase.ROLL, Phase.PLAY) and not self.ready:
            return Phase.SETUP
        return p

    @property
    def position(self) -> Position | None:
        return self.record.position

    @property
    def on_roll(self) -> Side | None:
        r = self.record
        return None if r.position is None or not r.starter_known else r.position.turn

    def score(self) -> dict[str, int]:
        return self.record.score()

    @property
    def leds(self) -> dict[Place, str]:
        """The places lit now and their colours."""
        return self._current_leds()

    # ------------------------------------------------------------------ one input

    def handle(self, what: Input) -> Step:
        """Decide one input; returns the :class:`Step` it made."""
        if isinstance(what, SeenBoard):
            calls = self._board(what.position)
            if what.disagree:
                where = places_text(what.disagree, self.on_roll or Side.WHITE, self.record.variant)
                calls = Calls(
                    {**calls.leds, **{w: AMBER for w in what.disagree}},
                    calls.buzzer,
                    (*calls.says, f"board and camera disagree at {where}"),
                )
        elif isinstance(what, SeenDice):
            calls = self._dice(what.values, what.halves, what.cocked)
        elif isinstance(what, SeenOpeningDice):
            calls = self._opening_dice(what.values, what.halves, what.cocked)
        elif isinstance(what, TypedOpening):
            calls = self._opening(what.white, what.black)
        elif isinstance(what, Pressed):
            calls = self._button(what.button, what.side)
        elif isinstance(what, PanelAction):
            calls = self._panel(what.action, what.side)
        elif isinstance(what, Lifted):
            calls = self._lifted(what.place)
        elif isinstance(what, SeenCube):
            calls = self._cube_seen(what.where, what.value)
        elif isinstance(what, Conflict):
            calls = self._conflict(what.places)
        elif isinstance(what, Notice):
            calls = Calls({**self._current_leds(), **what.leds}, what.buzzer, what.says)
        else:
            raise TypeError(f"not an input of the game flow: {what!r}")
        return self._step(calls)

    def _step(self, calls: Calls) -> Step:
        out, self._out = self._out, []  # the record events, and the board seen, come first
        phase, score = self.phase, self.score()
        leds = tuple(sorted(calls.leds.items(), key=lambda kv: kv[0].sort_key()))
        last = self._shown or (None, None, None)
        if leds != last[2]:  # the lights before the words that explain them
            out.append(E.LedsLit(leds))
        if calls.says or calls.buzzer:
            out.append(E.Called(calls.says, calls.buzzer))
        if phase != last[0]:
            out.append(E.PhaseChanged(phase.value, self.on_roll))
        if score != last[1]:
            out.append(E.ScoreChanged(score))
        self._shown = (phase, score, leds)
        return Step(tuple(out), calls)

    # ------------------------------------------------------------------ recording

    def _try(self, event: E.Event) -> str | None:
        """Why the rules refuse ``event`` now (None: they accept it)."""
        trial = copy.copy(self.record)  # its fields are immutable values, replaced on each event
        try:
            trial.apply(event)
        except JournalError as exc:
            return exc.detail
        return None

    def _record(self, event: E.Event) -> None:
        reason = self._try(event)
        if reason is not None:
            raise JournalReplayError(f"the referee tried to record a refused {event.type}: {reason}")
        self.record.apply(event)
        self._out.append(event)

    def _next_game(self) -> list[str]:
        """After a game (or at the start): record its end, the match's end, or the next game's start."""
        says: list[str] = []
        r = self.record
        if r.phase() is Phase.GAME_END:
            outcome = r.outcome
            self._record(E.GameEnded(outcome, None))
            if outcome.winner is None:
                says.append("the game is drawn")
            else:
                plural = "s" if outcome.points != 1 else ""
                says.append(f"{outcome.winner.value} wins {outcome.points} point{plural} ({outcome.kind})")
        board = r.scoreboard
        games = r.spec.games
        if isinstance(board, MoneySession) and games is not None and r.game >= games:
            self._record(E.MatchEnded(None, self.score()))
            says.append(f"session over: white {board.points(Side.WHITE)}, black {board.points(Side.BLACK)}")
            return says
        if r.phase() is Phase.MATCH_END:
            winner = board.winner
            self._record(E.MatchEnded(winner, self.score()))
            says.append(f"match over: {winner.value} wins {board.points(winner)}-{board.points(winner.other)}")
            return says
        if r.phase() is Phase.GAME_START:
            name = board.next_variant if isinstance(board, TavliMatch) else r.spec.variant
            variant = r.spec.make_variant(name)
            starter = board.next_starter if isinstance(board, TavliMatch) else None
            position = Position.start(variant, starter or Side.WHITE)
            self._record(E.GameStarted(r.game + 1, position, starter))
            self.ready = False
            self._tracker = None
            says.append(f"game {r.game}: {variant.label}; set up the board")
        return says

    # ------------------------------------------------------------------ calls

    def _current_leds(self) -> dict[Place, str]:
        leds = dict(self._leds)
        if self._cube_wrong is not None:  # the cube the camera sees is not where the game has it
            for side in (Side.WHITE, Side.BLACK):
                leds.setdefault(Place.bar(side), AMBER)
        return leds

    def _calls(self, says: list[str] | tuple[str, ...] = (), *, buzzer: bool = False) -> Calls:
        return Calls(self._current_leds(), buzzer, tuple(says))

    def _refuse(self, why: str) -> Calls:
        return self._calls([why], buzzer=True)

    def _red(self, places: Iterable[Place]) -> None:
        self._leds = {w: RED for w in places}

    # ------------------------------------------------------------------ boards

    def _board(self, seen: Position) -> Calls:
        """A new board seen: follow the set-up or the turn. The same board seen again changes nothing:
        what is lit stays lit, and the buzzer sounds again while something is lit red."""
        phase = self.phase
        r = self.record
        if phase is Phase.PLAY and seen == self.seen:
            return self._calls(buzzer=RED in self._leds.values())
        if seen != self.seen:
            self._out.append(E.PositionSeen(seen))
        self.seen = seen
        if phase is Phase.SETUP:
            target = r.position
            wrong = board_diff(target, seen)
            nxt = r.phase()
            # resumed in the middle of a turn: the checkers already moved may stay where a legal play has them
            mid_turn = bool(wrong) and nxt is Phase.PLAY and TurnTracker(target, r.roll).on_the_way(seen)
            if wrong and not mid_turn:
                self._red(wrong)
                return self._calls(
                    [f"set up {r.variant.label}: {places_text(wrong, Side.WHITE, self.record.variant)} not right yet"]
                )
            self.ready = True
            self._leds = {}
            if nxt is Phase.OPENING_ROLL:
                return self._calls(["the board is set: each player throws one die"])
            if nxt is Phase.PLAY:
                what = "the opening " if r.position.rolls == (0, 0) else ""
                moved = ", the checkers already moved where they are" if mid_turn else ""
                calls = self._start_turn([f"the board is set: {self.on_roll.value} plays {what}{r.roll}{moved}"])
                if mid_turn and self._tracker is not None:
                    self._last_good = seen
                return calls
            return self._calls([f"the board is set: {self.on_roll.value} to roll"])
        if phase is Phase.PLAY and self._tracker is not None:
            if self._tracker.on_the_way(seen):
                self._last_good = seen
                self._leds = {}
                return self._calls()
            # what changed since the last good board, narrowed to where it differs from the nearest legal result
            changed = board_diff(self._last_good or r.position, seen)
            nearest = set(check(r.position, r.roll, seen).wrong)
            wrong = tuple(w for w in changed if w in nearest) or changed
            self._red(wrong)
            side = r.position.turn
            return self._calls(
                [f"{places_text(wrong, side, self.record.variant)}: no legal play passes through this board"],
                buzzer=True,
            )
        if phase in (Phase.ROLL, Phase.OPENING_ROLL, Phase.CUBE_ANSWER, Phase.RESIGN_ANSWER) and r.position is not None:
            wrong = board_diff(r.position, seen)
            self._red(wrong)
            if wrong:
                side = self.on_roll or Side.WHITE
                return self._calls(
                    [f"{places_text(wrong, side, self.record.variant)}: the board changed out of turn; put it back"],
                    buzzer=True,
                )
            return self._calls()
        return self._calls()

    def _conflict(self, places: Iterable[Place]) -> Calls:
        """Checkers of both colours where no pin explains them: a checker on a point not open to it."""
        wrong = tuple(places)
        if not wrong:
            return self._calls()
        self._red(wrong)
        side = self.on_roll or Side.WHITE
        return self._calls(
            [f"{places_text(wrong, side, self.record.variant)}: a checker on a point that is not open to it"],
            buzzer=True,
        )

    # ------------------------------------------------------------------ dice

    def _opening(self, white_die: int, black_die: int) -> Calls:
        if self.phase is Phase.SETUP:
            return self._refuse("no opening roll yet: the board is not set up")
        if self.phase is not Phase.OPENING_ROLL:
            return self._refuse(f"no opening roll now ({self.phase})")
        event = E.OpeningRolled(white_die, black_die)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(reason)
        self._record(event)
        r = self.record
        if not r.starter_known:
            says = [f"white {white_die}, black {black_die}: a tie, throw again"]
            cube = r.cube
            doubled = cube.automatic_double() if cube is not None and cube.options.automatic_doubles else cube
            if doubled is not None and doubled.value != cube.value:
                self._record(E.CubeActed(E.CubeAction.AUTOMATIC, None, doubled.value))
                says.append(f"an automatic double: the cube turns to {doubled.value}, in the centre")
            return self._calls(says)
        says = [f"white {white_die}, black {black_die}: {self.on_roll.value} starts"]
        if not r.roll_played:
            return self._start_turn(says + [f"{self.on_roll.value} plays {r.roll}"])
        return self._calls(says + [f"{self.on_roll.value} to roll"])

    def _opening_dice(self, values: tuple[int, int], halves: tuple[str | None, ...], cocked: bool) -> Calls:
        """Each player's one die must come to rest in that player's own right-hand board
        (white's in ``"right"``, black's in ``"left"``); a cocked die, or two in one half, are thrown again."""
        if self.phase is not Phase.OPENING_ROLL:
            return self._calls()
        if cocked:
            return self._refuse("a cocked die: throw again")
        if 0 in values:
            return self._refuse(_UNREAD)
        by_half = dict(zip(halves, values))
        white, black = by_half.get(RIGHT_HAND_HALF[Side.WHITE]), by_half.get(RIGHT_HAND_HALF[Side.BLACK])
        if len(by_half) != 2 or white is None or black is None:
            return self._refuse("opening roll: each player throws one die into their own right-hand board: throw again")
        return self._opening(white, black)

    def _dice(self, values: tuple[int, int] | None, halves: tuple[str | None, ...], cocked: bool) -> Calls:
        if values is None:
            return self._end_turn() if self.phase is Phase.PLAY else self._calls()
        if self.phase is not Phase.ROLL:
            return self._calls()
        side = self.on_roll
        if cocked:
            return self._refuse("a cocked die: throw again")
        if halves and 0 in values:  # seen, not typed: a typed 0 is refused below with its field named
            return self._refuse(_UNREAD)
        if self.dice_rule and halves and any(h != RIGHT_HAND_HALF[side] for h in halves):
            return self._refuse(f"the dice must come to rest in {side.value}'s right-hand board: throw again")
        try:
            roll = Roll(*values)
        except ValueError as exc:
            return self._refuse(str(exc))
        event = E.Rolled(side, roll)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(reason)
        self._record(event)
        return self._start_turn([f"{side.value} rolls {roll}"])

    # ------------------------------------------------------------------ turns

    def _start_turn(self, says: list[str]) -> Calls:
        position, roll = self.record.position, self.record.roll
        side = position.turn
        try:  # only whether there is any play matters here: a long listing means there is
            options = legal_plays(position, roll, budget=2_000)
        except SearchBudgetExceeded:
            options = None
        if options is not None and len(options) == 1 and not options[0][0]:
            self._record(E.Passed(side, roll))
            says.append(f"{side.value} has no legal play with {roll}: the turn passes")
            return self._after_play(says)
        self._tracker = TurnTracker(position, roll)
        self._last_good = position
        self._leds = {}
        return self._calls(says)

    def _after_play(self, says: list[str]) -> Calls:
        self._tracker = None
        self._leds = {}
        if self.record.phase() is Phase.GAME_END:
            says.extend(self._next_game())
        elif self.record.phase() is Phase.ROLL:
            says.append(f"{self.on_roll.value} to roll")
        return self._calls(says)

    def _end_turn(self) -> Calls:
        if self.phase is not Phase.PLAY or self._tracker is None:
            return self._calls()
        position, roll = self.record.position, self.record.roll
        seen = self.seen or position
        side = position.turn
        verdict = check(position, roll, seen)
        if not verdict.legal:
            expected = str(verdict.play) if verdict.play is not None else None
            self._record(E.Corrected(side, roll, tuple(verdict.wrong), seen, expected))
            self._red(verdict.wrong)
            near = f"; the nearest legal play is {expected}" if expected else ""
            return self._refuse(
                f"{side.value} {roll}: not a legal play: {places_text(verdict.wrong, side, self.record.variant)} wrong{near}"
                + one_checker_off(position, roll, seen, verdict)
            )
        text = str(verdict.play) if verdict.play is not None else ""
        after = position.play(text, roll) if text else position
        if board_diff(after, seen):  # the rules' result must be the board on the table
            return self._refuse("the board does not match the play found; put it right")
        self._record(E.Played(side, roll, text, position, after))
        says = [f"{side.value} plays {text}"]
        if self.teach and text:
            says += self._what_it_gave_up(position, roll, after)
        return self._after_play(says)

    def _what_it_gave_up(self, position: Position, roll: Roll, after: Position) -> list[str]:
        """In teaching mode, one line on how much worse the play made was than the best; none when
        it was the best, forced, or the evaluator cannot say (its failure is no line, never a crash)."""
        try:
            from engine.explain import judge  # the evaluator loads its nets on first use

            verdict = judge(position, roll, after)
        except Exception:  # an evaluator problem must not stop the game
            return []
        if verdict.forced or verdict.played_best is not False:
            return []
        return [f"{position.turn.value}: {verdict.played_line()}; {verdict.best_line()}"]

    def _lifted(self, where: Place) -> Calls:
        """In teaching mode, light where a lifted checker may land."""
        if not self.teach or self.phase is not Phase.PLAY or self._tracker is None:
            return self._calls()
        board = self._last_good or self.record.position
        try:
            landing = self._tracker.landing_points(board, where)
        except ValueError:
            landing = ()
        self._leds = {p: GREEN for p in landing}
        side = self.record.position.turn
        to = ", ".join(p.label(side, self.record.variant) for p in landing) if landing else "nowhere"
        return self._calls([f"from {places_text([where], side, self.record.variant)}: {to}"])

    def _hint(self) -> Calls:
        if not self.teach:
            return self._refuse("hints are for teaching mode (--teach)")
        if self.phase is not Phase.PLAY:
            return self._calls(["a hint comes once the dice are thrown"])
        position, roll = self.record.position, self.record.roll
        try:
            from engine.explain import judge  # the evaluator loads its nets on first use

            verdict = judge(position, roll)
        except Exception as exc:  # an evaluator problem must not stop the game
            return self._calls([f"no hint now: the evaluator failed ({type(exc).__name__})"])
        best, after = verdict.best, verdict.best_after
        if not best:
            return self._calls(["no legal play"])
        # blue where the player's checkers leave from, green where they arrive,
        # amber where only the opponent's change (a hit checker going to the bar)
        side = position.turn
        self._leds = {
            w: BLUE if more(position, after, side, w) else GREEN if more(after, position, side, w) else AMBER
            for w in board_diff(position, after)
        }
        hit = " (amber: the hit checker goes to the bar)" if AMBER in self._leds.values() else ""
        why = [f"the idea: {verdict.idea}"] if verdict.idea else []
        return self._calls([f"best play: {side.value}'s {best}{hit}", *why])

    # ------------------------------------------------------------------ buttons

    def _panel(self, action: str, side: Side | None) -> Calls:
        if action == "cycle_resignation_level":
            self._resign_level = self._resign_level % 3 + 1
            return self._calls([f"resignation level: {LEVELS[self._resign_level]}"])
        if action == "offer_resignation":
            return self._button(f"resign-{self._resign_level}", side)
        if action == "hide_hint":
            self._leds = {}
            return self._calls()
        if action in ("undo_checker_move", "undo_play"):
            return self._undo()
        name = {"end_turn": "end-turn", "show_hint": "hint"}.get(action, action)
        return self._button(self._in_context(name), side)

    def _undo(self) -> Calls:
        """The board is the record: show how to put it back as the turn began (blue: lift from here,
        green: put back here, amber: a hit to take back). A play once ended is in the journal and stays."""
        if self.phase is not Phase.PLAY or self._tracker is None:
            return self._calls(["nothing to undo now: a play once ended is in the record"])
        start = self.record.position
        board = self.seen or self._last_good or start
        places = board_diff(start, board)
        if not places:
            return self._calls(["nothing to undo: the board is as the turn began"])
        sides = (start.turn, start.turn.other)
        leds = {}
        for w in places:
            gained = any(more(board, start, s, w) for s in sides)
            lost = any(more(start, board, s, w) for s in sides)
            leds[w] = AMBER if gained and lost else (BLUE if gained else GREEN)
        self._leds = leds
        hit = ", and where amber put the hit checker back in place of the hitter" if AMBER in leds.values() else ""
        return self._calls(["to take the play back, lift from the blue places, put back on the green" + hit])

    def _in_context(self, name: str) -> str:
        """What a panel button means now: a resignation is answered with take (accept) or pass
        (refuse); after a beaver, a long press of take is the raccoon; without beavers, a take."""
        if self.phase is Phase.RESIGN_ANSWER:
            return {"take": "accept", "pass": "refuse"}.get(name, name)
        cube = self.record.cube
        if name != "beaver" or cube is None or getattr(cube, "offer", None) is None:
            return name
        if cube.offer.value == "beaver":
            return "raccoon"
        return name if cube.options.beavers else "take"

    def _button(self, name: str, side: Side | None) -> Calls:
        if name not in BUTTONS:
            return self._refuse(f"unknown button {name!r}; expected one of {', '.join(BUTTONS)}")
        if name == "end-turn":
            return self._end_turn()
        if name == "hint":
            return self._hint()
        r = self.record
        if r.position is None:
            return self._refuse(f"{name}: no game in progress")
        if name in ("double", "take", "pass", "beaver", "raccoon"):
            cube = r.cube
            if side is not None:
                who = side
            elif name == "double":
                who = self.on_roll
            else:  # take, pass, beaver, raccoon: the side the last offer was made to (a beaver's: the doubler)
                who = cube.offered_by.other if cube.offered_by is not None else self.on_roll
            if who is None:
                return self._refuse(f"{name}: nobody is on roll yet; the opening roll comes first")
            event = E.CubeActed(E.CubeAction(name), who, None)
            reason = self._try(event)
            if reason is not None:
                return self._refuse(f"{name}: {reason}")
            self._record(event)
            says = [f"{who.value}: {name}" + (f" (cube at {r.cube.value})" if name != "pass" else "")]
            if r.phase() is Phase.GAME_END:
                return self._after_play(says)
            return self._calls(says)
        if name.startswith("resign-"):
            who = side or self.on_roll
            if who is None:
                return self._refuse("resign: nobody is on roll yet; say who resigns: resign LEVEL white|black")
            level = int(name[-1])
            event = E.Resigned(E.ResignAction.OFFER, who, level)
            reason = self._try(event)
            if reason is not None:
                return self._refuse(f"resign: {reason}")
            self._record(event)
            return self._calls([f"{who.value} offers to resign ({LEVELS[level]})"])
        # accept / refuse a resignation: by the side that did not offer
        offered_by = r.cube.resigned_by
        if offered_by is None:
            return self._refuse(f"{name}: no resignation offered")
        who = side or offered_by.other
        event = E.Resigned(E.ResignAction.ACCEPT if name == "accept" else E.ResignAction.REFUSE, who)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(f"{name}: {reason}")
        self._record(event)
        if r.phase() is Phase.GAME_END:
            return self._after_play([f"{who.value} accepts the resignation"])
        return self._calls([f"{who.value} refuses the resignation"])

    def _cube_seen(self, where: str | None, value: int | None) -> Calls:
        """Said, once, when the cube the camera sees disagrees with the game; the bar stays amber until it is right."""
        cube = self.record.cube
        if cube is None or where is None:
            return self._calls()
        owner = getattr(cube, "owner", None)
        expected = "centre" if owner is None else owner.value
        if where != expected or (value is not None and value != cube.value):
            said = f"the cube should be at {expected} showing {cube.value if cube.value > 1 else 64}"
            first, self._cube_wrong = self._cube_wrong != said, said
            return self._calls([said] if first else [])
        self._cube_wrong = None
        return self._calls()
