"""The doubling cube, resignations and what a finished game scores.

Owns :class:`CubeOptions`, :class:`CubeState` (double, take, pass, beaver,
raccoon, automatic doubles, resignations), :class:`Resignation` and
:class:`GameOutcome`. Imports only :mod:`board_rules.errors` and
:mod:`board_rules.side`; no dice, no clocks: the caller says when a side is
on turn.

Every action returns a new frozen :class:`CubeState`, or a :class:`GameOutcome`
when the action ends the game (a pass, an accepted resignation). An action
the rules do not allow now raises :class:`~board_rules.errors.CubeError`
saying why.

Conventions, where sources differ:

* A double is offered at the start of the doubler's turn, before rolling. The
  cube does not know about dice or turns: the caller must only call
  :meth:`CubeState.double` for the side on turn and before that side rolls.
* Beaver: the side doubled takes and at once redoubles, keeping the cube on its
  side. The original doubler may take the beaver, pass it (losing the doubled
  value, before the beaver) or, if raccoons are on, raccoon it: turn the cube
  once more; ownership stays with the beaver side, who may take or pass
  (losing the beavered value). No further animals (aardvark and so on).
* The cube never shows more than 64: a double, beaver or raccoon that would
  pass 64 is refused.
* Jacoby (money only): gammons and backgammons count as single games when the
  cube is still centred at the end of the game, that is no double was taken;
  automatic doubles leave the cube centred, as in gnubg. A game lost on time is
  a penalty, not a gammon won over the board, and always scores 2 × cube.
* A resignation cannot be offered while a double awaits an answer (pass
  instead), and no double may be offered while a resignation awaits one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from board_rules.errors import CubeError
from board_rules.side import Side

__all__ = [
    "MAX_CUBE",
    "OUTCOME_KINDS",
    "CubeOffer",
    "CubeOptions",
    "CubeState",
    "GameOutcome",
    "Resignation",
]

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


def _is_side(value: object) -> bool:
    return isinstance(value, Side)


def _q(side: Side) -> str:
    """A side quoted for a message: ``'white'``."""
    return repr(side.value)


def _check_side(side: object, action: str) -> Side:
    if not _is_side(side):
        raise CubeError(f"{action}: side must be Side.WHITE or Side.BLACK, not {side!r}")
    return side  # type: ignore[return-value]


def _is_cube_value(value: object) -> bool:
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


class CubeOffer(str, enum.Enum):
    """The cube action waiting for an answer."""

    DOUBLE = "double"
    BEAVER = "beaver"
    RACCOON = "raccoon"


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
        if self.winner is not None and not _is_side(self.winner):
            raise CubeError(f"winner must be a Side or None for a draw, not {self.winner!r}")
        if not isinstance(self.kind, str) or self.kind not in OUTCOME_KINDS:
            raise CubeError(f"kind must be one of {sorted(OUTCOME_KINDS)}, not {self.kind!r}")
        if isinstance(self.base, bool) or not isinstance(self.base, int):
            raise CubeError(f"base must be an int, not {self.base!r}")
        if not _is_cube_value(self.cube):
            raise CubeError(f"cube must be a power of two from 1 to {MAX_CUBE}, not {self.cube!r}")
        if self.cube_owner is not None:
            if not _is_side(self.cube_owner):
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


@dataclass(frozen=True, slots=True)
class CubeOptions:
    """How the cube is used in one game.

    * ``enabled``: False for variants played without a cube (portes, plakoto,
      fevga in a tavli match); then every other option must be off.
    * ``crawford_game``: the Crawford game of a match: the cube stays at 1.
    * ``beavers``, ``raccoons`` (needs beavers), ``jacoby``,
      ``automatic_doubles`` (how many tied opening rolls may double the
      centred cube, 0 for none): money options, never with ``crawford_game``.

    Raises :class:`CubeError` for a combination that does not make sense.

    >>> CubeOptions(raccoons=True)
    Traceback (most recent call last):
    ...
    board_rules.errors.CubeError: raccoons need beavers: raccoons=True, beavers=False
    """

    beavers: bool = False
    raccoons: bool = False
    jacoby: bool = False
    automatic_doubles: int = 0
    crawford_game: bool = False
    enabled: bool = True

    def __post_init__(self) -> None:
        for name in ("beavers", "raccoons", "jacoby", "crawford_game", "enabled"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise CubeError(f"{name} must be True or False, not {value!r}")
        limit = self.automatic_doubles
        # 2**6 == 64: more automatic doubles than that could not be shown on the cube.
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= 6:
            raise CubeError(f"automatic_doubles must be an int from 0 to 6, not {limit!r}")
        if self.raccoons and not self.beavers:
            raise CubeError(f"raccoons need beavers: raccoons={self.raccoons!r}, beavers={self.beavers!r}")
        money = {
            "beavers": self.beavers,
            "raccoons": self.raccoons,
            "jacoby": self.jacoby,
            "automatic_doubles": limit,
        }
        used = {name: value for name, value in money.items() if value}
        if used and not self.enabled:
            raise CubeError(f"without a cube (enabled=False) these options must be off: {used!r}")
        if used and self.crawford_game:
            raise CubeError(f"the Crawford game is match play; these money options must be off: {used!r}")

    @classmethod
    def without_cube(cls) -> CubeOptions:
        """Options for a game played without a cube (tavli's portes, plakoto, fevga)."""
        return cls(enabled=False)

    @property
    def doubling_allowed(self) -> bool:
        """True when a side may double at all in this game."""
        return self.enabled and not self.crawford_game


@dataclass(frozen=True, slots=True)
class CubeState:
    """The cube during one game: its value, owner and any offer awaiting an answer.

    ``value`` is the agreed value (1 to 64, a power of two); ``owner`` is None
    while the cube is centred. ``offer`` and ``offered_by`` say which double,
    beaver or raccoon awaits an answer, ``pending`` the value it proposes.
    ``automatic_doubles_made`` counts tied opening rolls that doubled the cube;
    ``resign_offer`` and ``resigned_by`` a resignation awaiting an answer.
    Raises :class:`CubeError` for an inconsistent state.

    >>> cube = CubeState().double(Side.WHITE).take(Side.BLACK)
    >>> cube.value, cube.owner
    (2, <Side.BLACK: 'black'>)
    >>> cube.double(Side.WHITE)
    Traceback (most recent call last):
    ...
    board_rules.errors.CubeError: 'white' may not double: 'black' owns the cube at 2
    >>> cube.double(Side.BLACK).pass_(Side.WHITE).points
    2
    """

    value: int = 1
    owner: Side | None = None
    options: CubeOptions = CubeOptions()
    offer: CubeOffer | None = None
    offered_by: Side | None = None
    automatic_doubles_made: int = 0
    resign_offer: Resignation | None = None
    resigned_by: Side | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.options, CubeOptions):
            raise CubeError(f"options must be CubeOptions, not {self.options!r}")
        if not _is_cube_value(self.value):
            raise CubeError(f"cube value must be a power of two from 1 to {MAX_CUBE}, not {self.value!r}")
        if self.owner is not None:
            if not _is_side(self.owner):
                raise CubeError(f"owner must be a Side or None, not {self.owner!r}")
            if self.value == 1:
                raise CubeError(f"a cube at 1 is centred; owner must be None, not {self.owner!r}")
        if not self.options.enabled and (self.value != 1 or self.offer is not None):
            raise CubeError(
                f"without a cube the value stays 1 and nothing is offered, not value={self.value!r}, "
                f"offer={self.offer!r}"
            )
        if self.options.crawford_game and (self.value != 1 or self.offer is not None):
            raise CubeError(f"in the Crawford game the cube stays at 1, not value={self.value!r}, offer={self.offer!r}")
        self._check_offer()
        made = self.automatic_doubles_made
        if isinstance(made, bool) or not isinstance(made, int) or not 0 <= made <= self.options.automatic_doubles:
            raise CubeError(f"automatic_doubles_made must be 0 to {self.options.automatic_doubles}, not {made!r}")
        if self.value < 2**made:
            raise CubeError(f"after {made} automatic doubles the cube is at least {2**made}, not {self.value!r}")
        if (self.resign_offer is None) != (self.resigned_by is None):
            raise CubeError(
                "resign_offer and resigned_by go together, not "
                f"resign_offer={self.resign_offer!r}, resigned_by={self.resigned_by!r}"
            )
        if self.resign_offer is not None:
            if not isinstance(self.resign_offer, Resignation):
                raise CubeError(f"resign_offer must be a Resignation, not {self.resign_offer!r}")
            if not _is_side(self.resigned_by):
                raise CubeError(f"resigned_by must be a Side, not {self.resigned_by!r}")
            if self.offer is not None:
                raise CubeError(f"a resignation and a {self.offer.value!r} cannot both await an answer")

    def _check_offer(self) -> None:
        if (self.offer is None) != (self.offered_by is None):
            raise CubeError(
                f"offer and offered_by go together, not offer={self.offer!r}, offered_by={self.offered_by!r}"
            )
        if self.offer is None:
            return
        if not isinstance(self.offer, CubeOffer):
            raise CubeError(f"offer must be a CubeOffer, not {self.offer!r}")
        if not _is_side(self.offered_by):
            raise CubeError(f"offered_by must be a Side, not {self.offered_by!r}")
        if self.value * 2 > MAX_CUBE:
            raise CubeError(f"a cube at {self.value!r} cannot be offered higher than {MAX_CUBE}")
        if self.offer is CubeOffer.BEAVER:
            if not self.options.beavers or self.owner is not self.offered_by:
                raise CubeError(
                    f"a beaver needs beavers on and the beaver side owning the cube, not "
                    f"beavers={self.options.beavers!r}, owner={self.owner!r}, offered_by={self.offered_by!r}"
                )
        if self.offer is CubeOffer.RACCOON:
            if not self.options.raccoons or self.owner is not self.offered_by.other:
                raise CubeError(
                    f"a raccoon needs raccoons on and the beaver side owning the cube, not "
                    f"raccoons={self.options.raccoons!r}, owner={self.owner!r}, offered_by={self.offered_by!r}"
                )
        if self.offer is CubeOffer.DOUBLE and self.owner is self.offered_by.other:
            raise CubeError(f"{_q(self.offered_by)} cannot have doubled a cube owned by {_q(self.owner)}")

    # -- queries -----------------------------------------------------------

    @property
    def centred(self) -> bool:
        """True while nobody owns the cube."""
        return self.owner is None

    @property
    def pending(self) -> int | None:
        """The value the offer awaiting an answer proposes, None without one."""
        return None if self.offer is None else self.value * 2

    def _double_refusal(self, side: Side) -> str | None:
        if not self.options.enabled:
            return "this game is played without a cube"
        if self.options.crawford_game:
            return "no doubling in the Crawford game"
        if self.resign_offer is not None:
            return f"{_q(self.resigned_by)} has offered to resign; accept or refuse that first"
        if self.offer is not None:
            return f"a {self.offer.value} by {_q(self.offered_by)} awaits an answer"
        if self.owner is not None and self.owner is not side:
            return f"{_q(self.owner)} owns the cube at {self.value}"
        if self.value * 2 > MAX_CUBE:
            return f"the cube is already at {self.value}, its highest face"
        return None

    def can_double(self, side: Side) -> bool:
        """True when ``side`` may double now (the caller still checks it is before rolling)."""
        return _is_side(side) and self._double_refusal(side) is None

    def _answer_refusal(self, side: Side) -> str | None:
        if self.offer is None:
            return "no double, beaver or raccoon awaits an answer"
        if side is self.offered_by:
            return f"the {self.offer.value} is its own; {_q(side.other)} answers it"
        return None

    def _beaver_refusal(self, side: Side) -> str | None:
        if not self.options.beavers:
            return "beavers are not played"
        if self.offer is not CubeOffer.DOUBLE:
            return "a beaver answers a double, and no double awaits an answer"
        if side is self.offered_by:
            return f"the double is its own; only {_q(side.other)} may beaver"
        if self.value * 4 > MAX_CUBE:
            return f"the cube would pass {MAX_CUBE}"
        return None

    def can_beaver(self, side: Side) -> bool:
        """True when ``side`` may beaver now."""
        return _is_side(side) and self._beaver_refusal(side) is None

    def _raccoon_refusal(self, side: Side) -> str | None:
        if not self.options.raccoons:
            return "raccoons are not played"
        if self.offer is not CubeOffer.BEAVER:
            return "a raccoon answers a beaver, and no beaver awaits an answer"
        if side is self.offered_by:
            return f"the beaver is its own; only {_q(side.other)} may raccoon"
        if self.value * 4 > MAX_CUBE:
            return f"the cube would pass {MAX_CUBE}"
        return None

    def can_raccoon(self, side: Side) -> bool:
        """True when ``side`` may raccoon now."""
        return _is_side(side) and self._raccoon_refusal(side) is None

    # -- cube actions --------------------------------------------------------

    def double(self, side: Side) -> CubeState:
        """``side`` offers to double: the owner, or either side while the cube is centred.

        Only at the start of ``side``'s turn, before rolling: the caller checks
        that. Raises :class:`CubeError` without a cube, in the Crawford game,
        when the other side owns the cube, when an offer awaits an answer or
        when the cube is at 64.
        """
        _check_side(side, "double")
        refusal = self._double_refusal(side)
        if refusal is not None:
            raise CubeError(f"{_q(side)} may not double: {refusal}")
        return replace(self, offer=CubeOffer.DOUBLE, offered_by=side)

    def take(self, side: Side) -> CubeState:
        """``side`` takes the double, beaver or raccoon awaiting its answer.

        A taken double puts the cube on the taker's side; after a beaver (and a
        raccoon) the cube stays with the beaver side. Raises :class:`CubeError`
        when nothing awaits ``side``'s answer.
        """
        _check_side(side, "take")
        refusal = self._answer_refusal(side)
        if refusal is not None:
            raise CubeError(f"{_q(side)} may not take: {refusal}")
        owner = side if self.offer is CubeOffer.DOUBLE else self.owner
        return replace(self, value=self.value * 2, owner=owner, offer=None, offered_by=None)

    def pass_(self, side: Side) -> GameOutcome:
        """``side`` passes (drops): the side that offered wins the value before its offer.

        Raises :class:`CubeError` when nothing awaits ``side``'s answer.
        """
        _check_side(side, "pass")
        refusal = self._answer_refusal(side)
        if refusal is not None:
            raise CubeError(f"{_q(side)} may not pass: {refusal}")
        return GameOutcome(self.offered_by, 1, "pass", cube=self.value, cube_owner=self.owner)

    def beaver(self, side: Side) -> CubeState:
        """``side``, just doubled, takes and at once redoubles, keeping the cube.

        The original doubler then takes, passes (losing the doubled value) or
        raccoons. Raises :class:`CubeError` when beavers are off, when no double
        by the other side awaits an answer or when the cube would pass 64.
        """
        _check_side(side, "beaver")
        refusal = self._beaver_refusal(side)
        if refusal is not None:
            raise CubeError(f"{_q(side)} may not beaver: {refusal}")
        return replace(self, value=self.value * 2, owner=side, offer=CubeOffer.BEAVER, offered_by=side)

    def raccoon(self, side: Side) -> CubeState:
        """``side``, just beavered, accepts and turns the cube once more; the beaver side keeps it.

        The beaver side then takes or passes (losing the beavered value).
        Raises :class:`CubeError` when raccoons are off, when no beaver by the
        other side awaits an answer or when the cube would pass 64.
        """
        _check_side(side, "raccoon")
        refusal = self._raccoon_refusal(side)
        if refusal is not None:
            raise CubeError(f"{_q(side)} may not raccoon: {refusal}")
        return replace(self, value=self.value * 2, offer=CubeOffer.RACCOON, offered_by=side)

    def automatic_double(self) -> CubeState:
        """The cube after a tied opening roll: doubled while under the limit, else unchanged.

        The caller calls this only for opening rolls, before the first play.
        Raises :class:`CubeError` once the cube has been turned or an offer
        awaits an answer.

        >>> cube = CubeState(options=CubeOptions(automatic_doubles=1))
        >>> cube.automatic_double().automatic_double().value
        2
        """
        if self.owner is not None or self.offer is not None or self.resign_offer is not None:
            raise CubeError(
                "automatic doubles come from tied opening rolls, before any cube action; "
                f"not with owner={self.owner!r}, offer={self.offer!r}, resign_offer={self.resign_offer!r}"
            )
        if self.automatic_doubles_made >= self.options.automatic_doubles or self.value * 2 > MAX_CUBE:
            return self
        return replace(self, value=self.value * 2, automatic_doubles_made=self.automatic_doubles_made + 1)

    # -- resignation ----------------------------------------------------------

    def offer_resign(self, side: Side, level: Resignation | int) -> CubeState:
        """``side`` offers to resign at ``level`` (1 single, 2 gammon, 3 backgammon).

        Raises :class:`CubeError` for a bad level, while a cube offer awaits an
        answer (pass instead) or while another resignation does.
        """
        _check_side(side, "offer_resign")
        level = Resignation.coerce(level)
        if self.offer is not None:
            raise CubeError(
                f"{_q(side)} may not resign: a {self.offer.value} by {_q(self.offered_by)} "
                "awaits an answer; take or pass it first"
            )
        if self.resign_offer is not None:
            raise CubeError(f"{_q(side)} may not resign: {_q(self.resigned_by)} has already offered to resign")
        return replace(self, resign_offer=level, resigned_by=side)

    def _resign_answerer(self, side: Side, action: str) -> None:
        _check_side(side, action)
        if self.resign_offer is None:
            raise CubeError(f"{_q(side)} may not {action}: no resignation awaits an answer")
        if side is self.resigned_by:
            raise CubeError(f"{_q(side)} may not {action} its own resignation; {_q(side.other)} answers it")

    def accept_resign(self, side: Side) -> GameOutcome:
        """``side`` accepts the other side's resignation: it wins level × cube value.

        Raises :class:`CubeError` when no resignation by the other side awaits an answer.
        """
        self._resign_answerer(side, "accept")
        return GameOutcome(side, int(self.resign_offer), "resign", cube=self.value, cube_owner=self.owner)

    def refuse_resign(self, side: Side) -> CubeState:
        """``side`` refuses the other side's resignation: the game goes on.

        Raises :class:`CubeError` when no resignation by the other side awaits an answer.
        """
        self._resign_answerer(side, "refuse")
        return replace(self, resign_offer=None, resigned_by=None)

    # -- end of game --------------------------------------------------------------

    def outcome(self, winner: Side, base: int = 1, kind: str = "single") -> GameOutcome:
        """The outcome of a game ``winner`` won on the board, at this cube.

        Raises :class:`CubeError` while an offer or a resignation awaits an
        answer, or for an outcome :class:`GameOutcome` refuses.

        >>> CubeState(value=4, owner=Side.BLACK).outcome(Side.BLACK, 3, "backgammon").points
        12
        """
        _check_side(winner, "outcome")
        if self.offer is not None or self.resign_offer is not None:
            raise CubeError(
                "the game cannot end on the board while an answer is awaited: "
                f"offer={self.offer!r}, resign_offer={self.resign_offer!r}"
            )
        return GameOutcome(winner, base, kind, cube=self.value, cube_owner=self.owner)
