"""Big-grammar benchmark: the grammar engine at a size no game has (#37).

Run: ``./run bench grammar [--recordings N] [--matches N] [--engines whisper pocketsphinx]
[--dump FILE.json]``.

The domain is a café's order counter (``benchmarks/phrases/cafe.toml``: 10
intents, 21 templates, 9 slots of 4-22 values, many of several words,
synonyms, a two-word player name; about 2 x 10^11 sentences), set beside the
four games' phrase files. It prints:

* **build**: loading the phrase file and compiling the matcher's and the
  search's networks, their size, and the sentences they stand for;
* **matching**: the intent matcher on sentences drawn from the templates
  (seeded) with a word left out, put in or swapped, as recognisers err:
  milliseconds per sentence, p50 and p95;
* **recognition**: sentences drawn from the templates, spoken by two training
  voices (eSpeak NG voices of the ears' training set) and by two of the
  recognition benchmark's held-out voices (never tuned on), heard by Whisper
  tiny.en as shipped (as ``referee hear --phrases`` hears a phrase file that
  is not a game's: the table's adapter was taught the games' sentences) with
  the café's grammar and by PocketSphinx with its JSGF: commands right
  (acted on at once), asked about, wrong, not heard; short (under 8 words)
  and long sentences apart; decode time per recording, and the same
  recordings decoded with Race to 65's grammar for comparison;
* the process's peak memory, with Whisper and PocketSphinx loaded.

Recordings are rendered once into ``cache/grammar/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import statistics
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

from benchmarks.recognition import percentile
from harness.ears import recognizer_for
from harness.fixtures import CACHE, VOICES, Espeak, espeak
from referee.speech.audio import load_wav
from referee.speech.hearing.measures import dumped
from referee.speech.listen import understand
from referee.speech.understanding.check import draw
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.network import compile_phrases, sentence_count
from referee.speech.understanding.phrase_files import load_phrases
from referee.wording import SURE_SCORE
from training.progress import Bar

ROOT = Path(__file__).resolve().parent.parent
CAFE = ROOT / "benchmarks" / "phrases" / "cafe.toml"
PLAYERS = ["Mary Ann", "Bob"]
#: Voices of the ears' training set (training/voices.py), and
#: two of the recognition benchmark's held-out voices.
TRAINING_VOICES: dict[str, Espeak] = {"espeak-us-alex": espeak("en-us+Alex", 165),
                                      "espeak-gb-linda": espeak("en-gb+linda", 155)}
HELD_OUT_VOICES = ("espeak-nyc-m3", "piper-joe-varied")
#: A sentence of this many words or more is long.
LONG = 8
#: Peak memory (MB) measured along the way.
PEAK: dict[str, float] = {}


def build_table() -> None:
    from referee.games import GAMES

    print("| phrase file | templates | sentences | nodes | arcs | build ms |")
    print("|---|---:|---:|---:|---:|---:|")
    files = [(name, spec.phrase_file, ["Ann", "Bob"]) for name, spec in GAMES.items()]
    for name, path, players in [*files, ("café (benchmark)", CAFE, PLAYERS)]:
        started = time.perf_counter()
        phrases = load_phrases(path, players)
        matcher = IntentMatcher(phrases, players)
        whole = compile_phrases(phrases)
        ms = (time.perf_counter() - started) * 1000
        nets = matcher._networks
        print(f"| {name} | {sum(len(i.trees) for i in phrases.intents)} | "
              f"{sentence_count(whole, phrases.slots):.2g} | "
              f"{len(whole.nodes) + sum(len(n.nodes) for n in nets):,} | "
              f"{whole.arcs + sum(len(a) for n in nets for a in n.arcs):,} | {ms:.0f} |")
    tracemalloc.start()
    phrases = load_phrases(CAFE, PLAYERS)
    IntentMatcher(phrases, PLAYERS)
    compile_phrases(phrases)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"\nCafé: memory allocated while building (peak) {peak / 2**20:.1f} MB")


def edited(words: list[str], rng: random.Random, vocabulary: list[str]) -> str:
    """The sentence with a word left out, put in or swapped (or as it is)."""
    said = list(words)
    at = rng.randrange(len(said))
    edit = rng.randrange(4)
    if edit == 0 and len(said) > 1:
        del said[at]
    elif edit == 1:
        said.insert(at, rng.choice(vocabulary))
    elif edit == 2:
        said[at] = rng.choice(vocabulary)
    return " ".join(said)


def matching_table(count: int) -> None:
    print("\n| grammar | sentences matched | words (mean) | p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|")
    from referee.games import find_game

    bar = Bar(2 * count, "sentences matched")
    done = 0
    for name, path, players in (("Race to 65", find_game("race65").phrase_file, ["Ann", "Bob"]),
                                ("café", CAFE, PLAYERS)):
        matcher = IntentMatcher(load_phrases(path, players), players)
        rng = random.Random(37)
        trees = [t for i in matcher.phrases.intents for t in i.trees]
        vocabulary = [*sorted(matcher.phrases.vocabulary()), "um", "banana", "the"]
        times, lengths = [], []
        for _ in range(count):
            text = edited(draw(matcher.phrases, rng.choice(trees), rng).split(), rng, vocabulary)
            started = time.perf_counter()
            matcher.match(text, players[0])
            times.append((time.perf_counter() - started) * 1000)
            lengths.append(len(text.split()))
            done += 1
            bar(done, name)
        print(f"| {name} | {count} | {statistics.mean(lengths):.1f} | "
              f"{percentile(times, 0.5):.1f} | {percentile(times, 0.95):.1f} | "
              f"{max(times):.1f} |")
    bar.close()


@dataclass(frozen=True)
class Heard:
    engine: str
    split: str
    words: int
    outcome: str  # "right", "asked", "wrong", "missed"
    seconds: float
    race65_seconds: float | None
    #: What was said, meant and heard, and the recogniser's measures (``--dump``).
    record: dict[str, object]


def recordings(count: int) -> list[tuple[str, str, dict[str, object]]]:
    """Sentences drawn from the café's templates with the intent each means
    (matched alone, its own words: a sentence two intents share is left out)."""
    phrases = load_phrases(CAFE, PLAYERS)
    matcher = IntentMatcher(phrases, PLAYERS)
    rng = random.Random(2037)
    trees = [t for i in phrases.intents for t in i.trees]
    out: list[tuple[str, str, dict[str, object]]] = []
    seen: set[str] = set()
    while len(out) < count:
        text = draw(phrases, rng.choice(trees), rng)
        heard = matcher.match(text, PLAYERS[1])
        if text in seen or heard.kind in ("none", "ambiguous") or heard.score < 1.0:
            continue
        seen.add(text)
        key = hashlib.sha256(text.encode()).hexdigest()[:12]
        out.append((key, text, heard.intent.to_json()))
    return out


def recording(voice: str, key: str, text: str) -> Path:
    path = CACHE.parent / "grammar" / voice / f"{key}.wav"
    if not path.exists():
        speaker = TRAINING_VOICES.get(voice) or VOICES[voice]
        path.parent.mkdir(parents=True, exist_ok=True)
        speaker(text).write_wav(path)
    return path


def recognition(count: int, engines: list[str]) -> list[Heard]:
    from referee.games import find_game

    cafe = load_phrases(CAFE, PLAYERS)
    matcher = IntentMatcher(cafe, PLAYERS)
    race65 = load_phrases(find_game("race65").phrase_file, ["Ann", "Bob"])
    cases = recordings(count)
    voices = [*TRAINING_VOICES, *HELD_OUT_VOICES]
    rows: list[Heard] = []
    bar = Bar(len(engines) * len(voices) * len(cases), "recordings heard")
    for engine in engines:
        model = "base" if engine == "whisper" else None  # as `referee hear --phrases`
        recognizer = recognizer_for(cafe, engine, model)
        if engine == "whisper":  # the referee's own process: Whisper and the café's grammar
            recognizer.decode(recognizer.prepare(load_wav(recording(voices[0], *cases[0][:2]))))
            PEAK["whisper"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        other = recognizer_for(race65, engine, model) if engine == "whisper" else None
        for voice in voices:
            split = "training voices" if voice in TRAINING_VOICES else "held-out voices"
            for key, text, expected in cases:
                bar(len(rows), f"{engine} {voice}")
                audio = load_wav(recording(voice, key, text))
                started = time.perf_counter()
                transcript = recognizer.decode(recognizer.prepare(audio))
                heard = understand(matcher, transcript, PLAYERS[1])
                seconds = time.perf_counter() - started
                race65_seconds = None
                if other is not None:
                    started = time.perf_counter()
                    other.decode(other.prepare(audio))
                    race65_seconds = time.perf_counter() - started
                if heard.intent.to_json() == expected:
                    outcome = "right" if heard.score >= SURE_SCORE else "asked"
                elif heard.kind == "none":
                    outcome = "missed"
                else:
                    outcome = "wrong"
                record = {"voice": voice, "text": text, "expected": expected,
                          "heard": transcript.text, "intent": heard.intent.to_json(),
                          "score": heard.score, "extra": dumped(transcript.measures)}
                rows.append(Heard(engine, split, len(text.split()), outcome, seconds,
                                  race65_seconds, record))
    bar.close()
    return rows


def _share(rows: list[Heard], outcome: str) -> str:
    return f"{100 * sum(r.outcome == outcome for r in rows) / len(rows):.1f} %" if rows else "-"


def recognition_table(rows: list[Heard]) -> None:
    print("\n| engine | voices | sentences | n | right (acted on) | asked | wrong | not heard "
          "| decode p50 / p95 ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for engine in dict.fromkeys(r.engine for r in rows):
        for split in ("training voices", "held-out voices"):
            for length, test in (("short", lambda n: n < LONG), ("long", lambda n: n >= LONG),
                                 ("all", lambda n: True)):
                group = [r for r in rows if r.engine == engine and r.split == split
                         and test(r.words)]
                if not group:
                    continue
                times = [1000 * r.seconds for r in group]
                print(f"| {engine} | {split} | {length} | {len(group)} | "
                      f"{_share(group, 'right')} | {_share(group, 'asked')} | "
                      f"{_share(group, 'wrong')} | {_share(group, 'missed')} | "
                      f"{percentile(times, 0.5):.0f} / {percentile(times, 0.95):.0f} |")
    pairs = [(r.seconds, r.race65_seconds) for r in rows if r.race65_seconds is not None]
    if pairs:
        big = percentile([a for a, _ in pairs], 0.5)
        small = percentile([b for _, b in pairs], 0.5)
        print(f"\nWhisper decode p50, same recordings: café grammar {1000 * big:.0f} ms, "
              f"Race to 65's {1000 * small:.0f} ms ({big / small:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recordings", type=int, default=60,
                        help="sentences drawn and recorded by each voice (default 60)")
    parser.add_argument("--matches", type=int, default=2000,
                        help="sentences matched for the matching table (default 2000)")
    parser.add_argument("--engines", nargs="*", default=["whisper", "pocketsphinx"],
                        choices=["whisper", "pocketsphinx", "vosk"])
    parser.add_argument("--dump", metavar="FILE.json",
                        help="write each recording's result and measures to this file")
    args = parser.parse_args()
    build_table()
    matching_table(args.matches)
    if args.recordings and args.engines:
        rows = recognition(args.recordings, args.engines)
        recognition_table(rows)
        if args.dump:
            Path(args.dump).write_text(json.dumps(
                [{"engine": r.engine, "seconds": r.seconds, "outcome": r.outcome, **r.record}
                 for r in rows], default=str))
    if "whisper" in PEAK:
        print(f"\nPeak memory with Whisper and the café's grammar loaded, one recording "
              f"heard: {PEAK['whisper']:.0f} MB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"Peak memory of the whole benchmark (two Whispers, PocketSphinx): {peak:.0f} MB")


if __name__ == "__main__":
    main()
