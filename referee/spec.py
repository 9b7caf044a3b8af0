"""What is being played: a tavli match, a match to N points, or a money session.

Owns :class:`MatchSpec`, journaled with the match's first event. Imports ``board_rules``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from board_rules import find_variant
from board_rules.cube import CubeOptions
from board_rules.errors import TavliError
from board_rules.match import Match, MoneySession, TavliMatch
from board_rules.variants import Variant
from referee.errors import JournalError

MATCH_KINDS = ("tavli", "match", "money")


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """What is being played: a tavli match, a match to N points, or a money session.

    ``kind`` is ``"tavli"`` (portes, plakoto, fevga [, gul-bara] in turn, to ``length``),
    ``"match"`` (games of ``variant`` to ``length`` points, Crawford rule unless
    ``crawford_rule`` is False) or ``"money"`` (a session of ``variant`` games; ``cube``
    holds beavers, raccoons, jacoby and automatic_doubles; ``games`` ends it after that many
    games, None when the players stop). ``variant_options`` maps a
    variant name to its options (``{"plakoto": {"mother_rule": False}}``).
    Raises :class:`JournalError` for a spec that does not make sense.

    >>> MatchSpec("tavli", 3).new_scoreboard().next_variant
    'portes'
    """

    kind: str
    length: int = 0
    variant: str = "backgammon"
    crawford_rule: bool = True
    with_gul_bara: bool = False
    order: tuple[str, ...] | None = None
    any_length: bool = False
    opening_roll_after_draw: bool = False
    cube: dict[str, Any] = field(default_factory=dict)
    variant_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    games: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in MATCH_KINDS:
            raise JournalError(f"match.kind: {self.kind!r} must be one of {list(MATCH_KINDS)}")
        if self.games is not None and (self.kind != "money" or not isinstance(self.games, int) or self.games < 1):
            raise JournalError(f"match.games: {self.games!r}: a money session's number of games (1 or more), or null")
        if not isinstance(self.cube, dict):
            raise JournalError(f"match.cube: {self.cube!r} must be an object of cube options")
        if not isinstance(self.variant_options, dict) or not all(
            isinstance(k, str) and isinstance(v, dict) for k, v in self.variant_options.items()
        ):
            raise JournalError(
                f"match.variant_options: {self.variant_options!r} must map variant names to objects of options"
            )
        try:
            self.new_scoreboard()
            for name in self.variant_options:
                self.make_variant(name)
            if self.kind != "tavli":
                self.make_variant(self.variant)
        except TavliError as exc:
            raise JournalError(f"match: {exc}") from None

    def make_variant(self, name: str) -> Variant:
        """The variant ``name`` with this spec's options for it."""
        base = find_variant(name)
        opts = self.variant_options.get(base.name, self.variant_options.get(name, {}))
        return find_variant(name, **opts)

    def new_scoreboard(self) -> Match | TavliMatch | MoneySession:
        """The score before the first game."""
        if self.kind == "tavli":
            return TavliMatch(
                self.length,
                with_gul_bara=self.with_gul_bara,
                order=self.order,
                any_length=self.any_length,
                opening_roll_after_draw=self.opening_roll_after_draw,
            )
        if self.kind == "match":
            return Match(self.length, crawford_rule=self.crawford_rule)
        enabled = find_variant(self.variant).has_cube
        return MoneySession(CubeOptions(enabled=enabled, **self.cube) if enabled else CubeOptions.without_cube())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "tavli":
            out.update(
                length=self.length,
                with_gul_bara=self.with_gul_bara,
                order=None if self.order is None else list(self.order),
                any_length=self.any_length,
                opening_roll_after_draw=self.opening_roll_after_draw,
            )
        elif self.kind == "match":
            out.update(length=self.length, variant=self.variant, crawford_rule=self.crawford_rule)
        else:
            out.update(variant=self.variant, cube=dict(self.cube))
            if self.games is not None:
                out["games"] = self.games
        out["variant_options"] = {k: dict(v) for k, v in self.variant_options.items()}
        return out

    @classmethod
    def from_dict(cls, data: Any) -> MatchSpec:
        """A spec from its JSON form; raises :class:`JournalError`."""
        if not isinstance(data, dict):
            raise JournalError(f"match: {data!r} must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        extra = set(data) - known
        if extra:
            raise JournalError(f"match: unknown field(s) {sorted(extra)!r}; known: {sorted(known)}")
        if "kind" not in data:
            raise JournalError("match.kind: missing")
        kwargs = dict(data)
        if kwargs.get("order") is not None:
            if not isinstance(kwargs["order"], list):
                raise JournalError(f"match.order: {kwargs['order']!r} must be a list of variants")
            kwargs["order"] = tuple(kwargs["order"])
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise JournalError(f"match: {exc}") from None
