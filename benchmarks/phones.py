"""Seat pages as microphones: how soon a phone is answered, and what phones cost.

    ./run bench phones [--questions 24] [--phones 1 8] [--cpu-seconds 10]
                       [--hearing-voices espeak-nyc-m3 espeak-wmids-f5]

* **Answer time**: a live game (the live loop, the screen, Whisper with the
  table's adapter, no voice) with N phones connected by WebSocket, each
  streaming in real time as a hands-free page does (the others silence); one
  phone asks each question (the committed Piper recordings of Turn 7's
  questions: "what do I have", "what are my odds", "whose turn is it" ...),
  the phones taking turns, and the time from
  the end of its speech (when a phone had captured it) to the referee's
  answer being handed to its mouth is taken, p50 / p95, with the share
  answered. A question is answered whatever the game's state, so every
  recording counts.
* **CPU**: the process's CPU time while N phones stream silence for
  ``--cpu-seconds``, less the same with none, as a share of one core per phone.
* **Hearing, close up against across the table**: the held-out split (the
  four games' held-out sentences, in held-out voices: ``--hearing-voices``)
  mixed with the table's babble as each microphone hears it. The table
  microphone, a metre or so from everyone, hears the player about as loud
  as the others' talk (:data:`TABLE_SNR_DB`); the player's own phone, a
  hand's width from their mouth, hears them :data:`CLOSE_DB` louder
  against the same babble. Each recording is decoded both ways (the same
  stretch of babble), and the commands understood right and the table talk
  taken for a command are counted.
* **Attribution**: every golden script's moves that say who made them
  (``Bob: flip my 12``), played in order: how many the table microphone
  alone gives to the right player (the referee's rule for words of no known
  seat: the player asked, else the one the game waits for). From a phone
  the seat is the speaker, every time.

Prints one table. The table microphone's own figure is `./run bench table
--live` (through a real audio server, to the first sound of the voice).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from websockets.sync.client import ClientConnection, connect

from harness.ears import recognizer_for
from referee.games import matcher_for
from referee.games.turn7 import Turn7Options, Turn7Spec
from referee.live import LiveLoop
from referee.protocol import Typed
from referee.screen.phones import PhoneSeats
from referee.screen.server import Screen
from referee.session import Session
from referee.speech.audio import RATE, frame_energies, load_wav, speech_bounds
from referee.table import Reports, Table
from training.progress import Bar

FIXTURES = Path(__file__).parent.parent / "tests" / "audio_fixtures" / "piper-joe"
QUESTIONS = ["t7c22", "t7c23", "t7c24", "t7c25", "t7c26", "t7c27", "t7c28", "t7c29",
             "t7c30", "t7c31"]
FRAME = RATE // 25  # 40 ms, as the seat page sends
PLAYERS = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal"]
#: The player's speech over the table's babble at the table microphone (dB),
#: and how much louder their own phone hears them than a microphone a metre
#: off (a hand's width against a metre: about 20 dB).
TABLE_SNR_DB = 5.0
CLOSE_DB = 20.0
HEARING_VOICES = ["espeak-nyc-m3", "espeak-wmids-f5"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Table8:
    """A live game of Turn 7 (a virtual deck) for up to eight players whose
    seat pages are microphones."""

    def __init__(self, players: int) -> None:
        spec = Turn7Spec(PLAYERS[:max(3, players)], Turn7Options(seed=1))
        #: The players, as seated (the bench knows the game only from the table's outputs).
        self.players = spec.players
        matcher = matcher_for("turn7", spec.players)
        self.phones = PhoneSeats(list(spec.players))
        self.screen = Screen(spec.players, "127.0.0.1", 0, phones=self.phones)
        self.screen.start()
        self.answers: list[float] = []  # wall time of each sentence handed to the mouth
        self.table = Table(Session(spec), recognizer=recognizer_for(matcher.phrases),
                           reports=Reports(show=lambda line: self.answers.append(time.monotonic()),
                                           stamp=False, screen=self.screen.publish))
        self.loop = LiveLoop(self.table, microphone=None, keyboard=None,
                             seat_lines=self.screen.lines, phones=self.phones,
                             max_seconds=3600.0)
        self.worker = threading.Thread(target=self.loop.run, daemon=True)
        self.worker.start()

    def url(self, player: str) -> str:
        return (f"ws://127.0.0.1:{self.screen.port}/seat/{player}/listen"
                f"?key={self.screen.seats[player].key}")

    def close(self) -> None:
        self.loop.stop()
        self.worker.join(timeout=10)
        self.screen.stop()


class Streamer(threading.Thread):
    """One phone: sends silence in real time, and a recording when asked."""

    def __init__(self, socket: ClientConnection) -> None:
        super().__init__(daemon=True)
        self.socket = socket
        self.queue: list[bytes] = []
        self.speech_ended: float | None = None
        self._end_at = 0
        self.running = True

    def say(self, pcm: bytes, speech_end: int) -> None:
        self._end_at = speech_end
        self.queue.append(pcm)

    def run(self) -> None:
        t0 = time.monotonic()
        sent = 0  # samples
        pending = b""
        spoken = None  # the sample where the speech being sent ends
        while self.running:
            if not pending and self.queue:
                pending = self.queue.pop(0)
                spoken = sent + self._end_at
            chunk = pending[: FRAME * 2] if pending else bytes(FRAME * 2)
            pending = pending[len(chunk):] if pending else b""
            chunk = chunk + bytes(FRAME * 2 - len(chunk))
            sent += FRAME
            time.sleep(max(0.0, t0 + sent / RATE - time.monotonic()))  # captured by then
            if spoken is not None and sent >= spoken:
                self.speech_ended = t0 + spoken / RATE
                spoken = None
            try:
                self.socket.send(chunk)
            except Exception:
                return


@contextlib.contextmanager
def streaming(phones: int) -> Iterator[tuple[Table8, list[Streamer]]]:
    """A live game with ``phones`` phones connected and streaming silence."""
    table = Table8(max(phones, 2))
    streamers: list[Streamer] = []
    try:
        for player in table.players[:phones]:
            streamer = Streamer(connect(table.url(player)))
            streamer.start()
            streamers.append(streamer)
        time.sleep(2.0)
        yield table, streamers
    finally:
        for streamer in streamers:
            streamer.running = False
            streamer.socket.close()
        table.close()


def answer_times(phones: int, questions: int) -> tuple[list[float], int]:
    """Seconds from the end of each question's speech to the referee's answer,
    with ``phones`` phones streaming; and how many were not answered."""
    times: list[float] = []
    missed = 0
    with streaming(phones) as (table, streamers):
        bar = Bar(questions, f"questions with {phones} phone{'s' * (phones > 1)}")
        for n in range(questions):
            audio = load_wav(FIXTURES / f"{QUESTIONS[n % len(QUESTIONS)]}.wav")
            bounds = speech_bounds(frame_energies(audio.samples, 320), 320, len(audio.samples))
            end = bounds[1] if bounds else len(audio.samples)
            heard = len(table.answers)
            speaker = streamers[n % len(streamers)]
            speaker.speech_ended = None
            speaker.say(audio.to_bytes() + bytes(RATE), end)
            deadline = time.monotonic() + 8.0
            while time.monotonic() < deadline and (len(table.answers) == heard
                                                   or speaker.speech_ended is None):
                time.sleep(0.01)
            if len(table.answers) == heard or speaker.speech_ended is None:
                missed += 1
            else:
                times.append(table.answers[heard] - speaker.speech_ended)
            time.sleep(1.5)
            bar(n + 1)
        bar.close()
    return times, missed


def cpu_share(phones: int, seconds: float) -> float:
    """The process's CPU seconds per second while ``phones`` phones stream silence."""
    with streaming(phones):
        cpu, wall = time.process_time(), time.monotonic()
        time.sleep(seconds)
        return (time.process_time() - cpu) / (time.monotonic() - wall)


def attribution() -> tuple[int, int]:
    """Of the golden scripts' moves that name their player: how many the
    referee gives to that player when it cannot tell who spoke, and how many."""
    from harness.brain import Drive
    from harness.games import golden_game
    from referee.cli import build_parser
    from referee.options import make_spec
    from referee.textplay import SpeakerError, split_speaker
    from referee.wording import NOT_MOVES

    right = total = 0
    for script in sorted((FIXTURES.parent.parent / "data" / "golden").glob("*.script")):
        game, args = golden_game(script)
        drive = Drive(make_spec(build_parser().parse_args(["play", game, *args]), game))
        drive.start()
        for line in script.read_text().splitlines():
            if not line.startswith("[") or drive.left:
                continue
            at_text, _, rest = line.partition("]")
            try:
                speaker, text = split_speaker(rest.strip(), drive.spec.players)
            except SpeakerError:
                continue
            at = float(at_text.strip("[ "))
            if speaker is not None and text:
                heard = drive.matcher.match(text, speaker)
                if heard.kind not in NOT_MOVES and heard.kind not in ("none", "ambiguous"):
                    total += 1
                    right += drive.whose(text, at) == speaker
            if text:
                drive.step(Typed(at, text, speaker))
            else:
                drive.tick(at)
    return right, total


def hearing(voices: list[str]) -> dict[str, tuple[int, int, int, int]]:
    """Per microphone ("table", "phone"): commands understood right, commands,
    table talk taken for a command, table talk (see the module's doc)."""
    from harness.fixtures import GAMES, babble_bed, fixture, mix_at_snr, utterances
    from referee.speech.audio import Audio, from_float
    from referee.speech.listen import hear_audio
    from training.rooms import as_float

    bed = babble_bed()
    counts = {"table": [0, 0, 0, 0], "phone": [0, 0, 0, 0]}
    cases = [(game, players, u) for game, (_, players) in GAMES.items()
             for u in utterances(game, held_out=True)]
    bar = Bar(len(cases) * len(voices), "hearing, close up and across the table")
    done = 0
    for game in GAMES:
        players = list(GAMES[game][1])
        matcher = matcher_for(game, players)
        recognizer = recognizer_for(matcher.phrases)
        for voice in voices:
            for _, _, u in (c for c in cases if c[0] == game):
                speech = as_float(load_wav(fixture(voice, u, "clean")))
                start = zlib.crc32(f"{voice}/{u.id}".encode()) % (len(bed) - len(speech))
                noise = bed[start : start + len(speech)]
                for where, snr in (("table", TABLE_SNR_DB), ("phone", TABLE_SNR_DB + CLOSE_DB)):
                    audio: Audio = from_float(mix_at_snr(speech, noise, snr), RATE)
                    heard, _ = hear_audio(recognizer, matcher, audio, players[0])
                    row = counts[where]
                    if u.is_command:
                        row[0] += heard.intent == u.intent
                        row[1] += 1
                    else:
                        row[2] += heard.intent.kind != "none"
                        row[3] += 1
                done += 1
                bar(done)
    bar.close()
    return {where: (r[0], r[1], r[2], r[3]) for where, r in counts.items()}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--phones", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--cpu-seconds", type=float, default=10.0)
    parser.add_argument("--hearing-voices", nargs="*", default=HEARING_VOICES,
                        help="held-out voices for the hearing comparison (none: skip it)")
    args = parser.parse_args()
    rows = []
    for phones in args.phones:
        times, missed = answer_times(phones, args.questions)
        rows.append((phones, times, missed))
    idle = cpu_share(0, args.cpu_seconds)
    right, total = attribution()
    heard = hearing(args.hearing_voices) if args.hearing_voices else {}
    costs = [(n, (cpu_share(n, args.cpu_seconds) - idle) / n) for n in args.phones]
    print(f"`./run bench phones --questions {args.questions} --phones "
          f"{' '.join(map(str, args.phones))} --cpu-seconds {args.cpu_seconds:g} "
          f"--hearing-voices {' '.join(args.hearing_voices)}`\n")
    print("| phones streaming | end of speech to answer, p50 / p95 | answered | "
          "CPU a phone (of one core) |")
    print("|---:|---:|---:|---:|")
    for (phones, times, missed), (_, cost) in zip(rows, costs, strict=True):
        shown = (f"{statistics.median(times) * 1000:.0f} / "
                 f"{percentile(times, 0.95) * 1000:.0f} ms" if times else "-")
        print(f"| {phones} | {shown} | {len(times)} of {len(times) + missed} | "
              f"{100 * cost:.1f} % |")
    print(f"\n(The loop alone, no phone: {100 * idle:.1f} % of a core.)")
    print(f"\nAttribution, the golden scripts' {total} moves that name their player: "
          f"the table microphone alone gives {right} ({100 * right / max(total, 1):.0f} %) "
          "to that player; a phone, all of them (its seat is the speaker).")
    if heard:
        print(f"\nHearing, the held-out split ({', '.join(args.hearing_voices)}) in the "
              f"table's babble:\n")
        print("| microphone | player over babble | commands understood right "
              "| table talk taken for a command |")
        print("|---|---:|---:|---:|")
        for where, snr in (("table", TABLE_SNR_DB), ("phone", TABLE_SNR_DB + CLOSE_DB)):
            ok, commands, taken, talk = heard[where]
            print(f"| {where} | {snr:g} dB | {ok} of {commands} "
                  f"({100 * ok / max(commands, 1):.0f} %) | {taken} of {talk} |")


if __name__ == "__main__":
    main()
