"""Listening all the time: a stream of 16 kHz samples cut into utterances.

:class:`Segmenter` runs PocketSphinx's voice-activity endpointer over a
stream of 16 kHz samples and yields one :class:`Utterance` each time somebody
has finished speaking. How long to wait before deciding that is the whole
trade between a quick referee and one that cuts players off:

* The acoustic rule is the endpointer's ``end_silence`` (default 0.25 s, about
  0.35 s after the last sound with its hangover). Measured on 336 clean
  fixture utterances of four voices: 0.3 s splits none, 0.25 s splits two
  (the slow voice pausing after a name: "Bob, | flip your three down"),
  0.2 s splits eight, all of them after a name or "correction:".
* The words decoded ahead at each pause (``on_pause``, ``judge``) end it
  sooner or later: a whole command nothing can follow ends after 0.15 s of
  quiet, one that more words could change ("flip my seven" ... "up") after
  0.25 s, and words that are no command yet ("Bob, ...") get 0.3 s more
  than the endpointer's. Measured on the 504 fixture utterances of six
  voices (clean): no splits (the 0.25 s rule alone: one), as many commands
  understood (300 of 384; alone 298) and as little table talk taken for a
  command (61 of 120; alone 62), and on the Piper
  voices the end is decided 170 ms (p50) / 270 ms (p95) after the last
  sound instead of 355 / 390 ms. In noise (no words decoded ahead) the
  endpointer decides, as before.

The segmenter is pure computation on bytes, so tests drive it with WAV files
played as a stream (:mod:`referee.speech.hearing.mic` feeds it from a device).
"""


from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from referee.speech.audio import (
    OVER_TAIL,
    RATE,
    SPEECH_DB,
    SPEECH_MARGIN,
    Audio,
    frame_energies,
    speech_bounds,
)


class Judge(Protocol):
    """What decodes ahead at pauses and judges the words so far (the pipeline's
    :class:`~referee.speech.listen.Listener`): hearing itself knows no words."""

    @property
    def tail(self) -> float:
        """Seconds of quiet after the last loud sound before the words so far
        are decoded ahead (the recogniser's
        :attr:`~referee.speech.hearing.interface.Recognizer.ahead`)."""
        ...

    def pause(self, so_far: Audio, give_up: Callable[[], bool] | None = None,
              over: bool = False) -> None: ...

    def judge(self) -> str | None: ...


log = logging.getLogger(__name__)

DEFAULT_END_SILENCE = 0.25
#: What the words heard before a pause are (see :class:`Segmenter`).
COMPLETE, EXTENDABLE, INCOMPLETE = "complete", "extendable", "incomplete"
#: A command to act on at once ("stop" while the referee speaks): the utterance
#: ends at the pause itself. If more words follow, they are an utterance of their own.
URGENT = "urgent"
#: A command that a read-out may follow or go on ("I lay down my phase" ...
#: "three fives" ... "and three sevens"): players pause there to look at
#: their cards, so the end waits :data:`QUIET_READ_OUT`.
READ_OUT = "read-out"
#: The words so far were being decoded ahead when the speaker went on: the
#: pause was not the end, whatever the endpointer's end silence says (a name,
#: then a pause a little longer than it: "Bob, ... flip your four down").
WENT_ON = "went on"
#: A move the referee does not expect of the speaker now that more words
#: could change ("shut four" ... "and five" on a roll of nine; a move out of
#: turn): held as words that are no command yet. Asked of the brain by the
#: table's listening (:class:`~referee.listening.Listening`): a refusal can
#: wait a moment, a move cut in two cannot be taken back.
UNEXPECTED = "unexpected"
#: Quiet after the pause margin before a command that more words could
#: change ends; extra silence after the endpointer's end for words that are
#: no command yet.
HOLD_INCOMPLETE = 0.3
#: ... renewed while the speech is loud again before the endpointer notices.
HOLD_RECHECK = 0.1
#: ... that loud: within this of the utterance's loudest frame (dB) and this
#: far above the room's noise (a soft onset: "Bob, ... flip ...").
ONSET_BELOW_PEAK = 30.0
ONSET_ABOVE_FLOOR = 12.0
#: Extra silence after the endpointer's end where a read-out of cards may go on
#: (:data:`READ_OUT`).
HOLD_READ_OUT = 0.45
#: Quiet (every 20 ms frame within QUIET_DB of the room's noise floor) that
#: ends a whole command at once, and one that more words could change.
QUIET_COMPLETE = 0.15
QUIET_EXTENDABLE = 0.25
QUIET_READ_OUT = 0.7
#: While the referee speaks, the start of an utterance (up to QUICK_SPEECH of
#: speech: "stop" is one word) is looked at after only QUICK_MARGIN of quiet,
#: not the full margin: a "stop" then cuts the voice about 0.1 s sooner. Only
#: an urgent verdict is kept from that look; anything else waits for the
#: usual pause.
QUICK_MARGIN = 0.05
QUICK_SPEECH = 0.8
QUIET_DB = 6.0
#: ... or this far below the utterance's loudest frame (digital silence has no floor).
QUIET_BELOW_PEAK = 40.0
BLOCK = RATE // 100  # 10 ms of audio per read from the device
#: The 20 ms frames whose energies tell speech from quiet (as in speech_region).
FRAME = RATE // 50
#: Longest utterance: background chatter can keep the voice detector "in
#: speech" for ever, so a long stretch is cut and judged anyway.
MAX_UTTERANCE = 8.0
#: Talk in the background (other people, a television, what the echo
#: canceller leaves of the referee) is speech, so it keeps the endpointer "in
#: speech": in 20 dB babble it ended 19 of its 21 utterances only at the cut,
#: 3.4 s after the speech (p50). So an utterance also ends when every 20 ms
#: frame has stayed at least BACKGROUND_DB below its loudest for
#: BACKGROUND_AFTER longer than the endpointer's own end silence (0.5 s by
#: default: a quiet room ends by the endpointer, as before). Until a frame
#: comes within BACKGROUND_DB of that utterance's loudest again, what follows
#: is background: not collected, no utterance, nobody talking. In 20 dB babble
#: the background stayed 20 dB or more below the commands' loudest frames
#: (`./run bench vad`, which has the figures); louder background is left to
#: the endpointer and the cut. A player farther from the microphone than the
#: last one is no background: once 0.5 s of background is known, a sound
#: BACKGROUND_RISE above its loud frames (the 95th percentile of its last
#: 2 s) is speech too.
BACKGROUND_DB = 15.0
BACKGROUND_AFTER = 0.25
BACKGROUND_RISE = 6.0
BACKGROUND_KNOWN = 25  # 20 ms frames
#: Audio kept before the detected start of speech: the detector notices a
#: word a little late, and a clipped first sound ("f" of "flip") is misheard.
PREROLL = 0.2
#: After a minute of a quiet room the detector notices speech later still,
#: even a whole short word late ("flip Bob's eight down" heard from "Bob's"):
#: from the first frame louder than the room (by ONSET_DB) up to this far
#: before its start, the audio is kept too.
ONSET_LOOKBACK = 0.4
ONSET_DB = 6.0
HISTORY_BYTES = 4 * RATE * 2
#: An utterance's speech lasts at least one 10 ms frame.
MIN_SPEECH = BLOCK / RATE



@dataclass(frozen=True)
class Utterance:
    audio: Audio
    #: Stream time (seconds) where the speech started and ended.
    start: float
    end: float
    #: Stream time where ``audio`` starts: a little before the speech (pre-roll).
    audio_start: float


class Segmenter:
    """Voice activity detection with an end-of-utterance silence, helped by words.

    The acoustic rule: an utterance ends when PocketSphinx's endpointer has
    heard ``end_silence`` of quiet (about 0.35 s after the last sound, with
    its hangover). Words can end it sooner or later:

    * ``on_pause`` (optional) is called with the audio of the utterance so far
      each time its speech has paused for ``tail``: unless somebody goes on
      talking, the utterance prepares to that audio, the recogniser's tail
      that has not come yet filled in with quiet, so it can be decoded while
      the silence runs (:class:`~referee.speech.listen.Listener`).
    * ``judge`` (optional) then says what those words are. A whole command
      that nothing can follow (:data:`COMPLETE`: "what's my score") ends the
      utterance after :data:`QUIET_COMPLETE` of quiet (back at the room's
      noise floor: a stop consonant's closure is shorter); one that more
      words could change (:data:`EXTENDABLE`: "flip my seven" ... "up") after
      :data:`QUIET_EXTENDABLE`; words that are no command yet
      (:data:`INCOMPLETE`: "Bob, ...") are given :data:`HOLD_INCOMPLETE` more
      after the endpointer's end, and so is a move the referee does not
      expect now that more words could change (:data:`UNEXPECTED`).
      ``None`` (nothing decoded: a noisy room) leaves it to the endpointer.

    When an utterance ended early and the player goes on after all, what
    follows is an utterance of its own; quiet after it (the endpointer still
    waiting out its silence) is no utterance.

    Talk in the background keeps the endpointer in speech; an utterance that
    stands :data:`BACKGROUND_DB` above what follows it ends anyway, and the
    background after it is dropped until somebody speaks up again.
    """

    def __init__(self, end_silence: float = DEFAULT_END_SILENCE, vad_mode: int = 2,
                 max_seconds: float = MAX_UTTERANCE,
                 on_pause: Callable[[Audio], None] | None = None,
                 judge: Callable[[], str | None] | None = None,
                 hurry: Callable[[], bool] | None = None,
                 tail: float = SPEECH_MARGIN) -> None:
        """``hurry`` (optional) says whether an urgent word now would be
        acted on at once (the referee is speaking): see :data:`QUICK_MARGIN`.
        ``tail``: the quiet after the last loud sound at which ``on_pause``
        is called (the recogniser's :attr:`~referee.speech.hearing.interface.Recognizer.ahead`:
        the audio reported then, its tail filled in, prepares to what the
        whole utterance would); at least :data:`~referee.speech.audio.OVER_TAIL`
        while the referee speaks."""
        from pocketsphinx import Endpointer

        if not 0.1 <= end_silence <= 2.0:
            raise ValueError("end_silence must be between 0.1 and 2 seconds")
        self.endpointer = Endpointer(window=end_silence, ratio=0.9, vad_mode=vad_mode,
                                     sample_rate=RATE)
        self._background_after = end_silence + BACKGROUND_AFTER
        self.frame_bytes: int = self.endpointer.frame_bytes
        self.on_pause = on_pause
        self.judge = judge
        self.hurry = hurry
        if not 0.0 <= tail <= 1.0:
            raise ValueError("tail must be between 0 and 1 second")
        self._tail = int(tail * RATE)
        #: ... while ``hurry`` says the referee is speaking.
        self._over_tail = int(max(tail, OVER_TAIL) * RATE)
        self._pending = b""
        self._max_bytes = int(max_seconds * RATE) * 2
        #: The last few seconds of the stream, for the pre-roll of each utterance.
        self._history = bytearray()
        self._fed = 0  # bytes fed to the endpointer so far
        #: The utterance in progress, from its pre-roll up to now (the
        #: endpointer's own output lags behind by its window), with the
        #: energies (dB) of its 20 ms frames.
        self._raw = bytearray()
        self._energies: list[float] = []
        self._start = self._audio_start = self._end = 0.0
        self._paused_at = -1  # the last loud frame when the last pause was reported
        self._looked_at = -1  # ... when it was last looked at quickly
        self._verdict: str | None = None  # what the words at that pause were
        #: ... kept when the speech goes on after it (a soft onset is no background).
        self._judged_last: str | None = None
        #: Quiet after which the utterance ends by its words (None: the endpointer decides).
        self._quiet_for: float | None = None
        self._floor = 0.0  # the room's noise level (dB) at the last pause
        #: Stream time until which a pause after incomplete words is waited out.
        self._hold_until: float | None = None
        #: An utterance was handed over before the endpointer heard its end:
        #: what the endpointer still calls speech is a new utterance only if it
        #: is as loud as speech (within BACKGROUND_DB of ``_peak``, that utterance's loudest).
        self._after_early = False
        self._peak = 0.0
        #: The energies (dB) of the latest background frames dropped (see :data:`BACKGROUND_DB`).
        self._background: deque[float] = deque(maxlen=100)

    @property
    def now(self) -> float:
        """Stream time (seconds) of everything fed so far."""
        return self._fed / 2 / RATE

    def feed(self, data: bytes) -> Iterator[Utterance]:
        """Give samples; yields every utterance that ended within them."""
        self._pending += data
        while len(self._pending) >= self.frame_bytes:
            frame = self._pending[: self.frame_bytes]
            self._pending = self._pending[self.frame_bytes :]
            self._history += frame
            self._fed += len(frame)
            del self._history[: max(0, len(self._history) - HISTORY_BYTES)]
            was_speaking = self.endpointer.in_speech
            speech = self.endpointer.process(frame)
            speaking = self.endpointer.in_speech
            holding = self._hold_until is not None
            if speech is not None and not was_speaking and not holding:
                self._begin(float(self.endpointer.speech_start))
            elif (was_speaking and speaking) or holding:
                self._raw += frame
            if holding and speaking:
                self._hold_until = None  # they went on: the same utterance
            found = self._step(was_speaking, speaking, holding)
            if found is not None:
                yield found

    def _step(self, was_speaking: bool, speaking: bool, holding: bool) -> Utterance | None:
        """The utterance that ends with the frame just fed, if any."""
        if was_speaking and not speaking:  # the endpointer's end
            self._end = float(self.endpointer.speech_end)
            handed_over = self._handed_over()
            self._after_early = False
            self._background.clear()  # a quiet room now: no background to go by
            if handed_over:
                self._reset(self.now)
                return None
            hold = self._hold_for(self._verdict)
            if hold:
                self._hold_until = self.now + hold
                return None
            return self._utterance(self._end)
        if holding and not speaking and self.now >= (self._hold_until or 0.0):
            if self._sounding():  # speech again, before the endpointer has noticed
                self._hold_until = self.now + HOLD_RECHECK
                return None
            return self._utterance(self._end)
        if speaking and self._after_early and not self._loud():
            self._drop_background()
            return None
        if speaking and len(self._raw) >= self._max_bytes:
            return self._cut()
        if speaking:
            self._check_pause()
            if self._quiet_long_enough() or self._over_background():
                return self._early()
        return None

    def _onset(self, start: float) -> float:
        """Where the sound the detector started on at ``start`` really began
        (see :data:`ONSET_LOOKBACK`): stream time."""
        history_start = (self._fed - len(self._history)) // 2
        energy = frame_energies(np.frombuffer(bytes(self._history), dtype="<i2"), FRAME)
        at = min(len(energy), (round(start * RATE) - history_start) // FRAME)
        if at <= 0:
            return start
        loud = float(np.percentile(energy, 10)) + ONSET_DB  # above the room's own level
        window = max(0, at - round(ONSET_LOOKBACK * RATE) // FRAME)
        sounds = np.nonzero(energy[window:at] >= loud)[0]
        if len(sounds) == 0:
            return start
        return min(start, (history_start + (window + int(sounds[0])) * FRAME) / RATE)

    def _begin(self, start: float) -> None:
        """Speech started at stream time ``start`` (the detector notices it late)."""
        history_start = (self._fed - len(self._history)) // 2
        begin = max(0, round((self._onset(start) - PREROLL) * RATE) - history_start) * 2
        end = max(0, round(start * RATE) - history_start) * 2
        self._reset(start - (end - begin) / 2 / RATE)
        self._start = start
        self._raw = bytearray(self._history[begin:])
        self._after_early = False

    def _reset(self, audio_start: float) -> None:
        """Start collecting a new utterance at stream time ``audio_start``."""
        self._raw = bytearray()
        self._energies = []
        self._start = self._audio_start = audio_start
        self._paused_at = self._looked_at = -1
        self._verdict = self._judged_last = None
        self._quiet_for = self._hold_until = None

    def _handed_over(self) -> bool:
        """Whether the endpointer's end just heard ends only what was already
        handed over (ended early at a pause, or cut for length): quiet after
        it, or speech that ended before the hand-over (the endpointer hears an
        end late). Whatever loud sound follows is an utterance of its own once
        the endpointer hears it as speech."""
        return self._end <= self._start or (self._after_early and not self._loud())

    def _loud(self) -> bool:
        """Whether the audio collected since an early end holds speech (not just
        quiet or background: see :data:`BACKGROUND_DB`)."""
        self._update_energies()
        loud = self._peak - BACKGROUND_DB
        if len(self._background) >= BACKGROUND_KNOWN:
            loud = min(loud, float(np.percentile(self._background, 95)) + BACKGROUND_RISE)
        return bool(self._energies) and max(self._energies) > loud

    def _drop_background(self) -> None:
        """Keep of the background since the last utterance only a pre-roll's
        worth: the next utterance starts at the first sound loud enough."""
        self._update_energies()
        excess = len(self._energies) - round(PREROLL * RATE) // FRAME
        if excess > 0:
            self._background.extend(self._energies[:excess])
            del self._raw[: excess * FRAME * 2]
            del self._energies[:excess]
            self._audio_start += excess * FRAME / RATE
        self._start = self.now

    def _over_background(self) -> bool:
        """Whether the speech has stood out of the background for long enough
        (see :data:`BACKGROUND_DB`); if so, it paused at its last loud frame."""
        self._update_energies()
        n = round(self._background_after * 50)
        # "Bob, ...": wait as the endpointer would (and when they went on, a soft onset too)
        n += round(self._hold_for(self._judged_last) * 50)
        if len(self._energies) <= n:
            return False
        loud = max(self._energies) - BACKGROUND_DB
        if max(self._energies[-n:]) > loud:
            return False
        self._paused_at = int(np.nonzero(np.asarray(self._energies) > loud)[0][-1])
        return True

    @staticmethod
    def _hold_for(verdict: str | None) -> float:
        """How long after the endpointer's end the words at the last pause hold
        the utterance open (0: not at all)."""
        return {INCOMPLETE: HOLD_INCOMPLETE, WENT_ON: HOLD_INCOMPLETE,
                UNEXPECTED: HOLD_INCOMPLETE, READ_OUT: HOLD_READ_OUT}.get(verdict or "", 0.0)

    def _sounding(self) -> bool:
        """Whether the last 100 ms hold the start of more speech: a frame within
        :data:`ONSET_BELOW_PEAK` of the utterance's loudest (a word that starts
        with "f" or "sh" is quiet at first) and :data:`ONSET_ABOVE_FLOOR` above
        the room's noise."""
        self._update_energies()
        if not self._energies:
            return False
        loud = max(max(self._energies) - ONSET_BELOW_PEAK, self._noise_floor() + ONSET_ABOVE_FLOOR)
        return max(self._energies[-5:]) >= loud

    def _update_energies(self) -> None:
        done = len(self._energies)
        if len(self._raw) // 2 // FRAME > done:
            samples = np.frombuffer(self._raw, dtype="<i2")[done * FRAME :]
            self._energies.extend(frame_energies(samples, FRAME).tolist())

    def _check_pause(self) -> None:
        """Report the utterance so far when its speech has paused for the margin;
        forget the verdict on it when the speech goes on."""
        if self.on_pause is None:  # (background after an early end never gets here)
            return
        self._update_energies()
        length = len(self._raw) // 2
        bounds = speech_bounds(np.asarray(self._energies), FRAME, length, margin=0)
        if bounds is None:
            return
        first, loud_end = bounds
        last_loud = loud_end // FRAME
        if last_loud == self._paused_at:
            return
        self._verdict, self._quiet_for = None, None  # (more) speech since the last pause
        tail = self._over_tail if self.hurry is not None and self.hurry() else self._tail
        if loud_end + tail + FRAME <= length:
            self.on_pause(self._so_far())
            self._pause(last_loud, self._judged())
        elif (last_loud != self._looked_at and loud_end - first <= QUICK_SPEECH * RATE
              and loud_end + int(QUICK_MARGIN * RATE) + FRAME <= length
              and self.hurry is not None and self.hurry()):
            self._looked_at = last_loud
            self.on_pause(self._so_far())
            verdict = self._judged()
            if verdict == URGENT:
                self._pause(last_loud, verdict)

    def speech_in(self, samples: np.ndarray[Any, Any]) -> bool:
        """Whether ``samples`` (not fed yet) hold a 20 ms frame as loud as the
        utterance's speech (:func:`~referee.speech.audio.speech_bounds`): had
        they been fed, the pause decoded ahead would not be the end."""
        self._update_energies()
        energy = frame_energies(samples, FRAME)
        return bool(self._energies) and len(energy) > 0 and (
            float(energy.max()) >= max(self._energies) - SPEECH_DB)

    def _so_far(self) -> Audio:
        return Audio(np.frombuffer(bytes(self._raw), dtype="<i2").copy())

    def _judged(self) -> str | None:
        return self.judge() if self.judge is not None else None

    def _pause(self, last_loud: int, verdict: str | None) -> None:
        """The speech paused after frame ``last_loud``, its words judged ``verdict``."""
        self._paused_at = last_loud
        self._verdict = self._judged_last = verdict
        self._quiet_for = {COMPLETE: QUIET_COMPLETE, EXTENDABLE: QUIET_EXTENDABLE,
                           READ_OUT: QUIET_READ_OUT, URGENT: 0.0}.get(verdict or "")
        self._floor = self._noise_floor()

    def _noise_floor(self) -> float:
        """The room's noise level (dB): the 10th percentile of the recent stream's frames."""
        return float(np.percentile(frame_energies(
            np.frombuffer(self._history, dtype="<i2"), FRAME), 10))

    def _quiet_long_enough(self) -> bool:
        """Whether the stream has been back at the noise floor for the verdict's quiet."""
        if self._quiet_for is None:
            return False
        if self._quiet_for == 0.0:
            return True
        n = int(self._quiet_for * 50)
        recent = self._energies[-n:]
        quiet = max(self._floor + QUIET_DB, max(self._energies) - QUIET_BELOW_PEAK)
        return len(recent) == n and max(recent) <= quiet

    def _early(self) -> Utterance | None:
        """End the utterance at its pause, before the endpointer hears its end."""
        end = self._audio_start + (self._paused_at + 1) * FRAME / RATE
        self._peak = max(self._energies)
        utterance = self._utterance(end)
        self._after_early = True
        return utterance

    @property
    def in_speech(self) -> bool:
        """Whether an utterance is in progress (speech, or a pause within it)."""
        if self._hold_until is not None:
            return True
        return bool(self.endpointer.in_speech and (not self._after_early or self._loud()))

    def close(self) -> Iterator[Utterance]:
        """End of the stream: the utterance in progress, if any."""
        if self._hold_until is not None:
            last = self._utterance(self._end)
            if last is not None:
                yield last
        elif self.endpointer.in_speech:
            tail = self._pending + b"\0" * (self.frame_bytes - len(self._pending))
            self.endpointer.end_stream(tail[: self.frame_bytes])
            self._raw += self._pending
            self._end = float(self.endpointer.speech_end)
            last = None if self._handed_over() else self._utterance(self._end)
            if last is not None:
                yield last
        self._pending = b""

    def _cut(self) -> Utterance | None:
        """An utterance that went on too long: judge it now, go on collecting."""
        return self._utterance(self.now)

    def _utterance(self, end: float) -> Utterance | None:
        """The utterance collected so far, ending (its speech) at stream time ``end``.

        Its audio goes on to now, through the silence: the endpointer's own
        cut can clip a final "p", and the recogniser gets the speech region of
        this with its full margin. None when its speech ends before one 10 ms
        frame of its own: what follows an utterance already handed over, whose
        last loud sound belonged to that one.
        """
        samples = np.frombuffer(bytes(self._raw), dtype="<i2").copy()
        utterance = Utterance(Audio(samples), self._start, end, self._audio_start)
        self._reset(self.now)
        return utterance if end >= utterance.start + MIN_SPEECH else None


def segment(chunks: Iterable[bytes], end_silence: float = DEFAULT_END_SILENCE) -> list[Utterance]:
    """All utterances in a finished stream of 16 kHz mono 16-bit chunks."""
    segmenter = Segmenter(end_silence)
    found: list[Utterance] = []
    for chunk in chunks:
        found.extend(segmenter.feed(chunk))
    found.extend(segmenter.close())
    return found


