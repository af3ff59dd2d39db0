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

from dataclasses import replace

from referee.brain.question import Question
from referee.brain.shared import Shared
from referee.protocol import Say, Tone
from referee.speech.understanding.meaning import Intent
from referee.wording import NOT_MOVES


class Questions(Shared):
    """Yes/no questions: what to ask, asking, and whether an answer counts.
    What a yes or a no then does is the session's (it plays, undoes, ends)."""

    def _ask(self, asking: Question, at: float, paused_clock: bool) -> list[Say]:
        """Open the question (``paused_clock``: the turn timer was held for it)."""
        self.question = replace(asking, deadline=at + self.answer_seconds,
                                paused_clock=paused_clock)
        return self._say([asking.text], at, Tone.QUESTION)

    def _asked_first(self, intent: Intent, who: str, sure: bool,
                     at: float) -> Question | str | None:
        """What is asked before a table command or a move is done: another
        player's agreement (to end the game or start a new one, to undo, to
        what the game says needs it), whether the words meant a likelier move
        read another way, or whether a move heard unsurely was heard right;
        or why it is refused now (the game is paused; a move heard unsurely
        that the rules refuse either way: no question to block the table).
        None: it is done at once."""
        kind = intent.kind
        if kind == "leave":
            return self._agreement_asking(intent, "end the game", who, at)
        if kind == "rematch":
            others = self._others(who)
            return Question(f"{others[0]}, do you agree to start a new game?", others, intent,
                            who, consent=True)
        if self.clock.paused and kind not in NOT_MOVES:
            return "The game is paused: say resume to go on."
        if kind == "undo":
            return self._undo_asking(who)
        agreement = self.spec.agreement(intent)
        if agreement is not None:
            return self._agreement_asking(intent, agreement, who, at)
        if kind in NOT_MOVES:
            return None
        likelier = self.spec.likelier(intent, who, self.game, at)
        if likelier is not None:  # the words read another way make the move: ask
            return Question(self.spec.confirmation(likelier, who), (who,), likelier, who)
        if sure:
            return None
        refused = self._refusal(intent, who, at)
        return refused if refused is not None else Question(
            self.spec.confirmation(intent, who), (who,), intent, who)

    def _undo_asking(self, who: str) -> Question | str:
        """Another player's agreement to undo the last move, or why there is none."""
        if not self.played.moves:
            return "There is nothing to undo."
        depth, move = self.played.moves[-1]
        others = self._others(who)
        return Question(f"{others[0]}, do you agree to undo: {move}?", others, Intent("undo"),
                        who, undo_to=depth, consent=True)

    def _agreement_asking(self, intent: Intent, what: str, who: str, at: float) -> Question | str:
        """Another player's agreement to ``what``, or the rules' refusal of a
        move that could not be played anyway (asked of nobody)."""
        others = self._others(who)
        refused = None if intent.kind in ("end", "leave") else self._refusal(intent, who, at)
        if refused is not None:  # refuse an impossible move before asking anyone
            return refused
        return Question(f"{others[0]}, do you agree: {what}?", others, intent, who, consent=True)

    def _reply_problem(self, intent: Intent, speaker: str | None, sure: bool) -> str | None:
        """What is wrong with a yes or a no to the open question (None: it
        answers it): not heard surely, said for another, a consent without a
        name, or not one asked."""
        question = self.question
        assert question is not None
        if not sure:  # a yes or no the referee is not sure it heard
            return f"Sorry, was that a yes or a no? {question.text}"
        named = intent.get("player")
        if named is not None and speaker is not None and named != speaker:
            return f"{named} has to say it."
        speaker = speaker or named
        if speaker is None and question.consent:
            # Nobody said who: it may be the asker, who cannot consent for another.
            name = question.answerers[0]
            return f"{name}, please say it with your name: {name} agrees, or {name} says no."
        if self.attribute(speaker) not in question.answerers:
            return f"{question.answerers[0]} has to answer. {question.text}"
        return None

    def _close_question(self) -> Question | None:
        """The open question, answered (or let go): none is open any more."""
        question, self.question = self.question, None
        return question

    def _question_spoken(self, at: float, until: float) -> None:
        """The open question finished being said at ``until``: the answer time counts from then."""
        if self.question is None:
            return
        deadline = max(self.question.deadline, until + self.answer_seconds)
        if deadline != self.question.deadline:
            self.question = replace(self.question, deadline=deadline)

    def _reopened(self) -> str:
        """A resumed game asks its open question again, with its whole time to
        answer (counted, as always, from the end of its sentence): its words
        ("" when none was open)."""
        if self.question is None:
            return ""
        self.question = replace(self.question, deadline=self.now + self.answer_seconds)
        return self.question.text

    def _refused(self, question: Question, at: float) -> str:
        """What a no changes: nothing, said so with what stands and whose turn it
        is (a player who cannot see the table hears where the game is)."""
        if question.intent.kind == "query":  # (a question heard unsure, asked about)
            return "OK."
        if not question.consent:  # "did you say ...?" no: the move is not played
            return "OK, not played."
        turn = "" if self.over else " " + self.spec.answer("turn", None, self.game, at)
        if question.undo_to is not None:
            return f"The move stays: {self.played.moves[-1][1]}.{turn}"
        if question.intent.kind in ("end", "leave", "rematch"):
            return f"The game goes on.{turn}" if not self.over else "OK."
        return f"Nothing changed.{turn}"
