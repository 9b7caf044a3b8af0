"""Rectify: a fixed top-down view of the board from a calibrated camera frame.

Owns the rectified frame (board mm scaled by ``px_per_mm``, origin at the
board's top-left outer corner as white sees it; rectified pixel ``i`` covers
board mm ``[i, i + 1) / px_per_mm``, as the renderer's canvas does) and the conversions between board
mm and rectified px, so later stages read point regions in the rectified image.
May import ``board_rules`` types; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache

import cv2
import numpy as np

from vision.board import BOARD_HEIGHT_MM, BOARD_WIDTH_MM, GEOMETRY
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config


def _ppm(px_per_mm: float | None, config: VisionConfig | None) -> float:
    p = (config or default_config()).px_per_mm if px_per_mm is None else px_per_mm
    if not p > 0:
        raise ValueError(f"px_per_mm: {p!r}: expected a positive number")
    return float(p)


def rectified_size(px_per_mm: float) -> tuple[int, int]:
    """(width, height) in px of the rectified view at ``px_per_mm``."""
    return int(round(BOARD_WIDTH_MM * px_per_mm)), int(round(BOARD_HEIGHT_MM * px_per_mm))


def rectified_to_board_matrix(px_per_mm: float) -> np.ndarray:
    """3x3 matrix: rectified px (pixel centres at integers) -> board mm."""
    s = float(px_per_mm)
    return np.array([[1 / s, 0, 0.5 / s], [0, 1 / s, 0.5 / s], [0, 0, 1.0]])


def board_to_rectified(points_mm, px_per_mm: float = 1.0) -> np.ndarray:
    """Board-mm points (Nx2) to rectified px (Nx2)."""
    p = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
    return p * px_per_mm - 0.5


def rectified_to_board(points_px, px_per_mm: float = 1.0) -> np.ndarray:
    """Rectified-px points (Nx2) to board mm (Nx2)."""
    p = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    return (p + 0.5) / px_per_mm


def board_rect_to_rectified(rect_mm: tuple[float, float, float, float], px_per_mm: float = 1.0) -> tuple[slice, slice]:
    """Numpy slices ``(rows, cols)`` of the rectified image covering a board-mm rectangle ``(x0, y0, x1, y1)``."""
    x0, y0, x1, y1 = (float(v) * px_per_mm for v in rect_mm)
    return slice(int(round(y0)), int(round(y1))), slice(int(round(x0)), int(round(x1)))


def point_rect_mm(point: int) -> tuple[float, float, float, float]:
    """Board-mm rectangle ``(x0, y0, x1, y1)`` of a point's column (width x half the field). Raises ValueError outside 1..24."""
    if not 1 <= point <= 24:
        raise ValueError(f"point: {point!r}: expected 1..24")
    p = GEOMETRY.points[point - 1]
    mid = (GEOMETRY.bar[1] + GEOMETRY.bar[3]) / 2
    y0, y1 = sorted((p.base_y, mid))
    return p.x0, y0, p.x1, y1


def rectify(
    geometry: Geometry,
    image: np.ndarray,
    px_per_mm: float | None = None,
    config: VisionConfig | None = None,
    window: tuple[slice, slice] | None = None,
    code: int | None = None,
) -> np.ndarray:
    """The board seen from above: ``image`` warped through ``geometry`` to board mm times ``px_per_mm``.

    ``px_per_mm`` defaults to ``config.px_per_mm``; what lies outside the frame is black. With
    ``window`` (rows and columns of the view, as :func:`board_rect_to_rectified` gives them) only
    those px are worked out, the same as without it, the rest black. With ``code`` (a
    ``cv2.COLOR_BGR2...`` conversion), only the frame's px that the window draws on are converted,
    then warped; black is black converted. Raises ValueError for a non-positive ``px_per_mm``.
    """
    s = _ppm(px_per_mm, config)
    key = _key(geometry, s)
    black = (
        0
        if code is None
        else tuple(float(v) for v in np.atleast_1d(cv2.cvtColor(np.zeros((1, 1, 3), np.uint8), code)[0, 0]))
    )
    if not _seen_before(key):
        src = image if code is None else cv2.cvtColor(image, code)
        dst_to_src = geometry.matrix @ rectified_to_board_matrix(s)
        out = cv2.warpPerspective(
            src,
            dst_to_src,
            rectified_size(s),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=black,
        )
        if window is not None:
            part = out[window].copy()
            out[:] = 0
            out[window] = part
        return out
    # a fixed camera: its maps pay for themselves from the second frame on
    maps = _maps(*key)
    if window is None and code is None:
        return cv2.remap(image, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    w, h = key[1]
    rows, cols = window or (slice(0, h), slice(0, w))
    rows, cols = slice(*rows.indices(h)[:2]), slice(*cols.indices(w)[:2])
    if code is None:
        out = np.zeros((h, w) + image.shape[2:], image.dtype)
        cv2.remap(
            image,
            maps[0][rows, cols],
            maps[1][rows, cols],
            cv2.INTER_LINEAR,
            dst=out[rows, cols],
            borderMode=cv2.BORDER_CONSTANT,
        )
        return out
    (y0, y1, x0, x1), shifted = _source_box(*key, image.shape[:2], (rows.start, rows.stop, cols.start, cols.stop))
    src = cv2.cvtColor(image[y0:y1, x0:x1], code)
    out = np.zeros((h, w) + src.shape[2:], src.dtype)
    cv2.remap(
        src,
        shifted,
        maps[1][rows, cols],
        cv2.INTER_LINEAR,
        dst=out[rows, cols],
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=black,
    )
    return out


def prepare(geometry: Geometry, px_per_mm: float) -> None:
    """Work out a fixed camera's maps now (tens of ms), so that its frames are rectified through them from the first."""
    key = _key(geometry, _ppm(px_per_mm, None))
    _maps(*key)
    _seen_before(key)


def warp(geometry: Geometry, image: np.ndarray, px_per_mm: float) -> np.ndarray:
    """:func:`rectify` worked out afresh, with no maps kept (the benchmarks' fixed reference workload)."""
    s = _ppm(px_per_mm, None)
    dst_to_src = geometry.matrix @ rectified_to_board_matrix(s)
    return cv2.warpPerspective(
        image,
        dst_to_src,
        rectified_size(s),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
    )


def _key(geometry: Geometry, s: float) -> tuple[bytes, tuple[int, int]]:
    """The transform from rectified px to image px (rectified px -> board mm -> image px) and the view's size: what the maps depend on."""
    return (geometry.matrix @ rectified_to_board_matrix(s)).tobytes(), rectified_size(s)


_SEEN: OrderedDict[tuple[bytes, tuple[int, int]], None] = OrderedDict()


def _seen_before(key: tuple[bytes, tuple[int, int]]) -> bool:
    """Whether a frame was rectified through this transform before (the last 16 transforms kept)."""
    seen = key in _SEEN
    _SEEN[key] = None
    _SEEN.move_to_end(key)
    while len(_SEEN) > 16:
        _SEEN.popitem(last=False)
    return seen


@lru_cache(maxsize=4)
def _maps(dst_to_src: bytes, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Where each rectified px comes from in the camera frame, as fixed-point maps for
    ``cv2.remap`` (the same px as ``cv2.warpPerspective``, which works them out on every frame)."""
    m = np.frombuffer(dst_to_src, np.float64).reshape(3, 3).astype(np.float32)
    xs = np.arange(size[0], dtype=np.float32)[None, :]
    ys = np.arange(size[1], dtype=np.float32)[:, None]
    den = m[2, 0] * xs + (m[2, 1] * ys + m[2, 2])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mx = (m[0, 0] * xs + (m[0, 1] * ys + m[0, 2])) / den
        my = (m[1, 0] * xs + (m[1, 1] * ys + m[1, 2])) / den
    # behind the camera, or too far off the frame for the fixed-point maps: outside, black
    off = ~((den > 0) & (np.abs(mx) < 30000) & (np.abs(my) < 30000))  # NaN compares false: off too
    mx[off], my[off] = -1000.0, -1000.0
    return cv2.convertMaps(mx, my, cv2.CV_16SC2)


@lru_cache(maxsize=4)
def _source_box(
    dst_to_src: bytes, size: tuple[int, int], frame: tuple[int, int], window: tuple[int, int, int, int]
) -> tuple[tuple[int, int, int, int], np.ndarray]:
    """The box ``(y0, y1, x0, x1)`` of the camera frame (of ``frame`` rows and columns) that the
    window ``(row0, row1, col0, col1)`` of the rectified view draws its px from (each px and its
    neighbours right and below, which bilinear sampling mixes in), and the window's maps' whole
    px shifted to that box: the px they draw on, the same px of a crop."""
    r0, r1, c0, c1 = window
    whole = _maps(dst_to_src, size)[0][r0:r1, c0:c1]
    xs, ys = whole[..., 0].astype(np.int32), whole[..., 1].astype(np.int32)
    h, w = frame
    seen = (xs >= -1) & (xs < w) & (ys >= -1) & (ys < h)
    if not seen.any():
        return (0, 1, 0, 1), np.full_like(whole, -1000)
    x0, x1 = max(0, int(xs[seen].min())), min(w, int(xs[seen].max()) + 2)
    y0, y1 = max(0, int(ys[seen].min())), min(h, int(ys[seen].max()) + 2)
    shifted = whole.copy()
    shifted[..., 0] -= x0
    shifted[..., 1] -= y0
    return (y0, y1, x0, x1), shifted
