"""Audio as the recognisers want it: 16 kHz, 16-bit, mono.

:func:`load_wav` accepts any PCM WAV (8/16/24/32-bit integer or 32/64-bit
float, any rate, any number of channels) and converts it; anything else
(not a WAV, truncated, empty, compressed) raises :class:`AudioError` with a
sentence a person can act on.

>>> a = Audio(np.zeros(8000, dtype=np.int16))
>>> a.seconds, a.rate
(0.5, 16000)
"""

from __future__ import annotations

import io
import logging
import math
import os
import struct
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

RATE = 16000
STREAMED_SIZE = 0x7FFF0000

Samples = npt.NDArray[np.int16]


class AudioError(ValueError):
    """Audio that cannot be used, with the reason in plain words."""


@dataclass(frozen=True)
class Audio:
    """Mono 16-bit samples at :data:`RATE` (or ``rate``) Hz."""

    samples: Samples
    rate: int = RATE

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate

    def to_bytes(self) -> bytes:
        return self.samples.astype("<i2").tobytes()

    def write_wav(self, path: Path | str) -> None:
        """Write a 16-bit mono WAV, whole or not at all: written beside the
        target and renamed over it, so that a reader (another benchmark
        process making the same fixture) never opens half a file."""
        target = Path(path)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            with wave.open(str(partial), "wb") as out:
                out.setnchannels(1)
                out.setsampwidth(2)
                out.setframerate(self.rate)
                out.writeframes(self.to_bytes())
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)


def _fast_length(n: int) -> int:
    """The smallest number >= ``n`` with no prime factor above 7 (a quick FFT size)."""
    while True:
        m = n
        for p in (2, 3, 5, 7):
            while m % p == 0:
                m //= p
        if m == 1:
            return n
        n += 1


def resample(signal: npt.NDArray[np.float64], rate: int, new_rate: int) -> npt.NDArray[np.float64]:
    """Band-limited resampling by the Fourier method (fine for utterances).

    The signal is padded with silence to a length whose transforms are quick
    at both rates (22,050 -> 16,000 Hz: multiples of 441 -> of 320), then the
    padding is cut off again.

    >>> len(resample(np.zeros(441), 44100, 16000))
    160
    """
    if rate == new_rate or len(signal) == 0:
        return signal
    n = len(signal)
    g = math.gcd(rate, new_rate)
    p, q = rate // g, new_rate // g
    k = _fast_length(-(-n // p))
    padded = np.zeros(p * k)
    padded[:n] = signal
    m = q * k
    spectrum = np.fft.rfft(padded)
    keep = min(len(spectrum), m // 2 + 1)
    out = np.zeros(m // 2 + 1, dtype=complex)
    out[:keep] = spectrum[:keep]
    return np.fft.irfft(out, m)[: max(1, round(n * new_rate / rate))] * (m / (p * k))


def to_int16(signal: npt.NDArray[np.float64]) -> Samples:
    """Float samples in -1..1 to clipped 16-bit integers."""
    return np.clip(np.round(signal * 32767.0), -32768, 32767).astype(np.int16)


def from_float(signal: npt.NDArray[np.float64], rate: int) -> Audio:
    return Audio(to_int16(resample(signal, rate, RATE)), RATE)


def _decode_frames(raw: bytes, width: int, channels: int, fmt: int) -> npt.NDArray[np.float64]:
    """PCM bytes to float samples in -1..1, channels averaged."""
    frame = width * channels
    raw = raw[: len(raw) - len(raw) % frame]
    if fmt == 3:  # IEEE float
        if width not in (4, 8):
            raise AudioError(f"{width * 8}-bit float audio is not supported.")
        data = np.frombuffer(raw, dtype="<f4" if width == 4 else "<f8").astype(np.float64)
    elif width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float64) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768.0
    elif width == 3:
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        value = bytes3[:, 0] | (bytes3[:, 1] << 8) | (bytes3[:, 2] << 16)
        value = np.where(value >= 1 << 23, value - (1 << 24), value)
        data = value.astype(np.float64) / float(1 << 23)
    elif width == 4:
        data = np.frombuffer(raw, dtype="<i4").astype(np.float64) / float(1 << 31)
    else:
        raise AudioError(f"{width * 8}-bit audio is not supported.")
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1)
    return np.nan_to_num(np.clip(data, -1.0, 1.0))


def _read_riff(blob: bytes, name: str) -> tuple[int, int, int, int, bytes]:
    """(format, channels, rate, width, data) from a RIFF/WAVE file, checked."""
    if len(blob) == 0:
        raise AudioError(f"{name} is empty.")
    if len(blob) < 12 or blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        raise AudioError(f"{name} is not a WAV file.")
    pos, fmt_chunk, data = 12, None, None
    while pos + 8 <= len(blob):
        chunk_id, size = blob[pos : pos + 4], struct.unpack("<I", blob[pos + 4 : pos + 8])[0]
        body = blob[pos + 8 : pos + 8 + size]
        if chunk_id == b"fmt ":
            fmt_chunk = body
        elif chunk_id == b"data":
            data = body
            # Writers to a pipe (espeak-ng, sox) cannot know the length and put
            # 2 GB or more in the header: such a chunk runs to the end of the file.
            if len(body) < size and size < STREAMED_SIZE:
                raise AudioError(f"{name} is truncated: its audio data ends early.")
        pos += 8 + size + (size & 1)
    if fmt_chunk is None or len(fmt_chunk) < 16:
        raise AudioError(f"{name} is truncated or damaged: it has no format header.")
    if data is None:
        raise AudioError(f"{name} is truncated: it has no audio data.")
    return (*_check_format(fmt_chunk, name), data)


def _check_format(fmt_chunk: bytes, name: str) -> tuple[int, int, int, int]:
    """(format, channels, rate, bytes per sample) of a ``fmt `` chunk, checked."""
    fmt, channels, rate, _, _, bits = struct.unpack("<HHIIHH", fmt_chunk[:16])
    if fmt == 0xFFFE and len(fmt_chunk) >= 26:  # WAVE_FORMAT_EXTENSIBLE
        fmt = struct.unpack("<H", fmt_chunk[24:26])[0]
    if fmt not in (1, 3):
        raise AudioError(f"{name} is compressed (format {fmt}); please give PCM WAV.")
    if channels == 0 or rate == 0 or bits == 0 or bits % 8:
        raise AudioError(f"{name} has an impossible format ({channels} ch, {rate} Hz, {bits} bit).")
    if not 4000 <= rate <= 384000:
        raise AudioError(f"{name} has a sample rate of {rate} Hz, which is not audio speech.")
    return fmt, channels, rate, bits // 8


@dataclass(frozen=True)
class WavInfo:
    """Where a WAV file's samples are, and their format (:func:`read_wav_header`)."""

    fmt: int
    channels: int
    rate: int
    width: int
    #: Byte offset and length of the audio data in the file.
    offset: int
    size: int

    @property
    def seconds(self) -> float:
        return self.size / (self.width * self.channels * self.rate)


def read_wav_header(handle: BinaryIO, label: str) -> WavInfo:
    """The format and data position of an open WAV file, read chunk by chunk
    (only the headers are read, never the audio); checked as :func:`load_wav`."""
    handle.seek(0, 2)
    total = handle.tell()
    handle.seek(0)
    head = handle.read(12)
    if not head:
        raise AudioError(f"{label} is empty.")
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise AudioError(f"{label} is not a WAV file.")
    pos, fmt_chunk, data = 12, b"", None
    while pos + 8 <= total:
        handle.seek(pos)
        chunk_id, size = struct.unpack("<4sI", handle.read(8))
        if chunk_id == b"fmt ":
            fmt_chunk = handle.read(min(size, 64))
        elif chunk_id == b"data":
            available = total - pos - 8
            if available < size and size < STREAMED_SIZE:
                raise AudioError(f"{label} is truncated: its audio data ends early.")
            data = (pos + 8, min(size, available))
        pos += 8 + size + (size & 1)
    if len(fmt_chunk) < 16:
        raise AudioError(f"{label} is truncated or damaged: it has no format header.")
    if data is None:
        raise AudioError(f"{label} is truncated: it has no audio data.")
    fmt, channels, rate, width = _check_format(fmt_chunk, label)
    return WavInfo(fmt, channels, rate, width, *data)


#: Seconds of audio converted at a time by :func:`stream_wav`, and of context
#: on each side of a block, so that resampling has no seams.
STREAM_BLOCK = 4.0
STREAM_CONTEXT = 0.25


def stream_wav(source: Path | str, block_seconds: float = STREAM_BLOCK) -> Iterator[Audio]:
    """A WAV file as consecutive 16 kHz mono 16-bit blocks, read a block at a
    time: memory stays the same however long the file is (a ten-minute
    recording in a game's log folder). Joined, the blocks equal
    :func:`load_wav` within rounding. Raises :class:`AudioError` as it does."""
    path = Path(source)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise AudioError(f"{path} does not exist.") from None
    except OSError as error:
        raise AudioError(f"Cannot read {path}: {error.strerror or error}.") from None
    with handle:
        info = read_wav_header(handle, str(path))
        frame = info.width * info.channels
        frames = info.size // frame
        step = max(1, int(block_seconds * info.rate))
        context = int(STREAM_CONTEXT * info.rate)
        if frames == 0:
            raise AudioError(f"{path} has no audio in it.")
        done_out = 0  # output samples given so far
        for first in range(0, frames, step):
            lo, hi = max(0, first - context), min(frames, first + step + context)
            handle.seek(info.offset + lo * frame)
            raw = handle.read((hi - lo) * frame)
            signal = resample(_decode_frames(raw, info.width, info.channels, info.fmt),
                              info.rate, RATE)
            # Keep the part for [first, first + step): output positions by rate.
            end_out = round(min(frames, first + step) * RATE / info.rate)
            start = done_out - round(lo * RATE / info.rate)
            keep = signal[start : start + end_out - done_out]
            done_out += len(keep)
            if len(keep):
                yield Audio(to_int16(keep), RATE)


def load_wav(source: Path | str | bytes, name: str | None = None) -> Audio:
    """Read a WAV file (or its bytes) and convert it to 16 kHz mono 16-bit."""
    if isinstance(source, bytes):
        blob, label = source, name or "the audio"
    else:
        path = Path(source)
        label = name or str(path)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise AudioError(f"{label} does not exist.") from None
        except OSError as error:
            raise AudioError(f"Cannot read {label}: {error.strerror or error}.") from None
    fmt, channels, rate, width, data = _read_riff(blob, label)
    signal = _decode_frames(data, width, channels, fmt)
    if len(signal) == 0:
        raise AudioError(f"{label} has no audio in it.")
    return from_float(signal, rate)


def wav_bytes(audio: Audio) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(audio.rate)
        out.writeframes(audio.to_bytes())
    return buffer.getvalue()


#: Frames within this many dB of an utterance's loudest frame hold its speech.
SPEECH_DB = 20.0
#: Audio kept around the speech when an utterance is cut to it (seconds).
SPEECH_MARGIN = 0.15
#: The quiet Whisper hears after an utterance's last loud sound (seconds,
#: :func:`trailing_cut`). A live utterance's words are decoded ahead sooner
#: (:data:`AHEAD`), the rest of it filled in. A shorter tail was tried first:
#: Whisper hears commands as well with 0.07 s (Race to 65, held-out voices,
#: clean / babble 20 / babble 10 dB: 88.7 / 93.2 / 80.2 -> 88.7 / 93.0 /
#: 80.4 %), and the live answer's p95 came down by about 70 ms; but through
#: a real audio server with the referee talking (``bench trust``) a "stop"
#: over its voice was cut less reliably (7 of 8 in 2 of 3 runs), its echo
#: taken for "end the game", and with 0.15 s kept only while it speaks
#: (:data:`OVER_TAIL`) more moves over it were lost (3 of 12, twice).
#: Not shipped: a second session's runs (36 moves over the referee each)
#: varied more from run to run than any tail could, so it could not be
#: shown safe; put down (docs/record/2026-11-27-moves-over-referee.md).
TAIL = 0.15
#: ... while the referee speaks (what follows a player's last sound there is
#: what the echo canceller leaves of its voice, not quiet).
OVER_TAIL = SPEECH_MARGIN
#: The quiet after a live utterance's last loud sound at which its words are
#: decoded ahead, the rest of :data:`TAIL` not come yet filled in
#: (:func:`filled_tail`): the decode runs while the end's quiet does, and the
#: recogniser still hears the tail it always hears. Not while the referee
#: speaks (what follows a player's words there is its voice's leftover:
#: :data:`OVER_TAIL`, as before). The answer came 100 ms sooner (p50 and
#: p95, offline and live), the guess and the whole alike for 97 % of 1,715
#: held-out sentences (docs/record/2026-12-07-decoding-inside-the-quiet.md).
AHEAD = 0.05


def frame_energies(samples: np.ndarray[Any, Any], frame: int,
                   floor: float = 1e-3) -> np.ndarray[Any, Any]:
    """Energy (dB) of each whole ``frame``-sample frame (``floor`` added to the
    mean square, so digital silence has a finite level)."""
    n = len(samples) // frame
    x = samples[: n * frame].astype(np.float64).reshape(n, frame)
    return np.asarray(10 * np.log10((x**2).mean(axis=1) + floor))


def speech_bounds(energy: np.ndarray[Any, Any], frame: int, length: int,
                  below_peak_db: float = SPEECH_DB,
                  margin: int = int(SPEECH_MARGIN * RATE)) -> tuple[int, int] | None:
    """Sample bounds of the speech given 20 ms frame energies, or None (silence)."""
    if len(energy) == 0 or energy.max() < 20.0:  # digital silence or nearly
        return None
    loud = np.nonzero(energy >= energy.max() - below_peak_db)[0]
    start = max(0, int(loud[0]) * frame - margin)
    end = min(length, (int(loud[-1]) + 1) * frame + margin)
    return start, end


def inner_pauses(audio: Audio, below_peak_db: float = SPEECH_DB, shortest_s: float = 0.06,
                 around_s: float = 0.1) -> list[tuple[float, float]]:
    """The quiet stretches inside an utterance where a command said in one
    breath with other words may begin or end: at least ``shortest_s`` of 20
    ms frames more than ``below_peak_db`` under the loudest, with at least
    ``around_s`` of sound before and after (the sound of the shortest
    command of the tuning voices: "hit" in piper-joe-fast); longest first,
    as (start, end) in seconds.

    >>> tone = (np.sin(np.arange(8000) / 3) * 8000).astype(np.int16)
    >>> quiet = np.zeros(3200, dtype=np.int16)
    >>> inner_pauses(Audio(np.concatenate([tone, quiet, tone])))
    [(0.5, 0.7)]
    >>> inner_pauses(Audio(np.concatenate([tone, tone])))
    []
    """
    frame = audio.rate // 50
    energy = frame_energies(audio.samples, frame)
    if len(energy) == 0 or energy.max() < 20.0:
        return []
    loud = energy >= energy.max() - below_peak_db
    first, last = int(np.argmax(loud)), len(loud) - 1 - int(np.argmax(loud[::-1]))
    seconds = frame / audio.rate
    found: list[tuple[int, tuple[float, float]]] = []
    start = None
    for i in range(first, last + 1):
        if not loud[i] and start is None:
            start = i
        elif loud[i] and start is not None:
            if ((i - start) * seconds >= shortest_s and (start - first) * seconds >= around_s
                    and (last + 1 - i) * seconds >= around_s):
                found.append((i - start, (round(start * seconds, 3), round(i * seconds, 3))))
            start = None
    return [pause for _, pause in sorted(found, key=lambda f: -f[0])]


def speech_region(audio: Audio, below_peak_db: float = SPEECH_DB,
                  margin_s: float = SPEECH_MARGIN) -> Audio:
    """The part of an utterance that holds the speech, with a margin.

    Frames of 20 ms within ``below_peak_db`` of the loudest frame count as
    speech; everything before the first and after the last is cut (noise at the
    edges makes a grammar decoder invent words). Silence is returned as is.
    """
    frame = audio.rate // 50
    energy = frame_energies(audio.samples, frame)
    bounds = speech_bounds(energy, frame, len(audio.samples), below_peak_db,
                           int(margin_s * audio.rate))
    if bounds is None:
        return audio
    return Audio(audio.samples[bounds[0] : bounds[1]], audio.rate)


def trailing_cut(audio: Audio, margin_s: float = TAIL) -> Audio:
    """The utterance up to its last speech frame (as in :func:`speech_region`)
    plus ``margin_s``: the quiet after it dropped, the start kept."""
    frame = audio.rate // 50
    bounds = speech_bounds(frame_energies(audio.samples, frame), frame, len(audio.samples),
                           margin=int(margin_s * audio.rate))
    if bounds is None:
        return audio
    return Audio(audio.samples[: bounds[1]], audio.rate)


def filled_tail(audio: Audio, margin_s: float = TAIL) -> tuple[Audio, int]:
    """:func:`trailing_cut`, for a stream that has not yet reached ``margin_s``
    past its last speech frame: the quiet still to come filled in with the
    stream's last 20 ms, mirrored back and forth (the room as it sounds now);
    and how many of the samples came from the stream.

    >>> tone = (np.sin(np.arange(3200) / 3) * 8000).astype(np.int16)
    >>> quiet = np.full(800, 7, dtype=np.int16)  # 50 ms of a quiet room
    >>> filled, came = filled_tail(Audio(np.concatenate([tone, quiet])), 0.15)
    >>> len(filled.samples) - len(tone), came - len(tone), set(filled.samples[came:].tolist())
    (2400, 800, {7})
    >>> filled_tail(Audio(np.concatenate([tone, quiet, quiet, quiet, quiet])), 0.15)[1]
    5600
    """
    frame = audio.rate // 50
    bounds = speech_bounds(frame_energies(audio.samples, frame), frame, len(audio.samples),
                           margin=0)
    if bounds is None:
        return audio, len(audio.samples)
    wanted = bounds[1] + int(margin_s * audio.rate)
    missing = wanted - len(audio.samples)
    if missing <= 0:
        return Audio(audio.samples[:wanted], audio.rate), wanted
    last = audio.samples[-frame:]
    fill = np.resize(np.concatenate([last[::-1], last]), missing).astype(np.int16)
    return Audio(np.concatenate([audio.samples, fill]), audio.rate), len(audio.samples)


def peak_dbfs(audio: Audio) -> float:
    """The level of the loudest 20 ms frame, in dB below full scale.

    >>> round(peak_dbfs(Audio(np.full(1600, 16384, dtype=np.int16))), 1)
    -6.0
    """
    energy = frame_energies(audio.samples, audio.rate // 50, floor=1e-9)
    if len(energy) == 0:
        return -math.inf
    return float(energy.max()) - 20 * math.log10(32768)


def estimated_snr(audio: Audio) -> float:
    """A rough signal-to-noise ratio in dB: loud frames (95th percentile of 20 ms
    frame energies) against quiet ones (10th percentile).

    Measured on the fixtures: clean and reverberant utterances 54-79 dB, babble
    at 20 dB 27-29, babble and pink noise at 10 dB 16-19.
    """
    energy = frame_energies(audio.samples, audio.rate // 50, floor=1.0)
    if len(energy) < 5:
        return 99.0
    return float(np.percentile(energy, 95) - np.percentile(energy, 10))


def suppress_noise(audio: Audio, alpha: float = 2.0, floor: float = 0.05) -> Audio:
    """Spectral subtraction: each frequency loses the noise the quiet frames show.

    The noise spectrum is the 20th percentile of each frequency's power over
    the utterance (32 ms frames, 8 ms hop), so no separate noise sample is
    needed; ``alpha`` over-subtracts, ``floor`` keeps some of every bin.
    """
    x = audio.samples.astype(np.float64)
    n, hop = 512, 128
    if len(x) < n:
        return audio
    window = np.hanning(n)
    count = 1 + (len(x) - n) // hop
    index = np.arange(n)[None, :] + hop * np.arange(count)[:, None]
    spectrum = np.fft.rfft(x[index] * window, axis=1)
    power = np.abs(spectrum) ** 2
    noise = np.percentile(power, 20, axis=0)
    gain = np.sqrt(np.maximum(1 - alpha * noise / (power + 1e-9), floor))
    frames = np.fft.irfft(spectrum * gain, n, axis=1) * window
    out = np.zeros(len(x))
    norm = np.zeros(len(x))
    for i in range(count):
        out[i * hop : i * hop + n] += frames[i]
        norm[i * hop : i * hop + n] += window**2
    out /= np.maximum(norm, 1e-6)
    return Audio(np.clip(np.round(out), -32768, 32767).astype(np.int16), audio.rate)


class PlaybackTrack:
    """What the speakers played and when (``time.monotonic``), for the echo
    canceller: the speaker output adds what it sends, the microphone asks for
    what was playing while it listened. Keeps the last :attr:`keep` seconds.
    Thread-safe: the two sides run in the audio library's threads.
    """

    def __init__(self, keep: float = 20.0) -> None:

        self.keep = keep
        self._lock = threading.Lock()
        self._pieces: list[tuple[float, Samples]] = []

    def add(self, at: float, samples: Samples) -> None:
        """``samples`` are heard from ``at`` on."""
        if not len(samples) or not samples.any():
            return
        with self._lock:
            self._pieces.append((at, samples.copy()))
            while self._pieces and self._pieces[0][0] + len(self._pieces[0][1]) / RATE < (
                    at - self.keep):
                self._pieces.pop(0)

    def window(self, start: float, count: int) -> Samples:
        """The ``count`` samples played from ``start`` on (silence where nothing was)."""
        out = np.zeros(count, np.int16)
        with self._lock:
            pieces = list(self._pieces)
        for at, samples in pieces:
            offset = round((at - start) * RATE)
            lo, hi = max(0, offset), min(count, offset + len(samples))
            if lo < hi:
                out[lo:hi] = samples[lo - offset : hi - offset]
        return out

    def playing(self, start: float, end: float) -> bool:
        """Whether anything was played between ``start`` and ``end``."""
        with self._lock:
            return any(at < end and at + len(s) / RATE > start for at, s in self._pieces)
