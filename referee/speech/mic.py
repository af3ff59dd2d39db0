"""Listening all the time: the microphone stream cut into utterances.

:class:`Segmenter` runs PocketSphinx's voice-activity endpointer over a
stream of 16 kHz samples and yields one :class:`Utterance` each time somebody
stops talking for ``end_silence`` seconds (default 0.25 s; at most what the
referee waits before it answers). Measured on 336 clean fixture utterances of
four voices: 0.3 s splits none, 0.25 s splits two (the slow voice pausing
after a name: "Bob, | flip your three down", where the second part alone
still means the same), 0.2 s splits eight. Each 50 ms less is 50 ms sooner
an answer. :class:`Microphone` feeds it from a
live input device through ``sounddevice`` (PortAudio): one detector on the
mix of all channels, and with seat microphones (``--seat-mics Ann=0,Bob=1``)
each utterance goes to the seat whose channel was loudest during it, so a
voice leaking into the other microphone does not confuse the referee.

The segmenter is pure computation on bytes, so tests drive it with WAV files
played as a stream; the microphone needs a device, and says so clearly when
there is none.
"""

from __future__ import annotations

import logging
import queue
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.speech.audio import RATE, Audio

log = logging.getLogger(__name__)

DEFAULT_END_SILENCE = 0.25
BLOCK = RATE // 100  # 10 ms of audio per read from the device
SILENT_FOR = 2.0  # seconds without a block: the microphone is gone
#: Longest utterance: background chatter can keep the voice detector "in
#: speech" for ever, so a long stretch is cut and judged anyway.
MAX_UTTERANCE = 8.0
#: Audio kept before the detected start of speech: the detector notices a
#: word a little late, and a clipped first sound ("f" of "flip") is misheard.
PREROLL = 0.2
HISTORY_BYTES = 4 * RATE * 2


class MicrophoneError(RuntimeError):
    """No usable input device, with what to do about it."""


@dataclass(frozen=True)
class Utterance:
    audio: Audio
    #: Stream time (seconds) where the speech started and ended.
    start: float
    end: float


class Segmenter:
    """Voice activity detection with an end-of-utterance silence."""

    def __init__(self, end_silence: float = DEFAULT_END_SILENCE, vad_mode: int = 2,
                 max_seconds: float = MAX_UTTERANCE) -> None:
        from pocketsphinx import Endpointer

        if not 0.1 <= end_silence <= 2.0:
            raise ValueError("end_silence must be between 0.1 and 2 seconds")
        self.endpointer = Endpointer(window=end_silence, ratio=0.9, vad_mode=vad_mode,
                                     sample_rate=RATE)
        self.frame_bytes: int = self.endpointer.frame_bytes
        self._pending = b""
        self._speech: list[bytes] = []
        self._start = 0.0
        self._max_bytes = int(max_seconds * RATE) * 2
        #: The last few seconds of the stream, for the pre-roll of each utterance.
        self._history = bytearray()
        self._fed = 0  # bytes fed to the endpointer so far

    def _preroll(self, start: float) -> bytes:
        """The :data:`PREROLL` seconds of audio before stream time ``start``."""
        history_start = (self._fed - len(self._history)) // 2
        begin = max(0, int((start - PREROLL) * RATE) - history_start) * 2
        end = max(0, int(start * RATE) - history_start) * 2
        return bytes(self._history[begin:end])

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
            if speech is not None:
                if not was_speaking:
                    self._start = float(self.endpointer.speech_start)
                    self._speech = [self._preroll(self._start)]
                    self._start -= len(self._speech[0]) / 2 / RATE
                self._speech.append(speech)
            if was_speaking and not self.endpointer.in_speech:
                yield self._utterance()
            elif self.endpointer.in_speech and sum(map(len, self._speech)) >= self._max_bytes:
                yield self._cut()

    def close(self) -> Iterator[Utterance]:
        """End of the stream: the utterance in progress, if any."""
        if self.endpointer.in_speech:
            tail = self._pending + b"\0" * (self.frame_bytes - len(self._pending))
            speech = self.endpointer.end_stream(tail[: self.frame_bytes])
            if speech is not None:
                self._speech.append(speech)
            yield self._utterance()
        self._pending = b""

    def _cut(self) -> Utterance:
        """An utterance that went on too long: judge it now, go on collecting."""
        samples = np.frombuffer(b"".join(self._speech), dtype="<i2").astype(np.int16)
        start = self._start
        self._start = start + len(samples) / RATE
        self._speech = []
        return Utterance(Audio(samples), start, self._start)

    def _utterance(self) -> Utterance:
        samples = np.frombuffer(b"".join(self._speech), dtype="<i2").astype(np.int16)
        self._speech = []
        return Utterance(Audio(samples), self._start, float(self.endpointer.speech_end))


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
class SeatUtterance:
    audio: Audio
    start: float  # stream seconds
    end: float
    speaker: str | None


class Microphone:
    """A live input stream cut into utterances, with seat attribution."""

    def __init__(self, device: int | str | None = None, seats: dict[int, str] | None = None,
                 end_silence: float = DEFAULT_END_SILENCE,
                 silent_for: float | None = SILENT_FOR) -> None:
        """``silent_for``: seconds without sound that mean the device is gone
        (None: wait for sound for ever)."""
        self.device = device
        self.silent_for = silent_for
        self.seats = seats or {}
        self.channels = max(self.seats, default=0) + 1
        self.end_silence = end_silence
        self._stream: Any = None
        self._blocks: queue.Queue[bytes] = queue.Queue()
        self._last_block = 0.0

    def open(self) -> None:
        """Open the device, or MicrophoneError saying why not."""
        import sounddevice

        info = input_device(self.device)
        if info["max_input_channels"] < self.channels:
            raise MicrophoneError(
                f"{info['name']} has {info['max_input_channels']} input channels; "
                f"the seat microphones need {self.channels}."
            )
        self.segmenter = Segmenter(self.end_silence)
        self._energy: deque[np.ndarray[Any, Any]] = deque(maxlen=6000)  # 60 s of 10 ms frames
        self._frames = 0
        #: Seconds of audio received so far (stream time).
        self.position = 0.0
        self._blocks = queue.Queue()

        def callback(data: Any, frames: int, when: Any, status: Any) -> None:
            self._blocks.put(bytes(data))

        try:
            self._stream = sounddevice.RawInputStream(
                samplerate=RATE, blocksize=BLOCK, device=info.get("index", self.device),
                channels=self.channels, dtype="int16", callback=callback, latency="high",
            )
            self._stream.start()
        except Exception as error:  # PortAudioError, OSError
            self._stream = None
            raise MicrophoneError(f"Cannot open the microphone ({error}).") from error
        self._last_block = time.monotonic()

    def read(self, timeout: float) -> list[SeatUtterance]:
        """Utterances that ended within the next ``timeout`` seconds of audio."""
        found: list[SeatUtterance] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                block = self._blocks.get(timeout=max(0.0, left))
            except queue.Empty:
                break
            self._last_block = time.monotonic()
            found.extend(self._feed(block))
        stream = self._stream
        quiet = time.monotonic() - self._last_block
        if (stream is None or not stream.active
                or (self.silent_for is not None and quiet > self.silent_for)):
            raise MicrophoneError("The microphone stopped sending sound.")
        return found

    def _feed(self, block: bytes) -> list[SeatUtterance]:
        samples = np.frombuffer(block, dtype="<i2").reshape(-1, self.channels)
        self.position += len(samples) / RATE
        x = samples.astype(np.float64)
        for i in range(0, len(x), BLOCK):
            frame = x[i : i + BLOCK]
            self._energy.append((frame**2).mean(axis=0))
            self._frames += 1
        mono = x.mean(axis=1) if self.channels > 1 else x[:, 0]
        data = np.clip(mono, -32768, 32767).astype("<i2").tobytes()
        return [
            SeatUtterance(u.audio, u.start, u.end, self._seat(u.start, u.end))
            for u in self.segmenter.feed(data)
        ]

    def _seat(self, start: float, end: float) -> str | None:
        if not self.seats:
            return None
        first = self._frames - len(self._energy)
        lo, hi = max(first, int(start * 100)), max(first + 1, int(end * 100))
        frames = list(self._energy)[lo - first : hi - first]
        if not frames:
            return None
        loudest = int(np.argmax(np.sum(frames, axis=0)))
        return self.seats.get(loudest)

    @property
    def in_speech(self) -> bool:
        """Whether somebody is talking right now (as the voice detector hears it)."""
        return bool(self._stream is not None and self.segmenter.endpointer.in_speech)

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            except Exception as error:  # a dead device may fail to close
                log.debug("closing the microphone: %s", error)
            self._stream = None


def parse_device(text: str | None) -> int | str | None:
    """A device as given on the command line: a number, a name, or None (the system's).

    >>> parse_device("2"), parse_device("pulse"), parse_device(None)
    (2, 'pulse', None)
    """
    return int(text) if text and text.isdigit() else text


def microphone_utterances(
    device: int | str | None = None, end_silence: float = DEFAULT_END_SILENCE
) -> Iterator[Utterance]:
    """Utterances from a live input device, as they end (runs until stopped)."""
    microphone = Microphone(device, end_silence=end_silence, silent_for=None)
    microphone.open()
    try:
        while True:
            for u in microphone.read(0.2):
                yield Utterance(u.audio, u.start, u.end)
    finally:
        microphone.close()
