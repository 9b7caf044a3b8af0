"""``tavli play``: the referee at a real table, with its sensor board, camera, panel and keyboard.

Owns :class:`TableSession` (the event loop: board snapshots and lifts, camera
observations, panel actions and keyboard commands go to the :class:`Referee`;
its calls go to the board's LEDs, the panel's buzzer and the terminal) and the
keyboard's commands. Devices are opened from what the command line names and
injected: a serial URL for the board (any pyserial URL: a port, ``socket://``,
a pseudo-terminal), a camera device number or a video/image file, the panel on
gpiozero's default pin factory or none.

Faults pause, never lose: an unplugged board is said and the game waits for it
(the link reconnects by itself, also under a new port name); a camera that stops
is said and reopened; a hand over the board is not read, and one that stays there
longer than ``hand_pause_s`` is said (the game waits for a clear view); a killed process
is resumed from its journal with ``tavli play --resume JOURNAL``.

Keyboard commands (one per line): ``roll D1 D2``, ``opening W B``, ``end``,
``double``, ``take``, ``pass``, ``beaver``, ``raccoon``, ``resign 1|2|3 [white|black]``,
``accept``, ``refuse``, ``hint``, ``lift P`` (a point, ``bar``, or ``white bar``...), ``board POSITION_JSON`` (a board
typed in, for a table without sensors or camera), ``score``, ``quit``.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from board_rules import Place, PlaceKind, Position, Side
from referee.fusion import BoardSeen, fuse
from referee.session import AMBER, Calls, Referee

COMMANDS = (
    "roll",
    "opening",
    "end",
    "double",
    "take",
    "pass",
    "beaver",
    "raccoon",
    "resign",
    "accept",
    "refuse",
    "hint",
    "lift",
    "board",
    "score",
    "quit",
)


def table_leds(leds: dict[Place, str]) -> dict[int | str, str]:
    """The referee's lit places as :func:`referee.table.led_frame` takes them today (points 1..24,
    ``"bar"``, ``"off"``); goes when ``led_frame`` takes a :class:`~board_rules.Place`."""
    return {p.number if p.is_point else ("bar" if p.kind is PlaceKind.BAR else "off"): c for p, c in leds.items()}


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
    ) -> None:
        self.referee = referee
        self.link = link
        self.camera = camera  # an object with read() -> Observation | None (see CameraSource)
        self.panel = panel
        self.say = say
        self.commands: queue.Queue[str] = queue.Queue()
        self.stopped = False
        self.board_seen: Position | BoardSeen | None = None
        self.camera_seen = None
        self.camera_confidence: tuple[float, ...] | None = None  # the camera's per point, with camera_seen
        self._unusable_said: tuple[str, ...] | None = None  # what was last said of a board reading that is no position
        self._board_present = link is not None
        self.hand_pause_s = hand_pause_s
        self._hidden_since: float | None = None  # when the camera last lost its view of the board
        self._hidden_said = False
        self._turn_dice = None  # the dice of the turn in play as the camera saw them (see _dice_lying)
        if lines is not None:
            threading.Thread(target=self._read_lines, args=(lines,), daemon=True).start()

    def _read_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.commands.put(line)
        self.commands.put("eof")

    # ------------------------------------------------------------------ output

    def show(self, calls: Calls) -> None:
        if self.link is not None:
            from referee.table import led_frame

            self.link.send_leds(led_frame(table_leds(calls.leds)))
        if self.panel is not None and calls.buzzer:
            self.panel.error_buzz()
        for s in calls.says:
            self.say(f"referee: {s}")

    # ------------------------------------------------------------------ input

    def _board(self, seen: Position | BoardSeen | None) -> None:
        if seen is not None:
            self.board_seen = seen
        like = self.referee.position
        if like is None or (self.board_seen is None and self.camera_seen is None):
            return
        try:
            fused = fuse(like, self.board_seen, self.camera_seen, camera_confidence=self.camera_confidence)
        except ValueError as exc:
            if seen is not None:  # the board's own reading is not a position yet
                board = self.board_seen
                heaps = list(board.uncountable() if isinstance(board, BoardSeen) else ())
                if heaps and self.camera_seen is None:  # two heaps of a colour: the count of 15 cannot finish both
                    where = ", ".join(map(str, dict.fromkeys(heaps)))
                    self._say_once(
                        Calls(
                            {h: AMBER for h in heaps},
                            says=(f"the board cannot count the heaped checkers on {where}: lay them along the point",),
                        )
                    )
                elif not (str(getattr(exc, "field", "")).startswith("checkers.") and getattr(exc, "value", 15) < 15):
                    self._say_once(
                        Calls(says=(f"board reading not usable yet ({exc})",))
                    )  # not just a checker in a hand
            return
        self._unusable_said = None
        calls = self.referee.board(fused.position)
        if fused.disagree:
            leds = {**calls.leds, **{w: AMBER for w in fused.disagree}}
            calls = Calls(
                leds,
                calls.buzzer,
                calls.says + (f"board and camera disagree at {', '.join(map(str, fused.disagree))}",),
            )
        self.show(calls)

    def _say_once(self, calls: Calls) -> None:
        """Show ``calls`` about an unusable board reading, but not again while the board stays so (snapshots repeat)."""
        if calls.says != self._unusable_said:
            self._unusable_said = calls.says
            self.show(calls)

    def _link_event(self, event: Any) -> None:
        from firmware_bridge.link import LinkEvent
        from firmware_bridge.protocol import Area, Lift, Snapshot
        from referee.table import read_board

        if isinstance(event, LinkEvent):
            if event.kind == "disconnected":
                self._board_present = False
                self.say(f"board lost ({event.detail}): the game is paused; plug it back in")
            elif event.kind in ("connected", "reconnected"):
                self._board_present = True
                if event.kind == "reconnected":
                    self.say("board back: the game goes on")
            elif event.kind == "refused":
                self.say(f"board refused: {event.detail}")
            return
        like = self.referee.position
        if isinstance(event, Snapshot) and like is not None:
            try:
                seen = read_board(event, like)
            except ValueError:  # both colours on a point no pin explains
                from firmware_bridge.sensing import counts_from_slots

                sensed = counts_from_slots(
                    event.readings, event.slots_per_point, bar_slots=event.bar_slots, tray_slots=event.tray_slots
                )
                self.show(self.referee.conflict([Place.point(p) for p in sensed.uncertain if not like.pinned[p - 1]]))
                return
            self._board(seen)
        elif isinstance(event, Lift) and like is not None:
            if event.area is Area.POINT:
                self.show(self.referee.lifted(Place.point(event.number)))
            elif event.area is Area.BAR:
                self.show(self.referee.lifted(Place.bar(like.turn)))

    def _observation(self, obs) -> None:
        if obs is None:
            return
        if obs.status in ("occluded", "board-not-found"):
            if self._hidden_since is None:
                self._hidden_since = time.monotonic()
            self.camera_seen = self.camera_confidence = None  # what it saw before is no longer the board
            return
        if self._hidden_since is not None:
            if self._hidden_said:
                self.say("the camera sees the board again: the game goes on")
            self._hidden_since, self._hidden_said = None, False
        if obs.status != "stable":
            return
        c = obs.checkers
        self.camera_seen = (c.points, c.bar, c.off)
        self.camera_confidence = c.confidence
        ref = self.referee
        dice = list(obs.dice)
        if ref.phase == "play" or not dice:
            self._turn_dice = _dice_lying(dice) or None  # the dice of the turn being played, as they lie
        # dice that lay before (the last turn's, a tied opening's, a throw refused or passed) are no new throw,
        # neither while they lie nor as they are picked up one by one
        stale = list(self._turn_dice or ())
        fresh = []
        for d in dice:
            key = _dice_lying([d])[0]
            if key in stale:
                stale.remove(key)
            else:
                fresh.append(d)
        if ref.phase == "roll" and fresh:
            if len(fresh) == 2:
                self._turn_dice = _dice_lying(dice)
                self.show(
                    ref.dice(
                        tuple(d.value or 0 for d in fresh),
                        halves=tuple(d.half for d in fresh),
                        cocked=any(d.cocked for d in fresh),
                    )
                )
            elif len(fresh) == len(dice):  # thrown and at rest: one is off the playing field, or a third lies there
                self._turn_dice = _dice_lying(dice)
                self.show(
                    Calls(
                        says=(
                            f"{len(dice)} dice at rest on the playing field: a die off it is thrown again; "
                            "throw both dice again",
                        ),
                        buzzer=True,
                    )
                )
        elif ref.phase == "opening_roll" and len(fresh) == 2:  # one die alone: the other player has yet to throw
            self._turn_dice = _dice_lying(dice)
            self.show(
                ref.opening_dice(
                    (fresh[0].value or 0, fresh[1].value or 0),
                    (fresh[0].half, fresh[1].half),
                    cocked=any(d.cocked for d in fresh),
                )
            )
        elif ref.phase == "play" and not obs.dice:
            self._end_turn(lambda: ref.dice(None))  # the dice were picked up: the turn ends
        if obs.cube is not None:
            self.show(ref.cube_seen(obs.cube.where, obs.cube.value))
        self._board(None)

    def command(self, line: str) -> None:
        """One keyboard command (see the module docstring)."""
        words = line.strip().split(maxsplit=1)
        if not words:
            return
        ref = self.referee
        name, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        try:
            if name in ("eof", "quit"):
                if self.stopped:
                    return
                self.stopped = True
                self.say("stopped; the journal keeps the match: tavli play --resume JOURNAL")
            elif name == "roll":
                d = [int(v) for v in rest.split()]
                self.show(
                    ref.dice((d[0], d[1]))
                    if len(d) == 2
                    else Calls(says=("roll: give two dice, e.g. roll 3 5",), buzzer=True)
                )
            elif name == "opening":
                d = [int(v) for v in rest.split()]
                self.show(
                    ref.opening(d[0], d[1])
                    if len(d) == 2
                    else Calls(says=("opening: give white's and black's die",), buzzer=True)
                )
            elif name == "end":
                self._end_turn(lambda: ref.button("end-turn"))
            elif name == "resign":  # resign LEVEL [white|black]: the side resigning (default: the side on roll)
                level, _, who = rest.partition(" ")
                side = Side(who.strip().lower()) if who.strip() else None
                self.show(ref.button(f"resign-{int(level or 1)}", side))
            elif name in ("double", "take", "pass", "beaver", "raccoon", "accept", "refuse", "hint"):
                self.show(ref.button(name))
            elif name == "lift":
                mover = ref.position.turn if ref.position is not None else Side.WHITE
                where = Place.bar(mover) if rest.strip().lower() == "bar" else Place.parse(rest)
                self.show(ref.lifted(where))
            elif name == "board":
                self._board(Position.from_json(rest) if rest.startswith("{") else Position.from_json(open(rest).read()))
            elif name == "score":
                self.say(f"score: {ref.score()}")
            else:
                self.say(f"unknown command {name!r}; commands: {', '.join(COMMANDS)}")
        except (ValueError, OSError) as exc:
            self.say(f"{name}: {exc}")

    def _drain_link(self) -> list[Any]:
        """What the board sent since the last look, in order, with every snapshot but the newest dropped.

        A snapshot is the whole board, so an older one says nothing the newest does not; when the rules take
        longer to judge a board than the board takes to send one (escalated gul-bara doubles on a slow Pi),
        judging only the newest keeps the referee on the present instead of ever further behind.
        """
        from firmware_bridge.protocol import Snapshot

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
                        self._end_turn(lambda action=event.action: self.referee.panel(action))
                    else:
                        self.show(self.referee.panel(event.action))
                    busy = True
            try:
                self.command(self.commands.get_nowait())
                busy = True
            except queue.Empty:
                pass
            if self.camera is not None:
                self._observation(self.camera.read())
                if getattr(self.camera, "down", False):
                    self.camera_seen = self.camera_confidence = None
                self._hidden_too_long()
            if time.monotonic() >= deadline:
                return  # even when busy: a flood of events must not keep the caller from its own deadline
            if not busy:
                time.sleep(0.01)

    def _not_live(self) -> str | None:
        """Why the board cannot be judged now (a source of this table that is down), or None."""
        if self.link is not None and not self._board_present:
            return "the board is unplugged"
        if self.camera is not None and getattr(self.camera, "down", False):
            return "the camera gives no frames"
        if self.link is None and self.camera is not None and self._hidden_since is not None:
            return "the camera cannot see the board"
        return None

    def _end_turn(self, ending: Callable[[], Calls]) -> None:
        """End the turn with ``ending`` unless a source is down: the last board seen may not be the board now."""
        why = self._not_live()
        if why is not None and self.referee.phase == "play":
            self.show(
                Calls(
                    says=(f"{why}: the turn cannot be judged until it is back; end the turn again then",), buzzer=True
                )
            )
            return
        self.show(ending())

    def _hidden_too_long(self) -> None:
        since = self._hidden_since
        if since is not None and not self._hidden_said and time.monotonic() - since >= self.hand_pause_s:
            self._hidden_said = True
            self.say(
                f"something has been over the board for {self.hand_pause_s:.0f} s: the camera cannot see it; "
                "the game waits for a clear view"
            )

    def run(self) -> int:
        self.say(f"{self.referee.phase}: " + ("set up the board" if self.referee.phase == "setup" else "go on"))
        while not self.stopped and self.referee.phase != "over":
            self.pump(0.1)
        return 0


def _dice_lying(dice) -> tuple:
    """Dice as they lie: values, halves and board places to 10 mm (a new throw lands elsewhere)."""
    from vision.observe import none_first

    return tuple(
        sorted(
            ((d.value, d.half, round(d.centre_mm[0] / 10), round(d.centre_mm[1] / 10)) for d in dice), key=none_first
        )
    )


class CameraSource:
    """Frames from a camera device (a number) or a video/image file, through the pipeline.

    A camera that stops giving frames is said once and reopened every two seconds.
    """

    def __init__(self, where: str, geometry, palette=None, say: Callable[[str], None] = print) -> None:
        from vision.observe import Pipeline

        self.where = where
        self.pipeline = Pipeline(geometry, palette)
        self.say = say
        self._cap = None
        self._down_since: float | None = None
        self._last_key = None

    @property
    def down(self) -> bool:
        """The camera gives no frames (unplugged, or the file ended); the game waits for it."""
        return self._down_since is not None

    def _open(self):
        import cv2

        src: Any = int(self.where) if self.where.isdigit() else self.where
        cap = cv2.VideoCapture(src)
        if not cap.isOpened():
            return None
        if isinstance(
            src, int
        ):  # a camera: ask for the size it was calibrated at (frames of another size are scaled, if they can be)
            w, h = self.pipeline.geometry.image_size
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, w)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, h)
        return cap

    def read(self):
        """The next observation, or None (no frame now)."""
        now = time.monotonic()
        if self._cap is None:
            if self._down_since is not None and now - self._down_since < 2.0:
                return None
            self._cap = self._open()
            if self._cap is None:
                if self._down_since is None:
                    self.say(f"camera {self.where!r} gives no frames: paused until it does")
                self._down_since = now
                return None
        ok, frame = self._cap.read()
        if not ok:
            self._cap.release()
            self._cap = None
            self._down_since = now
            self.say(f"camera {self.where!r} stopped: paused until it comes back")
            return None
        self._down_since = None
        obs = self.pipeline.feed(frame)
        key = (obs.status, obs.key())
        if key == self._last_key:
            return None
        self._last_key = key
        return obs


def match_spec(variant: str | None, match: str | None, args=None):
    """The match spec from ``--variant V`` or ``--match tavli:N | V:N | money:V``, with the rule
    options of ``args`` (``tavli play``'s: --games, --jacoby, --beavers, --raccoons,
    --automatic-doubles, --no-crawford, --with-gul-bara, --option). Raises
    :class:`~referee.journal.JournalError` for a spec or option that makes no sense."""
    from referee.journal import JournalError, MatchSpec

    opts = {}
    for text in getattr(args, "option", None) or ():
        name, eq, value = text.partition("=")
        base, dot, key = name.partition(".")
        if not (eq and dot and base and key):
            raise JournalError(f"--option {text!r}: give VARIANT.NAME=VALUE, e.g. plakoto.mother_rule=false")
        opts.setdefault(base, {})[key] = _option_value(value)
    cube = {k: True for k in ("jacoby", "beavers", "raccoons") if getattr(args, k, False)}
    if getattr(args, "automatic_doubles", 0):
        cube["automatic_doubles"] = args.automatic_doubles
    games = getattr(args, "games", None)
    if match:
        kind, _, rest = match.partition(":")
        length = _length(rest, match) if kind != "money" else 0
        if kind == "tavli":
            spec = MatchSpec(
                "tavli", length or 3, with_gul_bara=bool(getattr(args, "with_gul_bara", False)), variant_options=opts
            )
        elif kind == "money":
            spec = MatchSpec("money", 0, rest or "backgammon", cube=cube, variant_options=opts, games=games)
        else:
            spec = MatchSpec(
                "match",
                length or 1,
                kind or "backgammon",
                crawford_rule=not getattr(args, "no_crawford", False),
                variant_options=opts,
            )
    else:
        spec = MatchSpec(
            "money",
            0,
            variant or "backgammon",
            cube=cube,
            variant_options=opts,
            games=games or (1 if variant else None),
        )
    unused = [
        flag
        for flag, on in (("--jacoby/--beavers/--raccoons/--automatic-doubles", cube), ("--games", games))
        if on and spec.kind != "money"
    ]
    unused += [
        flag for flag, on in (("--no-crawford", getattr(args, "no_crawford", False)),) if on and spec.kind != "match"
    ]
    unused += [
        flag
        for flag, on in (("--with-gul-bara", getattr(args, "with_gul_bara", False)),)
        if on and spec.kind != "tavli"
    ]
    if unused:
        raise JournalError(
            f"{', '.join(unused)}: not an option of a {spec.kind} {'session' if spec.kind == 'money' else 'match'}"
        )
    return spec


def _length(text: str, match: str) -> int:
    from referee.journal import JournalError

    if not text:
        return 0
    if not text.isdigit() or int(text) < 1:
        raise JournalError(f"--match {match!r}: the length after ':' must be a whole number of points, 1 or more")
    return int(text)


def _option_value(text: str):
    """An option's value as typed: true/false, a whole number, or the text itself."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    return int(low) if low.lstrip("-").isdigit() else text.strip()


def run_play(args, stdin: TextIO, stdout: TextIO) -> int:
    """``tavli play``: open the devices named on the command line and referee until the match ends or ``quit``."""
    from pathlib import Path

    from vision.calibrate import Geometry

    def say(text: str) -> None:
        print(text, file=stdout, flush=True)

    if args.resume:
        ref = Referee.resume(args.resume, teach=args.teach)
        say(f"resumed {args.resume}: game {ref.replay.game}, score {json.dumps(ref.score())}")
    else:
        journal = Path(args.journal or time.strftime("match-%Y%m%d-%H%M%S.jsonl"))
        ref = Referee.new(journal, match_spec(args.variant, args.match, args), teach=args.teach)
        say(f"journal: {journal}")
    link = camera = panel = None
    try:
        if args.board:
            from firmware_bridge.link import BoardLink

            link = BoardLink(args.board).start()
        if args.camera:
            if not args.geometry:
                raise SystemExit("tavli play: --camera needs --geometry (from 'tavli vision calibrate')")
            from vision.checkers import Palette

            palette = Palette.load(args.palette) if args.palette else None
            camera = CameraSource(args.camera, Geometry.load(args.geometry), palette, say)
        if args.panel == "gpio":
            from firmware_bridge.panel import Panel, PanelConfig

            panel = Panel(PanelConfig.load())
        session = TableSession(ref, link=link, camera=camera, panel=panel, lines=stdin, say=say)
        return session.run()
    finally:
        ref.close()
        if link is not None:
            link.stop()
        if panel is not None:
            panel.close()
