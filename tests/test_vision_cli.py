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
    code, text, _ = run(
        [
            "vision",
            "calibrate",
            str(image),
            "--corners",
            corners,
            "--field",
            "--profile",
            "tournament",
            "--home",
            "left",
            "-o",
            str(out),
        ]
    )
    assert code == 0 and "profile tournament, home left" in text
    geometry = Geometry.load(str(out))
    assert (geometry.profile, geometry.home) == ("tournament", "left")
    assert json.loads(out.read_text())["white_point_1"]["corner"] == "bottom-left"
    code, _, err = run(["vision", "calibrate", str(image), "--corners", corners, "--profile", "nope", "-o", str(out)])
    assert code == 2 and "'nope'" in err


_CLUB = """# my own board, measured with a ruler
[board_profile.club]
description = "a maker's board of the renderer's proportions"
border_mm = 50.0
cube_size_mm = 30.0
"""


def test_vision_calibrate_takes_a_maker_s_own_board_profile_from_a_file_and_the_geometry_carries_it(tmp_path):
    """A board that is none of vision.toml's: its profile file is given to calibrate once; the geometry
    JSON carries the profile, so reading (and tavli play) need nothing but the geometry."""
    frame = render(Position.start("backgammon"), seed=6, cube=(4, "white"))
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), frame.image)
    (tmp_path / "club.toml").write_text(_CLUB)
    out = tmp_path / "geometry.json"
    code, text, err = run(["vision", "calibrate", str(image), "--profile", str(tmp_path / "club.toml"), "-o", str(out)])
    assert code == 0, err
    assert "profile club" in text
    data = json.loads(out.read_text())
    assert data["profile"] == "club" and data["board_profile"]["border_mm"] == 50.0
    geometry = Geometry.load(str(out))
    assert geometry.board is not None and geometry.layout.profile.description.startswith("a maker's board")
    code, text, err = run(["vision", "read", str(image), "--geometry", str(out)])
    assert code == 0, err
    obs = json.loads(text)
    assert obs["status"] == "settling" and obs["points"] == list(Position.start("backgammon").points)
    assert (obs["cube"]["where"], obs["cube"]["value"]) == ("white", 4)


def test_vision_calibrate_names_one_board_of_a_profile_file_with_several(tmp_path):
    frame = render(Position.start("backgammon"), seed=6)
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), frame.image)
    boards = tmp_path / "boards.toml"
    boards.write_text(_CLUB + "\n[board_profile.cafe]\nborder_mm = 50.0\ncheckers_per_row = 6\n")
    out = tmp_path / "geometry.json"
    code, _, err = run(["vision", "calibrate", str(image), "--profile", str(boards), "-o", str(out)])
    assert code == 2 and "cafe" in err and "club" in err and not out.exists()
    code, _, err = run(["vision", "calibrate", str(image), "--profile", f"{boards}:cafe", "-o", str(out)])
    assert code == 0, err
    assert Geometry.load(str(out)).layout.profile.checkers_per_row == 6
    code, _, err = run(["vision", "calibrate", str(image), "--profile", f"{boards}:hall", "-o", str(out)])
    assert code == 2 and "'hall'" in err


def test_vision_calibrate_refuses_a_bad_or_missing_profile_file(tmp_path):
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), render(Position.start("backgammon"), seed=6).image)
    out = tmp_path / "geometry.json"
    code, _, err = run(["vision", "calibrate", str(image), "--profile", str(tmp_path / "none.toml"), "-o", str(out)])
    assert code == 2 and "none.toml" in err and not out.exists()
    bad = tmp_path / "bad.toml"
    bad.write_text("[board_profile.club]\nborder_mm = -3\n")
    code, _, err = run(["vision", "calibrate", str(image), "--profile", str(bad), "-o", str(out)])
    assert code == 2 and "border_mm" in err and not out.exists()


def test_a_geometry_whose_carried_board_profile_is_bad_is_refused(tmp_path):
    import pytest

    from vision.calibrate import CalibrationError, calibrate
    from vision.profile import read_profile_file

    (tmp_path / "club.toml").write_text(_CLUB)
    geometry = calibrate(
        render(Position.start("backgammon"), seed=6).image, profile=read_profile_file(tmp_path / "club.toml")
    )
    data = geometry.to_dict()
    assert Geometry.from_dict(data) == geometry
    data["board_profile"]["point_width_mm"] = "wide"
    with pytest.raises(CalibrationError, match="point_width_mm"):
        Geometry.from_dict(data)
    data["board_profile"] = {"name": "club", "colour": "oak"}
    with pytest.raises(CalibrationError):
        Geometry.from_dict(data)


def test_vision_read_and_learn_scale_a_still_of_another_resolution_and_refuse_another_picture(tmp_path):
    frame = render(Position.start("backgammon"), seed=8)
    image = tmp_path / "frame.png"
    cv2.imwrite(str(image), frame.image)
    out = tmp_path / "geometry.json"
    assert run(["vision", "calibrate", str(image), "-o", str(out)])[0] == 0
    half = tmp_path / "half.png"
    cv2.imwrite(str(half), cv2.resize(frame.image, (640, 480), interpolation=cv2.INTER_AREA))
    start = tmp_path / "start.json"
    start.write_text(Position.start("backgammon").to_json())
    code, _, err = run(
        [
            "vision",
            "learn",
            str(image),
            "--geometry",
            str(out),
            "--position",
            str(start),
            "-o",
            str(tmp_path / "p.json"),
        ]
    )
    assert code == 0, err
    code, text, err = run(["vision", "read", str(half), "--geometry", str(out), "--palette", str(tmp_path / "p.json")])
    assert code == 0 and "scaled to 1280x960" in err
    assert json.loads(text)["points"] == list(Position.start("backgammon").points)
    wide = tmp_path / "wide.png"
    cv2.imwrite(str(wide), cv2.resize(frame.image, (1280, 720)))
    code, _, err = run(["vision", "read", str(wide), "--geometry", str(out)])
    assert code == 2 and "recalibrate" in err
    code, _, err = run(
        ["vision", "learn", str(wide), "--geometry", str(out), "--position", str(start), "-o", str(tmp_path / "q.json")]
    )
    assert code == 2 and "recalibrate" in err and not (tmp_path / "q.json").exists()


def _video(path, frames, size=(640, 480)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, size)
    assert writer.isOpened()
    for f in frames:
        writer.write(cv2.resize(f, size, interpolation=cv2.INTER_AREA))
    writer.release()


def test_vision_grab_takes_a_still_after_the_camera_settles_and_it_calibrates(tmp_path):
    import numpy as np

    frame = render(Position.start("backgammon"), seed=9)
    dark = np.zeros_like(frame.image)  # a camera's first frames, before its exposure settles
    video = tmp_path / "camera.avi"
    _video(video, [dark, dark, dark, frame.image, frame.image])
    still = tmp_path / "still.png"
    code, text, err = run(["vision", "grab", "--camera", str(video), "--settle", "3", "-o", str(still)])
    assert code == 0, err
    assert "640x480" in text
    image = cv2.imread(str(still))
    assert image.shape == (480, 640, 3) and image.mean() > 50
    code, text, err = run(["vision", "calibrate", str(still), "-o", str(tmp_path / "g.json")])
    assert code == 0 and "from markers" in text, err
    # a video shorter than the settling gives its last frame
    code, _, err = run(["vision", "grab", "--camera", str(video), "--settle", "50", "-o", str(still)])
    assert code == 0 and cv2.imread(str(still)).mean() > 50


def test_vision_grab_refuses_a_missing_camera_a_bad_size_and_an_unwritable_output(tmp_path):
    code, _, err = run(["vision", "grab", "--camera", str(tmp_path / "none.avi"), "-o", str(tmp_path / "s.png")])
    assert code == 2 and "none.avi" in err and not (tmp_path / "s.png").exists()
    code, _, err = run(["vision", "grab", "--size", "wide", "-o", str(tmp_path / "s.png")])
    assert code == 2 and "--size" in err
    code, _, err = run(["vision", "grab", "--settle", "-1", "-o", str(tmp_path / "s.png")])
    assert code == 2 and "--settle" in err
    video = tmp_path / "camera.avi"
    _video(video, [render(Position.start("backgammon"), seed=9).image])
    code, _, err = run(["vision", "grab", "--camera", str(video), "-o", str(tmp_path / "s.txt")])
    assert code == 2 and "cannot write" in err
