"""Race to 65: two trays of tiles 1..12, a race to call an exact total.

Both rule sets of ``shared/seeds/race-to-65-*`` and the project's decisions of
``shared/rules.md`` live here as configuration (:class:`RaceConfig`), not as
branches scattered through the code:

========================  =========  ===========  ==========  ==========
rule set                  target     flips/turn   seconds     call wins
========================  =========  ===========  ==========  ==========
phase-one                 65         1            15          exact 65
phase-seven easy          65         2            untimed     exact 65
phase-seven medium        67         2            30          exact 67
phase-seven hard          70         2            15          exact 70
========================  =========  ===========  ==========  ==========

Decisions where the rule texts are silent (each has a named test):

* A turn is atomic (house rule ``partial_turn``, default ``revert``): a turn
  that ends without its required flips (timeout, consecutive-tile violation, an
  incorrect call by the active player) is void; its flips are reverted and the
  referee lists the tiles to turn back. With ``keep`` the flips made stand and
  become the consecutive-rule memory.
* The consecutive rule remembers the tiles flipped by the previous completed
  turn (by either player, on either tray). A void turn flipped nothing. A
  penalty reset is not a flip.
* A flip whose stated direction contradicts the tile ("flip four up" when four
  is up), an instruction without a direction, and a second flip of the same
  tile in one turn are rejected with the reason: no penalty, the timer runs on.
* A call names a number; it wins only when the number is the target and the
  caller's total equals it. Any other call resets every tile of the caller's
  tray. Calls are allowed in and out of turn; a call by the active player ends
  their turn (void if incomplete), an out-of-turn call does not.
* A tray reset during a turn is final: voiding that turn later does not turn
  any of the reset tray's tiles back down.
* Any action except :class:`~referee.engine.core.Timeout` and
  :class:`~referee.engine.core.StopGame` arriving at or after the deadline is
  rejected with :class:`~referee.engine.core.TimeIsUp`: the caller applies the
  timeout first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from referee.engine.clock import TurnTimer
from referee.engine.core import (
    Action,
    Event,
    GameWon,
    IllegalAction,
    NotYourTurn,
    Outcome,
    OutOfRange,
    Rejection,
    Rules,
    TimeIsUp,
    TimeNotUp,
    Timeout,
    TurnStarted,
    UnknownPlayer,
    describe_table_action,
)

TILES = tuple(range(1, 13))
Direction = Literal["up", "down"]
PartialTurn = Literal["revert", "keep"]

RULE_SETS = ("phase-one", "phase-seven")
DIFFICULTIES = ("easy", "medium", "hard")


# --- configuration ---------------------------------------------------------------


@dataclass(frozen=True)
class RaceConfig:
    """One rule set with its house rules."""

    rule_set: str
    difficulty: str | None
    target: int
    flips_per_turn: int
    turn_seconds: float | None
    #: House rule: what happens to the flips of a turn that ends incomplete.
    partial_turn: PartialTurn = "revert"

    @property
    def title(self) -> str:
        level = f" {self.difficulty}" if self.difficulty else ""
        return f"Race to {self.target}, {self.rule_set}{level}"


def race_config(
    rule_set: str = "phase-seven",
    difficulty: str | None = None,
    *,
    partial_turn: str = "revert",
) -> RaceConfig:
    """The configuration of a named rule set, validated.

    >>> race_config("phase-seven", "hard").target
    70
    >>> race_config("phase-one").flips_per_turn
    1
    """
    if partial_turn not in ("revert", "keep"):
        raise ValueError(f"partial_turn must be revert or keep, not {partial_turn!r}")
    keep: PartialTurn = "keep" if partial_turn == "keep" else "revert"
    if rule_set == "phase-one":
        if difficulty is not None:
            raise ValueError("phase-one has no difficulty levels; drop --difficulty")
        return RaceConfig("phase-one", None, 65, 1, 15.0, keep)
    if rule_set == "phase-seven":
        level = difficulty or "easy"
        levels = {"easy": (65, None), "medium": (67, 30.0), "hard": (70, 15.0)}
        if level not in levels:
            raise ValueError(f"unknown difficulty {level!r}; choose easy, medium or hard")
        target, seconds = levels[level]
        return RaceConfig("phase-seven", level, target, 2, seconds, keep)
    raise ValueError(f"unknown rule set {rule_set!r}; choose phase-one or phase-seven")


# --- actions and events ------------------------------------------------------------


@dataclass(frozen=True)
class Flip(Action):
    """``player`` flips ``owner``'s tile: their own, or an instruction.

    ``direction`` is the way the tile must end (None: toggle, own tiles only).
    """

    player: str
    owner: str
    tile: int
    direction: Direction | None = None


@dataclass(frozen=True)
class Call(Action):
    """``caller`` shouts a number ("sixty-five!")."""

    caller: str
    number: int


@dataclass(frozen=True)
class SetTile(Action):
    """The table agrees that ``owner``'s ``tile`` is (``down``) or is not down.

    A correction of the referee's record, not a flip: it may happen at any
    time, does not count as one of the turn's flips, and does not change the
    consecutive rule's memory.
    """

    player: str
    owner: str
    tile: int
    down: bool


@dataclass(frozen=True)
class TileSet:
    """A tile of ``owner``'s tray that must be (or was) set down or up."""

    owner: str
    tile: int
    down: bool


@dataclass(frozen=True)
class TileFlipped(Event):
    by: str
    owner: str
    tile: int
    down: bool
    #: Flips still to make in this turn after this one.
    flips_left: int


@dataclass(frozen=True)
class ConsecutiveViolation(Event):
    """``player`` tried to flip a tile flipped in the previous turn."""

    player: str
    owner: str
    tile: int
    down: bool  # the tile's state, which stays as it is


@dataclass(frozen=True)
class TimeUp(Event):
    player: str


@dataclass(frozen=True)
class TurnLost(Event):
    """``player``'s turn ended void; ``corrections`` are the tiles to turn back."""

    player: str
    reason: Literal["time", "consecutive", "call"]
    corrections: tuple[TileSet, ...]


@dataclass(frozen=True)
class TileCorrected(Event):
    owner: str
    tile: int
    down: bool


@dataclass(frozen=True)
class CallCorrect(Event):
    caller: str
    number: int


@dataclass(frozen=True)
class CallIncorrect(Event):
    """A wrong call: ``corrections`` puts every tile of the caller's tray up."""

    caller: str
    number: int
    total: int
    target: int
    corrections: tuple[TileSet, ...]


# --- rejections specific to this game ---------------------------------------------


class WrongDirection(IllegalAction):
    """The stated direction contradicts the tile ("four is already up")."""


class MissingDirection(IllegalAction):
    """An instruction to the opponent must say up or down."""


class AlreadyFlipped(IllegalAction):
    """The same tile may not be flipped twice in one turn."""


# --- state --------------------------------------------------------------------------


@dataclass(frozen=True)
class RaceState:
    players: tuple[str, str]
    down: tuple[frozenset[int], frozenset[int]]
    active: int
    turn: int
    timer: TurnTimer
    #: Flips made in the current turn, in order (``down`` is the new state).
    flips: tuple[TileSet, ...] = ()
    #: (owner, tile) flipped by the previous completed turn: the consecutive rule.
    last_turn: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    #: Trays reset by a wrong call during this turn (their flips are final).
    reset_trays: frozenset[str] = field(default_factory=frozenset)
    winner: str | None = None
    stopped: bool = False

    def index(self, player: str) -> int:
        return self.players.index(player)

    def tiles_down(self, player: str) -> frozenset[int]:
        return self.down[self.index(player)]

    def total(self, player: str) -> int:
        return sum(self.tiles_down(player))

    @property
    def active_player(self) -> str:
        return self.players[self.active]

    @property
    def over(self) -> bool:
        return self.winner is not None or self.stopped

    def flipped_this_turn(self, owner: str, tile: int) -> bool:
        return any(f.owner == owner and f.tile == tile for f in self.flips)


def _owner_phrase(owner: str, player: str) -> str:
    return "your" if owner == player else f"{owner}'s"


# --- rules --------------------------------------------------------------------------


class Race65(Rules[RaceState]):
    """The rules of Race to 65 for one :class:`RaceConfig`."""

    name = "race65"

    def __init__(self, config: RaceConfig | None = None, first: str | None = None) -> None:
        self.config = config or race_config()
        self.first = first

    # contract ------------------------------------------------------------------
    def initial_state(self, players: Sequence[str], at: float) -> RaceState:
        names = tuple(players)
        if len(names) != 2:
            raise ValueError("Race to 65 is for exactly two players")
        if len({n.casefold() for n in names}) != 2:
            raise ValueError("the two players need different names")
        active = 0
        if self.first is not None:
            if self.first not in names:
                raise ValueError(f"{self.first} is not one of the players")
            active = names.index(self.first)
        return RaceState(
            players=(names[0], names[1]),
            down=(frozenset(), frozenset()),
            active=active,
            turn=1,
            timer=TurnTimer.start(self.config.turn_seconds, at),
        )

    def players(self, state: RaceState) -> tuple[str, ...]:
        return state.players

    def current_player(self, state: RaceState) -> str | None:
        return None if state.over else state.active_player

    def outcome(self, state: RaceState) -> Outcome | None:
        if state.winner is not None:
            return Outcome((state.winner,))
        if state.stopped:
            return Outcome((), stopped=True)
        return None

    def deadline(self, state: RaceState) -> float | None:
        return None if state.over else state.timer.deadline()

    def legal_actions(self, state: RaceState) -> list[Action]:
        if state.over:
            return []
        player = state.active_player
        actions: list[Action] = []
        for owner in state.players:
            for tile in TILES:
                if state.flipped_this_turn(owner, tile) or (owner, tile) in state.last_turn:
                    continue
                if owner == player:
                    actions.append(Flip(player, owner, tile))
                else:
                    is_down = tile in state.tiles_down(owner)
                    actions.append(Flip(player, owner, tile, "up" if is_down else "down"))
        actions.extend(Call(p, self.config.target) for p in state.players)
        return actions

    def describe(self, action: Action) -> str:
        if isinstance(action, Flip):
            way = f" {action.direction}" if action.direction else ""
            if action.owner == action.player:
                return f"{action.player} flips {action.tile}{way}"
            return f"{action.player} tells {action.owner} to flip {action.tile}{way}"
        if isinstance(action, Call):
            return f"{action.caller} calls {action.number}"
        if isinstance(action, SetTile):
            return f"{action.owner}'s {action.tile} is {'down' if action.down else 'up'}"
        return describe_table_action(action) or repr(action)

    def stopped(self, state: RaceState) -> RaceState:
        return replace(state, stopped=True)

    def timer(self, state: RaceState) -> TurnTimer:
        return state.timer

    def with_timer(self, state: RaceState, timer: TurnTimer) -> RaceState:
        return replace(state, timer=timer)

    def play(self, state: RaceState, action: Action, at: float) -> tuple[RaceState, list[Event]]:
        if isinstance(action, Timeout):
            return self._timeout(state, at)
        if isinstance(action, SetTile):
            return self._set_tile(state, action)
        if state.timer.expired(at):
            raise TimeIsUp(f"Time is up for {state.active_player}.")
        if isinstance(action, Flip):
            return self._flip(state, action, at)
        if isinstance(action, Call):
            return self._call(state, action, at)
        raise IllegalAction(f"Race to 65 has no such action: {action!r}.")

    def restore(self, state: RaceState, moved_at: float, at: float) -> RaceState:
        return replace(state, timer=state.timer.restored(moved_at, at))

    # actions ---------------------------------------------------------------------
    def _set_tile(self, state: RaceState, action: SetTile) -> tuple[RaceState, list[Event]]:
        self._check_player(state, action.player)
        self._check_player(state, action.owner)
        if action.tile not in TILES:
            raise OutOfRange(f"There is no tile {action.tile}. Tiles go from 1 to 12.")
        index = state.index(action.owner)
        tiles = state.down[index]
        if (action.tile in tiles) == action.down:
            way = "down" if action.down else "up"
            raise IllegalAction(f"{action.owner}'s {action.tile} is already {way}.")
        tiles = tiles | {action.tile} if action.down else tiles - {action.tile}
        state = replace(state, down=_replace_at(state.down, index, tiles))
        return state, [TileCorrected(action.owner, action.tile, action.down)]

    def _check_player(self, state: RaceState, name: str) -> None:
        if name not in state.players:
            raise UnknownPlayer(
                f"There is no player called {name}. The players are "
                f"{state.players[0]} and {state.players[1]}."
            )

    def _flip(self, state: RaceState, flip: Flip, at: float) -> tuple[RaceState, list[Event]]:
        self._check_player(state, flip.player)
        self._check_player(state, flip.owner)
        if flip.player != state.active_player:
            raise NotYourTurn(f"It's {state.active_player}'s turn, not {flip.player}'s.")
        if flip.tile not in TILES:
            raise OutOfRange(f"There is no tile {flip.tile}. Tiles go from 1 to 12.")
        owner_word = _owner_phrase(flip.owner, flip.player)
        is_down = flip.tile in state.tiles_down(flip.owner)
        if flip.owner != flip.player and flip.direction is None:
            raise MissingDirection(
                f"{flip.player}, say which way {flip.owner} should flip {flip.tile}: up or down."
            )
        if flip.direction is not None and (flip.direction == "down") == is_down:
            raise WrongDirection(
                f"{flip.owner}'s {flip.tile} is already {flip.direction}. Nothing was flipped."
            )
        if state.flipped_this_turn(flip.owner, flip.tile):
            whose = owner_word[:1].upper() + owner_word[1:]
            raise AlreadyFlipped(
                f"{whose} {flip.tile} was already flipped this turn. Flip a different tile."
            )
        if (flip.owner, flip.tile) in state.last_turn:
            violation = ConsecutiveViolation(flip.player, flip.owner, flip.tile, is_down)
            new_state, lost = self._end_turn_void(state, "consecutive", at)
            return new_state, [violation, *lost]

        index = state.index(flip.owner)
        tiles = state.down[index]
        tiles = tiles - {flip.tile} if is_down else tiles | {flip.tile}
        flipped = TileSet(flip.owner, flip.tile, not is_down)
        state = replace(
            state,
            down=_replace_at(state.down, index, tiles),
            flips=(*state.flips, flipped),
        )
        left = self.config.flips_per_turn - len(state.flips)
        events: list[Event] = [TileFlipped(flip.player, flip.owner, flip.tile, not is_down, left)]
        if left == 0:
            done = frozenset((f.owner, f.tile) for f in state.flips)
            state, started = self._next_turn(state, done, at)
            events.append(started)
        return state, events

    def _call(self, state: RaceState, call: Call, at: float) -> tuple[RaceState, list[Event]]:
        self._check_player(state, call.caller)
        total = state.total(call.caller)
        target = self.config.target
        if call.number == target and total == target:
            won = replace(state, winner=call.caller)
            return won, [CallCorrect(call.caller, call.number), GameWon((call.caller,))]

        before = state.down
        caller = state.index(call.caller)
        lost: list[Event] = []
        if call.caller == state.active_player:
            state, lost = self._end_turn_void(state, "call", at)
        reset = _replace_at(state.down, caller, frozenset())
        state = replace(state, down=reset)
        if call.caller != state.active_player:
            state = replace(state, reset_trays=state.reset_trays | {call.caller})
        # Every physical change the call causes, said once, in the incorrect-call event.
        corrections = tray_differences(state.players, before, reset)
        wrong = CallIncorrect(call.caller, call.number, total, target, corrections)
        for i, event in enumerate(lost):
            if isinstance(event, TurnLost):
                lost[i] = replace(event, corrections=())
        return state, [wrong, *lost]

    def _timeout(self, state: RaceState, at: float) -> tuple[RaceState, list[Event]]:
        deadline = state.timer.deadline()
        if not state.timer.timed:
            raise TimeNotUp("This game has no timer.")
        if deadline is None:
            raise TimeNotUp("The timer is paused.")
        if at < deadline:
            left = deadline - at
            raise TimeNotUp(f"There are still {left:.1f} seconds left.")
        new_state, events = self._end_turn_void(state, "time", at)
        return new_state, [TimeUp(state.active_player), *events]

    # turn bookkeeping ------------------------------------------------------------
    def _end_turn_void(
        self, state: RaceState, reason: Literal["time", "consecutive", "call"], at: float
    ) -> tuple[RaceState, list[Event]]:
        """End an incomplete turn: revert its flips (or keep them, by house rule)."""
        player = state.active_player
        before = state.down
        down = before
        memory: frozenset[tuple[str, int]] = frozenset()
        if self.config.partial_turn == "revert":
            for flip in reversed(state.flips):
                if flip.owner in state.reset_trays:
                    continue
                index = state.index(flip.owner)
                tiles = down[index] - {flip.tile} if flip.down else down[index] | {flip.tile}
                down = _replace_at(down, index, tiles)
        else:
            memory = frozenset((f.owner, f.tile) for f in state.flips)
        corrections = tray_differences(state.players, before, down)
        state, started = self._next_turn(replace(state, down=down), memory, at)
        return state, [TurnLost(player, reason, corrections), started]

    def _next_turn(
        self, state: RaceState, memory: frozenset[tuple[str, int]], at: float
    ) -> tuple[RaceState, TurnStarted]:
        active = 1 - state.active
        state = replace(
            state,
            active=active,
            turn=state.turn + 1,
            flips=(),
            last_turn=memory,
            reset_trays=frozenset(),
            timer=TurnTimer.start(self.config.turn_seconds, at),
        )
        return state, TurnStarted(state.players[active], state.turn, self.config.turn_seconds)


def _replace_at(
    pair: tuple[frozenset[int], frozenset[int]], index: int, value: frozenset[int]
) -> tuple[frozenset[int], frozenset[int]]:
    return (value, pair[1]) if index == 0 else (pair[0], value)


def tray_differences(
    players: tuple[str, str],
    before: tuple[frozenset[int], frozenset[int]],
    after: tuple[frozenset[int], frozenset[int]],
) -> tuple[TileSet, ...]:
    """The tiles whose position differs, as the position they must take."""
    changes: list[TileSet] = []
    for index, owner in enumerate(players):
        for tile in sorted(before[index] ^ after[index]):
            changes.append(TileSet(owner, tile, tile in after[index]))
    return tuple(changes)


__all__ = [
    "AlreadyFlipped",
    "Call",
    "CallCorrect",
    "CallIncorrect",
    "ConsecutiveViolation",
    "Flip",
    "MissingDirection",
    "Race65",
    "RaceConfig",
    "RaceState",
    "Rejection",
    "SetTile",
    "TileCorrected",
    "TileFlipped",
    "TileSet",
    "TimeUp",
    "TurnLost",
    "WrongDirection",
    "race_config",
    "tray_differences",
]
