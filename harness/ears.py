"""The recogniser a benchmark hears with, and the research settings that
choose another one than the referee's:

* ``REFEREE_WHISPER_ADAPTER=FILE``: a candidate adapter (``./run train`` wrote
  it), heard unpinned instead of the shipped one;
* ``REFEREE_ENCODER_COMPUTE=float32``: the encoder in float32, the same on
  every CPU (slower, and not the int8 the figures come from).

The referee itself reads neither: a player's installation hears with the
pinned adapter and the int8 encoder.
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.speech.hearing.interface import Recognizer
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.hearing.whisper import COMPUTE_TYPES
from referee.speech.understanding.templates import PhraseSet

ADAPTER_ENV = "REFEREE_WHISPER_ADAPTER"
COMPUTE_ENV = "REFEREE_ENCODER_COMPUTE"


def candidate_adapter() -> Path | None:
    """The adapter file a measurement tries, if any."""
    chosen = os.environ.get(ADAPTER_ENV)
    return Path(chosen) if chosen else None


def encoder_compute() -> str | None:
    """The encoder's compute type a measurement asks for (one of
    ``COMPUTE_TYPES``; anything else is ignored), if any."""
    value = os.environ.get(COMPUTE_ENV, "")
    return value if value in COMPUTE_TYPES else None


def recognizer_for(phrases: PhraseSet, engine: str | None = None,
                   model: Path | str | None = None) -> Recognizer:
    """:func:`~referee.speech.hearing.recognizers.make_recognizer`, with what
    the research settings above choose."""
    return make_recognizer(phrases, engine, model, adapter=candidate_adapter(),
                           compute=encoder_compute())
