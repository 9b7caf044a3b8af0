"""The learned dice reader: a small CenterNet-style network that finds every die and reads its top face.

Owns :class:`DiceNet`, :class:`FinderNet` and :func:`find_dice`. The network (``vision/models/dice.onnx``,
made by ``make train-dice``) takes a BGR image scaled so that a die is some 16-56 px across and
gives, every 4 px, a score per face value (1..6) that a die's centre lies there and the die's side.
On a calibrated board a far smaller network, the finder (:class:`FinderNet`, ``dice_finder.onnx``),
picks the places of the field that the dice network reads. Both run through OpenCV's ``cv2.dnn``
on the CPU: no torch at run time. May import ``board_rules``; must not import ``firmware_bridge``
or ``referee``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError

MODEL_PATH = Path(__file__).resolve().parent / "models" / "dice.onnx"
FINDER_PATH = Path(__file__).resolve().parent / "models" / "dice_finder.onnx"
FACES_PATH = Path(__file__).resolve().parent / "models" / "dice_faces.onnx"
FINDER_STRIDE = 8  # the finder's input px per output cell
STRIDE = 4  # input px per output cell
MULTIPLE = 32  # the network's input sides are multiples of this (five halvings)
PHOTO_SIDE = 1280  # a photo of unknown scale is read with its longer side this long...
PHOTO_ENLARGE = 2.0  # ...a smaller photo enlarged at most this much (the network reads a small die better larger)...
PHOTO_LEVELS = 3  # ...and at half and a quarter of that, for dice of any size...
PHOTO_TURNS = 4  # ...each level at this many quarter turns, pooled (:func:`_turned_outputs`)
MIN_LEVEL_SIDE = 96  # no level shorter than this on its longer side
DIE_RANGE = (12.0, 72.0)  # px: the dice a level reports (it was trained on 16-56)
SIZE_SPREAD = 2.5  # a photo's dice are at most this many times larger or smaller than its sure dice's median...
SURE_SCORE = 0.6  # ...those scoring this much (or the best die, where none does)
WEAK_SIDE = 0.5  # a die scoring less than that and under this share of their size is none (a speck, a pip)
READ_PX = (40.0, 24.0)  # a die of known size is read at this many px across, then this many where none was read...
FIND_PX = 12.0  # ...where the finder, reading the whole image at this many px a die, saw something
FIND_SCORE = 0.3  # a finder's peak this strong is worth reading closely
KNOWN_SIDE = (0.55, 2.0)  # a die of known size measured outside these shares of it is no die (a screw head, a checker)
KEEP = 1.5  # dice: a window keeps the dice centred this near its middle (one nearer its edge has its own window)
MIN_SCORE = 0.35  # a peak below this is no die
FACE_PX = 48  # the face classifier reads a die cut out square at this many px...
FACE_CROP = 1.6  # ...this many dice across (a die as the dice network measures it)
FACE_SURE = 0.8  # a die scoring this much keeps its reading; a weaker one takes the classifier's...
FACE_DIE = 0.95  # ...and is a sure die from MIN_SCORE where the classifier gives "a die" (any face) this much...
FACE_NONE = 0.9  # ...and none where it gives "no die" this much, unless the network scored it SURE_SCORE


class DiceModelError(TavliError, FileNotFoundError):
    """The dice network's ONNX file is missing or cannot be loaded."""


def _load(path: Path, what: str):
    """The ``cv2.dnn`` network of the ONNX file at ``path``; :class:`DiceModelError` naming ``what`` where it
    is missing or not a network."""
    if not path.is_file():
        raise DiceModelError(f"{what}: {str(path)!r} does not exist (make train-dice writes it)")
    try:
        return cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        raise DiceModelError(
            f"{what}: {str(path)!r}: not a network OpenCV can load: {str(exc).strip()[-200:]}"
        ) from None


def _blob(images: np.ndarray) -> np.ndarray:
    """BGR uint8 images ``(n, h, w, 3)`` as this module's networks read them: ``(n, 3, h, w)``, -0.5..0.5."""
    return np.ascontiguousarray((images.astype(np.float32) * (1 / 255.0) - 0.5).transpose(0, 3, 1, 2))


def _forward(net, image: np.ndarray) -> np.ndarray:
    """The raw output of a network of this module for a BGR uint8 image (sides multiples of 32)."""
    net.setInput(_blob(image[None]))
    return net.forward()


def _local_maxima(scores: np.ndarray, min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """``(ys, xs)`` of the cells of a score map scoring ``min_score`` or more, each the largest of its 3 x 3."""
    peaks = (scores >= min_score) & (scores >= cv2.dilate(scores, np.ones((3, 3), np.uint8)))
    return np.nonzero(peaks)


class DiceNet:
    """The dice network loaded from an ONNX file, ready to run on BGR images.

    ``DiceNet()`` loads the shipped model. Instances are not shared between threads
    (``cv2.dnn`` nets are not reentrant): :func:`shared_net` gives one per thread.
    Raises :class:`DiceModelError` where the model file is missing or not a network.
    """

    def __init__(self, path: Path | str = MODEL_PATH) -> None:
        self.path = Path(path)
        self._net = _load(self.path, "dice model")

    def outputs(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's raw outputs for a BGR uint8 image whose sides are multiples of 32:
        face scores (6 x H/4 x W/4, 0..1) and log die sides in cells (H/4 x W/4)."""
        out = _forward(self._net, image)
        return out[0, :6], out[0, 6]


class FinderNet:
    """The dice finder loaded from an ONNX file: a network far cheaper than :class:`DiceNet` that reads an
    image at :data:`FIND_PX` px a die and scores, every :data:`FINDER_STRIDE` px, whether a die's centre
    (any face) lies there. Its peaks are the places :func:`find_dice` reads closely on a calibrated board.

    ``FinderNet()`` loads the shipped model (``make train-dice`` writes it); instances are not shared
    between threads. Raises :class:`DiceModelError` where the file is missing or not a network.
    """

    def __init__(self, path: Path | str = FINDER_PATH) -> None:
        self.path = Path(path)
        self._net = _load(self.path, "dice finder")

    def outputs(self, image: np.ndarray) -> np.ndarray:
        """The scores (H/8 x W/8, 0..1) for a BGR uint8 image whose sides are multiples of 32."""
        return _forward(self._net, image)[0, 0]

    def peaks(self, image: np.ndarray, min_score: float) -> list[tuple[float, float, float]]:
        """``(x, y, score)`` in input px of each cell scoring ``min_score`` or more, the largest of its 3 x 3."""
        scores = self.outputs(image)
        ys, xs = _local_maxima(scores, min_score)
        return [
            (float((x + 0.5) * FINDER_STRIDE), float((y + 0.5) * FINDER_STRIDE), float(scores[y, x]))
            for y, x in zip(ys, xs)
        ]


class FaceNet:
    """The face classifier loaded from an ONNX file: a second look at one die at a time, cut out by
    :func:`face_crop`, that says which face is up or that no die is there (``make train-dice-faces``).
    Instances are not shared between threads. Raises :class:`DiceModelError` where the file is missing
    or not a network."""

    def __init__(self, path: Path | str = FACES_PATH) -> None:
        self.path = Path(path)
        self._net = _load(self.path, "dice face classifier")

    def scores(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """``(n, 7)`` probabilities of the faces 1..6 and of no die, for :func:`face_crop`'s crops."""
        if not crops:
            return np.zeros((0, 7), np.float32)
        self._net.setInput(_blob(np.stack(crops)))
        logits = self._net.forward().reshape(len(crops), 7)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def face_crop(image: np.ndarray, x: float, y: float, side: float, turn: float = 0.0) -> np.ndarray:
    """The square :data:`FACE_PX` px crop of a BGR image about (x, y), :data:`FACE_CROP` times ``side``
    across, turned ``turn`` degrees (training turns it; the reader does not)."""
    k = FACE_PX / (FACE_CROP * side)
    m = cv2.getRotationMatrix2D((x, y), turn, k)
    m[0, 2] += FACE_PX / 2 - x
    m[1, 2] += FACE_PX / 2 - y
    return cv2.warpAffine(image, m, (FACE_PX, FACE_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


_local = threading.local()


def shared_net() -> DiceNet:
    """This thread's :class:`DiceNet` of the shipped model, loaded on first use."""
    net = getattr(_local, "net", None)
    if net is None:
        net = _local.net = DiceNet()
    return net


def use_model(path: Path | str = MODEL_PATH, faces: Path | str = FACES_PATH) -> None:
    """Have this thread read dice with the dice network at ``path`` and the face classifier at ``faces``
    (by default the shipped ones again), as a benchmark reads each fold of a cross-validation with its own.
    Raises :class:`DiceModelError` where a file is missing or not a network; then nothing changes."""
    net, face_net = DiceNet(path), FaceNet(faces)
    _local.net = net
    _local.window_nets = tuple(DiceNet(path) for _ in READ_PX)
    _local.faces = face_net


def _finder() -> FinderNet:
    """This thread's :class:`FinderNet` of the shipped model, loaded on first use."""
    net = getattr(_local, "finder", None)
    if net is None:
        net = _local.finder = FinderNet()
    return net


def _faces() -> FaceNet:
    """This thread's :class:`FaceNet` of the shipped model, loaded on first use."""
    net = getattr(_local, "faces", None)
    if net is None:
        net = _local.faces = FaceNet()
    return net


def _window_nets() -> tuple[DiceNet, ...]:
    """This thread's networks of the shipped dice model, one for each of :data:`READ_PX`'s windows
    (``cv2.dnn`` is slow to change the size it reads)."""
    nets = getattr(_local, "window_nets", None)
    if nets is None:
        nets = _local.window_nets = tuple(DiceNet() for _ in READ_PX)
    return nets


def _padded(image: np.ndarray, scale: float, area: bool = True) -> np.ndarray:
    """``image`` scaled by ``scale`` (shrunk by area where ``area``, else bilinearly, as the finder's
    training crops were) and padded on the right and bottom to multiples of 32 px."""
    h, w = image.shape[:2]
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    if (sw, sh) != (w, h):
        image = cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA if scale < 1 and area else cv2.INTER_LINEAR)
    pw, ph = -sw % MULTIPLE, -sh % MULTIPLE
    if pw or ph:
        image = cv2.copyMakeBorder(image, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=(128, 128, 128))
    return image


def _looks(net: DiceNet, image: np.ndarray, turns: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`DiceNet.outputs` of ``image`` read at ``turns`` quarter turns, each turned back onto
    ``image``: face scores (turns x 6 x H/4 x W/4) and log die sides (turns x H/4 x W/4)."""
    scores, sides = [], []
    for k in range(turns):
        s, log_side = net.outputs(np.ascontiguousarray(np.rot90(image, k)))
        scores.append(np.rot90(s, -k, axes=(1, 2)))
        sides.append(np.rot90(log_side, -k))
    return np.stack(scores), np.stack(sides)


def _turned_outputs(net: DiceNet, image: np.ndarray, turns: int = PHOTO_TURNS) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`DiceNet.outputs` of ``image`` pooled over its :func:`_looks` at ``turns`` quarter turns.

    A die's face does not change when the photo turns, but what the network makes of it does: each
    turn is another look. Per cell the faces' scores are the turns' mean (the turns vote on the face),
    scaled so that the best face scores as the photo as it is, or the mean, scores it, whichever is more:
    a die the plain reading finds stays found, and no turn alone adds one."""
    scores, sides = _looks(net, image, turns)
    mean = scores.mean(axis=0)
    strongest = np.maximum(scores[0].max(axis=0), mean.max(axis=0))
    mean *= (strongest / np.maximum(mean.max(axis=0), 1e-6))[None]
    return mean, sides.mean(axis=0)


def decode(
    scores: np.ndarray, log_sides: np.ndarray, *, min_score: float = MIN_SCORE
) -> list[tuple[float, float, float, int, float]]:
    """Dice from the network's outputs: ``(x, y, side, value, score)`` in input px, strongest first.

    A die is a cell whose best face score is at least ``min_score`` and the largest in its 3 x 3
    neighbourhood; of two such within half a die of one another only the stronger is kept.
    """
    best = scores.max(axis=0)
    value = scores.argmax(axis=0)
    ys, xs = _local_maxima(best, min_score)
    found = sorted(
        (
            (
                float((x + 0.5) * STRIDE),
                float((y + 0.5) * STRIDE),
                float(math.exp(min(6.0, float(log_sides[y, x]))) * STRIDE),
                int(value[y, x]) + 1,
                float(best[y, x]),
            )
            for y, x in zip(ys, xs)
        ),
        key=lambda d: -d[4],
    )
    kept: list[tuple[float, float, float, int, float]] = []
    for d in found:
        if all(math.hypot(d[0] - k[0], d[1] - k[1]) > 0.5 * max(d[2], k[2]) for k in kept):
            kept.append(d)
    return kept


@dataclass(frozen=True, slots=True)
class Found:
    """A die the network found: its centre and side in image px, its top face and the network's score (0..1)."""

    centre: tuple[float, float]
    side: float
    value: int
    score: float


def find_dice(
    image: np.ndarray,
    *,
    die_px: float | None = None,
    mask: np.ndarray | None = None,
    min_score: float = MIN_SCORE,
    net: DiceNet | None = None,
    near: Sequence[tuple[float, float]] = (),
    finder: FinderNet | None = None,
    faces: FaceNet | None = None,
    second_look: bool = True,
) -> list[Found]:
    """All dice the network finds in a BGR uint8 image, sorted left to right (image px).

    ``die_px`` is a die's side in image px where it is known (a calibrated board): the image is
    read in two passes (:func:`_find_then_read`: ``finder``, by default the shipped one, then
    ``net``), ``near`` (image px) are places read closely whatever the finder saw there, and a die
    measured outside :data:`KNOWN_SIDE` of that size is dropped. Without it the image is read at
    :data:`PHOTO_LEVELS` scales, the first with its longer side :data:`PHOTO_SIDE` px (enlarged at most
    :data:`PHOTO_ENLARGE` times), each
    half the last, each at :data:`PHOTO_TURNS` quarter turns, and a die is taken from the scale that
    sees it :data:`DIE_RANGE` px across and within :data:`SIZE_SPREAD` of the sure dice's size (and,
    scoring under :data:`SURE_SCORE`, at least :data:`WEAK_SIDE` of it). Either way each die then gets
    a second look from the face classifier (:func:`_second_look`, ``faces``, by default the shipped one;
    not with ``second_look`` False, which the classifier's training reads the network's own dice with). With
    ``mask`` (0/1, the image's size) only its box is read and only dice centred on it are kept. The
    caller checks the image, the mask and ``die_px``.
    """
    h, w = image.shape[:2]
    whole, x0, y0 = image, 0, 0
    if mask is not None:
        bx, by, bw, bh = cv2.boundingRect(mask)
        if bw == 0 or bh == 0:
            return []
        m = int(math.ceil(die_px or 0))
        x0, y0 = max(0, bx - m), max(0, by - m)
        image = image[y0 : min(h, by + bh + m), x0 : min(w, bx + bw + m)]
    floor = min(min_score, MIN_SCORE) if second_look else min_score  # the second look admits weaker peaks
    if die_px is not None:
        nets = (finder or _finder(), *((net,) * len(READ_PX) if net is not None else _window_nets()))
        found = _find_then_read(nets, whole, mask, (x0, y0) + image.shape[1::-1], die_px, floor, near)
    else:
        top = min(PHOTO_ENLARGE, PHOTO_SIDE / max(image.shape[:2]))
        scales = [top / 2**k for k in range(PHOTO_LEVELS) if max(image.shape[:2]) * top / 2**k >= MIN_LEVEL_SIDE] or [
            top
        ]
        found = []
        for scale in scales:
            scores, sides = _turned_outputs(net or shared_net(), _padded(image, scale))
            for x, y, side, value, score in decode(scores, sides, min_score=floor):
                if len(scales) > 1 and not DIE_RANGE[0] <= side <= DIE_RANGE[1]:
                    continue
                found.append((x / scale + x0, y / scale + y0, side / scale, value, score))
    found = [
        d
        for d in sorted(found, key=lambda d: -d[4])
        if 0 <= d[0] < w
        and 0 <= d[1] < h
        and (mask is None or mask[int(d[1]), int(d[0])])
        and (die_px is None or KNOWN_SIDE[0] * die_px <= d[2] <= KNOWN_SIDE[1] * die_px)
    ]
    if found and die_px is None:  # the dice of one photo are one size, give or take its perspective
        sure = [d[2] for d in found if d[4] >= SURE_SCORE] or [found[0][2]]
        anchor = float(np.median(sure))
        found = [
            d
            for d in found
            if anchor / SIZE_SPREAD <= d[2] <= anchor * SIZE_SPREAD
            and (d[4] >= SURE_SCORE or d[2] >= WEAK_SIDE * anchor)
        ]
    kept: list[tuple[float, float, float, int, float]] = []
    for d in found:
        if all(math.hypot(d[0] - k[0], d[1] - k[1]) > 0.5 * max(d[2], k[2]) for k in kept):
            kept.append(d)
    if kept and second_look:
        crop_side = anchor if die_px is None else float(np.median([d[2] for d in kept]))
        kept = _second_look(faces or _faces(), whole, kept, crop_side, min_score)
    return sorted(
        (Found((cx, cy), side, value, min(1.0, score)) for cx, cy, side, value, score in kept), key=lambda f: f.centre
    )


def _second_look(
    faces: FaceNet,
    image: np.ndarray,
    found: list[tuple[float, float, float, int, float]],
    side: float,
    min_score: float,
) -> list[tuple[float, float, float, int, float]]:
    """The dice of an image read again one by one by the face classifier, each cut out at the image's
    die ``side``. A die the dice network scores :data:`FACE_SURE` or more stands as read; a weaker one
    takes the classifier's face and the better of the two scores, so one under ``min_score`` (down to
    :data:`MIN_SCORE`) is a die only where the classifier gives its face ``min_score`` or more, and one
    the classifier is sure of is as sure as a die the network is sure of (what the reader ``verified``
    asks of a die the classical reader does not see). The dice network reads some multicolour dice
    weakly or wrongly (dark dice with red pips, blue on blue); the classifier, seeing one die large,
    reads most of them right. Where it is sure there is a die but not of its face (a translucent die, pips
    the die's own colour), the die stands from :data:`MIN_SCORE` as one scoring :data:`SURE_SCORE` (which the
    ``verified`` reader takes without the classical reader); where it is sure there is none, a die the
    network was not sure of (under :data:`SURE_SCORE`) is dropped."""
    weak = [i for i, d in enumerate(found) if d[4] < FACE_SURE]
    out = list(found)
    for i, p in zip(weak, faces.scores([face_crop(image, found[i][0], found[i][1], side) for i in weak])):
        value = int(p[:6].argmax())
        score = max(found[i][4], float(p[value]))
        if found[i][4] >= MIN_SCORE and 1.0 - float(p[6]) >= FACE_DIE:
            score = max(score, SURE_SCORE)
        elif found[i][4] < SURE_SCORE and float(p[6]) >= FACE_NONE:
            score = 0.0
        out[i] = (*found[i][:3], value + 1, score)
    return [d for d in out if d[4] >= min_score]


def _find_then_read(
    nets: tuple[FinderNet, DiceNet, DiceNet],
    image: np.ndarray,
    mask: np.ndarray | None,
    box: tuple[int, int, int, int],
    die_px: float,
    min_score: float,
    near: Sequence[tuple[float, float]],
) -> list[tuple[float, float, float, int, float]]:
    """The dice in ``image``'s ``box`` (x, y, width, height) whose side is ``die_px``:
    ``(x, y, side, value, score)`` in image px.

    Most of a board's field holds no die, and the network's cost grows with the px it reads: the
    finder (``nets[0]``, a far cheaper network) reads the box at :data:`FIND_PX` a die, and only a
    window four dice across around each place it scored :data:`FIND_SCORE` or more (the image around
    the box included), and around each place in ``near``, is read by the dice network at each of
    :data:`READ_PX` px a die in turn (``nets[1]``, ``nets[2]``) until one reads a die there. A place
    more than half a die from ``mask`` (0/1, the image's size, or None) holds no die worth reading.
    """
    bx, by, bw, bh = box
    find = FIND_PX / die_px
    peaks = nets[0].peaks(_padded(image[by : by + bh, bx : bx + bw], find, area=False), FIND_SCORE)
    seen = [(x / find + bx, y / find + by) for x, y, _ in sorted(peaks, key=lambda p: -p[2])]
    if mask is not None:
        r = int(math.ceil(die_px / 2))  # a finder's peak lies within a third of a die of the die's centre
        seen = [
            (x, y)
            for x, y in seen
            if mask[max(0, int(y) - r) : max(0, int(y) + r + 1), max(0, int(x) - r) : max(0, int(x) + r + 1)].any()
        ]
    sources: dict[float, tuple[np.ndarray, float]] = {}
    centres: list[tuple[float, float]] = []
    found = []
    for cx, cy in seen + [(float(x), float(y)) for x, y in near]:
        if any(math.hypot(cx - a, cy - b) < die_px for a, b in centres):
            continue  # well inside a window already read
        centres.append((cx, cy))
        for net, px in zip(nets[1:], READ_PX):
            read = _read_window(net, image, sources, cx, cy, px / die_px, px, min_score)
            if read:
                break
        found += read
    return found


def _read_window(
    net: DiceNet,
    image: np.ndarray,
    sources: dict[float, tuple[np.ndarray, float]],
    cx: float,
    cy: float,
    read: float,
    px: float,
    min_score: float,
) -> list[tuple[float, float, float, int, float]]:
    """The dice centred within :data:`KEEP` dice of (``cx``, ``cy``), read in a window four dice across
    with ``image`` scaled by ``read`` (``px`` px a die). A shrinking scale shrinks the image once by
    area (kept in ``sources``); an enlarging one is applied in each window."""
    side = int(4 * px)
    half = side / 2
    if read not in sources:
        h, w = image.shape[:2]
        sources[read] = (
            (cv2.resize(image, (max(1, round(w * read)), max(1, round(h * read))), interpolation=cv2.INTER_AREA), 1.0)
            if read < 1
            else (image, read)
        )
    source, k = sources[read]
    to_window = np.array([[k, 0, half - cx * read], [0, k, half - cy * read]])
    window = cv2.warpAffine(source, to_window, (side, side), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    scores, sides = net.outputs(window)
    return [
        (cx + (u - half) / read, cy + (v - half) / read, s / read, value, score)
        for u, v, s, value, score in decode(scores, sides, min_score=min_score)
        if math.hypot(u - half, v - half) <= KEEP * px
    ]
