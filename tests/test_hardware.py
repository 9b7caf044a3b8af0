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


def test_real_camera_gives_a_still_of_the_size_asked_and_the_calibrated_board_is_found():
    """With ``TAVLI_CAMERA`` (a camera number) and ``TAVLI_GEOMETRY`` (its geometry.json from
    ``tavli vision calibrate``) set: a still at the calibrated size, and the board in it."""
    camera, geometry_path = os.environ.get("TAVLI_CAMERA"), os.environ.get("TAVLI_GEOMETRY")
    if camera is None or geometry_path is None:
        pytest.skip("set TAVLI_CAMERA and TAVLI_GEOMETRY to run the camera test")
    from vision.calibrate import Geometry
    from vision.images import grab_frame
    from vision.observe import at_calibrated_size, read_frame

    geometry = Geometry.load(geometry_path)
    frame = grab_frame(camera, geometry.image_size)
    obs = read_frame(geometry, at_calibrated_size(geometry, frame))
    assert obs.status in ("settling", "occluded"), obs.messages
