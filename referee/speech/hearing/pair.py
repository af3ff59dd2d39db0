"""Two ears, one decision: Moonshine first, Whisper when Moonshine is not sure.

Moonshine tiny hears a short command in about a quarter of Whisper's time
(:mod:`referee.speech.hearing.moonshine`). :class:`TwoEars` lets it hear
every utterance first; what it would act on at once is acted on, and
Whisper is not asked. Anything else (Moonshine unsure, or hearing nothing)
is heard again by Whisper, whose hearing the referee then decides on, told
what Moonshine heard (:func:`together`): the two models' best sentences
must mean the same for anything to be acted on at once. Two ears that
disagree never act at once; what Whisper alone would act on is then asked
about ("Ann, did you say: flip Ann's 7?").

The same function judges two benchmark dumps of the same utterances
(``./run bench recognition --report MOONSHINE.json --pair WHISPER.json``),
so what is measured is what the table does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from referee.speech.audio import Audio
from referee.speech.hearing.confidence import UNSURE_CONFIDENCE
from referee.speech.hearing.interface import OtherEar, Recognizer, Transcript
from referee.wording import SURE_SCORE


def enough(first: Transcript) -> bool:
    """Whether the first ear's hearing is acted on as it stands: it is sure."""
    return bool(first.text) and first.confidence >= SURE_SCORE


def together(first: Transcript, second: Transcript, meaning: Callable[[str], object]
             ) -> Transcript:
    """The second ear's hearing, told the first's (:attr:`Transcript.other`),
    and never sure where the two best sentences mean different things.
    ``meaning`` reads a sentence (any speaker: only a difference counts)."""
    mine = str(first.extra.get("best") or "")
    theirs = str(second.extra.get("best") or second.text)
    agreed = meaning(mine) == meaning(theirs)
    other = OtherEar(str(first.extra.get("model") or ""), mine,
                     float(first.extra.get("probability") or 0.0), agreed)
    confidence = second.confidence
    if second.text and confidence >= SURE_SCORE and not agreed:
        confidence = UNSURE_CONFIDENCE
    return replace(second, confidence=confidence, decode_s=first.decode_s + second.decode_s,
                   other=other)


class TwoEars(Recognizer):
    """Moonshine first, Whisper when Moonshine is not sure (see the module)."""

    def __init__(self, first: Recognizer, second: Recognizer,
                 meaning: Callable[[str], object]) -> None:
        self.first, self.second, self.meaning = first, second, meaning
        self.name = f"{first.name}+{second.name}"
        self.phrases = second.phrases
        self.tail = second.tail
        self._chunks: list[bytes] = []

    def follow(self, moments: frozenset[str] | None) -> None:
        super().follow(moments)
        self.first.follow(moments)
        self.second.follow(moments)

    def prepare(self, audio: Audio, tail: float | None = None) -> Audio:
        return self.second.prepare(audio, tail)

    def can_guess(self, so_far: Audio) -> bool:
        return self.first.can_guess(so_far) and self.second.can_guess(so_far)

    def start(self) -> None:
        self._chunks = []

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)

    def finish(self) -> Transcript:
        import numpy as np

        samples = np.frombuffer(b"".join(self._chunks), dtype="<i2")
        return self.decode(Audio(samples.copy()))

    def decode(self, audio: Audio) -> Transcript:
        first = self.first.decode(audio)
        return first if enough(first) else together(first, self.second.decode(audio),
                                                    self.meaning)

    def guess(self, audio: Audio,
              give_up: Callable[[], bool] | None = None) -> Transcript | None:
        first = self.first.guess(audio, give_up)
        if first is None or enough(first):
            return first
        second = self.second.guess(audio, give_up)
        return None if second is None else together(first, second, self.meaning)

    def describe(self) -> str:
        return (f"{self.first.describe()}; when it is not sure, {self.second.describe()}; "
                "acted on at once only where both hear the same")
