"""Calibration and rectification recover the renderer's ground-truth camera."""

import json

import cv2
import numpy as np
import pytest

from board_rules import Position, Side, find_variant
from vision.board import BOARD_HEIGHT_MM, BOARD_WIDTH_MM, GEOMETRY, checker_slot
from vision.calibrate import (
    CalibrationError,
    Geometry,
    calibrate,
    check,
    detect_markers,
    knocked,
    marker_sheet,
)
from vision.config import ConfigError, VisionConfig
from vision.rectify import (
    board_rect_to_rectified,
    board_to_rectified,
    point_rect_mm,
    rectify,
)
from vision.render import BOARD_STYLES, CHECKER_STYLES, render

START = Position.start("backgammon")
POINT_CENTRES = [(p.centre_x, (p.base_y + p.tip_y) / 2) for p in GEOMETRY.points]
CONFIG = VisionConfig.load()


def _truth(frame, pts):
    p = np.c_[np.asarray(pts, dtype=np.float64), np.ones(len(pts))] @ frame.homography.T
    return p[:, :2] / p[:, 2:3]


def _position(points, off=(0, 0)):
    return Position(find_variant("backgammon"), Side.WHITE, tuple(points), bar=(0, 0), off=off)


@pytest.mark.parametrize(
    "seed, style, checkers, hand",
    [
        (0, "walnut", "matte", False),
        (1, "felt", "glossy", False),
        (2, "olive", "metal", False),
        (3, "walnut", "glossy", True),
        (11, "felt", "metal", False),
    ],
)
def test_markers_recover_the_renderers_homography_within_3px_at_every_point(seed, style, checkers, hand):
    frame = render(START, seed=seed, style=style, checkers=checkers, hand=hand, dice=[(3, None), (5, None)])
    g = calibrate(frame.image)
    assert g.source == "markers"
    assert [i for i, _ in g.markers] == [0, 1, 2, 3]
    assert g.image_size == (frame.image.shape[1], frame.image.shape[0])
    assert g.reprojection_px < 1.5
    err = np.linalg.norm(g.to_image(POINT_CENTRES) - _truth(frame, POINT_CENTRES), axis=1)
    assert err.max() < 3.0


def test_corners_fallback_with_true_corner_pixels_matches_within_1px():
    frame = render(START, seed=4, style="felt")
    corners = _truth(frame, [(0, 0), (BOARD_WIDTH_MM, 0), (BOARD_WIDTH_MM, BOARD_HEIGHT_MM), (0, BOARD_HEIGHT_MM)])
    g = calibrate(frame.image, corners=[tuple(c) for c in corners])
    assert g.source == "corners" and g.markers == () and g.reprojection_px == 0.0
    err = np.linalg.norm(g.to_image(POINT_CENTRES) - _truth(frame, POINT_CENTRES), axis=1)
    assert err.max() < 1.0


@pytest.mark.parametrize(
    "corners",
    [
        [(0, 0), (10, 0), (10, 10)],  # three
        [(0, 0), (10, 0), (0, 10), (10, 10)],  # self-crossing
        [(0, 0), (0, 10), (10, 10), (10, 0)],  # anticlockwise: mirrored order
        [(0, 0), (10, 0), ("x", 10), (0, 10)],
    ],
)
def test_bad_corners_are_refused_with_the_expected_order_named(corners):
    with pytest.raises(CalibrationError, match="top-left, top-right, bottom-right"):
        calibrate(np.zeros((100, 100, 3), np.uint8), corners=corners)


def test_two_covered_markers_raise_naming_the_markers_found():
    frame = render(START, seed=5)
    image = frame.image.copy()
    for marker_id in (1, 3):
        x, y, w, h = cv2.boundingRect(frame.markers[marker_id].astype(np.float32))
        cv2.rectangle(image, (x - 6, y - 6), (x + w + 6, y + h + 6), (0, 0, 0), -1)
    assert sorted(detect_markers(image)) == [0, 2]
    with pytest.raises(CalibrationError, match=r"found markers \[0, 2\]; need all four.*--corners") as info:
        calibrate(image)
    assert isinstance(info.value, ValueError)


def test_three_markers_suffice_when_the_config_allows_it():
    frame = render(START, seed=6)
    image = frame.image.copy()
    x, y, w, h = cv2.boundingRect(frame.markers[2].astype(np.float32))
    cv2.rectangle(image, (x - 6, y - 6), (x + w + 6, y + h + 6), (0, 0, 0), -1)
    with pytest.raises(CalibrationError, match=r"\[0, 1, 3\]"):
        calibrate(image, CONFIG)
    g = calibrate(image, VisionConfig(min_markers=3))
    assert np.linalg.norm(g.to_image(POINT_CENTRES) - _truth(frame, POINT_CENTRES), axis=1).max() < 3.0


def test_a_blank_image_names_no_markers():
    with pytest.raises(CalibrationError, match=r"found markers \[\]"):
        calibrate(np.full((480, 640, 3), 128, np.uint8))


def test_geometry_json_round_trip_and_contents(tmp_path):
    frame = render(START, seed=7)
    g = calibrate(frame.image)
    assert Geometry.from_json(g.to_json()) == g
    path = tmp_path / "geometry.json"
    g.save(path)
    assert Geometry.load(path) == g
    data = json.loads(path.read_text())
    assert data["white_point_1"]["corner"] == "bottom-right"
    assert sorted(data["regions"]["points"], key=int) == [str(n) for n in range(1, 25)]
    assert {"bar", "tray_white", "tray_black", "dice_area", "left_half", "right_half"} <= set(data["regions"])
    # point 1's column, mapped back to board mm, is where the renderer puts point 1
    poly = np.array(data["regions"]["points"]["1"])
    centre_mm = g.to_board([poly.mean(0)])[0]
    assert GEOMETRY.point_at(*centre_mm) == 1
    c = cv2.pointPolygonTest(
        poly.astype(np.float32), tuple(float(v) for v in data["white_point_1"]["centre_px"]), False
    )
    assert c > 0


@pytest.mark.parametrize(
    "text, match",
    [
        ("not json", "not valid JSON"),
        ('{"format": "other"}', "format: 'other'"),
        ('{"format": "tavli-geometry/1", "image_size": [10, 10], "source": "markers"}', "missing field 'homography'"),
        (
            '{"format": "tavli-geometry/1", "homography": [[0,0,0],[0,0,0],[0,0,0]], "image_size": [10, 10], "source": "markers"}',
            "invertible",
        ),
        (
            '{"format": "tavli-geometry/1", "homography": [[1,0,0],[0,1,0],[0,0,1]], "image_size": [10, 10], "source": "guess"}',
            "source: 'guess'",
        ),
    ],
)
def test_bad_geometry_files_raise_clear_errors(tmp_path, text, match):
    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=match):
        Geometry.load(path)


def test_missing_geometry_file_raises_calibration_error(tmp_path):
    with pytest.raises(CalibrationError, match="cannot read"):
        Geometry.load(tmp_path / "nope.json")


def test_check_reports_no_drift_on_the_same_camera_and_drift_when_knocked():
    a = render(START, seed=8)
    g = calibrate(a.image)
    same = check(g, render(START, camera=None, seed=8).image)
    assert same is not None and same < 1.0 and not knocked(same, CONFIG)
    moved = check(g, render(START, seed=9).image)
    assert moved is not None and moved > CONFIG.drift_px_knocked and knocked(moved, CONFIG)
    assert check(g, np.zeros_like(a.image)) is None and not knocked(None, CONFIG)


def test_check_is_quiet_across_frames_of_one_camera_with_a_hand_over_the_board():
    a = render(START, seed=10)
    g = calibrate(a.image)
    from vision.render import camera_pose

    b = render(START, camera=camera_pose(10), seed=77, scene_seed=10, hand=True)
    drift = check(g, b.image)
    assert drift is not None and drift < CONFIG.drift_px_knocked


@pytest.mark.parametrize("style", sorted(BOARD_STYLES))
def test_rectify_puts_point_regions_where_the_geometry_says(style):
    points = [0] * 24
    points[0] = 1  # one white checker on white's point 1
    points[23] = -1  # one black checker on point 24; the rest borne off
    frame = render(
        _position(points, off=(14, 14)), seed=12, style=style, checkers="matte", lighting=False, noise=0, jpeg=None
    )
    g = calibrate(frame.image)
    ppm = 2.0
    top = rectify(g, frame.image, ppm)
    assert top.shape[:2] == (round(BOARD_HEIGHT_MM * ppm), round(BOARD_WIDTH_MM * ppm))
    bstyle, cstyle = BOARD_STYLES[style], CHECKER_STYLES["matte"]

    def mean_around(xy_mm, r_mm=6):
        x, y = board_to_rectified([xy_mm], ppm)[0]
        r = int(r_mm * ppm)
        return top[int(y) - r : int(y) + r, int(x) - r : int(x) + r].reshape(-1, 3).mean(0)

    # the checkers sit where checker_slot says
    assert np.abs(mean_around(checker_slot(1, 0)[:2]) - cstyle.white).max() < 25
    assert np.abs(mean_around(checker_slot(24, 0)[:2]) - cstyle.black).max() < 25
    # an empty triangle shows its colour near its base (odd points point_a, even point_b)
    for n in (2, 3, 13, 20):
        p = GEOMETRY.points[n - 1]
        base = (p.centre_x, p.base_y + p.direction * 30)
        colour = bstyle.point_a if n % 2 else bstyle.point_b
        assert np.abs(mean_around(base, 4) - colour).max() < 25, n
    # the bar region read through the slice helpers is the bar's colour
    rows, cols = board_rect_to_rectified((GEOMETRY.bar[0] + 10, 100, GEOMETRY.bar[2] - 10, 200), ppm)
    assert np.abs(top[rows, cols].reshape(-1, 3).mean(0) - bstyle.bar).max() < 25
    assert point_rect_mm(1)[2] == GEOMETRY.points[0].x1


def test_rectify_defaults_to_the_configs_resolution():
    frame = render(START, seed=13)
    g = calibrate(frame.image)
    top = rectify(g, frame.image, config=VisionConfig(px_per_mm=0.5))
    assert top.shape[:2] == (round(BOARD_HEIGHT_MM * 0.5), round(BOARD_WIDTH_MM * 0.5))
    with pytest.raises(ValueError, match="px_per_mm"):
        rectify(g, frame.image, 0)


def test_config_file_loads_and_bad_values_are_refused(tmp_path):
    assert CONFIG.min_markers == 4 and CONFIG.drift_px_knocked > 0 and CONFIG.px_per_mm > 0
    path = tmp_path / "v.toml"
    path.write_text("[check]\ndrift_px_knocked = 9.5\n")
    assert VisionConfig.load(path).drift_px_knocked == 9.5
    path.write_text("[rectify]\npx_per_mm = -1\n")
    with pytest.raises(ConfigError, match="px_per_mm: -1"):
        VisionConfig.load(path)
    path.write_text("[rectify\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        VisionConfig.load(path)
    with pytest.raises(ConfigError, match="cannot read"):
        VisionConfig.load(tmp_path / "missing.toml")


def test_marker_sheet_holds_the_four_markers_at_the_layouts_size():
    sheet = marker_sheet(dpi=300)
    found = detect_markers(sheet)
    assert sorted(found) == [0, 1, 2, 3]
    side_px = np.linalg.norm(found[0][1] - found[0][0])
    from vision.board import MARKER_SIZE_MM

    assert abs(side_px / (300 / 25.4) - MARKER_SIZE_MM) < 0.5
