"""Commands inside talk: a real person's word and a command in one breath.

Run: ``./run bench intalk [--voices ...] [--gaps 0 0.2 0.4] [--report DUMP] [--dump FILE]``;
the fitting set: ``./run bench intalk --fit DIR [--dump FILE]`` (``--sweep DUMP`` again).

Players run words together: "Sheila, hit me", "hmm ... flip my seven",
"hit me, come on". Each command of :data:`COMMANDS` (in the held-out voices:
nothing was tuned on them) is joined in one stream to a real person's word
that is no command (``../shared/real-voices/speech_commands_v0.01``, the ten
words that are no command, one speaker each: measurement only, never tuned
on), before it or after it, with a gap of each length, the word brought to
the command's loudness. Each stream is decoded as one utterance, then judged
by the referee's brain as said by the player it waits for and by another
player off-turn (:mod:`harness.situations`: where the command is a move the
referee expects of Ann). The table gives, beside the same commands said
alone, how often the command is heard right (acted on or asked about) and
how often the talk was acted on as another command.

**The fitting set** (``--fit DIR``, DIR the Speech Commands v0.02 test set's
folder: docs/training.md). The thresholds at which a part of an utterance is
asked about or answered (:data:`~referee.brain.hearing.PART_HEARD`,
:data:`~referee.brain.hearing.PART_QUERY_HEARD`) are fitted on other people:
the v0.02 recordings of words that are no command listed in
:data:`FIT_WORDS` (of speakers in no measurement set: ``tests/test_intalk.py``
checks it against ``../shared/real-voices``), the first of each word joined
to the same commands said by tuning voices (:data:`FIT_VOICES`); as talk,
every one of them alone and two by two, and the tuning split's lines of table
talk said by those voices. ``--sweep`` prints, for each pair of
thresholds, the commands heard right and the talk asked about or acted on
(the awaited player's: a part is weighed for no one else), and the commands
heard right less the talk asked about. Asking about talk costs a table as
much as missing a command costs it, so the referee's thresholds are the
highest within one utterance of the best of that: the moves' first, then
the questions' beside it. The sweep puts one threshold on every game of the
dump; run with ``--games turn7`` it fits that game's own
(:data:`~referee.brain.hearing.GAME_PART_HEARD`: a game keeps its own only
where its streams choose another than the pooled games').
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.realvoices import NOT_COMMANDS
from benchmarks.realvoices import VOICES as REAL
from benchmarks.recognition import moment_of
from harness.ears import recognizer_for
from harness.fixtures import (
    GAMES,
    HELD_OUT_VOICES,
    UNMET_VOICES,
    Utterance,
    fixture,
    utterances,
)
from harness.judging import OUTCOMES, outcome, transcript_of
from harness.situations import Placer
from referee.brain import hearing
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.hearing.measures import dumped
from referee.speech.hearing.recognizers import ENGINES
from training.progress import Bar

#: The commands joined to talk (fixture ids), by game.
COMMANDS = {"turn7": ("t7c02", "t7c04", "t7c01"), "race65": ("cmd01", "cmd14", "cmd16"),
            "shut-the-box": ("stb01", "stb07"), "phase10-twist": ("p10c09", "p10c01")}
GAPS = (0.0, 0.2, 0.4)
#: The fitting set's voices: tuning voices the adapter hears imperfectly.
FIT_VOICES = UNMET_VOICES[:2]
#: The fitting set's words (``--fit``): Speech Commands v0.02 test recordings
#: of words that are no command, one a word, of speakers in no measurement set.
FIT_WORDS = Path(__file__).with_name("phrases") / "intalk-fit.txt"
#: Talk alone in the fitting set (:func:`hear_talk`).
TALK = "talk"
#: Who says it (the brain's seat for each): as in the recognition benchmark.
SAID_BY = (("awaited", "Ann"), ("off-turn", "Bob"))


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)) + 1e-9)


def joined(command: np.ndarray, word: np.ndarray, gap: float, before: bool) -> Audio:
    """The word (brought to the command's loudness) and the command, ``gap`` apart."""
    word = word.astype(np.float64) * rms(command) / rms(word)
    silence = np.zeros(int(gap * RATE))
    parts = [word, silence, command] if before else [command, silence, word]
    return Audio(np.clip(np.concatenate(parts), -32768, 32767).astype(np.int16))


def fit_words(folder: Path) -> list[Path]:
    """The fitting set's recordings (:data:`FIT_WORDS`) in the v0.02 test set's ``folder``."""
    names = [n for n in FIT_WORDS.read_text().splitlines() if n and not n.startswith("#")]
    paths = [folder / "_unknown_" / name for name in names]
    if missing := [p.name for p in paths if not p.is_file()]:
        raise SystemExit(f"{folder} is not the v0.02 test set: {len(missing)} of the "
                         f"fitting set's recordings are not in it ({missing[0]} ...).")
    return paths


def hear(voices: list[str], gaps: list[float], games: list[str], words: list[Path],
         ears: str | None = None) -> list[dict[str, Any]]:
    """Every command alone and joined to every word, decoded once each."""
    total = sum(len(COMMANDS[g]) for g in games) * len(voices) * (1 + len(words) * len(gaps) * 2)
    bar = Bar(total, "utterances")
    rows: list[dict[str, Any]] = []
    for game in games:
        matcher = matcher_for(game, GAMES[game][1])
        recognizer = recognizer_for(matcher.phrases, ears)
        for voice in voices:
            for case in _commands(game):
                recognizer.follow(frozenset(moment_of(matcher.phrases, case)))
                said = load_wav(fixture(voice, case, "clean"))
                streams = [("alone", 0.0, "", said)] + [
                    (where, gap, _word(path),
                     joined(said.samples, load_wav(path).samples, gap, where == "before"))
                    for path in words for gap in gaps for where in ("before", "after")]
                for where, gap, word, audio in streams:
                    bar(len(rows), f"{game} {voice}")
                    rows.append(_row(recognizer, audio, game, voice, case, where, gap, word))
    bar.close()
    return rows


def hear_talk(voices: list[str], games: list[str], words: list[Path],
              ears: str | None = None) -> list[dict[str, Any]]:
    """Talk alone, where the referee waits for Ann's first command of
    :data:`COMMANDS`: each word, each word then the next (0.2 s apart), and
    each line of table talk of the game's tuning split said by ``voices``."""
    pairs = [(path, words[(i + 1) % len(words)]) for i, path in enumerate(words)]
    lines = {game: [u for u in utterances(game) if not u.is_command] for game in games}
    total = len(games) * 2 * len(words) + len(voices) * sum(len(v) for v in lines.values())
    bar = Bar(total, "utterances of talk")
    rows: list[dict[str, Any]] = []
    for game in games:
        matcher = matcher_for(game, GAMES[game][1])
        recognizer = recognizer_for(matcher.phrases, ears)
        case = _commands(game)[0]
        recognizer.follow(frozenset(moment_of(matcher.phrases, case)))
        streams = [(TALK, _word(path), load_wav(path)) for path in words] + [
            (TALK, f"{_word(first)} {_word(then)}",
             joined(load_wav(first).samples, load_wav(then).samples, 0.2, before=False))
            for first, then in pairs] + [
            (voice, line.text, load_wav(fixture(voice, line, "clean")))
            for voice in voices for line in lines[game]]
        for voice, said, audio in streams:
            bar(len(rows), f"{game} talk")
            rows.append(_row(recognizer, audio, game, voice, case, TALK, 0.0, said))
    bar.close()
    return rows


def _commands(game: str) -> list[Utterance]:
    return [u for u in utterances(game) if u.id in COMMANDS[game]]


def _word(path: Path) -> str:
    """What a recording says: its folder (v0.01) or the start of its name (v0.02's _unknown_)."""
    return path.name.split("_")[0] if path.parent.name == "_unknown_" else path.parent.name


def _row(recognizer: Any, audio: Audio, game: str, voice: str, case: Utterance, where: str,
         gap: float, word: str) -> dict[str, Any]:
    transcript = recognizer.decode(recognizer.prepare(audio))
    return {"game": game, "voice": voice, "id": case.id, "text": case.text,
            "intent": case.intent.to_json(), "where": where, "gap": gap, "word": word,
            "heard": transcript.text, "confidence": transcript.confidence,
            "extra": dumped(transcript.measures)}


def judged(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
    """Each row judged as said by each of :data:`SAID_BY`: (row, said by, outcome)."""
    placers: dict[str, Placer] = {}
    out = []
    for row in rows:
        game = row["game"]
        if game not in placers:
            players = tuple(GAMES[game][1])
            placers[game] = Placer(game, players, matcher_for(game, players))
        placer = placers[game]
        judge = placer.judges(placer.place(row["text"], row["intent"]))
        for said_by, seat in SAID_BY:
            want = ({"kind": "none"} if row["where"] == TALK else row["intent"] if seat == "Ann"
                    else placer.matcher.match(row["text"], seat).intent.to_json())
            out.append((row, said_by, outcome(judge.judge(transcript_of(row), seat), want)))
    return out


def report(rows: list[dict[str, Any]]) -> None:
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    outcomes = judged(rows)
    alone = {(row["game"], row["voice"], row["id"], said_by)
             for row, said_by, result in outcomes
             if row["where"] == "alone" and result in ("acted", "asked")}
    for row, said_by, result in outcomes:
        where = (row["where"] if row["where"] in ("alone", TALK)
                 else f"{row['where']} {row['gap']:g} s")
        c = counts.setdefault((said_by, row["game"], where), Counter())
        c[result] += 1
        c["of alone"] += (row["game"], row["voice"], row["id"], said_by) in alone
        c["right of alone"] += ((row["game"], row["voice"], row["id"], said_by) in alone
                                and result in ("acted", "asked"))
    print("| said by | game | the word | command heard right (at once) | of those heard alone "
          "| talk acted on as another command | prompted |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (said_by, game, where), c in sorted(counts.items()):
        of = sum(c[o] for o in OUTCOMES)
        heard = c["acted"] + c["asked"]
        print(f"| {said_by} | {game} | {where} | {heard} of {of} ({c['acted']}) | "
              f"{c['right of alone']} of {c['of alone']} | "
              f"{c['acted wrong']} ({c['asked wrong']} asked) | {c['prompted']} |")


#: The thresholds ``--sweep`` tries: a part asked about as an expected move
#: (no question; inf: no part weighed at all), then as a question (the
#: move's as it is).
SWEEP_MOVES = (math.inf, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1)
SWEEP_QUERIES = (math.inf, 0.99, 0.95, 0.9, 0.8, 0.6)


def _share(c: Counter[str], key: str) -> str:
    return f"{100 * c[key] / max(1, c[key + ' of']):.0f} %"


def sweep(rows: list[dict[str, Any]]) -> None:
    """The fitting set judged at each pair of thresholds (see the module's doc)."""
    print("| move part from | question part from | awaited: word before / after | off-turn "
          "| heard right | talk asked about (real words / lines) | talk acted on | "
          "commands' talk asked about | heard less asked |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    kept = hearing.PART_HEARD, hearing.PART_QUERY_HEARD, hearing.GAME_PART_HEARD
    hearing.GAME_PART_HEARD = {}  # (the swept threshold for every game)
    pairs = ([(moves, math.inf) for moves in SWEEP_MOVES]
             + [(kept[0], queries) for queries in SWEEP_QUERIES[1:]])
    try:
        for moves, queries in pairs:
            hearing.PART_HEARD, hearing.PART_QUERY_HEARD = moves, queries
            c: Counter[str] = Counter()
            for row, said_by, result in judged(rows):
                if row["where"] == TALK:  # real words, or the tuning voices' lines
                    if said_by == "awaited":  # (a part is weighed only for them)
                        talk = "words" if row["voice"] == TALK else "lines"
                        c[f"{talk} asked"] += result == "asked wrong"
                        c["talk acted"] += result == "acted wrong"
                elif row["where"] != "alone":
                    key = f"{said_by} {row['where']}"
                    c[key] += result in ("acted", "asked")
                    c[key + " of"] += 1
                    if said_by == "awaited":
                        c["heard"] += result in ("acted", "asked")
                        c["heard of"] += 1
                        c["wrong asked"] += result == "asked wrong"
                        c["talk acted"] += result == "acted wrong"
            net = c["heard"] - c["words asked"] - c["lines asked"] - c["wrong asked"]
            print(f"| {moves:g} | {queries:g} | {_share(c, 'awaited before')} / "
                  f"{_share(c, 'awaited after')} | {_share(c, 'off-turn before')} / "
                  f"{_share(c, 'off-turn after')} | {c['heard']} of {c['heard of']} | "
                  f"{c['words asked']} / {c['lines asked']} | {c['talk acted']} | "
                  f"{c['wrong asked']} | {net} |")
    finally:
        hearing.PART_HEARD, hearing.PART_QUERY_HEARD, hearing.GAME_PART_HEARD = kept


def main() -> None:
    parser = argparse.ArgumentParser(description="commands joined to real talk")
    parser.add_argument("--voices", nargs="+", help="the commands' voices (default: three "
                        "held out; with --fit, FIT_VOICES)")
    parser.add_argument("--gaps", nargs="+", type=float, default=list(GAPS))
    parser.add_argument("--games", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    parser.add_argument("--dump", type=Path, help="write every hearing to this JSON file")
    parser.add_argument("--report", type=Path, metavar="DUMP",
                        help="judge an earlier run's dump again instead of hearing")
    parser.add_argument("--fit", type=Path, metavar="DIR", help="hear the fitting set (DIR: "
                        "the Speech Commands v0.02 test set's folder) and sweep the thresholds")
    parser.add_argument("--sweep", type=Path, metavar="DUMP",
                        help="sweep the thresholds over an earlier --fit run's dump")
    parser.add_argument("--ears", choices=list(ENGINES), help="what hears (default: the "
                        "referee's default)")
    args = parser.parse_args()
    if args.report or args.sweep:
        rows = json.loads((args.report or args.sweep).read_text())
        (report if args.report else sweep)(rows)
        return
    if args.fit:
        talk = fit_words(args.fit)
        first: dict[str, Path] = {}
        for path in talk:  # the first recording of each word
            first.setdefault(_word(path), path)
        voices = args.voices or list(FIT_VOICES)
        rows = (hear(voices, args.gaps, args.games, list(first.values()), args.ears)
                + hear_talk(voices, args.games, talk, args.ears))
    else:
        if not REAL.is_dir():
            raise SystemExit(f"The real voices are not here ({REAL}).")
        words = [sorted((REAL / w).glob("*.wav"))[0] for w in NOT_COMMANDS]
        rows = hear(args.voices or list(HELD_OUT_VOICES[:3]), args.gaps, args.games, words,
                    args.ears)
    if args.dump:
        args.dump.write_text(json.dumps(rows))
    report(rows)
    if args.fit:
        sweep(rows)


if __name__ == "__main__":
    main()
