"""The sensing model of ``hardware/SENSING.md`` as code: checkers to slot readings and back.

Owns the field of a stack of magnets on a hall sensor (noise and saturation included),
the fill order of a place's slots, the board's classification of a field
(:class:`SensorConfig`, :func:`classify`) and the host's inverse, :func:`counts_from_slots`.
Pure; may import ``board_rules`` types and :mod:`firmware_bridge.protocol`.

>>> from board_rules import Position
>>> start = Position.start("backgammon")
>>> counts = counts_from_slots(slots_for_position(start))
>>> counts.points == start.points, counts.bar, counts.off, counts.uncertain
(True, (0, 0), (0, 0), ())
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from firmware_bridge.protocol import (
    CHECKER_MIN,
    PAIR_STRENGTH,
    POINTS,
    ProtocolError,
    SlotReading,
    SlotState,
)

__all__ = [
    "SLOTS_PER_POINT",
    "BAR_SLOTS",
    "TRAY_SLOTS",
    "CONTRIBUTIONS",
    "SENSOR_CLIP",
    "SensorConfig",
    "SensedCounts",
    "fill_heights",
    "stack_field",
    "classify",
    "slot_stacks",
    "slots_for_counts",
    "slots_for_position",
    "counts_from_slots",
]

SLOTS_PER_POINT = 5
BAR_SLOTS = 8  # slots 0..3 white's half, 4..7 black's half
TRAY_SLOTS = 5  # per bear-off tray
# Field at the sensor (0.01 mT) added by the k-th magnet of a stack, bottom first:
# each checker is 8 mm higher than the one below, so it adds less.
CONTRIBUTIONS = (1200, 500, 300, 200, 150, 100, 80, 60)
SENSOR_CLIP = 2200  # DRV5055A1 at 3.3 V: linear to about 22 mT, then the output rails


def fill_heights(count: int, slots: int) -> tuple[int, ...]:
    """How many checkers lie on each of ``slots`` slots when ``count`` are placed in fill order.

    Layer by layer from slot 0 (nearest the table's edge): the heights differ by at most one.

    >>> fill_heights(7, 5)
    (2, 2, 1, 1, 1)
    """
    if slots <= 0:
        return ()
    base, extra = divmod(count, slots)
    return tuple(base + (1 if i < extra else 0) for i in range(slots))


def stack_field(stack: Sequence[int]) -> int:
    """The signed field (0.01 mT) under a stack, bottom first; +1 a white checker, -1 black.

    White is north up (positive), black south up (negative); the sensor clips at
    ``SENSOR_CLIP``.

    >>> stack_field([1, 1, 1]), stack_field([1] * 6), stack_field([-1, 1])
    (2000, 2200, -700)
    """
    total = 0
    for k, sign in enumerate(stack):
        total += sign * (CONTRIBUTIONS[k] if k < len(CONTRIBUTIONS) else 0)
    return max(-SENSOR_CLIP, min(SENSOR_CLIP, total))


@dataclass(frozen=True, slots=True)
class SensorConfig:
    """The thresholds that turn a field into a slot state and a strength into a stack height.

    ``empty_threshold``, ``hysteresis`` and ``polarity_margin`` are CONFIG's fields
    (PROTOCOL.md); ``checker_min`` and ``levels`` are fixed by the checker's magnet
    (SENSING.md). ``levels[h - 1]`` is the strength of a stack of ``h`` of one colour;
    the last level is saturation: a stack of ``len(levels)`` or more reads the same.
    ``pair_strength`` is a pinned checker under one checker of the other colour.
    Raises ``ValueError`` for thresholds out of order.
    """

    empty_threshold: int = 150
    hysteresis: int = 30
    polarity_margin: int = 50
    checker_min: int = CHECKER_MIN
    pair_strength: int = PAIR_STRENGTH
    levels: tuple[int, ...] = (1200, 1700, 2000, 2200)

    def __post_init__(self) -> None:
        levels = tuple(self.levels)
        object.__setattr__(self, "levels", levels)
        if not levels or any(b <= a for a, b in zip(levels, levels[1:])):
            raise ValueError(f"SensorConfig.levels must be increasing, not {self.levels!r}")
        if not 0 <= self.polarity_margin <= self.empty_threshold < self.pair_strength < self.checker_min < levels[0]:
            raise ValueError(
                "SensorConfig needs polarity_margin <= empty_threshold < pair_strength < checker_min < levels[0], "
                f"not {self.polarity_margin!r}, {self.empty_threshold!r}, {self.pair_strength!r}, "
                f"{self.checker_min!r}, {levels[0]!r}"
            )

    @property
    def saturation_height(self) -> int:
        """The stack height from which every taller stack reads the same."""
        return len(self.levels)

    @property
    def max_noise(self) -> int:
        """The largest peak noise (0.01 mT) every threshold tolerates: half the narrowest gap."""
        gaps = [b - a for a, b in zip(self.levels, self.levels[1:])]
        gaps += [
            2 * (self.levels[0] - self.checker_min),
            2 * (self.checker_min - self.pair_strength),
            2 * (self.pair_strength - self.empty_threshold),
        ]
        return min(gaps) // 2

    def height(self, strength: int) -> int:
        """The stack height whose level is nearest ``strength`` (1..saturation_height)."""
        return 1 + min(range(len(self.levels)), key=lambda i: abs(strength - self.levels[i]))


DEFAULT_CONFIG = SensorConfig()


def classify(field_value: int, config: SensorConfig = DEFAULT_CONFIG, previous: SlotState | None = None) -> SlotReading:
    """The board's reading of a signed field (0.01 mT): state and magnitude.

    EMPTY below ``empty_threshold``; UNCERTAIN below ``checker_min`` (a pinned checker
    under another) or within ``polarity_margin`` of zero; else WHITE (positive) or BLACK.
    From a ``previous`` state, hysteresis moves the threshold as on the board: up from
    EMPTY, down from occupied.

    >>> classify(1210), classify(-700).state, classify(40).state
    (SlotReading(state=<SlotState.WHITE: 1>, strength=1210), <SlotState.UNCERTAIN: 3>, <SlotState.EMPTY: 0>)
    >>> classify(170, previous=SlotState.EMPTY).state
    <SlotState.EMPTY: 0>
    """
    strength = min(abs(int(field_value)), 0xFFFF)
    threshold = config.empty_threshold
    if previous is not None:
        if previous == SlotState.EMPTY:
            threshold += config.hysteresis
        else:
            threshold = max(0, threshold - config.hysteresis)
    if strength < threshold:
        return SlotReading(SlotState.EMPTY, strength)
    if strength < config.checker_min or strength < config.polarity_margin:
        return SlotReading(SlotState.UNCERTAIN, strength)
    return SlotReading(SlotState.WHITE if field_value > 0 else SlotState.BLACK, strength)


def _fill(sign: int, count: int, slots: int) -> list[list[int]]:
    return [[sign] * h for h in fill_heights(count, slots)]


def slot_stacks(
    points: Sequence[int],
    pinned: Sequence[int] = (0,) * POINTS,
    bar: tuple[int, int] = (0, 0),
    off: tuple[int, int] = (0, 0),
    slots_per_point: int = SLOTS_PER_POINT,
    *,
    bar_slots: int = BAR_SLOTS,
    tray_slots: int = TRAY_SLOTS,
    layouts: Mapping[int | tuple[str, int], Sequence[int]] | None = None,
) -> list[list[int]]:
    """The stack on every slot (bottom first, +1 white, -1 black), in the protocol's slot order.

    A place's checkers fill its slots layer by layer from slot 0; a pin puts the pinned
    checker and its pinner on slot 0. The bar's first half holds white, the second
    black. ``layouts`` gives some places' heights per slot instead (a point number, or
    ``("bar" | "off", side)`` with side 0 white, 1 black), used when they add up to the
    place's count. Raises ``ValueError`` for checkers with no slots to hold them.
    """
    if len(points) != POINTS or len(pinned) != POINTS:
        raise ValueError(f"need {POINTS} points and pins, not {points!r}, {pinned!r}")
    if slots_per_point < 1:
        raise ValueError(f"slots_per_point must be at least 1, not {slots_per_point!r}")
    layouts = layouts or {}

    def fill(place, sign: int, count: int, slots: int) -> list[list[int]]:
        heights = layouts.get(place)
        if heights is not None and len(heights) == slots and sum(heights) == count and min(heights) >= 0:
            return [[sign] * h for h in heights]
        return _fill(sign, count, slots)

    stacks: list[list[int]] = []
    for number, (n, pin) in enumerate(zip(points, pinned), 1):
        sign = 1 if n > 0 else -1
        if pin:
            if n * pin >= 0:
                raise ValueError(f"a pinned checker needs the other colour on top: points {n!r}, pinned {pin!r}")
            if abs(n) > 1 and slots_per_point < 2:
                raise ValueError(f"a pinned point with {n!r} on top needs at least 2 slots, not {slots_per_point!r}")
            stacks.append([pin, sign])
            stacks.extend(_fill(sign, abs(n) - 1, slots_per_point - 1))
        else:
            stacks.extend(fill(number, sign, abs(n), slots_per_point))
    white_half = (bar_slots + 1) // 2
    for count, slots, sign, place in (
        (bar[0], white_half, 1, ("bar", 0)),
        (bar[1], bar_slots - white_half, -1, ("bar", 1)),
        (off[0], tray_slots, 1, ("off", 0)),
        (off[1], tray_slots, -1, ("off", 1)),
    ):
        if count and not slots:
            raise ValueError(f"{place[0]}.{('white', 'black')[place[1]]}: {count!r} checkers but no slots to hold them")
        stacks.extend(fill(place, sign, count, slots))
    return stacks


def slots_for_counts(
    points: Sequence[int],
    pinned: Sequence[int] = (0,) * POINTS,
    bar: tuple[int, int] = (0, 0),
    off: tuple[int, int] = (0, 0),
    slots_per_point: int = SLOTS_PER_POINT,
    rng: random.Random | None = None,
    noise: int = 0,
    *,
    bar_slots: int = BAR_SLOTS,
    tray_slots: int = TRAY_SLOTS,
    config: SensorConfig = DEFAULT_CONFIG,
    layouts: Mapping[int | tuple[str, int], Sequence[int]] | None = None,
) -> tuple[SlotReading, ...]:
    """What the board reads for these checkers; see :func:`slots_for_position` and, for ``layouts``, :func:`slot_stacks`."""
    if noise and rng is None:
        rng = random.Random(0)
    out = []
    for stack in slot_stacks(
        points, pinned, bar, off, slots_per_point, bar_slots=bar_slots, tray_slots=tray_slots, layouts=layouts
    ):
        value = stack_field(stack)
        if noise:
            value += rng.randint(-noise, noise)
        out.append(classify(value, config))
    return tuple(out)


def slots_for_position(
    position,
    slots_per_point: int = SLOTS_PER_POINT,
    rng: random.Random | None = None,
    noise: int = 0,
    *,
    bar_slots: int = BAR_SLOTS,
    tray_slots: int = TRAY_SLOTS,
    config: SensorConfig = DEFAULT_CONFIG,
    layouts: Mapping[int | tuple[str, int], Sequence[int]] | None = None,
) -> tuple[SlotReading, ...]:
    """The board's slot readings for a ``board_rules.Position``, in the protocol's slot order.

    ``noise`` is the peak of a uniform error (0.01 mT) added to each slot's field,
    drawn from ``rng`` (``random.Random(0)`` when not given); ``layouts`` lays some
    places' checkers against the fill order (see :func:`slot_stacks`). Raises
    ``ValueError`` if the slots cannot hold the position.
    """
    return slots_for_counts(
        position.points,
        position.pinned,
        position.bar,
        position.off,
        slots_per_point,
        rng,
        noise,
        bar_slots=bar_slots,
        tray_slots=tray_slots,
        config=config,
        layouts=layouts,
    )


class SensedCounts(NamedTuple):
    """What the host makes of a snapshot.

    ``points``: 24 signed counts of the checkers read with certainty (white positive).
    ``uncertain``: point numbers holding a pinned pair on slot 0 (one white and one
    black checker, the top one pinning the other) not included in ``points``, and
    points whose count is only a lower bound (saturated slots, or both colours).
    ``at_least``: the places whose count is only a lower bound because their slots
    saturate (a point number, or ``("bar", side)`` / ``("off", side)`` with side 0 for
    white, 1 for black). Another source (the camera) or the count of 15 must finish them.
    """

    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    uncertain: tuple[int, ...]
    at_least: tuple[int | tuple[str, int], ...] = ()

    def resolved_points(self, pinned: Sequence[int]) -> tuple[int, ...]:
        """``points`` with each pinned pair added, given who is pinned (+1 white, -1 black per point).

        A point in ``at_least`` with no pin keeps its lower bound. Raises ``ValueError``
        if any other uncertain point has no pin in ``pinned``.
        """
        out = list(self.points)
        for number in self.uncertain:
            pin = pinned[number - 1]
            if not pin:
                if number in self.at_least:
                    continue
                raise ValueError(f"point {number!r} reads a pinned pair but pinned[{number - 1}] is {pin!r}")
            out[number - 1] -= pin
        return tuple(out)


def _area_count(readings: Sequence[SlotReading], state: SlotState, config: SensorConfig) -> tuple[int, bool]:
    """Checkers of one colour on these slots, and whether the count is exact.

    A saturated slot counts ``saturation_height``. Laid in the fill order, no slot is
    more than one higher than the last slot, so that is exact unless the last slot of
    the area is saturated too. Checkers piled against the fill order (a saturated slot
    beside one two or more lower) make the count a lower bound: the pile's height is
    unknown.
    """
    heights = [config.height(r.strength) if r.state is state else 0 for r in readings]
    sat = config.saturation_height
    if not heights or sat not in heights:
        return sum(heights), True
    in_fill_order = all(a >= b for a, b in zip(heights, heights[1:])) and heights[0] - heights[-1] <= 1
    return sum(heights), in_fill_order and heights[-1] < sat


def counts_from_slots(
    readings: Sequence[SlotReading],
    slots_per_point: int = SLOTS_PER_POINT,
    *,
    bar_slots: int = BAR_SLOTS,
    tray_slots: int = TRAY_SLOTS,
    config: SensorConfig = DEFAULT_CONFIG,
) -> SensedCounts:
    """Invert :func:`slots_for_position`: counts per point, bar and off, and the uncertain points.

    Stack heights come from the nearest level in ``config.levels``; saturated slots
    are counted by the fill model. An UNCERTAIN slot on a point is a pinned pair (see
    :class:`SensedCounts`); an UNCERTAIN slot on the bar or a tray counts nothing.
    Raises :class:`~firmware_bridge.protocol.ProtocolError` if the number of readings
    does not match the slot counts.
    """
    expected = POINTS * slots_per_point + bar_slots + 2 * tray_slots
    if len(readings) != expected:
        raise ProtocolError(
            f"{len(readings)} readings; {POINTS}x{slots_per_point} + {bar_slots} + 2x{tray_slots} = {expected} expected",
            reason="length",
        )
    points = []
    uncertain = []
    at_least: list[int | tuple[str, int]] = []
    for i in range(POINTS):
        slots = readings[i * slots_per_point : (i + 1) * slots_per_point]
        pair = slots[0].state is SlotState.UNCERTAIN
        stacked = slots[1:] if pair else slots  # a pinned pair on slot 0; the top colour fills slots 1..
        white, white_exact = _area_count(stacked, SlotState.WHITE, config)
        black, black_exact = _area_count(stacked, SlotState.BLACK, config)
        exact = white_exact and black_exact
        if (white and black) or not exact or any(r.state is SlotState.UNCERTAIN for r in slots):
            uncertain.append(i + 1)
        if not exact and not (white and black):
            at_least.append(i + 1)
        points.append(white - black)
    start = POINTS * slots_per_point
    bar_readings = readings[start : start + bar_slots]
    trays = readings[start + bar_slots :]
    half = (bar_slots + 1) // 2
    # a colour's checkers on both halves of the bar, in both trays (a checker in the other's counts too)
    totals: dict[str, list[int]] = {"bar": [], "off": []}
    for name, halves in (
        ("bar", (bar_readings[:half], bar_readings[half:])),
        ("off", (trays[:tray_slots], trays[tray_slots:])),
    ):
        for side, state in enumerate((SlotState.WHITE, SlotState.BLACK)):
            counted = [_area_count(h, state, config) for h in halves]
            totals[name].append(sum(n for n, _ in counted))
            if not all(exact for _, exact in counted):
                at_least.append((name, side))
    bar, off = tuple(totals["bar"]), tuple(totals["off"])
    return SensedCounts(tuple(points), bar, off, tuple(uncertain), tuple(at_least))
