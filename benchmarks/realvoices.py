"""Real human voices: 300 one-word recordings, as a bare word said at a Race to 65 table.

Run: ``./run bench realvoices [--engine whisper|pocketsphinx] [--rooms clean babble20 babble10]``.

The recordings are ``../shared/real-voices/speech_commands_v0.01`` (Google's
Speech Commands v0.01, Warden 2017, CC BY 4.0): ten speakers per word. At a
Race to 65 table (players Ann and Bob, Ann speaking) a bare "seven" is Ann's
flip of her seven; "yes", "no" and "stop" are commands; the ten words that
are no command (bed, bird, cat, dog, happy, house, marvin, sheila, tree, wow)
must give none. The other words (zero, up, down, left, right, on, off, go)
are reported for information only: on their own they are no complete command.

Besides the recordings as they are, each is mixed into the babble of the
benchmark rooms (six other talkers, :func:`harness.fixtures.babble_bed`)
at 20 and 10 dB. Nothing was tuned on these recordings.

The last column is the digits' ceiling: how many of them the recogniser's
best sentence (at any confidence) reads right, what a perfect rejection would
reach (see :mod:`benchmarks.recognition`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.recognition import best_meaning
from harness.fixtures import ROOT, apply_condition
from referee.games import matcher_for
from referee.progress import Bar
from referee.speech.audio import load_wav
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.listen import understand

VOICES = ROOT.parent / "shared" / "real-voices" / "speech_commands_v0.01"
DIGITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
COMMANDS: dict[str, dict[str, object]] = {
    "yes": {"kind": "answer", "value": "yes"}, "no": {"kind": "answer", "value": "no"},
    "stop": {"kind": "stop"}}
NOT_COMMANDS = ["bed", "bird", "cat", "dog", "happy", "house", "marvin", "sheila", "tree", "wow"]
OTHER = ["zero", "up", "down", "left", "right", "on", "off", "go"]


def expected(word: str) -> dict[str, object]:
    if word in DIGITS:
        return {"kind": "flip", "owner": "Ann", "tile": DIGITS.index(word) + 1, "direction": None}
    return COMMANDS.get(word, {"kind": "none"})


def recordings(word: str) -> list[Path]:
    return sorted((VOICES / word).glob("*.wav"))


def main() -> None:
    parser = argparse.ArgumentParser(description="real voices benchmark")
    parser.add_argument("--engine", choices=["whisper", "pocketsphinx", "vosk"])
    parser.add_argument("--model", help="Whisper's model: 'base' (tiny.en as shipped, without "
                        "the table's adapter) or a folder")
    parser.add_argument("--rooms", nargs="+", default=["clean", "babble20", "babble10"])
    parser.add_argument("--errors", action="store_true")
    args = parser.parse_args()
    if not VOICES.is_dir():
        raise SystemExit(f"The real voices are not here ({VOICES}).")
    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = make_recognizer(matcher.phrases, args.engine, args.model)
    print(f"Engine: {recognizer.describe()}")
    print()
    print("| room | digits right | yes / no / stop right | non-command words taken | "
          "other words taken (information) | digits: best sentence right (ceiling) |")
    print("|---|---:|---:|---:|---:|---:|")
    words = [*DIGITS, *COMMANDS, *NOT_COMMANDS, *OTHER]
    bar = Bar(len(args.rooms) * sum(len(recordings(w)) for w in words), "recordings")
    done = 0
    for room in args.rooms:
        counts = {"digits": [0, 0], "commands": [0, 0], "not": [0, 0], "other": [0, 0],
                  "ceiling": [0, 0]}
        for word in words:
            for path in recordings(word):
                bar(done, room)
                done += 1
                audio = load_wav(path)
                if room != "clean":
                    # The recordings are short and often quiet: pad them as the fixtures are.
                    audio = apply_condition(audio, room, f"real/{path.name}")
                transcript = recognizer.decode(recognizer.prepare(audio))
                heard = understand(matcher, transcript, "Ann")
                group = ("digits" if word in DIGITS else "commands" if word in COMMANDS
                         else "not" if word in NOT_COMMANDS else "other")
                counts[group][1] += 1
                if group in ("digits", "commands"):
                    hit = heard.intent.to_json() == expected(word)
                else:
                    hit = heard.kind != "none"
                counts[group][0] += hit
                if group == "digits":
                    best = best_meaning(matcher, transcript.extra, transcript.text, "Ann")
                    counts["ceiling"][0] += best == expected(word)
                    counts["ceiling"][1] += 1
                if args.errors and (hit != (group in ("digits", "commands"))):
                    print(f"  {room} {word:7} {path.name}: {transcript.text!r} {transcript.extra}")
        cells = [f"{a}/{b}" for a, b in counts.values()]
        print(f"| {room} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
