"""The referee's brain: the conversation and the turn clock, without any clock or device.

A :class:`Session` has one entry point, :meth:`Session.step`: it is told what
happened as a typed input (:mod:`referee.protocol`: a typed line, speech as
the ears measured it, the time, a sentence said to its end, the microphone lost ...)
and answers with typed outputs (sentences to say with their tone and
audience, cut the voice, records for the game log, a snapshot of the public
state). Typed lines, scripts, the microphone, replay and resume all drive it
so, and tests drive it on a simulated clock.

The brain is split into rooms, one module each, read one at a time:
:mod:`referee.brain.clock` keeps the turn clock, :mod:`referee.brain.questions`
asks and checks answers, :mod:`referee.brain.moves` plays moves, chance and
undo, :mod:`referee.brain.answers` answers questions about the game and
keeps what the conversation remembers, and :mod:`referee.brain.shared` holds
the game and how the referee says and logs things. Two rooms are held as
fields rather than inherited: :mod:`referee.brain.hearing` (what the
referee makes of an utterance: a verdict) and :mod:`referee.brain.parts`
(each stream's last utterance, to know it again with its rest). Each room
changes only its own state and calls no other room; this module hears what
players say and joins the rooms (a move, then the chance after it, then a new turn's
clock; a yes, then what it agreed to). :mod:`referee.replay` rebuilds a game
from its log.

Decisions:

* An utterance without a known speaker is the awaited player's
  (:meth:`~referee.games.base.GameSpec.unnamed`); while the game waits for
  nobody in particular (Phase 10 Twist between reports) it is
  :data:`~referee.wording.SOMEONE`'s: a question about "me" is answered for
  everyone, a move is not played ("Who said that? ..."). A typed target call
  without a name is confirmed as a spoken one is
  (:meth:`~referee.games.base.GameSpec.always_confirm`).
* Empty input is ignored; input longer than :data:`~referee.wording.MAX_CHARS`
  characters is refused with a message; anything else that is not a command
  gets a short "didn't catch that" (or the near-miss explanation).
* "yes"/"no" with no open question, and "stop", are ignored here when
  spoken ("yes" is common in table talk), and a typed one is told there is
  nothing to answer; "stop" is for the table loop, which cuts the referee's
  sentence. Answers, help and "repeat": :mod:`referee.brain.answers`.
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
from referee.brain.clock import HEARTBEAT, Clock
from referee.brain.hearing import CUT, DROP, IGNORE, PROMPT, Verdict, View
from referee.brain.moves import Moves
from referee.brain.parts import DROPPED, HEARD, LATE, LET_GO, Part, same_move, whole_of
from referee.brain.question import Question
from referee.brain.questions import Questions
from referee.engine.core import Event, StopGame, Timeout
from referee.games.base import spoken_list
from referee.protocol import (
    Caption,
    ChangeVoice,
    CutVoice,
    Input,
    Left,
    Logged,
    MicBack,
    MicLost,
    Moments,
    Output,
    Resume,
    Say,
    Snapshot,
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
    WakeAt,
)
from referee.records import ErrorRecord, InputRecord
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import Intent
from referee.wording import (
    ASKED_AGAIN,
    DID_NOT_CATCH,
    GOODBYE,
    NOT_MOVES,
    NOTHING_TO_ANSWER,
    SAY_AGAIN,
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
        self._turns.append((message.at, self.game.current_player()))
        self._report(force=isinstance(message, Resume))
        given = [message] if self._worth_logging(message) else []
        return [*(Logged(r) for r in (*given, *self._logged)), *self._out]

    def _worth_logging(self, message: Input) -> bool:
        """Whether the game log keeps the input: every input but a tick that
        did nothing, which is kept once a second while something is due (a
        resumed game gets back the time that was left within a second)."""
        if isinstance(message, Tick) and not self._logged and (
                self.next_wakeup() is None or message.at < self._beat + HEARTBEAT):
            return False
        self._beat = message.at
        return True

    def _report(self, force: bool) -> None:
        """What a driver needs to know after a step, each when it changed (all
        of it on :class:`~referee.protocol.Resume`: a new table): the public
        state and the result, what can be said now, and when to tick next."""
        shown = self.public_state()
        if force or shown != self._shown:  # (a tick that restarts the clock logs nothing)
            # (the result changes only with what everyone sees: it is read then)
            self._shown = shown
            self._out.append(Snapshot(self.now, shown, self.final_state(), self.results()))
        moments = tuple(sorted(self.moments()))
        if force or moments != self._moments:
            self._moments = moments
            self._out.append(Moments(self.now, moments))
        wake = self.next_wakeup()
        if force or wake != self._wake:
            self._wake = wake
            self._out.append(WakeAt(self.now, wake))

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
        """The table's commands (pause, play again, that's all, undo) and moves:
        asked about first when another player must agree, when the words make
        a likelier move read another way, or when not heard surely."""
        kind = intent.kind
        if kind in ("pause", "resume"):
            said, events = self._pause(kind == "pause", at)
            return said + self._events(events, at)
        if kind == "rematch" and self.over:
            return self._rematch(at)
        if kind == "leave" and self.over:
            return self._leave_table(at)
        if kind == "leave":
            return self._asked(self._agreement_asking(intent, "end the game", who, at), at)
        others = self._others(who)
        if kind == "rematch":
            return self._asked(Question(f"{others[0]}, do you agree to start a new game?",
                                        others, intent, who, consent=True), at)
        if self.clock.paused and kind not in NOT_MOVES:
            return self._problem("The game is paused: say resume to go on.", at)
        if kind == "undo":
            return self._asked(self._undo_asking(who), at)
        agreement = self.spec.agreement(intent)
        if agreement is not None:
            return self._asked(self._agreement_asking(intent, agreement, who, at), at)
        likelier = None if kind in NOT_MOVES else self.spec.likelier(intent, who, self.game, at)
        if likelier is not None:  # the words read another way make the move: ask
            return self._asked(Question(self.spec.confirmation(likelier, who), (who,),
                                        likelier, who), at)
        if not sure and kind not in NOT_MOVES:
            refused = self._refusal(intent, who, at)
            if refused is not None:  # (refused either way: no question to block the table)
                return self._say([refused], at, Tone.PROBLEM)
            return self._asked(Question(self.spec.confirmation(intent, who), (who,), intent,
                                        who), at)
        return self._act(intent, who, at)

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
        """A typed line: never gated (typing is not heard over the referee's voice);
        a typed "stop" cuts the voice as a spoken one does."""
        self._emit(self._tick(m.at))
        if not m.text.strip():
            return
        self._out.append(Caption(m.at, self.label(m.speaker), m.text, m.source))
        if self.hearing.is_stop(m.text, self.attribute(None)):
            self._out.append(CutVoice(m.at))
        self._emit(self._hear(m.text, m.speaker, m.at, m.source))

    def _hear(self, text: str, speaker: str | None, at: float,
              source: str = "text") -> list[Say]:
        """React to one typed line ``text`` by ``speaker`` (None: unknown),
        read by the hearing room (:meth:`~referee.brain.hearing.Hearing.read`).
        A line from a seat page is its player's, typed in its box ("seat")
        or sent by tapping a button there ("tap")."""
        text = clean_text(text)
        if not text:
            return []
        speaker, stranger = self._seat(speaker)
        if stranger is not None:
            return self._problem(stranger, at)
        heard, sure = self.hearing.read(text, self.attribute(speaker), named=speaker is not None,
                                        tap=source == "tap")
        log.debug("heard %r from %s: %s", text, speaker, heard)
        return self._respond(heard, speaker, at, sure=sure, source=source)

    def _speech(self, m: Speech) -> None:
        """An utterance as the ears measured it, heard by the hearing room
        (:mod:`referee.brain.hearing`: decided, read, judged against the
        referee's voice) from a view of the brain taken now; then acted on.
        Whose turn it was when the player began decides whether a move came
        too late: the table ticks the brain to then before it sends the
        speech (and to when it was decided, so that the speech comes with
        every sentence said meanwhile)."""
        self._emit(self._tick(min(m.start, m.at)))
        # (the latest step told of a time no later than the start, or for the
        # whole of an utterance heard already, than that was decided; of two,
        # the later told)
        part = self.streams.part_of(m, self.game.depth)
        began = m.start if part is None else part.at
        then = max(((at, i, turn) for i, (at, turn) in enumerate(self._turns) if at <= began),
                   default=None)
        turn_then = self.game.current_player() if then is None else then[2]
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

    def _dropped(self, m: Speech, verdict: Verdict) -> None:
        """``m`` is not acted on: logged, and what the referee says about
        hearing said (not logged: it is not the game's)."""
        self._drop(m, verdict.dropped or "")
        if verdict.notice is not None:
            self._out.append(Say(m.at, verdict.notice, Tone.PROBLEM))

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

    def _respond(self, heard: Heard, speaker: str | None, at: float, *, sure: bool,
                 source: str, confirm: bool = False) -> list[Say]:
        """Act on an intent the matcher (or a recogniser) produced.

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
        return said + self._talk(heard, intent, speaker, who, at, sure,
                                 typed=source in TYPED_SOURCES)

    def _talk(self, heard: Heard, intent: Intent, speaker: str | None, who: str, at: float,
              sure: bool, typed: bool = False) -> list[Say]:
        """What is not a move: the voice, "more", answers, what was not caught,
        questions; then, with no question open, the table's commands and moves."""
        kind = intent.kind
        if kind == "voice":
            self._out.append(ChangeVoice(at, intent["change"]))  # answered by VoiceChanged
            return []
        if kind == "more":
            return self._read_more(at)
        if kind == "answer" and self.question is not None:
            problem = self._reply_problem(intent, speaker, sure)
            if problem is not None:
                return self._problem(problem, at)
            return self._resolve(intent["value"] == "yes", at)
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
        if self.question is not None:
            return self._problem(f"First: {self.question.text}", at)
        return self._command(intent, who, at, sure)
