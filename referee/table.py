"""The referee at the table: ears, brain and voice on one timeline.

A :class:`Table` joins a :class:`~referee.session.Session` (the rules and the
conversation), a recogniser (the ears) and a voice with an output (the
mouth). It knows when the referee is speaking, because every sentence is
rendered before it is played, and uses that to keep the referee from acting
on its own voice:

* **Gate.** Without an echo canceller, an utterance that overlaps the
  referee's speech is acted on only if it is a *barge-in*: "stop",
  "repeat", or a call of the target
  (:meth:`~referee.games.base.GameSpec.barge_in`); everything else heard
  while the referee talks is dropped (and logged as such). A command that
  went on after the referee's voice died away (which its echo cannot) was a
  player's: "Sorry, I was talking: say it again." With one (live
  games with speakers: :mod:`referee.speech.hearing.echo`), players may
  speak over the referee and are heard; either way a move said over the
  referee's voice is never sure: the referee asks before playing it. Over
  its voice it takes only what it heard clearly (score >= 0.9): an unsure
  hearing there is too often what the canceller left of that voice.
* **Echo.** A barge-in whose words are mostly words the referee is saying at
  that moment ("Ann, did you call 65?" heard back as "Ann calls 65") is taken
  for the referee's own voice and dropped, unless the echo canceller shows a
  player over it; words in the very order the referee says them are its echo
  whatever the canceller shows (it fares worse on some sentences than others).
  With seat microphones, speech over the referee heard alike at every seat is
  its voice: a player is loudest at their own seat. A player who repeats the
  referee's very words over it is lost too; they can say it again.
* **Countdown.** Players may talk over the countdown ("Five.", "Four." ...):
  it is their own time running out. The referee never starts a countdown
  word while a player is speaking (it skips it), so an utterance that starts
  and ends with a countdown word (give or take 0.3 s) is its echo, whatever
  the recogniser made of it ("10 seconds" heard as "two"), and is dropped.
* **Stop** cuts the current sentence and everything queued after it.
* **Turn clock.** A new turn's timer starts when the referee has finished
  saying whose turn it is, and it stands still while the referee answers a
  question ("read my board"), so listening never costs a player time. With
  no voice (printing only, for a screen reader or a deaf table) the same
  holds for reading: each printed sentence takes the time it takes to read
  at ``reading_wpm`` words a minute (:data:`READING_WPM` in live play).

A spoken move is played at once only when it was heard surely (score >= 0.9)
and its game does not ask to confirm it anyway
(:meth:`~referee.games.base.GameSpec.always_confirm`: Race to 65 confirms
spoken calls); otherwise the referee asks first. Typed moves are sure.

Time is whatever the caller says it is: :func:`run_audio_script` drives a
table on a simulated clock from timed WAV files; :mod:`referee.live` drives it
from the microphone and the wall clock.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rapidfuzz.distance import LCSseq

from referee.gamelog import DroppedRecord, ErrorRecord
from referee.session import (
    NOT_MOVES,
    NOT_SPEAKING,
    SURE_SCORE,
    Said,
    Session,
    sentences,
)
from referee.speech.audio import Audio, AudioError, load_wav
from referee.speech.hearing.mic import DEFAULT_END_SILENCE, URGENT, OverVoice
from referee.speech.hearing.recognizers import Recognizer, Transcript
from referee.speech.listen import Listener, understand
from referee.speech.speaking.tts import NullOutput, Output, SilentVoice, Voice
from referee.speech.understanding.intents import FLOOR, Heard
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import normalise_words

log = logging.getLogger(__name__)

#: Share of a barge-in's words found in the referee's sentence that makes it an echo.
ECHO_SHARE = 0.5
#: A countdown mark that cannot be said within this many seconds is not said.
LATE_COUNTDOWN = 0.5
#: How long after a sentence ends its sound may still reach the microphone
#: (output and input buffers, the room).
ECHO_TAIL = 0.5
#: Share of an utterance's words that, in the order the referee is saying
#: them, make it the referee's echo whatever the microphone measured ("Bob,
#: did you call 65?" heard back as "call sixty five"): a recogniser hears a
#: voice's words in order; a player's command over it ("flip my three" over
#: "Ann, 3 down. One more flip.") shares a word or two, seldom in order.
ECHO_ORDER = 0.66
#: Over the referee's voice, an utterance that stands less than this far above
#: what the echo canceller leaves of the referee's voice alone (dB; see
#: :attr:`~referee.speech.hearing.mic.OverVoice.after_echo_db`) is that
#: leftover, not a player: a player 12 dB quieter than the echo stands about
#: 8 dB above it, as loud as the echo about 17 dB. A canceller that fares worse
#: on one sentence than on the ones before (its reference late on a busy
#: machine) leaves up to about 12 dB more: with seat microphones, the seats say
#: more (:data:`SEAT_DB`).
NEAR_END_DB = 5.0
#: With seat microphones, an utterance over the referee's voice whose seat
#: stands less than this far above the others beyond where the referee's voice
#: puts it (dB; :attr:`~referee.speech.hearing.mic.OverVoice.seat_db`) is that
#: voice, heard alike at every seat (measured: 0-1.5 dB; a player at their own
#: seat far more).
SEAT_DB = 6.0
#: Words a minute a player reads (or a screen reader says) the printed referee
#: at, when it has no voice: a little slower than speech, so that the clock
#: never runs while a slow reader is still on the answer.
READING_WPM = 160.0
#: Seconds around a countdown word within which an utterance is its echo.
ECHO_SLACK = 0.3
#: Why a command said over the referee (no echo canceller) is dropped, and what
#: the referee says when a player clearly said it (it went on after the voice).
SPOKE_OVER = "the referee was speaking"
TALKING = "Sorry, I was talking: say it again."
#: Why an unsure hearing over the referee's voice (echo cancelled) is dropped:
#: what the canceller leaves of that voice can pass for a player and sound like
#: words ("Ann against Bob" in the opening came back as "play again", heard at
#: 0.75, 5.7 dB above the leftover while the canceller was still learning the
#: room). Heard clearly, the same words are a player's, and a move is asked
#: about; a player whose unsure words went on after the referee's voice hears
#: :data:`TALKING` and says them again.
UNCLEAR_OVER = "unclear over the referee's voice"
#: Words addressed to the referee that are not a command.
NOT_CAUGHT = "Sorry, I didn't catch that."
ADDRESSED = re.compile(r"^\W*(?:(?:hey|ok|okay|so|um|uh)\W+)?referee\b", re.IGNORECASE)
#: Replies to what the referee says, dropped when heard within its own sentence:
#: it invites them ("Say more for the rest.", "... or that's all to finish."),
#: so its own voice must not be taken for them. ("play again" is not one: over
#: the referee, clearly heard, it is a player's, and it only asks or starts a
#: new game; leaving would end the program.)
REPLIES = ("answer", "more", "leave")
WITHIN = "a reply within the referee's own sentence"
ECHO = "echo of the referee's own voice"
#: Why a move begun in one player's turn and ended in the next one's is dropped.
LATE = "begun before the turn ran out"


def content_words(text: str) -> list[str]:
    """Words for echo comparison: numbers as digits, plural/possessive s dropped.

    >>> content_words("Ann calls sixty-five!")
    ['ann', 'call', '65']
    """
    words = join_numbers(normalise_words(text))
    return [re.sub(r"(?<=[a-z]{3})'?s$", "", w) for w in words]


@dataclass(frozen=True)
class Spoken:
    """A sentence the referee is saying, from ``start`` to ``end``."""

    text: str
    start: float
    end: float
    kind: str = "announce"


@dataclass(frozen=True)
class Hearing:
    """What the table made of one utterance (for printing and tests)."""

    at: float
    speaker: str | None
    heard: Heard
    transcript: str
    #: Why it was not acted on, or None.
    dropped: str | None = None


class Table:
    """One game at one table."""

    def __init__(
        self,
        session: Session,
        *,
        recognizer: Recognizer | None = None,
        voice: Voice | None = None,
        output: Output | None = None,
        show: Callable[[str], None] = print,
        stamp: bool = True,
        gate: bool = True,
        echo_tail: float = 0.0,
        cancels_echo: bool = False,
        private: Mapping[str, Output] | None = None,
        reading_wpm: float | None = None,
    ) -> None:
        self.session = session
        #: Without a voice, printed sentences hold the clock as if read at this
        #: speed (None: they take no time, as in tests of the clock itself).
        self.reading_wpm = reading_wpm
        #: When the player will have read what was printed so far.
        self.read_until = session.now
        self.recognizer = recognizer
        if recognizer is not None:  # it listens for what can be said at this moment
            recognizer.moments = session.moments
        self.listener = (Listener(recognizer, session.matcher) if recognizer is not None
                         else None)
        self.voice = voice or SilentVoice()
        session.adjust_voice = self.voice.adjust  # "louder", "slower" ...
        self.output = output or NullOutput()
        #: Each player's own output (headphones) for what only they may hear.
        self.private = dict(private or {})
        self.show = show
        self.stamp = stamp
        self.gate = gate
        self.echo_tail = echo_tail
        #: The microphone is cleaned of the referee's voice (an echo canceller):
        #: players may speak over it, and what they say is kept, never sure.
        self.cancels_echo = cancels_echo
        #: When a player is speaking (start, end), as far as the listener knows.
        self.talking: tuple[float, float] | None = None
        #: Sentences spoken or being spoken, oldest first (kept short).
        self.spoken: list[Spoken] = []
        self.busy_until = session.now
        self.heard: list[Hearing] = []
        #: Called with each rendered sentence (tests feed it back as echo).
        self.on_speech: Callable[[Audio, Spoken], None] | None = None
        self._voice_failed = False

    @property
    def spec(self) -> Any:
        return self.session.spec

    # --- speaking -------------------------------------------------------------------
    def say(self, saids: Iterable[Said], show: bool = True) -> None:
        """Print and speak each sentence, one after the other.

        Each sentence is rendered and played before the next one is rendered,
        so the first word of a long answer comes as soon as its first sentence
        is ready. When a new turn is announced, its timer starts once the
        referee has said it (:meth:`~referee.session.Session.delay_clock`).
        """
        for said in saids:
            if said.to is not None:
                self._say_privately(said, show)
                continue
            start = max(said.at, self.busy_until)
            if said.kind == "countdown" and (
                start - said.at > LATE_COUNTDOWN or self._player_talking(start)
            ):
                continue  # stale, or a player is talking: never a wrong time, never over them
            if show:  # (False: already printed, e.g. a start-up problem)
                self.show(f"[{said.at:.1f}] referee: {said.text}" if self.stamp else said.text)
            end = None
            for sentence in sentences(said.text):
                audio = self._render(sentence)
                if audio is None or audio.seconds == 0:
                    continue
                spoken = Spoken(sentence, start, start + audio.seconds, said.kind)
                self.busy_until = start = end = spoken.end
                self.spoken = [s for s in self.spoken if s.end > start - 30.0] + [spoken]
                self.output.play(audio, sentence, spoken.start)
                if self.on_speech is not None:
                    self.on_speech(audio, spoken)
            if end is None:
                end = self._read(said)
            if end is None:
                continue
            if said.kind in ("turn", "answer"):
                self.session.delay_clock(said.at, end)
            elif said.kind == "question":
                self.session.question_spoken(said.at, end)

    def _read(self, said: Said) -> float | None:
        """When a sentence printed without a voice will have been read (None:
        reading takes no time here)."""
        if self.reading_wpm is None or said.kind == "countdown":
            return None
        start = max(said.at, self.read_until)
        self.read_until = start + len(said.text.split()) * 60.0 / self.reading_wpm
        return self.read_until

    def _say_privately(self, said: Said, show: bool) -> None:
        """A sentence for one player's headphones: not printed on the shared
        screen, not heard by the room's microphone, not in the way of the
        referee's voice."""
        if show:
            where = f"in {said.to}'s headphones" if said.to in self.private else "nowhere"
            line = f"referee, to {said.to} only: (said {where})"
            self.show(f"[{said.at:.1f}] {line}" if self.stamp else line)
        output = self.private.get(str(said.to))
        if output is None:
            return
        for sentence in sentences(said.text):
            audio = self._render(sentence)
            if audio is not None and audio.seconds > 0:
                output.play(audio, sentence, said.at)

    def _player_talking(self, at: float) -> bool:
        """A player talks at ``at``, or starts to within :data:`ECHO_SLACK` (known ahead
        only on a simulated clock)."""
        return (self.talking is not None
                and self.talking[0] - ECHO_SLACK <= at <= self.talking[1])

    def _render(self, text: str) -> Audio | None:
        if self._voice_failed:
            return None
        try:
            return self.voice.render(text)
        except Exception as error:  # a voice that breaks mid-game: go on printing
            self._voice_failed = True
            self.show(f"referee: the voice stopped working ({error}); printing only from now on.")
            return None

    def speaking(self, start: float, end: float) -> list[Spoken]:
        """The referee's sentences whose sound overlaps ``start..end``.

        A sentence is heard until ``echo_tail`` after it ends: from a real
        speaker the sound reaches the microphone a little late (the live loop
        uses :data:`ECHO_TAIL`; on a simulated clock the echo is exact).
        """
        return [s for s in self.spoken if s.start < end and s.end + self.echo_tail > start]

    def cut(self, at: float) -> None:
        """Stop talking now ("stop")."""
        self.output.cut(at)
        self.spoken = [s if s.end <= at else Spoken(s.text, s.start, at, s.kind)
                       for s in self.spoken if s.start < at]
        self.busy_until = min(self.busy_until, at)
        self.session.delay_clock(at, at)

    # --- the clock ----------------------------------------------------------------------
    def advance(self, at: float) -> None:
        """Say everything due by ``at`` (countdown, timeouts, unanswered questions)."""
        self.say(self._safely(at, lambda: self.session.tick(at)))

    def start(self) -> None:
        self.say(self.session.start())

    # --- listening ----------------------------------------------------------------------
    def hear_audio(
        self, audio: Audio, start: float, end: float, at: float,
        speaker: str | None = None, source: str = "mic", over: OverVoice | None = None,
    ) -> Hearing:
        """One utterance from ``start`` to ``end``, decided on ``at`` (after the end
        silence); ``over``: what the microphone measured of it against the
        referee's voice, if that played."""
        if self.listener is None:
            raise RuntimeError("this table has no recogniser")
        transcript = self.listener.transcript(audio)
        heard = understand(self.session.matcher, transcript, self.session.attribute(speaker))
        return self.hear_intent(heard, transcript, start, end, at, speaker, source, over)

    def pause(self, so_far: Audio) -> None:
        """A player's speech paused: decode it ahead, in case they are done."""
        if self.listener is None:
            return
        try:
            self.listener.pause(so_far)
        except Exception:  # a guess is only a guess: the utterance is decoded again
            log.exception("decoding ahead failed")

    def judge(self) -> str | None:
        """What a player's words so far are, at a pause (see the listener);
        "stop" while the referee speaks is acted on at the pause itself."""
        if self.listener is None:
            return None
        try:
            verdict = self.listener.judge()
        except Exception:  # a guess is only a guess: leave the end to the detector
            log.exception("judging the words so far failed")
            return None
        if self.listener.guessed_kind == "stop" and self.speaking_now():
            return URGENT
        return verdict

    def speaking_now(self) -> bool:
        """Whether the referee is talking (a "stop" would cut it)."""
        return self.busy_until > self.session.now

    def hear_intent(
        self, heard: Heard, transcript: Transcript, start: float, end: float, at: float,
        speaker: str | None, source: str, over: OverVoice | None = None,
    ) -> Hearing:
        self.advance(min(start, at))
        playing = self.session.game.current_player()  # when the player began to speak
        self.advance(at)
        reason = ((self._gated(heard, transcript.text, start, end, over)
                   if self.gate else None)
                  or self._misplaced(heard, speaker, start, end, playing))
        result = Hearing(at, speaker, heard, transcript.text, reason)
        self.heard.append(result)
        label = self.session.label(speaker)
        if reason is not None:
            self._drop(at, source, speaker, transcript.text, reason)
            if reason == LATE:
                self.say([Said(at, f"Too late, {playing}: your time was up.", "problem")])
            if reason in (SPOKE_OVER, UNCLEAR_OVER) and self._outlasted(heard, start, end):
                self.say([Said(at, TALKING, "problem")])
            return result
        if heard.kind != "none" or transcript.text:
            self.show(f"[{at:.1f}] {label}: ({transcript.text or '...'})" if self.stamp
                      else f"{label}: ({transcript.text or '...'})")
        if heard.kind == "stop":
            if self.busy_until > at:
                self.cut(at)
            elif not self.speaking(start, at):
                self.say([Said(at, NOT_SPEAKING, "answer")])
            return result
        if heard.kind == "none" and not heard.message and heard.score < FLOOR:
            # Not nearly a command: table talk, a cough. Answering every one
            # would make the referee a nuisance; the log keeps it. Words
            # addressed to the referee ("referee, ...") get an answer, so the
            # player knows they were not understood.
            self._drop(at, source, speaker, transcript.text, "not a command")
            if ADDRESSED.match(transcript.text):
                self.say([Said(at, NOT_CAUGHT, "problem")])
            return result
        # Said over the referee's voice: never a sure move, whatever the score.
        mixed = self._mixed(start, end)
        sure = self.session.is_sure(heard, named=False) and not mixed
        self.say(self._safely(at, lambda: self.session.respond(
            heard, speaker, at, sure=sure, source=source)))
        return result

    def _safely(self, at: float, step: Callable[[], list[Said]]) -> list[Said]:
        """Run one step of the game; a bug in it is reported, never the end of the game."""
        try:
            return step()
        except Exception:  # the last line of defence: the game must go on
            log.exception("a step of the game failed")
            if self.session.record is not None:
                self.session.record(ErrorRecord(at))
            return [Said(at, "Sorry, something went wrong with that. The game goes on; "
                             "please say it again.", "problem")]

    def _drop(self, at: float, source: str, speaker: str | None, text: str, reason: str) -> None:
        log.info("not acted on: %r (%s)", text, reason)
        if self.session.record is not None:
            self.session.record(DroppedRecord(at, source, speaker, text, reason))

    def hear_text(self, text: str, speaker: str | None, at: float) -> None:
        """A typed line (always acted on: typing is not subject to the gate);
        a typed "stop" cuts the referee's voice as a spoken one does, and says
        so when there was nothing to cut."""
        self.advance(at)
        stop = self.session.is_stop(text)
        if stop and self.busy_until > at:
            self.cut(at)
        elif stop:
            self.say([Said(at, NOT_SPEAKING, "answer")])
        self.say(self._safely(at, lambda: self.session.hear(text, speaker, at)))

    def _mixed(self, start: float, end: float) -> bool:
        """Said over the referee's voice (not just a countdown word, which
        players talk over all the time)."""
        return any(s.kind != "countdown" for s in self.speaking(start, end))

    def _misplaced(self, heard: Heard, speaker: str | None, start: float, end: float,
                   playing: str | None) -> str | None:
        """Why an utterance that got past the gate is still not acted on: a move
        begun in ``playing``'s turn that ended after it ran out ("flip my 11"
        is Bob's late move, not the next player's), or a yes, a no or a "more"
        within the referee's own sentence (most likely its echo: "Say more for
        the rest." came back as "go on"; a player replies once the referee has
        said its piece)."""
        if (speaker is None and heard.kind not in NOT_MOVES and playing is not None
                and playing != self.session.game.current_player()):
            return LATE
        if (heard.kind in REPLIES and self._mixed(start, end)
                and not self._outlasted(heard, start, end)):
            return WITHIN
        return None

    def _outlasted(self, heard: Heard, start: float, end: float) -> bool:
        """Whether a command dropped because the referee was speaking went on
        after the referee's voice had died away (its echo cannot), so a player
        said it and should hear that it was lost; never twice for one notice."""
        overlapping = self.speaking(start, end)
        if heard.kind in ("none", "stop") or any(s.text == TALKING for s in overlapping):
            return False
        return end > max(s.end for s in overlapping) + self.echo_tail + ECHO_SLACK

    def _gated(self, heard: Heard, text: str, start: float, end: float,
               over: OverVoice | None = None) -> str | None:
        """Why an utterance heard while the referee spoke is dropped (None: keep it)."""
        overlapping = self.speaking(start, end)
        if not overlapping:
            return None
        said = [w for s in overlapping for w in content_words(s.text)]
        words = content_words(text)
        if words and in_order(words, said) / len(words) >= ECHO_ORDER:
            return ECHO
        # Words the referee is saying ("Ann, 3 down. One more flip.") are its echo,
        # unless the canceller shows a player over it: then they are the player's
        # ("flip my three" said over that announcement).
        if (not self._player_over(over) and words
                and sum(w in said for w in words) / len(words) >= ECHO_SHARE):
            return ECHO
        if all(s.kind == "countdown" for s in overlapping):
            # A player may talk over "Five." (it is their time running out). The
            # echo of a countdown word starts and ends with it; a player's words
            # cannot, as the referee never starts a countdown word over a player
            # ... unless they begin just after it does ("flip my five" right
            # after "Five."): what the canceller shows then decides.
            slack = ECHO_SLACK + self.echo_tail
            if not self._player_over(over) and any(
                    abs(start - s.start) <= slack and end <= s.end + slack
                    for s in overlapping):
                return ECHO
            return None
        if not self.cancels_echo:
            return None if self.spec.barge_in(heard.intent) else SPOKE_OVER
        return self._no_player(over) or self._unclear(heard)

    @staticmethod
    def _unclear(heard: Heard) -> str | None:
        """Why a hearing over the referee's (cancelled) voice is too unsure to
        act on or ask about (None: clear enough). A "stop" is lenient (a wrong
        one only hushes the referee); "none" is not acted on anyway."""
        if heard.kind in ("stop", "none") or heard.score >= SURE_SCORE:
            return None
        return UNCLEAR_OVER

    def _player_over(self, over: OverVoice | None) -> bool:
        """Whether the microphone shows a player over the referee's voice."""
        return self.cancels_echo and self._no_player(over) is None

    @staticmethod
    def _no_player(over: OverVoice | None) -> str | None:
        """Why what the (echo-cancelled) microphone measured over the referee's
        voice is that voice, not a player (None: a player)."""
        if over is None or over.after_echo_db < NEAR_END_DB:
            # What is left of the referee's voice after the canceller can sound
            # like words ("repeat that"): a player's voice keeps the microphone
            # nearly as loud as before the canceller; the leftover does not.
            return "what the echo canceller left of the referee's voice"
        if over.seat_db is not None and over.seat_db < SEAT_DB:
            return "the referee's voice, heard alike at every seat"
        return None


def in_order(words: list[str], said: list[str]) -> int:
    """How many of ``words`` the referee said in that order (the longest common
    subsequence).

    >>> in_order(["call", "65"], ["bob", "did", "you", "call", "65"])
    2
    >>> in_order(["flip", "my", "3"], ["ann", "3", "down", "one", "more", "flip"])
    1
    """
    return int(LCSseq.similarity(words, said))


# --- scripted audio on a simulated clock --------------------------------------------------

_AUDIO_LINE = re.compile(
    r"^\s*\[\s*(\+?)(\d+(?:\.\d*)?)\s*\]\s*(?:([^\W\d][\w' -]{0,30}):\s*)?(.*?)\s*$"
)


@dataclass(frozen=True)
class ScriptLine:
    at: float
    #: ``at`` counts from when the referee last fell silent ("[+1.5]").
    relative: bool
    speaker: str | None
    path: Path | None  # None: just let time pass
    number: int


def read_audio_script(lines: Iterable[str], base: Path) -> Iterator[ScriptLine | str]:
    """Parse ``[seconds] [Speaker:] FILE.wav`` lines; yields a message for each bad line."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _AUDIO_LINE.match(line)
        if not match:
            yield f"line {number}: expected '[seconds] [Speaker:] FILE.wav', got {line[:40]!r}"
            continue
        relative, at = bool(match.group(1)), float(match.group(2))
        speaker, name = match.group(3), match.group(4)
        path = (base / name) if name else None
        yield ScriptLine(at, relative, speaker.strip() if speaker else None, path, number)


def run_audio_script(
    table: Table, lines: Iterable[str], base: Path, *, end_silence: float = DEFAULT_END_SILENCE,
    echo: bool = False,
) -> None:
    """Play timed WAV utterances through the table on a simulated clock.

    Each utterance starts at its time and is decided ``end_silence`` after it
    ends: the microphone's acoustic rule, the slower one (live, the words of
    a whole command end it sooner), so recorded games err on the late side. A time
    ``[+2]`` means two seconds after the referee has answered the previous
    line and fallen silent, as players at a table wait for it. With
    ``echo``, every sentence the referee says is also heard by the
    recogniser, as a microphone beside the loudspeaker would.
    """
    session = table.session
    pending: list[tuple[float, float, Audio, str | None, str]] = []  # end, start, audio, who, src

    closing = False
    answering_echo = False

    def heard_back(audio: Audio, spoken: Spoken) -> None:
        # Once the script is over the microphone is closed; and what the referee
        # says in answer to its own echo is not heard again (no endless loop
        # when the gate is off).
        if not closing and not answering_echo:
            pending.append((spoken.end, spoken.start, audio, None, "echo"))

    if echo:
        table.on_speech = heard_back

    def flush(until: float) -> None:
        while pending:
            pending.sort(key=lambda p: p[0])
            end, start, audio, who, source = pending[0]
            if end + end_silence > until:
                return
            pending.pop(0)
            nonlocal answering_echo
            answering_echo = source == "echo"
            table.hear_audio(audio, start, end, end + end_silence, who, source)
            answering_echo = False

    table.start()
    now = session.now
    for item in read_audio_script(lines, base):
        if isinstance(item, str):
            table.show(item)
            continue
        if item.relative:
            while pending:  # the previous utterance has been answered ...
                flush(pending[0][0] + end_silence)
            table.advance(now)
            item = replace(item, at=max(now, table.busy_until) + item.at)  # ... and said
        if item.at < now:
            table.show(f"line {item.number}: time {item.at:g} is before {now:g}; line skipped.")
            continue
        audio: Audio | None = None
        speaker: str | None = None
        if item.path is not None:
            known, speaker = _speaker(table, item)
            if not known:
                continue
            try:
                audio = load_wav(item.path)
            except AudioError as error:
                table.show(f"line {item.number}: {error}")
                table.say([Said(item.at, "I could not hear that recording.", "problem")])
                continue
            # From here on a player is talking: no countdown word over them.
            table.talking = (item.at, item.at + audio.seconds + end_silence)
        flush(item.at)
        table.advance(item.at)
        now = item.at
        if session.left:  # "that's all": the rest of the script is not played
            break
        if audio is None:
            continue
        end = item.at + audio.seconds
        pending.append((end, item.at, audio, speaker, "seat" if speaker else "mic"))
        flush(end + end_silence)
        table.talking = None
        now = max(now, end + end_silence)
    closing = True
    flush(float("inf"))
    table.advance(max(now, table.busy_until))


def _speaker(table: Table, item: ScriptLine) -> tuple[bool, str | None]:
    """(known, the named speaker as spelled at the table or None if unnamed)."""
    if item.speaker is None:
        return True, None
    names = {p.casefold(): p for p in table.session.players}
    if item.speaker.casefold() in names:
        return True, names[item.speaker.casefold()]
    known = " and ".join(table.session.players)
    table.say([Said(item.at, f"There is no player called {item.speaker}. The players are "
                             f"{known}.", "problem")])
    return False, None
