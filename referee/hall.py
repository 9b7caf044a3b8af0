"""The organiser's hall: every table of a hall from the broker, on one page, with each match kept.

Owns :class:`Hall` (subscribes as the organiser to ``tavli/<hall>/table/+/...``, keeps each
table's state as the broker's retained topics and live events give it, shown ``delay``
seconds late as broadcasts do, and writes each table's match journal from its ``event``
lines, exported and analysed once the match ends) and :class:`HallPage` (the dashboard: a
small board per table, players, score, status, whose turn, a mark on a table whose referee
calls an illegal play or is paused; each table's live page fed from the broker; the match
files and reports to download). Spectators read; changing the delay needs the organiser's
token. The page binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from board_rules.untrusted import check_output_folder, is_digits
from referee.broker import NAME_CHARS, BrokerAddress, check_name, new_client
from referee.errors import JournalError
from referee.web import PageServer, event_stream

STATIC = Path(__file__).with_name("static")
POLL_S = 0.02
MAX_DELAY_S = 3600.0
LEAVES = ("status", "position", "match", "view", "event")  # not ``live``: the view carries what it shows


class HallError(JournalError):
    """A hall that cannot be watched: the message names the flag."""


class Table:
    """One table as the hall knows it: its retained state and the summary the dashboard shows."""

    def __init__(self, table_id: str) -> None:
        self.id = table_id
        self.status = "unknown"
        self.position: dict[str, Any] | None = None
        self.match: dict[str, Any] | None = None
        self.view: dict[str, Any] | None = None
        self.last_seq = 0  # the highest journal seq received on ``event``
        self.version = 0  # one more each time anything shown changes
        self.files: list[str] = []

    def summary(self) -> dict[str, Any]:
        view = self.view or {}
        leds = view.get("leds") or {}
        return {
            "id": self.id,
            "status": self.status,
            "players": (self.match or {}).get("players") or view.get("players"),
            "score": view.get("score") or (self.match or {}).get("score"),
            "variant": view.get("variant") or (self.match or {}).get("variant"),
            "game": view.get("game"),
            "on_roll": view.get("on_roll"),
            "phase": view.get("phase"),
            "position": view.get("position") or (None if self.position is None else _board_only(self.position)),
            "dice": view.get("dice", []),
            "cube": view.get("cube"),
            "illegal": "red" in leds.values(),
            "paused": self.status == "paused",
            "over": bool(view.get("over") or (self.match or {}).get("over")),
            "seq": self.last_seq,
            "view_seq": view.get("seq", 0),
            "files": list(self.files),
            "version": self.version,
        }


def _board_only(position: dict[str, Any]) -> dict[str, Any]:
    keys = ("variant", "turn", "points", "bar", "off", "pinned", "rolls")
    return {k: position[k] for k in keys if k in position}


class Hall:
    """The tables of ``hall`` on the broker at ``address``, as the organiser sees them (module docstring).

    ``folder`` receives ``<table>/<journal>`` for every match and, once one ends, its ``.mat``
    and analysis report (``analyse``: a function of (journal path) -> list of files written,
    run in a thread of its own; None: no analysis).
    """

    def __init__(
        self,
        address: BrokerAddress,
        hall: str,
        folder: str | Path,
        *,
        delay: float = 0.0,
        analyse: Callable[[Path], list[Path]] | None = None,
        say: Callable[[str], None] = print,
    ) -> None:
        self.hall = check_name(hall, "--hall")
        self.address = address
        self.folder = Path(folder)
        self.delay = check_delay(delay)
        self.analyse = analyse
        self.say = say
        self.lock = threading.Lock()
        self.tables: dict[str, Table] = {}
        self.version = 0
        self._pending: deque[tuple[float, str, str, bytes]] = deque()  # (arrived, table, leaf, payload)
        self._journals: dict[str, Path] = {}
        self._held: dict[str, int] = {}  # lines written to each table's match file
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.client = new_client(address, f"tavli-hall-{hall}-{secrets.token_hex(3)}")
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = lambda *a: self.say("hall: the broker is gone; waiting for it")

    def start(self) -> Hall:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.client.connect_async(self.address.host, self.address.port, keepalive=10)
        self.client.loop_start()
        self._thread = threading.Thread(target=self._pump, name="tavli-hall", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.client.disconnect()
        self.client.loop_stop()

    # ------------------------------------------------------------------ paho's thread

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.say(f"hall: the broker refused the organiser ({reason_code})")
            return
        client.subscribe([(f"tavli/{self.hall}/table/+/{leaf}", 1) for leaf in LEAVES])
        self.say(f"hall: watching hall {self.hall} on {self.address.host}:{self.address.port}")

    def _on_message(self, client, userdata, message) -> None:
        parts = message.topic.split("/")
        if len(parts) != 5 or parts[3] == "" or not set(parts[3]) <= NAME_CHARS or parts[4] not in LEAVES:
            return
        with self.lock:
            self._pending.append((time.monotonic(), parts[3], parts[4], bytes(message.payload)))

    # ------------------------------------------------------------------ the hall's thread

    def _pump(self) -> None:
        while not self._stop.is_set():
            self.apply_due(time.monotonic())
            self._stop.wait(POLL_S)

    def apply_due(self, now: float) -> int:
        """Apply every message that arrived ``delay`` seconds ago or more; returns how many.

        Of a table's retained state only the latest due message is read (an older one is
        replaced by it); every ``event`` line is taken, in order."""
        with self.lock:
            due = []
            while self._pending and self._pending[0][0] + self.delay <= now:
                due.append(self._pending.popleft())
        latest = {(table_id, leaf): i for i, (_, table_id, leaf, _) in enumerate(due) if leaf != "event"}
        for i, (_, table_id, leaf, payload) in enumerate(due):
            if leaf == "event" or latest[(table_id, leaf)] == i:
                self._apply(table_id, leaf, payload)
        return len(due)

    def _apply(self, table_id: str, leaf: str, payload: bytes) -> None:
        if leaf == "event":
            self._archive(table_id, payload)
        try:
            data = payload.decode("utf-8") if leaf == "status" else json.loads(payload)
        except (UnicodeDecodeError, ValueError):
            return  # not ours to show: a table writes only its own topics, in its own format
        with self.lock:
            table = self.tables.get(table_id)
            if table is None:
                table = self.tables[table_id] = Table(table_id)
            if leaf == "status" and isinstance(data, str):
                table.status = data[:20]
            elif leaf in ("position", "match", "view") and isinstance(data, dict):
                setattr(table, leaf, data)
            elif leaf == "event" and isinstance(data, dict) and type(data.get("seq")) is int:
                table.last_seq = max(table.last_seq, data["seq"])
            else:
                return
            table.version += 1
            self.version += 1
            ended = leaf == "match" and isinstance(data, dict) and data.get("over") and data.get("record")
        if ended:
            self._ended(table_id, str(data["record"]))

    def _archive(self, table_id: str, payload: bytes) -> None:
        """Append a table's journal line to its match file, in order, each seq once."""
        try:
            event = json.loads(payload)
        except ValueError:
            return
        if not isinstance(event, dict) or type(event.get("seq")) is not int:
            return
        path = self._journals.get(table_id)
        if event["seq"] == 1 and event.get("type") == "match_start":
            stamp = "".join(c for c in str(event.get("time", "")) if c.isdigit())[:14] or "match"
            path = self.folder / table_id / f"match-{stamp}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                path.unlink()  # a resumed table publishes its match from the start again
            self._journals[table_id] = path
            self._held[table_id] = 0
        if path is None:
            return
        if event["seq"] == self._held[table_id] + 1:  # each line once, in order (QoS 1 may repeat one)
            with open(path, "ab") as fh:
                fh.write(payload.strip() + b"\n")
            self._held[table_id] += 1

    def _ended(self, table_id: str, record: str) -> None:
        path = self._journals.get(table_id)
        if path is None or not path.exists():
            return
        files = [path]

        def work() -> None:
            out = list(files)
            if self.analyse is not None:
                try:
                    out += self.analyse(path)
                except Exception as exc:  # noqa: BLE001 - an analysis that fails is said; the hall goes on
                    self.say(f"hall: table {table_id}: the analysis of {path.name} failed: {exc}")
            with self.lock:
                table = self.tables[table_id]
                table.files = [str(p.relative_to(self.folder)) for p in out]
                table.version += 1
                self.version += 1
            self.say(f"hall: table {table_id}: match over ({record}); " + ", ".join(p.name for p in out))

        threading.Thread(target=work, name=f"tavli-hall-analyse-{table_id}", daemon=True).start()

    # ------------------------------------------------------------------ for the page

    def summaries(self, since: dict[str, int] | None = None) -> list[dict[str, Any]]:
        """Every table's summary, by id; with ``since`` (id -> version shown) only those changed since."""
        with self.lock:
            tables = sorted(self.tables.values(), key=lambda t: t.id)
            return [t.summary() for t in tables if since is None or since.get(t.id) != t.version]

    def view_of(self, table_id: str) -> dict[str, Any] | None:
        with self.lock:
            table = self.tables.get(table_id)
            return None if table is None or table.view is None else dict(table.view)


def check_delay(value: float) -> float:
    if not 0.0 <= value <= MAX_DELAY_S:  # NaN fails too
        raise HallError(f"--delay: {value!r}: give seconds, 0 to {MAX_DELAY_S:.0f}")
    return float(value)


def analyse_match(path: Path) -> list[Path]:
    """The hall's analysis of one finished match: its ``.mat`` and an HTML report beside the journal."""
    from referee.analyse import analyse, report_html
    from referee.export import export

    mat = path.with_suffix(".mat")
    mat.write_text(export(path, "mat"), encoding="utf-8")
    report, sgf = path.with_suffix(".html"), path.with_suffix(".sgf")
    report.write_text(report_html(analyse(path, sgf=sgf)), encoding="utf-8")
    return [mat, report] + ([sgf] if sgf.exists() else [])


class HallPage(PageServer):
    """The dashboard on ``host``:``port`` (0: a free one); ``token`` lets the organiser change the delay."""

    def __init__(self, hall: Hall, host: str = "127.0.0.1", port: int = 8080, token: str | None = None) -> None:
        self.hall = hall
        self.token = token or secrets.token_urlsafe(12)
        routes = [
            Route("/", self._index),
            Route("/tables", self._tables),
            Route("/events", self._events),
            Route("/delay", self._delay, methods=["POST"]),
            Route("/files/{table}/{name}", self._file),
            Route("/table/{table}/", self._table_page),
            Route("/table/{table}/view", self._table_view),
            Route("/table/{table}/events", self._table_events),
        ]
        super().__init__(host, port, routes)

    @property
    def url(self) -> str:
        return self.base_url

    async def _index(self, request: Request) -> HTMLResponse:
        return HTMLResponse((STATIC / "hall.html").read_text(encoding="utf-8"))

    async def _tables(self, request: Request) -> JSONResponse:
        return JSONResponse({"hall": self.hall.hall, "delay": self.hall.delay, "tables": self.hall.summaries()})

    async def _events(self, request: Request) -> StreamingResponse:
        """Server-sent events: the tables that changed, each as its summary, as they change."""
        sent: dict[str, int] = {}
        version = -1

        def changes() -> str | None:
            nonlocal version
            if self.hall.version == version:
                return None
            version = self.hall.version
            changed = self.hall.summaries(sent)
            for t in changed:
                sent[t["id"]] = t["version"]
            return f"event: tables\ndata: {json.dumps(changed, separators=(',', ':'))}\n\n" if changed else None

        return event_stream(request, changes)

    async def _delay(self, request: Request) -> JSONResponse:
        if not secrets.compare_digest(request.query_params.get("token", ""), self.token):
            return JSONResponse({"error": "token: missing or wrong; spectators only read"}, status_code=403)
        text = request.query_params.get("seconds", "")
        if not is_digits(text, 4) or int(text) > MAX_DELAY_S:
            return JSONResponse({"error": f"seconds: {text[:20]!r}: give 0 to {MAX_DELAY_S:.0f}"}, status_code=400)
        self.hall.delay = float(text)
        return JSONResponse({"ok": True, "delay": self.hall.delay})

    async def _file(self, request: Request) -> Response:
        table, name = request.path_params["table"], request.path_params["name"]
        if not (set(table) <= NAME_CHARS and set(name) <= NAME_CHARS) or name.startswith("."):
            return Response("no such file", status_code=404, media_type="text/plain")
        path = self.hall.folder / table / name
        if not path.is_file():
            return Response("no such file", status_code=404, media_type="text/plain")
        return FileResponse(path)

    async def _table_page(self, request: Request) -> HTMLResponse:
        return HTMLResponse((STATIC / "live.html").read_text(encoding="utf-8"))

    async def _table_view(self, request: Request) -> JSONResponse:
        view = self.hall.view_of(request.path_params["table"])
        if view is None:
            return JSONResponse({"error": "no such table, or it has shown nothing yet"}, status_code=404)
        return JSONResponse({**view, "can_act": False, "camera": False})

    async def _table_events(self, request: Request) -> StreamingResponse:
        table_id = request.path_params["table"]
        sent = None

        def view() -> str | None:
            nonlocal sent
            shown = self.hall.view_of(table_id)
            if shown is None or shown.get("seq") == sent:
                return None
            sent = shown.get("seq")
            return f"id: {sent}\nevent: view\ndata: {json.dumps(shown, separators=(',', ':'))}\n\n"

        return event_stream(request, view)


def run_hall(args, say: Callable[[str], None] = print) -> int:
    """``tavli hall --broker URL [--hall NAME] [--web [HOST:]PORT] [--delay S] [--out DIR] [--for S]``."""
    from referee.web import parse_address

    address = BrokerAddress.parse(args.broker)
    host, port = parse_address(args.web)
    out = check_output_folder(args.out, "--out", HallError)  # before the broker: the matches go there
    hall = Hall(address, args.hall, out, delay=args.delay, analyse=analyse_match, say=say)
    page = HallPage(hall, host, port)
    hall.start()
    try:
        page.start()
        say(f"the hall: {page.url}  (organiser's token: {page.token})")
        deadline = None if args.for_seconds is None else time.monotonic() + args.for_seconds
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        page.stop()
        hall.stop()
    return 0
