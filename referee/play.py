"""``tavli play``: the referee at a real table, with its sensor board, camera, panel and keyboard.

Owns the command: the match spec from the command line (:func:`match_spec`), the
camera source (:class:`CameraSource`) and :func:`run_play`, which opens the devices
the command line names and runs the table loop (:class:`referee.loop.TableSession`)
on them: a serial URL for the board (any pyserial URL: a port, ``socket://``, a
pseudo-terminal), a camera device number or a video/image file, the panel on
gpiozero's default pin factory or none. A killed process is resumed from its
journal with ``tavli play --resume JOURNAL``; the keyboard's commands are the loop's.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import cv2
from rich.console import Console

from board_rules.untrusted import check_output, is_digits
from firmware_bridge.link import BoardLink
from firmware_bridge.panel import Panel, PanelConfig
from referee.broker import BrokerAddress, TablePublisher, check_name
from referee.errors import JournalError
from referee.journal import read_journal
from referee.keyboard import COMMANDS
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec
from referee.textboard import render as text_board
from referee.web import LivePage, parse_address
from vision.calibrate import Geometry
from vision.checkers import Palette
from vision.images import check_image_header
from vision.observe import Pipeline

__all__ = ["COMMANDS", "CameraSource", "TableSession", "match_spec", "run_play"]

MAX_GAMES = 10_000  # --games: a money session's length


class CameraSource:
    """Frames from a camera device (a number) or a video/image file, through the pipeline.

    A camera that stops giving frames is said once and reopened every two seconds.
    """

    def __init__(self, where: str, geometry, palette=None, say: Callable[[str], None] = print) -> None:
        self.where = where
        self.pipeline = Pipeline(geometry, palette)
        self.say = say
        self._cap = None
        self._down_since: float | None = None
        self._last_key = None
        self.last = None  # the last frame and its observation

    @property
    def geometry(self):
        return self.pipeline.geometry

    @property
    def down(self) -> bool:
        """The camera gives no frames (unplugged, or the file ended); the game waits for it."""
        return self._down_since is not None

    def _open(self):
        src: Any = int(self.where) if is_digits(self.where) else self.where
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
        self.last = (frame, obs)  # for the live page's annotated frame
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
    if games is not None and not 1 <= games <= MAX_GAMES:
        raise JournalError(
            f"--games: {games!r}: a money session of 1..{MAX_GAMES} games (leave it out to play until quit)"
        )
    if variant is not None and not variant.strip():
        raise JournalError("--variant: '': name a variant, e.g. backgammon, plakoto, long-nardy")
    if match is not None:
        kind, _, rest = match.partition(":")
        if not kind or (kind == "money" and not rest):
            raise JournalError(f"--match {match!r}: give tavli:N, VARIANT:N or money:VARIANT")
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
            games=games if games is not None else (1 if variant else None),
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
    if not text:
        return 0
    if not is_digits(text, 4) or int(text) < 1:
        raise JournalError(f"--match {match!r}: the length after ':' must be a whole number of points, 1 or more")
    return int(text)


def _option_value(text: str):
    """An option's value as typed: true/false, a whole number, or the text itself."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    return int(low) if is_digits(low.removeprefix("-"), 9) else text.strip()


def run_play(args, stdin: TextIO, stdout: TextIO) -> int:
    """``tavli play``: open the devices named on the command line and referee until the match ends or ``quit``.

    The journal is made (a new match) or opened and locked (``--resume``) only once the devices
    are open, so a start that fails leaves no journal behind; a journal that cannot be read is
    refused before any device opens. Raises :class:`~board_rules.errors.TavliError` (``tavli``
    exits 2) for a bad match spec, a device that cannot be opened, and a journal that cannot be
    read or written or that another referee holds.
    """

    def say(text: str) -> None:
        print(text, file=stdout, flush=True)

    spec = None if args.resume else match_spec(args.variant, args.match, args)
    address = parse_address(args.web) if getattr(args, "web", None) else None
    hall_address = BrokerAddress.parse(args.broker) if getattr(args, "broker", None) else None
    hall, table_id = getattr(args, "hall", "club"), getattr(args, "table", None) or "table-1"
    if hall_address is not None:
        check_name(hall, "--hall")
        check_name(table_id, "--table")
    if args.resume:
        read_journal(args.resume)  # a journal that cannot be read is refused before any device is opened
    elif args.journal:
        check_output(args.journal, "--journal", JournalError)
    if args.camera and not (is_digits(args.camera) or "://" in args.camera or os.path.isfile(args.camera)):
        raise JournalError(f"--camera: {args.camera!r}: neither a camera number nor a video or image file")
    if args.camera and os.path.isfile(args.camera):
        check_image_header(args.camera)  # a still that would decode into gigabytes is refused before
    link = camera = panel = page = ref = publisher = None
    try:
        if args.board:
            link = BoardLink(args.board).start()
        if args.camera:
            if not args.geometry:
                raise JournalError("--camera needs --geometry (from 'tavli vision calibrate')")
            palette = Palette.load(args.palette) if args.palette else None
            camera = CameraSource(args.camera, Geometry.load(args.geometry), palette, say)
        if args.panel == "gpio":
            panel = Panel(PanelConfig.load())
        # the journal is made (or taken and locked) only now the game can start: a failed start leaves none
        if args.resume:
            ref = Referee.resume(args.resume, teach=args.teach)
            say(f"resumed {args.resume}: game {ref.replay.game}, score {json.dumps(ref.score())}")
        else:
            journal = Path(args.journal or time.strftime("match-%Y%m%d-%H%M%S.jsonl"))
            ref = Referee.new(journal, spec, teach=args.teach)
            say(f"journal: {journal}")
        if address is not None:
            host, port = address
            page = LivePage(ref, host=host, port=port, camera=camera).start()
            say(f"the live table: {page.url}")
        draw = None
        if stdin.isatty() and stdout.isatty():  # a person at the keyboard: the board drawn, with its LEDs
            console = Console(file=stdout, highlight=False)

            def draw(board, leds) -> None:
                console.print(text_board(board, leds=leds))

        session = TableSession(ref, link=link, camera=camera, panel=panel, lines=stdin, say=say, draw=draw)
        if hall_address is not None:
            publisher = TablePublisher(ref, hall_address, hall, table_id, paused=session.paused, say=say).start()
        return session.run()
    finally:
        if publisher is not None:
            publisher.close()
        if page is not None:
            page.stop()
        if ref is not None:
            ref.close()
        if link is not None:
            link.stop()
        if panel is not None:
            panel.close()
