"""The checkers on the points of real boards, learned against classical, camera by camera left out.

Usage: python benchmarks/bench_checkers_real.py [--cv build/checkers-cv] [--frames-out DIR]

Reads every labelled real frame of ../shared/data/boards/backgammoncv (labels in
tests/data/boards/backgammoncv.json; each frame calibrated from its labelled field corners, as
``training/checkers_data.py`` does) three ways in the same run: the classical reader
(``vision.checkers.read_checkers``, with the palette learned on the camera's palette frame where
the camera has one, as benchmarks/tournament_frames.py does), the learned reader and the hybrid
(``vision.learned_checkers``), each clear of the dice read on the frame, as ``read_frame`` reads. The learned reader of a frame is the model trained without that
frame's camera (``make train-checkers-cv`` writes one per camera into build/checkers-cv): leave
one camera out. Prints, per camera and in all, the share of readable points read right (count
and side) and the frames whose readable points are all right, out of the frames with every point
readable and of all. Exits 0 without the data.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from board_rules import Position  # noqa: E402
from training.checkers_data import DATA, RealFrame, real_frames  # noqa: E402
from vision.checkers import Palette, learn_palette, read_checkers  # noqa: E402
from vision.config import default_config  # noqa: E402
from vision.images import load_image  # noqa: E402
from vision.learned_checkers import CheckerNet, combine, points_under, read_points, slot_places  # noqa: E402
from vision.observe import dice_discs, read_dice_on_board  # noqa: E402
from vision.view import view  # noqa: E402

CV = Path(__file__).resolve().parents[1] / "build" / "checkers-cv"
PALETTE_FRAMES = {"wbf": "frame0"}  # a camera's frame of a known position, to learn the classical palette on
READERS = ("classical", "learned", "hybrid")


def palette_for(frame: RealFrame, frames: list[RealFrame]) -> Palette | None:
    """The classical reader's palette for a frame's camera: learned on its palette frame's labelled position."""
    name = PALETTE_FRAMES.get(frame.camera)
    if name is None:
        return None
    f = next(x for x in frames if x.name == name)
    pos = Position.from_dict(
        {"variant": "backgammon", "turn": "white", "points": list(f.points), "bar": {"white": 0, "black": 0}}
        | {"off": {"white": 0, "black": 0}}
    )
    return learn_palette(f.geometry, load_image(DATA / f"{name}.jpg"), pos)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cv", type=Path, default=CV, help="folder of the models trained without each camera")
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to do", file=sys.stderr)
        return 0
    frames = real_frames()
    missing = sorted({f.camera for f in frames if not (args.cv / f"checkers-without-{f.camera}.onnx").exists()})
    if missing:
        print(f"no model trained without {missing} in {args.cv} (make train-checkers-cv): their frames left out")
        frames_read = [f for f in frames if f.camera not in missing]
    else:
        frames_read = frames
    right: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # (camera, reader) -> points right, known
    exact: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # whole, of whole, any, of any
    palettes: dict[str, Palette | None] = {}
    for f in frames_read:
        image = load_image(DATA / f"{f.name}.jpg")
        if f.camera not in palettes:
            palettes[f.camera] = palette_for(f, frames)
        v = view(f.geometry, image)
        net = CheckerNet(args.cv / f"checkers-without-{f.camera}.onnx")
        ignore = dice_discs(read_dice_on_board(default_config(), f.geometry, image), v.layout.profile.die_size_mm)
        classical = read_checkers(f.geometry, v, palettes[f.camera], ignore=ignore)
        learned, _, probs = read_points(v, net, ignore=ignore)
        under = points_under(v.layout, ignore, probs, classical.points)
        readings = {
            "classical": classical.points,
            "learned": learned,
            "hybrid": combine(learned, classical.points, slot_places(v.layout)[2], classical.off, under),
        }
        line = [f"{f.name:10s} {f.camera:10s}"]
        for reader, points in readings.items():
            known = [(t, r) for t, r in zip(f.points, points) if t is not None]
            ok = sum(t == r for t, r in known)
            whole = len(known) == 24
            for key in ((f.camera, reader), ("all", reader)):
                right[key][0] += ok
                right[key][1] += len(known)
                e = exact[key]
                e[0] += whole and ok == len(known)
                e[1] += whole
                e[2] += ok == len(known)
                e[3] += 1
            wrong = [(i + 1, t, r) for i, (t, r) in enumerate(zip(f.points, points)) if t is not None and t != r]
            line.append(f"{reader} {len(known) - ok} wrong {wrong[:4]}{'...' if len(wrong) > 4 else ''}")
        print("  ".join(line))
    print()
    print("held-out camera: points read right (count and side) / frames read exactly (every point readable; any)")
    cameras = sorted({f.camera for f in frames_read}) + ["all"]
    print(f"{'camera':12s} " + " ".join(f"{r:>30s}" for r in READERS))
    for cam in cameras:
        cells = []
        for reader in READERS:
            ok, n = right[(cam, reader)]
            e = exact[(cam, reader)]
            cells.append(f"{ok}/{n} {100 * ok / max(n, 1):5.1f}%  {e[0]}/{e[1]}; {e[2]}/{e[3]}")
        print(f"{cam:12s} " + " ".join(f"{c:>30s}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
