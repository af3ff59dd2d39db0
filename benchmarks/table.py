"""Table benchmark: how quickly and how punctually the referee answers, and at what cost.

Run: ``./run bench table [--voices espeak piper] [--conditions clean babble20] [--live N]
[--engine whisper|pocketsphinx]``.

* **Response time**, from the end of a spoken move to the start of the
  referee's spoken answer = the end-of-utterance detection (the voice
  activity detector waits for ``end_silence`` of quiet, measured here in
  audio time on each fixture followed by room noise or silence) + whatever
  is left to do then (wall clock): decoding, unless the guess decoded ahead
  during the pause holds (and waiting for that guess if it is still being
  decoded), matching, the rules, rendering the first sentence and the
  silence before its first sound. The sound card's own output latency is
  not included (device dependent); the PulseAudio stream's reported latency
  is printed when a server is running.
* **Live response time**: the same, for real: ``N`` commands are played
  with ``paplay`` into a PulseAudio null sink, one at a time once the
  referee has fallen silent; the live loop (microphone class, loop, table,
  eSpeak) listens to its monitor. Measured from the moment the last sample
  of speech reached the referee (the input callback's clock) to the moment
  its first sentence was handed to the speaker, plus that sentence's lead-in
  silence. The input and output streams' own latencies are printed apart.
* **Countdown error**: a real-time hard game (15-second turns) runs through
  the live loop with the eSpeak voice; each countdown sentence's start is
  compared with its due time (wall clock).
* **CPU while listening idle**: the live loop listening to a real PulseAudio
  server (a null sink's monitor, as the tests use) with nobody talking.
* **Memory**: the peak resident size of this process (recogniser, voice and
  all).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.recognition import PLAYERS, percentile
from harness import audioserver
from harness.brain import matcher_of
from harness.ears import recognizer_for
from harness.fixtures import CONDITIONS, PAD_SECONDS, utterances
from harness.fixtures import fixture as fixture_path
from referee.allocator import cap_arenas
from referee.games import matcher_for
from referee.games.race65 import Race65Options, Race65Spec
from referee.protocol import Entry, Room, Say, Tone, Understood
from referee.records import SaidRecord
from referee.session import Session
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.hearing.mic import Microphone, SeatUtterance
from referee.speech.hearing.recognizers import ENGINES
from referee.speech.hearing.segmenter import BLOCK, DEFAULT_END_SILENCE, Judge, Segmenter
from referee.speech.hearing.segmenter import Utterance as SegmentedUtterance
from referee.speech.listen import Listener, understand
from referee.speech.speaking.tts import Output, make_voice, sound_span
from referee.table import ECHO_TAIL, Mouth, Reports, Table
from referee.wording import sentences
from training.progress import Bar

HARD = Race65Options(difficulty="hard")
EASY = Race65Options(difficulty="easy")


def speech_end(audio: Audio) -> float:
    """Where the speech of a fixture ends (last 20 ms frame within 35 dB of the peak)."""
    frame = RATE // 50
    n = len(audio.samples) // frame
    x = audio.samples[: n * frame].astype(np.float64).reshape(n, frame)
    energy = 10 * np.log10((x**2).mean(axis=1) + 1e-3)
    loud = np.nonzero(energy >= energy.max() - 35)[0]
    return float((int(loud[-1]) + 1) * frame / RATE)


def first_sound(audio: Audio) -> float:
    """Seconds of silence at the start of a rendered sentence (the first word comes after)."""
    span = sound_span(audio)
    return 0.0 if span is None else span[0] / audio.rate


@dataclass
class Response:
    """One spoken command's way to the referee's answer (seconds)."""

    detect: float  # end of speech to the end-of-utterance decision (audio time)
    wait: float  # decoding ahead still running at that decision (wall clock)
    process: float  # from then: recognise (or take the guess), judge, render, lead-in
    ahead: bool  # the transcript decoded ahead was kept
    begun: int = 0  # decodes ahead begun during the command (finished or given up)
    given_up: int = 0  # ... of them given up: the speaker went on

    @property
    def total(self) -> float:
        return self.detect + self.wait + self.process


#: The recogniser the benchmark uses (``--engine``; None: the default).
ENGINE: str | None = None


def response_times(voice_name: str, condition: str) -> tuple[list[Response], int]:
    """Each command's response in one room, and the number of commands.

    The stream is cut as the live loop cuts it (:func:`heard_as_live`); the
    loop's lag when the end is decided is the wait. A command whose end is not
    detected within the second of room noise that follows it (babble keeps a
    voice detector busy) has no time.
    """
    matcher = matcher_for("race65", PLAYERS)
    recognizer = recognizer_for(matcher.phrases, ENGINE)
    voice = make_voice(voice_name)
    spec = Race65Spec(PLAYERS, HARD)
    found_times: list[Response] = []
    tail = np.zeros(int(1.0 * RATE), dtype=np.int16)
    commands = 0
    for case in utterances():
        if not case.is_command:
            continue
        commands += 1
        audio = load_wav(fixture_path("piper-joe", case, condition))
        if condition != "clean":  # the room's noise goes on after the speech
            pad = audio.samples[-int(PAD_SECONDS * RATE) :]
            noise = np.tile(pad, int(np.ceil(len(tail) / len(pad))))[: len(tail)]
            stream = np.concatenate([audio.samples, noise])
        else:
            stream = np.concatenate([audio.samples, tail])
        listener = Listener(recognizer, matcher)
        cut = heard_as_live(stream, listener, first_only=True)
        if not cut:
            continue
        found, decided, waited = cut[0]
        kept = listener.kept
        session = Session(spec, matcher=matcher)
        start = time.perf_counter()
        transcript = listener.transcript(found.audio)
        heard = understand(matcher, transcript, "Ann")
        said = [o for o in session.step(Understood(1.0, heard, "Ann", True, "mic"))
                if isinstance(o, Say)]
        lead = 0.0
        if said:
            lead = first_sound(voice.render(sentences(said[0].text)[0]))
        found_times.append(Response(
            detect=max(0.0, decided - speech_end(audio)),
            wait=waited,
            process=time.perf_counter() - start + lead,
            ahead=listener.kept > kept,
            begun=listener.guessed + listener.given_up,
            given_up=listener.given_up,
        ))
    return found_times, commands


def heard_as_live(stream: np.ndarray, listener: Judge, first_only: bool = False
                  ) -> list[tuple[SegmentedUtterance, float, float]]:
    """The utterances a stream (16 kHz samples) is cut into as the live loop
    cuts it, each with when its end was decided (audio time) and how long the
    loop then still lagged behind (decoding ahead; wall clock).

    The stream is fed in 10 ms blocks, as the microphone delivers it, to a
    loop of one thread: when the speech pauses, the listener decodes ahead
    (wall clock) and the loop reads nothing meanwhile; the blocks that arrived
    in the meantime are read after it, and if they hold speech again (the
    player went on) the decode is given up as soon as one has arrived, as the
    microphone does.
    """
    data = stream.astype("<i2").tobytes()
    #: The loop's clock (audio time it has worked up to), the samples read so
    #: far, and the seconds spent decoding ahead while reading the last block.
    clock = {"now": 0.0, "read": 0.0, "spent": 0.0}
    segmenter = Segmenter(DEFAULT_END_SILENCE, judge=listener.judge, tail=listener.tail)

    def paused(so_far: Audio) -> None:
        start = time.perf_counter()

        def went_on() -> bool:  # speech among the samples arrived since
            arrived = clock["now"] + time.perf_counter() - start
            waiting = stream[int(clock["read"]) : int(arrived * RATE)]
            return segmenter.speech_in(waiting)

        listener.pause(so_far, went_on)
        clock["spent"] += time.perf_counter() - start

    segmenter.on_pause = paused
    found: list[tuple[SegmentedUtterance, float, float]] = []
    step = BLOCK * 2
    for i in range(0, len(data), step):
        arrived = (i + step) / 2 / RATE
        clock["now"] = max(clock["now"], arrived)  # read once here and the loop is free
        clock["read"] = (i + step) / 2
        clock["spent"] = 0.0
        got = list(segmenter.feed(data[i : i + step]))
        clock["now"] += clock["spent"]
        found += [(u, arrived, clock["now"] - arrived) for u in got]
        if found and first_only:
            return found[:1]
    return found + [(u, len(stream) / RATE, 0.0) for u in segmenter.close()]


class Clocked(Output):
    """Records when each sentence starts playing (wall clock)."""

    def __init__(self) -> None:
        self.started: list[tuple[float, str]] = []

    def play(self, audio: Audio, text: str, at: float) -> None:
        self.started.append((time.monotonic(), text))


def countdown_errors(turns: int = 2) -> list[float]:
    """Start-time errors of countdown sentences in a real-time hard game (seconds)."""
    from referee.live import LiveLoop

    session = Session(Race65Spec(PLAYERS, HARD))
    output = Clocked()
    due: list[float] = []

    def logged(records: Sequence[Entry]) -> None:  # when each countdown word fell due
        for record in records:
            if isinstance(record, SaidRecord) and record.kind == Tone.COUNTDOWN:
                due.append(loop._t0 + (record.at - loop._base))

    table = Table(session, mouth=Mouth(voice=make_voice("espeak"), output=output),
                  reports=Reports(show=lambda line: None, stamp=False, record=logged))
    loop = LiveLoop(table, microphone=None, keyboard=None, max_seconds=30.0 * turns)
    worker = threading.Thread(target=loop.run)
    worker.start()
    worker.join()
    counted = [t for t, text in output.started if text in COUNTDOWN_TEXTS]
    return [abs(a - b) for a, b in zip(counted, due, strict=False)]


COUNTDOWN_TEXTS = {"Half time.", "10 seconds.", "Five.", "Four.", "Three.", "Two.", "One."}


def idle_cpu(seconds: float = 20.0) -> tuple[float, float] | None:
    """(CPU share of one core, output latency) listening to a silent PulseAudio server."""
    if not audioserver.available():
        return None
    with tempfile.TemporaryDirectory() as tmp, audioserver.audio_server(Path(tmp),
                                                                         this_process=True):
        return _listen_idle(seconds)


class TimedMicrophone(Microphone):
    """The real microphone, noting when each utterance's speech ended (wall clock)."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[float] = []

    def read(self, timeout: float) -> list[SeatUtterance]:
        found = super().read(timeout)
        for u in found:
            arrived = self.arrival(u.audio_start + speech_end(u.audio))
            if arrived is not None:
                self.ends.append(arrived)
        return found


def live_responses(count: int) -> tuple[list[float], float] | None:
    """Response times through the live loop and a real audio server, and the input
    stream's latency.

    Commands are played into PulseAudio's null sink with ``paplay``; the live
    loop listens to its monitor through the real microphone class and answers
    with the eSpeak voice (rendered, not played: the answer's sound would come
    back through the monitor). The time is from the moment the last sample of
    speech reached the referee to the moment its first sentence was ready to
    play (plus that sentence's lead-in silence).
    """
    if not audioserver.available():
        return None
    from referee.live import LiveLoop
    from referee.speech.portaudio import restart_portaudio

    commands = [c for c in utterances() if c.is_command][:count]
    with tempfile.TemporaryDirectory() as tmp, audioserver.audio_server(
            Path(tmp), this_process=True) as env:
        restart_portaudio()
        spec = Race65Spec(PLAYERS, EASY)
        matcher = matcher_of(spec)
        output = Clocked()
        voice = make_voice("espeak")
        table = Table(Session(spec, matcher=matcher),
                      recognizer=recognizer_for(matcher.phrases, ENGINE),
                      mouth=Mouth(voice=voice, output=output), room=Room(echo_tail=ECHO_TAIL),
                      reports=Reports(show=lambda line: None, stamp=False))
        microphone = TimedMicrophone()
        loop = LiveLoop(table, microphone=microphone, keyboard=None, max_seconds=3600)
        worker = threading.Thread(target=loop.run, kwargs={"greet": False}, daemon=True)
        worker.start()
        time.sleep(1.0)
        times: list[float] = []
        bar = Bar(len(commands), "commands played into the room")
        for n, case in enumerate(commands):
            bar(n)
            heard, said = len(microphone.ends), len(output.started)
            subprocess.run(["paplay", str(fixture_path("piper-joe", case, "clean"))],
                           env=env, check=True, timeout=30)
            deadline = time.monotonic() + 8.0  # a question waits 6 s for its answer
            while time.monotonic() < deadline and not (
                    len(microphone.ends) > heard and len(output.started) > said):
                time.sleep(0.02)
            time.sleep(0.5)
            # players wait for the referee to finish (and its echo to fade)
            while (table.busy_until + ECHO_TAIL > loop.now()
                   or table.state.get("question") is not None):
                time.sleep(0.1)
            if len(microphone.ends) > heard and len(output.started) > said:
                end = microphone.ends[-1]
                first = next((t for t, _ in output.started[said:] if t >= end), None)
                if first is not None:
                    lead = first_sound(voice.render(output.started[said][1]))
                    times.append(first - end + lead)
        bar.close()
        latency = float(microphone._stream.latency)
        loop.stop()
        worker.join(timeout=5)
    return times, latency


def _listen_idle(seconds: float) -> tuple[float, float]:
    from referee.live import LiveLoop
    from referee.speech.portaudio import restart_portaudio
    from referee.speech.speaking.tts import SpeakerOutput

    restart_portaudio()
    spec = Race65Spec(PLAYERS, EASY)
    matcher = matcher_of(spec)
    speaker = SpeakerOutput()
    latency = float(speaker._stream.latency)
    table = Table(Session(spec, matcher=matcher),
                  recognizer=recognizer_for(matcher.phrases, ENGINE),
                  reports=Reports(show=lambda line: None, stamp=False))
    loop = LiveLoop(table, microphone=Microphone(), keyboard=None, max_seconds=seconds + 2)
    usage: dict[str, float] = {}

    def sample(key: str) -> Callable[[], None]:
        def take() -> None:
            r = resource.getrusage(resource.RUSAGE_SELF)
            usage[key] = r.ru_utime + r.ru_stime
            usage[key + "_wall"] = time.monotonic()
        return take

    timer_start = threading.Timer(2.0, sample("start"))  # after the stream settled
    timer_end = threading.Timer(seconds + 1.5, sample("end"))
    timer_start.start()
    timer_end.start()
    loop.run(greet=False)
    speaker.close()
    cpu = (usage["end"] - usage["start"]) / (usage["end_wall"] - usage["start_wall"])
    return cpu, latency


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms"


def main() -> None:
    cap_arenas()  # (as the referee's own process does, before any thread)
    parser = argparse.ArgumentParser(description="table benchmark")
    parser.add_argument("--voices", nargs="+", default=["espeak", "piper"])
    parser.add_argument("--conditions", nargs="+", default=["clean"],
                        choices=CONDITIONS)
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    parser.add_argument("--live", type=int, default=64, metavar="N",
                        help="commands to play through the live loop (0: none)")
    parser.add_argument("--engine", "--ears", dest="engine", choices=list(ENGINES))
    args = parser.parse_args()
    global ENGINE
    ENGINE = args.engine
    print(f"Recogniser: {args.engine or 'the default'}")
    print()

    print("| response: end of a spoken move to the referee's first word | p50 | p95 | "
          "ended within 1 s |")
    print("|---|---:|---:|---:|")
    for condition in args.conditions:
        for voice in args.voices:
            found, commands = response_times(voice, condition)
            total = [r.total for r in found]
            after = [r.wait + r.process for r in found]
            ahead = sum(r.ahead for r in found)
            begun = statistics.mean(r.begun for r in found)
            given_up = statistics.mean(r.given_up for r in found)
            print(f"| {condition}, {voice} voice: total | {ms(statistics.median(total))} | "
                  f"{ms(percentile(total, 0.95))} | {len(total)}/{commands} |")
            print(f"| {condition}, {voice} voice: after the end is detected (recognise or "
                  f"take the guess, judge, render) | {ms(statistics.median(after))} | "
                  f"{ms(percentile(after, 0.95))} | decoded ahead: {ahead}/{len(found)}; "
                  f"decodes a command {begun:.2f} ({given_up:.2f} given up) |")
        detect = [r.detect for r in found]
        print(f"| {condition}: end-of-utterance detection ({DEFAULT_END_SILENCE:g} s setting) | "
              f"{ms(statistics.median(detect))} | {ms(percentile(detect, 0.95))} | |")
    live = live_responses(args.live) if args.live else None
    input_latency = None
    if live is not None:
        times, input_latency = live
        print(f"| live loop, real audio server, espeak voice: total | "
              f"{ms(statistics.median(times))} | {ms(percentile(times, 0.95))} | "
              f"{len(times)}/{args.live} |")
    print()
    print("| measure | value |")
    print("|---|---:|")
    errors = countdown_errors()
    print(f"| countdown start error, p50 / p95 ({len(errors)} marks) | "
          f"{1000 * statistics.median(errors):.0f} / {1000 * percentile(errors, 0.95):.0f} ms |")
    idle = idle_cpu(args.idle_seconds)
    if idle is None:
        print("| CPU while listening idle | (no PulseAudio here) |")
    else:
        cpu, latency = idle
        print(f"| CPU while listening idle (one core) | {100 * cpu:.1f} % |")
        print(f"| output stream latency (PulseAudio, not in the totals) | "
              f"{1000 * latency:.0f} ms |")
    if input_latency is not None:
        print(f"| input stream latency (PulseAudio, not in the totals) | "
              f"{1000 * input_latency:.0f} ms |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| peak memory (whole process) | {peak:.0f} MB |")


if __name__ == "__main__":
    main()
