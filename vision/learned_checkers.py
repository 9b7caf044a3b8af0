"""The learned checker reader: each checker's place on a point, seen from above, classified empty, light or dark.

Owns :class:`CheckerNet` (``vision/models/checkers.onnx``, made by ``make train-checkers``, run by
``cv2.dnn`` on the CPU), the crops of a point's first-row places (:func:`slot_crops`), the reading
of the points from them (:func:`read_points`), the hybrid with the classical reader (:func:`combine`)
and the reader switch (:func:`checker_reader`). ``docs/vision-notes.md`` says how it reads and was
trained. May import ``board_rules``; must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from board_rules.errors import TavliError
from vision.checkers import FieldReading, Palette
from vision.config import DEFAULT_PATH, ConfigError, read_toml
from vision.light import CHECKER_COVER, LightMap, even, light_map
from vision.profile import Layout
from vision.view import View, disc_colour

MODEL_PATH = Path(__file__).resolve().parent / "models" / "checkers.onnx"
CROP = 32  # px on a side of the network's input
CROP_PER_DIAMETER = 1.6  # a crop's side in checker diameters: the checker and a part of each neighbour
CLASSES = ("empty", "light", "dark")
READERS = ("classical", "learned", "hybrid")
_OVERSAMPLE = 2  # crops are sampled at twice CROP and shrunk by area: no aliasing of a fine texture
MIN_SPLIT_LAB = 12.0  # two groups of checker colours nearer than this are one side's
_SPLIT_WEIGHTS = np.array([0.5, 1.0, 1.0], np.float32)  # of L, a and b when the points' colours are split in two
_EVEN_GAIN = 1.1  # the evened colours are taken where they split this many times as cleanly as those seen
_CONFIDENT_LOG = 3.0  # a lead of this much log-likelihood over the best other count is certain (odds of 20 to 1)


def checker_reader(path: Path | str = DEFAULT_PATH, rendered: bool = False) -> str:
    """Which reader counts the checkers on the points, one of :data:`READERS`: ``[learned_checkers] reader``
    of a vision config file (``vision.toml`` by default) on a real board, ``rendered_board_reader`` on the
    renderer's board (``rendered``: the emulated table's camera); ``classical`` where the file names none.

    Raises :class:`vision.config.ConfigError` for a file that cannot be read or another reader.
    """
    return (_default_reader if Path(path) == DEFAULT_PATH else _reader)(str(path), rendered)


@lru_cache(maxsize=2)
def _default_reader(path: str, rendered: bool) -> str:
    return _reader(path, rendered)


def _reader(path: str, rendered: bool) -> str:
    table = read_toml(path).get("learned_checkers", {})
    key = "rendered_board_reader" if rendered else "reader"
    reader = table.get(key, "classical") if isinstance(table, dict) else table
    if reader not in READERS:
        raise ConfigError(f"vision config {path!r}: [learned_checkers] {key}: {reader!r}: expected one of {READERS}")
    return reader


class CheckerModelError(TavliError, FileNotFoundError):
    """The checker network's ONNX file is missing or cannot be loaded."""


class CheckerNet:
    """The checker network loaded from an ONNX file. ``CheckerNet()`` loads the shipped model;
    :func:`shared_net` gives one per thread (``cv2.dnn`` nets are not reentrant).

    Raises :class:`CheckerModelError` where the model file is missing or not a network.
    """

    def __init__(self, path: Path | str = MODEL_PATH) -> None:
        path = Path(path)
        if not path.is_file():
            raise CheckerModelError(f"checker model: {str(path)!r} does not exist (make train-checkers writes it)")
        self.path = path
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            raise CheckerModelError(
                f"checker model: {str(path)!r}: not a network OpenCV can load: {str(exc).strip()[-200:]}"
            ) from None

    def probabilities(self, crops: np.ndarray, mirrored: bool = True) -> np.ndarray:
        """Chances (N x 3: empty, light, dark) for N Lab uint8 crops (N x CROP x CROP x 3). With ``mirrored``
        each crop is read a second time mirrored across its point (training mirrored crops, so both are
        readings the network knows) and the two readings' logits are averaged, which errs less than either."""
        if not len(crops):
            return np.zeros((0, len(CLASSES)), np.float32)
        logits = self._logits(crops)
        if mirrored:
            logits = (logits + self._logits(crops[:, :, ::-1])) / 2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)

    def _logits(self, crops: np.ndarray) -> np.ndarray:
        blob = np.ascontiguousarray((crops.astype(np.float32) * (1 / 255.0) - 0.5).transpose(0, 3, 1, 2))
        self._net.setInput(blob)
        return self._net.forward().reshape(len(crops), len(CLASSES)).astype(np.float64)


_local = threading.local()


def shared_net(path: Path | str = MODEL_PATH) -> CheckerNet:
    """This thread's :class:`CheckerNet` of ``path`` (the shipped model by default), loaded on first use."""
    nets = getattr(_local, "nets", None)
    if nets is None:
        nets = _local.nets = {}
    key = str(path)
    if key not in nets:
        nets[key] = CheckerNet(path)
    return nets[key]


def crops_at(
    lab: np.ndarray,
    ppm: float,
    centres_mm: np.ndarray,
    directions: np.ndarray,
    side_mm: float | np.ndarray,
    turn_rad: np.ndarray | None = None,
    size: int = CROP,
) -> np.ndarray:
    """Square crops (N x size x size x 3) of a top-down view (``lab`` at ``ppm`` px per board mm)
    centred at N board-mm places, ``side_mm`` across (one for all, or one each), their rows
    running along +y for ``direction`` +1 and along -y (turned half a turn) for -1, turned a
    further ``turn_rad`` where given."""
    n = len(centres_mm)
    s = size * _OVERSAMPLE
    u = (np.arange(s, dtype=np.float32) + 0.5) / s - 0.5  # -0.5..0.5 across a crop
    side = np.broadcast_to(np.asarray(side_mm, np.float32), (n,))
    d = np.asarray(directions, np.float32)
    turn = np.zeros(n, np.float32) if turn_rad is None else np.asarray(turn_rad, np.float32)
    c, sn = np.cos(turn) * d * side, np.sin(turn) * d * side
    along, across = u[None, :, None], u[None, None, :]  # rows: along the point; columns: across it
    xs = centres_mm[:, 0, None, None] + across * c[:, None, None] - along * sn[:, None, None]
    ys = centres_mm[:, 1, None, None] + along * c[:, None, None] + across * sn[:, None, None]
    map_x = (xs * ppm - 0.5).astype(np.float32).reshape(n * s, s)
    map_y = (ys * ppm - 0.5).astype(np.float32).reshape(n * s, s)
    big = cv2.remap(lab, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    small = cv2.resize(big, (size, n * size), interpolation=cv2.INTER_AREA)
    return small.reshape(n, size, size, 3)


@lru_cache(maxsize=16)
def slot_places(lay: Layout) -> tuple[np.ndarray, np.ndarray, int]:
    """The first row's slots of every point of a layout: centres (24 * K x 2 board mm, point 1's
    first), directions (+1 down the board, -1 up) and K, the slots a point has."""
    k = max(1, min(lay.profile.checkers_per_row, 15))
    centres = np.array([lay.checker_slot(p, i)[:2] for p in range(1, 25) for i in range(k)], np.float32)
    dirs = np.array([lay.geometry.points[p - 1].direction for p in range(1, 25) for _ in range(k)], np.float32)
    centres.setflags(write=False)
    dirs.setflags(write=False)
    return centres, dirs, k


def slot_crops(v: View, lab: np.ndarray | None = None) -> np.ndarray:
    """The crops of every point's first-row slots in a view (or in ``lab``, its Lab colours changed):
    24 x K x CROP x CROP x 3 (Lab uint8)."""
    centres, dirs, k = slot_places(v.layout)
    side = CROP_PER_DIAMETER * v.layout.profile.checker_diameter_mm
    return crops_at(v.lab if lab is None else lab, v.ppm, centres, dirs, side).reshape(24, k, CROP, CROP, 3)


def slot_chances(
    v: View, net: CheckerNet | None = None, lab: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every point's slot crops (:func:`slot_crops`, of ``lab`` where given) and the network's chances for
    them (24 x K x 3: empty, light, dark), by ``net`` or the shipped one."""
    crops = slot_crops(v, lab)
    n_points, k = crops.shape[:2]
    return crops, (net or shared_net()).probabilities(crops.reshape(-1, CROP, CROP, 3)).reshape(n_points, k, 3)


def without(v: View, ignore: Sequence[tuple[float, float, float]]) -> np.ndarray:
    """The view's Lab colours with the discs ``ignore`` (x, y, radius in board mm: the dice) filled in from
    around them (``cv2.inpaint``), so that a die looks less like a checker and hides less of one."""
    if not ignore:
        return v.lab
    lab = v.lab.copy()
    h, w = lab.shape[:2]
    for x, y, r in ignore:
        cx, cy, rad = x * v.ppm - 0.5, y * v.ppm - 0.5, r * v.ppm
        m = int(rad) + 6
        x0, y0, x1, y1 = max(0, int(cx) - m), max(0, int(cy) - m), min(w, int(cx) + m + 1), min(h, int(cy) + m + 1)
        if x1 <= x0 or y1 <= y0:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.circle(mask, (int(round(cx - x0)), int(round(cy - y0))), int(round(rad)), 255, -1)
        lab[y0:y1, x0:x1] = cv2.inpaint(np.ascontiguousarray(lab[y0:y1, x0:x1]), mask, 3, cv2.INPAINT_TELEA)
    return lab


def _run_scores(probs: np.ndarray) -> np.ndarray:
    """The log-likelihood of each reading of a point's slots (K x 3 chances, base first): (K + 1) x 2, a run
    of n checkers from the base (light, dark) and empty slots after it."""
    logp = np.log(np.clip(probs.astype(np.float64), 1e-6, 1.0))
    k = len(logp)
    empty_tail = np.concatenate([np.cumsum(logp[::-1, 0])[::-1], [0.0]])  # slots n.. empty
    scores = np.full((k + 1, 2), -np.inf)
    scores[0, :] = empty_tail[0]
    for c in (1, 2):
        run = np.concatenate([[0.0], np.cumsum(logp[:, c])])
        scores[1:, c - 1] = run[1:] + empty_tail[1:]
    return scores


def fit_of_slots(v: View, net: CheckerNet | None = None) -> float:
    """How well a view's layout puts its slots where the checkers are: the mean over the slots of the log-
    likelihood of each point's best reading (:func:`decode`). A layout stretched along the points puts
    the slots of a stack between its checkers, where the network is unsure."""
    _, probs = slot_chances(v, net)
    n_points, k = probs.shape[:2]
    return float(sum(_run_scores(p).max() for p in probs)) / (n_points * k)


def decode(probs: np.ndarray) -> tuple[int, int, float]:
    """A point's reading from its slots' chances (K x 3, base first): ``(count, side, confidence)``,
    side 1 light, -1 dark (0 where empty), count the run of checkers from the base that explains the
    chances best; confidence 0..1 from the lead of that count's log-likelihood over the best other."""
    scores = _run_scores(probs)
    best = np.unravel_index(int(np.argmax(scores)), scores.shape)
    n, col = int(best[0]), int(best[1])
    by_count = scores.max(axis=1)
    rival = np.max(np.delete(by_count, n)) if len(probs) else -np.inf
    conf = float(min(1.0, max(0.0, (by_count[n] - rival) / _CONFIDENT_LOG)))
    return n, (0 if n == 0 else (1 if col == 0 else -1)), conf


def read_points(
    v: View,
    net: CheckerNet | None = None,
    palette: Palette | None = None,
    ignore: Sequence[tuple[float, float, float]] = (),
    most: int | None = None,
) -> tuple[tuple[int, ...], tuple[float, ...], np.ndarray]:
    """Every point of a view read by the network: signed counts of the first rows (white positive: the
    side of ``palette`` whose colour the point's checkers are nearer, without one the lighter of the
    two colours the points' checkers fall into: :func:`sides_by_colour`; both in the field's even light
    where the palette was learned so, :func:`in_even_light`), a confidence for each, and the slots'
    chances (24 x K x 3). ``ignore`` are discs (x, y, radius in board mm) where dice lie: they are
    filled in from around them first (:func:`without`). ``most`` (checkers a side can have on the points):
    where the colours give a side more, the most likely reading within it, counts and sides together
    (:func:`decode_within`): a checker half seen (a die, a fleck) is dropped rather than another's
    colour turned.

    Raises :class:`CheckerModelError` where the shipped model is missing.
    """
    crops, probs = slot_chances(v, net, without(v, ignore))
    n_points = len(crops)
    counts, confs = [], []
    for p in range(n_points):
        n, side, conf = decode(probs[p])
        counts.append(n * side)
        confs.append(conf)
    light = split = None
    if palette is None or palette.evened is not None:  # each colour as the field's median light shows it
        crops, light, split = _even_light(v, crops, tuple(counts), ignore)
        if light is not None and palette is not None:
            palette = replace(palette, white=palette.evened[0], black=palette.evened[1])
    sided = sides_within(probs, crops, tuple(counts), palette, most, split=split)
    return without_drawing(v, crops, sided, light), tuple(confs), probs


def in_even_light(
    v: View, crops: np.ndarray, counts: tuple[int, ...], ignore: Sequence[tuple[float, float, float]] = ()
) -> tuple[np.ndarray, LightMap | None]:
    """The slot ``crops`` evened by the light across the view's field (:mod:`vision.light`: a lamp lighting
    one row more than the other), and that light; the crops as they are, and None, where no light is
    found or the evened colours of the points' checkers (``counts``) do not split in two clearly more
    cleanly (:func:`_contrast`, :data:`_EVEN_GAIN`): where the light is about even, the colours
    stay as seen. The field's light is taken clear of the checkers counted and the dice
    (``ignore``)."""
    out, light, _ = _even_light(v, crops, counts, ignore)
    return out, light


def _even_light(
    v: View, crops: np.ndarray, counts: tuple[int, ...], ignore: Sequence[tuple[float, float, float]]
) -> tuple[np.ndarray, LightMap | None, Split | None]:
    """:func:`in_even_light`, and the colours' split of the crops it gives (:func:`_split`) where it made one
    on the way (None where not): the sides are then told from that split, not from one made again."""
    centres, _, k = slot_places(v.layout)
    radius = CHECKER_COVER * v.layout.profile.checker_diameter_mm
    seen = [(*centres[i * k + j], radius) for i, n in enumerate(counts) for j in range(min(abs(n), k))]
    light = light_map(v, seen + [tuple(d) for d in ignore])
    if light is None:
        return crops, None, None
    evened = even(crops, light.at(centres).reshape(len(crops), k, 1, 1))
    split_evened, split_seen = _split(evened, counts), _split(crops, counts)
    if _contrast(split_evened) <= _EVEN_GAIN * _contrast(split_seen):
        return crops, None, split_seen
    return evened, light, split_evened


_DRAWING_FAR_LAB = 30.0  # a first row this far (weighted Lab) from its side's colour...
_DRAWING_FAR_SPLIT = 0.75  # ...and from it by this much of the distance between the sides' colours...
_DRAWING_NEARER = 0.5  # ...and this much nearer the point's own drawing is the drawing


def without_drawing(
    v: View, crops: np.ndarray, counts: tuple[int, ...], light: LightMap | None = None
) -> tuple[int, ...]:
    """``counts`` less the short rows (one or two checkers) that are the point's own drawing: a row whose
    colour lies far from its side's (the mean of the other points of that side, lightness counted half),
    as far as the sides lie apart, and near the colour of its triangle further along (a rounded black
    point's base reads as a checker where the checkers are pearl and amber). A black checker on a black
    point, or a white one in a glare on a white point, stays: it is near enough its side's colour.
    Without two points of each side to take their colours from, ``counts`` as they are. ``light``: the
    light the ``crops`` were evened by (:func:`vision.light.even`), by which the drawing is evened too."""
    tops = top_colours(crops, counts)
    lay = v.layout
    out = list(counts)
    for i, n in enumerate(counts):
        if not 0 < abs(n) <= 2:
            continue
        same = [tops[j] for j in tops if j != i and counts[j] * n > 0]
        other = [tops[j] for j in tops if counts[j] * n < 0]
        if len(same) < 2 or len(other) < 2:
            continue
        own = np.mean(same, axis=0) * _SPLIT_WEIGHTS
        apart = float(np.linalg.norm(own - np.mean(other, axis=0) * _SPLIT_WEIGHTS))
        col = tops[i] * _SPLIT_WEIGHTS
        far = float(np.linalg.norm(col - own))
        if far < max(_DRAWING_FAR_LAB, _DRAWING_FAR_SPLIT * apart):
            continue
        p = lay.geometry.points[i]
        along = p.base_y + 0.75 * (p.tip_y - p.base_y)
        drawn = disc_colour(v.lab, (p.centre_x, along), v.ppm, lay.profile.point_width_mm * 0.08)
        if light is not None:
            drawn = even(drawn, light.at([(p.centre_x, along)])[0])
        drawn = drawn * _SPLIT_WEIGHTS
        if float(np.linalg.norm(col - drawn)) < _DRAWING_NEARER * far:
            out[i] = 0
    return tuple(out)


def sides_within(
    probs: np.ndarray,
    crops: np.ndarray,
    counts: tuple[int, ...],
    palette: Palette | None,
    most: int | None,
    *,
    split: Split | None = None,
) -> tuple[int, ...]:
    """``counts`` with their sides told by colour (:func:`sides_by_colour`, ``split`` as there); where that
    gives a side more than ``most``, the most likely reading within it, counts and sides together
    (:func:`decode_within`)."""
    sided = sides_by_colour(crops, counts, palette, split=split)
    if most is not None and max(_totals(sided)) > most:
        sided = decode_within(probs, crops, sided, palette, most)
    return sided


def _totals(counts: Sequence[int]) -> tuple[int, int]:
    return sum(n for n in counts if n > 0), -sum(n for n in counts if n < 0)


_COLOUR_NATS_PER_LAB = 0.1  # a point's checkers this much less likely per Lab unit nearer the other side's colour


def decode_within(
    probs: np.ndarray, crops: np.ndarray, counts: tuple[int, ...], palette: Palette | None, most: int
) -> tuple[int, ...]:
    """The most likely first rows of all points together with neither side over ``most`` checkers: each
    point's count from its slots' chances (24 x K x 3) as :func:`decode` weighs them, its side from how
    near the colour of its first slot (``crops``) lies to each side's (``palette``'s, else the mean of
    the points ``counts`` gives each side; lightness counted half), a dynamic programme over both sides'
    totals. ``counts`` where they give a side no checker to take its colour from, or no reading is
    within ``most``."""
    if palette is not None:
        centres = [np.float32(palette.white), np.float32(palette.black)]
        weights = _SPLIT_WEIGHTS
    else:
        tops = top_colours(crops, counts)
        white = [tops[i] for i in tops if counts[i] > 0]
        black = [tops[i] for i in tops if counts[i] < 0]
        if not white or not black:
            return counts
        centres, weights = [np.mean(white, axis=0), np.mean(black, axis=0)], _SPLIT_WEIGHTS
    first = top_colours(crops[:, :1], tuple([1] * len(crops)))
    logp = np.log(np.clip(probs.astype(np.float64), 1e-6, 1.0))
    present = np.log(np.clip(probs[..., 1:].sum(axis=-1).astype(np.float64), 1e-6, 1.0))
    n_points, k = probs.shape[:2]
    inf = -np.inf
    score = np.full((most + 1, most + 1), inf)  # best total log-likelihood by (white, black) so far
    score[0, 0] = 0.0
    choices = []
    for i in range(n_points):
        run = np.concatenate([[0.0], np.cumsum(present[i])])
        empty_tail = np.concatenate([np.cumsum(logp[i, ::-1, 0])[::-1], [0.0]])
        ll = run + empty_tail  # count c: c checkers from the base, then empty slots
        col = first[i] * weights
        cost = [_COLOUR_NATS_PER_LAB * float(np.linalg.norm(col - c * weights)) for c in centres]
        options = [(0, 0, float(ll[0]))] + [
            (c, side, float(ll[c]) - cost[s]) for c in range(1, k + 1) for s, side in enumerate((1, -1))
        ]
        new = np.full_like(score, inf)
        took = np.zeros(score.shape + (2,), np.int64)
        for c, side, value in options:
            dw, db = (c, 0) if side > 0 else ((0, c) if side < 0 else (0, 0))
            if dw > most or db > most:
                continue
            cand = np.full_like(score, inf)
            cand[dw:, db:] = score[: most + 1 - dw, : most + 1 - db] + value
            better = cand > new
            new[better] = cand[better]
            took[better] = (c, side)
        score = new
        choices.append(took)
    if not np.isfinite(score).any():
        return counts
    w, b = np.unravel_index(int(np.argmax(score)), score.shape)
    out = [0] * n_points
    for i in range(n_points - 1, -1, -1):
        c, side = choices[i][w, b]
        out[i] = int(c * side)
        if side > 0:
            w -= c
        elif side < 0:
            b -= c
    return tuple(out)


def top_colours(crops: np.ndarray, counts: tuple[int, ...]) -> dict[int, np.ndarray]:
    """The colour (Lab) of each occupied point's checkers from its slot crops (24 x K x CROP x CROP x 3): the
    median over its first row's checkers of the middle of each crop (a disc 0.3 of a checker across)."""
    r = CROP / CROP_PER_DIAMETER * 0.3
    ys, xs = np.mgrid[0:CROP, 0:CROP] + 0.5 - CROP / 2
    inside = ys**2 + xs**2 <= r * r
    out = {}
    for i, n in enumerate(counts):
        if n:
            k = min(abs(n), crops.shape[1])
            cols = np.median(crops[i, :k][:, inside].astype(np.float32), axis=1)
            out[i] = np.median(cols, axis=0)
    return out


def _lloyd(cols: np.ndarray, weight: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray | None, float]:
    """Two-means from ``groups`` (a bool per colour), each colour counting ``weight``: the groups it settles
    on and their weighted sum of squared distances (None where a group empties)."""
    for _ in range(10):
        if groups.all() or not groups.any():
            return None, np.inf
        a = np.average(cols[groups], axis=0, weights=weight[groups])
        b = np.average(cols[~groups], axis=0, weights=weight[~groups])
        new = np.linalg.norm(cols - a, axis=1) <= np.linalg.norm(cols - b, axis=1)
        if (new == groups).all():
            break
        groups = new
    if groups.all() or not groups.any():
        return None, np.inf
    a = np.average(cols[groups], axis=0, weights=weight[groups])
    b = np.average(cols[~groups], axis=0, weights=weight[~groups])
    err = np.where(groups, ((cols - a) ** 2).sum(axis=1), ((cols - b) ** 2).sum(axis=1))
    return groups, float((err * weight).sum())


def split_in_two(cols: np.ndarray, weight: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """Colours split in two groups (a bool per colour), each colour counting ``weight`` (its checkers):
    two-means from ``start`` and from every pair of colours as the groups' seeds, the split that
    leaves the least weighted spread. Lloyd's steps from one start alone can settle with a side's
    colours cut in two (pearl and amber checkers, two black points read as checkers pulling the
    dark group's centre to black). None where every start leaves a group empty."""
    best, best_err = _lloyd(cols, weight, start)
    n = len(cols)
    if n < 2:
        return best
    dist = np.linalg.norm(cols[:, None, :] - cols[None, :, :], axis=2)  # colour to colour
    i, j = np.triu_indices(n, 1)
    seeds = dist[i] <= dist[j]  # each pair's first split: every colour to the nearer of the two
    seeds ^= ~seeds[:, :1]  # a split and its mirror are one: the first colour's group first
    for groups in np.unique(seeds, axis=0):  # many pairs split the colours alike
        groups, err = _lloyd(cols, weight, groups)
        if err < best_err - 1e-9:
            best, best_err = groups, err
    return best


Split = tuple[list[int], np.ndarray, np.ndarray, np.ndarray]  # points, their colours, weights, groups (True: lighter)


def _split(crops: np.ndarray, counts: tuple[int, ...]) -> Split | None:
    """The points' checker colours (lightness counted half) split in two as :func:`sides_by_colour` splits
    them: the points (indices), their colours, weights (their first rows' checkers) and groups (True:
    the lighter). None where there are no colours or a group would be empty."""
    tops = top_colours(crops, counts)
    if not tops:
        return None
    idx = sorted(tops)
    cols = np.array([tops[i] for i in idx], np.float32) * _SPLIT_WEIGHTS  # light changes lightness most
    light = np.array([counts[i] > 0 for i in idx])
    if light.all() or not light.any():
        light = cols[:, 0] > np.median(cols[:, 0])
    weight = np.array([min(abs(counts[i]), crops.shape[1]) for i in idx], np.float64)
    light = split_in_two(cols, weight, light)
    if light is None:
        return None
    if cols[light, 0].mean() < cols[~light, 0].mean():
        light = ~light
    return idx, cols, weight, light


def _contrast(split: Split | None) -> float:
    """How cleanly the points' checker colours split in two (a :func:`_split`): the distance between the
    groups' weighted means over the root of their weighted mean squared spread (0 where they do not split)."""
    if split is None:
        return 0.0
    _, cols, weight, light = split
    means = [np.average(cols[g], axis=0, weights=weight[g]) for g in (light, ~light)]
    spread = np.where(light, ((cols - means[0]) ** 2).sum(axis=1), ((cols - means[1]) ** 2).sum(axis=1))
    rms = float(np.sqrt(np.average(spread, weights=weight)))
    return float(np.linalg.norm(means[0] - means[1])) / max(rms, 1.0)


def sides_by_colour(
    crops: np.ndarray, counts: tuple[int, ...], palette: Palette | None = None, *, split: Split | None = None
) -> tuple[int, ...]:
    """The counts with their sides told by colour across the whole frame (the points' checker colours from
    their ``crops``): which of ``palette``'s colours a point's checkers are nearer (lightness counted half:
    the light changes it most); without a palette, the colours are split in two (k-means from the
    network's sides, lightness counted half too) and the lighter group is white. Where the two groups
    lie less than :data:`MIN_SPLIT_LAB` apart (one side alone on the points), the network's sides stay.
    ``split``: :func:`_split` of these crops and counts where already made; by default it is made here."""
    if palette is not None:
        tops = top_colours(crops, counts)
        if not tops:
            return counts
        idx = sorted(tops)
        cols = np.array([tops[i] for i in idx], np.float32)
        dw = np.linalg.norm((cols - np.float32(palette.white)) * _SPLIT_WEIGHTS, axis=1)
        db = np.linalg.norm((cols - np.float32(palette.black)) * _SPLIT_WEIGHTS, axis=1)
        light = dw <= db
    else:
        if split is None:
            split = _split(crops, counts)
        if split is None:
            return counts
        idx, cols, _, light = split
        if np.linalg.norm(cols[light].mean(axis=0) - cols[~light].mean(axis=0)) < MIN_SPLIT_LAB:
            return counts
    out = list(counts)
    for i, is_light in zip(idx, light):
        out[i] = abs(counts[i]) if is_light else -abs(counts[i])
    return tuple(out)


def combine(
    learned: tuple[int, ...],
    classical: tuple[int, ...],
    per_row: int,
    off: tuple[int, int] = (0, 0),
    under_dice: Collection[int] = (),
) -> tuple[int, ...]:
    """The hybrid reading: the network's counts and sides, but the classical count on the points
    ``under_dice`` (indices 0..23: a die on one of the first row's places; the network's side where it
    saw a checker), and where the network finds a first row full, the classical count when that is
    longer (a stack in layers), with the network's side. Neither is taken where it puts more checkers
    of a side than 15 with ``off`` (a board's drawing counted as a tall stack) than the network did."""
    out = list(learned)

    def excess(points: list[int]) -> int:
        w = sum(n for n in points if n > 0) + off[0]
        b = -sum(n for n in points if n < 0) + off[1]
        return max(0, w - 15) + max(0, b - 15)

    def take(i: int, count: int) -> None:
        trial = out.copy()
        trial[i] = count
        if excess(trial) <= excess(out):
            out[i] = count

    for i in sorted(under_dice):
        a, b = learned[i], classical[i]
        take(i, b if a == 0 else (abs(b) if a > 0 else -abs(b)))
    for i, (a, b) in enumerate(zip(learned, classical)):
        if i not in under_dice and abs(a) >= per_row and abs(b) > abs(a):
            take(i, abs(b) if a > 0 else -abs(b))
    return tuple(out)


_SURE_EMPTY = 0.8  # a slot the network finds empty with this chance holds no checker, whatever lies beside it


def points_under(
    lay: Layout,
    ignore: Sequence[tuple[float, float, float]],
    probs: np.ndarray | None = None,
    classical: Sequence[int] | None = None,
) -> frozenset[int]:
    """The points (indices 0..23) with one of the discs ``ignore`` (the dice) within a quarter of a checker
    of one of their first row's places: those whose classical count the hybrid takes (:func:`combine`).
    With the network's chances (``probs``, 24 x K x 3) and the ``classical`` counts, not a point where a
    place before the classical count's end, clear of every die, is surely empty (:data:`_SURE_EMPTY`):
    on a wooden board the classical reader counted a die's point, bare at its base, as two checkers."""
    centres, _, k = slot_places(lay)
    reach = lay.profile.checker_diameter_mm / 4
    near = np.zeros(len(centres), bool)
    for x, y, r in ignore:
        near |= np.hypot(centres[:, 0] - x, centres[:, 1] - y) < r + reach
    out = {int(j) // k for j in np.nonzero(near)[0]}
    if probs is not None and classical is not None:
        clear = ~near.reshape(24, k)
        for i in sorted(out):
            n = min(abs(int(classical[i])), k)
            if n and (clear[i, :n] & (probs[i, :n, 0] >= _SURE_EMPTY)).any():
                out.discard(i)
    return frozenset(out)


def learned_field(
    v: View,
    classical: FieldReading,
    reader: str,
    palette: Palette | None = None,
    ignore: Sequence[tuple[float, float, float]] = (),
    net: CheckerNet | None = None,
    most: int | None = None,
) -> FieldReading:
    """``classical`` (:func:`vision.checkers.read_field` of the view) with its points read again by
    ``reader``: ``classical`` keeps them; ``learned`` takes the network's first rows; ``hybrid`` the
    network's, with the classical count under the dice and where the network finds a row full (:func:`combine`).
    Without a ``palette`` (the one ``classical`` was read with), the colours of the tops the network
    found replace the one guessed from the classical reading (the bar's checkers are told by it).
    ``ignore``: the dice, and ``most``, as for :func:`read_points`.

    Raises ValueError for another reader, :class:`CheckerModelError` where the shipped model is missing.
    """
    if reader not in READERS:
        raise ValueError(f"reader: {reader!r}: expected one of {READERS}")
    if reader == "classical":
        return classical
    points, confs, probs = read_points(v, net, palette, ignore, most)
    if reader == "hybrid":
        per_row = slot_places(v.layout)[2]
        under = points_under(v.layout, ignore, probs, classical.points)
        points = combine(points, classical.points, per_row, classical.off, under)
    pal = classical.palette if palette is not None else palette_of_tops(v, points, classical.palette)
    return FieldReading(points, confs, classical.off, classical.off_confidence, pal)


def palette_of_tops(v: View, points: tuple[int, ...], fallback: Palette) -> Palette:
    """A palette from the tops of the first checkers on the points read (light ones white), or ``fallback``
    where a side has none; the tray and board edges are ``fallback``'s."""
    lay = v.layout
    cols: dict[int, list[np.ndarray]] = {1: [], -1: []}
    for i, n in enumerate(points):
        if n:
            centre = lay.checker_slot(i + 1, 0)[:2]
            cols[1 if n > 0 else -1].append(disc_colour(v.lab, centre, v.ppm, lay.profile.checker_diameter_mm * 0.3))
    if not cols[1] or not cols[-1]:
        return fallback
    white = tuple(float(c) for c in np.median(np.array(cols[1]), axis=0))
    black = tuple(float(c) for c in np.median(np.array(cols[-1]), axis=0))
    return Palette(white, black, fallback.tray, fallback.board_edges)
