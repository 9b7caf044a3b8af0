"""The two sides, white and black.

Owns :class:`Side`; imports nothing of ours.
"""

from __future__ import annotations

import enum


class Side(str, enum.Enum):
    """A side of the table. White moves from 24 towards 1 in every variant.

    >>> Side.WHITE.other
    <Side.BLACK: 'black'>
    >>> Side.parse("black") is Side.BLACK
    True
    """

    WHITE = "white"
    BLACK = "black"

    @property
    def other(self) -> Side:
        return Side.BLACK if self is Side.WHITE else Side.WHITE

    @property
    def sign(self) -> int:
        """+1 for white, -1 for black: the sign of this side's counts in ``points``."""
        return 1 if self is Side.WHITE else -1

    @classmethod
    def parse(cls, text: str) -> Side:
        """The side named ``text`` (``"white"`` or ``"black"``); raises ``ValueError`` otherwise."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"side must be 'white' or 'black', not {text!r}") from None

    def __str__(self) -> str:
        return self.value
