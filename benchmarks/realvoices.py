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
  ``--held-back DIR``, the v0.02 test set's folder: docs/training.md).

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
import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.recognition import Row, best_meaning
from harness.ears import candidate_adapter, recognizer_for
from harness.fixtures import ROOT, apply_condition
from harness.judging import Situations, outcome, transcript_of
from referee.games import matcher_for
from referee.games.race65 import Race65Spec
from referee.speech.audio import load_wav
from referee.speech.hearing.adapter import ADAPTER, load
from referee.speech.hearing.measures import dumped as measured
from referee.speech.hearing.recognizers import BASE_MODEL, ENGINES
from referee.speech.listen import understand
from referee.speech.understanding.intents import IntentMatcher
from training.progress import Bar
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


def paired(first: Sequence[dict[str, Any]], second: Sequence[dict[str, Any]],
           matcher: IntentMatcher) -> list[dict[str, Any]]:
    """Two dumps of the same recordings judged as two ears (the table's own
    :func:`~referee.speech.hearing.pair.together`): the first's hearing where
    it is sure, else the first's told the second's."""
    from referee.speech.hearing.pair import enough, together

    by_key = {(r["set"], r["room"], r["file"], r["word"]): r for r in second}
    out = []
    for row in first:
        other = by_key.get((row["set"], row["room"], row["file"], row["word"]))
        if other is None or enough(transcript_of(row)):
            out.append(row)
            continue
        both = together(transcript_of(row), transcript_of(other),
                        lambda sentence: matcher.match(sentence, "Ann").intent)
        out.append({**row, "heard": both.text, "confidence": both.confidence})
    return out


#: Who says each recording: the player the referee waits for (Ann, on her
#: turn, through the table's microphone) and another player off-turn (Bob,
#: through his own seat microphone, on Ann's turn).
SPEAKERS: dict[str, str | None] = {"awaited": None, "off-turn": "Bob"}
SPEAKER_NAMES = {"awaited": "Ann", "off-turn": "Bob"}


def wanted(word: str, speaker: str) -> dict[str, object]:
    """What a recording means said by ``speaker`` ("seven": their own seven)."""
    want = expected(word)
    return {**want, "owner": speaker} if want.get("kind") == "flip" else want


@dataclass
class Counts:
    """One set in one room said by one speaker: per group, the count of each
    outcome (:data:`harness.judging.OUTCOMES`), and the digits' ceiling."""

    groups: dict[str, Counter[str]] = field(default_factory=lambda: {
        "digits": Counter(), "commands": Counter(), "not": Counter()})
    ceiling: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, group: str, result: str, best_right: bool) -> None:
        self.groups[group][result] += 1
        if group == "digits":
            self.ceiling[0] += best_right
            self.ceiling[1] += 1

    def cells(self) -> list[str]:
        out = []
        for group in ("digits", "commands"):
            c, of = self.groups[group], sum(self.groups[group].values())
            wrong = c["acted wrong"] + c["asked wrong"]
            out.append(f"{c['acted'] + c['asked']} ({c['acted']}) / {c['prompted']} / "
                       f"{c['silent']} / {wrong} of {of}" if of else "-")
        c, of = self.groups["not"], sum(self.groups["not"].values())
        out.append(f"{c['acted wrong']} / {c['asked wrong']} / {c['prompted']} of {of}"
                   if of else "-")
        out.append(f"{self.ceiling[0]} of {self.ceiling[1]}" if self.ceiling[1] else "-")
        return out


HEADER = ("| set | room | said by | digits: heard right (at once) / prompted / silent / "
          "wrong | yes, no, stop: the same | non-command words: acted on / asked about / "
          "prompted | digits: best sentence right |")


def judge_rows(rows: Sequence[dict[str, Any]], situations: Situations,
               matcher: IntentMatcher, errors: bool = False) -> None:
    """Judge dumped hearings as said by each speaker and print a row of the
    table per set, room and speaker (the judgement is cheap: a dump can be
    judged again after a change to the decision, without decoding)."""
    for (name, room), group in itertools.groupby(rows, key=lambda r: (r["set"], r["room"])):
        mine = list(group)
        for said_by, seat in SPEAKERS.items():
            counts = Counts()
            who = SPEAKER_NAMES[said_by]
            for row in mine:
                kind = group_of(row["word"]) or "not"
                want = wanted(row["word"], who)
                transcript = transcript_of(row)
                judged = situations.judge(transcript, seat)
                result = outcome(judged, want)
                best = best_meaning(matcher, str(row.get("extra", {}).get("best") or ""),
                                    transcript.text, who)
                counts.add(kind, result, best == want)
                good = result == "silent" if kind == "not" else result in ("acted", "asked")
                if errors and not good:
                    print(f"  {name} {room} {said_by} {row['word']:7} {row['file']}: {result} "
                          f"{judged.intent} best={row.get('extra', {}).get('best')!r} "
                          f"p={row.get('extra', {}).get('probability')}")
            print(f"| {name} | {room} | {said_by} | " + " | ".join(counts.cells()) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description="real voices benchmark")
    parser.add_argument("--engine", "--ears", dest="engine", choices=list(ENGINES))
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
    parser.add_argument("--report", type=Path, nargs="+", metavar="DUMP",
                        help="judge earlier runs' dumps again (the referee's decision as it "
                        "is now) instead of hearing")
    parser.add_argument("--pair", type=Path, metavar="DUMP",
                        help="with one --report dump: the same recordings heard by a second "
                        "ear (Moonshine), judged as the table's pair of ears")
    args = parser.parse_args()
    matcher = matcher_for("race65", ["Ann", "Bob"])
    situations = Situations(lambda: Race65Spec(["Ann", "Bob"]), matcher)
    if args.report:
        print(HEADER)
        print("|---|---|---|---:|---:|---:|---:|")
        for dump in args.report:
            rows = json.loads(dump.read_text())["rows"]
            if args.pair:
                rows = paired(rows, json.loads(args.pair.read_text())["rows"], matcher)
            judge_rows(rows, situations, matcher, args.errors)
        return
    if not VOICES.is_dir():
        raise SystemExit(f"The real voices are not here ({SHARED}).")
    if "held-back" in args.sets and (args.held_back is None or not args.held_back.is_dir()):
        raise SystemExit("--sets held-back needs --held-back DIR (the v0.02 test set's folder).")
    recognizer = recognizer_for(matcher.phrases, args.engine, args.model)
    print(f"Engine: {recognizer.describe()}")
    print()
    real_trained = "tuning" in args.sets and learnt_real(args.model)
    chosen = {name: list(members(name, args.held_back, args.tuning_from, real_trained))
              for name in args.sets}
    bar = Bar(len(args.rooms) * sum(map(len, chosen.values())), "recordings")
    done, dumped = 0, []
    for name, pairs in chosen.items():
        for room in args.rooms:
            for word, path in pairs:
                bar(done, f"{name} {room}")
                done += 1
                audio = load_wav(path)
                if room != "clean":
                    # The recordings are short and often quiet: pad them as the fixtures are.
                    audio = apply_condition(audio, room, f"real/{path.name}")
                transcript = recognizer.decode(recognizer.prepare(audio))
                heard = understand(matcher, transcript, "Ann")
                dumped.append({"set": name, "room": room, "word": word, "file": path.name,
                               "heard": transcript.text, "confidence": transcript.confidence,
                               "intent": heard.intent.to_json(), "score": heard.score,
                               "best": best_meaning(matcher, transcript.best, transcript.text,
                                                    "Ann"),
                               "extra": measured(transcript.measures)})
    bar.close()
    print(HEADER)
    print("|---|---|---|---:|---:|---:|---:|")
    judge_rows(dumped, situations, matcher, args.errors)
    if args.dump:
        args.dump.write_text(json.dumps({"engine": recognizer.describe(), "rows": dumped}))


if __name__ == "__main__":
    main()
