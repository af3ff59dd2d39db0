"""The turn clock: countdown marks, timeouts, and the timer held.

* Countdown marks, in seconds left: half the turn (when more than 10), 10
  (when the turn is longer), then 5, 4, 3, 2, 1. The deadline itself applies the
  engine's timeout.
* A player's time is never spent listening to the referee: the table says
  when it has finished saying a new turn or an answer
  (:class:`~referee.protocol.SpokenUntil`), and the clock starts then.
* While a question is open the turn timer is paused; it resumes with the
  time that was left.
* "pause" holds the turn timer until "resume"; while paused, questions are
  answered and moves are refused ("The game is paused: say resume to go on").
* A lost microphone holds the timer too (:class:`~referee.protocol.MicLost`)
  until it is back; a game the players paused meanwhile stays paused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from referee.brain.shared import Shared
from referee.engine.core import Event, PauseClock, ResumeClock, TurnStarted
from referee.protocol import Say, Tone
from referee.wording import mark_text


class Clock(Shared):
    """The turn clock: countdown marks, timeouts, and holding the timer. Its
    state is :attr:`~referee.brain.shared.Shared.clock`, a
    :class:`~referee.brain.turnclock.TurnClock` that only this room replaces;
    it also keeps the brain's time (:attr:`~referee.brain.shared.Shared.now`).
    What a timeout or a restarted clock brings is announced by the session."""

    def next_wakeup(self) -> float | None:
        """When the referee next has something to say if nobody speaks."""
        if self.question is not None:
            return self.question.deadline
        return self.clock.wakeup(self.game.deadline())

    def _reach(self, at: float) -> None:
        """The brain's time is now ``at`` (never back)."""
        self.now = max(self.now, at)

    def _resume_due(self, at: float) -> None:
        """Start a turn's clock held while its sentence was said, once due."""
        self.clock, resume_at = self.clock.resume_due(at)
        if (resume_at is not None and not self.over and self.question is None
                and self.game.deadline() is None):
            self.game.apply(ResumeClock(), resume_at)

    def _marks(self, at: float) -> tuple[list[Say], float | None]:
        """The countdown marks due by ``at``, said; and the deadline, if it
        has passed (the engine's timeout is due then)."""
        deadline = self.game.deadline()
        if self.over or self.question is not None or deadline is None:
            return [], None
        self.clock, due = self.clock.marks_due(deadline, at)
        said = [s for mark in due
                for s in self._say([mark_text(mark)], deadline - mark, Tone.COUNTDOWN)]
        return said, (deadline if deadline <= at else None)

    def _turns_began(self, events: Sequence[Event]) -> None:
        """Each turn that began gets its clock: its marks to say again, its length."""
        for event in events:
            if isinstance(event, TurnStarted):
                self.clock = self.clock.new_turn(event.seconds)

    def _waits_for_sentence(self, events: Sequence[Event]) -> bool:
        """Whether a turn that a timeout began (``events``) waits for its
        sentence to be said (told after this step) before its clock runs:
        once the table has told that its sentences take time."""
        return (self.clock.told_spoken and not self.clock.legacy
                and any(isinstance(e, TurnStarted) for e in events))

    def _hold_clock(self, at: float) -> bool:
        """Stop the turn timer, running or about to start once the referee has
        spoken; whether there was one to stop."""
        if self.over:
            return False
        self.clock, pause, held = self.clock.hold(running=self.game.deadline() is not None)
        if pause:
            self.game.apply(PauseClock(), at)
        return held

    def _restart_clock(self, at: float) -> list[Event]:
        """Start a held turn timer again, with the time it had left; one held
        before it had started waits for its sentence's end, if still to come."""
        self.clock, start = self.clock.restart(at, running=self.game.deadline() is not None,
                                               over=self.over)
        return self.game.apply(ResumeClock(), at) if start else []

    def _delay_clock(self, at: float, until: float) -> None:
        """Hold the turn timer from ``at`` until ``until``, while the referee talks.

        The table says when it has said a new turn or an answer
        (:class:`~referee.protocol.SpokenUntil`), so a player's time is never
        spent listening to the referee.
        The first such report tells that the table's sentences take time
        (spoken, or read): from then on a turn that a timeout begins waits for
        its own sentence's report, however late the clock is told the time.
        Called again while a delay is on, it moves the delay's end (``until``
        <= ``at`` ends it now: the referee was cut short). A new turn that
        began while an earlier sentence's delay was on has a clock of its own,
        running: it is held too, until its own sentence has been said; and a
        clock held meanwhile (paused, a question, a lost microphone) waits for
        it once released.
        """
        running = (not self.over and self.question is None
                   and self.game.deadline() is not None)
        self.clock, pause = self.clock.delay(at, until, running=running, over=self.over)
        if pause:
            self.game.apply(PauseClock(), at)

    def _hold_for_mic(self, at: float) -> None:
        """Pause the turn timer for something outside the game (a lost microphone)."""
        if self._hold_clock(at):
            self.clock = replace(self.clock, held=True)

    def _release_for_mic(self, at: float) -> list[Event]:
        """End a :meth:`_hold_for_mic`: the timer runs again with the time that
        was left (what the engine's clock did, to announce), unless the
        players paused the game meanwhile: then it stays paused."""
        events: list[Event] = []
        if self.clock.paused:
            self.clock = replace(self.clock, paused_clock=self.clock.paused_clock
                                 or self.clock.held)
        elif self.clock.held:
            events = self._restart_clock(at)
        self.clock = replace(self.clock, held=False)
        return events

    def _pause(self, pause: bool, at: float) -> tuple[list[Say], list[Event]]:
        """ "pause" / "resume": the players hold the game (the timer stands
        still); what to say, and what the engine's clock did (to announce)."""
        if self.over:
            return self._say(["The game is over."], at, Tone.PROBLEM), []
        if pause == self.clock.paused:
            state = "already paused: say resume to go on" if pause else "not paused"
            return self._say([f"The game is {state}."], at, Tone.PROBLEM), []
        self.clock = replace(self.clock, paused=pause)
        if pause:
            held = self._hold_clock(at)
            self.clock = replace(self.clock, paused_clock=held)
            words = "the timer is held. " if held else ""
            return self._say([f"Paused: {words}Say resume to go on."], at, Tone.ANNOUNCE), []
        said = self._say(["We go on."], at, Tone.ANNOUNCE)
        events = self._restart_clock(at) if self.clock.paused_clock and not self.clock.held else []
        self.clock = replace(self.clock, paused_clock=False)
        return said, events

    def _clock_of_log(self, legacy: bool) -> None:
        """A game rebuilt from a log keeps the clock it was played with."""
        self.clock = self.clock.of_log(legacy)

    def _clock_for_new_game(self, at: float) -> None:
        """A new game's clock (a rematch), keeping what the table is like."""
        self.clock = self.clock.for_new_game(self._turn_limit(at))

    def _clock_after_undo(self) -> None:
        """An undo gave a turn back its time: its marks are said again."""
        self.clock = self.clock.marks_again()
