"""Dice, second stage: the dice each group of candidate pips shows, one reading a die.

Owns :class:`DieReading` and :func:`read_faces`. A group is a die where it shows one of the six
pip layouts (:mod:`vision.dice_layout`) on an even face its pips stand out from
(:mod:`vision.dice_face`); one that shows none may be two touching dice, or a die beside a side
face's pips. A die is flagged cocked where its layout is squashed beyond the camera's tilt, or a
side of it shows beside the top face. Must not import ``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from vision.config import VisionConfig
from vision.dice_face import (
    across_face_spread,
    aspect_on_plane,
    completed_value,
    face_spread,
    ring_clear,
    side_face_shows,
    side_run,
    stands_out,
)
from vision.dice_find import PIP_OFFSET, Candidates, Pip, PipColumn
from vision.dice_layout import best_subset, fit_group, split_group
from vision.stats import median_of


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die seen in an image.

    ``value`` is the top face (1..6) or None when unreadable; ``box`` is
    ``(x, y, w, h)`` in image px around the top face; ``centre`` its centre in
    image px; ``cocked`` is True for a die leaning on something (its value
    should not be trusted); ``confidence`` is 0..1.
    """

    value: int | None
    box: tuple[int, int, int, int]
    centre: tuple[float, float]
    cocked: bool = False
    confidence: float = 1.0

    def __post_init__(self) -> None:
        if self.value is not None and (isinstance(self.value, bool) or self.value not in range(1, 7)):
            raise ValueError(f"value: {self.value!r}: expected 1..6 or None")
        if len(self.box) != 4 or self.box[2] < 0 or self.box[3] < 0:
            raise ValueError(f"box: {self.box!r}: expected (x, y, w, h) with w, h >= 0")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence: {self.confidence!r}: expected 0..1")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: value, box, centre, cocked, confidence."""
        return {
            "value": None if self.value is None else int(self.value),
            "box": [int(v) for v in self.box],
            "centre": [round(float(self.centre[0]), 2), round(float(self.centre[1]), 2)],
            "cocked": bool(self.cocked),
            "confidence": round(float(self.confidence), 3),
        }


def read_faces(
    cfg: VisionConfig, image: np.ndarray, cands: Candidates, die: float | None = None, plane: np.ndarray | None = None
) -> list[DieReading]:
    """The dice that :func:`vision.dice_find.find_candidates` found in ``image``, one reading a die;
    ``die`` is a die's side in its px where known, ``plane`` maps its px to the plane the dice lie on,
    seen from above, where known."""
    gray, marks, contrast, pips = cands.gray, cands.marks, cands.contrast, cands.pips
    scored = []
    for g in cands.groups:
        scored.extend(_readings(cfg, image, gray, marks, contrast, [pips[i] for i in g], die, plane))
    scored = _merge_halves(cfg, image, gray, marks, contrast, scored, die, plane)
    # one die, one reading: where two overlap (e.g. the light gaps between dark pips), keep the stronger
    scored.sort(key=lambda t: -t[1])
    readings: list[DieReading] = []
    for r, _, _ in scored:
        if all(_overlap(r, q) < 0.3 for q in readings):
            readings.append(r)
    if cands.columns:
        readings += _run_together_sixes(cfg, gray, cands.columns, readings, die)
    return readings


def _merge_halves(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    scored: list,
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """Two overlapping readings of one kind of pip may be the halves of one die (a six's two
    rows, not linked across its face): where their pips together show one die, keep that."""
    scored = list(scored)
    again = True
    while again:
        again = False
        for i, j in combinations(range(len(scored)), 2):
            (ra, _, pa), (rb, _, pb) = scored[i], scored[j]
            if pa[0].polarity != pb[0].polarity or len(pa) + len(pb) > 6 or _overlap(ra, rb) < 0.3:
                continue
            r, _ = _reading_of(cfg, image, gray, marks, contrast, pa + pb, die, plane)
            if r is not None and r[0].value == len(pa) + len(pb):
                scored[i] = r
                del scored[j]
                again = True
                break
    return scored


def _overlap(a: DieReading, b: DieReading) -> float:
    """Intersection over the smaller box."""
    ax, ay, aw, ah = a.box
    bx, by, bw, bh = b.box
    iw = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    ih = max(0, min(ay + ah, by + bh) - max(ay, by))
    return iw * ih / max(1, min(aw * ah, bw * bh))


def _run_together_sixes(
    cfg: VisionConfig, gray: np.ndarray, bars: list[PipColumn], readings: list[DieReading], die: float
) -> list[DieReading]:
    """Where a die's size is known: dice whose pips run together in two parallel bars on a uniform face, a six's
    two columns, where no die was read. A leaning six's face is seen squashed and its three pips a column
    blur into one; its value is not trusted, so it is flagged cocked (thrown again), not left unseen. Bars
    as long and as far apart as a flat six's columns (its face squashed neither way) are a flat six."""
    out: list[DieReading] = []
    seen = [r.centre for r in readings]
    for a, b in combinations(bars, 2):
        if a.polarity != b.polarity or max(a.length, b.length) > cfg.dice_bar_max_length_ratio * min(
            a.length, b.length
        ):
            continue
        if max(a.contrast, b.contrast) > cfg.dice_link_max_contrast_ratio * min(a.contrast, b.contrast):
            continue
        turn = abs((a.angle - b.angle + math.pi / 2) % math.pi - math.pi / 2)
        if turn > math.radians(cfg.dice_bar_max_turn_deg):
            continue
        mean = (
            math.atan2(math.sin(2 * a.angle) + math.sin(2 * b.angle), math.cos(2 * a.angle) + math.cos(2 * b.angle)) / 2
        )
        ux, uy = math.cos(mean), math.sin(mean)
        vx, vy = b.x - a.x, b.y - a.y
        along, across = abs(vx * ux + vy * uy), abs(vx * uy - vy * ux)
        if (
            along > cfg.dice_bar_max_shift * (a.length + b.length) / 2
            or not cfg.dice_bar_min_gap_per_die * die <= across <= cfg.dice_bar_max_gap_per_die * die
        ):
            continue
        cx, cy = (a.x + b.x) / 2, (a.y + b.y) / 2
        if any(math.hypot(cx - x, cy - y) < 0.5 * die for x, y in seen):
            continue
        # the face between the columns (a six's has no pip) is uniform, and the bars stand out from it
        h, w = gray.shape
        reach = cfg.dice_bar_mid_reach * (a.length + b.length) / 2 * _BAR_MID_STEPS
        xs = np.rint(cx + reach * ux).astype(int).clip(0, w - 1)
        ys = np.rint(cy + reach * uy).astype(int).clip(0, h - 1)
        mid = gray[ys, xs].astype(np.float64)
        if mid.max() - mid.min() > cfg.dice_face_max_spread:
            continue
        if not stands_out(cfg, gray, float(np.median(mid)), (a, b)):
            continue
        box = (int(round(cx - die / 2)), int(round(cy - die / 2)), int(round(die)), int(round(die)))
        length = (a.length + b.length) / 2
        flat = (
            length >= cfg.dice_bar_flat_min_per_die * die
            and across >= cfg.dice_bar_flat_min_gap_per_die * die
            and length >= cfg.dice_bar_flat_min_ratio * across
        )
        out.append(DieReading(6, box, (float(cx), float(cy)), not flat, 0.5))
        seen.append((cx, cy))
    return out


_BAR_MID_STEPS = np.linspace(
    -1.0, 1.0, 9
)  # where the face between two bars is looked at, as fractions of bar_mid_reach


def _readings(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """The dice a group of linked pips shows (touching dice, side faces), each with a score to rank overlaps.

    Two readings are weighed: the group as it is (see :func:`_readings_whole`) and,
    if it shows no layout as a whole, the group cut in two at its longest link
    (two touching dice); the one that explains more pips wins.
    """
    whole = _readings_whole(cfg, image, gray, marks, contrast, group, die, plane)
    if len(group) >= 3 and fit_group(cfg, group) is None:
        parts = split_group(group, cfg.dice_split_ratio)
        if parts is not None:
            split = _readings(cfg, image, gray, marks, contrast, parts[0], die, plane) + _readings(
                cfg, image, gray, marks, contrast, parts[1], die, plane
            )
            # keep whichever explains more pips (then: fewer dice)
            if (sum(len(r[2]) for r in split), -len(split)) > (sum(len(r[2]) for r in whole), -len(whole)):
                return split
    return whole


def _readings_whole(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
) -> list:
    """The best layout in the group first, then what is left of it (a side face's pips,
    another die); a group that shows no die is tried again without the one pip that is
    not on a uniform face (a shadow's corner, a gap between checkers), or without all such
    pips where a die's size is known."""
    out = []
    rest = list(group)
    for _ in range(4):
        if not rest:
            break
        r, used = _reading_of(cfg, image, gray, marks, contrast, rest, die, plane)
        if not used:
            break
        if r is not None:
            out.append(r)
        rest = [p for p in rest if p not in used]
    if not out:
        # where a die's size is known, any number of such pips (light flecks of the board beside a
        # light-pipped die) may go; in a photo, only one (see docs/vision-notes.md)
        clean = [p for p in group if p.ring <= cfg.dice_pip_ring_max_spread]
        if clean and (len(clean) == len(group) - 1 or (die is not None and len(clean) < len(group))):
            r, _ = _reading_of(cfg, image, gray, marks, contrast, clean, die, plane)
            if r is not None:
                out.append(r)
    return out


def _reading_of(
    cfg: VisionConfig,
    image: np.ndarray,
    gray: np.ndarray,
    marks: np.ndarray,
    contrast,
    group: list[Pip],
    die: float | None = None,
    plane: np.ndarray | None = None,
):
    """(reading and score, or None; the pips it used, empty if no layout was found)."""
    found = best_subset(cfg, group)
    if found is None:
        return None, []
    group, (value, err, A) = found
    if median_of([p.ring for p in group]) > cfg.dice_pip_ring_max_spread and (die is None or len(group) < 4):
        # pips that do not sit on a uniform face; four or more in a die's layout at a die's known size
        # vouch for each other (packed small pips' halos reach the ring), and the face is checked below
        return None, group
    n = len(group)
    pts = np.array([(p.x, p.y) for p in group])
    d = median_of([p.d for p in group])
    cx, cy = pts.mean(0)
    c = contrast[group[0].polarity]
    cocked = False
    if n <= 2:  # one or two pips have (next to) no layout to vouch for them: they must be round and solid
        flat = [p for p in group if p.aspect < cfg.dice_single_min_aspect or p.fill < cfg.dice_single_min_fill]
        if flat:
            return None, flat  # a side face's pip beside a lone one: the other is tried alone
    if n == 1:
        if not ring_clear(
            max(cfg.dice_single_ring_max_contrast, cfg.dice_gap_peak_frac * group[0].contrast), c, cx, cy, d
        ):
            return None, group
        offset = None
    else:
        sv = np.linalg.svd(A, compute_uv=False)
        offset = float(math.sqrt(sv[0] * sv[1])) if n >= 4 else float(sv[0])
        if n >= 4:  # a leaning die's top face is seen foreshortened
            squash = sv[1] / sv[0] if plane is None else aspect_on_plane(plane, A, cx, cy)
            cocked = squash < (cfg.dice_cocked_max_aspect if plane is None else cfg.dice_cocked_max_aspect_on_plane)
    side = offset / PIP_OFFSET if offset else (d * cfg.dice_face_per_pip if die is None else die)
    if cocked and n >= 4:  # a leaning face is foreshortened across its tilt only: its side is along the other axis
        side = float(sv[0]) / PIP_OFFSET
    side = max(side, d * 2.5)
    narrow = side if n < 4 else side * float(sv[1] / sv[0])  # a cocked die's face is foreshortened
    if n == 1:  # a ring of face around a lone pip, inside the face of a die of known size however it is turned
        outer = 1.7 * d if die is None else max(1.3 * d, min(1.7 * d, cfg.dice_single_face_per_die * die))
        spread, level = face_spread(gray, marks, cx, cy, outer, d, cfg.dice_face_halo_per_pip, 1.1 * d)
        if spread > cfg.dice_face_max_spread and die is not None:
            # a leaning one: its top face, squashed along its tilt, ends both ways along it, and its side shows
            half, half_level = across_face_spread(gray, marks, cx, cy, outer, d, cfg.dice_face_halo_per_pip, 1.1 * d)
            if (
                half <= cfg.dice_face_max_spread
                and side_run(cfg, image, marks, cx, cy, die, d) >= cfg.dice_side_min_run
            ):
                spread, level, cocked = half, half_level, True
    else:
        spread, level = face_spread(gray, marks, cx, cy, cfg.dice_face_radius * narrow, d, cfg.dice_face_halo_per_pip)
    if spread > cfg.dice_face_max_spread:
        return None, group  # the pips are not on one uniform face
    if not stands_out(cfg, gray, level, group):
        return None, group  # the pips do not stand out from this face (they stand out from something else)
    if not cocked:
        if die is None:
            cocked = side_face_shows(cfg, image, marks, cx, cy, side, d)
        else:
            cocked = side_run(cfg, image, marks, cx, cy, die, d) >= cfg.dice_side_min_run
    if die is not None and value in (2, 4) and not cocked:
        completed, centre = completed_value(cfg, value, A, pts, c, d, median_of([p.contrast for p in group]), die)
        if (completed, value) == (4, 2):  # a four's side: the die is centred beside it, a side's span across
            cx, cy = float(centre[0]), float(centre[1])
            side = max(float(np.linalg.norm(pts[1] - pts[0])) / (2 * PIP_OFFSET), d * 2.5)
        value = completed
    if n == 2 and die is not None and not cocked and max(p.ring for p in group) > cfg.dice_pip_ring_max_spread:
        # a flat two's pips both sit on its face: one that does not (a fleck of a checker beside a one's
        # pip) is no pip of it; a leaning two's may, beside its side face
        return None, group
    box = (int(round(cx - side / 2)), int(round(cy - side / 2)), int(round(side)), int(round(side)))
    conf = max(0.05, min(1.0, 1.0 - err))
    score = float(np.mean([p.contrast * p.fill for p in group])) * (1 + 0.1 * n)
    return (DieReading(value, box, (float(cx), float(cy)), cocked, conf), score, group), group
