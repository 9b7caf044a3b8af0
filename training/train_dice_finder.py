"""Train the dice finder, the learned dice reader's cheap first pass, and write its ONNX (``make train-dice``).

On a calibrated board the dice reader looks over the whole field for places worth reading closely; most
of a field holds no die. The finder is a small network that reads the field at
:data:`vision.learned_dice.FIND_PX` px a die and gives, every 8 px, a score that a die's centre lies
there (any face): its peaks are the windows :mod:`vision.learned_dice` then reads with the full network.
It is trained on the dice reader's data (``training/train_dice.py``: matteop65 Train, four fifths of
nell-byler/train, rendered frames, the board photos without dice) at that scale, give or take the
perspective and a die size a little off. Needs ``.[train]`` (torch); seeds fixed; a few minutes on a CPU.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

try:
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # pragma: no cover - the train extra is missing
    sys.exit("make train-dice needs torch: pip install -e '.[train]'")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.dice_data import DATA, die_side, yolo_folder  # noqa: E402
from training.train_dice import (  # noqa: E402
    Batches,
    Sample,
    _cbr,
    augment,
    export_onnx,
    focal_loss,
    network_input,
    parse_mix,
    start,
)
from vision import learned_dice  # noqa: E402

CROP = 128  # training crops are this square
STRIDE = learned_dice.FINDER_STRIDE
DIE_RANGE = (learned_dice.FIND_PX * 0.7, learned_dice.FIND_PX * 1.45)  # px: a die's side in the crops


class FinderNet(nn.Module):
    """Four halvings to 1/16 and back up to 1/8: one score per 8 px cell (sigmoid) that a die is centred there."""

    def __init__(self) -> None:
        super().__init__()
        self.s8 = nn.Sequential(_cbr(3, 12, 2), _cbr(12, 24, 2), _cbr(24, 32, 2), _cbr(32, 32))
        self.s16 = nn.Sequential(_cbr(32, 48, 2), _cbr(48, 48))
        self.l16 = nn.Conv2d(48, 32, 1)
        self.head = _cbr(32, 32)
        self.out = nn.Conv2d(32, 1, 1)
        nn.init.constant_(self.out.bias, -2.19)  # a prior of 0.1 that a cell holds a die

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.s8(x)
        b = self.s16(a)
        p = a + F.interpolate(self.l16(b), scale_factor=2.0, mode="nearest")
        return torch.sigmoid(self.out(self.head(p)))


def targets(dice: np.ndarray, crop: int = CROP) -> np.ndarray:
    """The heatmap (1 x C x C) of a crop's dice centres: a Gaussian a quarter of a die wide, 1 at the centre's cell."""
    n = crop // STRIDE
    heat = np.zeros((1, n, n), np.float32)
    yy, xx = np.mgrid[0:n, 0:n]
    for cx, cy, side, _value, _known in dice:
        gx, gy = cx / STRIDE - 0.5, cy / STRIDE - 0.5
        sigma = max(0.5, side / STRIDE / 4)
        g = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * sigma**2))
        ix, iy = min(n - 1, max(0, round(gx))), min(n - 1, max(0, round(gy)))
        g[iy, ix] = 1.0
        heat[0] = np.maximum(heat[0], g)
    return heat


def make_batch(
    pools: list[list[Sample]], shares: list[float], batch: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A batch of crops (B x CROP x CROP x 3, uint8) drawn from ``pools`` by ``shares``, and their heatmaps."""
    xs, hs = [], []
    for _ in range(batch):
        pool = pools[int(rng.choice(len(pools), p=shares))]
        img, dice = augment(pool[int(rng.integers(len(pool)))], rng, DIE_RANGE, CROP)
        xs.append(img)
        hs.append(targets(dice))
    return np.stack(xs), np.stack(hs)


def recall(
    finder: learned_dice.FinderNet, folder: Path, names: set[str] | None, min_score: float, whole_die_boxes: bool
) -> dict:
    """Each photo scaled so that its die (:func:`training.dice_data.die_side`) is FIND_PX across: the dice with a
    finder peak near enough for the window read about it to keep the die (``KEEP`` dice), and the peaks a photo."""
    dice = hit = peaks = images = 0
    for img, truth in yolo_folder(folder):
        if names is not None and img.name not in names:
            continue
        image = cv2.imread(str(img))
        side = die_side(truth, whole_die_boxes)
        if side is None:
            continue
        k = learned_dice.FIND_PX / side
        found = finder.peaks(learned_dice._padded(image, k, area=False), min_score)  # as a board is read
        for _v, cx, cy, _w, _h in truth:
            dice += 1
            hit += any(math.hypot(x / k - cx, y / k - cy) <= learned_dice.KEEP * side for x, y, _s in found)
        peaks += len(found)
        images += 1
    return {"images": images, "dice": dice, "hit": hit, "peaks": peaks}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=learned_dice.FINDER_PATH, help="ONNX file to write")
    ap.add_argument("--steps", type=int, default=4000, help="training steps of --batch crops")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--rendered", type=int, default=300, help="rendered frames in the training set")
    ap.add_argument(
        "--holdout-fold", type=int, choices=range(5), default=4, help="the fifth of nell-byler/train left out"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--mix",
        default="0.3,0.4,0.15,0.15",
        help="the shares among the crops of matteop65 Train, nell-byler/train, rendered frames and the "
        "board photos without dice",
    )
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: as many as cores)")
    ap.add_argument("--workers", type=int, default=0, help="processes that make the batches (0: all in this one)")
    ap.add_argument("--data", type=Path, default=DATA.parent, help="the data folder: dice/ and boards/backgammoncv/")
    args = ap.parse_args(argv)
    dice_data = args.data / "dice"
    if not dice_data.is_dir():
        print(f"--data: {str(dice_data)!r} does not exist", file=sys.stderr)
        return 2
    if args.steps < 40 or args.batch < 1 or args.workers < 0:
        print("--steps, --batch, --workers: expected at least 40 steps of one crop, 0 or more workers", file=sys.stderr)
        return 2
    mix = parse_mix(args.mix)
    if mix is None:
        print(f"--mix: {args.mix!r}: expected four shares such as 0.3,0.4,0.15,0.15", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)  # OpenCV's thread pool does not survive the fork into the batch workers
    started = start(args, mix)
    if started is None:
        return 2
    device, pools, shares, held = started
    model = FinderNet().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.05)
    model.train()
    batches = Batches(pools, shares, args.batch, args.seed, make_batch).tensors(args.workers, device == "cuda")
    t0 = time.time()
    for step, (x, heat) in zip(range(args.steps), batches):
        loss = focal_loss(model(network_input(x, device)), heat.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {loss.item():.3f}  {time.time() - t0:.0f} s", flush=True)

    model.eval().cpu()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    export_onnx(model, args.out, CROP, "centres")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB) after {time.time() - t0:.0f} s of training")
    finder = learned_dice.FinderNet(args.out)
    for name, folder, names, whole in (
        ("matteop65 Valid", dice_data / "matteop65" / "Valid", None, False),
        (f"nell-byler/train fold {args.holdout_fold}", dice_data / "nell-byler" / "train", held, True),
    ):
        for score in (0.1, learned_dice.FIND_SCORE, 0.5):
            r = recall(finder, folder, names, score, whole)
            print(
                f"{name:<26} score {score:.2f}: {r['hit']} of {r['dice']} dice found "
                f"({r['hit'] / max(1, r['dice']):.2%}), {r['peaks'] / max(1, r['images']):.1f} places a photo"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
