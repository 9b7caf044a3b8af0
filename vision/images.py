"""Reading camera images from files, with a clear error for anything that is not one.

Owns :func:`load_image` (every ``tavli vision`` command that takes an image
uses it), :func:`grab_frame` (a still from a camera, for calibrating it) and
:class:`ImageError`. May import ``board_rules`` types; must not
import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError

MIN_SIDE_PX = 16
MAX_SIDE_PX = 20000
MAX_FILE_BYTES = 200 * 1024 * 1024


class ImageError(TavliError, ValueError):
    """An image file that is missing, unreadable, empty, not an image or of absurd size."""


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as a BGR uint8 array.

    Raises :class:`ImageError` if the file is missing, unreadable, empty, not an
    image, or smaller than ``MIN_SIDE_PX`` or larger than ``MAX_SIDE_PX`` on a side.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise ImageError(f"image: {str(path)!r}: cannot read it ({exc.strerror or exc})") from None
    if not p.is_file():
        raise ImageError(f"image: {str(path)!r}: not a file")
    if size == 0:
        raise ImageError(f"image: {str(path)!r}: the file is empty")
    if size > MAX_FILE_BYTES:
        raise ImageError(f"image: {str(path)!r}: {size} bytes: expected at most {MAX_FILE_BYTES}")
    try:
        data = np.fromfile(p, dtype=np.uint8)
    except OSError as exc:
        raise ImageError(f"image: {str(path)!r}: cannot read it ({exc.strerror or exc})") from None
    header = cv2.imdecode(data, cv2.IMREAD_REDUCED_GRAYSCALE_8) if size > 4096 else None
    if header is not None and max(header.shape) * 8 > MAX_SIDE_PX * 2:
        raise ImageError(f"image: {str(path)!r}: about {header.shape[1] * 8}x{header.shape[0] * 8} px: expected at most {MAX_SIDE_PX} px a side")
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None:
        raise ImageError(f"image: {str(path)!r}: not an image that can be read (PNG, JPEG, BMP, TIFF ...)")
    h, w = image.shape[:2]
    if min(h, w) < MIN_SIDE_PX or max(h, w) > MAX_SIDE_PX:
        raise ImageError(f"image: {str(path)!r}: {w}x{h} px: expected {MIN_SIDE_PX} to {MAX_SIDE_PX} px a side")
    return image


def grab_frame(source: str, size: tuple[int, int] | None = None, settle: int = 10) -> np.ndarray:
    """One frame from a camera (a device number, e.g. ``"0"``) or a video file, as a BGR uint8 array:
    the frame after ``settle`` more (a camera's exposure and focus settle over its first frames; a
    video shorter than that gives its last). ``size`` (width, height) is asked of a camera; it may
    give another.

    Raises :class:`ImageError` if the source cannot be opened or gives no frame, ValueError for
    a ``settle`` below 0 or a ``size`` that is not two positive numbers.
    """
    if isinstance(settle, bool) or not isinstance(settle, int) or settle < 0:
        raise ValueError(f"settle: {settle!r}: expected a number of frames >= 0")
    if size is not None and (len(size) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)):
        raise ValueError(f"size: {size!r}: expected (width, height) in px")
    camera = source.isdigit()
    cap = cv2.VideoCapture(int(source) if camera else source)
    try:
        if not cap.isOpened():
            raise ImageError(f"camera {source!r}: cannot open it ({'no such camera, or it is busy' if camera else 'no such video file'})")
        if camera and size is not None:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        frame = None
        for _ in range(settle + 1):
            ok, got = cap.read()
            if not ok:
                break
            frame = got
        if frame is None:
            raise ImageError(f"camera {source!r}: gives no frames")
        return frame
    finally:
        cap.release()
