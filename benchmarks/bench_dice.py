"""Evaluation of the dice reader (not a test): real photos and rendered frames.

Run ``.venv/bin/python benchmarks/bench_dice.py`` (``--help`` for subsets).

``--reader verified|learned|classical`` picks the reader (default: the config's ``photo_reader``).

1. matteop65 Train and Valid (640x480 webcam photos of white dice on wood; YOLO
   labels, class k = face k + 1, the box around the top face's pips). The learned
   reader was trained on Train: for it, Valid is the figure.
2. nell-byler/train (multicolour dice seen from above; box = whole die), and ``held``:
   its fifth (fold 4 of 5) that the shipped learned model never saw, the learned
   reader's figure. Its ``test`` folder is held out and never read here.
3. Rendered frames (:mod:`vision.render`) from seeds not used for tuning (3000:3300 by
   default; tuning looked at 0:360, 1000:1300 and 2000:2300): dice of every colour, some cocked,
   checkers of every finish, the cube, some hands. Value accuracy is over flat dice (a
   flat die flagged cocked counts as wrong); cocked dice are scored on being flagged.

For each set it prints: dice found (a reading within half a box of the truth),
read correctly (value right among those found), found-and-read (the target
figure: correct readings over all dice), false positives per image, and images
per second. Rendered frames also report cocked dice flagged and flat dice
wrongly flagged. The data live in ``/work/shared/data/dice`` (or ``--data``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from training.checkers_data import LABELS  # noqa: E402
from training.dice_data import DATA, SHIPPED_HOLDOUT_FOLD, at_die_size, nell_fold, yolo_folder  # noqa: E402
from vision import learned_dice  # noqa: E402
from vision.config import default_config  # noqa: E402
from vision.dice import read_dice  # noqa: E402


@dataclass
class Score:
    images: int = 0
    dice: int = 0
    found: int = 0
    read: int = 0
    false_pos: int = 0
    cocked: int = 0  # rendered: cocked dice, those found, those found and flagged
    cocked_found: int = 0
    cocked_flagged: int = 0
    flat_flagged: int = 0
    seconds: float = 0.0
    misses: list = field(default_factory=list)

    def line(self, name: str) -> str:
        f = self.found / max(1, self.dice)
        r = self.read / max(1, self.found)
        fr = self.read / max(1, self.dice)
        text = (
            f"{name:<22} images {self.images:4d}  dice {self.dice:5d}  found {f:7.2%}  read {r:7.2%}  "
            f"found+read {fr:7.2%}  FP/image {self.false_pos / max(1, self.images):.3f}  "
            f"{self.images / max(1e-9, self.seconds):.1f} img/s"
        )
        if self.cocked:
            text = (
                f"{name:<22} images {self.images:4d}  flat dice {self.dice:5d}  found {f:7.2%}  value right {r:7.2%}  "
                f"found+right {fr:7.2%}  FP/image {self.false_pos / max(1, self.images):.3f}  "
                f"{self.images / max(1e-9, self.seconds):.1f} img/s\n{'':<22} cocked dice {self.cocked}: found "
                f"{self.cocked_found}, flagged cocked {self.cocked_flagged} ({self.cocked_flagged / self.cocked:.1%}); "
                f"flat dice wrongly flagged {self.flat_flagged}"
            )
        return text


def match(readings, truths, tol):
    """Greedy nearest matching: list of (truth index, reading index); tol(truth) is the radius in px."""
    pairs = []
    for ti, t in enumerate(truths):
        for ri, r in enumerate(readings):
            dd = float(np.hypot(r.centre[0] - t[0], r.centre[1] - t[1]))
            if dd <= tol(t):
                pairs.append((dd, ti, ri))
    pairs.sort()
    used_t, used_r, out = set(), set(), []
    for _, ti, ri in pairs:
        if ti not in used_t and ri not in used_r:
            used_t.add(ti)
            used_r.add(ri)
            out.append((ti, ri))
    return out


def eval_photos(
    folder: Path,
    limit: int | None = None,
    config=None,
    reader: str | None = None,
    names: set[str] | None = None,
    die_px: float | None = None,
) -> Score:
    """A photo set read by ``reader``: a label counts where a die's centre lies within half the
    label box's larger side (8 px at least) and its value agrees. With ``die_px`` each photo is
    first scaled so that its labelled die (:func:`training.dice_data.die_side`) is that many px
    across and read as a calibrated board's field is, at that known size."""
    config = config or default_config()
    s = Score()
    items = [(p, t) for p, t in yolo_folder(folder) if names is None or p.name in names][:limit]
    whole = "nell-byler" in folder.parts
    for path, truth in items:
        image = cv2.imread(str(path))
        k = 1.0
        if die_px is not None:
            scaled = at_die_size(image, truth, whole, die_px)
            if scaled is None:
                continue
            image, k = scaled
        t0 = time.perf_counter()
        readings = read_dice(config, image, reader=reader, die_px=die_px)
        s.seconds += time.perf_counter() - t0
        if k != 1.0:
            readings = [dataclasses.replace(r, centre=(r.centre[0] / k, r.centre[1] / k)) for r in readings]
        truths = [(cx, cy, v, max(w, h)) for v, cx, cy, w, h in truth]
        pairs = match(readings, truths, lambda t: max(8.0, 0.5 * t[3]))
        s.images += 1
        s.dice += len(truths)
        s.found += len(pairs)
        good = sum(readings[ri].value == truths[ti][2] for ti, ri in pairs)
        s.read += good
        s.false_pos += len(readings) - len(pairs)
        if good < len(truths) or len(readings) > len(pairs):
            s.misses.append(
                (
                    path.name,
                    [t[2] for t in truths],
                    [(r.value, round(r.centre[0]), round(r.centre[1])) for r in readings],
                )
            )
    return s


def render_case(seed: int):
    """The scene rendered for ``seed``: a position, 2-4 dice of random colours (some cocked), styles, cube, hand."""
    from board_rules import Position
    from vision.render import BOARD_STYLES, CHECKER_STYLES, DIE_COLOURS, DieSpec, render

    rng = np.random.default_rng([seed, 99])
    variant = ["backgammon", "portes", "plakoto", "fevga"][seed % 4]
    position = Position.start(variant)
    colours = sorted(DIE_COLOURS)
    n = int(rng.integers(2, 5))
    dice = [
        DieSpec(
            int(rng.integers(1, 7)), colour=colours[int(rng.integers(len(colours)))], cocked=bool(rng.random() < 0.15)
        )
        for _ in range(n)
    ]
    cube = (
        (int(2 ** rng.integers(0, 7)), ["centre", "white", "black"][int(rng.integers(3))])
        if rng.random() < 0.6
        else None
    )
    return render(
        position,
        dice=dice,
        cube=cube,
        seed=seed,
        style=sorted(BOARD_STYLES)[seed % 3],
        checkers=sorted(CHECKER_STYLES)[(seed // 3) % 3],
        hand=bool(rng.random() < 0.25),
    )


def eval_rendered(seeds, config=None, reader: str | None = None) -> Score:
    config = config or default_config()
    s = Score()
    for seed in seeds:
        frame = render_case(seed)
        t0 = time.perf_counter()
        readings = read_dice(config, frame.image, reader=reader)
        s.seconds += time.perf_counter() - t0
        truths = [(d.centre[0], d.centre[1], d.value, d.cocked) for d in frame.dice]
        if frame.hand is not None:  # dice under the hand are not expected
            inside = [
                cv2.pointPolygonTest(frame.hand.astype(np.float32), (float(t[0]), float(t[1])), True) > -8
                for t in truths
            ]
        else:
            inside = [False] * len(truths)
        pairs = match(readings, truths, lambda t: 12.0)
        matched_t = {ti for ti, _ in pairs}
        s.images += 1
        bad = False
        for ti, t in enumerate(truths):
            if inside[ti]:
                continue
            if t[3]:
                s.cocked += 1
            else:
                s.dice += 1  # dice, found and read count flat dice; cocked ones are counted apart
        for ti, ri in pairs:
            if inside[ti]:
                continue
            r, t = readings[ri], truths[ti]
            if t[3]:
                s.cocked_found += 1
                s.cocked_flagged += r.cocked
                bad |= not r.cocked
            else:
                s.found += 1
                s.flat_flagged += r.cocked
                s.read += (r.value == t[2]) and not r.cocked
                bad |= r.value != t[2] or r.cocked
        missed = [ti for ti in range(len(truths)) if ti not in matched_t and not inside[ti]]
        fp = len(readings) - len(pairs)
        s.false_pos += fp
        if bad or missed or fp:
            s.misses.append(
                (
                    seed,
                    [(t[2], t[3], round(t[0]), round(t[1])) for t in truths],
                    [(r.value, r.cocked, round(r.centre[0]), round(r.centre[1])) for r in readings],
                )
            )
    return s


def eval_board_photos(folder: Path, reader: str | None = None) -> Score:
    """The labelled board photos (``tests/data/boards``), each read whole as ``tavli vision dice`` reads it.

    Their labels give the dice's values, not where they lie: a photo's dice read right are the values
    its reading and its label share (as multisets), the rest of its reading false dice."""
    s = Score()
    for name, label in sorted(json.loads(LABELS.read_text())["frames"].items()):
        image = cv2.imread(str(folder / name))
        if image is None:
            continue
        want = Counter(label["dice"] + label["dice_elsewhere"])
        t0 = time.perf_counter()
        readings = read_dice(default_config(), image, reader=reader)
        s.seconds += time.perf_counter() - t0
        got = Counter(r.value for r in readings)
        right = sum((want & got).values())
        s.images += 1
        s.dice += sum(want.values())
        s.found += right
        s.read += right
        s.false_pos += len(readings) - right
        if right < sum(want.values()) or len(readings) > right:
            s.misses.append((name, sorted(want.elements()), sorted(got.elements())))
    return s


def cross_validated(photos, data: Path, folder: Path) -> Score:
    """nell-byler/train read fifth by fifth, fold ``k`` by ``folder/fold{k}.onnx`` and ``folder/faces{k}.onnx``
    (trained without it), pooled."""
    total = Score()
    for k in range(5):
        learned_dice.use_model(folder / f"fold{k}.onnx", folder / f"faces{k}.onnx")
        try:
            s = photos(data / "nell-byler" / "train", names=nell_fold(data, k)[1])
        finally:
            learned_dice.use_model()
        print(s.line(f"nell-byler/train f{k}"), flush=True)
        for f in dataclasses.fields(Score):
            setattr(total, f.name, getattr(total, f.name) + getattr(s, f.name))
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument(
        "--sets",
        default="train,valid,nell,held,render",
        help="comma list of train, valid, nell (all of nell-byler/train), held (its fifth the shipped model never "
        "saw), boards (the labelled board photos, whole: values only), render",
    )
    ap.add_argument(
        "--reader",
        choices=("verified", "learned", "classical"),
        default=None,
        help="dice reader (default: the config's photo_reader)",
    )
    ap.add_argument("--limit", type=int, default=None, help="images per photo set")
    ap.add_argument(
        "--seeds", default="3000:3300", help="rendered seeds a:b (tuning looked at 0:360, 1000:1300 and 2000:2300)"
    )
    ap.add_argument(
        "--die-px",
        type=float,
        default=None,
        help="read each photo scaled so that its die is this many px across, at that known size, as a calibrated "
        "board's field is read (a board camera's 720p frame shows dice about 16 px across)",
    )
    ap.add_argument(
        "--cv",
        type=Path,
        default=None,
        help="a folder of fold0.onnx..fold4.onnx and faces0.onnx..faces4.onnx (make train-dice-cv): the nell set is read fold by fold, each "
        "fifth by the network that never saw it (cross-validated)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="list the images with a mistake")
    args = ap.parse_args(argv)
    if args.cv is not None:
        missing = [
            str(args.cv / f"{kind}{k}.onnx")
            for k in range(5)
            for kind in ("fold", "faces")
            if not (args.cv / f"{kind}{k}.onnx").is_file()
        ]
        if missing:
            print(f"--cv: {missing[0]!r} does not exist (make train-dice-cv writes it)", file=sys.stderr)
            return 2
    if args.die_px is not None and not 8 <= args.die_px <= 200:
        print(f"--die-px: {args.die_px}: expected 8 to 200 px", file=sys.stderr)
        return 2
    sets = args.sets.split(",")
    results = []
    reader = args.reader
    photos = functools.partial(eval_photos, limit=args.limit, reader=reader, die_px=args.die_px)
    if "train" in sets:
        results.append(("matteop65/Train", photos(args.data / "matteop65" / "Train")))
    if "valid" in sets:
        results.append(("matteop65/Valid", photos(args.data / "matteop65" / "Valid")))
    if "nell" in sets and args.cv is not None:
        results.append(("nell-byler/train, cv", cross_validated(photos, args.data, args.cv)))
    elif "nell" in sets:
        results.append(("nell-byler/train", photos(args.data / "nell-byler" / "train")))
    if "held" in sets:
        _, held = nell_fold(args.data, SHIPPED_HOLDOUT_FOLD)
        results.append(
            (f"nell-byler/train f{SHIPPED_HOLDOUT_FOLD}", photos(args.data / "nell-byler" / "train", names=held))
        )
    if "boards" in sets:
        results.append(("board photos, whole", eval_board_photos(args.data.parent / "boards" / "backgammoncv", reader)))
    if "render" in sets:
        a, b = (int(v) for v in args.seeds.split(":"))
        results.append((f"rendered {a}:{b}", eval_rendered(range(a, b), reader=reader)))
    for name, s in results:
        print(s.line(name))
        if args.verbose:
            for m in s.misses:
                print("   ", m)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
