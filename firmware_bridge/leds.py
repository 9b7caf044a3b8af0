"""The board's LEDs by place: which LED lights which place, the colour names, frames to and from places.

Owns :data:`LED_COUNT` and the LED order of ``hardware/PROTOCOL.md``'s LED_FRAME (and
``WIRING.md``'s chain): points 1..24 in white's numbering are LEDs 0..23, the bar is
LED 24 (one LED, both sides' bars), white's tray LED 25, black's tray LED 26. Pure;
imports ``board_rules`` places and :mod:`firmware_bridge.protocol`.

>>> [led_index(p) for p in (Place.point(1), Place.point(24), Place.bar(Side.BLACK), Place.off(Side.BLACK))]
[0, 23, 24, 26]
>>> lit_places(led_frame({Place.point(13): "red", Place.off(Side.BLACK): "amber"}))
[Place.point(13), Place.off(Side.BLACK)]
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from board_rules import Place, PlaceKind, Side
from board_rules.errors import TavliError
from board_rules.places import PLACES
from firmware_bridge.protocol import POINTS, Led, LedFrame

__all__ = [
    "LED_COUNT",
    "BAR_LED",
    "TRAY_LEDS",
    "COLOURS",
    "DARK",
    "LedColourError",
    "led_index",
    "led_frame",
    "lit_places",
]

LED_COUNT = POINTS + 3  # points 1..24, the bar, white's tray, black's tray
BAR_LED = POINTS  # one LED for the bar: both sides' bars light it
TRAY_LEDS: Mapping[Side, int] = MappingProxyType({Side.WHITE: POINTS + 1, Side.BLACK: POINTS + 2})

#: The colours the referee lights places in, by name.
COLOURS: Mapping[str, Led] = MappingProxyType(
    {"red": Led(255, 0, 0), "green": Led(0, 255, 0), "blue": Led(0, 0, 255), "amber": Led(255, 140, 0)}
)
DARK = Led()


class LedColourError(TavliError, ValueError):
    """A colour name the LEDs do not know."""


def led_index(place: Place) -> int:
    """The LED (0-based, LED_FRAME order) that lights ``place``; raises ``ValueError`` for a non-place."""
    place = Place.parse(place)
    if place.kind is PlaceKind.POINT:
        return place.number - 1
    if place.kind is PlaceKind.BAR:
        return BAR_LED
    return TRAY_LEDS[place.side]


def led_frame(colours: Mapping[Place, str]) -> LedFrame:
    """The whole LED frame that lights each place of ``colours`` in its named colour, and the rest dark.

    Raises :class:`LedColourError` (a ``ValueError``) for a colour not in :data:`COLOURS`,
    and ``ValueError`` for a key that is not a place.
    """
    leds = [DARK] * LED_COUNT
    for place, name in colours.items():
        led = COLOURS.get(name)
        if led is None:
            raise LedColourError(f"LED colour {name!r} for place {str(place)!r}: expected one of {', '.join(COLOURS)}")
        leds[led_index(place)] = led
    return LedFrame(tuple(leds))


_BY_LED: tuple[Place, ...] = tuple(sorted(PLACES, key=led_index))  # every place, in LED order


def _rgb(led: Led) -> tuple[int, int, int]:
    return led.red, led.green, led.blue


def lit_places(frame: LedFrame, colour: str | None = None) -> list[Place]:
    """The places ``frame`` lights (in ``colour`` only, if given), in LED order.

    Both bars share one LED, so a lit bar LED lists both bars. Raises
    :class:`LedColourError` for an unknown ``colour``.
    """
    if colour is not None and colour not in COLOURS:
        raise LedColourError(f"LED colour {colour!r}: expected one of {', '.join(COLOURS)}")
    want = None if colour is None else _rgb(COLOURS[colour])
    lit = {i for i, led in enumerate(frame.leds) if _rgb(led) != (0, 0, 0) and (want is None or _rgb(led) == want)}
    return [p for p in _BY_LED if led_index(p) in lit]
