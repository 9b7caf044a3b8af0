"""check() on finished turns and TurnTracker on turns being made."""

from __future__ import annotations

import random
import time
from dataclasses import replace

from board_rules import Place, Position, Roll, Side
from board_rules.legality import TurnTracker, check
from board_rules.movegen import legal_plays
from board_rules.reach import PlayFinder, sample_results
from referee.demo import slip
from tests.helpers import make
from tests.positions import random_plakoto, random_same_direction

P = Place.point


def moved(position, *moves):
    """``position`` with white checkers moved (white numbering) without any rule check."""
    pts = list(position.points)
    for a, b in moves:
        pts[a - 1] -= 1
        pts[b - 1] += 1
    return replace(position, points=tuple(pts))


def test_check_accepts_a_legal_play_and_names_it():
    s = Position.start("backgammon")
    verdict = check(s, Roll(6, 5), moved(s, (24, 18), (18, 13)))
    assert verdict.legal and str(verdict.play) == "24/13" and verdict.wrong == ()


def test_check_lights_exactly_the_points_that_differ_from_the_nearest_legal_play():
    s = Position.start("backgammon")
    # 13/7 8/2 with a 6-5: the second checker went one point too far (8/3 was meant)
    wrong = moved(s, (13, 7), (8, 2))
    verdict = check(s, Roll(6, 5), wrong)
    assert not verdict.legal
    assert verdict.wrong == (P(2), P(3))  # the checker on 2 belongs on 3 (13/7 8/3)
    assert str(verdict.play) == "13/7 8/3"


def test_check_refuses_one_die_when_both_can_be_played():
    s = Position.start("backgammon")
    verdict = check(s, Roll(6, 5), moved(s, (13, 7)))
    assert not verdict.legal and len(verdict.wrong) == 2


def test_check_accepts_the_unchanged_board_when_no_play_is_legal():
    p = make("backgammon", {19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2, 6: 14}, bar=(1, 0))
    verdict = check(p, Roll(5, 3), p)
    assert verdict.legal and str(verdict.play) == ""


def test_check_refuses_an_unchanged_board_when_a_play_is_legal():
    s = Position.start("portes")
    verdict = check(s, Roll(3, 1), s)
    assert not verdict.legal and len(verdict.wrong) == 2


def test_check_ignores_turn_and_rolls_of_the_observation():
    s = Position.start("backgammon")
    after = s.play("24/13", Roll(6, 5))
    assert check(s, Roll(6, 5), replace(after, turn=s.turn, rolls=(0, 0))).legal


def test_turn_tracker_follows_a_play_checker_by_checker():
    s = Position.start("backgammon")
    t = TurnTracker(s, Roll(6, 5))
    half = moved(s, (24, 18))
    assert t.on_the_way(s) and t.on_the_way(half) and not t.is_complete(half)
    assert t.is_complete(moved(half, (18, 13)))
    assert not t.on_the_way(moved(s, (24, 16)))


def test_turn_tracker_landing_points_of_a_lifted_checker():
    s = Position.start("backgammon")
    t = TurnTracker(s, Roll(6, 5))
    # from 24: 18 (6) and 13 (both, through 18; 19 is black's point); from 13: 8, 7 and 2
    assert t.landing_points(s, P(24)) == (P(13), P(18))
    assert t.landing_points(s, P(13)) == (P(2), P(7), P(8))
    # after 24/18, the same checker may go on to 13, the others play the 5
    half = moved(s, (24, 18))
    assert t.landing_points(half, P(18)) == (P(13),)
    assert t.landing_points(half, P(8)) == (P(3),)


def test_turn_tracker_lights_nothing_off_the_way():
    s = Position.start("backgammon")
    t = TurnTracker(s, Roll(6, 5))
    assert t.landing_points(moved(s, (24, 16)), P(13)) == ()


def test_turn_tracker_landing_off():
    p = make("backgammon", {3: 1, 2: 1, 24: -15})
    t = TurnTracker(p, Roll(6, 5))
    assert t.landing_points(p, P(3)) == (Place.off(Side.WHITE),)


def _mother_alone(position: Position) -> bool:
    """Whether the opponent's mother stands alone and free on its start (the mover may pin it)."""
    other = position.turn.other
    w = position.variant.white_point(other, 24)
    return position.points[w - 1] == other.sign and position.pinned[w - 1] == 0


def test_check_accepts_every_generated_plakoto_play_under_the_same_name():
    # the targeted search behind check() and the move generator agree play for play; every
    # other position has the opponent's mother alone, so some plays end the game by pinning
    # it before every die is played
    rng = random.Random(2026)
    early = 0
    n = 0
    while n < 150:
        options = rng.choice(({}, {}, {"mother_exception": False}))
        position = random_plakoto(rng, rng.choice(("plakoto", "plakoto", "tapa")), **options)
        if n % 2 and not _mother_alone(position):
            continue
        n += 1
        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        pips = (roll.d1 + roll.d2) * (2 if roll.is_double else 1)
        for play, after in legal_plays(position, roll):
            verdict = check(position, roll, after)
            assert verdict.legal and str(verdict.play) == str(play), (position.to_json(), str(roll), str(play))
            outcome = after.outcome()
            if outcome is not None and outcome.kind == "mother" and sum(m.pips for m in play.moves) < pips:
                early += 1
    assert early >= 3  # the early ending was exercised


def test_check_of_an_escalated_gul_bara_double_ordered_by_the_start_quarter_rule_is_quick():
    # black's escalated 1-1 (24 checker moves) whose order the start-quarter rule decides
    # (black may not hold all six of white's 13..18 at once): found backwards under the
    # rule rather than by walking the moves in every order
    p = make("gul-bara", {3: -1, 4: 1, 6: -2, 12: -11, 17: 1, 19: -1, 24: 13}, turn="black", rolls=(6, 5))
    roll = Roll(1, 1)
    t = time.perf_counter()
    after = p.play("24/23 24/22 24/19 24/11 24/10 24/9 24/8 24/6", roll)
    assert time.perf_counter() - t < 2.0  # 11 to 16 s when the search walked every order
    assert after.points[6:12] == (-1, 0, 0, -1, -1, -3) and after.points[17:23] == (-1,) * 6
    assert check(p, roll, after).legal


def test_escalations_are_judged_as_the_full_search_judges_them_with_or_without_passed_numbers():
    # a board the mover reaches only with every die of an escalation (its pips say so) is judged by a
    # path to it alone; the verdicts are those of the full search, which first proves how many dice can
    # be played (up to 157 ms on such boards), for legal results and for one checker a point off
    rng = random.Random(2211)
    shortcut = passed = 0
    for _ in range(60):
        try:
            p = random_same_direction(rng, "gul-bara")
        except ValueError:
            continue
        si = 0 if p.turn is Side.WHITE else 1
        p = replace(p, rolls=tuple(max(r, 3) if i == si else r for i, r in enumerate(p.rolls)))
        d = rng.randint(1, 6)
        roll = Roll(d, d)
        legs, final, final_side = sample_results(p, roll, limit=25)[-1]
        after = final.to_position(p, final_side, p.turn.other, p.rolls)
        for observed in (after, slip(after, p.turn, rng)):
            if observed is None:
                continue
            quick, full = PlayFinder(p, roll), PlayFinder(p, roll)
            full.best  # noqa: B018 - counted first, as before
            verdict = quick.legs(observed) is not None
            assert verdict == (full.legs(observed) is not None)
            if observed is after:
                assert verdict  # a legal result, whether numbers passed to the opponent or not
                passed += full.best < len(full.seqs[0])
            shortcut += quick._most is None
    assert shortcut >= 20  # the shortcut was taken, for legal boards and slipped ones
    assert passed >= 5  # and legs of passed numbers were followed
