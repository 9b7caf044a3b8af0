"""Accuracy of the camera pipeline on rendered frames whose seeds no tuning used.

Usage: python benchmarks/bench_vision.py [--frames 500] [--first-seed 500000] [--hands 0.2] [--reader classical]
       [--profile NAME|FILE.toml[:NAME]|random] [--home right|left|random] [--stitch 0.5] [--glare 0.5]
       [--colours random] [--photo | --learn]

Each frame is a random position (backgammon with hits and bear-offs, plakoto,
fevga and long nardy with stacks to 15), a random board style and checker
finish, two dice of random colours (some cocked), the cube half of the time,
and a hand over the board in a fifth of the frames. The camera is calibrated
from the frame's markers. Prints: per-point count error rate, whole-position
exact rate over unoccluded frames, dice value accuracy, cocked-die detection,
cube accuracy, occluded frames wrongly passed as readable (which the gate would
call stable once they held), clear frames wrongly called occluded, and the time
per frame with its ratio to a reference (warping the frame to the top-down view, no maps kept) in the same run.

``--profile`` draws another board (a profile of vision.toml, a maker's profile file, or
``random``: each frame its own board of plausible proportions, ``vision.render.random_profile``),
calibrated with that profile as its owner would; any board but the renderer's own is read as a
real board is (the learned checker reader, the hand test, the dice verified). ``--home`` puts
white's home on the left, ``--stitch`` stitches the points' sides on a share of the frames (a
leather board) and ``--glare`` lays a lamp's reflection over a share of them. ``--colours random``
paints each board and its checkers in colours of their own (``vision.render_draw.random_styles``:
any field, points, frame and grain, a light and a darker set of checkers), as boards never seen are.
``--photo`` reads each frame as ``tavli vision read`` reads a photo of a real board with no palette;
``--learn`` with the palette ``tavli vision learn`` learns from the start set up on the same board
under the same camera and light, as a player sets up a camera over a board.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import astuple, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from board_rules import Position, find_variant  # noqa: E402
from tests.positions import random_backgammon, random_plakoto, random_same_direction  # noqa: E402
from vision.calibrate import CalibrationError, calibrate  # noqa: E402
from vision.checkers import learn_palette  # noqa: E402
from vision.cli import _profile_arg  # noqa: E402
from vision.learned_checkers import READERS, checker_reader  # noqa: E402
from vision.observe import read_frame, reads_as_photo  # noqa: E402
from vision.profile import ProfileError, layout  # noqa: E402
from vision.rectify import warp  # noqa: E402
from vision.render import BOARD_STYLES, CHECKER_STYLES, DIE_COLOURS, DieSpec, random_profile, render  # noqa: E402
from vision.render_draw import random_styles  # noqa: E402

START = Position.start("backgammon")


def scene(seed: int, hand_share: float):
    rng = random.Random(seed)
    kind = rng.random()
    if kind < 0.5:
        pos = random_backgammon(rng)
    elif kind < 0.7:
        pos = random_plakoto(rng)
    else:
        pos = random_same_direction(rng, find_variant(rng.choice(["fevga", "long-nardy", "gul-bara"])))
    dice = [
        DieSpec(rng.randint(1, 6), colour=rng.choice(sorted(DIE_COLOURS)), cocked=rng.random() < 0.1) for _ in range(2)
    ]
    # an undoubled cube (64 up) lies in the centre; a doubled one on its owner's side
    cube = None
    if rng.random() < 0.5:
        value = rng.choice([1, 2, 4, 8, 16, 32, 64])
        cube = (value, "centre" if value == 1 else rng.choice(["white", "black"]))
    return dict(
        position=pos,
        dice=dice,
        cube=cube,
        style=rng.choice(sorted(BOARD_STYLES)),
        checkers=rng.choice(sorted(CHECKER_STYLES)),
        hand=rng.random() < hand_share,
    )


def _name(style) -> str:
    """A style's name; a random one's colours too."""
    return style if isinstance(style, str) else f"{style.name} {astuple(style)[1:]}"


def board(seed: int, args, profile=None) -> dict:
    """The board of frame ``seed`` under ``--profile`` (``profile``: that profile, read once; None for
    ``random``), ``--home``, ``--stitch`` and ``--glare`` (drawn from their own stream, so the scene
    of each seed stays what it is without them)."""
    rng = random.Random(seed * 7 + 1)
    out = {}
    if args.profile is not None:
        out["profile"] = random_profile(seed) if args.profile == "random" else profile
    if args.home is not None:
        out["home"] = rng.choice(["right", "left"]) if args.home == "random" else args.home
    if rng.random() < args.stitch:
        out["stitch"] = rng.choice([(235, 235, 235), (90, 200, 230), (25, 25, 25)])
    if rng.random() < args.glare:
        out["glare"] = rng.uniform(0.3, 0.7)
    if args.colours == "random":
        out["style"], out["checkers"] = random_styles(np.random.default_rng([seed, 13]))
    return out


ANY_BOARD = argparse.Namespace(profile="random", home="random", stitch=0.5, glare=0.5, colours="random")


def any_board_frame(seed: int, any_board: bool = True):
    """Frame ``seed`` of the renderer with no hand, 1280x960: the scene (:func:`scene`), with ``any_board``
    on a board of its own as ``--profile random --colours random --home random --stitch 0.5 --glare 0.5``
    draws it (:func:`board`), else on the renderer's board. Returns the frame, the field's corners in the
    frame's px (top-left, top-right, bottom-right, bottom-left in board mm), the scene and the board."""
    s = scene(seed, False)
    b = board(seed, ANY_BOARD) if any_board else {}
    s.update({k: b.pop(k) for k in ("style", "checkers") if k in b})
    kept = dict(s)
    frame = render(s.pop("position"), seed=seed, size=(1280, 960), **s, **b)
    fx0, fy0, fx1, fy1 = layout(b.get("profile", "rendered"), home=b.get("home", "right")).field
    p = np.array([[fx0, fy0, 1.0], [fx1, fy0, 1.0], [fx1, fy1, 1.0], [fx0, fy1, 1.0]]) @ frame.homography.T
    return frame, p[:, :2] / p[:, 2:], kept, b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=500)
    ap.add_argument("--first-seed", type=int, default=500000)
    ap.add_argument("--hands", type=float, default=0.2, help="share of frames with a hand over the board")
    ap.add_argument(
        "--size", default="1280x960", help="frame size WxH (the renderer's default; 1280x720 gives dice of about 16 px)"
    )
    ap.add_argument(
        "--sensor-noise",
        type=float,
        default=0.0,
        help="Gaussian noise (sigma, grey levels) added to each frame, as a camera's sensor adds",
    )
    ap.add_argument(
        "--relief",
        action="store_true",
        help="draw the checkers standing on the field (tops lifted towards the camera, sides showing), as real ones",
    )
    ap.add_argument(
        "--read-relief",
        action="store_true",
        help="read with the geometry's relief on: the checkers' tops looked for where the camera sees them standing up",
    )
    ap.add_argument(
        "--reader",
        choices=READERS,
        default=None,
        help="the checker reader of the points (default: vision.toml's [learned_checkers] reader)",
    )
    ap.add_argument(
        "--profile", default=None, help="the board: a profile's name, FILE.toml[:NAME], or random (each frame its own)"
    )
    ap.add_argument("--home", choices=["right", "left", "random"], default=None, help="white's home side")
    ap.add_argument("--stitch", type=float, default=0.0, help="share of frames whose points are stitched")
    ap.add_argument("--glare", type=float, default=0.0, help="share of frames with a lamp's reflection")
    ap.add_argument(
        "--colours",
        choices=["styles", "random"],
        default="styles",
        help="the boards' and checkers' colours: the renderer's styles, or random ones for each frame",
    )
    ap.add_argument(
        "--photo",
        action="store_true",
        help="read each frame as `tavli vision read` reads one photo of a real board with no palette "
        "(the board's edges from the photo's colours; the bar and trays told by the rules)",
    )
    ap.add_argument(
        "--learn",
        action="store_true",
        help="read each frame with the palette `tavli vision learn` learns from the start position on the same "
        "board, camera and light (a player's set-up once the camera is calibrated)",
    )
    args = ap.parse_args()
    if args.learn and args.photo:
        ap.error("--learn and --photo: a photo is read without a palette; give one of them")
    try:  # a name or a profile file, read once
        profile = None if args.profile in (None, "random") else layout(_profile_arg(args.profile)).profile
    except CalibrationError as exc:  # a profile file: its message names --profile
        ap.error(str(exc))
    except ProfileError as exc:
        ap.error(f"--profile: {exc}")
    size = tuple(int(v) for v in args.size.lower().split("x"))
    noise_rng = np.random.default_rng(args.first_seed)

    n_clear = n_hand = 0
    point_errors = point_total = exact = bar_off_errors = 0
    dice_flat = dice_ok = dice_cocked = cocked_flagged = cocked_valued = flat_flagged = dice_false = 0
    cubes = cube_ok = cube_false = 0
    hand_passed = clear_occluded = not_calibrated = 0
    t_read = t_ref = 0.0
    failures = []
    for seed in range(args.first_seed, args.first_seed + args.frames):
        s = scene(seed, args.hands)
        pos = s.pop("position")
        b = board(seed, args, profile)
        s.update({k: b.pop(k) for k in ("style", "checkers") if k in b})
        frame = render(pos, seed=seed, size=size, relief=args.relief, **s, **b)
        if args.sensor_noise > 0:
            img = frame.image.astype(np.int16) + noise_rng.normal(0, args.sensor_noise, frame.image.shape).astype(
                np.int16
            )
            frame = replace(frame, image=np.clip(img, 0, 255).astype(np.uint8))
        mine = {k: b[k] for k in ("profile", "home") if k in b}
        try:
            geometry = calibrate(frame.image, **mine) if not s["hand"] else None
        except CalibrationError:  # a lamp's glare over a marker: a fixed camera is calibrated once, in good light
            geometry = None
        if geometry is None:  # from the same scene with no hand or glare over it
            clean = {k: v for k, v in b.items() if k != "glare"}
            still = render(
                pos, seed=seed, size=size, style=s["style"], checkers=s["checkers"], relief=args.relief, **clean
            )
            try:
                geometry = calibrate(still.image, **mine)
            except CalibrationError as exc:
                not_calibrated += 1
                failures.append((seed, f"not calibrated: {exc}"))
                continue
        if args.read_relief:
            geometry = replace(geometry, relief=True)
        palette = None
        if args.learn:  # the start set up on the same board, under the same camera and light, no dice
            start = render(
                START, seed=seed, size=size, style=s["style"], checkers=s["checkers"], relief=args.relief, **b
            )
            palette = learn_palette(geometry, start.image, START)
        t0 = time.perf_counter()
        obs = read_frame(
            geometry, frame.image, palette, reader=args.reader, photo=args.photo and reads_as_photo(geometry, None)
        )
        t1 = time.perf_counter()
        warp(geometry, frame.image, 2.0)
        t2 = time.perf_counter()
        t_read += t1 - t0
        t_ref += t2 - t1
        if s["hand"]:
            n_hand += 1
            if obs.status not in ("occluded", "board-not-found"):
                hand_passed += 1
                failures.append((seed, "hand frame passed as readable"))
            continue
        n_clear += 1
        if obs.status != "settling":
            clear_occluded += 1
            failures.append((seed, f"clear frame called {obs.status}: {obs.messages}"))
            continue
        c = obs.checkers
        wrong = [(i + 1, pos.points[i], c.points[i]) for i in range(24) if c.points[i] != pos.points[i]]
        point_errors += len(wrong)
        point_total += 24
        bo = (c.bar != tuple(pos.bar)) + (c.off != tuple(pos.off))
        bar_off_errors += bo
        if not wrong and not bo:
            exact += 1
        else:
            failures.append(
                (
                    seed,
                    f"points {wrong} bar {pos.bar}->{c.bar} off {pos.off}->{c.off} ({_name(s['style'])}, {_name(s['checkers'])}"
                    + "".join(f", {k}" for k in b)
                    + ")",
                )
            )
        # dice: match each true die to the nearest reading within half a die
        seen = list(obs.dice)
        for d in frame.dice:
            near = min(
                seen, key=lambda o: (o.centre[0] - d.centre[0]) ** 2 + (o.centre[1] - d.centre[1]) ** 2, default=None
            )
            hit = (
                near is not None
                and ((near.centre[0] - d.centre[0]) ** 2 + (near.centre[1] - d.centre[1]) ** 2) ** 0.5 < 20
            )
            if hit:
                seen.remove(near)
            if d.cocked:
                dice_cocked += 1
                cocked_flagged += hit and near.cocked
                cocked_valued += hit and not near.cocked  # read as a value: the referee would take it
            else:
                dice_flat += 1
                ok = hit and not near.cocked and near.value == d.value
                dice_ok += ok
                flat_flagged += hit and near.cocked
                if not ok:
                    failures.append((seed, f"die {d.value} read as {None if not hit else (near.value, near.cocked)}"))
        dice_false += len(seen)
        if frame.cube is not None:
            cubes += 1
            good = obs.cube is not None and obs.cube.where == frame.cube.where and obs.cube.value == frame.cube.value
            cube_ok += good
            if not good:
                failures.append(
                    (seed, f"cube {frame.cube.value} {frame.cube.where} read as {obs.cube and obs.cube.to_dict()}")
                )
        elif obs.cube is not None:
            cube_false += 1
    frames = n_clear + n_hand
    boards = f"; board {args.profile}" if args.profile else ""
    boards += f", home {args.home}" if args.home else ""
    boards += f", stitched {args.stitch:g}, glare {args.glare:g}" if args.stitch or args.glare else ""
    boards += ", random colours" if args.colours == "random" else ""
    print(
        f"checker reader: {args.reader or checker_reader(rendered=args.profile is None)}{boards}; "
        f"frames: {frames} {size[0]}x{size[1]}, sensor noise {args.sensor_noise:g} ({n_clear} clear, {n_hand} with a hand), seeds {args.first_seed}..{args.first_seed + args.frames - 1}"
    )
    print(
        f"per-point count error rate: {point_errors}/{point_total} = {point_errors / max(1, point_total):.3%} (target <= 0.2%)"
    )
    print(f"bar and tray errors: {bar_off_errors} of {2 * n_clear} readings")
    print(
        f"whole position exact (unoccluded frames): {exact}/{n_clear} = {exact / max(1, n_clear):.1%} (target >= 97%)"
    )
    print(
        f"dice values (flat dice): {dice_ok}/{dice_flat} = {dice_ok / max(1, dice_flat):.2%} (target >= 99.5%); "
        f"flat dice called cocked: {flat_flagged}; false dice: {dice_false}"
    )
    print(
        f"cocked dice flagged: {cocked_flagged}/{dice_cocked} = {cocked_flagged / max(1, dice_cocked):.1%}; "
        f"read as a value: {cocked_valued}; not seen as a die: {dice_cocked - cocked_flagged - cocked_valued}"
    )
    print(
        f"cube place and value: {cube_ok}/{cubes} = {cube_ok / max(1, cubes):.1%}; cube seen where there is none: {cube_false}"
    )
    print(f"occluded frames passed as readable (would become stable): {hand_passed}/{n_hand} (target 0)")
    print(f"clear frames called occluded or board-not-found: {clear_occluded}/{n_clear}")
    if not_calibrated:
        print(f"frames not calibrated (markers not found, even with no hand or glare): {not_calibrated}")
    print(
        f"read_frame: {1000 * t_read / max(1, frames):.0f} ms a frame; ratio to the reference: {t_read / max(t_ref, 1e-9):.1f}"
    )
    if failures:
        print(f"first failures ({len(failures)} in all):")
        for f in failures[:25]:
            print("  ", *f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
