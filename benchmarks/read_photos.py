"""One photo, no ritual: ``read_photo`` end to end on every labelled real board photo.

Usage: python benchmarks/read_photos.py [--cv build/checkers-cv] [--only NAME ...] [--white-at auto|bottom|top]
       [--turn 90|180|270] [--scale F] [--perturb [profile|found]]
       python benchmarks/read_photos.py --rendered N [--first-seed S]

Each board photo of ../shared/data/boards/backgammoncv labelled in
tests/data/boards/backgammoncv.json is read by :func:`vision.read_photo.read_photo` twice: with the
field found in the photo (no corners), and with the labelled field corners given (``--corners``);
a photo of a board with a measured profile (the WBF cameras: ``tournament``) a third time, as
``tavli vision read --geometry`` reads it calibrated at its corners with that profile and no palette.
Its readable points and its dice (values, in no order) are compared with the labels; a photo with an arm over the board is
right where its reading is held back (``occluded``). Without corners a photo does not tell which side
white sits on nor where its home is, so the reading counts under the best of the four ways the
board can be turned or mirrored (how often the row white sits at was told right is printed
apart); with corners the labels' own orientation counts. A photo whose
reading is held back (``occluded``, ``board-not-found``) or whose field is not found has none of
its points right.

With ``--cv`` the checker network of each photo is the one trained without its camera
(``make train-checkers-cv``), so no photo is read by a network that saw it; without it the shipped
network reads every photo (which trained on them all: an optimistic figure). Exits 0 without the data.

With ``--perturb`` the photos with a measured profile are read in that mode only, each also
changed as another camera or light would show it (:data:`PERTURBATIONS`: darker, brighter, a warm
or cool cast, more colour, light falling off across the picture or down it (a lamp over one row),
blur, JPEG at quality 25, sensor noise), and each change prints its points right, photos exact, dice right, the arms held back and
the hand-free photos held back: how far the reading holds off the light these photos were taken in.
``--perturb found`` does the same with every photo's field found (``--turn`` and ``--scale``
apply first).

With ``--turn DEGREES`` every photo is first turned that far clockwise, as a phone held another way
round takes it, and read with the field found only (the labelled corners are the upright photo's).
With ``--scale F`` every photo is first resized F times (0.1 to 4; area-averaged when shrunk), as a
camera of fewer or more px takes it, and read with the field found only; with ``--turn`` too, it is
turned after.

With ``--rendered N`` it reads N frames of the renderer instead (seeds from 740,000, which nothing was
tuned on), each on a board of its own (``benchmarks/bench_vision.py --profile random --colours random
--home random --stitch 0.5 --glare 0.5``: its proportions, colours, rows of five or six, white's
home, stitches and a lamp's glare), with no hand, with the field found and at its true corners, and
compares the points read with the frame's position: boards that no network and no threshold saw.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vision.learned_checkers as learned_checkers  # noqa: E402
from training.checkers_data import WBF_CORNERS, measured_profile  # noqa: E402
from vision.calibrate import CalibrationError, calibrate  # noqa: E402
from vision.find_board import BoardNotFoundError  # noqa: E402
from vision.images import load_image  # noqa: E402
from vision.observe import read_frame, reads_as_photo  # noqa: E402
from vision.read_photo import read_photo  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "boards" / "backgammoncv"
LABELS = ROOT / "tests" / "data" / "boards" / "backgammoncv.json"
CV = ROOT / "build" / "checkers-cv"


ROTATIONS = {
    90: lambda image: cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE),
    180: lambda image: cv2.rotate(image, cv2.ROTATE_180),
    270: lambda image: cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE),
}


def turns(points: list[int]) -> list[list[int]]:
    """The four readings of a board turned or mirrored (white's numbering): as read, home mirrored,
    turned half round, and both."""

    def mirror(p: list[int]) -> list[int]:
        return p[:12][::-1] + p[12:][::-1]

    def half(p: list[int]) -> list[int]:
        return p[12:] + p[:12]

    return [points, mirror(points), half(points), mirror(half(points))]


def right(read: list[int], truth: list[int | None]) -> int:
    """How many readable points of ``truth`` ``read`` has right (count and colour)."""
    return sum(1 for r, t in zip(read, truth) if t is not None and r == t)


MODES = ("found", "corners", "profile")


def _scaled(image: np.ndarray, gain, offset: float = 0.0) -> np.ndarray:
    return np.clip(image.astype(np.float32) * np.asarray(gain, np.float32) + offset, 0, 255).astype(np.uint8)


def _more_colour(image: np.ndarray) -> np.ndarray:
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).astype(np.float32)
    hsv[..., 1] = np.clip(hsv[..., 1] * 1.5, 0, 255)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)


PERTURBATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "as taken": lambda im: im,
    "darker (x0.55)": lambda im: _scaled(im, 0.55),
    "brighter (x1.35 +10)": lambda im: _scaled(im, 1.35, 10.0),
    "warm cast": lambda im: _scaled(im, (0.75, 0.95, 1.15)),
    "cool cast": lambda im: _scaled(im, (1.2, 1.0, 0.8)),
    "more colour (x1.5)": _more_colour,
    "light falling off": lambda im: _scaled(im, np.linspace(0.6, 1.2, im.shape[1])[None, :, None]),
    "lamp over the top": lambda im: _scaled(im, np.linspace(1.2, 0.5, im.shape[0])[:, None, None]),
    "lamp over the bottom": lambda im: _scaled(im, np.linspace(0.5, 1.2, im.shape[0])[:, None, None]),
    "blur (sigma 1.5 px)": lambda im: cv2.GaussianBlur(im, (0, 0), 1.5),
    "JPEG quality 25": lambda im: cv2.imdecode(cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 25])[1], 1),
    "noise (sigma 8)": lambda im: _scaled(im + np.random.default_rng(0).normal(0, 8, im.shape), 1.0),
}


@contextmanager
def held_out_net(cv: Path | None, camera: str) -> Iterator[None]:
    """Within it, the learned reader's network is the one trained without ``camera`` (``cv``'s
    ``checkers-without-CAMERA.onnx``), where there is one: none for a photo no network trained on."""
    shared = learned_checkers.shared_net
    path = None if cv is None else cv / f"checkers-without-{camera}.onnx"
    if path is not None and path.exists():
        learned_checkers.shared_net = lambda _p=learned_checkers.MODEL_PATH, _m=path: shared(_m)
    try:
        yield
    finally:
        learned_checkers.shared_net = shared


def read_one(
    path: Path,
    label: dict,
    mode: str,
    camera: str,
    white_at: str = "auto",
    change: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[str, list[int] | None, list[int]]:
    """The status of a photo's reading in ``mode``, its points (None where nothing was read) and its dice's
    values; ``change`` alters the photo first."""
    image = load_image(path)
    if change is not None:
        image = change(image)
    try:
        if mode == "profile":
            corners = WBF_CORNERS if camera == "wbf" else label["corners"]
            profile = measured_profile(camera)
            geometry = calibrate(image, corners=corners, field=True, profile=profile, home=label["home"])
            obs = read_frame(geometry, image, None, photo=reads_as_photo(geometry, None))
        else:
            corners = label["corners"] if mode == "corners" else None
            home = label["home"] if corners else "right"
            obs = read_photo(image, corners=corners, home=home, white_at=None if corners else white_at).observation
    except (BoardNotFoundError, CalibrationError) as exc:
        return f"not found ({str(exc)[:60]})", None, []
    if obs.checkers is None:
        return obs.status, None, []
    return obs.status, [int(v) for v in obs.checkers.points], sorted(d.value for d in obs.dice if d.value)


def photo_change(turn: int | None, scale: float | None) -> Callable[[np.ndarray], np.ndarray] | None:
    """What ``--turn`` and ``--scale`` do to each photo before it is read (resized, then turned), or None."""
    if turn is None and scale is None:
        return None

    def change(image: np.ndarray) -> np.ndarray:
        if scale is not None and scale != 1.0:
            h, w = image.shape[:2]
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        return ROTATIONS[turn](image) if turn else image

    return change


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cv", type=Path, default=None, help="the leave-one-camera-out networks (build/checkers-cv)")
    ap.add_argument("--only", nargs="*", default=None, help="photo stems to read")
    ap.add_argument("--white-at", choices=("auto", "bottom", "top"), default="auto", help="with the field found")
    ap.add_argument(
        "--perturb",
        nargs="?",
        const="profile",
        choices=("profile", "found"),
        default=None,
        help="under changed light and camera: the profile mode (the default) or the field found",
    )
    ap.add_argument(
        "--turn", type=int, choices=sorted(ROTATIONS), default=None, help="degrees clockwise; field found only"
    )
    ap.add_argument("--scale", type=float, default=None, help="resize every photo F times; field found only")
    ap.add_argument("--rendered", type=int, default=None, metavar="N", help="read N rendered boards instead")
    ap.add_argument("--first-seed", type=int, default=740_000, help="with --rendered: the first frame's seed")
    args = ap.parse_args(argv)
    if args.rendered is not None:
        if args.rendered < 1:
            ap.error(f"--rendered: {args.rendered}: expected a whole number of frames, 1 or more")
        return rendered(args.rendered, args.first_seed)
    if args.scale is not None and not 0.1 <= args.scale <= 4:
        ap.error(f"--scale: {args.scale}: expected a number from 0.1 to 4")
    if args.perturb == "profile" and (args.turn or args.scale):
        ap.error("--turn and --scale read with the field found: with --perturb, give --perturb found")
    if not DATA.is_dir():
        print(f"no photos at {DATA}: nothing to measure")
        return 0
    frames = json.loads(LABELS.read_text(encoding="utf-8"))["frames"]
    if args.perturb == "profile":
        return perturbed(frames, args.cv, args.only)
    modes = ("found",) if args.turn or args.scale else MODES
    change = photo_change(args.turn, args.scale)
    if args.perturb == "found":
        print("with the field found, each photo changed:")
        for name, perturbation in PERTURBATIONS.items():
            both = perturbation if change is None else (lambda im, _p=perturbation: _p(change(im)))
            tally = read_all(frames, args.cv, args.only, ("found",), args.white_at, both, show=False)
            print(f"  {name}:")
            summary(tally, ("found",), args.white_at, indent="    ")
        return 0
    summary(read_all(frames, args.cv, args.only, modes, args.white_at, change), modes, args.white_at)
    return 0


def rendered(frames: int, first_seed: int) -> int:
    """``frames`` rendered frames from ``first_seed``, each on a board of its own, read with the field found and
    at its true corners: a line a frame with the points read wrong, then the totals of each mode."""
    from benchmarks.bench_vision import any_board_frame

    totals = {m: [0, 0, 0] for m in ("found", "corners")}  # points right, photos exact, held back or not found
    for seed in range(first_seed, first_seed + frames):
        frame, corners, s, b = any_board_frame(seed)
        truth = list(s["position"].points)
        line = [f"{seed} {b['profile'].checkers_per_row} a row, home {b['home']}:"]
        for how in totals:
            t = totals[how]
            given = corners.tolist() if how == "corners" else None
            try:
                obs = read_photo(frame.image, corners=given, home=b["home"] if given else "right").observation
            except (BoardNotFoundError, CalibrationError) as exc:
                t[2] += 1
                line.append(f"{how} {str(exc)[:40]}")
                continue
            if obs.checkers is None:
                t[2] += 1
                line.append(f"{how} {obs.status}")
                continue
            read = [int(v) for v in obs.checkers.points]
            best = max(turns(read) if how == "found" else [read], key=lambda p: right(p, truth))
            got = right(best, truth)
            t[0] += got
            t[1] += got == 24
            if got < 24:
                line.append(f"{how} {[(i + 1, w, r) for i, (w, r) in enumerate(zip(truth, best)) if w != r]}")
        if len(line) > 1:
            print(" ".join(line), flush=True)
    for how, (got, exact, lost) in totals.items():
        print(
            f"{'with the field found' if how == 'found' else 'at the true corners'}: points right {got}/{24 * frames} "
            f"({got / (24 * frames):.1%}), frames read exactly {exact} of {frames}, held back or not found {lost}"
        )
    return 0


Tally = tuple[dict[str, list[int]], dict[str, list[int]], list[int], list[tuple[str, str, str]]]


def read_all(
    frames: dict[str, dict],
    cv: Path | None,
    only: list[str] | None,
    modes: tuple[str, ...],
    white_at: str,
    change: Callable[[np.ndarray], np.ndarray] | None,
    show: bool = True,
) -> Tally:
    """Every labelled board photo read in each of ``modes`` (changed by ``change`` first), a line a photo
    printed where ``show``; the totals per mode (points right, readable, photos exact, photos, exact with
    their dice, dice right), the arms held back per mode (held, all), white's row told right (right, all)
    and the hand-free photos held back or not found (stem, mode, status)."""
    totals = {m: [0] * 6 for m in MODES}
    held = {m: [0, 0] for m in MODES}
    way_round = [0, 0]
    lost: list[tuple[str, str, str]] = []
    for file, label in frames.items():
        stem = Path(file).stem
        if not label.get("board") or label.get("points") is None:
            continue
        if only and stem not in only:
            continue
        if not (DATA / file).exists():
            continue
        camera = label.get("camera") or stem
        truth = label["points"]
        readable = sum(1 for t in truth if t is not None)
        line = [f"{stem:10s}"]
        with held_out_net(cv, camera):
            for how in modes:
                if how != "found" and label.get("corners") is None:
                    line.append(f"{how}: no corners labelled")
                    continue
                if how == "profile" and measured_profile(camera) is None:
                    continue
                start = time.perf_counter()
                status, points, dice = read_one(DATA / file, label, how, camera, white_at, change)
                took = time.perf_counter() - start
                if label.get("occluded"):  # an arm over the board: right where held back
                    held[how][0] += status == "occluded"
                    held[how][1] += 1
                    line.append(f"{how}: {status:9s} (an arm over the board) ({took:.1f} s)")
                    continue
                if points is None:
                    lost.append((stem, how, status.split(" (")[0]))
                turned = turns(points) if points is not None and how == "found" else [points]
                got = 0 if points is None else max(right(p, truth) for p in turned)
                if points is not None and how == "found":  # white's row: as read or home-mirrored, not turned round
                    way_round[0] += max(right(p, truth) for p in turned[:2]) == got
                    way_round[1] += 1
                dice_right = points is not None and dice == sorted(label.get("dice") or [])
                t = totals[how]
                t[0] += got
                t[1] += readable
                t[2] += got == readable
                t[3] += 1
                t[4] += got == readable and dice_right
                t[5] += dice_right
                line.append(
                    f"{how}: {status:9s} {got:2d}/{readable} dice {dice}{'' if dice_right else ' (wrong)'} ({took:.1f} s)"
                )
        if show:
            print("  ".join(line), flush=True)
    return totals, held, way_round, lost


def summary(tally: Tally, modes: tuple[str, ...], white_at: str, indent: str = "") -> None:
    """The figures of :func:`read_all`'s tally, a line a mode."""
    totals, held, way_round, lost = tally
    for how, says in zip(
        MODES, ("with the field found", "with the labelled corners", "calibrated with the board's measured profile")
    ):
        if how not in modes:
            continue
        right_, readable, exact, photos, with_dice, _ = totals[how]
        share = 100.0 * right_ / readable if readable else 0.0
        print(
            f"{indent}{says}: points right {right_}/{readable} ({share:.1f}%), photos read exactly {exact} of {photos} "
            f"({with_dice} with their dice); "
            f"photos with an arm over the board held back {held[how][0]} of {held[how][1]}"
        )
    told = f"{way_round[0]} of {way_round[1]} photos"
    print(f"{indent}with the field found, white's row told right (--white-at {white_at}): {told}")
    named = ", ".join(f"{stem} ({how}: {status})" for stem, how, status in lost)
    print(f"{indent}hand-free photos held back or not found: {named or 'none'}", flush=True)


def perturbed(frames: dict[str, dict], cv: Path | None, only: list[str] | None) -> int:
    """``--perturb``: each photo with a measured profile read in the profile mode under each of :data:`PERTURBATIONS`."""
    print("calibrated with the board's measured profile, each photo changed:")
    for name, change in PERTURBATIONS.items():
        totals, held, _, lost = read_all(frames, cv, only, ("profile",), "auto", change, show=False)
        right_, readable, exact, photos, _, dice_right = totals["profile"]
        held_clear = ", ".join(stem for stem, _, _ in lost) or "none"
        print(
            f"  {name:22s} points right {right_}/{readable}, photos exact {exact} of {photos}, dice right on "
            f"{dice_right}; arms held back {held['profile'][0]} of {held['profile'][1]}; hand-free held back: "
            f"{held_clear}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
