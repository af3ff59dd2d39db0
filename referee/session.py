"""The referee's brain: the conversation and the turn clock, without any clock or device.

A :class:`Session` has one entry point, :meth:`Session.step`: it is told what
happened as a typed input (:mod:`referee.protocol`: a typed line, speech as
the ears measured it, the time, a sentence said to its end, the microphone lost ...)
and answers with typed outputs (sentences to say with their tone and
audience, cut the voice, records for the game log, a snapshot of the public
state). Typed lines, scripts, the microphone, replay and resume all drive it
so, and tests drive it on a simulated clock.

The brain is split into rooms, one module each in :mod:`referee.brain`, read
one at a time. Inherited: the turn clock (``clock``), questions
(``questions``), moves, chance and undo (``moves``), answers and what the
conversation remembers (``answers``), over what they share (``shared``: the
game, saying and logging). Held as fields, each a class of its own told
what it may read: hearing (``hearing``: what the referee makes of an
utterance, a verdict), each stream's last utterance (``parts``), and what
the drivers were told (``news``). Each room changes only its own state and
calls no other room; this module hears what players say and joins the
rooms (a move, then the chance after it, then a new turn's clock; a yes,
then what it agreed to). :mod:`referee.replay` rebuilds a game from its log.

Decisions:

* An utterance without a known speaker is the awaited player's
  (:meth:`~referee.games.base.GameSpec.unnamed`); while the game waits for
  nobody in particular (Phase 10 Twist between reports) it is
  :data:`~referee.wording.SOMEONE`'s: a question about "me" is answered for
  everyone, a move is not played ("Who said that? ..."). A typed target call
  without a name is confirmed as a spoken one is
  (:meth:`~referee.games.base.GameSpec.always_confirm`).
* Empty input is ignored; input longer than :data:`~referee.wording.MAX_CHARS`
  characters is refused with a message (:meth:`~referee.brain.hearing.Hearing.read`).
  What is not a move: :meth:`~referee.brain.answers.Answers._not_a_move`.
* A question heard unsure, with a move the referee expects close behind it
  ("hint", "hit"), is asked about before it is answered (#83).

After the end the referee stays at the table
(:data:`~referee.wording.AFTER_THE_END`): it answers questions, takes an undo
by agreement, and starts a new game on "play again".

Inputs, events, sentences about the game and what became of each utterance
are logged (:class:`~referee.protocol.Logged`); :func:`~referee.replay.replay_records`
rebuilds a session from them. What is said about hearing ("Sorry, Ann?") is
not logged: a rebuilt game does not hear the speech again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import assert_never

from referee.brain.answers import Answers
from referee.brain.clock import Clock
from referee.brain.hearing import CUT, DROP, IGNORE, PROMPT, View
from referee.brain.moves import Moves
from referee.brain.parts import DROPPED, HEARD, LATE, LET_GO, Part, same_move, whole_of
from referee.brain.question import Question
from referee.brain.questions import Questions
from referee.engine.core import Event, StopGame, Timeout
from referee.protocol import (
    Caption,
    CutVoice,
    Input,
    Left,
    Logged,
    MicBack,
    MicLost,
    Output,
    Resume,
    Say,
    SoFar,
    Speech,
    SpokenUntil,
    Start,
    Stop,
    Tick,
    Tone,
    Typed,
    Understood,
    VoiceChanged,
    VoiceCut,
)
from referee.records import ErrorRecord, InputRecord
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import Intent
from referee.wording import (
    GOODBYE,
    SOMEONE,
    SORRY,
    TOO_SOON,
    TYPED_SOURCES,
    WHO_SAID,
    clean_text,
)

__all__ = ["Question", "Session"]

log = logging.getLogger(__name__)


class Session(Moves, Questions, Answers, Clock):
    """A game being refereed: the referee's brain. One entry point, :meth:`step`.

    (Its rooms are in :mod:`referee.brain`; this class hears, and joins them.)
    """

    def step(self, message: Input) -> list[Output]:
        """Take one input; the records it logged, then what to say and do.

        A bug in a step is reported ("Sorry, something went wrong ...") and
        logged, never the end of the game; rebuilding a game from a log is the
        exception: a log that does not fit must say so.
        """
        if isinstance(message, SoFar):  # (a question of the ears: nothing changes)
            return [self.hearing.so_far(message, self.attribute(message.speaker),
                                        self._expecting)]
        self._logged, self._out = [], []
        try:
            self._handle(message)
        except Exception as error:
            if isinstance(message, Start) and message.rebuild is not None:
                raise  # (a log that cannot be rebuilt says so)
            if not self.played.replaying:  # (there, the replay tells what did not fit)
                log.exception("a step of the game failed")
            self._logged.append(ErrorRecord(message.at, f"{type(error).__name__}: {error}"))
            self._out.append(Say(message.at, SORRY, Tone.PROBLEM))
        self.news = self.news.after_step(message.at, self.game.current_player())
        self.news, report = self.news.report(
            self.now, shown=self.public_state(), moments=tuple(sorted(self.moments())),
            wake=self.next_wakeup(), force=isinstance(message, Resume),
            outcome=lambda: (self.final_state(), self.results()))
        self.news, kept = self.news.logs(message.at, wake=self.next_wakeup(),
                                         idle_tick=isinstance(message, Tick) and not self._logged)
        given = [message] if kept else []
        return [*(Logged(r) for r in (*given, *self._logged)), *self._out, *report]

    def _handle(self, message: Input) -> None:
        if isinstance(message, SpokenUntil | VoiceCut | VoiceChanged | Resume):
            # (every input moves the clock to its time first: the others do it
            # in their own way, a tick left out of the log changes nothing)
            self._emit(self._tick(message.at))
        match message:
            case Tick(at=at):
                self._emit(self._tick(at))
            case Typed():
                self._typed(message)
            case Speech():
                self._speech(message)
            case Understood(at=at, heard=heard, speaker=speaker, sure=sure, source=source):
                self._emit(self._respond(heard, speaker, at, sure=sure, source=source))
            case SpokenUntil(at=at, until=until, tone=tone):
                if tone in (Tone.TURN, Tone.ANSWER):
                    self._delay_clock(at, until)
                elif tone == Tone.QUESTION:
                    self._question_spoken(at, until)
            case VoiceCut(at=at):
                self._delay_clock(at, at)
            case VoiceChanged(at=at, reply=reply):
                self._emit(self._say([reply], at, Tone.ANSWER))
            case MicLost(at=at, text=text):
                self._emit(self._tick(at))
                self._hold_for_mic(at)
                self._emit(self._problem(text, at))
            case MicBack(at=at, text=text):
                self._emit(self._tick(at) + self._say([text], at, Tone.ANNOUNCE))
                self._emit(self._events(self._release_for_mic(at), at))
            case Stop(at=at):
                self._emit(self._stop(at))
            case SoFar():
                pass  # (answered by step itself, before anything is logged)
            case Start(at=at, rebuild=rebuild, legacy_clock=legacy_clock):
                self._clock_of_log(legacy_clock)
                self._start(at, rebuild)
            case Resume(at=at):  # (neither sentence is logged: both follow from the line)
                self._replayed()
                texts = ["Resuming the game. " + self.spec.where_we_are(self.game, at),
                         self._reopened()]
                self._remember([t for t in texts if t])
                self._out += [Say(self.now, t, tone) for t, tone in
                              zip(texts, (Tone.TURN, Tone.QUESTION), strict=True) if t]
            case _:
                assert_never(message)

    # --- the rooms joined: time, a move and what follows it, a yes or a no ---------------
    def _tick(self, at: float) -> list[Say]:
        """Everything due up to ``at``: a turn's clock that starts, an
        unanswered question (a no), countdown marks, timeouts (each a move of
        the game's, with what follows it)."""
        self._resume_due(at)
        said: list[Say] = []
        if self.question is not None and self.question.deadline <= at:
            said += self._resolve(False, self.question.deadline, unanswered=True)
        while True:
            marks, deadline = self._marks(at)
            said += marks
            if deadline is None:
                break
            events = self.game.apply(Timeout(), deadline)
            said += self._after_move(events, deadline)  # a timeout may draw a card
            if self._waits_for_sentence(events):
                break  # (the next turn's clock waits for its sentence: told after this step)
        self._reach(at)
        return said

    def _start(self, at: float, rebuild: tuple[str, ...] | None) -> None:
        """The opening announcement (the first turn's clock starts after it), then
        any chance the game starts with (a deal), resolved as after a move. A
        game rebuilt from a log says nothing (:meth:`~referee.brain.moves.Moves._rebuilt`)."""
        self._reach(at)
        if rebuild is not None:
            self._rebuilt(rebuild)
            return
        said = self._say([self.spec.opening(self.game)], self.now, Tone.TURN)
        self._emit(said + self._after_move([], self.now))

    def _after_move(self, events: Sequence[Event], at: float) -> list[Say]:
        """The events of a move, then those of the chance steps that follow it,
        each turn that began with its clock, and, when the table must resolve
        the next chance step, the game's request."""
        events = [*events, *self._chance(at)]
        said = self._events(events, at)
        self._turns_began(events)
        request = self._chance_request()
        if request is not None:
            said += self._say([request], at, Tone.TURN)
            self._remember([s.text for s in said])
        return said

    def _act(self, intent: Intent, speaker: str, at: float) -> list[Say]:
        played = self._play(intent, speaker, at)
        if isinstance(played, str):
            return self._problem(played, at)
        return self._after_move(played, at)

    def _asked(self, asking: Question | str, at: float) -> list[Say]:
        """Ask a question, holding the turn timer while it is open; or say why not."""
        if isinstance(asking, str):
            return self._problem(asking, at)
        return self._ask(asking, at, paused_clock=self._hold_clock(at))

    def _command(self, intent: Intent, who: str, at: float, sure: bool) -> list[Say]:
        """The table's commands (pause, play again, that's all, undo) and
        moves: done at once, or first asked about
        (:meth:`~referee.brain.questions.Questions._asked_first`)."""
        kind = intent.kind
        if kind in ("pause", "resume"):
            said, events = self._pause(kind == "pause", at)
            return said + self._events(events, at)
        if kind == "rematch" and self.over:
            return self._rematch(at)
        if kind == "leave" and self.over:
            return self._leave_table(at)
        asking = self._asked_first(intent, who, sure, at)
        return self._act(intent, who, at) if asking is None else self._asked(asking, at)

    def _resolve(self, yes: bool, at: float, unanswered: bool = False) -> list[Say]:
        """What the answer to the open question does: a yes plays, undoes,
        starts again, ends or leaves; a no says what stands. A turn timer
        held for the question runs again."""
        question = self._close_question()
        assert question is not None
        intent = question.intent
        said: list[Say] = []
        if yes and question.undo_to is not None:
            undone = self._undo(question.undo_to, at)
            self._clock_after_undo()
            self._end_here(self.over)
            # (the turn given back waits for this sentence, as a new turn does:
            # its time was not spent listening to the referee)
            said = self._say([undone], at, Tone.TURN)
            if question.paused_clock:  # (a turn still waiting for its sentence waits on)
                said += self._events(self._restart_clock(at), at)
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
            self._end_here()  # (the table leaves: nothing more to offer)
            said += self._events(self.game.apply(StopGame(), at), at)
            return said + self._leave_table(at)
        elif intent.kind == "query":  # (asked first: heard unsure, a move close behind)
            said += self._answer(intent, at)
        else:
            said += self._act(intent, question.by, at)
        if question.paused_clock:
            said += self._events(self._restart_clock(at), at)
        return said

    def _rematch(self, at: float) -> list[Say]:
        """The same players and options start a new game, once the table has
        been told what to put back (when anything was played): every room
        begins afresh."""
        reset = self._new_game(at)
        self._end_here(False)
        self._close_question()
        self._forget_talk()
        self._clock_for_new_game(at)
        said = self._say([f"New game. {reset}".strip(), self.spec.opening(self.game)], at,
                         Tone.TURN)
        return said + self._after_move([], at)

    def _leave_table(self, at: float) -> list[Say]:
        """The table is done: the loop that drives this session ends."""
        self._leave()
        self._close_question()
        self._out.append(Left(at))
        return self._say([GOODBYE], at, Tone.ANNOUNCE)

    def _stop(self, at: float) -> list[Say]:
        """The table ends the game."""
        said = self._tick(at)
        if self.over:
            return said
        self._close_question()
        self._end_here()  # the table is leaving: no "play again" to offer
        return said + self._events(self.game.apply(StopGame(), at), at)

    # --- hearing ---------------------------------------------------------------------------
    def _typed(self, m: Typed) -> None:
        """A typed line, read by the hearing room
        (:meth:`~referee.brain.hearing.Hearing.read`): never gated (typing is
        not heard over the referee's voice); a typed "stop" cuts the voice as
        a spoken one does. A line from a seat page is its player's, typed in
        its box ("seat") or sent by tapping a button there ("tap")."""
        self._emit(self._tick(m.at))
        if not m.text.strip():
            return
        self._out.append(Caption(m.at, self.label(m.speaker), m.text, m.source))
        if self.hearing.is_stop(m.text, self.attribute(None)):
            self._out.append(CutVoice(m.at))
        text, (speaker, stranger) = clean_text(m.text), self._seat(m.speaker)
        if text and stranger is not None:
            self._emit(self._problem(stranger, m.at))
        elif text:
            heard, sure = self.hearing.read(text, self.attribute(speaker),
                                            named=speaker is not None, tap=m.source == "tap")
            log.debug("heard %r from %s: %s", text, speaker, heard)
            self._emit(self._respond(heard, speaker, m.at, sure=sure, source=m.source))

    def _speech(self, m: Speech) -> None:
        """An utterance as the ears measured it, heard by the hearing room
        (:mod:`referee.brain.hearing`: decided, read, judged against the
        referee's voice) from a view of the brain taken now; then acted on.
        Whose turn it was when the player began decides whether a move came
        too late: the table ticks the brain to then before it sends the
        speech (and to when it was decided, so that the speech comes with
        every sentence said meanwhile)."""
        self._emit(self._tick(min(m.start, m.at)))
        # (whose turn it was when the player began; for the whole of an
        # utterance heard already, when that was decided)
        part = self.streams.part_of(m, self.game.depth)
        turn_then = self.news.turn_at(m.start if part is None else part.at,
                                      now=self.game.current_player())
        self._emit(self._tick(m.at))
        who = self.attribute(m.speaker) if part is None else part.who  # (the whole: the part's)
        verdict = self.hearing.hear(m, View(who, self._expecting(who), turn_then,
                                            self.game.current_player()))
        self._out.append(verdict.judged)
        if verdict.caption is not None:
            self._out.append(Caption(m.at, self.label(m.speaker), verdict.caption, m.source))
        if verdict.action == DROP:
            self._dropped(m, verdict)
            return
        if part is not None and self._rest_of(part, verdict.heard.intent, m, verdict.sure):
            return
        moves, question = len(self.played.moves), self.question
        if verdict.action == IGNORE:
            self._dropped(m, verdict)
        elif verdict.action == CUT:
            self._out.append(CutVoice(m.at, since=m.start))
        elif verdict.action == PROMPT:
            self._say_again(m, who, over_voice=verdict.over_voice)
        else:
            self._emit(self._respond(verdict.heard, m.speaker, m.at, sure=verdict.respond_sure,
                                     source=m.source, confirm=verdict.confirm))
        self.streams.heard(m, who, verdict.heard.intent,
                           self.played.moves[-1] if len(self.played.moves) > moves else None,
                           self.question if self.question is not question else None)

    def _rest_of(self, part: Part, intent: Intent, m: Speech, sure: bool) -> bool:
        """``m`` is ``part`` heard again with its rest: True when that is all
        (:func:`~referee.brain.parts.whole_of`: dropped, and where the part's
        move was played and the whole, another, heard surely, the referee
        says it took the part's move too soon); False when it is heard as any
        utterance (where the part's question is still open, that is let go)."""
        rest = whole_of(part, intent, sure, self.question,
                        lambda: same_move(self.spec, self.game, intent, part, self.now))
        if rest == HEARD:
            return False
        if rest == LET_GO:
            question = self._close_question()
            if question is not None and question.paused_clock:
                self._emit(self._events(self._restart_clock(m.at), m.at))
            return False
        self._drop(m, DROPPED[rest])
        if rest == LATE:
            self._emit(self._problem(TOO_SOON.format(
                who=part.who, move=self.spec.describe_intent(part.intent)), m.at))
        return True

    def _respond(self, heard: Heard, speaker: str | None, at: float, *, sure: bool,
                 source: str, confirm: bool = False) -> list[Say]:
        """Act on an intent the matcher (or a recogniser) produced: whose it
        is, then an answer to the open question, what is not a move (the
        voice, "more", questions), or, with no question open, the table's
        commands and moves.

        ``speaker`` None means the input does not say who spoke (see
        :meth:`attribute`); ``sure`` False asks before acting on a move;
        ``confirm``: before answering a question too.
        """
        said = self._tick(at)
        speaker, stranger = self._seat(speaker)
        if stranger is not None:
            return said + self._problem(stranger, at)
        who = self.attribute(speaker)
        heard, unclear = self._addressed(heard, who)
        self._log(InputRecord(at, source, speaker, who, heard.text, heard.intent,
                              heard.score, sure, heard.message))
        if unclear is not None:
            return said + self._problem(unclear, at)
        intent = heard.intent
        unknown = {k: None for k, v in intent.slots if v == SOMEONE}  # "I", "my": whose?
        if unknown and intent.kind == "query":  # a question about "me": answered for everyone
            intent = intent.with_slots(**unknown)
        elif unknown:  # a move of "mine": nothing tells whose, so it is not played
            return said + self._problem(WHO_SAID, at)
        if intent.kind == "answer" and self.question is None:  # the game's own question?
            intent = self.spec.answer_move(intent, who, self.game) or intent
        if confirm and intent.kind == "query" and self.question is None:
            return said + self._asked(Question(self.spec.confirmation(intent, who), (who,),
                                               intent, who), at)
        if intent.kind == "answer" and self.question is not None:  # (answers it, or not)
            problem = self._reply_problem(intent, speaker, sure)
            if problem is not None:
                return said + self._problem(problem, at)
            return said + self._resolve(intent["value"] == "yes", at)
        not_a_move = self._not_a_move(heard, intent, who, at, source in TYPED_SOURCES)
        if not_a_move is not None:  # (the voice, "more", questions ...)
            return said + not_a_move
        if self.question is not None:
            return said + self._problem(f"First: {self.question.text}", at)
        return said + self._command(intent, who, at, sure)
