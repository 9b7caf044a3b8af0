"""A table on its hall's MQTT broker: its state kept there, its match published event by event.

Owns :class:`BrokerAddress` (``mqtt://[USER[:PASS]@]HOST[:PORT]``), :func:`table_topic` and
:class:`TablePublisher`, which publishes one table under ``tavli/<hall>/table/<id>/``:

- ``status`` (retained): ``online``, ``playing``, ``paused``, ``offline`` (the last will too);
- ``position`` (retained): Position JSON with the dice, the cube, the score, the gnubg Position ID and Match ID;
- ``event`` (QoS 1): every line of the match journal as it was written, its ``seq`` the journal's;
- ``match`` (retained): players, variant, length, score, Crawford, and the journal's name once it ends;
- ``view`` (retained): what the live page shows (:class:`~referee.view.TableView`), for the hall's pages;
- ``live`` (QoS 0): the table's passing events (calls, LEDs, boards seen), not kept, not numbered.

The journal is the truth: ``event`` is read back from the journal file by a thread of its own,
so a table that loses its broker keeps playing and, once the broker is back, publishes from the
first event the broker did not acknowledge, in order: a subscriber sees no gap. QoS 1 delivers at
least once: a subscriber keeps the highest ``seq`` it holds and skips repeats (a resumed referee
publishes its match from the first event again). Nothing here blocks the referee.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from board_rules import Side
from board_rules.gnubg_id import GAME_OVER, GAME_PLAYING, MatchState, encode_match_id
from board_rules.ids import position_id
from board_rules.match import Match
from board_rules.untrusted import is_digits
from referee import events as E
from referee.errors import JournalError
from referee.view import TableView

DEFAULT_PORT = 1883
KEEPALIVE_S = 10
TAIL_S = 0.05  # how often the journal is looked at for new lines
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


class BrokerError(JournalError):
    """A broker address, hall or table name that cannot be used: the message names the flag."""


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """Where the hall's broker listens, and who this client is there."""

    host: str
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, text: str) -> BrokerAddress:
        """``mqtt://[USER[:PASS]@]HOST[:PORT]``; raises :class:`BrokerError` naming ``--broker``.

        >>> BrokerAddress.parse("mqtt://table-3:s3cret@hall.local:1884")
        BrokerAddress(host='hall.local', port=1884, user='table-3', password='s3cret')
        """
        shown = text if "@" not in text else "mqtt://...@" + text.rpartition("@")[2]  # never echo a password
        url = urllib.parse.urlsplit(text.strip())
        port_text = url.netloc.rpartition("@")[2].rpartition(":")[2] if ":" in url.netloc.rpartition("@")[2] else ""
        if url.scheme != "mqtt" or not url.hostname or (port_text and not is_digits(port_text, 5)):
            raise BrokerError(f"--broker: {shown!r}: give mqtt://[USER:PASS@]HOST[:PORT], e.g. mqtt://127.0.0.1:1883")
        port = int(port_text) if port_text else DEFAULT_PORT
        if not 1 <= port <= 65535:
            raise BrokerError(f"--broker: {shown!r}: the port must be 1..65535")
        user = urllib.parse.unquote(url.username) if url.username else None
        password = urllib.parse.unquote(url.password) if url.password is not None else None
        return cls(url.hostname, port, user, password)


def check_name(text: str, flag: str) -> str:
    """A hall or table name: 1..64 letters, digits, ``-``, ``_`` or ``.`` (it is a topic level)."""
    if not (isinstance(text, str) and 0 < len(text) <= 64 and set(text) <= NAME_CHARS):
        raise BrokerError(f"{flag}: {text!r}: give 1 to 64 letters, digits, '-', '_' or '.'")
    return text


def table_topic(hall: str, table: str, leaf: str = "") -> str:
    """``tavli/<hall>/table/<table>/<leaf>``."""
    return f"tavli/{hall}/table/{table}/{leaf}"


def new_client(address: BrokerAddress, client_id: str) -> mqtt.Client:
    """A paho client for ``address`` (MQTT 3.1.1), not yet connected."""
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True
    )
    if address.user is not None:
        client.username_pw_set(address.user, address.password)
    client.reconnect_delay_set(min_delay=1, max_delay=4)
    return client


class TablePublisher:
    """Publishes one referee's table on a broker (see the module docstring).

    Subscribe it to the referee's stream with :meth:`start`; ``paused`` says why the game
    waits now (a source down), or None. :meth:`close` marks the table offline and stops.
    """

    def __init__(
        self,
        referee,
        address: BrokerAddress,
        hall: str,
        table: str,
        *,
        paused: Callable[[], str | None] = lambda: None,
        say: Callable[[str], None] = print,
    ) -> None:
        self.referee = referee
        self.hall, self.table = check_name(hall, "--hall"), check_name(table, "--table")
        self.address = address
        self.paused = paused
        self.say = say
        self.view = TableView()
        self.view.prime(referee.flow, referee.stream.seq)
        self._journal = Path(referee.journal.path)
        self._lock = threading.Lock()
        self._connected = False
        self._said_down = False
        self._send_at = 0  # byte offset of the next journal line to send
        self._acked_at = 0  # every line before this offset is acknowledged by the broker
        self._inflight: deque[list] = deque()  # [mid, end offset, acked], in the order sent
        self._early_acks: set[int] = set()
        self._epoch = 0  # one more each time the connection goes
        self._retained: dict[str, bytes] = {}
        self._status = ""
        self._stop = threading.Event()
        self._dirty = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0  # event lines handed to the broker (repeats after a reconnect included)
        self.client = new_client(address, f"tavli-{hall}-{table}")
        self.client.will_set(self.topic("status"), b"offline", qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_connect_fail = lambda client, userdata: self._down(
            f"cannot reach {address.host}:{address.port}; the table plays on and tries again"
        )
        self.client.on_publish = self._on_publish

    def topic(self, leaf: str) -> str:
        return table_topic(self.hall, self.table, leaf)

    # ------------------------------------------------------------------ life

    def start(self) -> TablePublisher:
        """Subscribe to the referee's stream and connect (in the background: a broker that is not
        there yet is tried again every few seconds, and the table plays on meanwhile)."""
        self.referee.stream.subscribe(self)
        self._refresh()
        self.client.connect_async(self.address.host, self.address.port, keepalive=KEEPALIVE_S)
        self.client.loop_start()
        self._thread = threading.Thread(target=self._tail, name=f"tavli-broker-{self.table}", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 3.0) -> None:
        """Publish what is left of the journal, mark the table offline and disconnect."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._connected and self._backlog():
            time.sleep(TAIL_S)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._dirty.is_set():
            self._refresh()
        try:
            self.referee.stream.unsubscribe(self)
        except ValueError:
            pass
        if self._connected:
            info = self.client.publish(self.topic("status"), b"offline", qos=1, retain=True)
            try:
                info.wait_for_publish(timeout=max(0.1, deadline - time.monotonic()))
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()

    @property
    def connected(self) -> bool:
        return self._connected

    def _backlog(self) -> bool:
        with self._lock:
            return bool(self._inflight) or self._journal_size() > self._send_at

    def _journal_size(self) -> int:
        try:
            return self._journal.stat().st_size
        except OSError:
            return 0

    # ------------------------------------------------------------------ paho's thread

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self._down(f"the broker refused the table ({reason_code})")
            return
        with self._lock:
            self._connected = True
            self._said_down = False
            retained = dict(self._retained)
        for leaf, payload in retained.items():  # what a late subscriber must find, after a broker restart too
            client.publish(self.topic(leaf), payload, qos=1, retain=True)
        self.say(f"broker: table {self.table} of hall {self.hall} on {self.address.host}:{self.address.port}")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._lock:
            self._connected = False
            self._epoch += 1  # lines being sent now belong to the connection that is gone
            self._send_at = self._acked_at  # send again from the first line not acknowledged
            self._inflight.clear()
            self._early_acks.clear()
        if not self._stop.is_set():
            self._down("the broker is gone; the table plays on and publishes what it missed when it is back")

    def _down(self, text: str) -> None:
        if not self._said_down:
            self._said_down = True
            self.say(f"broker: {text}")

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        with self._lock:
            for item in self._inflight:
                if item[0] == mid:
                    item[2] = True
                    break
            else:  # acknowledged before _send_new_lines noted it
                self._early_acks.add(mid)
            self._advance()

    def _advance(self) -> None:
        while self._inflight and self._inflight[0][2]:
            self._acked_at = self._inflight.popleft()[1]

    # ------------------------------------------------------------------ the journal's thread

    def _tail(self) -> None:
        while not self._stop.is_set():
            try:
                self._send_new_lines()
                if self._dirty.is_set():
                    self._dirty.clear()
                    self._refresh()
                self._refresh_status()
            except OSError:
                pass  # the journal is being replaced or the socket is closing: the next round tries again
            self._wake.wait(TAIL_S)  # an event wakes it at once; the journal is looked at anyway now and then
            self._wake.clear()

    def _send_new_lines(self) -> None:
        """Publish the journal's whole lines after the last one sent. paho's own locks are never
        taken under :attr:`_lock` (its thread calls :meth:`_on_publish` holding them)."""
        with self._lock:
            if not self._connected or self._journal_size() <= self._send_at:
                return
            start, epoch = self._send_at, self._epoch
        with open(self._journal, "rb") as fh:
            fh.seek(start)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # only whole lines: the referee may be writing the next one
        offset = start
        for line in data[:end].splitlines(keepends=True):
            offset += len(line)
            body = line.strip()
            if not body:
                continue
            info = self.client.publish(self.topic("event"), body, qos=1)
            with self._lock:
                if self._epoch != epoch:
                    return  # the connection went meanwhile: the next one starts from the last acknowledged
                self._inflight.append([info.mid, offset, info.mid in self._early_acks])
                self._early_acks.discard(info.mid)
                self._send_at = offset
                self.sent += 1
                self._advance()

    # ------------------------------------------------------------------ the referee's thread

    def __call__(self, item: E.Stamped) -> None:
        """A stream event: the view moves on; passing events go out on ``live``, state is kept."""
        with self.view.lock:
            self.view.take(item)
        if not item.event.journaled:
            live = {"seq": item.seq, "time": item.time, **item.event.to_dict()}
            self._publish("live", json.dumps(live, separators=(",", ":")).encode(), retain=False, qos=0)
        self._dirty.set()  # the journal's thread publishes the state: a turn's events make one update
        self._wake.set()

    def _refresh(self) -> None:
        with self.view.lock:
            view = self.view.to_dict()
        self._keep("view", view)
        self._keep("position", position_message(self.referee, view))
        self._keep("match", match_message(self.referee, view))
        self._refresh_status()

    def _refresh_status(self) -> None:
        status = self._status_now()
        if status != self._status:
            self._status = status
            with self._lock:
                self._retained["status"] = status.encode()
            self._publish("status", status.encode())

    def _status_now(self) -> str:
        if self.paused() is not None or self.referee.journal_sink.error is not None:  # the disk refused an event
            return "paused"
        return "online" if self.referee.phase.value in ("over", "match_end") else "playing"

    def _keep(self, leaf: str, data: dict[str, Any]) -> None:
        payload = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
        with self._lock:
            if self._retained.get(leaf) == payload:
                return
            self._retained[leaf] = payload
        self._publish(leaf, payload)

    def _publish(self, leaf: str, payload: bytes, *, retain: bool = True, qos: int = 1) -> None:
        if self._connected:  # when not, _on_connect publishes the kept state; passing events are gone
            self.client.publish(self.topic(leaf), payload, qos=qos, retain=retain)


def position_message(referee, view: dict[str, Any]) -> dict[str, Any]:
    """The retained ``position``: Position JSON with dice, cube, score and gnubg's IDs where gnubg has them."""
    out: dict[str, Any] = dict(view["position"] or {})
    out.update(dice=view["dice"], cube=view["cube"], score=view["score"], on_roll=view["on_roll"], seq=view["seq"])
    out["position_id"] = out["match_id"] = None
    position = referee.seen or referee.position
    if position is not None:
        try:  # backgammon and portes boards; plakoto's pins, fevga's and nardy's directions have none
            out["position_id"] = position_id(position)
            if position.variant.name == "backgammon":
                out["match_id"] = _match_id(referee, view, position.turn)
        except ValueError:  # another game, or a board no Position ID holds (checkers missing mid-move)
            pass
    return out


def _match_id(referee, view: dict[str, Any], turn: Side) -> str | None:
    """gnubg's Match ID of the game now: cube, turn, dice, score (money: no length)."""
    record = referee.record
    cube = record.cube
    if cube is None or record.spec is None:
        return None
    board = record.scoreboard
    length = record.spec.length if isinstance(board, Match) else 0
    score = (view["score"]["white"], view["score"]["black"]) if length else (0, 0)
    dice = tuple(view["dice"]) if len(view["dice"]) == 2 and referee.on_roll is not None else (0, 0)
    state = MatchState(
        cube.value,
        cube.owner,
        turn,
        bool(getattr(board, "crawford_game", False)) and bool(length),
        GAME_OVER if record.outcome is not None else GAME_PLAYING,
        turn,
        False,
        0,
        dice,
        length,
        score,
    )
    return encode_match_id(state)


def match_message(referee, view: dict[str, Any]) -> dict[str, Any]:
    """The retained ``match``: who plays what, to how many points, the score, and the record once over."""
    spec = referee.record.spec
    out = {
        "players": view["players"],
        "kind": spec.kind if spec is not None else None,
        "variant": view["variant"],
        "length": spec.length if spec is not None else None,
        "score": view["score"],
        "crawford": bool(getattr(referee.record.scoreboard, "crawford_game", False)),
        "game": view["game"],
        "over": view["over"],
        "record": None,
    }
    if view["over"]:
        out["record"] = Path(referee.journal.path).name
    return out


__all__ = ["BrokerAddress", "BrokerError", "TablePublisher", "check_name", "new_client", "table_topic"]
