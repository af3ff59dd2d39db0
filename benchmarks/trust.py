"""A table you can trust: moves lost and invented, and "stop", through a real audio server.

    ./run bench trust [--ratios 6 0 -6] [--over 12] [--quiet 6] [--stops 8] [--phones]

A live game of Race to 65 (phase-seven hard: 15-second turns, so the
countdown runs) is refereed in this process exactly as ``referee play`` runs
one: the live loop, the real microphone class listening to a PulseAudio null
sink's monitor, the eSpeak voice played into the same sink through the real
speaker class, and the echo canceller between them. The referee's voice
therefore reaches its microphone, as in a room. The players are this script:
it plays recordings into the sink with ``paplay`` and types answers to the
referee's questions on the keyboard pipe, as a helper would.

Each loudness ratio (the referee's active speech level over the player's, in
dB: 6 = the referee is 6 dB louder) gets a fresh server and game, then:

* **moves over the referee**: the referee is made to talk (a typed question
  whose answer is a sentence or two, or the announcement of the previous
  move), and "flip my N" (a legal tile for the active player) starts at a
  random moment 0.1 to 0.8 s into its voice;
* **moves in silence**: the same, once the referee has been silent for 0.5 s;
* no move is begun in the last 4 s of a turn (it waits for the next turn):
  a move said as the time runs out is refused by rule and belongs to
  whichever turn its first sound fell in, which the benchmark cannot know
  from when it pressed play; that edge has its own tests;
* **stops**: "rules" is typed and, 1 to 3 s into the reading, "stop" is played;
* **table talk, silence and noise**: talk recordings, 2 s of nothing, and
  1.5 s of pink noise at the player's level.

With ``--phones`` the table has no microphone of its own: each player has a
phone lying on the table, hands-free, streaming to their seat page's
microphone over a real WebSocket (``harness/phone.py``). A phone hears the
room (the sink's monitor through a reverberant room's response: the
referee's voice, and the other player's, as cross-talk) and its own player
close up, :data:`PHONE_LATENCIES` late, and the referee cleans each stream
with an echo canceller of its own. The loudness ratio is then the referee's
voice over the player's at the player's own phone; a player's voice reaches
the room (and so the other phone) :data:`CLOSE_DB` quieter.

The players' recordings come from two voices, the tuning Piper voice and a
held-out eSpeak voice (``harness/fixtures.py``).

Reported per ratio, from the game log the referee writes:

* a move is **played** (its flip happened), **confirmed** (asked about, then
  played after a typed yes), **noticed** (the referee said it did not catch
  it: "Sorry, I was talking: say it again", "I didn't catch that", "Did you
  mean ...", or refused it: "Too late, Bob: your time was up") or **lost**
  (neither played nor asked about nor answered at all);
* **invented**: a move the referee played (or refused as illegal) that was
  not the one said, or during talk, silence or noise;
* **echo answered**: inputs the referee acted on although no player had
  spoken in the 2.5 s before (its own voice, heard back);
* **stop**: the share of stops that cut the voice, and the latency from the
  end of the word "stop" (as played: conservative, the player's sound
  reaches the sink a little later) to the referee's sound ending, which is
  the moment the referee cut its buffer plus the speaker stream's latency.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.recognition import PLAYERS, percentile
from harness import audioserver
from harness.ears import recognizer_for
from harness.fixtures import COMMITTED_VOICE, HELD_OUT_VOICES, Utterance, fixture, utterances
from harness.phone import Phone
from referee.games import matcher_for
from referee.games.race65 import Race65Options, Race65Spec
from referee.protocol import Entry, Room
from referee.records import DroppedRecord, EventRecord, InputRecord, SaidRecord
from referee.screen.phones import PhoneSeats
from referee.screen.server import Screen
from referee.session import Session
from referee.speech.audio import RATE, Audio, PlaybackTrack, frame_energies, load_wav
from referee.speech.hearing.mic import Microphone
from referee.speech.speaking.tts import SpeakerOutput, make_voice
from referee.table import ECHO_TAIL, Mouth, Reports, Table
from training.progress import Bar

RATIOS_DB = (6, 0, -6)
MOVE_EVENTS = ("TileFlipped", "ConsecutiveViolation", "CallCorrect", "CallIncorrect",
               "TileCorrected")
NOTICES = ("Sorry, I was talking", "I didn't catch", "Did you mean", "Sorry, was that", "Too late")
TABLE_NOTICES = ("Sorry, I was talking", "Too late")
#: A move is not begun this close to the end of its turn (seconds): one said
#: as the time runs out is refused by rule ("Time!", or "Too late, Bob"), and
#: who it belonged to depends on where its first sound fell; that has its own
#: tests (tests/test_table.py).
CLEAR_OF_DEADLINE = 4.0
#: What makes the referee talk for a move said over it (typed by Bob).
PROMPTS = ("Bob: what's the score", "Bob: read the board", "Bob: whose turn is it",
           "Bob: how much time is left")
VOICES = (COMMITTED_VOICE, HELD_OUT_VOICES[1])
#: With ``--phones``: each player's phone's delay on the way (seconds), the
#: referee's voice at the phones (times its rendered level), and how much
#: louder a player is at their own phone than in the room.
PHONE_LATENCIES = {"Ann": 0.15, "Bob": 0.35}
PHONE_ROOM_GAIN = 0.5
CLOSE_DB = 20.0


def asked(question: str) -> str:
    """Who a question asks: it names them first ("Ann, did you say: ...?")."""
    return next((p for p in PLAYERS if question.startswith(p)), PLAYERS[0])


def active_db(samples: np.ndarray[Any, Any]) -> float:
    """The level of the speech in a recording: its frames within 20 dB of the loudest."""
    energy = frame_energies(samples.astype(np.float64), RATE // 50)
    return float(np.mean(energy[energy >= energy.max() - 20.0]))


def speech_end(audio: Audio) -> float:
    """Seconds from a recording's start to the end of its speech."""
    energy = frame_energies(audio.samples.astype(np.float64), RATE // 50)
    loud = np.nonzero(energy >= energy.max() - 30.0)[0]
    return float((loud[-1] + 1) * 0.02)


@dataclass
class Tally:
    over: dict[str, int] = field(default_factory=dict)
    quiet: dict[str, int] = field(default_factory=dict)
    invented: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    noticed: list[str] = field(default_factory=list)
    echo_answered: list[str] = field(default_factory=list)
    stops: list[float | None] = field(default_factory=list)
    output_latency: float = 0.0


class Bench:
    """One game at one loudness ratio: the referee in a thread, the players here."""

    def __init__(self, ratio_db: float, directory: Path, rng: random.Random,
                 env: dict[str, str], phones: bool = False) -> None:
        from referee.live import LiveLoop
        from referee.speech.portaudio import restart_portaudio

        restart_portaudio()
        self.rng = rng
        self.directory = directory
        self.records: list[Entry] = []
        # The bench knows the game only from the table's outputs, as a driver does.
        session = Session(Race65Spec(PLAYERS, Race65Options(rules="phase-seven",
                                                             difficulty="hard")))
        track = PlaybackTrack()
        self.output = SpeakerOutput(track=track)
        self.voice = make_voice("espeak")
        phrases = matcher_for("race65", PLAYERS).phrases
        self.table = Table(session, recognizer=recognizer_for(phrases),
                           mouth=Mouth(voice=self.voice, output=self.output),
                           room=Room(echo_tail=ECHO_TAIL, cancels_echo=True),
                           reports=Reports(show=self._shown, stamp=False,
                                           record=self.records.extend))
        self.cuts: list[float] = []
        cut = self.table.cut

        def noted_cut(at: float) -> None:
            self.cuts.append(at)
            cut(at)

        self.table.cut = noted_cut  # type: ignore[method-assign]
        self.microphone = None if phones else Microphone(track=track)
        self.phones: dict[str, Phone] = {}
        self.screen: Screen | None = None
        seats = None
        if phones:
            seats = PhoneSeats(list(PLAYERS), track=track)
            self.screen = Screen(PLAYERS, "127.0.0.1", 0, phones=seats)
            self.screen.start()
            for n, (player, latency) in enumerate(PHONE_LATENCIES.items()):
                key = self.screen.seats[player].key
                self.phones[player] = Phone(
                    f"ws://127.0.0.1:{self.screen.port}/seat/{player}/listen?key={key}",
                    env, PHONE_ROOM_GAIN, latency, seed=n)
        read, self._keys = os.pipe()
        self.loop = LiveLoop(self.table, microphone=self.microphone,
                             keyboard=os.fdopen(read, "rb", buffering=0), max_seconds=3600,
                             phones=seats)
        self.env = env
        referee_db = active_db(self.voice.render("Ann, 7 down. One more flip.").samples)
        if phones:
            referee_db += 20 * np.log10(PHONE_ROOM_GAIN)  # at the phones
        self.gain = 10 ** ((referee_db - ratio_db) / 20)  # times a recording at 0 dB
        #: (start, end) of what the players played, in game time.
        self.played: list[tuple[float, float]] = []
        self._count = 0
        self.worker = threading.Thread(target=self.loop.run, daemon=True)

    # --- the players ---------------------------------------------------------------------
    def type(self, line: str) -> None:
        os.write(self._keys, f"{line}\n".encode())

    def play(self, audio: Audio, who: str = "Ann") -> tuple[float, float]:
        """Play a recording into the room at the player's level (with phones:
        into ``who``'s phone, and into the room :data:`CLOSE_DB` quieter);
        (start, end of speech)."""
        level = active_db(audio.samples)
        gain = self.gain / 10 ** (level / 20)
        room = gain / 10 ** (CLOSE_DB / 20) if self.phones else gain
        self._count += 1
        path = self.directory / f"say{self._count}.wav"
        Audio(np.clip(audio.samples * room, -32768, 32767).astype(np.int16)).write_wav(path)
        start = self.loop.now()
        played = subprocess.Popen(["paplay", str(path)], env=self.env)
        if self.phones:
            self.phones[who].say(audio, gain)
        played.wait(timeout=30)
        self.played.append((start, self.loop.now()))
        return start, start + speech_end(audio)

    def silent(self) -> bool:
        return (self.table.busy_until + ECHO_TAIL < self.loop.now()
                and self.question() is None)

    def settle(self, limit: float = 20.0) -> None:
        """Wait until the referee is silent and nothing is asked (answering no)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not self.silent():
            question = self.question()
            if question is not None and self.table.busy_until < self.loop.now():
                self.type(f"{asked(question)}: no")
                time.sleep(1.0)
            time.sleep(0.05)
        time.sleep(0.5)

    def clear_of_deadline(self) -> None:
        """Wait for the next turn if this one is about to run out (see
        :data:`CLEAR_OF_DEADLINE`)."""
        deadline = self.table.state.get("deadline")
        if deadline is not None and deadline - self.loop.now() < CLEAR_OF_DEADLINE:
            time.sleep(max(0.0, deadline - self.loop.now()) + 0.5)
            self.settle()

    def talking(self, limit: float = 6.0) -> bool:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.table.busy_until > self.loop.now() + 0.3:
                return True
            time.sleep(0.01)
        return False

    def question(self) -> str | None:
        """The question the referee has open, as the table's snapshot shows it."""
        question = self.table.state.get("question")
        return None if question is None else str(question)

    def legal_tile(self, tiles: dict[int, Utterance]) -> int | None:
        """A tile the player whose turn it is may flip now, of those recorded:
        from the moves the table's snapshot offers them ("flip my 7")."""
        who = self.table.state.get("turn")
        if who is None:
            return None
        offered = {int(m.group(1)) for line in self.table.state["moves"].get(who, [])
                   if (m := re.fullmatch(r"flip my (\d+)", line))}
        choices = [tile for tile in tiles if tile in offered]
        self.rng.shuffle(choices)
        return choices[0] if choices else None

    def _shown(self, line: str) -> None:
        """The table's own notices ("Too late, Bob: ...") are said but not logged
        (they change no game): kept with the records, to be seen."""
        if line.startswith(TABLE_NOTICES):
            self.records.append(SaidRecord(self.table.now, line, "problem"))

    def learn_the_room(self) -> None:
        """Wait while the echo canceller learns the room (the opening; with
        phones, the rules read while every phone's canceller learns)."""
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and not self.cancelling():
            if self.phones and self.silent():
                self.type("Ann: rules")  # (a long answer: the cancellers learn from it)
                self.talking()
            time.sleep(0.2)
        self.settle()

    def cancelling(self) -> bool:
        if self.microphone is not None:
            return self.microphone.cancelling
        streams = self.loop.phones._streams if self.loop.phones is not None else {}
        return len(streams) == len(self.phones) and all(
            s.echo is not None and s.echo.cancelling for s in streams.values())

    def close(self) -> None:
        self.loop.stop()
        self.worker.join(timeout=5)
        for phone in self.phones.values():
            phone.close()
        if self.screen is not None:
            self.screen.stop()

    # --- what the referee did --------------------------------------------------------------
    def since(self, mark: int) -> list[Entry]:
        return self.records[mark:]

    def outcome(self, mark: int, tile: int, who: str, tally: Tally, label: str) -> str:
        """What became of "flip my ``tile``" said by ``who``; answers a question."""
        deadline = time.monotonic() + 15.0  # a question waits 6 s after it is said
        confirmed = False
        while time.monotonic() < deadline:
            new = self.since(mark)
            moves = [r for r in new if isinstance(r, EventRecord) and r.event in MOVE_EVENTS]
            for move in moves:
                if move.fields.get("tile") == tile and move.fields.get("owner") == who:
                    self._invented(moves, move, tally, label)
                    return "confirmed" if confirmed else "played"
            if moves:
                self._invented(moves, None, tally, label)
                return "lost"
            questions = [r for r in new if isinstance(r, SaidRecord) and r.kind == "question"]
            question = self.question()
            if questions and not confirmed and question is not None:
                if str(tile) in re.findall(r"\d+", question):  # "did you say: flip your 7?"
                    time.sleep(max(0.0, self.table.busy_until - self.loop.now()) + 0.3)
                    self.type(f"{asked(question)}: yes")
                    confirmed = True
                else:
                    tally.noticed.append(f"{label}: {self.heard(mark)}")
                    return "noticed"  # asked about another move: the player says no
            if any(isinstance(r, SaidRecord) and (r.kind == "problem" or any(
                    n in r.text for n in NOTICES)) for r in new):
                tally.noticed.append(f"{label}: {self.heard(mark)}")
                return "noticed"  # or refused: a rule, a turn that ran out
            time.sleep(0.05)
        tally.lost.append(f"{label}: {self.heard(mark)}")
        return "lost"

    def heard(self, mark: int) -> str:
        """What was heard, dropped and said since ``mark``."""
        heard = [f"{type(r).__name__[:-6].lower()} {r.text!r} {getattr(r, 'reason', '')}"
                 .rstrip() for r in self.since(mark)
                 if isinstance(r, (InputRecord, DroppedRecord, SaidRecord))
                 and getattr(r, "kind", "") != "countdown"]
        return "; ".join(heard) or "nothing heard"

    def _invented(self, moves: list[EventRecord], said: EventRecord | None, tally: Tally,
                  label: str) -> None:
        for move in moves:
            if move is not said:
                tally.invented.append(f"{label}: {move.event} {move.fields}")

    def move(self, tiles: dict[int, Utterance], voice: str, over: bool, tally: Tally) -> None:
        self.settle()
        self.clear_of_deadline()
        if over:
            self.type(self.rng.choice(PROMPTS))
            if not self.talking():
                return
            time.sleep(self.rng.uniform(0.1, 0.8))
        # Whose turn it is now (a turn may have run out meanwhile), and a tile
        # that player may flip.
        tile = self.legal_tile(tiles)
        who = self.table.state.get("turn")
        if tile is None or who is None:
            return
        audio = load_wav(fixture(voice, tiles[tile], "clean"))
        mark = len(self.records)
        self.play(audio, who)
        result = self.outcome(mark, tile, who, tally, f"flip my {tile} ({voice})")
        book = tally.over if over else tally.quiet
        book[result] = book.get(result, 0) + 1

    def stop(self, audio: Audio, tally: Tally) -> None:
        self.settle()
        self.type("Ann: rules")
        if not self.talking():
            return
        time.sleep(self.rng.uniform(1.0, 3.0))
        cuts = len(self.cuts)
        mark = len(self.records)
        _, end = self.play(audio)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and len(self.cuts) == cuts:
            time.sleep(0.01)
        tally.stops.append(self.cuts[cuts] - end if len(self.cuts) > cuts else None)
        if len(self.cuts) == cuts:
            tally.lost.append(f"stop: {self.heard(mark)}")

    def other(self, audio: Audio | None, tally: Tally, label: str) -> None:
        """Talk, noise or silence: nothing may be played."""
        self.settle()
        mark = len(self.records)
        if audio is None:
            time.sleep(2.0)
        else:
            self.play(audio)
        time.sleep(3.0)
        moves = [r for r in self.since(mark)
                 if isinstance(r, EventRecord) and r.event in MOVE_EVENTS]
        self._invented(moves, None, tally, label)

    def phantoms(self, tally: Tally) -> None:
        """Inputs from the microphone with no player sound in the 2.5 s before."""
        for record in self.records:
            if not isinstance(record, InputRecord) or record.source == "text":
                continue
            if not any(start - 0.5 <= record.at <= end + 2.5 for start, end in self.played):
                tally.echo_answered.append(
                    f"{record.at:.1f} s: {record.text!r} as {record.intent.kind} "
                    f"(score {record.score:.2f}, {'sure' if record.sure else 'not sure'}"
                    f"{'; ' + record.message if record.message else ''})")


def run_ratio(ratio_db: float, args: argparse.Namespace, seed: int) -> Tally:
    """One game at one loudness ratio, its steps in random order."""
    rng = random.Random(seed)
    cases = utterances("race65")
    flips = {c.intent["tile"]: c for c in cases
             if c.intent.kind == "flip" and c.text.lower().startswith("flip my")
             and c.intent.get("direction") is None}
    stop = next(c for c in cases if c.intent.kind == "stop")
    talk = [c for c in cases if not c.is_command]
    rng_np = np.random.default_rng(seed)
    pink = np.cumsum(rng_np.standard_normal(int(1.5 * RATE)))
    pink = (pink - np.convolve(pink, np.ones(400) / 400, mode="same")) * 300
    noise = Audio(np.clip(pink, -32768, 32767).astype(np.int16))
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp, audioserver.audio_server(
            Path(tmp), this_process=True) as env:
        bench = Bench(ratio_db, Path(tmp), rng, env, args.phones)
        for phone in bench.phones.values():
            phone.start()
        bench.worker.start()
        bench.learn_the_room()
        plan: list[tuple[str, Any]] = (
            [("over", VOICES[i % 2]) for i in range(args.over)]
            + [("quiet", VOICES[i % 2]) for i in range(args.quiet)]
            + [("stop", VOICES[i % 2]) for i in range(args.stops)]
            + [("talk", (VOICES[i % 2], talk[i % len(talk)])) for i in range(args.talk)]
            + [("silence", None), ("noise", None)] * 2
        )
        rng.shuffle(plan)
        bar = Bar(len(plan), f"steps at {ratio_db:+g} dB")
        for n, (kind, detail) in enumerate(plan):
            bar(n)
            if bench.table.over:
                break
            if kind in ("over", "quiet"):
                bench.move(flips, detail, kind == "over", tally)
            elif kind == "stop":
                bench.stop(load_wav(fixture(detail, stop, "clean")), tally)
            elif kind == "talk":
                voice, case = detail
                bench.other(load_wav(fixture(voice, case, "clean")), tally, f"talk {case.text!r}")
            else:
                bench.other(noise if kind == "noise" else None, tally, kind)
        bar.close()
        bench.phantoms(tally)
        tally.output_latency = float(bench.output._stream.latency)
        bench.close()
    return tally


def _share(book: dict[str, int], key: str) -> str:
    total = sum(book.values())
    return f"{book.get(key, 0)}/{total}" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratios", nargs="+", type=float, default=list(RATIOS_DB))
    parser.add_argument("--over", type=int, default=12, help="moves over the referee")
    parser.add_argument("--quiet", type=int, default=6, help="moves in silence")
    parser.add_argument("--stops", type=int, default=8)
    parser.add_argument("--talk", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phones", action="store_true",
                        help="each player's phone on the table is their microphone")
    args = parser.parse_args()
    if not audioserver.available():
        raise SystemExit("PulseAudio is not installed: scripts/setup.sh installs it.")
    print(f"`./run bench trust --ratios {' '.join(f'{r:g}' for r in args.ratios)} --over "
          f"{args.over} --quiet {args.quiet} --stops {args.stops} --talk {args.talk}"
          f"{' --phones' if args.phones else ''}`; "
          f"voices {', '.join(VOICES)} (held out: {VOICES[1]})\n")
    print("| referee over player | over the referee: played / confirmed / noticed / lost "
          "| in silence: played / confirmed / noticed / lost | invented | echo answered "
          "| stops cut | stop latency p50 / p95 (ms) |")
    print("|---:|---|---|---:|---:|---:|---:|")
    details: list[str] = []
    for number, ratio in enumerate(args.ratios):
        tally = run_ratio(ratio, args, args.seed + number)
        latencies = [(s + tally.output_latency) * 1000 for s in tally.stops if s is not None]
        cut = f"{len(latencies)}/{len(tally.stops)}"
        timing = (f"{statistics.median(latencies):.0f} / {percentile(latencies, 0.95):.0f}"
                  if latencies else "-")
        over = " / ".join(_share(tally.over, k) for k in ("played", "confirmed", "noticed",
                                                          "lost"))
        quiet = " / ".join(_share(tally.quiet, k) for k in ("played", "confirmed", "noticed",
                                                            "lost"))
        print(f"| {ratio:+g} dB | {over} | {quiet} | {len(tally.invented)} | "
              f"{len(tally.echo_answered)} | {cut} | {timing} |", flush=True)
        details += [f"{ratio:+g} dB invented: {x}" for x in tally.invented]
        details += [f"{ratio:+g} dB lost: {x}" for x in tally.lost]
        details += [f"{ratio:+g} dB noticed: {x}" for x in tally.noticed]
        details += [f"{ratio:+g} dB echo answered: {x}" for x in tally.echo_answered]
        details.append(f"{ratio:+g} dB speaker stream latency {tally.output_latency * 1000:.0f} "
                       "ms (in the stop latency)")
    print()
    for line in details:
        print(f"* {line}")


if __name__ == "__main__":
    main()
