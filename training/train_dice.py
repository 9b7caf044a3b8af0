"""Train the learned dice reader and write its ONNX (``make train-dice``): needs ``.[train]`` (torch).

Data: the labelled photos of ``../shared/data/dice`` (matteop65 Train, nell-byler/train), frames
of :mod:`vision.render` (seeds 900000 on, used by nothing else) and, with ``--mix``, the labelled
board photos without dice as negatives, under strong randomisation (scale, rotation, colour and
hue, inversion, blur, motion blur, noise, JPEG). ``nell-byler/test`` is never read; matteop65
Valid only reported on. ``--holdout-fold K`` leaves the K-th fifth of nell-byler/train out and
reports on it; the shipped model leaves fold 4 out. ``--init`` goes on from an earlier run's
ONNX (``make train-dice`` runs twice). ``--workers`` makes the batches in other processes, which
a GPU needs to be kept busy. Seeds are fixed.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from dataclasses import dataclass
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

from board_rules import Position  # noqa: E402
from training.checkers_data import DATA as BOARD_PHOTOS  # noqa: E402
from training.checkers_data import LABELS as BOARD_LABELS  # noqa: E402
from training.dice_data import DATA, nell_fold, yolo_folder  # noqa: E402
from vision import learned_dice  # noqa: E402
from vision.board import DIE_SIZE_MM  # noqa: E402
from vision.render import BOARD_STYLES, CHECKER_STYLES, DIE_COLOURS, DieSpec, render  # noqa: E402

CROP = 256  # training crops are this square
RENDER_SEEDS = 900000  # the renderer's seeds for training frames start here


@dataclass
class Sample:
    jpeg: bytes  # the image JPEG-encoded (a photo's file as it is), as it travels between processes
    dice: np.ndarray  # n x 5: cx, cy, side px, value 1..6, side known (1) or not (0)
    die_px: float | None = None  # a die's likely side where the image has none (a negative)

    @functools.cached_property
    def image(self) -> np.ndarray:
        """The decoded image (BGR), decoded once: :func:`decode_all` decodes every sample before the
        batch-making processes start, which then share the pixels rather than decode each crop."""
        return cv2.imdecode(np.frombuffer(self.jpeg, np.uint8), cv2.IMREAD_COLOR)


def decode_all(pools: list[list[Sample]]) -> None:
    """Every sample of ``pools`` decoded (:attr:`Sample.image`), once, in this process."""
    for pool in pools:
        for sample in pool:
            sample.image  # noqa: B018 - fills the cache


def photo_samples(folder: Path, whole_die_boxes: bool, names: set[str] | None = None) -> list[Sample]:
    """Samples of a YOLO folder. matteop65's boxes hold the top face, but a one's only its pip: its side is not known."""
    out = []
    for img, truth in yolo_folder(folder):
        if names is not None and img.name not in names:
            continue
        rows = [(cx, cy, max(w, h), v, 1.0 if whole_die_boxes or v != 1 else 0.0) for v, cx, cy, w, h in truth]
        out.append(Sample(img.read_bytes(), np.array(rows, np.float32).reshape(-1, 5)))
    return out


def rendered_samples(count: int, workers: int = 0) -> list[Sample]:
    """Frames drawn by the renderer: random dice (none cocked) on every board and checker style, some cubes.

    Each frame depends on its index alone, so ``workers`` processes draw the same frames as one.
    """
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as pool:
            return list(pool.map(rendered_sample, range(count), chunksize=8))
    return [rendered_sample(i) for i in range(count)]


def rendered_sample(i: int) -> Sample:
    """The ``i``-th rendered training frame (renderer seed ``RENDER_SEEDS + i``)."""
    colours = sorted(DIE_COLOURS)
    seed = RENDER_SEEDS + i
    rng = np.random.default_rng([seed, 7])
    position = Position.start(["backgammon", "portes", "plakoto", "fevga"][i % 4])
    dice = [
        DieSpec(int(rng.integers(1, 7)), colour=colours[int(rng.integers(len(colours)))])
        for _ in range(int(rng.integers(2, 5)))
    ]
    cube = (
        (int(2 ** rng.integers(0, 7)), ["centre", "white", "black"][int(rng.integers(3))])
        if rng.random() < 0.5
        else None
    )
    frame = render(
        position,
        dice=dice,
        cube=cube,
        seed=seed,
        style=sorted(BOARD_STYLES)[i % len(BOARD_STYLES)],
        checkers=sorted(CHECKER_STYLES)[(i // 3) % len(CHECKER_STYLES)],
        size=(960, 720),
        noise=float(rng.uniform(0, 5)),
        blur=float(rng.uniform(0, 1.2)),
    )
    rows = []
    for d in frame.dice:
        mm = np.array(
            [
                [d.centre_mm[0] - DIE_SIZE_MM / 2, d.centre_mm[1]],
                [d.centre_mm[0] + DIE_SIZE_MM / 2, d.centre_mm[1]],
                [d.centre_mm[0], d.centre_mm[1] - DIE_SIZE_MM / 2],
                [d.centre_mm[0], d.centre_mm[1] + DIE_SIZE_MM / 2],
            ],
            np.float32,
        )
        px = cv2.perspectiveTransform(mm[None], frame.homography)[0]
        side = 0.5 * (np.linalg.norm(px[1] - px[0]) + np.linalg.norm(px[3] - px[2]))
        rows.append((d.centre[0], d.centre[1], side, d.value, 1.0))
    ok, jpeg = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return Sample(jpeg.tobytes(), np.array(rows, np.float32).reshape(-1, 5))


def negative_samples(photos: Path = BOARD_PHOTOS) -> list[Sample]:
    """The real board photos labelled with no dice anywhere (``tests/data/boards``): checkers, points,
    a clock, score cards, a cube, printed patterns, all of which the network must not take for dice.

    A die is taken to be a fortieth of the photo's longer side: about half a checker where the board
    fills the photo, so that crops show checkers from a little larger than a die to a few times larger.
    """
    labels = json.loads(BOARD_LABELS.read_text())["frames"]
    out = []
    for name, label in sorted(labels.items()):
        path = photos / name
        if label.get("dice") or label.get("dice_elsewhere") or not path.is_file():
            continue
        image = cv2.imread(str(path))
        if image is None:
            continue
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        out.append(Sample(jpeg.tobytes(), np.zeros((0, 5), np.float32), max(image.shape[:2]) / 40))
    return out


def parse_mix(text: str) -> list[float] | None:
    """``--mix``'s four shares, or None where they are not four numbers of 0 or more adding up to more than 0."""
    try:
        mix = [float(v) for v in text.split(",")]
    except ValueError:
        return None
    if len(mix) != 4 or not all(math.isfinite(v) and v >= 0 for v in mix) or sum(mix) <= 0:
        return None
    return mix


def load_pools(
    data: Path, holdout_fold: int | None, rendered: int, workers: int, mix: list[float]
) -> tuple[list[list[Sample]], list[float], set[str], str]:
    """The training pools (matteop65 Train, nell-byler/train without ``holdout_fold``, ``rendered``
    frames, the board photos without dice) with a share in ``mix``, their shares (adding up to 1),
    the held-out photo names and a line saying what was loaded. Raises ValueError (naming ``--mix``)
    where ``mix`` asks for board photos and ``data`` has none."""
    t0 = time.time()
    dice_data = data / "dice"
    train_in, held = nell_fold(dice_data, holdout_fold)
    matteo = photo_samples(dice_data / "matteop65" / "Train", whole_die_boxes=False)
    nell = photo_samples(dice_data / "nell-byler" / "train", whole_die_boxes=True, names=train_in)
    frames = rendered_samples(rendered, workers)
    board_photos = data / "boards" / BOARD_PHOTOS.name
    negatives = negative_samples(board_photos) if mix[3] > 0 else []
    if mix[3] > 0 and not negatives:
        raise ValueError(f"--mix: no board photos without dice in {str(board_photos)!r}")
    kept = [(p, w) for p, w in zip([matteo, nell, frames, negatives], np.array(mix) / sum(mix)) if w > 0]
    loaded = (
        f"training set: {len(matteo)} matteop65 Train, {len(nell)} nell-byler/train, {len(frames)} rendered, "
        f"{len(negatives)} board photos without dice ({time.time() - t0:.0f} s to load)"
    )
    return [p for p, _ in kept], [float(w) for _, w in kept], held, loaded


def start(args: argparse.Namespace, mix: list[float]) -> tuple[str, list[list[Sample]], list[float], set[str]] | None:
    """A training run's start, for both dice networks: torch seeded with ``--seed`` and on ``--threads``
    threads, the device (a GPU where torch sees one) and the pools (:func:`load_pools`) with their
    shares and the held-out photo names, the line saying what was loaded printed; None after printing
    why the data cannot be trained on."""
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        pools, shares, held, loaded = load_pools(args.data, args.holdout_fold, args.rendered, args.workers, mix)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return None
    t0 = time.time()
    decode_all(pools)
    print(f"{loaded}; {time.time() - t0:.0f} s to decode; device {device}", flush=True)
    return device, pools, shares, held


# ----------------------------------------------------------------- augmentation and targets


def augment(
    sample: Sample, rng: np.random.Generator, die_range: tuple[float, float] = (16.0, 56.0), crop: int = CROP
) -> tuple[np.ndarray, np.ndarray]:
    """A ``crop`` x ``crop`` training crop of ``sample``, its dice ``die_range`` px across, and its dice (n x 5, crop px)."""
    image = sample.image
    dice = sample.dice
    sides = dice[dice[:, 4] > 0, 2] if len(dice) else np.zeros(0)
    ref = float(np.median(sides)) if len(sides) else sample.die_px or max(image.shape[:2]) / 16
    scale = rng.uniform(*die_range) / ref
    theta = rng.uniform(0, 2 * math.pi)
    squash = rng.uniform(0.85, 1.15)
    if len(dice) and rng.random() < 0.8:
        cx, cy = dice[rng.integers(len(dice)), :2] + rng.normal(0, 0.3 * crop / scale, 2)
    else:
        cx, cy = rng.uniform(0, image.shape[1]), rng.uniform(0, image.shape[0])
    c, s = math.cos(theta) * scale, math.sin(theta) * scale
    a = np.array([[c * squash, -s], [s * squash, c]])
    m = np.hstack([a, (np.array([crop / 2, crop / 2]) - a @ np.array([cx, cy]))[:, None]])
    border = tuple(int(v) for v in rng.integers(0, 256, 3))
    cut = cv2.warpAffine(
        image,
        m,
        (crop, crop),
        flags=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=border,
    )
    out = dice.copy()
    if len(out):
        out[:, :2] = out[:, :2] @ a.T + m[:, 2]
        out[:, 2] *= math.sqrt(abs(np.linalg.det(a)))
        out = out[(out[:, 0] >= 0) & (out[:, 0] < crop) & (out[:, 1] >= 0) & (out[:, 1] < crop)]
    return _photometric(cut, rng), out


def _photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.5:  # hue: dice of other colours
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int16) + int(rng.integers(0, 180))) % 180
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.5, 1.6), 0, 255)
        img = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    if rng.random() < 0.3:
        img = img[..., rng.permutation(3)]
    if rng.random() < 0.15:  # light pips on a dark die
        img = 255 - img
    if rng.random() < 0.1:
        img = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    f = img.astype(np.float32) / 255
    f = f ** rng.uniform(0.6, 1.6)
    f = f * rng.uniform(0.6, 1.3) + rng.uniform(-0.15, 0.15)
    f += np.linspace(0, rng.uniform(-0.2, 0.2), img.shape[1], dtype=np.float32)[None, :, None]  # uneven light
    img = np.clip(f * 255, 0, 255).astype(np.uint8)
    r = rng.random()
    if r < 0.25:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 1.8))
    elif r < 0.45:  # motion blur
        n = int(rng.integers(3, 10))
        k = np.zeros((n, n), np.float32)
        k[n // 2] = 1 / n
        rot = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), rng.uniform(0, 180), 1)
        k = cv2.warpAffine(k, rot, (n, n))
        img = cv2.filter2D(img, -1, k / max(1e-6, k.sum()))
    if rng.random() < 0.5:
        img = np.clip(img + rng.normal(0, rng.uniform(1, 10), img.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 95))])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img


def targets(dice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Face heatmaps (6 x C x C), log sides in cells and their mask (C x C) for a crop's dice."""
    n = CROP // learned_dice.STRIDE
    heat = np.zeros((6, n, n), np.float32)
    size = np.zeros((n, n), np.float32)
    mask = np.zeros((n, n), np.float32)
    yy, xx = np.mgrid[0:n, 0:n]
    for cx, cy, side, value, known in dice:
        gx, gy = cx / learned_dice.STRIDE - 0.5, cy / learned_dice.STRIDE - 0.5
        sigma = max(0.6, side / learned_dice.STRIDE / 6)
        g = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * sigma**2))
        ix, iy = min(n - 1, max(0, round(gx))), min(n - 1, max(0, round(gy)))
        g[iy, ix] = 1.0
        heat[int(value) - 1] = np.maximum(heat[int(value) - 1], g)
        if known:
            size[iy, ix] = math.log(side / learned_dice.STRIDE)
            mask[iy, ix] = 1.0
    return heat, size, mask


def make_batch(
    pools: list[list[Sample]], shares: list[float], batch: int, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """A batch of augmented crops drawn from ``pools`` by ``shares``: images (B x CROP x CROP x 3, uint8,
    :func:`network_input` makes them the network's input), face heatmaps, log sides and their mask."""
    xs, hs, ss, ms = [], [], [], []
    for _ in range(batch):
        pool = pools[int(rng.choice(len(pools), p=shares))]
        img, dice = augment(pool[int(rng.integers(len(pool)))], rng)
        h, s, m = targets(dice)
        xs.append(img)
        hs.append(h), ss.append(s), ms.append(m)
    return tuple(np.stack(v) for v in (xs, hs, ss, ms))


def network_input(images: torch.Tensor, device: str) -> torch.Tensor:
    """A batch of uint8 crops (B x H x W x 3, BGR) as the network reads them, on ``device``: B x 3 x H x W,
    -0.5..0.5. The crops travel from the batch-making processes as bytes, a quarter of their floats."""
    return images.to(device, non_blocking=True).permute(0, 3, 1, 2).float() / 255 - 0.5


class Batches(torch.utils.data.IterableDataset):
    """Endless batches of ``make`` (:func:`make_batch` by default), made in this process (seed ``(seed, 1)``)
    or in DataLoader worker processes, worker ``k`` drawing from seed ``(seed, k + 1)``.

    The loader takes the workers' batches in turn, so a run with the same seed and workers sees the same batches.
    """

    def __init__(self, pools: list[list[Sample]], shares: list[float], batch: int, seed: int, make=None) -> None:
        self.pools, self.shares, self.batch, self.seed = pools, shares, batch, seed
        self.make = make or make_batch

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        if info is not None:
            cv2.setNumThreads(1)  # the workers share the cores
        rng = np.random.default_rng([self.seed, (info.id if info else 0) + 1])
        while True:
            yield self.make(self.pools, self.shares, self.batch, rng)

    def tensors(self, workers: int, pin_memory: bool = False):
        """The batches as tensors, made by ``workers`` DataLoader processes (0: in this one)."""
        if workers:
            loader = torch.utils.data.DataLoader(
                self, batch_size=None, num_workers=workers, prefetch_factor=4, pin_memory=pin_memory
            )
            return iter(loader)  # the loader converts the workers' arrays
        return (tuple(torch.from_numpy(v) for v in arrays) for arrays in self)


# ----------------------------------------------------------------- the network


def _cbr(i: int, o: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class Net(nn.Module):
    """Five halvings down to 1/32, then back up to 1/4 with skips: 6 face scores (sigmoid) and a log side per cell.

    ``width`` scales every layer's channels (1: 16, 24, 48, 64, 96 down, 48 up; about 0.3 M parameters).
    """

    def __init__(self, width: float = 1.0) -> None:
        super().__init__()
        c1, c2, c3, c4, c5, cu = (max(8, round(c * width / 8) * 8) for c in (16, 24, 48, 64, 96, 48))
        self.s4 = nn.Sequential(_cbr(3, c1, 2), _cbr(c1, c2, 2), _cbr(c2, c2))
        self.s8 = nn.Sequential(_cbr(c2, c3, 2), _cbr(c3, c3))
        self.s16 = nn.Sequential(_cbr(c3, c4, 2), _cbr(c4, c4))
        self.s32 = nn.Sequential(_cbr(c4, c5, 2), _cbr(c5, c5))
        self.l32, self.l16, self.l8, self.l4 = (
            nn.Conv2d(c5, cu, 1),
            nn.Conv2d(c4, cu, 1),
            nn.Conv2d(c3, cu, 1),
            nn.Conv2d(c2, cu, 1),
        )
        self.head = nn.Sequential(_cbr(cu, cu), _cbr(cu, cu))
        self.out = nn.Conv2d(cu, 7, 1)
        nn.init.constant_(self.out.bias[:6], -2.19)  # a prior of 0.1 that a cell holds a die

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.s4(x)
        b = self.s8(a)
        c = self.s16(b)
        d = self.s32(c)
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")  # noqa: E731
        p = self.l16(c) + up(self.l32(d))
        p = self.l8(b) + up(p)
        p = self.l4(a) + up(p)
        o = self.out(self.head(p))
        return torch.cat([torch.sigmoid(o[:, :6]), o[:, 6:]], dim=1)


def export_onnx(model: nn.Module, out: Path, crop: int, output: str) -> None:
    """``model`` (in eval mode, on the CPU) written to ``out`` as ONNX that ``cv2.dnn`` loads, its input
    ``image`` and its ``output`` of any height and width."""
    torch.onnx.export(
        model,
        torch.zeros(1, 3, crop, crop),
        str(out),
        input_names=["image"],
        output_names=[output],
        opset_version=13,
        dynamic_axes={"image": {2: "height", 3: "width"}, output: {2: "rows", 3: "cols"}},
        dynamo=False,
    )


def load_folded(model: Net, onnx_path: Path) -> None:
    """Start ``model`` from an exported ONNX of it, whose batch norms the export folded into the convolutions.

    Each folded convolution's weights and bias go into the convolution and its batch norm (scale 1,
    mean 0, variance 1), so the model computes what the ONNX does while its batch norms are kept in
    eval mode (see :func:`freeze_norms`).
    """
    import onnx  # comes with torch's ONNX export
    from onnx import numpy_helper

    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(onnx_path)).graph.initializer}
    folded = sorted((k for k in weights if k.startswith("onnx::Conv_")), key=lambda k: int(k.rsplit("_", 1)[1]))
    blocks = [m for m in model.modules() if isinstance(m, nn.Sequential) and isinstance(m[0], nn.Conv2d)]
    if len(folded) != 2 * len(blocks):
        raise SystemExit(f"--init: {str(onnx_path)!r} is not this network ({len(folded) // 2} folded convolutions)")
    with torch.no_grad():
        for block, (w, b) in zip(blocks, zip(folded[::2], folded[1::2])):
            conv, norm = block[0], block[1]
            conv.weight.copy_(torch.from_numpy(np.array(weights[w])))
            norm.weight.fill_(1.0)
            norm.bias.copy_(torch.from_numpy(np.array(weights[b])))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
        for name, param in model.named_parameters():
            if name in weights:
                param.copy_(torch.from_numpy(np.array(weights[name])))


def freeze_norms(model: Net) -> None:
    """Batch norms in eval mode: a fine-tune from :func:`load_folded` keeps their statistics fixed."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def focal_loss(pred: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss over heatmaps, per die."""
    pred = pred.clamp(1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * (1 - pred) ** 2 * pos
    neg_loss = torch.log(1 - pred) * pred**2 * (1 - gt) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / n


# ----------------------------------------------------------------- evaluation (through the exported ONNX)


def evaluate(
    net: learned_dice.DiceNet, folder: Path, names: set[str] | None = None, min_score: float = learned_dice.MIN_SCORE
) -> dict:
    """Dice read right (centre within half the label box's larger side, 8 px at least, value agreeing) and false dice."""
    dice = right = false = images = 0
    for img, truth in yolo_folder(folder):
        if names is not None and img.name not in names:
            continue
        image = cv2.imread(str(img))
        readings = learned_dice.find_dice(image, net=net, min_score=min_score)
        used: set[int] = set()
        for v, cx, cy, w, h in truth:
            dice += 1
            near = [
                (math.hypot(r.centre[0] - cx, r.centre[1] - cy), i)
                for i, r in enumerate(readings)
                if i not in used and math.hypot(r.centre[0] - cx, r.centre[1] - cy) <= max(8.0, 0.5 * max(w, h))
            ]
            if near:
                _, i = min(near)
                used.add(i)
                right += readings[i].value == v
        false += len(readings) - len(used)
        images += 1
    return {"images": images, "dice": dice, "right": right, "false": false}


def report(name: str, r: dict) -> str:
    return (
        f"{name:<28} images {r['images']:4d}  dice {r['dice']:5d}  read right {r['right']:5d} "
        f"({r['right'] / max(1, r['dice']):.2%})  false dice {r['false']} ({r['false'] / max(1, r['images']):.3f} a photo)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=learned_dice.MODEL_PATH, help="ONNX file to write")
    ap.add_argument("--steps", type=int, default=6000, help="training steps of --batch crops")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--rendered", type=int, default=300, help="rendered frames in the training set")
    ap.add_argument(
        "--holdout-fold",
        type=int,
        choices=range(5),
        default=None,
        help="leave this fifth of nell-byler/train out and report on it",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--init", type=Path, default=None, help="fine-tune from this ONNX of the network (batch norms fixed)"
    )
    ap.add_argument(
        "--mix",
        default="0.35,0.4,0.25,0",
        help="the shares among the crops of matteop65 Train, nell-byler/train, rendered frames and the "
        "board photos without dice",
    )
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: as many as cores)")
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes that make the batches and draw the rendered frames (0: all in this one); "
        "the batches depend on the seed and this number",
    )
    ap.add_argument("--width", type=float, default=1.0, help="the network's channels, times the shipped net's")
    ap.add_argument(
        "--data",
        type=Path,
        default=DATA.parent,
        help="the data folder: dice/ (matteop65, nell-byler/train) and boards/backgammoncv/",
    )
    ap.add_argument(
        "--stop-after",
        type=int,
        default=0,
        help="stop after this many of the --steps schedule's steps (0: all): repeats a run that --max-minutes cut",
    )
    ap.add_argument("--max-minutes", type=float, default=0, help="stop training after this long (0: run every step)")
    ap.add_argument("--no-report", action="store_true", help="skip reading matteop65 Valid and the held fold")
    args = ap.parse_args(argv)
    dice_data = args.data / "dice"
    if not dice_data.is_dir():
        print(f"--data: {str(dice_data)!r} does not exist", file=sys.stderr)
        return 2
    if not 0.25 <= args.width <= 4:
        print(f"--width: {args.width}: expected 0.25 to 4", file=sys.stderr)
        return 2
    if args.steps < 40 or args.batch < 1:
        print(f"--steps, --batch: {args.steps}, {args.batch}: expected at least 40 steps of one crop", file=sys.stderr)
        return 2
    if args.stop_after < 0 or args.max_minutes < 0:
        print("--stop-after, --max-minutes: expected 0 or more", file=sys.stderr)
        return 2
    if args.workers < 0:
        print(f"--workers: {args.workers}: expected 0 or more", file=sys.stderr)
        return 2
    mix = parse_mix(args.mix)
    if mix is None:
        print(f"--mix: {args.mix!r}: expected four shares such as 0.35,0.4,0.25,0", file=sys.stderr)
        return 2
    if args.init is not None and not args.init.is_file():
        print(f"--init: {str(args.init)!r} does not exist", file=sys.stderr)
        return 2
    started = start(args, mix)
    if started is None:
        return 2
    device, pools, shares, held = started

    model = Net(args.width)
    if args.init is not None:
        load_folded(model, args.init)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.05)
    model.train()
    if args.init is not None:
        freeze_norms(model)
    batches = Batches(pools, shares, args.batch, args.seed).tensors(args.workers, device == "cuda")
    t0 = time.time()
    for step, tensors in zip(range(args.steps), batches):
        x = network_input(tensors[0], device)
        heat, size, mask = (t.to(device, non_blocking=True) for t in tensors[1:])
        out = model(x)
        loss_h = focal_loss(out[:, :6], heat)
        loss_s = (F.l1_loss(out[:, 6], size, reduction="none") * mask).sum() / mask.sum().clamp(min=1)
        loss = loss_h + 0.2 * loss_s
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if args.stop_after and step + 1 >= args.stop_after:
            print(f"stopped at step {step + 1} of {args.steps}: --stop-after", flush=True)
            break
        if args.max_minutes and time.time() - t0 > 60 * args.max_minutes:
            print(f"stopped at step {step + 1} of {args.steps}: --max-minutes {args.max_minutes} passed", flush=True)
            break
        if step % 100 == 0 or step == args.steps - 1:
            print(
                f"step {step:5d}  loss {loss_h.item():.3f} + {loss_s.item():.3f}  {time.time() - t0:.0f} s", flush=True
            )

    model.eval().cpu()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out.with_suffix(".pt"))  # to fine-tune from; not shipped
    export_onnx(model, args.out, CROP, "dice")
    print(
        f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB) after {time.time() - t0:.0f} s of training",
        flush=True,
    )

    if args.no_report:
        return 0
    net = learned_dice.DiceNet(args.out)
    print(report("matteop65 Valid", evaluate(net, dice_data / "matteop65" / "Valid")))
    if held:
        print(
            report(
                f"nell-byler/train fold {args.holdout_fold}", evaluate(net, dice_data / "nell-byler" / "train", held)
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
