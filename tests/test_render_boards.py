"""The renderer draws other boards than its own: a profile's proportions, white's home on the left,
stitched points and a lamp's reflection, and the camera pipeline reads them as a real board."""

import random
from dataclasses import replace

import numpy as np
import pytest

from board_rules import Position
from tests.positions import random_backgammon
from vision.board import BOARD_HEIGHT_MM
from vision.calibrate import calibrate
from vision.checkers import learn_palette
from vision.gate import occlusion, static_samples
from vision.observe import read_frame
from vision.profile import ProfileError, find_profile, layout
from vision.render import BoardStyle, DieSpec, camera_pose, frames_of_game, random_profile, render
from vision.render_draw import random_styles

START = Position.start("backgammon")


def _board_mm(frame, xy):
    q = np.linalg.inv(frame.homography) @ np.array([xy[0], xy[1], 1.0])
    return q[0] / q[2], q[1] / q[2]


@pytest.mark.parametrize("profile", ["tournament", random_profile(3), random_profile(11)])
@pytest.mark.parametrize("home", ["right", "left"])
def test_each_checker_stands_on_its_point_of_the_profile(profile, home):
    frame = render(START, seed=1, profile=profile, home=home, dice=[(2, None), (6, None)])
    lay = layout(profile, home)
    on_points = [c for c in frame.checkers if c.where == "point"]
    assert len(on_points) == 30
    for c in on_points:
        assert lay.point_at(*_board_mm(frame, c.centre)) == c.point
    for d in frame.dice:
        assert lay.half_at(*d.centre_mm) == "right" == d.half


def test_random_profiles_are_valid_boards_of_either_row_length_and_fixed_by_their_seed():
    boards = [random_profile(s) for s in range(300)]
    assert {b.checkers_per_row for b in boards} == {5, 6}
    assert min(b.bar_width_mm for b in boards) < 25 < 55 < max(b.bar_width_mm for b in boards)
    assert all(b.board_size_mm[1] <= BOARD_HEIGHT_MM for b in boards)
    assert random_profile(7) == random_profile(7) != random_profile(8)


@pytest.mark.parametrize(
    "board",
    [
        dict(profile="tournament", checkers="metal", stitch=(25, 25, 25)),
        dict(profile=random_profile(5), home="left", glare=0.5),
        dict(profile=random_profile(21), style="felt", stitch=(235, 235, 235)),
    ],
)
def test_a_profile_board_calibrated_with_its_profile_is_read_exactly(board):
    pos = random_backgammon(random.Random(4))
    frame = render(pos, seed=4, dice=[DieSpec(3), DieSpec(5)], **board)
    geometry = calibrate(frame.image, profile=board["profile"], home=board.get("home", "right"))
    obs = read_frame(geometry, frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points
    assert sorted(d.value for d in obs.dice) == [3, 5]


def test_stitches_and_glare_change_the_board_only_where_they_lie():
    plain = dict(seed=2, jpeg=None, noise=0, profile="tournament")
    base = render(START, **plain).image.astype(int)
    stitched = render(START, stitch=(25, 25, 25), **plain).image.astype(int)
    glared = render(START, glare=0.6, **plain).image.astype(int)
    changed = np.abs(stitched - base).sum(axis=2) > 30
    assert 0.002 < changed.mean() < 0.05  # thin dashes along the points
    brighter = (glared - base).sum(axis=2)
    assert (brighter >= -3).all() and (brighter > 60).mean() > 0.005


def test_a_bad_board_is_refused_with_its_field_named():
    with pytest.raises(ProfileError, match="nosuch"):
        render(START, profile="nosuch")
    with pytest.raises(ProfileError, match="home"):
        render(START, home="up")
    with pytest.raises(ValueError, match="glare"):
        render(START, glare=1.5)
    assert find_profile("tournament").checkers_per_row == 6


def _cli(argv):
    import argparse

    from vision import cli

    parser = argparse.ArgumentParser(prog="tavli")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return cli.run(parser.parse_args(argv))


def test_cli_render_draws_a_profile_board_that_calibrates_with_it(tmp_path, capsys):
    pos = tmp_path / "pos.json"
    pos.write_text(START.to_json())
    out = tmp_path / "frame.png"
    argv = ["vision", "render", str(pos), "-o", str(out), "--profile", "tournament", "--home", "left"]
    assert _cli([*argv, "--stitch", "20,20,20", "--glare", "0.4"]) == 0
    import cv2

    geometry = calibrate(cv2.imread(str(out)), profile="tournament", home="left")
    assert geometry.profile == "tournament" and geometry.home == "left"
    with pytest.raises(SystemExit) as exc:
        _cli([*argv, "--stitch", "20,20"])
    assert exc.value.code == 2 and "--stitch" in capsys.readouterr().err
    assert _cli([*argv, "--glare", "3"]) == 2
    assert "glare" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [0, 7, 20])
@pytest.mark.parametrize("where", ["white", "black"])
def test_the_cube_at_either_end_of_a_narrow_bar_is_read_and_no_checker_beside_it(seed, where):
    # the tournament board's bar is 33 mm: the cube's sides nearly meet the bar's, its end the frame
    frame = render(START, seed=seed, cube=(8, where), profile="tournament", checkers="metal")
    obs = read_frame(calibrate(frame.image, profile="tournament"), frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.cube is not None and (obs.cube.where, obs.cube.face) == (where, 8)
    assert obs.checkers.bar == (0, 0) and obs.checkers.points == START.points


def test_a_cube_wider_than_the_bar_is_not_taken_for_a_checker_beside_it():
    board = random_profile(500034)  # a 25.5 mm bar, a 31.6 mm cube
    assert board.cube_size_mm > board.bar_width_mm
    pos = random_backgammon(random.Random(9))
    for where in ("white", "black"):
        frame = render(pos, seed=3, cube=(4, where), profile=board)
        obs = read_frame(calibrate(frame.image, profile=board), frame.image)
        assert obs.status == "settling", obs.messages
        assert obs.checkers.bar == pos.bar and obs.cube.face == 4


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_checker_on_the_bar_the_cubes_size_is_a_checker_not_the_cube(seed):
    board = random_profile(500024)  # checkers of 29.8 mm, a cube of 29.3 mm
    assert abs(board.checker_diameter_mm - board.cube_size_mm) < 1
    points = list(START.points)
    points[23], points[0] = 1, -1  # one of each side's back checkers hit
    pos = Position(START.variant, START.turn, tuple(points), bar=(1, 1))
    frame = render(pos, seed=seed, profile=board, checkers="glossy")
    obs = read_frame(calibrate(frame.image, profile=board), frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.bar == (1, 1) and obs.cube is None


def test_the_cli_calibrates_a_real_board_to_read_its_checkers_standing(tmp_path, capsys):
    # fevga starts with 15 checkers on one point; standing up, the far stack's tops lean away from
    # the camera, and read as if flat the stack was counted 6-11
    import cv2

    from vision.calibrate import Geometry

    pos = Position.start("fevga")
    frame = render(pos, seed=1, profile="tournament", relief=True)
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), frame.image)
    readings = {}
    for flag in ([], ["--flat"]):
        out = tmp_path / f"g{len(flag)}.json"
        assert _cli(["vision", "calibrate", str(image), "--profile", "tournament", *flag, "-o", str(out)]) == 0
        geometry = Geometry.load(str(out))
        assert geometry.relief is not bool(flag)
        readings[bool(flag)] = read_frame(geometry, frame.image).checkers.points
    assert readings[False] == pos.points
    assert readings[True][23] < 15
    assert "standing" in capsys.readouterr().out
    out = tmp_path / "rendered.json"
    plain = tmp_path / "plain.png"
    cv2.imwrite(str(plain), render(START, seed=1).image)
    assert _cli(["vision", "calibrate", str(plain), "-o", str(out)]) == 0
    assert Geometry.load(str(out)).relief is False  # the renderer's board is drawn flat


def test_frames_of_a_game_on_another_board_are_framed_on_that_board():
    board = random_profile(2)
    frames = list(frames_of_game([START], seed=2, profile=board))
    assert camera_pose(2, board_mm=board.board_size_mm).homography.tolist() == frames[0].homography.tolist()


# a board whose dark points are nearly the colour of its dark field: their sides hardly show
DARK_ON_DARK = BoardStyle(
    "dark-on-dark", (94, 186, 147), (23, 12, 25), (60, 74, 30), (27, 25, 0), (144, 139, 163), (93, 129, 131), 0.4
)


def _row_sides_hidden(hidden):
    """An ``edges_at`` showing every sample of the renderer's board but those of the points in ``hidden``."""
    pts, index = static_samples(layout())
    region = {tuple(p): i for p, i in zip(np.round(pts, 6).tolist(), index)}
    return lambda q: np.array([region.get(tuple(p), -1) + 1 not in hidden for p in np.round(q, 6).tolist()])


def test_every_other_point_of_a_row_unseen_is_the_boards_drawing_not_something_over_it():
    faint = occlusion(_row_sides_hidden(set(range(14, 25, 2))), (), max_missing=0.25)
    assert faint.occluded == () and faint.missing["14"] == 1.0
    assert faint.seen_fraction == 1.0  # the faint points' sides are not counted against the frame
    # an arm covers neighbouring points of both colours: held back
    arm = occlusion(_row_sides_hidden({14, 15, 16, 17, 18, 20}), (), max_missing=0.25)
    assert set(arm.occluded) == {"14", "15", "16", "17", "18", "20"}
    # a point of the other colour between the unseen ones is unseen too: held back
    sleeve = occlusion(_row_sides_hidden({14, 16, 17, 18}), (), max_missing=0.25)
    assert set(sleeve.occluded) == {"14", "16", "17", "18"}
    # two of one colour could be two hands
    two = occlusion(_row_sides_hidden({14, 18}), (), max_missing=0.25)
    assert set(two.occluded) == {"14", "18"}


def test_a_board_whose_dark_points_melt_into_its_field_is_read_and_a_hand_over_it_is_not():
    pos = random_backgammon(random.Random(8))
    board = dict(profile=random_profile(8), style=DARK_ON_DARK, checkers="matte", relief=True)
    frame = render(pos, seed=8, **board)
    geometry = replace(calibrate(frame.image, profile=board["profile"]), relief=True)
    obs = read_frame(geometry, frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points
    hand = render(pos, seed=8, hand=True, **board)
    assert read_frame(geometry, hand.image).status == "occluded"


def test_checkers_the_colour_of_their_tray_are_told_borne_off_by_the_rules():
    # black's checkers are the colour of the tray they are borne off into: no row of them shows there
    style = BoardStyle(
        "dark-tray", (60, 90, 120), (150, 200, 225), (40, 40, 140), (225, 235, 240), (60, 90, 120), (40, 45, 60), 0.3
    )
    points = [0] * 24
    points[0], points[5], points[12], points[20], points[22], points[23] = 3, 5, 7, -3, -4, -4
    pos = Position(START.variant, START.turn, tuple(points), off=(0, 4))
    board = dict(profile=random_profile(5), style=style, checkers="matte", relief=True)
    frame = render(pos, seed=5, **board)
    geometry = replace(calibrate(frame.image, profile=board["profile"]), relief=True)
    obs = read_frame(geometry, frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points and obs.checkers.off == (0, 4)
    assert any("black's tray not read" in m for m in obs.messages)


def test_without_a_palette_the_sides_are_split_so_that_neither_has_more_than_15():
    # grey and brown checkers: on their colours alone the grey stack of nine on 24 passed for brown
    style, checkers = random_styles(np.random.default_rng([500070, 13]))
    points = (-3, 0, -2, -1, -1, -2, 0, 1, 0, 1, -1, 0, 1, -2, -1, 0, -1, 0, 2, 1, 0, 0, -1, 9)
    pos = Position(START.variant, START.turn, points)
    board = dict(profile=random_profile(500070), style=style, checkers=checkers, relief=True)
    frame = render(pos, seed=500070, dice=[DieSpec(5), DieSpec(3)], **board)
    geometry = replace(calibrate(frame.image, profile=board["profile"]), relief=True)
    obs = read_frame(geometry, frame.image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points


def _hidden_where(hide):
    """An ``edges_at`` showing every sample of the renderer's board but those ``hide(x, y)`` picks."""
    return lambda q: np.array([not hide(x, y) for x, y in np.asarray(q)])


def test_a_bar_of_the_fields_colour_is_the_boards_drawing_and_a_hand_over_it_is_not():
    g = layout().geometry
    sides = (g.left_half[2], g.right_half[0])
    on_side = lambda x, y: min(abs(x - s) for s in sides) < 0.5  # noqa: E731
    hinge = occlusion(_hidden_where(on_side), (), max_missing=0.25, bar_sides=sides)
    assert hinge.occluded == ()
    # a hand over the bar hides the sides of the points beside it too
    hand = occlusion(
        _hidden_where(lambda x, y: on_side(x, y) or min(abs(x - s) for s in sides) < 25 and y > 250),
        (),
        max_missing=0.25,
        bar_sides=sides,
    )
    assert {"6", "7", "bar"} <= set(hand.occluded)
    # not told the bar's sides, the gate holds a hinge back as before
    assert "bar" in occlusion(_hidden_where(on_side), (), max_missing=0.25).occluded


def _lit(image, light):
    """``image`` under a lamp: its light falling from ``light[0]`` to ``light[1]`` down the picture (one row, then the other)."""
    return np.clip(image * np.linspace(*light, image.shape[0])[:, None, None], 0, 255).astype(np.uint8)


LAMP_STYLES = random_styles(np.random.default_rng([700021, 13]))  # pearl-white and grey checkers
LAMP_POINTS = (1, 1, 2, 2, -1, 1, -3, 0, 1, 0, 1, 0, -2, 1, -2, -2, -1, -1, -2, 1, -1, 2, 1, 1)


@pytest.mark.parametrize("learned", [False, True])
@pytest.mark.parametrize("light", [(0.5, 1.2), (1.2, 0.5)])
def test_a_row_lit_less_than_the_other_keeps_its_sides(light, learned):
    # the dim row's white checkers are darker than the lit row's grey ones; read without a palette,
    # or with the one learned from the start under the same lamp
    pos = Position(START.variant, START.turn, LAMP_POINTS)
    board = dict(profile=random_profile(700021), style=LAMP_STYLES[0], checkers=LAMP_STYLES[1], relief=True)
    frame = render(pos, seed=1, **board)
    geometry = replace(calibrate(frame.image, profile=board["profile"]), relief=True)
    palette = learn_palette(geometry, _lit(render(START, seed=1, **board).image, light), START) if learned else None
    obs = read_frame(geometry, _lit(frame.image, light), palette)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points
