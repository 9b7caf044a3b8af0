"""The slots the learned checker reader trains and is measured on: labelled real frames and rendered ones.

Imports no torch, so the benchmarks use it too. The real frames are the images of
``../shared/data/boards/backgammoncv`` labelled in ``tests/data/boards/backgammoncv.json``; each is
calibrated from its labelled field corners (the WBF camera's from the plane of its checkers'
tops, as ``benchmarks/tournament_frames.py`` does) with the profile of its board where one is
measured, the renderer's otherwise. A frame's camera (:attr:`RealFrame.camera`) is the unit of
leave-one-camera-out cross-validation: frames of one fixed camera, or one photo.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from board_rules import Position, find_variant
from tests.positions import random_backgammon, random_plakoto, random_same_direction
from vision.calibrate import Geometry, calibrate
from vision.images import load_image
from vision.learned_checkers import CROP_PER_DIAMETER, crops_at, slot_places
from vision.profile import BoardProfile, ProfileError, layout, read_profile_file
from vision.render import DieSpec, render
from vision.render_draw import DIE_COLOURS, random_styles
from vision.view import view

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "boards" / "backgammoncv"
LABELS = ROOT / "tests" / "data" / "boards" / "backgammoncv.json"

PATCH = 48  # px on a side of a stored slot patch...
PATCH_PER_DIAMETER = 2.2  # ...covering this many checker diameters: room to shift, turn and scale a crop in it
RENDER_SEEDS = 950000  # the renderer's seeds for training frames start here (used by nothing else)

# The WBF camera's corners where the plane of its checkers' tops puts the field's corners
# (benchmarks/tournament_frames.py: fitted to frame0's checker centres).
WBF_CORNERS = ((202.7, 20.3), (903.2, 28.7), (867.1, 650.9), (237.7, 662.9))
# Boards with a measured profile in vision.toml; the others are read with the renderer's.
PROFILES = {"wbf": "tournament", "wbf-2": "tournament"}
# The other labelled boards' profiles, measured on their photos (a board's camera names its table).
PHOTO_PROFILES = ROOT / "tests" / "data" / "boards" / "profiles.toml"


def measured_profile(camera: str) -> str | BoardProfile | None:
    """The measured profile of a labelled camera's board: a name of vision.toml's, a table of
    :data:`PHOTO_PROFILES`, or None where none was measured."""
    if camera in PROFILES:
        return PROFILES[camera]
    try:
        return read_profile_file(PHOTO_PROFILES, camera)
    except ProfileError:
        return None


@dataclass(frozen=True)
class RealFrame:
    """A labelled real frame: its name, camera, geometry and true signed counts (None where hidden)."""

    name: str
    camera: str
    geometry: Geometry
    points: tuple[int | None, ...]


@dataclass
class Slots:
    """Slot patches (N x PATCH x PATCH x 3 Lab uint8, rows from the point's base), their classes
    (0 empty, 1 light, 2 dark), and the frame (an index into ``names``) each comes from."""

    patches: np.ndarray
    labels: np.ndarray
    frame: np.ndarray
    names: list[str]


def real_frames(data: Path = DATA, labels: Path = LABELS) -> list[RealFrame]:
    """Every labelled frame with a board, its field corners and at least one readable point, calibrated."""
    frames = json.loads(labels.read_text(encoding="utf-8"))["frames"]
    out = []
    for file, label in frames.items():
        path = data / file
        if not label.get("board") or label.get("corners") is None or label.get("points") is None or not path.exists():
            continue
        camera = label.get("camera") or Path(file).stem
        corners = WBF_CORNERS if camera == "wbf" else label["corners"]
        image = load_image(path)
        geometry = calibrate(
            image, corners=corners, field=True, profile=PROFILES.get(camera, "rendered"), home=label["home"]
        )
        out.append(RealFrame(Path(file).stem, camera, geometry, tuple(label["points"])))
    return out


def slot_labels(points, per_row: int) -> tuple[np.ndarray, np.ndarray]:
    """Classes of the first-row slots of each point (24 x per_row) and which points are known (24 bools)."""
    labels = np.zeros((24, per_row), np.int64)
    known = np.ones(24, bool)
    for i, n in enumerate(points):
        if n is None:
            known[i] = False
            continue
        labels[i, : min(abs(n), per_row)] = 1 if n > 0 else 2
    return labels, known


def patches_of(geometry: Geometry, image: np.ndarray, offset_mm=(0.0, 0.0)) -> tuple[np.ndarray, int]:
    """Every first-row slot's patch of a frame (24 * K x PATCH x PATCH x 3), its centres moved by ``offset_mm``."""
    v = view(geometry, image)
    centres, dirs, k = slot_places(v.layout)
    side = PATCH_PER_DIAMETER * v.layout.profile.checker_diameter_mm
    return crops_at(v.lab, v.ppm, centres + np.float32(offset_mm), dirs, side, size=PATCH), k


def real_slots(frames: list[RealFrame], data: Path = DATA) -> Slots:
    """The slots of the readable points of real frames."""
    patches, labels, which = [], [], []
    for f_i, f in enumerate(frames):
        image = load_image(data / f"{f.name}.jpg")
        p, k = patches_of(f.geometry, image)
        lab, known = slot_labels(f.points, k)
        keep = np.repeat(known, k)
        patches.append(p[keep])
        labels.append(lab.reshape(-1)[keep])
        which.append(np.full(int(keep.sum()), f_i))
    return Slots(np.concatenate(patches), np.concatenate(labels), np.concatenate(which), [f.name for f in frames])


def random_position(rng: random.Random) -> Position:
    """A random backgammon, plakoto or same-direction position (stacks up to 15)."""
    kind = rng.random()
    if kind < 0.6:
        return random_backgammon(rng)
    if kind < 0.75:
        return random_plakoto(rng)
    return random_same_direction(rng, find_variant(rng.choice(["fevga", "long-nardy", "gul-bara"])))


def _die_place(rng: np.random.Generator) -> tuple[float, float]:
    """Where a rendered die lies: mostly on a checker's place (on a checker or an empty point), else anywhere on the field."""
    if rng.random() < 0.75:
        x, y, _ = layout().checker_slot(int(rng.integers(1, 25)), int(rng.integers(0, 5)))
        return float(x + rng.uniform(-10, 10)), float(y + rng.uniform(-10, 10))
    return float(rng.uniform(60, 580)), float(rng.uniform(60, 480))


def rendered_slots(count: int, first_seed: int = RENDER_SEEDS, empty_share: float = 0.5) -> Slots:
    """The slots of ``count`` rendered frames of random positions, boards and checkers, cameras, light,
    noise, blur and JPEG, with dice (most on checkers' places) and a cube about, read through a slightly misregistered grid
    (each frame's slots moved together by up to 3 mm); ``empty_share`` of the empty slots kept."""
    patches, labels, which, names = [], [], [], []
    for i in range(count):
        seed = first_seed + i
        rng = np.random.default_rng([seed, 11])
        position = random_position(random.Random(seed))
        board, checkers = random_styles(rng)
        colours = sorted(DIE_COLOURS)
        dice = [
            DieSpec(
                int(rng.integers(1, 7)),
                at=_die_place(rng),
                colour=colours[int(rng.integers(len(colours)))],
                cocked=bool(rng.random() < 0.1),
            )
            for _ in range(int(rng.integers(0, 6)))
        ]
        cube = (int(2 ** rng.integers(0, 7)), ("centre", "white", "black")[int(rng.integers(3))])
        size = ((1280, 720), (1280, 960), (960, 720), (1600, 1200))[int(rng.integers(4))]
        frame = render(
            position,
            dice=dice,
            cube=cube if rng.random() < 0.5 else None,
            style=board,
            checkers=checkers,
            seed=seed,
            size=size,
            tilt=float(rng.uniform(0, 30)),
            noise=float(rng.uniform(0, 8)),
            blur=float(rng.uniform(0, 1.6)),
            jpeg=int(rng.integers(40, 96)),
        )
        hom = tuple(tuple(float(v) for v in row) for row in frame.homography)
        geometry = Geometry(hom, (int(size[0]), int(size[1])), "corners")
        shift = rng.uniform(-3, 3, 2)
        p, k = patches_of(geometry, frame.image, shift)
        lab, _ = slot_labels(position.points, k)
        lab = lab.reshape(-1)
        keep = (lab > 0) | (rng.random(len(lab)) < empty_share)
        patches.append(p[keep])
        labels.append(lab[keep])
        which.append(np.full(int(keep.sum()), i))
        names.append(f"rendered-{seed}")
    return Slots(np.concatenate(patches), np.concatenate(labels), np.concatenate(which), names)


CROP_IN_PATCH = CROP_PER_DIAMETER / PATCH_PER_DIAMETER  # a network crop's side, as a share of a patch's
