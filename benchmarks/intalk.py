"""Commands inside talk: a real person's word and a command in one breath.

Run: ``./run bench intalk [--voices ...] [--gaps 0 0.2 0.4] [--report DUMP] [--dump FILE]``.

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
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.realvoices import NOT_COMMANDS
from benchmarks.realvoices import VOICES as REAL
from benchmarks.recognition import moment_of
from harness.ears import recognizer_for
from harness.fixtures import GAMES, HELD_OUT_VOICES, fixture, utterances
from harness.judging import outcome, transcript_of
from harness.situations import Placer
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.hearing.recognizers import ENGINES
from training.progress import Bar

#: The commands joined to talk (fixture ids), by game.
COMMANDS = {"turn7": ("t7c02", "t7c04", "t7c01"), "race65": ("cmd01", "cmd14", "cmd16"),
            "shut-the-box": ("stb01", "stb07"), "phase10-twist": ("p10c09", "p10c01")}
GAPS = (0.0, 0.2, 0.4)
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


def hear(voices: list[str], gaps: list[float], games: list[str],
         ears: str | None = None) -> list[dict[str, Any]]:
    """Every command alone and joined to every word, decoded once each."""
    words = [sorted((REAL / w).glob("*.wav"))[0] for w in NOT_COMMANDS]
    total = sum(len(COMMANDS[g]) for g in games) * len(voices) * (1 + len(words) * len(gaps) * 2)
    bar = Bar(total, "utterances")
    rows: list[dict[str, Any]] = []
    for game in games:
        matcher = matcher_for(game, GAMES[game][1])
        recognizer = recognizer_for(matcher.phrases, ears)
        cases = [u for u in utterances(game) if u.id in COMMANDS[game]]
        for voice in voices:
            for case in cases:
                recognizer.follow(frozenset(moment_of(matcher.phrases, case)))
                said = load_wav(fixture(voice, case, "clean"))
                streams = [("alone", 0.0, "", said)] + [
                    (where, gap, path.parent.name,
                     joined(said.samples, load_wav(path).samples, gap, where == "before"))
                    for path in words for gap in gaps for where in ("before", "after")]
                for where, gap, word, audio in streams:
                    bar(len(rows), f"{game} {voice}")
                    transcript = recognizer.decode(recognizer.prepare(audio))
                    rows.append({"game": game, "voice": voice, "id": case.id, "text": case.text,
                                 "intent": case.intent.to_json(), "where": where, "gap": gap,
                                 "word": word, "heard": transcript.text,
                                 "confidence": transcript.confidence,
                                 "extra": transcript.extra})
    bar.close()
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    placers: dict[str, Placer] = {}
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    for row in rows:
        game = row["game"]
        if game not in placers:
            players = tuple(GAMES[game][1])
            placers[game] = Placer(game, players, matcher_for(game, players))
        placer = placers[game]
        judge = placer.judges(placer.place(row["text"], row["intent"]))
        for said_by, seat in SAID_BY:
            want = (row["intent"] if seat == "Ann" else
                    placer.matcher.match(row["text"], seat).intent.to_json())
            result = outcome(judge.judge(transcript_of(row), seat), want)
            where = row["where"] if row["where"] == "alone" else f"{row['where']} {row['gap']:g} s"
            counts.setdefault((said_by, game, where), Counter())[result] += 1
    print("| said by | game | the word | command heard right (at once) | talk acted on as "
          "another command | prompted |")
    print("|---|---|---|---:|---:|---:|")
    for (said_by, game, where), c in sorted(counts.items()):
        of = sum(c.values())
        heard = c["acted"] + c["asked"]
        print(f"| {said_by} | {game} | {where} | {heard} of {of} ({c['acted']}) | "
              f"{c['acted wrong']} ({c['asked wrong']} asked) | {c['prompted']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description="commands joined to real talk")
    parser.add_argument("--voices", nargs="+", default=list(HELD_OUT_VOICES[:3]))
    parser.add_argument("--gaps", nargs="+", type=float, default=list(GAPS))
    parser.add_argument("--games", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    parser.add_argument("--dump", type=Path, help="write every hearing to this JSON file")
    parser.add_argument("--report", type=Path, metavar="DUMP",
                        help="judge an earlier run's dump again instead of hearing")
    parser.add_argument("--ears", choices=list(ENGINES), help="what hears (default: the "
                        "referee's default)")
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.report.read_text()))
        return
    if not REAL.is_dir():
        raise SystemExit(f"The real voices are not here ({REAL}).")
    rows = hear(args.voices, args.gaps, args.games, args.ears)
    if args.dump:
        args.dump.write_text(json.dumps(rows))
    report(rows)


if __name__ == "__main__":
    main()
