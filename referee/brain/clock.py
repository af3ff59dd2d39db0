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

from dataclasses import replace

from referee.brain.shared import Shared
from referee.engine.core import Event, PauseClock, ResumeClock, StopGame, Timeout, TurnStarted
from referee.protocol import Say, Tone
from referee.wording import mark_text

#: While something is due (a turn timer, a question), a tick is logged once
#: in this many seconds, so a resumed game gets back the time that was left.
HEARTBEAT = 1.0


class Clock(Shared):
    """The turn clock: countdown marks, timeouts, and holding the timer. Its
    state is :attr:`~referee.brain.shared.Shared.clock`, a :class:`TurnClock`."""

    def next_wakeup(self) -> float | None:
        """When the referee next has something to say if nobody speaks."""
        if self.question is not None:
            return self.question.deadline
        return self.clock.wakeup(self.game.deadline())

    def _tick(self, at: float) -> list[Say]:
        """Everything due up to ``at``: countdown marks, timeouts, unanswered questions."""
        said: list[Say] = []
        self.clock, resume_at = self.clock.resume_due(at)
        if (resume_at is not None and not self.over and self.question is None
                and self.game.deadline() is None):
            self.game.apply(ResumeClock(), resume_at)
        if self.question is not None and self.question.deadline <= at:
            said += self._resolve(False, self.question.deadline, unanswered=True)
        while not self.over and self.question is None:
            deadline = self.game.deadline()
            if deadline is None:
                break
            self.clock, due = self.clock.marks_due(deadline, at)
            for mark in due:
                said += self._say([mark_text(mark)], deadline - mark, Tone.COUNTDOWN)
            if deadline > at:
                break
            events = self.game.apply(Timeout(), deadline)
            said += self._after_move(events, deadline)  # a timeout may draw a card
            if (self.clock.told_spoken and not self.clock.legacy
                    and any(isinstance(e, TurnStarted) for e in events)):
                break  # (the next turn's clock waits for its sentence: told after this step)
        self.now = max(self.now, at)
        return said

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

    def _question_spoken(self, at: float, until: float) -> None:
        """The open question finished being said at ``until``: the answer time counts from then."""
        if self.question is None:
            return
        deadline = max(self.question.deadline, until + self.answer_seconds)
        if deadline != self.question.deadline:
            self.question = replace(self.question, deadline=deadline)

    def _hold(self, at: float, text: str) -> list[Say]:
        """Pause the turn timer for something outside the game (a lost microphone)."""
        said = self._tick(at)
        if self._hold_clock(at):
            self.clock = replace(self.clock, held=True)
        return said + self._say([text], at, Tone.PROBLEM)

    def _release(self, at: float, text: str) -> list[Say]:
        """End a :meth:`_hold`: the timer runs again with the time that was left."""
        said = self._tick(at)
        said += self._say([text], at, Tone.ANNOUNCE)
        if self.clock.paused:  # the players paused the game meanwhile: it stays paused
            self.clock = replace(self.clock, paused_clock=self.clock.paused_clock
                                 or self.clock.held)
        elif self.clock.held:
            said += self._events(self._restart_clock(at), at)
        self.clock = replace(self.clock, held=False)
        return said

    def _pause(self, pause: bool, at: float) -> list[Say]:
        """ "pause" / "resume": the players hold the game (the timer stands still)."""
        if self.over:
            return self._say(["The game is over."], at, Tone.PROBLEM)
        if pause == self.clock.paused:
            state = "already paused: say resume to go on" if pause else "not paused"
            return self._say([f"The game is {state}."], at, Tone.PROBLEM)
        self.clock = replace(self.clock, paused=pause)
        if pause:
            held = self._hold_clock(at)
            self.clock = replace(self.clock, paused_clock=held)
            words = "the timer is held. " if held else ""
            return self._say([f"Paused: {words}Say resume to go on."], at, Tone.ANNOUNCE)
        said = self._say(["We go on."], at, Tone.ANNOUNCE)
        if self.clock.paused_clock and not self.clock.held:
            said += self._events(self._restart_clock(at), at)
        self.clock = replace(self.clock, paused_clock=False)
        return said

    def _stop(self, at: float) -> list[Say]:
        """The table ends the game."""
        said = self._tick(at)
        if self.over:
            return said
        self.question = None
        self._ended = True  # the table is leaving: no "play again" to offer
        return said + self._events(self.game.apply(StopGame(), at), at)
