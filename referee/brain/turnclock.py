"""The turn clock's state as a value (the brain's clock room,
:mod:`referee.brain.clock`, keeps one and applies what its transitions say).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from referee.wording import countdown_marks


@dataclass(frozen=True)
class TurnClock:
    """What the referee remembers of the turn clock besides the deadline
    (which is the engine's: :class:`~referee.engine.clock.TurnTimer`), as a
    value: every transition returns a new one, and tells what the engine's
    clock must do (pause it, resume it) rather than doing it.

    A turn's clock starts once its sentence has been said; a clock held
    before then waits for that sentence when released:

    >>> clock = TurnClock(limit=15.0, told_spoken=True)
    >>> clock, pause = clock.delay(2.0, 6.0, running=True, over=False)
    >>> pause, clock.resume_at          # held while "Bob's turn" is said
    (True, 6.0)
    >>> clock, pause, held = clock.hold(running=False)   # "pause" at 3 s
    >>> held, clock.resume_at, clock.delayed_to
    (True, None, 6.0)
    >>> clock, start = clock.restart(4.0, running=False, over=False)  # "resume" at 4 s
    >>> start, clock.resume_at          # not yet: at 6 s, when the sentence ends
    (False, 6.0)
    >>> clock.resume_due(5.0)[1]
    >>> clock, starts = clock.resume_due(6.0)   # the engine's clock resumes at 6 s
    >>> starts, clock.resume_at
    (6.0, None)

    Countdown marks are said once a turn (its clock at 6 s: the deadline 21 s):

    >>> clock, due = clock.marks_due(deadline=21.0, at=16.5)
    >>> due, clock.marks_due(deadline=21.0, at=16.5)[1]
    ([10, 5], [])
    >>> clock.wakeup(deadline=21.0)     # "Four." next
    17.0
    """

    #: The turn's length (None: no timer).
    limit: float | None = None
    #: The countdown marks said this turn, in seconds left.
    fired: frozenset[float] = frozenset()
    #: When a turn's clock held while its sentence is said starts.
    resume_at: float | None = None
    #: When a clock held before it had started would have started (its turn's
    #: sentence still being said): it starts no sooner on release.
    delayed_to: float | None = None
    #: The players paused the game ("pause").
    paused: bool = False
    #: ... and the clock was running, or about to start, then.
    paused_clock: bool = False
    #: Held for something outside the game (a lost microphone).
    held: bool = False
    #: The table reports when its sentences end (they take time).
    told_spoken: bool = False
    #: A game rebuilt from a log of format 3 or older keeps the clock it was
    #: played with (:attr:`~referee.protocol.Start.legacy_clock`).
    legacy: bool = False

    def for_new_game(self, limit: float | None) -> TurnClock:
        """A new game's clock (a rematch): what the table is like is kept (its
        sentences take time, a microphone is lost, the log's format)."""
        return TurnClock(limit=limit, held=self.held, told_spoken=self.told_spoken,
                         legacy=self.legacy)

    def of_log(self, legacy: bool) -> TurnClock:
        """A game rebuilt from a log keeps the clock it was played with
        (``legacy``: format 3 or older)."""
        return replace(self, legacy=legacy)

    def new_turn(self, seconds: float | None) -> TurnClock:
        """A turn began (its marks to say again, its length)."""
        return replace(self, limit=seconds, fired=frozenset())

    def marks_again(self) -> TurnClock:
        """An undo gave a turn back its time: its marks are said again."""
        return replace(self, fired=frozenset())

    def wakeup(self, deadline: float | None) -> float | None:
        """When the clock next has something to say (a mark, the deadline, a
        held clock's start), given the engine's ``deadline``."""
        if self.resume_at is not None:
            return self.resume_at
        if deadline is None:
            return None
        pending = [deadline - m for m in countdown_marks(self.limit) if m not in self.fired]
        return min([*pending, deadline])

    def marks_due(self, deadline: float, at: float) -> tuple[TurnClock, list[float]]:
        """The countdown marks due by ``at`` and not said yet, in order."""
        due = [m for m in countdown_marks(self.limit)
               if m not in self.fired and deadline - m <= at]
        return replace(self, fired=self.fired | set(due)), due

    def resume_due(self, at: float) -> tuple[TurnClock, float | None]:
        """A clock held while its sentence was said whose time has come: when
        it starts (None: not yet, or none)."""
        if self.resume_at is not None and self.resume_at <= at:
            return replace(self, resume_at=None), self.resume_at
        return self, None

    def hold(self, running: bool) -> tuple[TurnClock, bool, bool]:
        """Stop the clock, running or about to start once the referee has
        spoken: the new value, whether the engine's clock must pause, and
        whether there was a clock to stop."""
        if running:
            return self, True, True
        if self.resume_at is not None:  # the turn's clock had not started yet
            delayed_to = self.delayed_to if self.legacy else self.resume_at
            return replace(self, resume_at=None, delayed_to=delayed_to), False, True
        return self, False, False

    def restart(self, at: float, running: bool, over: bool) -> tuple[TurnClock, bool]:
        """Start a held clock again: the new value, and whether the engine's
        clock resumes now; one held before it had started waits for its
        sentence's end, if still to come."""
        clock = replace(self, delayed_to=None)
        if over or running:
            return clock, False
        if self.delayed_to is not None and self.delayed_to > at:
            return replace(clock, resume_at=self.delayed_to), False
        return clock, True

    def delay(self, at: float, until: float, running: bool, over: bool
              ) -> tuple[TurnClock, bool]:
        """The referee talks from ``at`` until ``until`` (a turn, an answer):
        the new value, and whether the engine's running clock must pause
        until then (:meth:`~referee.brain.clock.Clock._delay_clock` says the rules)."""
        clock = replace(self, told_spoken=True)
        if clock.legacy and clock.resume_at is not None:  # (a log of format 3)
            return replace(clock, resume_at=max(at, until)), False
        if running and until > at:
            return replace(clock, resume_at=max(until, clock.resume_at or until)), True
        if clock.resume_at is not None:
            return replace(clock, resume_at=max(at, until)), False
        if clock.delayed_to is not None:  # (held meanwhile: it waits for this one too)
            return replace(clock, delayed_to=max(clock.delayed_to, until)), False
        if until > at and not over and not clock.legacy and clock.limit is not None:
            # Held before the sentence's end was told (a "pause" in the step
            # that began the turn, a question, a lost microphone): released,
            # the clock still waits for it.
            return replace(clock, delayed_to=until), False
        return clock, False
