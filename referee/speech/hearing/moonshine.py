"""Moonshine as a scorer of the game's own sentences, as Whisper is
(:mod:`referee.speech.hearing.whisper`).

Moonshine (Useful Sensors, MIT) is a speech model built for short live
utterances: its encoder runs on the utterance's own length, not on a fixed
window, so a one-second command costs about 10 ms of encoder on one core
here (Whisper tiny.en's 8-second window: about 55 ms). Its files are ONNX
Runtime's ``.ort`` format, loaded with plain ``onnxruntime``:

* the encoder takes the 16 kHz samples themselves (no log-mel) and gives
  one frame per 23 ms;
* the merged decoder takes the tokens, the encoded frames and a key/value
  cache (its own ``past_key_values``: the decoder's self-attention, growing
  a step at a time, and the encoder's cross-attention, computed at the first
  step and passed back as it came).

The search is Whisper's: :class:`~referee.speech.hearing.whisper.Beam` walks
the phrase file's network (:class:`~referee.speech.hearing.grammar_tree.SentenceSearch`)
token by token, every hypothesis one row of a batch, and the free transcript
(:class:`~referee.speech.hearing.whisper.Greedy`) is decoded in the same
batch as the "anything else" model. There is no prompt: Moonshine was not
trained to read text before the transcript, so the table's names and the
primer are not given, and no adapter (Moonshine is heard as shipped).

The tokenizer is Moonshine's SentencePiece vocabulary (``tokenizer.json``,
read with ``tokenizers``): a word after a space is one piece starting with
"▁", which :class:`MoonshineTokens` writes for the search's " seven".
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE
from referee.speech.hearing.grammar_tree import SentenceSearch
from referee.speech.hearing.whisper import (
    BONUS,
    Beam,
    GaveUp,
    Greedy,
    Result,
)
from referee.speech.hearing.whisper_files import ModelError, check_model_files
from referee.speech.understanding.templates import PhraseSet

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]

#: The shortest audio the encoder takes (its convolutions' reach).
SHORTEST = 1_600


@dataclass(frozen=True)
class MoonshineModel:
    """One Moonshine model: where it comes from and what its files are."""

    #: Its name as the player says it (``--ears moonshine-tiny``) and its folder in ``models/``.
    name: str
    #: The folder of the ``.ort`` files inside the pinned wheel holding them
    #: (``scripts/moonshine-wheels.txt``; later releases hold none).
    inner: str
    #: Its files (the tokenizer's from ``useful-moonshine-onnx``) and their SHA-256.
    files: Mapping[str, str]


#: Moonshine's tokenizer, as shipped in ``useful-moonshine-onnx`` 20251121 (MIT).
TOKENIZER = ("tokenizer.json", "b68b995a58b3373db6c4f46864a9db50cd1333d086150ffa2c1096581ede9c10")
TOKENIZER_INNER = "moonshine_onnx/assets"

MODELS = {
    "moonshine-tiny": MoonshineModel(
        "moonshine-tiny", "moonshine_voice/assets/tiny-en",
        files={
            "encoder_model.ort":
                "94e90a4654fc45cdfedb77c4c08e1739f48862998e58fada384b25118134f221",
            "decoder_model_merged.ort":
                "cf524c4862d36e9e5ab032eddc73637efd822d70e868ac575cf1a46e1e4708a0",
            TOKENIZER[0]: TOKENIZER[1],
        }),
    "moonshine-base": MoonshineModel(
        "moonshine-base", "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en",
        files={
            "encoder_model.ort":
                "9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c",
            "decoder_model_merged.ort":
                "370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3",
            TOKENIZER[0]: TOKENIZER[1],
        }),
}
MOONSHINE_MODELS_ENV = "REFEREE_MOONSHINE_MODELS"


def find_moonshine_model(name: str) -> Path:
    """The folder of a Moonshine model: ``$REFEREE_MOONSHINE_MODELS/NAME``, else
    ``models/NAME`` (where ``referee models install NAME`` and the set-up put it)."""
    from referee.speech.hearing.interface import MODELS_DIR

    root = os.environ.get(MOONSHINE_MODELS_ENV)
    return (Path(root) if root else MODELS_DIR) / name


class MoonshineTokens:
    """Moonshine's SentencePiece tokenizer, written as the grammar search wants
    (:class:`~referee.speech.hearing.whisper_files.Tokens`' methods): a space
    is "▁", with nothing added in front (the search's " seven" is the one
    piece "▁seven", as the model writes it after a word)."""

    start = 1
    end = 2

    def __init__(self, path: Path) -> None:
        import tokenizers

        self._tokenizer = tokenizers.Tokenizer.from_file(str(path))
        self._model = self._tokenizer.model
        self._known: dict[str, tuple[int, ...]] = {}
        if self._tokenizer.token_to_id("</s>") != self.end:
            raise ModelError(f"{path} is not Moonshine's tokenizer (no </s> at {self.end}).")

    def encode(self, text: str) -> tuple[int, ...]:
        found = self._known.get(text)
        if found is None:
            found = tuple(token.id for token in self._model.tokenize(text.replace(" ", "▁")))
            self._known[text] = found
        return found

    def decode(self, ids: Iterable[int]) -> str:
        return str(self._tokenizer.decode(list(ids)))


class Vocabulary:
    """The rows of the decoder's output: every token, in order (the searches
    read :attr:`row` and :attr:`vocabulary` as they do Whisper's decoder's)."""

    def __init__(self, size: int) -> None:
        self.vocabulary = np.arange(size, dtype=np.int64)
        self.row = {token: token for token in range(size)}


@lru_cache(maxsize=2)
def _sessions(folder: Path, threads: int) -> tuple[Any, Any]:
    """The encoder's and decoder's ONNX Runtime sessions, made once a process."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    encoder = onnxruntime.InferenceSession(str(folder / "encoder_model.ort"), options,
                                           providers=providers)
    decoder = onnxruntime.InferenceSession(str(folder / "decoder_model_merged.ort"), options,
                                           providers=providers)
    return encoder, decoder


def _log_softmax(logits: Floats) -> Floats:
    top = logits.max(axis=-1, keepdims=True)
    shifted = logits - top
    out: Floats = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return out


class MoonshineScorer:
    """Moonshine: the encoder and the merged decoder in ONNX Runtime, the
    grammar's search and the free transcript in one batch a step."""

    def __init__(self, folder: Path, threads: int = 1, beam: int = 8) -> None:
        """``folder``: the model's files, checked (:func:`check_moonshine`)."""
        self.folder = folder
        self.beam = beam
        self.bonus = BONUS
        try:
            self.encoder, self.decoder_session = _sessions(folder, threads)
        except Exception as error:  # onnxruntime raises its own types for a bad file
            raise ModelError(f"ONNX Runtime could not load {folder}: {error}") from error
        self.tokens = MoonshineTokens(folder / TOKENIZER[0])
        self.rows = Vocabulary(self.decoder_session.get_outputs()[0].shape[-1])
        self._inputs = [i.name for i in self.decoder_session.get_inputs()]
        self._encoder_inputs = {i.name for i in self.encoder.get_inputs()}
        self._past = [n for n in self._inputs if n.startswith("past_key_values.")]
        self._searches: dict[int, SentenceSearch] = {}

    def search_for(self, phrases: PhraseSet) -> SentenceSearch:
        key = id(phrases)
        if key not in self._searches:
            self._searches[key] = SentenceSearch(phrases, self.tokens)
        return self._searches[key]

    def encode(self, samples: Floats) -> Floats:
        """The encoded frames of one utterance ([1, frames, width])."""
        if len(samples) < SHORTEST:
            samples = np.pad(samples, (0, SHORTEST - len(samples)))
        feed = {"input_values": samples[None].astype(np.float32),
                "attention_mask": np.ones((1, len(samples)), dtype=np.int64)}
        encoded: Floats = self.encoder.run(
            None, {k: v for k, v in feed.items() if k in self._encoder_inputs})[0]
        return encoded

    def _run(self, tokens: list[int], cache: dict[str, Floats], memory: Floats,
             first: bool) -> tuple[Floats, dict[str, Floats]]:
        rows = len(tokens)
        feed: dict[str, Any] = {
            "input_ids": np.asarray(tokens, dtype=np.int64)[:, None],
            "encoder_hidden_states": np.broadcast_to(memory, (rows, *memory.shape[1:])),
            "use_cache_branch": np.array([not first]),
            **cache,
        }
        if "encoder_attention_mask" in self._inputs:
            feed["encoder_attention_mask"] = np.ones((rows, 1), dtype=np.int64)
        out = self.decoder_session.run(None, feed)
        present = {name: value for name, value in zip(self._past, out[1:], strict=True)}
        if not first:  # the cross-attention's keys and values come back as they went
            present.update({n: v for n, v in cache.items() if ".encoder." in n})
        return _log_softmax(out[0][:, -1, :].astype(np.float32)), present

    def _empty(self) -> dict[str, Floats]:
        """The cache before the first step: each key or value with no steps
        (its heads and head size as the decoder declares them)."""
        shapes = {i.name: i.shape for i in self.decoder_session.get_inputs()}
        return {name: np.zeros((1, shapes[name][1], 0, shapes[name][3]), dtype=np.float32)
                for name in self._past}

    def score(self, samples: Floats, phrases: PhraseSet,
              give_up: Callable[[], bool] | None = None) -> Result:
        """Score the grammar's sentences and the free transcript of one utterance
        (16 kHz, -1..1), as :meth:`WhisperScorer.score
        <referee.speech.hearing.whisper.WhisperScorer.score>` does; ``give_up``
        is asked after the encoder and before every step (:class:`GaveUp`)."""
        search = self.search_for(phrases)

        def check() -> None:
            if give_up is not None and give_up():
                raise GaveUp

        memory = self.encode(samples)
        check()
        logp, cache = self._run([self.tokens.start], self._empty(), memory, first=True)
        greedy = Greedy(self.rows, self.tokens.end, self.bonus,
                        int(10 + 8 * len(samples) / RATE))
        beam = Beam(search, self.rows, self.bonus, self.beam)
        reading, rows = 0, [0]
        while True:
            tokens, parents = beam.advance(logp, rows)
            rows = list(range(len(tokens)))
            token = None if greedy.done else greedy.advance(logp[reading])
            if token is not None:
                tokens.append(token)
                parents.append(reading)
                reading = len(tokens) - 1
            if not tokens:
                break
            check()
            chosen = np.asarray(parents)
            cache = {name: (value[chosen] if ".decoder." in name
                            else np.broadcast_to(value[:1], (len(tokens), *value.shape[1:])))
                     for name, value in cache.items()}
            logp, cache = self._run(tokens, cache, memory, first=False)
        nbest = beam.finished()
        free = greedy.result(self.tokens)
        logprobs = tuple(n.logprob for n in nbest)
        return Result(nbest, free, greedy.ends[0] if greedy.ends else -math.inf, None,
                      logprobs[0] if logprobs else None, logprobs)


def check_moonshine(name: str, folder: Path | None = None) -> Path:
    """The folder of Moonshine model ``name``, every file checked (:class:`ModelError`)."""
    if name not in MODELS:
        raise ModelError(f"Unknown Moonshine model {name!r}; choose {', '.join(MODELS)}.")
    folder = folder or find_moonshine_model(name)
    check_model_files(folder, MODELS[name].files)
    return folder
