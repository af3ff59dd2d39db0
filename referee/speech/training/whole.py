"""Training the encoder's adapters with the decoder's, from audio: a pack, rooms drawn afresh.

The decoder's training (:mod:`~referee.speech.training.train`) reads
encodings computed once; adapting the encoder needs every example through
the encoder, with gradients, each step. This does that, from a training
pack (:mod:`~referee.speech.training.pack`): each example is placed in a
room drawn for it and the epoch (:func:`~referee.speech.training.rooms.place`,
with the pack's babble talkers and referee sentences), prepared as the
referee prepares what it hears (``trailing_cut``, the 8 s log-mel window),
encoded by the adapted encoder and teacher-forced through the decoder after
the referee's prompt for its table. Data loader workers draw the rooms on the
CPUs while the accelerator trains; on a CPU alone it runs too, slowly (about
a second a sample on this 2-core machine).

What is trained (:class:`WholeSettings`): the encoder's adapters, the
decoder's, or both; the decoder's may start from an adapter file (the
shipped one) and stay as they are. With the encoder adapted, the loss adds
the *base* decoder's loss on the same encodings (``base_weight``): the referee
compares table talk with the base decoder's own free transcript, which must
keep reading the adapted encodings as it read the shipped ones.

Run it as ``python -m referee.speech.training.whole PACK OUT.npz [options]``
(see ``--help``); ``scripts/gpu-ears.sh`` is the prepared run for an
accelerator machine.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from referee.speech.audio import RATE, Audio
from referee.speech.hearing.adapter import Adapter, load
from referee.speech.hearing.whisper import WINDOW, log_mel
from referee.speech.training.data import Babble, Echo, prepared
from referee.speech.training.encoder import TableEncoder
from referee.speech.training.model import TableDecoder
from referee.speech.training.pack import Pack
from referee.speech.training.rooms import place
from referee.speech.training.train import descend, loss_of, teacher_rows, warm_then_cosine


@dataclass(frozen=True)
class WholeSettings:
    encoder_rank: int = 16
    #: The decoder adapters' rank; with ``start``, that file's rank instead.
    decoder_rank: int = 32
    #: An adapter file whose decoder adapters the decoder's start from (at its
    #: own rank, so that its change to the decoder is kept exactly: an averaged
    #: adapter has the ranks of its parts side by side).
    start: str = ""
    #: Whether the decoder's adapters are trained (else kept as they start).
    train_decoder: bool = True
    #: Weight of the base decoder's loss on the adapted encodings.
    base_weight: float = 0.5
    rate: float = 1e-3
    batch: int = 32
    epochs: float = 6.0
    warmup: int = 50
    seed: int = 2026
    watch_every: int = 40
    dropout: float = 0.05


class Rooms(torch.utils.data.Dataset[tuple[npt.NDArray[np.float32], int]]):
    """Example ``i`` of a pack in the room drawn for ``(epoch, i)``, as log-mel features."""

    def __init__(self, pack: Pack, seed: int) -> None:
        self.pack = pack
        self.seed = seed
        self.babble = Babble(seed, tracks=pack.babble)
        self.echo = Echo(seed, sentences=[Audio(s, RATE) for s in pack.echo])

    def __len__(self) -> int:
        return len(self.pack)

    def features(self, epoch: int, i: int) -> npt.NDArray[np.float32]:
        rng = random.Random((self.seed * 1_000_003 + i) * 1009 + epoch)
        # The babble and the echo draw from a generator of their own: seed them too.
        self.babble.rng.seed(rng.random())
        self.echo.rng.seed(rng.random())
        referee = self.pack.examples[i]["kind"] == "referee"
        placed, _ = place(Audio(self.pack.utterance(i), RATE), rng, self.babble, self.echo,
                          0.0 if referee else 0.2)
        samples = prepared(placed)[: int(WINDOW * RATE)]
        return log_mel(samples, WINDOW)

    def __getitem__(self, key: tuple[int, int]) -> tuple[npt.NDArray[np.float32], int]:
        epoch, i = key
        return self.features(epoch, i), i


class Order(torch.utils.data.Sampler[tuple[int, int]]):
    """``(epoch, index)`` pairs: each epoch the training examples shuffled."""

    def __init__(self, indexes: Sequence[int], steps: int, batch: int, seed: int) -> None:
        self.indexes, self.total, self.seed = list(indexes), steps * batch, seed

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[tuple[int, int]]:
        rng = random.Random(self.seed)
        given, epoch = 0, 0
        while given < self.total:
            order = list(self.indexes)
            rng.shuffle(order)
            for i in order[: self.total - given]:
                yield epoch, i
            given += min(len(order), self.total - given)
            epoch += 1


def _collate(items: Sequence[tuple[npt.NDArray[np.float32], int]]) -> tuple[torch.Tensor,
                                                                              list[int]]:
    return torch.from_numpy(np.stack([f for f, _ in items])), [i for _, i in items]


def start_decoder(decoder: TableDecoder, adapter: Adapter) -> None:
    """Set the decoder's adapters to an adapter file's (same rank)."""
    for layer, loaded in zip(decoder.layers, adapter.layers, strict=True):
        for name, module in layer.projections().items():
            a, b = loaded[name]
            if a.shape != tuple(module.a.shape):
                raise ValueError(f"{adapter.path}: rank {a.shape[1]}, "
                                 f"the decoder's is {module.rank}")
            with torch.no_grad():
                module.a.copy_(torch.from_numpy(a))
                module.b.copy_(torch.from_numpy(b) / module.scale)


class Whole:
    """The pack's encoder and decoder with their adapters, and the batches they train on."""

    def __init__(self, pack: Pack, settings: WholeSettings, device: str) -> None:
        start = load(Path(settings.start)) if settings.start else None
        if start is not None:  # the decoder at the start adapter's rank
            settings = replace(settings, decoder_rank=start.rank)
        self.pack, self.settings, self.device = pack, settings, device
        variables = pack.variables()
        self.encoder = TableEncoder(variables, settings.encoder_rank, float(settings.encoder_rank),
                                    settings.seed, settings.dropout).to(device)
        self.decoder = TableDecoder(variables, pack.vocabulary, settings.decoder_rank,
                                    float(settings.decoder_rank), settings.seed,
                                    settings.dropout).to(device)
        if start is not None:
            start_decoder(self.decoder, start)
        self.row = {t: i for i, t in enumerate(pack.vocabulary)}
        self.end = pack.targets[0][-1]

    def trained(self) -> list[torch.nn.Parameter]:
        out = self.encoder.adapters() if self.settings.encoder_rank else []
        if self.settings.train_decoder:
            out += self.decoder.adapters()
        return out

    def rows(self, indexes: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        tokens, wanted = teacher_rows([self.pack.prompts[i] for i in indexes],
                                      [self.pack.targets[i] for i in indexes], self.row, self.end)
        return tokens.to(self.device), wanted.to(self.device)

    def losses(self, features: torch.Tensor, indexes: Sequence[int]) -> tuple[torch.Tensor,
                                                                              torch.Tensor]:
        """The adapted decoder's loss and the base decoder's, on the batch."""
        tokens, wanted = self.rows(indexes)
        features = features.to(self.device)
        if self.settings.encoder_rank:
            encoded = self.encoder(features)
        else:
            with torch.no_grad():
                encoded = self.encoder(features)
        adapted = loss_of(self.decoder, tokens, wanted, encoded)
        if not (self.settings.encoder_rank and self.settings.base_weight):
            return adapted, torch.zeros((), device=self.device)
        self.decoder.adapting(False)
        try:
            base = loss_of(self.decoder, tokens, wanted, encoded)
        finally:
            self.decoder.adapting(True)
        return adapted, base

    def export(self) -> dict[str, npt.NDArray[np.float16]]:
        out = self.decoder.export()
        if self.settings.encoder_rank:
            out.update(self.encoder.export())
        return out


def train_whole(pack: Pack, settings: WholeSettings, device: str = "cpu", workers: int = 2,
                budget_s: float | None = None,
                log: Callable[[str], None] = print) -> tuple[Whole, dict[str, Any]]:
    """Train the adapters ``settings`` names on the pack; the model and what happened."""
    from referee.progress import Bar

    torch.manual_seed(settings.seed)
    whole = Whole(pack, settings, device)
    rooms = Rooms(pack, settings.seed)
    watch = [i for i in range(len(pack)) if i % settings.watch_every == 0]
    train_ids = [i for i in range(len(pack)) if i % settings.watch_every != 0]
    steps = max(1, math.ceil(len(train_ids) * settings.epochs / settings.batch))
    trained = whole.trained()
    optimiser = torch.optim.AdamW(trained, lr=settings.rate, weight_decay=0.0)

    schedule = warm_then_cosine(optimiser, settings.warmup, steps)
    watched = [(rooms.features(-1, i), i) for i in watch]

    def watch_loss() -> tuple[float, float]:
        whole.encoder.eval()
        whole.decoder.eval()
        total = np.zeros(2)
        with torch.no_grad():
            for start in range(0, len(watched), settings.batch):
                features, indexes = _collate(watched[start: start + settings.batch])
                adapted, base = whole.losses(features, indexes)
                total += np.array([float(adapted), float(base)]) * len(indexes)
        return float(total[0] / max(1, len(watched))), float(total[1] / max(1, len(watched)))

    started = time.monotonic()
    before = watch_loss()
    log(f"{len(train_ids)} examples, {len(watch)} watched; {steps} steps on {device}; "
        f"{sum(p.numel() for p in trained)} parameters trained; watched loss before "
        f"{before[0]:.3f}" + (f" (base decoder {before[1]:.3f})"
                              if settings.encoder_rank and settings.base_weight else ""))
    loader = torch.utils.data.DataLoader(
        rooms, batch_size=settings.batch, sampler=Order(train_ids, steps, settings.batch,
                                                        settings.seed),
        num_workers=workers, collate_fn=_collate, persistent_workers=False,
        prefetch_factor=4 if workers else None)
    bar = Bar(steps, "training")
    recent: list[float] = []
    losses: list[float] = []
    step = 0
    for step, (features, indexes) in enumerate(loader):
        if budget_s is not None and time.monotonic() - started > budget_s:
            log(f"time budget of {budget_s:.0f} s reached after {step} of {steps} steps")
            break
        whole.encoder.train()
        whole.decoder.train()
        adapted, base = whole.losses(features, indexes)
        descend(optimiser, schedule, adapted + settings.base_weight * base, trained)
        losses.append(float(adapted.detach()))
        recent = [*recent[-49:], losses[-1]]
        bar(step + 1, f"loss {sum(recent) / len(recent):.3f}")
    else:
        step = steps
    bar.close()
    after = watch_loss()
    both = bool(settings.encoder_rank and settings.base_weight)
    log(f"watched loss after: {after[0]:.3f}"
        + (f" (base decoder {after[1]:.3f})" if both else ""))
    report = {"settings": asdict(whole.settings), "examples": len(train_ids), "watched": len(watch),
              "steps": step, "planned_steps": steps, "device": device,
              "loss_before": round(before[0], 4), "loss_after": round(after[0], 4),
              # The base decoder's loss, where it is part of the objective.
              "base_loss_before": round(before[1], 4) if both else None,
              "base_loss_after": round(after[1], 4) if both else None,
              "train_loss_first": round(float(np.mean(losses[:3] or [math.nan])), 4),
              "train_loss_last": round(float(np.mean(losses[-3:] or [math.nan])), 4),
              "seconds": round(time.monotonic() - started)}
    return whole, report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m referee.speech.training.whole",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("pack", type=Path, help="a training pack's folder")
    parser.add_argument("out", type=Path, help="the adapter file to write (.npz)")
    defaults = WholeSettings()
    for name, value in asdict(defaults).items():
        kind = type(value)
        if kind is bool:
            parser.add_argument("--" + name.replace("_", "-"), type=lambda t: t == "yes",
                                default=value, metavar="yes|no")
        else:
            parser.add_argument("--" + name.replace("_", "-"), type=kind, default=value)
    parser.add_argument("--workers", type=int, default=2, help="data loader processes")
    parser.add_argument("--budget", type=float, metavar="SECONDS", help="stop training after")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args(argv)
    settings = WholeSettings(**{name: getattr(args, name) for name in asdict(defaults)})
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the referee decodes in float32
    pack = Pack.read(args.pack)
    whole, report = train_whole(pack, settings, args.device, args.workers, args.budget,
                                log=lambda text: print(text, file=sys.stderr, flush=True))
    from referee.speech.hearing.adapter import save

    report["pack"] = {"folder": args.pack.name, "examples": len(pack)}
    sha = save(args.out, whole.export(), report)
    print(json.dumps({"adapter": str(args.out), "sha256": sha, **report}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
