"""Questions and confirmations: what the referee asks before it acts.

* A move the referee is not sure it heard (``sure=False``: a spoken target
  call, a low score) is confirmed first: "Ann, did you call 65?". "Undo", a
  tray correction and ending the game need another player's agreement:
  "Bob, do you agree to undo Ann flips 7?".
* No answer within :data:`~referee.wording.ANSWER_SECONDS` of the end of the
  question counts as "no".
* An answer without a known speaker is taken to come from the player asked;
  a consent must say who gives it ("Bob agrees"). Questions about the game
  are still answered; other moves wait for the answer ("First: Ann, did you
  call 65?").
* A "yes" or "no" the recogniser is unsure of (``sure=False``) answers
  nothing: the question is asked again.
* Undo takes back the last move (a flip, a call, a correction) and everything
  the clock did after it; the turn gets back the time it had left at the move.
* A no says what stands and whose turn it is, so a player who cannot see
  the table hears where the game is.
"""

from __future__ import annotations

from referee.brain.shared import Question, Shared
from referee.engine.core import ClockResumed, Rejection, StopGame
from referee.protocol import Say, Tone
from referee.records import EventRecord
from referee.speech.understanding.meaning import Intent


class Questions(Shared):
    """Yes/no questions: asking, answers, and what a yes or a no does."""

    def _ask(
        self,
        text: str,
        answerers: tuple[str, ...],
        intent: Intent,
        by: str,
        at: float,
        undo_to: int | None = None,
        consent: bool = False,
    ) -> list[Say]:
        paused = self._hold_clock(at)
        self.question = Question(text, answerers, intent, by, at + self.answer_seconds,
                                 paused, undo_to, consent)
        return self._say([text], at, Tone.QUESTION)

    def _ask_undo(self, who: str, at: float) -> list[Say]:
        if not self._moves:
            return self._say(["There is nothing to undo."], at, Tone.PROBLEM)
        depth, move = self._moves[-1]
        others = self._others(who)
        text = f"{others[0]}, do you agree to undo: {move}?"
        return self._ask(text, others, Intent("undo"), who, at, undo_to=depth, consent=True)

    def _ask_agreement(
        self, intent: Intent, what: str, who: str, at: float
    ) -> list[Say]:
        others = self._others(who)
        if intent.kind not in ("end", "leave"):
            try:  # refuse an impossible move before asking anyone
                action = self.spec.action_for(intent, who, self.game)
                self.game.rules.apply(self.game.state, action, at)
            except Rejection as rejection:
                return self._say([rejection.sentence], at, Tone.PROBLEM)
        return self._ask(f"{others[0]}, do you agree: {what}?", others, intent, who, at,
                         consent=True)

    def _answered(self, yes: bool, speaker: str | None, at: float) -> list[Say]:
        question = self.question
        assert question is not None
        if speaker is None and question.consent:
            # Nobody said who: it may be the asker, who cannot consent for another.
            name = question.answerers[0]
            return self._say([f"{name}, please say it with your name: {name} agrees, or "
                              f"{name} says no."], at, Tone.PROBLEM)
        who = self.attribute(speaker)
        if who not in question.answerers:
            return self._say([f"{question.answerers[0]} has to answer. {question.text}"],
                             at, Tone.PROBLEM)
        return self._resolve(yes, at)

    def _resolve(self, yes: bool, at: float, unanswered: bool = False) -> list[Say]:
        question = self.question
        assert question is not None
        self.question = None
        said: list[Say] = []
        intent = question.intent
        if yes and question.undo_to is not None:
            before = self.game.undo_to(question.undo_to, at)
            self._moves.pop()
            undone = [o for depth, o in self._chanced if depth > question.undo_to]
            self._chanced = [(d, o) for d, o in self._chanced if d <= question.undo_to]
            if not self._replaying:  # (a replay takes the logged outcomes as they came)
                self._undone_chance = undone + self._undone_chance
            self.clock = self.clock.marks_again()
            self._log(EventRecord(at, "Undone"))
            self._ended = self.over
            said = self._say([self.spec.undone(before, self.game)], at)
            if question.paused_clock:  # (a turn still waiting for its sentence waits on)
                said += self._events([e for e in self._restart_clock(at)
                                      if isinstance(e, ClockResumed)], at)
            return said
        if not yes:
            refused = self._refused(question, at)
            said += self._say([f"No answer, so no. {refused}" if unanswered else refused], at,
                              Tone.PROBLEM if unanswered else Tone.ANSWER)
        elif intent.kind == "rematch":
            return self._rematch(at)
        elif intent.kind == "end":
            said += self._events(self.game.apply(StopGame(), at), at)
        elif intent.kind == "leave":
            self._ended = True  # (the table leaves: nothing more to offer)
            said += self._events(self.game.apply(StopGame(), at), at)
            return said + self._leave(at)
        else:
            said += self._act(intent, question.by, at)
        if question.paused_clock:
            events = self._restart_clock(at)
            said += self._events([e for e in events if isinstance(e, ClockResumed)], at)
        return said

    def _refused(self, question: Question, at: float) -> str:
        """What a no changes: nothing, said so with what stands and whose turn it
        is (a player who cannot see the table hears where the game is)."""
        if not question.consent:  # "did you say ...?" no: the move is not played
            return "OK, not played."
        turn = "" if self.over else " " + self.spec.answer("turn", None, self.game, at)
        if question.undo_to is not None:
            return f"The move stays: {self._moves[-1][1]}.{turn}"
        if question.intent.kind in ("end", "leave", "rematch"):
            return f"The game goes on.{turn}" if not self.over else "OK."
        return f"Nothing changed.{turn}"

    def _reply(self, intent: Intent, speaker: str | None, at: float, sure: bool) -> list[Say]:
        """A yes or a no to the open question."""
        assert self.question is not None
        if not sure:  # a yes or no the referee is not sure it heard
            return self._problem(f"Sorry, was that a yes or a no? {self.question.text}", at)
        named = intent.get("player")
        if named is not None and speaker is not None and named != speaker:
            return self._problem(f"{named} has to say it.", at)
        return self._answered(intent["value"] == "yes", speaker or named, at)
