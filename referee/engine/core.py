"""The contract every game's rules follow.

A game is a :class:`Rules` object (pure functions of an immutable state) held by
a :class:`Game`, which keeps the stack of states so that undo is a pop.

* Time is an argument: every action is applied ``at`` a time in seconds that
  the caller supplies; the engine never reads a clock.
* Chance is an explicit action (a roll, a draw) that the caller applies with a
  known outcome; the engine never draws random numbers.
* Applying an action returns the :class:`Event` objects that happened, which
  the referee announces. An action the rules refuse raises a
  :class:`Rejection` carrying a sentence a player can hear, and leaves the
  state exactly as it was.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from referee.engine.clock import TurnTimer

# --- actions -----------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """Base of everything a player or the referee can do to a game."""


@dataclass(frozen=True)
class Timeout(Action):
    """The current turn's time ran out; applied by the caller at the deadline."""


@dataclass(frozen=True)
class PauseClock(Action):
    """Freeze the turn timer (a call being judged, a question being asked)."""


@dataclass(frozen=True)
class ResumeClock(Action):
    """Restart the turn timer with the time that was left."""


@dataclass(frozen=True)
class StopGame(Action):
    """The table ends the game; a stopped game has no winner."""


def describe_table_action(action: Action) -> str | None:
    """What the actions every game shares are, in words (None for a game's own)."""
    return {Timeout: "time runs out", PauseClock: "the timer is paused",
            ResumeClock: "the timer resumes", StopGame: "the game is stopped"}.get(type(action))


# --- events ------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """Base of everything that happened as the result of an action."""


@dataclass(frozen=True)
class TurnStarted(Event):
    """A new turn began; ``seconds`` is its time limit (None when untimed)."""

    player: str
    turn: int
    seconds: float | None


@dataclass(frozen=True)
class ClockPaused(Event):
    remaining: float | None


@dataclass(frozen=True)
class ClockResumed(Event):
    remaining: float | None


@dataclass(frozen=True)
class GameWon(Event):
    winners: tuple[str, ...]


@dataclass(frozen=True)
class GameStopped(Event):
    pass


@dataclass(frozen=True)
class Chance:
    """A step of chance the game is waiting for (a roll, a draw).

    ``outcomes`` lists every possible result as the action that applies it,
    with its probability. The caller picks one (a seeded generator for virtual
    dice, or what a player reports for physical dice) and applies it like any
    other action, so tests inject results instead of depending on seeds.
    """

    name: str
    outcomes: tuple[tuple[Action, float], ...]


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: its winners (several for a shared win)."""

    winners: tuple[str, ...]
    stopped: bool = False


# --- rejections --------------------------------------------------------------


class Rejection(ValueError):
    """An action the rules refuse. ``sentence`` is what the referee says.

    The state is unchanged and there is no penalty: a rule violation that
    carries a penalty is not a rejection but a set of events.
    """

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


class GameOver(Rejection):
    """The game has ended; nothing more can be applied."""


class UnknownPlayer(Rejection):
    """The action names somebody who is not at the table."""


class NotYourTurn(Rejection):
    """Only the active player may do this now."""


class OutOfRange(Rejection):
    """A number the game does not have (tile 13, a roll of 14)."""


class IllegalAction(Rejection):
    """The action is well formed but the rules do not allow it now."""


class TimeIsUp(Rejection):
    """The turn's deadline has passed; the caller must apply :class:`Timeout`."""


class TimeNotUp(Rejection):
    """A :class:`Timeout` arrived before the deadline, or the game is untimed."""


# --- the contract --------------------------------------------------------------

S = TypeVar("S")


class Rules(ABC, Generic[S]):
    """Pure rules of one game: no I/O, no clock reads, no randomness."""

    #: Short machine name of the game, as used on the command line.
    name: str = ""

    @abstractmethod
    def initial_state(self, players: Sequence[str], at: float) -> S:
        """The state at the start of play; the first turn begins ``at``."""

    @abstractmethod
    def players(self, state: S) -> tuple[str, ...]:
        """Everybody at the table, in turn order."""

    @abstractmethod
    def current_player(self, state: S) -> str | None:
        """Whose turn it is, or None when the game is over."""

    @abstractmethod
    def legal_actions(self, state: S) -> list[Action]:
        """The actions the rules allow now (calls of the target included)."""

    def apply(self, state: S, action: Action, at: float) -> tuple[S, list[Event]]:
        """The next state and what happened; raises :class:`Rejection`.

        What the table does to every game is the same and handled here:
        nothing is played after the end, :class:`StopGame` ends the game
        (:meth:`stopped`), and :class:`PauseClock` / :class:`ResumeClock`
        hold and restart the turn timer of a game that has one
        (:meth:`timer`). Everything else is the game's own (:meth:`play`).
        """
        if self.outcome(state) is not None:
            raise GameOver("The game is over.")
        if isinstance(action, StopGame):
            return self.stopped(state), [GameStopped()]
        timer = self.timer(state)
        if timer is not None and isinstance(action, PauseClock):
            timer = timer.pause(at)
            return self.with_timer(state, timer), [ClockPaused(timer.remaining(at))]
        if timer is not None and isinstance(action, ResumeClock):
            timer = timer.resume(at)
            return self.with_timer(state, timer), [ClockResumed(timer.remaining(at))]
        return self.play(state, action, at)

    @abstractmethod
    def play(self, state: S, action: Action, at: float) -> tuple[S, list[Event]]:
        """The game's own actions (and :class:`Timeout`, in a timed game): the
        next state and what happened; raises :class:`Rejection`."""

    @abstractmethod
    def stopped(self, state: S) -> S:
        """``state`` ended by the table (:class:`StopGame`): no winner."""

    def timer(self, state: S) -> TurnTimer | None:
        """The turn timer, in a game that has one (None: untimed game)."""
        return None

    def with_timer(self, state: S, timer: TurnTimer) -> S:
        """``state`` with its turn timer replaced (games with :meth:`timer`)."""
        raise NotImplementedError(f"{type(self).__name__} has no turn timer")

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """None while the game goes on."""

    @abstractmethod
    def deadline(self, state: S) -> float | None:
        """When the current turn times out, or None (untimed, paused, over)."""

    @abstractmethod
    def describe(self, action: Action) -> str:
        """A short sentence that says what the action is."""

    def chance(self, state: S) -> Chance | None:
        """The chance step the game waits for now, if any (none in Race to 65)."""
        return None

    def restore(self, state: S, moved_at: float, at: float) -> S:
        """``state``, left at ``moved_at`` by a move that is being undone, resumed ``at``.

        Games with a turn timer give back the time that was left when the
        undone move was made; the default returns ``state`` unchanged.
        """
        return state


class Game(Generic[S]):
    """A game in progress: the rules plus the stack of states it went through.

    ``apply`` either commits a new state and returns its events, or raises a
    :class:`Rejection` and commits nothing. ``undo`` pops the last state.
    """

    def __init__(self, rules: Rules[S], players: Sequence[str], at: float = 0.0) -> None:
        self.rules = rules
        self._states: list[S] = [rules.initial_state(players, at)]
        #: When each state of the stack began.
        self._times: list[float] = [at]

    @property
    def state(self) -> S:
        return self._states[-1]

    @property
    def players(self) -> tuple[str, ...]:
        return self.rules.players(self.state)

    def current_player(self) -> str | None:
        return self.rules.current_player(self.state)

    def legal_actions(self) -> list[Action]:
        return self.rules.legal_actions(self.state)

    def apply(self, action: Action, at: float) -> list[Event]:
        state, events = self.rules.apply(self.state, action, at)
        self._states.append(state)
        self._times.append(at)
        return events

    @property
    def depth(self) -> int:
        """How many states the stack holds (a mark for :meth:`undo_to`)."""
        return len(self._states)

    def can_undo(self) -> bool:
        return len(self._states) > 1

    def undo(self) -> None:
        """Return to the state before the last applied action."""
        if not self.can_undo():
            raise IllegalAction("There is nothing to undo.")
        self._states.pop()
        self._times.pop()

    def undo_to(self, depth: int, at: float) -> S:
        """Go back to the state the stack had at ``depth`` (from :attr:`depth`), ``at`` now.

        The restored state continues from ``at`` with the time its turn had
        left when the next action was applied (:meth:`Rules.restore`). Returns
        the state that was current before the undo.
        """
        if not 1 <= depth < len(self._states):
            raise IllegalAction("There is nothing to undo.")
        undone = self.state
        moved_at = self._times[depth]
        del self._states[depth:], self._times[depth:]
        self._states[-1] = self.rules.restore(self._states[-1], moved_at, at)
        return undone

    def before(self, depth: int) -> Game[S]:
        """The game as it stood at ``depth`` (from :attr:`depth`), apart from
        this one: what a move would have done there."""
        if not 1 <= depth <= len(self._states):
            raise IllegalAction("The game was never there.")
        then = copy.copy(self)
        then._states, then._times = self._states[:depth], self._times[:depth]
        return then

    def outcome(self) -> Outcome | None:
        return self.rules.outcome(self.state)

    def is_over(self) -> bool:
        return self.outcome() is not None

    def deadline(self) -> float | None:
        return self.rules.deadline(self.state)

    def chance(self) -> Chance | None:
        return self.rules.chance(self.state)

    def describe(self, action: Action) -> str:
        return self.rules.describe(action)
