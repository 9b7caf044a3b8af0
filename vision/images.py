"""Reading camera images from files, with a clear error for anything that is not one.

Owns :func:`load_image` (every ``tavli vision`` command that takes an image
uses it), :func:`grab_frame` (a still from a camera, for calibrating it) and
:class:`ImageError`. May import ``board_rules`` types; must not
import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError
from board_rules.untrusted import is_digits

MIN_SIDE_PX = 16
MAX_SIDE_PX = 20000
MAX_PIXELS = 50_000_000  # decoded as BGR that is 150 MB; a Raspberry Pi has 1 to 8 GB
MAX_FILE_BYTES = 200 * 1024 * 1024
_REDUCED = ((2, cv2.IMREAD_REDUCED_COLOR_2), (4, cv2.IMREAD_REDUCED_COLOR_4), (8, cv2.IMREAD_REDUCED_COLOR_8))


class ImageError(TavliError, ValueError):
    """An image file that is missing, unreadable, empty, not an image, truncated or of absurd size."""


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as a BGR uint8 array.

    Grey, 16-bit and CMYK images are converted to 8-bit BGR; an alpha channel is laid
    over white (a product photo's transparent background); a JPEG is turned upright
    as its EXIF orientation says. The size is read from the file's header before it
    is decoded (PNG, JPEG, BMP, GIF, WebP, TIFF, PNM), so an image that would decode
    into gigabytes is refused without decoding it; a JPEG over ``MAX_PIXELS`` is decoded
    at a half, quarter or eighth of its size instead (the decoder scales as it goes).

    Raises :class:`ImageError` if the file is missing, unreadable, empty, not one of
    those formats, truncated, smaller than ``MIN_SIDE_PX`` or larger than ``MAX_SIDE_PX``
    on a side, or (not a JPEG) over ``MAX_PIXELS``.
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
    kind, dims = _header_size(memoryview(data))
    if kind is None:
        raise ImageError(f"image: {str(path)!r}: not an image that can be read (PNG, JPEG, BMP, TIFF ...)")
    if dims is None:
        raise ImageError(f"image: {str(path)!r}: a {kind.upper()} file whose header does not say its size (damaged)")
    _check_size(path, *dims)
    flag = _decode_flag(path, dims, scalable=kind == "jpeg")
    alpha = kind == "webp" or (
        kind == "png" and data[25:26].tobytes() in (b"\x04", b"\x06")
    )  # PNG colour types grey+alpha, RGBA
    try:
        if alpha:
            image = _to_bgr8(cv2.imdecode(data, cv2.IMREAD_UNCHANGED))
        else:
            image = cv2.imdecode(data, flag)
    except cv2.error:
        image = None
    if image is None:
        what = (
            f"a {kind.upper()} file that cannot be decoded (truncated or damaged)"
            if kind
            else "not an image that can be read (PNG, JPEG, BMP, TIFF ...)"
        )
        raise ImageError(f"image: {str(path)!r}: {what}")
    h, w = image.shape[:2]
    if flag == cv2.IMREAD_COLOR:
        _check_size(path, w, h)
    return np.ascontiguousarray(image)


def _check_size(path: str | Path, w: int, h: int) -> None:
    if min(w, h) < MIN_SIDE_PX or max(w, h) > MAX_SIDE_PX:
        raise ImageError(f"image: {str(path)!r}: {w}x{h} px: expected {MIN_SIDE_PX} to {MAX_SIDE_PX} px a side")


def _decode_flag(path: str | Path, dims: tuple[int, int], *, scalable: bool) -> int:
    """``cv2.imdecode``'s flag for an image of ``dims`` px: full size up to ``MAX_PIXELS``; larger, at the
    first scale that fits where the decoder can scale as it goes (``scalable``: a JPEG), else refused."""
    pixels = dims[0] * dims[1]
    if pixels <= MAX_PIXELS:
        return cv2.IMREAD_COLOR
    if scalable:
        for scale, flag in _REDUCED:
            if pixels // (scale * scale) <= MAX_PIXELS:
                return flag
    raise ImageError(
        f"image: {str(path)!r}: {dims[0]}x{dims[1]} px is {pixels / 1e6:.0f} megapixels: "
        f"expected at most {MAX_PIXELS // 1_000_000} (save it smaller)"
    )


def check_image_header(path: str | Path) -> None:
    """Refuse a still for a camera source (decoded whole, by the video reader) whose header states
    more than ``MAX_PIXELS`` or a side out of range, reading only its first megabyte; a file that
    is no image of a known format passes (a video). Raises :class:`ImageError`."""
    try:
        with open(path, "rb") as fh:
            head = np.frombuffer(fh.read(1 << 20), dtype=np.uint8)
    except OSError as exc:
        raise ImageError(f"image: {str(path)!r}: cannot read it ({exc.strerror or exc})") from None
    kind, dims = _header_size(memoryview(head))
    if kind is not None and dims is not None:
        _check_size(path, *dims)
        _decode_flag(path, dims, scalable=False)  # a camera source decodes it whole: no JPEG scaling


def _to_bgr8(image: np.ndarray | None) -> np.ndarray | None:
    """A PNG or WebP decoded as it is (8 or 16 bits; grey, BGR or BGRA) as 8-bit BGR, alpha laid over white."""
    if image is None or image.size == 0 or image.dtype not in (np.uint8, np.uint16):
        return None
    top = 65535.0 if image.dtype == np.uint16 else 255.0
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[2] in (2, 4):  # the last channel is alpha
        alpha = image[:, :, -1:].astype(np.float32) / top
        colour = image[:, :, :-1].astype(np.float32) * (255.0 / top) * alpha + 255.0 * (1.0 - alpha)
    else:
        colour = image[:, :, :3].astype(np.float32) * (255.0 / top)
    if colour.shape[2] == 1:
        colour = np.repeat(colour, 3, axis=2)
    return colour.round().astype(np.uint8)


def _header_size(data: memoryview) -> tuple[str | None, tuple[int, int] | None]:
    """The format (``"png"``, ``"jpeg"``, ``"bmp"``, ``"gif"``, ``"webp"``, ``"tiff"``, ``"pnm"``, or None)
    and the (width, height) in px that an image file's header states, without decoding it (a
    JPEG's segments and a TIFF's first IFD are looked up where they lie); the size is None where
    the header does not say it (a truncated file, another format)."""
    head = bytes(data[:1024])
    try:
        if head[:8] == b"\x89PNG\r\n\x1a\n":
            return "png", (struct.unpack(">II", head[16:24]) if head[12:16] == b"IHDR" else None)
        if head[:2] == b"\xff\xd8":
            return "jpeg", _jpeg_size(data)
        if head[:2] == b"BM":
            if struct.unpack("<I", head[14:18])[0] == 12:  # OS/2 BITMAPCOREHEADER
                return "bmp", struct.unpack("<HH", head[18:22])
            w, h = struct.unpack("<ii", head[18:26])
            return "bmp", (abs(w), abs(h))
        if head[:6] in (b"GIF87a", b"GIF89a"):
            return "gif", struct.unpack("<HH", head[6:10])
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            chunk = head[12:16]
            if chunk == b"VP8 ":
                w, h = struct.unpack("<HH", head[26:30])
                return "webp", (w & 0x3FFF, h & 0x3FFF)
            if chunk == b"VP8L":
                bits = struct.unpack("<I", head[21:25])[0]
                return "webp", ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
            if chunk == b"VP8X":
                return "webp", (int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1)
            return "webp", None
        if head[:4] in (b"II*\x00", b"MM\x00*"):
            return "tiff", _tiff_size(data)
        if len(head) > 2 and head[:1] == b"P" and head[1:2] in b"123456" and head[2:3].isspace():
            return "pnm", _pnm_size(head)
    except struct.error:  # the header ends early: a truncated file
        pass
    return None, None


def _jpeg_size(head: memoryview) -> tuple[int, int] | None:
    """Width and height from a JPEG's first SOF marker, walking the marker segments before it."""
    i = 2
    while i + 9 <= len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # standalone markers
            i += 2
            continue
        if marker == 0xD9 or marker == 0xDA:  # end of image, start of scan: no frame header before it
            return None
        length = int.from_bytes(head[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(head[i + 7 : i + 9], "big"), int.from_bytes(head[i + 5 : i + 7], "big")
        i += 2 + length
    return None


def _tiff_size(head: memoryview) -> tuple[int, int] | None:
    """ImageWidth and ImageLength of a TIFF's first IFD."""
    order = "<" if head[:2] == b"II" else ">"
    at = struct.unpack(order + "I", head[4:8])[0]
    count = struct.unpack(order + "H", head[at : at + 2])[0]
    found: dict[int, int] = {}
    for k in range(count):
        tag, kind, _, value = struct.unpack(order + "HHI4s", head[at + 2 + 12 * k : at + 14 + 12 * k])
        if tag in (256, 257):
            found[tag] = struct.unpack(order + ("H" if kind == 3 else "I"), value[:2] if kind == 3 else value)[0]
    return (found[256], found[257]) if len(found) == 2 else None


def _pnm_size(head: bytes) -> tuple[int, int] | None:
    """Width and height of a PBM/PGM/PPM header (comments skipped)."""
    words: list[bytes] = []
    for line in head[2:].split(b"\n"):
        words += line.split(b"#", 1)[0].split()
        if len(words) >= 2:
            break
    return (int(words[0]), int(words[1])) if len(words) >= 2 and words[0].isdigit() and words[1].isdigit() else None


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
    if size is not None and (
        len(size) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)
    ):
        raise ValueError(f"size: {size!r}: expected (width, height) in px")
    camera = is_digits(source)
    if not camera and os.path.isfile(source):
        check_image_header(source)
    cap = cv2.VideoCapture(int(source) if camera else source)
    try:
        if not cap.isOpened():
            raise ImageError(
                f"camera {source!r}: cannot open it ({'no such camera, or it is busy' if camera else 'no such video file'})"
            )
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
