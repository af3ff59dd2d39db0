"""Pauses benchmark: commands said with a natural pause inside, and whether the
referee waits for their end.

Run: ``./run bench pauses [--voices ...] [--pauses 0.2 0.35 0.5]``.

A player pauses inside a command: after a name ("Bob, ... flip your four
down"), before a direction ("flip my seven ... up"), between the parts of a
Phase 10 Twist read-out ("I lay down my phase ... three fives ... and three
sevens"). Each command of :data:`SAID` is rendered a part at a time in each
voice (the held-out voices by default: nothing was tuned on them), the parts
joined with a pause of each length and a whisper of room noise, and the
stream cut into utterances exactly as the live loop cuts it
(:func:`benchmarks.table.heard_as_live`: the voice detector, the words
decoded ahead at each pause and judged against the grammar, and the brain,
in the situation where the command is a move it expects of Ann, asked
whether it expects the words so far: :class:`~referee.listening.Listening`). A command is
*cut* when an utterance ends before its last part has begun: the referee
answered before the player had finished. It is *heard right* when its first
utterance, as the brain judges it from the awaited player, means what was
said. The table also gives the delay from the end of the last part's
speech to the end being decided (audio time, as the benchmark's table rows).

*Right at the table* follows every utterance the stream was cut into
through one brain in the situation, as the live loop hears them, the rest
of a cut move heard again with it (:meth:`~referee.speech.listen.Listener.whole`):
the move played or asked about, as the command said whole would have been,
and no problem said (no "Sorry", no refusal, no move taken too soon); and
the same with each utterance heard apart, as before the rest was joined.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from dataclasses import dataclass

import numpy as np

from benchmarks.recognition import moment_of, percentile
from benchmarks.table import heard_as_live, speech_end
from harness.ears import recognizer_for
from harness.fixtures import HELD_OUT_VOICES, VOICES, Utterance
from harness.judging import Situations, outcome
from harness.situations import Placer
from referee.games import matcher_for
from referee.listening import Listening
from referee.protocol import Output, Say, Speech, Tone, Typed
from referee.report import Report
from referee.speech.audio import RATE, SPEECH_DB, speech_bounds
from referee.speech.audio import frame_energies as energies
from referee.speech.hearing.recognizers import ENGINES
from referee.speech.hearing.segmenter import Utterance as SegmentedUtterance
from referee.speech.listen import Listener
from training.progress import Bar

#: Commands said in parts (a pause between each two), by game: Race to 65 at
#: Ann and Bob's table, the others at Ann, Bob and Cy's.
SAID: dict[str, list[tuple[str, ...]]] = {
    "race65": [("flip my seven", "up"), ("flip my twelve", "down"),
               ("Bob,", "flip your four down"), ("Bob", "flip your ten up"),
               ("flip my", "nine"), ("I call", "sixty-five")],
    "turn7": [("lock", "Bob"), ("give the lock", "to Cy"), ("hit", "me")],
    "shut-the-box": [("shut", "four and five"), ("shut four", "and five"),
                     ("I rolled", "five and three")],
    "phase10-twist": [("I lay down my phase", "three fives", "and three sevens"),
                      ("I lay down my phase", "a run of four from six to nine",
                       "and three eights"),
                      ("I hit a four", "on Bob's run")],
}
PAUSES = (0.2, 0.35, 0.5)
#: The room's whisper of noise between the parts (dBFS): digital silence is no room.
NOISE_DBFS = -65.0


@dataclass
class Result:
    cut: bool
    right: bool
    #: From the end of the last part's speech to the end decided (s), when not cut.
    delay: float | None
    #: Right at the table (:func:`at_the_table`): the rest of a move heard
    #: with it, and each utterance heard apart.
    table: bool = False
    apart: bool = False


def at_the_table(cut: list[tuple[SegmentedUtterance, float, float]], listener: Listener,
                 judge: Situations, said: str, join: bool) -> bool:
    """Every utterance the stream was cut into heard in turn by one brain in
    the situation, as the live loop hears them (the rest of a move heard
    again with it: :meth:`~referee.speech.listen.Listener.whole`, when
    ``join``): whether the table went as with the command said whole (the
    referee said just what it says to it typed), or the referee asks about
    the move meant (its yes would leave the game as the command does) and
    said no problem (no "Sorry", no refusal, no move taken too soon)."""
    brain, at = judge.fresh()
    reference, _ = judge.fresh()
    typed = reference.step(Typed(at, said, "Ann"))
    meant = [o.text for o in typed if isinstance(o, Say)]
    out: list[Output] = []
    for u, decided, _lag in cut:
        transcript, start = listener.transcript(u.audio), u.start
        whole = listener.whole(u.audio, u.start, u.end, transcript) if join else None
        if whole is not None:
            transcript, start = whole
        out += brain.step(Speech(at + decided, at + start, at + u.end, "Ann", "mic",
                                 transcript))
    heard = [o for o in out if isinstance(o, Say)]
    if [o.text for o in heard] == meant:
        return True
    asked = Report().folded(out).state.get("question") is not None
    if not asked or any(o.tone == Tone.PROBLEM for o in heard):
        return False
    # (Ann's yes, on this copy of the brain: the game as the command typed left it?)
    yes = brain.step(Typed(max(at + decided for _, decided, _ in cut) + 0.1, "yes", "Ann"))
    played = Report().folded(yes).state.get("game")
    return played is not None and played == Report().folded(typed).state.get("game")


def stream_of(parts: list[np.ndarray], pause: float, seed: int) -> tuple[np.ndarray, float, float]:
    """The parts joined with ``pause`` seconds of room noise, a little before
    and a second after; where the last part begins and where its speech ends."""
    rng = np.random.default_rng(seed)

    def room(seconds: float) -> np.ndarray:
        return rng.normal(0.0, 32768 * 10 ** (NOISE_DBFS / 20), int(seconds * RATE))

    pieces: list[np.ndarray] = [room(0.3)]
    last_start = 0.0
    for i, part in enumerate(parts):
        if i:
            pieces.append(room(pause))
        last_start = sum(len(p) for p in pieces) / RATE
        pieces.append(part.astype(np.float64) + room(len(part) / RATE))
    pieces.append(room(1.2))
    stream = np.clip(np.concatenate(pieces), -32768, 32767).astype(np.int16)
    end = last_start + speech_end_of(parts[-1])
    return stream, last_start, end


def speech_end_of(part: np.ndarray) -> float:
    from referee.speech.audio import Audio

    return speech_end(Audio(part))


def trimmed(samples: np.ndarray) -> np.ndarray:
    """A rendered part without the silence the voice puts around it."""
    frame = RATE // 50
    bounds = speech_bounds(energies(samples, frame), frame, len(samples), below_peak_db=35.0,
                           margin=frame)
    return samples if bounds is None else samples[bounds[0] : bounds[1]]


def run(voices: list[str], pauses: list[float], games: list[str], errors: bool = False,
        before: bool = False, ears: str | None = None
        ) -> dict[tuple[str, float], list[Result]]:
    results: dict[tuple[str, float], list[Result]] = {}
    total = len(voices) * len(pauses) * sum(len(SAID[g]) for g in games)
    bar = Bar(total, "commands with a pause")
    done = 0
    for game in games:
        players = ("Ann", "Bob") if game == "race65" else ("Ann", "Bob", "Cy")
        matcher = matcher_for(game, players)
        recognizer = recognizer_for(matcher.phrases, ears)
        placer = Placer(game, players, matcher)
        for voice in voices:
            speak = VOICES[voice]
            for parts_text in SAID[game]:
                parts = [trimmed(speak(t).samples) for t in parts_text]
                whole = " ".join(parts_text)
                want = matcher.match(whole, "Ann").intent.to_json()
                # (heard at the moment it is said at: "lock Bob" when a Lock waits)
                recognizer.follow(moment_of(matcher.phrases, Utterance(
                    whole, whole, matcher.match(whole, "Ann").intent)))
                judge = placer.judges(placer.place(whole, want))
                for pause in pauses:
                    bar(done, f"{game} {voice}")
                    done += 1
                    stream, last_start, end = stream_of(parts, pause, done)
                    listening = Listening(Listener(recognizer, matcher), lambda: False,
                                          None if before else judge.expects)
                    cut = heard_as_live(stream, listening)
                    ends = [u.end for u, _, _ in cut]  # (where each one's speech ended)
                    is_cut = bool(cut) and ends[0] < last_start
                    listener = Listener(recognizer, matcher)
                    right = False
                    if cut:
                        transcript = listener.recognizer.decode(
                            listener.recognizer.prepare(cut[0][0].audio))
                        right = outcome(judge.judge(transcript, "Ann"), want) in (
                            "acted", "asked")
                    table = {join: at_the_table(cut, Listener(recognizer, matcher), judge,
                                                whole, join) for join in (True, False)}
                    delay = None if is_cut or not cut else max(0.0, cut[0][1] - end)
                    if errors and (is_cut or not right):
                        print(f"  {voice} {pause:g} s {' | '.join(parts_text)!r}: "
                              f"{'cut' if is_cut else 'whole'} at "
                              f"{', '.join(f'{e - last_start:+.2f}' for e in ends)} s "
                              f"(last part begins at 0); heard {right}, at the table "
                              f"{table[True]} (apart: {table[False]})")
                    results.setdefault((game, pause), []).append(
                        Result(is_cut, right, delay, table[True], table[False]))
    bar.close()
    return results


def report(results: dict[tuple[str, float], list[Result]]) -> None:
    print("| game | pause | cut before the end | heard right | end decided after the speech, "
          "p50 / p95 | right at the table | the same, each utterance apart |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    everything: list[Result] = []
    for (game, pause), rows in results.items():
        everything += rows
        print(f"| {game} | {pause:g} s | {_cells(rows)} | {_table_cells(rows)} |")
    print(f"| all | | {_cells(everything)} | {_table_cells(everything)} |")


def _table_cells(rows: list[Result]) -> str:
    return (f"{sum(r.table for r in rows)} of {len(rows)} | "
            f"{sum(r.apart for r in rows)} of {len(rows)}")


def _cells(rows: list[Result]) -> str:
    counts = Counter(r.cut for r in rows)
    delays = [r.delay for r in rows if r.delay is not None]
    timing = (f"{1000 * statistics.median(delays):.0f} / {1000 * percentile(delays, 0.95):.0f}"
              " ms" if delays else "-")
    right = sum(r.right for r in rows)
    return (f"{counts[True]} of {len(rows)} ({100 * counts[True] / len(rows):.1f} %) | "
            f"{right} of {len(rows)} | {timing}")


def as_before() -> None:
    """The end of an utterance decided as before #72: a pause whose decode was
    given up is no hold, no read-out waits longer, a held utterance goes on
    only when loud again (for the "before" column)."""
    from referee.speech.hearing import segmenter
    from referee.speech.hearing.grammar import Prefixes
    from referee.speech.listen import Listener

    judge = Listener.judge

    def judged(self: Listener) -> str | None:
        verdict = judge(self)
        return None if verdict == segmenter.WENT_ON else verdict

    setattr(Listener, "judge", judged)  # noqa: B010
    setattr(Prefixes, "reads_out", lambda self, words: False)  # noqa: B010
    segmenter.ONSET_BELOW_PEAK = SPEECH_DB
    segmenter.ONSET_ABOVE_FLOOR = -1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description="commands said with a pause inside")
    parser.add_argument("--voices", nargs="+", default=list(HELD_OUT_VOICES))
    parser.add_argument("--pauses", nargs="+", type=float, default=list(PAUSES))
    parser.add_argument("--games", nargs="+", choices=list(SAID), default=list(SAID))
    parser.add_argument("--errors", action="store_true", help="print each command cut")
    parser.add_argument("--before", action="store_true",
                        help="the end of an utterance decided as before #72 (as_before)")
    parser.add_argument("--ears", choices=list(ENGINES), help="what hears (default: the "
                        "referee's default)")
    args = parser.parse_args()
    if args.before:
        as_before()
    report(run(args.voices, args.pauses, args.games, args.errors, args.before, args.ears))


if __name__ == "__main__":
    main()
