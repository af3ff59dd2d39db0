"""Shut the Box: the rules as pure functions of an immutable state.

From ``../shared/seeds/shut-the-box.txt`` and the project's decisions
(``../shared/rules.md``):

* A tray of 9 or 12 tiles, all open when each player's turn begins (every
  player plays the same box in turn). Players take one turn each, in order.
* A turn: roll (two dice; one die allowed, at the player's choice, when the
  open tiles add up to 6 or less), then shut a set of distinct open tiles
  whose sum is the roll, then roll again. The turn ends by itself when no
  set of open tiles sums to the roll: the score is the sum of the tiles left
  open.
* Shutting every tile ("shutting the box") wins at once and ends the game.
* After everyone has played, the lowest score wins; equal lowest scores share
  the win, or with ``ties="playoff"`` the tied players play another round
  among themselves (as often as needed).
* A roll is chance: the engine never draws a number. :meth:`ShutTheBox.chance`
  lists the outcomes of the roll it waits for, and the caller applies one
  (virtual dice from a seeded generator, or what a player reports of physical
  dice) as a :class:`Roll` action.

Decisions where the texts are silent: a roll reported as a total only
("rolled eight") is accepted when two dice can make it (one die: 1-6); a set
that does not sum to the roll, a shut tile, or a tile named twice is rejected
with the reason and the player chooses again; nothing is timed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Literal

from referee.engine.core import (
    Action,
    Chance,
    Event,
    GameWon,
    IllegalAction,
    NotYourTurn,
    Outcome,
    OutOfRange,
    Rules,
    TurnStarted,
    UnknownPlayer,
    describe_table_action,
)

Ties = Literal["share", "playoff"]
ONE_DIE_LIMIT = 6


@dataclass(frozen=True)
class BoxConfig:
    tiles: int = 12
    ties: Ties = "share"

    def __post_init__(self) -> None:
        if self.tiles not in (9, 12):
            raise ValueError(f"a box has 9 or 12 tiles, not {self.tiles}")
        if self.ties not in ("share", "playoff"):
            raise ValueError(f"ties are shared or played off, not {self.ties!r}")


# --- actions and events ------------------------------------------------------------


@dataclass(frozen=True)
class Roll(Action):
    """``player`` rolled: ``dice`` when each die is known, else only ``total``."""

    player: str
    dice: tuple[int, ...] = ()
    total: int | None = None
    count: int = 2  # how many dice, when only the total is known

    @property
    def value(self) -> int:
        return sum(self.dice) if self.dice else int(self.total or 0)

    @property
    def dice_count(self) -> int:
        return len(self.dice) if self.dice else self.count


@dataclass(frozen=True)
class ChooseDice(Action):
    """``player`` rolls ``count`` dice whose faces are not known yet: the game
    then waits for a chance step (:meth:`ShutTheBox.chance`) that the referee
    resolves (virtual dice). Physical dice come as a :class:`Roll` report."""

    player: str
    count: int = 2


@dataclass(frozen=True)
class Shut(Action):
    """``player`` shuts ``tiles`` (as said: order kept, repeats kept to be refused)."""

    player: str
    tiles: tuple[int, ...]


@dataclass(frozen=True)
class Rolled(Event):
    player: str
    dice: tuple[int, ...]
    total: int
    #: Every set of open tiles that makes the total (empty: the turn is over).
    options: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class TilesShut(Event):
    player: str
    tiles: tuple[int, ...]
    open: tuple[int, ...]


@dataclass(frozen=True)
class TurnScored(Event):
    """No set makes the roll: the turn is over with ``score`` (the open tiles' sum)."""

    player: str
    roll: int
    score: int
    open: tuple[int, ...]


@dataclass(frozen=True)
class BoxShut(Event):
    player: str


@dataclass(frozen=True)
class PlayoffStarted(Event):
    players: tuple[str, ...]
    score: int


class RollFirst(IllegalAction):
    """Tiles named before the dice were rolled."""


class AlreadyRolled(IllegalAction):
    """A second roll before the tiles for the first were shut."""


class WrongSum(IllegalAction):
    """The named tiles do not add up to the roll."""


class TileShut(IllegalAction):
    """A named tile is already shut (or named twice)."""


class OneDieNotAllowed(IllegalAction):
    """One die only when the open tiles add up to 6 or less."""


class BadDice(OutOfRange):
    """A die shows 1 to 6; a total must be possible with the dice."""


# --- state ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BoxState:
    players: tuple[str, ...]
    #: Who plays this round, in order (everyone, or the tied players of a play-off).
    round: tuple[str, ...]
    #: Index into ``round`` of the player on turn.
    active: int
    open: frozenset[int]
    roll: int | None = None
    #: Dice chosen and thrown, their faces not known yet (a chance step).
    rolling: int | None = None
    #: The tiles left open by each finished turn of this round.
    scores: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: The same for every player's last round.
    final: tuple[tuple[str, tuple[int, ...]], ...] = ()
    winners: tuple[str, ...] = ()
    stopped: bool = False
    round_number: int = 1

    @property
    def over(self) -> bool:
        return bool(self.winners) or self.stopped

    @property
    def active_player(self) -> str:
        return self.round[self.active]

    def left_open(self, player: str) -> tuple[int, ...] | None:
        """The tiles ``player``'s last finished turn left open (None: not played yet)."""
        for name, left in reversed((*self.final, *self.scores)):
            if name == player:
                return left
        return None

    def score_of(self, player: str) -> int | None:
        left = self.left_open(player)
        return None if left is None else sum(left)


def sets_making(total: int, open_tiles: frozenset[int]) -> list[tuple[int, ...]]:
    """Every set of distinct open tiles that adds up to ``total``, smallest sets first.

    >>> sets_making(8, frozenset(range(1, 10)))
    [(8,), (1, 7), (2, 6), (3, 5), (1, 2, 5), (1, 3, 4)]
    """
    tiles = sorted(open_tiles)
    found: list[tuple[int, ...]] = []
    for size in range(1, len(tiles) + 1):
        if sum(tiles[:size]) > total:
            break
        found.extend(c for c in combinations(tiles, size) if sum(c) == total)
    return found


def order_by_rolls(players: Sequence[str], rolls: Sequence[int]) -> tuple[str, ...]:
    """Lowest roll first; equal rolls keep the order the players were named in.

    >>> order_by_rolls(["Ann", "Bob", "Cy"], [9, 3, 9])
    ('Bob', 'Ann', 'Cy')
    """
    ranked = sorted(range(len(players)), key=lambda i: (rolls[i], i))
    return tuple(players[i] for i in ranked)


def one_die_allowed(open_tiles: frozenset[int]) -> bool:
    return sum(open_tiles) <= ONE_DIE_LIMIT


class ShutTheBox(Rules[BoxState]):
    name = "shut-the-box"

    def __init__(self, config: BoxConfig | None = None) -> None:
        self.config = config or BoxConfig()

    @property
    def full(self) -> frozenset[int]:
        return frozenset(range(1, self.config.tiles + 1))

    # contract ------------------------------------------------------------------
    def initial_state(self, players: Sequence[str], at: float) -> BoxState:
        names = tuple(players)
        if not names:
            raise ValueError("Shut the Box needs at least one player")
        if len({n.casefold() for n in names}) != len(names):
            raise ValueError("every player needs a different name")
        return BoxState(players=names, round=names, active=0, open=self.full)

    def players(self, state: BoxState) -> tuple[str, ...]:
        return state.players

    def current_player(self, state: BoxState) -> str | None:
        return None if state.over else state.active_player

    def outcome(self, state: BoxState) -> Outcome | None:
        if state.winners:
            return Outcome(state.winners)
        if state.stopped:
            return Outcome((), stopped=True)
        return None

    def deadline(self, state: BoxState) -> float | None:
        return None  # Shut the Box is not timed

    def legal_actions(self, state: BoxState) -> list[Action]:
        if state.over:
            return []
        player = state.active_player
        chance = self.chance(state)
        if chance is not None:
            return [action for action, _ in chance.outcomes]
        if state.roll is None:
            counts = (1, 2) if one_die_allowed(state.open) else (2,)
            return [Roll(player, total=t, count=c) for c in counts for t in _totals(c)]
        return [Shut(player, s) for s in sets_making(state.roll, state.open)]

    def chance(self, state: BoxState) -> Chance | None:
        """After :class:`ChooseDice`: the faces of one die (6) or two (36), equally likely."""
        if state.over or state.rolling is None:
            return None
        player = state.active_player
        if state.rolling == 1:
            return Chance("one die", tuple((Roll(player, (a,)), 1 / 6) for a in range(1, 7)))
        outcomes = tuple(
            (Roll(player, (a, b)), 1 / 36) for a in range(1, 7) for b in range(1, 7)
        )
        return Chance("two dice", outcomes)

    def describe(self, action: Action) -> str:
        if isinstance(action, Roll):
            what = " and ".join(map(str, action.dice)) if action.dice else str(action.total)
            return f"{action.player} rolls {what}"
        if isinstance(action, ChooseDice):
            return f"{action.player} rolls {'one die' if action.count == 1 else 'the dice'}"
        if isinstance(action, Shut):
            return f"{action.player} shuts {' and '.join(map(str, action.tiles))}"
        return describe_table_action(action) or repr(action)

    def stopped(self, state: BoxState) -> BoxState:
        return replace(state, stopped=True)

    def play(self, state: BoxState, action: Action, at: float) -> tuple[BoxState, list[Event]]:
        if isinstance(action, Roll):
            return self._roll(state, action)
        if isinstance(action, ChooseDice):
            return self._choose(state, action)
        if isinstance(action, Shut):
            return self._shut(state, action)
        raise IllegalAction(f"Shut the Box has no such action: {action!r}.")

    # actions ---------------------------------------------------------------------
    def _check_turn(self, state: BoxState, player: str) -> None:
        if player not in state.players:
            raise UnknownPlayer(f"There is no player called {player}.")
        if player != state.active_player:
            raise NotYourTurn(f"It's {state.active_player}'s turn, not {player}'s.")

    def _check_dice(self, state: BoxState, player: str, count: int) -> None:
        self._check_turn(state, player)
        if state.roll is not None:
            raise AlreadyRolled(
                f"You rolled {state.roll}: shut tiles that add up to {state.roll} first."
            )
        if count not in (1, 2):
            raise BadDice("Roll one die or two.")
        if count == 1 and not one_die_allowed(state.open):
            raise OneDieNotAllowed(
                f"The open tiles add up to {sum(state.open)}: roll both dice. "
                f"One die is allowed at {ONE_DIE_LIMIT} or less."
            )

    def _choose(self, state: BoxState, choice: ChooseDice) -> tuple[BoxState, list[Event]]:
        if state.rolling is not None:
            raise AlreadyRolled("The dice are rolling.")
        self._check_dice(state, choice.player, choice.count)
        return replace(state, rolling=choice.count), []

    def _roll(self, state: BoxState, roll: Roll) -> tuple[BoxState, list[Event]]:
        count = roll.dice_count
        if state.rolling is not None and count != state.rolling:
            raise BadDice(f"{state.rolling} {'die was' if state.rolling == 1 else 'dice were'} "
                          "rolled.")
        self._check_dice(state, roll.player, count)
        if roll.dice and any(not 1 <= d <= 6 for d in roll.dice):
            raise BadDice("A die shows 1 to 6.")
        if roll.value not in _totals(count):
            low, high = min(_totals(count)), max(_totals(count))
            what = "One die makes" if count == 1 else "Two dice make"
            raise BadDice(f"{what} {low} to {high}, not {roll.value}.")
        dice = roll.dice or (roll.value,)
        options = tuple(sets_making(roll.value, state.open))
        rolled = Rolled(roll.player, tuple(dice), roll.value, options)
        state = replace(state, rolling=None)
        if options:
            return replace(state, roll=roll.value), [rolled]
        score = sum(state.open)
        scored = TurnScored(roll.player, roll.value, score, tuple(sorted(state.open)))
        new_state, more = self._end_turn(state, tuple(sorted(state.open)))
        return new_state, [rolled, scored, *more]

    def _shut(self, state: BoxState, shut: Shut) -> tuple[BoxState, list[Event]]:
        self._check_turn(state, shut.player)
        if state.roll is None:
            raise RollFirst("Roll first.")
        for tile in shut.tiles:
            if not 1 <= tile <= self.config.tiles:
                raise OutOfRange(f"There is no tile {tile}. Tiles go from 1 to "
                                 f"{self.config.tiles}.")
        repeated = sorted({t for t in shut.tiles if shut.tiles.count(t) > 1})
        if repeated:
            raise TileShut(f"{repeated[0]} was named twice; each tile can be shut once.")
        closed = [t for t in shut.tiles if t not in state.open]
        if closed:
            raise TileShut(f"{closed[0]} is already shut.")
        if sum(shut.tiles) != state.roll:
            said = " and ".join(map(str, shut.tiles))
            make = "makes" if len(shut.tiles) == 1 else "make"
            raise WrongSum(f"{said} {make} {sum(shut.tiles)}, not {state.roll}.")
        left = state.open - set(shut.tiles)
        events: list[Event] = [TilesShut(shut.player, shut.tiles, tuple(sorted(left)))]
        if not left:
            won = replace(state, open=left, roll=None, winners=(shut.player,),
                          scores=(*state.scores, (shut.player, ())))
            return won, [*events, BoxShut(shut.player), GameWon((shut.player,))]
        return replace(state, open=left, roll=None), events

    def _end_turn(
        self, state: BoxState, left: tuple[int, ...]
    ) -> tuple[BoxState, list[Event]]:
        scores = (*state.scores, (state.active_player, left))
        if state.active + 1 < len(state.round):
            nxt = replace(state, active=state.active + 1, open=self.full, roll=None,
                          scores=scores)
            return nxt, [TurnStarted(nxt.active_player, nxt.active + 1, None)]
        # everyone in this round has played
        final = tuple((p, s) for p, s in state.final if p not in state.round) + scores
        best = min(sum(left) for _, left in scores)
        tied = tuple(p for p, left in scores if sum(left) == best)
        if len(tied) > 1 and self.config.ties == "playoff":
            nxt = replace(state, round=tied, active=0, open=self.full, roll=None, scores=(),
                          final=final, round_number=state.round_number + 1)
            return nxt, [PlayoffStarted(tied, best), TurnStarted(tied[0], 1, None)]
        done = replace(state, open=self.full, roll=None, scores=(), final=final, winners=tied)
        return done, [GameWon(tied)]


def _totals(count: int) -> range:
    return range(1, 7) if count == 1 else range(2, 13)


__all__ = [
    "AlreadyRolled",
    "BadDice",
    "BoxConfig",
    "BoxShut",
    "BoxState",
    "OneDieNotAllowed",
    "PlayoffStarted",
    "Roll",
    "RollFirst",
    "Rolled",
    "Shut",
    "ShutTheBox",
    "TileShut",
    "TilesShut",
    "TurnScored",
    "WrongSum",
    "one_die_allowed",
    "order_by_rolls",
    "sets_making",
]
