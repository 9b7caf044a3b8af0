"""The field finder (vision.find_board) on every photo of ../shared/data/boards/backgammoncv.

Usage: python benchmarks/find_board.py [IMAGE_DIR] [--save OUT_DIR]
       python benchmarks/find_board.py --rendered N [--first-seed S] [--any-board]

For each image this runs :func:`vision.find_board.find_field` without corners and prints whether a
field was found and, where the hand labels (tests/data/boards/backgammoncv.json) give the field's
corners, the mean distance in px between the corners found and the labelled ones (over the four
orders of the corners that keep the first two along a row: a photo does not tell which side
white sits on). Without that file, the WBF camera's corners of benchmarks/tournament_frames.py
are the labels of its frames. A board photo counts as found where a field was found and, where
labelled, its corners lie within ``max(10 px, 2% of the field's diagonal)`` of the labels; a photo
without a board counts as right where no field is found. It ends with "field found on N of M board
photos". With --save, each photo is written to OUT_DIR with the field found drawn on it (the
photos are GPL-3.0: for looking at, not for committing). The machine is shared and noisy, so the
time the finder took is also printed as a ratio to a reference timed in the same loop: a hundred Gaussian
blurs (sigma 2) of the photo shrunk to the finder's working size. Where a photo's corners are labelled,
the fit at those corners is timed too, against the same reference: each frame of a calibrated board
read as a photo (no palette with the board's edges) makes that fit.

With --rendered, it runs on N frames of the renderer instead (``benchmarks/bench_vision.py``'s
scenes: every board style, camera pose and light, no hand; seeds from 700,000, which nothing was
tuned on), each against the field's true corners with the same tolerance, and prints the frames
found per board style: how the finder does on boards it was not developed on. With --any-board each
frame is another board, as ``bench_vision.py --profile random --colours random --home random --stitch
0.5 --glare 0.5`` draws them (its proportions, colours, checkers, white's home, stitched points and a
lamp's reflection on half of the frames each), and the frames found are counted by stitches and glare.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.find_board import BoardNotFoundError, FieldConfig, FieldFit, _work_image, find_field  # noqa: E402
from vision.images import ImageError, load_image  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "boards" / "backgammoncv"
LABELS = ROOT / "tests" / "data" / "boards" / "backgammoncv.json"
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


def labels() -> dict[str, dict]:
    """Per image file name: ``board`` (bool or None when unknown) and ``corners`` (4x2 list or None)."""
    if LABELS.exists():
        frames = json.loads(LABELS.read_text(encoding="utf-8"))["frames"]
        return {
            name: {"board": f.get("board"), "corners": f.get("corners"), "kind": f.get("kind")}
            for name, f in frames.items()
        }
    from benchmarks.tournament_frames import CAMERAS  # the WBF camera's corners until the labels exist

    return {
        f"{name}.jpg": {"board": True, "corners": [list(c) for c in cam.corners], "kind": None}
        for cam in CAMERAS
        for name in cam.frames
    }


def corner_error(found: FieldFit, corners) -> float:
    """Mean px between the corners found and ``corners``, over the orders that keep the first two along a row."""
    a = np.array(found.corners, np.float64)
    b = np.array(corners, np.float64)
    return min(
        float(np.linalg.norm(a[list(order)] - b, axis=1).mean())
        for order in ((0, 1, 2, 3), (1, 0, 3, 2), (3, 2, 1, 0), (2, 3, 0, 1))
    )


def tolerance(corners) -> float:
    c = np.array(corners, np.float64)
    return max(10.0, 0.02 * float(np.linalg.norm(c[2] - c[0])))


def draw(image: np.ndarray, fit: FieldFit | None, label) -> np.ndarray:
    out = image.copy()
    if label is not None:
        cv2.polylines(out, [np.round(np.array(label)).astype(np.int32)], True, (0, 0, 255), 1, cv2.LINE_AA)
    if fit is not None:
        geometry = fit.geometry((image.shape[1], image.shape[0]))
        regions = geometry.regions()
        for poly in regions["points"].values():
            cv2.polylines(out, [np.round(np.array(poly)).astype(np.int32)], True, (0, 255, 255), 1, cv2.LINE_AA)
        cv2.polylines(out, [np.round(np.array(regions["bar"])).astype(np.int32)], True, (255, 0, 255), 1, cv2.LINE_AA)
        cv2.polylines(out, [np.round(np.array(fit.corners)).astype(np.int32)], True, (0, 255, 0), 2, cv2.LINE_AA)
    return out


def reference(config: FieldConfig, image: np.ndarray) -> float:
    """Seconds for the reference work: a hundred Gaussian blurs (sigma 2) of ``image`` at the finder's working size."""
    work, _ = _work_image(config, image)
    t0 = time.perf_counter()
    for _ in range(100):
        cv2.GaussianBlur(work, (0, 0), 2.0)
    return time.perf_counter() - t0


def rendered(frames: int, first_seed: int, any_board: bool = False) -> int:
    """The finder on ``frames`` rendered frames from ``first_seed``: found within tolerance, per board style
    (with ``any_board``, each frame its own board, counted by its stitches and glare)."""
    from benchmarks.bench_vision import any_board_frame

    by_style: dict[str, list[int]] = {}
    errors: list[float] = []
    for seed in range(first_seed, first_seed + frames):
        frame, corners, s, b = any_board_frame(seed, any_board)
        kind = (" and ".join(k for k in ("stitch", "glare") if k in b) or "plain") if any_board else str(s["style"])
        counts = by_style.setdefault(kind, [0, 0])
        counts[1] += 1
        try:
            err = corner_error(find_field(None, frame.image), corners)
        except BoardNotFoundError:
            print(f"{seed} {kind:8s} not found", flush=True)
            continue
        errors.append(err)
        ok = err <= tolerance(corners)
        counts[0] += ok
        print(f"{seed} {kind:8s} corner error {err:6.1f} px{'' if ok else ' (beyond tolerance)'}", flush=True)
    for style, (ok, n) in sorted(by_style.items()):
        print(f"{style:8s} field found on {ok} of {n} frames")
    total = sum(ok for ok, _ in by_style.values())
    median = f"{np.median(errors):.1f}" if errors else "-"
    print(
        f"field found on {total} of {frames} rendered frames ({total / max(frames, 1):.0%}); median error {median} px"
    )
    return 0


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    if "--rendered" in argv:
        try:
            frames = int(argv[argv.index("--rendered") + 1])
            first = int(argv[argv.index("--first-seed") + 1]) if "--first-seed" in argv else 700_000
        except (IndexError, ValueError):
            print("--rendered N [--first-seed S] [--any-board]: N and S are whole numbers", file=sys.stderr)
            return 2
        return rendered(frames, first, "--any-board" in argv)
    save = None
    if "--save" in argv:
        k = argv.index("--save")
        if k + 1 >= len(argv):
            print(__doc__, file=sys.stderr)
            return 2
        save = Path(argv[k + 1])
        argv = argv[:k] + argv[k + 2 :]
        save.mkdir(parents=True, exist_ok=True)
    folder = Path(argv[0]) if argv else DATA
    if not folder.is_dir():
        print(f"{folder} is absent: nothing to do", file=sys.stderr)
        return 0
    known = labels()
    config = FieldConfig()
    boards = found = others = right_others = 0
    errors: list[float] = []
    total_s = reference_s = given_s = given_ref_s = 0.0
    for path in sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES):
        label = known.get(path.name, {})
        is_board = label.get("board")
        try:
            image = load_image(path)
        except ImageError as exc:
            print(f"{path.name:14s} unreadable: {exc}")
            continue
        t0 = time.perf_counter()
        try:
            fit: FieldFit | None = find_field(config, image)
            why = ""
        except BoardNotFoundError as exc:
            fit, why = None, str(exc)
        seconds = time.perf_counter() - t0
        total_s += seconds
        ref = reference(config, image)
        reference_s += ref
        corners = label.get("corners")
        if corners is not None:  # the fit at known corners, as each frame of a board read as a photo makes it
            t0 = time.perf_counter()
            find_field(config, image, corners)
            given_s += time.perf_counter() - t0
            given_ref_s += ref
        line = f"{path.name:14s} {str(label.get('kind') or ''):18s} "
        if fit is None:
            line += f"not found ({why.split(':', 1)[-1].strip()[:60]})"
            ok = False
        else:
            line += f"found (score {fit.score:.2f})"
            ok = True
            if corners is not None:
                err = corner_error(fit, corners)
                errors.append(err)
                ok = err <= tolerance(corners)
                line += f", corner error {err:6.1f} px{'' if ok else ' (beyond ' + format(tolerance(corners), '.0f') + ' px)'}"
        if is_board is False:
            others += 1
            right_others += fit is None
            line += "  [no board: " + ("right]" if fit is None else "WRONG]")
        else:
            boards += 1
            found += ok
        print(line + f"  {seconds:.1f} s", flush=True)
        if save is not None:
            cv2.imwrite(str(save / f"{path.stem}.jpg"), draw(image, fit, corners))
    print(
        f"field found on {found} of {boards} board photos ({found / max(boards, 1):.0%}); "
        f"no field found on {right_others} of {others} photos without a board"
    )
    if errors:
        print(
            f"corner error over {len(errors)} labelled fields found: median {np.median(errors):.1f} px, "
            f"mean {np.mean(errors):.1f} px, max {max(errors):.1f} px"
        )
    print(f"the finder took {total_s:.1f} s in all, {total_s / max(reference_s, 1e-9):.0f} times the reference")
    if given_ref_s:
        print(
            f"the fit at the labelled corners took {given_s:.1f} s in all, "
            f"{given_s / given_ref_s:.2f} times the reference"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
