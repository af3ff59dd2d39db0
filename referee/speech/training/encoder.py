"""Whisper tiny.en's encoder in PyTorch, with low-rank adapters, on the referee's own weights.

The network CTranslate2 runs for the referee
(:func:`referee.speech.hearing.whisper.encode`), built from the same
``model.bin`` variables: two GELU convolutions over the log-mel features
(the second of stride 2), the sinusoidal positions, four pre-norm layers of
self-attention and feed-forward, a final layer norm. Tested against
CTranslate2's own encoder on real recordings (``tests/test_ears.py``).

Every projection of every layer (the fused query/key/value, the attention's
output, both feed-forward layers) gets a low-rank adapter, as the decoder's
do (:class:`~referee.speech.training.model.Adapted`): ``B`` starts at zero,
so training starts from the shipped encoder exactly. Adapters are trained on
accelerators or, slowly, on this CPU (:mod:`referee.speech.training.whole`);
the referee applies them by merging them into the encoder's weights
as the model loads (:func:`referee.speech.hearing.whisper.merge_encoder`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from referee.speech.training.model import Adapted, _norm, lora_arrays

#: The encoder's projections that have adapters: their names and CTranslate2's.
ENCODER_PROJECTIONS = {
    "qkv": "self_attention/linear_0", "self_out": "self_attention/linear_1",
    "ffn_in": "ffn/linear_0", "ffn_out": "ffn/linear_1",
}


class EncoderLayer(nn.Module):
    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], index: int, rank: int,
                 alpha: float, generator: torch.Generator, dropout: float) -> None:
        super().__init__()
        prefix = f"encoder/layer_{index}/"

        def adapted(name: str) -> Adapted:
            return Adapted.of(variables, prefix + ENCODER_PROJECTIONS[name], rank, alpha,
                              generator, dropout)

        self.qkv, self.self_out = adapted("qkv"), adapted("self_out")
        self.ffn_in, self.ffn_out = adapted("ffn_in"), adapted("ffn_out")
        self.self_norm = _norm(variables, prefix + "self_attention/layer_norm")
        self.ffn_norm = _norm(variables, prefix + "ffn/layer_norm")

    def projections(self) -> dict[str, Adapted]:
        return {name: getattr(self, name) for name in ENCODER_PROJECTIONS}


def _frozen(array: npt.NDArray[Any]) -> nn.Parameter:
    return nn.Parameter(torch.tensor(np.asarray(array, np.float32)), requires_grad=False)


class TableEncoder(nn.Module):
    """The encoder of Whisper tiny.en with adapters (rank 0: none)."""

    def __init__(self, variables: Mapping[str, npt.NDArray[Any]], rank: int = 16,
                 alpha: float = 16.0, seed: int = 0, dropout: float = 0.05,
                 heads: int = 6) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed + 1)
        self.conv1_weight = _frozen(variables["encoder/conv1/weight"])
        self.conv1_bias = _frozen(variables["encoder/conv1/bias"])
        self.conv2_weight = _frozen(variables["encoder/conv2/weight"])
        self.conv2_bias = _frozen(variables["encoder/conv2/bias"])
        self.positions = _frozen(variables["encoder/position_encodings/encodings"])
        self.heads = heads
        self.width = self.positions.shape[1]
        count = 0
        while f"encoder/layer_{count}/ffn/linear_0/weight" in variables:
            count += 1
        self.layers = nn.ModuleList(EncoderLayer(variables, i, rank, alpha, generator, dropout)
                                    for i in range(count))
        self.final = _norm(variables, "encoder/layer_norm")
        self.rank = rank

    def adapters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Encodings ([batch, frames / 2, width]) of log-mel features ([batch, 80, frames])."""
        gelu = nn.functional.gelu
        x = gelu(nn.functional.conv1d(features, self.conv1_weight, self.conv1_bias, padding=1))
        x = gelu(nn.functional.conv1d(x, self.conv2_weight, self.conv2_bias, stride=2,
                                      padding=1))
        x = x.transpose(1, 2)
        b, t, _ = x.shape
        x = x + self.positions[:t][None]
        size = self.width // self.heads
        for layer in self.layers:
            assert isinstance(layer, EncoderLayer)
            qkv = layer.qkv(layer.self_norm(x)).view(b, t, 3, self.heads, size)
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            attended = nn.functional.scaled_dot_product_attention(q, k, v,
                                                                  scale=1 / math.sqrt(size))
            x = x + layer.self_out(attended.transpose(1, 2).reshape(b, t, self.width))
            x = x + layer.ffn_out(gelu(layer.ffn_in(layer.ffn_norm(x))))
        out: torch.Tensor = self.final(x)
        return out

    def export(self) -> dict[str, npt.NDArray[np.float16]]:
        """The adapters as :func:`~referee.speech.hearing.whisper.merge_encoder`
        takes them: ``A`` ([in, rank]) and ``B * scale`` ([rank, out]) in
        float16 under each projection's CTranslate2 name."""
        layers = [layer.projections() for layer in self.layers
                  if isinstance(layer, EncoderLayer)]
        return lora_arrays("encoder", layers, ENCODER_PROJECTIONS)
