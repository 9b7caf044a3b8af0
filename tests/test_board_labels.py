"""The hand labels of the real board frames (tests/data/boards/backgammoncv.json).

The labels describe the images in ../shared/data/boards/backgammoncv, which are never copied
here: these tests check the label file alone (its shape, and that its counts are possible), so
they run without the images.
"""

import json
from pathlib import Path

import pytest

LABELS = Path(__file__).parent / "data" / "boards" / "backgammoncv.json"
IMAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "boards" / "backgammoncv"
DOC = json.loads(LABELS.read_text(encoding="utf-8"))
FRAMES = DOC["frames"]

KINDS = {"tournament-stream", "stream-crop", "photo", "product-photo", "template", "not-a-board"}
KEYS = {
    "kind",
    "camera",
    "board",
    "field_in_view",
    "occluded",
    "white_sits",
    "home",
    "colours",
    "points",
    "bar",
    "off",
    "dice",
    "dice_elsewhere",
    "cube",
    "corners",
    "note",
}
CUBE_VALUES = {1, 2, 4, 8, 16, 32, 64}


def is_count(n) -> bool:
    return type(n) is int and 0 <= n <= 15


def sides(label: dict) -> dict[str, tuple[int, bool]]:
    """Per side, the checkers counted on points, bar and off where known, and whether all are known."""
    points, bar, off = label["points"] or [], label["bar"], label["off"]
    known = label["points"] is not None and None not in points and bar is not None and off is not None
    counted = {}
    for side, sign in (("white", 1), ("black", -1)):
        n = sum(sign * c for c in points if c is not None and sign * c > 0)
        n += (bar or {}).get(side, 0) + (off or {}).get(side, 0)
        counted[side] = (n, known)
    return counted


def test_the_label_file_says_its_conventions_and_names_images_only():
    assert DOC["conventions"] and all(isinstance(line, str) for line in DOC["conventions"])
    assert FRAMES and all(name.endswith(".jpg") and "/" not in name for name in FRAMES)


@pytest.mark.skipif(not IMAGES.is_dir(), reason=f"{IMAGES} is absent")
def test_every_image_of_the_folder_is_labelled_once():
    assert set(FRAMES) == {p.name for p in IMAGES.glob("*.jpg")}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_a_label_has_every_field_with_its_type(name):
    label = FRAMES[name]
    assert set(label) == KEYS
    assert label["kind"] in KINDS and isinstance(label["note"], str) and label["note"]
    assert isinstance(label["board"], bool) and isinstance(label["occluded"], bool)
    assert all(type(d) is int and 1 <= d <= 6 for d in label["dice"] + label["dice_elsewhere"])
    if not label["board"]:
        assert label["kind"] == "not-a-board" and not label["occluded"]
        assert all(label[k] is None for k in ("points", "bar", "off", "cube", "corners", "white_sits", "home"))
        assert label["dice"] == []
        return
    assert label["kind"] != "not-a-board" and isinstance(label["field_in_view"], bool)
    assert label["white_sits"] in ("bottom", "top") and label["home"] in ("left", "right")
    points = label["points"]
    assert points is None or (
        len(points) == 24 and all(c is None or (type(c) is int and -15 <= c <= 15) for c in points)
    )
    for place in ("bar", "off"):
        assert label[place] is None or (
            set(label[place]) == {"white", "black"} and all(map(is_count, label[place].values()))
        )


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_no_side_has_more_than_fifteen_checkers_and_a_whole_count_has_none_or_fifteen(name):
    for side, (n, known) in sides(FRAMES[name]).items():
        assert n <= 15, f"{name}: {n} {side} checkers"
        if known:
            assert n in (0, 15), f"{name}: {n} {side} checkers with every place known"


@pytest.mark.parametrize("name", sorted(n for n, label in FRAMES.items() if label["board"] and not label["occluded"]))
def test_a_hand_free_board_has_every_point_and_the_bar_read(name):
    label = FRAMES[name]
    assert label["points"] is not None and None not in label["points"] and label["bar"] is not None


@pytest.mark.parametrize("name", sorted(n for n, label in FRAMES.items() if label["cube"] is not None))
def test_a_cube_has_a_value_a_face_and_a_place(name):
    cube = FRAMES[name]["cube"]
    assert set(cube) == {"value", "face", "where", "on"}
    assert cube["value"] in CUBE_VALUES and cube["where"] in ("centre", "white", "black", "rail")
    assert cube["on"] in ("bar", "frame", "tray") and (cube["face"] == "logo" or cube["face"] in CUBE_VALUES - {1})
    # an undoubled cube lies in the centre showing 64 or a logo; a doubled one shows its value
    assert (cube["value"] == 1) == (cube["where"] == "centre")
    assert cube["face"] in (("logo", 64) if cube["value"] == 1 else (cube["value"],))


@pytest.mark.parametrize("name", sorted(n for n, label in FRAMES.items() if label["corners"] is not None))
def test_corners_are_four_points_clockwise_from_whites_top_left(name):
    label = FRAMES[name]
    corners = label["corners"]
    assert label["board"] and label["field_in_view"]
    assert len(corners) == 4 and all(len(c) == 2 and all(isinstance(v, (int, float)) for v in c) for c in corners)
    # clockwise on the image (y down) and convex: every turn has the same sign
    turns = []
    for i in range(4):
        (x0, y0), (x1, y1), (x2, y2) = corners[i], corners[(i + 1) % 4], corners[(i + 2) % 4]
        turns.append((x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1))
    assert all(t > 0 for t in turns), turns
    # white's top-left is the image's top-left corner when white sits at the bottom, its bottom-right otherwise
    cx = sum(x for x, _ in corners) / 4
    cy = sum(y for _, y in corners) / 4
    first_x, first_y = corners[0]
    assert (first_x < cx and first_y < cy) if label["white_sits"] == "bottom" else (first_x > cx and first_y > cy)


def test_the_frames_of_one_camera_agree_on_whites_seat_and_home():
    cameras: dict[str, set] = {}
    for label in FRAMES.values():
        if label["camera"] is not None:
            cameras.setdefault(label["camera"], set()).add((label["white_sits"], label["home"]))
    assert cameras and all(len(seats) == 1 for seats in cameras.values())
