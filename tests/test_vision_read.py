"""Reading a calibrated frame: checkers on every point, bar and trays, the cube, occlusion and the stability gate."""

import json
import random
from dataclasses import replace

import cv2
import numpy as np
import pytest

from board_rules import Position, Roll
from referee.cli import main
from tests.positions import random_backgammon, random_same_direction
from vision.calibrate import calibrate
from vision.checkers import Palette, PaletteError, learn_palette, read_checkers
from vision.config import ConfigError, VisionConfig, default_config
from vision.cube import find_cube
from vision.gate import Gate
from vision.observe import Pipeline, read_frame
from vision.rectify import rectify, warp
from vision.render import DieSpec, camera_pose, frames_of_game, render
from vision.view import view

START = Position.start("backgammon")


def _assert_reads(frame, reading):
    pos = frame.position
    wrong = [(i + 1, pos.points[i], reading.points[i]) for i in range(24) if pos.points[i] != reading.points[i]]
    assert wrong == []
    assert reading.bar == tuple(pos.bar)
    assert reading.off == tuple(pos.off)


@pytest.mark.parametrize(
    "seed, style, checkers",
    [
        (1, "walnut", "matte"),
        (2, "felt", "glossy"),
        (3, "olive", "metal"),
        (4, "walnut", "glossy"),
        (5, "felt", "metal"),
    ],
)
def test_every_point_bar_and_tray_is_counted_with_its_colour(seed, style, checkers):
    pos = random_backgammon(random.Random(1000 + seed))
    frame = render(pos, seed=1000 + seed, style=style, checkers=checkers)
    reading = read_checkers(calibrate(frame.image), frame.image)
    _assert_reads(frame, reading)
    assert reading.issues == ()
    assert min(reading.confidence) > 0.5


@pytest.mark.parametrize("off", [(11, 2), (15, 9)])
def test_a_row_of_metal_rimmed_checkers_on_edge_in_the_tray_is_counted_whole(off):
    """Seen on edge, metal-rimmed checkers show a 4 mm rim between them: the row goes on past it."""
    white_left, black_left = 15 - off[0], 15 - off[1]
    points = [0] * 24
    points[0], points[23] = white_left, -black_left
    pos = Position.from_dict({**START.to_dict(), "points": points, "off": {"white": off[0], "black": off[1]}})
    for seed in (7, 8):
        frame = render(pos, seed=seed, style="olive", checkers="metal")
        _assert_reads(frame, read_checkers(calibrate(frame.image), frame.image))


@pytest.mark.parametrize("variant", ["fevga", "long-nardy"])
def test_stacks_up_to_fifteen_in_layers_are_counted(variant):
    for seed in (11, 12):
        frame = render(Position.start(variant), seed=seed, checkers="metal" if seed % 2 else "matte")
        _assert_reads(frame, read_checkers(calibrate(frame.image), frame.image))
    pos = random_same_direction(random.Random(5), variant)
    frame = render(pos, seed=13, style="olive")
    _assert_reads(frame, read_checkers(calibrate(frame.image), frame.image))


def test_a_pinned_checker_is_left_to_the_referee_and_reported_missing():
    points = [0] * 24
    points[5], points[9], points[12] = 5, 2, 7  # white, with a black checker pinned under the two on 10
    points[18], points[21], points[23] = -4, -3, -5  # black, with a white checker pinned under the three on 22
    pos = Position.from_dict(
        {
            "variant": "plakoto",
            "turn": "white",
            "points": points,
            "pinned": {"10": "black", "22": "white"},
            "bar": {"white": 0, "black": 0},
            "off": {"white": 0, "black": 2},
        }
    )
    frame = render(pos, seed=21)
    reading = read_checkers(calibrate(frame.image), frame.image)
    assert [abs(v) for v in reading.points] == [abs(v) for v in pos.points]
    pinned = {"white": sum(1 for p in pos.pinned if p > 0), "black": sum(1 for p in pos.pinned if p < 0)}
    for side, n in pinned.items():
        if n:
            assert any(issue.startswith(f"{side}: {15 - n} checkers seen") for issue in reading.issues)


def test_learned_palette_reads_the_start_and_round_trips(tmp_path):
    frame = render(START, seed=31, style="felt", checkers="glossy")
    geometry = calibrate(frame.image)
    palette = learn_palette(geometry, frame.image, START)
    palette.save(tmp_path / "p.json")
    assert palette.evened is not None  # the sides' colours in the field's median light, too
    assert Palette.load(tmp_path / "p.json") == palette
    later = render(
        random_backgammon(random.Random(32)),
        camera=camera_pose(31),
        seed=32,
        scene_seed=31,
        style="felt",
        checkers="glossy",
    )
    _assert_reads(later, read_checkers(geometry, later.image, palette))
    (tmp_path / "bad.json").write_text('{"white": [1, 2]}')
    with pytest.raises(PaletteError, match="Lab triples"):
        Palette.load(tmp_path / "bad.json")
    evened = {**palette.to_dict(), "evened": {"white": [300, 128, 128], "black": [20, 128, 128]}}
    (tmp_path / "bad.json").write_text(json.dumps(evened))
    with pytest.raises(PaletteError, match="evened.white"):
        Palette.load(tmp_path / "bad.json")
    older = {k: v for k, v in palette.to_dict().items() if k != "evened"}  # a palette learned before
    assert Palette.from_dict(older) == replace(palette, evened=None)
    with pytest.raises(PaletteError):
        learn_palette(
            geometry,
            frame.image,
            Position.from_dict({**START.to_dict(), "points": [15] + [0] * 23, "off": {"white": 0, "black": 15}}),
        )


@pytest.mark.parametrize("value, where", [(1, "centre"), (2, "white"), (16, "black"), (64, "white"), (8, "centre")])
def test_the_cube_is_found_on_the_bar_and_read(value, where):
    frame = render(START, seed=40 + value, cube=(value, where), style="walnut" if value % 3 else "olive")
    obs = read_frame(calibrate(frame.image), frame.image)
    assert obs.cube is not None and obs.cube.where == where and obs.cube.value == value
    assert obs.checkers.bar == (0, 0)


@pytest.mark.parametrize("seed", [71, 72, 73, 74])
def test_the_quick_search_along_the_bar_finds_the_cube_where_the_exact_one_does(seed):
    """The coarse search on the thresholded map (nearest px) leads to the same cube as sampling every outline exactly."""
    rng = random.Random(seed)
    where = rng.choice(["centre", "white", "black"])
    frame = render(
        random_backgammon(rng),
        seed=seed,
        cube=(1 if where == "centre" else 2 ** rng.randint(1, 6), where),
        size=(1280, 720),
    )
    v = view(calibrate(frame.image), frame.image)
    exact = find_cube(v.edges_at, min_score=0.3)
    quick = find_cube(v.edges_at, min_score=0.3, edge_map=v.edges, ppm=v.ppm, threshold=v.threshold)
    assert exact is not None and quick == exact
    # a grid step that is not a whole number of px falls back to the exact search
    assert find_cube(v.edges_at, min_score=0.3, edge_map=v.edges, ppm=1.7, threshold=v.threshold) == exact


def test_a_fixed_camera_is_rectified_through_kept_maps_to_the_same_view():
    frame = render(START, seed=75, size=(1280, 720))
    geometry = calibrate(frame.image)
    fresh = warp(geometry, frame.image, 2.0)
    first, second = rectify(geometry, frame.image, px_per_mm=2.0), rectify(geometry, frame.image, px_per_mm=2.0)
    assert np.array_equal(first, fresh)
    diff = np.abs(
        second.astype(int) - fresh.astype(int)
    )  # the maps round a source px to 1/32 as the warp does, nearly always alike
    assert (diff > 1).mean() < 1e-3 and diff.max() <= 8


@pytest.mark.parametrize("sensor_noise", [0.0, 6.0])
def test_the_view_is_worked_out_on_the_field_and_trays_alone_and_is_the_whole_views_there(sensor_noise):
    from vision.config import default_config
    from vision.rectify import board_rect_to_rectified, prepare
    from vision.view import _edge_map, noise_grey

    frame = render(START, seed=76, size=(1280, 720))
    noise = np.random.default_rng(76).normal(0, sensor_noise, frame.image.shape)
    image = np.clip(frame.image + noise, 0, 255).astype(np.uint8)
    geometry = calibrate(frame.image)
    cfg = default_config()
    prepare(geometry, cfg.read_px_per_mm)  # the view and the whole one below both through the kept maps
    v = view(geometry, image)
    whole = rectify(geometry, cv2.cvtColor(image, cv2.COLOR_BGR2LAB), px_per_mm=v.ppm)  # the whole frame in Lab, warped
    sigma = noise_grey(image)
    blur = cfg.edge_blur_mm_per_grey * sigma if sigma > cfg.edge_blur_above_noise else 0.0
    assert (blur > 0) == (sensor_noise > 0)
    lay = geometry.layout
    x0, y0, x1, y1 = lay.field
    x1 = max(x1, lay.geometry.tray_white[2], lay.geometry.tray_black[2])
    inside = board_rect_to_rectified((x0 - 1, y0 - 1, x1 + 1, y1 + 1), v.ppm)
    assert np.array_equal(v.lab[inside], whole[inside])
    assert np.array_equal(v.edges[inside], _edge_map(whole, v.ppm, blur)[inside])
    assert (
        not v.edges[:, : inside[1].start - 20].any() and not v.lab[: inside[0].start - 20].any()
    )  # the frame beyond: not worked out


def test_a_window_converted_before_the_warp_is_the_whole_frame_converted_and_warped():
    from vision.rectify import prepare

    frame = render(START, seed=77, size=(1280, 720))
    geometry = calibrate(frame.image)
    prepare(geometry, 2.0)
    window = (slice(90, 1000), slice(80, 1250))
    lab = rectify(geometry, frame.image, px_per_mm=2.0, window=window, code=cv2.COLOR_BGR2LAB)
    whole = rectify(geometry, cv2.cvtColor(frame.image, cv2.COLOR_BGR2LAB), px_per_mm=2.0)
    assert np.array_equal(lab[window], whole[window])
    assert not lab[:90].any() and not lab[:, 1250:].any()
    # off the camera's frame: black, converted
    off = rectify(geometry, frame.image[:200], px_per_mm=2.0, window=window, code=cv2.COLOR_BGR2LAB)
    assert tuple(off[900, 600]) == (0, 128, 128)


def test_the_cube_face_is_cut_from_the_same_px_as_the_whole_view():
    from vision.cube import CUBE_SIZE_MM
    from vision.rectify import prepare

    frame = render(START, seed=78, size=(1280, 720), cube=(2, "white"))
    geometry = calibrate(frame.image)
    prepare(geometry, 2.0)
    v = view(geometry, frame.image)
    centre = (350.0, 440.0)
    near = v.bgr_near(centre, CUBE_SIZE_MM * 0.75)
    whole = rectify(geometry, frame.image, px_per_mm=v.ppm)
    shown = near.any(axis=2)
    assert shown.sum() > (CUBE_SIZE_MM * 1.5 * v.ppm) ** 2 * 0.9
    assert np.array_equal(near[shown], whole[shown])


def test_no_cube_is_no_cube():
    frame = render(START, seed=50)
    assert read_frame(calibrate(frame.image), frame.image).cube is None


def test_a_hand_over_the_board_is_occluded_and_reports_no_counts():
    for seed in (60, 61, 62, 63):
        pos = random_backgammon(random.Random(seed))
        clear = render(pos, seed=seed)
        geometry = calibrate(clear.image)
        obs = read_frame(
            geometry, render(pos, camera=camera_pose(seed), seed=seed + 100, scene_seed=seed, hand=True).image
        )
        assert obs.status == "occluded"
        d = obs.to_dict()
        assert d["points"] is None and d["dice"] == [] and d["occlusion"]["occluded"]
        assert read_frame(geometry, clear.image).status == "settling"


def test_a_knocked_camera_is_board_not_found_with_the_drift():
    frame = render(START, seed=70)
    geometry = calibrate(frame.image)
    moved = render(START, seed=71)
    obs = read_frame(geometry, moved.image)
    assert obs.status == "board-not-found"
    assert obs.drift_px is not None and obs.drift_px > 4
    assert "recalibrate" in obs.messages[0]


def test_gate_reports_stable_only_after_the_reading_held():
    gate = Gate(3)
    assert gate.update("a") == ("settling", 1)
    assert gate.update("a") == ("settling", 2)
    assert gate.update("a") == ("stable", 3)
    assert gate.update("b") == ("settling", 1)
    assert gate.update("b", occluded=True) == ("occluded", 0)
    assert gate.update("b") == ("settling", 1)
    assert gate.update("b", moving=True) == ("settling", 1)
    assert gate.update("b") == ("settling", 2)
    assert gate.update("b", board_found=False) == ("board-not-found", 0)
    with pytest.raises(ValueError):
        Gate(0)


def test_pipeline_on_a_game_in_progress_never_calls_a_hand_frame_stable():
    positions = [START, START.play(START.legal_plays(Roll(3, 1))[0], Roll(3, 1))]
    frames = list(frames_of_game(positions, seed=80))
    assert [f.hand is not None for f in frames] == [False, True, False]
    pipe = Pipeline(calibrate(frames[0].image), config=VisionConfig(stable_frames=2))
    statuses = []
    for f in [frames[0], frames[0], frames[1], frames[2], frames[2], frames[2]]:
        statuses.append(pipe.feed(f.image).status)
    assert statuses == ["settling", "stable", "occluded", "settling", "stable", "stable"]
    last = pipe.feed(frames[2].image)
    assert last.checkers.points == positions[1].points


def test_pipeline_reads_a_still_frame_once_and_a_changed_die_afresh():
    """A fixed camera over a still board sends the same picture 30 times a second: it is read once
    (and again every reread_every_frames); a die turned over, a few dozen px, is read at once."""
    shown = render(START, seed=91, dice=[DieSpec(3, at=(470.0, 200.0)), DieSpec(5, at=(520.0, 330.0))])
    turned = render(START, seed=91, dice=[DieSpec(3, at=(470.0, 200.0)), DieSpec(6, at=(520.0, 330.0))])
    changed = int((cv2.absdiff(shown.image, turned.image).max(axis=2) > 25).sum())
    assert 0 < changed < 0.002 * shown.image.shape[0] * shown.image.shape[1]  # below what counts as motion
    pipe = Pipeline(calibrate(shown.image), config=VisionConfig(stable_frames=3, reread_every_frames=10))
    seen = [pipe.feed(shown.image) for _ in range(12)]
    assert [o.status for o in seen[:4]] == ["settling", "settling", "stable", "stable"]
    assert pipe.frames_read == 2  # the first frame, and the tenth after it
    assert sorted(d.value for d in seen[-1].dice) == [3, 5]
    after = pipe.feed(turned.image)
    assert pipe.frames_read == 3 and sorted(d.value for d in after.dice) == [3, 6] and after.status == "settling"
    with pytest.raises(ValueError):
        pipe.feed(np.zeros((4, 4), np.uint8))


def test_a_noisy_720p_camera_reads_the_position_and_the_dice_and_becomes_stable():
    """A real sensor adds a few grey levels of noise to every frame: it must not be read as
    checkers' rims (it was: 14 black on two points, 10 on the bar), and 16 px dice must be read."""
    pos = random_backgammon(random.Random(4242))
    cam = camera_pose(4242, size=(1280, 720))
    frame = render(
        pos, camera=cam, seed=4243, dice=[DieSpec(4, at=(450.0, 200.0)), DieSpec(1, at=(520.0, 330.0))], noise=0
    )
    rng = np.random.default_rng(7)
    pipe = Pipeline(calibrate(frame.image), config=VisionConfig(stable_frames=3, reread_every_frames=1))
    seen = []
    for _ in range(4):
        noisy = np.clip(
            frame.image.astype(np.int16) + rng.normal(0, 4, frame.image.shape).astype(np.int16), 0, 255
        ).astype(np.uint8)
        seen.append(pipe.feed(noisy))
    assert [o.status for o in seen] == ["settling", "settling", "stable", "stable"], [o.messages for o in seen]
    assert pipe.frames_read == 4  # every frame read in full: the noise alone changes it
    _assert_reads(frame, seen[-1].checkers)
    assert sorted((d.value, d.cocked) for d in seen[-1].dice) == [(1, False), (4, False)]


def test_the_cameras_noise_is_estimated_through_edges_and_bad_blur_settings_are_refused():
    from vision.view import noise_grey

    rng = np.random.default_rng(3)
    flat = np.full((720, 1280, 3), 120, np.int16)
    flat[:, 640:] = 40  # an edge, and a slope: neither is noise
    flat += np.linspace(0, 60, 1280).astype(np.int16)[None, :, None]
    assert noise_grey(flat.astype(np.uint8)) < 0.5
    for sigma in (2.0, 4.0):
        grey_noise = rng.normal(0, sigma, (720, 1280, 1)).repeat(3, axis=2)
        assert abs(noise_grey(np.clip(flat + grey_noise, 0, 255).astype(np.uint8)) - sigma) < 0.25 * sigma
    for bad in (-1.0, 1.5, True, "0.5"):
        with pytest.raises(ConfigError, match="edge_blur_mm_per_grey"):
            VisionConfig(edge_blur_mm_per_grey=bad)


def test_observation_json_has_every_field():
    frame = render(START, seed=90, dice=[(3, None), (5, None)], cube=(2, "black"))
    d = read_frame(calibrate(frame.image), frame.image).to_dict()
    assert d["format"] == "tavli-observation/1" and d["status"] == "settling"
    assert d["points"] == list(START.points)
    assert d["bar"] == {"white": 0, "black": 0} and d["off"] == {"white": 0, "black": 0}
    assert d["conservation"] == {"white": 15, "black": 15, "issues": []}
    assert len(d["confidence"]["points"]) == 24
    assert d["cube"]["where"] == "black" and d["cube"]["value"] == 2
    for die in d["dice"]:
        assert set(die) >= {"value", "centre", "centre_mm", "half", "cocked", "confidence", "box"}
    json.dumps(d)


def test_vision_read_and_learn_on_the_command_line(tmp_path, capsys):
    frame = render(START, seed=95)
    import cv2

    cv2.imwrite(str(tmp_path / "f.png"), frame.image)
    (tmp_path / "start.json").write_text(START.to_json())
    assert main(["vision", "calibrate", str(tmp_path / "f.png"), "-o", str(tmp_path / "g.json")]) == 0
    assert (
        main(
            [
                "vision",
                "learn",
                str(tmp_path / "f.png"),
                "--geometry",
                str(tmp_path / "g.json"),
                "--position",
                str(tmp_path / "start.json"),
                "-o",
                str(tmp_path / "p.json"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "vision",
                "read",
                str(tmp_path / "f.png"),
                "--geometry",
                str(tmp_path / "g.json"),
                "--palette",
                str(tmp_path / "p.json"),
                "--annotate",
                str(tmp_path / "a.png"),
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["points"] == list(START.points)
    assert cv2.imread(str(tmp_path / "a.png")) is not None


@pytest.mark.parametrize("content", [None, b"", b"not an image at all", np.zeros((4, 4, 3), np.uint8)])
def test_vision_read_refuses_bad_images_with_exit_2(tmp_path, capsys, content):
    import cv2

    frame = render(START, seed=96)
    cv2.imwrite(str(tmp_path / "f.png"), frame.image)
    main(["vision", "calibrate", str(tmp_path / "f.png"), "-o", str(tmp_path / "g.json")])
    bad = tmp_path / "bad.png"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content is not None:
        cv2.imwrite(str(bad), content)
    capsys.readouterr()
    assert main(["vision", "read", str(bad), "--geometry", str(tmp_path / "g.json")]) == 2
    err = capsys.readouterr().err
    assert "image" in err and str(bad) in err


def test_vision_read_refuses_a_bad_geometry_or_config(tmp_path, capsys):
    import cv2

    cv2.imwrite(str(tmp_path / "f.png"), render(START, seed=97).image)
    (tmp_path / "g.json").write_text("{}")
    assert main(["vision", "read", str(tmp_path / "f.png"), "--geometry", str(tmp_path / "g.json")]) == 2
    (tmp_path / "c.toml").write_text("[gate]\nstable_frames = 0\n")
    main(["vision", "calibrate", str(tmp_path / "f.png"), "-o", str(tmp_path / "g.json")])
    assert (
        main(
            [
                "vision",
                "read",
                str(tmp_path / "f.png"),
                "--geometry",
                str(tmp_path / "g.json"),
                "--config",
                str(tmp_path / "c.toml"),
            ]
        )
        == 2
    )
    assert "stable_frames" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        VisionConfig(max_missing_edges=1.5)


def test_field_corners_calibrate_a_board_without_markers():
    from vision.calibrate import FIELD_CORNERS_MM

    frame = render(START, seed=98)
    truth = calibrate(frame.image)
    corners = truth.to_image(FIELD_CORNERS_MM)
    geometry = calibrate(frame.image, corners=[tuple(c) for c in corners], field=True)
    assert np.allclose(geometry.matrix / geometry.matrix[2, 2], truth.matrix / truth.matrix[2, 2], atol=1e-3)
    assert read_checkers(geometry, frame.image).points == START.points


def test_board_edges_learned_from_the_start_tell_a_hand_from_a_clear_board():
    for seed, style, finish in ((301, "felt", "glossy"), (305, "olive", "metal")):
        start = render(START, seed=seed, style=style, checkers=finish)
        geometry = calibrate(start.image)
        palette = learn_palette(geometry, start.image, START)
        assert len(palette.board_edges) > 1000
        pos = random_backgammon(random.Random(seed))
        clear = render(
            pos,
            camera=camera_pose(seed),
            seed=seed + 1,
            scene_seed=seed,
            style=style,
            checkers=finish,
            dice=[(3, None), (5, None)],
        )
        hand = render(
            pos, camera=camera_pose(seed), seed=seed + 2, scene_seed=seed, style=style, checkers=finish, hand=True
        )
        obs = read_frame(geometry, clear.image, palette)
        assert obs.status == "settling" and obs.checkers.points == pos.points
        assert read_frame(geometry, hand.image, palette).status == "occluded"


def test_the_median_of_each_row_is_numpys():
    from vision.stats import median_rows

    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 11, 200, 201):
        values = rng.integers(0, 256, (3, n)).astype(np.uint8)
        assert np.array_equal(median_rows(values), np.median(values, axis=1))


def test_an_observation_with_a_die_of_no_value_beside_one_with_a_value_has_a_key():
    from vision.observe import DieObservation, Observation

    dice = (
        DieObservation(None, (0.0, 0.0), (0.0, 0.0), "right", True, 0.5, (0, 0, 9, 9)),
        DieObservation(4, (9.0, 0.0), (9.0, 0.0), None, False, 1.0, (9, 0, 9, 9)),
        DieObservation(2, (30.0, 0.0), (30.0, 0.0), "left", False, 1.0, (30, 0, 9, 9)),
    )
    key = Observation("settling", None, dice, None, None).key()
    assert key[1] == ((None, "right", True), (2, "left", False), (4, None, False))


@pytest.mark.parametrize("seed", [730191, 730266])
def test_a_doubled_cube_too_faint_to_report_on_a_noisy_small_frame_is_not_read_as_a_checker_on_the_bar(
    seed, monkeypatch
):
    # development frames (1280x720, sensor noise sigma 3) whose cube outline scores under cube.min_outline:
    # its place on the bar was read as a white checker, and the frame held back as 16 white checkers
    from dataclasses import replace as _replace

    from benchmarks.bench_vision import scene

    s = scene(seed, 0.0)
    pos = s.pop("position")
    frame = render(pos, seed=seed, size=(1280, 720), **s)
    noise = np.random.default_rng(seed).normal(0, 3, frame.image.shape).astype(np.int16)
    image = np.clip(frame.image.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    geometry = calibrate(frame.image)
    cfg = default_config()
    obs = read_frame(geometry, image, config=cfg)
    assert obs.status == "settling" and obs.checkers.bar == (0, 0) and obs.checkers.points == pos.points
    faint_not_looked_for = _replace(
        cfg,
        cube_min_shape=cfg.cube_min_outline,
        cube_min_conserve=cfg.cube_min_outline,
        cube_min_face_outline=cfg.cube_min_outline,
    )
    monkeypatch.setattr("vision.cube.find_cube_near", lambda *a: ((0.0, 0.0), 0.0, 0.0))  # nor its face looked for
    before = read_frame(geometry, image, config=faint_not_looked_for)
    assert before.status == "occluded" and "more than 15 white" in before.messages[0]


def test_the_cubes_faint_shape_threshold_may_not_exceed_the_reporting_one():
    from dataclasses import replace as _replace

    with pytest.raises(ConfigError, match="min_shape"):
        _replace(default_config(), cube_min_shape=0.7)
    with pytest.raises(ConfigError, match="min_conserve"):
        _replace(default_config(), cube_min_conserve=0.5)


@pytest.mark.parametrize("seed, points", [(730002, (19, 21)), (730027, (13, 21))])
def test_a_dark_glossy_checker_alone_on_a_point_of_its_colour_is_counted_in_a_noisy_720p_frame(seed, points):
    """Development frames of the accuracy benchmark at 1280x720 with noise: the lone checker's rim
    is faint after the noise's blur, below the edge threshold over most of it, but above 0.7 of it."""
    from benchmarks.bench_vision import scene

    s = scene(seed, 0.0)
    pos = s.pop("position")
    frame = render(pos, seed=seed, size=(1280, 720), **s)
    noisy = np.clip(
        frame.image.astype(np.int16) + np.random.default_rng(seed).normal(0, 3, frame.image.shape).astype(np.int16),
        0,
        255,
    ).astype(np.uint8)
    obs = read_frame(calibrate(frame.image), noisy)
    assert obs.status == "settling", obs.messages
    for p in points:
        assert pos.points[p - 1] == -1 and obs.checkers.points[p - 1] == -1
    _assert_reads(frame, obs.checkers)


def test_a_cube_too_faint_to_see_is_not_counted_as_a_sixteenth_checker_on_the_bar():
    """A development frame at 1280x720 with noise sigma 4.5: the doubled cube on the bar scores
    under cube.min_shape and was read as a 16th white checker (the frame held back as occluded);
    the faint square there is taken for the cube, as conservation asks."""
    from benchmarks.bench_vision import scene

    seed = 730057
    s = scene(seed, 0.0)
    pos = s.pop("position")
    frame = render(pos, seed=seed, size=(1280, 720), **s)
    noisy = np.clip(
        frame.image.astype(np.int16)
        + np.random.default_rng([seed, 1]).normal(0, 4.5, frame.image.shape).astype(np.int16),
        0,
        255,
    ).astype(np.uint8)
    obs = read_frame(calibrate(frame.image), noisy)
    assert obs.status == "settling", obs.messages
    assert s["cube"] == (16, "black") and obs.cube is None  # too faint to report
    _assert_reads(frame, obs.checkers)


def _noisy_720p(seed: int, sigma: float = 3.0):
    from benchmarks.bench_vision import scene

    s = scene(seed, 0.0)
    pos = s.pop("position")
    frame = render(pos, seed=seed, size=(1280, 720), **s)
    noise = np.random.default_rng(seed).normal(0, sigma, frame.image.shape).astype(np.int16)
    return s, pos, frame, np.clip(frame.image.astype(np.int16) + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("seed", [730053, 730059, 730108, 730158])
def test_a_cube_whose_outline_is_faint_in_a_noisy_720p_frame_is_reported_where_its_face_reads_clearly(seed):
    """Development frames (1280x720, sensor noise sigma 3): the doubled cube's outline scores under
    cube.min_outline, so it was not reported; its face's number reads clearly, and it is now."""
    from dataclasses import replace as _replace

    s, pos, frame, image = _noisy_720p(seed)
    geometry = calibrate(frame.image)
    cfg = default_config()
    obs = read_frame(geometry, image, config=cfg)
    assert obs.status == "settling", obs.messages
    value, where = s["cube"]
    assert obs.cube is not None and (obs.cube.value, obs.cube.where) == (value, where)
    assert (
        obs.cube.confidence < cfg.cube_min_outline <= 1.0 and obs.cube.face_confidence >= cfg.cube_min_face_confidence
    )
    assert obs.checkers.points == pos.points and obs.checkers.bar == tuple(pos.bar)
    outline_only = _replace(cfg, cube_min_face_outline=cfg.cube_min_outline)
    assert read_frame(geometry, image, config=outline_only).cube is None


def test_with_no_cube_on_noisy_720p_frames_no_faint_square_is_reported_as_one():
    """The best square on the bar of development frames without a cube scores up to about 0.4; its
    'face' shows no number, so the face rule reports none."""
    seen = 0
    for seed in range(730000, 730040):
        s, pos, frame, image = _noisy_720p(seed)
        if s["cube"] is not None:
            continue
        seen += 1
        obs = read_frame(calibrate(frame.image), image)
        assert obs.cube is None, seed
    assert seen >= 10


def test_the_cubes_face_threshold_lies_between_the_conservation_and_reporting_ones():
    from dataclasses import replace as _replace

    with pytest.raises(ConfigError, match="min_face_outline"):
        _replace(default_config(), cube_min_face_outline=0.7)
    with pytest.raises(ConfigError, match="min_face_outline"):
        _replace(default_config(), cube_min_face_outline=0.2)
    with pytest.raises(ConfigError, match="min_face_confidence"):
        _replace(default_config(), cube_min_face_confidence=1.5)


@pytest.mark.parametrize("seed", [730367])
def test_a_cube_read_as_a_sixteenth_checker_on_the_bar_is_found_by_its_face_there(seed, monkeypatch):
    """Development frames at 1280x720 with noise sigma 3: the cube's outline is plain, but the surround
    just outside it shows edges too (the noise's blur), so no square along the bar scored as the cube
    and its place was read as a 16th white checker. The best square about that checker shows the
    cube's number clearly, and is the cube; without it the frame reads, its cube kept off the bar's
    checkers as a faint square but not reported."""
    s, pos, frame, image = _noisy_720p(seed)
    geometry = calibrate(frame.image)
    obs = read_frame(geometry, image)
    assert obs.status == "settling", obs.messages
    assert obs.cube is not None and (obs.cube.value, obs.cube.where) == s["cube"]
    assert obs.checkers.bar == tuple(pos.bar) and obs.checkers.points == pos.points
    monkeypatch.setattr("vision.cube.find_cube_near", lambda *a: ((0.0, 0.0), 0.0, 0.0))
    without = read_frame(geometry, image)
    assert without.status == "settling" and without.cube is None and without.checkers.bar == tuple(pos.bar)


@pytest.mark.parametrize(
    "colour, value, where, size",
    [
        ("red", 2, "white", (1280, 960)),
        ("red", 64, "centre", (1280, 720)),
        ("black", 16, "white", (1280, 960)),
        ("black", 32, "black", (1280, 720)),
    ],
)
def test_a_red_or_black_cube_with_light_numbers_is_read(colour, value, where, size):
    """Tournament cubes are often red or black with light numbers: the face's ink is whichever of
    dark and light its middle shows less of."""
    frame = render(
        START,
        seed=1004 if value == 16 else 90 + value,
        cube=(1 if where == "centre" else value, where),
        cube_colour=colour,
        style="olive" if value == 16 else "walnut",
        size=size,
    )
    obs = read_frame(calibrate(frame.image), frame.image)
    assert obs.cube is not None and (obs.cube.where, obs.cube.face) == (where, value)


def test_a_cube_number_a_little_off_the_face_s_centre_still_reads():
    from vision.cube import _TEMPLATE_PX, read_face

    for value in (16, 64, 4, 32):
        for dx, dy in ((0, 0), (3, -2), (-3, 3)):
            face = np.full((_TEMPLATE_PX, _TEMPLATE_PX, 3), 235, np.uint8)
            text = str(value)
            scale = 0.028 * _TEMPLATE_PX / len(text)
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
            cv2.putText(
                face,
                text,
                (_TEMPLATE_PX // 2 - tw // 2 + dx, _TEMPLATE_PX // 2 + th // 2 + dy),
                cv2.FONT_HERSHEY_SIMPLEX,
                scale,
                (20, 20, 20),
                1,
                cv2.LINE_AA,
            )
            number, confidence = read_face(np.rot90(face, value % 4).copy())
            assert number == value and confidence > 0.5, (value, dx, dy)


@pytest.fixture
def club_profile(monkeypatch):
    """A board profile named ``club`` with the renderer's proportions, built as any measured board's
    is (not the renderer's own geometry)."""
    import vision.profile as profile

    profiles = dict(profile._profiles())
    profiles["club"] = profile.BoardProfile("club", "a measured board of the renderer's proportions")
    monkeypatch.setattr(profile, "_profiles", lambda: profiles)
    profile.layout.cache_clear()
    yield "club"
    profile.layout.cache_clear()


@pytest.mark.parametrize("value, where", [(2, "black"), (1, "centre"), (32, "white")])
def test_the_cube_is_read_on_a_measured_board_profile_too(club_profile, value, where):
    from vision.cube import area_of

    frame = render(START, seed=120 + value, cube=(value, where))
    geometry = calibrate(frame.image, profile=club_profile)
    assert geometry.layout.profile.name == "club"
    area = area_of(geometry.layout)
    assert (area.x0, area.x1, area.size) == (290.0, 340.0, 30.0)
    obs = read_frame(geometry, frame.image)
    assert obs.status == "settling" and obs.cube is not None and (obs.cube.where, obs.cube.value) == (where, value)
    assert obs.checkers.points == START.points and obs.checkers.bar == (0, 0)


def test_a_cube_wider_than_its_board_s_bar_is_looked_for_along_the_bar_s_middle():
    from vision.cube import CubeArea, _bar_grid

    xs, ys, centres = _bar_grid(
        CubeArea(300.0, 333.0, 40.0, 467.0, 50.0)
    )  # 8 mm more than the 4 mm overhang each side allows
    assert xs.tolist() == [316.5] and ys[0] == 65.0 and ys[-1] <= 442.0 and len(centres) == len(ys)
    xs, _, _ = _bar_grid(CubeArea(290.0, 340.0, 50.0, 490.0, 30.0))
    assert xs[0] == 301.0 and xs[-1] <= 329.0


def test_a_cube_colour_the_renderer_does_not_know_is_refused():
    with pytest.raises(ValueError, match="cube_colour"):
        render(START, seed=1, cube=(2, "white"), cube_colour="green")


def test_a_camera_giving_the_same_picture_at_another_resolution_is_read_as_calibrated():
    """A webcam opened at its default resolution, or a still taken at full size: the frame is scaled to
    the size the geometry was calibrated at (its homography is in those px)."""
    frame = render(START, seed=33, cube=(4, "black"), dice=[(3, None), (5, None)])
    geometry = calibrate(frame.image)
    small = cv2.resize(frame.image, (960, 720), interpolation=cv2.INTER_AREA)  # 1280x960 at 3/4
    big = cv2.resize(frame.image, (1600, 1200), interpolation=cv2.INTER_LINEAR)
    want = read_frame(geometry, frame.image)
    for image in (small, big):
        pipe = Pipeline(geometry)
        obs = [pipe.feed(image) for _ in range(3)][-1]
        assert obs.status == "stable" and obs.checkers.points == START.points
        assert [d.value for d in obs.dice] == [d.value for d in want.dice] and obs.cube.value == 4


def test_a_frame_of_another_aspect_is_no_board_and_says_to_recalibrate_without_losing_the_pipeline():
    from vision.observe import FrameSizeError, at_calibrated_size

    frame = render(START, seed=33)
    geometry = calibrate(frame.image)
    wide = cv2.resize(frame.image, (1280, 720))  # 16:9 from a 4:3 calibration: another picture
    with pytest.raises(FrameSizeError, match="1280x720.*1280x960.*recalibrate"):
        at_calibrated_size(geometry, wide)
    pipe = Pipeline(geometry)
    obs = pipe.feed(wide)
    assert obs.status == "board-not-found" and obs.checkers is None and "recalibrate" in obs.messages[0]
    for _ in range(3):  # the right frames again: the gate starts afresh and holds
        obs = pipe.feed(frame.image)
    assert obs.status == "stable" and obs.checkers.points == START.points


def test_a_two_completed_to_a_four_is_centred_on_the_four_not_on_the_side_it_was_found_by():
    """A development frame (1280x720, noise sigma 3): two pips of a white four ran into their
    neighbours, so it was found as a two (one side) and completed to a four by its other side's
    pips; its centre was the side's, a quarter of a die off, and its checker slot showed a rim."""
    s, pos, frame, image = _noisy_720p(730281)
    obs = read_frame(calibrate(frame.image), image)
    assert obs.status == "settling", obs.messages
    assert obs.checkers.points == pos.points
    four = next(d for d in frame.dice if d.value == 4)
    seen = min(obs.dice, key=lambda o: np.hypot(o.centre[0] - four.centre[0], o.centre[1] - four.centre[1]))
    assert seen.value == 4 and np.hypot(seen.centre[0] - four.centre[0], seen.centre[1] - four.centre[1]) < 1.5
    x, y, w, h = seen.box
    assert abs(x + w / 2 - seen.centre[0]) <= 1 and 12 <= w <= 20  # the die's box, about a die (16 px) across


def test_a_dark_metal_rimmed_checker_under_a_die_is_read_by_its_top_clear_of_the_die_not_by_its_rim():
    """A development frame (1280x960): a red die lies on a black metal-rimmed checker alone on 21;
    the small disc on the far side of its top reached the bright rim, and it was read white (16
    white checkers: the frame held back). The top inside the rim, clear of the die, is black."""
    from benchmarks.bench_vision import scene

    s = scene(740010, 0.0)
    pos = s.pop("position")
    frame = render(pos, seed=740010, size=(1280, 960), **s)
    assert s["checkers"] == "metal" and pos.points[20] == -1
    obs = read_frame(calibrate(frame.image), frame.image)
    assert obs.status == "settling", obs.messages
    _assert_reads(frame, obs.checkers)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("per_row", range(1, 7))
def test_every_row_length_a_profile_accepts_places_fifteen_checkers_and_a_frame_is_read(tmp_path, capsys, per_row):
    """``checkers_per_row`` 1..6: layer k holds ``per_row - k`` checkers, at least one (with 4 or fewer
    to a row the last stand one on another), every slot on its point; ``tavli vision read`` returns."""
    from vision.profile import BoardProfile, layout

    lay = layout(BoardProfile(f"row{per_row}", checkers_per_row=per_row))
    for point in (1, 12, 13, 24):
        slots = [lay.checker_slot(point, k) for k in range(15)]
        layers = [layer for _, _, layer in slots]
        assert layers == sorted(layers) and layers[:per_row] == [0] * per_row
        assert all(layers.count(k) == max(per_row - k, 1) for k in range(max(layers)))
        p = lay.geometry.points[point - 1]
        assert all(p.x0 < x < p.x1 and min(p.base_y, lay.mid_y) < y < max(p.base_y, lay.mid_y) for x, y, _ in slots)
    image = tmp_path / "f.png"
    cv2.imwrite(str(image), render(START, seed=3, size=(480, 360)).image)
    (tmp_path / "board.toml").write_text(f"[board_profile.row{per_row}]\ncheckers_per_row = {per_row}\n")
    geometry = str(tmp_path / "g.json")
    assert (
        main(
            [
                "vision",
                "calibrate",
                str(image),
                "--corners",
                "5,5,475,5,475,355,5,355",
                "--profile",
                str(tmp_path / "board.toml"),
                "-o",
                geometry,
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["vision", "read", str(image), "--geometry", geometry]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "tavli-observation/1"
