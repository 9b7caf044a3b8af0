"""Positions on the table and their JSON form (``docs/position-json.md``).

Owns :class:`Position`: the checkers of both sides on the 24 points, pinned
checkers (plakoto), bar, off, the side to move and how many rolls each side has
played. Imports :mod:`board_rules.variants` for the variant and its geometry;
the legal plays themselves live in :mod:`board_rules.movegen`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from board_rules.errors import InvalidPositionError, UnknownVariantError
from board_rules.side import Side
from board_rules.untrusted import is_digits, parse_json
from board_rules.variants import Variant, find_variant

if TYPE_CHECKING:  # pragma: no cover
    from board_rules.notation import Play, Roll

CHECKERS = 15
MAX_ROLLS = 10_000  # rolls a side has played in one game: a long one takes some hundred


def _bad(field_name: str, value: object, expected: str) -> InvalidPositionError:
    return InvalidPositionError(f"{field_name}: {value!r} {expected}", field_name, value)


@dataclass(frozen=True, slots=True)
class Position:
    """A table position in white's numbering (index 0 is point 1).

    ``points`` are signed counts (white positive, black negative; in plakoto the
    checkers on top). ``pinned`` holds, per point, the sign of a single checker
    pinned underneath (``+1`` white, ``-1`` black, ``0`` none). ``bar``, ``off``
    and ``rolls`` are ``(white, black)`` pairs.

    >>> p = Position.start("portes")
    >>> p.points[23], p.points[0], p.turn.value
    (2, -2, 'white')
    >>> Position.from_json(p.to_json()) == p
    True
    """

    variant: Variant
    turn: Side
    points: tuple[int, ...]
    pinned: tuple[int, ...] = field(default=(0,) * 24)
    bar: tuple[int, int] = (0, 0)
    off: tuple[int, int] = (0, 0)
    rolls: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if not isinstance(self.variant, Variant):
            raise _bad("variant", self.variant, "is not a variant")
        if not isinstance(self.turn, Side):
            raise _bad("turn", self.turn, "must be 'white' or 'black'")
        if not isinstance(self.points, tuple) or len(self.points) != 24:
            raise _bad("points", self.points, "must hold exactly 24 integers")
        for i, v in enumerate(self.points):
            if type(v) is not int or not -CHECKERS <= v <= CHECKERS:
                raise _bad(f"points[{i}]", v, "must be an integer -15..15")
        if not isinstance(self.pinned, tuple) or len(self.pinned) != 24:
            raise _bad("pinned", self.pinned, "must hold 24 entries")
        for i, v in enumerate(self.pinned):
            if v not in (-1, 0, 1) or type(v) is not int:
                raise _bad(f"pinned[{i + 1}]", v, "must be -1, 0 or 1")
            if v == 0:
                continue
            if not self.variant.pins:
                raise _bad("pinned", {str(i + 1): _side_of(v)}, f"is not allowed in {self.variant.label}")
            if self.points[i] * v >= 0:
                raise _bad(
                    f"pinned[{i + 1}]",
                    _side_of(v),
                    "needs checkers of the other colour on top of it (points[%d] is %d)" % (i, self.points[i]),
                )
        for name in ("bar", "off", "rolls"):
            pair = getattr(self, name)
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise _bad(name, pair, "must be a (white, black) pair")
            for side, v in zip(("white", "black"), pair):
                if type(v) is not int or not 0 <= v <= MAX_ROLLS:
                    raise _bad(f"{name}.{side}", v, f"must be an integer 0..{MAX_ROLLS}")
        if not self.variant.hits and any(self.bar):
            raise _bad(
                "bar", {"white": self.bar[0], "black": self.bar[1]}, f"must be 0: {self.variant.label} has no hitting"
            )
        for side_index, side in enumerate(("white", "black")):
            sign = 1 if side_index == 0 else -1
            on_board = sum(v * sign for v in self.points if v * sign > 0)
            pinned = sum(1 for v in self.pinned if v == sign)
            total = on_board + pinned + self.bar[side_index] + self.off[side_index]
            if total != CHECKERS:
                raise InvalidPositionError(
                    f"checkers.{side}: {total!r}: {side} has {total} checkers (board {on_board} + pinned {pinned} + bar "
                    f"{self.bar[side_index]} + off {self.off[side_index]}); each side has 15",
                    f"checkers.{side}",
                    total,
                )

    # ----------------------------------------------------------------- constructors

    @classmethod
    def start(cls, variant: Variant | str, turn: Side = Side.WHITE) -> Position:
        """The starting position of ``variant`` (a name, alias or :class:`Variant`).

        Raises :class:`UnknownVariantError` for an unknown name.
        """
        v = find_variant(variant) if isinstance(variant, str) else variant
        return cls(v, turn, v.start_points())

    @classmethod
    def from_dict(cls, data: Any, variant: Variant | None = None) -> Position:
        """A position from parsed Position JSON; raises :class:`InvalidPositionError`.

        ``variant`` (with its options) replaces the looked-up one when its name matches.
        """
        if not isinstance(data, dict):
            raise _bad("position", data, "must be a JSON object")
        known = {"variant", "turn", "points", "pinned", "bar", "off", "rolls"}
        for key in data:
            if key not in known:
                raise _bad(str(key), data[key], "is not a field of Position JSON version 1")
        for key in ("variant", "turn", "points", "bar", "off"):
            if key not in data:
                raise InvalidPositionError(f"{key}: missing (required field)", key, None)
        name = data["variant"]
        if not isinstance(name, str):
            raise _bad("variant", name, "must be a variant name")
        try:
            found = find_variant(name)
        except UnknownVariantError as exc:
            raise UnknownVariantError(str(exc), "variant", name) from None
        if variant is not None and variant.name == found.name:
            found = variant
        turn = data["turn"]
        if turn not in ("white", "black"):
            raise _bad("turn", turn, "must be 'white' or 'black'")
        points = data["points"]
        if not isinstance(points, list) or len(points) != 24:
            raise _bad("points", points, "must be a list of exactly 24 integers")
        for i, v in enumerate(points):
            if type(v) is not int:
                raise _bad(f"points[{i}]", v, "must be an integer")
        pinned = [0] * 24
        raw_pins = data.get("pinned", {})
        if not isinstance(raw_pins, dict):
            raise _bad("pinned", raw_pins, "must be an object of point to colour")
        for key, colour in raw_pins.items():
            if not (is_digits(key, 2) and 1 <= int(key) <= 24):
                raise _bad("pinned", key, "keys must be point numbers '1'..'24'")
            if colour not in ("white", "black"):
                raise _bad(f"pinned.{key}", colour, "must be 'white' or 'black'")
            pinned[int(key) - 1] = 1 if colour == "white" else -1
        pairs = {}
        for name_ in ("bar", "off", "rolls"):
            raw = data.get(name_, {"white": 0, "black": 0})
            if not isinstance(raw, dict) or set(raw) - {"white", "black"}:
                raise _bad(name_, raw, 'must be an object {"white": n, "black": n}')
            pair = (raw.get("white", 0), raw.get("black", 0))
            for side, v in zip(("white", "black"), pair):
                if type(v) is not int:
                    raise _bad(f"{name_}.{side}", v, "must be an integer")
            pairs[name_] = pair
        return cls(found, Side(turn), tuple(points), tuple(pinned), pairs["bar"], pairs["off"], pairs["rolls"])

    @classmethod
    def from_json(cls, text: str | bytes, variant: Variant | None = None) -> Position:
        """A position from Position JSON text; raises :class:`InvalidPositionError`."""
        return cls.from_dict(parse_json(text, "position", InvalidPositionError), variant)

    # ----------------------------------------------------------------- output

    def to_dict(self) -> dict[str, Any]:
        """This position as Position JSON (a dict ready for ``json.dumps``)."""
        out: dict[str, Any] = {
            "variant": self.variant.label,
            "turn": self.turn.value,
            "points": list(self.points),
        }
        if self.variant.pins:
            out["pinned"] = {str(i + 1): _side_of(v) for i, v in enumerate(self.pinned) if v}
        out["bar"] = {"white": self.bar[0], "black": self.bar[1]}
        out["off"] = {"white": self.off[0], "black": self.off[1]}
        out["rolls"] = {"white": self.rolls[0], "black": self.rolls[1]}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def __str__(self) -> str:
        return self.to_json()

    # ----------------------------------------------------------------- queries

    def count(self, side: Side, point: int) -> int:
        """How many of ``side``'s checkers are on top of white's ``point`` (1..24)."""
        v = self.points[point - 1] * side.sign
        return v if v > 0 else 0

    def pip_count(self, side: Side) -> int:
        """Pips ``side`` needs to bear off every checker (bar counts as 25)."""
        total = 0
        idx = 0 if side is Side.WHITE else 1
        for w in range(1, 25):
            own = self.variant.own_point(side, w)
            total += own * self.count(side, w)
            if self.pinned[w - 1] == side.sign:
                total += own
        return total + 25 * self.bar[idx]

    def with_turn(self, side: Side) -> Position:
        return replace(self, turn=side)

    def legal_plays(self, roll: Roll) -> list[Play]:
        """Every legal play for ``roll``, one per distinct resulting position."""
        from board_rules.movegen import legal_plays

        return [p for p, _ in legal_plays(self, roll)]

    def play(self, play: Play | str, roll: Roll) -> Position:
        """The position after ``play`` (text or :class:`Play`) for ``roll``.

        Raises :class:`IllegalPlayError` if it is not one of the legal plays.
        """
        from board_rules.legality import apply_play

        return apply_play(self, roll, play)

    def outcome(self):
        """The :class:`GameOutcome` if the game is over in this position, else ``None``."""
        return self.variant.outcome(self)


def _side_of(sign: int) -> str:
    return "white" if sign > 0 else "black"
