"""Tests against the real sensor/LED board: marked ``hardware`` and skipped unless asked for.

Run with ``pytest -m hardware`` and ``TAVLI_BOARD_PORT`` (a pyserial URL or device path)
set, or with the board plugged in and found by its USB vendor/product id.
"""

from __future__ import annotations

import os
import queue

import pytest

from firmware_bridge.link import BoardLink
from firmware_bridge.protocol import Led, LedFrame, Snapshot

pytestmark = pytest.mark.hardware


@pytest.fixture
def link():
    port = os.environ.get("TAVLI_BOARD_PORT")
    if port is None:
        pytest.skip("set TAVLI_BOARD_PORT to the board's port to run the hardware tests")
    board = BoardLink(port).start()
    yield board
    board.stop()


def test_real_board_handshakes_and_sends_a_snapshot(link):
    assert link.hello is not None and link.hello.led_count >= 27
    deadline_event = None
    while deadline_event is None:
        try:
            event = link.events.get(timeout=2)
        except queue.Empty:
            pytest.fail("no snapshot from the board within 2 s")
        if isinstance(event, Snapshot):
            deadline_event = event


def test_real_board_acknowledges_an_led_frame(link):
    frame = LedFrame(tuple(Led(0, 32, 0) for _ in range(link.hello.led_count)))
    assert link.send_leds(frame)
