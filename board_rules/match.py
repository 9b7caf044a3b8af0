"""Matches and money sessions: the score across games.

Owns :class:`Match` (a backgammon match to N points with the Crawford rule),
:class:`MoneySession` and :class:`TavliMatch` (portes, plakoto, fevga and optionally
gul-bara in turn, to 3, 5 or 7 points), plus :func:`game_lost_on_time`. Each is a frozen
state: :meth:`record` takes a finished game's :class:`~board_rules.outcome.GameOutcome`
and returns the next state, or raises :class:`~board_rules.errors.MatchError` for a game
that does not fit. Choices where sources differ: ``docs/rules-notes.md``. Imports only
:mod:`board_rules.cube`, :mod:`board_rules.outcome`, :mod:`board_rules.errors` and
:mod:`board_rules.side`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from board_rules.cube import CubeOptions
from board_rules.errors import CubeError, MatchError
from board_rules.outcome import GameOutcome
from board_rules.side import Side

__all__ = [
    "GUL_BARA",
    "TAVLI_LENGTHS",
    "TAVLI_VARIANTS",
    "Match",
    "MoneySession",
    "TavliMatch",
    "game_lost_on_time",
]

TAVLI_VARIANTS = ("portes", "plakoto", "fevga")
"""The games of a tavli match, in their usual order."""

GUL_BARA = "gul-bara"
"""Mana giul (gul-bara): the Czech fourth game of a tavli match."""

TAVLI_LENGTHS = (3, 5, 7)
"""The lengths a tavli match is played to."""


def game_lost_on_time(loser: Side, cube: int = 1) -> GameOutcome:
    """The outcome of a game ``loser`` lost on time: a gammon, 2 × ``cube`` points.

    Raises :class:`~board_rules.errors.CubeError` for a bad side or cube value.

    >>> game_lost_on_time(Side.BLACK, cube=2).points
    4
    """
    if not isinstance(loser, Side):
        raise CubeError(f"loser must be Side.WHITE or Side.BLACK, not {loser!r}")
    return GameOutcome(loser.other, 2, "time", cube=cube)


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MatchError(f"{name} must be an int of 0 or more, not {value!r}")


def _check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise MatchError(f"{name} must be True or False, not {value!r}")


def _check_outcome(outcome: object) -> GameOutcome:
    if not isinstance(outcome, GameOutcome):
        raise MatchError(f"record takes a GameOutcome, not {outcome!r}")
    return outcome


class _Scoreboard:
    """Score queries shared by the two kinds of match: to ``length`` points."""

    __slots__ = ()

    length: int
    white_score: int
    black_score: int

    def points(self, side: Side) -> int:
        """The points ``side`` has scored."""
        if not isinstance(side, Side):
            raise MatchError(f"side must be Side.WHITE or Side.BLACK, not {side!r}")
        return self.white_score if side is Side.WHITE else self.black_score

    def away(self, side: Side) -> int:
        """How many points ``side`` still needs (0 once it has won)."""
        return max(0, self.length - self.points(side))

    @property
    def is_over(self) -> bool:
        """True once a side has reached the match length."""
        return max(self.white_score, self.black_score) >= self.length

    @property
    def winner(self) -> Side | None:
        """The side that reached the match length, None while the match goes on."""
        if self.white_score >= self.length:
            return Side.WHITE
        if self.black_score >= self.length:
            return Side.BLACK
        return None

    def _check_scores(self) -> None:
        _check_count("white_score", self.white_score)
        _check_count("black_score", self.black_score)
        if self.white_score >= self.length and self.black_score >= self.length:
            raise MatchError(
                f"only one side can reach {self.length}, not white_score={self.white_score!r}, "
                f"black_score={self.black_score!r}"
            )

    def _check_not_over(self) -> None:
        if self.is_over:
            raise MatchError(
                f"the match is over: {self.winner.value!r} won "
                f"{self.white_score}-{self.black_score} (white-black) to {self.length}"
            )

    def _scored(self, winner: Side, points: int) -> dict[str, int]:
        if winner is Side.WHITE:
            return {"white_score": self.white_score + points}
        return {"black_score": self.black_score + points}


@dataclass(frozen=True, slots=True)
class Match(_Scoreboard):
    """A backgammon match to ``length`` points, with the Crawford rule (``crawford_rule=False``: without).

    The game after a side first reaches ``length - 1`` is the Crawford game (no doubling);
    later games are post-Crawford. Money options are never used. Raises
    :class:`MatchError` for an inconsistent state.

    >>> m = Match(3).record(GameOutcome(Side.WHITE, 2, "gammon"))
    >>> m.crawford_game, m.cube_options_for_next_game().doubling_allowed
    (True, False)
    >>> m = m.record(GameOutcome(Side.BLACK, 1, "single"))
    >>> m.post_crawford, m.cube_options_for_next_game().doubling_allowed
    (True, True)
    """

    length: int
    white_score: int = 0
    black_score: int = 0
    crawford_rule: bool = True
    crawford_game: bool = False
    post_crawford: bool = False
    games_played: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise MatchError(f"match length must be an int of 1 or more, not {self.length!r}")
        self._check_scores()
        _check_count("games_played", self.games_played)
        for name in ("crawford_rule", "crawford_game", "post_crawford"):
            _check_bool(name, getattr(self, name))
        flags = f"crawford_game={self.crawford_game!r}, post_crawford={self.post_crawford!r}"
        if self.crawford_game and self.post_crawford:
            raise MatchError(f"a game cannot be both the Crawford game and post-Crawford: {flags}")
        if not self.crawford_rule or self.length == 1:
            if self.crawford_game or self.post_crawford:
                raise MatchError(
                    f"without a Crawford rule (crawford_rule={self.crawford_rule!r}, "
                    f"length={self.length!r}) there is no Crawford game: {flags}"
                )
            return
        one_away = self.length - 1
        leader = max(self.white_score, self.black_score)
        trailer = min(self.white_score, self.black_score)
        if self.crawford_game and (self.is_over or leader != one_away or trailer == one_away):
            raise MatchError(
                f"the Crawford game follows the first time one side reaches {one_away}, "
                f"not at {self.white_score}-{self.black_score}: {flags}"
            )
        if self.post_crawford and leader < one_away:
            raise MatchError(
                f"post-Crawford needs a side at {one_away} or more, not {self.white_score}-{self.black_score}: {flags}"
            )
        if not self.is_over and leader == one_away and not (self.crawford_game or self.post_crawford):
            raise MatchError(
                f"at {self.white_score}-{self.black_score} in a {self.length}-point match the next game is "
                f"either the Crawford game or post-Crawford; set one: {flags}"
            )

    def cube_options_for_next_game(self) -> CubeOptions:
        """The cube for the next game: no doubling in the Crawford game, and never money options.

        Raises :class:`MatchError` once the match is over.
        """
        self._check_not_over()
        return CubeOptions(crawford_game=self.crawford_game)

    def record(self, outcome: GameOutcome) -> Match:
        """The match after a game ended with ``outcome``.

        Raises :class:`MatchError` once the match is over, for a draw (a
        backgammon game has none) and for a doubled cube or a pass in the
        Crawford game.
        """
        outcome = _check_outcome(outcome)
        self._check_not_over()
        if outcome.winner is None:
            raise MatchError(f"a backgammon game cannot be drawn: {outcome!r}")
        if self.crawford_game and (outcome.cube != 1 or outcome.kind == "pass"):
            raise MatchError(f"no doubling in the Crawford game, yet the game ended {outcome!r}")
        scores = self._scored(outcome.winner, outcome.points)
        leader = max(scores.get("white_score", self.white_score), scores.get("black_score", self.black_score))
        crawford_next = (
            self.crawford_rule
            and self.length > 1
            and not (self.crawford_game or self.post_crawford)
            and leader == self.length - 1
        )
        return replace(
            self,
            **scores,
            crawford_game=crawford_next,
            post_crawford=self.post_crawford or self.crawford_game,
            games_played=self.games_played + 1,
        )


@dataclass(frozen=True, slots=True)
class MoneySession:
    """Games for a stake per point, with money options (beavers, raccoons, Jacoby, automatic doubles).

    ``white_points`` and ``black_points`` are the points each side has won;
    :meth:`net` the balance. Raises :class:`MatchError` for options with a
    Crawford game (that is match play) or bad counts.

    >>> s = MoneySession(CubeOptions(jacoby=True))
    >>> s = s.record(GameOutcome(Side.WHITE, 2, "gammon"))
    >>> s = s.record(GameOutcome(Side.BLACK, 2, "gammon", cube=2, cube_owner=Side.WHITE))
    >>> s.points(Side.WHITE), s.points(Side.BLACK), s.net(Side.BLACK)
    (1, 4, 3)
    """

    options: CubeOptions = CubeOptions()
    white_points: int = 0
    black_points: int = 0
    games_played: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.options, CubeOptions):
            raise MatchError(f"options must be CubeOptions, not {self.options!r}")
        if self.options.crawford_game:
            raise MatchError(f"a money session has no Crawford game: {self.options!r}")
        _check_count("white_points", self.white_points)
        _check_count("black_points", self.black_points)
        _check_count("games_played", self.games_played)

    def points(self, side: Side) -> int:
        """The points ``side`` has won."""
        if not isinstance(side, Side):
            raise MatchError(f"side must be Side.WHITE or Side.BLACK, not {side!r}")
        return self.white_points if side is Side.WHITE else self.black_points

    def net(self, side: Side) -> int:
        """What ``side`` is up (negative: down) over the session."""
        return self.points(side) - self.points(side.other)

    def cube_options_for_next_game(self) -> CubeOptions:
        """The cube options of every game of the session."""
        return self.options

    def record(self, outcome: GameOutcome) -> MoneySession:
        """The session after a game ended with ``outcome``, Jacoby applied when it is on.

        Raises :class:`MatchError` for a doubled cube in a session without one.
        """
        outcome = _check_outcome(outcome)
        if not self.options.enabled and outcome.cube != 1:
            raise MatchError(f"this session is played without a cube, yet the game ended {outcome!r}")
        games = self.games_played + 1
        if outcome.winner is None:
            return replace(self, games_played=games)
        won = outcome.scored(jacoby=self.options.jacoby)
        if outcome.winner is Side.WHITE:
            return replace(self, white_points=self.white_points + won, games_played=games)
        return replace(self, black_points=self.black_points + won, games_played=games)


@dataclass(frozen=True, slots=True)
class TavliMatch(_Scoreboard):
    """A tavli match: portes, plakoto, fevga (and gul-bara with ``with_gul_bara``) in turn, to ``length``.

    ``length`` is 3, 5 or 7 (any length of 1 or more with ``any_length=True``).
    ``order`` replaces the usual order of games (it stays fixed for the whole
    match). Games are played without a cube and score 1 or 2 points. The
    winner of a game starts the next; see the module docstring for draws.
    Raises :class:`MatchError` for a bad length, order or state.

    >>> m = TavliMatch(3)
    >>> m.next_variant, m.next_starter
    ('portes', None)
    >>> m = m.record(GameOutcome(Side.BLACK, 1, "single"))
    >>> m.next_variant, m.next_starter
    ('plakoto', <Side.BLACK: 'black'>)
    """

    length: int
    with_gul_bara: bool = False
    order: tuple[str, ...] | None = None
    any_length: bool = False
    opening_roll_after_draw: bool = False
    white_score: int = 0
    black_score: int = 0
    games_played: int = 0
    last_winner: Side | None = None
    last_game_drawn: bool = False

    def __post_init__(self) -> None:
        for name in ("with_gul_bara", "any_length", "opening_roll_after_draw", "last_game_drawn"):
            _check_bool(name, getattr(self, name))
        if isinstance(self.length, bool) or not isinstance(self.length, int):
            raise MatchError(f"match length must be an int, not {self.length!r}")
        if self.any_length:
            if self.length < 1:
                raise MatchError(f"match length must be 1 or more, not {self.length!r}")
        elif self.length not in TAVLI_LENGTHS:
            raise MatchError(
                f"a tavli match is played to 3, 5 or 7 points, not {self.length!r} (any_length=True allows others)"
            )
        if self.order is not None:
            known = (*TAVLI_VARIANTS, GUL_BARA)
            if (
                not isinstance(self.order, tuple)
                or not self.order
                or any(name not in known for name in self.order)
                or len(set(self.order)) != len(self.order)
            ):
                raise MatchError(
                    f"order must be a non-empty tuple of distinct names from {known!r}, not {self.order!r}"
                )
            if self.with_gul_bara and GUL_BARA not in self.order:
                raise MatchError(f"with_gul_bara=True but {GUL_BARA!r} is not in order {self.order!r}")
        self._check_scores()
        _check_count("games_played", self.games_played)
        if self.last_winner is not None and not isinstance(self.last_winner, Side):
            raise MatchError(f"last_winner must be a Side or None, not {self.last_winner!r}")
        if self.games_played == 0 and (self.last_winner is not None or self.last_game_drawn):
            raise MatchError(
                f"before the first game there is no last game: last_winner={self.last_winner!r}, "
                f"last_game_drawn={self.last_game_drawn!r}"
            )

    @property
    def cycle(self) -> tuple[str, ...]:
        """The games in the order they are played, over and over."""
        if self.order is not None:
            return self.order
        return (*TAVLI_VARIANTS, GUL_BARA) if self.with_gul_bara else TAVLI_VARIANTS

    @property
    def next_variant(self) -> str:
        """The name of the next game's variant. Raises :class:`MatchError` once the match is over."""
        self._check_not_over()
        return self.cycle[self.games_played % len(self.cycle)]

    @property
    def next_starter(self) -> Side | None:
        """The side that starts the next game; None when an opening roll decides.

        Raises :class:`MatchError` once the match is over.
        """
        self._check_not_over()
        if self.last_game_drawn and self.opening_roll_after_draw:
            return None
        return self.last_winner

    def cube_options_for_next_game(self) -> CubeOptions:
        """No cube in tavli. Raises :class:`MatchError` once the match is over."""
        self._check_not_over()
        return CubeOptions.without_cube()

    def record(self, outcome: GameOutcome) -> TavliMatch:
        """The match after a game ended with ``outcome``; a draw scores nothing.

        Raises :class:`MatchError` once the match is over, for a cube above 1
        or a pass (no cube in tavli) and for more than 2 points.
        """
        outcome = _check_outcome(outcome)
        self._check_not_over()
        if outcome.cube != 1 or outcome.kind == "pass":
            raise MatchError(f"tavli is played without a cube, yet the game ended {outcome!r}")
        if outcome.base > 2:
            raise MatchError(f"a tavli game scores 1 or 2 points, not {outcome.base!r}: {outcome!r}")
        games = self.games_played + 1
        if outcome.winner is None:
            return replace(self, games_played=games, last_game_drawn=True)
        return replace(
            self,
            **self._scored(outcome.winner, outcome.points),
            games_played=games,
            last_winner=outcome.winner,
            last_game_drawn=False,
        )
