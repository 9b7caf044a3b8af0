"""A hand over a real board: patches of the field in none of the board's own colours, skin-coloured."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from board_rules import Position
from vision.calibrate import calibrate
from vision.config import ConfigError, VisionConfig, default_config
from vision.find_board import BoardNotFoundError, default_field_config
from vision.gate import hands
from vision.images import load_image
from vision.observe import read_frame
from vision.read_photo import read_photo
from vision.render import render
from vision.view import view

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "boards" / "backgammoncv"
LABELS = ROOT / "tests" / "data" / "boards" / "backgammoncv.json"
WBF_CORNERS = ((202.7, 20.3), (903.2, 28.7), (867.1, 650.9), (237.7, 662.9))


def limits() -> dict[str, float]:
    cfg = default_config()
    return {
        "min_checkers": cfg.hand_min_checkers,
        "min_skin": cfg.hand_min_skin,
        "min_lab": cfg.foreign_min_lab,
        "spread": cfg.foreign_spread,
    }


def _hands_of(frame) -> tuple[str, ...]:
    v = view(calibrate(frame.image), frame.image)
    return hands(v.lab, v.layout, v.ppm, [], **limits())


def test_a_hand_is_found_where_the_field_shows_skin_not_the_boards_colours():
    empty = Position.from_dict(
        {
            "variant": "backgammon",
            "turn": "white",
            "points": [0] * 24,
            "bar": {"white": 0, "black": 0},
            "off": {"white": 15, "black": 15},
        }
    )
    for seed in (1, 2, 3):
        frame = render(empty, seed=seed, dice=[], hand=True)
        found = _hands_of(frame)
        assert found, seed
        # every region named lies under the hand's polygon, as the camera drew it
        lay = view(calibrate(frame.image), frame.image).layout
        mask = np.zeros(frame.image.shape[:2], np.uint8)
        cv2.fillPoly(mask, [np.round(frame.hand).astype(np.int32)], 1)
        geometry = calibrate(frame.image)
        for name in found:
            if name == "bar":
                continue
            p = lay.geometry.points[int(name) - 1]
            lo, hi = sorted((p.base_y, lay.mid_y))
            xs, ys = np.meshgrid(np.linspace(p.x0, p.x1, 8), np.linspace(lo, hi, 24))
            px = geometry.to_image(np.stack([xs.ravel(), ys.ravel()], axis=1))
            inside = [mask[int(y), int(x)] for x, y in px if 0 <= x < mask.shape[1] and 0 <= y < mask.shape[0]]
            assert any(inside), (seed, name)
        assert _hands_of(render(empty, seed=seed, dice=[])) == ()


def test_the_hand_limits_are_checked():
    with pytest.raises(ConfigError, match="hand_min_skin"):
        VisionConfig(hand_min_skin=1.5)
    with pytest.raises(ConfigError, match="hand_min_checkers"):
        VisionConfig(hand_min_checkers=0)
    with pytest.raises(ConfigError, match="foreign_spread"):
        VisionConfig(foreign_spread=-1.0)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")
@pytest.mark.parametrize(("name", "hand"), [("frame5", True), ("frame2", True), ("frame0", False), ("test9", False)])
def test_a_photo_with_a_hand_on_the_board_is_held_back_and_a_clear_one_is_not(name, hand):
    label = json.loads(LABELS.read_text(encoding="utf-8"))["frames"][f"{name}.jpg"]
    image = load_image(DATA / f"{name}.jpg")
    geometry = calibrate(image, corners=WBF_CORNERS, field=True, profile="tournament", home=label["home"])
    obs = read_frame(geometry, image, None, photo=True)
    if hand:
        assert obs.status == "occluded" and obs.checkers is None
    else:
        assert obs.status == "settling" and not any("hand" in m for m in obs.messages)


def _empty_board():
    """A rendered empty board (every checker borne off), its calibration and its layout."""
    empty = Position.from_dict(
        {"variant": "backgammon", "turn": "white", "points": [0] * 24, "bar": {"white": 0, "black": 0}}
        | {"off": {"white": 15, "black": 15}}
    )
    frame = render(empty, seed=2, dice=[])
    geometry = calibrate(frame.image)
    return frame, geometry, view(geometry, frame.image).layout


def test_a_skin_coloured_patch_in_the_middle_of_the_field_is_not_a_hand_one_at_its_side_is():
    # an arm reaches in over the field's edge; a logo or a cup in the middle of the field does not
    frame, geometry, lay = _empty_board()
    x0, y0, x1, y1 = lay.field
    mid_x = (x0 + lay.geometry.bar[0]) / 2  # the middle of the left half
    for (x, y), expected in (((mid_x, (y0 + y1) / 2), False), ((mid_x, y1 - 10.0), True)):
        image = frame.image.copy()
        centre = geometry.to_image(np.array([[x, y]]))[0]
        edge = geometry.to_image(np.array([[x + 30.0, y]]))[0]
        radius = int(np.hypot(*(edge - centre)))  # 30 mm: a palm
        cv2.circle(image, (int(centre[0]), int(centre[1])), radius, (100, 120, 200), -1)  # skin, darker than the wood
        v = view(geometry, image)
        assert bool(hands(v.lab, v.layout, v.ppm, [], **limits())) is expected, (x, y)


def test_a_skin_coloured_strip_along_the_fields_side_is_not_a_hand_one_reaching_in_is():
    # shade or the frame's reflection lies along the field's edge; an arm reaches in across it, of light
    # skin or of dark skin in dim light (BGR 28, 40, 62: Lab lightness 47, under the 60 once asked for)
    frame, geometry, lay = _empty_board()
    x0, y0, x1, y1 = lay.field
    mid_y = (y0 + y1) / 2
    light, dark = (100, 120, 200), (28, 40, 62)
    for (depth, along), bgr, expected in (
        ((25.0, 150.0), light, False),
        ((60.0, 50.0), light, True),
        ((60.0, 50.0), dark, True),
    ):
        image = frame.image.copy()
        corners = np.array([[x1 - depth, mid_y - along / 2], [x1, mid_y - along / 2], [x1, mid_y + along / 2]])
        corners = np.vstack([corners, [[x1 - depth, mid_y + along / 2]]])
        px = np.round(geometry.to_image(corners)).astype(np.int32)
        cv2.fillPoly(image, [px], bgr)  # skin, darker than the wood
        v = view(geometry, image)
        assert bool(hands(v.lab, v.layout, v.ppm, [], **limits())) is expected, (depth, along, bgr)


def test_a_patch_at_the_fields_side_is_a_hand_only_where_it_comes_in_over_the_frame():
    # a stack of wooden checkers the reading missed lies on the field alone; an arm crosses the frame to
    # reach it, or comes in from beyond the photo where the photo ends at the field
    frame, geometry, lay = _empty_board()
    x0, y0, x1, y1 = lay.field
    mid_y = (y0 + y1) / 2

    def painted(outer: float, image=None) -> np.ndarray:
        image = frame.image.copy() if image is None else image
        quad = np.array(
            [[x1 - 60.0, mid_y - 25.0], [outer, mid_y - 25.0], [outer, mid_y + 25.0], [x1 - 60.0, mid_y + 25.0]]
        )
        cv2.fillPoly(image, [np.round(geometry.to_image(quad)).astype(np.int32)], (100, 120, 200))
        return image

    def found(image: np.ndarray) -> bool:
        v = view(geometry, image)
        return bool(hands(v.lab, v.layout, v.ppm, [], **limits(), beyond=v.photo_lab_at))

    assert not found(painted(x1))  # on the field only: the frame beyond it as it is all round
    assert found(painted(lay.profile.board_size_mm[0] + 40.0))  # over the frame and past the board
    # the photo ends at the field's side: what lies beyond it cannot be seen, so the patch may be an arm
    edge = int(np.ceil(geometry.to_image(np.array([[x1 + 1.0, mid_y]]))[0][0]))
    v = view(geometry, painted(x1)[:, :edge].copy())
    assert hands(v.lab, v.layout, v.ppm, [], **limits(), beyond=v.photo_lab_at)


def test_a_sleeve_coming_in_over_the_frame_with_a_hand_at_its_end_is_a_hand():
    # a dark sleeve crosses the frame into the field and a hand ends it: the patch is mostly not skin, but
    # its far end is; the sleeve alone (a dark cloth laid over the board's side) is not a hand
    frame, geometry, lay = _empty_board()
    x0, y0, x1, y1 = lay.field
    mid_x = (x0 + lay.geometry.bar[0]) / 2

    def arm(hand: bool) -> bool:
        image = frame.image.copy()
        sleeve = np.array([[mid_x - 25.0, y0 - 80.0], [mid_x + 25.0, y0 - 80.0], [mid_x + 25.0, y0 + 90.0]])
        sleeve = np.vstack([sleeve, [[mid_x - 25.0, y0 + 90.0]]])
        cv2.fillPoly(image, [np.round(geometry.to_image(sleeve)).astype(np.int32)], (90, 40, 30))  # navy
        if hand:
            palm = geometry.to_image(np.array([[mid_x, y0 + 110.0], [mid_x + 25.0, y0 + 110.0]]))
            radius = int(np.hypot(*(palm[1] - palm[0])))
            cv2.circle(image, tuple(int(v) for v in palm[0]), radius, (100, 120, 200), -1)
        v = view(geometry, image)
        return bool(hands(v.lab, v.layout, v.ppm, [], **limits(), beyond=v.photo_lab_at))

    assert arm(hand=True)
    assert not arm(hand=False)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")
def test_a_sleeved_arm_over_a_pale_felt_board_is_held_back():
    # dices6: a dark sleeve and a hand over a felt board whose salmon points are themselves skin-coloured
    label = json.loads(LABELS.read_text(encoding="utf-8"))["frames"]["dices6.jpg"]
    image = load_image(DATA / "dices6.jpg")
    obs = read_photo(image, corners=label["corners"], home=label["home"]).observation
    assert obs.status == "occluded" and obs.checkers is None
    assert any("hand" in m for m in obs.messages)


def test_a_field_too_hidden_to_be_taken_for_one_is_occluded_where_a_hand_lies_over_it():
    # a fit too weak to be the field is read all the same: with a hand over it the photo is a board
    # under an arm (occluded), without one it has no board; a finder that takes no fit makes every fit weak
    start = Position.start("backgammon")
    strict = replace(default_field_config(), min_score=0.95)
    obs = read_photo(render(start, seed=1, dice=[], hand=True).image, field_config=strict).observation
    assert obs.status == "occluded" and obs.checkers is None and obs.occlusion.hands
    assert any("found only in part" in m for m in obs.messages)
    assert obs.to_dict()["occlusion"]["hands"] == list(obs.occlusion.hands)
    with pytest.raises(BoardNotFoundError) as caught:
        read_photo(render(start, seed=1, dice=[]).image, field_config=strict)
    assert caught.value.weak_fit is not None
    with pytest.raises(BoardNotFoundError) as caught:
        read_photo(np.full((480, 640, 3), 128, np.uint8))
    assert caught.value.weak_fit is None  # no rows of points: nothing to look at


@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")
def test_a_board_photo_whose_field_an_arm_hides_from_the_finder_is_occluded():
    # dices6's arm hides so much that the finder's best fit (0.13) is too weak to be taken, and lies off the field
    obs = read_photo(load_image(DATA / "dices6.jpg")).observation
    assert obs.status == "occluded" and obs.checkers is None and obs.occlusion.hands
