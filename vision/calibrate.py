"""Calibration, once per fixed camera: the homography from board mm to image px, saved as JSON.

Owns finding the board in a camera frame (the four ArUco markers of :mod:`vision.board`, or four
corners given by the user), the saved :class:`Geometry` (homography, board profile and home side,
the image regions they give), the running check that the camera has not been knocked, and the
printable marker sheet. Only :meth:`Geometry.save`, :meth:`Geometry.load` and
:func:`marker_sheet` touch files. May import ``board_rules`` types; must not import
``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from board_rules.errors import TavliError
from board_rules.untrusted import parse_json, read_text
from vision.board import MARKER_IDS, MARKER_QUIET_MM, MARKER_SIZE_MM
from vision.config import VisionConfig, default_config
from vision.profile import DEFAULT_PROFILE, BoardProfile, Layout, ProfileError, layout

FORMAT = "tavli-geometry/1"
ARUCO_DICTIONARY = cv2.aruco.DICT_4X4_50
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")
BOARD_CORNERS_MM = layout().board_corners_mm
FIELD_CORNERS_MM = layout().field_corners_mm
SOURCES = ("markers", "corners")


class CalibrationError(TavliError, ValueError):
    """The board could not be located (markers missing, bad corners) or a geometry file is bad."""


Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Geometry:
    """A calibrated camera: homography board mm -> image px (pixel centres at integers) and how it was found.

    ``markers``: the markers seen, ``(id, corners)`` in image px, ArUco order (none for corners);
    ``reprojection_px``: their RMS distance from where the homography puts them. ``profile`` names
    the board (:func:`vision.profile.find_profile`), ``home`` the side of white's home board as white
    sees it; ``board`` is the profile itself where it is none of ``vision.toml``'s (a maker's own
    board), carried in the JSON so that the geometry alone reads that board.
    """

    homography: tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
    image_size: tuple[int, int]  # (width, height) px
    source: str  # "markers" or "corners"
    markers: tuple[tuple[int, tuple[Point, Point, Point, Point]], ...] = ()
    reprojection_px: float = 0.0
    profile: str = DEFAULT_PROFILE
    home: str = "right"
    board: BoardProfile | None = None
    relief: bool = False

    def __post_init__(self) -> None:
        if self.board is not None and (not isinstance(self.board, BoardProfile) or self.board.name != self.profile):
            raise CalibrationError(f"board: {self.board!r}: expected the BoardProfile named {self.profile!r}")
        try:
            layout(self.board or self.profile, self.home)
        except ProfileError as exc:
            raise CalibrationError(str(exc)) from None
        h = np.asarray(self.homography, dtype=np.float64) if _is_matrix(self.homography) else None
        if h is None or not np.all(np.isfinite(h)) or abs(np.linalg.det(h)) < 1e-12:
            raise CalibrationError(f"homography: {self.homography!r}: expected an invertible 3x3 matrix of numbers")
        if len(self.image_size) != 2 or not all(isinstance(v, int) and v > 0 for v in self.image_size):
            raise CalibrationError(f"image_size: {self.image_size!r}: expected (width, height) in px")
        if self.source not in SOURCES:
            raise CalibrationError(f"source: {self.source!r}: expected 'markers' or 'corners'")
        for m in self.markers:
            if len(m) != 2 or m[0] not in range(4) or len(m[1]) != 4:
                raise CalibrationError(f"markers: {m!r}: expected (id 0..3, four corners)")
        if not (math.isfinite(self.reprojection_px) and self.reprojection_px >= 0):
            raise CalibrationError(f"reprojection_px: {self.reprojection_px!r}: expected a number >= 0")
        if not isinstance(self.relief, bool):
            raise CalibrationError(f"relief: {self.relief!r}: expected true or false")

    @property
    def layout(self) -> Layout:
        """The board's regions in board mm: its profile set up with white's home on ``home``; with
        ``relief``, seen from the camera's eye (:func:`camera_eye`), so that the checkers' tops are
        looked for where the camera sees them standing up."""
        lay = layout(self.board or self.profile, self.home)
        return lay.seen_from(camera_eye(self.matrix, self.image_size)) if self.relief else lay

    @property
    def matrix(self) -> np.ndarray:
        """The homography board mm -> image px as a 3x3 numpy array."""
        return np.array(self.homography, dtype=np.float64)

    def to_image(self, points_mm) -> np.ndarray:
        """Board-mm points (Nx2) to image px (Nx2)."""
        return _apply(self.matrix, points_mm)

    def to_board(self, points_px) -> np.ndarray:
        """Image-px points (Nx2) to board mm (Nx2)."""
        return _apply(np.linalg.inv(self.matrix), points_px)

    def regions(self) -> dict[str, Any]:
        """The board's regions as image-px polygons (lists of [x, y]).

        ``points`` maps "1".."24" (white's numbering) to the point's column (its
        width times half the field, where its checkers stand); ``bar``,
        ``tray_white``, ``tray_black``, ``left_half``, ``right_half``, and
        ``dice_area`` (the whole playing field, bar included) are quadrilaterals.
        """
        lay = self.layout
        g, mid = lay.geometry, lay.mid_y

        def quad(x0, y0, x1, y1):
            return _round_pts(self.to_image([(x0, y0), (x1, y0), (x1, y1), (x0, y1)]))

        points = {}
        for p in g.points:
            y0, y1 = sorted((p.base_y, mid))
            points[str(p.number)] = quad(p.x0, y0, p.x1, y1)
        return {
            "points": points,
            "bar": quad(*g.bar),
            "tray_white": quad(*g.tray_white),
            "tray_black": quad(*g.tray_black),
            "left_half": quad(*g.left_half),
            "right_half": quad(*g.right_half),
            "dice_area": quad(*lay.field),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: the calibration, plus derived regions for other tools to read."""
        p1 = self.layout.geometry.points[0]
        corner = "bottom-right" if self.home == "right" else "bottom-left"
        return {
            "format": FORMAT,
            "profile": self.profile,
            **({"board_profile": self.board.to_dict()} if self.board is not None else {}),
            "home": self.home,
            "homography": [list(row) for row in self.homography],
            "image_size": list(self.image_size),
            "source": self.source,
            "markers": {str(i): [list(c) for c in corners] for i, corners in self.markers},
            "reprojection_px": self.reprojection_px,
            **({"relief": True} if self.relief else {}),
            "white_point_1": {
                "corner": corner,
                "next_to_marker": MARKER_IDS[corner],
                "centre_px": _round_pts(self.to_image([(p1.centre_x, (p1.base_y + p1.tip_y) / 2)]))[0],
            },
            "regions": self.regions(),
        }

    def to_json(self) -> str:
        """The geometry as JSON text (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: Any) -> Geometry:
        """Read :meth:`to_dict` data; derived fields (regions, white_point_1) are recomputed, not trusted.

        Raises :class:`CalibrationError` for a wrong format or missing/bad fields.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise CalibrationError(f"geometry format: {got!r}: expected {FORMAT!r}")
        try:
            hom = tuple(tuple(float(v) for v in row) for row in data["homography"])
            size = tuple(int(v) for v in data["image_size"])
            markers = tuple(
                (int(k), tuple((float(c[0]), float(c[1])) for c in v))
                for k, v in sorted(data.get("markers", {}).items(), key=lambda kv: int(kv[0]))
            )
            profile, home = data.get("profile", DEFAULT_PROFILE), data.get("home", "right")
            board = data.get("board_profile")
            if board is not None:
                if not isinstance(board, dict):
                    raise CalibrationError(f"board_profile: {board!r}: expected a profile's table")
                try:
                    board = BoardProfile(**board)
                except ProfileError as exc:
                    raise CalibrationError(str(exc)) from None
            return cls(
                hom,
                size,
                data["source"],
                markers,
                float(data.get("reprojection_px", 0.0)),
                profile,
                home,
                board,
                data.get("relief", False),
            )  # type: ignore[arg-type]
        except KeyError as exc:
            raise CalibrationError(f"geometry: missing field {exc.args[0]!r}") from None
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            if isinstance(exc, CalibrationError):
                raise
            raise CalibrationError(f"geometry: bad field value: {exc}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Geometry:
        """Parse :meth:`to_json` text. Raises :class:`CalibrationError` for bad JSON or fields."""
        return cls.from_dict(parse_json(text, "geometry", CalibrationError))

    def save(self, path: str | Path) -> None:
        """Write the geometry JSON to ``path``. Raises OSError if it cannot be written."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Geometry:
        """Read a geometry JSON file. Raises :class:`CalibrationError` if it is missing, unreadable or bad."""
        text = read_text(path, "geometry file", CalibrationError)
        try:
            return cls.from_json(text)
        except CalibrationError as exc:
            raise CalibrationError(f"geometry file {str(path)!r}: {exc}") from None


# ----------------------------------------------------------------- finding the board


def detect_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """The board's ArUco markers (ids 0..3) in ``image``: id -> 4x2 corners in image px, ArUco order.

    Other ids are ignored; of duplicates the largest is kept.
    """
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY), params)
    corners, ids, _ = detector.detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel()):
        i = int(i)
        c = c.reshape(4, 2).astype(np.float64)
        if i in range(4) and (
            i not in found or cv2.contourArea(c.astype(np.float32)) > cv2.contourArea(found[i].astype(np.float32))
        ):
            found[i] = c
    return found


def calibrate(
    image: np.ndarray,
    config: VisionConfig | None = None,
    corners: Sequence[Sequence[float]] | None = None,
    *,
    field: bool = False,
    profile: str | BoardProfile = DEFAULT_PROFILE,
    home: str = "right",
) -> Geometry:
    """Locate the board in ``image`` (BGR or grey) and return its :class:`Geometry`.

    The homography comes from ``corners`` where given (the board's outer corners top-left, top-right,
    bottom-right, bottom-left as white sees it; with ``field=True`` the playing field's, both halves
    and the bar), else from at least ``config.min_markers`` of the ArUco markers. ``profile`` (a name
    or a :class:`~vision.profile.BoardProfile`) and ``home`` are recorded in the geometry.

    Raises :class:`CalibrationError` when too few markers are seen (naming those found), for a fit
    worse than ``config.max_reprojection_px``, bad corners, or an unknown profile or home side.
    """
    cfg = config or default_config()
    h, w = image.shape[:2]
    try:
        lay = layout(profile, home)
    except ProfileError as exc:
        raise CalibrationError(str(exc)) from None
    board = profile if isinstance(profile, BoardProfile) else None
    name = lay.profile.name
    if corners is not None:
        pts = _check_corners(corners)
        model = lay.field_corners_mm if field else lay.board_corners_mm
        hom = cv2.getPerspectiveTransform(np.float32(model), np.float32(pts)).astype(np.float64)
        return Geometry(_as_tuple(hom), (int(w), int(h)), "corners", (), 0.0, name, home, board)
    found = detect_markers(image)
    if len(found) < cfg.min_markers:
        need = "all four" if cfg.min_markers == 4 else f"at least {cfg.min_markers} of the four"
        raise CalibrationError(
            f"found markers {sorted(found)!r}; need {need} (DICT_4X4_50 ids 0..3 at the board's corners), or give --corners"
        )
    ids = sorted(found)
    src = np.array([lay.geometry.markers[i] for i in ids], dtype=np.float64).reshape(-1, 2)
    dst = np.array([found[i] for i in ids], dtype=np.float64).reshape(-1, 2)
    hom, _ = cv2.findHomography(src, dst, 0)
    if hom is None:
        raise CalibrationError(f"found markers {ids!r} but they give no homography (degenerate layout)")
    hom = hom / hom[2, 2]
    err = float(np.sqrt(np.mean(np.sum((_apply(hom, src) - dst) ** 2, axis=1))))
    if err > cfg.max_reprojection_px:
        raise CalibrationError(
            f"found markers {ids!r} but they disagree by {err:.2f} px RMS (max {cfg.max_reprojection_px}); "
            "is the board flat and are the markers where the layout expects them?"
        )
    seen = tuple((i, tuple((float(x), float(y)) for x, y in found[i])) for i in ids)
    return Geometry(_as_tuple(hom), (int(w), int(h)), "markers", seen, err, name, home, board)  # type: ignore[arg-type]


def check(geometry: Geometry, image: np.ndarray, config: VisionConfig | None = None) -> float | None:
    """How far (mean px over the corners of the markers seen) the markers are from where ``geometry`` puts them.

    None when no marker is seen (covered, or a board without markers). Compare
    with ``config.drift_px_knocked`` (see :func:`knocked`).
    """
    found = detect_markers(image)
    if not found:
        return None
    ids = sorted(found)
    expected = geometry.to_image(np.array([geometry.layout.geometry.markers[i] for i in ids]).reshape(-1, 2))
    seen = np.array([found[i] for i in ids]).reshape(-1, 2)
    return float(np.mean(np.linalg.norm(seen - expected, axis=1)))


def knocked(drift_px: float | None, config: VisionConfig | None = None) -> bool:
    """True if a :func:`check` result says the camera moved (drift above ``config.drift_px_knocked``)."""
    cfg = config or default_config()
    return drift_px is not None and drift_px > cfg.drift_px_knocked


# ----------------------------------------------------------------- marker sheet


def marker_sheet(path: str | Path | None = None, *, dpi: int = 300) -> np.ndarray:
    """A printable A4 sheet (grey, ``dpi``) of the four markers with their ids and corners; written to ``path`` if given.

    Each marker's black square is :data:`~vision.board.MARKER_SIZE_MM` wide (the
    size the board layout expects) inside a white margin of
    :data:`~vision.board.MARKER_QUIET_MM`, with a dashed cut line; a 100 mm
    bar checks the print scale. The PNG carries its dpi. Raises OSError if the
    file cannot be written.
    """
    mm = dpi / 25.4
    w, h = int(round(210 * mm)), int(round(297 * mm))
    sheet = np.full((h, w), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY)
    side = int(round(MARKER_SIZE_MM * mm))
    font, thick = cv2.FONT_HERSHEY_SIMPLEX, max(1, int(round(dpi / 150)))
    text_scale = dpi / 300 * 1.3

    def text(s, x, y, k=1.0):
        cv2.putText(sheet, s, (int(x), int(y)), font, text_scale * k, 0, thick, cv2.LINE_AA)

    text("tavli-table board markers: ArUco DICT_4X4_50, ids 0..3", 20 * mm, 22 * mm)
    text(
        f"Print at 100% ({dpi} dpi, A4). Black square {MARKER_SIZE_MM:g} mm; cut on the dashed line",
        20 * mm,
        30 * mm,
        0.8,
    )
    text("and keep the white margin. Stick each marker in the board frame's corner named", 20 * mm, 36 * mm, 0.8)
    text("under it, as white sees the board, upright (label side towards white).", 20 * mm, 42 * mm, 0.8)
    for marker_id, name in enumerate(CORNER_NAMES):
        col, row = (0, 1, 1, 0)[marker_id], (0, 0, 1, 1)[marker_id]
        x0 = int(round((45 + col * 85) * mm))
        y0 = int(round((75 + row * 95) * mm))
        sheet[y0 : y0 + side, x0 : x0 + side] = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
        q = int(round(MARKER_QUIET_MM * mm))
        _dashed_rect(sheet, x0 - q, y0 - q, x0 + side + q, y0 + side + q, int(3 * mm), 160)
        text(f"id {marker_id}: {name}", x0, y0 + side + q + 8 * mm)
    y = int(265 * mm)
    x0 = int(20 * mm)
    cv2.rectangle(sheet, (x0, y), (x0 + int(round(100 * mm)), y + int(2 * mm)), 0, -1)
    text("100 mm (check the print scale)", x0, y + 9 * mm, 0.8)
    if path is not None:
        ok, buf = cv2.imencode(".png", sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        if not ok:  # pragma: no cover
            raise OSError("PNG encoding failed")
        Path(path).write_bytes(_with_dpi(buf.tobytes(), dpi))
    return sheet


def _dashed_rect(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, dash: int, grey: int) -> None:
    for a, b in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
        n = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) // dash))
        for k in range(0, n, 2):
            p = (int(a[0] + (b[0] - a[0]) * k / n), int(a[1] + (b[1] - a[1]) * k / n))
            q = (int(a[0] + (b[0] - a[0]) * (k + 1) / n), int(a[1] + (b[1] - a[1]) * (k + 1) / n))
            cv2.line(img, p, q, grey, 2)


def _with_dpi(png: bytes, dpi: int) -> bytes:
    """Insert a pHYs chunk (pixels per metre) after IHDR so printers know the intended size."""
    ppm = int(round(dpi / 0.0254))
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_ihdr = 8 + 8 + 13 + 4
    return png[:end_ihdr] + chunk + png[end_ihdr:]


# ----------------------------------------------------------------- helpers


def _apply(hom: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.c_[p, np.ones(len(p))] @ np.asarray(hom, dtype=np.float64).T
    return q[:, :2] / q[:, 2:3]


def _round_pts(pts: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 2), round(float(y), 2)] for x, y in pts]


def _as_tuple(hom: np.ndarray):
    return tuple(tuple(float(v) for v in row) for row in hom)


def camera_eye(homography: np.ndarray, image_size: tuple[int, int]) -> tuple[float, float, float] | None:
    """The camera's eye over the board (board mm x and y of the point under it, and its height above
    the field) from a homography board mm -> image px, taking the camera's pixels square and its axis
    through the image's centre: its focal length is the one that gives the board's two axes one scale,
    else the one that sets them at right angles (Zhang's constraints on one view; a camera tilted
    towards the board from one side, as a table's is, leaves the second ill-conditioned), within
    half to four times the image's width. None where neither tells it (a view square on: then tops
    stand where their feet are, near enough)."""
    w, h = image_size
    m = np.array([[1.0, 0.0, -w / 2], [0.0, 1.0, -h / 2], [0.0, 0.0, 1.0]]) @ np.asarray(homography, np.float64)
    a, b = m[:, 0], m[:, 1]
    f = None
    for num, den in (
        ((b[0] ** 2 + b[1] ** 2) - (a[0] ** 2 + a[1] ** 2), a[2] ** 2 - b[2] ** 2),
        (-(a[0] * b[0] + a[1] * b[1]), a[2] * b[2]),
    ):
        if abs(den) > 1e-12 and 0.5 * w <= math.sqrt(max(num / den, 0.0)) <= 4 * w:
            f = math.sqrt(num / den)
            break
    if f is None:
        return None
    k = np.diag([1 / f, 1 / f, 1.0])
    r1, r2, t = k @ a, k @ b, k @ m[:, 2]
    scale = 2 / (np.linalg.norm(r1) + np.linalg.norm(r2))
    r1, r2, t = r1 * scale, r2 * scale, t * scale
    eye = -np.c_[r1, r2, np.cross(r1, r2)].T @ t
    if not np.all(np.isfinite(eye)) or abs(eye[2]) < 1.0:
        return None
    return float(eye[0]), float(eye[1]), float(abs(eye[2]))


def _is_matrix(m: Any) -> bool:
    try:
        return len(m) == 3 and all(
            len(row) == 3 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row) for row in m
        )
    except TypeError:
        return False


def _check_corners(corners: Sequence[Sequence[float]]) -> np.ndarray:
    try:
        pts = np.array([[float(c[0]), float(c[1])] for c in corners], dtype=np.float64)
        ok = pts.shape == (4, 2) and all(len(c) == 2 for c in corners) and np.all(np.isfinite(pts))
    except (TypeError, ValueError, IndexError):
        ok = False
    if not ok:
        raise CalibrationError(
            f"corners: {corners!r}: expected four (x, y) image points: top-left, top-right, bottom-right, bottom-left"
        )

    # every turn along TL -> TR -> BR -> BL must bend the same way (clockwise on screen: y grows downwards)
    def cross(a, b):
        return a[0] * b[1] - a[1] * b[0]

    turns = [cross(pts[(k + 1) % 4] - pts[k], pts[(k + 2) % 4] - pts[(k + 1) % 4]) for k in range(4)]
    if not all(t > 0 for t in turns):
        raise CalibrationError(
            f"corners: {corners!r}: not a convex quadrilateral in the order top-left, top-right, bottom-right, "
            "bottom-left (as white sees the board)"
        )
    return pts
