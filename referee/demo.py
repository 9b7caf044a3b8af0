"""``tavli demo``: a refereed game on the emulated table, no hardware needed.

The table is made of the project's stand-ins, each reached the way the real part is:

* the **sensor board** is the board emulator on a pseudo-terminal, read and lit by the
  host link (:class:`referee.table.EmulatedTable`);
* the **camera** is the table renderer (:mod:`vision.render`): every throw is drawn as
  a camera frame and read by the camera pipeline (:func:`vision.observe.read_frame`),
  calibrated from the first frame's markers, with the colours learned on the start;
* the **panel** is :class:`firmware_bridge.panel.Panel` on gpiozero's mock pins: the
  players' buttons are presses on those pins.

Two stand-in players (:func:`referee.players.choose`) play a game of backgammon (or a
short match, ``--match N``) refereed by :class:`referee.session.Referee`: one of them
"slips" a checker once (the referee lights the wrong points red and has it put
right) and doubles once (the other takes). The match journal and its exports are
left in ``--out`` (``.jsonl``, ``.mat``, ``.txt``).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from board_rules import Position, Side
from referee.fusion import fuse
from referee.journal import MatchSpec
from referee.play import table_leds
from referee.players import choose
from referee.session import Calls, Referee
from referee.table import EmulatedTable, led_frame
from referee.textboard import render

MAX_STEPS = 4000


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


class _Clock:
    """The panel's clock: moved by hand, so pressing a mock button needs no sleep."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class DemoTable:
    """The emulated table: sensor board on a pseudo-terminal, rendered camera, panel on mock pins."""

    def __init__(self, seed: int, *, camera: bool = True) -> None:
        from gpiozero.pins.mock import MockFactory

        from firmware_bridge.panel import Panel, PanelConfig

        self.board = EmulatedTable(seed=seed)
        self.seed = seed
        self.camera = camera
        self.shots = 0
        self._factory = MockFactory()
        self._clock = _Clock()
        self._panel_config = PanelConfig.load()
        self.panel = Panel(self._panel_config, pin_factory=self._factory, clock=self._clock)
        self.geometry = None
        self.palette = None

    def close(self) -> None:
        self.panel.close()
        self.board.close()

    # -- the sensor board
    def put(self, position: Position) -> Position:
        """The players put the checkers so; returns what the board reads."""
        return self.board.show(position)

    def show(self, calls: Calls) -> None:
        """Light the board as the referee asks (every LED; unlit ones dark)."""
        self.board.link.send_leds(led_frame(table_leds(calls.leds)))

    # -- the panel
    def press(self, name: str) -> str:
        """A player presses a panel button; returns the panel's event (the action the referee gets)."""
        pin = self._panel_config.buttons[name]
        self._factory.pin(pin).drive_low()
        self._clock.now += 0.2
        self._factory.pin(pin).drive_high()
        self._clock.now += 0.2
        event = self.panel.get_event(timeout=2.0)
        if event is None:
            raise RuntimeError(f"the panel gave no event for {name}")
        return event.action

    # -- the camera
    def calibrate(self, position: Position) -> None:
        from vision.calibrate import calibrate
        from vision.checkers import learn_palette
        from vision.render import render

        frame = render(position, seed=self.seed, scene_seed=self.seed)
        self.geometry = calibrate(frame.image)
        self.palette = learn_palette(self.geometry, frame.image, position)

    def throw(self, position: Position, values: tuple[int, int], thrower: Side, cube, *, cocked: bool = False):
        """The thrower's dice come to rest in their right-hand board; returns the camera's observation."""
        from vision.observe import read_frame
        from vision.render import FIELD_Y0, FIELD_Y1, GEOMETRY, DieSpec, camera_pose, render

        rng = random.Random(self.seed * 7919 + self.shots)
        self.shots += 1
        x0, _, x1, _ = GEOMETRY.right_half if thrower is Side.WHITE else GEOMETRY.left_half
        y = rng.uniform(FIELD_Y0 + 195, FIELD_Y1 - 195)  # the middle of the field, clear of most checkers
        xa = rng.uniform(x0 + 20, (x0 + x1) / 2 - 15)
        xb = rng.uniform((x0 + x1) / 2 + 15, x1 - 20)
        dice = [
            DieSpec(values[0], (xa, y + rng.uniform(-20, 20)), cocked=cocked),
            DieSpec(values[1], (xb, y + rng.uniform(-20, 20))),
        ]
        frame = render(
            position,
            dice=dice,
            cube=cube,
            camera=camera_pose(self.seed),
            seed=self.seed * 100003 + self.shots,
            scene_seed=self.seed,
        )
        return read_frame(self.geometry, frame.image, self.palette)


def _cube_for_camera(ref: Referee):
    cube = ref.replay.cube
    if cube is None or not ref.replay.variant.has_cube:
        return None
    return (1, "centre") if cube.owner is None else (cube.value, cube.owner.value)


def run_demo(
    seed: int = 7, match: int = 0, quiet: bool = False, camera: bool = True, out: str | Path = "demo-match"
) -> int:
    """Play a refereed game (``match`` 0) or a match to ``match`` points on the emulated table; returns the exit status."""
    console = Console(highlight=False)
    rng = random.Random(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    journal = out / f"match-{seed}.jsonl"
    if journal.exists():
        journal.unlink()
    spec = MatchSpec("money", 0, "backgammon") if match == 0 else MatchSpec("match", match, "backgammon")
    table = DemoTable(seed, camera=camera)
    ref = Referee.new(journal, spec, white="Alice", black="Bob", games=1 if match == 0 else None)
    what = "a game of backgammon" if match == 0 else f"a backgammon match to {match}"
    console.print(f"[bold]tavli-table demo[/bold]: {what} refereed on the emulated table (seed {seed})")
    console.print(
        f"  sensor board on {table.board.emulator.path}; camera: {'rendered frames' if camera else 'off (dice typed in)'}; panel: gpiozero mock pins"
    )

    live_state: dict = {"leds": {}, "dice": None}
    live = Live(console=console, refresh_per_second=8, transient=True)

    def view():
        """The live table: the board as last seen, the dice, the cube and the LED frame."""
        shown = ref.seen or ref.position
        lines = [render(shown, title="  the table")] if shown is not None else []
        cube = ref.replay.cube
        owner = "centre" if cube is None or cube.owner is None else cube.owner.value
        leds = ", ".join(f"{w} {c}" for w, c in live_state["leds"].items()) or "all dark"
        dice = "-".join(map(str, live_state["dice"])) if live_state["dice"] else "none"
        lines.append(
            Text(f"  dice: {dice}   cube: {cube.value if cube else 1} ({owner})   LEDs: {leds}   phase: {ref.phase}")
        )
        return Group(*lines)

    def call(calls: Calls, *, always: bool = False) -> None:
        table.show(calls)
        live_state["leds"] = dict(calls.leds)
        lit = ", ".join(f"{w} {c}" for w, c in calls.leds.items())
        for s in calls.says:
            if always or not quiet or calls.buzzer:
                colour = "red" if calls.buzzer else "green"
                console.print(f"  [{colour}]referee:[/{colour}] {s}" + (f"  [dim](LEDs: {lit})[/dim]" if lit else ""))
        live.update(view(), refresh=True)

    slip_turn = rng.randint(3, 8)
    double_turn = rng.randint(2, 6)
    cocked_turn = rng.randint(1, 5)
    turns = games = unread = 0
    doubled = slipped = False
    board_seen: Position | None = None
    agreed = compared = 0
    live.start()
    try:
        for _ in range(MAX_STEPS):
            phase = ref.phase
            if phase == "over":
                break
            if phase == "setup":
                if ref.replay.game != games:
                    games = ref.replay.game
                    if camera and table.geometry is None:
                        table.calibrate(ref.position)
                    console.print(render(ref.position, title=f"  game {games}: set up"))
                board_seen = table.put(ref.position)
                call(ref.board(board_seen), always=True)
            elif phase == "opening_roll":
                w, b = rng.randint(1, 6), rng.randint(1, 6)
                call(ref.opening(w, b), always=True)
            elif phase == "roll":
                side = ref.on_roll
                if not doubled and turns >= double_turn and ref.replay.cube.value == 1 and ref.replay.variant.has_cube:
                    doubled = True
                    call(ref.panel(table.press("double")), always=True)
                    if ref.phase == "cube_answer":
                        call(ref.panel(table.press("take")), always=True)
                    continue
                values = (rng.randint(1, 6), rng.randint(1, 6))
                if camera:
                    cocked = turns == cocked_turn
                    obs = table.throw(ref.position, values, side, _cube_for_camera(ref), cocked=cocked)
                    dice = [d for d in obs.dice if d.value is not None or d.cocked]
                    if obs.status != "settling" or len(dice) != 2:
                        unread += 1
                        if cocked:
                            cocked_turn = -1
                        if unread < 3:
                            console.print(
                                f"  [yellow]camera:[/yellow] {obs.status}, {len(obs.dice)} dice seen: the referee asks for a new throw"
                            )
                            continue
                        console.print(
                            f"  [yellow]camera:[/yellow] {len(obs.dice)} dice seen three times: {side.value} enters {values[0]}-{values[1]} on the keyboard"
                        )
                        unread = 0
                        turns += 1
                        call(ref.dice(values))
                        continue
                    unread = 0
                    if cocked or any(d.cocked for d in dice):
                        cocked_turn = -1
                        call(ref.dice((6, 6), cocked=True), always=True)
                        continue
                    if obs.cube is not None:
                        call(ref.cube_seen(obs.cube.where, obs.cube.value))
                    if (
                        board_seen is not None and obs.checkers is not None
                    ):  # the camera's checkers fused with the board's
                        c = obs.checkers
                        fused = fuse(ref.position, board_seen, (c.points, c.bar, c.off), camera_confidence=c.confidence)
                        compared += 28
                        agreed += 28 - len(fused.disagree)
                        if fused.disagree:
                            console.print(
                                f"  [yellow]camera:[/yellow] board and camera disagree at "
                                f"{', '.join(map(str, fused.disagree))} (lit amber; the board's count is kept)"
                            )
                    seen = tuple(d.value for d in dice)
                    live_state["dice"] = seen
                    calls = ref.dice(seen, halves=tuple(d.half for d in dice))
                else:
                    calls = ref.dice(values)
                    live_state["dice"] = values
                turns += 1
                call(calls)
            elif phase == "play":
                side, roll = ref.on_roll, ref.replay.roll
                position = ref.position
                play, after = choose(position, roll, rng)
                if not slipped and turns >= slip_turn:
                    wrong = slip(after, side, rng)
                    if wrong is not None:
                        slipped = True
                        console.print(f"  [yellow]{side.value} slips a checker one point too far[/yellow]")
                        call(ref.board(table.put(wrong)), always=True)
                        call(ref.panel(table.press("end_turn")), always=True)
                        console.print("  [yellow]... and puts it right[/yellow]")
                board_seen = table.put(after)
                call(ref.board(board_seen))
                call(ref.panel(table.press("end_turn")))
                if not quiet:
                    console.print(f"  {turns:>3}. {side.value:<5} {roll}  {play or '(no legal play)'}")
            elif phase in ("cube_answer", "resign_answer"):
                call(ref.panel(table.press("take")))
            else:  # pragma: no cover - a phase the demo does not drive
                raise RuntimeError(f"the demo cannot go on from {phase!r}")
        else:  # pragma: no cover
            raise RuntimeError(f"the demo did not finish in {MAX_STEPS} steps")
    finally:
        live.stop()
        ref.close()
        table.close()
    if compared:
        console.print(f"  board and camera agreed on {agreed} of {compared} places (points, bar, trays) at the throws")
    if ref.position is not None:
        console.print(render(ref.position, title="  the table now"))
    score = ref.score()
    console.print(f"[bold green]score: white (Alice) {score['white']}, black (Bob) {score['black']}[/bold green]")
    written = [journal]
    from referee.export import export

    for fmt in ("mat", "txt"):
        target = out / f"match-{seed}.{fmt}"
        target.write_text(export(journal, fmt), encoding="utf-8")
        written.append(target)
    console.print("  the match record: " + ", ".join(str(p) for p in written))
    return 0
