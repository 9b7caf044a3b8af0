"""The live table page: served from the referee's event stream, drawn in a real browser (Debian's chromium)."""

import http.client
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from board_rules import Position, Roll
from referee.session import Referee
from referee.spec import MatchSpec
from referee.web import LivePage, WebAddressError, parse_address

START = Position.start("backgammon")
OPENING = START.play("8/5 6/5", Roll(3, 1))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTEFACTS = Path(os.environ.get("TAVLI_ARTEFACTS", "test-artefacts"))


@pytest.fixture
def browser():
    if CHROMIUM is None:
        if os.environ.get("TAVLI_REQUIRE_BROWSER"):
            pytest.fail("chromium is required (TAVLI_REQUIRE_BROWSER) but not installed")
        pytest.skip("no chromium here (apt install chromium)")
    from playwright.sync_api import sync_playwright

    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    flags += ["--disable-sync", "--no-first-run", "--disable-quic"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
        yield b
        b.close()


def _referee(tmp_path) -> Referee:
    return Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon", games=1), white="Ann", black="Ben")


def test_parse_address_defaults_to_the_loopback_and_names_a_bad_value():
    assert parse_address("8080") == ("127.0.0.1", 8080)
    assert parse_address("0.0.0.0:80") == ("0.0.0.0", 80)
    for bad in ("", "x", "127.0.0.1:", "70000", "²"):
        with pytest.raises(WebAddressError, match="--web"):
            parse_address(bad)


def test_the_view_and_the_event_stream_catch_a_late_page_up_at_once(tmp_path):
    ref = _referee(tmp_path)
    with LivePage(ref) as page:
        ref.board(START)
        ref.opening(3, 1)
        conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=5)
        conn.request("GET", "/view")
        view = json.loads(conn.getresponse().read())
        assert view["players"] == {"white": "Ann", "black": "Ben"} and view["dice"] == [3, 1]
        assert view["position"]["points"] == list(START.points) and view["pips"] == {"white": 167, "black": 167}
        conn.request("GET", "/events", headers={"Last-Event-ID": "1"})  # a page that saw only the first event
        stream = conn.getresponse()
        assert stream.getheader("Content-Type").startswith("text/event-stream")
        lines = [stream.readline().decode().strip() for _ in range(5)]
        assert f"id: {ref.stream.seq}" in lines and "event: view" in lines
        conn.close()
    ref.close()


def test_the_page_lights_an_illegal_board_red_and_dark_again_once_put_right(tmp_path, browser):
    ref = _referee(tmp_path)
    with LivePage(ref) as page:
        ref.board(START)
        ref.opening(3, 1)
        tab = browser.new_page()
        tab.goto(page.url)
        tab.wait_for_selector('[data-die="3"]')
        assert tab.locator('[data-point="8"] [data-checker="white"]').count() == 3
        wrong = START.play("8/4", Roll(3, 1))  # then one more from 8 to 2: no legal play passes through it
        pts = list(wrong.points)
        pts[7], pts[1] = pts[7] - 1, 1
        bad = Position(wrong.variant, wrong.turn, tuple(pts), wrong.pinned, wrong.bar, wrong.off, wrong.rolls)
        ref.board(bad)
        tab.wait_for_selector('[data-point="2"][data-led="red"]', timeout=5000)
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(ARTEFACTS / "live-table-illegal-play.png"))
        assert "no legal play passes through this board" in tab.inner_text("#calls")
        ref.board(OPENING)
        tab.wait_for_selector("[data-led]", state="detached", timeout=5000)
        assert tab.locator('[data-point="5"] [data-checker="white"]').count() == 2
    ref.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_demos_page_shows_the_slip_lit_red_then_put_right(tmp_path, browser):
    from referee.demo import run_demo

    port = _free_port()
    done = threading.Event()
    result = {}

    def demo():
        try:
            result["code"] = run_demo(
                seed=3, quiet=True, camera=False, out=tmp_path, web=f"127.0.0.1:{port}", pace=0.25
            )
        finally:
            done.set()

    threading.Thread(target=demo, daemon=True).start()
    tab = browser.new_page()
    deadline = time.monotonic() + 30
    while True:
        try:
            tab.goto(f"http://127.0.0.1:{port}/")
            break
        except Exception:  # the server is not up yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    tab.wait_for_selector('[data-led="red"]', timeout=120_000)  # the slipped checker's points
    tab.wait_for_selector('[data-led="red"]', state="detached", timeout=60_000)  # ... put right
    assert done.wait(300) and result.get("code") == 0


def test_the_page_serves_the_cameras_last_frame_annotated(tmp_path):
    from referee.standins import RenderedCamera

    ref = _referee(tmp_path)
    camera = RenderedCamera(seed=5)
    camera.calibrate(ref.position)
    with LivePage(ref, camera=camera) as page:
        conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
        conn.request("GET", "/frame.jpg")
        answer = conn.getresponse()
        assert answer.status == 404 and b"no camera frame" in answer.read()
        camera.throw(ref.position, [(3, "right"), (5, "right")], None)
        conn.request("GET", "/frame.jpg")
        answer = conn.getresponse()
        body = answer.read()
        assert answer.status == 200 and answer.getheader("Content-Type") == "image/jpeg" and body[:2] == b"\xff\xd8"
        conn.request("GET", "/view")
        assert json.loads(conn.getresponse().read())["camera"] is True
        conn.close()
    ref.close()
