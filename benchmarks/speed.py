"""Where a Whisper hearing's time goes, part by part.

Run: ``./run bench speed [--game race65] [--voices piper-joe espeak-us] [--rounds 3]
[--model base]``.

Decodes a game's commands and table talk (the tuning split's sentences, clean
room) as the table does once an utterance has ended (prepared, then decoded),
and times every part of :meth:`~referee.speech.hearing.whisper.WhisperScorer.score`:

- the encoder (CTranslate2, int8, the 8 s window);
- the cross-attention's keys and values of the encoded audio (and as the
  table's adapter changes them);
- the prompts (the table's context for the beam and the free transcript,
  the primer for the primed one), run once before the first step;
- the decoder's steps (the beam's hypotheses and the transcripts, a token
  each a step, in one batch);
- the grammar's beam (which sentences go on, in Python);
- the base model's scores of the best sentences (packed in one pass) (with the adapter only);

and the whole, from the end of the utterance to its transcript. The same
utterances are decoded ``--rounds`` times and each part's figure is its
median round (this machine is shared: a round can be a fifth slower than
the next). Speeds are for comparing two versions on the same machine in the
same hour, not across days.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.recognition import moment_of, percentile
from harness.ears import recognizer_for
from harness.fixtures import GAMES, fixture, utterances
from referee.games import matcher_for
from referee.speech.audio import load_wav
from referee.speech.hearing import decoder, whisper
from referee.speech.hearing.whisper_recognizer import WhisperRecognizer
from training.progress import Bar

#: The parts timed: what the table calls them, and the method that does each.
PARTS: dict[str, tuple[type, str]] = {
    "encoder (CTranslate2, int8)": (whisper.WhisperScorer, "encode"),
    "audio's keys and values": (decoder.Decoder, "memory"),
    "prompts": (decoder.Decoder, "prefixes"),
    "decoder steps": (decoder.Decoder, "step"),
    "grammar's beam (Python)": (whisper.Beam, "advance"),
    "base model's scores of the best sentences": (decoder.Decoder, "logprobs_after"),
}


@contextmanager
def timed(spent: dict[str, float]) -> Iterator[None]:
    """While inside, the seconds spent in each of :data:`PARTS` add up in ``spent``."""
    originals = [(owner, name, getattr(owner, name)) for owner, name in PARTS.values()]

    def clocked(part: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - start
        return run

    try:
        for part, (owner, name, method) in zip(PARTS, originals, strict=True):
            setattr(owner, name, clocked(part, method))
        yield
    finally:
        for owner, name, method in originals:
            setattr(owner, name, method)


def main() -> None:
    parser = argparse.ArgumentParser(description="where a Whisper hearing's time goes")
    parser.add_argument("--game", default="race65", choices=sorted(GAMES))
    parser.add_argument("--voices", nargs="+", default=["piper-joe", "espeak-us"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", help="Whisper's model: 'base' (tiny.en as shipped, without "
                        "the table's adapter) or a folder")
    args = parser.parse_args()
    if args.rounds < 1:
        raise SystemExit("--rounds must be 1 or more.")
    players = GAMES[args.game][1]
    matcher = matcher_for(args.game, players)
    recognizer = recognizer_for(matcher.phrases, "whisper", args.model)
    assert isinstance(recognizer, WhisperRecognizer)
    cases = [(load_wav(fixture(voice, case, "clean")), moment_of(matcher.phrases, case))
             for voice in args.voices for case in utterances(args.game)]
    audio_s = sum(raw.seconds for raw, _ in cases)
    recognizer.decode(recognizer.prepare(cases[0][0]))  # loaded and warm
    print(f"Recogniser: {recognizer.describe()}")
    print(f"{len(cases)} utterances ({audio_s / len(cases):.2f} s on average: "
          f"{args.game}, {', '.join(args.voices)}, clean), {args.rounds} rounds")
    print()
    bar = Bar(args.rounds * len(cases), "hearings")
    rounds: list[dict[str, float]] = []
    latencies: list[float] = []
    for round_ in range(args.rounds):
        spent: dict[str, float] = defaultdict(float)
        with timed(spent):
            for i, (raw, said_at) in enumerate(cases):
                bar(round_ * len(cases) + i, f"round {round_ + 1}")
                recognizer.follow(frozenset(said_at))
                start = time.perf_counter()
                recognizer.decode(recognizer.prepare(raw))
                took = time.perf_counter() - start
                spent["whole hearing"] += took
                latencies.append(took)
        rounds.append(spent)
    bar(args.rounds * len(cases))

    def per_hearing(part: str) -> float:
        return 1000 * statistics.median(r[part] for r in rounds) / len(cases)

    whole = per_hearing("whole hearing")
    print("| part | ms per hearing (median round) | share |")
    print("|---|---:|---:|")
    for part in PARTS:
        print(f"| {part} | {per_hearing(part):.1f} | {per_hearing(part) / whole:.0%} |")
    rest = whole - sum(per_hearing(part) for part in PARTS)
    print(f"| the rest (preparing, features, reading the result) | {rest:.1f} | "
          f"{rest / whole:.0%} |")
    print(f"| **whole hearing** | **{whole:.1f}** | |")
    print()
    print("| measure | value |")
    print("|---|---:|")
    print(f"| whole hearing, p50 / p95 (every round) | {1000 * statistics.median(latencies):.0f}"
          f" / {1000 * percentile(latencies, 0.95):.0f} ms |")
    print(f"| real-time factor (median round) | "
          f"{statistics.median(r['whole hearing'] for r in rounds) / audio_s:.3f} |")


if __name__ == "__main__":
    main()
