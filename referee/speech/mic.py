"""Listening all the time: the microphone stream cut into utterances.

:class:`Segmenter` runs PocketSphinx's voice-activity endpointer over a
stream of 16 kHz samples and yields one :class:`Utterance` each time somebody
stops talking for ``end_silence`` seconds (default 0.25 s; at most what the
referee waits before it answers). Measured on 336 clean fixture utterances of
four voices: 0.3 s splits none, 0.25 s splits two (the slow voice pausing
after a name: "Bob, | flip your three down", where the second part alone
still means the same), 0.2 s splits eight. Each 50 ms less is 50 ms sooner
an answer. :func:`microphone_utterances` feeds it from
a live input device through ``sounddevice`` (PortAudio).

The segmenter is pure computation on bytes, so tests drive it with WAV files
played as a stream; the microphone needs a device, and says so clearly when
there is none.
"""

from __future__ import annotations

import queue
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.speech.audio import RATE, Audio

DEFAULT_END_SILENCE = 0.25
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


def microphone_utterances(
    device: int | str | None = None, end_silence: float = DEFAULT_END_SILENCE
) -> Iterator[Utterance]:
    """Utterances from a live input device, as they end (runs until stopped)."""
    import sounddevice

    info = input_device(device)
    segmenter = Segmenter(end_silence)
    blocks: queue.Queue[bytes] = queue.Queue()

    def callback(data: Any, frames: int, time: Any, status: Any) -> None:
        blocks.put(bytes(data))

    with sounddevice.RawInputStream(
        samplerate=RATE, blocksize=segmenter.frame_bytes // 2,
        device=info.get("index", device), channels=1, dtype="int16", callback=callback,
    ):
        while True:
            yield from segmenter.feed(blocks.get())
