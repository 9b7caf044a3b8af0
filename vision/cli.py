"""``tavli vision``: the camera pipeline's commands (calibrate, learn, read, dice, grab, render).

Owns their argument parsing and file I/O: :mod:`referee.cli` registers them (:func:`add_parser`)
and runs them (:func:`run`). The pipeline's modules are imported inside the commands that use
them, lazy on purpose: every ``tavli`` command builds this parser, and the checker reader builds
its stack models at import (about a second). May import ``board_rules`` types; must not import
``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from typing import TextIO

import cv2
import numpy as np

from board_rules import Position, Side
from board_rules.errors import InvalidPositionError
from board_rules.untrusted import InputError, check_output, is_digits, read_text, whole_number
from vision.render import BOARD_STYLES, CHECKER_STYLES, CUBE_COLOURS, CUBE_PLACES, render


def _die(text: str) -> int:
    """A die of ``--dice``: 1..6 in ASCII digits (argparse's ``type``)."""
    return whole_number(text, "--dice", 1, 6, argparse.ArgumentTypeError)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``vision`` and its sub-commands on a parent parser."""
    vision = sub.add_parser("vision", help="the camera pipeline: render frames of a table, calibrate a camera")
    vsub = vision.add_subparsers(dest="vision_command", required=True)
    c = vsub.add_parser("calibrate", help="find the board in a camera image and save its geometry")
    c.add_argument("image", help="a camera image of the board (ArUco markers at its corners)")
    c.add_argument(
        "--corners",
        help="x1,y1,...,x4,y4: the board's outer corners (top-left, top-right, "
        "bottom-right, bottom-left as white sees it) for boards without markers",
    )
    c.add_argument(
        "--field",
        action="store_true",
        help="the --corners are those of the playing field (both halves "
        "and the bar, without frame or trays): for boards of other proportions",
    )
    c.add_argument(
        "--profile",
        default="rendered",
        help="the board's proportions: 'rendered' (the renderer's board, "
        "the default), a [board_profile.<name>] of vision.toml, e.g. 'tournament', or your own board's "
        "FILE.toml (one such table; FILE.toml:NAME for one of several), carried in the geometry",
    )
    c.add_argument(
        "--home",
        choices=("right", "left"),
        default="right",
        help="the side of white's home board as white sees it (right: white's point 1 bottom right, the default)",
    )
    standing = c.add_mutually_exclusive_group()
    standing.add_argument(
        "--relief",
        action="store_true",
        default=None,
        help="read the checkers' tops where the camera sees them standing up (tall stacks far from under the "
        "camera): the camera's eye is worked out from the calibration. The default for every board but "
        "the renderer's",
    )
    standing.add_argument(
        "--flat",
        dest="relief",
        action="store_false",
        help="read the checkers as if flat on the field, as the renderer draws them (the default for --profile rendered)",
    )
    c.add_argument("-o", "--output", required=True, help="where to write geometry.json")
    r = vsub.add_parser(
        "read", help="read checkers, dice and cube from a camera image or a photo: prints the observation JSON"
    )
    r.add_argument("image", help="a camera image of the calibrated board, or without --geometry any photo of a board")
    r.add_argument(
        "--geometry",
        help="geometry.json from 'tavli vision calibrate' (without it the board's playing field "
        "is found in the photo, its bar and points fitted to it, and the checker colours decided from it)",
    )
    r.add_argument(
        "--corners",
        help="without --geometry: x1,y1,...,x4,y4, the playing field's corners in image px "
        "(both halves and the bar), clockwise, the first two along one row of twelve points",
    )
    r.add_argument(
        "--home",
        choices=("right", "left"),
        help="without --geometry: the side of white's home board as white "
        "sees it (right: white's point 1 on white's right, the default)",
    )
    r.add_argument(
        "--white-at",
        choices=("auto", "bottom", "top"),
        help="without --geometry: the field's row white sits at (bottom: the photo's bottom row, or "
        "the row of the last two --corners; auto, the default without --corners: the way round "
        "that gives both sides fewer pips to go)",
    )
    r.add_argument(
        "--palette",
        help="checker colours from 'tavli vision learn' (default: decided from the photo "
        "without --geometry; else white is the lighter side)",
    )
    r.add_argument(
        "--id",
        action="store_true",
        help="add the gnubg Position ID and Match ID of what is seen (with the "
        "dice and cube), as a player on roll would paste them into gnubg",
    )
    r.add_argument(
        "--on-roll",
        choices=("white", "black"),
        help="with --id: the side on roll (default: the side whose right-hand half the dice lie in, else white)",
    )
    r.add_argument("--annotate", metavar="PNG", help="also write the image with the reading drawn on it")
    r.add_argument("--config", help="a vision.toml with other thresholds ([find_board] for the field finder)")
    lp = vsub.add_parser("learn", help="learn the checker colours from an image of a known position (the start)")
    lp.add_argument("image", help="a camera image of the calibrated board showing POSITION")
    lp.add_argument("--geometry", required=True, help="geometry.json from 'tavli vision calibrate'")
    lp.add_argument(
        "--position", required=True, help="Position JSON of what the image shows (e.g. from 'tavli rules start')"
    )
    lp.add_argument("-o", "--output", required=True, help="where to write palette.json")
    gr = vsub.add_parser("grab", help="take a still from a camera (to calibrate it, or to learn the colours)")
    gr.add_argument("--camera", default="0", help="a camera number (default 0) or a video file")
    gr.add_argument(
        "--size", help="WxH px to ask the camera for, e.g. 1280x720 (tavli play asks for the calibrated size)"
    )
    gr.add_argument(
        "--settle", type=int, default=10, help="frames to let pass first while exposure settles (default 10)"
    )
    gr.add_argument("-o", "--output", required=True, help="image file to write (.png, .jpg)")
    d = vsub.add_parser("dice", help="find and read every die in a photo (no board needed): prints JSON")
    d.add_argument("image", help="any photo or camera frame with dice in it")
    d.add_argument("--config", help="a vision.toml with other thresholds")
    d.add_argument(
        "--geometry", help="a calibrated board's geometry JSON: dice on its playing field only, at a die's size there"
    )
    d.add_argument(
        "--reader",
        choices=("verified", "learned", "classical"),
        help="the learned network, the classical pip reader, or the network's dice verified by it "
        "(default: the config's photo_reader, board_reader with --geometry)",
    )
    p = vsub.add_parser("render", help="draw a camera frame of a position, with ground-truth labels")
    p.add_argument("position_file", nargs="?", help="Position JSON file (or give --position)")
    p.add_argument("--position", dest="position_opt", metavar="POS.json", help="Position JSON file")
    p.add_argument("-o", "--output", required=True, help="image file to write (.png, .jpg)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--dice",
        nargs="*",
        type=_die,
        default=[],
        metavar="D",
        help="die values, placed at random in the right-hand half",
    )
    p.add_argument(
        "--cube", nargs=2, metavar=("VALUE", "WHERE"), help=f"cube value and place ({', '.join(CUBE_PLACES)})"
    )
    p.add_argument(
        "--cube-colour",
        choices=sorted(CUBE_COLOURS),
        default="white",
        help="the cube's face (white: black numbers; red, black: light ones)",
    )
    p.add_argument("--style", choices=sorted(BOARD_STYLES), default="walnut")
    p.add_argument("--checkers", choices=sorted(CHECKER_STYLES), default="matte")
    p.add_argument("--hand", action="store_true", help="a hand over part of the board")
    p.add_argument(
        "--relief", action="store_true", help="the checkers standing on the field: tops lifted, sides showing"
    )
    p.add_argument(
        "--profile",
        default="rendered",
        help="the board drawn: 'rendered' (the default), a [board_profile.<name>] of vision.toml, e.g. "
        "'tournament', or FILE.toml[:NAME]; calibrate the frame with the same --profile",
    )
    p.add_argument("--home", choices=("right", "left"), default="right", help="the side of white's home board")
    p.add_argument(
        "--stitch", type=_colour, default=None, metavar="B,G,R", help="stitch the points' sides in this colour"
    )
    p.add_argument(
        "--glare", type=float, default=0.0, metavar="0..1", help="a lamp's reflection over the frame, this strong"
    )
    p.add_argument("--truth", "--labels", dest="truth", help="write the ground truth JSON here")


def run(args: argparse.Namespace, stdout: TextIO | None = None) -> int:
    """Carry out a parsed ``vision`` command; returns the exit status.

    Raises :class:`InvalidPositionError` for a bad position file (the caller
    prints it and exits 2); a bad die, cube or output path prints a message and returns 2.
    """
    stdout = sys.stdout if stdout is None else stdout
    for flag in ("output", "annotate", "truth"):  # where the work goes is checked before the work
        if getattr(args, flag, None):
            check_output(getattr(args, flag), "-o" if flag == "output" else f"--{flag}")
    if args.vision_command == "calibrate":
        return _calibrate(args, stdout)
    if args.vision_command == "dice":
        return _dice(args, stdout)
    if args.vision_command == "read":
        return _read(args, stdout)
    if args.vision_command == "learn":
        return _learn(args, stdout)
    if args.vision_command == "grab":
        return _grab(args, stdout)
    if args.vision_command != "render":  # pragma: no cover - argparse restricts it
        return 2
    path = args.position_opt or args.position_file
    if path is None:
        raise InvalidPositionError("position: missing; give POSITION_FILE or --position POS.json", "position", None)
    position = _read_position(path)
    try:
        cube = None if args.cube is None else (whole_number(args.cube[0], "--cube", 1, 64), args.cube[1])
        frame = render(
            position,
            dice=[(d, None) for d in args.dice],
            cube=cube,
            cube_colour=args.cube_colour,
            seed=args.seed,
            style=args.style,
            checkers=args.checkers,
            hand=args.hand,
            relief=args.relief,
            profile=_profile_arg(args.profile),
            home=args.home,
            stitch=args.stitch,
            glare=args.glare,
        )
    except ValueError as exc:
        print(f"tavli vision render: {exc}", file=sys.stderr)
        return 2
    if not _write_image("render", args.output, frame.image):
        return 2
    if args.truth:
        try:
            with open(args.truth, "w", encoding="utf-8") as fh:
                fh.write(_dumps(frame.truth(), indent=1))
        except OSError as exc:
            raise InputError(f"--truth: {args.truth!r}: cannot write it ({exc.strerror or exc})") from None
    print(f"wrote {args.output}" + (f" and {args.truth}" if args.truth else ""), file=stdout)
    return 0


def _dumps(data, indent: int | None = None) -> str:
    """``data`` as JSON text, a numpy number or bool that reached it written as the Python one.
    Raises TypeError for anything else that is no JSON."""

    def plain(v):
        if isinstance(v, np.generic):
            return v.item()
        raise TypeError(f"{type(v).__name__} {v!r}: not JSON")

    return json.dumps(data, indent=indent, default=plain)


def _colour(text: str) -> tuple[int, int, int]:
    """``--stitch``: a BGR colour written ``B,G,R``, each 0..255."""
    parts = text.split(",")
    try:
        bgr = tuple(int(v) for v in parts)
    except ValueError:
        bgr = ()
    if len(bgr) != 3 or not all(0 <= v <= 255 for v in bgr):
        raise argparse.ArgumentTypeError(f"{text!r}: expected B,G,R, three whole numbers 0..255")
    return bgr  # type: ignore[return-value]


def _profile_arg(text: str):
    """``--profile``: a profile's name, or a profile file's board (``FILE.toml`` or ``FILE.toml:NAME``).
    Raises :class:`CalibrationError` for a profile file that cannot be read or holds no such board."""
    from vision.calibrate import CalibrationError  # lazy on purpose: see the module docstring
    from vision.profile import ProfileError, read_profile_file

    path, sep, name = text.partition(".toml:")
    if not sep and not text.endswith(".toml"):
        return text
    try:
        return read_profile_file(path + ".toml" if sep else text, name or None)
    except ProfileError as exc:
        raise CalibrationError(f"--profile: {exc}") from None


def _calibrate(args: argparse.Namespace, stdout: TextIO) -> int:
    """``tavli vision calibrate``: raises :class:`CalibrationError` when the board is not found or the profile is unknown."""
    from vision.calibrate import CalibrationError, calibrate  # lazy on purpose: see the module docstring
    from vision.images import load_image
    from vision.profile import DEFAULT_PROFILE

    image = load_image(args.image)
    corners = _corners(args.corners)
    if args.field and corners is None:
        raise CalibrationError("--field: give the field's corners with --corners")
    geometry = calibrate(image, corners=corners, field=args.field, profile=_profile_arg(args.profile), home=args.home)
    # real checkers stand on the field: a real board is read in relief unless told otherwise
    relief = args.relief if args.relief is not None else geometry.profile != DEFAULT_PROFILE
    if relief:
        geometry = dataclasses.replace(geometry, relief=True)
    geometry.save(args.output)
    print(
        f"board found from {geometry.source} (reprojection {geometry.reprojection_px:.2f} px; "
        f"profile {geometry.profile}, home {geometry.home}, checkers read {'standing' if relief else 'flat'}); "
        f"wrote {args.output}",
        file=stdout,
    )
    return 0


def _read_position(path: str) -> Position:
    return Position.from_json(read_text(path, "position", InvalidPositionError))


def _read(args: argparse.Namespace, stdout: TextIO) -> int:
    """``tavli vision read``: the observation JSON of one image (its status is never ``stable``:
    stability needs consecutive frames). Without ``--geometry`` the field is found in the photo
    (:func:`vision.read_photo.read_photo`) and the JSON carries it as ``field``; with ``--id`` it
    carries ``gnubg`` (:func:`vision.read_photo.gnubg_id`; ``error`` where the reading makes no position).

    Raises :class:`vision.find_board.BoardNotFoundError` (``board-not-found: ...``) where no field is found,
    :class:`CalibrationError` for bad ``--corners`` or options that need no ``--geometry``.
    """
    from vision.annotate import annotate  # lazy on purpose: see the module docstring
    from vision.calibrate import CalibrationError, Geometry
    from vision.checkers import Palette
    from vision.config import VisionConfig, default_config
    from vision.find_board import FieldConfig
    from vision.images import load_image
    from vision.observe import read_frame, reads_as_photo
    from vision.read_photo import gnubg_id, read_photo

    config = VisionConfig.load(args.config) if args.config else default_config()
    palette = Palette.load(args.palette) if args.palette else None
    field = None
    if args.geometry:
        if args.corners or args.home or args.white_at:
            raise CalibrationError(
                "--corners, --home and --white-at are for a photo without --geometry (the geometry has its own)"
            )
        geometry = Geometry.load(args.geometry)
        image = _at_geometry_size("read", geometry, load_image(args.image))
        obs = read_frame(geometry, image, palette, config, photo=reads_as_photo(geometry, palette), sides=palette)
    else:
        corners = _corners(args.corners)
        image = load_image(args.image)
        field_config = FieldConfig.load(args.config) if args.config else None
        reading = read_photo(
            image,
            corners=corners,
            palette=palette,
            home=args.home or "right",
            white_at=args.white_at,
            config=config,
            field_config=field_config,
        )
        geometry, obs, field = reading.geometry, reading.observation, reading.field
    out = obs.to_dict()
    if field is not None:
        out["field"] = field.to_dict()
    notes: list[str] = []
    if args.id:
        try:
            ids = gnubg_id(obs, None if args.on_roll is None else Side(args.on_roll))
            out["gnubg"] = ids.to_dict()
            notes.append(f"gnubg ID {ids} ({ids.on_roll.value} on roll)")
        except InvalidPositionError as exc:
            out["gnubg"] = {"error": str(exc)}
            notes.append("no gnubg ID: " + str(exc))
            print(f"tavli vision read: no gnubg ID: {exc}", file=sys.stderr)
    print(_dumps(out), file=stdout)
    if args.annotate and not _write_image("read", args.annotate, annotate(image, geometry, obs, notes)):
        return 2
    return 0


def _corners(text: str | None) -> list[tuple[float, float]] | None:
    """``--corners x1,y1,...,x4,y4`` as four points (None where not given). Raises CalibrationError for anything else."""
    from vision.calibrate import CalibrationError  # lazy on purpose: see the module docstring

    if not text:
        return None
    try:
        values = [float(v) for v in text.split(",") if v.isascii()]
    except ValueError:
        values = []
    if len(values) != 8 or not all(math.isfinite(v) for v in values):
        raise CalibrationError(f"--corners: {text!r} must be eight numbers x1,y1,...,x4,y4")
    return [(values[i], values[i + 1]) for i in range(0, 8, 2)]


def _at_geometry_size(command: str, geometry, image):
    """The image at the size the geometry was calibrated at, scaled (and said) where it is the same
    picture at another resolution. Raises :class:`vision.observe.FrameSizeError` for another picture."""
    from vision.observe import at_calibrated_size  # lazy on purpose: see the module docstring

    scaled = at_calibrated_size(geometry, image)
    if scaled is not image:
        print(
            f"tavli vision {command}: note: the image was scaled to {geometry.image_size[0]}x{geometry.image_size[1]} px, "
            "the size the geometry was calibrated at",
            file=sys.stderr,
        )
    return scaled


def _write_image(command: str, path: str, image) -> bool:
    """Write ``image`` to ``path``; False, and said, where it cannot be (no such folder, an extension that is no image's)."""
    try:
        ok = cv2.imwrite(path, image)
    except cv2.error:
        ok = False
    if not ok:
        print(f"tavli vision {command}: {path!r}: cannot write an image there (use .png or .jpg)", file=sys.stderr)
    return ok


def _grab(args: argparse.Namespace, stdout: TextIO) -> int:
    """``tavli vision grab``: raises :class:`vision.images.ImageError` for a camera that cannot be opened or gives no frame."""
    from vision.images import ImageError, grab_frame  # lazy on purpose: see the module docstring

    size = None
    if args.size:
        w, x, h = args.size.lower().partition("x")
        if not (x and is_digits(w, 5) and is_digits(h, 5) and int(w) > 0 and int(h) > 0):
            raise ImageError(f"--size: {args.size!r}: expected WxH in px, e.g. 1280x720")
        size = (int(w), int(h))
    if args.settle < 0:
        raise ImageError(f"--settle: {args.settle}: expected a number of frames >= 0")
    frame = grab_frame(args.camera, size, args.settle)
    if not _write_image("grab", args.output, frame):
        return 2
    print(
        f"took a {frame.shape[1]}x{frame.shape[0]} px still from camera {args.camera!r}; wrote {args.output}",
        file=stdout,
    )
    return 0


def _learn(args: argparse.Namespace, stdout: TextIO) -> int:
    """``tavli vision learn``: checker colours from an image of a known position."""
    from vision.calibrate import Geometry  # lazy on purpose: see the module docstring
    from vision.checkers import learn_palette
    from vision.images import load_image

    geometry = Geometry.load(args.geometry)
    position = _read_position(args.position)
    palette = learn_palette(geometry, _at_geometry_size("learn", geometry, load_image(args.image)), position)
    palette.save(args.output)
    print(f"learned the checker colours; wrote {args.output}", file=stdout)
    return 0


def _dice(args: argparse.Namespace, stdout: TextIO) -> int:
    """``tavli vision dice``: every die in an image as JSON ``[{"value", "box", "centre", "cocked", "confidence"}, ...]``
    (:meth:`vision.dice.DieReading.to_dict`: Python numbers and bools only).

    Raises :class:`vision.images.ImageError` for a missing, unreadable, empty or absurd-size image.
    """
    from vision.calibrate import Geometry  # lazy on purpose: see the module docstring
    from vision.config import VisionConfig, default_config
    from vision.dice import read_dice
    from vision.images import load_image
    from vision.observe import read_dice_on_board

    config = VisionConfig.load(args.config) if args.config else default_config()
    image = load_image(args.image)
    if args.geometry:
        geometry = Geometry.load(args.geometry)
        if args.reader:
            config = dataclasses.replace(config, board_dice_reader=args.reader, real_board_dice_reader=args.reader)
        dice = read_dice_on_board(config, geometry, _at_geometry_size("dice", geometry, image))
    else:
        dice = read_dice(config, image, reader=args.reader)
    print(_dumps([r.to_dict() for r in dice]), file=stdout)
    return 0
