"""Train the learned checker reader and write its ONNX (``make train-checkers``): needs ``.[train]`` (torch).

Data: the first-row slots of the labelled real frames (``../shared/data/boards/backgammoncv``,
labels in ``tests/data/boards/backgammoncv.json``) and of frames of :mod:`vision.render` (seeds
950000 on, used by nothing else) with random board and checker colours, grain, cameras, light,
noise, blur and JPEG, dice and cubes about (:mod:`training.checkers_data`; the rendered slots are
kept in ``build/checkers-data``). Each crop is cut from its slot's patch shifted by up to 4 mm
(checkers off their slots, a grid a little off), scaled, turned and mirrored, with colour, light,
texture (grain, felt, stitching), blur and noise varied. ``--holdout CAMERA`` leaves one real
camera out (its frames are then read by ``benchmarks/bench_checkers_real.py``); ``--cv DIR``
trains one model per real camera left out into DIR. Seeds are fixed; it runs on one CPU thread.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # pragma: no cover - the train extra is missing
    sys.exit("make train-checkers needs torch: pip install -e '.[train]'")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.checkers_data import (  # noqa: E402
    CROP_IN_PATCH,
    DATA,
    PATCH_PER_DIAMETER,
    RENDER_SEEDS,
    Slots,
    real_frames,
    real_slots,
    rendered_slots,
)
from vision import learned_checkers  # noqa: E402
from vision.learned_checkers import CLASSES, CROP  # noqa: E402

CACHE = ROOT / "build" / "checkers-data"
SHIFT_MM = 4.0  # a crop's centre is moved up to this far from its slot's
REAL_SHARE = 0.5  # of each batch, drawn from the real slots (where there are any)
PASTE_SHARE = 0.3  # of the empty slots in a batch, given a checker cut from another slot
RECOLOUR_SHARE = 0.3  # of the crops in a batch, in new colours


def cached_rendered(count: int) -> Slots:
    """:func:`training.checkers_data.rendered_slots` of ``count`` frames, kept in ``build/checkers-data``."""
    path = CACHE / f"rendered-{count}-{RENDER_SEEDS}.npz"
    if path.exists():
        d = np.load(path)
        return Slots(d["patches"], d["labels"], d["frame"], [])
    t0 = time.time()
    s = rendered_slots(count)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, patches=s.patches, labels=s.labels, frame=s.frame)
    print(f"rendered {count} frames: {len(s.labels)} slots in {time.time() - t0:.0f} s", flush=True)
    return s


def _cbr(i: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class Net(nn.Module):
    """32 x 32 Lab crop -> 3 logits (empty, light, dark): four conv blocks, each halving, then a linear layer."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        w = width
        self.features = nn.Sequential(
            _cbr(3, w),
            nn.MaxPool2d(2),
            _cbr(w, 2 * w),
            nn.MaxPool2d(2),
            _cbr(2 * w, 4 * w),
            nn.MaxPool2d(2),
            _cbr(4 * w, 4 * w),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(4 * w * (CROP // 16) ** 2, len(CLASSES)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def _textures(n: int, g: torch.Generator) -> torch.Tensor:
    """N x 1 x CROP x CROP patterns of lightness: grain (bent stripes), felt (fine noise) or stitching (dashes)."""
    ys, xs = torch.meshgrid(
        torch.arange(CROP, dtype=torch.float32), torch.arange(CROP, dtype=torch.float32), indexing="ij"
    )
    kind = torch.randint(0, 3, (n,), generator=g)
    ang = torch.rand(n, generator=g) * math.pi
    u = xs[None] * torch.cos(ang)[:, None, None] + ys[None] * torch.sin(ang)[:, None, None]
    v = -xs[None] * torch.sin(ang)[:, None, None] + ys[None] * torch.cos(ang)[:, None, None]
    period = 2 + torch.rand(n, generator=g)[:, None, None] * 6
    grain = torch.sin(u / period + 2 * torch.sin(v / 9 + torch.rand(n, 1, 1, generator=g) * 6))
    felt = torch.randn(n, CROP, CROP, generator=g)
    offset = (torch.rand(n, generator=g) * CROP)[:, None, None]
    dash = ((v % 4) < 2).float()
    stitch = ((u - offset).abs() < 0.8).float() * dash * 2 - 0.3
    out = torch.where((kind == 0)[:, None, None], grain, torch.where((kind == 1)[:, None, None], felt, stitch))
    return out[:, None]


def augment(patches: torch.Tensor, labels: torch.Tensor, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Network crops (N x 3 x CROP x CROP, Lab / 255 - 0.5) cut from slot patches (N x 3 x PATCH x PATCH, 0..1),
    varied, and their classes: RECOLOUR_SHARE of them in new colours (their lightness turned upside down
    half the time, light checkers then dark), so that a checker is told by its shape, not by its colour."""
    n = len(patches)
    half_mm = PATCH_PER_DIAMETER * 36.0 / 2  # a patch's half side in checker mm (the diameter drops out)
    shift = (torch.rand(n, 2, generator=g) * 2 - 1) * SHIFT_MM / half_mm
    scale = CROP_IN_PATCH * (1 + (torch.rand(n, generator=g) * 2 - 1) * 0.08)
    turn = (torch.rand(n, generator=g) * 2 - 1) * math.radians(6)
    mirror = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = scale * torch.cos(turn) * mirror
    theta[:, 0, 1] = -scale * torch.sin(turn)
    theta[:, 1, 0] = scale * torch.sin(turn) * mirror
    theta[:, 1, 1] = scale * torch.cos(turn)
    theta[:, :, 2] = shift
    grid = F.affine_grid(theta, (n, 3, CROP, CROP), align_corners=False)
    x = F.grid_sample(patches, grid, mode="bilinear", padding_mode="border", align_corners=False)
    # light and colour: lightness gain and offset, a colour cast, contrast
    light = x[:, :1]
    gain = 1 + (torch.rand(n, 1, 1, 1, generator=g) * 2 - 1) * 0.25
    recolour = torch.rand(n, generator=g) < RECOLOUR_SHARE
    flip = recolour & (torch.rand(n, generator=g) < 0.5)
    gain = torch.where(flip[:, None, None, None], -gain, gain)
    light = (light - 0.5) * gain + 0.5
    light = light + (torch.rand(n, 1, 1, 1, generator=g) * 2 - 1) * 0.1
    ab = x[:, 1:] - 0.5
    ab = ab * (0.6 + torch.rand(n, 1, 1, 1, generator=g) * 0.8) + (torch.rand(n, 2, 1, 1, generator=g) * 2 - 1) * 0.04
    swap = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)[:, None, None, None]  # a and b change places, signs
    turned = torch.stack([ab[:, 1], ab[:, 0]], dim=1) * swap + (torch.rand(n, 2, 1, 1, generator=g) * 2 - 1) * 0.1
    ab = torch.where(recolour[:, None, None, None], turned, ab)
    labels = torch.where(flip & (labels > 0), 3 - labels, labels)
    # a gradient of light across the crop (a shadow's edge, a lamp)
    ramp = torch.linspace(-0.5, 0.5, CROP)
    a = torch.rand(n, generator=g) * 2 * math.pi
    slope = ramp[None, :, None] * torch.sin(a)[:, None, None] + ramp[None, None, :] * torch.cos(a)[:, None, None]
    light = light + (slope * (torch.rand(n, 1, 1, generator=g) * 0.15))[:, None]
    # texture on half the crops
    tex = _textures(n, g) * (torch.rand(n, 1, 1, 1, generator=g) < 0.5) * torch.rand(n, 1, 1, 1, generator=g) * 0.06
    light = light + tex
    x = torch.cat([light, ab + 0.5], dim=1)
    # blur on a third, noise on all (varied)
    blur = torch.rand(n, generator=g) < 0.33
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0])
        k2 = (k[:, None] * k[None, :] / 16).expand(3, 1, 3, 3)
        x[blur] = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), k2, groups=3)
    x = x + torch.randn(x.shape, generator=g) * torch.rand(n, 1, 1, 1, generator=g) * 0.03
    return x.clamp(0, 1) - 0.5, labels


def paste(
    x: torch.Tensor, y: torch.Tensor, donors: tuple[torch.Tensor, torch.Tensor], g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Put a checker cut from another slot (any board) on PASTE_SHARE of the empty slots: checkers seen on
    boards they never stood on. ``x``: N x 3 x PATCH x PATCH (0..1); the cut is a soft disc a checker across."""
    empty = torch.nonzero((y == 0) & (torch.rand(len(y), generator=g) < PASTE_SHARE)).flatten()
    if not len(empty):
        return x, y
    patches, labels = donors
    pick = torch.randint(0, len(labels), (len(empty),), generator=g)
    size = x.shape[-1]
    r = size / PATCH_PER_DIAMETER / 2 * (1 + (torch.rand(len(empty), 1, 1, generator=g) * 2 - 1) * 0.05)
    c = (size - 1) / 2
    ys_, xs_ = torch.meshgrid(
        torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32), indexing="ij"
    )
    d = torch.sqrt((ys_ - c) ** 2 + (xs_ - c) ** 2)[None]
    m = torch.clamp(r + 0.5 - d, 0, 1)[:, None]
    x = x.clone()
    y = y.clone()
    x[empty] = x[empty] * (1 - m) + patches[pick].float() / 255 * m
    y[empty] = labels[pick]
    return x, y


def train(
    real: Slots | None, rendered: Slots, steps: int, batch: int, lr: float, seed: int, width: int, log_every: int = 200
) -> Net:
    """A network trained on the real and rendered slots."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    pools = [(rendered, 1.0 - (REAL_SHARE if real is not None and len(real.labels) else 0.0))]
    if real is not None and len(real.labels):
        pools.append((real, REAL_SHARE))
    tensors = [
        (torch.from_numpy(p.patches).permute(0, 3, 1, 2).contiguous(), torch.from_numpy(p.labels)) for p, _ in pools
    ]
    donors = torch.cat([p[lab > 0] for p, lab in tensors])  # every checker, to put on other boards' empty slots
    donor_labels = torch.cat([lab[lab > 0] for _, lab in tensors])
    donors = (donors, donor_labels)
    model = Net(width)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    model.train()
    t0 = time.time()
    for step in range(steps):
        xs, ys = [], []
        for (patches, labels), (_, share) in zip(tensors, pools):
            m = int(round(batch * share))
            idx = torch.from_numpy(rng.integers(0, len(labels), m))
            xs.append(patches[idx].float() / 255)
            ys.append(labels[idx])
        x, y = paste(torch.cat(xs), torch.cat(ys), donors, g)
        x, y = augment(x, y, g)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:5d}  loss {loss.item():.3f}  {time.time() - t0:.0f} s", flush=True)
    return model.eval()


def export(model: Net, out: Path) -> None:
    """Write the network as ONNX for ``cv2.dnn`` (batch of any size)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        torch.zeros(1, 3, CROP, CROP),
        str(out),
        input_names=["crops"],
        output_names=["logits"],
        opset_version=13,
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        dynamo=False,
    )


def subset(s: Slots, keep_frames: set[int]) -> Slots:
    m = np.isin(s.frame, sorted(keep_frames))
    return Slots(s.patches[m], s.labels[m], s.frame[m], s.names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=learned_checkers.MODEL_PATH, help="ONNX file to write")
    ap.add_argument("--steps", type=int, default=1500, help="training steps of --batch crops")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument("--width", type=int, default=12, help="channels of the first conv block")
    ap.add_argument("--rendered", type=int, default=400, help="rendered frames in the training set")
    ap.add_argument("--holdout", default=None, help="leave this real camera out")
    ap.add_argument("--cv", type=Path, default=None, help="train one model per real camera left out into this folder")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    rendered = cached_rendered(args.rendered)
    frames = real_frames() if DATA.is_dir() else []
    real = real_slots(frames) if frames else None
    if not frames:
        print(f"real frames: {str(DATA)!r} does not exist: training on rendered frames alone", file=sys.stderr)
    cameras = sorted({f.camera for f in frames})
    print(
        f"training set: {len(rendered.labels)} rendered slots, {0 if real is None else len(real.labels)} real slots "
        f"of {len(frames)} frames, {len(cameras)} cameras",
        flush=True,
    )
    runs: list[tuple[str | None, Path]] = []
    if args.cv is not None:
        runs = [(c, args.cv / f"checkers-without-{c}.onnx") for c in cameras]
    else:
        runs = [(args.holdout, args.out)]
    for holdout, out in runs:
        use = real
        if real is not None and holdout is not None:
            if holdout not in cameras:
                print(f"--holdout: {holdout!r}: expected one of {cameras}", file=sys.stderr)
                return 2
            use = subset(real, {i for i, f in enumerate(frames) if f.camera != holdout})
        t0 = time.time()
        model = train(use, rendered, args.steps, args.batch, args.lr, args.seed, args.width)
        export(model, out)
        print(
            f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB), camera left out: {holdout}, "
            f"{time.time() - t0:.0f} s of training",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
