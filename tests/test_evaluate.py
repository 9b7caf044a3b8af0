"""The teaching evaluator: gnubg for backgammon and portes, the project's heuristic elsewhere, bounded searches."""

from __future__ import annotations

import functools
import random
import time

import pytest

from board_rules import Play, Position, Roll, Side
from board_rules.legality import is_legal_result
from board_rules.movegen import SearchBudgetExceeded, legal_plays
from engine import evaluate, explain, learned
from engine.beam import BEAM_WIDTH
from engine.evaluate import (
    best_play,
    candidate_plays,
    random_play,
    rank_plays,
    score_position,
)
from tests.helpers import make, plays

needs_gnubg = pytest.mark.skipif(
    not evaluate.gnubg_available(), reason="gnubg-nn is not installed (pip install gnubg-nn)"
)


@pytest.fixture
def no_gnubg(monkeypatch):
    monkeypatch.setattr(evaluate, "_gnubg", lambda: None)


# =============================================================================== which engine


@needs_gnubg
def test_backgammon_opening_31_is_gnubgs_8_5_6_5():
    start = Position.start("backgammon")
    assert str(best_play(start, Roll(3, 1))) == "8/5 6/5"
    ranked = rank_plays(start, Roll(3, 1))
    assert {r.source for r in ranked} == {"gnubg"}
    assert len(ranked) == len(plays(start, 3, 1)) == 16


@needs_gnubg
def test_portes_is_ranked_by_gnubg_too_and_black_moves_its_own_way():
    start = Position.start("portes", Side.BLACK)
    ranked = rank_plays(start, Roll(3, 1), 3)
    assert ranked[0].source == "gnubg" and str(ranked[0].play) == "8/5 6/5"
    assert len(ranked) == 3


def test_without_gnubg_backgammon_uses_the_heuristic(no_gnubg):
    ranked = rank_plays(Position.start("backgammon"), Roll(3, 1))
    assert {r.source for r in ranked} == {"heuristic"}
    assert str(ranked[0].play) == "8/5 6/5"  # making the 5-point is plain good play


@pytest.mark.parametrize("variant", ["plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy"])
def test_other_variants_are_ranked_over_every_legal_play_by_their_net_where_it_beat_the_heuristic(variant):
    start = Position.start(variant)
    ranked = rank_plays(start, Roll(6, 5))
    expected = "learned" if variant in evaluate.LEARNED_BEATS_HEURISTIC else "heuristic"
    assert {r.source for r in ranked} == {expected}
    assert {r.source for r in rank_plays(start, Roll(6, 5), by="learned")} == {"learned"}
    assert {str(r.play) for r in ranked} == plays(start, 6, 5)
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert rank_plays(start, Roll(6, 5), 2) == ranked[:2]
    by_heuristic = rank_plays(start, Roll(6, 5), by="heuristic")
    assert {r.source for r in by_heuristic} == {"heuristic"}
    assert {str(r.play) for r in by_heuristic} == plays(start, 6, 5)


def test_no_legal_play_gives_none():
    # white on the bar against a closed board: black holds white's 19..24
    closed = make("backgammon", {19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2, 6: 14, 1: -3}, bar=(1, 0))
    assert best_play(closed, Roll(6, 5)) is None
    (only,) = rank_plays(closed, Roll(6, 5))
    assert not only.play and only.position.turn is Side.BLACK


# =============================================================================== the heuristic


def test_heuristic_hits_a_blot_in_backgammon(no_gnubg):
    # black has a blot on white's 5 point; white's 6-1 can hit it from 11 or 6
    pos = make("backgammon", {6: 5, 8: 3, 11: 2, 13: 3, 24: 2, 5: -1, 12: -4, 17: -3, 19: -5, 1: -2})
    assert "*" in str(best_play(pos, Roll(6, 1)))


def test_heuristic_pins_in_plakoto():
    # white can pin black's lone checker on 20 with a 4 from 24
    pos = make("plakoto", {24: 13, 13: 2, 20: -1, 1: -14})
    best = str(best_play(pos, Roll(4, 2), by="heuristic"))
    assert "24/20*" in best


def test_heuristic_does_not_leave_the_mother_alone_in_plakoto():
    # white's last two checkers on its start, black can reach 24 from 18 and 19
    pos = make("plakoto", {24: 2, 13: 7, 8: 6, 18: -2, 19: -2, 1: -11})
    for _play, after in legal_plays(pos, Roll(5, 3)):
        if after.count(Side.WHITE, 24) == 1:
            assert score_position(after, Side.WHITE) < score_position(
                Position.play(pos, best_play(pos, Roll(5, 3), by="heuristic"), Roll(5, 3)), Side.WHITE
            )


def test_heuristic_prefers_bearing_off_in_a_long_nardy_race():
    pos = make("long-nardy", {1: 3, 2: 3, 3: 3, 4: 3, 5: 2, 6: 1, 14: -5, 15: -5, 16: -5}, turn="white")
    best = best_play(pos, Roll(6, 5), by="heuristic")
    assert str(best).count("off") == 2


def test_score_of_a_won_game_is_decisive():
    won = make("portes", {1: -15}, off=(15, 0))
    assert score_position(won, Side.WHITE) > 1000 > -1000 > score_position(won, Side.BLACK)


# =============================================================================== bounded searches


def _escalated_gul_bara(seed: int) -> tuple[Position, Roll]:
    """A gul-bara middle game where a 1-1 escalates (24 checker moves) and is too big to list."""
    rng = random.Random(seed)
    pos = Position.start("gul-bara")
    for _ in range(14):
        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        if roll.is_double:
            continue
        _, pos = random_play(pos, roll, rng)
    assert min(pos.rolls) >= 3
    return pos, Roll(1, 1)


def test_an_escalated_gul_bara_double_is_ranked_within_a_budget():
    for seed in (2, 3):
        pos, roll = _escalated_gul_bara(seed)
        with pytest.raises(SearchBudgetExceeded):
            legal_plays(pos, roll, budget=evaluate.PLAY_BUDGET)
        net = learned.shipped("gul-bara")
        t = time.perf_counter()
        options, complete = candidate_plays(pos, roll, net)
        ranked = rank_plays(pos, roll)  # by the net, which also guides a beam of its own
        elapsed = time.perf_counter() - t
        assert not complete and len(options) == len(ranked) > 2 * BEAM_WIDTH
        assert len(candidate_plays(pos, roll)[0]) < len(options)  # without the net, its beam is not searched
        assert elapsed < 5.0
        assert isinstance(best_play(pos, roll), Play)
        # every play either beam search builds is a legal play of the roll, the best one among them
        beam = evaluate._beam(pos, roll)
        by_net = evaluate._beam(pos, roll, functools.partial(evaluate._net_scores, net))
        assert len(beam) == len(by_net) == BEAM_WIDTH
        assert {a for _, a in beam} != {a for _, a in by_net}
        for _, after in beam + by_net:
            assert is_legal_result(pos, roll, after)
        assert ranked[0].position in {after for _, after in beam + by_net}


def test_random_play_is_legal_and_seeded():
    start = Position.start("fevga")
    a = random_play(start, Roll(6, 3), random.Random(4))
    b = random_play(start, Roll(6, 3), random.Random(4))
    assert a == b and a in legal_plays(start, Roll(6, 3))


# =============================================================================== self-play against a random player

# games per variant: enough for >= 75% to mean something (a coin reaches it in 1% of runs
# of 24, 4% of runs of 16, 7% of runs of 12), few enough to keep the whole test near 25 s
GAMES = {
    "backgammon": 24,
    "portes": 24,
    "short-nardy": 24,
    "plakoto": 12,
    "fevga": 16,
    "long-nardy": 16,
    "gul-bara": 12,
}


def self_play(variant: str, games: int, seed: int = 2026) -> int:
    """Games won by the evaluator against a random legal player, each side half the time."""
    rng = random.Random(seed)
    wins = 0
    for g in range(games):
        smart = Side.WHITE if g % 2 == 0 else Side.BLACK
        pos = Position.start(variant, Side.WHITE if rng.random() < 0.5 else Side.BLACK)
        for _ in range(3000):
            roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
            if pos.turn is smart:
                _, pos = evaluate.choose(pos, roll)
            else:
                _, pos = random_play(pos, roll, rng)
            outcome = pos.outcome()
            if outcome is not None:
                wins += outcome.winner is smart
                break
    return wins


@pytest.mark.parametrize("variant", list(GAMES))
def test_evaluator_beats_a_random_player(variant):
    games = GAMES[variant]
    wins = self_play(variant, games)
    assert wins >= 0.75 * games, f"{variant}: won {wins} of {games}"


def test_heuristic_alone_beats_a_random_player_at_backgammon(no_gnubg):
    wins = self_play("backgammon", 24, seed=7)
    assert wins >= 18, f"won {wins} of 24"


@pytest.mark.parametrize("variant", ["plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy", "backgammon"])
def test_best_play_is_the_first_ranked_play(variant, no_gnubg):
    rng = random.Random(5)
    pos = Position.start(variant)
    for _ in range(30):
        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        ranked = rank_plays(pos, roll)
        best = best_play(pos, roll)
        assert (best or Play()) == ranked[0].play
        assert evaluate.choose(pos, roll) == (ranked[0].play, ranked[0].position)
        _, pos = random_play(pos, roll, rng)
        if pos.outcome() is not None:
            break


# white is blocked after its 3-3's first moves: black plays the rest of the escalation (to 6-6)
_PASSING = {
    "variant": "gul-bara",
    "turn": "white",
    "points": [0, 1, 1, 1, 2, 1, 1, 0, 0, 1, 0, 0, -4, -3, -1, -2, -1, -1, -1, -1, -1, 0, 0, 7],
    "bar": {"white": 0, "black": 0},
    "off": {"white": 0, "black": 0},
    "rolls": {"white": 20, "black": 20},
}


@pytest.mark.parametrize("by", ["heuristic", "learned"])
def test_gul_bara_numbers_passed_on_are_played_as_their_side_likes(by):
    pos, roll = Position.from_dict(_PASSING), Roll(3, 3)
    options, complete = candidate_plays(pos, roll)
    assert complete and all(p.then for p, _ in options)
    # the mover's own score of every play, to compare each first leg's worst continuation with
    if by == "learned":
        net = learned.shipped("gul-bara")
        own = [float(e) for e in learned.equity(learned.score_positions(net, [a for _, a in options], pos.turn))]
        deeper = evaluate._deeper(own)  # gul-bara's best plays by the net are valued one ply deeper
        for i, value in zip(deeper, learned.reply_values(net, [options[i][1] for i in deeper])):
            own[i] = float(value)
    else:
        own = [score_position(a, pos.turn) for _, a in options]
    firsts = {p.moves for p, _ in options}
    ranked = rank_plays(pos, roll, by=by)
    assert len(ranked) == len(firsts) == 2  # one play per first leg
    for r in ranked:
        group = [x for (p, _), x in zip(options, own) if p.moves == r.play.moves]
        assert len(group) == 2 and r.score == pytest.approx(min(group)) and min(group) < max(group)
        assert str(r.play).endswith("6/off 5/off 4/off(2)")  # black bears off rather than leave white a gift
    assert evaluate.choose(pos, roll, by=by) == (ranked[0].play, ranked[0].position)
    # a player who played the first leg best is not charged for what the opponent then chose
    gift = next(a for p, a in options if p.moves == ranked[0].play.moves and a != ranked[0].position)
    verdict = explain.judge(pos, roll, gift, by=by)
    assert verdict.loss == 0 and verdict.rank == 1 and verdict.plays == 2  # the gift is not a third play
    assert len(rank_plays(pos, roll, by=by, include=gift)) == 3
    assert [r.play.moves for r in evaluate.first_legs(rank_plays(pos, roll, by=by, include=gift))] == [
        r.play.moves for r in ranked
    ]


def test_each_side_chooses_its_own_leg_three_legs_deep():
    def play(*legs):
        return Play.parse(" | ".join(legs))

    plays = [
        play("8/5", "20/17", "5/2"),
        play("8/5", "20/17", "5/4"),  # the mover's best third leg after 20/17: 5
        play("8/5", "21/18", "5/2"),  # the opponent's choice: 21/18 leaves the mover 3 at best
        play("6/3"),
        play("13/10", "20/17"),
    ]
    scores = [1.0, 5.0, 3.0, 2.0, 4.0]
    picked, values = evaluate._by_first_leg([p.legs for p in plays], scores)
    assert picked == [2, 3, 4] and values == [3.0, 2.0, 4.0]
    picked, values = evaluate._by_first_leg([p.legs for p in plays], scores, keep=[0])
    assert picked == [0, 2, 3, 4] and values == [3.0, 3.0, 2.0, 4.0]


def test_plakotos_best_plays_are_compared_one_ply_deeper():
    from engine import learned
    from tests.positions import random_plakoto

    assert "plakoto" in evaluate.LOOKAHEAD_GAMES
    net = learned.shipped("plakoto")
    rng = random.Random("deeper")
    deeper_seen = 0
    for _ in range(40):
        pos = random_plakoto(rng)
        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        ranked = rank_plays(pos, roll, by="learned")
        scored = learned.score_positions(net, [r.position for r in ranked], pos.turn)
        flat = {r.position: float(e) for r, e in zip(ranked, learned.equity(scored))}
        deep = [r for r in ranked if r.ply == 1]
        assert ranked[: len(deep)] == deep  # the plays looked at deeper come first
        if len(ranked) > 1:
            best_flat = max(flat.values())
            assert {r.position for r in deep} == {
                p
                for p in sorted(flat, key=lambda p: -flat[p])[: evaluate.LOOKAHEAD_PLAYS]
                if flat[p] >= best_flat - evaluate.LOOKAHEAD_WINDOW
            }
            values = learned.reply_values(net, [r.position for r in deep])
            assert [r.score for r in deep] == pytest.approx([float(x) for x in values])
            deeper_seen += len(deep) > 1
        assert evaluate.choose(pos, roll) == (ranked[0].play, ranked[0].position)
        # a play the player made, outside the best, is judged as deep as the best
        if len(ranked) > len(deep):
            played = ranked[-1]
            verdict = explain.judge(pos, roll, played.position, by="learned")
            assert verdict.loss == pytest.approx(
                verdict.score - float(learned.reply_values(net, [played.position])[0]), abs=1e-6
            )
    assert deeper_seen >= 10
