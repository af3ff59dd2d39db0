"""The recognisers on request: PocketSphinx and Vosk, each constrained by a
grammar generated from the game's phrase file.

* :class:`PocketSphinxRecognizer` (``--engine pocketsphinx``): the small US
  English model shipped inside the ``pocketsphinx`` wheel, constrained by a
  JSGF grammar.
* :class:`VoskRecognizer` (``--engine vosk``, or by default when a Vosk model
  is installed and Whisper's is not): its grammar is the phrase list of the
  same file plus ``[unk]``.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from referee.speech.audio import RATE
from referee.speech.hearing.grammar import grammar_words, phrase_list, to_jsgf
from referee.speech.hearing.interface import (
    Recognizer,
    RecognizerError,
    Transcript,
)
from referee.speech.understanding.templates import PhraseSet

log = logging.getLogger(__name__)



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


