"""Whisper tiny.en's decoder in PyTorch, with low-rank adapters, on the referee's own weights.

The same network as the referee's NumPy decoder
(:class:`referee.speech.hearing.decoder.Decoder`), built from the same
CTranslate2 ``model.bin`` variables: token embedding and positions, four
layers of self-attention, cross-attention and a GELU feed-forward, a final
layer norm, and the output projection tied to the embedding, restricted to
the referee's vocabulary. Tested against the NumPy decoder
(``tests/test_ears.py``).

Every projection (self-attention's fused query/key/value and output,
cross-attention's query, fused key/value and output, both feed-forward
layers) gets a low-rank adapter ``x @ A @ B * scale`` (LoRA, Hu et al.
2021): ``B`` starts at zero, so training starts from the base model exactly.
Only the adapters are trained; everything else stays the shipped model's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from referee.speech.hearing.adapter import PROJECTIONS, Adapter

NORMS = {"self_norm": "self_attention/layer_norm", "cross_norm": "attention/layer_norm",
         "ffn_norm": "ffn/layer_norm"}


class Adapted(nn.Module):
    """A frozen projection ``x @ W.T + b`` with a trainable low-rank adapter."""

    def __init__(self, weight: npt.NDArray[Any], bias: npt.NDArray[Any], rank: int,
                 alpha: float, generator: torch.Generator, dropout: float = 0.0) -> None:
        super().__init__()
        out_size, in_size = weight.shape
        self.weight = nn.Parameter(torch.tensor(np.asarray(weight, np.float32)),
                                   requires_grad=False)
        self.bias = nn.Parameter(torch.tensor(np.asarray(bias, np.float32)), requires_grad=False)
        self.rank = rank
        self.scale = alpha / rank if rank else 0.0
        self.a = nn.Parameter(torch.randn(in_size, rank, generator=generator) / math.sqrt(in_size))
        self.b = nn.Parameter(torch.zeros(rank, out_size))
        self.dropout = nn.Dropout(dropout)
        #: False: the projection as shipped (the adapter kept, not applied).
        self.active = True

    @classmethod
    def of(cls, variables: Mapping[str, npt.NDArray[Any]], path: str, rank: int, alpha: float,
           generator: torch.Generator, dropout: float) -> Adapted:
        """The projection the model's variables name ``path`` (its weight and bias)."""
        return cls(variables[path + "/weight"], variables[path + "/bias"], rank, alpha,
                   generator, dropout)

    def base(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight, self.bias)

    def delta(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = (self.dropout(x) @ self.a) @ self.b * self.scale
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.rank or not self.active:
            return self.base(x)
        return self.base(x) + self.delta(x)


def _norm(variables: Mapping[str, npt.NDArray[Any]], path: str) -> nn.LayerNorm:
    """A frozen layer norm with the model's gamma and beta."""
    gamma = np.asarray(variables[path + "/gamma"], np.float32)
    norm = nn.LayerNorm(gamma.shape[0], eps=1e-5)
    norm.weight = nn.Parameter(torch.tensor(gamma), requires_grad=False)
    norm.bias = nn.Parameter(torch.tensor(np.asarray(variables[path + "/beta"], np.float32)),
                             requires_grad=False)
    return norm


class Layer(nn.Module):
    """One decoder layer: its frozen norms and its adapted projections."""

    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], index: int, rank: int,
                 alpha: float, generator: torch.Generator, dropout: float) -> None:
        super().__init__()
        prefix = f"decoder/layer_{index}/"

        def adapted(name: str) -> Adapted:
            return Adapted.of(variables, prefix + PROJECTIONS[name], rank, alpha, generator,
                              dropout)

        self.qkv, self.self_out = adapted("qkv"), adapted("self_out")
        self.cross_q, self.cross_kv = adapted("cross_q"), adapted("cross_kv")
        self.cross_out = adapted("cross_out")
        self.ffn_in, self.ffn_out = adapted("ffn_in"), adapted("ffn_out")
        self.self_norm = _norm(variables, prefix + NORMS["self_norm"])
        self.cross_norm = _norm(variables, prefix + NORMS["cross_norm"])
        self.ffn_norm = _norm(variables, prefix + NORMS["ffn_norm"])

    def projections(self) -> dict[str, Adapted]:
        """The adapted projections by their names (:data:`PROJECTIONS`)."""
        return {name: getattr(self, name) for name in PROJECTIONS}


class TableDecoder(nn.Module):
    """The decoder of Whisper tiny.en with adapters, teacher-forced over whole sequences."""

    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], vocabulary: Sequence[int],
                 rank: int = 32, alpha: float = 32.0, seed: int = 0, dropout: float = 0.05,
                 heads: int = 6) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        embeddings = np.asarray(variables["decoder/embeddings/weight"], np.float32)
        self.embeddings = nn.Parameter(torch.tensor(embeddings), requires_grad=False)
        positions = np.asarray(variables["decoder/position_encodings/encodings"], np.float32)
        self.positions = nn.Parameter(torch.tensor(positions), requires_grad=False)
        self.vocabulary: torch.Tensor
        self.register_buffer("vocabulary", torch.tensor(np.asarray(vocabulary, np.int64)))
        self.heads = heads
        self.width = positions.shape[1]
        count = 0
        while f"decoder/layer_{count}/ffn/linear_0/weight" in variables:
            count += 1
        self.layers = [Layer(variables, i, rank, alpha, generator, dropout)
                       for i in range(count)]
        for i, layer in enumerate(self.layers):
            self.add_module(f"layer_{i}", layer)
        self.final = _norm(variables, "decoder/layer_norm")
        self.rank = rank

    def adapters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    def adapting(self, on: bool) -> None:
        """Apply the adapters (True) or decode as the base model (False)."""
        for layer in self.layers:
            for module in layer.projections().values():
                module.active = on

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.heads, -1).transpose(1, 2)

    def _merge(self, x: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = x.shape
        return x.transpose(1, 2).reshape(b, t, self.width)

    def forward(self, tokens: torch.Tensor, encoded: torch.Tensor,
                at: torch.Tensor | None = None) -> torch.Tensor:
        """Log-probabilities over :attr:`vocabulary` after every position of
        ``tokens`` ([batch, steps]) for the encoded audio ([batch, frames, width]);
        ``at`` (a [batch, steps] mask): only after those positions, flattened
        (the output projection is most of the work)."""
        steps = tokens.shape[1]
        x = self.embeddings[tokens] + self.positions[:steps][None]
        causal = torch.full((steps, steps), -math.inf, device=tokens.device).triu(1)
        scale = 1.0 / math.sqrt(self.width // self.heads)
        for layer in self.layers:
            q, k, v = layer.qkv(layer.self_norm(x)).split(self.width, dim=-1)
            q, k, v = self._split(q), self._split(k), self._split(v)
            weights = q @ k.transpose(-1, -2) * scale + causal
            x = x + layer.self_out(self._merge(weights.softmax(-1) @ v))
            q = self._split(layer.cross_q(layer.cross_norm(x)))
            with torch.no_grad():
                kv = layer.cross_kv.base(encoded)
            if layer.cross_kv.rank and layer.cross_kv.active:
                kv = kv + layer.cross_kv.delta(encoded)
            mk, mv = self._split(kv[..., : self.width]), self._split(kv[..., self.width :])
            attended = (q @ mk.transpose(-1, -2) * scale).softmax(-1) @ mv
            x = x + layer.cross_out(self._merge(attended))
            x = x + layer.ffn_out(nn.functional.gelu(layer.ffn_in(layer.ffn_norm(x))))
        hidden = self.final(x)
        if at is not None:
            hidden = hidden[at]
        logits = hidden @ self.embeddings[self.vocabulary].T
        out: torch.Tensor = logits.log_softmax(-1)
        return out

    def export(self) -> dict[str, npt.NDArray[np.float16]]:
        """The adapters as the referee applies them: per layer and projection,
        ``A`` ([in, rank]) and ``B * scale`` ([rank, out]) in float16, under
        the projection's CTranslate2 name."""
        return lora_arrays("decoder", [layer.projections() for layer in self.layers],
                           PROJECTIONS)


def lora_arrays(part: str, layers: Sequence[Mapping[str, Adapted]],
                names: Mapping[str, str]) -> dict[str, npt.NDArray[np.float16]]:
    """Adapters as the referee reads them: per layer and projection, ``A``
    ([in, rank]) and ``B * scale`` ([rank, out]) in float16, under
    ``PART/layer_N/`` and the projection's CTranslate2 name (``names``)."""
    out: dict[str, npt.NDArray[np.float16]] = {}
    for i, projections in enumerate(layers):
        for name, module in projections.items():
            key = f"{part}/layer_{i}/{names[name]}"
            out[key + "/lora_a"] = module.a.detach().cpu().numpy().astype(np.float16)
            out[key + "/lora_b"] = (module.b.detach() * module.scale).cpu().numpy().astype(
                np.float16)
    return out


def with_adapter(variables: Mapping[str, npt.NDArray[Any]],
                 adapter: Adapter) -> dict[str, npt.NDArray[Any]]:
    """The decoder's variables with ``adapter``'s changes merged into its
    projections' weights (``W + (A B)^T``): a model that decodes as the
    referee does with that adapter, to train a new adapter over."""
    out = dict(variables)
    for index, layer in enumerate(adapter.layers):
        for name, ct2 in PROJECTIONS.items():
            key = f"decoder/layer_{index}/{ct2}/weight"
            a, b = layer[name]
            out[key] = np.asarray(variables[key], np.float32) + (a @ b).T
    return out
