"""The light across a board (vision.light): found on the field between the triangles, evened out of colours."""

import cv2
import numpy as np

from vision.light import even, light_map
from vision.profile import layout
from vision.rectify import rectified_size
from vision.view import View

PPM = 2.0
LAY = layout()
FIELD_BGR = (150, 160, 170)


def _board(light, logo=None):
    """A rectified view of the renderer's board layout: a plain field, dark and light triangles, lit
    by ``light(y_mm)`` (a factor on the sRGB values, as a lamp's), and a dark ``logo`` (a box in mm)."""
    w, h = rectified_size(PPM)
    bgr = np.zeros((h, w, 3), np.float32)
    x0, y0, x1, y1 = (round(c * PPM) for c in LAY.field)
    bgr[y0:y1, x0:x1] = FIELD_BGR
    for p in LAY.geometry.points:
        tri = np.round(np.array([(p.x0, p.base_y), (p.x1, p.base_y), (p.centre_x, p.tip_y)]) * PPM).astype(np.int32)
        cv2.fillConvexPoly(bgr, tri, (40, 50, 60) if p.number % 2 else (220, 225, 230))
    if logo is not None:
        lx0, ly0, lx1, ly1 = (round(c * PPM) for c in logo)
        bgr[ly0:ly1, lx0:lx1] = (60, 60, 60)
    ys = (np.arange(h) + 0.5) / PPM
    bgr *= light(ys)[:, None, None]
    lab = cv2.cvtColor(np.clip(bgr, 0, 255).astype(np.uint8), cv2.COLOR_BGR2LAB)
    return View(lab, np.zeros((h, w), np.uint8), PPM, 40.0, LAY)


def _lab_of(bgr, k=1.0):
    px = np.clip(np.array([[bgr]], np.float32) * k, 0, 255).astype(np.uint8)
    return cv2.cvtColor(px, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32)


def test_a_row_lit_less_than_the_other_is_found_from_the_field_between_the_triangles():
    x0, y0, x1, y1 = LAY.field
    v = _board(lambda y: np.interp(y, [y0, y1], [1.15, 0.6]))
    light = light_map(v)
    far, near = LAY.geometry.points[12], LAY.geometry.points[0]  # point 13 at the top, point 1 at the bottom
    at = light.at([(far.centre_x, far.base_y + 25), (near.centre_x, near.base_y - 25)])
    # the field's own colour lit as each checker's place is, against the field's median
    mid = np.median([np.interp(y, [y0, y1], [1.15, 0.6]) for y in np.linspace(y0, y1, 50)])
    want = [
        (_lab_of(FIELD_BGR, np.interp(y, [y0, y1], [1.15, 0.6]))[0] + 40.8) / (_lab_of(FIELD_BGR, mid)[0] + 40.8)
        for y in (far.base_y + 25, near.base_y - 25)
    ]
    assert np.allclose(at, want, atol=0.05), (at, want)
    assert at[0] > 1.1 and at[1] < 0.85


def test_a_dark_logo_on_the_field_is_its_drawing_not_a_shadow():
    x0, y0, x1, y1 = LAY.field
    cx, cy = (x0 + LAY.geometry.bar[0]) / 2, (y0 + y1) / 2
    v = _board(lambda y: np.ones_like(y), logo=(cx - 45, cy - 35, cx + 45, cy + 35))
    light = light_map(v)
    near_logo = [(cx, cy - 60), (cx, cy + 60), (cx - 70, cy), (cx + 70, cy)]
    assert np.allclose(light.at(near_logo), 1.0, atol=0.05), light.at(near_logo)


def test_the_checkers_and_dice_seen_are_not_taken_for_the_field():
    x0, y0, x1, y1 = LAY.field
    v = _board(lambda y: np.ones_like(y))
    lab = v.lab.copy()
    cx, cy = (x0 + LAY.geometry.bar[0]) / 2, (y0 + y1) / 2
    discs = [(cx + dx, cy, 20.0) for dx in (-80, -40, 0, 40)]
    for x, y, r in discs:  # four black checkers across the middle of the field
        cv2.circle(lab, (round(x * PPM), round(y * PPM)), round(r * PPM), (10, 128, 128), -1)
    light = light_map(View(lab, v.edges, PPM, 40.0, LAY), discs)
    assert np.allclose(light.at([(cx, cy)]), 1.0, atol=0.03)


def test_even_gives_a_colour_as_the_fields_median_light_would_show_it():
    white, black = (205, 200, 195), (70, 80, 90)  # neither clipped at 255 in the brightest light
    for k in (0.55, 0.8, 1.2):
        ratio = (_lab_of(FIELD_BGR, k)[0] + 40.8) / (_lab_of(FIELD_BGR)[0] + 40.8)
        for colour in (white, black):
            evened = even(_lab_of(colour, k), ratio)
            assert np.abs(evened - _lab_of(colour)).max() < 6, (k, colour, evened, _lab_of(colour))


def test_a_board_showing_no_field_has_no_light_map():
    v = _board(lambda y: np.ones_like(y))
    x0, y0, x1, y1 = LAY.field
    whole = [(x, y, 40.0) for x in np.arange(x0, x1, 30) for y in np.arange(y0, y1, 30)]
    assert light_map(v, whole) is None
