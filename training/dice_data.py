"""The labelled dice photos in ``../shared/data/dice``: reading their YOLO labels, and the folds of nell-byler/train.

Imports no torch, so the benchmarks use it too. ``nell-byler/test`` is held out: nothing here reads it.
"""

from __future__ import annotations

from pathlib import Path

import cv2

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice"
FOLDS = 5
SHIPPED_HOLDOUT_FOLD = 4  # the fifth of nell-byler/train the shipped model never saw


def yolo_folder(folder: Path) -> list[tuple[Path, list[tuple[int, float, float, float, float]]]]:
    """(image, [(value, cx, cy, w, h) in px]) for every labelled image of a YOLO folder (class k is face k + 1)."""
    if "nell-byler" in folder.parts and "test" in folder.parts:
        raise SystemExit("nell-byler/test is held out: never read")
    items = []
    for img in sorted(folder.glob("*.jpg")):
        label = img.with_suffix(".txt")
        if not label.exists():
            continue
        im = cv2.imread(str(img))
        if im is None:
            continue
        hh, ww = im.shape[:2]
        truth = []
        for row in label.read_text().split("\n"):
            parts = row.split()
            if len(parts) == 5:
                k, cx, cy, w, h = int(parts[0]), *map(float, parts[1:])
                truth.append((k + 1, cx * ww, cy * hh, w * ww, h * hh))
        items.append((img, truth))
    return items


def die_side(truth: list[tuple[int, float, float, float, float]], whole_die_boxes: bool) -> float | None:
    """A photo's die side in px from its labels (``yolo_folder``'s): the median box's larger side. Where the boxes
    hold a face's pips only (matteop65: the face a little larger), 1.1 times that of the faces other than one (a one's box is its pip);
    None without such a box."""
    boxes = sorted(max(w, h) for v, _cx, _cy, w, h in truth if whole_die_boxes or v != 1)
    if not boxes:
        return None
    mid = len(boxes) // 2
    side = boxes[mid] if len(boxes) % 2 else (boxes[mid - 1] + boxes[mid]) / 2
    return side * (1.0 if whole_die_boxes else 1.1)


def at_die_size(image, truth, whole_die_boxes: bool, die_px: float):
    """``(image scaled so that its labelled die is die_px across, the scale)``, as a calibrated board's
    camera would see it; None where no box gives the die's size (:func:`die_side`)."""
    side = die_side(truth, whole_die_boxes)
    if side is None:
        return None
    k = die_px / side
    return cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR), k


def nell_fold(data: Path, k: int | None) -> tuple[set[str], set[str]]:
    """nell-byler/train's image names (in training, held out) for fold ``k`` of :data:`FOLDS` (None: all in training)."""
    names = sorted(p.name for p in (data / "nell-byler" / "train").glob("*.jpg") if p.with_suffix(".txt").exists())
    out = {n for i, n in enumerate(names) if k is not None and i % FOLDS == k}
    return set(names) - out, out
