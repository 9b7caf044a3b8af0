"""The camera pipeline on the real tournament frames of ../shared/data/boards/backgammoncv.

Usage: python benchmarks/tournament_frames.py OUTPUT_DIR

The frames carry no markers, so each is calibrated from the corners of its
playing field (both halves and the bar, measured by hand on the frame; listed
below). For each frame this writes OUTPUT_DIR/<name>.png: the frame with the
gated observation drawn on it (what ``tavli vision read`` reports), and
OUTPUT_DIR/<name>-ungated.png with the checker reading the gate held back, for
inspection. It prints both readings. The frames are GPL-3.0 (their LICENSE
beside them): the annotated images are for looking at, not for committing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.annotate import annotate  # noqa: E402
from vision.calibrate import calibrate  # noqa: E402
from vision.checkers import read_checkers  # noqa: E402
from vision.images import load_image  # noqa: E402
from vision.observe import Observation, read_frame  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "boards" / "backgammoncv"

# Field corners (top-left, top-right, bottom-right, bottom-left as white sees it), image px.
# The WBF 2022 stream: one fixed camera for frame0..6, test8 and test9.
WBF = ((205, 22), (902, 22), (902, 665), (205, 665))
FIELD_CORNERS = {name: WBF for name in ("frame0", "frame1", "frame2", "frame3", "frame4", "frame5", "frame6", "test8", "test9")}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to do", file=sys.stderr)
        return 0
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, corners in FIELD_CORNERS.items():
        path = DATA / f"{name}.jpg"
        if not path.exists():
            continue
        image = load_image(path)
        geometry = calibrate(image, corners=corners, field=True)
        obs = read_frame(geometry, image)
        cv2.imwrite(str(out / f"{name}.png"), annotate(image, geometry, obs))
        ungated = read_checkers(geometry, image)
        cv2.imwrite(str(out / f"{name}-ungated.png"), annotate(image, geometry, Observation("settling", ungated, obs.dice, obs.cube, None)))
        seen = obs.occlusion.seen_fraction if obs.occlusion else None
        print(json.dumps({"frame": name, "status": obs.status, "board_edges_seen": seen, "ungated_points": ungated.points,
                          "bar": ungated.bar, "off": ungated.off, "dice": [d.value for d in obs.dice]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
