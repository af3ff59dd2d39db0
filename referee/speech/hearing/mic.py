"""Listening all the time: the microphone stream cut into utterances.

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

:class:`Microphone` feeds it from a live input device through
``sounddevice`` (PortAudio): one detector on the mix of all channels, and
with seat microphones (``--seat-mics Ann=0,Bob=1``) each utterance goes to
the seat whose channel was loudest during it, so a voice leaking into the
other microphone does not confuse the referee.

The segmenter is pure computation on bytes, so tests drive it with WAV files
played as a stream; the microphone needs a device, and says so clearly when
there is none.
"""

from __future__ import annotations

import logging
import math
import queue
import time
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
    PlaybackTrack,
    close_stream,
    frame_energies,
    speech_bounds,
)
from referee.speech.hearing.echo import DelayFinder, EchoCanceller


class Judge(Protocol):
    """What decodes ahead at pauses and judges the words so far (the pipeline's
    :class:`~referee.speech.listen.Listener`): hearing itself knows no words."""

    @property
    def tail(self) -> float:
        """Seconds of quiet after the last loud sound before the words so far
        are decoded ahead (what the recogniser's preparation keeps of that quiet)."""
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
#: Quiet after the pause margin before a command that more words could
#: change ends; extra silence after the endpointer's end for words that are
#: no command yet.
HOLD_INCOMPLETE = 0.3
#: ... renewed while the speech is loud again before the endpointer notices.
HOLD_RECHECK = 0.1
#: Quiet (every 20 ms frame within QUIET_DB of the room's noise floor) that
#: ends a whole command at once, and one that more words could change.
QUIET_COMPLETE = 0.15
QUIET_EXTENDABLE = 0.25
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
#: Playback quieter than this (mean absolute sample) does not test the canceller.
PLAYED_LEVEL = 100.0
#: The canceller counts as working when it removes this much of the referee ...
CANCELLED_DB = 10.0
CANCELLED_RATIO = 10 ** (CANCELLED_DB / 10)
#: ... within this many seconds.
CANCELLED_FOR = 30.0
#: Seconds of playback the canceller's effect is smoothed over, and measured
#: for before it is judged: its first output is silence while it fills its
#: frame, which once passed for 10 dB removed 0.04 s into the game (live, the
#: filter removed 10 dB after about 3.4 s).
MEASURED_FOR = 2.0
#: The 20 ms frames whose energies tell speech from quiet (as in speech_region).
FRAME = RATE // 50
SILENT_FOR = 2.0  # seconds without a block: the microphone is gone
#: A stream may take a while to send its first block (measured: PulseAudio's
#: null-sink monitor here takes 2.0 s), so a new stream gets this much longer.
STARTUP = 3.0
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
#: Seconds of the referee's voice before an utterance that show how much of it
#: the echo canceller leaves (see :attr:`OverVoice.after_echo_db`).
LEFTOVER_HISTORY = 10.0
#: After a minute of a quiet room the detector notices speech later still,
#: even a whole short word late ("flip Bob's eight down" heard from "Bob's"):
#: from the first frame louder than the room (by ONSET_DB) up to this far
#: before its start, the audio is kept too.
ONSET_LOOKBACK = 0.4
ONSET_DB = 6.0
HISTORY_BYTES = 4 * RATE * 2
#: Seconds of the latest blocks that date the stream (see :meth:`Microphone.since`).
DATING = 2.0
#: An utterance's speech lasts at least one 10 ms frame.
MIN_SPEECH = BLOCK / RATE


class MicrophoneError(RuntimeError):
    """No usable input device, with what to do about it."""


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
      each time its speech has paused for ``tail``, the quiet that the
      recogniser's preparation keeps after the last loud frame. From then
      on, unless somebody goes on talking, the utterance prepares to exactly
      that audio, so it can be decoded while the silence runs
      (:class:`~referee.speech.listen.Listener`).
    * ``judge`` (optional) then says what those words are. A whole command
      that nothing can follow (:data:`COMPLETE`: "what's my score") ends the
      utterance after :data:`QUIET_COMPLETE` of quiet (back at the room's
      noise floor: a stop consonant's closure is shorter); one that more
      words could change (:data:`EXTENDABLE`: "flip my seven" ... "up") after
      :data:`QUIET_EXTENDABLE`; words that are no command yet
      (:data:`INCOMPLETE`: "Bob, ...") are given :data:`HOLD_INCOMPLETE` more
      after the endpointer's end. ``None`` (nothing decoded: a noisy room)
      leaves it to the endpointer.

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
        is called (the recogniser's :attr:`~referee.speech.hearing.recognizers.Recognizer.tail`:
        the audio reported then prepares to what the whole utterance would);
        at least :data:`~referee.speech.audio.OVER_TAIL` while the referee speaks."""
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
            if self._verdict == INCOMPLETE:
                self._hold_until = self.now + HOLD_INCOMPLETE
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
        self._verdict = None
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
        if self._verdict == INCOMPLETE:  # "Bob, ...": wait as the endpointer would
            n += round(HOLD_INCOMPLETE * 50)
        if len(self._energies) <= n:
            return False
        loud = max(self._energies) - BACKGROUND_DB
        if max(self._energies[-n:]) > loud:
            return False
        self._paused_at = int(np.nonzero(np.asarray(self._energies) > loud)[0][-1])
        return True

    def _sounding(self) -> bool:
        """Whether the last 100 ms hold a frame as loud as the utterance's speech."""
        self._update_energies()
        return bool(self._energies) and max(self._energies[-5:]) >= (
            max(self._energies) - SPEECH_DB)

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
        self._verdict = verdict
        self._quiet_for = {COMPLETE: QUIET_COMPLETE, EXTENDABLE: QUIET_EXTENDABLE,
                           URGENT: 0.0}.get(verdict or "")
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


def input_device(device: int | str | None) -> Any:
    """The input device to use, or MicrophoneError saying why there is none."""
    try:
        import sounddevice
    except OSError as error:  # PortAudio library missing
        raise MicrophoneError(
            f"Audio input is unavailable ({error}). Run ./run again to install "
            "libportaudio2, or play by typing."
        ) from error
    try:
        return sounddevice.query_devices(device, kind="input")
    except (ValueError, sounddevice.PortAudioError) as error:
        names = [d["name"] for d in sounddevice.query_devices() if d["max_input_channels"] > 0]
        choice = f" Input devices: {', '.join(names)}." if names else ""
        if device is None:
            message = f"No microphone found (PortAudio: {error}). Connect one, or play by typing."
        else:
            message = f"There is no input device {device!r} (PortAudio: {error})."
        raise MicrophoneError(message + choice) from error


@dataclass(frozen=True)
class OverVoice:
    """What the microphone measured of an utterance heard while the referee's
    voice played, to tell a player from what the echo canceller left of it."""

    #: How far the utterance's loudest 100 ms after the echo canceller, against
    #: before it, stands above what the canceller leaves of the referee's voice
    #: alone (dB). About 0 for that leftover; a player, even 12 dB quieter than
    #: the referee's echo, is well above it.
    after_echo_db: float
    #: With seat microphones: how far the utterance's seat stands above the
    #: other seats, beyond where the referee's voice alone puts it (dB). The
    #: speakers reach every seat alike, a player their own microphone first:
    #: about 0 for the referee's voice, however the canceller fared. None with
    #: one microphone, or no earlier voice to compare with.
    seat_db: float | None = None


@dataclass(frozen=True)
class SeatUtterance(Utterance):
    speaker: str | None
    #: None when the referee was silent (or there is no echo canceller).
    over: OverVoice | None = None


class Microphone:
    """A live input stream cut into utterances, with seat attribution."""

    def __init__(self, device: int | str | None = None, seats: dict[int, str] | None = None,
                 end_silence: float = DEFAULT_END_SILENCE,
                 silent_for: float | None = SILENT_FOR,
                 track: PlaybackTrack | None = None) -> None:
        """``silent_for``: seconds without sound that mean the device is gone
        (None: wait for sound for ever). ``track``: what the referee's speakers
        play; with it, each channel is cleaned of the referee's voice by an
        echo canceller (:mod:`referee.speech.hearing.echo`)."""
        self.device = device
        self.track = track
        self.silent_for = silent_for
        self.seats = seats or {}
        self.channels = max(self.seats, default=0) + 1
        self.end_silence = end_silence
        #: Called with the utterance so far when a speaker pauses (see :class:`Segmenter`),
        #: and what says whether they went on meanwhile (:meth:`went_on`).
        self.on_pause: Callable[[Audio, Callable[[], bool], bool], None] | None = None
        #: Asked what the words so far are, at each pause (see :class:`Segmenter`).
        self.judge: Callable[[], str | None] | None = None
        #: Asked whether an urgent word would be acted on at once (see :class:`Segmenter`).
        self.hurry: Callable[[], bool] | None = None
        #: The quiet after a sound at which the words so far are decoded ahead.
        self.tail = SPEECH_MARGIN
        self._stream: Any = None
        self._cancellers: list[EchoCanceller] = []  # one a channel, made by open()
        self._blocks: queue.Queue[tuple[bytes, float]] = queue.Queue()
        self._last_block = 0.0
        #: (stream time at the end of a block, wall clock when it arrived), recent blocks.
        self._arrivals: deque[tuple[float, float]] = deque(maxlen=1000)

    def listen_with(self, listener: Judge | None,
                    hurry: Callable[[], bool] | None = None) -> None:
        """From the next stream opened, ``listener`` decodes ahead at each pause
        and judges the words so far (the table's, or a
        :class:`~referee.speech.listen.Listener`); ``hurry`` says whether an
        urgent word would be acted on at once (see :class:`Segmenter`)."""
        self.on_pause = None if listener is None else listener.pause
        self.judge = None if listener is None else listener.judge
        self.tail = SPEECH_MARGIN if listener is None else listener.tail
        self.hurry = hurry

    def reset(self) -> None:
        """A fresh start for a new stream (stream time 0, nobody talking)."""
        self.segmenter = Segmenter(self.end_silence,
                                   on_pause=None if self.on_pause is None else self._paused,
                                   judge=self.judge, hurry=self.hurry, tail=self.tail)
        self._energy: deque[np.ndarray[Any, Any]] = deque(maxlen=6000)  # 60 s of 10 ms frames
        self._frames = 0
        #: Seconds of audio received so far (stream time).
        self.position = 0.0
        self._blocks = queue.Queue()
        self._arrivals.clear()
        self._overflowed_at = -math.inf
        self._cancellers = ([EchoCanceller() for _ in range(self.channels)]
                            if self.track is not None else [])
        self._delay = DelayFinder()
        self._anchor: float | None = None
        #: Smoothed energies of the microphone before and after the canceller
        #: while the referee plays, the samples measured so, when the canceller
        #: last removed enough of it, and when it first did.
        self._before = self._after = 0.0
        self._measured = 0
        self._cancelled_at = -math.inf
        self._learnt_at = math.inf
        #: (stream position at the block's start, energy before, after), while playing,
        #: and each channel's energy after it.
        self._echo_blocks: deque[tuple[float, float, float, np.ndarray[Any, Any]]] = deque(
            maxlen=3000)

    def open(self) -> None:
        """Open the device, or MicrophoneError saying why not."""
        import sounddevice

        info = input_device(self.device)
        if info["max_input_channels"] < self.channels:
            raise MicrophoneError(
                f"{info['name']} has {info['max_input_channels']} input channels; "
                f"the seat microphones need {self.channels}."
            )
        self.reset()

        def callback(data: Any, frames: int, when: Any, status: Any) -> None:
            arrived = time.monotonic()
            if getattr(status, "input_overflow", False):  # samples were lost before this
                self._overflowed_at = arrived
            self._blocks.put((bytes(data), arrived))

        self._latency = 0.0

        try:
            self._stream = sounddevice.RawInputStream(
                samplerate=RATE, blocksize=BLOCK, device=info.get("index", self.device),
                channels=self.channels, dtype="int16", callback=callback, latency="high",
            )
            self._stream.start()
            self._latency = float(self._stream.latency)
        except Exception as error:  # PortAudioError, OSError
            self._stream = None
            raise MicrophoneError(f"Cannot open the microphone ({error}).") from error
        self._last_block = time.monotonic() + STARTUP

    def read(self, timeout: float) -> list[SeatUtterance]:
        """The utterances that have ended, as soon as one has; else after ``timeout``
        seconds of listening, none."""
        found: list[SeatUtterance] = []
        deadline = time.monotonic() + timeout
        while not found:
            left = deadline - time.monotonic()
            try:
                block, arrived = self._blocks.get(timeout=max(0.0, left))
            except queue.Empty:
                break
            self._last_block = time.monotonic()
            found.extend(self._feed(block, arrived))
            self._arrivals.append((self.position, arrived))
        stream = self._stream
        quiet = time.monotonic() - self._last_block
        if (stream is None or not stream.active
                or (self.silent_for is not None and quiet > self.silent_for)):
            raise MicrophoneError("The microphone stopped sending sound.")
        return found

    def _feed(self, block: bytes, arrived: float | None = None) -> list[SeatUtterance]:
        samples = np.frombuffer(block, dtype="<i2").reshape(-1, self.channels)
        if self._cancellers and self.track is not None and arrived is not None:
            samples = self._without_echo(samples, arrived)
        self.position += len(samples) / RATE
        x = samples.astype(np.float64)
        for i in range(0, len(x), BLOCK):
            frame = x[i : i + BLOCK]
            self._energy.append((frame**2).mean(axis=0))
            self._frames += 1
        mono = x.mean(axis=1) if self.channels > 1 else x[:, 0]
        data = np.clip(mono, -32768, 32767).astype("<i2").tobytes()
        return [self._attributed(u) for u in self.segmenter.feed(data)]

    def _paused(self, so_far: Audio) -> None:
        assert self.on_pause is not None
        self.on_pause(so_far, self.went_on, self.hurry is not None and self.hurry())

    def went_on(self) -> bool:
        """Whether the speaker went on after the pause being decoded ahead: the
        sound captured since, still waiting to be read, holds a frame as loud
        as their speech. The decode is then given up midway (the loop reads on
        at once), not finished for nothing. Never while the referee speaks:
        its voice is in that sound until the echo canceller takes it out, and
        a "stop" decoded ahead must not be given up for it."""
        if self.hurry is not None and self.hurry():
            return False
        with self._blocks.mutex:
            waiting = [block for block, _ in self._blocks.queue]
        if not waiting:
            return False
        x = np.frombuffer(b"".join(waiting), dtype="<i2").reshape(-1, self.channels)
        return self.segmenter.speech_in(x.mean(axis=1) if self.channels > 1 else x[:, 0])

    def _attributed(self, u: Utterance) -> SeatUtterance:
        """The utterance with its seat, and how it stands against the referee's voice."""
        energies = self._channel_energies(u.start, u.end)
        seat = None if energies is None else int(np.argmax(energies))
        after_echo_db = self._after_echo_db(u.start, u.end)
        over = None
        if after_echo_db is not None:
            seat_db = None if seat is None else self._seat_db(seat, u.start, energies)
            over = OverVoice(after_echo_db, seat_db)
        return SeatUtterance(u.audio, u.start, u.end, u.audio_start,
                             None if seat is None else self.seats.get(seat), over)

    def _without_echo(self, samples: np.ndarray[Any, Any], arrived: float) -> np.ndarray[Any, Any]:
        """Each channel without what the speakers played meanwhile. The block was
        captured about the input latency before it ``arrived``; where the echo
        of the speakers really falls is found from the sound itself
        (:class:`~referee.speech.hearing.echo.DelayFinder`)."""
        assert self.track is not None
        # Blocks arrive in bursts: their capture time comes from the sample count,
        # anchored on the first block (the delay finder measures the rest).
        if self._anchor is None:
            self._anchor = arrived - self._latency - (self.position + len(samples) / RATE)
        captured = self._anchor + self.position
        mono = samples.mean(axis=1).astype(np.int16) if self.channels > 1 else samples[:, 0]
        self._delay.feed(mono, captured, self.track.window)
        played = self.track.window(captured + self._delay.offset, len(samples))
        cleaned = np.stack([c.process(np.ascontiguousarray(samples[:, i]), played)
                            for i, c in enumerate(self._cancellers)], axis=1)
        self._measure(samples, cleaned, played, captured)
        # The canceller holds back what does not fill a 10 ms frame: keep the lengths.
        if len(cleaned) < len(samples):
            cleaned = np.concatenate([np.zeros((len(samples) - len(cleaned),
                                                self.channels), np.int16), cleaned])
        return cleaned[: len(samples)]

    def _measure(self, raw: np.ndarray[Any, Any], cleaned: np.ndarray[Any, Any],
                 played: np.ndarray[Any, Any], at: float) -> None:
        """Track how much of the referee's voice the canceller removes (its
        echo return loss enhancement, over about two seconds of playback),
        and each block's energy before and after it while the referee plays."""
        if len(cleaned) != len(raw) or float(np.abs(played).mean()) < PLAYED_LEVEL:
            return
        before = float(np.mean(raw.astype(np.float64) ** 2))
        channels = (cleaned.astype(np.float64) ** 2).mean(axis=0)
        after = float(channels.mean())
        self._echo_blocks.append((self.position, before, after, channels))
        keep = 1.0 - len(raw) / (MEASURED_FOR * RATE)
        self._before = keep * self._before + before
        self._after = keep * self._after + after
        self._measured += len(raw)
        if (self._measured >= MEASURED_FOR * RATE
                and self._before > CANCELLED_RATIO * max(self._after, 1.0)):
            self._cancelled_at = at
            self._learnt_at = min(self._learnt_at, at)

    def _after_echo_db(self, start: float, end: float) -> float | None:
        """See :attr:`OverVoice.after_echo_db`. The canceller's leftover is
        the 30th percentile of its after/before ratio over the referee's last
        10 s of voice before the utterance (mostly the referee alone); the
        utterance's own level is its 100 ms where the ratio is highest: a
        player's short "stop" amid the detector's longer stretch of leftover
        keeps its own 100 ms high."""
        def ratio(blocks: list[tuple[float, float]]) -> float:
            before = sum(b for b, _ in blocks)
            after = sum(a for _, a in blocks)
            return 10.0 * math.log10(max(after, 1.0) / max(before, 1.0))

        blocks = [(b, a) for at, b, a, _ in self._echo_blocks
                  if start <= at <= end + BLOCK / RATE]
        if not blocks:
            return None
        span = max(1, round(0.1 * RATE / BLOCK))
        best = max(ratio(blocks[i : i + span]) for i in range(max(1, len(blocks) - span + 1)))
        earlier = [ratio([(b, a)]) for _, b, a, _ in self._echo_before(start)]
        if len(earlier) >= span:
            leftover = float(np.percentile(earlier, 30))
        else:  # the referee has only just begun: how much the canceller removed lately
            leftover = -10.0 * math.log10(max(self._before, 1.0) / max(self._after, 1.0))
        return best - leftover

    def _echo_before(self, start: float) -> list[tuple[float, float, float, np.ndarray[Any, Any]]]:
        """The referee's voice in the :data:`LEFTOVER_HISTORY` before ``start`` (see
        ``_echo_blocks``): mostly the referee alone, to compare an utterance with."""
        return [b for b in self._echo_blocks if start - LEFTOVER_HISTORY <= b[0] < start]

    @property
    def cancelling(self) -> bool:
        """Whether the echo canceller removed most of the referee's voice
        recently (at least :data:`CANCELLED_DB` over two seconds of playback,
        within the last :data:`CANCELLED_FOR` seconds): until it has learnt
        the room, speech over the referee is not to be trusted."""
        if not self._cancellers or self.track is None:
            return False
        now = (self._anchor or 0.0) + self.position
        return now - self._cancelled_at <= CANCELLED_FOR

    def cancelling_from(self, start: float) -> bool:
        """Whether the canceller is working and had learnt the room already
        when an utterance began (``start``, stream seconds): one begun while it
        was learning holds what it left of the referee's voice then, loud
        enough to pass for a player (the opening's "Ann against Bob" came back
        as "play again", 5.7 dB above the leftover)."""
        return self.cancelling and self._learnt_at <= (self._anchor or 0.0) + start

    def _channel_energies(self, start: float, end: float) -> np.ndarray[Any, Any] | None:
        """Each seat channel's energy from ``start`` to ``end`` (None: no seats)."""
        if not self.seats:
            return None
        first = self._frames - len(self._energy)
        lo, hi = max(first, int(start * 100)), max(first + 1, int(end * 100))
        frames = list(self._energy)[lo - first : hi - first]
        return np.sum(frames, axis=0) if frames else None

    def _seat_db(self, seat: int, start: float,
                 energies: np.ndarray[Any, Any] | None) -> float | None:
        """See :attr:`OverVoice.seat_db`: the seat's lead over the others in the
        utterance, less its lead in the referee's voice over the 10 s before."""
        earlier = [e for _, _, _, e in self._echo_before(start)]
        if energies is None or self.channels < 2 or not earlier:
            return None

        def lead(e: np.ndarray[Any, Any]) -> float:
            others = float(np.delete(e, seat).mean())
            return 10.0 * math.log10(max(float(e[seat]), 1.0) / max(others, 1.0))

        return lead(energies) - lead(np.sum(earlier, axis=0))

    def arrival(self, at: float) -> float | None:
        """The wall clock (``time.monotonic``) when stream time ``at`` reached us, if recent."""
        for position, arrived in self._arrivals:
            if position >= at:
                return arrived
        return None

    def since(self, at: float) -> float:
        """Seconds since stream time ``at`` reached us, by the wall clock.

        Not simply how much has been read since: blocks wait in the queue
        while an utterance is decoded (seconds, on a busy machine), and then
        the last sample read is long past. A block can only arrive late, never
        early, so the recent block that came soonest for its place in the
        stream dates the whole stream: one of the last :data:`DATING`
        seconds, as samples lost on the way (an overflow while the machine
        was busy) put every earlier block's place wrong.
        """
        recent = [(position, arrived) for position, arrived in self._arrivals
                  if position >= self.position - DATING and arrived >= self._overflowed_at]
        if not recent:
            return self.position - at
        offset = min(arrived - position for position, arrived in recent)
        return time.monotonic() - (offset + at)

    @property
    def in_speech(self) -> bool:
        """Whether somebody is talking right now (as the voice detector hears it),
        or has only paused in the middle of an utterance."""
        return bool(self._stream is not None and self.segmenter.in_speech)

    def close(self) -> None:
        if self._stream is not None:
            if not close_stream(self._stream):
                log.debug("the microphone's stream did not close")
            self._stream = None


def parse_device(text: str | None) -> int | str | None:
    """A device as given on the command line: a number, a name, or None (the system's).

    >>> parse_device("2"), parse_device("pulse"), parse_device(None)
    (2, 'pulse', None)
    """
    return int(text) if text and text.isdigit() else text


def microphone_utterances(
    device: int | str | None = None, end_silence: float = DEFAULT_END_SILENCE,
    listener: Judge | None = None,
) -> Iterator[Utterance]:
    """Utterances from a live input device, as they end (runs until stopped).

    ``listener`` (a :class:`~referee.speech.listen.Listener`) decodes ahead at
    pauses and judges the words, as in a game."""
    microphone = Microphone(device, end_silence=end_silence, silent_for=None)
    microphone.listen_with(listener)
    microphone.open()
    try:
        while True:
            for u in microphone.read(0.2):
                yield Utterance(u.audio, u.start, u.end, u.audio_start)
    finally:
        microphone.close()
