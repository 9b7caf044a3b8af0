"""The doubling cube and resignations.

Owns :class:`CubeOptions` and :class:`CubeState` (double, take, pass, beaver, raccoon,
automatic doubles, resignations); :class:`GameOutcome` and :class:`Resignation` live in
:mod:`board_rules.outcome` and are re-exported here. Every action returns a new frozen
:class:`CubeState`, or a :class:`GameOutcome` when it ends the game, or raises
:class:`~board_rules.errors.CubeError` saying why not. No dice, no clocks: the caller
says when a side is on turn. Choices where sources differ: ``docs/rules-notes.md``.
Imports only :mod:`board_rules.errors`, :mod:`board_rules.outcome`, :mod:`board_rules.side`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from board_rules.errors import CubeError
from board_rules.outcome import MAX_CUBE, OUTCOME_KINDS, GameOutcome, Resignation, is_cube_value, is_side
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


def _q(side: Side) -> str:
    """A side quoted for a message: ``'white'``."""
    return repr(side.value)


def _check_side(side: object, action: str) -> Side:
    if not is_side(side):
        raise CubeError(f"{action}: side must be Side.WHITE or Side.BLACK, not {side!r}")
    return side  # type: ignore[return-value]


class CubeOffer(str, enum.Enum):
    """The cube action waiting for an answer."""

    DOUBLE = "double"
    BEAVER = "beaver"
    RACCOON = "raccoon"


@dataclass(frozen=True, slots=True)
class CubeOptions:
    """How the cube is used in one game.

    ``enabled=False`` for a game without a cube (then every other option is off);
    ``crawford_game``: the cube stays at 1; ``beavers``, ``raccoons`` (needs beavers),
    ``jacoby`` and ``automatic_doubles`` (how many tied opening rolls may double the
    centred cube) are money options, never with ``crawford_game``. Raises
    :class:`CubeError` for a combination that does not make sense.

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

    ``value`` 1..64 (a power of two); ``owner`` None while centred; ``offer``,
    ``offered_by`` and ``pending``: a double, beaver or raccoon awaiting an answer;
    ``automatic_doubles_made``; ``resign_offer`` and ``resigned_by``: a resignation
    awaiting one. Raises :class:`CubeError` for an inconsistent state.

    >>> cube = CubeState().double(Side.WHITE).take(Side.BLACK)
    >>> cube.value, cube.owner
    (2, <Side.BLACK: 'black'>)
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
        if not is_cube_value(self.value):
            raise CubeError(f"cube value must be a power of two from 1 to {MAX_CUBE}, not {self.value!r}")
        if self.owner is not None:
            if not is_side(self.owner):
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
            if not is_side(self.resigned_by):
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
        if not is_side(self.offered_by):
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
        return is_side(side) and self._double_refusal(side) is None

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
        return is_side(side) and self._beaver_refusal(side) is None

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
        return is_side(side) and self._raccoon_refusal(side) is None

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
