"""The learned checker reader: the shipped network, its slot crops, the reading of a point, the switch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from board_rules import Position
from vision.calibrate import calibrate
from vision.config import ConfigError
from vision.learned_checkers import (
    CLASSES,
    CROP,
    READERS,
    CheckerModelError,
    CheckerNet,
    checker_reader,
    combine,
    decode,
    in_even_light,
    points_under,
    read_points,
    slot_chances,
    slot_crops,
    slot_places,
    split_in_two,
    without_drawing,
)
from vision.observe import read_frame
from vision.profile import layout
from vision.render import random_profile, render
from vision.render_draw import random_styles
from vision.view import view

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "boards" / "backgammoncv"


def chances(*rows: str) -> np.ndarray:
    """Slot chances from letters: e empty, l light, d dark (each sure at 0.9)."""
    out = np.full((len(rows), 3), 0.05, np.float32)
    for i, r in enumerate(rows):
        out[i, "eld".index(r)] = 0.9
    return out


def test_shipped_model_loads_and_gives_three_chances_a_crop():
    net = CheckerNet()
    p = net.probabilities(np.zeros((5, CROP, CROP, 3), np.uint8))
    assert p.shape == (5, len(CLASSES))
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert net.probabilities(np.zeros((0, CROP, CROP, 3), np.uint8)).shape == (0, 3)


def test_a_crop_is_read_both_ways_round_across_its_point():
    rng = np.random.default_rng(3)
    crops = rng.integers(0, 256, (6, CROP, CROP, 3), dtype=np.uint8)
    mirror = np.ascontiguousarray(crops[:, :, ::-1])  # columns run across the point
    net = CheckerNet()
    one_way, other_way = net.probabilities(crops, mirrored=False), net.probabilities(mirror, mirrored=False)
    assert not np.allclose(one_way, other_way, atol=1e-3)
    both = np.sqrt(one_way.astype(np.float64) * other_way)  # averaged logits: the chances' geometric mean
    both /= both.sum(axis=1, keepdims=True)
    assert np.allclose(net.probabilities(crops), both, atol=1e-5)
    assert np.allclose(net.probabilities(mirror), both, atol=1e-5)


def test_a_missing_model_is_a_checker_model_error(tmp_path):
    with pytest.raises(CheckerModelError, match="does not exist"):
        CheckerNet(tmp_path / "none.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a network")
    with pytest.raises(CheckerModelError, match="not a network"):
        CheckerNet(bad)
    assert issubclass(CheckerModelError, FileNotFoundError)


def test_a_point_has_a_slot_for_each_checker_of_its_first_row():
    centres, dirs, k = slot_places(layout())
    assert k == 5 and centres.shape == (24 * 5, 2) and set(dirs) == {-1.0, 1.0}
    assert slot_places(layout("tournament", "left"))[2] == 6


def test_slot_crops_cut_every_slot_of_a_view():
    frame = render(Position.start("backgammon"), seed=3)
    crops = slot_crops(view(calibrate(frame.image), frame.image))
    assert crops.shape == (24, 5, CROP, CROP, 3) and crops.dtype == np.uint8


def test_a_point_reads_the_run_of_checkers_from_its_base():
    assert decode(chances("l", "l", "l", "e", "e"))[:2] == (3, 1)
    assert decode(chances("d", "e", "e", "e", "e"))[:2] == (1, -1)
    assert decode(chances("e", "e", "e", "e", "e"))[:2] == (0, 0)
    assert decode(chances("d", "d", "d", "d", "d"))[:2] == (5, -1)
    n, side, conf = decode(chances("l", "l", "e", "e", "e"))
    assert conf > 0.9
    # a lone checker off its place: one slot unsure, the run still explains the point best
    p = chances("l", "l", "e", "e", "e")
    p[1] = (0.45, 0.5, 0.05)
    assert decode(p)[:2] == (2, 1) and decode(p)[2] < 1.0


def test_the_hybrid_takes_the_classical_count_of_a_stack_in_layers():
    assert combine((5, -2, 0, 5), (9, -3, 1, 4), per_row=5) == (9, -2, 0, 5)
    assert combine((-5,), (7,), per_row=5) == (-7,)


def test_the_hybrid_refuses_a_classical_stack_that_makes_more_than_15():
    assert combine((5, 5, 2), (12, 5, 2), per_row=5) == (5, 5, 2)  # 19 white
    assert combine((5, -5), (9, -5), per_row=5, off=(3, 0)) == (9, -5)  # 12 white with 3 off
    assert combine((5, -5), (9, -5), per_row=5, off=(7, 0)) == (5, -5)


def test_the_hybrid_reads_a_point_under_a_die_classically():
    assert combine((-1, 2, 0), (0, 2, 1), per_row=5, under_dice={0, 2}) == (0, 2, 1)
    assert combine((1, 0), (-3, 0), per_row=5, under_dice={0}) == (3, 0)  # the network's side where it saw one


def test_the_reader_switch_is_read_from_the_config(tmp_path):
    assert checker_reader() in READERS
    good = tmp_path / "good.toml"
    good.write_text('[learned_checkers]\nreader = "hybrid"\n')
    assert checker_reader(good) == "hybrid"
    assert checker_reader(tmp_path / "good.toml") == "hybrid"
    bad = tmp_path / "bad.toml"
    bad.write_text('[learned_checkers]\nreader = "guess"\n')
    with pytest.raises(ConfigError, match="guess"):
        checker_reader(bad)
    none = tmp_path / "none.toml"
    none.write_text("")
    assert checker_reader(none) == "classical"
    assert checker_reader(good, rendered=True) == "classical"  # the renderer's board has its own key
    good.write_text('[learned_checkers]\nreader = "hybrid"\nrendered_board_reader = "learned"\n')
    assert (checker_reader(good), checker_reader(good, rendered=True)) == ("hybrid", "learned")
    bad.write_text('[learned_checkers]\nrendered_board_reader = "guess"\n')
    with pytest.raises(ConfigError, match="rendered_board_reader: 'guess'"):
        checker_reader(bad, rendered=True)


@pytest.mark.parametrize("reader", ["learned", "hybrid"])
def test_a_rendered_frame_reads_right(reader):
    position = Position.start("backgammon")
    frame = render(position, seed=11, dice=[(3, None), (5, None)])
    obs = read_frame(calibrate(frame.image), frame.image, reader=reader)
    assert obs.status == "settling"
    assert obs.checkers.points == position.points


def test_the_renderers_board_is_read_without_the_network_by_default(monkeypatch):
    # the network reads no rendered frame better than the classical reader, for half a frame's time
    def no_network(*_args, **_kwargs):
        raise AssertionError("the checker network ran on the renderer's board")

    position = Position.start("backgammon")
    frame = render(position, seed=13)
    geometry = calibrate(frame.image)
    monkeypatch.setattr(CheckerNet, "probabilities", no_network)
    assert read_frame(geometry, frame.image).checkers.points == position.points
    with pytest.raises(AssertionError, match="network ran"):
        read_frame(geometry, frame.image, reader="hybrid")


def test_a_stack_in_layers_reads_its_count_in_the_hybrid():
    points = [0] * 24
    points[5], points[18] = 9, -6
    position = Position.from_dict(
        {
            "variant": "backgammon",
            "turn": "white",
            "points": points,
            "bar": {"white": 0, "black": 0},
            "off": {"white": 6, "black": 9},
        }
    )
    frame = render(position, seed=12)
    obs = read_frame(calibrate(frame.image), frame.image, reader="hybrid")
    assert obs.checkers.points == position.points


def test_a_die_s_point_keeps_the_network_s_count_where_its_base_is_surely_bare():
    lay = layout()
    centres, _, k = slot_places(lay)
    x, y = centres[3]  # point 1's fourth place: a die there, its first three places clear of it
    die = [(float(x), float(y), 8.0)]
    probs = np.tile(np.array([0.05, 0.9, 0.05], np.float32), (24, k, 1))
    assert points_under(lay, die) == {0}
    assert points_under(lay, die, probs, [2] + [0] * 23) == {0}  # its base seen with checkers: classical
    probs[0, 0] = (0.9, 0.05, 0.05)
    assert points_under(lay, die, probs, [2] + [0] * 23) == frozenset()  # bare base: no classical 2
    assert points_under(lay, die, probs, [0] * 24) == {0}


def test_pearl_and_amber_split_apart_though_two_black_points_read_as_checkers():
    # a fmgammon frame's first rows (checkers, Lab): pearl, amber in two shades, and two black points'
    # rounded bases read as checkers; the network had put the lighter amber with the pearl
    pearl = [(5, (190, 127, 130)), (3, (208, 128, 129)), (2, (176, 128, 129)), (2, (184, 128, 131))]
    amber = [(1, (121, 136, 167)), (1, (100, 138, 164)), (1, (134, 133, 168)), (2, (126, 136, 162))]
    amber += [(1, (136, 136, 155)), (1, (134, 135, 157)), (1, (128, 135, 163)), (3, (89, 138, 153))]
    amber += [(2, (93, 139, 155)), (2, (100, 138, 157))]
    black = [(1, (18, 130, 125)), (1, (17, 130, 126))]
    rows = pearl + amber + black
    cols = np.array([c for _, c in rows], np.float64) * np.array([0.5, 1.0, 1.0])
    weight = np.array([n for n, _ in rows], np.float64)
    start = np.array([True] * 4 + [True] * 3 + [False, True, True, True, False, False, False, False, False])
    light = split_in_two(cols, weight, start)
    assert light is not None and light[:4].all() and not light[4:].any()


def test_a_row_coloured_as_its_point_not_as_its_side_is_the_drawing():
    frame = render(Position.start("backgammon"), seed=3)
    v = view(calibrate(frame.image), frame.image)
    crops = slot_crops(v)
    start = tuple(Position.start("backgammon").points)
    # point 2 is drawn light: a dark row there coloured as the point is its drawing; a light row stays
    drawn = list(start)
    drawn[1] = -1
    assert without_drawing(v, crops, tuple(drawn)) == start
    drawn[1] = 1
    assert without_drawing(v, crops, tuple(drawn)) == tuple(drawn)
    assert without_drawing(v, crops, start) == start


def test_an_unknown_reader_is_refused():
    frame = render(Position.start("backgammon"), seed=3)
    with pytest.raises(ValueError, match="reader"):
        read_frame(calibrate(frame.image), frame.image, reader="guess")


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/boards/backgammoncv is absent")
def test_the_shipped_model_reads_the_wbf_frames_points():
    from training.checkers_data import real_frames
    from vision.images import load_image

    frames = [f for f in real_frames() if f.camera == "wbf"]
    right = total = 0
    for f in frames:
        points = read_points(view(f.geometry, load_image(DATA / f"{f.name}.jpg")))[0]
        known = [(t, r) for t, r in zip(f.points, points) if t is not None]
        right += sum(t == r for t, r in known)
        total += len(known)
    assert total > 150 and right / total >= 0.97


def test_the_colours_are_evened_only_under_a_light_that_splits_them_better():
    # pearl-white and grey checkers on a random board, lit evenly, then under a lamp over one row
    style, checkers = random_styles(np.random.default_rng([700021, 13]))
    points = (1, 1, 2, 2, -1, 1, -3, 0, 1, 0, 1, 0, -2, 1, -2, -2, -1, -1, -2, 1, -1, 2, 1, 1)
    pos = Position.from_dict({**Position.start("backgammon").to_dict(), "points": list(points)})
    board = dict(profile=random_profile(700021), style=style, checkers=checkers, lighting=False)
    frame = render(pos, seed=1, **board)
    geometry = calibrate(frame.image, profile=board["profile"])
    lamp = np.linspace(1.2, 0.5, frame.image.shape[0])[:, None, None]
    for image, evened in ((frame.image, False), (np.clip(frame.image * lamp, 0, 255).astype(np.uint8), True)):
        v = view(geometry, image)
        crops, probs = slot_chances(v)
        counts = tuple(n * side for n, side, _ in (decode(p) for p in probs))
        out, light = in_even_light(v, crops, counts)
        assert (light is not None) == evened
        assert (out is crops) != evened
