"""The points seen in a photo, and the candidate fields they make: where :func:`vision.find_board.find_field` starts.

Owns finding triangles (regions of one colour shaped as elongated isosceles triangles, at a few
numbers of colour clusters: :func:`colour_triangles`; pairs of straight segments meeting at a
narrow angle, points drawn by their sides: :func:`side_triangles`), rows of them (tips on one line,
pointing one way: :func:`point_rows`) and candidate fields from two rows facing each other or one
row and its mirror (:func:`candidate_fields`). Imports :mod:`vision.field_model`; must not import
``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.field_model import PARAM_HI, PARAM_LO, PARAM_START, meet, unit_to_image


@dataclass(frozen=True, slots=True)
class Triangle:
    """A point seen: its tip and the two ends of its base, in work-image px."""

    apex: np.ndarray
    b1: np.ndarray
    b2: np.ndarray

    @property
    def mid(self) -> np.ndarray:
        return (self.b1 + self.b2) / 2

    @property
    def length(self) -> float:
        return float(np.linalg.norm(self.apex - self.mid))

    @property
    def width(self) -> float:
        return float(np.linalg.norm(self.b2 - self.b1))

    @property
    def axis(self) -> np.ndarray:
        return (self.apex - self.mid) / max(self.length, 1e-9)


def colour_triangles(
    lab: np.ndarray, cluster_counts: tuple[int, ...], min_fill: float, min_solidity: float
) -> list[Triangle]:
    """Regions of one colour (at each of ``cluster_counts`` colour clusters) shaped as elongated isosceles
    triangles: filling ``min_fill`` of the smallest triangle around them and ``min_solidity`` of their convex hull."""
    h, w = lab.shape[:2]
    pixels = lab.reshape(-1, 3)
    sample = np.ascontiguousarray(pixels[::7])
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0)
    min_area, max_area = max(30.0, 1.5e-4 * h * w), 0.04 * h * w
    found: list[Triangle] = []
    kernel = np.ones((3, 3), np.uint8)
    for k in cluster_counts:
        cv2.setRNGSeed(k)
        _, _, centres = cv2.kmeans(sample, k, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
        dist = ((pixels[:, None, :] - centres[None]) ** 2).sum(-1)
        labels = dist.argmin(1).reshape(h, w)
        for c in range(k):
            mask = cv2.morphologyEx((labels == c).astype(np.uint8), cv2.MORPH_OPEN, kernel)
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for contour in contours:
                t = _as_triangle(contour, min_area, max_area, min_fill, min_solidity)
                if t is not None:
                    found.append(t)
    return found


def distinct_triangles(found: list[Triangle]) -> list[Triangle]:
    """One of each triangle found more than once (at several cluster counts, or by its sides too): the longest."""
    kept: list[Triangle] = []
    for t in sorted(found, key=lambda t: -t.length):
        if all(
            np.linalg.norm(t.apex - u.apex) > 0.3 * u.width or np.linalg.norm(t.mid - u.mid) > 0.3 * u.width
            for u in kept
        ):
            kept.append(t)
    return kept


def _as_triangle(
    contour: np.ndarray, min_area: float, max_area: float, min_fill: float, min_solidity: float
) -> Triangle | None:
    area = cv2.contourArea(contour)
    if not min_area <= area <= max_area:
        return None
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0 or area / hull_area < min_solidity:
        return None
    tri_area, tri = cv2.minEnclosingTriangle(hull.astype(np.float32))
    if tri_area <= 0 or area / tri_area < min_fill:
        return None
    tri = tri.reshape(3, 2).astype(np.float64)
    sides = [float(np.linalg.norm(tri[(j + 1) % 3] - tri[j])) for j in range(3)]
    j = int(np.argmin(sides))
    t = Triangle(tri[(j + 2) % 3], tri[j], tri[(j + 1) % 3])
    long1, long2 = sides[(j + 1) % 3], sides[(j + 2) % 3]
    if not 2.0 <= t.length / max(t.width, 1e-9) <= 12.0 or max(long1, long2) > 1.35 * min(long1, long2):
        return None
    return t


def side_triangles(grey: np.ndarray) -> list[Triangle]:
    """Points drawn by their two sides (outlined, stitched, faint): pairs of straight segments that
    meet at one end at a narrow angle, as a point's sides meet at its tip."""
    segs = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(grey)[0]
    if segs is None:
        return []
    segs = segs.reshape(-1, 4).astype(np.float64)
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    keep = lengths > 0.03 * max(grey.shape)
    segs, lengths = segs[keep], lengths[keep]
    n = len(segs)
    if n < 2:
        return []
    ends = np.r_[segs[:, :2], segs[:, 2:]]  # endpoint k of segment k % n; its other end is (k + n) % (2n)
    other = np.r_[segs[:, 2:], segs[:, :2]]
    seg_len = np.r_[lengths, lengths]
    outward = (other - ends) / seg_len[:, None]
    d = np.linalg.norm(ends[:, None, :] - ends[None, :, :], axis=2)
    tol = np.maximum(3.0, 0.12 * np.minimum(seg_len[:, None], seg_len[None, :]))
    idx = np.arange(2 * n)
    a, b = np.nonzero((d < tol) & (idx[:, None] % n < idx[None, :] % n))
    out = []
    for i, j in zip(a, b):
        cos = float(outward[i] @ outward[j])
        if not math.cos(math.radians(40)) < cos < math.cos(math.radians(4)):
            continue
        apex = meet(ends[i], outward[i], ends[j], outward[j])
        if (
            apex is None
            or np.linalg.norm(apex - ends[i]) > 2 * tol[i, j]
            or np.linalg.norm(apex - ends[j]) > 2 * tol[i, j]
        ):
            continue
        reach = max(float((other[i] - apex) @ outward[i]), float((other[j] - apex) @ outward[j]))
        t = Triangle(apex, apex + outward[i] * reach, apex + outward[j] * reach)
        if 2.0 <= t.length / max(t.width, 1e-9) <= 12.0:
            out.append(t)
    return out


@dataclass(frozen=True, slots=True)
class Row:
    """Triangles whose tips lie on one line and point one way: ``centre`` and ``along`` give the line of
    tips, ``axis`` the way the tips point; ``members`` index the triangles. ``length`` and ``width`` are
    those of its whole triangles (checkers standing on a point cut its base off)."""

    centre: np.ndarray
    along: np.ndarray
    axis: np.ndarray
    members: tuple[int, ...]
    length: float
    width: float

    @property
    def base(self) -> np.ndarray:
        """A point on the line of the row's bases (the field's edge)."""
        return self.centre - self.axis * self.length


def point_rows(tris: list[Triangle], min_row: int) -> list[Row]:
    """Rows of points: for each triangle, the triangles pointing its way whose tips lie on the line
    across its axis through its tip (refitted once); rows that are part of a larger one are dropped."""
    if len(tris) < min_row:
        return []
    apexes = np.array([t.apex for t in tris])
    axes = np.array([t.axis for t in tris])
    lengths = np.array([t.length for t in tris])
    widths = np.array([t.width for t in tris])
    cos_max = math.cos(math.radians(20))
    found: dict[tuple[int, ...], Row] = {}
    for t in tris:
        alike = (axes @ t.axis > cos_max) & (lengths > 0.25 * t.length) & (lengths < 4.0 * t.length)
        centre, along = t.apex, np.array([-t.axis[1], t.axis[0]])
        members = np.zeros(len(tris), bool)
        for _ in range(2):
            normal = np.array([-along[1], along[0]])
            tol = max(0.25 * (float(np.median(widths[members])) if members.any() else t.width), 2.0)
            members = alike & (np.abs((apexes - centre) @ normal) < tol)
            if members.sum() < min_row:
                break
            centre = apexes[members].mean(0)
            along = np.linalg.svd(apexes[members] - centre)[2][0]
        key = tuple(int(i) for i in np.nonzero(members)[0])
        if len(key) < min_row or key in found:
            continue
        axis = axes[members].mean(0)
        axis /= np.linalg.norm(axis)
        whole = members & (lengths >= 0.85 * lengths[members].max())
        found[key] = Row(centre, along, axis, key, float(np.median(lengths[whole])), float(np.median(widths[whole])))
    rows = sorted(found.values(), key=lambda r: -len(r.members))
    out: list[Row] = []
    for r in rows:  # a row along another's line of tips, pointing its way, is that row
        if not any(
            float(r.axis @ o.axis) > cos_max
            and abs(float((r.centre - o.centre) @ np.array([-o.along[1], o.along[0]]))) < 0.5 * o.width
            for o in out
        ):
            out.append(r)
    return out


# a field is about this many point widths wide (12 points, a bar and margins)
_FIELD_WIDTHS = 13.3


def candidate_fields(rows: list[Row], tris: list[Triangle]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Field corners (in the order the quadrilateral runs, a row's base first) for two rows facing each
    other, or one row and its mirror a field's height away; each with its ends moved out by up to two
    points (the outer points may be under checkers), or out to a whole field's width where the rows span less."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    pairs: list[tuple[Row, Row | None]] = []
    for i, r in enumerate(rows):
        for q in rows[i + 1 :]:
            if abs(float(r.along @ q.along)) < math.cos(math.radians(25)) or float(r.axis @ q.axis) > -math.cos(
                math.radians(30)
            ):
                continue
            gap = float((q.centre - r.centre) @ r.axis)  # between the two lines of tips
            longer = max(r.length, q.length)
            if not -0.1 * longer <= gap <= 2.0 * longer or abs(r.length - q.length) > 0.4 * longer:
                continue
            pairs.append((r, q))
    pairs.sort(key=lambda pq: -(len(pq[0].members) + len(pq[1].members)))  # type: ignore[union-attr]
    singles: list[tuple[Row, Row | None]] = [(r, None) for r in rows[:4]]
    for r, q in pairs[:6] + singles:
        members = list(r.members) + (list(q.members) if q is not None else [])
        along = r.along
        if q is None:  # the other row: a field's height away, its points 0.42 of the field's height
            q = Row(r.centre + r.axis * r.length * (1 / 0.42 - 2), r.along, -r.axis, (), r.length, r.width)
        height = float((q.base - r.base) @ r.axis)
        params = PARAM_START.copy()
        params[2] = min(PARAM_HI[2], max(PARAM_LO[2], (r.length + q.length) / 2 / max(height, 1e-9)))
        width = max(r.width, q.width)
        tips = np.array([tris[i].apex for i in members])
        s = (tips - r.centre) @ along
        lo_tip, hi_tip = tips[int(np.argmin(s))], tips[int(np.argmax(s))]
        span = float(s.max() - s.min()) / max(width, 1e-9) + 1  # in points, the outer two whole
        short = max(0.0, _FIELD_WIDTHS - span)
        if (
            short <= 4.5
        ):  # the rows found miss a few points at their ends: every split of what is missing, give or take one
            moves = [(float(a), float(b)) for a in range(5) for b in range(5) if abs(a + b - short) <= 1.5]
        else:
            moves = [(float(j), max(0.0, short - j)) for j in range(int(math.ceil(short)) + 1)]
        ax_lo = tris[members[int(np.argmin(s))]].axis
        ax_hi = tris[members[int(np.argmax(s))]].axis
        ax_lo, ax_hi = (a if a @ r.axis > 0 else -a for a in (ax_lo, ax_hi))
        for a, b in moves:
            p_lo = lo_tip - along * (a + 0.5) * width
            p_hi = hi_tip + along * (b + 0.5) * width
            corners = [
                meet(r.base, r.along, p_lo, ax_lo),
                meet(r.base, r.along, p_hi, ax_hi),
                meet(q.base, q.along, p_hi, ax_hi),
                meet(q.base, q.along, p_lo, ax_lo),
            ]
            if any(c is None for c in corners):
                continue
            c = np.array(corners)
            if unit_to_image(c) is not None:
                out.append((c, params))
    return out
