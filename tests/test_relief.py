"""Checkers standing up: the camera's eye from a calibration, and the tops of tall stacks read where
the camera sees them (``Geometry.relief``), on frames the renderer draws in relief."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from benchmarks.bench_vision import scene
from vision.board import CHECKER_HEIGHT_MM, lifted
from vision.calibrate import CalibrationError, Geometry, calibrate, camera_eye
from vision.checkers import read_checkers
from vision.profile import layout
from vision.render import camera_pose, render


def test_the_eye_from_a_calibration_is_near_the_renderers_camera():
    # the renderer's camera looks through a point off the image's centre (its frame is shifted):
    # the eye worked out as if through the centre is still within 250 mm of it, 1,100 mm away
    for seed in range(20):
        cam = camera_pose(seed)
        got = camera_eye(cam.homography, cam.size)
        assert got is not None and math.dist(got, cam.eye_mm) < 250, (seed, got, cam.eye_mm)


def test_a_square_on_view_gives_no_eye():
    assert camera_eye([[2.0, 0, 10], [0, 2.0, 20], [0, 0, 1]], (1280, 960)) is None


def test_a_slots_top_is_lifted_by_its_layer_and_its_own_height():
    flat = layout()
    eye = (350.0, 700.0, 1000.0)
    seen = flat.seen_from(eye)
    for point, index in ((13, 0), (13, 7), (24, 14), (1, 3)):
        x, y, layer = flat.checker_slot(point, index)
        assert flat.checker_top(point, index) == (x, y, 1.0)
        (lx, ly), scale = lifted(eye, (x, y), (layer + 1) * CHECKER_HEIGHT_MM)
        assert seen.checker_top(point, index) == pytest.approx((lx, ly, scale))
    assert flat.seen_from((352.0, 704.0, 998.0)) == seen  # a camera that moved a few mm keeps its rims


def _frame(seed: int):
    s = scene(seed, 0.0)
    position = s.pop("position")
    return position, render(position, seed=seed, relief=True, **s)


@pytest.mark.parametrize("seed", [500009, 500011, 500019])
def test_tall_stacks_in_relief_are_read_right_only_where_the_tops_are_looked_for_standing_up(seed):
    # bench_vision.py --relief: 12 white checkers on point 24, far from the camera, read as 5 on the field's
    # plane; 500019's 7 on 24 read as 8 in relief until the undersides' rims were predicted too
    position, frame = _frame(seed)
    geometry = calibrate(frame.image)
    flat = read_checkers(geometry, frame.image)
    raised = read_checkers(dataclasses.replace(geometry, relief=True), frame.image)
    assert raised.points == position.points
    assert flat.points != position.points


def test_relief_is_kept_in_the_geometry_file_and_checked(tmp_path):
    _, frame = _frame(500009)
    geometry = dataclasses.replace(calibrate(frame.image), relief=True)
    path = tmp_path / "geometry.json"
    geometry.save(path)
    assert json.loads(path.read_text())["relief"] is True
    assert Geometry.from_json(path.read_text()) == geometry
    assert geometry.layout.eye is not None and dataclasses.replace(geometry, relief=False).layout.eye is None
    data = json.loads(path.read_text())
    data["relief"] = "yes"
    with pytest.raises(CalibrationError, match="relief"):
        Geometry.from_dict(data)


def test_calibrate_on_the_command_line_with_relief(tmp_path):
    import cv2

    from referee.cli import main

    _, frame = _frame(500009)
    image, out = tmp_path / "frame.png", tmp_path / "geometry.json"
    cv2.imwrite(str(image), frame.image)
    assert main(["vision", "calibrate", str(image), "--relief", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["relief"] is True
