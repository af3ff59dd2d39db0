"""Table benchmark: how quickly and how punctually the referee answers, and at what cost.

Run: ``./run bench table [--voices espeak piper] [--conditions clean babble20]``.

* **Response time**, from the end of a spoken move to the start of the
  referee's spoken answer = the end-of-utterance detection (the voice
  activity detector waits for ``end_silence`` of quiet, measured here in
  audio time on each fixture followed by room noise or silence) + decoding,
  matching, the rules and rendering the first sentence (wall clock). The
  sound card's own output latency is not included (device dependent); the
  PulseAudio stream's reported latency is printed when a server is running.
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
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.fixtures import CONDITIONS, PAD_SECONDS, utterances
from benchmarks.fixtures import fixture as fixture_path
from benchmarks.recognition import PLAYERS, percentile
from referee.games.race65 import Race65Spec
from referee.session import Session
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.intents import IntentMatcher
from referee.speech.listen import hear_audio
from referee.speech.mic import DEFAULT_END_SILENCE, Segmenter
from referee.speech.recognizers import make_recognizer
from referee.speech.tts import Output, make_voice
from referee.table import Table

HARD = argparse.Namespace(rules="phase-seven", difficulty="hard", house=[], first=None)
EASY = argparse.Namespace(rules="phase-seven", difficulty="easy", house=[], first=None)


def speech_end(audio: Audio) -> float:
    """Where the speech of a fixture ends (last 20 ms frame within 35 dB of the peak)."""
    frame = RATE // 50
    n = len(audio.samples) // frame
    x = audio.samples[: n * frame].astype(np.float64).reshape(n, frame)
    energy = 10 * np.log10((x**2).mean(axis=1) + 1e-3)
    loud = np.nonzero(energy >= energy.max() - 35)[0]
    return float((int(loud[-1]) + 1) * frame / RATE)


def response_times(
    voice_name: str, condition: str
) -> tuple[list[float], list[float], int]:
    """(end-of-utterance detection delays, processing times, commands) for one room.

    A command whose end is not detected within the second of room noise that
    follows it (babble keeps a voice detector busy) has no time.
    """
    matcher = IntentMatcher.for_game("race65", PLAYERS)
    recognizer = make_recognizer(matcher.phrases)
    voice = make_voice(voice_name)
    spec = Race65Spec(PLAYERS, HARD)
    detect: list[float] = []
    process: list[float] = []
    tail = np.zeros(int(1.0 * RATE), dtype=np.int16)
    commands = 0
    for _ in (condition,):
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
            data = stream.astype("<i2").tobytes()
            segmenter = Segmenter(DEFAULT_END_SILENCE)
            found_at = None
            found = None
            step = RATE // 100 * 2
            for i in range(0, len(data), step):
                got = list(segmenter.feed(data[i : i + step]))
                if got:
                    found_at, found = (i + step) / 2 / RATE, got[-1]
                    break
            if found is None or found_at is None:
                continue
            detect.append(max(0.0, found_at - speech_end(audio)))
            session = Session(spec, matcher=matcher)
            start = time.perf_counter()
            heard, _ = hear_audio(recognizer, matcher, found.audio, "Ann")
            said = session.respond(heard, "Ann", 1.0, sure=True, source="mic")
            if said:
                voice.render(said[0].text)
            process.append(time.perf_counter() - start)
    return detect, process, commands


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
    table = Table(session, voice=make_voice("espeak"), output=output, show=lambda line: None,
                  stamp=False)
    loop = LiveLoop(table, microphone=None, keyboard=None, max_seconds=30.0 * turns)
    due: list[float] = []
    original_tick = session.tick

    def tick(at: float) -> Any:
        said = original_tick(at)
        for s in said:
            if s.kind == "countdown":
                due.append(loop._t0 + (s.at - loop._base))
        return said

    session.tick = tick  # type: ignore[method-assign]
    worker = threading.Thread(target=loop.run)
    worker.start()
    worker.join()
    counted = [t for t, text in output.started if text in COUNTDOWN_TEXTS]
    return [abs(a - b) for a, b in zip(counted, due, strict=False)]


COUNTDOWN_TEXTS = {"Half time.", "10 seconds.", "Five.", "Four.", "Three.", "Two.", "One."}


def idle_cpu(seconds: float = 20.0) -> tuple[float, float] | None:
    """(CPU share of one core, output latency) listening to a silent PulseAudio server."""
    if shutil.which("pulseaudio") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        env = {"XDG_RUNTIME_DIR": tmp, "HOME": tmp}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            subprocess.run(["pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n",
                            "--load=module-native-protocol-unix",
                            "--load=module-null-sink sink_name=table",
                            "--load=module-always-sink"], check=True, capture_output=True)
            for _ in range(50):
                if subprocess.run(["pactl", "info"], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            subprocess.run(["pactl", "set-default-source", "table.monitor"], check=True)
            return _listen_idle(seconds)
        finally:
            subprocess.run(["pulseaudio", "--kill"], capture_output=True)
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _listen_idle(seconds: float) -> tuple[float, float]:
    from referee.live import LiveLoop, reinitialise_portaudio
    from referee.speech.mic import Microphone
    from referee.speech.tts import SpeakerOutput

    reinitialise_portaudio()
    session = Session(Race65Spec(PLAYERS, EASY))
    speaker = SpeakerOutput()
    latency = float(speaker._stream.latency)
    table = Table(session, recognizer=make_recognizer(session.matcher.phrases),
                  show=lambda line: None, stamp=False)
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
    parser = argparse.ArgumentParser(description="table benchmark")
    parser.add_argument("--voices", nargs="+", default=["espeak", "piper"])
    parser.add_argument("--conditions", nargs="+", default=["clean"],
                        choices=CONDITIONS)
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    args = parser.parse_args()

    print("| response: end of a spoken move to the referee's first word | p50 | p95 | "
          "ended within 1 s |")
    print("|---|---:|---:|---:|")
    for condition in args.conditions:
        for voice in args.voices:
            detect, process, commands = response_times(voice, condition)
            total = [d + p for d, p in zip(detect, process, strict=True)]
            print(f"| {condition}, {voice} voice: total | {ms(statistics.median(total))} | "
                  f"{ms(percentile(total, 0.95))} | {len(total)}/{commands} |")
            print(f"| {condition}, {voice} voice: recognise, judge, render | "
                  f"{ms(statistics.median(process))} | {ms(percentile(process, 0.95))} | |")
        print(f"| {condition}: end-of-utterance detection ({DEFAULT_END_SILENCE:g} s setting) | "
              f"{ms(statistics.median(detect))} | {ms(percentile(detect, 0.95))} | |")
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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| peak memory (whole process) | {peak:.0f} MB |")


if __name__ == "__main__":
    main()
