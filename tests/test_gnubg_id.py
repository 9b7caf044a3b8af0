"""gnubg Position ID and Match ID (board_rules.gnubg_id), and the gnubg-nn oracle's conventions.

Boards are 25 ints a side: index i = checkers on that side's own point i + 1, 24 = bar.
"""

from __future__ import annotations

import base64
import dataclasses
import random

import pytest

from board_rules.errors import InvalidIdError, InvalidPositionError
from board_rules.gnubg_id import (
    GAME_NONE,
    GAME_PLAYING,
    MatchState,
    decode_match_id,
    decode_position_id,
    encode_match_id,
    encode_position_id,
)
from board_rules.side import Side
from tests import gnubg_oracle

WHITE, BLACK = Side.WHITE, Side.BLACK
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def half(**points: int) -> tuple[int, ...]:
    """A side's 25 counts from keywords p1..p24 and bar."""
    counts = [0] * 25
    for name, n in points.items():
        counts[24 if name == "bar" else int(name[1:]) - 1] = n
    return tuple(counts)


START = half(p6=5, p8=3, p13=5, p24=2)
EMPTY = (0,) * 25


def raw_position_id(counts: list[int], extra: str = "") -> str:
    """Pack 50 counts (side not on roll first), then ``extra`` bits; no checks."""
    bits = ("".join("1" * n + "0" for n in counts) + extra).ljust(80, "0")[:80]
    key = bytes(int(bits[i : i + 8][::-1], 2) for i in range(0, 80, 8))
    return base64.b64encode(key).decode()[:14]


def raw_match_id(fields: list[tuple[int, int]], pad_bits: int = 0) -> str:
    """Pack (value, width) fields in the manual's order, least significant bit first."""
    bits = "".join(format(value, f"0{width}b")[::-1] for value, width in fields)
    bits = (bits + format(pad_bits, "b")[::-1] if pad_bits else bits).ljust(72, "0")
    key = bytes(int(bits[i : i + 8][::-1], 2) for i in range(0, 72, 8))
    return base64.b64encode(key).decode()


def manual_fields(
    cube_log=0, owner=3, move=0, crawford=0, state=1, turn=0, double=0, resign=0,
    die1=0, die2=0, length=0, score0=0, score1=0, no_jacoby=0,
) -> list[tuple[int, int]]:  # fmt: skip
    return [
        (cube_log, 4), (owner, 2), (move, 1), (crawford, 1), (state, 3), (turn, 1),
        (double, 1), (resign, 2), (die1, 3), (die2, 3), (length, 15), (score0, 15),
        (score1, 15), (no_jacoby, 1),
    ]  # fmt: skip


def random_board(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A board gnubg accepts: <= 15 checkers a side, no shared point, not both barred and closed."""
    while True:
        sides = [[0] * 25, [0] * 25]
        for me in (0, 1):
            for _ in range(rng.choice([15, 15, 15, 14, 12, 9, 5, 1, 0])):
                while True:
                    i = 24 if rng.random() < 0.04 else rng.randrange(24)
                    if i == 24 or not sides[1 - me][23 - i]:
                        sides[me][i] += 1
                        break
        on_roll, opponent = tuple(sides[0]), tuple(sides[1])
        closed = all(on_roll[i] >= 2 and opponent[i] >= 2 for i in range(6))
        if not (closed and on_roll[24] and opponent[24]):
            return on_roll, opponent


def random_state(rng: random.Random) -> MatchState:
    length = rng.choice([0, 0, 1, 3, 5, 7, 9, 11, 25, 64])
    top = length or 32767
    rolled = rng.random() < 0.6
    return MatchState(
        cube_value=1 << rng.randrange(7),
        cube_owner=rng.choice([None, WHITE, BLACK]),
        dice_owner=rng.choice([WHITE, BLACK]),
        crawford=bool(length) and rng.random() < 0.2,
        game_state=rng.randrange(8),
        turn=rng.choice([WHITE, BLACK]),
        double_offered=rng.random() < 0.2,
        resign=rng.randrange(4),
        dice=(rng.randint(1, 6), rng.randint(1, 6)) if rolled else (0, 0),
        match_length=length,
        score=(rng.randint(0, top), rng.randint(0, top)),
        jacoby=rng.random() < 0.7,
    )


# --- Position ID -----------------------------------------------------------


def test_start_position_id_is_4HPwATDgc_ABMA():
    assert encode_position_id(START, START) == "4HPwATDgc/ABMA"
    assert decode_position_id("4HPwATDgc/ABMA") == (START, START)


def test_start_position_key_bytes_are_the_manuals():
    key = base64.b64decode(encode_position_id(START, START) + "==")
    assert key.hex(" ").upper() == "E0 73 F0 01 30 E0 73 F0 01 30"


def test_position_id_writes_the_side_not_on_roll_first():
    # On roll: a checker on the bar and one on its 24 point; the opponent is at the start.
    on_roll = half(p6=5, p8=3, p13=5, p24=1, bar=1)
    pid = encode_position_id(on_roll, START)
    assert pid == "4HPwATDgc/ABUA"  # gnubg-nn's position_id([START, on_roll]) says the same
    assert pid[:7] == "4HPwATD"  # the unchanged opponent's half comes first
    assert decode_position_id(pid) == (on_roll, START)
    assert encode_position_id(START, on_roll) != pid


def test_empty_board_id_is_all_A():
    assert encode_position_id(EMPTY, EMPTY) == "AAAAAAAAAAAAAA"
    assert decode_position_id("AAAAAAAAAAAAAA") == (EMPTY, EMPTY)


def test_position_id_round_trips_on_random_boards():
    rng = random.Random(20240611)
    for _ in range(500):
        on_roll, opponent = random_board(rng)
        pid = encode_position_id(on_roll, opponent)
        assert len(pid) == 14
        assert pid == raw_position_id(list(opponent) + list(on_roll))
        assert decode_position_id(pid) == (on_roll, opponent)


@pytest.mark.parametrize(
    "pid",
    [
        "",
        "4HPwATDgc/ABM",  # 13 characters
        "4HPwATDgc/ABMAA",  # 15 characters
        "4HPwATDgc/ABMA==",  # Base64 padding is not part of an ID
        "4HPwATDgc-ABMA",  # URL-safe alphabet
        "4HPwATDgc/ABM\u00e9",
        " 4HPwATDgc/ABM",
        "4HPwATDgc/ABMB",  # bits set in the 4 padding bits
        "/////////////A",  # more 1 bits than 30 checkers
        raw_position_id([16] + [0] * 49),  # 16 checkers on one side
        raw_position_id([0] * 25 + [8] * 2 + [0] * 23),  # 16 on the side on roll
        raw_position_id([0] * 50, extra="01"),  # a stray bit after the 50th zero
    ],
)
def test_bad_position_ids_raise_invalid_id_error(pid):
    with pytest.raises(InvalidIdError) as info:
        decode_position_id(pid)
    assert repr(pid) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_position_id_with_both_sides_on_one_point_is_invalid():
    # The side not on roll has a checker on its 1 point (the mover's 24), where the mover has 2.
    pid = raw_position_id([1] + [0] * 24 + [0] * 23 + [2, 0])
    with pytest.raises(InvalidIdError, match="both sides on one point"):
        decode_position_id(pid)


def test_position_id_with_both_sides_barred_against_closed_boards_is_invalid():
    closed_and_barred = [2] * 6 + [0] * 18 + [1]
    pid = raw_position_id(closed_and_barred * 2)
    with pytest.raises(InvalidIdError, match="closed home boards"):
        decode_position_id(pid)


@pytest.mark.parametrize("pid", [None, b"4HPwATDgc/ABMA", 14])
def test_position_id_that_is_not_a_str_raises_invalid_id_error(pid):
    with pytest.raises(InvalidIdError, match="must be a str"):
        decode_position_id(pid)


@pytest.mark.parametrize(
    "on_roll, opponent",
    [
        (START[:24], START),  # 24 entries
        (START, START + (0,)),  # 26 entries
        (half(p6=-1), START),
        (half(p6=16), EMPTY),
        (half(p6=8, p8=8), EMPTY),  # 16 checkers
        ((True,) + (0,) * 24, START),
        (("1",) + (0,) * 24, START),
        ("0" * 25, START),
        (START, half(p1=1)),  # the opponent's 1 point is the mover's 24 point
        (half(p1=2, p2=2, p3=2, p4=2, p5=2, p6=2, bar=1),) * 2,  # both barred, both closed
    ],
)
def test_encode_position_id_rejects_boards_gnubg_would_not_read(on_roll, opponent):
    with pytest.raises(InvalidPositionError):
        encode_position_id(on_roll, opponent)


# --- Match ID --------------------------------------------------------------

MANUAL_EXAMPLE = MatchState(
    cube_value=2,
    cube_owner=WHITE,  # gnubg's player 0
    dice_owner=BLACK,  # player 1 has just rolled ...
    crawford=False,
    game_state=GAME_PLAYING,
    turn=BLACK,
    double_offered=False,
    resign=0,
    dice=(5, 2),  # ... 5-2
    match_length=9,
    score=(2, 4),
)


def test_manual_example_QYkqASAAIAAA():
    assert decode_match_id("QYkqASAAIAAA") == MANUAL_EXAMPLE
    assert encode_match_id(MANUAL_EXAMPLE) == "QYkqASAAIAAA"
    key = base64.b64decode("QYkqASAAIAAA")
    assert key.hex(" ").upper() == "41 89 2A 01 20 00 20 00 00"  # the manual's bytes


def test_money_game_not_started_cAgAAAAAAAAA():
    state = MatchState(
        cube_value=1,
        cube_owner=None,
        dice_owner=BLACK,
        crawford=False,
        game_state=GAME_NONE,
        turn=BLACK,
        double_offered=False,
        resign=0,
        dice=(0, 0),
        match_length=0,
        score=(0, 0),
    )
    assert decode_match_id("cAgAAAAAAAAA") == state
    assert encode_match_id(state) == "cAgAAAAAAAAA"


def test_bit_66_is_set_when_jacoby_is_off():
    # Quoted with 4HPwATDgc/ABMA in the backgammon R package's gnuid2xgid example.
    state = decode_match_id("8IhuACAACAAE")
    assert state.jacoby is False
    assert (state.match_length, state.score, state.crawford) == (3, (2, 1), True)
    assert state.dice == (5, 3)
    assert encode_match_id(state) == "8IhuACAACAAE"
    no_jacoby = dataclasses.replace(MANUAL_EXAMPLE, jacoby=False)
    assert encode_match_id(no_jacoby) == "QYkqASAAIAAE"
    assert decode_match_id("QYkqASAAIAAE") == no_jacoby


def test_dice_are_stored_higher_die_first_as_gnubg_writes_them():
    low_first = dataclasses.replace(MANUAL_EXAMPLE, dice=(2, 5))
    assert low_first.dice == (5, 2)
    assert low_first == MANUAL_EXAMPLE
    # gnubg before 1.06 wrote dice in the order rolled; such IDs still decode.
    old = raw_match_id(manual_fields(1, 0, 1, 0, 1, 1, 0, 0, 2, 5, 9, 2, 4))
    assert decode_match_id(old) == MANUAL_EXAMPLE


def test_player_0_is_white_and_player_1_is_black():
    for owner, bits in ((WHITE, 0), (BLACK, 1), (None, 3)):
        state = dataclasses.replace(MANUAL_EXAMPLE, cube_owner=owner)
        assert encode_match_id(state) == raw_match_id(manual_fields(1, bits, 1, 0, 1, 1, 0, 0, 5, 2, 9, 2, 4))
    swapped = dataclasses.replace(MANUAL_EXAMPLE, dice_owner=WHITE, turn=WHITE, score=(4, 2))
    assert encode_match_id(swapped) == raw_match_id(manual_fields(1, 0, 0, 0, 1, 0, 0, 0, 5, 2, 9, 4, 2))


def test_match_id_round_trips_on_random_states():
    rng = random.Random(66)
    for _ in range(500):
        state = random_state(rng)
        mid = encode_match_id(state)
        assert len(mid) == 12
        owner = 3 if state.cube_owner is None else (0 if state.cube_owner is WHITE else 1)
        assert mid == raw_match_id(
            manual_fields(
                state.cube_value.bit_length() - 1, owner, state.dice_owner is BLACK,
                state.crawford, state.game_state, state.turn is BLACK, state.double_offered,
                state.resign, *state.dice, state.match_length, *state.score, not state.jacoby,
            )
        )  # fmt: skip
        assert decode_match_id(mid) == state
        assert MatchState.parse(str(state)) == state


@pytest.mark.parametrize(
    "mid, problem",
    [
        ("", "12 characters"),
        ("QYkqASAAIAA", "12 characters"),
        ("QYkqASAAIAAAA", "12 characters"),
        ("QYkqASAAIA==", "characters outside"),
        ("QYkqASAAIAA_", "characters outside"),
        (raw_match_id(manual_fields(cube_log=7)), "cube_value"),
        (raw_match_id(manual_fields(cube_log=15)), "cube_value"),
        (raw_match_id(manual_fields(owner=2)), "cube owner bits 10"),
        (raw_match_id(manual_fields(die1=7, die2=1)), "dice"),
        (raw_match_id(manual_fields(die1=3, die2=0)), "dice"),
        (raw_match_id(manual_fields(length=65)), "match_length"),
        (raw_match_id(manual_fields(length=9, score0=10)), "score"),
        (raw_match_id(manual_fields(crawford=1)), "crawford"),
        (raw_match_id(manual_fields(), pad_bits=1), "past bit 66"),
    ],
)
def test_bad_match_ids_raise_invalid_id_error(mid, problem):
    with pytest.raises(InvalidIdError, match=problem) as info:
        decode_match_id(mid)
    assert repr(mid) in str(info.value)


@pytest.mark.parametrize(
    "changes",
    [
        {"cube_value": 0},
        {"cube_value": 3},
        {"cube_value": 128},
        {"cube_value": True},
        {"cube_value": 2.0},
        {"cube_owner": "white"},
        {"dice_owner": None},
        {"turn": "black"},
        {"crawford": 1},
        {"double_offered": None},
        {"jacoby": "yes"},
        {"game_state": 8},
        {"game_state": -1},
        {"resign": 4},
        {"dice": (7, 1)},
        {"dice": (0, 3)},
        {"dice": (1, 2, 3)},
        {"dice": [5, 2]},
        {"match_length": 65},
        {"match_length": -1},
        {"score": (10, 0)},
        {"score": (-1, 0)},
        {"score": [2, 4]},
        {"match_length": 0, "crawford": True},
    ],
)
def test_match_state_rejects_what_no_match_id_holds(changes):
    with pytest.raises(InvalidIdError) as info:
        dataclasses.replace(MANUAL_EXAMPLE, **changes)
    assert isinstance(info.value, ValueError)


def test_money_session_scores_may_exceed_any_match_length():
    state = dataclasses.replace(MANUAL_EXAMPLE, match_length=0, score=(32767, 100))
    assert decode_match_id(encode_match_id(state)) == state


# --- gnubg itself, through gnubg-nn ----------------------------------------


def test_position_id_agrees_with_gnubg_nn():
    pytest.importorskip("gnubg_nn")
    rng = random.Random(1998)
    for _ in range(300):
        on_roll, opponent = random_board(rng)
        pid = encode_position_id(on_roll, opponent)
        assert gnubg_oracle.position_id(on_roll, opponent) == pid
        assert gnubg_oracle.board_from_position_id(pid) == (on_roll, opponent)


def test_oracle_finds_16_results_for_an_opening_3_1():
    pytest.importorskip("gnubg_nn")
    # 3 from 24, 13, 8, 6 times 1 from 24, 8, 6 (13/12 is blocked): 12; one checker 4 pips: 4.
    results = gnubg_oracle.legal_results(START, START, 3, 1)
    assert len(results) == 16
    assert (half(p5=2, p6=4, p8=2, p13=5, p24=2), START) in results  # 8/5 6/5
    assert gnubg_oracle.legal_results(START, START, 1, 3) == results


def test_oracle_keeps_the_inputs_perspective_when_hitting():
    pytest.importorskip("gnubg_nn")
    opponent = half(p6=5, p8=3, p13=5, p24=1, bar=1)  # a blot on its 24 = the mover's 1
    results = gnubg_oracle.legal_results(START, opponent, 6, 5)
    hit = (half(p1=1, p6=4, p8=3, p13=5, p18=1, p24=1), half(p6=5, p8=3, p13=5, bar=2))
    assert hit in results  # 24/18 6/1*: the opponent's blot goes to its bar


def test_oracle_enters_from_the_bar_first():
    pytest.importorskip("gnubg_nn")
    on_roll = half(p6=5, p8=3, p13=5, p24=1, bar=1)
    results = gnubg_oracle.legal_results(on_roll, START, 6, 5)
    # bar/19 is blocked by the opponent's 6 point, so bar/20, then any 6.
    assert results == {
        (half(p6=5, p8=3, p13=5, p18=1, p20=1), START),  # bar/20 24/18
        (half(p6=5, p8=3, p13=5, p14=1, p24=1), START),  # bar/20/14
        (half(p6=5, p7=1, p8=3, p13=4, p20=1, p24=1), START),  # bar/20 13/7
        (half(p2=1, p6=5, p8=2, p13=5, p20=1, p24=1), START),  # bar/20 8/2
    }


def test_oracle_returns_the_input_when_barred_against_a_closed_board():
    pytest.importorskip("gnubg_nn")
    on_roll = half(p6=14, bar=1)
    opponent = half(p1=2, p2=2, p3=2, p4=2, p5=2, p6=2, p13=3)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            assert gnubg_oracle.legal_results(on_roll, opponent, d1, d2) == {(on_roll, opponent)}


def test_oracle_bears_off():
    pytest.importorskip("gnubg_nn")
    opponent = half(p12=2, p13=13)
    assert gnubg_oracle.legal_results(half(p1=1, p2=1), opponent, 6, 5) == {(EMPTY, opponent)}
    # 6-3 from 6, 6, 5, 1: 6/off, then the 3 must move 6/3 or 5/2 (no checker on 3).
    assert gnubg_oracle.legal_results(half(p1=1, p5=1, p6=2), opponent, 6, 3) == {
        (half(p1=1, p3=1, p5=1), opponent),  # 6/off 6/3
        (half(p1=1, p2=1, p6=1), opponent),  # 6/off 5/2
    }


def test_oracle_plays_the_larger_die_when_only_one_can_be_played():
    pytest.importorskip("gnubg_nn")
    on_roll = half(p1=14, p24=1)
    opponent = half(p2=13, p12=2)  # its 12 point is the mover's 13: 24/18/13 and 24/19/13 blocked
    assert gnubg_oracle.legal_results(on_roll, opponent, 6, 5) == {(half(p1=14, p18=1), opponent)}
