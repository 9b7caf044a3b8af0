"""The organiser's dashboard (issue 21, items 2 and 3): every table from a real mosquitto, in a real browser.

Two tables publish through the real publishing code; the dashboard shows both with their
status and marks, a click opens a table's live page fed from the broker, the spectator
delay holds what is shown back, only the organiser's token changes it, and a finished
match is kept (journal identical to the table's), exported and analysed by gnubg.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from referee.broker import BrokerAddress, TablePublisher
from referee.hall import Hall, HallError, HallPage, analyse_match, check_delay
from referee.loop import TableSession
from referee.session import Referee
from referee.spec import MatchSpec
from tests.test_web import browser  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[1]


def _hall(broker, folder, **kw) -> Hall:
    return Hall(BrokerAddress.parse(broker.url("hall")), "club", folder, say=lambda t: None, **kw).start()


def _table(tmp_path, broker, table, white, black):
    ref = Referee.new(tmp_path / f"{table}.jsonl", MatchSpec("match", 3, "backgammon"), white=white, black=black)
    session = TableSession(ref, say=lambda text: None)
    publisher = TablePublisher(ref, BrokerAddress.parse(broker.url(table)), "club", table, say=lambda t: None)
    return ref, session, publisher.start()


def _until(done, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.05)
    raise AssertionError("not in time")


def test_the_dashboard_shows_every_table_and_opens_one_live(tmp_path, broker, browser):  # noqa: F811
    hall = _hall(broker, tmp_path / "hall")
    page = HallPage(hall, port=0).start()
    tables = [_table(tmp_path, broker, "t1", "Anna", "Nikos"), _table(tmp_path, broker, "t2", "Eleni", "Kostas")]
    try:
        tables[0][1].command("board start")
        tables[0][1].command("opening 3 1")
        tables[1][1].command("board start")
        _until(lambda: len(hall.summaries()) == 2 and hall.summaries()[0]["dice"] == [3, 1])
        tab = browser.new_page()
        tab.goto(page.url)
        tab.wait_for_selector('[data-table="t2"][data-status="playing"]', timeout=15000)
        assert "Anna" in tab.inner_text('[data-table="t1"]') and "Kostas" in tab.inner_text('[data-table="t2"]')
        tables[1][1].command("opening 3 1")
        tables[1][1].command("move 13 7")  # a 6 with 3-1: the referee lights it red
        tab.wait_for_selector('[data-table="t2"].illegal', timeout=15000)
        tab.click('[data-table="t1"] a')
        tab.wait_for_selector('[data-die="3"]', timeout=15000)  # t1's own live page, fed from the broker
        assert tab.locator("[data-point]").count() >= 24
        tab.close()
    finally:
        for ref, _, publisher in tables:
            publisher.close(timeout=1)
            ref.close()
        page.stop()
        hall.stop()


def test_the_spectator_delay_holds_the_tables_back_and_only_the_token_changes_it(tmp_path, broker):
    hall = _hall(broker, tmp_path / "hall", delay=3.0)
    page = HallPage(hall, port=0).start()
    ref, session, publisher = _table(tmp_path, broker, "t1", "Anna", "Nikos")
    try:
        session.command("board start")
        published = time.monotonic()
        _until(lambda: hall.summaries(), timeout=15)
        assert time.monotonic() - published >= 2.5
        request = urllib.request.Request(f"{page.url}delay?seconds=0", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 403
        request = urllib.request.Request(f"{page.url}delay?seconds=0&token={page.token}", method="POST")
        assert json.loads(urllib.request.urlopen(request, timeout=5).read())["delay"] == 0.0
    finally:
        publisher.close(timeout=1)
        ref.close()
        page.stop()
        hall.stop()


def test_a_finished_match_is_kept_exported_and_analysed(tmp_path, broker):
    folder = tmp_path / "hall"
    hall = Hall(
        BrokerAddress.parse(broker.url("hall")), "club", folder, analyse=analyse_match, say=lambda t: None
    ).start()
    out = tmp_path / "demo"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "referee.cli", "demo", "--quiet", "--no-camera", "--out", str(out)]
            + ["--broker", broker.url("t1"), "--hall", "club", "--table", "t1"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=300,
        )
        assert done.returncode == 0
        _until(lambda: any(f.endswith(".html") for t in hall.summaries() for f in t["files"]), timeout=120)
    finally:
        hall.stop()
    (kept,) = (folder / "t1").glob("match-*.jsonl")
    assert kept.read_text(encoding="utf-8") == (out / "match-7.jsonl").read_text(encoding="utf-8")
    report = kept.with_suffix(".html").read_text(encoding="utf-8")
    assert "Alice" in report and "PR" in report
    assert kept.with_suffix(".mat").read_text(encoding="utf-8") == (out / "match-7.mat").read_text(encoding="utf-8")


@pytest.mark.parametrize("value", [-1.0, float("nan"), 1e9])
def test_a_bad_delay_is_refused_naming_the_flag(value):
    with pytest.raises(HallError, match="--delay"):
        check_delay(value)


@pytest.mark.parametrize(
    ("args", "flag"),
    [(["--broker", "nope"], "--broker"), (["--broker", "mqtt://127.0.0.1:1", "--out", "{file}"], "--out")],
)
def test_tavli_hall_with_a_bad_broker_or_folder_exits_2(tmp_path, args, flag):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    args = [a.replace("{file}", str(tmp_path / "a-file")) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "hall", *args, "--web", "0", "--for", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and flag in done.stderr and "Traceback" not in done.stderr
