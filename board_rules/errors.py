"""The exception hierarchy of tavli-table.

One root, :class:`TavliError`; each family also inherits the builtin that fits,
so callers may catch ``ValueError`` or ``OSError`` as they would elsewhere.
Owns nothing else and imports nothing of ours.
"""

from __future__ import annotations


class TavliError(Exception):
    """Root of every error this project raises on purpose."""


class InvalidPositionError(TavliError, ValueError):
    """A position (JSON or object) breaks a rule of the Position JSON spec.

    ``field`` names the offending field (e.g. ``"points[3]"``), ``value`` is what was found.
    """

    def __init__(self, message: str, field: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class InvalidPlaceError(TavliError, ValueError):
    """A place on the table (point 1..24, a side's bar or tray) that does not exist or does not parse.

    ``field`` names the offending field (e.g. ``"number"``), ``value`` is what was found.
    """

    def __init__(self, message: str, field: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class UnknownVariantError(InvalidPositionError):
    """No variant has this name or alias."""


class InvalidRollError(TavliError, ValueError):
    """Dice outside 1..6, or not exactly two of them."""


class InvalidMoveTextError(TavliError, ValueError):
    """A play or checker move in gnubg notation could not be parsed."""


class IllegalPlayError(TavliError, ValueError):
    """A play that the rules do not allow in this position for this roll."""


class InvalidIdError(TavliError, ValueError):
    """A gnubg Position ID or Match ID that does not decode."""


class CubeError(TavliError, ValueError):
    """A cube action (double, take, pass, beaver, raccoon) that the rules do not allow now."""


class MatchError(TavliError, ValueError):
    """A match or session action that does not fit its state (e.g. a game after the match ended)."""


class TooManyPlaysError(TavliError, ValueError):
    """A roll has more legal plays than a listing was allowed to search for."""
