"""Recognition benchmark: speech fixtures -> recogniser -> intent.

Run: ``./run bench recognition [--game race65|shut-the-box] [--engine pocketsphinx|vosk]
[--voices ...]``.

For every voice and condition of :mod:`benchmarks.fixtures`, each utterance
goes the way the table loop takes it once the voice detector says it has
ended: prepared (:func:`~referee.speech.listen.prepare`: denoised when noisy,
cut to its speech), decoded with the game's grammar, read by the intent
matcher. An utterance counts as correct only if the intent's kind and every
field are right; table talk is correct when it gives none. The latency is
from the end of the utterance to the intent (all of that work); the
real-time factor is the same time over the audio's length, on one core.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections import defaultdict

from benchmarks.fixtures import CONDITIONS, GAMES, VOICES, fixture, utterances
from referee.speech.audio import load_wav
from referee.speech.intents import IntentMatcher
from referee.speech.listen import prepare, understand
from referee.speech.recognizers import make_recognizer

PLAYERS = ["Ann", "Bob"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description="recognition benchmark")
    parser.add_argument("--game", choices=list(GAMES), default="race65")
    parser.add_argument("--engine", choices=["pocketsphinx", "vosk"])
    parser.add_argument("--model", help="Vosk model folder")
    parser.add_argument("--voices", nargs="+", default=list(VOICES))
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    parser.add_argument("--errors", action="store_true", help="list every wrong utterance")
    args = parser.parse_args()

    players = GAMES[args.game][1]
    matcher = IntentMatcher.for_game(args.game, players)
    recognizer = make_recognizer(matcher.phrases, args.engine, args.model)
    cases = utterances(args.game)
    ok: dict[tuple[str, str], list[bool]] = defaultdict(list)
    talk: dict[str, list[bool]] = defaultdict(list)
    latencies: list[float] = []
    audio_s = decode_s = 0.0
    errors: list[str] = []
    for voice in args.voices:
        for condition in args.conditions:
            for case in cases:
                raw = load_wav(fixture(voice, case, condition))
                # As the table loop does: the utterance has ended (the voice
                # detector said so), then it is prepared, decoded and read.
                start = time.perf_counter()
                audio = prepare(raw)
                transcript = recognizer.decode(audio)
                heard = understand(matcher, transcript, players[0])
                done = time.perf_counter()
                latencies.append(done - start)
                audio_s += raw.seconds
                decode_s += done - start
                right = heard.intent == case.intent
                if case.is_command:
                    ok[(voice, condition)].append(right)
                else:
                    talk[condition].append(right)
                if not right:
                    errors.append(f"{voice:15} {condition:9} {case.text!r:38} heard "
                                  f"{transcript.text!r} -> {heard.intent}")

    print(f"Game: {args.game}; engine: {recognizer.describe()}")
    print()
    header = "| voice | " + " | ".join(args.conditions) + " |"
    print(header)
    print("|---|" + "---:|" * len(args.conditions))
    for voice in args.voices:
        cells = [f"{100 * sum(ok[(voice, c)]) / len(ok[(voice, c)]):.1f} %"
                 for c in args.conditions]
        print(f"| {voice} | " + " | ".join(cells) + " |")
    cells = []
    for c in args.conditions:
        results = [r for v in args.voices for r in ok[(v, c)]]
        cells.append(f"**{100 * sum(results) / len(results):.1f} %**")
    print("| **all voices** | " + " | ".join(cells) + " |")
    fa = [not r for c in args.conditions for r in talk[c]]
    print()
    print("| measure | value |")
    print("|---|---:|")
    print(f"| table-talk false accepts | {100 * sum(fa) / len(fa):.1f} % ({sum(fa)}/{len(fa)}) |")
    print(f"| real-time factor (one core) | {decode_s / audio_s:.3f} |")
    print(f"| end of audio to intent, p50 | {1000 * statistics.median(latencies):.0f} ms |")
    print(f"| end of audio to intent, p95 | {1000 * percentile(latencies, 0.95):.0f} ms |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| peak memory (whole process) | {peak:.0f} MB |")
    print(f"| utterances | {len(latencies)} ({audio_s / 60:.1f} min of audio) |")
    if args.errors:
        print()
        print("\n".join(errors))


if __name__ == "__main__":
    main()
