"""What an ear measured of one hearing, as one frozen value (:class:`Measures`).

Whisper's and Moonshine's grammar search (:mod:`referee.speech.hearing.whisper`)
scores the sentences that can be said now beside the model's own free
transcript; the calibration (:mod:`~referee.speech.hearing.confidence`) and
the referee's decision (:mod:`referee.brain.hearing`) read these measures, a
benchmark's dump keeps them to judge again, and the game log keeps them so
that a resumed game decides each hearing as it was decided.

Written as JSON the layout is the one logs and dumps have always had (the
sentences as lists, the four log-probabilities and lengths as ``scores``, a
part's span as ``from`` and ``to``), so older logs and dumps read as they
are. Reading checks each field (:meth:`Measures.from_json`): a damaged log
is a :class:`~referee.codec.LogError` naming the field, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from referee.codec import LogError, checked


@dataclass(frozen=True)
class Sentence:
    """One sentence of the grammar as the search scored it."""

    #: (written as a list: :func:`referee.codec.plain`)
    writes_itself: ClassVar[bool] = True

    words: str
    #: Its score in the search (log-probability with the search's bonuses).
    score: float
    #: The model's log-probability of it, and its length in tokens.
    logprob: float
    length: int
    #: What the model without the table's adapter makes of it (None: the
    #: same model, or not scored).
    base_logprob: float | None = None

    def to_json(self) -> list[Any]:
        return [self.words, self.score, self.logprob, self.length, self.base_logprob]

    @staticmethod
    def from_json(data: Any) -> Sentence:
        if not isinstance(data, list) or len(data) < 4:
            raise LogError(f"a sentence is {data!r}, not [words, score, logprob, length, base]")
        words, score, logprob, length, *rest = data
        base = rest[0] if rest else None
        return Sentence(_read(words, str, "words"), _read(score, float, "score"),
                        _read(logprob, float, "logprob"), _read(length, int, "length"),
                        None if base is None else _read(base, float, "base"))


@dataclass(frozen=True)
class Measures:
    """One hearing's measures (the search's, the calibration's)."""

    #: (written in the layout of logs and dumps: :func:`referee.codec.plain`)
    writes_itself: ClassVar[bool] = True

    #: The model that heard ("tiny.en+table", "tiny.en", "moonshine-tiny"):
    #: whose calibration judges it ('' in older logs: the table's).
    model: str = ""
    #: The grammar's best sentence ('' when none), the model's own free
    #: transcript, and that transcript written after the game's primer
    #: (None: no primer).
    best: str = ""
    free: str = ""
    primed: str | None = None
    #: The best sentences, best first.
    options: tuple[Sentence, ...] = ()
    #: The best sentence's log-probability and tokens (None and 0 when
    #: there is none), and the free transcript's.
    best_logprob: float | None = None
    best_length: int = 0
    free_logprob: float = 0.0
    free_length: int = 0
    #: Nats per token the best sentence scored above the free transcript.
    margin: float | None = None
    #: How alike the free (and the primed) transcript and the best sentence
    #: are written, 0..100 (the primed one's is None in older logs: the
    #: free one's stands for it).
    similarity: float = 0.0
    primed_similarity: float | None = None
    #: How much better the best sentence scored than the next that means
    #: something else (inf when none does).
    gap: float = 0.0
    #: The log-probability of ending at once: that nothing was said.
    nothing: float = 0.0
    #: The best sentence scored by the model as shipped (None: the same).
    base_logprob: float | None = None
    #: The calibrated probability that the best sentence is what was said
    #: and a command (None before the calibration has weighed it).
    probability: float | None = None
    #: The parts of the utterance heard again around its pauses, when the
    #: whole was not heard (a command said with other words in one breath):
    #: each cut, the likeliest by its own probability first.
    parts: tuple[Part, ...] = ()

    @property
    def chance(self) -> float:
        """The calibrated probability, 0 where there is none."""
        return self.probability or 0.0

    def as_if(self, sentence: Sentence, gap: float, similarity: float,
              primed_similarity: float) -> Measures:
        """The measures as if ``sentence`` (one of the options) were the best."""
        return replace(
            self, best=sentence.words, best_logprob=sentence.logprob,
            best_length=sentence.length,
            margin=sentence.logprob / sentence.length - self.free_logprob / self.free_length,
            similarity=similarity, primed_similarity=primed_similarity, gap=gap,
            base_logprob=sentence.logprob if sentence.base_logprob is None
            else sentence.base_logprob)

    def to_json(self) -> dict[str, Any]:
        """The measures in the layout of logs and dumps."""
        data: dict[str, Any] = {
            "model": self.model, "best": self.best, "free": self.free, "primed": self.primed,
            "options": [o.to_json() for o in self.options],
            "scores": [self.best_logprob, self.best_length, self.free_logprob,
                       self.free_length],
            "margin": self.margin, "similarity": self.similarity,
            "gap": self.gap, "nothing": self.nothing,
            "base_logprob": self.base_logprob, "probability": self.probability,
        }
        if self.primed_similarity is not None:
            data["primed_similarity"] = self.primed_similarity
        if self.parts:  # the likeliest as logs have always had it, then the others
            data["part"] = self.parts[0].to_json()
            if len(self.parts) > 1:
                data["other_parts"] = [p.to_json() for p in self.parts[1:]]
        return data

    @staticmethod
    def from_json(data: Any) -> Measures:
        """Measures read from a log or a dump (any field missing takes its
        default, as older logs lack some), or LogError naming what is wrong."""
        if not isinstance(data, dict):
            raise LogError(f"the measures are {data!r}, not an object")
        scores = data.get("scores") or [None, 0, 0.0, 0]
        if not isinstance(scores, list) or len(scores) != 4:
            raise LogError(f"the scores are {scores!r}, not four numbers")
        options = data.get("options") or []
        if not isinstance(options, list):
            raise LogError(f"the options are {options!r}, not a list")
        part, others = data.get("part"), data.get("other_parts") or []
        if not isinstance(others, list):
            raise LogError(f"the other parts are {others!r}, not a list")
        return Measures(
            model=_read(data.get("model") or "", str, "model"),
            best=_read(data.get("best") or "", str, "best"),
            free=_read(data.get("free") or "", str, "free"),
            primed=_read(data.get("primed"), str | None, "primed"),
            options=tuple(Sentence.from_json(o) for o in options),
            best_logprob=_read(scores[0], float | None, "scores"),
            best_length=_read(scores[1], int, "scores"),
            free_logprob=_read(scores[2], float, "scores"),
            free_length=_read(scores[3], int, "scores"),
            margin=_read(data.get("margin"), float | None, "margin"),
            similarity=_read(data.get("similarity", 0.0), float, "similarity"),
            primed_similarity=_read(data.get("primed_similarity"), float | None,
                                    "primed_similarity"),
            gap=_read(data.get("gap", 0.0), float, "gap"),
            nothing=_read(data.get("nothing", 0.0), float, "nothing"),
            base_logprob=_read(data.get("base_logprob"), float | None, "base_logprob"),
            probability=_read(data.get("probability"), float | None, "probability"),
            parts=() if part is None else tuple(Part.from_json(p) for p in [part, *others]),
        )


@dataclass(frozen=True)
class Part:
    """A part of an utterance heard again on its own: its measures, and
    where it lies in the utterance (seconds)."""

    measures: Measures
    start: float
    end: float

    def to_json(self) -> dict[str, Any]:
        return {**self.measures.to_json(), "from": self.start, "to": self.end}

    @staticmethod
    def from_json(data: Any) -> Part:
        if not isinstance(data, dict):
            raise LogError(f"the part is {data!r}, not an object")
        return Part(Measures.from_json({k: v for k, v in data.items() if k not in ("from", "to")}),
                    _read(data.get("from", 0.0), float, "part.from"),
                    _read(data.get("to", 0.0), float, "part.to"))


def _read(value: Any, hint: Any, name: str) -> Any:
    """``value`` checked against ``hint`` as every logged field is."""
    return checked(value, hint, f"the measures' {name}")


def measures_of(data: Any) -> Measures | None:
    """The measures a benchmark's dump row (its ``extra``) or an older log
    holds, or None where it holds none (another recogniser, silence)."""
    if not isinstance(data, dict) or not ("scores" in data or "options" in data):
        return None
    return Measures.from_json(data)


def dumped(measures: Measures | None) -> dict[str, Any]:
    """The measures as a benchmark's dump keeps them (``extra``; {} for none)."""
    return {} if measures is None else measures.to_json()
