"""Place: one type for a point, a side's bar and a side's tray."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_rules import InvalidPlaceError, Place, PlaceKind, Side, TavliError, find_variant
from board_rules.places import PLACES

places = st.one_of(
    st.integers(1, 24).map(Place.point),
    st.sampled_from(list(Side)).map(Place.bar),
    st.sampled_from(list(Side)).map(Place.off),
)


@given(places)
def test_a_place_parses_back_from_its_text_and_its_json(p):
    assert Place.parse(str(p)) == p
    assert Place.from_json(json.loads(json.dumps(p.to_json()))) == p


def test_a_place_parses_from_a_number_a_numeral_and_words():
    assert Place.parse(13) == Place.parse("13") == Place.parse(" 13 ") == Place.point(13)
    assert Place.parse("White Bar") == Place.bar(Side.WHITE)
    assert Place.parse("black off") == Place(PlaceKind.OFF, 0, Side.BLACK)
    assert Place.point(13).to_json() == 13 and Place.off(Side.BLACK).to_json() == "black off"


@pytest.mark.parametrize("text", ["bar", "off", "0", "25", "white", "white point", "-1", "²", "", True, None, 1.5])
def test_what_is_no_place_is_refused_with_its_value_quoted(text):
    with pytest.raises(InvalidPlaceError) as info:
        Place.from_json(text) if not isinstance(text, str) else Place.parse(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TavliError)


@pytest.mark.parametrize(
    "kind, number, side, field",
    [
        (PlaceKind.POINT, 0, None, "number"),
        (PlaceKind.POINT, 25, None, "number"),
        (PlaceKind.POINT, 3, Side.WHITE, "side"),
        (PlaceKind.BAR, 0, None, "side"),
        (PlaceKind.OFF, 3, Side.BLACK, "number"),
        ("tray", 0, Side.BLACK, "kind"),
        (PlaceKind.POINT, "3", None, "number"),
    ],
)
def test_a_place_that_does_not_exist_names_the_field(kind, number, side, field):
    with pytest.raises(InvalidPlaceError) as info:
        Place(kind, number, side)
    assert info.value.field == field and str(info.value).startswith(f"{field}: ")


def test_places_sort_points_first_then_bars_then_trays_white_before_black():
    assert sorted(reversed(PLACES)) == list(PLACES)
    assert len(set(PLACES)) == 28
    assert PLACES[24:] == (Place.bar(Side.WHITE), Place.bar(Side.BLACK), Place.off(Side.WHITE), Place.off(Side.BLACK))


def test_a_place_is_named_in_the_numbering_of_the_side_it_is_named_for():
    assert Place.point(13).number_for(Side.WHITE) == 13 and Place.point(13).number_for(Side.BLACK) == 12
    assert Place.point(13).number_for(Side.BLACK, find_variant("fevga")) == 1
    assert Place.bar(Side.BLACK).label(Side.BLACK) == "bar" and Place.bar(Side.BLACK).label(Side.WHITE) == "black's bar"
    assert (
        Place.off(Side.WHITE).label(Side.WHITE) == "off" and Place.off(Side.WHITE).label(Side.BLACK) == "white's tray"
    )
    with pytest.raises(ValueError):
        Place.bar(Side.WHITE).number_for(Side.WHITE)
