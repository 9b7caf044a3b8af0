"""The learned evaluators: their outputs, their TD(lambda) training, and the nets the package ships."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from board_rules import VARIANTS, Position, Roll, Side
from board_rules.legality import is_legal_result
from board_rules.movegen import SearchBudgetExceeded
from board_rules.moves import Board
from engine import evaluate, heuristic, learned
from engine.learned import Net, equity, feature_count, features, flip, outcome_target, score_plays
from tests.helpers import make
from tests.positions import random_backgammon, random_same_direction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
import train_evaluator  # noqa: E402

TAUGHT = ("portes", "plakoto", "fevga", "gul-bara", "long-nardy", "short-nardy")


def test_flip_swaps_the_sides_and_twice_is_the_same():
    out = np.array([0.7, 0.3, 0.1, 0.05, 0.2, 0.04, 0.01])
    f = flip(out)
    assert f[0] == pytest.approx(0.3)
    assert list(f[1:4]) == [0.2, 0.04, 0.01] and list(f[4:]) == [0.3, 0.1, 0.05]
    assert np.allclose(flip(f), out)
    assert equity(f) == pytest.approx(-equity(out))


@pytest.mark.parametrize("points", [1, 2, 3, 4])
def test_a_finished_game_is_worth_its_points(points):
    assert equity(outcome_target(points, True)) == pytest.approx(points)
    assert equity(outcome_target(points, False)) == pytest.approx(-points)
    assert equity(outcome_target(points, None)) == pytest.approx(0.0)


def test_lambda_one_is_the_result_and_lambda_zero_the_next_position_each_seen_by_its_mover():
    rng = np.random.default_rng(3)
    out = rng.uniform(0.05, 0.95, (5, 7))
    final = outcome_target(2, True)
    mc = train_evaluator.lambda_returns(out, final, 1.0)
    for k in range(5):
        expected = final if (4 - k) % 2 == 0 else flip(final)
        assert np.allclose(mc[k], expected)
    td0 = train_evaluator.lambda_returns(out, final, 0.0)
    for k in range(3):
        assert np.allclose(td0[k], flip(out[k + 1]))
    assert np.allclose(td0[3], flip(final))


def test_the_gradients_are_those_of_the_cross_entropy():
    v = VARIANTS[2]()  # plakoto: the widest inputs
    rng = np.random.default_rng(0)
    net = Net.new(v, 5, rng)
    net.w1, net.w2 = net.w1.astype(np.float64), net.w2.astype(np.float64)
    x = rng.uniform(0, 1, (3, feature_count(v)))
    target = rng.uniform(0, 1, (3, 7))
    grads, loss = train_evaluator.gradients(net, x, target)
    for arr, grad, at in ((net.w2, grads[2], (1, 3)), (net.w1, grads[0], (7, 2))):
        keep = arr[at]
        arr[at] = keep + 1e-5
        up = train_evaluator.gradients(net, x, target)[1]
        arr[at] = keep - 1e-5
        down = train_evaluator.gradients(net, x, target)[1]
        arr[at] = keep
        assert grad[at] == pytest.approx((up - down) / 2e-5, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("inputs", learned.INPUT_SETS)
@pytest.mark.parametrize("variant", [v.name for v in VARIANTS])
def test_every_game_has_inputs_of_the_declared_width(variant, inputs):
    position = Position.start(variant)
    x = features([Board.of(position, Side.WHITE), Board.of(position, Side.BLACK)], position.variant, inputs)
    assert x.shape == (2, feature_count(position.variant, inputs))
    assert np.isfinite(x).all()
    assert np.allclose(x[0], x[1])  # the start is the same from either side


@pytest.mark.parametrize("variant", [v.name for v in VARIANTS])
def test_the_compiled_inputs_are_the_python_ones_bit_for_bit(variant, monkeypatch):
    from tests.helpers import compiled
    from tests.positions import random_plakoto

    compiled(heuristic._compiled, "engine._heuristic")
    rng = random.Random(f"inputs-{variant}")
    boards = []
    for k in range(300):
        if variant == "plakoto":
            position = random_plakoto(rng, variant)
        elif variant in ("backgammon", "portes", "short-nardy"):
            position = random_backgammon(rng, variant)
        else:
            position = random_same_direction(rng, variant)
        boards.append(Board.of(position, Side.WHITE if k % 2 else Side.BLACK))
    v = Position.start(variant).variant
    wanted = {}
    for inputs in learned.INPUT_SETS:
        wanted[inputs] = features(boards, v, inputs)
    monkeypatch.setattr(heuristic, "_compiled", None)
    for inputs in learned.INPUT_SETS:
        assert np.array_equal(features(boards, v, inputs), wanted[inputs])


def test_the_compiled_board_terms_refuse_what_is_not_a_board():
    from tests.helpers import compiled

    c = compiled(heuristic._compiled, "engine._heuristic")
    key = Board.of(Position.start("portes")).key()
    assert len(c.board_terms(key * 2, bytes(2), 52, True, False, False, False)) == 2 * 15 * 8
    with pytest.raises(ValueError, match="keys"):
        c.board_terms(key, bytes(2), 52, True, False, False, False)
    with pytest.raises(ValueError, match="key_len"):
        c.board_terms(key, bytes(1), 50, True, False, False, False)
    with pytest.raises(ValueError, match="keys"):
        c.board_terms(bytes([16]) + key[1:], bytes(1), 52, True, False, False, False)
    with pytest.raises(ValueError, match="opp_offs"):
        c.board_terms(key, bytes([16]), 52, True, False, False, False)


@pytest.mark.parametrize("variant", ["backgammon", "plakoto", "fevga", "long-nardy"])
def test_the_heuristic_terms_the_second_input_set_reads_add_up_to_its_value(variant):
    rng = random.Random(variant)
    checked = 0
    for _ in range(200):
        position = random_backgammon(rng, variant) if variant == "backgammon" else random_same_direction(rng, variant)
        mine, theirs = Board.of(position, Side.WHITE), Board.of(position, Side.BLACK)
        total, parts = heuristic.value_parts(mine, theirs, position.variant, parts=True)
        assert total == heuristic.value(mine, theirs, position.variant)
        assert len(parts) == 3 + 2 * len(heuristic.SIDE_PARTS)
        race, bar, shots, ours, others = parts[0], parts[1], parts[2], parts[3:8], parts[8:]
        if heuristic.contact(mine, theirs, position.variant):
            borne_off = 3.0 * (mine.me[0] - theirs.me[0])
            assert total == pytest.approx(race + bar - 1.5 * shots + sum(ours) - sum(others) + borne_off)
            checked += 1
    assert checked > 50


def test_a_net_keeps_its_input_set_and_a_net_saved_before_them_reads_the_first(tmp_path):
    v = Position.start("portes").variant
    net = Net.new(v, 4, np.random.default_rng(0), inputs=2)
    net.save(tmp_path / "two.npz")
    again = Net.load(tmp_path / "two.npz")
    assert again.inputs == 2 and again.w1.shape[0] == feature_count(v, 2) > feature_count(v, 1)
    old = Net.new(v, 4, np.random.default_rng(0))
    np.savez_compressed(tmp_path / "old.npz", variant="portes", w1=old.w1, b1=old.b1, w2=old.w2, b2=old.b2, games=1)
    assert Net.load(tmp_path / "old.npz").inputs == 1
    scored = score_plays(again, Position.start("portes"), Roll(3, 1))
    assert scored.x.shape[1] == feature_count(v, 2) and np.isfinite(scored.out).all()


def test_training_writes_the_same_weights_from_the_same_seed(tmp_path):
    for name in ("a", "b"):
        assert (
            train_evaluator.main(["--variant", "fevga", "--games", "2", "--hidden", "4", "--out", str(tmp_path / name)])
            == 0
        )
    a, b = Net.load(tmp_path / "a.npz"), Net.load(tmp_path / "b.npz")
    assert a.games == 2 and a.variant == "fevga"
    assert np.array_equal(a.w1, b.w1) and np.array_equal(a.w2, b.w2)
    assert not np.array_equal(a.w1, Net.new(VARIANTS[3](), 4, np.random.default_rng(1)).w1)  # it learned


def test_training_refuses_a_game_it_does_not_know(capsys):
    with pytest.raises(SystemExit) as e:
        train_evaluator.main(["--variant", "chess"])
    assert e.value.code == 2
    assert "--variant" in capsys.readouterr().err


def test_the_last_checker_off_is_scored_as_the_game_it_wins():
    # white bears off its last checker with a 6; black has none off: a gammon in portes
    pos = make("portes", {1: 1, 24: -15}, turn="white", off=(14, 0))
    scored = score_plays(shipped_or_fresh("portes"), pos, Roll(6, 5))
    assert scored.equity.max() == pytest.approx(2.0)


def shipped_or_fresh(name: str) -> Net:
    net = learned.shipped(name)
    return net if net is not None else Net.new(Position.start(name).variant, 8, np.random.default_rng(0))


@pytest.mark.parametrize("variant", TAUGHT)
def test_a_net_is_shipped_for_every_game_the_teacher_learns(variant):
    net = learned.shipped(variant)
    assert net is not None, f"engine/models/{variant}.npz is missing: make train-evaluator VARIANT={variant}"
    assert net.variant == variant and net.games >= 1000
    assert net.w1.shape[0] == feature_count(Position.start(variant).variant, net.inputs)
    assert net.inputs == train_evaluator.SHIPPED_INPUTS.get(variant, 1)  # what make train-evaluator makes
    expected = ("learned", "gnubg") if variant in evaluate.LEARNED_BEATS_HEURISTIC else ("heuristic",)
    assert evaluate.evaluator(variant) in expected


@pytest.mark.parametrize("variant", TAUGHT)
def test_the_shipped_net_knows_who_is_winning_a_race(variant):
    # white has one checker left, on its 1 point; black has all fifteen on white's 12, far from home
    pos = make(variant, {1: 1, 12: -15}, turn="black", off=(14, 0))
    assert float(equity(learned.score_positions(learned.shipped(variant), [pos], Side.WHITE))[0]) > 0.3


@pytest.mark.parametrize("variant", ["fevga", "long-nardy"])
def test_the_teacher_ranks_by_the_net_where_it_beat_the_heuristic(variant):
    pos = Position.start(variant)
    ranked = evaluate.rank_plays(pos, Roll(6, 4))
    assert ranked[0].source == "learned"
    legal = set(pos.legal_plays(Roll(6, 4)))
    assert {r.play for r in ranked} == legal
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert evaluate.best_play(pos, Roll(6, 4)) == ranked[0].play
    assert evaluate.rank_plays(pos, Roll(6, 4), by="heuristic")[0].source == "heuristic"
    with pytest.raises(ValueError, match="by"):
        evaluate.rank_plays(pos, Roll(6, 4), by="oracle")


def test_the_plakoto_net_pins_a_lone_checker_it_can_reach():
    # white can pin black's lone checker on 20 with a 4 from 24
    pos = make("plakoto", {24: 13, 13: 2, 20: -1, 1: -14})
    assert "24/20*" in str(evaluate.best_play(pos, Roll(4, 2), by="learned"))


def test_the_long_nardy_net_bears_off_in_a_race():
    pos = make("long-nardy", {1: 3, 2: 3, 3: 3, 4: 3, 5: 2, 6: 1, 14: -5, 15: -5, 16: -5}, turn="white")
    assert str(evaluate.best_play(pos, Roll(6, 5), by="learned")).count("off") == 2


def _reference_reply_values(net, positions):
    """reply_values the long way: each roll's plays scored by :func:`score_plays`, one call a roll."""
    out = []
    for p in positions:
        if p.outcome() is not None:
            out.append(float(equity(learned.score_positions(net, [p], p.turn.other))[0]))
            continue
        total = 0.0
        for a, b in learned.ROLLS:
            try:
                best = float(score_plays(net, p, Roll(a, b), sample=False).equity.max())
            except SearchBudgetExceeded:  # an escalated double: the beam's plays, each scored as a position
                rolls = learned.rolls_after(p)
                afters = [
                    board.to_position(p, p.turn, p.turn.other, rolls) for board in learned._beam_replies(p, Roll(a, b))
                ]
                if afters:
                    best = float(equity(learned.score_positions(net, afters, p.turn)).max())
                else:  # no beam plays every die: the roll counts at the position's own value
                    best = -float(equity(learned.score_positions(net, [p], p.turn.other))[0])
            total += (1 if a == b else 2) * -best
        out.append(total / 36.0)
    return np.array(out)


@pytest.mark.parametrize("variant", ["plakoto", "portes", "long-nardy", "fevga", "gul-bara"])
def test_one_ply_deeper_is_the_mean_of_the_opponents_best_replies(variant, monkeypatch):
    from tests.positions import random_plakoto

    rng = random.Random(f"reply-{variant}")
    positions = []
    while len(positions) < 12:
        if variant == "plakoto":
            p = random_plakoto(rng)
        elif variant == "portes":
            p = random_backgammon(rng, variant)
        else:
            p = random_same_direction(rng, variant)
        positions.append(p)
    positions = [p for p in positions if p.turn is positions[0].turn]  # one side has just played in all
    net = learned.shipped(variant)
    beams = []
    monkeypatch.setattr(
        learned, "_beam_replies", lambda p, roll, f=learned._beam_replies: beams.append(roll) or f(p, roll)
    )
    got = learned.reply_values(net, positions)
    assert got.shape == (len(positions),)
    assert bool(beams) == (variant == "gul-bara")  # only escalated doubles are too many to list
    assert np.allclose(got, _reference_reply_values(net, positions), atol=1e-6)
    monkeypatch.setattr(heuristic, "_compiled", None)  # the Python inputs, and no keyed replies
    assert np.allclose(learned.reply_values(net, positions), got, atol=1e-6)


def test_an_escalated_reply_is_a_legal_play_the_beam_finds():
    rng = random.Random("escalated replies")
    checked = 0
    while checked < 6:
        p = random_same_direction(rng, "gul-bara", rolls=(5, 5))
        d = rng.randint(1, 6)
        replies = learned._beam_replies(p, Roll(d, d))
        rolls = learned.rolls_after(p)
        for board in replies:
            assert is_legal_result(p, Roll(d, d), board.to_position(p, p.turn, p.turn.other, rolls))
        checked += bool(replies)
    assert len(learned._beam_replies(p, Roll(1, 1))) <= learned.REPLY_BEAM  # an escalation's dice come in one order


def test_one_ply_deeper_knows_a_finished_game_and_falls_back_on_rolls_too_many_to_list():
    net = learned.shipped("plakoto")
    won = make("plakoto", {1: -15}, off=(15, 0), turn="black")  # white has borne off every checker
    played = make("plakoto", {24: 14, 13: 1, 1: -15}, turn="black")
    values = learned.reply_values(net, [won, played])
    assert values[0] == pytest.approx(won.outcome().base) == 2.0  # a gammon won, whatever the replies
    flat = equity(learned.score_positions(net, [won, played], Side.WHITE))
    assert learned.reply_values(net, [won, played], budget=0) == pytest.approx(flat)  # every roll over budget
    assert learned.reply_values(net, []).shape == (0,)
