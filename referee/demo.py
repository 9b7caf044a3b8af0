"""``tavli demo``: a refereed game on the emulated table, no hardware needed.

The demo is the table loop (:class:`referee.loop.TableSession`) fed by stand-ins
reached the way the real parts are: the board emulator on a pseudo-terminal (the
sensor board), the renderer read by the camera pipeline (the camera; a hand covers
the board while a player moves) and gpiozero's mock pins (the panel). Two stand-in
players (:func:`referee.players.choose`) play a game of backgammon or a short match;
one slips a checker once and one doubles once. The journal and its exports (``.jsonl``,
``.mat``, ``.txt``) are left in ``--out``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from board_rules import Position, Side
from board_rules.legality import board_diff
from board_rules.untrusted import check_output_folder
from referee import events as E
from referee.broker import BrokerAddress, TablePublisher, check_name
from referee.errors import JournalError
from referee.export import export
from referee.fusion import fuse
from referee.loop import TableSession
from referee.players import choose
from referee.record import Phase
from referee.session import Referee
from referee.spec import MatchSpec
from referee.standins import DemoTable, cube_for_camera
from referee.textboard import render as text_board
from referee.web import LivePage, WebAddressError, parse_address

MAX_STEPS = 4000


class DemoError(JournalError):
    """A demo option that makes no sense."""


WAIT_S = 3.0  # how long a player waits for the referee to answer an action


def slip(after: Position, side: Side, rng: random.Random) -> Position | None:
    """``after`` with one of ``side``'s checkers put one point further on (a player's slip)."""
    pts = list(after.points)
    own = [w for w in range(2, 25) if pts[w - 1] * side.sign > 0 and pts[w - 2] * side.sign >= 0]
    if not own:
        return None
    w = rng.choice(own)
    pts[w - 1] -= side.sign
    pts[w - 2] += side.sign
    try:
        return replace(after, points=tuple(pts))
    except ValueError:
        return None


class _Demo:
    """The two stand-in players at the demo table, and what they see the referee do."""

    def __init__(self, seed: int, match: int, quiet: bool, camera: bool, journal: Path, console: Console) -> None:
        self.rng = random.Random(seed)
        self.quiet = quiet
        self.console = console
        spec = MatchSpec("money", 0, "backgammon") if match == 0 else MatchSpec("match", match, "backgammon")
        self.table = DemoTable(seed, camera=camera)
        self.ref = Referee.new(journal, spec, white="Alice", black="Bob", games=1 if match == 0 else None)
        self.session = TableSession(
            self.ref, link=self.table.link, camera=self.table.camera, panel=self.table.panel, say=self._say
        )
        self.session.hand_pause_s = float("inf")  # the players' hands cover the board for a whole play
        self.leds: dict = {}
        self.dice: tuple[int, ...] | None = None
        self.live = Live(console=console, refresh_per_second=8, transient=True)
        self.ref.stream.subscribe(self._seen)
        self.agreed = self.compared = 0
        self.pace = 0.0

    # -- what the players see: the live table, redrawn from the referee's events
    def _seen(self, item: E.Stamped) -> None:
        event = item.event
        if isinstance(event, E.LedsLit):
            self.leds = dict(event.leds)
        elif isinstance(event, E.Rolled | E.OpeningRolled):
            self.dice = (event.dice.d1, event.dice.d2) if isinstance(event, E.Rolled) else (event.white, event.black)
        self.live.update(self.view(), refresh=True)

    def view(self) -> Group:
        """The board as last seen, the dice, the cube, the LEDs lit and the phase."""
        ref = self.ref
        shown = ref.seen or ref.position
        lines = [text_board(shown, title="  the table", leds=self.leds)] if shown is not None else []
        cube = ref.record.cube
        owner = "centre" if cube is None or cube.owner is None else cube.owner.value
        leds = ", ".join(f"{w} {c}" for w, c in self.leds.items()) or "all dark"
        dice = "-".join(map(str, self.dice)) if self.dice else "none"
        value = cube.value if cube else 1
        lines.append(Text(f"  dice: {dice}   cube: {value} ({owner})   LEDs: {leds}   phase: {ref.phase}"))
        return Group(*lines)

    def _say(self, text: str) -> None:
        if not text.startswith("referee: "):
            self.console.print(f"  [yellow]table:[/yellow] {text}")
            return
        buzz = "no legal" in text or "not a legal" in text or "throw again" in text or "put it" in text
        if self.quiet and not buzz and not any(w in text for w in ("wins", "over", "double", "take", "game ")):
            return
        colour = "red" if buzz else "green"
        lit = ", ".join(f"{w} {c}" for w, c in self.leds.items())
        self.console.print(
            f"  [{colour}]referee:[/{colour}] {text[9:]}" + (f"  [dim](LEDs: {lit})[/dim]" if lit else "")
        )

    # -- acting and waiting for the referee
    def wait(self, until: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.session.pump(0.02)
            if until():
                return True
        return False

    def _wait_pace(self) -> None:
        if self.pace:
            self.wait(lambda: False, self.pace)  # the loop runs on while the players take their time

    def put(self, position: Position) -> None:
        """Put the checkers so, and wait until the referee has seen the board."""
        self._wait_pace()
        self.table.put(position)
        self.wait(lambda: self.ref.seen is not None and not board_diff(self.ref.seen, position))

    def press(self, name: str) -> None:
        self._wait_pace()
        before = self.ref.stream.seq
        self.table.press(name)
        self.wait(lambda: self.ref.stream.seq != before)

    def throw(self, dice: list[tuple[int, str]], *, cocked: bool = False) -> bool:
        """Throw ``dice`` (value, half) in front of the camera; True when the referee read a throw from them."""
        self._wait_pace()
        ref = self.ref
        before = ref.phase
        obs = self.table.camera.throw(ref.position, dice, cube_for_camera(ref), cocked=cocked)
        self.wait(lambda: not self.table.camera.pending and ref.phase != before, 1.0)
        if obs.checkers is not None and self.session.board_seen is not None and ref.position is not None:
            c = obs.checkers
            fused = fuse(
                ref.position, self.session.board_seen, (c.points, c.bar, c.off), camera_confidence=c.confidence
            )
            self.compared += 26
            self.agreed += 26 - len(fused.disagree)
        return ref.phase != before

    def type(self, line: str) -> None:
        self._wait_pace()
        self.session.command(line)
        self.session.pump(0.02)


def run_demo(
    seed: int = 7,
    match: int | None = None,
    quiet: bool = False,
    camera: bool = True,
    out: str | Path = "demo-match",
    web: str | None = None,
    pace: float = 0.0,
    broker: str | None = None,
    hall: str = "club",
    table_id: str = "demo",
) -> int:
    """Play a refereed game (``match`` 0) or a match to ``match`` points on the emulated table; returns the exit
    status. ``web`` (``[HOST:]PORT``) serves the live table page; ``pace`` waits that long between actions;
    ``broker`` (``mqtt://...``) publishes the table there as ``table_id`` of ``hall``."""
    if not 0 <= pace < 3600:  # NaN fails too
        raise DemoError(f"--pace: {pace!r}: give a number of seconds, 0 or more (under an hour)")
    if match is not None and match < 1:
        raise DemoError(f"--match: {match!r}: a match is to 1 point or more (leave it out for one money game)")
    match = match or 0
    address = parse_address(web) if web is not None else None
    hall_address = BrokerAddress.parse(broker) if broker is not None else None
    check_name(hall, "--hall")
    check_name(table_id, "--table")
    console = Console(highlight=False)
    out = check_output_folder(out, "--out", DemoError)
    journal = out / f"match-{seed}.jsonl"
    if journal.exists():
        journal.unlink()
    demo = _Demo(seed, match, quiet, camera, journal, console)
    demo.pace = pace
    ref, rng, table = demo.ref, demo.rng, demo.table
    page = publisher = None
    if address is not None:
        try:
            page = LivePage(ref, host=address[0], port=address[1], camera=table.camera).start()
        except WebAddressError:
            ref.close()
            table.close()
            raise
        console.print(f"  the live table: {page.url}")
    if hall_address is not None:
        say = lambda text: console.print(f"  {text}")  # noqa: E731
        publisher = TablePublisher(ref, hall_address, hall, table_id, paused=demo.session.paused, say=say).start()
    what = "a game of backgammon" if match == 0 else f"a backgammon match to {match}"
    console.print(f"[bold]tavli-table demo[/bold]: {what} refereed on the emulated table (seed {seed})")
    console.print(
        f"  sensor board on {table.board.emulator.path}; camera: {'rendered frames' if camera else 'off (dice typed in)'}; "
        "panel: gpiozero mock pins"
    )
    demo.live.start()
    slip_turn = rng.randint(3, 8)
    double_turn = rng.randint(2, 6)
    cocked_turn = rng.randint(1, 5)
    turns = games = misses = 0
    doubled = slipped = False
    try:
        for _ in range(MAX_STEPS):
            phase = ref.phase
            if phase is Phase.OVER:
                break
            if phase is Phase.SETUP:
                if ref.record.game != games:
                    games = ref.record.game
                    if camera and table.camera.geometry is None:
                        table.camera.calibrate(ref.position)
                    console.print(text_board(ref.position, title=f"  game {games}: set up"))
                demo.put(ref.position)
            elif phase is Phase.OPENING_ROLL:
                w, b = rng.randint(1, 6), rng.randint(1, 6)
                if not camera or misses >= 2 or not demo.throw([(w, "right"), (b, "left")]):
                    if camera and misses < 2:
                        misses += 1
                        continue
                    demo.type(f"opening {w} {b}")
                misses = 0
            elif phase is Phase.ROLL:
                if not doubled and turns >= double_turn and ref.record.cube.value == 1 and ref.record.variant.has_cube:
                    doubled = True
                    demo.press("double")
                    if ref.phase is Phase.CUBE_ANSWER:
                        demo.press("take")
                    continue
                values = (rng.randint(1, 6), rng.randint(1, 6))
                side = ref.on_roll
                half = "right" if side is Side.WHITE else "left"
                if camera and misses < 2:
                    cocked = turns == cocked_turn
                    if cocked:
                        cocked_turn = -1
                    if not demo.throw([(values[0], half), (values[1], half)], cocked=cocked):
                        misses += 1
                        continue
                else:
                    if camera:
                        console.print(
                            f"  [yellow]camera:[/yellow] the throw was not read three times: {side.value} "
                            f"enters {values[0]}-{values[1]} on the keyboard"
                        )
                    demo.type(f"roll {values[0]} {values[1]}")
                misses = 0
                turns += 1
            elif phase is Phase.PLAY:
                side, roll = ref.on_roll, ref.record.roll
                play, after = choose(ref.position, roll, rng)
                if camera:
                    table.camera.hand_over_board()
                    demo.wait(lambda: not table.camera.pending)
                if not slipped and turns >= slip_turn:
                    wrong = slip(after, side, rng)
                    if wrong is not None:
                        slipped = True
                        console.print(f"  [yellow]{side.value} slips a checker one point too far[/yellow]")
                        demo.put(wrong)
                        demo.press("end_turn")
                        console.print("  [yellow]... and puts it right[/yellow]")
                demo.put(after)
                demo.press("end_turn")
                if not quiet:
                    console.print(f"  {turns:>3}. {side.value:<5} {roll}  {play or '(no legal play)'}")
            elif phase in (Phase.CUBE_ANSWER, Phase.RESIGN_ANSWER):
                demo.press("take")
            else:  # pragma: no cover - a phase the demo does not drive
                raise RuntimeError(f"the demo cannot go on from {phase!r}")
        else:  # pragma: no cover
            raise RuntimeError(f"the demo did not finish in {MAX_STEPS} steps")
    finally:
        demo.live.stop()
        if publisher is not None:
            publisher.close()
        ref.close()
        table.close()
        if page is not None:
            page.stop()
    if demo.compared:
        console.print(
            f"  board and camera agreed on {demo.agreed} of {demo.compared} places (points, bar, trays) at the throws"
        )
    if ref.position is not None:
        console.print(text_board(ref.position, title="  the table now"))
    score = ref.score()
    console.print(f"[bold green]score: white (Alice) {score['white']}, black (Bob) {score['black']}[/bold green]")
    written = [journal]
    for fmt in ("mat", "txt"):
        target = out / f"match-{seed}.{fmt}"
        target.write_text(export(journal, fmt), encoding="utf-8")
        written.append(target)
    console.print("  the match record: " + ", ".join(str(p) for p in written))
    return 0
