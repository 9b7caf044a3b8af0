"""The referee at the table: what is seen and pressed goes in, calls come out, and every decision is journaled.

Owns :class:`Referee`, the session state machine of a match at a physical table,
and :class:`Calls`, what the referee wants shown (a colour per LED place, the
buzzer, things said). It reads no device: the sources (board, camera, panel,
keyboard) turn what they sense into calls of :meth:`Referee.board`,
:meth:`Referee.dice`, :meth:`Referee.opening`, :meth:`Referee.button` and
:meth:`Referee.lifted`, and show the :class:`Calls` they get back.

The match state is the journal's :class:`~referee.journal.Replay`: each event is
first tried on a copy of it (so the rules refuse it before anything is written),
then appended to the journal (flushed and synced) and applied. A referee resumed
from the journal (:meth:`Referee.resume`) is therefore in exactly the state the
journal says, and carries on writing to it. What is not journaled is only what the
table shows now (the last board seen, whether the set-up is right): after a
resume the referee waits for the board to be seen again.

Phases (:attr:`Referee.phase`): ``setup`` (the board must show the game's start
position), ``opening_roll``, ``roll`` (the side on roll may double or roll),
``play`` (moving; the turn ends with the end-of-turn button or when the dice are
picked up), ``cube_answer``, ``resign_answer``, ``over``. Imports ``board_rules``
and ``referee.journal``; no I/O beyond the journal.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from board_rules import Place, PlaceKind, Position, Roll, Side
from board_rules.legality import TurnTracker, board_diff, check
from board_rules.match import MoneySession, TavliMatch
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from referee import journal as J

RED, GREEN, BLUE, AMBER = "red", "green", "blue", "amber"
BUTTONS = (
    "end-turn",
    "double",
    "take",
    "pass",
    "beaver",
    "raccoon",
    "resign-1",
    "resign-2",
    "resign-3",
    "accept",
    "refuse",
    "hint",
)
# the half of the board where each side's dice must come to rest: the thrower's right-hand board
RIGHT_HAND_HALF = {Side.WHITE: "right", Side.BLACK: "left"}


@dataclass(frozen=True, slots=True)
class Calls:
    """What the referee wants shown now: ``leds`` maps a :class:`~board_rules.Place`
    to a colour (red: wrong, green: may land / best play's target, blue: best play's
    source, amber: the sources disagree); ``buzzer`` sounds; ``says`` are the referee's words."""

    leds: dict[Place, str] = field(default_factory=dict)
    buzzer: bool = False
    says: tuple[str, ...] = ()


class Referee:
    """A match at a table, refereed (see the module docstring). Use :meth:`new` or :meth:`resume`."""

    def __init__(self, journal: J.Journal, replay: J.Replay, *, teach: bool = False, dice_rule: bool = True) -> None:
        self.journal = journal
        self.replay = replay
        self.teach = teach
        self.dice_rule = dice_rule  # dice must land in the thrower's right-hand board
        self.seen: Position | None = None
        self.ready = False  # the board showed the game's start position
        self._tracker: TurnTracker | None = None
        self._last_good: Position | None = None
        self._leds: dict[Place, str] = {}
        self._resign_level = 1
        self._cube_wrong: str | None = None  # what was said of a cube the camera sees out of place

    # ------------------------------------------------------------------ making one

    @classmethod
    def new(
        cls,
        path: str | Path,
        spec: J.MatchSpec,
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
            raise J.JournalError(f"journal: {str(p)!r} already holds a match; resume it or choose another file")
        if games is not None:
            spec = replace(spec, games=games)  # journaled with the match, so a resumed session ends there too
        ref = cls(J.Journal.open(p, clock=clock), J.Replay(), teach=teach)
        ref._record(J.match_start(spec, white, black))
        ref._next_game()
        return ref

    @classmethod
    def resume(cls, path: str | Path, *, teach: bool = False, clock: Callable[[], datetime] | None = None) -> Referee:
        """Carry on the match journaled at ``path``, in exactly the state the journal gives.

        Raises :class:`~referee.journal.JournalError` for a missing or corrupt journal.
        """
        contents = J.read_journal(path)
        replay = J.Replay()
        for i, event in enumerate(contents.events, start=1):
            replay.apply(event, i)
        ref = cls(J.Journal.open(path, clock=clock), replay, teach=teach)
        if replay.phase() == "game_end" or replay.phase() in ("game_start", "match_end"):
            ref._next_game()
        return ref

    def close(self) -> None:
        self.journal.close()

    # ------------------------------------------------------------------ state

    @property
    def phase(self) -> str:
        p = self.replay.phase()
        if p in ("opening_roll", "roll", "play") and not self.ready:
            return "setup"
        return p

    @property
    def position(self) -> Position | None:
        return self.replay.position

    @property
    def scoreboard(self):
        return self.replay.scoreboard

    @property
    def on_roll(self) -> Side | None:
        return None if self.replay.position is None or not self.replay.starter_known else self.replay.position.turn

    # ------------------------------------------------------------------ recording

    def _try(self, event: dict[str, Any]) -> str | None:
        """Why the rules refuse ``event`` now (None: they accept it)."""
        trial = copy.copy(self.replay)  # its fields are immutable values, replaced on each event
        try:
            trial.apply({"seq": trial.count + 1, "time": "1970-01-01T00:00:00+00:00", **event}, trial.count + 1)
        except J.JournalError as exc:
            return str(exc).split(": ", 1)[-1] if exc.line else str(exc)
        return None

    def _record(self, event: dict[str, Any]) -> None:
        reason = self._try(event)
        if reason is not None:
            raise J.JournalReplayError(f"the referee tried to record a refused {event['type']}: {reason}")
        stored = self.journal.append(event)
        self.replay.apply(stored, self.replay.count + 1)

    def _next_game(self) -> list[str]:
        """After a game (or at the start): record its end, the match's end, or the next game's start."""
        says: list[str] = []
        if self.replay.phase() == "game_end":
            outcome = self.replay.outcome
            self._record(J.game_end(outcome, None))
            if outcome.winner is None:
                says.append("the game is drawn")
            else:
                says.append(
                    f"{outcome.winner.value} wins {outcome.points} point{'s' if outcome.points != 1 else ''} ({outcome.kind})"
                )
        board = self.replay.scoreboard
        games = self.replay.spec.games
        if isinstance(board, MoneySession) and games is not None and self.replay.game >= games:
            self._record(J.match_end(None, self.score()))
            says.append(f"session over: white {board.points(Side.WHITE)}, black {board.points(Side.BLACK)}")
            return says
        if self.replay.phase() == "match_end":
            winner = board.winner
            self._record(J.match_end(winner, {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}))
            says.append(f"match over: {winner.value} wins {board.points(winner)}-{board.points(winner.other)}")
            return says
        if self.replay.phase() == "game_start":
            spec = self.replay.spec
            name = board.next_variant if isinstance(board, TavliMatch) else spec.variant
            variant = spec.make_variant(name)
            starter = board.next_starter if isinstance(board, TavliMatch) else None
            position = Position.start(variant, starter or Side.WHITE)
            self._record(J.game_start(self.replay.game + 1, position, starter))
            self.ready = False
            self._tracker = None
            says.append(f"game {self.replay.game}: {variant.label}; set up the board")
        return says

    # ------------------------------------------------------------------ calls

    def _calls(self, says: list[str] | tuple[str, ...] = (), *, buzzer: bool = False) -> Calls:
        leds = dict(self._leds)
        if self._cube_wrong is not None:
            # the cube the camera sees is not where the game has it: the bar between the halves
            leds.setdefault(Place.bar(Side.WHITE), AMBER)
        return Calls(leds, buzzer, tuple(says))

    def _refuse(self, why: str) -> Calls:
        return self._calls([why], buzzer=True)

    # ------------------------------------------------------------------ inputs

    def board(self, seen: Position) -> Calls:
        """A new board seen (by the sensors, the camera or both): follow the set-up or the turn.

        The same board seen again (a sensor board repeats its snapshot) changes nothing: what is lit
        stays lit, and the buzzer sounds again while something is lit red, until the board is put right.
        """
        phase = self.phase
        if phase == "play" and seen == self.seen:
            return self._calls(buzzer=RED in self._leds.values())
        self.seen = seen
        if phase == "setup":
            target = self.replay.position
            wrong = board_diff(target, seen)
            nxt = self.replay.phase()
            # resumed in the middle of a turn: the checkers already moved may stay where a legal play has them
            mid_turn = bool(wrong) and nxt == "play" and TurnTracker(target, self.replay.roll).on_the_way(seen)
            if wrong and not mid_turn:
                self._leds = {w: RED for w in wrong}
                return self._calls([f"set up {self.replay.variant.label}: {', '.join(map(str, wrong))} not right yet"])
            self.ready = True
            self._leds = {}
            if nxt == "opening_roll":
                return self._calls(["the board is set: each player throws one die"])
            if nxt == "play":
                what = "the opening " if self.replay.position.rolls == (0, 0) else ""
                calls = self._start_turn(
                    [
                        f"the board is set: {self.on_roll.value} plays {what}{self.replay.roll}"
                        + (", the checkers already moved where they are" if mid_turn else "")
                    ]
                )
                if mid_turn and self._tracker is not None:
                    self._last_good = seen
                return calls
            return self._calls([f"the board is set: {self.on_roll.value} to roll"])
        if phase == "play" and self._tracker is not None:
            if self._tracker.on_the_way(seen):
                self._last_good = seen
                self._leds = {}
                return self._calls()
            # what changed since the last good board, narrowed to where it differs from the nearest legal result
            changed = board_diff(self._last_good or self.replay.position, seen)
            nearest = set(check(self.replay.position, self.replay.roll, seen).wrong)
            wrong = tuple(w for w in changed if w in nearest) or changed
            self._leds = {w: RED for w in wrong}
            return self._calls([f"{', '.join(map(str, wrong))}: no legal play passes through this board"], buzzer=True)
        if phase in ("roll", "opening_roll", "cube_answer", "resign_answer") and self.replay.position is not None:
            wrong = board_diff(self.replay.position, seen)
            self._leds = {w: RED for w in wrong}
            if wrong:
                return self._calls(
                    [f"{', '.join(map(str, wrong))}: the board changed out of turn; put it back"], buzzer=True
                )
            return self._calls()
        return self._calls()

    def conflict(self, points) -> Calls:
        """Checkers of both colours seen on ``points`` where no pin can explain them: a checker put on
        a point that is not open to it (a blocked point, or any opposing checker where there is no hitting).
        ``points`` are places (a :class:`~board_rules.Place` or a point number)."""
        wrong = tuple(Place.parse(p) for p in points)
        if not wrong:
            return self._calls()
        self._leds = {w: RED for w in wrong}
        return self._calls([f"{', '.join(map(str, wrong))}: a checker on a point that is not open to it"], buzzer=True)

    def opening(self, white_die: int, black_die: int) -> Calls:
        """The opening roll: one die thrown by each side."""
        if self.phase != "opening_roll":
            return self._refuse(f"no opening roll now ({self.phase})")
        event = J.opening_roll(white_die, black_die)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(reason)
        self._record(event)
        if not self.replay.starter_known:
            says = [f"white {white_die}, black {black_die}: a tie, throw again"]
            cube = self.replay.cube
            doubled = cube.automatic_double() if cube is not None and cube.options.automatic_doubles else cube
            if doubled is not None and doubled.value != cube.value:
                self._record(J.cube("automatic", None, doubled.value))
                says.append(f"an automatic double: the cube turns to {doubled.value}, in the centre")
            return self._calls(says)
        says = [f"white {white_die}, black {black_die}: {self.on_roll.value} starts"]
        if not self.replay.roll_played:
            return self._start_turn(says + [f"{self.on_roll.value} plays {self.replay.roll}"])
        return self._calls(says + [f"{self.on_roll.value} to roll"])

    def opening_dice(
        self, values: tuple[int, int], halves: tuple[str | None, str | None], *, cocked: bool = False
    ) -> Calls:
        """The opening roll as the camera sees it: each player's one die, which must come to rest in
        that player's own right-hand board (white's die in ``"right"``, black's in ``"left"``, as white
        sees it). A cocked die, or two dice in one half, are thrown again."""
        if self.phase != "opening_roll":
            return self._calls()
        if cocked:
            return self._refuse("a cocked die: throw again")
        by_half = dict(zip(halves, values))
        white, black = by_half.get(RIGHT_HAND_HALF[Side.WHITE]), by_half.get(RIGHT_HAND_HALF[Side.BLACK])
        if len(by_half) != 2 or white is None or black is None:
            return self._refuse("opening roll: each player throws one die into their own right-hand board: throw again")
        return self.opening(white, black)

    def dice(
        self, values: tuple[int, int] | None, *, halves: tuple[str | None, ...] = (), cocked: bool = False
    ) -> Calls:
        """The dice at rest (``values``), or picked up (None: that ends the turn, as the end-of-turn button).

        ``halves`` are where each die lies (``"left"``/``"right"`` as white sees it, None off the
        playing field); a cocked die or a die outside the thrower's right-hand board is thrown again.
        """
        if values is None:
            return self.button("end-turn") if self.phase == "play" else self._calls()
        if self.phase != "roll":
            return self._calls()
        side = self.on_roll
        if cocked:
            return self._refuse("a cocked die: throw again")
        if self.dice_rule and halves and any(h != RIGHT_HAND_HALF[side] for h in halves):
            return self._refuse(f"the dice must come to rest in {side.value}'s right-hand board: throw again")
        try:
            roll = Roll(*values)
        except ValueError as exc:
            return self._refuse(str(exc))
        event = J.roll(side, roll)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(reason)
        self._record(event)
        return self._start_turn([f"{side.value} rolls {roll}"])

    def _start_turn(self, says: list[str]) -> Calls:
        position, roll = self.replay.position, self.replay.roll
        side = position.turn
        try:  # only whether there is any play matters here: a long listing means there is
            options = legal_plays(position, roll, budget=2_000)
        except SearchBudgetExceeded:
            options = None
        if options is not None and len(options) == 1 and not options[0][0]:
            self._record(J.pass_turn(side, roll))
            says.append(f"{side.value} has no legal play with {roll}: the turn passes")
            return self._after_play(says)
        self._tracker = TurnTracker(position, roll)
        self._last_good = position
        self._leds = {}
        return self._calls(says)

    def _after_play(self, says: list[str]) -> Calls:
        self._tracker = None
        self._leds = {}
        if self.replay.phase() == "game_end":
            says.extend(self._next_game())
        elif self.replay.phase() == "roll":
            says.append(f"{self.on_roll.value} to roll")
        return self._calls(says)

    def lifted(self, where: Place) -> Calls:
        """A checker lifted from ``where`` (a point or the mover's bar): in teaching mode, light where it may land."""
        if not self.teach or self.phase != "play" or self._tracker is None:
            return self._calls()
        board = self._last_good or self.replay.position
        try:
            landing = self._tracker.landing_points(board, where)
        except ValueError:
            landing = ()
        self._leds = {p: GREEN for p in landing}
        return self._calls([f"from {where}: " + (", ".join(map(str, landing)) if landing else "nowhere")])

    def panel(self, action: str, side: Side | None = None) -> Calls:
        """An action from the Raspberry Pi panel (:data:`firmware_bridge.panel.ACTIONS`)."""
        if action == "cycle_resignation_level":
            self._resign_level = self._resign_level % 3 + 1
            return self._calls([f"resignation level: {['', 'single', 'gammon', 'backgammon'][self._resign_level]}"])
        if action == "offer_resignation":
            return self.button(f"resign-{self._resign_level}", side)
        if action == "hide_hint":
            self._leds = {}
            return self._calls()
        if action in ("undo_checker_move", "undo_play"):
            return self._undo()
        name = {"end_turn": "end-turn", "show_hint": "hint"}.get(action, action)
        return self.button(self._in_context(name), side)

    def _undo(self) -> Calls:
        """The undo button: the board is the record, so the referee shows how to put it back as the
        turn began (blue: lift from here, green: put back here, amber: a hit to take back); the tracker
        follows it back. A play once ended is in the journal and stays."""
        if self.phase != "play" or self._tracker is None:
            return self._calls(["nothing to undo now: a play once ended is in the record"])
        start, board = self.replay.position, self.seen or self._last_good or self.replay.position
        places = board_diff(start, board)
        if not places:
            return self._calls(["nothing to undo: the board is as the turn began"])
        sides = (start.turn, start.turn.other)
        leds = {}
        for w in places:
            gained, lost = any(_more(board, start, s, w) for s in sides), any(_more(start, board, s, w) for s in sides)
            leds[w] = AMBER if gained and lost else (BLUE if gained else GREEN)
        self._leds = leds
        return self._calls(
            [
                "to take the play back, lift from the blue places, put back on the green"
                + (
                    ", and where amber put the hit checker back in place of the hitter"
                    if AMBER in leds.values()
                    else ""
                )
            ]
        )

    def _in_context(self, name: str) -> str:
        """What a panel button means now: the panel has no accept, refuse or raccoon buttons. A
        resignation is answered with take (accept) or pass (refuse); after a beaver, the doubler's
        take-and-redouble (a long press of take) is the raccoon; where beavers are not played, a long
        press of take is a take."""
        if self.phase == "resign_answer":
            return {"take": "accept", "pass": "refuse"}.get(name, name)
        cube = self.replay.cube
        if name != "beaver" or cube is None or getattr(cube, "offer", None) is None:
            return name
        if cube.offer.value == "beaver":
            return "raccoon"
        return name if cube.options.beavers else "take"  # without beavers a long press of take is a take

    def button(self, name: str, side: Side | None = None) -> Calls:
        """A panel button: ``end-turn``, the cube's (``double`` ... ``raccoon``), ``resign-1..3``,
        ``accept``/``refuse`` (a resignation) and ``hint``. ``side`` is who pressed it where the panel knows."""
        if name not in BUTTONS:
            return self._refuse(f"unknown button {name!r}; expected one of {', '.join(BUTTONS)}")
        if name == "end-turn":
            return self._end_turn()
        if name == "hint":
            return self._hint()
        if self.replay.position is None:
            return self._refuse(f"{name}: no game in progress")
        if name in ("double", "take", "pass", "beaver", "raccoon"):
            cube = self.replay.cube
            if side is not None:
                who = side
            elif name == "double":
                who = self.on_roll
            else:  # take, pass, beaver, raccoon: the side the last offer was made to (a beaver's: the doubler)
                who = cube.offered_by.other if cube.offered_by is not None else self.on_roll
            event = J.cube(name, who, None)
            reason = self._try(event)
            if reason is not None:
                return self._refuse(f"{name}: {reason}")
            self._record(event)
            says = [f"{who.value}: {name}" + (f" (cube at {self.replay.cube.value})" if name != "pass" else "")]
            if self.replay.phase() == "game_end":
                return self._after_play(says)
            return self._calls(says)
        if name.startswith("resign-"):
            who = side or self.on_roll
            event = J.resign("offer", who, int(name[-1]))
            reason = self._try(event)
            if reason is not None:
                return self._refuse(f"resign: {reason}")
            self._record(event)
            return self._calls(
                [f"{who.value} offers to resign ({['', 'single', 'gammon', 'backgammon'][int(name[-1])]})"]
            )
        # accept / refuse a resignation: by the side that did not offer
        offered_by = self.replay.cube.resigned_by
        if offered_by is None:
            return self._refuse(f"{name}: no resignation offered")
        who = side or offered_by.other
        event = J.resign("accept" if name == "accept" else "refuse", who)
        reason = self._try(event)
        if reason is not None:
            return self._refuse(f"{name}: {reason}")
        self._record(event)
        if self.replay.phase() == "game_end":
            return self._after_play([f"{who.value} accepts the resignation"])
        return self._calls([f"{who.value} refuses the resignation"])

    def _end_turn(self) -> Calls:
        if self.phase != "play" or self._tracker is None:
            return self._calls()
        position, roll = self.replay.position, self.replay.roll
        seen = self.seen or position
        side = position.turn
        verdict = check(position, roll, seen)
        if not verdict.legal:
            expected = str(verdict.play) if verdict.play is not None else None
            self._record(J.correction(side, roll, [p.to_json() for p in verdict.wrong], seen, expected))
            self._leds = {w: RED for w in verdict.wrong}
            near = f"; the nearest legal play is {expected}" if expected else ""
            return self._calls(
                [
                    f"{side.value} {roll}: not a legal play: {', '.join(map(str, verdict.wrong))} wrong{near}"
                    + _one_checker_off(position, roll, seen, verdict)
                ],
                buzzer=True,
            )
        text = str(verdict.play) if verdict.play is not None else ""
        after = position.play(text, roll) if text else position
        if board_diff(after, seen):  # the rules' result must be the board on the table
            return self._refuse("the board does not match the play found; put it right")
        self._record(J.play(side, roll, verdict.play, position, after))
        return self._after_play([f"{side.value} plays {text}"])

    def _hint(self) -> Calls:
        if not self.teach:
            return self._refuse("hints are for teaching mode (--teach)")
        if self.phase != "play":
            return self._calls(["a hint comes once the dice are thrown"])
        from referee.evaluate import best_play

        position, roll = self.replay.position, self.replay.roll
        best = best_play(position, roll)
        if best is None:
            return self._calls(["no legal play"])
        after = position.play(best, roll)
        # blue where the player's checkers leave from (a point, the bar), green where they arrive,
        # amber where only the opponent's change (a hit checker going to the bar)
        side = position.turn
        self._leds = {
            w: BLUE if _more(position, after, side, w) else GREEN if _more(after, position, side, w) else AMBER
            for w in board_diff(position, after)
        }
        hit = " (amber: the hit checker goes to the bar)" if AMBER in self._leds.values() else ""
        return self._calls([f"best play: {best}{hit}"])

    def cube_seen(self, where: str | None, value: int | None) -> Calls:
        """The cube where the camera sees it (``centre``, ``white``, ``black``): said if it disagrees with the game."""
        cube = self.replay.cube
        if cube is None or where is None:
            return self._calls()
        owner = getattr(cube, "owner", None)
        expected = "centre" if owner is None else owner.value
        if where != expected or (value is not None and value != cube.value):
            said = f"the cube should be at {expected} showing {cube.value if cube.value > 1 else 64}"
            first, self._cube_wrong = self._cube_wrong != said, said
            return self._calls([said] if first else [])  # the bar stays amber (see _calls) until the cube is right
        self._cube_wrong = None
        return self._calls()

    def score(self) -> dict[str, int]:
        board = self.replay.scoreboard
        if isinstance(board, MoneySession):
            return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}
        return {"white": board.points(Side.WHITE), "black": board.points(Side.BLACK)}


def _one_checker_off(position: Position, roll: Roll, seen: Position, verdict) -> str:
    """``"; one checker off: ..."`` when ``seen`` is the nearest legal result but for one checker of either side
    in the wrong place (the rules decide between near positions); else ``""``."""
    if verdict.play is None:
        return ""
    nearest = position.play(str(verdict.play), roll)
    diff = sum(abs(_held(seen, s, w) - _held(nearest, s, w)) for s in (Side.WHITE, Side.BLACK) for w in verdict.wrong)
    if diff != 2:
        return ""
    for side in (position.turn, position.turn.other):
        extra = [w for w in verdict.wrong if _held(seen, side, w) > _held(nearest, side, w)]
        short = [w for w in verdict.wrong if _held(seen, side, w) < _held(nearest, side, w)]
        if len(extra) == len(short) == 1:
            (a,), (b,) = extra, short
            if _held(seen, side, a) - _held(nearest, side, a) == 1:
                return f"; one checker off it: {side.value}'s checker on {a} belongs on {b}"
    return ""


def _held(position: Position, side: Side, where: Place) -> int:
    """How many of ``side``'s checkers ``where`` holds (a point, or ``side``'s own bar or tray)."""
    if where.is_point:
        return position.count(side, where.number)
    if where.side is not side:
        return 0
    return (position.bar if where.kind is PlaceKind.BAR else position.off)[0 if side is Side.WHITE else 1]


def _more(now: Position, before: Position, side: Side, where: Place) -> bool:
    return _held(now, side, where) > _held(before, side, where)
