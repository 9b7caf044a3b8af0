"""The live table page: the table as it is now, in a browser, updated as the referee decides.

Owns :class:`PageServer` (Starlette on uvicorn, in a thread of its own; the hall's page is one too)
and :class:`LivePage`, fed by a :class:`~referee.view.TableView` subscribed to a referee's
event stream. Routes: ``/``
(the page, nothing fetched from the network), ``/view`` (JSON), ``/frame.jpg`` (the
camera's last frame, annotated), ``/events`` (server-sent views with the stream's
sequence number as id, so a page that reconnects catches up) and ``POST /act`` (a
virtual table's actions; off the loopback they need the page's token). It binds to
127.0.0.1 unless told otherwise (:func:`parse_address`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

import cv2
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from board_rules.untrusted import is_digits, parse_json
from referee.errors import JournalError
from referee.view import TableView
from vision.annotate import annotate

POLL_S = 0.02  # how often a page's event stream looks for a newer view
KEEPALIVE_S = 15.0
MAX_ACTION_BYTES = 4096


class WebAddressError(JournalError):
    """A ``--web`` address that cannot be served."""


def parse_address(text: str) -> tuple[str, int]:
    """``"8080"`` or ``"HOST:PORT"`` to (host, port); the host defaults to 127.0.0.1.

    Raises :class:`WebAddressError` naming the value.
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "127.0.0.1"
    if not (port.isascii() and port.isdigit() and len(port) <= 5) or not 0 <= int(port) <= 65535:
        raise WebAddressError(f"--web: {text!r}: give a port (8080) or HOST:PORT (0.0.0.0:8080)")
    return host or "127.0.0.1", int(port)


def _page() -> str:
    return resources.files("referee").joinpath("static/live.html").read_text(encoding="utf-8")


def event_stream(request: Request, message: Callable[[], str | None]) -> StreamingResponse:
    """Server-sent events for ``request``: ``message()`` asked every ``POLL_S`` for the next text to
    send (None: nothing new), a keep-alive comment after ``KEEPALIVE_S`` of silence, until the
    client goes. The live page and the hall's pages stream this way."""

    async def stream():
        idle = 0.0
        yield "retry: 500\n\n"
        while not await request.is_disconnected():
            text = message()
            if text is not None:
                yield text
                idle = 0.0
                continue
            await asyncio.sleep(POLL_S)
            idle += POLL_S
            if idle >= KEEPALIVE_S:
                idle = 0.0
                yield ": keep-alive\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


class PageServer:
    """A Starlette app served by uvicorn in a thread of its own on ``host``:``port`` (0: a free one):
    ``start()`` it, read :attr:`base_url`, ``stop()`` it. The socket is bound at once, so a port that
    is taken is said before anything starts."""

    def __init__(self, host: str, port: int, routes: list[Route]) -> None:
        self.host = host
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise WebAddressError(f"--web: cannot serve on {host}:{port} ({exc.strerror or exc})") from None
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}/"

    def start(self, timeout: float = 10.0):
        """Serve in a thread of its own; returns self once the server answers (or raises WebAddressError)."""
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise WebAddressError(f"--web: the page server on {self.host}:{self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._sock.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class LivePage(PageServer):
    """The page server for one table: ``start()`` it, read :attr:`url`, ``stop()`` it."""

    def __init__(
        self,
        referee,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        actions: Callable[[Any], None] | None = None,
        token: str | None = None,
        camera=None,
    ) -> None:
        self.actions = actions
        self.camera = camera  # has .last (frame, observation) and .geometry: the page shows the frame annotated
        loopback = host in ("127.0.0.1", "localhost", "::1")
        self.token = token if token is not None else (None if loopback else secrets.token_urlsafe(12))
        self.view = TableView()
        self.view.prime(referee.flow, referee.stream.seq)
        referee.stream.subscribe(self.view)
        routes = [
            Route("/", self._index),
            Route("/view", self._view),
            Route("/events", self._events),
            Route("/act", self._act, methods=["POST"]),
            Route("/frame.jpg", self._frame),
        ]
        super().__init__(host, port, routes)

    @property
    def url(self) -> str:
        """The page's address (with the token, for a page that may act)."""
        token = f"?token={self.token}" if self.token and self.actions else ""
        return self.base_url + token

    # ------------------------------------------------------------------ routes

    def _now(self) -> tuple[int, str]:
        with self.view.lock:
            return self.view.seq, json.dumps(self.view.to_dict(), separators=(",", ":"))

    async def _index(self, request: Request) -> HTMLResponse:
        return HTMLResponse(_page())

    async def _view(self, request: Request) -> JSONResponse:
        with self.view.lock:
            return JSONResponse(
                {**self.view.to_dict(), "can_act": self.actions is not None, "camera": self.camera is not None}
            )

    async def _frame(self, request: Request) -> Response:
        """The camera's last frame, with what the pipeline read drawn on it (JPEG); 404 without one."""
        last = getattr(self.camera, "last", None) if self.camera is not None else None
        if last is None:
            return Response("no camera frame yet", status_code=404, media_type="text/plain")
        image, obs = last
        drawn = await asyncio.to_thread(annotate, image, self.camera.geometry, obs)
        ok, jpeg = cv2.imencode(".jpg", drawn, [cv2.IMWRITE_JPEG_QUALITY, 80])
        return Response(jpeg.tobytes(), media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    async def _act(self, request: Request) -> JSONResponse:
        if self.actions is None:
            return JSONResponse({"error": "this table is only watched: it takes no actions"}, status_code=403)
        if self.token is not None and not secrets.compare_digest(request.query_params.get("token", ""), self.token):
            return JSONResponse({"error": "token: missing or wrong; spectators only read"}, status_code=403)
        body = await request.body()
        if len(body) > MAX_ACTION_BYTES:
            return JSONResponse({"error": f"action: over {MAX_ACTION_BYTES} bytes"}, status_code=400)
        try:
            self.actions(parse_json(body, "action"))
        except (ValueError, UnicodeDecodeError) as exc:  # VirtualError is a ValueError; so is bad JSON
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"ok": True})

    async def _events(self, request: Request) -> StreamingResponse:
        last = request.headers.get("last-event-id", "")
        sent = int(last) if is_digits(last, 18) else -1

        def view() -> str | None:
            nonlocal sent
            if self.view.seq == sent:
                return None
            sent, data = self._now()
            return f"id: {sent}\nevent: view\ndata: {data}\n\n"

        return event_stream(request, view)
