"""Mid-turn order is free: every board a player passes through while making a legal play is on the way.

A play is made at the table checker by checker: each checker is lifted, then put down,
and a hit checker may go to the bar before or after the hitter arrives. Whatever the
order, every board with no checker in a hand is on the way to a legal play; only a
board that no order of legal checker moves passes through is refused.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_rules import Place, Position, Roll, Side
from board_rules.legality import TurnTracker, board_diff
from board_rules.movegen import legal_plays
from referee.session import Referee
from referee.spec import MatchSpec
from tests.helpers import make
from tests.positions import random_backgammon, random_plakoto, random_same_direction

GENERATORS = {
    "backgammon": lambda rng: random_backgammon(rng, "backgammon"),
    "portes": lambda rng: random_backgammon(rng, "portes"),
    "short-nardy": lambda rng: random_backgammon(rng, "short-nardy"),
    "plakoto": lambda rng: random_plakoto(rng, "plakoto"),
    "fevga": lambda rng: random_same_direction(rng, "fevga"),
    "gul-bara": lambda rng: random_same_direction(rng, "gul-bara", rolls=(rng.randint(0, 2), rng.randint(0, 2))),
    "long-nardy": lambda rng: random_same_direction(rng, "long-nardy"),
}


class Table:
    """Checkers as they lie: a stack per point (bottom first, +1 white, -1 black), bar and tray per side."""

    def __init__(self, position: Position) -> None:
        self.like = position
        self.stacks = []
        for n, pin in zip(position.points, position.pinned):
            top = [1 if n > 0 else -1] * abs(n)
            self.stacks.append(([pin] if pin else []) + top)
        self.bar = list(position.bar)
        self.off = list(position.off)

    def lift(self, where, sign: int) -> None:
        if where in ("bar", "off"):
            pile = self.bar if where == "bar" else self.off
            assert pile[sign < 0] > 0
            pile[sign < 0] -= 1
            return
        stack = self.stacks[where - 1]
        assert stack and stack[-1] == sign, (where, stack, sign)
        stack.pop()

    def put(self, where, sign: int) -> None:
        if where in ("bar", "off"):
            (self.bar if where == "bar" else self.off)[sign < 0] += 1
            return
        self.stacks[where - 1].append(sign)

    def position(self) -> Position:
        points, pinned = [], []
        for stack in self.stacks:
            top = stack[-1] if stack else 0
            under = [c for c in stack if c != top]
            assert len(under) <= 1 and stack[: len(under)] == under, f"not a board: {stack}"
            points.append(top * (len(stack) - len(under)))
            pinned.append(under[0] if under else 0)
        return Position(
            self.like.variant, self.like.turn, tuple(points), tuple(pinned), tuple(self.bar), tuple(self.off)
        )


def _where(variant, side: Side, own: int):
    return "bar" if own == 25 else "off" if own == 0 else variant.white_point(side, own)


def checker_journeys(position: Position, play) -> list[list[tuple[object, object, int]]]:
    """The play as journeys of single checkers, each a list of ``(from, to, sign)`` steps in white's numbering:
    the mover's checkers (consecutive checker moves of one checker chained) and each hit checker to its bar."""
    v, side = position.variant, position.turn
    sign = side.sign
    journeys: list[list] = []
    open_at: dict[int, list] = {}
    for m in sorted(play.moves, key=lambda m: -m.src):
        if open_at.get(m.src):
            journey = open_at[m.src].pop()
        else:
            journey = []
            journeys.append(journey)
        journey.append((_where(v, side, m.src), _where(v, side, m.dst), sign))
        open_at.setdefault(m.dst, []).append(journey)
        if m.hit and v.hits:
            journeys.append([(_where(v, side, m.dst), "bar", -sign)])
    return journeys


def interleaving(journeys, rng: random.Random, stepwise: bool):
    """Lifts and puts in a random order: each checker lifted before it is put, a step of a journey after the step
    before it (``stepwise``: the checker put down on the way; else lifted once and put once), and a hit checker
    lifted before a checker of the other colour is put on its point."""
    actions = []  # (kind, where, sign, journey index, step)
    for j, journey in enumerate(journeys):
        steps = journey if stepwise else [(journey[0][0], journey[-1][1], journey[0][2])]
        for k, (a, b, sign) in enumerate(steps):
            actions.append([("lift", a, sign, j, k), ("put", b, sign, j, k)])
    hit_points = {journey[0][0]: j for j, journey in enumerate(journeys) if journey[0][1] == "bar"}
    done: set = set()
    order = []
    pending = [list(pair) for pair in actions]
    while any(pending):
        ready = []
        for pair in pending:
            if not pair:
                continue
            kind, where, sign, j, k = pair[0]
            if kind == "lift" and k and ("put", j, k - 1) not in done:
                continue
            if (
                kind == "put"
                and where in hit_points
                and hit_points[where] != j
                and ("lift", hit_points[where], 0) not in done
            ):
                continue
            ready.append(pair)
        pair = rng.choice(ready)
        kind, where, sign, j, k = pair.pop(0)
        done.add((kind, j, k))
        order.append((kind, where, sign))
    return order


def boards_on_the_way(position: Position, play, rng: random.Random, stepwise: bool):
    """Every board with no checker in a hand, as the play is made in a random order."""
    table = Table(position)
    held = 0
    out = []
    for kind, where, sign in interleaving(checker_journeys(position, play), rng, stepwise):
        if kind == "lift":
            table.lift(where, sign)
            held += 1
        else:
            table.put(where, sign)
            held -= 1
            if not held:
                out.append(table.position())
    return out


examples = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@examples
@given(st.sampled_from(sorted(GENERATORS)), st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 6))
def test_every_order_of_lifts_and_puts_of_a_legal_play_stays_on_the_way(name, seed, d1, d2):
    rng = random.Random(seed)
    position = GENERATORS[name](rng)
    roll_ = Roll(d1, d2)
    results = legal_plays(position, roll_)
    play, after = results[rng.randrange(len(results))]
    tracker = TurnTracker(position, roll_)
    for stepwise in (False, True):
        boards = boards_on_the_way(position, play, rng, stepwise)
        for board in boards:
            assert tracker.on_the_way(board), (
                f"{play} ({'step by step' if stepwise else 'checker by checker'}): {board}"
            )
        if not play.then:  # gul-bara's passed numbers are the opponent's to play next
            final = boards[-1] if boards else position
            assert not board_diff(final, after) and tracker.is_complete(final)


def test_a_hit_checker_put_on_the_bar_before_the_hitter_arrives_is_on_the_way():
    # white 6-4 may play 13/7*: the black blot on 7 may go to the bar first
    before = make("backgammon", {24: 2, 13: 5, 8: 3, 6: 5, 7: -1, 19: -5, 12: -5, 17: -3, 1: -1})
    tracker = TurnTracker(before, Roll(6, 4))
    hit_first = make("backgammon", {24: 2, 13: 5, 8: 3, 6: 5, 19: -5, 12: -5, 17: -3, 1: -1}, bar=(0, 1))
    assert tracker.on_the_way(hit_first) and not tracker.is_complete(hit_first)
    landed = make("backgammon", {24: 2, 13: 4, 8: 3, 7: 1, 6: 5, 19: -5, 12: -5, 17: -3, 1: -1}, bar=(0, 1))
    assert tracker.on_the_way(landed)
    # a blot no legal play of 6-4 can hit, put on the bar: no order of legal moves passes through it
    astray = make("backgammon", {24: 2, 13: 5, 8: 3, 6: 5, 7: -1, 19: -5, 12: -5, 17: -3}, bar=(0, 1))
    assert not tracker.on_the_way(astray)


def test_a_checker_borne_off_before_the_last_one_comes_home_is_on_the_way():
    # white 6-5 with a checker on 7 must play 7/1 5/off; bearing off first is a real order too
    before = make("backgammon", {7: 1, 5: 1, 3: 3, 19: -15})
    tracker = TurnTracker(before, Roll(6, 5))
    off_first = make("backgammon", {7: 1, 3: 3, 19: -15})
    assert tracker.on_the_way(off_first)
    # but bearing off two with a checker still outside passes through no legal play
    assert not tracker.on_the_way(make("backgammon", {7: 1, 3: 2, 19: -15}))


def test_boards_no_order_of_legal_moves_passes_through_are_refused():
    s = Position.start("backgammon")
    tracker = TurnTracker(s, Roll(6, 5))
    pts = list(s.points)
    pts[23] -= 1
    pts[15] += 1  # 24/16: neither die, nor both
    assert not tracker.on_the_way(Position(s.variant, s.turn, tuple(pts)))
    pts = list(s.points)
    pts[0] = -1  # one of black's checkers on white's 1 to the bar, where no play of 6-5 hits
    assert not tracker.on_the_way(Position(s.variant, s.turn, tuple(pts), bar=(0, 1)))


def test_the_referee_raises_no_call_when_the_hit_checker_goes_to_the_bar_first(tmp_path):
    ref = Referee.new(tmp_path / "m.jsonl", MatchSpec("money", 0, "backgammon"))
    start = ref.position
    ref.board(start)
    ref.opening(6, 5)  # white plays 24/13
    ref.board(start.play("24/13", Roll(6, 5)))
    ref.button("end-turn")
    ref.dice((6, 4))  # black plays 24/18 13/9: blots on white's 7 and 16
    ref.board(ref.position.play("24/18 13/9", Roll(6, 4)))
    ref.button("end-turn")
    ref.dice((6, 4))  # white may hit on 7 with 13/7*
    before = ref.position
    assert before.points[6] == -1 and before.points[15] == -1 and before.turn is Side.WHITE

    def board(moves: dict[int, int], black_bar: int) -> Position:
        points = list(before.points)
        for point, change in moves.items():
            points[point - 1] += change
        return replace(before, points=tuple(points), bar=(0, black_bar))

    # black's checker on 16 to the bar: no play of 6-4 hits there
    astray = ref.board(board({16: 1}, 1))
    assert astray.buzzer and astray.leds and set(astray.leds) <= {Place.point(16), Place.bar(Side.BLACK)}
    hit_first = ref.board(board({7: 1}, 1))  # black's blot on 7 goes to the bar before white's checker comes
    assert not hit_first.buzzer and not hit_first.leds and not hit_first.says
    landed = ref.board(board({7: 2, 13: -1}, 1))
    assert not landed.buzzer and not landed.leds and not landed.says
    done = ref.board(before.play("13/7* 13/9", Roll(6, 4)))
    assert not done.buzzer and not done.leds
    assert ref.button("end-turn").says[0].startswith("white plays 13/9 13/7*")
