"""The real tournament frames (../shared/data/boards/backgammoncv, GPL-3.0, never copied here) and board profiles.

The frame tests skip when the folder is absent. They pin down what the pipeline reads right
today on the WBF camera (profile ``tournament``, home left, palette learned on frame0), so a
change that breaks a point read right shows, and that no frame with a hand over the field is
ever reported readable.
"""

import dataclasses
import json
import random

import cv2
import pytest

from benchmarks import tournament_frames as tf
from tests.positions import random_backgammon
from vision.board import GEOMETRY, checker_slot
from vision.calibrate import CalibrationError, Geometry, calibrate
from vision.checkers import read_checkers
from vision.config import default_config
from vision.gate import learned_samples
from vision.images import load_image
from vision.observe import read_frame, reads_as_photo, too_small_to_read
from vision.profile import ProfileError, find_profile, layout
from vision.read_photo import read_photo
from vision.render import render

needs_frames = pytest.mark.skipif(not tf.DATA.is_dir(), reason=f"{tf.DATA} is absent")

# Points read wrong today (point: (true, read)); every other point must stay right. The classical
# reader alone read frame0's 23, frame1's 17, test9's 17 and 24, test8's 13 and 17 wrong; the hybrid
# (vision.toml's [learned_checkers] reader) reads them all right.
KNOWN_WRONG = {
    "frame0": {},
    "frame1": {},
    "test9": {},
    "test8": {},
}


@needs_frames
@pytest.mark.parametrize("name", sorted(KNOWN_WRONG))
def test_points_read_right_on_the_wbf_camera_stay_right(name):
    _, obs, ungated, _ = tf.read(name)
    reading = obs.checkers or ungated
    assert {p: (t, r) for p, t, r in tf.errors(name, reading)} == KNOWN_WRONG[name]
    assert tuple(reading.bar) == tf.TRUTH[name]["bar"]
    if tf.TRUTH[name]["off"] is not None:
        assert tuple(reading.off) == tf.TRUTH[name]["off"]


@needs_frames
@pytest.mark.parametrize("name", ["frame1", "test9"])
def test_clear_frames_of_the_wbf_camera_are_readable(name):
    assert tf.read(name)[1].status == "settling"


@needs_frames
@pytest.mark.parametrize("name", tf.HANDS)
def test_a_hand_over_a_tournament_board_is_never_reported_readable(name):
    obs = tf.read(name)[1]
    assert obs.status in ("occluded", "board-not-found")
    assert obs.checkers is None


@needs_frames
def test_a_reading_with_more_than_fifteen_of_a_side_is_held_back():
    # frame5: a hand over points 23 and 24 reads as three more white checkers; with the hand test off
    # (the checkers read under the hand cut its patch off the field's edge here) the sixteenth white
    # checker holds the frame back
    camera, obs, ungated, geometry = tf.read("frame5")
    assert ungated.totals()[0] > 15
    assert obs.status == "occluded" and obs.checkers is None
    palette = tf.palette_of(camera)
    blind = dataclasses.replace(default_config(), hand_min_checkers=1000.0)
    image = load_image(tf.DATA / "frame5.jpg")
    obs = read_frame(geometry, image, palette, blind, photo=reads_as_photo(geometry, palette))
    assert obs.status == "occluded" and "more than 15 white" in obs.messages[0]


# ----------------------------------------------------------------- profiles, no data needed


def test_the_rendered_profile_is_the_renderers_board():
    lay = layout()
    assert lay.geometry is GEOMETRY
    assert all(lay.checker_slot(p, k) == checker_slot(p, k) for p in range(1, 25) for k in range(15))


def test_home_left_puts_whites_point_one_bottom_left_and_keeps_the_tray_right():
    right, left = layout("rendered", "right"), layout("rendered", "left")
    p1r, p1l = right.geometry.points[0], left.geometry.points[0]
    assert p1r.base_y == p1l.base_y and p1l.x0 == right.field[0] and p1r.x1 == right.field[2]
    assert left.geometry.points[23].x0 == right.field[0]  # 24 top left, above 1
    assert left.geometry.tray_white == right.geometry.tray_white


def test_the_tournament_profile_fits_the_rectified_canvas_with_six_checkers_a_row():
    prof = find_profile("tournament")
    assert prof.checkers_per_row == 6
    lay = layout("tournament", "left")
    assert lay.checker_slot(5, 5)[2] == 0 and lay.checker_slot(5, 6)[2] == 1


def test_unknown_profile_or_home_side_is_refused_by_name():
    with pytest.raises(ProfileError, match="'nope'"):
        find_profile("nope")
    with pytest.raises(CalibrationError, match="home: 'up'"):
        calibrate(
            render(random_backgammon(random.Random(1)), seed=1).image,
            corners=[(0, 0), (10, 0), (10, 10), (0, 10)],
            home="up",
        )


def test_geometry_json_records_profile_and_home_and_defaults_to_the_rendered_board():
    frame = render(random_backgammon(random.Random(2)), seed=2)
    g = calibrate(
        frame.image,
        corners=[(100, 50), (900, 60), (880, 600), (120, 590)],
        field=True,
        profile="tournament",
        home="left",
    )
    data = json.loads(g.to_json())
    assert (data["profile"], data["home"], data["white_point_1"]["corner"]) == ("tournament", "left", "bottom-left")
    assert Geometry.from_json(g.to_json()) == g
    del data["profile"], data["home"]
    old = Geometry.from_dict(data)
    assert (old.profile, old.home) == ("rendered", "right")


def test_the_checker_reader_counts_the_points_of_the_geometrys_layout():
    # the renderer's board read as if white's home were on the left: the same checkers, mirrored numbering
    pos = random_backgammon(random.Random(1001))
    frame = render(pos, seed=1001)
    g = calibrate(frame.image, home="left")
    reading = read_checkers(g, frame.image)
    mirrored = [pos.points[(13 - n if n <= 12 else 37 - n) - 1] for n in range(1, 25)]
    assert (list(reading.points), reading.bar, reading.off) == (mirrored, tuple(pos.bar), tuple(pos.off))


def test_a_learned_board_edge_beside_a_halfs_outer_points_is_left_out_of_the_occlusion_test():
    lay = layout("tournament", "left")
    margin = (lay.field[0] + 1.0, 100.0)  # between the field's side and the outermost point
    on_point = (lay.geometry.points[23].centre_x, 100.0)
    pts, index = learned_samples((margin, on_point), lay)
    assert pts.tolist() == [list(on_point)] and index.tolist() == [23]


@needs_frames
@pytest.mark.parametrize("name", ["frame0", "frame1", "test8", "test9", "test10", "test1"])
def test_these_hand_free_frames_are_read_exactly_dice_included(name):
    """Points, bar and dice (the checker network trained on these frames: a guard, not a measure).
    frame1's third die was the classical reader's; test10 and test1 have no palette frame: read
    as photos (test10's lone checker on its 24 point had been given the other side to keep both within 15).
    test12's points are read right, but its 6 is missed: the dice network's second run scored it
    0.49, under the 0.6 it needs where the classical reader does not see it, and the later runs
    miss it too (docs/learned-dice.md)."""
    assert tf.read_exactly(name, tf.read(name)[1]) is True


@needs_frames
def test_dice_too_few_px_across_to_read_are_found_with_no_value_and_say_so():
    labels = json.loads(tf.LABELS.read_text())["frames"]
    label = labels["test9.jpg"]
    image = load_image(tf.DATA / "test9.jpg")
    full = read_photo(image, corners=label["corners"], home=label["home"])
    assert too_small_to_read(default_config(), full.geometry) is None
    assert sorted(d.value for d in full.observation.dice) == sorted(label["dice"])
    # a third of the size: the dice are about 6 px across, where the readers gave wrong values
    small = cv2.resize(image, None, fx=0.3, fy=0.3, interpolation=cv2.INTER_AREA)
    corners = [[x * 0.3, y * 0.3] for x, y in label["corners"]]
    obs = read_photo(small, corners=corners, home=label["home"]).observation
    assert obs.status == "settling" and obs.dice
    assert all(d.value is None and not d.cocked for d in obs.dice)
    assert any("too few to read their faces" in m for m in obs.messages)
