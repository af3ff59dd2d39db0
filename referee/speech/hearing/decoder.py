"""Whisper's decoder in NumPy, step by step, with its own key/value cache.

CTranslate2 offers no step-by-step decoding, and scoring a sentence through
``generate`` with a prefix costs a whole call per hypothesis. With its own
cache the decoder extends every hypothesis of a beam by one token in one
batched step. The weights are read straight from the CTranslate2
``model.bin`` (:func:`~referee.speech.hearing.whisper_files.read_ctranslate2`),
so both halves use the same files; low-rank adapters apply over them
(:meth:`Decoder.adapted`).

Log-probabilities are normalised over :data:`VOCABULARY` text tokens (the
most frequent by the tokenizer's merge order, plus every token of the
grammar, plus end-of-text) rather than all 51,864: the same model for the
grammar and the free transcript, and 2.6 times less work per step. Measured
on the fixtures' free transcripts: the mass left out is 0.05 nats on average.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]


#: Text tokens (by merge order) over which probabilities are normalised.
VOCABULARY = 20000

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


Weights = tuple[npt.NDArray[Any], Floats, list["_Layer"], tuple[Floats, Floats]]
#: The weights as the decoder computes with them, by the variables they came
#: from (kept with them: a dict's id is only its own while it lives).
_PREPARED: dict[int, tuple[Mapping[str, npt.NDArray[Any]], Weights]] = {}


def _weights(variables: Mapping[str, npt.NDArray[Any]]) -> Weights:
    """The decoder's weights prepared once for every decoder of the same
    variables (float32, transposed; shared, only read): the embeddings as
    stored, the positions, the layers and the final norm."""
    known = _PREPARED.get(id(variables))
    if known is not None and known[0] is variables:
        return known[1]

    def get(name: str) -> Floats:
        return np.asarray(variables["decoder/" + name], dtype=np.float32)

    def pair(prefix: str, a: str = "weight", b: str = "bias") -> tuple[Floats, Floats]:
        first, second = get(f"{prefix}/{a}"), get(f"{prefix}/{b}")
        return (first.T.copy(), second) if a == "weight" else (first, second)

    layers: list[_Layer] = []
    index = 0
    while f"decoder/layer_{index}/ffn/linear_0/weight" in variables:
        p = f"layer_{index}"
        layers.append(_Layer(
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
    weights: Weights = (np.asarray(variables["decoder/embeddings/weight"]),
                        get("position_encodings/encodings"), layers,
                        pair("layer_norm", "gamma", "beta"))
    if len(_PREPARED) >= 4:
        _PREPARED.clear()
    _PREPARED[id(variables)] = (variables, weights)
    return weights


class Decoder:
    """Whisper's text decoder with a key/value cache, on a restricted vocabulary."""

    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], vocabulary: Sequence[int],
                 heads: int | None = None) -> None:
        self.embeddings, self.positions, self.layers, self.final_norm = _weights(variables)
        self.width = self.positions.shape[1]
        self.heads = heads or int(np.asarray(variables.get("decoder/num_heads", 6)))
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
        pieces, ends, with_adapter = _pieces(prompts, adapted)
        starts = np.cumsum([0, *(len(tokens) for tokens, _, _ in pieces)])
        ids = np.concatenate([np.asarray(tokens, dtype=np.int64) for tokens, _, _ in pieces])
        at = np.concatenate([np.arange(first, first + len(tokens)) for tokens, first, _ in pieces])
        mask = np.where(_seen(pieces, starts), 0.0, -np.inf).astype(np.float32)[None, None]
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

    def logprobs_after(self, start: tuple[Floats, Cache], sequences: Sequence[Sequence[int]],
                       memory: Memory) -> list[float]:
        """:meth:`logprob_after` for several token sequences after the same
        prompt, in one pass: the sequences run packed one after the other,
        each seeing the prompt's cache and its own earlier steps only (so each
        scores exactly as alone, tested), at about the cost of the longest."""
        first, cache = start
        totals = [float(first[self.row[tokens[0]]]) for tokens in sequences]
        pieces = [list(tokens[:-1]) for tokens in sequences]
        if not any(len(tokens) > 1 for tokens in sequences):
            return totals
        length = cache[0][0].shape[2]
        ids = np.asarray([t for piece in pieces for t in piece], dtype=np.int64)
        at = np.concatenate([np.arange(length, length + len(p)) for p in pieces])
        x = (self.embeddings[ids].astype(np.float32) + self.positions[at])[None]
        starts = np.cumsum([0, *(len(p) for p in pieces)])
        seen = np.zeros((len(ids), length + len(ids)), dtype=bool)
        seen[:, :length] = True
        for i, piece in enumerate(pieces):
            span = slice(length + starts[i], length + starts[i + 1])
            seen[starts[i] : starts[i + 1], span] = np.tril(np.ones((len(piece),) * 2, bool))
        mask = np.where(seen, 0.0, -np.inf).astype(np.float32)[None, None]
        hidden, _ = self._hidden(x, cache, memory, mask, 0)
        logp = self._normalised(hidden[0] @ self.output)
        for i, tokens in enumerate(sequences):
            rows = [self.row[t] for t in tokens[1:]]
            steps = np.arange(starts[i], starts[i] + len(rows))
            totals[i] += float(logp[steps, rows].sum())
        return totals

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


Piece = tuple[Sequence[int], int, int | None]


def _pieces(prompts: Sequence[Sequence[int]], adapted: int
            ) -> tuple[list[Piece], list[tuple[int | None, int]], int]:
    """The packed sequence's pieces (tokens, the position of the first, and the
    piece before it, the shared start, if any; the adapter's first), each
    prompt's shared piece and own piece, and how many pieces are the adapter's."""
    pieces: list[Piece] = []
    ends: list[tuple[int | None, int]] = []
    with_adapter = 0
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
    return pieces, ends, with_adapter


def _seen(pieces: Sequence[Piece], starts: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Which steps of the packed sequence each step sees: its own piece's
    earlier steps, and the whole shared piece before it."""
    total = int(starts[-1])
    seen = np.zeros((total, total), dtype=bool)
    for i, (tokens, _, before) in enumerate(pieces):
        span = slice(starts[i], starts[i + 1])
        seen[span, span] = np.tril(np.ones((len(tokens), len(tokens)), dtype=bool))
        if before is not None:
            seen[span, starts[before] : starts[before + 1]] = True
    return seen


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


