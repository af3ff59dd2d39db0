"""Hearing through the referee's own voice: acoustic echo cancellation.

The referee knows exactly what it plays, so the microphone's signal can be
cleaned of it: an adaptive filter learns the path from the speaker to the
microphone (the room, the devices' delay) and subtracts the estimated echo;
a residual-echo suppressor then removes what the filter missed. Both are
speexdsp's (``libspeexdsp``, the DSP library of Speex, BSD-licensed; Debian's
``libspeexdsp1``, which PulseAudio depends on), called through ``ctypes``:
no compiled binding is needed.

Frames are 10 ms of 16 kHz mono 16-bit audio. The filter covers
:data:`TAIL_SECONDS` of echo path: the output and input buffers and the
room's reverberation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from functools import cache

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE, Audio

#: 10 ms at 16 kHz: the canceller's frame.
FRAME = 160
#: How much of the echo path the filter learns (device buffers and the room).
TAIL_SECONDS = 0.25
#: Residual echo suppression, dB (speexdsp's defaults are -40 and -15).
SUPPRESS_DB = -40
SUPPRESS_ACTIVE_DB = -15

_ECHO_SET_SAMPLING_RATE = 24
_PREPROCESS_SET_DENOISE = 0
_PREPROCESS_SET_ECHO_SUPPRESS = 20
_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE = 22
_PREPROCESS_SET_ECHO_STATE = 24


class EchoError(RuntimeError):
    """The echo canceller's library is missing."""


@cache
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("speexdsp") or "libspeexdsp.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as error:
        raise EchoError("The echo canceller needs libspeexdsp (Debian: apt install "
                        "libspeexdsp1; scripts/setup.sh installs it).") from error
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    frame = ctypes.POINTER(ctypes.c_int16)
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p, frame, frame, frame]
    lib.speex_preprocess_state_init.restype = ctypes.c_void_p
    lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_preprocess_run.argtypes = [ctypes.c_void_p, frame]
    return lib


def available() -> bool:
    try:
        _library()
    except EchoError:
        return False
    return True


def _int(value: int) -> ctypes.c_int:
    return ctypes.c_int(value)


class EchoCanceller:
    """One microphone's canceller: feed it what the microphone heard and what
    the speakers played over the same 10 ms, get the microphone without the
    referee. Stateful (the filter keeps learning the room): one per input
    channel, kept for the whole game.

    It may be closed from another thread than the one it cancels in (a
    screen that stops while the live loop takes a phone's last frame): a
    frame and the closing never overlap, and a closed canceller refuses
    (:class:`EchoError`) rather than hand speexdsp a freed state (the live
    loop's thread died in it, 2026-12-07).
    """

    def __init__(self, rate: int = RATE, tail_seconds: float = TAIL_SECONDS) -> None:
        self._echo: int | None = None
        self._pre: int | None = None
        self._lock = threading.Lock()
        if rate != RATE:
            raise ValueError(f"the echo canceller runs at {RATE} Hz, not {rate}")
        lib = _library()
        self._lib = lib
        self._echo = lib.speex_echo_state_init(FRAME, int(tail_seconds * rate))
        self._pre = lib.speex_preprocess_state_init(FRAME, rate)
        if not self._echo or not self._pre:
            raise EchoError("speexdsp could not start an echo canceller")
        sample_rate = _int(rate)
        lib.speex_echo_ctl(self._echo, _ECHO_SET_SAMPLING_RATE, ctypes.byref(sample_rate))
        lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_ECHO_STATE,
                                 ctypes.c_void_p(self._echo))
        # Only the echo: the recogniser copes with the room's noise by itself.
        off, suppress, active = _int(0), _int(SUPPRESS_DB), _int(SUPPRESS_ACTIVE_DB)
        lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_DENOISE, ctypes.byref(off))
        lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_ECHO_SUPPRESS,
                                 ctypes.byref(suppress))
        lib.speex_preprocess_ctl(self._pre, _PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE,
                                 ctypes.byref(active))
        self._mic_rest = np.zeros(0, np.int16)
        self._play_rest = np.zeros(0, np.int16)

    def process(self, heard: npt.NDArray[np.int16],
                played: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
        """The microphone's samples without the echo of ``played`` (the same
        number of samples, played over the same time). Samples that do not
        fill a 10 ms frame wait for the next call."""
        if len(heard) != len(played):
            raise ValueError("the microphone and the speakers' samples must cover the same time")
        mic = np.concatenate([self._mic_rest, heard.astype(np.int16)])
        ref = np.concatenate([self._play_rest, played.astype(np.int16)])
        whole = len(mic) // FRAME * FRAME
        self._mic_rest, self._play_rest = mic[whole:].copy(), ref[whole:].copy()
        out = np.empty(whole, np.int16)
        frame_type = ctypes.POINTER(ctypes.c_int16)
        with self._lock:
            if not self._echo or not self._pre:
                raise EchoError("the echo canceller was closed")
            for start in range(0, whole, FRAME):
                m = np.ascontiguousarray(mic[start:start + FRAME])
                r = np.ascontiguousarray(ref[start:start + FRAME])
                o = out[start:start + FRAME]
                self._lib.speex_echo_cancellation(
                    self._echo, m.ctypes.data_as(frame_type), r.ctypes.data_as(frame_type),
                    o.ctypes.data_as(frame_type))
                self._lib.speex_preprocess_run(self._pre, o.ctypes.data_as(frame_type))
        return out

    def close(self) -> None:
        with self._lock:
            if self._echo:
                self._lib.speex_echo_state_destroy(self._echo)
                self._echo = None
            if self._pre:
                self._lib.speex_preprocess_state_destroy(self._pre)
                self._pre = None

    def __del__(self) -> None:
        self.close()


def cancel_echo(heard: Audio, played: Audio) -> Audio:
    """``heard`` without the echo of ``played`` (both from the same moment; the
    shorter is padded with silence): for recordings and benchmarks."""
    n = max(len(heard.samples), len(played.samples))
    mic = np.zeros(n + FRAME, np.int16)
    ref = np.zeros(n + FRAME, np.int16)
    mic[: len(heard.samples)] = heard.samples
    ref[: len(played.samples)] = played.samples
    canceller = EchoCanceller(heard.rate)
    try:
        return Audio(canceller.process(mic, ref)[: len(heard.samples)], heard.rate)
    finally:
        canceller.close()


#: The range of echo delays the alignment searches, around the devices' own
#: latency estimates (which may be off by a few hundred milliseconds).
SEARCH_SECONDS = 0.6
#: How far the reference is put ahead of the echo once the delay is known.
LEAD_SECONDS = 0.05
#: A newly measured delay within this of the one in use changes nothing.
KEEP_WITHIN = 0.04


class DelayFinder:
    """Where the referee's voice reaches the microphone, relative to the
    devices' own latency estimates: the lag at which the microphone's recent
    audio best matches what the speakers played (an FFT cross-correlation,
    normalised). Updated about once a second while the referee speaks; only a
    clear peak moves it.

    ``offset`` is what to add to the estimated capture time of a block to get
    the time its echo's reference starts (the reference a little ahead of the
    echo, as the canceller needs).
    """

    def __init__(self, history: float = 3.0, every: float = 1.0) -> None:
        self.offset = LEAD_SECONDS
        self.found = False
        self._history = int(history * RATE)
        self._every = int(every * RATE)
        self._raw: list[npt.NDArray[np.int16]] = []
        self._raw_start: float | None = None
        self._since = 0

    def restart(self) -> None:
        """The microphone's sound no longer runs on from what came before (a
        gap): its history starts again; the offset found is kept meanwhile."""
        self._raw, self._raw_start, self._since = [], None, 0

    def feed(self, samples: npt.NDArray[np.int16], start: float,
             reference: Callable[[float, int], npt.NDArray[np.int16]]) -> None:
        """A block of the microphone captured from ``start`` (the devices'
        estimate); ``reference(t, n)`` gives what was played from ``t`` on."""
        if self._raw_start is None:
            self._raw_start = start
        self._raw.append(samples)
        total = sum(len(r) for r in self._raw)
        while total - len(self._raw[0]) >= self._history:
            total -= len(self._raw[0])
            self._raw_start += len(self._raw.pop(0)) / RATE
        self._since += len(samples)
        if self._since < self._every or total < self._history:
            return
        self._since = 0
        raw = np.concatenate(self._raw).astype(np.float64)
        wide = reference(self._raw_start - SEARCH_SECONDS, len(raw) + int(2 * SEARCH_SECONDS
                                                                          * RATE))
        lag = best_lag(raw, wide.astype(np.float64))
        if lag is None:
            return
        offset = lag / RATE - SEARCH_SECONDS + LEAD_SECONDS
        # A small change is left alone: the echo still falls inside the
        # filter's tail, and moving the reference would make it learn again.
        if abs(offset - self.offset) > KEEP_WITHIN:
            self.offset = offset
        self.found = True


def best_lag(raw: npt.NDArray[np.float64], wide: npt.NDArray[np.float64]) -> int | None:
    """``k`` such that ``raw[t]`` best matches ``wide[t + k]`` (0 <= k <=
    len(wide) - len(raw)), or None when nothing matches clearly (the referee
    was silent, or the room drowned it).

    >>> x = np.sin(np.arange(4000) * 0.05) * np.random.default_rng(0).standard_normal(4000)
    >>> best_lag(x[300:3300], x)
    300
    """
    if not raw.any() or not wide.any():
        return None
    span = len(wide) - len(raw)
    n = 1 << (len(wide) + len(raw)).bit_length()
    corr = np.fft.irfft(np.fft.rfft(wide, n) * np.conj(np.fft.rfft(raw, n)), n)[: span + 1]
    # normalise by the energy of each window of ``wide``
    energy = np.cumsum(np.concatenate([[0.0], wide**2]))
    window = np.sqrt(np.maximum(energy[len(raw):len(raw) + span + 1] - energy[: span + 1], 1e-9))
    score = np.abs(corr) / (window * np.sqrt(np.sum(raw**2)))
    k = int(np.argmax(score))
    if score[k] < 0.3 or score[k] < 3 * float(np.median(score)):
        return None
    return k
