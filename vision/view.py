"""The view: a calibrated camera frame seen from above, as the readers of checkers and cube look at it.

Owns :class:`View` and :func:`view` (the frame rectified at the reading resolution to Lab colours
and an orientation-free edge strength, worked out on the field and trays alone), the camera's
noise (:func:`noise_grey`, which sets the edge map's blur) and sampling a view (:func:`sample_px`,
:func:`disc_colour`). May import ``board_rules`` types; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from vision import profile
from vision.calibrate import Geometry
from vision.config import VisionConfig, default_config
from vision.profile import Layout
from vision.rectify import board_rect_to_rectified, rectified_size, rectify
from vision.stats import median_rows


@dataclass(frozen=True, slots=True)
class View:
    """A frame seen from above: rectified Lab colours and edge strength at ``ppm`` px per board mm,
    and the board layout whose mm they are. Its BGR px are worked out only where asked for
    (:meth:`bgr_near`: the cube's face); ``frame`` is ``(geometry, image)`` they come from."""

    lab: np.ndarray
    edges: np.ndarray
    ppm: float
    threshold: float
    layout: Layout = field(default_factory=profile.layout)
    frame: tuple[Geometry, np.ndarray] | None = None

    def bgr_near(self, centre_mm, radius_mm: float) -> np.ndarray:
        """The rectified frame's BGR px (the view's size) within ``radius_mm`` across and down of a
        board-mm place, and a px more; black elsewhere. Raises ValueError for a view without its frame."""
        if self.frame is None:
            raise ValueError("view: made without its frame: expected view(geometry, image)")
        h, w = self.edges.shape
        x0, y0 = (int(np.floor((c - radius_mm) * self.ppm - 1.5)) for c in centre_mm)
        x1, y1 = (int(np.ceil((c + radius_mm) * self.ppm + 1.5)) for c in centre_mm)
        window = slice(min(h, max(0, y0)), min(h, max(0, y1))), slice(min(w, max(0, x0)), min(w, max(0, x1)))
        return rectify(self.frame[0], self.frame[1], px_per_mm=self.ppm, window=window)

    def edges_at(self, points_mm) -> np.ndarray:
        """Whether the frame shows an edge at each board-mm point (N x 2 -> N bools)."""
        return self.edge_strength_at(points_mm) > self.threshold

    def edge_strength_at(self, points_mm) -> np.ndarray:
        """The edge strength at each board-mm point (N x 2 -> N floats; an edge above ``threshold``)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return sample_px(self.edges[..., None], pts * self.ppm - 0.5)[:, 0]

    def lab_at(self, points_mm) -> np.ndarray:
        """Lab colours at board-mm points (N x 2 -> N x 3 float)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return sample_px(self.lab, pts * self.ppm - 0.5).astype(np.float32)

    def photo_lab_at(self, points_mm) -> tuple[np.ndarray, np.ndarray]:
        """The frame's Lab colours at board-mm points anywhere on the board, the view's window or not
        (N x 2 -> N x 3 float), and whether each lies in the frame at all (N bools; off it, its colour is
        the nearest edge's). Raises ValueError for a view without its frame."""
        if self.frame is None:
            raise ValueError("view: made without its frame: expected view(geometry, image)")
        geometry, image = self.frame
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if not len(pts):
            return np.zeros((0, 3), np.float32), np.zeros(0, bool)
        px = geometry.to_image(pts)
        h, w = image.shape[:2]
        inside = (px[:, 0] >= 0) & (px[:, 0] <= w - 1) & (px[:, 1] >= 0) & (px[:, 1] <= h - 1)
        bgr = sample_px(image, np.clip(px, 0, (w - 1, h - 1)))
        lab = cv2.cvtColor(bgr.reshape(-1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2LAB).reshape(-1, 3)
        return lab.astype(np.float32), inside


def view(geometry: Geometry, image: np.ndarray, config: VisionConfig | None = None) -> View:
    """Rectify a camera frame for reading. Raises ValueError for an image that is not a BGR uint8 array."""
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image: expected a BGR uint8 array, got {getattr(image, 'shape', type(image))!r}")
    cfg = config or default_config()
    ppm = float(cfg.read_px_per_mm)
    noise = noise_grey(image)
    blur = cfg.edge_blur_mm_per_grey * noise if noise > cfg.edge_blur_above_noise else 0.0
    window = _reading_window(geometry.layout, ppm, blur)
    # Lab worked out on the frame's px that the window draws on, then warped: a fixed camera's
    # frame holds the field and trays in about a third of the top-down view's px
    lab = rectify(geometry, image, px_per_mm=ppm, window=window, code=cv2.COLOR_BGR2LAB)
    edges = np.zeros(lab.shape[:2], np.uint8)
    _edge_map(lab[window], ppm, blur, dst=edges[window])
    return View(lab, edges, ppm, float(cfg.edge_threshold), geometry.layout, (geometry, image))


def _reading_window(lay: Layout, ppm: float, blur_mm: float) -> tuple[slice, slice]:
    """The rows and columns of the rectified view that a reading looks at: the field and the
    trays, where every rim, colour, cube and board edge is sampled, and a margin around them wide
    enough that the edge map there is the same as on the whole view (the blur's and the range's
    reach, and a px for bilinear sampling). The board's frame beyond them is not worked out."""
    g = lay.geometry
    boxes = (lay.field, g.tray_white, g.tray_black)
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    m = 3 * blur_mm + 6 / ppm + 1.0  # the blur reaches 3 sigma and a px, the range about 1 mm and a px
    width, height = rectified_size(ppm)
    rows, cols = board_rect_to_rectified((x0 - m, y0 - m, x1 + m, y1 + m), ppm)
    return slice(max(0, rows.start), min(height, rows.stop)), slice(max(0, cols.start), min(width, cols.stop))


def _edge_map(lab: np.ndarray, ppm: float, blur_mm: float = 0.0, dst: np.ndarray | None = None) -> np.ndarray:
    """Orientation-free edge strength of the rectified view: the local range (dilate minus
    erode over about 2 mm) of lightness, plus half that of the colour channels, after a
    Gaussian blur of ``blur_mm`` (a range over some 20 px grows with the camera's noise: a
    sensor's few grey levels of noise alone would pass the edge threshold)."""
    k = max(3, int(round(2 * ppm)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    if blur_mm > 0:
        lab = cv2.GaussianBlur(lab, (0, 0), blur_mm * ppm)
    grad = cv2.morphologyEx(lab, cv2.MORPH_GRADIENT, kernel)
    # one pass over the three channels; a sum above 255 is an edge all the same
    return cv2.transform(grad, _EDGE_WEIGHTS, dst=dst)


_EDGE_WEIGHTS = np.array([[1.0, 0.5, 0.5]], np.float32)  # lightness, and half of each colour channel
_NOISE_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)


def noise_grey(image: np.ndarray, side: int = 512) -> float:
    """The camera's noise, in grey levels (sigma), estimated on the middle ``side`` px square of a
    BGR frame from the mean absolute response to a kernel that cancels edges and slopes (Immerkaer)."""
    h, w = image.shape[:2]
    y0, x0 = max(0, (h - side) // 2), max(0, (w - side) // 2)
    grey = cv2.cvtColor(image[y0 : y0 + side, x0 : x0 + side], cv2.COLOR_BGR2GRAY).astype(np.float32)
    if min(grey.shape) < 3:
        return 0.0
    response = cv2.filter2D(grey, -1, _NOISE_KERNEL)[1:-1, 1:-1]
    return float(np.sqrt(np.pi / 2) * np.abs(response).mean() / 6)


def sample_px(img: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """Bilinear samples of ``img`` (HxWxC) at Nx2 px: NxC."""
    n = len(pts_px)
    cols = 1024
    rows = max(1, -(-n // cols))
    flat = np.zeros((rows * cols, 2), np.float32)
    flat[:n] = pts_px
    out = cv2.remap(
        img, flat.reshape(rows, cols, 2), None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )  # one two-channel map: no copies
    return out.reshape(rows * cols, -1)[:n]


def disc_colour(lab: np.ndarray, centre_mm, ppm: float, radius_mm: float) -> np.ndarray:
    """Median Lab colour of a disc (board mm) of the rectified view."""
    at = disc_px(
        float(centre_mm[0] * ppm - 0.5), float(centre_mm[1] * ppm - 0.5), float(radius_mm * ppm), lab.shape[:2]
    )
    if at is None:
        return np.zeros(3, np.float32)
    ys, xs = at
    return median_rows(lab[ys, xs].T).astype(np.float32)


@lru_cache(maxsize=1024)
def disc_px(cx: float, cy: float, rad: float, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """The px (rows, columns, row by row) of a view of ``shape`` within ``rad`` of (cx, cy), in
    the box :func:`disc_colour` looks in; None for an empty box. A layout's slots are the same
    places on every frame: each disc is worked out once."""
    x0, x1 = int(max(0, cx - rad)), int(min(shape[1], cx + rad + 1))
    y0, y1 = int(max(0, cy - rad)), int(min(shape[0], cy + rad + 1))
    if x1 <= x0 or y1 <= y0:
        return None
    ys, xs = np.ogrid[y0:y1, x0:x1]
    m = (xs - cx) ** 2 + (ys - cy) ** 2 <= rad * rad
    rows, cols = np.nonzero(m)
    return rows + y0, cols + x0
