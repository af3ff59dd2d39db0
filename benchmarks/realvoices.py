"""Real human voices: one-word recordings, as a bare word said at a Race to 65 table.

Run: ``./run bench realvoices [--sets speech-commands fsdd held-back]
[--rooms clean babble20 babble10] [--model base] [--errors] [--dump FILE]``;
another adapter file: ``REFEREE_WHISPER_ADAPTER=FILE ./run bench realvoices``.

The sets (every one of them kept out of training, checked in ``tests/test_ears.py``):

* ``speech-commands``: ``../shared/real-voices/speech_commands_v0.01``
  (Google's Speech Commands v0.01, Warden 2017, CC BY 4.0), 300 recordings,
  ten speakers per word: measurement only, never trained, tuned or fitted on;
* ``fsdd``: the Free Spoken Digit Dataset's speaker kept for measuring
  (:data:`~training.real.FSDD_MEASURED`, in
  ``../shared/real-voices/fsdd``; Jakobovski et al., CC BY-SA 4.0): the
  digits 1-9, 50 of each, 8 kHz recordings heard at 16 kHz;
* ``held-back``: the Speech Commands v0.02 speakers held back from the
  shipped adapter's training (:func:`~training.real.held_back`;
  ``--held-back DIR``, the v0.02 test set's folder: docs/hearing.md).

And one that is no measurement: ``tuning``, recordings of the folders
``--tuning-from DIR ...`` names (the real recipe's, in its order) that the
adapter being heard never trained on, at most 40 of a word, from speakers of
no measurement set: what ``./run bench calibrate --real`` fits on. For an
adapter trained on real speech, the training speakers' other recordings
(:func:`~training.real.unused`); for one that learnt from none (the shipped,
synthetic-voice adapter; ``--model base``), any of them.

At a Race to 65 table (players Ann and Bob, Ann speaking) a bare "seven" is
Ann's flip of her seven; "yes", "no" and "stop" are commands; words that are
no command (bed, bird, cat, ..., tree, wow) must give none. Other words
(zero, up, down, left, right, on, off, go) are no complete command alone and
are not counted. Each cell is *acted on at once and right* / *heard right*
(acted on, or asked about, with the right move) of how many; *taken* counts
non-command words the referee acted on or asked about (acted on in brackets);
*wrong acted on* counts commands acted on at once as another move. The last
column is the digits' ceiling: how often the recogniser's best sentence (at
any confidence) reads right, what a perfect rejection would reach.

Besides the recordings as they are, each may be mixed into the babble of the
benchmark rooms (six other talkers, :func:`harness.fixtures.babble_bed`).
Nothing was tuned on these recordings.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.recognition import Row, best_meaning
from harness.ears import candidate_adapter, recognizer_for
from harness.fixtures import ROOT, apply_condition
from referee.games import matcher_for
from referee.progress import Bar
from referee.speech.audio import load_wav
from referee.speech.hearing.adapter import ADAPTER, load
from referee.speech.hearing.recognizers import BASE_MODEL
from referee.speech.listen import understand
from referee.wording import SURE_SCORE
from training.real import (
    FSDD_MEASURED,
    balanced,
    held_back,
    keep_apart,
    measured_speakers,
    read_folder,
    unused,
)

SHARED = ROOT.parent / "shared" / "real-voices"
VOICES = SHARED / "speech_commands_v0.01"
FSDD = SHARED / "fsdd" / "recordings"
DIGITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
COMMANDS: dict[str, dict[str, object]] = {
    "yes": {"kind": "answer", "value": "yes"}, "no": {"kind": "answer", "value": "no"},
    "stop": {"kind": "stop"}}
NOT_COMMANDS = ["bed", "bird", "cat", "dog", "happy", "house", "marvin", "sheila", "tree", "wow"]
SETS = ("speech-commands", "fsdd", "held-back", "tuning")
#: The shipped recipe's recordings of a word and seed (``train ears --per-word``).
RECIPE_PER_WORD, RECIPE_SEED = 150, 2026
#: Recordings of a word in the tuning set.
TUNING_PER_WORD = 40


def expected(word: str) -> dict[str, object]:
    if word in DIGITS:
        return {"kind": "flip", "owner": "Ann", "tile": DIGITS.index(word) + 1, "direction": None}
    return COMMANDS.get(word, {"kind": "none"})


def group_of(word: str) -> str | None:
    """Which count a word goes to (None: not counted)."""
    if word in DIGITS:
        return "digits"
    if word in COMMANDS:
        return "commands"
    if word in NOT_COMMANDS or word not in ("zero", "up", "down", "left", "right", "on", "off",
                                            "go"):
        return "not"
    return None


def recordings(word: str) -> list[Path]:
    return sorted((VOICES / word).glob("*.wav"))


def learnt_real(model: str | None) -> bool:
    """Whether the adapter a measurement hears with was trained on real
    recordings (its report says what it learnt from); ``--model base`` hears
    with none, any other model with the table's adapter."""
    if model == BASE_MODEL:
        return False
    adapter = load(candidate_adapter() or ADAPTER)
    data = adapter.report.get("data", {})
    return bool(isinstance(data, dict) and data.get("real"))


def members(name: str, held_folder: Path | None, tuning: Sequence[Path] = (),
            real_trained: bool = True) -> Iterator[tuple[str, Path]]:
    """A set's (word, recording) pairs that are counted (``real_trained``:
    whether the adapter heard with learnt from the ``tuning`` folders)."""
    if name == "speech-commands":
        for word in [*DIGITS, *COMMANDS, *NOT_COMMANDS]:
            yield from ((word, path) for path in recordings(word))
    elif name == "fsdd":
        for recording in read_folder(FSDD):
            if recording.speaker in FSDD_MEASURED and recording.words in DIGITS:
                yield recording.words, recording.path
    elif name == "tuning":
        found = [r for folder in tuning for r in read_folder(folder)]
        kept, _ = keep_apart(found, measured_speakers(ROOT.parent / "shared"))
        left = [r for r in (unused(kept, RECIPE_PER_WORD, RECIPE_SEED) if real_trained
                            else kept) if group_of(r.words)]
        for recording in balanced(left, TUNING_PER_WORD, RECIPE_SEED + 1):
            yield recording.words, recording.path
    elif held_folder is not None:
        for recording in read_folder(held_folder):
            if held_back(recording.speaker) and group_of(recording.words):
                yield recording.words, recording.path


def dump_rows(path: Path, wanted: str) -> list[Row]:
    """A ``--dump``'s hearings of one set as the recognition benchmark's rows
    (for :func:`benchmarks.recognition.rejudge` and the calibration): a digit,
    yes, no or stop is a command; any other counted word is talk."""
    rows = []
    for row in json.loads(path.read_text())["rows"]:
        if row["set"] != wanted or "extra" not in row:
            continue
        group = group_of(row["word"]) or "not"
        rows.append(Row(f"real:{row['set']}", row["room"], row["file"], row["word"],
                        "talk" if group == "not" else "command", row["heard"],
                        row["intent"], expected(row["word"]), row["score"], 0.0, 0.0,
                        row["extra"], row["best"]))
    return rows


@dataclass
class Counts:
    """One set in one room: per group, [acted on at once and right, heard right, of]."""

    groups: dict[str, list[int]] = field(default_factory=lambda: {
        "digits": [0, 0, 0], "commands": [0, 0, 0], "not": [0, 0, 0]})
    wrong: list[int] = field(default_factory=lambda: [0, 0])
    ceiling: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, group: str, want: dict[str, object], got: dict[str, object], sure: bool,
            best: dict[str, object]) -> bool:
        """Count one hearing; whether it went as it should."""
        cell = self.groups[group]
        cell[2] += 1
        if group == "not":
            taken = got.get("kind") != "none"
            cell[0] += taken and sure
            cell[1] += taken
            return not taken
        right = got == want
        cell[0] += right and sure
        cell[1] += right
        self.wrong[0] += (not right) and sure and got.get("kind") != "none"
        self.wrong[1] += 1
        if group == "digits":
            self.ceiling[0] += best == want
            self.ceiling[1] += 1
        return right

    def cells(self) -> list[str]:
        out = []
        for group in ("digits", "commands"):
            acted, heard, of = self.groups[group]
            out.append(f"{acted} / {heard} of {of}" if of else "-")
        acted, taken, of = self.groups["not"]
        out.append(f"{taken} ({acted}) of {of}" if of else "-")
        out.append(f"{self.wrong[0]} of {self.wrong[1]}")
        out.append(f"{self.ceiling[0]} of {self.ceiling[1]}" if self.ceiling[1] else "-")
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description="real voices benchmark")
    parser.add_argument("--engine", choices=["whisper", "pocketsphinx", "vosk"])
    parser.add_argument("--model", help="Whisper's model: 'base' (tiny.en as shipped, without "
                        "the table's adapter) or a folder")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=["speech-commands"])
    parser.add_argument("--held-back", type=Path, metavar="DIR",
                        help="the Speech Commands v0.02 test set's folder (for --sets held-back)")
    parser.add_argument("--tuning-from", type=Path, nargs="+", default=[], metavar="DIR",
                        help="the shipped recipe's --real folders, in its order (--sets tuning)")
    parser.add_argument("--rooms", nargs="+", default=["clean", "babble20", "babble10"])
    parser.add_argument("--errors", action="store_true", help="print every miss")
    parser.add_argument("--dump", type=Path, help="write every hearing to this JSON file")
    args = parser.parse_args()
    if not VOICES.is_dir():
        raise SystemExit(f"The real voices are not here ({SHARED}).")
    if "held-back" in args.sets and (args.held_back is None or not args.held_back.is_dir()):
        raise SystemExit("--sets held-back needs --held-back DIR (the v0.02 test set's folder).")
    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = recognizer_for(matcher.phrases, args.engine, args.model)
    print(f"Engine: {recognizer.describe()}")
    print()
    print("| set | room | digits: at once / heard right | yes, no, stop: at once / heard "
          "right | non-command words taken (acted on) | wrong acted on | digits: ceiling |")
    print("|---|---|---:|---:|---:|---:|---:|")
    real_trained = "tuning" in args.sets and learnt_real(args.model)
    chosen = {name: list(members(name, args.held_back, args.tuning_from, real_trained))
              for name in args.sets}
    bar = Bar(len(args.rooms) * sum(map(len, chosen.values())), "recordings")
    done, dumped = 0, []
    for name, pairs in chosen.items():
        for room in args.rooms:
            counts = Counts()
            for word, path in pairs:
                bar(done, f"{name} {room}")
                done += 1
                audio = load_wav(path)
                if room != "clean":
                    # The recordings are short and often quiet: pad them as the fixtures are.
                    audio = apply_condition(audio, room, f"real/{path.name}")
                transcript = recognizer.decode(recognizer.prepare(audio))
                heard = understand(matcher, transcript, "Ann")
                group = group_of(word) or "not"
                got = heard.intent.to_json()
                best = best_meaning(matcher, transcript.extra, transcript.text, "Ann")
                ok = counts.add(group, expected(word), got, heard.score >= SURE_SCORE, best)
                dumped.append({"set": name, "room": room, "word": word, "file": path.name,
                               "heard": transcript.text, "intent": got,
                               "score": heard.score, "best": best,
                               "extra": transcript.extra})
                if args.errors and not ok:
                    print(f"  {name} {room} {word:7} {path.name}: {transcript.text!r} "
                          f"{heard.score} {transcript.extra.get('best')!r} "
                          f"p={transcript.extra.get('probability')}")
            print(f"| {name} | {room} | " + " | ".join(counts.cells()) + " |")
    bar.close()
    if args.dump:
        args.dump.write_text(json.dumps({"engine": recognizer.describe(), "rows": dumped}))


if __name__ == "__main__":
    main()
