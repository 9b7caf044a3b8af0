"""The LED map of firmware_bridge.leds: one LED per place (the bars share one), frames to and from places."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from board_rules import Place, Side
from board_rules.places import PLACES
from firmware_bridge.leds import (
    BAR_LED,
    COLOURS,
    LED_COUNT,
    LedColourError,
    led_frame,
    led_index,
    lit_places,
)
from firmware_bridge.protocol import Led, LedFrame


def test_the_leds_follow_protocol_md_order_points_bar_white_tray_black_tray():
    assert LED_COUNT == 27
    assert [led_index(Place.point(n)) for n in range(1, 25)] == list(range(24))
    assert led_index(Place.bar(Side.WHITE)) == led_index(Place.bar(Side.BLACK)) == BAR_LED == 24
    assert (led_index(Place.off(Side.WHITE)), led_index(Place.off(Side.BLACK))) == (25, 26)


def test_every_place_has_its_own_led_but_the_two_bars_share_one():
    by_led: dict[int, set[Place]] = {}
    for place in PLACES:
        by_led.setdefault(led_index(place), set()).add(place)
    assert sorted(by_led) == list(range(LED_COUNT))
    shared = {i: places for i, places in by_led.items() if len(places) > 1}
    assert shared == {BAR_LED: {Place.bar(Side.WHITE), Place.bar(Side.BLACK)}}


def test_the_led_count_is_the_firmwares():
    config = (Path(__file__).resolve().parent.parent / "hardware" / "firmware" / "config.h").read_text()
    assert f"#define LED_COUNT {LED_COUNT}" in config


def test_black_tray_lights_its_own_led_like_white_tray():
    frame = led_frame({Place.off(Side.BLACK): "amber"})
    assert frame.leds[26] == COLOURS["amber"] and frame.leds[25] == Led()
    assert lit_places(frame) == [Place.off(Side.BLACK)]
    assert lit_places(led_frame({Place.off(Side.WHITE): "red"})) == [Place.off(Side.WHITE)]


def test_unlit_places_are_dark_and_an_empty_call_is_all_dark():
    assert led_frame({}) == LedFrame(tuple(Led() for _ in range(LED_COUNT)))
    assert lit_places(led_frame({})) == []


def test_a_frame_round_trips_through_lit_places():
    rng = random.Random(5)
    for _ in range(200):
        colour = rng.choice(sorted(COLOURS))
        places = rng.sample(PLACES, rng.randint(0, len(PLACES)))
        frame = led_frame(dict.fromkeys(places, colour))
        lit = lit_places(frame)
        assert led_frame(dict.fromkeys(lit, colour)) == frame
        assert set(places) <= set(lit)
        assert set(lit) - set(places) <= {Place.bar(Side.WHITE), Place.bar(Side.BLACK)}  # the shared bar LED


def test_lit_places_in_one_colour():
    frame = led_frame({Place.point(3): "green", Place.point(9): "red", Place.bar(Side.BLACK): "green"})
    assert lit_places(frame, "green") == [Place.point(3), Place.bar(Side.WHITE), Place.bar(Side.BLACK)]
    assert lit_places(frame, "red") == [Place.point(9)]
    assert lit_places(frame, "blue") == []


def test_an_unknown_colour_is_refused_by_name():
    with pytest.raises(LedColourError, match=r"'purple' for place '13'.*red, green, blue, amber"):
        led_frame({Place.point(13): "purple"})
    with pytest.raises(ValueError, match="'pink'"):
        lit_places(led_frame({}), "pink")


def test_a_key_that_is_not_a_place_is_refused():
    with pytest.raises(ValueError, match="25"):
        led_frame({25: "red"})
    with pytest.raises(ValueError, match="'middle'"):
        led_frame({"middle": "red"})
