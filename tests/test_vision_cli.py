"""``tavli vision calibrate`` from the command line, on a rendered frame."""

from __future__ import annotations

import json

import cv2

from board_rules import Position
from tests.test_cli import run
from vision.calibrate import Geometry
from vision.render import render


def test_vision_calibrate_writes_a_geometry_that_loads(tmp_path):
    frame = render(Position.start("portes"), seed=4)
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), frame.image)
    out = tmp_path / "geometry.json"
    code, text, _ = run(["vision", "calibrate", str(image), "-o", str(out)])
    assert code == 0 and "from markers" in text
    geometry = Geometry.load(str(out))
    assert geometry.source == "markers" and json.loads(out.read_text())["white_point_1"]


def test_vision_calibrate_refuses_bad_corners_and_unreadable_images(tmp_path):
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), render(Position.start("portes"), seed=4).image)
    code, _, err = run(["vision", "calibrate", str(image), "--corners", "1,2,3", "-o", str(tmp_path / "g.json")])
    assert code == 2 and "eight numbers" in err
    code, _, err = run(["vision", "calibrate", str(tmp_path / "missing.png"), "-o", str(tmp_path / "g.json")])
    assert code == 2 and "missing.png" in err


def test_vision_calibrate_records_the_board_profile_and_home_side(tmp_path):
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), render(Position.start("portes"), seed=4).image)
    out = tmp_path / "geometry.json"
    corners = "100,50,900,60,880,600,120,590"
    code, text, _ = run(["vision", "calibrate", str(image), "--corners", corners, "--field", "--profile", "tournament",
                         "--home", "left", "-o", str(out)])
    assert code == 0 and "profile tournament, home left" in text
    geometry = Geometry.load(str(out))
    assert (geometry.profile, geometry.home) == ("tournament", "left")
    assert json.loads(out.read_text())["white_point_1"]["corner"] == "bottom-left"
    code, _, err = run(["vision", "calibrate", str(image), "--corners", corners, "--profile", "nope", "-o", str(out)])
    assert code == 2 and "'nope'" in err
