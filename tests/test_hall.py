"""Tables on a hall's broker (issue 21, items 1 and 4): a real mosquitto with the shipped password file and ACL.

A late subscriber finds each table's retained state; the last will marks a killed table
offline; a broker stopped for 10 s mid-match costs no event and no order; a table cannot
write another's topics, the organiser cannot write at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from referee.broker import BrokerAddress, BrokerError, TablePublisher, check_name
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec
from tests.mosquitto import USERS, Broker, free_port

ROOT = Path(__file__).resolve().parents[1]


class Listener:
    """A subscriber as user ``user`` to ``topic``: every message, in the order it came."""

    def __init__(self, broker: Broker, user: str = "hall", topic: str = "tavli/#", client_id: str = "", clean=True):
        self.messages: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311, clean_session=clean
        )
        self.client.username_pw_set(user, USERS[user])
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self.client.on_message = self._message
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.connect("127.0.0.1", broker.port, keepalive=5)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        with self.lock:
            self.messages.append((message.topic, message.payload, bool(message.retain)))

    def on(self, leaf: str) -> list[bytes]:
        with self.lock:
            return [p for t, p, _ in self.messages if t.endswith("/" + leaf)]

    def wait(self, done, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.05)
        raise AssertionError(f"not seen in {timeout} s; got {[(t, p[:60]) for t, p, _ in self.messages][-10:]}")

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _table(tmp_path, broker, table="t1", spec=None):
    ref = Referee.new(tmp_path / f"{table}.jsonl", spec or MatchSpec("match", 3, "backgammon"))
    session = TableSession(ref, say=lambda text: None)
    publisher = TablePublisher(
        ref, BrokerAddress.parse(broker.url(table)), "club", table, paused=session.paused, say=lambda t: None
    )
    return ref, session, publisher.start()


def test_a_late_subscriber_finds_every_tables_state_retained(tmp_path, broker):
    ref, session, publisher = _table(tmp_path, broker)
    try:
        for line in ("board start", "opening 3 1"):
            session.command(line)
        deadline = time.monotonic() + 10
        while (publisher.sent < 3 or not publisher.connected) and time.monotonic() < deadline:
            time.sleep(0.05)
        late = Listener(broker)
        late.wait(lambda: all(late.on(leaf) for leaf in ("status", "position", "match", "view")))
        assert late.on("status")[-1] == b"playing"
        position = json.loads(late.on("position")[-1])
        assert position["variant"] == "backgammon" and position["dice"] == [3, 1]
        assert position["position_id"] == "4HPwATDgc/ABMA" and position["match_id"]
        assert position["score"] == {"white": 0, "black": 0} and position["cube"]["value"] == 1
        match = json.loads(late.on("match")[-1])
        assert (match["kind"], match["length"], match["players"]) == ("match", 3, {"white": "white", "black": "black"})
        late.close()
    finally:
        publisher.close()
        ref.close()


def test_a_killed_table_is_marked_offline_by_its_last_will(tmp_path, broker):
    listener = Listener(broker, topic="tavli/club/table/t1/status")
    table = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "demo", "--quiet", "--no-camera", "--pace", "0.2"]
        + ["--broker", broker.url("t1"), "--hall", "club", "--table", "t1", "--out", str(tmp_path / "demo")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        listener.wait(lambda: b"playing" in listener.on("status"), timeout=60)
        table.send_signal(signal.SIGKILL)
        table.wait(timeout=10)
        listener.wait(lambda: listener.on("status")[-1] == b"offline", timeout=10)
    finally:
        if table.poll() is None:
            table.kill()
        listener.close()


def test_a_broker_stopped_for_10_s_mid_match_costs_no_event_and_no_order(tmp_path, broker):
    """The table plays on while its broker is down; back, it publishes what it missed from the journal."""
    watcher = Listener(broker, topic="tavli/club/table/t1/event", client_id="dashboard", clean=False)
    out = tmp_path / "demo"
    log = tmp_path / "demo.log"
    table = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "demo", "--quiet", "--no-camera", "--pace", "0.05"]
        + ["--broker", broker.url("t1"), "--hall", "club", "--table", "t1", "--out", str(out)],
        cwd=ROOT,
        stdout=log.open("w"),  # a pipe nobody reads would stop the demo once full
        stderr=subprocess.STDOUT,
    )
    try:
        watcher.wait(lambda: len(watcher.on("event")) >= 5, timeout=60)
        broker.stop()
        time.sleep(10)
        broker.start()
        table.wait(timeout=240)
        output = log.read_text(encoding="utf-8")
        assert table.returncode == 0, output[-2000:]
        assert "the broker is gone" in output
        journal = [json.loads(line) for line in (out / "match-7.jsonl").read_text(encoding="utf-8").splitlines()]
        watcher.wait(lambda: max((json.loads(p)["seq"] for p in watcher.on("event")), default=0) >= len(journal))
    finally:
        if table.poll() is None:
            table.kill()
        watcher.close()
    got = [json.loads(p) for p in watcher.on("event")]
    seen, in_order = 0, []
    for event in got:  # QoS 1 is at least once: a repeat of what is held is skipped, never a gap
        assert event["seq"] <= seen + 1, f"a gap before {event['seq']} (held up to {seen})"
        if event["seq"] == seen + 1:
            in_order.append(event)
            seen += 1
    assert in_order == journal
    print(f"hall: {len(journal)} events, {len(got)} delivered ({len(got) - len(journal)} repeats), broker down 10 s")


def test_a_table_cannot_write_another_tables_topics_nor_the_organiser_any(broker):
    hall = Listener(broker)
    writers = {}
    try:
        for user in ("t1", "hall"):
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
            client.username_pw_set(user, USERS[user])
            client.connect("127.0.0.1", broker.port)
            client.loop_start()
            writers[user] = client
        writers["t1"].publish("tavli/club/table/t2/status", b"forged", qos=1, retain=True).wait_for_publish(5)
        writers["hall"].publish("tavli/club/table/t2/match", b"forged", qos=1, retain=True).wait_for_publish(5)
        writers["t1"].publish("tavli/club/table/t1/status", b"online", qos=1, retain=True).wait_for_publish(5)
        hall.wait(lambda: b"online" in hall.on("status"))
        time.sleep(0.5)
        assert not [t for t, p, _ in hall.messages if p == b"forged"]
    finally:
        for client in writers.values():
            client.loop_stop()
            client.disconnect()
        hall.close()


def test_a_wrong_password_is_refused_and_the_table_plays_on(tmp_path, broker):
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    said: list[str] = []
    url = f"mqtt://t1:wrong@127.0.0.1:{broker.port}"
    publisher = TablePublisher(ref, BrokerAddress.parse(url), "club", "t1", say=said.append).start()
    try:
        deadline = time.monotonic() + 10
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said and "refused" in said[0] and not publisher.connected
        TableSession(ref, say=lambda t: None).command("board start")  # the referee is not held up
    finally:
        publisher.close(timeout=0.5)
        ref.close()


def test_a_broker_that_cannot_be_reached_is_said_once_and_the_table_plays_on(tmp_path):
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    said: list[str] = []
    unused = free_port()
    publisher = TablePublisher(ref, BrokerAddress.parse(f"mqtt://127.0.0.1:{unused}"), "club", "t1", say=said.append)
    publisher.start()
    try:
        deadline = time.monotonic() + 10
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said == [f"broker: cannot reach 127.0.0.1:{unused}; the table plays on and tries again"]
        TableSession(ref, say=lambda t: None).command("board start")
    finally:
        publisher.close(timeout=0.5)
        ref.close()


@pytest.mark.parametrize(
    "text",
    ["127.0.0.1:1883", "http://h:1", "mqtt://", "mqtt://h:99999", "mqtt://h:\u00b2", "mqtt://u:p@h:x"],
)
def test_a_bad_broker_address_is_one_line_naming_the_flag(text):
    with pytest.raises(BrokerError, match="--broker") as info:
        BrokerAddress.parse(text)
    assert ":p@" not in str(info.value)  # a password is never echoed


@pytest.mark.parametrize("name", ["", "a/b", "a+", "#", "x" * 65, "t\u00b2"])
def test_a_hall_or_table_name_is_one_topic_level(name):
    with pytest.raises(BrokerError, match="--table"):
        check_name(name, "--table")


def test_tavli_demo_with_a_bad_broker_exits_2_naming_it(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "demo", "--broker", "tcp://x", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert done.returncode == 2 and "--broker" in done.stderr and "Traceback" not in done.stderr
