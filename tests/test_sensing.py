"""Tests for firmware_bridge.sensing: the model of hardware/SENSING.md and its inverse."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_rules import Position, Side, find_variant
from firmware_bridge.protocol import POINTS, ProtocolError, SlotState
from firmware_bridge.sensing import (
    BAR_SLOTS,
    SLOTS_PER_POINT,
    TRAY_SLOTS,
    SensorConfig,
    counts_from_slots,
    fill_heights,
    slots_for_counts,
    slots_for_position,
    stack_field,
)
from tests.helpers import make

CONFIG = SensorConfig()
SLOT_COUNT = POINTS * SLOTS_PER_POINT + BAR_SLOTS + 2 * TRAY_SLOTS


@st.composite
def positions(draw):
    """Any backgammon position: 15 a side spread over points, bar and off (stacks of 15 included)."""
    points = [0] * 24
    bar, off = [0, 0], [0, 0]
    for side, sign in ((0, 1), (1, -1)):
        for _ in range(15):
            where = draw(st.integers(0, 27))
            if where < 24 and points[where] * sign >= 0:
                points[where] += sign
            elif where == 24:
                bar[side] += 1
            else:
                off[side] += 1
    return Position(find_variant("backgammon"), Side.WHITE, tuple(points), (0,) * 24, tuple(bar), tuple(off))


@st.composite
def plakoto_positions(draw):
    """Plakoto positions with pins: a pinned checker under 1..14 of the other colour."""
    points = [0] * 24
    pinned = [0] * 24
    left = [15, 15]
    for _ in range(draw(st.integers(0, 4))):
        p = draw(st.integers(0, 23))
        if points[p] or pinned[p]:
            continue
        pin = draw(st.sampled_from((1, -1)))
        top = 0 if pin < 0 else 1
        if left[1 - top] < 1 or left[top] < 1:
            continue
        n = draw(st.integers(1, left[top]))
        pinned[p] = pin
        points[p] = n if top == 0 else -n
        left[top] -= n
        left[1 - top] -= 1
    off = [0, 0]
    for side, sign in ((0, 1), (1, -1)):
        for _ in range(left[side]):
            where = draw(st.integers(0, 24))
            if where < 24 and not pinned[where] and points[where] * sign >= 0:
                points[where] += sign
            else:
                off[side] += 1
    return Position(find_variant("plakoto"), Side.WHITE, tuple(points), tuple(pinned), (0, 0), tuple(off))


def test_readings_are_in_protocol_slot_order_points_then_bar_then_trays():
    position = make("backgammon", {1: 3, 24: -2}, bar=(1, 2))
    readings = slots_for_position(position)
    assert len(readings) == SLOT_COUNT
    point1 = readings[:SLOTS_PER_POINT]
    assert [r.state for r in point1] == [SlotState.WHITE] * 3 + [SlotState.EMPTY] * 2
    point24 = readings[23 * SLOTS_PER_POINT : 24 * SLOTS_PER_POINT]
    assert [r.state for r in point24] == [SlotState.BLACK] * 2 + [SlotState.EMPTY] * 3
    bar = readings[24 * SLOTS_PER_POINT : 24 * SLOTS_PER_POINT + BAR_SLOTS]
    assert [r.state for r in bar] == [
        SlotState.WHITE,
        SlotState.EMPTY,
        SlotState.EMPTY,
        SlotState.EMPTY,
        SlotState.BLACK,
        SlotState.BLACK,
        SlotState.EMPTY,
        SlotState.EMPTY,
    ]
    off_white = readings[-2 * TRAY_SLOTS : -TRAY_SLOTS]
    assert sum(r.state is SlotState.WHITE for r in off_white) == 5  # 11 white off: 3, 2, 2, 2, 2


def test_fill_order_is_layer_by_layer_from_the_edge():
    assert fill_heights(15, 5) == (3, 3, 3, 3, 3)
    assert fill_heights(6, 5) == (2, 1, 1, 1, 1)
    assert fill_heights(0, 5) == (0,) * 5


def test_strength_grows_with_the_stack_then_saturates():
    strengths = [stack_field([1] * h) for h in range(1, 8)]
    assert strengths[:4] == list(CONFIG.levels)
    assert strengths[3:] == [CONFIG.levels[-1]] * 4  # 4 and more read the same
    assert [stack_field([-1] * h) for h in range(1, 5)] == [-s for s in CONFIG.levels]


@settings(max_examples=200, deadline=None)
@given(positions(), st.integers(0, 2**32 - 1))
def test_round_trip_position_to_slots_to_counts_with_noise_below_threshold(position, seed):
    readings = slots_for_position(position, rng=random.Random(seed), noise=CONFIG.max_noise - 1)
    counts = counts_from_slots(readings)
    assert counts.points == position.points
    assert counts.bar == position.bar
    assert counts.off == position.off
    assert counts.uncertain == ()


def test_stack_of_fifteen_on_one_point_round_trips():
    for point, sign in ((6, 1), (19, -1)):
        position = make("backgammon", {point: 15 * sign})
        readings = slots_for_position(position, rng=random.Random(1), noise=CONFIG.max_noise - 1)
        assert counts_from_slots(readings).points[point - 1] == 15 * sign


def test_saturated_bar_stack_is_counted_by_the_fill_model():
    # 15 white on the bar lie 4, 4, 4, 3 on white's half: three slots saturate
    position = make("backgammon", {1: -15}, bar=(15, 0), off=(0, 0))
    readings = slots_for_position(position)
    bar = readings[24 * SLOTS_PER_POINT : 24 * SLOTS_PER_POINT + BAR_SLOTS // 2]
    assert [r.strength for r in bar] == [CONFIG.levels[-1]] * 3 + [CONFIG.levels[2]]
    assert counts_from_slots(readings).bar == (15, 0)


def test_stack_beyond_saturation_reads_as_saturation_and_is_a_lower_bound():
    # 15 on a point of 3 slots: 5, 5, 5, every slot saturated at 4
    readings = slots_for_counts((15,) + (0,) * 23, slots_per_point=3)
    assert {r.strength for r in readings[:3]} == {CONFIG.levels[-1]}
    assert readings[0] == slots_for_counts((12,) + (0,) * 23, slots_per_point=3)[0]
    counts = counts_from_slots(readings, slots_per_point=3)
    assert counts.points[0] == 12 and counts.uncertain == (1,)


def test_pinned_checker_reads_uncertain_with_the_pair_strength():
    # plakoto: a black checker pinned on white's point 20 under 4 white checkers
    position = make("plakoto", {20: 4, 1: -14}, pinned={20: "black"})
    readings = slots_for_position(position)
    slots = readings[19 * SLOTS_PER_POINT : 20 * SLOTS_PER_POINT]
    assert slots[0].state is SlotState.UNCERTAIN
    assert slots[0].strength == CONFIG.pair_strength
    assert [r.state for r in slots[1:]] == [SlotState.WHITE] * 3 + [SlotState.EMPTY]
    counts = counts_from_slots(readings)
    assert counts.uncertain == (20,)
    assert counts.points[19] == 3  # the pair on slot 0 is not counted
    assert counts.resolved_points(position.pinned) == position.points


def test_lone_pin_reads_only_a_pinned_pair():
    position = make("plakoto", {5: -1, 24: 14, 1: -13}, pinned={5: "white"})
    counts = counts_from_slots(slots_for_position(position))
    assert counts.points[4] == 0 and counts.uncertain == (5,)
    assert counts.resolved_points(position.pinned) == position.points


@settings(max_examples=150, deadline=None)
@given(plakoto_positions(), st.integers(0, 2**32 - 1))
def test_plakoto_round_trip_resolves_with_the_pins(position, seed):
    readings = slots_for_position(position, rng=random.Random(seed), noise=CONFIG.max_noise - 1)
    counts = counts_from_slots(readings)
    assert counts.uncertain == tuple(i + 1 for i, pin in enumerate(position.pinned) if pin)
    assert counts.resolved_points(position.pinned) == position.points
    assert counts.off == position.off


def test_noise_beyond_threshold_can_misread():
    position = make("backgammon", {1: 2, 24: -3})
    wrong = 0
    for seed in range(200):
        readings = slots_for_position(position, rng=random.Random(seed), noise=4 * CONFIG.max_noise)
        wrong += counts_from_slots(readings).points != position.points
    assert wrong > 0


def test_counts_from_slots_refuses_the_wrong_number_of_readings():
    with pytest.raises(ProtocolError):
        counts_from_slots(slots_for_position(Position.start("backgammon"))[:-1])


def test_sensor_config_refuses_thresholds_out_of_order():
    with pytest.raises(ValueError):
        SensorConfig(checker_min=100)
    with pytest.raises(ValueError):
        SensorConfig(levels=(1200, 1100))


def test_hysteresis_moves_the_empty_threshold_by_the_previous_state():
    from firmware_bridge.sensing import classify

    # EMPTY turns occupied at 150 + 30, occupied turns EMPTY below 150 - 30 (SENSING.md)
    assert classify(170, CONFIG, previous=SlotState.EMPTY).state is SlotState.EMPTY
    assert classify(180, CONFIG, previous=SlotState.EMPTY).state is SlotState.UNCERTAIN
    assert classify(130, CONFIG, previous=SlotState.UNCERTAIN).state is SlotState.UNCERTAIN
    assert classify(119, CONFIG, previous=SlotState.WHITE).state is SlotState.EMPTY
    assert classify(170, CONFIG).state is SlotState.UNCERTAIN  # no previous state: the bare threshold


def test_checkers_heaped_against_the_fill_order_are_a_lower_bound_where_they_saturate():
    # five on slot 0 of point 13 read 4 (saturation): the board knows only "at least 4"
    start = Position.start("backgammon")
    heaped = counts_from_slots(slots_for_position(start, layouts={13: [5, 0, 0, 0, 0]}))
    assert heaped.points[12] == 4 and heaped.at_least == (13,) and 13 in heaped.uncertain
    # a heap of three saturates nothing: still exact, whatever the layout
    assert counts_from_slots(slots_for_position(start, layouts={13: [3, 2, 0, 0, 0]})) == counts_from_slots(
        slots_for_position(start)
    )
    # a tray heap: nine borne off in two piles of 6 and 3 read 4 + 3
    position = make("backgammon", {1: 6, 19: -15}, off=(9, 0))
    tray = counts_from_slots(slots_for_position(position, layouts={("off", 0): [6, 3, 0, 0, 0]}))
    assert tray.off == (7, 0) and tray.at_least == (("off", 0),) and tray.uncertain == ()
    # a layout that does not add up to the place's checkers is not used
    assert counts_from_slots(slots_for_position(start, layouts={13: [9, 0, 0, 0, 0]})).at_least == ()


def test_a_pinned_point_with_a_tall_stack_in_the_fill_order_is_exact():
    # 14 black on a pinned white checker: the pair on slot 0, then 4, 4, 3, 3 on slots 1..4
    position = make("plakoto", {24: -14}, pinned={24: "white"}, off=(14, 1))
    counts = counts_from_slots(slots_for_position(position))
    assert counts.at_least == () and counts.uncertain == (24,)
    assert counts.resolved_points(position.pinned) == position.points


@settings(max_examples=150, deadline=None)
@given(positions())
def test_in_the_fill_order_no_count_is_a_lower_bound(position):
    assert counts_from_slots(slots_for_position(position)).at_least == ()
