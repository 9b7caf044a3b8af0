"""The camera pipeline on the real tournament frames of ../shared/data/boards/backgammoncv.

Usage: python benchmarks/tournament_frames.py OUTPUT_DIR

The frames carry no markers, so each camera is calibrated from hand-measured
corners of its playing field (both halves and the bar; listed below per
camera) with the board profile of that board (``vision.toml``,
``[board_profile.<name>]``) and the side of the home boards. What each frame
shows comes from the hand labels in ``tests/data/boards/backgammoncv.json``
(:data:`LABELS`): :data:`TRUTH` holds the hand-free frames' positions and
dice, :data:`HANDS` the frames with an arm or a hand over the field. For a
camera with a palette frame, the palette (colours, and where the empty board
shows its own edges) is learned on it from its labelled position and used for
every frame of that camera; a camera without one is read as a photo is
(``tavli vision read`` without a palette). For each frame this writes OUTPUT_DIR/<name>.png:
the frame with the gated observation drawn on it, and
OUTPUT_DIR/<name>-ungated.png with the checker reading the gate held back. It
prints both readings, the points read wrong, whether a hand-free frame was
read exactly (points, bar and dice) and whether a frame with a hand over it
was reported occluded, then a summary line. The frames are GPL-3.0 (their
LICENSE beside them): the annotated images are for looking at, not for
committing.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from board_rules import Position  # noqa: E402
from vision.annotate import annotate  # noqa: E402
from vision.calibrate import Geometry, calibrate  # noqa: E402
from vision.checkers import Palette, learn_palette, read_checkers  # noqa: E402
from vision.images import load_image  # noqa: E402
from vision.observe import Observation, read_frame, reads_as_photo  # noqa: E402
from vision.read_photo import read_photo  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "boards" / "backgammoncv"
LABELS = Path(__file__).resolve().parents[1] / "tests" / "data" / "boards" / "backgammoncv.json"


@dataclass(frozen=True)
class Camera:
    """One fixed camera: its frames, the field corners (top-left, top-right, bottom-right,
    bottom-left as white sees the board, image px), the board profile and white's home side."""

    frames: tuple[str, ...]
    corners: tuple[tuple[float, float], ...]
    profile: str
    home: str
    palette_frame: str | None = None
    note: str = ""


# White is the side with the light checkers. In the WBF stream white sits at the bottom of the
# picture and bears off from the bottom-left quarter (frame3: white's checkers left there, the
# borne-off ones in the tray on the right), so white's point 1 is the bottom-left point: home "left".
# The corners are where the plane of the checkers' tops puts the field's corners: the camera looks
# down at an angle from close by, so the tops of the checkers (about a centimetre above the field)
# stand up to 12 px off where the field's own corners would put them. They were fitted to the 30
# checker centres of frame0 (RMS 3.3 px) over the field's drawn corners (213.7,33) (894.8,24)
# (871.1,647) (236.7,655), which read 20 points wrong on the four clear frames instead of 5.
WBF = Camera(
    ("frame0", "frame1", "frame2", "frame3", "frame4", "frame5", "frame6", "test8", "test9"),
    ((202.7, 20.3), (903.2, 28.7), (867.1, 650.9), (237.7, 662.9)),
    "tournament",
    "left",
    "frame0",
    "WBF/WTC 2022 stream, one fixed camera",
)


def load_labels(path: Path = LABELS) -> dict[str, dict]:
    """The hand labels of the frames (see the file's ``conventions``), by file name without its extension.

    Raises OSError if the file cannot be read and ValueError if it is not JSON.
    """
    frames = json.loads(path.read_text(encoding="utf-8"))["frames"]
    return {Path(name).stem: label for name, label in frames.items()}


LABELLED = load_labels()


def labelled_camera(frames: tuple[str, ...], profile: str, note: str) -> Camera:
    """A camera whose field corners and home side are those labelled on its first frame
    (corners listed from white's seat, so ``home`` is as white sees the board)."""
    label = LABELLED[frames[0]]
    corners = tuple((float(x), float(y)) for x, y in label["corners"])
    return Camera(frames, corners, profile, label["home"], note=note)


# Other cameras: white sits at the top of both pictures, so their corners start at the image's
# bottom right. Their boards have no profile of their own yet, so their readings are not expected right.
OTHERS = (
    labelled_camera(
        ("test10", "test11", "test12"),
        "rendered",
        "fm gammon board (walnut case, gold and black points, logos), pearl (white) and gold checkers; no profile",
    ),
    labelled_camera(("test1",), "tournament", "the WBF-type board from another camera; its trays lie on white's left"),
)
CAMERAS = (WBF, *OTHERS)


def truth_of(label: dict) -> dict | None:
    """A labelled frame's position as ``points`` (24 signed counts in white's numbering), ``bar`` and
    ``off`` (white, black; off None where the trays do not tell) and ``dice`` (sorted), or None where
    the frame shows no board, a hand is over it or a point or the bar cannot be read."""
    points, bar, off = label["points"], label["bar"], label["off"]
    if not label["board"] or label["occluded"] or points is None or None in points or bar is None:
        return None
    return {
        "points": list(points),
        "bar": (bar["white"], bar["black"]),
        "off": None if off is None else (off["white"], off["black"]),
        "dice": sorted(label["dice"]),
    }


# Positions read by eye, from the labels: the hand-free frames whose every point and bar are readable.
TRUTH: dict[str, dict] = {name: truth for name, label in LABELLED.items() if (truth := truth_of(label)) is not None}
# Frames of these cameras with a hand or an arm over the field: never to be reported readable.
HANDS = tuple(name for camera in CAMERAS for name in camera.frames if LABELLED.get(name, {}).get("occluded"))


def geometry_of(camera: Camera, image) -> Geometry:
    return calibrate(image, corners=camera.corners, field=True, profile=camera.profile, home=camera.home)


def palette_of(camera: Camera) -> Palette | None:
    """The palette learned on the camera's palette frame (its position from :data:`TRUTH`), or None."""
    if camera.palette_frame is None or not (DATA / f"{camera.palette_frame}.jpg").exists():
        return None
    image = load_image(DATA / f"{camera.palette_frame}.jpg")
    truth = TRUTH[camera.palette_frame]
    assert truth is not None
    position = Position.from_dict(
        {
            "variant": "backgammon",
            "turn": "white",
            "points": truth["points"],
            "bar": {"white": truth["bar"][0], "black": truth["bar"][1]},
            "off": {"white": truth["off"][0], "black": truth["off"][1]},
        }
    )
    return learn_palette(geometry_of(camera, image), image, position)


def read(name: str) -> tuple[Camera, Observation, object, Geometry]:
    """The camera of frame ``name``, its gated observation, the ungated checker reading and the geometry
    read at. As ``tavli vision read`` reads: a camera with a palette frame at its calibration with that
    palette; one without, as a photo (``vision.observe.reads_as_photo``), at its corners fitted as
    ``read --corners`` fits them where no profile was measured for its board."""
    camera = next(c for c in CAMERAS if name in c.frames)
    image = load_image(DATA / f"{name}.jpg")
    palette = _palettes.setdefault(camera.frames, palette_of(camera))
    if palette is None and camera.profile == "rendered":
        reading = read_photo(image, corners=camera.corners, home=camera.home)
        geometry, obs = reading.geometry, reading.observation
        return camera, obs, read_checkers(geometry, image, reading.palette), geometry
    geometry = geometry_of(camera, image)
    obs = read_frame(geometry, image, palette, photo=reads_as_photo(geometry, palette))
    ungated = read_checkers(geometry, image, palette)
    return camera, obs, ungated, geometry


_palettes: dict[tuple[str, ...], Palette | None] = {}


def dice_values(obs: Observation) -> list[int | None]:
    """The values of the dice the observation reports, sorted (unreadable ones, None, first)."""
    return sorted((d.value for d in obs.dice), key=lambda v: (v is not None, v or 0))


def read_exactly(name: str, obs: Observation) -> bool | None:
    """Whether the gated observation gives the labelled points, bar and dice; None without a truth."""
    truth = TRUTH.get(name)
    if truth is None:
        return None
    c = obs.checkers
    return (
        c is not None
        and list(c.points) == truth["points"]
        and tuple(c.bar) == truth["bar"]
        and dice_values(obs) == truth["dice"]
    )


def errors(name: str, reading) -> list[tuple[int, int, int]] | None:
    """Points read wrong, as ``(point, true count, read count)``; None without a truth."""
    truth = TRUTH.get(name)
    if truth is None:
        return None
    return [(i + 1, t, r) for i, (t, r) in enumerate(zip(truth["points"], reading.points)) if t != r]


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):  # -h / --help: the usage, never a folder of that name
        print(__doc__, file=sys.stderr)
        return 0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to do", file=sys.stderr)
        return 0
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    exact: list[bool] = []
    reported: list[bool] = []
    for camera in CAMERAS:
        for name in camera.frames:
            if not (DATA / f"{name}.jpg").exists():
                continue
            _, obs, ungated, geometry = read(name)
            image = load_image(DATA / f"{name}.jpg")
            cv2.imwrite(str(out / f"{name}.png"), annotate(image, geometry, obs))
            cv2.imwrite(
                str(out / f"{name}-ungated.png"),
                annotate(image, geometry, Observation("settling", ungated, obs.dice, None, obs.occlusion)),
            )
            truth = TRUTH.get(name)
            exactly = read_exactly(name, obs)
            if exactly is not None:
                exact.append(exactly)
            occluded = None
            if name in HANDS:
                occluded = obs.status == "occluded"
                reported.append(occluded)
            print(
                json.dumps(
                    {
                        "frame": name,
                        "profile": camera.profile,
                        "home": camera.home,
                        "status": obs.status,
                        "occluded": list(obs.occlusion.occluded) if obs.occlusion else None,
                        "board_edges_seen": round(obs.occlusion.seen_fraction, 3) if obs.occlusion else None,
                        "ungated_points": list(ungated.points),
                        "bar": list(ungated.bar),
                        "off": list(ungated.off),
                        "dice": [d.value for d in obs.dice],
                        "wrong_points": errors(name, obs.checkers or ungated),
                        "bar_right": None if truth is None else tuple(ungated.bar) == truth["bar"],
                        "off_right": None
                        if truth is None or truth["off"] is None
                        else tuple(ungated.off) == truth["off"],
                        "dice_right": None if truth is None else dice_values(obs) == truth["dice"],
                        "read_exactly": exactly,
                        "hand_over_it": name in HANDS,
                        "reported_occluded": occluded,
                    }
                )
            )
    print(
        f"hand-free frames read exactly: {sum(exact)} of {len(exact)}; "
        f"occluded frames reported occluded: {sum(reported)} of {len(reported)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
