"""Two ears, one decision: Whisper hears, Moonshine is asked when Whisper is not sure.

Whisper tiny.en with the table's adapter decides, as alone. Where it would
act at once, it does, and Moonshine is not asked. Where it is not sure (it
would ask, prompt or stay silent), Moonshine tiny hears the same audio
(about a quarter of Whisper's time: :mod:`referee.speech.hearing.moonshine`)
and :func:`together` tells the decision what it heard
(:attr:`~referee.speech.hearing.interface.Transcript.other`): a sentence
Whisper would ask about is acted on at once only when Moonshine's best
sentence means the same and Moonshine is all but certain of it
(:data:`LIFT`). Nothing else changes: two ears that disagree never act at
once, and Moonshine alone never makes a move.

Chosen on the tuning split (docs/record/2026-12-06-two-ears.md): the other
orders measured there (Moonshine first, acting alone when sure; Whisper's
sure hearings capped when Moonshine disagreed) acted on more wrong moves,
or at once on fewer commands, than Whisper alone.

The benchmarks judge two dumps of the same utterances with these very
functions (``./run bench recognition --report WHISPER.json --pair
MOONSHINE.json``, and the same for ``bench realvoices``), so what is
measured is what the table does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from referee.speech.audio import Audio
from referee.speech.hearing.interface import OtherEar, Recognizer, Transcript
from referee.wording import SURE_SCORE

#: Moonshine's calibrated probability from which its agreement makes a
#: sentence Whisper would ask about sure. Chosen on the tuning split: the
#: lowest of 0.75, 0.9, 0.95, 0.99 at which no more wrong moves and no more
#: table talk were acted on than by Whisper alone.
LIFT = 0.99


def enough(first: Transcript) -> bool:
    """Whether the first ear's hearing stands as it is: it is sure."""
    return bool(first.text) and first.confidence >= SURE_SCORE


def together(first: Transcript, second: Transcript, meaning: Callable[[str], object]
             ) -> Transcript:
    """The first ear's hearing, told the second's (:attr:`Transcript.other`),
    and sure where the first would ask and the second means the same at
    :data:`LIFT` or more. ``meaning`` reads a sentence (any speaker: only a
    difference counts)."""
    heard = second.measures
    mine = first.best or first.text
    theirs = second.best
    chance = heard.chance if heard is not None else 0.0
    agreed = bool(mine) and bool(theirs) and meaning(mine) == meaning(theirs)
    other = OtherEar(heard.model if heard is not None else "", theirs, chance, agreed)
    confidence = first.confidence
    if first.text and confidence < SURE_SCORE and agreed and chance >= LIFT:
        confidence = 1.0
    return replace(first, confidence=confidence, decode_s=first.decode_s + second.decode_s,
                   other=other)


class TwoEars(Recognizer):
    """Whisper, with Moonshine asked when it is not sure (see the module)."""

    def __init__(self, first: Recognizer, second: Recognizer,
                 meaning: Callable[[str], object]) -> None:
        self.first, self.second, self.meaning = first, second, meaning
        self.name = f"{first.name}+{second.name}"
        self.phrases = first.phrases
        self.tail, self.ahead = first.tail, first.ahead

    def follow(self, moments: frozenset[str] | None) -> None:
        super().follow(moments)
        self.first.follow(moments)
        self.second.follow(moments)

    def prepare(self, audio: Audio, tail: float | None = None) -> Audio:
        return self.first.prepare(audio, tail)

    def prepare_ahead(self, so_far: Audio) -> tuple[Audio, int]:
        return self.first.prepare_ahead(so_far)

    def can_guess(self, so_far: Audio) -> bool:
        return self.first.can_guess(so_far) and self.second.can_guess(so_far)

    def start(self) -> None:
        self._chunks: list[bytes] = []

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
        return (f"{self.first.describe()}; when it is not sure, {self.second.describe()} "
                f"too (acted on at once where both mean the same, the second at {LIFT} "
                "or more)")
