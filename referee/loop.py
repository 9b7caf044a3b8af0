"""The one table loop: sources in, the game flow in the middle, sinks out.

Owns :class:`TableSession`. Sources are injected and optional: the sensor board's link,
a camera (``read()`` gives an observation or None), the Raspberry Pi panel and keyboard
lines. Readings become the flow's inputs (:class:`referee.inputs.Readings`); what the
referee decides is published on its event stream, to which the loop subscribes the
LEDs, the buzzer and the terminal. ``tavli play`` and ``tavli demo`` both run it.
Faults pause, never lose: an unplugged board, a stopped camera or a hand over the board
is said, and the turn waits. Keyboard lines: :mod:`referee.keyboard` (``help`` lists them).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from board_rules import Position, Side
from board_rules.places import Place
from firmware_bridge.leds import led_frame
from firmware_bridge.link import LinkEvent
from firmware_bridge.protocol import Area, Lift, Snapshot
from firmware_bridge.sensing import counts_from_slots
from referee import flow as F
from referee import keyboard
from referee.inputs import Readings, read_board
from referee.record import Phase
from referee.session import Referee
from referee.stream import BuzzerSink, LedSink, TerminalSink


class TableSession:
    """The loop of a refereed match at a table. Sources are optional; :meth:`pump` handles what has arrived."""

    def __init__(
        self,
        referee: Referee,
        *,
        link=None,
        camera=None,
        panel=None,
        lines: Iterable[str] | None = None,
        say: Callable[[str], None] = print,
        hand_pause_s: float = 5.0,
        draw: Callable[[Position, dict], None] | None = None,
    ) -> None:
        self.referee = referee
        self.draw = draw  # at a terminal: draws the board with its LEDs after each typed line that changed it
        self.link = link
        self.camera = camera  # an object with read() -> Observation | None (see referee.play.CameraSource)
        self.panel = panel
        self.say = say
        self.commands: queue.Queue[str] = queue.Queue()
        self.stopped = False
        self.readings = Readings()
        self._board_present = link is not None
        self.hand_pause_s = hand_pause_s
        self._hidden_since: float | None = None  # when the camera last lost its view of the board
        self._hidden_said = False
        stream = referee.stream
        if link is not None:
            stream.subscribe(LedSink(link, led_frame))
            self._light()
        if panel is not None:
            stream.subscribe(BuzzerSink(panel))
        stream.subscribe(TerminalSink(say))
        if lines is not None:
            threading.Thread(target=self._read_lines, args=(lines,), daemon=True).start()

    def _read_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.commands.put(line)
        self.commands.put("eof")

    def _light(self) -> None:
        """Send the board the LED frame the referee wants now (the stream sends only changes)."""
        self.link.send_leds(led_frame(self.referee.flow.leds))

    @property
    def board_seen(self):
        """The sensor board's latest reading (a position, or counts that are not one yet)."""
        return self.readings.board_seen

    @property
    def camera_seen(self):
        return self.readings.camera_seen

    # ------------------------------------------------------------------ to the flow

    def _feed(self, inputs: Iterable[F.Input]) -> None:
        for what in inputs:
            if isinstance(what, F.SeenDice) and what.values is None:
                self._end_turn(what)
            else:
                self.referee.handle(what)

    def _end_turn(self, ending: F.Input) -> None:
        """End the turn unless a source is down: the last board seen may not be the board now."""
        why = self.not_live()
        if why is not None and self.referee.phase is Phase.PLAY:
            self.referee.notice(
                f"{why}: the turn cannot be judged until it is back; end the turn again then", buzzer=True
            )
            return
        self.referee.handle(ending)

    # ------------------------------------------------------------------ sources

    def _link_event(self, event: Any) -> None:
        if isinstance(event, LinkEvent):
            if event.kind == "disconnected":
                self._board_present = False
                self.say(f"board lost ({event.detail}): the game is paused; plug it back in")
            elif event.kind in ("connected", "reconnected"):
                self._board_present = True
                if event.kind == "reconnected":
                    self.say("board back: the game goes on")
                    self._light()  # a board plugged back in shows what it showed before it went
            elif event.kind == "refused":
                self.say(f"board refused: {event.detail}")
            return
        like = self.referee.position
        if isinstance(event, Snapshot) and like is not None:
            try:
                seen = read_board(event, like)
            except ValueError:  # both colours on a point no pin explains
                sensed = counts_from_slots(
                    event.readings, event.slots_per_point, bar_slots=event.bar_slots, tray_slots=event.tray_slots
                )
                self.referee.conflict([Place.point(p) for p in sensed.uncertain if not like.pinned[p - 1]])
                return
            self._feed(self.readings.board(seen, like))
        elif isinstance(event, Lift) and like is not None:
            if event.area is Area.POINT:
                self.referee.lifted(Place.point(event.number))
            elif event.area is Area.BAR:
                self.referee.lifted(Place.bar(like.turn))

    def _observation(self, obs) -> None:
        if obs is None:
            return
        if obs.status in ("occluded", "board-not-found"):
            if self._hidden_since is None:
                self._hidden_since = time.monotonic()
            self.readings.forget_camera()
            return
        if self._hidden_since is not None:
            if self._hidden_said:
                self.say("the camera sees the board again: the game goes on")
            self._hidden_since, self._hidden_said = None, False
        if obs.status != "stable":
            return
        ref = self.referee
        self._feed(self.readings.observation(obs, ref.phase, ref.position))
        self._feed(self.readings.board(None, ref.position))

    def command(self, line: str) -> None:
        """One keyboard line (see :data:`referee.keyboard.HELP`); a line that cannot be done is said, never raised."""
        words = line.strip().split(maxsplit=1)
        if not words:
            return
        name, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        seq = self.referee.stream.seq
        try:
            self._command(name, rest)
        except (ValueError, OSError, RecursionError) as exc:  # KeyboardError, a position refused, a file unread
            text = str(exc) if str(exc).startswith(name) else f"{name}: {exc}"
            self.say(text)
        if self.draw is not None and name not in ("quit", "eof"):
            if self.referee.stream.seq != seq or name == "show":
                self._draw()
            self.say(f"> {keyboard.waiting(self.referee.flow)}")

    def _command(self, name: str, rest: str) -> None:
        ref = self.referee
        if name in ("eof", "quit"):
            if not self.stopped:
                self.stopped = True
                self.say("stopped; the journal keeps the match: tavli play --resume JOURNAL")
        elif name == "help":
            self.say("commands:\n" + keyboard.help_text())
        elif name == "roll":
            ref.dice(keyboard.dice(rest, "roll"))
        elif name == "opening":
            ref.opening(*keyboard.dice(rest, "opening"))
        elif name == "end":
            self._end_turn(F.Pressed("end-turn"))
        elif name == "resign":  # resign LEVEL [white|black]: the side resigning (default: the side on roll)
            level, _, who = rest.partition(" ")
            side = Side.parse(who.strip()) if who.strip() else None
            ref.button(f"resign-{keyboard.number(level or '1', 'resign: the level', 1, 3)}", side)
        elif name in ("double", "take", "pass", "beaver", "raccoon", "accept", "refuse", "hint"):
            ref.button(name)
        elif name == "lift":
            if not rest.strip():
                raise keyboard.KeyboardError("lift: give the point a checker was lifted from (1..24) or bar")
            ref.lifted(self._place(rest))
        elif name == "board":
            self._feed(self.readings.board(keyboard.typed_board(rest, ref.position), ref.position))
        elif name == "move":
            src, _, dst = rest.strip().partition(" ")
            if not (src and dst.strip()):
                raise keyboard.KeyboardError("move: give where from and where to, e.g. move 13 7 (or bar, off)")
            board = ref.seen or ref.position
            if board is None:
                raise keyboard.KeyboardError("move: no game on the table")
            after = keyboard.moved(board, src, dst.strip(), ref.on_roll or Side.WHITE)
            self._feed(self.readings.board(after, ref.position))
        elif name == "show":
            if self.draw is None:
                self.say(
                    f"{keyboard.waiting(ref.flow)}; score: white {ref.score()['white']}, black {ref.score()['black']}"
                )
        elif name == "score":
            score = ref.score()
            self.say(f"score: white {score['white']}, black {score['black']}")
        else:
            self.say(f"unknown command {name!r}; type help for the commands: {', '.join(keyboard.COMMANDS)}")

    def _draw(self) -> None:
        board = self.referee.seen or self.referee.position
        if board is not None:
            self.draw(board, self.referee.flow.leds)

    def _place(self, text: str) -> Place:
        """A place typed in: a point (white's number) or ``bar`` (the side on roll's)."""
        if text.strip().lower() == "bar":
            return Place.bar(self.referee.on_roll or Side.WHITE)
        return Place.parse(text.strip())

    def _drain_link(self) -> list[Any]:
        """What the board sent since the last look, in order, with every snapshot but the newest dropped:
        a snapshot is the whole board, so judging only the newest keeps the referee on the present."""
        events: list[Any] = []
        for _ in range(max(1, self.link.events.qsize())):  # what is there now, not what keeps arriving
            try:
                events.append(self.link.events.get_nowait())
            except queue.Empty:
                break
        last = max((i for i, e in enumerate(events) if isinstance(e, Snapshot)), default=-1)
        return [e for i, e in enumerate(events) if not isinstance(e, Snapshot) or i == last]

    def pump(self, timeout: float = 0.05) -> None:
        """Handle whatever arrived from every source (waiting up to ``timeout`` for the first)."""
        deadline = time.monotonic() + timeout
        if self.referee.journal_paused:  # the disk refused an event: offer it again (the referee says when it is taken)
            self.referee.retry_journal()
        while True:
            busy = False
            if self.link is not None:
                events = self._drain_link()
                for event in events:
                    self._link_event(event)
                busy = bool(events)
            if self.panel is not None:
                event = self.panel.get_event(timeout=0)
                if event is not None:
                    if event.action == "end_turn":
                        self._end_turn(F.PanelAction(event.action))
                    else:
                        self.referee.panel(event.action)
                    busy = True
            try:
                self.command(self.commands.get_nowait())
                busy = True
            except queue.Empty:
                pass
            if self.camera is not None:
                self._observation(self.camera.read())
                if getattr(self.camera, "down", False):
                    self.readings.forget_camera()
                self._hidden_too_long()
            if time.monotonic() >= deadline:
                return  # even when busy: a flood of events must not keep the caller from its own deadline
            if not busy:
                time.sleep(0.01)

    def not_live(self) -> str | None:
        """Why the board cannot be judged now (a source of this table that is down), or None."""
        if self.link is not None and not self._board_present:
            return "the board is unplugged"
        if self.camera is not None and getattr(self.camera, "down", False):
            return "the camera gives no frames"
        if self.link is None and self.camera is not None and self._hidden_since is not None:
            return "the camera cannot see the board"
        return None

    def paused(self) -> str | None:
        """Why the game waits now, as a hall shows it: a source down, or the board hidden for
        ``hand_pause_s`` or more (a hand over the board for a move is no pause)."""
        why = self.not_live()
        since = self._hidden_since
        if why is not None and self.link is None and since is not None:
            return why if time.monotonic() - since >= self.hand_pause_s else None
        return why

    def _hidden_too_long(self) -> None:
        since = self._hidden_since
        if since is not None and not self._hidden_said and time.monotonic() - since >= self.hand_pause_s:
            self._hidden_said = True
            self.say(
                f"something has been over the board for {self.hand_pause_s:.0f} s: the camera cannot see it; "
                "the game waits for a clear view"
            )

    def run(self) -> int:
        self.say(f"> {keyboard.waiting(self.referee.flow)}" + ("; type help for the commands" if self.draw else ""))
        while not self.stopped and (self.referee.phase is not Phase.OVER or self.referee.journal_paused):
            self.pump(0.1)  # a match over whose last events wait for the disk is not over yet
        return 0
