"""Recognition benchmark: speech fixtures -> recogniser -> intent.

Run: ``./run bench recognition [--game race65|shut-the-box|turn7]
[--ears whisper|moonshine-tiny|moonshine-base|pocketsphinx|vosk]
[--voices ...] [--conditions ...] [--dump FILE.json]``, or
``./run bench recognition --game GAME --report FILE.json`` to print the tables
of an earlier run's dump again (without its peak memory, which a dump does not
keep).

For every voice and room of :mod:`harness.fixtures`, each utterance goes
the way the table loop takes it once the voice detector says it has ended:
prepared by the recogniser (:meth:`~referee.speech.hearing.interface.Recognizer.prepare`),
decoded with the game's grammar, read by the intent matcher
(:func:`~referee.speech.listen.understand`). A command counts as right only
if the intent's kind and every field are right, whether the referee would act
at once or ask first ("asked" is the share it would ask about); table talk
counts as taken for a command when it gives any intent but none, asked or not.
Each utterance is decoded at the moment of the game it would be said at
(:func:`moment_of`): Turn 7's "lock Bob" while a Lock waits for its target,
table talk at every moment at once.

Voices and sentences come in two splits: the tuning split (the six voices and
the sentence lists every earlier change was measured on, and the ``pd``
paraphrases) and the held-out split (six other voices, the ``pt`` paraphrases
and the ``tt`` table talk), which nothing was ever tuned on. The summary
table gives both.

The latency is from the end of the utterance to the intent (all of that
work), on whatever else the machine is doing; the real-time factor is the
same time over the audio's length.

The ceiling table says how much of what is missed is the rejection's doing:
the share of commands whose *best* sentence (the recogniser's best at any
confidence: Whisper's best sentence of the grammar search, PocketSphinx's
transcript) means what was said. That is what a perfect rejection would
reach, one that took every right best sentence and no wrong one; the rest is
the acoustic model and the grammar.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import resource
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from harness.ears import recognizer_for
from harness.fixtures import (
    CONDITIONS,
    DEFAULT_VOICES,
    DEV_VOICES,
    GAMES,
    HELD_OUT_VOICES,
    UNMET_VOICES,
    VOICES,
    Utterance,
    fixture,
    utterances,
)
from referee.games import matcher_for
from referee.speech.audio import load_wav
from referee.speech.hearing.confidence import CALIBRATIONS, Calibration, decide, names_before
from referee.speech.hearing.interface import Transcript
from referee.speech.hearing.measures import dumped, measures_of
from referee.speech.hearing.recognizers import ENGINES
from referee.speech.listen import understand
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.templates import PhraseSet
from referee.wording import SURE_SCORE
from training.progress import Bar

PLAYERS = GAMES["race65"][1]
#: Commands that must never be taken for each other: Turn 7's "stay" is a move,
#: "stop" only cuts the referee's speech.
CONFUSABLE = (("stay", "stop"), ("stop", "stay"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class Row:
    """One utterance as the benchmark heard it."""

    voice: str
    condition: str
    id: str
    text: str
    kind: str  # "command", "paraphrase-dev", "paraphrase-test", "talk", "talk-test"
    heard: str
    intent: dict[str, object]
    expected: dict[str, object]
    score: float
    seconds: float
    audio_s: float
    extra: dict[str, object]
    #: What the recogniser's best sentence means, at any confidence (see the
    #: module's ceiling table).
    best: dict[str, object] = field(default_factory=dict)

    @property
    def right(self) -> bool:
        return self.intent == self.expected

    @property
    def best_right(self) -> bool:
        return self.best == self.expected

    @property
    def at_once(self) -> bool:
        """Acted on at once (not asked about first), and right."""
        return self.right and self.score >= SURE_SCORE

    @property
    def taken(self) -> bool:
        """Table talk taken for a command (acted on, or asked about)."""
        return self.intent.get("kind") not in ("none", None)

    @property
    def asked(self) -> bool:
        return self.taken and self.score < SURE_SCORE


#: What :func:`kind_of` calls an utterance.
KINDS = ("command", "talk", "paraphrase-dev", "paraphrase-test", "talk-test")


def kind_of(utterance: Utterance) -> str:
    prefix = utterance.id[:2]
    if prefix == "pd":
        return "paraphrase-dev"
    if prefix == "pt":
        return "paraphrase-test"
    if prefix == "tt":
        return "talk-test"
    return "command" if utterance.is_command else "talk"


def moment_of(phrases: PhraseSet, case: Utterance) -> frozenset[str]:
    """When an utterance is said at a table: a sentence that can only be said at a
    moment (the phrase file's ``when``: Turn 7's "lock Bob" when a Lock waits)
    at that moment; any other command at none (Turn 7: on a player's hit or
    stay); table talk at every moment at once (the most sentences to be taken
    for)."""
    if not case.is_command:
        return phrases.moments
    for moments in [frozenset(), *(frozenset({m}) for m in sorted(phrases.moments))]:
        if _matcher(phrases, moments).match(case.text, "Ann").intent == case.intent:
            return moments  # a sentence of the phrase file, said where it can be
    kinds = [i for i in phrases.intents if i.fields.get("kind") == case.intent.kind]
    if any(i.when is None for i in kinds):  # a paraphrase of a move of any moment
        return frozenset()
    return frozenset(i.when for i in kinds if i.when is not None)


_MATCHERS: dict[tuple[int, frozenset[str]], IntentMatcher] = {}


def _matcher(phrases: PhraseSet, moments: frozenset[str]) -> IntentMatcher:
    """The typed matcher of what can be said at ``moments`` (kept per phrase set)."""
    key = (id(phrases), moments)
    if key not in _MATCHERS:
        names = phrases.slots["player"].values.values() if "player" in phrases.slots else ()
        _MATCHERS[key] = IntentMatcher(phrases.only(moments), tuple(dict.fromkeys(names)))
    return _MATCHERS[key]


def run(game: str, engine: str | None, model: str | None, voices: list[str],
        conditions: list[str], paraphrase_conditions: list[str],
        only: Sequence[str] = ()) -> tuple[list[Row], str]:
    """Every utterance of the game, by every voice, in every room (``only``:
    of those kinds alone, :func:`kind_of`), heard and understood."""
    players = GAMES[game][1]

    def utterances_of(held_out: bool) -> list[Utterance]:
        return [u for u in utterances(game, held_out=held_out) if not only or kind_of(u) in only]

    matcher = matcher_for(game, players)
    recognizer = recognizer_for(matcher.phrases, engine, model)
    rows: list[Row] = []
    rooms = list(dict.fromkeys([*conditions, *paraphrase_conditions]))
    total = len(voices) * sum(len(utterances_of(False)) * (c in conditions)
                              + len(utterances_of(True)) * (c in paraphrase_conditions)
                              for c in rooms)
    bar = Bar(total, f"{game} utterances")
    # One room at a time, as at a table (PocketSphinx adapts its cepstral mean
    # normalisation from one utterance to the next).
    for voice in voices:
        for condition in rooms:
            cases = [*(utterances_of(False) if condition in conditions else []),
                     *(utterances_of(True) if condition in paraphrase_conditions else [])]
            for case in cases:
                bar(len(rows), f"{voice} {condition}")
                said_at = moment_of(matcher.phrases, case)
                recognizer.follow(frozenset(said_at))
                raw = load_wav(fixture(voice, case, condition))
                # As the table loop does: the utterance has ended (the voice
                # detector said so), then it is prepared, decoded and read.
                start = time.perf_counter()
                transcript = recognizer.decode(recognizer.prepare(raw))
                heard = understand(matcher, transcript, players[0])
                done = time.perf_counter()
                rows.append(Row(voice, condition, case.id, case.text, kind_of(case),
                                transcript.text, heard.intent.to_json(), case.intent.to_json(),
                                heard.score, done - start, raw.seconds,
                                dumped(transcript.measures),
                                best_meaning(matcher, transcript.best, transcript.text,
                                             players[0])))
    bar.close()
    return rows, recognizer.describe()


def best_meaning(matcher: IntentMatcher, best: str, heard: str,
                 speaker: str) -> dict[str, object]:
    """What the recogniser's best sentence means at any confidence: the
    grammar search's ``best`` sentence (its transcript is empty when the
    sentence is not believed), otherwise the transcript."""
    words = best or heard
    return matcher.match(words, speaker).intent.to_json() if words else {"kind": "none"}


@functools.cache
def table_matcher(game: str) -> IntentMatcher:
    """The game's matcher for the fixtures' table, built once and remembering
    every sentence it read: a dump judged again at several thresholds reads
    each sentence many times."""
    return matcher_for(game, GAMES[game][1], remember=None)


def load_rows(path: str, game: str) -> list[Row]:
    """An earlier run's rows from its ``--dump`` (the best sentence's meaning
    worked out again where the dump is older than it)."""
    matcher = table_matcher(game)
    with open(path) as handle:
        dumped = json.load(handle)
    rows = []
    for item in dumped:
        if not item.get("best"):
            item["best"] = best_meaning(matcher, str(item["extra"].get("best") or ""),
                                        item["heard"], GAMES[game][1][0])
        rows.append(Row(**item))
    return rows


def rejudge(rows: list[Row], game: str, calibration: Calibration) -> list[Row]:
    """The rows of a Whisper dump judged again with another calibration
    (``--report DUMP --calibration base|table``): each hearing's measures are
    in its dump, so what the referee would have heard, asked or dropped
    follows from them (:func:`~referee.speech.hearing.confidence.decide`)
    without decoding again."""
    players = GAMES[game][1]
    matcher = table_matcher(game)
    names = names_before(functools.partial(matcher.match, speaker=players[0]), players)

    def heard_at(sentence: str) -> float:
        return calibration.threshold(matcher.match(sentence, players[0]).intent.kind,
                                     matcher.phrases.lenient_kinds)

    out = []
    for row in rows:
        measures = measures_of(row.extra)
        if measures is None:
            out.append(row)
            continue
        text, confidence, chance = decide(measures, calibration.weights, heard_at, names)
        heard = understand(matcher, Transcript(text, confidence), players[0])
        out.append(replace(row, heard=text, intent=heard.intent.to_json(), score=heard.score,
                           extra=dumped(replace(measures, probability=round(chance, 4)))))
    return out


def paired(first: list[Row], second: list[Row], game: str) -> list[Row]:
    """Two dumps of the same utterances judged as two ears
    (:mod:`referee.speech.hearing.pair`, the very functions the table runs):
    the first's row where it is sure, else the first's told the second's
    hearing (sure where both mean the same, the second all but certain).
    Its time is the first's, or both together."""
    from referee.speech.hearing.pair import enough, together

    players = GAMES[game][1]
    matcher = table_matcher(game)
    by_key = {(r.voice, r.condition, r.id): r for r in second}

    def transcript(row: Row) -> Transcript:
        return Transcript(row.heard, 1.0 if row.heard and not row.asked else
                          0.75 if row.heard else 0.0, (), row.seconds, measures_of(row.extra))

    out = []
    for row in first:
        other = by_key.get((row.voice, row.condition, row.id))
        if other is None or enough(transcript(row)):
            out.append(row)
            continue
        both = together(transcript(row), transcript(other),
                        lambda sentence: matcher.match(sentence, players[0]).intent)
        heard = understand(matcher, both, players[0])
        out.append(replace(row, heard=both.text, intent=heard.intent.to_json(),
                           score=heard.score, seconds=row.seconds + other.seconds))
    return out


def _pct(rows: list[Row], test: str = "right") -> str:
    if not rows:
        return "-"
    hits = sum(bool(getattr(r, test)) for r in rows)
    return f"{100 * hits / len(rows):.1f} %"


def report(rows: list[Row], game: str, engine: str, voices: list[str],
           conditions: list[str], measured: bool = True) -> None:
    print(f"Game: {game}; engine: {engine}")
    print()
    commands = [r for r in rows if r.kind == "command"]
    print("Commands right, by voice and room (held-out voices marked *):")
    print()
    print("| voice | " + " | ".join(conditions) + " |")
    print("|---|" + "---:|" * len(conditions))
    for voice in voices:
        mark = " *" if voice in HELD_OUT_VOICES else ""
        cells = [_pct([r for r in commands if r.voice == voice and r.condition == c])
                 for c in conditions]
        print(f"| {voice}{mark} | " + " | ".join(cells) + " |")
    print()
    print("Summary by split (commands by room; paraphrases and table talk over the rooms "
          "they were played in):")
    print()
    columns = [*conditions, "paraphrases", "talk taken", "asked"]
    print("| split | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for split, mine, sets in _splits(rows, conditions):
        cells = [_pct(s) for s in sets]
        talk_rows = [r for r in mine if r.kind in ("talk", "talk-test")]
        cells.append(_pct(talk_rows, "taken"))
        cells.append(_pct([r for r in mine if r.kind == "command"], "asked"))
        print(f"| {split} | " + " | ".join(cells) + " |")
    ceiling(rows, conditions)
    by_length(rows, conditions)
    mistakes(rows, conditions)
    confusions(rows)
    latencies = [r.seconds for r in rows]
    audio_s = sum(r.audio_s for r in rows)
    print()
    print("| measure | value |")
    print("|---|---:|")
    talk = [r for r in rows if r.kind in ("talk", "talk-test")]
    print(f"| table talk taken for a command (all) | {_pct(talk, 'taken')} "
          f"({sum(r.taken for r in talk)}/{len(talk)}) |")
    print(f"| real-time factor | {sum(latencies) / audio_s:.3f} |")
    print(f"| end of audio to intent, p50 | {1000 * statistics.median(latencies):.0f} ms |")
    print(f"| end of audio to intent, p95 | {1000 * percentile(latencies, 0.95):.0f} ms |")
    if measured:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| peak memory (whole process) | {peak:.0f} MB |")
    else:
        print("| peak memory (whole process) | not in a dump |")
    print(f"| utterances | {len(rows)} ({audio_s / 60:.1f} min of audio) |")


def ceiling(rows: list[Row], conditions: list[str]) -> None:
    """Heard right against the ceiling of a perfect rejection (the best sentence
    right), by split and room. Only for a recogniser that keeps its best sentence
    apart from what it believed (Whisper); PocketSphinx's transcript is both."""
    if not any("best" in r.extra for r in rows):
        return
    print()
    print("Heard right / acted on at once and right / best sentence right at any "
          "confidence (a perfect rejection's ceiling):")
    print()
    columns = [*conditions, "paraphrases"]
    print("| split | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for split, _, sets in _splits(rows, conditions):
        cells = [f"{_pct(s)} / {_pct(s, 'at_once')} / {_pct(s, 'best_right')}" if s else "-"
                 for s in sets]
        print(f"| {split} | " + " | ".join(cells) + " |")


def _splits(rows: list[Row], conditions: list[str]
            ) -> Iterator[tuple[str, list[Row], list[list[Row]]]]:
    """Each split's name, rows, and its commands by room then its paraphrases."""
    for split, group, para in (
        ("tuning", DEV_VOICES, "paraphrase-dev"),
        ("tuning, unmet voices", UNMET_VOICES, "paraphrase-dev"),
        ("held out", HELD_OUT_VOICES, "paraphrase-test"),
        # Piper's joe is one speaker, and the table's adapter was trained on
        # joe at other settings: the held-out voices of no speaker it heard.
        ("held out, no Piper", tuple(v for v in HELD_OUT_VOICES if not v.startswith("piper")),
         "paraphrase-test"),
    ):
        mine = [r for r in rows if r.voice in group]
        if mine:
            sets = [[r for r in mine if r.kind == "command" and r.condition == c]
                    for c in conditions]
            yield split, mine, [*sets, [r for r in mine if r.kind == para]]


#: The lengths commands are judged by (words said): short, middling, long.
LENGTHS = ((1, 3), (4, 5), (6, 99))


def by_length(rows: list[Row], conditions: list[str]) -> None:
    """Commands by how many words were said, by split: how many were acted on
    at once and right, and how many heard right (acted on or asked about). A
    long sentence heard right should be acted on as often as a short one."""
    print()
    print("Commands by length (words said): acted on right / heard right:")
    print()
    print("| split | " + " | ".join(f"{low}-{high} words" if high < 99 else f"{low}+ words"
                                  for low, high in LENGTHS) + " |")
    print("|---|" + "---:|" * len(LENGTHS))
    for split, mine, _ in _splits(rows, conditions):
        cells = []
        for low, high in LENGTHS:
            group = [r for r in mine if r.kind == "command"
                     and low <= len(r.text.split()) <= high]
            acted = [r for r in group if r.right and not r.asked]
            cells.append(f"{100 * len(acted) / len(group):.1f} % / {_pct(group)} "
                         f"({len(group)})" if group else "-")
        print(f"| {split} | " + " | ".join(cells) + " |")


def mistakes(rows: list[Row], conditions: list[str]) -> None:
    """What must not be taken for a command, by split: table talk sentences and
    single words taken (acted on or asked about; how many of them sure, acted
    on at once), and wrong moves acted on without asking (of the commands and
    paraphrases)."""
    print()
    print("Taken for a command (acted on or asked about), and wrong moves acted on "
          "without asking:")
    print()
    print("| split | talk sentences taken | single words taken | wrong moves acted on |")
    print("|---|---:|---:|---:|")
    for split, mine, _ in _splits(rows, conditions):
        words = [r for r in mine if r.kind == "talk" and r.id.startswith("word")]
        talk = [r for r in mine if r.kind in ("talk", "talk-test") and not r.id.startswith("word")]
        moves = [r for r in mine if r.kind in ("command", "paraphrase-dev", "paraphrase-test")]
        wrong = [r for r in moves if r.taken and not r.right and not r.asked]
        cells = [f"{_pct(group, 'taken')} ({sum(r.taken for r in group)} of {len(group)}; "
                 f"{sum(r.taken and not r.asked for r in group)} sure)" if group else "-"
                 for group in (talk, words)]
        share = 100 * len(wrong) / max(len(moves), 1)
        cells.append(f"{share:.2f} % ({len(wrong)} of {len(moves)})")
        print(f"| {split} | " + " | ".join(cells) + " |")


def confusions(rows: list[Row]) -> None:
    """How often a command was heard as one it must never be taken for: acted on
    at once (sure), or asked about first."""
    pairs = [(said, heard) for said, heard in CONFUSABLE
             if any(r.expected.get("kind") == said for r in rows)
             and any(r.expected.get("kind") == heard for r in rows)]
    if not pairs:
        return
    print()
    print("| said | heard as | acted on | asked about | of |")
    print("|---|---|---:|---:|---:|")
    for said, heard in pairs:
        mine = [r for r in rows if r.expected.get("kind") == said]
        wrong = [r for r in mine if r.intent.get("kind") == heard]
        asked = sum(r.asked for r in wrong)
        print(f"| {said} | {heard} | {len(wrong) - asked} | {asked} | {len(mine)} |")


#: Who says each utterance when it is judged by the brain (``--judge``): the
#: player the referee waits for (Ann, from her seat, in a situation where her
#: command is a move the referee expects: :mod:`harness.situations`) and
#: another player off-turn (Bob, from his seat, in the same situation).
JUDGED_BY = (("awaited", "Ann"), ("off-turn", "Bob"))


def _swapped(intent: dict[str, object], one: str, other: str) -> dict[str, object]:
    """``intent`` with the players ``one`` and ``other`` swapped in its values."""
    def swap(value: object) -> object:
        return other if value == one else one if value == other else value
    return {k: [swap(v) for v in value] if isinstance(value, list) else swap(value)
            for k, value in intent.items()}


def judged(rows: list[Row], game: str, before: bool = False) -> None:
    """The rows judged by the referee's brain as said by the awaited player and
    off-turn (:data:`JUDGED_BY`), each outcome counted (``before``: with the
    decision as it was before the referee knew what it waits for, #72): by
    split and room, commands (acted on at once and right, asked about and
    right, prompted to say it again, nothing said, acted on or asked about as
    another move), the paraphrases heard right, and the table talk taken or
    prompted."""
    from harness.judging import as_before, outcome, transcript_of
    from harness.situations import Placer

    players = GAMES[game][1]
    matcher = table_matcher(game)
    placer = Placer(game, tuple(players), matcher)
    counts: dict[tuple[str, str, str, str], dict[str, int]] = {}
    bar = Bar(len(rows) * len(JUDGED_BY), f"{game} judged")
    done = 0
    with as_before() if before else contextlib.nullcontext():
        for row in rows:
            split = ("held out" if row.voice in HELD_OUT_VOICES else
                     "unmet" if row.voice in UNMET_VOICES else "tuning")
            talk = row.kind in ("talk", "talk-test")
            group = ("talk" if talk else "paraphrases" if row.kind.startswith("paraphrase")
                     else "commands")
            place = placer.place(row.text, row.expected)
            judge = placer.judges(place)
            transcript = transcript_of({"heard": row.heard, "confidence": (
                1.0 if row.heard and not row.asked else 0.75 if row.heard else 0.0),
                "extra": row.extra})
            for said_by, seat in JUDGED_BY:
                bar(done, f"{row.voice} {row.condition}")
                done += 1
                want = row.expected
                if seat != players[0] and not talk:
                    read = matcher.match(row.text, players[0]).intent.to_json()
                    want = (matcher.match(row.text, seat).intent.to_json() if read == want
                            else _swapped(want, players[0], seat))
                result = outcome(judge.judge(transcript, seat), want)
                cell = counts.setdefault((split, row.condition, said_by, group), {})
                cell[result] = cell.get(result, 0) + 1
    bar.close()
    print()
    print(f"Judged by the referee{' as before #72' if before else ''}: commands heard right "
          "(acted on at once) / prompted / silent / wrong (acted on); paraphrases heard right; "
          "talk acted on / asked about / prompted:")
    print()
    print("| split | room | said by | commands | paraphrases | talk |")
    print("|---|---|---|---:|---:|---:|")
    keys = sorted({k[:3] for k in counts}, key=lambda k: (k[0], CONDITIONS.index(k[1])
                                                         if k[1] in CONDITIONS else 99, k[2]))
    for split, room, said_by in keys:
        cells = []
        for group in ("commands", "paraphrases", "talk"):
            c = counts.get((split, room, said_by, group), {})
            of = sum(c.values())
            heard = c.get("acted", 0) + c.get("asked", 0)
            if not of:
                cells.append("-")
            elif group == "commands":
                cells.append(f"{100 * heard / of:.1f} % ({100 * c.get('acted', 0) / of:.1f}) / "
                             f"{c.get('prompted', 0)} / {c.get('silent', 0)} / "
                             f"{c.get('acted wrong', 0) + c.get('asked wrong', 0)} "
                             f"({c.get('acted wrong', 0)}) of {of}")
            elif group == "paraphrases":
                cells.append(f"{100 * heard / of:.1f} % of {of}")
            else:
                cells.append(f"{c.get('acted wrong', 0)} / {c.get('asked wrong', 0)} / "
                             f"{c.get('prompted', 0)} of {of}")
        print(f"| {split} | {room} | {said_by} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description="recognition benchmark")
    parser.add_argument("--game", choices=list(GAMES), default="race65")
    parser.add_argument("--engine", "--ears", dest="engine", choices=list(ENGINES))
    parser.add_argument("--model", help="model folder (Whisper or Vosk)")
    parser.add_argument("--voices", nargs="+", default=list(DEFAULT_VOICES))
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    parser.add_argument("--paraphrase-conditions", nargs="+", default=["clean", "babble20"],
                        help="rooms the paraphrases and held-out table talk are played in")
    parser.add_argument("--only", nargs="+", default=[], metavar="KIND", choices=KINDS,
                        help="hear only these kinds of utterance (the tuning split's table "
                        "talk alone: --only talk)")
    parser.add_argument("--errors", action="store_true", help="list every wrong utterance")
    parser.add_argument("--dump", help="write every utterance's result to this JSON file")
    parser.add_argument("--report", metavar="DUMP", nargs="+",
                        help="print the tables of earlier runs' --dump files (together: "
                        "a tuning run's and a held-out run's, say) instead of running")
    parser.add_argument("--judge", action="store_true",
                        help="also judge every hearing by the referee's brain, as said by the "
                        "player it waits for and by another player off-turn")
    parser.add_argument("--before", action="store_true",
                        help="with --judge: the referee's decision as it was before it knew "
                        "what it waits for (#72)")
    parser.add_argument("--calibration", choices=list(CALIBRATIONS),
                        help="with --report: judge the dump's Whisper hearings again with "
                        "this calibration (the base model's or the table adapter's)")
    parser.add_argument("--pair", metavar="DUMP", nargs="+",
                        help="with --report: the same utterances heard by a second ear "
                        "(Whisper): judge the two as the table's pair of ears")
    args = parser.parse_args()

    if args.report:
        rows = [row for dump in args.report for row in load_rows(dump, args.game)]
        if args.calibration:
            rows = rejudge(rows, args.game, CALIBRATIONS[args.calibration])
        if args.pair:
            rows = paired(rows, [row for dump in args.pair for row in load_rows(dump, args.game)],
                          args.game)
        voices = [v for v in VOICES if any(r.voice == v for r in rows)]
        conditions = [c for c in CONDITIONS if any(r.condition == c and r.kind == "command"
                                                   for r in rows)]
        report(rows, args.game, f"from {' '.join(args.report)}", voices, conditions,
               measured=False)
        if args.judge:
            judged(rows, args.game, args.before)
        return
    rows, engine = run(args.game, args.engine, args.model, args.voices, args.conditions,
                       args.paraphrase_conditions, args.only)
    report(rows, args.game, engine, args.voices, args.conditions)
    if args.judge:
        judged(rows, args.game, args.before)
    if args.errors:
        print()
        for r in rows:
            wrong = r.taken if r.kind.startswith("talk") else not r.right
            if wrong:
                print(f"{r.voice:18} {r.condition:9} {r.text!r:38} heard {r.heard!r} -> "
                      f"{r.intent} {r.extra}")
    if args.dump:
        with open(args.dump, "w") as out:
            json.dump([r.__dict__ for r in rows], out)


if __name__ == "__main__":
    main()
