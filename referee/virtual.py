"""``tavli virtual``: the whole table stack, played by a person from the live page.

Owns :class:`VirtualTable`: the board emulator behind the host link, the renderer as
the camera, the mock panel and the referee, run by the one table loop. The page's
actions (a checker dragged, which the emulator lifts and puts as the hall sensors
would; the dice rolled, drawn and read by the camera pipeline; the panel's buttons)
are queued from the page server's thread and done on the loop's, in order. A hit
checker goes to its bar by itself. With ``against="hint"`` black is the hint engine.
"""

from __future__ import annotations

import queue
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from board_rules import Side
from board_rules.legality import board_diff
from board_rules.places import Place, PlaceKind
from referee.errors import JournalError
from referee.loop import TableSession
from referee.players import choose
from referee.record import Phase
from referee.session import Referee
from referee.spec import MatchSpec
from referee.standins import DemoTable, cube_for_camera

BUTTONS = ("end_turn", "double", "take", "pass", "resign", "hint")
ACTIONS = ("move", "roll", "press")


class VirtualError(JournalError):
    """An action from the page that cannot be done: the message names the field and the value."""


def parse_place(text: Any) -> Place:
    """A place as the page names it: ``"13"`` (white's numbering), ``"bar-white"``, ``"off-black"``."""
    if isinstance(text, str) and "-" in text:
        kind, _, side = text.partition("-")
        if kind in ("bar", "off") and side in ("white", "black"):
            return Place.bar(Side(side)) if kind == "bar" else Place.off(Side(side))
    if isinstance(text, str) and text.isascii() and text.isdigit() and 1 <= int(text) <= 24:
        return Place.point(int(text))
    raise VirtualError(f"place: {text!r}: give a point 1..24, bar-white, bar-black, off-white or off-black")


class VirtualTable:
    """A table played from the page (see the module docstring): :meth:`submit` actions, :meth:`run` the loop."""

    def __init__(
        self,
        journal: str | Path,
        *,
        variant: str = "backgammon",
        seed: int = 1,
        against: str | None = None,
        teach: bool = False,
        say: Callable[[str], None] = print,
    ) -> None:
        if against not in (None, "hint"):
            raise VirtualError(f"--against: {against!r}: the only stand-in player is 'hint'")
        self.rng = random.Random(seed)
        self.table = DemoTable(seed, camera=True)
        try:
            spec = MatchSpec("money", 0, variant, games=1)
            self.ref = Referee.new(journal, spec, white="white", black="hint" if against else "black", teach=teach)
        except Exception:
            self.table.close()
            raise
        self.session = TableSession(
            self.ref, link=self.table.link, camera=self.table.camera, panel=self.table.panel, say=say
        )
        self.session.hand_pause_s = float("inf")
        self.against = Side.BLACK if against else None
        self.actions: queue.Queue[dict] = queue.Queue()
        self.stopped = False
        self._game = 0

    # ------------------------------------------------------------------ from the page's thread

    def submit(self, action: Any) -> None:
        """Check an action from the page and queue it for the loop; raises :class:`VirtualError` naming the field."""
        if not isinstance(action, dict):
            raise VirtualError(f"action: {action!r} must be a JSON object")
        kind = action.get("action")
        if kind not in ACTIONS:
            raise VirtualError(f"action: {kind!r} must be one of {list(ACTIONS)}")
        if kind == "move":
            parse_place(action.get("from"))
            parse_place(action.get("to"))
        elif kind == "press" and action.get("button") not in BUTTONS:
            raise VirtualError(f"button: {action.get('button')!r} must be one of {list(BUTTONS)}")
        self.actions.put(action)

    # ------------------------------------------------------------------ on the loop's thread

    def run(self) -> int:
        """Run the table until the game is over or :meth:`stop`; returns the exit status."""
        try:
            while not self.stopped and self.ref.phase is not Phase.OVER:
                self.step()
        finally:
            self.close()
        return 0

    def stop(self) -> None:
        self.stopped = True

    def close(self) -> None:
        self.ref.close()
        self.table.close()

    def step(self, timeout: float = 0.05) -> None:
        """Do the queued actions, the stand-in's turn, the set-up, and let the loop handle what came in."""
        ref = self.ref
        if ref.phase is Phase.SETUP and ref.record.game != self._game:  # lay out the new game's checkers
            self._game = ref.record.game
            if self.table.camera.geometry is None:
                self.table.camera.calibrate(ref.position)
            self.table.put(ref.position)
        while True:
            try:
                action = self.actions.get_nowait()
            except queue.Empty:
                break
            try:
                self._do(action)
            except (VirtualError, ValueError) as exc:
                ref.notice(f"{action.get('action')}: {exc}")
            self.session.pump(0.02)
        if self.against is not None and ref.on_roll is self.against:
            self._stand_in_turn()
        self.session.pump(timeout)

    def _do(self, action: dict) -> None:
        kind = action["action"]
        if kind == "move":
            self.move(parse_place(action["from"]), parse_place(action["to"]))
        elif kind == "roll":
            self.roll()
        else:
            self.press(action["button"])

    def move(self, src: Place, dst: Place) -> None:
        """Lift the top checker from ``src`` and put it on ``dst``; a lone checker of the other side there goes to its bar."""
        emu = self.table.board.emulator
        position = self.ref.seen or self.ref.position
        if position is None:
            raise VirtualError("move: no game on the table")
        side = src.side if not src.is_point else _owner(position, src.number)
        if side is None:
            raise VirtualError(f"from: {str(src)!r} holds no checker")
        if dst.is_point and not position.variant.pins:
            there = position.points[dst.number - 1]
            if abs(there) == 1 and (there > 0) != (side is Side.WHITE):
                emu.move(dst.number, "bar", Side.WHITE if there > 0 else Side.BLACK)  # the hit checker to its bar
        emu.move(_emulator_place(src), _emulator_place(dst), side)

    def roll(self) -> None:
        """Throw the dice: one each in the opening (each player's own right-hand half), two for the side on roll."""
        ref = self.ref
        if ref.phase is Phase.OPENING_ROLL:
            dice = [(self.rng.randint(1, 6), "right"), (self.rng.randint(1, 6), "left")]
        elif ref.phase is Phase.ROLL:
            half = "right" if ref.on_roll is Side.WHITE else "left"
            dice = [(self.rng.randint(1, 6), half), (self.rng.randint(1, 6), half)]
        else:
            raise VirtualError(f"roll: not now ({ref.phase})")
        self.table.camera.throw(ref.position, dice, cube_for_camera(ref))

    def press(self, button: str) -> None:
        self.table.press({"resign": "offer_resignation"}.get(button, button))

    def _stand_in_turn(self) -> None:
        """The hint engine's turn: it answers the cube with a take, rolls and plays its best play."""
        ref = self.ref
        if ref.phase in (Phase.CUBE_ANSWER, Phase.RESIGN_ANSWER):
            self.press("take")
        elif ref.phase is Phase.ROLL:
            self.roll()
        elif ref.phase is Phase.PLAY:
            _, after = choose(ref.position, ref.record.roll, self.rng)
            self.table.put(after)
            deadline = time.monotonic() + 3.0
            while (ref.seen is None or board_diff(ref.seen, after)) and time.monotonic() < deadline:
                self.session.pump(0.02)
            self.press("end_turn")


def _owner(position, point: int) -> Side | None:
    """The side whose checker lies on top of ``point`` (a pinning checker is on top of the pinned one)."""
    n = position.points[point - 1]
    return None if n == 0 else (Side.WHITE if n > 0 else Side.BLACK)


def _emulator_place(place: Place) -> int | str:
    """A place as the board emulator names it: a point 1..24, ``"bar"`` or ``"off"`` (its side given apart)."""
    if place.is_point:
        return place.number
    return "bar" if place.kind is PlaceKind.BAR else "off"


def run_virtual(args, say: Callable[[str], None] = print) -> int:
    """``tavli virtual``: build the table, serve its page, and run it until the game ends or Ctrl-C."""
    from referee.web import LivePage, parse_address

    host, port = parse_address(args.web)
    journal = Path(args.journal or time.strftime("virtual-%Y%m%d-%H%M%S.jsonl"))
    table = VirtualTable(journal, variant=args.variant, seed=args.seed, against=args.against, teach=args.teach, say=say)
    try:
        page = LivePage(table.ref, host=host, port=port, actions=table.submit, camera=table.table.camera).start()
    except Exception:
        table.close()
        raise
    say(f"the virtual table: {page.url}   (journal: {journal}; Ctrl-C stops)")
    try:
        return table.run()
    except KeyboardInterrupt:
        say("stopped; the journal keeps the game")
        return 0
    finally:
        page.stop()
