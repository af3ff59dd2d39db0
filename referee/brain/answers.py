"""Answers and the conversation's memory: what the referee says to a
question about the game and to whatever else is not a move, what "more"
reads next, whom "you" means, and whether the awaited player was already
asked to say it again.

* "repeat" says again the last thing the referee said, countdown excepted.
* An answer longer than :data:`~referee.wording.SECTION_WORDS` words (the
  rules, help) is read in sections: the first, then "Say more for the
  rest."; "more" reads the next; "That's all." once all was read; "stop"
  (the table loop) cuts a section, and "repeat" says it again.
* "help" says what to do now and names the help topics; "help with moves"
  (questions, the table) lists that topic's commands from the phrase files.
* "louder", "slower" ... are a :class:`~referee.protocol.ChangeVoice` for
  the mouth, which answers what it did (:class:`~referee.protocol.VoiceChanged`);
  the referee says that.
* At a table of more than two, "you" is the player last named by anyone,
  other than the speaker (:meth:`Answers._addressed`).
* "yes"/"no" with no open question, and "stop", are ignored when spoken
  ("yes" is common in table talk), and a typed one is told there is nothing
  to answer; "stop" is for the table loop, which cuts the referee's sentence.
* Anything else that is not a command gets a short "didn't catch that" (or
  the near-miss explanation).
"""

from __future__ import annotations

from dataclasses import replace

from referee.brain.shared import Shared
from referee.games.base import spoken_list
from referee.protocol import ChangeVoice, Say, Speech, Tone
from referee.records import SaidRecord
from referee.speech.understanding.intents import ADDRESSEE, Heard
from referee.speech.understanding.meaning import Intent
from referee.wording import (
    ALL_READ,
    ASKED_AGAIN,
    DID_NOT_CATCH,
    HELP_AFTER_THE_END,
    MORE,
    NOTHING_TO_ANSWER,
    SAY_AGAIN,
    sections,
)


class Answers(Shared):
    """Questions about the game answered, and what the conversation remembers
    (:attr:`~referee.brain.shared.Shared.memory`, a
    :class:`~referee.brain.memory.Memory` that only this room replaces)."""

    def _not_a_move(self, heard: Heard, intent: Intent, who: str, at: float,
                    typed: bool) -> list[Say] | None:
        """What is said to what is neither a table command nor a move (an
        answer to the open question was taken first): the voice changed,
        "more", a yes or a no with no question of the referee's open, what was
        not caught or is ambiguous, a question about the game. None: a
        command or a move."""
        kind = intent.kind
        if kind == "voice":
            self._out.append(ChangeVoice(at, intent["change"]))  # answered by VoiceChanged
            return []
        if kind == "more":
            return self._read_more(at)
        asked = self.spec.waiting_for(self.game, who) if kind == "answer" else None
        if asked is not None:  # the game's own question, which a yes or no cannot answer
            return self._problem(asked, at)
        if kind == "answer" and typed:  # no question open (a spoken one is table talk)
            return self._say([NOTHING_TO_ANSWER], at, Tone.ANSWER)
        if kind in ("answer", "stop"):  # no question open; "stop" is the table's
            return []
        if kind == "none":
            return self._problem(heard.message or DID_NOT_CATCH, at)
        if kind == "ambiguous":
            options = [self.spec.describe_intent(c) for c in intent.candidates]
            question = f"Did you mean {spoken_list(options).replace(' and ', ' or ')}?"
            return self._problem(f"{question} Please say it again.", at)
        if kind == "query":
            return self._answer(intent, at)
        return None

    def _answer(self, intent: Intent, at: float) -> list[Say]:
        if intent["what"] == "repeat":
            if not self.last:
                return self._say(["I haven't said anything yet."], at, Tone.ANSWER)
            for text in self.last:
                self._log(SaidRecord(at, text, Tone.ANSWER))
            return [Say(at, t, Tone.ANSWER) for t in self.last]
        if intent["what"] == "help" and self.question is not None:
            return self._say([f"Please answer yes or no. {self.question.text}"], at, Tone.ANSWER)
        secret = self.spec.answer_privately(intent, self.game)
        if secret is not None:
            said = self._say([secret[0]], at, Tone.ANSWER)
            return [*said, self._say_privately(secret[1], secret[2], at)]
        if intent["what"] == "help" and self.over and intent.get("topic") is None:
            text = HELP_AFTER_THE_END
        elif intent["what"] == "help":
            text = self.spec.help(intent.get("topic"), self.game, intent.get("player"), at)
        else:
            text = self.spec.answer_question(intent, self.game, at)
        self.memory = self.memory.answering(sections(text))
        return self._read_more(at)

    def _read_more(self, at: float) -> list[Say]:
        """The next section of a long answer ("more"); "That's all." when all was
        read, so a player who cannot see tells "done" from "not heard"."""
        self.memory, section, more = self.memory.next_section()
        if section is None:  # ("repeat" still says the last answer, not this)
            last = self.last
            said = self._say([ALL_READ], at, Tone.ANSWER)
            self._remember(last)
            return said
        return self._say([f"{section} {MORE}" if more else section], at, Tone.ANSWER)

    def _addressed(self, heard: Heard, who: str) -> tuple[Heard, str | None]:
        """``heard`` with "you" resolved, and what to say if it cannot be.

        At a table of more than two, "you" ("I give you a token", "you flip
        four up") is the player last named by anyone, in a move or a
        question, other than the speaker ("Bob, ..." names Bob). When nobody
        was named yet, or the last one named is the speaker, the referee asks
        whom they mean and nothing changes.
        """
        intent = heard.intent
        unresolved = [k for k, v in intent.slots if v == ADDRESSEE]
        if not unresolved:
            named = [v for _, v in intent.slots if v in self.players and v != who]
            if named:
                self.memory = self.memory.naming(str(named[-1]))
            return heard, None
        addressee = self.memory.named
        if addressee is None or addressee == who:
            others = spoken_list(self._others(who)).replace(" and ", " or ")
            return heard, f"Who do you mean, {others}? Please say it again with their name."
        resolved = intent.with_slots(**dict.fromkeys(unresolved, addressee))
        return replace(heard, intent=resolved), None

    def _first_prompt(self, who: str) -> bool:
        """Whether ``who`` is asked to say it again now: once a wait (the same
        turn, question and state of the game)."""
        wait = (who, self.game.depth, None if self.question is None else self.question.text)
        self.memory, first = self.memory.prompt(wait)
        return first

    def _say_again(self, m: Speech, who: str, over_voice: bool) -> None:
        """The awaited player said what looks like an attempt at a command, not
        heard well enough to ask about: "Sorry, Ann?", once a wait (the same
        turn, question and state of the game), never over the referee's voice
        (where it may be that voice's leftover). About hearing, not the game:
        said, not logged; the utterance is logged as dropped."""
        prompt = not over_voice and self._first_prompt(who)
        self._drop(m, ASKED_AGAIN if prompt else "not caught (asked once already)")
        if prompt:
            self._out.append(Say(m.at, SAY_AGAIN.format(who=who), Tone.PROBLEM))

    def _forget_talk(self) -> None:
        """A new game: no answer to read on, nobody named."""
        self.memory = self.memory.for_new_game()
