"""The rules of every game on a tavli table: pure, stdlib only, no I/O.

Owns positions, rolls, plays, legal play generation, legality checks, scoring,
the cube and matches, and gnubg's IDs. Imports nothing of ours outside this
package; everything else in the project asks it about the rules.

>>> from board_rules import Position, Roll
>>> len(Position.start("backgammon").legal_plays(Roll(3, 1)))
16
"""

from board_rules.errors import (
    IllegalPlayError,
    InvalidIdError,
    InvalidMoveTextError,
    InvalidPlaceError,
    InvalidPositionError,
    InvalidRollError,
    TavliError,
    UnknownVariantError,
)
from board_rules.notation import CheckerMove, Play, Roll
from board_rules.places import Place, PlaceKind
from board_rules.position import Position
from board_rules.side import Side
from board_rules.variants import VARIANTS, Variant, find_variant

__all__ = [
    "CheckerMove",
    "IllegalPlayError",
    "InvalidIdError",
    "InvalidMoveTextError",
    "InvalidPlaceError",
    "InvalidPositionError",
    "InvalidRollError",
    "Place",
    "PlaceKind",
    "Play",
    "Position",
    "Roll",
    "Side",
    "TavliError",
    "UnknownVariantError",
    "VARIANTS",
    "Variant",
    "find_variant",
]
