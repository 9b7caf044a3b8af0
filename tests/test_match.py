"""Matches, money sessions and tavli matches: score, Crawford, Jacoby, the cycle of games, losses on time."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_rules.cube import CubeOptions, CubeState, GameOutcome
from board_rules.errors import CubeError, MatchError
from board_rules.match import Match, MoneySession, TavliMatch, game_lost_on_time
from board_rules.side import Side

W, B = Side.WHITE, Side.BLACK


def single(winner: Side, cube: int = 1) -> GameOutcome:
    return GameOutcome(winner, 1, "single", cube=cube, cube_owner=None if cube == 1 else winner)


def gammon(winner: Side, cube: int = 1) -> GameOutcome:
    return GameOutcome(winner, 2, "gammon", cube=cube, cube_owner=None if cube == 1 else winner)


# -- losses on time -----------------------------------------------------------------------


def test_game_lost_on_time_is_gammon():
    outcome = game_lost_on_time(B)
    assert (outcome.winner, outcome.base, outcome.kind, outcome.points) == (W, 2, "time", 2)
    assert game_lost_on_time(W, cube=4).points == 8


def test_game_lost_on_time_is_gammon_in_every_kind_of_match():
    assert Match(7).record(game_lost_on_time(B)).points(W) == 2
    assert TavliMatch(7).record(game_lost_on_time(W)).points(B) == 2
    session = MoneySession(CubeOptions(jacoby=True)).record(game_lost_on_time(W))
    assert session.points(B) == 2


def test_game_lost_on_time_needs_a_side():
    with pytest.raises(CubeError, match="not 'black'"):
        game_lost_on_time("black")


# -- backgammon match -----------------------------------------------------------------------


def test_match_scores_base_times_cube():
    match = Match(7).record(gammon(W, cube=2)).record(single(B))
    assert (match.points(W), match.points(B), match.games_played) == (4, 1, 2)
    assert (match.away(W), match.away(B)) == (3, 6)
    assert not match.is_over and match.winner is None


def test_crawford_game_follows_first_reaching_one_away():
    match = Match(5).record(gammon(W, cube=2))
    assert match.crawford_game and not match.post_crawford


def test_crawford_game_forbids_doubling():
    match = Match(5, white_score=4, crawford_game=True)
    options = match.cube_options_for_next_game()
    assert options.crawford_game and not options.doubling_allowed
    with pytest.raises(CubeError, match="no doubling in the Crawford game"):
        CubeState(options=options).double(B)
    with pytest.raises(MatchError, match="no doubling in the Crawford game"):
        match.record(single(B, cube=2))


def test_post_crawford_doubling_allowed():
    match = Match(5, white_score=4, crawford_game=True).record(single(B))
    assert match.post_crawford and not match.crawford_game
    options = match.cube_options_for_next_game()
    assert options.doubling_allowed
    assert CubeState(options=options).double(B).take(W).value == 2


def test_crawford_game_happens_only_once():
    match = Match(5, white_score=4, crawford_game=True).record(gammon(B)).record(single(B))
    assert (match.white_score, match.black_score) == (4, 3)
    assert match.post_crawford and not match.crawford_game


def test_trailer_reaching_one_away_after_crawford_is_post_crawford():
    match = Match(3, white_score=2, crawford_game=True).record(single(B)).record(single(B, cube=2))
    # 2-1 after the Crawford game, then black doubles and wins: 2-3, black wins.
    assert match.winner is B
    both_one_away = Match(3, white_score=2, black_score=2, post_crawford=True)
    assert both_one_away.cube_options_for_next_game().doubling_allowed


def test_no_crawford_game_without_the_rule():
    match = Match(5, crawford_rule=False).record(gammon(W, cube=2))
    assert not match.crawford_game
    assert match.cube_options_for_next_game().doubling_allowed


def test_one_point_match_has_no_crawford_game():
    assert not Match(1).crawford_game
    assert Match(1).record(single(B)).winner is B


def test_match_never_uses_money_options():
    options = Match(7).cube_options_for_next_game()
    assert options == CubeOptions()
    assert not (options.beavers or options.raccoons or options.jacoby or options.automatic_doubles)


def test_match_gammon_counts_double_even_with_centred_cube():
    assert Match(7).record(gammon(B)).points(B) == 2


def test_match_points_beyond_length_are_kept():
    match = Match(7, white_score=5, black_score=3).record(gammon(W, cube=2))
    assert (match.white_score, match.winner, match.is_over) == (9, W, True)


def test_match_over_rejects_more_games():
    match = Match(3, white_score=2, crawford_game=True).record(single(W))
    assert match.winner is W
    with pytest.raises(MatchError, match="the match is over: 'white' won 3-0"):
        match.record(single(B))
    with pytest.raises(MatchError, match="the match is over"):
        match.cube_options_for_next_game()


def test_match_rejects_draws():
    with pytest.raises(MatchError, match="cannot be drawn"):
        Match(5).record(GameOutcome.draw())


def test_match_resumed_one_away_must_say_crawford_or_post_crawford():
    with pytest.raises(MatchError, match="either the Crawford game or post-Crawford"):
        Match(7, white_score=6)
    with pytest.raises(MatchError, match="the Crawford game follows the first time"):
        Match(7, white_score=3, crawford_game=True)


def test_match_length_must_be_positive():
    with pytest.raises(MatchError, match="not 0"):
        Match(0)


# -- money session ------------------------------------------------------------------------


def test_jacoby_gammon_counts_single_when_cube_not_turned():
    session = MoneySession(CubeOptions(jacoby=True))
    assert session.record(gammon(W)).points(W) == 1
    assert session.record(gammon(W, cube=2)).points(W) == 4
    assert MoneySession().record(gammon(W)).points(W) == 2


def test_jacoby_applies_after_automatic_doubles():
    options = CubeOptions(jacoby=True, automatic_doubles=2)
    cube = CubeState(options=options).automatic_double().automatic_double()
    session = MoneySession(options).record(cube.outcome(B, 3, "backgammon"))
    assert session.points(B) == 4


def test_money_session_keeps_points_and_net():
    session = MoneySession(CubeOptions(beavers=True))
    cube = CubeState(options=session.cube_options_for_next_game()).double(W).beaver(B).take(W)
    session = session.record(cube.outcome(B)).record(single(W)).record(GameOutcome.draw())
    assert (session.points(W), session.points(B), session.games_played) == (1, 4, 3)
    assert (session.net(W), session.net(B)) == (-3, 3)


def test_money_session_has_no_crawford_game():
    with pytest.raises(MatchError, match="no Crawford game"):
        MoneySession(CubeOptions(crawford_game=True))


# -- tavli match ------------------------------------------------------------------------------


def test_tavli_match_cycles_portes_plakoto_fevga():
    match = TavliMatch(7)
    seen = []
    for winner in (W, B, W, B):
        seen.append(match.next_variant)
        match = match.record(single(winner))
    seen.append(match.next_variant)
    assert seen == ["portes", "plakoto", "fevga", "portes", "plakoto"]


def test_tavli_match_with_gul_bara_fourth():
    match = TavliMatch(7, with_gul_bara=True)
    seen = []
    for _ in range(5):
        seen.append(match.next_variant)
        match = match.record(GameOutcome.draw())
    assert seen == ["portes", "plakoto", "fevga", "gul-bara", "portes"]


def test_tavli_match_keeps_a_chosen_order():
    match = TavliMatch(5, order=("plakoto", "portes", "fevga"))
    assert [match.next_variant, match.record(single(W)).next_variant] == ["plakoto", "portes"]
    with pytest.raises(MatchError, match="not \\('portes', 'tapa'\\)"):
        TavliMatch(5, order=("portes", "tapa"))


def test_tavli_match_winner_starts_next_game():
    match = TavliMatch(5)
    assert match.next_starter is None
    match = match.record(single(B))
    assert match.next_starter is B
    assert match.record(gammon(W)).next_starter is W


def test_tavli_draw_scores_nothing_and_cycle_moves_on():
    match = TavliMatch(5).record(single(W)).record(GameOutcome.draw())
    assert (match.white_score, match.black_score, match.games_played) == (1, 0, 2)
    assert match.next_variant == "fevga"
    assert match.next_starter is W


def test_tavli_draw_with_opening_roll_option():
    match = TavliMatch(5, opening_roll_after_draw=True).record(single(W)).record(GameOutcome.draw())
    assert match.next_starter is None
    assert match.record(single(B)).next_starter is B


def test_tavli_drawn_first_game_needs_an_opening_roll():
    assert TavliMatch(3).record(GameOutcome.draw()).next_starter is None


def test_tavli_match_length_is_3_5_or_7():
    for length in (3, 5, 7):
        assert TavliMatch(length).length == length
    with pytest.raises(MatchError, match="3, 5 or 7 points, not 4"):
        TavliMatch(4)
    assert TavliMatch(4, any_length=True).length == 4


def test_tavli_match_plays_without_cube():
    match = TavliMatch(7)
    assert not match.cube_options_for_next_game().enabled
    with pytest.raises(MatchError, match="without a cube"):
        match.record(single(W, cube=2))


def test_tavli_game_scores_at_most_two():
    with pytest.raises(MatchError, match="1 or 2 points, not 3"):
        TavliMatch(7).record(GameOutcome(W, 3, "backgammon"))


def test_tavli_plakoto_mother_win_scores_two():
    assert TavliMatch(3).record(GameOutcome(B, 2, "mother")).points(B) == 2


def test_tavli_match_ends_at_length():
    match = TavliMatch(3).record(gammon(W)).record(single(B)).record(gammon(W))
    assert (match.winner, match.white_score, match.black_score) == (W, 4, 1)
    with pytest.raises(MatchError, match="the match is over"):
        _ = match.next_variant
    with pytest.raises(MatchError, match="the match is over"):
        match.record(single(B))


# -- properties -----------------------------------------------------------------------------------

outcomes = st.builds(
    lambda winner, base, cube: GameOutcome(winner, base, ("single", "gammon", "backgammon")[base - 1], cube=cube),
    st.sampled_from(list(Side)),
    st.integers(1, 3),
    st.sampled_from([1, 2, 4]),
)


@given(length=st.integers(1, 11), games=st.lists(outcomes, max_size=30))
def test_crawford_game_is_played_at_most_once_and_right_after_one_away(length, games):
    match = Match(length)
    crawford_games = 0
    for outcome in games:
        if match.is_over:
            break
        if match.crawford_game:
            crawford_games += 1
            assert max(match.white_score, match.black_score) == length - 1
            outcome = GameOutcome(outcome.winner, outcome.base, outcome.kind)
        before = match
        match = match.record(outcome)
        assert match.points(outcome.winner) == before.points(outcome.winner) + outcome.points
        assert match.games_played == before.games_played + 1
        if before.crawford_game:
            assert match.post_crawford and not match.crawford_game
    assert crawford_games <= 1
    assert (match.winner is not None) == match.is_over


@given(
    with_gul_bara=st.booleans(),
    results=st.lists(st.sampled_from([W, B, None]), max_size=20),
)
def test_tavli_cycle_follows_games_played(with_gul_bara, results):
    match = TavliMatch(7, with_gul_bara=with_gul_bara)
    cycle = match.cycle
    for index, winner in enumerate(results):
        if match.is_over:
            break
        assert match.next_variant == cycle[index % len(cycle)]
        match = match.record(GameOutcome.draw() if winner is None else single(winner))
        if winner is not None:
            assert match.is_over or match.next_starter is winner
