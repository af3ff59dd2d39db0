"""``./run train ears``: synthesise the training set, train the adapter, write it.

    ./run train ears                      # the shipped adapter's recipe (hours, on 2 cores)
    ./run train ears --lines 200 --epochs 1 --out /tmp/tiny.npz   # a tiny run end to end
    ./run train average A.npz B.npz --out models/table-adapter.npz  # adapters averaged
    ./run train ears --lines 1500 --start referee/speech/hearing/table_adapter_synthetic.npz \
        --real DIR ... --copies 2 --per-word 150 --rank 8 --epochs 1   # real voices (below)

``--real``: real recordings with their words
(:mod:`~training.real`), kept apart from every measurement
set's speakers, each batch half real and half the synthetic lines;
``--start``: a new adapter trained over an existing one and written with it
as one (the shipped adapter's recipe since 2026-12-01: docs/training.md,
"Real voices in the adapter").

Reproducible: the same options give the same lines, voices, rooms and
adapter (the data's random draws are seeded per example; training is
seeded). The training set is kept in ``cache/ears/data-SEED-LINES/`` and
reused when it is complete. The adapter is written to ``--out`` (default
``models/table-adapter.npz``, not the shipped one): try it with
``REFEREE_WHISPER_ADAPTER=models/table-adapter.npz ./run bench recognition``;
ship it by copying it over ``referee/speech/hearing/table_adapter.npz`` and
setting :data:`~referee.speech.hearing.adapter.ADAPTER_SHA256` to the
SHA-256 printed at the end (``tests/test_ears.py`` checks the pin).

Only the decoder changes, and the decoder runs in NumPy in the referee
(CTranslate2 runs the encoder only), so there is no CTranslate2 model to
write: the adapter is applied over the pinned base weights as the referee
decodes (:mod:`referee.speech.hearing.adapter`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from training.sentences import training_games
from training.voices import ENGINES

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LINES = 12000
#: The one-word set's size (:data:`~training.sentences.SHORT_MIX`):
#: none by default, the shipped adapter's recipe. ``--short 2400`` was measured
#: (docs/record/2026-11-27-one-word-set.md): real digits far better, one-word
#: table talk taken more often; not shipped until that is fixed.
DEFAULT_SHORT = 0
DEFAULT_SEED = 2026
#: With ``--real``: copies of each recording, and recordings of one word at most
#: (the shipped adapter's recipe: docs/training.md).
DEFAULT_COPIES = 3
DEFAULT_PER_WORD = 150


def add_parser(train: argparse.ArgumentParser) -> None:
    what = train.add_subparsers(dest="train_what", metavar="WHAT", required=True)
    ears = what.add_parser("ears", help="adapt Whisper tiny.en's decoder to the games' sentences")
    ears.add_argument("--lines", type=_positive, default=DEFAULT_LINES,
                      help=f"utterances to synthesise (default {DEFAULT_LINES})")
    ears.add_argument("--short", type=_count_or_zero, default=DEFAULT_SHORT, metavar="N",
                      help="more utterances, of moves said in one word and the single words "
                      f"beside them (default {DEFAULT_SHORT}: none; 2400 was measured)")
    ears.add_argument("--negatives", type=_count_or_zero, default=0, metavar="N",
                      help="more utterances of single words and near misses only, which "
                      "are no move (default 0: none)")
    ears.add_argument("--more", type=_count_or_zero, default=0, metavar="N",
                      help="more utterances of the same mix as --lines, drawn with a seed of "
                      "their own (a learning curve past the shipped set; default 0)")
    ears.add_argument("--over", type=_count_or_zero, default=0, metavar="N",
                      help="more utterances of the same mix, each said over the referee's "
                      "voice and cleaned by the echo canceller (default 0: none)")
    ears.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the random seed")
    ears.add_argument("--epochs", type=float, default=2.0, help="passes over the data")
    ears.add_argument("--rank", type=_positive, default=32, help="the adapters' rank")
    ears.add_argument("--rate", type=float, default=1e-3, help="the peak learning rate")
    ears.add_argument("--budget", type=float, metavar="MINUTES",
                      help="stop training after this long (the data is made first)")
    ears.add_argument("--workers", type=_positive, default=2,
                      help="processes that synthesise the data (default 2)")
    ears.add_argument("--data", type=Path, help="where the training set is kept "
                      "(default cache/ears/data-SEED-LINES)")
    ears.add_argument("--use", type=_positive, metavar="N",
                      help="train on the first N examples of the set only (a learning curve)")
    ears.add_argument("--engines", nargs="+", choices=tuple(ENGINES), metavar="ENGINE",
                      help="train only on the lines said in these engines' voices (espeak, "
                           "piper, kokoro; a learning curve over voices, with --use)")
    ears.add_argument("--real", type=Path, nargs="+", metavar="DIR",
                      help="folders of real recordings to train on, with their words (a folder "
                      "per word, or a .txt beside each WAV: docs/training.md); their speakers "
                      "must be in no measurement set")
    ears.add_argument("--copies", type=_positive, default=DEFAULT_COPIES,
                      help="with --real: copies of each recording, each in a room, noise and "
                      f"channel of its own (default {DEFAULT_COPIES})")
    ears.add_argument("--per-word", type=_positive, default=DEFAULT_PER_WORD, metavar="N",
                      help=f"with --real: at most N recordings of each word (default "
                      f"{DEFAULT_PER_WORD})")
    ears.add_argument("--without", nargs="+", default=[], metavar="WORD",
                      help="with --real: leave out the recordings of these words (said as "
                      "written: 'up', 'go')")
    ears.add_argument("--real-share", type=float, default=0.5, metavar="SHARE",
                      help="with --real: the share of each batch drawn from the real "
                      "recordings, the rest from the synthetic lines (default 0.5)")
    ears.add_argument("--real-speakers", type=_positive, metavar="N",
                      help="with --real: train on the recordings of N of their speakers only "
                      "(a learning curve over real speakers)")
    ears.add_argument("--start", type=Path, metavar="ADAPTER",
                      help="train a new adapter over this one and write both as one (the "
                      "shipped adapter: referee/speech/hearing/table_adapter.npz)")
    ears.add_argument("--out", type=Path, default=ROOT / "models" / "table-adapter.npz",
                      help="the adapter file to write (default models/table-adapter.npz)")
    average = what.add_parser("average", help="average adapters trained on different draws "
                              "(their changes to the decoder, weighted; seconds, no PyTorch)")
    average.add_argument("adapters", nargs="+", type=Path, metavar="ADAPTER",
                         help="adapter files (.npz) written by train ears")
    average.add_argument("--weights", nargs="+", type=float, metavar="W",
                         help="one weight per adapter, summing to 1 (default: equal)")
    average.add_argument("--out", type=Path, default=ROOT / "models" / "table-adapter.npz",
                         help="the adapter file to write (default models/table-adapter.npz)")


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is not {least} or more")
    return value


def _positive(text: str) -> int:
    return _whole(text, 1)


def _count_or_zero(text: str) -> int:
    return _whole(text, 0)


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def main(argv: list[str] | None = None) -> int:
    """``./run train WHAT ...``: the research tools' own command (not the player's)."""
    parser = argparse.ArgumentParser(prog="./run train",
                                     description="Train the referee's ears (needs PyTorch).")
    add_parser(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        print("\ntraining: stopped.", file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    if args.train_what == "average":
        return _average(args)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("training: needs PyTorch: run ./run train (it installs it) or "
              "pip install -e '.[train]'.", file=sys.stderr)
        return 2
    from referee.speech.hearing.interface import find_whisper_model
    from training.train import Settings, train, write_adapter

    folder = args.data or ROOT / "cache" / "ears" / f"data-{args.seed}-{args.lines}"
    sets = _synthesised(args, folder)
    real_report: dict[str, Any] = {}
    if args.real:
        built = _real_set(args, folder)
        if built is None:
            return 2
        real_folder, real_report = built
        sets.append(real_folder)
    data = _dataset(args, sets)
    model = find_whisper_model()
    if data is None or model is None:
        if model is None:
            print("training: Whisper's model is not installed (./run installs it).",
                  file=sys.stderr)
        return 2
    start = None
    if args.start:
        from referee.speech.hearing.adapter import AdapterError, load

        try:
            start = load(args.start)
        except AdapterError as error:
            print(f"training: {error}", file=sys.stderr)
            return 2
    settings = Settings(rank=args.rank, rate=args.rate, epochs=args.epochs, seed=args.seed,
                        real_share=args.real_share)
    started = time.time()
    adapter, report = train(data, model, settings,
                            None if args.budget is None else 60 * args.budget,
                            log=lambda text: print(text, file=sys.stderr), start=start)
    report.update(_what_it_learnt(args, data, folder, real_report, start))
    sha = write_adapter(adapter, args.out, report, start)
    print(json.dumps({"adapter": str(args.out), "sha256": sha,
                      "minutes": round((time.time() - started) / 60, 1), **report}, indent=1))
    return 0


def _synthesised(args: argparse.Namespace, folder: Path) -> list[Path]:
    """The synthetic sets the options ask for, each made once (its folder kept)."""
    from training.data import benchmark_sentences, build
    from training.progress import Bar
    from training.sentences import NEGATIVE_MIX, SHORT_MIX

    sets: list[tuple[Path, int, int, dict[str, float] | None, bool]] = [
        (folder, args.lines, args.seed, None, False)]
    # The one-word set, the negatives beside it, more of the main mix and more
    # said over the referee, each with a seed of its own, so that adding one
    # leaves the other sets as they were.
    extra = (("short", args.short, SHORT_MIX, False),
             ("negatives", args.negatives, NEGATIVE_MIX, False),
             ("more", args.more, None, False), ("over", args.over, None, True))
    for offset, (name, size, drawn_as, over) in enumerate(extra, start=1):
        if size:
            own = args.seed + offset
            sets.append((folder.with_name(f"{name}-{own}-{size}"), size, own, drawn_as, over))
    for where, count, seed, mix, over in sets:
        if not (where / "complete").exists():
            print(f"Synthesising {count} utterances into {where} ...", file=sys.stderr)
            bar = Bar(count, "utterances")

            def drawn(done: int, total: int, bar: Bar = bar) -> None:
                bar(done)

            build(where, count, seed, benchmark_sentences(ROOT), args.workers, drawn, mix,
                  over)
            bar.close()
    return [where for where, *_ in sets]


def _dataset(args: argparse.Namespace, sets: list[Path]) -> Any:
    """The examples to train on, narrowed as the options say; None (said why):
    nothing to train on, or a setting out of range."""
    from training.data import Dataset

    if not 0.0 < args.real_share <= 1.0:
        print("training: --real-share is a share of the batch: more than 0, at most 1.",
              file=sys.stderr)
        return None
    data = Dataset(*sets)
    if args.engines:
        data.spoken_by(args.engines)
        if not any(example.kind != "referee" for example in data.examples):
            print(f"training: no line of the set is said in a voice of "
                  f"{', '.join(args.engines)}.", file=sys.stderr)
            return None
    if args.use:
        data.examples = data.examples[: args.use]
    if args.real and args.real_speakers:
        data.real_speakers(args.real_speakers, args.seed)
    return data


def _what_it_learnt(args: argparse.Namespace, data: Any, folder: Path,
                    real_report: dict[str, Any], start: Any) -> dict[str, Any]:
    """The adapter report's account of its data: games, sets, voices, real
    recordings, and the adapter it was stacked on."""
    from training.voices import summary

    if args.real and args.real_speakers:
        used = [e for e in data.examples if e.voice.startswith("real:")]
        real_report["real"]["speakers"] = sorted({e.voice.removeprefix("real:") for e in used})
        real_report["real"]["recordings"] = len(used) // args.copies
        real_report["real"]["words"] = _count(e.said for e in used[:: args.copies])
    report: dict[str, Any] = {"games": sorted(training_games())}  # (any other: Whisper)
    report["data"] = {"folder": folder.name, "lines": args.lines, "used": len(data),
                      "short": args.short, "negatives": args.negatives, "more": args.more,
                      "over": args.over, "engines": args.engines,
                      "seed": args.seed, "kinds": _count(e.kind for e in data.examples),
                      "voices": summary(data.voices()), **real_report}
    if start is not None:
        report["stacked_on"] = {"file": args.start.name, "sha256": start.sha256,
                                "rank": start.rank, "report": dict(start.report)}
        for engine, names in start.report.get("data", {}).get("voices", {}).items():
            known = report["data"]["voices"].setdefault(engine, [])
            known[:] = sorted({*known, *names})
    return report


def _real_set(args: argparse.Namespace, folder: Path) -> tuple[Path, dict[str, Any]] | None:
    """``--real``: the recordings read, kept apart from every measurement set's
    speakers, balanced per word and built (once) into a set beside ``folder``;
    the set's folder and what the report says of it. None (said why): nothing
    to train on."""
    import hashlib

    from training.progress import Bar
    from training.real import (
        balanced,
        build_real,
        keep_apart,
        measured_speakers,
        read_folder,
        readable,
    )

    found = []
    for where in args.real:
        if not where.is_dir():
            print(f"training: {where} is not a folder of recordings.", file=sys.stderr)
            return None
        found += read_folder(where)
    without = {" ".join(word.casefold().split()) for word in args.without}
    found = [r for r in found if r.words not in without]
    kept, dropped = keep_apart(found, measured_speakers(ROOT.parent / "shared"))
    kept, bad = readable(balanced(kept, args.per_word, args.seed))
    for reason in bad:
        print(f"training: left out: {reason}", file=sys.stderr)
    print(f"Real recordings: {len(found)} found, {len(dropped)} left out (their speakers are "
          f"in a measurement set), {len(kept)} kept (at most {args.per_word} a word).",
          file=sys.stderr)
    if not kept:
        print("training: no real recording to train on.", file=sys.stderr)
        return None
    key = hashlib.sha256("\n".join(f"{r.path}\t{r.words}" for r in kept).encode()).hexdigest()
    where = folder.with_name(f"real-{args.seed}-{args.copies}-{key[:12]}")
    if not (where / "complete").exists():
        count = len(kept) * args.copies
        print(f"Preparing {count} real examples into {where} ...", file=sys.stderr)
        bar = Bar(count, "examples")
        build_real(where, kept, args.copies, args.seed, args.workers,
                   lambda done, total: bar(done))
        bar.close()
    words = _count(r.words for r in kept)
    return where, {"real": {"recordings": len(kept), "copies": args.copies,
                            "per_word": args.per_word, "left_out": len(dropped),
                            "without": sorted(without),
                            "folders": [p.name for p in args.real], "words": words,
                            "speakers": sorted({r.speaker for r in kept})}}


def _average(args: argparse.Namespace) -> int:
    """``./run train average``: adapters averaged into one
    (:func:`~training.adapters.average`)."""
    from referee.speech.hearing.adapter import AdapterError, load, save
    from training.adapters import average

    try:
        adapters = [load(path) for path in args.adapters]
        arrays, report = average(adapters, args.weights)
    except AdapterError as error:
        print(f"training: {error}", file=sys.stderr)
        return 2
    sha = save(args.out, arrays, report)
    rank = sum(adapter.rank for adapter in adapters)
    print(f"{args.out}: {len(adapters)} adapters averaged, rank {rank}, SHA-256 {sha}")
    return 0
