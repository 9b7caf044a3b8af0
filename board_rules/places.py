"""Places on the table: a point, a side's bar, a side's tray (off).

Owns :class:`Place` and :class:`PlaceKind`, the one way the project names where a
checker stands. Imports :mod:`board_rules.errors` and :mod:`board_rules.side`.

>>> Place.parse("13"), Place.parse("white bar"), Place.parse(7)
(Place.point(13), Place.bar(Side.WHITE), Place.point(7))
>>> str(Place.off(Side.BLACK)), Place.parse("black off") == Place.off(Side.BLACK)
('black off', True)
>>> sorted([Place.off(Side.WHITE), Place.bar(Side.BLACK), Place.point(24)])
[Place.point(24), Place.bar(Side.BLACK), Place.off(Side.WHITE)]
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from board_rules.errors import InvalidPlaceError
from board_rules.side import Side

if TYPE_CHECKING:  # pragma: no cover
    from board_rules.variants import Variant


class PlaceKind(str, Enum):
    """What kind of place: one of the 24 points, a side's bar, a side's tray."""

    POINT = "point"
    BAR = "bar"
    OFF = "off"

    def __str__(self) -> str:
        return self.value


_KIND_ORDER = {PlaceKind.POINT: 0, PlaceKind.BAR: 1, PlaceKind.OFF: 2}


@dataclass(frozen=True, slots=True, repr=False)
class Place:
    """A place on the table: point ``number`` (1..24, white's numbering), or ``side``'s bar or tray.

    Raises :class:`~board_rules.errors.InvalidPlaceError` (a ``ValueError``) for a point
    outside 1..24, a point with a side, or a bar or tray without one.

    >>> Place.point(13).number_for(Side.BLACK), Place.point(13).label(Side.BLACK)
    (12, '12')
    >>> Place.bar(Side.WHITE).label(Side.WHITE), Place.off(Side.BLACK).label(Side.WHITE)
    ('bar', "black's tray")
    >>> Place.point(25)
    Traceback (most recent call last):
    ...
    board_rules.errors.InvalidPlaceError: number: 25: a point is numbered 1..24
    """

    kind: PlaceKind
    number: int = 0
    side: Side | None = None

    def __post_init__(self) -> None:
        kind = self.kind
        if not isinstance(kind, PlaceKind):
            try:
                kind = PlaceKind(kind)
            except ValueError:
                raise InvalidPlaceError(
                    f"kind: {self.kind!r}: must be 'point', 'bar' or 'off'", "kind", self.kind
                ) from None
            object.__setattr__(self, "kind", kind)
        side = self.side
        if side is not None and not isinstance(side, Side):
            if side not in ("white", "black"):
                raise InvalidPlaceError(f"side: {side!r}: must be 'white', 'black' or None", "side", side)
            object.__setattr__(self, "side", Side(side))
        number = self.number
        if type(number) is not int:
            raise InvalidPlaceError(f"number: {number!r}: must be an integer", "number", number)
        if kind is PlaceKind.POINT:
            if not 1 <= number <= 24:
                raise InvalidPlaceError(f"number: {number!r}: a point is numbered 1..24", "number", number)
            if self.side is not None:
                raise InvalidPlaceError(f"side: {self.side.value!r}: a point belongs to no side", "side", self.side)
        else:
            if number != 0:
                raise InvalidPlaceError(f"number: {number!r}: must be 0 for the {kind.value}", "number", number)
            if self.side is None:
                raise InvalidPlaceError(f"side: None: the {kind.value} of which side, white or black?", "side", None)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def point(cls, n: int) -> Place:
        """Point ``n`` (1..24) in white's numbering."""
        return cls(PlaceKind.POINT, n)

    @classmethod
    def bar(cls, side: Side) -> Place:
        """``side``'s bar (where its hit checkers wait)."""
        return cls(PlaceKind.BAR, 0, side)

    @classmethod
    def off(cls, side: Side) -> Place:
        """``side``'s tray (its checkers borne off)."""
        return cls(PlaceKind.OFF, 0, side)

    # ------------------------------------------------------------------ queries

    @property
    def is_point(self) -> bool:
        return self.kind is PlaceKind.POINT

    def number_for(self, side: Side, variant: Variant | None = None) -> int:
        """This point's number in ``side``'s own numbering (black's is ``25 - n``, or ``variant``'s
        own numbering where a variant is given: same-direction games number black's points otherwise).

        Raises ``ValueError`` for a bar or tray.
        """
        if self.kind is not PlaceKind.POINT:
            raise InvalidPlaceError(f"{str(self)!r} is not a point: it has no number", "kind", self.kind)
        if variant is not None:
            return variant.own_point(side, self.number)
        return self.number if side is Side.WHITE else 25 - self.number

    def label(self, side: Side, variant: Variant | None = None) -> str:
        """This place as ``side`` names it: a point in its own numbering (see :meth:`number_for`),
        ``"bar"`` / ``"off"`` for its own, ``"white's bar"`` / ``"black's tray"`` for the other side's."""
        if self.kind is PlaceKind.POINT:
            return str(self.number_for(side, variant))
        if self.side is side:
            return self.kind.value
        return f"{self.side.value}'s {'bar' if self.kind is PlaceKind.BAR else 'tray'}"

    def sort_key(self) -> tuple[int, int]:
        """Points by number, then the bars (white, black), then the trays (white, black)."""
        if self.kind is PlaceKind.POINT:
            return (0, self.number)
        return (_KIND_ORDER[self.kind], 0 if self.side is Side.WHITE else 1)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Place):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Place):
            return NotImplemented
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Place):
            return NotImplemented
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Place):
            return NotImplemented
        return self.sort_key() >= other.sort_key()

    # ------------------------------------------------------------------ text and JSON

    def __str__(self) -> str:
        if self.kind is PlaceKind.POINT:
            return str(self.number)
        return f"{self.side.value} {self.kind.value}"

    def __repr__(self) -> str:
        if self.kind is PlaceKind.POINT:
            return f"Place.point({self.number})"
        return f"Place.{self.kind.value}(Side.{self.side.name})"

    @classmethod
    def parse(cls, text: str | int | Place) -> Place:
        """The place written ``text``: ``"13"`` or ``13``, ``"white bar"``, ``"black off"`` (as :meth:`__str__`).

        Raises :class:`~board_rules.errors.InvalidPlaceError` for anything else.
        """
        if isinstance(text, Place):
            return text
        if type(text) is int:
            return cls.point(text)
        if not isinstance(text, str):
            raise InvalidPlaceError(f"place: {text!r}: must be a point number or text", "place", text)
        words = text.strip().lower().split()
        if len(words) == 1 and words[0].isascii() and words[0].isdigit():
            return cls.point(int(words[0]))
        if len(words) == 2 and words[0] in ("white", "black") and words[1] in ("bar", "off"):
            return cls(PlaceKind(words[1]), 0, Side(words[0]))
        raise InvalidPlaceError(
            f"place: {text!r}: expected a point 1..24, or 'white bar', 'black bar', 'white off', 'black off'",
            "place",
            text,
        )

    def to_json(self) -> int | str:
        """A point as its number (``13``), a bar or tray as its text (``"white bar"``)."""
        return self.number if self.kind is PlaceKind.POINT else str(self)

    @classmethod
    def from_json(cls, data: Any) -> Place:
        """The place :meth:`to_json` wrote; raises :class:`~board_rules.errors.InvalidPlaceError`."""
        if type(data) is int or isinstance(data, str):
            return cls.parse(data)
        raise InvalidPlaceError(
            f"place: {data!r}: must be a point number or a string such as 'white bar'", "place", data
        )


# every place on the table, in sort order: points 1..24, the bars, the trays
PLACES: tuple[Place, ...] = (
    *(Place.point(n) for n in range(1, 25)),
    Place.bar(Side.WHITE),
    Place.bar(Side.BLACK),
    Place.off(Side.WHITE),
    Place.off(Side.BLACK),
)
