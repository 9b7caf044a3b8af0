"""No image makes a ``tavli vision`` command raise: every sub-command, given a photo or a mutated
one (cropped, turned, tiny, huge, grey, 16-bit, with alpha, CMYK, truncated, not an image, empty),
exits 0 with its output or 2 with a one-line message, never a traceback.

The mutations are made here from a rendered frame and, where ``../shared/data/dice/matteop65/Valid``
is present, from two real photos of it (nothing else of ``../shared`` is read).
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from board_rules import Position
from tests.test_cli import run
from vision.images import load_image
from vision.profile import layout
from vision.render import render

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice" / "matteop65" / "Valid"
START = Position.start("backgammon")
SIZE = (480, 360)


# ----------------------------------------------------------------- making the images


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _huge_png() -> bytes:
    """A PNG whose header says 30000 x 30000 px grey (its data is a few rows: never decoded)."""
    ihdr = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", zlib.compress(b"\0" * 30001 * 4))
        + _png_chunk(b"IEND", b"")
    )


def _huge_jpeg(image: np.ndarray) -> bytes:
    """A JPEG of ``image`` whose frame header is changed to say 30000 x 30000 px."""
    data = bytearray(cv2.imencode(".jpg", image)[1].tobytes())
    sof = data.find(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", 30000, 30000)
    return bytes(data)


def cmyk_jpeg(blocks: np.ndarray) -> bytes:
    """A baseline JPEG with four components (CMYK, with Adobe's marker), each 8 x 8 block one flat
    colour: ``blocks`` is rows x cols x 4 of 0..255 (inverted CMYK, as Adobe writes it)."""
    rows, cols, _ = blocks.shape

    def seg(marker: int, payload: bytes) -> bytes:
        return struct.pack(">HH", 0xFF00 | marker, len(payload) + 2) + payload

    out = b"\xff\xd8" + seg(0xEE, b"Adobe" + struct.pack(">HHHB", 100, 0, 0, 0))
    out += seg(0xDB, b"\x00" + b"\x01" * 64)
    out += seg(
        0xC0, struct.pack(">BHHB", 8, rows * 8, cols * 8, 4) + b"".join(bytes((i + 1, 0x11, 0)) for i in range(4))
    )
    out += seg(0xC4, b"\x00" + bytes([0, 0, 0, 12] + [0] * 12) + bytes(range(12)))  # DC: categories 0..11, 4-bit codes
    out += seg(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\x00")  # AC: end of block only, code 0
    out += seg(0xDA, bytes([4]) + b"".join(bytes((i + 1, 0)) for i in range(4)) + bytes((0, 63, 0)))
    bits: list[str] = []
    prev = [0] * 4
    for r in range(rows):
        for c in range(cols):
            for k in range(4):
                dc = 8 * (int(blocks[r, c, k]) - 128)
                diff, prev[k] = dc - prev[k], dc
                s = abs(diff).bit_length()
                bits.append(
                    format(s, "04b") + (format(diff if diff >= 0 else diff + (1 << s) - 1, f"0{s}b") if s else "") + "0"
                )
    stream = "".join(bits)
    stream += "1" * (-len(stream) % 8)
    data = bytes(int(stream[i : i + 8], 2) for i in range(0, len(stream), 8))
    return out + data.replace(b"\xff", b"\xff\x00") + b"\xff\xd9"


def _cmyk_of(image: np.ndarray) -> bytes:
    rgb = cv2.resize(image, (image.shape[1] // 8, image.shape[0] // 8), interpolation=cv2.INTER_AREA)[
        :, :, ::-1
    ].astype(np.float32)
    k = rgb.max(axis=2, keepdims=True)  # inverted: 255 is no ink
    cmy = np.where(k > 0, rgb * 255.0 / np.maximum(k, 1), 255.0)
    return cmyk_jpeg(np.dstack([cmy, k]).round().astype(np.uint8))


def _turned(image: np.ndarray, degrees: float) -> np.ndarray:
    h, w = image.shape[:2]
    return cv2.warpAffine(image, cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0), (w, h))


def _with_alpha(image: np.ndarray) -> np.ndarray:
    out = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    out[:, : image.shape[1] // 3, 3] = 0
    out[:, image.shape[1] // 3 : image.shape[1] // 2, 3] = 128
    return out


def _encoded(image: np.ndarray, ext: str) -> bytes:
    ok, data = cv2.imencode(ext, image)
    assert ok
    return data.tobytes()


# name -> (file extension, bytes of the file made from a BGR image)
MUTATIONS = {
    "as-is": (".png", lambda im: _encoded(im, ".png")),
    "cropped": (
        ".png",
        lambda im: _encoded(
            im[im.shape[0] // 5 : im.shape[0] * 3 // 4, im.shape[1] // 6 : im.shape[1] * 2 // 3], ".png"
        ),
    ),
    "turned-90": (".png", lambda im: _encoded(cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE), ".png")),
    "turned-17": (".png", lambda im: _encoded(_turned(im, 17.0), ".png")),
    "1x1": (".png", lambda im: _encoded(cv2.resize(im, (1, 1), interpolation=cv2.INTER_AREA), ".png")),
    "3x3": (".png", lambda im: _encoded(cv2.resize(im, (3, 3), interpolation=cv2.INTER_AREA), ".png")),
    "8x8": (".jpg", lambda im: _encoded(cv2.resize(im, (8, 8), interpolation=cv2.INTER_AREA), ".jpg")),
    "16x16": (".png", lambda im: _encoded(cv2.resize(im, (16, 16), interpolation=cv2.INTER_AREA), ".png")),
    "300x16": (".png", lambda im: _encoded(cv2.resize(im, (300, 16), interpolation=cv2.INTER_AREA), ".png")),
    "huge-png": (".png", lambda im: _huge_png()),
    "huge-jpeg": (".jpg", _huge_jpeg),
    "grey": (".png", lambda im: _encoded(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), ".png")),
    "grey-jpeg": (".jpg", lambda im: _encoded(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), ".jpg")),
    "cmyk-jpeg": (".jpg", _cmyk_of),
    "alpha": (".png", lambda im: _encoded(_with_alpha(im), ".png")),
    "16-bit": (".png", lambda im: _encoded(im.astype(np.uint16) * 257, ".png")),
    "16-bit-grey": (".png", lambda im: _encoded(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY).astype(np.uint16) * 257, ".png")),
    "16-bit-alpha": (".png", lambda im: _encoded(_with_alpha(im).astype(np.uint16) * 257, ".png")),
    "truncated-png": (".png", lambda im: _encoded(im, ".png")[: len(_encoded(im, ".png")) // 2]),
    "truncated-jpeg": (".jpg", lambda im: _encoded(im, ".jpg")[: len(_encoded(im, ".jpg")) // 2]),
    "header-only-jpeg": (".jpg", lambda im: _encoded(im, ".jpg")[:200]),
    "not-an-image": (".jpg", lambda im: b"a shopping list, not a photo\n"),
    "random-bytes": (".png", lambda im: np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8).tobytes()),
    "empty": (".png", lambda im: b""),
}
# the real photos are 640 x 480: two as they are, the first of them mutated a few ways
REAL_CASES = [(k, "as-is") for k in range(2)] + [(0, m) for m in ("cropped", "grey", "cmyk-jpeg", "16-bit-alpha")]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A small rendered frame with dice and cube, its geometry (from the true board corners) and the start position file."""
    folder = tmp_path_factory.mktemp("rendered")
    frame = render(START, dice=[(3, None), (5, None)], cube=(2, "centre"), seed=3, size=SIZE)
    corners = frame.homography @ np.array([[x, y, 1.0] for x, y in layout().board_corners_mm]).T
    corners = (corners[:2] / corners[2]).T
    image = folder / "frame.png"
    cv2.imwrite(str(image), frame.image)
    geometry = folder / "geometry.json"
    code, _, err = run(
        [
            "vision",
            "calibrate",
            str(image),
            "--corners",
            ",".join(f"{v:.2f}" for v in corners.ravel()),
            "-o",
            str(geometry),
        ]
    )
    assert code == 0, err
    position = folder / "start.json"
    position.write_text(START.to_json())
    return frame.image, geometry, position


def _assert_exits_cleanly(argv: list[str]) -> tuple[int, str]:
    """Run ``tavli ARGV``: exit 0, or 2 with messages that are each one line of ``tavli vision``'s
    own (no traceback); JSON that parses where the command prints JSON."""
    code, out, err = run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err
    assert all(line.startswith("tavli vision") for line in err.splitlines()), err
    if code == 2:
        assert err.strip(), argv
    elif argv[1] in ("dice", "read"):
        json.loads(out)
    return code, err


def _every_command(path: Path, folder: Path, geometry: Path, position: Path) -> dict[str, int]:
    """Every ``tavli vision`` sub-command that takes an image, run on ``path``: each one's exit code.
    ``read`` takes the rendered frame's geometry; where it refuses the image (another picture's
    size), ``read at corners`` a geometry calibrated on ``path`` itself at made-up field corners.
    ``learn`` takes the geometry that read the image."""
    p, out = str(path), str(folder / "out.png")
    codes = {
        "dice": _assert_exits_cleanly(["vision", "dice", p])[0],
        "calibrate": _assert_exits_cleanly(["vision", "calibrate", p, "-o", str(folder / "markers.json")])[0],
        "read": _assert_exits_cleanly(["vision", "read", p, "--geometry", str(geometry), "--annotate", out])[0],
        "grab": _assert_exits_cleanly(["vision", "grab", "--camera", p, "--settle", "0", "-o", out])[0],
        "render": _assert_exits_cleanly(["vision", "render", p, "-o", out])[0],
    }
    try:
        h, w = load_image(path).shape[:2]
    except ValueError:
        h, w = 100, 100
    own = folder / "corners.json"
    corners = f"{w * 0.1},{h * 0.1},{w * 0.9},{h * 0.1},{w * 0.9},{h * 0.9},{w * 0.1},{h * 0.9}"
    codes["calibrate --corners"] = _assert_exits_cleanly(
        ["vision", "calibrate", p, "--corners", corners, "--field", "-o", str(own)]
    )[0]
    at = geometry if codes["read"] == 0 or codes["calibrate --corners"] != 0 else own
    if at == own:
        codes["read at corners"] = _assert_exits_cleanly(["vision", "read", p, "--geometry", str(at)])[0]
    codes["learn"] = _assert_exits_cleanly(
        ["vision", "learn", p, "--geometry", str(at), "--position", str(position), "-o", str(folder / "p.json")]
    )[0]
    return codes


# ----------------------------------------------------------------- the tests


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_no_mutation_of_a_rendered_frame_makes_a_vision_command_raise(tmp_path, rendered, mutation):
    image, geometry, position = rendered
    ext, make = MUTATIONS[mutation]
    path = tmp_path / f"photo{ext}"
    path.write_bytes(make(image))
    codes = _every_command(path, tmp_path, geometry, position)
    assert codes["render"] == 2  # an image is no position file
    try:
        load_image(path)
    except ValueError:
        assert codes["dice"] == codes["read"] == codes["calibrate --corners"] == codes["learn"] == 2
    else:
        assert (
            codes["dice"] == 0
            and codes["calibrate --corners"] == 0
            and 0 in (codes["read"], codes.get("read at corners"))
        )


@pytest.mark.timeout(60)
@pytest.mark.skipif(not REAL.is_dir(), reason=f"{REAL} is absent")
@pytest.mark.parametrize("photo, mutation", REAL_CASES)
def test_no_mutation_of_a_real_photo_makes_a_vision_command_raise(tmp_path, rendered, photo, mutation):
    _, geometry, position = rendered
    ext, make = MUTATIONS[mutation]
    path = tmp_path / f"photo{ext}"
    path.write_bytes(make(cv2.imread(str(sorted(REAL.glob("*.jpg"))[photo]))))
    codes = _every_command(path, tmp_path, geometry, position)
    assert (
        codes["dice"] == 0 and codes["calibrate --corners"] == 0 and 0 in (codes["read"], codes.get("read at corners"))
    )


def test_huge_images_are_refused_from_their_header_with_their_size(tmp_path):
    for name in ("huge-png", "huge-jpeg"):
        ext, make = MUTATIONS[name]
        path = tmp_path / f"huge{ext}"
        path.write_bytes(make(np.zeros((40, 40, 3), np.uint8)))
        code, _, err = run(["vision", "dice", str(path)])
        assert code == 2 and "30000x30000 px" in err and "huge" in err


def _png_of(width: int, height: int) -> bytes:
    """A whole PNG of ``width`` x ``height`` black px: a few hundred KB that decode into ``3 * width * height`` bytes."""
    z = zlib.compressobj(9)
    body = b"".join(z.compress(b"\0" * (1 + 3 * width)) for _ in range(height)) + z.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def test_an_image_that_decodes_into_gigabytes_is_refused_before_decoding(tmp_path, monkeypatch):
    """Issue 19 item 5: a 12000x12000 PNG inside the size limits (420 KB) decoded into 430 MB before."""
    import vision.images as images

    monkeypatch.setattr(images, "MAX_PIXELS", 1_000_000)  # the same refusal at a cost a test can pay
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_of(1500, 1000))
    code, _, err = run(["vision", "dice", str(path)])
    assert code == 2 and "1500x1000 px is 2 megapixels: expected at most 1" in err
    code, _, err = run(["play", "--camera", str(path), "--geometry", str(tmp_path / "g.json")])
    assert code == 2 and "1500x1000 px" in err
    with pytest.raises(images.ImageError, match="1500x1000"):
        images.grab_frame(str(path))


def test_a_jpeg_over_the_pixel_cap_is_decoded_at_a_scale_that_fits(tmp_path, monkeypatch):
    import vision.images as images

    monkeypatch.setattr(images, "MAX_PIXELS", 1_000_000)
    image = np.full((1200, 2000, 3), 90, np.uint8)
    cv2.rectangle(image, (0, 0), (999, 1199), (30, 160, 220), -1)
    path = tmp_path / "phone.jpg"
    cv2.imwrite(str(path), image)
    got = load_image(path)
    assert got.shape == (600, 1000, 3)  # half: 0.6 megapixels
    assert np.abs(got[300, 200].astype(int) - [30, 160, 220]).max() <= 4


def test_a_file_of_no_known_image_format_is_refused_before_decoding(tmp_path):
    path = tmp_path / "frame.pfm"
    cv2.imwrite(str(path), np.zeros((32, 32, 3), np.float32))
    with pytest.raises(ValueError, match="not an image that can be read"):
        load_image(path)


def test_grey_16_bit_alpha_and_cmyk_images_load_as_8_bit_bgr(tmp_path):
    image = np.zeros((32, 48, 3), np.uint8)
    image[:, :, 0], image[:, :, 1], image[:, :, 2] = 40, 120, 200  # B, G, R
    for name in ("grey", "16-bit", "16-bit-grey", "alpha", "16-bit-alpha", "cmyk-jpeg"):
        ext, make = MUTATIONS[name]
        path = tmp_path / f"{name}{ext}"
        path.write_bytes(make(image))
        got = load_image(path)
        assert got.shape == (32, 48, 3) and got.dtype == np.uint8, name
    grey = int(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)[0, 0])
    assert load_image(tmp_path / "grey.png")[0, 0].tolist() == [grey] * 3
    assert load_image(tmp_path / "16-bit.png")[0, 0].tolist() == [40, 120, 200]
    alpha = load_image(tmp_path / "alpha.png")  # transparent on the left third, half on to the middle
    assert alpha[0, 0].tolist() == [255, 255, 255] and alpha[0, -1].tolist() == [40, 120, 200]
    assert alpha[0, 20].tolist() == [round(v * 128 / 255 + 255 * 127 / 255) for v in (40, 120, 200)]
    assert np.abs(load_image(tmp_path / "cmyk-jpeg.jpg")[0, 0].astype(int) - [40, 120, 200]).max() <= 3


def test_vision_dice_prints_plain_json_where_the_reader_hands_over_numpy_values(tmp_path, monkeypatch):
    """A die flagged cocked by a numpy comparison (numpy's bool is no JSON value) prints as JSON's false."""
    from vision import dice
    from vision.dice import DieReading

    path = tmp_path / "photo.png"
    cv2.imwrite(str(path), np.full((64, 64, 3), 200, np.uint8))
    reading = DieReading(4, (10, 12, 20, 20), (np.float64(20.0), np.float32(22.0)), np.bool_(False), np.float32(0.75))
    monkeypatch.setattr(dice, "read_dice", lambda config, image, **options: [reading])
    code, out, err = run(["vision", "dice", str(path)])
    assert code == 0, err
    assert json.loads(out) == [
        {"value": 4, "box": [10, 12, 20, 20], "centre": [20.0, 22.0], "cocked": False, "confidence": 0.75}
    ]


def test_an_observation_with_numpy_values_in_it_is_plain_json():
    """Whatever numpy types the readers hand over, ``tavli vision read``'s observation dumps as JSON."""
    from vision.checkers import CheckerReading
    from vision.cube import CubeReading
    from vision.gate import Occlusion
    from vision.observe import DieObservation, Observation

    f32, i64 = np.float32, np.int64
    checkers = CheckerReading(
        tuple(i64(v) for v in START.points),
        (i64(0), i64(0)),
        (i64(0), i64(0)),
        tuple(f32(0.5) for _ in range(24)),
        (f32(1), f32(1)),
        (f32(1), f32(1)),
    )
    die = DieObservation(
        i64(3),
        (f32(10.5), f32(20.25)),
        (f32(400), f32(300)),
        "right",
        np.bool_(False),
        f32(0.875),
        (i64(1), i64(2), i64(3), i64(4)),
    )
    cube = CubeReading("centre", (f32(375.0), f32(250.0)), i64(64), f32(0.9), f32(0.8))
    occlusion = Occlusion({"1": f32(0.25)}, (), f32(0.99))
    obs = Observation("settling", checkers, (die,), cube, occlusion, drift_px=f32(1.5))
    data = json.loads(json.dumps(obs.to_dict()))
    assert data["points"] == list(START.points) and data["dice"][0]["cocked"] is False
    assert data["dice"][0]["value"] == 3 and data["cube"]["value"] == 1 and data["occlusion"]["missing"] == {"1": 0.25}
