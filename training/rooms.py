"""Where the training lines are said: rooms, other talkers, noise, microphones.

Everything here is built from training material only: the babble is training
voices reading table talk (never the benchmarks' babble bed or its
talkers), the rooms are synthetic impulse responses (never sox's reverb,
which the benchmarks use), the noise is generated. Each utterance gets
silence around it as a voice detector would leave it, a random level, and
at random: a room, one noise at 0-25 dB, a cheap microphone's band, the
referee's own voice leaking under it. A set may also have every utterance
said over the referee's voice and cleaned by the product's own echo
canceller (:func:`over_referee`), as a move said while the referee talks
reaches the recogniser.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE, Audio, from_float
from referee.speech.hearing.echo import FRAME, cancel_echo

Signal = npt.NDArray[np.float64]


def as_float(audio: Audio) -> Signal:
    return audio.samples.astype(np.float64) / 32768.0


def active_power(signal: Signal) -> float:
    """Mean power of the 20 ms frames within 35 dB of the loudest."""
    frame = RATE // 50
    n = len(signal) // frame
    if n == 0:
        return float(np.mean(signal**2)) if len(signal) else 0.0
    powers = (signal[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    return float(powers[powers >= powers.max() * 10 ** (-3.5)].mean())


def impulse_response(rng: random.Random) -> Signal:
    """A synthetic room: the direct sound, a few early reflections and an
    exponentially decaying diffuse tail (RT60 0.15-0.9 s), darker as it decays."""
    rt60 = rng.uniform(0.15, 0.9)
    length = int(min(rt60, 0.6) * RATE * 1.2)
    t = np.arange(length) / RATE
    noise = np.random.default_rng(rng.getrandbits(32)).standard_normal(length)
    tail = noise * np.exp(-6.9 * t / rt60)
    # High frequencies die faster: a one-pole low-pass whose cut-off falls with time.
    smooth = np.empty_like(tail)
    state = 0.0
    coefficients = 0.2 + 0.75 * (t / t[-1])
    for i, (x, a) in enumerate(zip(tail, coefficients, strict=True)):
        state = a * state + (1 - a) * x
        smooth[i] = state
    response = smooth * rng.uniform(0.05, 0.4)
    response[0] = 1.0
    for _ in range(rng.randint(2, 6)):
        response[rng.randint(int(0.002 * RATE), int(0.03 * RATE))] += rng.uniform(-0.5, 0.6)
    out: Signal = response / np.sqrt(np.sum(response**2))
    return out


def convolve(signal: Signal, response: Signal) -> Signal:
    size = len(signal) + len(response) - 1
    n = 1 << (size - 1).bit_length()
    out: Signal = np.fft.irfft(np.fft.rfft(signal, n) * np.fft.rfft(response, n), n)[:size]
    return out


def pink(n: int, rng: random.Random) -> Signal:
    spectrum = np.fft.rfft(np.random.default_rng(rng.getrandbits(32)).standard_normal(n))
    freqs = np.fft.rfftfreq(n)
    freqs[0] = freqs[1] if n > 1 else 1.0
    out: Signal = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    return out / (np.std(out) + 1e-12)


def household(n: int, rng: random.Random) -> Signal:
    """A kitchen or living room: a fan or fridge hum (brown noise and mains
    harmonics), clatter (short decaying clicks), or a radio's tones."""
    gen = np.random.default_rng(rng.getrandbits(32))
    t = np.arange(n) / RATE
    kind = rng.randrange(3)
    if kind == 0:
        brown = np.cumsum(gen.standard_normal(n))
        brown -= np.convolve(brown, np.ones(400) / 400, mode="same")
        mains = rng.choice((50.0, 60.0))
        hum = sum(np.sin(2 * np.pi * mains * k * t + gen.uniform(0, 6)) / k for k in (1, 2, 3))
        out = brown / (np.std(brown) + 1e-12) + rng.uniform(0.2, 1.0) * hum
    elif kind == 1:
        out = 0.05 * gen.standard_normal(n)
        for _ in range(rng.randint(2, 12)):
            at = rng.randrange(n)
            size = min(n - at, int(rng.uniform(0.01, 0.08) * RATE))
            decay = np.exp(-np.arange(size) / (size / 5 + 1))
            out[at:at + size] += gen.standard_normal(size) * decay * rng.uniform(1, 6)
    else:
        out = np.zeros(n)
        note = int(0.25 * RATE)
        for start in range(0, n, note):
            freq = 220 * 2 ** (rng.randint(0, 24) / 12)
            span = t[start:start + note] - t[start]
            out[start:start + note] += np.sin(2 * np.pi * freq * span) * np.exp(-3 * span)
        out += 0.1 * gen.standard_normal(n)
    return out / (np.std(out) + 1e-12)


def band(signal: Signal, low: float, high: float) -> Signal:
    """The signal through a cheap microphone or a phone's band (smooth edges)."""
    n = len(signal)
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    gain = 1 / (1 + (low / np.maximum(freqs, 1.0)) ** 4) / (1 + (freqs / high) ** 4)
    out: Signal = np.fft.irfft(spectrum * gain, n)
    return out


def mix(speech: Signal, noise: Signal, snr_db: float) -> Signal:
    """Speech with noise at ``snr_db`` (speech power measured where it is active)."""
    if len(noise) < len(speech):
        noise = np.resize(noise, len(speech))
    noise = noise[: len(speech)]
    gain = math.sqrt(active_power(speech) / (np.mean(noise**2) * 10 ** (snr_db / 10) + 1e-12))
    out: Signal = speech + gain * noise
    return out


@dataclass
class Room:
    """How one utterance was made to sound (kept with the example)."""

    parts: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return " ".join(self.parts) or "clean"


#: Said over the referee: its voice at the microphone against the player's, dB
#: (``bench trust`` measures -6, 0 and +6), and how long it has talked before
#: the player starts (the canceller has learnt the room by then, as in a game).
OVER_RATIO_DB = (-8.0, 8.0)
OVER_WARM_SECONDS = (1.5, 3.0)


def over_referee(speech: Signal, echo: Callable[[], Audio],
                 rng: random.Random) -> tuple[Signal, str]:
    """``speech`` said while the referee talks, as the echo canceller leaves it.

    The referee's sentences (``echo()``, in its own voice) are played from
    1.5-3 s before the player starts to the end of the utterance; they reach
    the microphone through a room of their own and a 5-50 ms delay, at
    -8 to +8 dB against the player; the microphone's signal and what was
    played go through :func:`~referee.speech.hearing.echo.cancel_echo`, the
    live table's canceller with its settings, and what it leaves over the
    utterance is the example: the echo it missed and the bites its residual
    suppressor takes out of the player's words while both talk."""
    warm = int(rng.uniform(*OVER_WARM_SECONDS) * RATE)
    total = warm + len(speech)
    pieces: list[Signal] = []
    while sum(map(len, pieces)) < total:  # sentence, pause, sentence, ...
        pieces += [as_float(echo()), np.zeros(int(rng.uniform(0.1, 0.4) * RATE))]
    played = np.concatenate(pieces)[:total]
    delay = int(rng.uniform(0.005, 0.05) * RATE)
    arriving = convolve(np.concatenate([np.zeros(delay), played]), impulse_response(rng))[:total]
    ratio = rng.uniform(*OVER_RATIO_DB)
    gain = math.sqrt(active_power(speech) * 10 ** (ratio / 10) / (active_power(arriving) + 1e-12))
    mic = np.concatenate([gain * arriving, np.zeros(FRAME)])
    mic[warm:total] += speech
    played = np.concatenate([played, np.zeros(FRAME)])
    # Both at a level a microphone and a sound card would give, in 16 bits.
    mic_level = 0.5 / (float(np.max(np.abs(mic))) or 1.0)
    played_level = 0.5 / (float(np.max(np.abs(played))) or 1.0)
    left = cancel_echo(from_float(mic * mic_level, RATE), from_float(played * played_level, RATE))
    # The canceller's output comes one frame after its input.
    out: Signal = as_float(left)[warm + FRAME:total + FRAME] / mic_level
    return out, f"over{ratio:+.0f}"


def place(clean: Audio, rng: random.Random, babble: Callable[[int], Signal],
          echo: Callable[[], Audio] | None = None, clean_share: float = 0.2,
          over: bool = False) -> tuple[Audio, str]:
    """The utterance in a room at random (``clean_share`` of them as they are,
    with silence and a level only). ``babble(n)``: n samples of other people
    talking; ``echo()``: one of the referee's sentences in its own voice.
    ``over``: every utterance, clean or not, also said over the referee's voice
    and cleaned by the echo canceller (:func:`over_referee`), after its room,
    noise and microphone."""
    room = Room()
    speech = as_float(clean)
    lead, tail = rng.uniform(0.05, 0.5), rng.uniform(0.25, 0.7)
    speech = np.concatenate([np.zeros(int(lead * RATE)), speech, np.zeros(int(tail * RATE))])
    if rng.random() >= clean_share:
        if rng.random() < 0.5:
            speech = convolve(speech, impulse_response(rng))[: len(speech)]
            room.parts.append("room")
        roll = rng.random()
        snr = rng.choice((rng.uniform(0, 25), rng.uniform(5, 20)))
        if roll < 0.4:
            speech = mix(speech, babble(len(speech)), snr)
            room.parts.append(f"babble{snr:.0f}")
        elif roll < 0.6:
            speech = mix(speech, pink(len(speech), rng), snr + 3)
            room.parts.append(f"pink{snr + 3:.0f}")
        elif roll < 0.8:
            speech = mix(speech, household(len(speech), rng), snr + 3)
            room.parts.append(f"household{snr + 3:.0f}")
        if echo is not None and rng.random() < 0.1:
            leak = as_float(echo())
            start = rng.randrange(max(1, len(speech) - len(leak) // 2))
            bed = np.zeros(len(speech))
            piece = leak[: len(speech) - start]
            bed[start:start + len(piece)] = piece
            if np.any(bed):
                level = rng.uniform(10, 25)
                speech = mix(speech, bed, level)
                room.parts.append(f"echo{level:.0f}")
        if rng.random() < 0.2:
            low, high = rng.choice(((300.0, 3400.0), (150.0, 5000.0), (80.0, 7000.0)))
            speech = band(speech, low, high)
            room.parts.append(f"band{low:.0f}-{high:.0f}")
    if over and echo is not None:
        speech, said_over = over_referee(speech, echo, rng)
        room.parts.append(said_over)
    peak = float(np.max(np.abs(speech))) or 1.0
    level = 10 ** (rng.uniform(-30, -2) / 20)
    speech = speech / peak * level
    return from_float(speech, RATE), room.describe()


#: The microphones and links a player's voice may come through
#: (:func:`channel`): a telephone (8 kHz, G.711 mu-law), Bluetooth hands-free
#: (narrowband CVSD-like at 8 kHz, or wideband mSBC-like at 16 kHz, with lost
#: packets concealed by repeating the last one) and a cheap headset (a narrow
#: band, a little clipping).
CHANNELS = ("telephone", "hands-free", "hands-free-wide", "headset")


def mu_law(signal: Signal, bits: int = 8) -> Signal:
    """Companded to ``bits`` bits and back, as G.711 does (mu = 255)."""
    mu = 255.0
    peak = float(np.max(np.abs(signal))) or 1.0
    x = np.clip(signal / peak, -1, 1)
    y = np.sign(x) * np.log1p(mu * np.abs(x)) / math.log1p(mu)
    steps = 2 ** (bits - 1)
    y = np.round(y * steps) / steps
    out: Signal = np.sign(y) * ((1 + mu) ** np.abs(y) - 1) / mu * peak
    return out


def lost_packets(signal: Signal, rng: random.Random, packet: float = 0.0075,
                 share: float = 0.02) -> Signal:
    """Bluetooth's lost packets (7.5 ms), each concealed by repeating the one before."""
    size = max(1, int(packet * RATE))
    out = signal.copy()
    for start in range(size, len(out) - size, size):
        if rng.random() < share:
            out[start:start + size] = out[start - size:start]
    return out


def channel(signal: Signal, rng: random.Random, kind: str | None = None) -> tuple[Signal, str]:
    """``signal`` (at :data:`~referee.speech.audio.RATE`) as it comes through one
    of :data:`CHANNELS` (``kind``, or one at random), and its name."""
    from referee.speech.audio import resample

    kind = kind or rng.choice(CHANNELS)
    if kind == "headset":
        low, high = rng.uniform(100, 300), rng.uniform(3500, 6000)
        out = band(signal, low, high)
        peak = float(np.max(np.abs(out))) or 1.0
        drive = rng.uniform(1.0, 3.0)
        out = np.tanh(drive * out / peak) / math.tanh(drive) * peak
        return out, kind
    if kind == "hands-free-wide":
        out = mu_law(band(signal, 50.0, 7000.0), bits=10)
        return lost_packets(out, rng, share=rng.uniform(0.0, 0.04)), kind
    narrow = resample(band(signal, 300.0, 3400.0), RATE, 8000)
    narrow = mu_law(narrow, bits=8 if kind == "telephone" else 7)
    out = resample(narrow, 8000, RATE)[: len(signal)]
    if kind == "hands-free":
        out = lost_packets(out, rng, share=rng.uniform(0.0, 0.04))
    return out, kind
