"""Annotated frames: an observation drawn over the camera image, for people to check by eye.

Owns :func:`annotate`. May import ``board_rules`` types; must not import
``firmware_bridge`` or ``referee``.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.calibrate import Geometry
from vision.observe import Observation

_WHITE = (255, 255, 255)
_BLACK = (0, 0, 0)
_STATUS_COLOUR = {
    "stable": (60, 200, 60),
    "settling": (0, 200, 255),
    "occluded": (0, 0, 255),
    "board-not-found": (0, 0, 255),
}


def _label(img: np.ndarray, text: str, at, colour, scale: float = 0.6) -> None:
    x, y = int(round(at[0])), int(round(at[1]))
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
    org = (x - tw // 2, y + th // 2)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, _BLACK, 4, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 2, cv2.LINE_AA)


def annotate(image: np.ndarray, geometry: Geometry, obs: Observation, notes: Sequence[str] = ()) -> np.ndarray:
    """A copy of ``image`` with the board's regions outlined and the reading written on it:
    per point its signed count (white's numbering, white positive), bar and off counts,
    dice (value or ``?``; ``cocked``), the cube, occluded regions in red, the status;
    ``notes`` (a gnubg ID, say) along the bottom."""
    out = image.copy()
    regions = geometry.regions()
    occluded = set(obs.occlusion.occluded) if obs.occlusion is not None else set()
    for name, poly in regions["points"].items():
        pts = np.round(np.array(poly)).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 0, 255) if name in occluded else (200, 200, 200), 1, cv2.LINE_AA)
    board = geometry.layout.geometry  # the board's profile, with white's home where the calibration says
    mid = geometry.layout.mid_y
    c = obs.checkers
    for p in board.points:
        # label each point between its tip and the middle of the field
        y = (p.tip_y + mid) / 2
        at = geometry.to_image([(p.centre_x, y)])[0]
        if c is None:
            text, colour = "?", (0, 0, 255)
        else:
            v = c.points[p.number - 1]
            text = f"{v:+d}" if v else "0"
            colour = (255, 255, 255) if v > 0 else (60, 60, 255) if v < 0 else (180, 180, 180)
        _label(out, text, at, colour, 0.5)
        _label(
            out, str(p.number), geometry.to_image([(p.centre_x, p.base_y - 10 * p.direction)])[0], (255, 220, 120), 0.4
        )
    if c is not None:
        bx = (board.bar[0] + board.bar[2]) / 2
        _label(out, f"bar W{c.bar[0]} B{c.bar[1]}", geometry.to_image([(bx, mid + 60)])[0], _WHITE, 0.5)
        tw, tb = board.tray_white, board.tray_black
        _label(out, f"off {c.off[0]}", geometry.to_image([((tw[0] + tw[2]) / 2, (tw[1] + tw[3]) / 2)])[0], _WHITE, 0.5)
        _label(
            out,
            f"off {c.off[1]}",
            geometry.to_image([((tb[0] + tb[2]) / 2, (tb[1] + tb[3]) / 2)])[0],
            (60, 60, 255),
            0.5,
        )
    for d in obs.dice:
        x, y, w, h = d.box
        cv2.rectangle(out, (x, y), (x + w, y + h), (0, 255, 255), 2)
        _label(
            out,
            "cocked" if d.cocked else str(d.value if d.value is not None else "?"),
            (x + w / 2, y - 12),
            (0, 255, 255),
            0.6,
        )
    if obs.cube is not None:
        at = geometry.to_image([obs.cube.centre_mm])[0]
        _label(
            out,
            f"cube {obs.cube.value if obs.cube.value is not None else '?'} {obs.cube.where}",
            at,
            (255, 128, 0),
            0.6,
        )
    status = obs.status + (f" ({obs.frames_held})" if obs.status in ("stable", "settling") else "")
    _label(out, status, (out.shape[1] / 2, 20), _STATUS_COLOUR[obs.status], 0.7)
    for i, msg in enumerate(obs.messages):
        _label(out, msg, (out.shape[1] / 2, 45 + 22 * i), (0, 0, 255), 0.5)
    for i, note in enumerate(reversed(notes)):
        _label(out, note, (out.shape[1] / 2, out.shape[0] - 20 - 24 * i), (255, 255, 160), 0.6)
    return out
