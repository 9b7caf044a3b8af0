"""The doubling cube: double, take, pass, beaver, raccoon, automatic doubles, resignation, outcomes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_rules.cube import (
    MAX_CUBE,
    CubeOffer,
    CubeOptions,
    CubeState,
    GameOutcome,
    Resignation,
)
from board_rules.errors import CubeError, TavliError
from board_rules.side import Side

W, B = Side.WHITE, Side.BLACK
MONEY_ANIMALS = CubeOptions(beavers=True, raccoons=True)


# -- double, take, pass ----------------------------------------------------------


def test_centred_cube_either_side_may_double():
    for side in Side:
        offered = CubeState().double(side)
        assert offered.offer is CubeOffer.DOUBLE
        assert offered.offered_by is side
        assert offered.value == 1 and offered.pending == 2


def test_take_gives_cube_to_taker_at_double_value():
    cube = CubeState().double(W).take(B)
    assert (cube.value, cube.owner, cube.offer, cube.pending) == (2, B, None, None)


def test_only_owner_may_redouble():
    cube = CubeState().double(W).take(B)
    assert not cube.can_double(W)
    with pytest.raises(CubeError, match="'white' may not double: 'black' owns the cube at 2"):
        cube.double(W)
    redoubled = cube.double(B).take(W)
    assert (redoubled.value, redoubled.owner) == (4, W)


def test_pass_gives_doubler_the_value_before_the_double():
    outcome = CubeState().double(W).take(B).double(B).pass_(W)
    assert outcome == GameOutcome(B, 1, "pass", cube=2, cube_owner=B)
    assert outcome.points == 2


def test_pass_of_centred_double_scores_one_point():
    assert CubeState().double(B).pass_(W).points == 1


def test_doubler_cannot_answer_own_double():
    offered = CubeState().double(W)
    with pytest.raises(CubeError, match="'white' may not take"):
        offered.take(W)
    with pytest.raises(CubeError, match="'white' may not pass"):
        offered.pass_(W)


def test_take_and_pass_need_an_offer():
    with pytest.raises(CubeError, match="no double, beaver or raccoon awaits"):
        CubeState().take(W)
    with pytest.raises(CubeError, match="no double, beaver or raccoon awaits"):
        CubeState().pass_(B)


def test_no_second_double_while_one_awaits_an_answer():
    with pytest.raises(CubeError, match="a double by 'white' awaits an answer"):
        CubeState().double(W).double(B)


def test_cube_cannot_pass_64():
    cube = CubeState(value=32, owner=W).double(W).take(B)
    assert cube.value == MAX_CUBE
    assert not cube.can_double(B)
    with pytest.raises(CubeError, match="already at 64"):
        cube.double(B)
    with pytest.raises(CubeError, match="power of two from 1 to 64"):
        CubeState(value=128, owner=W)


def test_crawford_game_forbids_doubling():
    cube = CubeState(options=CubeOptions(crawford_game=True))
    for side in Side:
        assert not cube.can_double(side)
        with pytest.raises(CubeError, match="no doubling in the Crawford game"):
            cube.double(side)


def test_game_without_cube_forbids_doubling():
    cube = CubeState(options=CubeOptions.without_cube())
    with pytest.raises(CubeError, match="played without a cube"):
        cube.double(W)


def test_cube_errors_are_value_errors_of_the_root():
    with pytest.raises(ValueError):
        CubeState().take(W)
    with pytest.raises(TavliError):
        CubeState().take(W)


def test_side_must_be_a_side():
    with pytest.raises(CubeError, match="not 'white'"):
        CubeState().double("white")


# -- beavers and raccoons ----------------------------------------------------------


def test_beaver_keeps_cube_with_taker():
    beavered = CubeState(options=CubeOptions(beavers=True)).double(W).beaver(B)
    assert (beavered.value, beavered.owner, beavered.offer, beavered.pending) == (2, B, CubeOffer.BEAVER, 4)
    taken = beavered.take(W)
    assert (taken.value, taken.owner) == (4, B)


def test_beaver_passed_loses_the_doubled_value():
    outcome = CubeState(options=CubeOptions(beavers=True)).double(W).beaver(B).pass_(W)
    assert (outcome.winner, outcome.kind, outcome.points) == (B, "pass", 2)


def test_beaver_needs_beavers_option():
    with pytest.raises(CubeError, match="beavers are not played"):
        CubeState().double(W).beaver(B)


def test_beaver_only_by_the_side_doubled_right_after_the_double():
    cube = CubeState(options=CubeOptions(beavers=True))
    with pytest.raises(CubeError, match="no double awaits"):
        cube.beaver(B)
    with pytest.raises(CubeError, match="only 'black' may beaver"):
        cube.double(W).beaver(W)
    with pytest.raises(CubeError, match="no double awaits"):
        cube.double(W).take(B).beaver(B)


def test_raccoon_needs_beaver():
    cube = CubeState(options=MONEY_ANIMALS)
    with pytest.raises(CubeError, match="no beaver awaits"):
        cube.double(W).raccoon(W)
    with pytest.raises(CubeError, match="raccoons need beavers"):
        CubeOptions(raccoons=True)


def test_raccoon_needs_raccoons_option():
    with pytest.raises(CubeError, match="raccoons are not played"):
        CubeState(options=CubeOptions(beavers=True)).double(W).beaver(B).raccoon(W)


def test_raccoon_by_original_doubler_leaves_cube_with_beaver_side():
    raccooned = CubeState(options=MONEY_ANIMALS).double(W).beaver(B).raccoon(W)
    assert (raccooned.value, raccooned.owner, raccooned.pending) == (4, B, 8)
    with pytest.raises(CubeError, match="only 'white' may raccoon"):
        CubeState(options=MONEY_ANIMALS).double(W).beaver(B).raccoon(B)
    taken = raccooned.take(B)
    assert (taken.value, taken.owner) == (8, B)
    assert taken.can_double(B) and not taken.can_double(W)


def test_raccoon_passed_loses_the_beavered_value():
    outcome = CubeState(options=MONEY_ANIMALS).double(W).beaver(B).raccoon(W).pass_(B)
    assert (outcome.winner, outcome.points) == (W, 4)


def test_beaver_and_raccoon_cannot_pass_64():
    cube = CubeState(value=16, owner=W, options=MONEY_ANIMALS).double(W)
    assert cube.beaver(B).value == 32
    with pytest.raises(CubeError, match="would pass 64"):
        cube.beaver(B).raccoon(W)
    with pytest.raises(CubeError, match="would pass 64"):
        CubeState(value=32, owner=W, options=MONEY_ANIMALS).double(W).beaver(B)


def test_crawford_game_rejects_money_options():
    with pytest.raises(CubeError, match="Crawford game is match play"):
        CubeOptions(crawford_game=True, beavers=True)
    with pytest.raises(CubeError, match="without a cube"):
        CubeOptions(enabled=False, jacoby=True)


# -- automatic doubles ---------------------------------------------------------------------


def test_automatic_double_limit():
    cube = CubeState(options=CubeOptions(automatic_doubles=2))
    values = []
    for _ in range(4):
        cube = cube.automatic_double()
        values.append(cube.value)
    assert values == [2, 4, 4, 4]
    assert cube.owner is None and cube.automatic_doubles_made == 2


def test_automatic_double_off_by_default():
    assert CubeState().automatic_double() == CubeState()


def test_automatic_double_leaves_cube_centred_for_either_side():
    cube = CubeState(options=CubeOptions(automatic_doubles=1)).automatic_double()
    assert cube.can_double(W) and cube.can_double(B)
    assert cube.double(B).take(W).value == 4


def test_automatic_double_only_before_cube_action():
    cube = CubeState(options=CubeOptions(automatic_doubles=3))
    with pytest.raises(CubeError, match="automatic doubles come from tied opening rolls"):
        cube.double(W).take(B).automatic_double()


def test_automatic_doubles_limit_is_validated():
    with pytest.raises(CubeError, match="automatic_doubles must be an int from 0 to 6, not 7"):
        CubeOptions(automatic_doubles=7)


# -- resignation ------------------------------------------------------------------------------


def test_resignation_accepted_scores_level_times_cube():
    cube = CubeState().double(W).take(B).offer_resign(W, Resignation.GAMMON)
    outcome = cube.accept_resign(B)
    assert outcome == GameOutcome(B, 2, "resign", cube=2, cube_owner=B)
    assert outcome.points == 4


def test_resignation_refused_game_continues():
    offered = CubeState().offer_resign(B, Resignation.SINGLE)
    refused = offered.refuse_resign(W)
    assert refused == CubeState()
    assert refused.can_double(B)


def test_resignation_answered_by_the_other_side_only():
    offered = CubeState().offer_resign(B, 3)
    with pytest.raises(CubeError, match="'black' may not accept its own resignation"):
        offered.accept_resign(B)
    with pytest.raises(CubeError, match="no resignation awaits"):
        CubeState().refuse_resign(W)


def test_resignation_level_must_be_single_gammon_or_backgammon():
    with pytest.raises(CubeError, match="resignation level must be 1, 2 or 3, not 4"):
        CubeState().offer_resign(W, 4)


def test_no_resignation_while_double_awaits_answer():
    with pytest.raises(CubeError, match="take or pass it first"):
        CubeState().double(W).offer_resign(B, Resignation.SINGLE)


def test_no_double_while_resignation_awaits_answer():
    with pytest.raises(CubeError, match="has offered to resign"):
        CubeState().offer_resign(B, Resignation.SINGLE).double(W)


def test_resignation_in_game_without_cube_scores_level():
    cube = CubeState(options=CubeOptions.without_cube())
    assert cube.offer_resign(W, Resignation.GAMMON).accept_resign(B).points == 2


# -- outcomes and Jacoby --------------------------------------------------------------------------


def test_outcome_multiplies_base_by_cube():
    cube = CubeState().double(B).take(W).double(W).take(B)
    outcome = cube.outcome(W, 3, "backgammon")
    assert (outcome.points, outcome.cube, outcome.cube_owner) == (12, 4, B)


def test_game_cannot_end_on_board_while_double_awaits_answer():
    with pytest.raises(CubeError, match="cannot end on the board"):
        CubeState().double(W).outcome(W)


def test_jacoby_gammon_counts_single_when_cube_not_turned():
    outcome = CubeState().outcome(W, 2, "gammon")
    assert outcome.scored(jacoby=True) == 1
    assert outcome.scored(jacoby=False) == 2


def test_jacoby_backgammon_counts_single_after_automatic_double():
    cube = CubeState(options=CubeOptions(automatic_doubles=1, jacoby=True)).automatic_double()
    assert cube.outcome(B, 3, "backgammon").scored(jacoby=True) == 2


def test_jacoby_does_not_apply_once_cube_turned():
    outcome = CubeState().double(W).take(B).outcome(W, 2, "gammon")
    assert outcome.scored(jacoby=True) == 4


def test_jacoby_gammon_resignation_counts_single_when_cube_centred():
    outcome = CubeState().offer_resign(B, Resignation.GAMMON).accept_resign(W)
    assert outcome.scored(jacoby=True) == 1


def test_draw_scores_nothing():
    draw = GameOutcome.draw()
    assert (draw.winner, draw.loser, draw.points) == (None, None, 0)
    with pytest.raises(CubeError, match="a draw has winner None"):
        GameOutcome(None, 1, "single")
    with pytest.raises(CubeError, match="a draw has winner None"):
        GameOutcome(W, 0, "draw")


def test_outcome_kind_must_be_known():
    with pytest.raises(CubeError, match="not 'gamon'"):
        GameOutcome(W, 2, "gamon")


def test_koks_scores_four():
    assert GameOutcome(B, 4, "koks").points == 4
    with pytest.raises(CubeError, match="must be 1 to 4, not 5"):
        GameOutcome(B, 5, "koks")


def test_centred_cube_at_one_has_no_owner():
    with pytest.raises(CubeError, match="owner must be None"):
        CubeState(value=1, owner=W)
    with pytest.raises(CubeError, match="cube_owner must be None"):
        GameOutcome(W, 1, "single", cube=1, cube_owner=W)


# -- properties ---------------------------------------------------------------------------------

ACTIONS = ("double", "take", "pass_", "beaver", "raccoon", "automatic_double", "offer_resign", "refuse_resign")


@st.composite
def cube_options(draw):
    beavers = draw(st.booleans())
    return CubeOptions(
        beavers=beavers,
        raccoons=beavers and draw(st.booleans()),
        jacoby=draw(st.booleans()),
        automatic_doubles=draw(st.integers(0, 6)),
    )


@given(
    options=cube_options(),
    steps=st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from(list(Side))), max_size=40),
)
def test_every_reachable_cube_state_is_consistent(options, steps):
    """Any sequence of actions either is refused with CubeError or gives a valid state."""
    cube = CubeState(options=options)
    for action, side in steps:
        try:
            if action == "automatic_double":
                result = cube.automatic_double()
            elif action == "offer_resign":
                result = cube.offer_resign(side, Resignation.SINGLE)
            elif action == "refuse_resign":
                result = cube.refuse_resign(side)
            else:
                result = getattr(cube, action)(side)
        except CubeError:
            continue
        if isinstance(result, GameOutcome):
            assert result.winner is not None and result.points == result.cube
            assert result.cube == cube.value
            break
        cube = result
        assert 1 <= cube.value <= MAX_CUBE and cube.value & (cube.value - 1) == 0
        assert cube.owner is None or cube.value >= 2
        assert cube.pending is None or cube.pending <= MAX_CUBE
        assert CubeState(**{name: getattr(cube, name) for name in CubeState.__dataclass_fields__}) == cube


@given(
    base=st.integers(1, 4),
    cube=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    owned=st.booleans(),
    jacoby=st.booleans(),
)
def test_jacoby_never_raises_the_score(base, cube, owned, jacoby):
    owner = W if owned and cube > 1 else None
    kind = {1: "single", 2: "gammon", 3: "backgammon", 4: "koks"}[base]
    outcome = GameOutcome(B, base, kind, cube=cube, cube_owner=owner)
    assert outcome.points == base * cube
    assert cube <= outcome.scored(jacoby=jacoby) <= outcome.points
