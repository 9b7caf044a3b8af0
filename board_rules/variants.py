"""The games played on a tavli table: their set-up, movement, restrictions and scoring.

One module, as python-chess keeps its variants: each game a short subclass beside the registry.

Owns :class:`Variant`, one subclass per game with its options, and the registry
(:func:`find_variant`). Rule choices the sources disagree on are options with a
documented default. Geometry, in white's numbering: white moves from 24 towards 1;
black's own point is ``25 - p`` in *opposite* variants, ``((p + 11) % 24) + 1`` in
*same-direction* ones (each map its own inverse); a side's home is its own points
1..6. Imports only :mod:`board_rules.errors`, :mod:`board_rules.outcome` and
:mod:`board_rules.side`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

from board_rules.errors import InvalidPositionError, UnknownVariantError
from board_rules.outcome import GameOutcome
from board_rules.side import Side

if TYPE_CHECKING:  # pragma: no cover
    from board_rules.position import Position

OPPOSITE = "opposite"
BACKGAMMON_LAYOUT = {24: 2, 13: 5, 8: 3, 6: 5}  # own point -> checkers, backgammon and short nardy
SAME = "same"

# own point (1..24) -> white point (1..24), per geometry, for black; white is the identity
_BLACK_OPPOSITE = tuple([0] + [25 - p for p in range(1, 25)])
_BLACK_SAME = tuple([0] + [((p + 11) % 24) + 1 for p in range(1, 25)])


@dataclass(frozen=True, slots=True)
class NoOptions:
    """Variants whose rules have no disputed choices."""


class Variant:
    """A game on the tavli table.

    Class attributes describe the rules; an instance carries the chosen options.
    Hooks used by the move generator: ``hits``/``pins``/``blocks`` (what landing on a
    lone opposing checker does), ``start_rule_limit``, ``head_rule``,
    ``start_quarter_rule``, ``trapping_prime_rule``, :meth:`dice_sequences` and
    :meth:`passes_unplayed`. :meth:`outcome` ends and scores a game.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    geometry: ClassVar[str] = OPPOSITE
    hits: ClassVar[bool] = False
    pins: ClassVar[bool] = False
    blocks: ClassVar[bool] = False  # a single opposing checker holds a point
    has_cube: ClassVar[bool] = False
    Options: ClassVar[type] = NoOptions
    # checker-move restrictions (overridden by options where sources disagree)
    start_rule_limit: int = 0  # 0: none; else a second checker may leave the start only
    #                            once a checker stands on own point <= limit (or is off)
    head_rule: bool = False
    start_quarter_rule: bool = False
    trapping_prime_rule: bool = False
    # the opening roll: "play" (the higher die's side plays both dice) or "reroll"
    # (that side throws both dice again); see :meth:`opening`.
    default_opening: ClassVar[str] = "play"

    __slots__ = ("options",)

    def __init__(self, options: Any = None, **kwargs: Any) -> None:
        if options is None:
            options = self.Options()
        if kwargs:
            known = {f.name for f in fields(self.Options)}
            for key, value in kwargs.items():
                if key not in known:
                    raise InvalidPositionError(
                        f"option {key!r} is not one of {self.name}'s options {sorted(known) or '(none)'}",
                        f"option.{key}",
                        value,
                    )
                _check_type(key, value, getattr(options, key))
            options = replace(options, **kwargs)
        object.__setattr__(self, "options", options)
        self._configure()

    def _configure(self) -> None:
        """Derive the hook attributes from the options (subclasses override)."""

    def __setattr__(self, key: str, value: Any) -> None:  # variants are values
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variant) and (self.name, self.options) == (other.name, other.options)

    def __hash__(self) -> int:
        return hash((self.name, self.options))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"

    @property
    def label(self) -> str:
        """The name written in Position JSON."""
        return self.name

    # ----------------------------------------------------------------- geometry

    def white_point(self, side: Side, own: int) -> int:
        """White's number of ``side``'s own point ``own`` (1..24)."""
        if side is Side.WHITE:
            return own
        return (_BLACK_SAME if self.geometry == SAME else _BLACK_OPPOSITE)[own]

    def own_point(self, side: Side, white: int) -> int:
        """``side``'s own number of white's point ``white`` (the maps are involutions)."""
        return self.white_point(side, white)

    def start_points(self) -> tuple[int, ...]:
        """The starting ``points`` (white's numbering, signed)."""
        pts = [0] * 24
        for own, n in self.start_layout().items():
            pts[self.white_point(Side.WHITE, own) - 1] += n
            pts[self.white_point(Side.BLACK, own) - 1] -= n
        return tuple(pts)

    def start_layout(self) -> dict[int, int]:
        """Own point -> checkers at the start, the same for both sides."""
        raise NotImplementedError

    # ----------------------------------------------------------------- dice

    def dice_sequences(self, d1: int, d2: int, rolls_played: int) -> list[tuple[int, ...]]:
        """The orders in which the dice of a roll may be played as checker moves."""
        if d1 == d2:
            return [(d1,) * 4]
        return [(d1, d2), (d2, d1)]

    def passes_unplayed(self, d1: int, d2: int, rolls_played: int) -> bool:
        """Whether numbers the mover cannot play pass to the opponent (gul-bara)."""
        return False

    def head_limit(self, d1: int, d2: int, rolls_played: int) -> int:
        """How many checkers may leave the head this turn (long nardy)."""
        return 15

    def opening(self, white_die: int, black_die: int) -> tuple[Side | None, tuple[int, int] | None]:
        """The opening roll: each side throws one die.

        Returns ``(None, None)`` on a tie (throw again); otherwise the side that starts
        and, when the variant plays the opening dice (``"play"``), the roll it plays;
        ``None`` for the roll when the starter throws both dice again (``"reroll"``).

        >>> find_variant("backgammon").opening(3, 5)
        (<Side.BLACK: 'black'>, (3, 5))
        >>> find_variant("plakoto").opening(6, 2)
        (<Side.WHITE: 'white'>, None)
        """
        for name, v in (("white_die", white_die), ("black_die", black_die)):
            if type(v) is not int or not 1 <= v <= 6:
                raise InvalidPositionError(f"{name}: {v!r} must be a die 1..6", name, v)
        if white_die == black_die:
            return None, None
        starter = Side.WHITE if white_die > black_die else Side.BLACK
        mode = getattr(self.options, "opening", self.default_opening)
        return starter, ((white_die, black_die) if mode == "play" else None)

    # ----------------------------------------------------------------- scoring

    def outcome(self, position: Position) -> GameOutcome | None:
        """The outcome if the game is over in ``position``, else ``None``."""
        for idx, side in enumerate((Side.WHITE, Side.BLACK)):
            if position.off[idx] == 15:
                base, kind = self.score_win(position, side)
                return GameOutcome(winner=side, base=base, kind=kind)
        return None

    def score_win(self, position: Position, winner: Side) -> tuple[int, str]:
        """Base points and kind for ``winner`` having borne off all 15."""
        loser_off = position.off[1 if winner is Side.WHITE else 0]
        return (1, "single") if loser_off else (2, "gammon")

    # helpers for scoring --------------------------------------------------------

    @staticmethod
    def _loser_checkers_on(position: Position, loser: Side, own_points: range) -> int:
        v = position.variant
        n = 0
        for own in own_points:
            w = v.white_point(loser, own)
            n += position.count(loser, w) + (1 if position.pinned[w - 1] == loser.sign else 0)
        return n


def _check_type(name: str, value: Any, default: Any) -> None:
    """An option given a value of another kind than its default's (a word for a yes/no option)."""
    kinds = {bool: "true or false", int: "a whole number", str: "a word"}
    kind = type(default)
    if kind in kinds and type(value) is not kind:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise InvalidPositionError(f"option {name}: {shown} must be {kinds[kind]}", f"option.{name}", value)


def _check_choice(name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise InvalidPositionError(f"option {name}: {value!r} must be one of {list(choices)}", f"option.{name}", value)


# =============================================================================== backgammon


@dataclass(frozen=True, slots=True)
class OpeningOptions:
    # "play": the side with the higher die plays both dice (Greek and Bulgarian seeds);
    # "reroll": it throws both dice again (allowed by the Polish seed).
    opening: str = "play"

    def __post_init__(self) -> None:
        _check_choice("opening", self.opening, ("play", "reroll"))


class Backgammon(Variant):
    """Standard backgammon with the doubling cube (Greek seed 000, Bulgarian seed 001)."""

    name = "backgammon"
    aliases = ("bg",)
    hits = True
    has_cube = True
    Options = OpeningOptions
    __slots__ = ()

    def start_layout(self) -> dict[int, int]:
        return dict(BACKGAMMON_LAYOUT)

    def score_win(self, position: Position, winner: Side) -> tuple[int, str]:
        loser = winner.other
        li = 0 if loser is Side.WHITE else 1
        if position.off[li]:
            return 1, "single"
        # backgammon: the loser has a checker on the bar or in the winner's home board
        # (the loser's own points 19..24)
        if position.bar[li] or self._loser_checkers_on(position, loser, range(19, 25)):
            return 3, "backgammon"
        return 2, "gammon"


class Portes(Backgammon):
    """Portes: backgammon's movement, no cube; 1 point, 2 if the loser bore off nothing (Polish seed 002)."""

    name = "portes"
    aliases = ("tavla",)
    has_cube = False
    __slots__ = ()

    def score_win(self, position: Position, winner: Side) -> tuple[int, str]:
        return Variant.score_win(self, position, winner)


# =============================================================================== plakoto


@dataclass(frozen=True, slots=True)
class PlakotoOptions:
    # The mother (a side's last checker on its start) pinned ends the game for 2 points.
    # Off in Bulgarian tapa (alias "tapa").
    mother_rule: bool = True
    # bkgm.com and FIBS's plakoto: the pin does not end the game while the pinner still has
    # checkers on its own start (its own mother can still be pinned back, which is a draw).
    # False: a mother pin ends the game at once, whatever the pinner has on its start.
    mother_exception: bool = True
    # What both mothers pinned means: "draw" (default; bkgm.com, FIBS), or
    # "first-pinner-wins" (the side that pinned first wins 2 points).
    both_mothers_pinned: str = "draw"
    # Bearing off needs all 15 checkers home and free (default; FIBS's rules: a pinned
    # checker stops bearing off until released). True: a checker pinned inside its own
    # home board counts as home and the others may be borne off.
    bear_off_while_pinned: bool = False
    opening: str = "reroll"  # plakoto's starter throws both dice again (bkgm.com)

    def __post_init__(self) -> None:
        _check_choice("both_mothers_pinned", self.both_mothers_pinned, ("draw", "first-pinner-wins"))
        _check_choice("opening", self.opening, ("play", "reroll"))


class Plakoto(Variant):
    """Plakoto: all 15 on the start point; a blot is pinned, not hit (Polish seed 002, Czech seed 004)."""

    name = "plakoto"
    aliases = ("tapa",)
    pins = True
    Options = PlakotoOptions
    __slots__ = ()

    @property
    def label(self) -> str:
        return "plakoto" if self.options.mother_rule else "tapa"

    def start_layout(self) -> dict[int, int]:
        return {24: 15}

    def mother_pinned(self, position: Position, side: Side) -> bool:
        """Whether ``side``'s mother is pinned: a lone checker of it pinned on its start."""
        w = self.white_point(side, 24)
        return position.pinned[w - 1] == side.sign and position.count(side, w) == 0

    def mother_pin_ends_game(self, pinner_start_count: int) -> bool:
        """Whether pinning the opponent's mother ends the game now, given how many of the
        pinner's own checkers are still on its start."""
        if not self.options.mother_rule:
            return False
        return not (self.options.mother_exception and pinner_start_count > 0)

    def outcome(self, position: Position) -> GameOutcome | None:
        if self.options.mother_rule:
            white_pinned = self.mother_pinned(position, Side.WHITE)
            black_pinned = self.mother_pinned(position, Side.BLACK)
            if white_pinned and black_pinned:
                if self.options.both_mothers_pinned == "draw":
                    return GameOutcome(winner=None, base=0, kind="draw")
                # the side that pinned second has just moved; the side on turn pinned first
                return GameOutcome(winner=position.turn, base=2, kind="mother")
            for side, pinned in ((Side.WHITE, white_pinned), (Side.BLACK, black_pinned)):
                if not pinned:
                    continue
                winner = side.other
                start = self.white_point(winner, 24)
                if self.mother_pin_ends_game(position.count(winner, start)):
                    return GameOutcome(winner=winner, base=2, kind="mother")
        return super().outcome(position)


# =============================================================================== fevga family


@dataclass(frozen=True, slots=True)
class FevgaOptions:
    # When may a second checker leave the start? "passed-opponent-start" (Polish seed 002:
    # once the first checker has passed the opponent's start point, own point 12), or
    # "third-quarter" (Czech seed 004: once it has reached the third quarter, own 12..7).
    second_checker: str = "passed-opponent-start"
    # A side may not hold all six points of its starting quarter (own 19..24; Polish seed).
    start_quarter_rule: bool = True
    # Other sources: no six-prime anywhere while every opposing checker is behind it.
    trapping_prime_rule: bool = False
    opening: str = "reroll"

    def __post_init__(self) -> None:
        _check_choice("second_checker", self.second_checker, ("passed-opponent-start", "third-quarter"))
        _check_choice("opening", self.opening, ("play", "reroll"))


class Fevga(Variant):
    """Fevga: both sides run the same way; a single checker holds a point (Polish seed 002)."""

    name = "fevga"
    aliases = ("moultezim",)
    geometry = SAME
    blocks = True
    Options = FevgaOptions
    __slots__ = ("_limit",)

    def _configure(self) -> None:
        o = self.options
        object.__setattr__(self, "_limit", 11 if o.second_checker == "passed-opponent-start" else 12)

    # properties read by the move generator
    @property
    def start_rule_limit(self) -> int:  # type: ignore[override]
        return self._limit

    @property
    def start_quarter_rule(self) -> bool:  # type: ignore[override]
        return self.options.start_quarter_rule

    @property
    def trapping_prime_rule(self) -> bool:  # type: ignore[override]
        return self.options.trapping_prime_rule

    def start_layout(self) -> dict[int, int]:
        return {24: 15}


@dataclass(frozen=True, slots=True)
class GulBaraOptions:
    second_checker: str = "passed-opponent-start"
    start_quarter_rule: bool = True
    trapping_prime_rule: bool = False
    # Czech seed 004: doubles escalate after a side's first rolls. The seed says both
    # "in the first four rolls" and "from the fourth roll"; default: after the first 3.
    escalation_after: int = 3
    # Numbers a side cannot play pass to the opponent if it moved at least one checker
    # ("pass", Czech seed), or are lost ("lost").
    unplayed: str = "pass"
    opening: str = "reroll"

    def __post_init__(self) -> None:
        _check_choice("second_checker", self.second_checker, ("passed-opponent-start", "third-quarter"))
        _check_choice("unplayed", self.unplayed, ("pass", "lost"))
        _check_choice("opening", self.opening, ("play", "reroll"))
        if type(self.escalation_after) is not int or self.escalation_after < 0:
            raise InvalidPositionError(
                f"option escalation_after: {self.escalation_after!r} must be a non-negative integer",
                "option.escalation_after",
                self.escalation_after,
            )


class GulBara(Fevga):
    """Gul bara / Mana Giul: fevga with escalating doubles (Czech seed 004)."""

    name = "gul-bara"
    aliases = ("mana-giul", "gulbara", "rosespring")
    Options = GulBaraOptions
    __slots__ = ()

    def escalates(self, d1: int, d2: int, rolls_played: int) -> bool:
        return d1 == d2 and rolls_played >= self.options.escalation_after

    def dice_sequences(self, d1: int, d2: int, rolls_played: int) -> list[tuple[int, ...]]:
        if self.escalates(d1, d2, rolls_played):
            seq: list[int] = []
            for d in range(d1, 7):
                seq += [d] * 4
            return [tuple(seq)]
        return super().dice_sequences(d1, d2, rolls_played)

    def passes_unplayed(self, d1: int, d2: int, rolls_played: int) -> bool:
        return self.options.unplayed == "pass" and self.escalates(d1, d2, rolls_played)


@dataclass(frozen=True, slots=True)
class LongNardyOptions:
    # "oin-mars": oin 1, mars 2 (default). "romanian": the Romanian seed 003's table,
    # simple 1, mars 2, home mars 3, koks 4.
    scoring: str = "oin-mars"
    # Doubles that let two checkers leave the head on a side's first roll (Romanian seed).
    head_doubles: tuple[int, ...] = (6, 4, 3)
    # No block of six in a row unless at least one opposing checker is ahead of it.
    trapping_prime_rule: bool = True
    opening: str = "reroll"

    def __post_init__(self) -> None:
        _check_choice("scoring", self.scoring, ("oin-mars", "romanian"))
        _check_choice("opening", self.opening, ("play", "reroll"))
        object.__setattr__(self, "head_doubles", tuple(self.head_doubles))


class LongNardy(Variant):
    """Long nardy / table lungi: same direction, no hitting, the head rule (Romanian seed 003)."""

    name = "long-nardy"
    aliases = ("narde", "nardy", "table-lungi", "long-nard")
    geometry = SAME
    blocks = True
    head_rule = True
    Options = LongNardyOptions
    __slots__ = ()

    @property
    def trapping_prime_rule(self) -> bool:  # type: ignore[override]
        return self.options.trapping_prime_rule

    def start_layout(self) -> dict[int, int]:
        return {24: 15}

    def head_limit(self, d1: int, d2: int, rolls_played: int) -> int:
        if rolls_played == 0 and d1 == d2 and d1 in self.options.head_doubles:
            return 2
        return 1

    def score_win(self, position: Position, winner: Side) -> tuple[int, str]:
        loser = winner.other
        if position.off[0 if loser is Side.WHITE else 1]:
            return 1, "oin"
        if self.options.scoring == "oin-mars":
            return 2, "mars"
        # Romanian seed: koks when the loser still has checkers in its starting quarter
        # (own 19..24, "has not moved them out of home"), home mars when it has checkers in
        # the winner's home (own 13..18), else mars.
        if self._loser_checkers_on(position, loser, range(19, 25)):
            return 4, "koks"
        if self._loser_checkers_on(position, loser, range(13, 19)):
            return 3, "home-mars"
        return 2, "mars"


@dataclass(frozen=True, slots=True)
class ShortNardyOptions:
    # "romanian" (default): simple 1, mars 2, home mars 3 (a checker in the winner's home),
    # koks 4 (a checker on the bar), Romanian seed 003. "oin-mars": 1 or 2.
    scoring: str = "romanian"
    opening: str = "reroll"

    def __post_init__(self) -> None:
        _check_choice("scoring", self.scoring, ("oin-mars", "romanian"))
        _check_choice("opening", self.opening, ("play", "reroll"))


class ShortNardy(Backgammon):
    """Short nardy: backgammon's set-up and movement with hitting, no cube (Romanian seed 003)."""

    name = "short-nardy"
    aliases = ("short-nard", "table-scurte")
    has_cube = False
    Options = ShortNardyOptions
    __slots__ = ()

    def score_win(self, position: Position, winner: Side) -> tuple[int, str]:
        loser = winner.other
        li = 0 if loser is Side.WHITE else 1
        if position.off[li]:
            return 1, "simple"
        if self.options.scoring == "oin-mars":
            return 2, "mars"
        if position.bar[li]:
            return 4, "koks"
        if self._loser_checkers_on(position, loser, range(19, 25)):
            return 3, "home-mars"
        return 2, "mars"


# =============================================================================== registry

VARIANTS: tuple[type[Variant], ...] = (Backgammon, Portes, Plakoto, Fevga, GulBara, LongNardy, ShortNardy)
_PRESETS: dict[str, dict[str, Any]] = {"tapa": {"mother_rule": False}}


def find_variant(name: str, **options: Any) -> Variant:
    """The variant called ``name`` (a name or alias, any case), with ``options``.

    Raises :class:`UnknownVariantError` for an unknown name and
    :class:`InvalidPositionError` for an unknown or bad option.

    >>> find_variant("moultezim").name
    'fevga'
    >>> find_variant("tapa").label
    'tapa'
    """
    if isinstance(name, Variant):
        return name
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    for cls in VARIANTS:
        if key == cls.name or key in cls.aliases:
            return cls(**{**_PRESETS.get(key, {}), **options})
    names = ", ".join(c.name for c in VARIANTS)
    raise UnknownVariantError(f"variant: unknown variant {name!r}; known: {names}", "variant", name)
