"""The table renderer: seeded, deterministic camera frames of a tavli table with ground truth.

Owns :func:`render` and :func:`frames_of_game` (a position drawn by :mod:`vision.render_draw` on a
top-down canvas, warped through a camera pose onto a table, with light, noise, blur, a JPEG round
trip and a hand), :func:`camera_pose` and the ground truth (:class:`Frame`). The board's geometry
comes from :mod:`vision.board` (the names the demo takes from here, ``GEOMETRY``, ``FIELD_Y0`` and
``FIELD_Y1``, stay importable here). All randomness comes from ``numpy.random.default_rng`` streams
derived from ``seed``. May import ``board_rules`` types; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from board_rules import Position
from vision.board import (
    BOARD_HEIGHT_MM,
    BOARD_WIDTH_MM,
    CHECKER_HEIGHT_MM,
    FIELD_Y0,  # noqa: F401 - the demo takes it from here
    FIELD_Y1,  # noqa: F401
    GEOMETRY,  # noqa: F401
    lifted,
)
from vision.profile import DEFAULT_PROFILE, BoardProfile, Layout, layout
from vision.render_draw import (
    BOARD_STYLES,
    CHECKER_STYLES,
    CUBE_COLOURS,
    DIE_COLOURS,
    BoardStyle,
    CheckerStyle,
    Colour,
    draw_board,
    draw_checker,
    draw_cube,
    draw_die,
    draw_hand,
    draw_off_checker,
)


@dataclass(frozen=True, slots=True)
class DieSpec:
    """A die to draw: value, board-mm centre (None: random in the right-hand half), angle, colour, cocked."""

    value: int
    at: tuple[float, float] | None = None
    angle: float | None = None  # degrees; None: random
    colour: str = "white"
    cocked: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.value <= 6:
            raise ValueError(f"die value: {self.value!r}: expected 1..6")
        if self.colour not in DIE_COLOURS:
            raise ValueError(f"die colour: {self.colour!r}: expected one of {sorted(DIE_COLOURS)}")


@dataclass(frozen=True, slots=True)
class Camera:
    """A camera pose: homography board mm -> image pixels, the image size and, where known, the
    camera's eye: board mm x and y of the point under it and its height above the field (what
    :func:`render`'s ``relief`` needs)."""

    homography: np.ndarray
    size: tuple[int, int]
    eye_mm: tuple[float, float, float] | None = None


@dataclass(frozen=True, slots=True)
class CheckerTruth:
    where: str  # "point", "bar" or "off"
    point: int | None  # 1..24 for "point"
    side: str  # "white" or "black"
    centre: tuple[float, float]  # image px
    layer: int  # 0 on the board, 1.. stacked on top; -1 for a pinned checker under the stack
    colour: Colour


@dataclass(frozen=True, slots=True)
class DieTruth:
    value: int
    centre: tuple[float, float]  # image px
    centre_mm: tuple[float, float]
    half: str | None  # "left" / "right" as white sees it
    cocked: bool
    colour: Colour


@dataclass(frozen=True, slots=True)
class CubeTruth:
    value: int
    where: str  # "centre", "white", "black"
    centre: tuple[float, float]


@dataclass(frozen=True, slots=True)
class Frame:
    """A rendered camera frame (BGR uint8) and its ground truth."""

    image: np.ndarray
    homography: np.ndarray  # board mm -> image px
    markers: dict[int, np.ndarray]  # id -> 4x2 corners in image px, ArUco order
    checkers: tuple[CheckerTruth, ...]
    dice: tuple[DieTruth, ...]
    cube: CubeTruth | None
    hand: np.ndarray | None  # Nx2 polygon in image px
    position: Position
    seed: int

    def truth(self) -> dict:
        """Ground truth as plain JSON-ready data."""
        r = lambda p: [round(float(p[0]), 2), round(float(p[1]), 2)]  # noqa: E731
        return {
            "seed": self.seed,
            "size": [int(self.image.shape[1]), int(self.image.shape[0])],
            "homography": [[float(v) for v in row] for row in self.homography],
            "markers": {str(k): [r(c) for c in v] for k, v in sorted(self.markers.items())},
            "position": self.position.to_dict(),
            "checkers": [
                {"where": c.where, "point": c.point, "side": c.side, "centre": r(c.centre), "layer": c.layer}
                for c in self.checkers
            ],
            "dice": [{"value": d.value, "centre": r(d.centre), "half": d.half, "cocked": d.cocked} for d in self.dice],
            "cube": None
            if self.cube is None
            else {"value": self.cube.value, "where": self.cube.where, "centre": r(self.cube.centre)},
            "hand": None if self.hand is None else [r(p) for p in self.hand],
        }


def cube_places(lay: Layout) -> dict[str, tuple[float, float]]:
    """Where the cube lies on ``lay``'s bar (board mm): in the middle, or at either side's end."""
    x0, y0, x1, y1 = lay.geometry.bar
    half = lay.profile.cube_size_mm / 2
    return {
        "centre": ((x0 + x1) / 2, (y0 + y1) / 2),
        "white": ((x0 + x1) / 2, y1 - half - 4),
        "black": ((x0 + x1) / 2, y0 + half + 4),
    }


CUBE_PLACES = cube_places(layout())  # the renderer's own board


def camera_pose(
    seed: int = 0,
    *,
    size: tuple[int, int] = (1280, 960),
    tilt: float = 18.0,
    tilt_jitter: float = 8.0,
    yaw_jitter: float = 6.0,
    roll_jitter: float = 4.0,
    fill: float = 0.86,
    fill_jitter: float = 0.06,
    shift_jitter: float = 0.03,
    board_mm: tuple[float, float] = (BOARD_WIDTH_MM, BOARD_HEIGHT_MM),
) -> Camera:
    """A jittered camera pose (seeded) looking at a board ``board_mm`` wide and high from white's
    side; angles in degrees."""
    rng = np.random.default_rng([seed, 1])
    t = -math.radians(tilt + rng.uniform(-1, 1) * tilt_jitter)
    yw = math.radians(rng.uniform(-1, 1) * yaw_jitter)
    rl = math.radians(rng.uniform(-1, 1) * roll_jitter)
    rx = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])
    ry = np.array([[math.cos(yw), 0, math.sin(yw)], [0, 1, 0], [-math.sin(yw), 0, math.cos(yw)]])
    rz = np.array([[math.cos(rl), -math.sin(rl), 0], [math.sin(rl), math.cos(rl), 0], [0, 0, 1]])
    r = rz @ rx @ ry
    bw, bh = board_mm
    corners = np.array([(0, 0), (bw, 0), (bw, bh), (0, bh)], dtype=np.float64)
    centred = np.c_[corners - (bw / 2, bh / 2), np.zeros(4)]
    away = np.array([0, 0, 1100.0])  # the camera 1,100 mm from the board's centre
    cam = centred @ r.T + away
    proj = cam[:, :2] / cam[:, 2:3]
    w, h = size
    lo, hi = proj.min(0), proj.max(0)
    f = (fill + rng.uniform(-1, 1) * fill_jitter) * min(w / (hi - lo)[0], h / (hi - lo)[1])
    mid = (lo + hi) / 2
    shift = rng.uniform(-1, 1, 2) * shift_jitter * np.array([w, h])
    img = (proj - mid) * f + np.array([w / 2, h / 2]) + shift
    hom = cv2.getPerspectiveTransform(corners.astype(np.float32), img.astype(np.float32)).astype(np.float64)
    eye = -r.T @ away  # the camera's centre, in the board's centred mm
    eye_mm = (float(eye[0] + bw / 2), float(eye[1] + bh / 2), float(abs(eye[2])))
    return Camera(hom, (int(w), int(h)), eye_mm)


def random_profile(seed: int) -> BoardProfile:
    """A board of plausible proportions, seeded: points 32-44 mm wide and 36-45% of the field's
    height long, with or without margins, bars from a narrow 20 mm to 60 mm, checkers 82-95% of a
    point across lined 5 or 6 along a point (6 where the field has room), dice of 12-18 mm, a tray
    with or without a gap. Scaled down, as a real board's nominal mm are, where it would not fit
    the rectified canvas."""
    rng = np.random.default_rng([seed, 9])
    pw = rng.uniform(32, 44)
    diameter = pw * rng.uniform(0.82, 0.95)
    step = diameter + rng.uniform(0, 2)
    field_h = pw * rng.uniform(10.2, 12.0)
    mm = dict(
        border_mm=rng.uniform(38, 55),
        point_width_mm=pw,
        point_length_mm=field_h * rng.uniform(0.36, 0.45),
        point_margin_mm=rng.choice([0.0, rng.uniform(1, 5)]),
        bar_width_mm=rng.uniform(20, 60),
        field_height_mm=field_h,
        tray_gap_mm=rng.choice([0.0, rng.uniform(4, 10)]),
        tray_width_mm=rng.uniform(30, 55),
        checker_diameter_mm=diameter,
        checker_step_mm=step,
        die_size_mm=rng.uniform(12, 18),
        cube_size_mm=rng.uniform(25, 32),
    )
    per_row = 6 if field_h / 2 >= 6 * step - 5 and rng.random() < 0.7 else 5
    w = 2 * mm["border_mm"] + 12 * pw + 4 * mm["point_margin_mm"] + mm["bar_width_mm"]
    w += mm["tray_gap_mm"] + mm["tray_width_mm"]
    h = 2 * mm["border_mm"] + field_h
    k = min(1.0, BOARD_WIDTH_MM / w, BOARD_HEIGHT_MM / h) * 0.999
    return BoardProfile(
        f"random-{seed}",
        "a board drawn by vision.render.random_profile",
        checkers_per_row=per_row,
        **{name: float(v) * k for name, v in mm.items()},
    )


def _apply(hom: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.c_[p, np.ones(len(p))] @ hom.T
    return q[:, :2] / q[:, 2:3]


def _hand_polygon(
    rng: np.random.Generator, hom: np.ndarray, size: tuple[int, int], field: tuple[float, float, float, float]
) -> np.ndarray:
    """A hand and forearm reaching in from white's edge of the image towards a random spot on the field."""
    fx0, fy0, fx1, fy1 = field
    target = _apply(hom, [(rng.uniform(fx0 + 40, fx1 - 40), rng.uniform(fy0 + 60, fy1 - 60))])[0]
    w, h = size
    entry = np.array([np.clip(target[0] + rng.uniform(-200, 200), 0, w), h + 40.0])
    d = target - entry
    d /= np.linalg.norm(d)
    n = np.array([-d[1], d[0]])
    arm_w = rng.uniform(55, 80)
    palm = target - d * 40
    pts = [entry + n * arm_w, entry - n * arm_w]
    ang = math.degrees(math.atan2(d[1], d[0]))
    ell = cv2.ellipse2Poly(tuple(int(v) for v in palm), (int(arm_w * 1.5), int(arm_w * 1.1)), int(ang), 0, 360, 10)
    pts.extend(ell.astype(np.float64))
    pts.extend([target + d * 50 + n * k * arm_w * 0.45 for k in (-1.2, -0.4, 0.4, 1.2)])
    hull = cv2.convexHull(np.array(pts, dtype=np.float32)).reshape(-1, 2)
    return hull.astype(np.float64)


def render(
    position: Position,
    *,
    dice: Sequence[DieSpec | tuple] | None = None,
    cube: tuple[int, str] | None = None,
    cube_colour: str = "white",
    style: BoardStyle | str = "walnut",
    checkers: CheckerStyle | str = "matte",
    seed: int = 0,
    size: tuple[int, int] = (1280, 960),
    camera: Camera | None = None,
    tilt: float = 18.0,
    tilt_jitter: float = 8.0,
    yaw_jitter: float = 6.0,
    roll_jitter: float = 4.0,
    hand: bool = False,
    relief: bool = False,
    lighting: bool = True,
    noise: float = 4.0,
    blur: float = 0.8,
    jpeg: int | None = 85,
    scale: float = 2.0,
    scene_seed: int | None = None,
    profile: BoardProfile | str = DEFAULT_PROFILE,
    home: str = "right",
    stitch: Colour | None = None,
    glare: float = 0.0,
) -> Frame:
    """Draw a camera frame of ``position`` with dice and cube, and its ground truth.

    ``dice`` items are :class:`DieSpec` or ``(value, (x, y) | None)`` (board mm; None: at random in
    the right-hand half); ``cube`` is ``(value, "centre" | "white" | "black")``, its face
    ``cube_colour`` (:data:`CUBE_COLOURS`). ``noise`` is a Gaussian sigma (0: none), ``blur`` a sigma
    in px, ``jpeg`` a quality (None: no JPEG round trip). ``camera`` overrides the seeded pose;
    ``scene_seed`` (default ``seed``) fixes grain, table and light, so a game's frames share them.
    ``relief`` draws the checkers on the points as the camera sees real ones: each a cylinder
    ``CHECKER_HEIGHT_MM`` high standing on the field or on the checkers under it, its top nearer the
    camera (further from the point under the eye, and larger) than its foot, its side showing
    between; without the camera's eye (a :class:`Camera` made without one) nothing is lifted.
    ``profile`` (a name of ``vision.toml`` or a :class:`~vision.profile.BoardProfile`) and ``home``
    draw another board, as :func:`vision.profile.layout` lays it out: its points, bar and tray, its
    checkers' size and row length, its dice. ``stitch`` (BGR) stitches the points' sides as on a
    leather board; ``glare`` (0..1) lays a lamp's or window's reflection over the frame.

    Raises ValueError for unknown styles, dice or cube places (ProfileError, a ValueError, for an
    unknown profile or home side).
    """
    if isinstance(style, str) and style not in BOARD_STYLES:
        raise ValueError(f"style: {style!r}: expected one of {sorted(BOARD_STYLES)}")
    if isinstance(checkers, str) and checkers not in CHECKER_STYLES:
        raise ValueError(f"checkers: {checkers!r}: expected one of {sorted(CHECKER_STYLES)}")
    bstyle = BOARD_STYLES[style] if isinstance(style, str) else style
    cstyle = CHECKER_STYLES[checkers] if isinstance(checkers, str) else checkers
    scene = seed if scene_seed is None else scene_seed
    specs = [
        d if isinstance(d, DieSpec) else DieSpec(int(d[0]), None if d[1] is None else tuple(d[1])) for d in (dice or [])
    ]
    if cube is not None and (cube[1] not in CUBE_PLACES or cube[0] not in (1, 2, 4, 8, 16, 32, 64)):
        raise ValueError(f"cube: {cube!r}: expected (1..64 power of two, 'centre' | 'white' | 'black')")
    if cube_colour not in CUBE_COLOURS:
        raise ValueError(f"cube_colour: {cube_colour!r}: expected one of {sorted(CUBE_COLOURS)}")
    if not 0 <= glare <= 1:
        raise ValueError(f"glare: {glare!r}: expected 0..1")
    lay = layout(profile, home)
    prof, geo = lay.profile, lay.geometry
    board_w, board_h = prof.board_size_mm
    cam = camera or camera_pose(
        seed,
        size=size,
        tilt=tilt,
        tilt_jitter=tilt_jitter,
        yaw_jitter=yaw_jitter,
        roll_jitter=roll_jitter,
        board_mm=(board_w, board_h),
    )
    hom = cam.homography
    w, h = cam.size

    s = scale
    canvas = np.zeros((int(round(board_h * s)), int(round(board_w * s)), 3), np.uint8)
    draw_board(canvas, s, bstyle, np.random.default_rng([scene, 2]), geo, stitch)
    diameter = prof.checker_diameter_mm

    truth_checkers: list[CheckerTruth] = []
    colours = {"white": cstyle.white, "black": cstyle.black}

    eye = cam.eye_mm if relief else None

    def put(where, point, side, centre_mm, layer):
        if eye is None or where != "point":
            draw_checker(canvas, s, centre_mm, colours[side], cstyle.finish, max(layer, 0), 1.0, diameter)
        else:  # its side from its foot up, then its top
            foot = max(layer, 0) * CHECKER_HEIGHT_MM
            for k in range(4):
                at, scale = lifted(eye, centre_mm, foot + CHECKER_HEIGHT_MM * k / 4)
                draw_checker(canvas, s, at, colours[side], "side", max(layer, 0), scale, diameter)
            at, scale = lifted(eye, centre_mm, foot + CHECKER_HEIGHT_MM)
            draw_checker(canvas, s, at, colours[side], cstyle.finish, max(layer, 0), scale, diameter)
        c = _apply(hom, [centre_mm])[0]
        truth_checkers.append(CheckerTruth(where, point, side, (float(c[0]), float(c[1])), layer, colours[side]))

    for i, v in enumerate(position.points):
        if position.pinned[i]:
            x, y, _ = lay.checker_slot(i + 1, 0)
            put("point", i + 1, "white" if position.pinned[i] > 0 else "black", (x, y), -1)
        side = "white" if v > 0 else "black"
        for k in range(abs(v)):
            x, y, layer = lay.checker_slot(i + 1, k)
            if position.pinned[i]:  # sits a little offset on the pinned checker
                y += geo.points[i].direction * 6
            put("point", i + 1, side, (x, y), layer)
    bx = (geo.bar[0] + geo.bar[2]) / 2
    mid = lay.mid_y
    step = prof.checker_step_mm
    for side_index, side in enumerate(("white", "black")):
        d = 1 if side == "white" else -1  # white's bar checkers on white's (lower) half of the bar
        for k in range(position.bar[side_index]):
            layer, j = divmod(k, 4)
            y = mid + d * (prof.cube_size_mm / 2 + 25 + j * step + layer * step / 2)
            put("bar", None, side, (bx, y), layer)
    for side_index, side in enumerate(("white", "black")):
        tray = geo.tray_white if side == "white" else geo.tray_black
        x0, y0, x1, y1 = tray
        for k in range(position.off[side_index]):
            yy = (y1 - 6 - k * 13.5) if side == "white" else (y0 + 6 + k * 13.5)
            draw_off_checker(canvas, s, x0, x1, yy, colours[side])
            c = _apply(hom, [((x0 + x1) / 2, yy)])[0]
            truth_checkers.append(CheckerTruth("off", None, side, (float(c[0]), float(c[1])), 0, colours[side]))

    cube_truth = None
    if cube is not None:
        centre = cube_places(lay)[cube[1]]
        draw_cube(canvas, s, centre, 64 if cube[0] == 1 else cube[0], cube_colour, prof.cube_size_mm)
        c = _apply(hom, [centre])[0]
        cube_truth = CubeTruth(cube[0], cube[1], (float(c[0]), float(c[1])))

    rng_dice = np.random.default_rng([seed, 3])
    placed: list[np.ndarray] = []
    dice_truth = []
    die = prof.die_size_mm
    rx0, ry0, rx1, ry1 = geo.right_half
    for spec in specs:
        if spec.at is not None:
            at = np.array(spec.at, dtype=np.float64)
        else:
            for _ in range(200):
                at = np.array([rng_dice.uniform(rx0 + 15, rx1 - 15), rng_dice.uniform(ry0 + 15, ry1 - 15)])
                if all(np.linalg.norm(at - p) > die * 1.8 for p in placed):
                    break
        placed.append(at)
        angle = spec.angle if spec.angle is not None else float(rng_dice.uniform(0, 90))
        draw_die(canvas, s, (float(at[0]), float(at[1])), spec.value, angle, DIE_COLOURS[spec.colour], spec.cocked, die)
        c = _apply(hom, [at])[0]
        dice_truth.append(
            DieTruth(
                spec.value,
                (float(c[0]), float(c[1])),
                (float(at[0]), float(at[1])),
                lay.half_at(*at),
                spec.cocked,
                DIE_COLOURS[spec.colour][0],
            )
        )

    # table under the board, then warp the board onto it
    rng_table = np.random.default_rng([scene, 4])
    table = np.empty((h, w, 3), np.uint8)
    table[:] = (int(rng_table.integers(40, 90)), int(rng_table.integers(50, 100)), int(rng_table.integers(60, 120)))
    warp = hom @ np.array([[1 / s, 0, 0.5 / s], [0, 1 / s, 0.5 / s], [0, 0, 1.0]])
    image = cv2.warpPerspective(
        canvas, warp, (w, h), dst=table, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT
    )

    hand_poly = None
    if hand:
        rng_hand = np.random.default_rng([seed, 5])
        hand_poly = _hand_polygon(rng_hand, hom, (w, h), lay.field)
        draw_hand(image, hand_poly, rng_hand)

    image = _finish(
        image,
        np.random.default_rng([scene, 6]),
        np.random.default_rng([seed, 7]),
        lighting=lighting,
        noise=noise,
        blur=blur,
        jpeg=jpeg,
        glare=(glare, np.random.default_rng([scene, 8])),
    )
    markers = {i: _apply(hom, geo.markers[i]) for i in range(4)}
    return Frame(image, hom, markers, tuple(truth_checkers), tuple(dice_truth), cube_truth, hand_poly, position, seed)


def _finish(
    image: np.ndarray,
    rng: np.random.Generator,
    rng_noise: np.random.Generator,
    *,
    lighting: bool,
    noise: float,
    blur: float,
    jpeg: int | None,
    glare: tuple[float, np.random.Generator] = (0.0, None),
) -> np.ndarray:
    h, w = image.shape[:2]
    img = image.astype(np.float32)
    strength, rng_glare = glare
    if strength > 0:  # a lamp or a window mirrored in a varnished board: a soft, bright streak
        mask = np.zeros((h, w), np.float32)
        centre = (int(rng_glare.uniform(0.2, 0.8) * w), int(rng_glare.uniform(0.2, 0.8) * h))
        axes = (int(rng_glare.uniform(0.06, 0.18) * w), int(rng_glare.uniform(0.02, 0.06) * w))
        cv2.ellipse(mask, centre, axes, float(rng_glare.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA)
        mask = cv2.GaussianBlur(mask, (0, 0), max(2.0, axes[1] * 0.4))[..., None] * strength
        img = img * (1 - mask) + 255.0 * mask
    if lighting:  # a gradient, a warm spot and a soft shadow band
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        gx, gy = rng.uniform(-0.25, 0.25, 2)
        field = 1.0 + gx * (xs / w - 0.5) + gy * (ys / h - 0.5)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        field += 0.15 * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * (0.3 * w) ** 2))
        a = rng.uniform(0, np.pi)
        d = (xs - w / 2) * math.cos(a) + (ys - h / 2) * math.sin(a) - rng.uniform(-0.3, 0.3) * w
        field *= 1.0 - 0.2 / (1 + np.exp(-d / 40.0))
        img *= field[..., None]
    if noise > 0:
        img += rng_noise.normal(0, noise, img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if blur > 0:
        out = cv2.GaussianBlur(out, (0, 0), blur)
    if jpeg is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg)])
        if not ok:  # pragma: no cover
            raise RuntimeError("JPEG encoding failed")
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def frames_of_game(positions: Iterable[Position], seed: int = 0, *, hands: bool = True, **kwargs) -> Iterator[Frame]:
    """Consecutive frames of a game: one camera pose for all; between two positions a
    frame with a hand over the board (if ``hands``), then the next position.

    ``kwargs`` go to :func:`render` (style, checkers, dice, cube, ...).
    """
    size = kwargs.pop("size", (1280, 960))
    board_mm = layout(kwargs.get("profile", DEFAULT_PROFILE), kwargs.get("home", "right")).profile.board_size_mm
    cam = kwargs.pop("camera", None) or camera_pose(seed, size=size, board_mm=board_mm)
    for k, pos in enumerate(positions):
        if k and hands:
            yield render(pos, camera=cam, seed=seed * 1000 + 2 * k - 1, scene_seed=seed, hand=True, **kwargs)
        yield render(pos, camera=cam, seed=seed * 1000 + 2 * k, scene_seed=seed, **kwargs)
