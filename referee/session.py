"""The referee's brain: the conversation and the turn clock, without any clock or device.

A :class:`Session` has one entry point, :meth:`Session.step`: it is told what
happened as a typed input (:mod:`referee.protocol`: a typed line, speech the
gate judged, the time, a sentence said to its end, the microphone lost ...)
and answers with typed outputs (sentences to say with their tone and
audience, cut the voice, records for the game log, a snapshot of the public
state). Typed lines, scripts, the microphone, replay and resume all drive it
so, and tests drive it on a simulated clock.

Decisions:

* An utterance without a known speaker is attributed to the player the game
  waits for (:meth:`~referee.games.base.GameSpec.unnamed`). When the game
  waits for nobody in particular (Phase 10 Twist between reports, turns not
  kept), it is :data:`SOMEONE`'s: a question about "me" is answered for
  everyone, and a move is not played: "Who said that? ...". A typed target
  call without a name is confirmed as a spoken one is
  (:meth:`~referee.games.base.GameSpec.always_confirm`): "I call sixty-five"
  typed for Bob on Ann's turn would otherwise cost Ann her tray.
* Countdown marks, in seconds left: half the turn (when more than 10), 10
  (when the turn is longer), then 5, 4, 3, 2, 1. The deadline itself applies the
  engine's timeout.
* "repeat" says again the last thing the referee said, countdown excepted.
* Empty input is ignored; input longer than :data:`MAX_CHARS` characters is
  refused with a message; anything else that is not a command gets a short
  "didn't catch that" (or the near-miss explanation).

Conversation (yes/no questions):

* A move the referee is not sure it heard (``sure=False``: a spoken target
  call, a low score) is confirmed first: "Ann, did you call 65?". "Undo", a
  tray correction and ending the game need another player's agreement:
  "Bob, do you agree to undo Ann flips 7?".
* While a question is open the turn timer is paused; it resumes with the
  time that was left. No answer within :data:`ANSWER_SECONDS` of the end of
  the question counts as "no".
* An answer without a known speaker is taken to come from the player asked.
  Questions about the game are still answered; other moves wait for the
  answer ("First: Ann, did you call 65?").
* "yes"/"no" with no open question, and "stop", are ignored here when
  spoken ("yes" is common in table talk), and a typed one is told there is
  nothing to answer; "stop" is for the table loop, which cuts the referee's
  sentence. A "yes" or "no" the
  recogniser is unsure of (``sure=False``) answers nothing: the question is
  asked again.
* Undo takes back the last move (a flip, a call, a correction) and everything
  the clock did after it; the turn gets back the time it had left at the move.

The table's own commands:

* "pause" holds the turn timer until "resume"; while paused, questions are
  answered and moves are refused ("The game is paused: say resume to go on").
* An answer longer than :data:`SECTION_WORDS` words (the rules, help) is read
  in sections: the first, then "Say more for the rest."; "more" reads the
  next. "stop" cuts a section; "repeat" says the last section again.
* "help" says what to do now and names the help topics; "help with moves"
  (questions, the table) lists that topic's commands from the phrase files.
* "louder", "slower" ... are a :class:`~referee.protocol.ChangeVoice` for
  the mouth, which answers what it did (:class:`~referee.protocol.VoiceChanged`);
  the referee says that.
* "new game" / "rematch": the same players and options start again, at once
  when the game is over, else once another player agrees; the referee first
  says what to put back on the table ("Everyone, flip all your tiles back
  up.": :meth:`~referee.games.base.GameSpec.reset`).

After the end (someone won, or the table agreed to end it) the referee stays
at the table: it says so (:data:`AFTER_THE_END`), answers questions, takes an
undo by agreement (the game goes on from before the move), and starts a new
game on "play again". "That's all" (or "we're done", "goodbye") leaves:
:attr:`Session.left` tells the table loop to end. Said during a game, it asks
another player to agree to end the game, then leaves.

Every input, event and sentence is logged (a :class:`~referee.protocol.Logged`
output of the step it happens in); :func:`replay_records` rebuilds a session
from those records. What the referee says about hearing rather than the game
("Sorry, I was talking", "I wasn't speaking") is said, not logged: a rebuilt
game does not hear the speech again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from referee.engine.core import (
    ClockResumed,
    Event,
    PauseClock,
    Rejection,
    ResumeClock,
    StopGame,
    Timeout,
    TurnStarted,
)
from referee.gamelog import (
    AskedRecord,
    ChanceRecord,
    DelayRecord,
    DroppedRecord,
    ErrorRecord,
    EventRecord,
    HoldRecord,
    InputRecord,
    Record,
    ReleaseRecord,
    SaidRecord,
    StopRecord,
)
from referee.games.base import GameSpec, spoken_list
from referee.protocol import (
    Caption,
    ChangeVoice,
    CutVoice,
    Input,
    Logged,
    MicBack,
    MicLost,
    Output,
    Replayed,
    Resume,
    Say,
    Skipped,
    Snapshot,
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
from referee.speech.understanding.intents import ADDRESSEE, FLOOR, Heard, IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.wording import (
    ADDRESSED,
    AFTER_THE_END,
    ALL_READ,
    ANSWER_SECONDS,
    DID_NOT_CATCH,
    GOODBYE,
    HELP_AFTER_THE_END,
    MAX_CHANCE_STEPS,
    MAX_CHARS,
    MORE,
    NOT_CAUGHT,
    NOT_MOVES,
    NOTHING_TO_ANSWER,
    SOMEONE,
    SORRY,
    SURE_SCORE,
    TOO_LONG,
    TYPED_SOURCES,
    WHO_SAID,
    clean_text,
    countdown_marks,
    mark_text,
    sections,
)

log = logging.getLogger(__name__)

#: How far past a log's last record its replay runs the clock (seconds): the
#: log keeps times to the millisecond, and a deadline is a sum of a few of them.
REPLAY_SLACK = 0.0025

@dataclass(frozen=True)
class Question:
    """A yes/no question the referee is waiting on."""

    text: str
    #: Who may answer: the player asked first, then any other listed.
    answerers: tuple[str, ...]
    #: The intent to carry out on "yes".
    intent: Intent
    #: Who made the request (the speaker of the intent).
    by: str
    deadline: float
    paused_clock: bool
    #: For undo: the stack depth to return to.
    undo_to: int | None = None
    #: Another player's consent (undo, agreements): a yes must say who gives it
    #: (a seat microphone, "Bob: yes" typed, or "Bob agrees").
    consent: bool = False


class Session:
    """A game being refereed: the referee's brain. One entry point, :meth:`step`."""

    def __init__(
        self,
        spec: GameSpec,
        *,
        at: float = 0.0,
        matcher: IntentMatcher | None = None,
        answer_seconds: float = ANSWER_SECONDS,
    ) -> None:
        self.spec = spec
        self.game = spec.begin(at)
        self.matcher = matcher or IntentMatcher.for_phrases(spec.phrase_file, spec.players)
        self.now = at
        #: What "repeat" says again.
        self.last: list[str] = []
        self.question: Question | None = None
        self.answer_seconds = answer_seconds
        self._turn_limit: float | None = None
        self._fired: set[float] = set()
        #: (stack depth before the move, what the move was), oldest first.
        self._moves: list[tuple[int, str]] = []
        self._held = False
        self._resume_at: float | None = None
        #: The player last named (see :meth:`_addressed`).
        self._named: str | None = None
        #: Outcomes of chance steps read from a log being replayed, oldest first.
        self._replayed_chance: list[str] = []
        #: Event records of the log being replayed, so far.
        self._replayed_events = 0
        #: The sections of a long answer not read yet ("more").
        self._more: list[str] = []
        #: The players paused the game ("pause"); the clock was running then.
        self._paused = False
        self._paused_clock = False
        #: The end of the game was announced, with :data:`AFTER_THE_END`.
        self._ended = False
        #: The table said it is done ("that's all"): the table loop ends.
        self.left = False
        #: Events this session has logged (a replay compares it with the log's).
        self.events_logged = 0
        #: What this step logged, and what else it does, in order.
        self._logged: list[Record] = []
        self._out: list[Output] = []
        self._shown: dict[str, Any] | None = None
        deadline = self.game.deadline()
        if deadline is not None:
            self._turn_limit = deadline - at

    @property
    def players(self) -> tuple[str, ...]:
        return self.game.players

    @property
    def over(self) -> bool:
        return self.game.is_over()

    def moments(self) -> frozenset[str]:
        """What can be said now besides the sentences of any time (the game's
        :meth:`~referee.games.base.GameSpec.moments`); none once the game is over."""
        return frozenset() if self.over else self.spec.moments(self.game)

    # --- the one entry point -----------------------------------------------------------
    def step(self, message: Input) -> list[Output]:
        """Take one input; the records it logged, then what to say and do.

        A bug in a step is reported ("Sorry, something went wrong ...") and
        logged, never the end of the game; rebuilding a game from a log is the
        exception: a log that does not fit must say so.
        """
        self._logged, self._out = [], []
        try:
            self._handle(message)
        except Exception:
            if isinstance(message, Replayed | Start):
                raise
            log.exception("a step of the game failed")
            self._logged.append(ErrorRecord(message.at))
            self._out.append(Say(message.at, SORRY, Tone.PROBLEM))
        shown = self.public_state()
        if shown != self._shown:  # (a tick that restarts the clock logs nothing)
            self._shown = shown
            self._out.append(Snapshot(self.now, shown))
        return [*(Logged(r) for r in self._logged), *self._out]

    def _handle(self, message: Input) -> None:
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
                self._emit(self._hold(at, text))
            case MicBack(at=at, text=text):
                self._emit(self._release(at, text))
            case Stop(at=at):
                self._emit(self._stop(at))
            case Start(at=at, rebuild=rebuild):
                self._start(at, rebuild)
            case Resume(at=at):
                text = "Resuming the game. " + self.spec.where_we_are(self.game, at)
                self.last = [text]
                self._out.append(Say(self.now, text, Tone.TURN))
            case Replayed(record=record):
                self._replayed(record)

    def _emit(self, said: Sequence[Say]) -> None:
        self._out.extend(said)

    def _log(self, record: Record) -> None:
        if isinstance(record, EventRecord):
            self.events_logged += 1
        self._logged.append(record)

    def public_state(self) -> dict[str, Any]:
        """What everyone at the table may know now (a screen shows it): the
        game's own state (:meth:`~referee.games.base.GameSpec.public_state`),
        whose turn it is, when it runs out, the open question, and the moves
        each player could make now (as sentences, for seat pages)."""
        return {
            "players": list(self.players),
            "turn": None if self.over else self.game.current_player(),
            "deadline": self.game.deadline(),
            "question": None if self.question is None else self.question.text,
            "paused": self._paused,
            "over": self.over,
            "game": self.spec.public_state(self.game),
            "moves": {p: [] if self.over else self.spec.moves_now(self.game, p)
                      for p in self.players},
        }

    # --- what the referee says ------------------------------------------------------
    def _say(self, texts: Sequence[str], at: float, tone: Tone = Tone.ANNOUNCE) -> list[Say]:
        said = [Say(at, t, tone) for t in texts if t]
        if said and tone != Tone.COUNTDOWN:
            self.last = [s.text for s in said]
        for s in said:
            self._log(SaidRecord(at, s.text, tone))
        return said

    def _problem(self, text: str, at: float) -> list[Say]:
        return self._say([text], at, Tone.PROBLEM)

    def _events(self, events: Sequence[Event], at: float) -> list[Say]:
        said: list[Say] = []
        for event in events:
            self._log(EventRecord.of(event, at))
            tone = Tone.ANNOUNCE
            if isinstance(event, TurnStarted):
                self._fired = set()
                self._turn_limit = event.seconds
                tone = Tone.TURN
            said += self._say([self.spec.announce(event, self.game)], at, tone)
            secret = self.spec.private(event, self.game)
            if secret is not None:
                said.append(self._say_privately(*secret, at))
        if self.over and not self._ended:
            self._ended = True
            said += self._say([AFTER_THE_END], at, Tone.TURN)
        if said:
            self.last = [s.text for s in said if s.to is None]
        return said

    def _say_privately(self, player: str, text: str, at: float) -> Say:
        """A sentence for one player's ears only (a virtual Twist card): never
        repeated aloud by "repeat"."""
        self._log(SaidRecord(at, text, Tone.PRIVATE, player))
        return Say(at, text, Tone.PRIVATE, player)

    def _start(self, at: float, rebuild: tuple[str, ...] | None) -> None:
        """The opening announcement (the first turn's clock starts after it), then
        any chance the game starts with (a deal), resolved as after a move. A
        game rebuilt from a log says nothing: its chance steps take the logged
        outcomes (``rebuild``), so resume repeats what was said."""
        self.now = max(self.now, at)
        if rebuild is not None:
            self._replayed_chance = list(rebuild)
            # What the game started with (a deal): logged as events when it started.
            self.events_logged += len(self._chance(self.now))
            return
        said = self._say([self.spec.opening(self.game)], self.now, Tone.TURN)
        self._emit(said + self._after_move([], self.now))

    # --- the clock ---------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        """When the referee next has something to say if nobody speaks."""
        if self.question is not None:
            return self.question.deadline
        if self._resume_at is not None:
            return self._resume_at
        deadline = self.game.deadline()
        if deadline is None:
            return None
        pending = [deadline - m for m in countdown_marks(self._turn_limit) if m not in self._fired]
        return min([*pending, deadline])

    def _tick(self, at: float) -> list[Say]:
        """Everything due up to ``at``: countdown marks, timeouts, unanswered questions."""
        said: list[Say] = []
        if self._resume_at is not None and self._resume_at <= at:
            resume_at, self._resume_at = self._resume_at, None
            if not self.over and self.question is None and self.game.deadline() is None:
                self.game.apply(ResumeClock(), resume_at)
        if self.question is not None and self.question.deadline <= at:
            said += self._resolve(False, self.question.deadline, unanswered=True)
        while not self.over and self.question is None:
            deadline = self.game.deadline()
            if deadline is None:
                break
            due = [
                m for m in countdown_marks(self._turn_limit)
                if m not in self._fired and deadline - m <= at
            ]
            for mark in due:
                self._fired.add(mark)
                said += self._say([mark_text(mark)], deadline - mark, Tone.COUNTDOWN)
            if deadline > at:
                break
            events = self.game.apply(Timeout(), deadline)
            said += self._after_move(events, deadline)  # a timeout may draw a card
        self.now = max(self.now, at)
        return said

    # --- what players say -----------------------------------------------------------------
    def _typed(self, m: Typed) -> None:
        """A typed line: never gated (typing is not heard over the referee's voice);
        a typed "stop" cuts the voice as a spoken one does."""
        self._emit(self._tick(m.at))
        if not m.text.strip():
            return
        self._out.append(Caption(m.at, self.label(m.speaker), m.text, m.source))
        if self._is_stop(m.text):
            self._out.append(CutVoice(m.at))
        self._emit(self._hear(m.text, m.speaker, m.at, m.source))

    def _hear(self, text: str, speaker: str | None, at: float,
              source: str = "text") -> list[Say]:
        """React to one typed utterance ``text`` by ``speaker`` (None: unknown).
        A line from a seat page is its player's; one sent by tapping a
        button there (``source`` "tap") is asked about first when it ends a
        turn or the game (:meth:`~referee.games.base.GameSpec.confirm_tap`):
        one tap is easily a slip. A line typed in the page's box ("seat") is
        taken as typed."""
        text = clean_text(text)
        if not text:
            return []
        speaker, stranger = self._seat(speaker)
        if stranger is not None:
            return self._problem(stranger, at)
        if len(text) > MAX_CHARS:
            # Logged as an input like any other (its start only), with the answer
            # it got, so that replay and resume say the same and warn of nothing.
            heard = Heard(text[:MAX_CHARS] + "...", Intent("none"), 0.0, TOO_LONG)
            return self._respond(heard, speaker, at, sure=False, source=source)
        heard = self.matcher.match(text, self.attribute(speaker))
        log.debug("heard %r from %s: %s", text, speaker, heard)
        sure = self.is_sure(heard, named=speaker is not None) and not (
            source == "tap" and self.spec.confirm_tap(heard.intent))
        return self._respond(heard, speaker, at, sure=sure, source=source)

    def _speech(self, m: Speech) -> None:
        """An utterance the gate has judged (:mod:`referee.gate`). What is
        dropped is logged, and the player told when it was theirs ("Sorry, I
        was talking"); what is not nearly a command (table talk, a cough) is
        logged and not answered, unless it was addressed to the referee."""
        self._emit(self._tick(m.at))
        heard, verdict = m.heard, m.verdict
        if verdict.dropped is not None:
            self._drop(m, verdict.dropped)
            if verdict.notice is not None:  # (about hearing, not the game: not logged)
                self._out.append(Say(m.at, verdict.notice, Tone.PROBLEM))
            return
        if heard.kind != "none" or m.transcript:
            self._out.append(Caption(m.at, self.label(m.speaker), m.transcript or "...",
                                     m.source))
        if heard.kind == "stop":
            self._out.append(CutVoice(m.at, since=m.start))
            return
        if heard.kind == "none" and not heard.message and heard.score < FLOOR:
            self._drop(m, "not a command")
            if ADDRESSED.match(m.transcript):
                self._out.append(Say(m.at, NOT_CAUGHT, Tone.PROBLEM))
            return
        # Said over the referee's voice: never a sure move, whatever the score.
        sure = self.is_sure(heard, named=False) and not verdict.over_voice
        self._emit(self._respond(heard, m.speaker, m.at, sure=sure, source=m.source))

    def _drop(self, m: Speech, reason: str) -> None:
        log.info("not acted on: %r (%s)", m.transcript, reason)
        self._log(DroppedRecord(m.at, m.source, m.speaker, m.transcript, reason))

    def is_sure(self, heard: Heard, *, named: bool) -> bool:
        """Whether a move heard so is played at once rather than asked about
        first: the matcher's score is high enough, and it is not a move the
        game always confirms (a call that costs a tray) unless a typed line
        named who made it. The one rule for typed and spoken input (a spoken
        move never names its player in words the referee can trust)."""
        return heard.score >= SURE_SCORE and (
            named or not self.spec.always_confirm(heard.intent))

    def _seat(self, speaker: str | None) -> tuple[str | None, str | None]:
        """The player ``speaker`` names, as written at the table ("ann" is Ann),
        and what to say when nobody of that name plays (a script's typo): then
        nothing is done."""
        if speaker is None or speaker in self.players:
            return speaker, None
        match = [p for p in self.players if p.casefold() == speaker.strip().casefold()]
        if match:
            return match[0], None
        names = spoken_list(self.players)
        return None, f"{clean_text(speaker)[:30]} is not playing: the players are {names}."

    def attribute(self, speaker: str | None) -> str:
        """Who said something when the input does not say: the player asked, else
        the one the game waits for, else :data:`SOMEONE`."""
        if speaker is not None:
            return speaker
        if self.question is not None:
            return self.question.answerers[0]
        if self.over:
            return self.players[0]
        return self.spec.unnamed(self.game) or SOMEONE

    def _is_stop(self, text: str) -> bool:
        return self.matcher.match(clean_text(text)[:MAX_CHARS],
                                  self.attribute(None)).kind == "stop"

    def label(self, speaker: str | None) -> str:
        """The name to print for what ``speaker`` said ("someone" when nothing tells)."""
        who = self.attribute(speaker)
        return "someone" if who == SOMEONE else who

    def _respond(self, heard: Heard, speaker: str | None, at: float, *, sure: bool,
                 source: str) -> list[Say]:
        """Act on an intent the matcher (or a recogniser) produced.

        ``speaker`` None means the input does not say who spoke (see
        :meth:`attribute`); ``sure`` False asks before acting on a move.
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
            return self._reply(intent, speaker, at, sure)
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

    def _reply(self, intent: Intent, speaker: str | None, at: float, sure: bool) -> list[Say]:
        """A yes or a no to the open question."""
        assert self.question is not None
        if not sure:  # a yes or no the referee is not sure it heard
            return self._problem(f"Sorry, was that a yes or a no? {self.question.text}", at)
        named = intent.get("player")
        if named is not None and speaker is not None and named != speaker:
            return self._problem(f"{named} has to say it.", at)
        return self._answered(intent["value"] == "yes", speaker or named, at)

    def _command(self, intent: Intent, who: str, at: float, sure: bool) -> list[Say]:
        """The table's commands (pause, play again, that's all, undo) and moves:
        asked about first when another player must agree, when the words make
        a likelier move read another way, or when not heard surely."""
        kind = intent.kind
        if kind in ("pause", "resume"):
            return self._pause(kind == "pause", at)
        if kind == "rematch" and self.over:
            return self._rematch(at)
        if kind == "leave" and self.over:
            return self._leave(at)
        if kind == "leave":
            return self._ask_agreement(intent, "end the game", who, at)
        if kind == "rematch":
            return self._ask(f"{self._others(who)[0]}, do you agree to start a new game?",
                             self._others(who), intent, who, at, consent=True)
        if self._paused and kind not in NOT_MOVES:
            return self._problem("The game is paused: say resume to go on.", at)
        if kind == "undo":
            return self._ask_undo(who, at)
        agreement = self.spec.agreement(intent)
        if agreement is not None:
            return self._ask_agreement(intent, agreement, who, at)
        likelier = None if kind in NOT_MOVES else self.spec.likelier(intent, who, self.game, at)
        if likelier is not None:  # the words read another way make the move: ask
            return self._ask(self.spec.confirmation(likelier, who), (who,), likelier, who, at)
        if not sure and kind not in NOT_MOVES:
            return self._ask(self.spec.confirmation(intent, who), (who,), intent, who, at)
        return self._act(intent, who, at)

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
                self._named = str(named[-1])
            return heard, None
        if self._named is None or self._named == who:
            others = spoken_list(self._others(who)).replace(" and ", " or ")
            return heard, f"Who do you mean, {others}? Please say it again with their name."
        resolved = intent.with_slots(**dict.fromkeys(unresolved, self._named))
        return replace(heard, intent=resolved), None

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
        self._more = sections(text)
        return self._read_more(at)

    def _read_more(self, at: float) -> list[Say]:
        """The next section of a long answer ("more"); "That's all." when all was
        read, so a player who cannot see tells "done" from "not heard"."""
        if not self._more:  # ("repeat" still says the last answer, not this)
            last = self.last
            said = self._say([ALL_READ], at, Tone.ANSWER)
            self.last = last
            return said
        section = self._more.pop(0)
        return self._say([f"{section} {MORE}" if self._more else section], at, Tone.ANSWER)

    def _pause(self, pause: bool, at: float) -> list[Say]:
        """ "pause" / "resume": the players hold the game (the timer stands still)."""
        if self.over:
            return self._say(["The game is over."], at, Tone.PROBLEM)
        if pause == self._paused:
            state = "already paused: say resume to go on" if pause else "not paused"
            return self._say([f"The game is {state}."], at, Tone.PROBLEM)
        self._paused = pause
        if pause:
            self._paused_clock = self._hold_clock(at)
            held = "the timer is held. " if self._paused_clock else ""
            return self._say([f"Paused: {held}Say resume to go on."], at, Tone.ANNOUNCE)
        said = self._say(["We go on."], at, Tone.ANNOUNCE)
        if self._paused_clock and not self._held:
            said += self._events(self._restart_clock(at), at)
        self._paused_clock = False
        return said

    def _rematch(self, at: float) -> list[Say]:
        """The same players and options start a new game, once the table has
        been told what to put back (when anything was played)."""
        reset = self.spec.reset(self.game) if self._moves or self.over else ""
        self.game = self.spec.begin(at)
        self._ended = False
        self.question = None
        self._moves, self._fired, self._more = [], set(), []
        self._resume_at, self._paused, self._paused_clock, self._named = None, False, False, None
        deadline = self.game.deadline()
        self._turn_limit = None if deadline is None else deadline - at
        self._log(EventRecord(at, "NewGame"))
        said = self._say([f"New game. {reset}".strip(), self.spec.opening(self.game)], at,
                         Tone.TURN)
        return said + self._after_move([], at)

    def _leave(self, at: float) -> list[Say]:
        """The table is done: the loop that drives this session ends."""
        self.left = True
        self.question = None
        return self._say([GOODBYE], at, Tone.ANNOUNCE)

    def _act(self, intent: Intent, speaker: str, at: float) -> list[Say]:
        if self.over and intent.kind not in NOT_MOVES:
            return self._say(["The game is over. Say play again for a new game."],
                             at, Tone.PROBLEM)
        try:
            action = self.spec.action_for(intent, speaker, self.game)
            depth = self.game.depth
            events = self.game.apply(action, at)
        except Rejection as rejection:
            return self._say([rejection.sentence], at, Tone.PROBLEM)
        self._moves.append((depth, self.game.describe(action)))
        return self._after_move(events, at)

    def _after_move(self, events: Sequence[Event], at: float) -> list[Say]:
        """The events of a move, then those of the chance steps that follow it,
        and, when the table must resolve the next one, the game's request
        ("Ann, draw from the bank and tell me how many")."""
        events = [*events, *self._chance(at)]
        said = self._events(events, at)
        waiting = None if self.over else self.game.chance()
        if waiting is not None:
            said += self._say([self.spec.ask_chance(waiting, self.game)], at, Tone.TURN)
            self.last = [s.text for s in said]
        return said

    def _chance(self, at: float) -> list[Event]:
        """Resolve the chance steps the game waits for, one after another (a roll;
        three forced draws in a row), while the referee holds the dice or the deck
        (:meth:`~referee.games.base.GameSpec.draw`); a step the table resolves
        waits for the players' report. Each outcome is logged; when a log is
        replayed the logged outcome is applied, so resume repeats what was said."""
        events: list[Event] = []
        for _ in range(MAX_CHANCE_STEPS):
            chance = self.game.chance()
            if chance is None:
                break
            outcome = self.spec.draw(chance, self.game)  # drawn even on replay: same sequence
            if self._replayed_chance:
                logged = self._replayed_chance.pop(0)
                outcome = next((a for a, _ in chance.outcomes
                                if self.game.describe(a) == logged), outcome)
            if outcome is None:
                break
            self._log(ChanceRecord(at, chance.name, self.game.describe(outcome)))
            events += self.game.apply(outcome, at)
        return events

    # --- questions ----------------------------------------------------------------------
    def _others(self, who: str) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != who) or (who,)

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
            self._fired = set()
            self._log(EventRecord(at, "Undone"))
            self._ended = self.over
            return self._say([self.spec.undone(before, self.game)], at)
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

    def _hold_clock(self, at: float) -> bool:
        """Stop the turn timer, running or about to start once the referee has
        spoken; whether there was one to stop."""
        if self.over:
            return False
        if self.game.deadline() is not None:
            self.game.apply(PauseClock(), at)
            return True
        if self._resume_at is not None:  # the turn's clock had not started yet
            self._resume_at = None
            return True
        return False

    def _restart_clock(self, at: float) -> list[Event]:
        """Start a held turn timer again, with the time it had left."""
        if self.over or self.game.deadline() is not None:
            return []
        return self.game.apply(ResumeClock(), at)

    def _delay_clock(self, at: float, until: float) -> None:
        """Hold the turn timer from ``at`` until ``until``, while the referee talks.

        The table says when it has said a new turn or an answer
        (:class:`~referee.protocol.SpokenUntil`), so a player's time is never
        spent listening to the referee.
        Called again while a delay is on, it moves the delay's end (``until``
        <= ``at`` ends it now: the referee was cut short).
        """
        if self._resume_at is not None:
            self._log(DelayRecord(at, round(until, 3)))
            self._resume_at = max(at, until)
            return
        if self.over or self.question is not None or self.game.deadline() is None:
            return
        if until <= at:
            return
        self._log(DelayRecord(at, round(until, 3)))
        self.game.apply(PauseClock(), at)
        self._resume_at = until

    def _question_spoken(self, at: float, until: float) -> None:
        """The open question finished being said at ``until``: the answer time counts from then."""
        if self.question is None:
            return
        deadline = max(self.question.deadline, until + self.answer_seconds)
        if deadline != self.question.deadline:
            self._log(AskedRecord(at, round(until, 3)))
            self.question = replace(self.question, deadline=deadline)

    # hold, release and stop first run the clock up to ``at`` (as hear and
    # respond do): whatever fell due before them happened before them, whether
    # the table loop had ticked by then or a log is being replayed.

    def _hold(self, at: float, text: str) -> list[Say]:
        """Pause the turn timer for something outside the game (a lost microphone)."""
        said = self._tick(at)
        self._log(HoldRecord(at, text))
        if self._hold_clock(at):
            self._held = True
        return said + self._say([text], at, Tone.PROBLEM)

    def _release(self, at: float, text: str) -> list[Say]:
        """End a :meth:`hold`: the timer runs again with the time that was left."""
        said = self._tick(at)
        self._log(ReleaseRecord(at, text))
        said += self._say([text], at, Tone.ANNOUNCE)
        if self._paused:  # the players paused the game meanwhile: it stays paused
            self._paused_clock = self._paused_clock or self._held
        elif self._held:
            said += self._events(self._restart_clock(at), at)
        self._held = False
        return said

    def _stop(self, at: float) -> list[Say]:
        """The table ends the game."""
        said = self._tick(at)
        if self.over:
            return said
        self._log(StopRecord(at))
        self.question = None
        self._ended = True  # the table is leaving: no "play again" to offer
        return said + self._events(self.game.apply(StopGame(), at), at)

    def final_state(self) -> dict[str, Any]:
        return self.spec.final_state(self.game)



    # --- a game rebuilt from its log ------------------------------------------------------
    def _replayed(self, record: Record) -> None:
        """One logged record, replayed at its logged time, so the state, the
        timer and any open question come back exactly. An input the game
        cannot take (an intent edited by hand: no tile in a flip) changes
        nothing and is reported as :class:`~referee.protocol.Skipped`."""
        at = record.at
        match record:
            case EventRecord():
                # An event the rebuilt game has not made yet can only be the
                # clock's (a timeout): its deadline, rebuilt from times rounded to
                # the millisecond, may fall a hair after the logged time. Run the
                # clock that far, before any later record acts on the timer.
                self._replayed_events += 1
                if self.events_logged < self._replayed_events:
                    self._emit(self._tick(at + REPLAY_SLACK))
            case InputRecord():
                before = self.game.depth
                try:
                    self._emit(self._respond(
                        Heard(record.text, record.intent, record.score, record.message),
                        record.speaker, at, sure=record.sure, source=record.source))
                except (KeyError, TypeError, ValueError, AttributeError) as error:
                    if self.game.depth != before:
                        raise
                    self._out.append(Skipped(at, f"the input at {at:g} s ({record.text!r}) "
                                                 f"does not fit the game "
                                                 f"({type(error).__name__}: {error})"))
            case StopRecord():
                self._emit(self._stop(at))
            case AskedRecord():
                self._emit(self._tick(at))  # (the table loop had run the clock up to now)
                self._question_spoken(at, record.until)
            case DelayRecord():
                self._emit(self._tick(at))
                self._delay_clock(at, record.until)
            case HoldRecord():
                self._emit(self._hold(at, record.text))
            case ReleaseRecord():
                self._emit(self._release(at, record.text))
