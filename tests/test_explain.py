"""The teacher's explanations: the idea behind a play, the verdict on the play made, and both at the table."""

import re

import pytest

from board_rules import Play, Position, Roll, Side
from engine.explain import Verdict, contact, idea, judge
from referee.session import Referee
from referee.spec import MatchSpec
from tests.helpers import make

START = Position.start("backgammon")


def _idea(before: Position, play: str, d1: int, d2: int) -> str | None:
    return idea(before, before.play(play, Roll(d1, d2)))


# =============================================================================== the idea


def test_a_hit_names_the_hit_checkers_point_in_the_movers_numbering():
    before = make("backgammon", {24: 2, 13: 5, 8: 3, 6: 5, 4: -1, 19: -5, 12: -5, 17: -3, 1: -1})
    assert _idea(before, "8/4* 6/4", 4, 2) == "it hits: the checker on your 4 point goes to the bar"
    # black hits white's blot on white's 20: black's own 5 point
    black = make("backgammon", {20: 1, 13: 5, 8: 3, 6: 5, 24: 1, 1: -2, 12: -5, 17: -3, 19: -5}, turn="black")
    assert _idea(black, "8/5* 6/5", 3, 1) == "it hits: the checker on your 5 point goes to the bar"


def test_a_plakoto_pin_is_said_and_a_pinned_mother_is_named_as_such():
    before = make("plakoto", {24: 14, 18: -1, 1: -14})
    assert _idea(before, "24/23 24/18", 6, 1) == (
        "it pins the opponent's checker on your 18 point: it cannot move until you leave"
    )
    mother = make("plakoto", {24: 13, 3: 2, 1: -1, 19: -14})
    assert _idea(mother, "24/23 3/1", 2, 1) == (
        "it pins the opponent's mother, their last checker on their start (your 1 point)"
    )


@pytest.mark.parametrize("variant", ["fevga", "gul-bara", "long-nardy"])
def test_one_checker_makes_a_point_in_the_blocking_games_but_not_in_backgammon(variant):
    start = Position.start(variant)
    assert _idea(start, "24/20", 3, 1) == "it makes your 20 point (in this game one checker holds a point)"
    assert _idea(START, "13/9", 3, 1) is None  # a lone checker holds nothing where checkers are hit


def test_a_point_made_says_the_block_it_grows_to_three_in_a_row():
    assert _idea(START, "8/5 6/5", 3, 1) == "it makes your 5 point"
    assert _idea(START, "13/7 8/7", 6, 1) == "it makes your 7 point: a block of 3 points in a row, your 6 to 8"


def test_an_escape_is_said_leaving_the_opponents_home_or_passing_all_their_checkers():
    assert _idea(START, "24/13", 6, 5) == "it brings a back checker out of the opponent's home board"
    two_back = make("backgammon", {24: 1, 20: 1, 6: 5, 5: 4, 4: 4, 21: -5, 16: -5, 17: -5})
    assert contact(two_back.play("20/9", Roll(6, 5)))
    assert _idea(two_back, "20/9", 6, 5) == "it runs a back checker past all the opponent's checkers"


def test_the_race_is_said_when_contact_is_broken_or_gone_and_bearing_off_when_checkers_leave():
    last_back = make("backgammon", {24: 1, 6: 5, 5: 5, 4: 4, 15: -5, 16: -5, 17: -5})
    assert contact(last_back) and not contact(last_back.play("24/13", Roll(6, 5)))
    assert _idea(last_back, "24/13", 6, 5) == "it breaks contact: it's a race now: move pips"
    race = make("backgammon", {8: 2, 6: 5, 5: 4, 4: 4, 19: -5, 20: -5, 21: -5})
    assert not contact(race)
    assert _idea(race, "8/2 8/3", 6, 5) == "it's a race now: move pips"
    home = make("backgammon", {6: 3, 5: 3, 4: 3, 3: 3, 2: 3, 19: -5, 20: -5, 21: -5})
    assert _idea(home, "6/off 5/off", 6, 5) == "it bears off 2 checkers"
    assert idea(home, home) is None


def test_contact_follows_each_variants_direction():
    # same direction (fevga): white's checker on its 8 will still pass black's path
    assert contact(make("fevga", {8: 1, 3: 14, 10: -1, 14: -14}))
    assert not contact(make("fevga", {6: 1, 3: 14, 14: -15}))  # both all home: nothing left to meet
    assert contact(START)


# =============================================================================== the verdict


def test_the_verdict_on_every_play_of_a_roll_never_has_a_negative_loss_and_the_best_loses_nothing():
    roll = Roll(3, 1)
    plays = START.legal_plays(roll)
    verdicts = [judge(START, roll, START.play(p, roll)) for p in plays]
    best = verdicts[0]
    assert best.best == Play.parse("8/5 6/5") and best.plays == len(plays) == 16
    assert best.idea == "it makes your 5 point"
    for p, v in zip(plays, verdicts):
        assert v.played == p and v.loss is not None and v.loss >= 0
        assert v.loss == pytest.approx(v.score - v.played_score)
        assert 1 <= v.rank <= v.plays
    mine = next(v for v in verdicts if v.played == best.best)
    assert mine.loss == 0 and mine.rank == 1 and mine.played_best
    assert mine.lines() == ["best play: 8/5 6/5; it makes your 5 point", "your play was the best"]
    worst = max(verdicts, key=lambda v: v.loss)
    assert worst.loss > 0 and worst.rank > 1 and worst.played_best is False
    unit = r"0\.\d{3} in equity" if worst.unit == "equity" else r"\d+\.\d points of the heuristic"
    assert re.fullmatch(rf"your play {worst.played} gave up {unit} \(\d+(st|nd|rd|th) of 16\)", worst.lines()[1])


def test_a_play_not_among_those_compared_has_no_known_cost_and_no_play_judged_gives_one_line():
    verdict = judge(START, Roll(3, 1), START)  # not a result of 3-1 at all
    assert verdict.loss is None and verdict.played is None and verdict.played_best is None
    assert verdict.lines()[1] == "your play was not among the 16 plays compared: what it gave up is not known"
    assert judge(START, Roll(3, 1)).lines() == ["best play: 8/5 6/5; it makes your 5 point"]


def test_a_forced_or_impossible_roll_is_said_as_such():
    closed_out = make("backgammon", {6: 5, 5: 5, 4: 5}, bar=(0, 1), turn="black", off=(0, 14))
    verdict = judge(closed_out, Roll(6, 5))
    assert verdict.forced and verdict.best_line() == "no legal play"


def _verdict(source: str, loss: float, rank: int = 3) -> Verdict:
    return Verdict(
        best=Play.parse("13/7 8/7"),
        best_after=START,
        score=0.2,
        source=source,
        idea="it makes your 7 point",
        plays=16,
        played_after=START,
        played=Play.parse("24/18 13/12"),
        played_score=0.2 - loss,
        loss=loss,
        rank=rank,
    )


def test_the_lines_say_equity_for_the_nets_and_the_heuristics_own_points_otherwise():
    assert _verdict("gnubg", 0.084).lines() == [
        "best play: 13/7 8/7; it makes your 7 point",
        "your play 24/18 13/12 gave up 0.084 in equity (3rd of 16)",
    ]
    assert _verdict("learned", 0.0841, 2).played_line() == "your play 24/18 13/12 gave up 0.084 in equity (2nd of 16)"
    assert _verdict("heuristic", 4.25, 11).played_line() == (
        "your play 24/18 13/12 gave up 4.2 points of the heuristic (11th of 16)"
    )
    assert _verdict("gnubg", 0.0001, 2).played_line() == "your play was the best"  # a tie to three decimals
    assert _verdict("heuristic", 0.04, 2).text() == "best play: 13/7 8/7; it makes your 7 point\nyour play was the best"
    with pytest.raises(ValueError, match="loss"):
        _verdict("gnubg", -0.1)


# =============================================================================== at the table


def _teaching(tmp_path, teach=True):
    tmp_path.mkdir(exist_ok=True)
    ref = Referee.new(tmp_path / "match.jsonl", MatchSpec("money", 0, "backgammon"), teach=teach)
    ref.board(ref.position)
    ref.opening(3, 1)  # white starts with 3-1
    return ref


def test_a_teaching_hint_gives_the_idea_and_a_poor_play_is_told_what_it_gave_up(tmp_path):
    ref = _teaching(tmp_path)
    calls = ref.button("hint")
    assert calls.says == ("best play: white's 8/5 6/5", "the idea: it makes your 5 point")
    ref.board(START.play("24/21 24/23", Roll(3, 1)))
    says = ref.button("end-turn").says
    assert says[0] == "white plays 24/23 24/21" and says[-1] == "black to roll"
    (line,) = [s for s in says if "gave up" in s]
    assert re.fullmatch(
        r"white: your play 24/23 24/21 gave up \S+ (in equity|points of the heuristic) \(\d+\w\w of 16\); "
        r"best play: 8/5 6/5; it makes your 5 point",
        line,
    )


def test_no_line_after_the_best_play_nor_outside_teaching_mode(tmp_path):
    ref = _teaching(tmp_path / "teach")
    ref.board(START.play("8/5 6/5", Roll(3, 1)))
    assert ref.button("end-turn").says == ("white plays 8/5 6/5", "black to roll")
    plain = _teaching(tmp_path / "plain", teach=False)
    plain.board(START.play("24/21 24/23", Roll(3, 1)))
    assert plain.button("end-turn").says == ("white plays 24/23 24/21", "black to roll")


def test_an_evaluator_failure_is_no_line_after_a_play_and_no_hint_never_a_crash(tmp_path, monkeypatch):
    import engine.explain

    def broken(*args, **kwargs):
        raise RuntimeError("no net")

    monkeypatch.setattr(engine.explain, "judge", broken)
    ref = _teaching(tmp_path)
    assert ref.button("hint").says == ("no hint now: the evaluator failed (RuntimeError)",)
    ref.board(START.play("24/21 24/23", Roll(3, 1)))
    assert ref.button("end-turn").says == ("white plays 24/23 24/21", "black to roll")
    assert ref.position.turn is Side.BLACK and ref.position.count(Side.WHITE, 21) == 1  # the play stands
