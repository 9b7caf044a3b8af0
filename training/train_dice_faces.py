"""Train the dice face classifier, the learned dice reader's second look at a die, and write its ONNX.

The dice network (``training/train_dice.py``) finds nell-byler's multicolour dice well but reads some
faces wrong, most of them weak (scores 0.35-0.6: dark dice with red pips, blue on blue). The face
classifier looks again at one die at a time, cut out square and upright at
:data:`vision.learned_dice.FACE_PX` px, :data:`vision.learned_dice.FACE_CROP` dice across, and says
which face is up, or that no die is there. It learns from the labelled dice of matteop65 Train and
four fifths of nell-byler/train (``--holdout-fold``; never ``nell-byler/test``), each crop turned,
mirrored, moved, scaled and recoloured at random (channels swapped, so a die's colours are not
learned), and, as "none", from crops of the same photos away from every die and of the places
where the shipped dice network reads a die that no label has (there and on the board photos
labelled with no dice, which the dice network trained on as negatives too).
Needs ``.[train]`` (torch); seeds fixed; one CPU, about 20 minutes with two threads
(``make train-dice-faces``).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import cv2
import numpy as np

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - the train extra is missing
    sys.exit("make train-dice-faces needs torch: pip install -e '.[train]'")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.dice_data import DATA, die_side, nell_fold, yolo_folder  # noqa: E402
from training.train_dice import negative_samples  # noqa: E402
from vision import learned_dice  # noqa: E402

MEASURED_SIDE = 0.92
"""The dice network measures a die at about this share of its label's side (the median over matteop65
Valid and nell-byler fold 4's dice): training crops are cut as the reader cuts them from its measure."""

NONE = 6  # the class of a crop with no die centred in it
NELL_WEIGHT = 3.0  # a nell-byler die is drawn this many times as often as a matteop65 one (the hard dice)
NEGATIVES = 0.15  # the share of crops with no die...
MINED = 0.5  # ...and of those, the share cut where the dice network reads a die and no label has one


class FaceNet(nn.Module):
    """Three stages of two 3x3 convolutions and a halving (24, 48, 96 channels), one of 128, averaged:
    seven logits, the faces 1-6 and none."""

    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for co in (24, 48, 96):
            layers += [*_cbr(cin, co), *_cbr(co, co), nn.MaxPool2d(2)]
            cin = co
        layers += [*_cbr(cin, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 7)]
        self.f = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.f(x)


def _cbr(i: int, o: int) -> list[nn.Module]:
    return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]


Photo = tuple[np.ndarray, list[tuple[int, float, float]], float]
"""A photo, its dice ``(value, x, y)`` and their side as the dice network would measure it, in px."""


def load_photos(folder: Path, whole_die_boxes: bool, names: set[str] | None = None) -> list[Photo]:
    photos = []
    for path, truth in yolo_folder(folder):
        side = die_side(truth, whole_die_boxes)
        if (names is not None and path.name not in names) or side is None:
            continue
        image = cv2.imread(str(path))
        photos.append((image, [(v, cx, cy) for v, cx, cy, _w, _h in truth], side * MEASURED_SIDE))
    return photos


def sample(photo: Photo, x: float, y: float, rng: random.Random) -> np.ndarray:
    """A crop about (x, y) as the reader cuts one, turned, mirrored, moved, scaled and recoloured at random."""
    image, _dice, side = photo
    side *= math.exp(rng.uniform(-0.3, 0.3))
    x += rng.uniform(-0.12, 0.12) * side
    y += rng.uniform(-0.12, 0.12) * side
    crop = learned_dice.face_crop(image, x, y, side, turn=rng.uniform(0, 360))
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
    img = crop.astype(np.float32)
    if rng.random() < 0.5:
        img = img[:, :, rng.sample([0, 1, 2], 3)]
    if rng.random() < 0.2:
        img = np.repeat(img.mean(axis=2, keepdims=True), 3, axis=2)
    img = img * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    img = img * np.array([rng.uniform(0.8, 1.2) for _ in range(3)], np.float32)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.2))
    noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(0, 8), img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def mined(photos: list[Photo]) -> list[tuple[int, float, float, float]]:
    """``(photo, x, y, side)`` of each die the dice network reads in a photo (as the reader does, down to
    :data:`vision.learned_dice.MIN_SCORE`, before the second look) more than half a die from every label:
    the places the classifier must call none (the board photos' checkers, clocks and score cards, a
    speck on a tray). A photo without labels has its crops cut at the network's measure of the die."""
    out = []
    for i, (image, dice, side) in enumerate(photos):
        for f in learned_dice.find_dice(image, min_score=learned_dice.MIN_SCORE, second_look=False):
            if all(math.hypot(f.centre[0] - x, f.centre[1] - y) > 0.5 * side for _v, x, y in dice):
                out.append((i, f.centre[0], f.centre[1], side if dice else f.side))
    return out


def away_from_dice(photo: Photo, rng: random.Random) -> tuple[float, float] | None:
    """A place of the photo more than 1.3 dice from every die, or None where none was drawn."""
    image, dice, side = photo
    h, w = image.shape[:2]
    for _ in range(20):
        x, y = rng.uniform(side, w - side), rng.uniform(side, h - side)
        if all(math.hypot(x - cx, y - cy) > 1.3 * side for _v, cx, cy in dice):
            return x, y
    return None


def to_tensor(crops: list[np.ndarray]) -> torch.Tensor:
    """BGR uint8 crops as the network's input, as :meth:`vision.learned_dice.FaceNet.scores` gives them."""
    return torch.from_numpy(np.stack(crops).astype(np.float32).transpose(0, 3, 1, 2) / 255.0 - 0.5)


def accuracy(model: FaceNet, photos: list[Photo]) -> float:
    """The share of the labelled dice whose face the model reads, each cut at its label as is."""
    crops = [learned_dice.face_crop(im, cx, cy, side) for im, dice, side in photos for _v, cx, cy in dice]
    truth = np.array([v - 1 for _im, dice, _s in photos for v, _x, _y in dice])
    model.eval()
    with torch.no_grad():
        read = np.concatenate(
            [model(to_tensor(crops[i : i + 256])).argmax(1).numpy() for i in range(0, len(crops), 256)]
        )
    model.train()
    return float((read == truth).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=learned_dice.FACES_PATH, help="ONNX file to write")
    ap.add_argument("--epochs", type=int, default=24, help="epochs of --epoch-crops crops")
    ap.add_argument("--epoch-crops", type=int, default=12000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument(
        "--holdout-fold", type=int, choices=range(5), default=4, help="the fifth of nell-byler/train left out"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--data", type=Path, default=DATA, help="the dice data folder (matteop65/, nell-byler/)")
    ap.add_argument(
        "--dice-model",
        type=Path,
        default=learned_dice.MODEL_PATH,
        help="the dice network whose false dice are mined as negatives (the fold's own in a cross-validation)",
    )
    ap.add_argument(
        "--boards",
        type=Path,
        default=DATA.parent / "boards" / "backgammoncv",
        help="the board photos, of which those labelled with no dice are negatives",
    )
    args = ap.parse_args(argv)
    if not (args.data / "matteop65" / "Train").is_dir() or not (args.data / "nell-byler" / "train").is_dir():
        print(f"--data: {str(args.data)!r} holds no matteop65/Train or nell-byler/train", file=sys.stderr)
        return 2
    if args.epochs < 1 or args.epoch_crops < args.batch or args.batch < 1 or args.threads < 1:
        print("--epochs, --batch, --threads: at least 1; --epoch-crops: at least a batch", file=sys.stderr)
        return 2
    try:
        learned_dice.use_model(args.dice_model)
    except learned_dice.DiceModelError as e:
        print(f"--dice-model: {e}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    draw = np.random.default_rng(args.seed)
    trained, held = nell_fold(args.data, args.holdout_fold)
    matteop = load_photos(args.data / "matteop65" / "Train", False)
    photos = matteop + load_photos(args.data / "nell-byler" / "train", True, trained)
    valid = load_photos(args.data / "matteop65" / "Valid", False)
    held_out = load_photos(args.data / "nell-byler" / "train", True, held)
    photos += [(b.image, [], b.die_px or 0.0) for b in negative_samples(args.boards)]
    t0 = time.time()
    hard = mined(photos)
    print(f"{len(hard)} places the dice network reads a die on and no label has one ({time.time() - t0:.0f} s)")
    dice = [(i, v, x, y) for i, (_im, ds, _s) in enumerate(photos) for v, x, y in ds]
    weights = np.array([NELL_WEIGHT if i >= len(matteop) else 1.0 for i, *_ in dice])
    weights /= weights.sum()
    model = FaceNet()
    steps = args.epochs * (args.epoch_crops // args.batch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps)
    print(f"{len(photos)} photos, {len(dice)} dice; {steps} steps of {args.batch}", flush=True)
    t0 = time.time()
    for epoch in range(args.epochs):
        total = 0.0
        for _ in range(args.epoch_crops // args.batch):
            crops, classes = [], []
            while len(crops) < args.batch:
                if rng.random() < NEGATIVES:
                    if hard and rng.random() < MINED:
                        i, x, y, side = hard[rng.randrange(len(hard))]
                        crops.append(sample((photos[i][0], [], side), x, y, rng))
                        classes.append(NONE)
                        continue
                    photo = photos[rng.randrange(len(photos))]
                    at = away_from_dice(photo, rng)
                    if at is not None:
                        crops.append(sample(photo, *at, rng))
                        classes.append(NONE)
                    continue
                i, v, x, y = dice[draw.choice(len(dice), p=weights)]
                crops.append(sample(photos[i], x, y, rng))
                classes.append(v - 1)
            loss = nn.functional.cross_entropy(model(to_tensor(crops)), torch.tensor(classes), label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        print(
            f"epoch {epoch + 1}/{args.epochs}  loss {total / (args.epoch_crops // args.batch):.3f}  "
            f"matteop65 Valid {accuracy(model, valid):.2%}  nell-byler fold {args.holdout_fold} "
            f"{accuracy(model, held_out):.2%}  {time.time() - t0:.0f} s",
            flush=True,
        )
    model.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        torch.zeros(1, 3, learned_dice.FACE_PX, learned_dice.FACE_PX),
        str(args.out),
        input_names=["crops"],
        output_names=["faces"],
        opset_version=13,
        dynamic_axes={"crops": {0: "n"}, "faces": {0: "n"}},
        dynamo=False,
    )
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB) after {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
