"""The referee at the table: the ears and the mouth around the brain, on one timeline.

A :class:`Table` joins the brain (a :class:`~referee.protocol.Brain`, as
:class:`~referee.session.Session` is: rules and conversation), a recogniser (the
ears) and a voice with an output (the mouth). It sends the brain typed inputs
(:mod:`referee.protocol`) and performs what comes back: it prints and speaks
each sentence, cuts the voice, changes it, appends records to the game log. It
knows when the referee is speaking, because every sentence is rendered before it
is played, and uses that for:

* **What was sounding** when a player spoke: the brain judges speech heard
  while the referee talks with the gate (:mod:`referee.gate`: its echo, said
  over it, a reply within its sentence, too late); the table tells it which
  sentences were sounding, and the room.
* **Countdown.** The referee never starts a countdown word while a player is
  speaking (it skips it), nor late (:data:`LATE_COUNTDOWN`).
* **Stop** cuts the current sentence and everything queued after it; when
  there was nothing to cut the referee says it was not speaking.
* **Turn clock.** When a sentence that holds the clock (a new turn, an
  answer) or a question has been said, the table tells the brain when it
  ended (:class:`~referee.protocol.SpokenUntil`), so listening never costs a
  player time. With no voice (printing only, for a screen reader or a deaf
  table) the same holds for reading: each printed sentence takes the time it
  takes to read at ``reading_wpm`` words a minute (:data:`READING_WPM` in
  live play).

Time is whatever the caller says it is: :class:`~referee.audioscript.AudioScript`
drives a table on a simulated clock from timed WAV files; :mod:`referee.live`
drives it from the microphone and the wall clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.gate import ECHO_SLACK, overlapping
from referee.listening import Listening
from referee.protocol import (
    Brain,
    Caption,
    ChangeVoice,
    CutVoice,
    Entry,
    Input,
    Judged,
    Logged,
    Moments,
    Output,
    Room,
    Say,
    SoFar,
    Speech,
    Spoken,
    SpokenUntil,
    Start,
    Tick,
    Tone,
    Typed,
    VoiceChanged,
    VoiceCut,
    expected,
)
from referee.report import Report, Reported
from referee.speech.audio import Audio
from referee.speech.hearing.interface import OverVoice, Recognizer, Stream, Transcript
from referee.speech.listen import Listener
from referee.speech.speaking.tts import NullOutput, SilentVoice, Voice
from referee.speech.speaking.tts import Output as AudioOutput
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import Intent
from referee.wording import NOT_SPEAKING, sentences

log = logging.getLogger(__name__)

#: A countdown mark that cannot be said within this many seconds is not said.
LATE_COUNTDOWN = 0.5
#: How long after a sentence ends its sound may still reach the microphone
#: (output and input buffers, the room).
ECHO_TAIL = 0.5
#: Words a minute a player reads (or a screen reader says) the printed referee
#: at, when it has no voice: a little slower than speech, so that the clock
#: never runs while a slow reader is still on the answer.
READING_WPM = 160.0
#: Tones whose end the brain is told of (the clock waits for them).
TIMED = (Tone.TURN, Tone.ANSWER, Tone.QUESTION)


@dataclass(frozen=True)
class Mouth:
    """How the table speaks: its voice and output (none: it prints only),
    each player's own output (headphones) for what only they may hear, and
    what hears each rendered sentence back (an audio script's echo)."""

    voice: Voice | None = None
    output: AudioOutput | None = None
    private: Mapping[str, AudioOutput] = field(default_factory=dict)
    #: Without a voice, printed sentences hold the clock as if read at this
    #: speed (None: they take no time, as in tests of the clock itself).
    reading_wpm: float | None = None
    heard_back: Callable[[Audio, Spoken], None] | None = None


@dataclass(frozen=True)
class Reports:
    """Where the table reports what happens: printed lines (``show``, with
    the time stamped or not), the game log's records (a step's at once:
    :meth:`~referee.gamelog.GameLog.write_all`; None: no log), and the
    table's screen (each output as it is carried out, and in how many seconds)."""

    show: Callable[[str], None] = print
    stamp: bool = True
    record: Callable[[Sequence[Entry]], None] | None = None
    screen: Callable[[Output, float], None] | None = None


class Table(Reported):
    """One game at one table: the brain (told inputs only), the ears (a
    recogniser), the mouth, the room it listens in (:class:`~referee.protocol.Room`)
    and where it reports."""

    def __init__(
        self,
        session: Brain,
        *,
        recognizer: Recognizer | None = None,
        mouth: Mouth | None = None,
        room: Room | None = None,
        reports: Reports | None = None,
        at: float = 0.0,
    ) -> None:
        mouth, reports = mouth or Mouth(), reports or Reports()
        #: The brain: only ever told inputs (:meth:`tell`); what the table knows
        #: of the game comes from its outputs.
        self.session: Brain = session
        #: Game time: the latest input the brain was told.
        self.now = at
        #: What the brain's outputs said of the game: its public state and result,
        #: when to tick it next, and whether the table left ("that's all").
        self.report = Report()
        self.reading_wpm = mouth.reading_wpm
        #: When the player will have read what was printed so far.
        self.read_until = at
        self.recognizer = recognizer
        # Decodes ahead at pauses, judging the words with a matcher of its own.
        self.listener = None if recognizer is None else Listener.judging(recognizer)
        # (the table microphone's: its speaker is whom the referee waits for)
        self.listening = Listening(self.listener, self.speaking_now, self.expects)
        self.voice = mouth.voice or SilentVoice()
        self.output = mouth.output or NullOutput()
        self.private = dict(mouth.private)
        self.heard_back = mouth.heard_back
        self.show = reports.show
        self.stamp = reports.stamp
        self.record = reports.record
        self.screen = reports.screen
        self.room = room or Room()
        #: When a player is speaking (start, end), as far as the listener knows.
        self._talking: tuple[float, float] | None = None
        #: Sentences spoken or being spoken, oldest first (kept short).
        self.spoken: list[Spoken] = []
        self.busy_until = at
        #: What the brain made of each utterance heard (:class:`~referee.protocol.Judged`).
        self.heard: list[Judged] = []
        self._voice_failed = False

    @property
    def wake_at(self) -> float | None:
        """When the brain is next to be ticked (None: nothing is due)."""
        return self.report.wake

    @property
    def players(self) -> tuple[str, ...]:
        """The players, in the order the game seats them."""
        return tuple(self.state.get("players", ()))


    # --- talking to the brain ---------------------------------------------------------
    def tell(self, message: Input) -> list[Output]:
        """Send the brain one input and carry out what it answers (returned too)."""
        self.now = max(self.now, message.at)
        outputs = self.session.step(message)
        self.perform(outputs)
        return outputs

    def perform(self, outputs: Iterable[Output]) -> None:
        """Carry out one step's outputs. What they say of the game is taken in
        first, and only then are sentences said: saying one may step the brain
        again (the sentence ended: :class:`~referee.protocol.SpokenUntil`), and
        what that newer step reports must not be overwritten by this older one
        (a stale wake-up time kept the live loop spinning)."""
        outputs = list(outputs)
        if self.record is not None:  # the step's records at once, before anything is said
            records = [out.record for out in outputs if isinstance(out, Logged)]
            if records:
                self.record(records)
        for out in outputs:
            if self.screen is not None and not isinstance(out, Say):
                self.screen(out, 0.0)  # (a sentence is shown as it is said)
            self._learn(out)
        for out in outputs:
            match out:
                case Say():
                    self.say([out])
                case CutVoice(at=at, since=since):
                    self._stop(at, since)
                case ChangeVoice(at=at, change=change):
                    self.tell(VoiceChanged(at, self.voice.adjust(change)))
                case Caption():
                    self.caption(out)

    def results(self) -> tuple[dict[str, Any], ...]:
        """The result of each game of the evening that was played, in order
        (``--json`` prints a line for each)."""
        return self.report.results

    def _learn(self, out: Output) -> None:
        """What an output tells the table of the game (folded into
        :attr:`report`, as every driver folds it), and what it does here."""
        self.report = self.report.learn(out)
        match out:
            case Moments(moments=moments) if self.recognizer is not None:
                self.recognizer.follow(frozenset(moments))  # what can be said now
            case Judged():
                self.heard.append(out)

    def caption(self, caption: Caption) -> None:
        """Print what a player said, as the referee took it: a seat page's line
        as it came ("Ann (seat page): flip my 7"), speech as heard ("Ann: (flip
        my seven)"), from a microphone of the player's own with what it was
        ("Ann (satellite): (flip my seven)"); a typed line is on the screen
        already."""
        at, who, text = caption.at, caption.who, caption.text
        if caption.source in ("seat", "tap"):
            self._print(at, f"{who} (seat page): {text}")
        elif caption.source in ("phone", "satellite", "seat mic"):
            self._print(at, f"{who} ({caption.source}): ({text})")
        elif caption.source != "text":
            self._print(at, f"{who}: ({text})")

    def private_line(self, said: Say) -> str:
        """What is printed for a sentence to one player alone: where it went."""
        where = (f"in {said.to}'s headphones" if said.to in self.private
                 else f"on {said.to}'s seat page" if self.screen is not None else "nowhere")
        return f"referee, to {said.to} only: (said {where})"

    def _print(self, at: float, line: str) -> None:
        self.show(f"[{at:.1f}] {line}" if self.stamp else line)

    # --- speaking -------------------------------------------------------------------
    def say(self, saids: Iterable[Say], show: bool = True) -> None:
        """Print and speak each sentence, one after the other.

        Each sentence is rendered and played before the next one is rendered,
        so the first word of a long answer comes as soon as its first sentence
        is ready. When one that holds the clock has been said (a new turn, an
        answer, a question), the brain is told when it ended.
        """
        for said in saids:
            if said.to is not None:
                self._say_privately(said, show)
                continue
            start = max(said.at, self.busy_until)
            if said.tone == Tone.COUNTDOWN and (
                start - said.at > LATE_COUNTDOWN or self._player_talking(start)
            ):
                continue  # stale, or a player is talking: never a wrong time, never over them
            if show:  # (False: already printed, e.g. a start-up problem)
                self.show(f"[{said.at:.1f}] referee: {said.text}" if self.stamp else said.text)
            if self.screen is not None:  # when its sound starts
                self.screen(said, max(0.0, start - self.now))
            end = self._speak(said, start)
            if end is None and show:  # (a start-up problem, printed already, is no turn's)
                end = self._read(said)
            if end is not None and said.tone in TIMED:
                self.tell(SpokenUntil(said.at, end, said.tone))

    def _speak(self, said: Say, start: float) -> float | None:
        """Render and play ``said`` a sentence at a time from ``start``; when it ends."""
        end = None
        for sentence in sentences(said.text):
            audio = self._render(sentence)
            if audio is None or audio.seconds == 0:
                continue
            spoken = Spoken(sentence, start, start + audio.seconds, said.tone)
            self.busy_until = start = end = spoken.end
            self.spoken = [s for s in self.spoken if s.end > start - 30.0] + [spoken]
            self.output.play(audio, sentence, spoken.start)
            if self.heard_back is not None:
                self.heard_back(audio, spoken)
        return end

    def _read(self, said: Say) -> float | None:
        """When a sentence printed without a voice will have been read (None:
        reading takes no time here)."""
        if self.reading_wpm is None or said.tone == Tone.COUNTDOWN:
            return None
        start = max(said.at, self.read_until)
        self.read_until = start + len(said.text.split()) * 60.0 / self.reading_wpm
        return self.read_until

    def _say_privately(self, said: Say, show: bool) -> None:
        """A sentence for one player's headphones: not printed on the shared
        screen, not heard by the room's microphone, not in the way of the
        referee's voice."""
        if self.screen is not None:
            self.screen(said, 0.0)  # (on that player's seat page only)
        if show:
            self._print(said.at, self.private_line(said))
        output = self.private.get(str(said.to))
        if output is None:
            return
        for sentence in sentences(said.text):
            audio = self._render(sentence)
            if audio is not None and audio.seconds > 0:
                output.play(audio, sentence, said.at)

    def player_talking(self, start: float | None, end: float = float("inf")) -> None:
        """A player talks from ``start`` to ``end`` (None: nobody now), as far as
        the listener knows: no countdown word is started over them."""
        self._talking = None if start is None else (start, end)

    def _player_talking(self, at: float) -> bool:
        """A player talks at ``at``, or starts to within :data:`ECHO_SLACK` (known ahead
        only on a simulated clock)."""
        return (self._talking is not None
                and self._talking[0] - ECHO_SLACK <= at <= self._talking[1])

    def _render(self, text: str) -> Audio | None:
        if self._voice_failed:
            return None
        try:
            return self.voice.render(text)
        except Exception as error:  # a voice that breaks mid-game: go on printing
            self._voice_failed = True
            self.show(f"referee: the voice stopped working ({error}); printing only from now on.")
            return None

    def speaking(self, start: float, end: float) -> tuple[Spoken, ...]:
        """The referee's sentences whose sound overlaps ``start..end``.

        A sentence is heard until ``echo_tail`` after it ends: from a real
        speaker the sound reaches the microphone a little late (the live loop
        uses :data:`ECHO_TAIL`; on a simulated clock the echo is exact).
        """
        return overlapping(self.spoken, start, end, self.room.echo_tail)

    def _stop(self, at: float, since: float | None) -> None:
        """ "stop": cut the voice; when there was nothing to cut (not since
        ``since``, when given), say so."""
        if self.busy_until > at:
            self.cut(at)
        elif since is None or not self.speaking(since, at):
            self.say([Say(at, NOT_SPEAKING, Tone.ANSWER)])

    def cut(self, at: float) -> None:
        """Stop talking now ("stop")."""
        self.output.cut(at)
        self.spoken = [s if s.end <= at else replace(s, end=at)
                       for s in self.spoken if s.start < at]
        self.busy_until = min(self.busy_until, at)
        self.tell(VoiceCut(at))

    # --- the clock ----------------------------------------------------------------------
    def advance(self, at: float) -> None:
        """Say everything due by ``at`` (countdown, timeouts, unanswered questions)."""
        self.tell(Tick(at))

    def start(self) -> None:
        self.tell(Start(self.now))

    # --- listening ----------------------------------------------------------------------
    def hear_audio(
        self, audio: Audio, start: float, end: float, at: float,
        speaker: str | None = None, source: str = "mic", over: OverVoice | None = None,
        cancels_echo: bool | None = None, listener: Listener | None = None,
    ) -> Judged:
        """One utterance from ``start`` to ``end``, decided on ``at`` (after the end
        silence); ``over``: what the microphone measured of it against the
        referee's voice, if that played; ``cancels_echo``: whether the echo
        canceller had learnt the room when it began (None: as the table was set up);
        ``listener``: the one that decoded it ahead (a phone's own), else the table's."""
        transcript, start = self.decoded(audio, start, end, (source, speaker), over, listener)
        return self.hear_transcript(transcript, start, end, at, speaker, source, over,
                                    cancels_echo)

    def decoded(self, audio: Audio, start: float, end: float, stream: Stream = ("mic", None),
                over: OverVoice | None = None,
                listener: Listener | None = None) -> tuple[Transcript, float]:
        """What the recogniser heard in an utterance from ``start`` to ``end``,
        and where it began: with the one before it from the same stream
        (:attr:`~referee.protocol.Speech.stream`: its source and seat) when it
        is that one's rest, the two heard again as one and told as beginning
        where the first began (:meth:`~referee.speech.listen.Listener.whole`:
        "flip my seven ... down"). Every stream passes here, whatever drives
        the table (the live loop, an audio script, a test)."""
        transcript = self.transcribe(audio, over, listener)
        ears = listener or self.listener
        whole = None if ears is None else ears.whole(audio, start, end, transcript, stream)
        return (transcript, start) if whole is None else whole

    def transcribe(self, audio: Audio, over: OverVoice | None = None,
                   listener: Listener | None = None) -> Transcript:
        """What the recogniser heard in an utterance (see :meth:`hear_audio`)."""
        if self.listener is None:
            raise RuntimeError("this table has no recogniser")
        return (listener or self.listener).transcript(audio, over=over is not None)

    def speaking_now(self) -> bool:
        """Whether the referee is talking (a "stop" would cut it)."""
        return self.busy_until > self.now

    def expects(self, text: str, speaker: str | None = None) -> bool | None:
        """Whether the brain expects these words, said so far by ``speaker``
        (None: the table's microphone), now (:class:`~referee.protocol.SoFar`:
        a question that changes nothing)."""
        return expected(self.session, SoFar(self.now, text, speaker))

    def hear_transcript(
        self, transcript: Transcript, start: float, end: float, at: float,
        speaker: str | None, source: str, over: OverVoice | None = None,
        cancels_echo: bool | None = None,
    ) -> Judged:
        """Tell the brain what was heard, with what the table knows of it: the
        referee's sentences sounding then, and the room. The brain understands
        and judges it (:class:`~referee.protocol.Judged`). When something fell
        due meanwhile (:attr:`wake_at`), the clock is run to when the player
        began, then to now, first: it is said (and sounds over the utterance)
        before the brain judges it."""
        if self.wake_at is not None and self.wake_at <= at:  # something fell due
            self.advance(min(start, at))  # (whose turn it was when the player began)
            self.advance(at)
        room = self.room if cancels_echo is None else replace(self.room,
                                                               cancels_echo=cancels_echo)
        outputs = self.tell(Speech(at, start, end, speaker, source, transcript,
                                   self.speaking(start, end), over, room))
        judged = next((o for o in outputs if isinstance(o, Judged)), None)
        if judged is None:  # the step failed, and said so ("Sorry, something went wrong")
            return Judged(at, speaker, Heard(transcript.text, Intent("none"), 0.0),
                          transcript.text, "the step failed")
        return judged

    def hear_text(self, text: str, speaker: str | None, at: float, source: str = "text") -> None:
        """A typed line (always acted on: typing is not subject to the gate);
        ``source`` "seat" or "tap" for one sent from a seat page (typed, tapped)."""
        self.tell(Typed(at, text, speaker, source))
