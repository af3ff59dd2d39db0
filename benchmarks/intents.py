"""Intent matcher benchmark: accuracy and latency on text, without audio.

Run: ``./run bench intents`` (or ``.venv/bin/python -m benchmarks.intents``).
Prints a Markdown table for the README.

Sets:

* template sentences: every sentence the phrase file allows (each must give
  its own intent);
* one word dropped: every template sentence with one small word (weight 1)
  removed, the errors recognisers make most;
* table talk: ``tests/data/table_talk.txt``, which must all give ``none``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from referee.games import matcher_for
from referee.speech.understanding.meaning import Intent
from referee.speech.understanding.templates import expand_phrases
from training.progress import Bar

PLAYERS = ["Ann", "Bob"]
TABLE_TALK = Path(__file__).resolve().parent.parent / "tests" / "data" / "table_talk.txt"


def main() -> None:
    matcher = matcher_for("race65", PLAYERS)
    phrases = matcher.phrases
    rows: list[tuple[str, int, int, list[float]]] = []

    exact: list[tuple[str, Intent]] = []
    dropped: list[tuple[str, Intent]] = []
    # Small words: template words of weight 1 that are no slot's value ("up" is
    # also a word of "who's up next", but dropping a direction changes the move).
    slot_words = {w for slot in phrases.slots.values() for v in slot.values
                  for w in slot.words_for(v).split()} | {
                 v for slot in phrases.slots.values() for v in slot.values}
    small_words = {w for w in phrases.vocabulary()
                   if phrases.word_weight(w) == 1 and w not in slot_words}
    for words, template, filled in expand_phrases(phrases):
        (intent,) = matcher._resolve(template, filled, "Ann")
        exact.append((words, intent))
        parts = words.split()
        for i, word in enumerate(parts):
            if word in small_words:
                dropped.append((" ".join(parts[:i] + parts[i + 1 :]), intent))
    talk = [
        line.strip()
        for line in TABLE_TALK.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    bar = Bar(len(exact) + len(dropped) + len(talk), "sentences matched")
    done = 0
    for name, cases in (("template sentences", exact), ("one small word dropped", dropped)):
        ok, times = 0, []
        for text, intent in cases:
            start = time.perf_counter()
            heard = matcher._match(text, "Ann")
            times.append(time.perf_counter() - start)
            ok += heard.intent == intent
            done += 1
            bar(done, name)
        rows.append((name, len(cases), ok, times))
    rejected, times = 0, []
    for text in talk:
        start = time.perf_counter()
        heard = matcher._match(text, "Ann")
        times.append(time.perf_counter() - start)
        rejected += heard.kind == "none"
        done += 1
        bar(done, "table talk")
    bar.close()
    rows.append(("table talk (must be none)", len(talk), rejected, times))

    print("| set | utterances | correct | accuracy | p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, count, ok, times in rows:
        ms = sorted(t * 1000 for t in times)
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        print(
            f"| {name} | {count} | {ok} | {100 * ok / count:.1f} % | "
            f"{statistics.median(ms):.2f} | {p95:.2f} | {ms[-1]:.2f} |"
        )


if __name__ == "__main__":
    main()
