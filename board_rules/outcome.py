"""What a finished game scores: :class:`GameOutcome`, its kinds and the levels of a resignation.

Owns :class:`GameOutcome`, :data:`OUTCOME_KINDS`, :class:`Resignation` and :data:`MAX_CUBE`,
which the cube (:mod:`board_rules.cube`), the variants' scoring and matches share.
Imports only :mod:`board_rules.errors` and :mod:`board_rules.side`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from board_rules.errors import CubeError
from board_rules.side import Side

__all__ = ["MAX_CUBE", "OUTCOME_KINDS", "GameOutcome", "Resignation", "is_cube_value", "is_side"]

MAX_CUBE = 64
"""The highest face of the cube."""

OUTCOME_KINDS = frozenset(
    {
        "single",  # backgammon and tavli: the loser bore off at least one checker
        "gammon",  # the loser bore off none
        "backgammon",  # ... and has a checker on the bar or in the winner's home board
        "oin",  # long nardy: a plain win
        "simple",  # short nardy: a plain win
        "mars",  # nardy: the loser bore off none
        "home-mars",  # nardy: ... and still has checkers outside home
        "koks",  # nardy: ... and still has checkers on the head (or bar)
        "mother",  # plakoto: the loser's mother (last checker on its start) was pinned
        "resign",  # an accepted resignation
        "pass",  # a double, beaver or raccoon refused
        "time",  # the loser ran out of time or did not come back
        "draw",  # nobody wins (e.g. both plakoto mothers pinned)
    }
)
"""Every ``kind`` a :class:`GameOutcome` may have."""


def is_side(value: object) -> bool:
    """Whether ``value`` is a :class:`Side`."""
    return isinstance(value, Side)


def is_cube_value(value: object) -> bool:
    """Whether ``value`` is a face of the cube: a power of two from 1 to :data:`MAX_CUBE`."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_CUBE and value & (value - 1) == 0
    )


class Resignation(enum.IntEnum):
    """How much a resigning side offers to lose, before the cube.

    >>> Resignation.GAMMON * 4
    8
    """

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3

    @classmethod
    def coerce(cls, level: object) -> Resignation:
        """``level`` as a :class:`Resignation` (1, 2 or 3); raises :class:`CubeError` otherwise."""
        if isinstance(level, bool) or not isinstance(level, int):
            raise CubeError(f"resignation level must be 1, 2 or 3, not {level!r}")
        try:
            return cls(level)
        except ValueError:
            raise CubeError(f"resignation level must be 1, 2 or 3, not {level!r}") from None

    @property
    def kind(self) -> str:
        """The word for this level: ``'single'``, ``'gammon'`` or ``'backgammon'``."""
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """How one game ended and what it is worth.

    ``base`` is the points before the cube (1 single, 2 gammon or mars, 3
    backgammon or home-mars, 4 koks, 0 for a draw); ``cube`` the cube value at
    the end (1 when there is no cube); ``cube_owner`` who owned the cube (None
    while it is centred, also after automatic doubles). Raises
    :class:`CubeError` for an inconsistent outcome.

    >>> win = GameOutcome(Side.WHITE, 2, "gammon", cube=4, cube_owner=Side.WHITE)
    >>> win.points, win.loser
    (8, <Side.BLACK: 'black'>)
    >>> GameOutcome(Side.BLACK, 2, "gammon").scored(jacoby=True)
    1
    >>> GameOutcome.draw().points
    0
    """

    winner: Side | None
    base: int
    kind: str
    cube: int = 1
    cube_owner: Side | None = None

    def __post_init__(self) -> None:
        if self.winner is not None and not is_side(self.winner):
            raise CubeError(f"winner must be a Side or None for a draw, not {self.winner!r}")
        if not isinstance(self.kind, str) or self.kind not in OUTCOME_KINDS:
            raise CubeError(f"kind must be one of {sorted(OUTCOME_KINDS)}, not {self.kind!r}")
        if isinstance(self.base, bool) or not isinstance(self.base, int):
            raise CubeError(f"base must be an int, not {self.base!r}")
        if not is_cube_value(self.cube):
            raise CubeError(f"cube must be a power of two from 1 to {MAX_CUBE}, not {self.cube!r}")
        if self.cube_owner is not None:
            if not is_side(self.cube_owner):
                raise CubeError(f"cube_owner must be a Side or None, not {self.cube_owner!r}")
            if self.cube == 1:
                raise CubeError(f"a cube at 1 is centred; cube_owner must be None, not {self.cube_owner!r}")
        if self.kind == "draw" or self.winner is None:
            if not (self.kind == "draw" and self.winner is None and self.base == 0):
                raise CubeError(
                    "a draw has winner None, base 0 and kind 'draw', "
                    f"not winner={self.winner!r}, base={self.base!r}, kind={self.kind!r}"
                )
            return
        if not 1 <= self.base <= 4:
            raise CubeError(f"base of a {self.kind!r} win must be 1 to 4, not {self.base!r}")
        fixed = {"pass": 1, "time": 2}
        if self.kind in fixed and self.base != fixed[self.kind]:
            raise CubeError(f"a {self.kind!r} outcome has base {fixed[self.kind]}, not {self.base!r}")
        if self.kind == "resign" and self.base > Resignation.BACKGAMMON:
            raise CubeError(f"a resignation has base 1, 2 or 3, not {self.base!r}")

    @classmethod
    def draw(cls) -> GameOutcome:
        """A drawn game: no winner, no points."""
        return cls(None, 0, "draw")

    @property
    def loser(self) -> Side | None:
        """The side that lost, None for a draw."""
        return None if self.winner is None else self.winner.other

    @property
    def points(self) -> int:
        """``base × cube``: what the winner scores, before any Jacoby rule."""
        return self.base * self.cube

    @property
    def centred(self) -> bool:
        """True when the cube ended the game centred (never taken)."""
        return self.cube_owner is None

    def scored(self, *, jacoby: bool = False) -> int:
        """The points the winner scores; with ``jacoby``, gammons and more count
        as single games while the cube is centred (a loss on time excepted)."""
        if jacoby and self.centred and self.kind != "time" and self.base > 1:
            return self.cube
        return self.points
