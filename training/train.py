"""Training the decoder's adapters, and writing them for the referee.

Each example is teacher-forced after the very prompt the referee decodes
after (:func:`~referee.speech.hearing.whisper_recognizer.whisper_context` of that
table: "Mia, Kofi and Sam play Turn 7."), its target transcript then
end-of-text; the loss is the cross-entropy over the referee's decoder
vocabulary (the most frequent text tokens and every token of the training
targets: the rows the referee's own scores are normalised over). AdamW,
a linear warm-up then a cosine decay, a fixed seed: the same data and
settings give the same adapters. A time budget ends training early (the
schedule is then cut where it stands, and said so).
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from referee.speech.hearing.adapter import Adapter
from referee.speech.hearing.decoder import VOCABULARY
from referee.speech.hearing.whisper_files import Tokens, read_ctranslate2
from training.data import Dataset, Example
from training.model import TableDecoder, with_adapter
from training.progress import Bar
from training.sentences import phrases_for


@dataclass(frozen=True)
class Settings:
    rank: int = 32
    alpha: float = 32.0
    dropout: float = 0.05
    rate: float = 1e-3
    batch: int = 16
    epochs: float = 2.0
    warmup: int = 100
    seed: int = 2026
    #: Examples of the set kept apart to watch the loss on (every n-th).
    watch_every: int = 40
    #: With real recordings in the set (``--real``): the share of each batch
    #: drawn from them, the rest from the synthetic lines (a replay that keeps
    #: what the adapter knows); an epoch is then one pass over the real ones.
    real_share: float = 0.5


def prompt(tokens: Tokens, example: Example) -> list[int]:
    """The referee's prompt for this example's table (as
    :meth:`~referee.speech.hearing.whisper.WhisperScorer._prompt` builds it)."""
    from referee.speech.hearing.whisper_recognizer import whisper_context

    context = whisper_context(phrases_for(example.game, example.players))
    return [tokens.previous, *tokens.encode(" " + context), tokens.start, tokens.no_timestamps]


def vocabulary(tokens: Tokens, suppress: set[int], targets: Sequence[Sequence[int]]) -> list[int]:
    """The rows the loss is normalised over, as the referee's decoder has them."""
    used = {t for target in targets for t in target}
    frequent = (t for t in range(VOCABULARY) if t not in suppress)
    return sorted({*frequent, *used, tokens.end} - (suppress - used))


def teacher_rows(prompts: Sequence[Sequence[int]], targets: Sequence[Sequence[int]],
                 row: Mapping[int, int], end: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher forcing's batch: each prompt then its target but the last token,
    padded with ``end`` ([batch, steps]); and what each position must predict,
    as the target's vocabulary rows (``row``), -1 where no loss is taken."""
    rows = [[*p, *t[:-1]] for p, t in zip(prompts, targets, strict=True)]
    length = max(map(len, rows))
    tokens = torch.full((len(rows), length), end, dtype=torch.long)
    wanted = torch.full((len(rows), length), -1, dtype=torch.long)
    for b, (p, t) in enumerate(zip(prompts, targets, strict=True)):
        tokens[b, : len(rows[b])] = torch.tensor(rows[b])
        start = len(p) - 1
        wanted[b, start : start + len(t)] = torch.tensor([row[x] for x in t])
    return tokens, wanted


class Batches:
    """Examples as padded token rows, targets (vocabulary rows, -1 where no
    loss is taken) and encodings."""

    def __init__(self, data: Dataset, tokens: Tokens, suppress: set[int]) -> None:
        self.data = data
        self.prompts = [prompt(tokens, e) for e in data.examples]
        self.targets = [[*tokens.encode(" " + e.target), tokens.end] for e in data.examples]
        self.vocabulary = vocabulary(tokens, suppress, self.targets)
        self.row = {t: i for i, t in enumerate(self.vocabulary)}
        self.end = tokens.end

    def make(self, indexes: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        tokens, wanted = teacher_rows([self.prompts[i] for i in indexes],
                                      [self.targets[i] for i in indexes], self.row, self.end)
        encoded = torch.from_numpy(np.stack([self.data.encoding(i) for i in indexes]).astype(
            np.float32))
        return tokens, wanted, encoded


def warm_then_cosine(optimiser: torch.optim.Optimizer, warmup: int,
                     steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """The learning rate rising linearly over ``warmup`` steps, then falling
    to zero along a half cosine by ``steps``."""

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        done = (step - warmup) / max(1, steps - warmup)
        return 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))

    return torch.optim.lr_scheduler.LambdaLR(optimiser, rate)


def descend(optimiser: torch.optim.Optimizer, schedule: torch.optim.lr_scheduler.LambdaLR,
            loss: torch.Tensor, parameters: list[torch.nn.Parameter]) -> None:
    """One step down the loss: gradients clipped to norm 1, then the schedule moves on."""
    optimiser.zero_grad()
    loss.backward()  # type: ignore[no-untyped-call]
    torch.nn.utils.clip_grad_norm_(parameters, 1.0)
    optimiser.step()
    schedule.step()


def loss_of(model: TableDecoder, tokens: torch.Tensor, wanted: torch.Tensor,
            encoded: torch.Tensor) -> torch.Tensor:
    at = wanted >= 0
    return torch.nn.functional.nll_loss(model(tokens, encoded, at), wanted[at])


def is_real(example: Example) -> bool:
    """A real recording (:mod:`~training.real`), not a synthetic line."""
    return example.kind.startswith("real")


class Order:
    """Indexes drawn in shuffled passes, a few at a time (a seeded generator)."""

    def __init__(self, indexes: Sequence[int], rng: random.Random) -> None:
        self.indexes, self.rng, self.queue = list(indexes), rng, list[int]()

    def take(self, count: int) -> list[int]:
        while len(self.queue) < count and self.indexes:
            more = list(self.indexes)
            self.rng.shuffle(more)
            self.queue += more
        chosen, self.queue = self.queue[:count], self.queue[count:]
        return chosen


def train(data: Dataset, model_folder: Path, settings: Settings, budget_s: float | None = None,
          log: Callable[[str], None] = print,
          start: Adapter | None = None) -> tuple[TableDecoder, dict[str, Any]]:
    """Train adapters on ``data``; returns the model and what happened.

    ``start``: an adapter to train over (the shipped one): the new adapter
    learns only what ``start`` lacks, and :func:`write_adapter` writes both as
    one. Where ``data`` holds real recordings and synthetic lines, each batch
    is :attr:`Settings.real_share` real (a replay of the lines keeps what the
    adapter knows)."""
    torch.manual_seed(settings.seed)
    torch.set_num_threads(2)
    tokens = Tokens(model_folder / "tokenizer.json")
    config = json.loads((model_folder / "config.json").read_text())
    batches = Batches(data, tokens, set(config.get("suppress_ids", [])))
    variables = {k: v for k, v in read_ctranslate2(model_folder / "model.bin").items()
                 if k.startswith("decoder/")}
    if start is not None:
        variables = with_adapter(variables, start)
    model = TableDecoder(variables, batches.vocabulary, settings.rank, settings.alpha,
                         settings.seed, settings.dropout)
    watch = [i for i in range(len(data)) if i % settings.watch_every == 0]
    train_ids = [i for i in range(len(data)) if i % settings.watch_every != 0]
    real = [i for i in train_ids if is_real(data.examples[i])]
    lines = [i for i in train_ids if not is_real(data.examples[i])]
    real_batch = (round(settings.batch * settings.real_share) if real and lines
                  else settings.batch if real else 0)
    if real_batch:
        steps = max(1, math.ceil(len(real) * settings.epochs / real_batch))
    else:
        steps = max(1, math.ceil(len(train_ids) * settings.epochs / settings.batch))
    optimiser = torch.optim.AdamW(model.adapters(), lr=settings.rate, weight_decay=0.0)

    schedule = warm_then_cosine(optimiser, settings.warmup, steps)
    rng = random.Random(settings.seed)
    orders = (Order(real, rng), Order(lines, rng)) if real_batch else (Order(train_ids, rng),
                                                                        Order([], rng))
    started = time.monotonic()
    before = watch_loss(model, batches, watch, settings.batch)
    log(f"{len(train_ids)} examples to train on, {len(watch)} watched; {steps} steps; "
        f"loss on the watched examples before: {before:.3f}")
    bar = Bar(steps, "training")
    recent: list[float] = []
    losses: list[float] = []
    step = 0
    for step in range(steps):
        if budget_s is not None and time.monotonic() - started > budget_s:
            log(f"time budget of {budget_s:.0f} s reached after {step} of {steps} steps")
            break
        chosen = (orders[0].take(real_batch) + orders[1].take(settings.batch - real_batch)
                  if real_batch else orders[0].take(settings.batch))
        model.train()
        loss = loss_of(model, *batches.make(chosen))
        descend(optimiser, schedule, loss, model.adapters())
        losses.append(float(loss.detach()))
        recent = [*recent[-49:], losses[-1]]
        bar(step + 1, f"loss {sum(recent) / len(recent):.3f}")
    else:
        step = steps
    bar.close()
    after = watch_loss(model, batches, watch, settings.batch)
    log(f"loss on the watched examples after: {after:.3f}")
    report = {"settings": asdict(settings), "examples": len(train_ids), "watched": len(watch),
              "real_examples": len(real),
              "steps": step, "planned_steps": steps, "loss_before": round(before, 4),
              "loss_after": round(after, 4),
              "train_loss_first": round(float(np.mean(losses[:5] or [math.nan])), 4),
              "train_loss_last": round(float(np.mean(losses[-5:] or [math.nan])), 4),
              "seconds": round(time.monotonic() - started)}
    return model, report


def watch_loss(model: TableDecoder, batches: Batches, watch: Sequence[int], size: int) -> float:
    """Mean loss per token on the watched examples (no dropout, no gradients)."""
    if not watch:
        return float("nan")
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(watch), size):
            tokens, wanted, encoded = batches.make(watch[start : start + size])
            n = int((wanted >= 0).sum())
            total += float(loss_of(model, tokens, wanted, encoded)) * n
            count += n
    return total / max(count, 1)


def write_adapter(model: TableDecoder, path: Path, report: dict[str, Any],
                  start: Adapter | None = None) -> str:
    """Write the adapters (:meth:`TableDecoder.export`; with ``start``, the
    adapter they were trained over and they as one: :func:`~training.adapters.stack`)
    and what made them to one ``.npz``, byte for byte the same for the same
    arrays; returns its SHA-256."""
    from referee.speech.hearing.adapter import save
    from training.adapters import stack

    arrays = model.export() if start is None else stack(start, model.export())
    return save(path, arrays, report)
