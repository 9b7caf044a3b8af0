"""The renderer's drawing: board, checker, die and cube styles, drawn in board mm on a top-down canvas.

Owns the styles (:data:`BOARD_STYLES`, :data:`CHECKER_STYLES`, :data:`DIE_COLOURS`,
:data:`CUBE_COLOURS`) and the drawing of the board with its markers, a checker, a borne-off checker
on edge, a die (flat or cocked), the cube, and a hand laid over a camera image; a canvas px ``i``
covers board mm ``[i, i + 1) / scale``. :mod:`vision.render` puts them together into camera frames.
Imports :mod:`vision.board`; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.board import (
    CHECKER_DIAMETER_MM,
    CUBE_SIZE_MM,
    DIE_SIZE_MM,
    GEOMETRY,
    MARKER_QUIET_MM,
    BoardGeometry,
)

Colour = tuple[int, int, int]  # BGR


@dataclass(frozen=True, slots=True)
class BoardStyle:
    """Colours of a board (BGR)."""

    name: str
    frame: Colour
    field: Colour
    point_a: Colour
    point_b: Colour
    bar: Colour
    tray: Colour
    grain: float = 0.0  # strength of the wood grain texture, 0..1


@dataclass(frozen=True, slots=True)
class CheckerStyle:
    """Colours and finish of a pair of checkers (BGR): ``matte``, ``glossy`` or ``metal`` (metal rim)."""

    name: str
    white: Colour
    black: Colour
    finish: str = "matte"

    def __post_init__(self) -> None:
        if self.finish not in ("matte", "glossy", "metal"):
            raise ValueError(f"finish: {self.finish!r}: expected 'matte', 'glossy' or 'metal'")


BOARD_STYLES = {
    "walnut": BoardStyle(
        "walnut", (30, 55, 90), (150, 200, 225), (40, 40, 140), (225, 235, 240), (30, 55, 90), (45, 75, 110), 0.5
    ),
    "felt": BoardStyle(
        "felt", (25, 35, 45), (60, 120, 40), (30, 30, 150), (210, 220, 225), (25, 35, 45), (40, 60, 40), 0.0
    ),
    "olive": BoardStyle(
        "olive", (60, 90, 120), (110, 170, 190), (50, 80, 40), (70, 60, 120), (50, 80, 110), (80, 110, 140), 0.3
    ),
}


CHECKER_STYLES = {
    "matte": CheckerStyle("matte", (215, 230, 235), (40, 45, 60), "matte"),
    "glossy": CheckerStyle("glossy", (235, 240, 240), (35, 30, 150), "glossy"),
    "metal": CheckerStyle("metal", (200, 205, 210), (45, 40, 40), "metal"),
}


def _random_colour(rng: np.random.Generator, lo: float, hi: float) -> tuple[int, int, int]:
    """A random BGR colour whose mean lies in lo..hi."""
    tint = rng.uniform(-1, 1, 3) * rng.uniform(0, 90) ** rng.uniform(0.7, 1.0)  # mostly muted, some vivid
    c = tint - tint.mean() + rng.uniform(lo, hi)
    return tuple(int(v) for v in np.clip(c, 0, 255))


def random_styles(rng: np.random.Generator) -> tuple[BoardStyle, CheckerStyle]:
    """A board of random colours and grain, and a pair of checkers, the light one lighter than the dark one."""
    board = BoardStyle(
        "random",
        _random_colour(rng, 10, 200),
        _random_colour(rng, 20, 235),
        _random_colour(rng, 10, 235),
        _random_colour(rng, 10, 245),
        _random_colour(rng, 10, 200),
        _random_colour(rng, 10, 200),
        float(rng.uniform(0, 1.2)),
    )
    light = _random_colour(rng, 120, 250)
    dark = _random_colour(rng, 10, max(20.0, min(150.0, float(np.mean(light)) - 50)))
    finish = ("matte", "glossy", "metal")[int(rng.integers(3))]
    return board, CheckerStyle("random", light, dark, finish)


DIE_COLOURS = {
    "white": ((245, 245, 245), (20, 20, 20)),
    "red": ((40, 40, 200), (245, 245, 245)),
    "black": ((30, 30, 30), (245, 245, 245)),
    "green": ((60, 150, 40), (245, 245, 245)),
}


# a cube's face and ink (BGR): tournament cubes are often red or black with light numbers
CUBE_COLOURS = {
    "white": ((235, 240, 240), (20, 20, 20)),
    "red": ((40, 35, 175), (235, 240, 240)),
    "black": ((30, 30, 32), (120, 205, 230)),
}


_SHIFT = 4  # cv2 sub-pixel bits
_ONE = 1 << _SHIFT


def _fx(pts, scale: float) -> np.ndarray:
    """Board mm to fixed-point canvas coordinates; canvas pixel i covers mm [i, i + 1) / scale."""
    return np.round((np.asarray(pts, dtype=np.float64) * scale - 0.5) * _ONE).astype(np.int32)


def _shade(c: Colour, k: float) -> Colour:
    return tuple(int(max(0, min(255, v * k))) for v in c)  # type: ignore[return-value]


def draw_board(
    canvas: np.ndarray,
    s: float,
    style: BoardStyle,
    rng: np.random.Generator,
    geometry: BoardGeometry = GEOMETRY,
    stitch: Colour | None = None,
) -> None:
    """The frame, field, bar, tray, points and markers of ``geometry`` (a profile's layout:
    :func:`vision.profile.layout`) on ``canvas``. ``stitch``: the colour of a leather board's
    stitching, dashes along each point's sides (None: none)."""
    h, w = canvas.shape[:2]
    canvas[:] = style.frame
    if style.grain > 0:
        ys = np.arange(h, dtype=np.float32)[:, None]
        xs = np.arange(w, dtype=np.float32)[None, :]
        phase = rng.uniform(0, 2 * np.pi)
        g = np.sin(xs / (7.0 * s) + 3 * np.sin(ys / (53.0 * s) + phase)) * 0.08 * style.grain
        canvas[:] = np.clip(canvas.astype(np.float32) * (1 + g[..., None]), 0, 255).astype(np.uint8)

    def rect(x0, y0, x1, y1, c):
        cv2.rectangle(canvas, tuple(_fx((x0, y0), s)), tuple(_fx((x1, y1), s)), c, -1, cv2.LINE_AA, _SHIFT)

    for x0, y0, x1, y1 in (geometry.left_half, geometry.right_half):
        rect(x0, y0, x1, y1, style.field)
    rect(*geometry.bar, style.bar)
    tx0, ty0, tx1, _ = geometry.tray_black
    ty1 = geometry.tray_white[3]
    rect(tx0 + 3, ty0, tx1 - 3, ty1, style.tray)
    mid = (ty0 + ty1) / 2
    rect(tx0, mid - 2, tx1, mid + 2, style.frame)
    for p in geometry.points:
        tri = np.array([(p.x0 + 1, p.base_y), (p.x1 - 1, p.base_y), (p.centre_x, p.tip_y)])
        colour = style.point_a if p.number % 2 else style.point_b
        cv2.fillPoly(canvas, [_fx(tri, s)], colour, cv2.LINE_AA, _SHIFT)
        if stitch is not None:  # 2.5 mm dashes every 4 mm, 2.5 mm inside each side
            for side in (-1, 1):
                base = np.array([p.centre_x + side * ((p.x1 - p.x0) / 2 - 1), p.base_y])
                tip = np.array([p.centre_x, p.tip_y])
                length = float(np.hypot(*(tip - base)))
                along = (tip - base) / length
                inward = np.array([-side * 2.5, 0.0])
                for d in np.arange(2.0, length - 6.0, 4.0):
                    a = base + along * d + inward
                    b = a + along * 2.5
                    cv2.line(
                        canvas, tuple(_fx(a, s)), tuple(_fx(b, s)), stitch, max(1, int(0.8 * s)), cv2.LINE_AA, _SHIFT
                    )
    # markers with their quiet zone (narrower where the frame is)
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker_id, corners in enumerate(geometry.markers):
        (x0, y0), (x1, _) = corners[0], corners[1]
        size = x1 - x0
        px = int(round(size * s))
        quiet = min(MARKER_QUIET_MM, max(x0, 1.0))
        rect(x0 - quiet, y0 - quiet, x0 + size + quiet, y0 + size + quiet, (255, 255, 255))
        img = cv2.aruco.generateImageMarker(dictionary, marker_id, px)
        # a marker against the board's far edge can round a px past the canvas: it is drawn a px in
        ix = max(0, min(int(round(x0 * s)), canvas.shape[1] - px))
        iy = max(0, min(int(round(y0 * s)), canvas.shape[0] - px))
        canvas[iy : iy + px, ix : ix + px] = img[..., None]


def draw_checker(
    canvas: np.ndarray,
    s: float,
    centre: tuple[float, float],
    colour: Colour,
    finish: str,
    layer: int,
    scale: float = 1.0,
    diameter: float = CHECKER_DIAMETER_MM,
) -> None:
    """A checker ``diameter`` mm across with its top at ``centre`` (board mm), ``scale`` times its
    size (a top lifted towards the camera, :func:`vision.render.lifted`); ``finish`` ``"side"``: a
    slice of its side, its edge's colour a little darker."""
    c = _fx(centre, s)
    r = diameter / 2 * scale
    edge = _shade(colour, 0.55) if sum(colour) > 300 else _shade(colour, 0.5) if sum(colour) > 150 else (90, 90, 90)
    if finish == "side":
        cv2.circle(canvas, tuple(c), int(r * s * _ONE), _shade(edge, 0.8), -1, cv2.LINE_AA, _SHIFT)
        return
    cv2.circle(canvas, tuple(c), int(r * s * _ONE), edge, -1, cv2.LINE_AA, _SHIFT)
    cv2.circle(canvas, tuple(c), int((r - 1.2) * s * _ONE), colour, -1, cv2.LINE_AA, _SHIFT)
    if finish == "metal":
        cv2.circle(
            canvas, tuple(c), int((r - 2.5) * s * _ONE), (185, 190, 195), max(2, int(2.5 * s)), cv2.LINE_AA, _SHIFT
        )
        cv2.circle(canvas, tuple(c), int((r - 6.5) * s * _ONE), _shade(colour, 0.85), 1, cv2.LINE_AA, _SHIFT)
    else:
        cv2.circle(canvas, tuple(c), int((r - 5) * s * _ONE), _shade(colour, 0.9), 1, cv2.LINE_AA, _SHIFT)
    if finish == "glossy":
        hl = _fx((centre[0] - r * 0.35, centre[1] - r * 0.35), s)
        cv2.ellipse(
            canvas,
            tuple(hl),
            (int(r * 0.35 * s * _ONE), int(r * 0.18 * s * _ONE)),
            -45,
            0,
            360,
            (250, 250, 250),
            -1,
            cv2.LINE_AA,
            _SHIFT,
        )


def draw_off_checker(canvas: np.ndarray, s: float, x0: float, x1: float, y: float, colour: Colour) -> None:
    """A borne-off checker standing on edge across a tray from ``x0`` to ``x1`` (board mm), centred at ``y``."""
    cv2.rectangle(
        canvas,
        tuple(_fx((x0 + 6, y - 6), s)),
        tuple(_fx((x1 - 6, y + 6), s)),
        colour,
        -1,
        cv2.LINE_AA,
        _SHIFT,
    )
    cv2.rectangle(
        canvas,
        tuple(_fx((x0 + 6, y - 6), s)),
        tuple(_fx((x1 - 6, y + 6), s)),
        _shade(colour, 0.6),
        1,
        cv2.LINE_AA,
        _SHIFT,
    )


def _pips(value: int) -> list[tuple[float, float]]:
    a = 0.27
    table = {
        1: [(0, 0)],
        2: [(-a, -a), (a, a)],
        3: [(-a, -a), (0, 0), (a, a)],
        4: [(-a, -a), (a, -a), (-a, a), (a, a)],
        5: [(-a, -a), (a, -a), (0, 0), (-a, a), (a, a)],
        6: [(-a, -a), (a, -a), (-a, 0), (a, 0), (-a, a), (a, a)],
    }
    return table[value]


def draw_die(
    canvas: np.ndarray,
    s: float,
    centre: tuple[float, float],
    value: int,
    angle: float,
    colours,
    cocked: bool,
    size: float = DIE_SIZE_MM,
) -> None:
    body, pip = colours
    half = size / 2
    t = math.radians(angle)
    rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    sq = np.array([(-half, -half), (half, -half), (half, half), (-half, half)])
    shadow = (sq * 1.08) @ rot.T + np.array(centre) + 1.5
    cv2.fillPoly(canvas, [_fx(shadow, s)], (30, 30, 30), cv2.LINE_AA, _SHIFT)
    if cocked:  # leaning on something: the top face is foreshortened and a side face shows
        top = sq * np.array([1.0, 0.7]) + np.array([0, -half * 0.3])
        side = np.array([(-half, half * 0.4), (half, half * 0.4), (half, half), (-half, half)])
        pts_side = side @ rot.T + centre
        cv2.fillPoly(canvas, [_fx(pts_side, s)], _shade(body, 0.6), cv2.LINE_AA, _SHIFT)
        face = top
    else:
        face = sq
    pts = face @ rot.T + centre
    cv2.fillPoly(canvas, [_fx(pts, s)], body, cv2.LINE_AA, _SHIFT)
    cv2.polylines(canvas, [_fx(pts, s)], True, _shade(body, 0.7), 1, cv2.LINE_AA, _SHIFT)
    squash = np.array([1.0, 0.7]) if cocked else np.array([1.0, 1.0])
    offset = np.array([0, -half * 0.3]) if cocked else np.zeros(2)
    r = size * 0.085
    for u, v in _pips(value):
        p = (np.array([u, v]) * size * squash + offset) @ rot.T + centre
        axes = (int(r * s * _ONE), int(r * squash[1] * s * _ONE))  # pips on a foreshortened face are ellipses
        cv2.ellipse(canvas, tuple(_fx(p, s)), axes, angle, 0, 360, pip, -1, cv2.LINE_AA, _SHIFT)


def draw_cube(
    canvas: np.ndarray,
    s: float,
    centre: tuple[float, float],
    value: int,
    colour: str = "white",
    size: float = CUBE_SIZE_MM,
) -> None:
    half = size / 2
    x, y = centre
    face, ink = CUBE_COLOURS[colour]
    cv2.rectangle(
        canvas, tuple(_fx((x - half, y - half), s)), tuple(_fx((x + half, y + half), s)), face, -1, cv2.LINE_AA, _SHIFT
    )
    cv2.rectangle(
        canvas,
        tuple(_fx((x - half, y - half), s)),
        tuple(_fx((x + half, y + half), s)),
        (120, 120, 120),
        1,
        cv2.LINE_AA,
        _SHIFT,
    )
    text = str(value)
    scale = 0.028 * s * size / max(1, len(text))
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, max(1, int(s)))
    org = (int(x * s - tw / 2), int(y * s + th / 2))
    cv2.putText(canvas, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, ink, max(1, int(s)), cv2.LINE_AA)


def draw_hand(image: np.ndarray, polygon: np.ndarray, rng: np.random.Generator) -> None:
    skin = np.array([rng.uniform(90, 150), rng.uniform(130, 180), rng.uniform(180, 235)])
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(polygon * _ONE).astype(np.int32)], 255, cv2.LINE_AA, _SHIFT)
    # shading across the hand
    ys, xs = np.mgrid[0 : image.shape[0], 0 : image.shape[1]]
    c = polygon.mean(0)
    shade = 1.0 - 0.25 * np.clip(np.hypot(xs - c[0], ys - c[1]) / 300.0, 0, 1)
    hand = (skin[None, None, :] * shade[..., None]).astype(np.float32)
    a = (mask.astype(np.float32) / 255.0)[..., None]
    image[:] = np.clip(image * (1 - a) + hand * a, 0, 255).astype(np.uint8)
