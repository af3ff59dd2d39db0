"""``./run train moonshine``: an adapter for Moonshine tiny's decoder (#82 item 4).

The same lines, voices and rooms as Whisper's adapter (:func:`training.sentences.draw`,
:func:`training.data.line_example`: training voices only, the benchmarks'
sentences excluded), each utterance prepared as the referee prepares it and
encoded by Moonshine's own encoder (ONNX Runtime, the utterance's length).
The decoder is rebuilt in PyTorch from the weights of its ``.ort`` file
(:func:`referee.speech.hearing.moonshine_decoder.read_decoder`; equal to the
NumPy decoder the referee runs, tested) and a low-rank adapter is learnt on
every projection of its six layers, teacher-forced on the target transcript
after the start token: AdamW, warm-up then cosine decay, batch 16; every
40th example kept apart to report the loss before and after.

The referee hears with it when given the file (benchmarks:
``REFEREE_MOONSHINE_ADAPTER=FILE``); measured, not shipped
(docs/record/2026-12-07-moonshine-adapter.md).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.hearing.moonshine_decoder import (
    HEAD,
    HEADS,
    LAYERS,
    PROJECTIONS,
    ROTARY,
    WIDTH,
    adapter_key,
    read_decoder,
)

#: Seconds of an utterance kept (as Whisper's window).
LONGEST = 8.0
BATCH = 16


@dataclass(frozen=True)
class Encoded:
    """One training example: Moonshine's encoding and the target's tokens
    (the end token included)."""

    memory: npt.NDArray[np.float16]
    target: tuple[int, ...]
    kind: str
    voice: str


def _encode_part(job: tuple[Path, int, int, Sequence[int], Sequence[Any]]) -> list[Encoded]:
    """One worker's examples: said, placed, prepared, encoded."""
    from referee.speech.hearing.moonshine import MoonshineScorer
    from training.data import Babble, Echo, line_example

    model, worker, seed, indexes, lines = job
    scorer = MoonshineScorer(model)
    babble, echo = Babble(seed + 17 * worker + 1), Echo(seed + 31 * worker + 2)
    found = []
    for index, line in zip(indexes, lines, strict=True):
        samples, example = line_example(False, line, index, seed, babble, echo)
        memory = scorer.encode(samples[: int(LONGEST * 16000)])[0].astype(np.float16)
        target = (*scorer.tokens.encode(" " + line.target), scorer.tokens.end)
        found.append(Encoded(memory, target, line.kind, example.voice))
    return found


def build(model: Path, lines: Sequence[Any], seed: int, workers: int = 2) -> list[Encoded]:
    """Every line's example, in ``workers`` processes (example ``i`` depends on
    the seed and ``i`` only)."""
    jobs = [(model, w, seed, list(range(w, len(lines), workers)), list(lines[w::workers]))
            for w in range(workers)]
    if workers == 1:
        return _encode_part(jobs[0])
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_encode_part, jobs)
    return [e for part in parts for e in part]


def save(path: Path, examples: Sequence[Encoded]) -> None:
    """Examples to one ``.npz`` (the encodings end to end, their lengths, the rest as JSON)."""
    lengths = np.array([len(e.memory) for e in examples], np.int64)
    np.savez(path, memory=np.concatenate([e.memory for e in examples]), lengths=lengths,
             meta=np.array(json.dumps([[list(e.target), e.kind, e.voice] for e in examples])))


def load(path: Path) -> list[Encoded]:
    with np.load(path) as stored:
        ends = np.cumsum(stored["lengths"])
        memories = np.split(stored["memory"], ends[:-1])
        meta = json.loads(str(stored["meta"]))
    return [Encoded(m, tuple(t), k, v) for m, (t, k, v) in zip(memories, meta, strict=True)]


def _model(weights: dict[str, npt.NDArray[np.float32]], rank: int, seed: int) -> Any:
    import torch

    class Adapted(torch.nn.Module):
        """Moonshine tiny's decoder, the shipped weights fixed, an adapter learnt."""

        def __init__(self) -> None:
            super().__init__()
            self.w = {k: torch.tensor(v) for k, v in weights.items()}
            self.lora = torch.nn.ParameterDict()
            generator = torch.Generator().manual_seed(seed)
            for layer in range(LAYERS):
                for projection in PROJECTIONS:
                    rows, cols = self.w[f"layers.{layer}.{projection}.weight"].shape
                    self.lora[adapter_key(layer, projection, "A")] = torch.nn.Parameter(
                        torch.randn(rows, rank, generator=generator) / math.sqrt(rows))
                    self.lora[adapter_key(layer, projection, "B")] = torch.nn.Parameter(
                        torch.zeros(rank, cols))
            self.frequencies = 1.0 / 10000.0 ** (torch.arange(0, ROTARY, 2) / ROTARY)

        def linear(self, x: Any, layer: int, projection: str, adapted: bool) -> Any:
            key = f"layers.{layer}.{projection}"
            y = x @ self.w[key + ".weight"]
            if key + ".bias" in self.w:
                y = y + self.w[key + ".bias"]
            if adapted:
                y = y + (x @ self.lora[adapter_key(layer, projection, "A")]) @ self.lora[
                    adapter_key(layer, projection, "B")]
            return y

        def rotated(self, x: Any) -> Any:
            angles = torch.arange(x.shape[2])[:, None] * self.frequencies[None]
            cos = torch.repeat_interleave(torch.cos(angles), 2, -1)
            sin = torch.repeat_interleave(torch.sin(angles), 2, -1)
            turning, rest = x[..., :ROTARY], x[..., ROTARY:]
            swapped = torch.stack((-turning[..., 1::2], turning[..., 0::2]), -1).reshape(
                turning.shape)
            return torch.cat([turning * cos + swapped * sin, rest], -1)

        def forward(self, tokens: Any, memory: Any, heard: Any, adapted: bool = True) -> Any:
            """Logits after every token of ``tokens`` ([rows, steps]); ``memory``
            the encodings ([rows, frames, width]), ``heard`` which frames are
            real (the rest is padding)."""
            rows, steps = tokens.shape
            norm = partial(torch.nn.functional.layer_norm, normalized_shape=(WIDTH,), eps=1e-5)

            def heads(x: Any) -> Any:
                return x.view(rows, -1, HEADS, HEAD).transpose(1, 2)

            x = self.w["embed_tokens.weight"][tokens]
            causal = torch.triu(torch.full((steps, steps), float("-inf")), 1)
            padding = torch.where(heard[:, None, None, :], 0.0, float("-inf"))
            scale = 1.0 / math.sqrt(HEAD)
            for i in range(LAYERS):
                p = f"layers.{i}."
                h = norm(x, weight=self.w[p + "input_layernorm.weight"])
                q = self.rotated(heads(self.linear(h, i, "self_attn.q_proj", adapted)))
                k = self.rotated(heads(self.linear(h, i, "self_attn.k_proj", adapted)))
                v = heads(self.linear(h, i, "self_attn.v_proj", adapted))
                a = torch.softmax(q @ k.transpose(-1, -2) * scale + causal, -1) @ v
                x = x + self.linear(a.transpose(1, 2).reshape(rows, steps, WIDTH), i,
                                    "self_attn.o_proj", adapted)
                h = norm(x, weight=self.w[p + "post_attention_layernorm.weight"])
                q = heads(self.linear(h, i, "encoder_attn.q_proj", adapted))
                k = heads(self.linear(memory, i, "encoder_attn.k_proj", adapted))
                v = heads(self.linear(memory, i, "encoder_attn.v_proj", adapted))
                a = torch.softmax(q @ k.transpose(-1, -2) * scale + padding, -1) @ v
                x = x + self.linear(a.transpose(1, 2).reshape(rows, steps, WIDTH), i,
                                    "encoder_attn.o_proj", adapted)
                h = norm(x, weight=self.w[p + "final_layernorm.weight"])
                value, gate = self.linear(h, i, "mlp.fc1", adapted).chunk(2, -1)
                x = x + self.linear(torch.nn.functional.silu(gate) * value, i, "mlp.fc2",
                                    adapted)
            return norm(x, weight=self.w["norm.weight"]) @ self.w["proj_out.weight"]

    return Adapted()


def batches(examples: Sequence[Encoded], size: int, rng: random.Random) -> Iterator[Any]:
    """Teacher forcing's batches: (input tokens, labels with -100 where no
    loss is taken, encodings, which frames are real), in a shuffled order."""
    import torch

    order = list(range(len(examples)))
    rng.shuffle(order)
    for start in range(0, len(order), size):
        chunk = [examples[i] for i in order[start:start + size]]
        steps, frames = max(len(e.target) for e in chunk), max(len(e.memory) for e in chunk)
        tokens = torch.zeros(len(chunk), steps, dtype=torch.long)
        labels = torch.full((len(chunk), steps), -100)
        memory = torch.zeros(len(chunk), frames, WIDTH)
        heard = torch.zeros(len(chunk), frames, dtype=torch.bool)
        for row, example in enumerate(chunk):
            said = [1, *example.target]  # the start token, then the target
            tokens[row, :len(example.target)] = torch.tensor(said[:-1])
            labels[row, :len(example.target)] = torch.tensor(said[1:])
            memory[row, :len(example.memory)] = torch.from_numpy(
                example.memory.astype(np.float32))
            heard[row, :len(example.memory)] = True
        yield tokens, labels, memory, heard


def train(decoder: Path, examples: Sequence[Encoded], rank: int = 16, epochs: float = 2.0,
          rate: float = 1e-3, seed: int = 0,
          report: Any = print) -> tuple[dict[str, npt.NDArray[np.float32]], dict[str, float]]:
    """The adapter learnt on ``examples`` (but every 40th, kept apart), and the
    kept-apart loss per token before and after."""
    import torch

    torch.manual_seed(seed)
    kept = list(examples[::40])
    taught = [e for i, e in enumerate(examples) if i % 40]
    model = _model(read_decoder(decoder), rank, seed)
    optimiser = torch.optim.AdamW(model.lora.parameters(), lr=rate, weight_decay=0.0)
    steps = max(1, int(math.ceil(len(taught) / BATCH) * epochs))
    warm = max(1, steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * s / steps)))

    def loss_on(batch: Any, adapted: bool = True) -> Any:
        tokens, labels, memory, heard = batch
        logits = model(tokens, memory, heard, adapted)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 labels.reshape(-1), reduction="sum"), (
                                                     labels >= 0).sum()

    def kept_loss(adapted: bool) -> float:
        with torch.no_grad():
            total, count = 0.0, 0
            for batch in batches(kept, 32, random.Random(1)):
                loss, n = loss_on(batch, adapted)
                total, count = total + float(loss), count + int(n)
        return total / max(count, 1)

    before = kept_loss(False) if kept else math.nan
    rng, step, started = random.Random(seed), 0, time.monotonic()
    while step < steps:
        for batch in batches(taught, BATCH, rng):
            loss, n = loss_on(batch)
            optimiser.zero_grad()
            (loss / n).backward()
            optimiser.step()
            schedule.step()
            step += 1
            if step % 50 == 0 or step == steps:
                report(f"step {step}/{steps}: loss {float(loss.detach() / n):.3f} "
                       f"({time.monotonic() - started:.0f} s)")
            if step >= steps:
                break
    after = kept_loss(True) if kept else math.nan
    adapter = {k: v.detach().numpy().astype(np.float32) for k, v in model.lora.items()}
    return adapter, {"kept_loss_before": before, "kept_loss_after": after, "steps": steps}
