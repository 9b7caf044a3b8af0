"""The table renderer: determinism, markers, checkers, dice and hands match the ground truth."""

import math

import cv2
import numpy as np
import pytest

from board_rules import Position, Side, find_variant
from vision.board import BOARD_HEIGHT_MM, BOARD_WIDTH_MM, GEOMETRY, checker_slot, point_at
from vision.render import BOARD_STYLES, CHECKER_STYLES, DieSpec, camera_pose, frames_of_game, lifted, render

START = Position.start("backgammon")


def _position(points, bar=(0, 0), off=(0, 0)):
    return Position(find_variant("backgammon"), Side.WHITE, tuple(points), bar=bar, off=off)


def _stacked():
    """White: 15 on point 6. Black: 12 on point 19, 2 on the bar, 1 borne off."""
    points = [0] * 24
    points[5] = 15
    points[18] = -12
    return _position(points, bar=(0, 2), off=(0, 1))


def _to_mm(frame, xy):
    inv = np.linalg.inv(frame.homography)
    q = inv @ np.array([xy[0], xy[1], 1.0])
    return q[0] / q[2], q[1] / q[2]


def test_same_seed_gives_identical_bytes_and_another_seed_differs():
    a = render(START, dice=[(3, None), (5, None)], cube=(2, "centre"), seed=7, hand=True)
    b = render(START, dice=[(3, None), (5, None)], cube=(2, "centre"), seed=7, hand=True)
    c = render(START, dice=[(3, None), (5, None)], cube=(2, "centre"), seed=8, hand=True)
    assert a.image.tobytes() == b.image.tobytes()
    assert a.truth() == b.truth()
    assert a.image.tobytes() != c.image.tobytes()
    assert not np.allclose(a.homography, c.homography)


def test_point_numbering_white_one_is_bottom_right_as_white_sees_it():
    assert point_at(GEOMETRY.width - 110, GEOMETRY.height - 60) == 1
    assert point_at(70, GEOMETRY.height - 60) == 12
    assert point_at(70, 60) == 13
    assert point_at(GEOMETRY.width - 110, 60) == 24
    assert point_at(GEOMETRY.bar[0] + 5, 100) is None  # the bar
    assert point_at(5, 5) is None  # the frame
    for p in GEOMETRY.points:
        assert point_at(p.centre_x, (p.base_y + p.tip_y) / 2) == p.number


@pytest.mark.parametrize("point", [1, 6, 12, 13, 19, 24])
def test_fifteen_stacked_checkers_stay_on_their_point(point):
    centres = {checker_slot(point, k)[:2] for k in range(15)}
    assert len(centres) == 15
    for x, y in centres:
        assert point_at(x, y) == point
    assert [checker_slot(point, k)[2] for k in range(15)] == [0] * 5 + [1] * 4 + [2] * 3 + [3] * 2 + [4]


@pytest.mark.parametrize(
    "seed,style,checkers",
    [
        (0, "walnut", "matte"),
        (1, "felt", "glossy"),
        (2, "olive", "metal"),
        (3, "walnut", "metal"),
        (4, "felt", "matte"),
        (5, "olive", "glossy"),
    ],
)
def test_aruco_markers_are_detected_at_their_ground_truth_corners(seed, style, checkers):
    frame = render(START, dice=[(2, None), (6, None)], seed=seed, style=style, checkers=checkers)
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(frame.image)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    for c, i in zip(corners, ids.ravel()):
        assert np.abs(c.reshape(4, 2) - frame.markers[int(i)]).max() < 3.0


def test_marker_ids_sit_at_the_corners_white_sees():
    frame = render(START, seed=0)
    centres = {i: frame.markers[i].mean(0) for i in range(4)}
    assert centres[0][0] < centres[1][0] and centres[0][1] < centres[3][1]  # 0 top-left, 1 top-right, 3 bottom-left
    assert centres[2][0] > centres[3][0] and centres[2][1] > centres[1][1]  # 2 bottom-right


@pytest.mark.parametrize("position", [START, _stacked()], ids=["start", "stacked"])
@pytest.mark.parametrize("checkers", sorted(CHECKER_STYLES))
def test_drawn_checkers_match_the_position_and_lie_in_the_image(position, checkers):
    frame = render(position, seed=11, checkers=checkers)
    h, w = frame.image.shape[:2]
    on_points = [c for c in frame.checkers if c.where == "point"]
    assert len(on_points) == sum(abs(v) for v in position.points)
    for i, v in enumerate(position.points):
        here = [c for c in on_points if c.point == i + 1]
        assert len(here) == abs(v)
        assert all(c.side == ("white" if v > 0 else "black") for c in here)
    for c in frame.checkers:
        assert 0 <= c.centre[0] < w and 0 <= c.centre[1] < h
    for c in on_points:
        assert point_at(*_to_mm(frame, c.centre)) == c.point
    assert sum(c.side == "black" for c in frame.checkers if c.where == "bar") == position.bar[1]
    assert sum(c.side == "black" for c in frame.checkers if c.where == "off") == position.off[1]


def test_fifteen_on_one_point_are_all_drawn():
    frame = render(_stacked(), seed=3)
    assert sum(1 for c in frame.checkers if c.point == 6) == 15
    assert max(c.layer for c in frame.checkers if c.point == 6) == 4


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_die_centre_shows_the_die_colour(seed):
    dice = [DieSpec(2), DieSpec(4, colour="red"), DieSpec(6, colour="green")]
    frame = render(START, dice=dice, seed=seed, lighting=False)
    assert [d.value for d in frame.dice] == [2, 4, 6]
    for d in frame.dice:
        x, y = (int(round(v)) for v in d.centre)
        patch = frame.image[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 3).astype(float)
        assert np.abs(np.median(patch, axis=0) - np.array(d.colour)).max() < 35
        assert d.half == "right"


def test_die_at_a_given_place_is_reported_there():
    frame = render(START, dice=[(5, (120.0, 270.0))], seed=0)
    (die,) = frame.dice
    assert die.centre_mm == (120.0, 270.0) and die.half == "left"
    assert np.allclose(_to_mm(frame, die.centre), (120.0, 270.0))


def test_cocked_die_is_flagged():
    frame = render(START, dice=[DieSpec(3, cocked=True)], seed=0)
    assert frame.dice[0].cocked


def test_hand_changes_the_frame_inside_its_polygon_only():
    plain = render(START, seed=5)
    handed = render(START, seed=5, hand=True)
    assert plain.hand is None and handed.hand is not None
    mask = np.zeros(plain.image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(handed.hand).astype(np.int32)], 255)
    inside = cv2.erode(mask, np.ones((9, 9), np.uint8)) > 0
    outside = cv2.dilate(mask, np.ones((41, 41), np.uint8)) == 0
    diff = np.abs(plain.image.astype(int) - handed.image.astype(int)).sum(axis=2)
    assert inside.sum() > 2000
    assert diff[inside].mean() > 30
    assert diff[outside].max() == 0


def test_a_lifted_point_is_where_a_pinhole_camera_sees_it():
    # an independent pinhole camera: rotation, eye and focal length; the field is z = 0, up is +z
    a, b = math.radians(25), math.radians(10)
    rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    rz = np.array([[math.cos(b), -math.sin(b), 0], [math.sin(b), math.cos(b), 0], [0, 0, 1]])
    r = rz @ rx @ np.diag([1.0, -1.0, -1.0])  # looking down
    eye = np.array([300.0, 800.0, 950.0])
    k = np.array([[1000.0, 0, 640], [0, 1000.0, 480], [0, 0, 1]])

    def seen(p):
        q = k @ (r @ (np.asarray(p, float) - eye))
        return q[:2] / q[2]

    for x, y, h in ((100, 100, 8), (600, 50, 24), (350, 500, 40)):
        at, scale = lifted(tuple(eye), (x, y), h)
        assert seen((*at, 0)) == pytest.approx(seen((x, y, h)), abs=1e-6)
        assert scale == pytest.approx(950 / (950 - h))
    assert lifted(tuple(eye), (100, 100), 0) == ((100, 100), 1)


def test_the_camera_eye_stands_its_distance_off_the_board_on_whites_side():
    for seed in range(20):
        x, y, z = camera_pose(seed).eye_mm
        assert math.dist((x, y, z), (BOARD_WIDTH_MM / 2, BOARD_HEIGHT_MM / 2, 0)) == pytest.approx(1100)
        assert y > BOARD_HEIGHT_MM / 2 and 900 < z < 1100


def test_relief_lifts_the_checkers_on_the_points_and_nothing_else():
    flat = render(START, seed=5, jpeg=None, noise=0)
    raised = render(START, seed=5, jpeg=None, noise=0, relief=True)
    assert [c.centre for c in raised.checkers] == [c.centre for c in flat.checkers]  # the truth is their feet
    near = np.zeros(flat.image.shape[:2], np.uint8)
    for c in flat.checkers:
        cv2.circle(near, (round(c.centre[0]), round(c.centre[1])), 40, 255, -1)
    diff = np.abs(flat.image.astype(int) - raised.image.astype(int)).sum(axis=2)
    assert diff[near == 0].max() == 0  # nothing away from the checkers moves
    assert diff[near > 0].mean() > 5
    # a checker's top moves away from the point under the eye, which is off white's (near) edge: the
    # tops of white's 5 on its 13 point, on the far side, move up the image
    assert camera_pose(5).eye_mm[1] > BOARD_HEIGHT_MM
    plain = dict(seed=5, jpeg=None, noise=0, blur=0, lighting=False)

    def top_rows(frame):
        at = [c for c in frame.checkers if c.point == 13]
        x0, x1 = round(min(c.centre[0] for c in at)) - 25, round(max(c.centre[0] for c in at)) + 25
        y0, y1 = round(min(c.centre[1] for c in at)) - 25, round(max(c.centre[1] for c in at)) + 25
        window = frame.image[y0:y1, x0:x1].astype(int)
        ys, _ = np.nonzero(np.abs(window - np.array(at[0].colour)).max(axis=2) <= 6)  # a top's own colour
        assert len(ys) > 500
        return ys.mean()

    assert top_rows(render(START, relief=True, **plain)) < top_rows(render(START, **plain)) - 2


def test_frames_of_a_game_share_the_camera_and_bring_hands_between_positions():
    after = list(START.points)
    after[7], after[4] = after[7] - 1, after[4] + 1  # 8/5
    frames = list(frames_of_game([START, _position(after)], seed=2))
    assert len(frames) == 3
    assert [f.hand is not None for f in frames] == [False, True, False]
    assert all(np.array_equal(f.homography, frames[0].homography) for f in frames)
    assert {c.point for c in frames[2].checkers if c.point and c.side == "white"} >= {5}


def test_unknown_style_is_refused():
    with pytest.raises(ValueError, match="'marble'"):
        render(START, style="marble")
    with pytest.raises(ValueError, match="cube"):
        render(START, cube=(3, "centre"))
    assert len(BOARD_STYLES) >= 3 and len(CHECKER_STYLES) >= 3


def _cli(argv):
    import argparse

    from vision import cli

    parser = argparse.ArgumentParser(prog="tavli")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return cli.run(parser.parse_args(argv))


def test_cli_render_draws_the_checkers_in_relief_when_asked(tmp_path):
    pos = tmp_path / "pos.json"
    pos.write_text(START.to_json())
    flat, raised = tmp_path / "flat.png", tmp_path / "raised.png"
    assert _cli(["vision", "render", str(pos), "-o", str(flat), "--seed", "3"]) == 0
    assert _cli(["vision", "render", str(pos), "-o", str(raised), "--seed", "3", "--relief"]) == 0
    a, b = cv2.imread(str(flat)), cv2.imread(str(raised))
    assert np.array_equal(a, render(START, seed=3).image) and not np.array_equal(a, b)


def test_cli_render_writes_the_frame_and_its_truth(tmp_path):
    pos = tmp_path / "pos.json"
    pos.write_text(START.to_json())
    out, truth = tmp_path / "frame.png", tmp_path / "truth.json"
    assert (
        _cli(
            [
                "vision",
                "render",
                str(pos),
                "-o",
                str(out),
                "--seed",
                "3",
                "--dice",
                "3",
                "5",
                "--cube",
                "2",
                "centre",
                "--truth",
                str(truth),
            ]
        )
        == 0
    )
    image = cv2.imread(str(out))
    assert image.shape == (960, 1280, 3)
    import json

    data = json.loads(truth.read_text())
    assert [d["value"] for d in data["dice"]] == [3, 5] and data["cube"]["where"] == "centre"
    assert len([c for c in data["checkers"] if c["where"] == "point"]) == 30


def test_cli_render_draws_a_red_cube_when_asked(tmp_path):
    pos = tmp_path / "pos.json"
    pos.write_text(START.to_json())
    white, red = tmp_path / "white.png", tmp_path / "red.png"
    assert _cli(["vision", "render", str(pos), "-o", str(white), "--seed", "3", "--cube", "4", "black"]) == 0
    assert (
        _cli(
            [
                "vision",
                "render",
                str(pos),
                "-o",
                str(red),
                "--seed",
                "3",
                "--cube",
                "4",
                "black",
                "--cube-colour",
                "red",
            ]
        )
        == 0
    )
    diff = np.abs(cv2.imread(str(red)).astype(int) - cv2.imread(str(white)).astype(int)).sum(axis=2) > 60
    ys, xs = np.nonzero(diff)
    assert 0 < len(xs) < 0.01 * diff.size  # only the cube changed: a few thousand px, all in one place
    assert xs.max() - xs.min() < 120 and ys.max() - ys.min() < 120
    with pytest.raises(SystemExit):
        _cli(["vision", "render", str(pos), "-o", str(red), "--cube", "4", "black", "--cube-colour", "green"])


def test_cli_render_refuses_a_missing_position_file(tmp_path):
    from board_rules import InvalidPositionError

    with pytest.raises(InvalidPositionError, match="missing.json"):
        _cli(["vision", "render", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.png")])
