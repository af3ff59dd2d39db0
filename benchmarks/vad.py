"""Voice activity detection in noisy rooms: the referee's segmenter against Silero VAD.

Run: ``./run bench vad [--conditions ...] [--voices ...]``.

A long stream is built per room: the room's noise runs all the time (the
babble of six other talkers, or pink noise) and a command is spoken every
few seconds at the room's signal-to-noise ratio, so the truth is known:
where each command's speech starts and ends. In a room named ``...-far``
(``babble30-far``) every other command is said FAR_DB quieter, by a player
farther from the microphone. Two detectors cut the stream
into utterances with the same end-of-utterance rule (0.25 s of non-speech):

* ``segmenter``: the referee's :class:`~referee.speech.hearing.segmenter.Segmenter`
  (PocketSphinx's energy-based endpointer and the rule for background talk,
  acoustic rules only: no words judged);
* ``silero``: the Silero VAD v5 neural network (its ONNX model from the PyPI
  wheel ``silero-vad``, run with ``onnxruntime``), speech when its
  probability is at least 0.5, with 0.15 probability of hysteresis.

For each it prints how many commands were found whole (an utterance that
covers the speech), how many utterances ran into the 8 s cut (the detector
stuck "in speech"), utterances with no command in them, and how late the
end was decided after the speech ended. With ``--hear`` each utterance is
also decoded by the default recogniser, as at the table: how many commands
were heard right from the utterance that holds them, and how many
utterances without a command were taken for one.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.recognition import PLAYERS
from harness.ears import recognizer_for
from harness.fixtures import (
    DEV_VOICES,
    babble_bed,
    clean_audio,
    pink_noise,
    utterances,
)
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, frame_energies, speech_bounds
from referee.speech.hearing.segmenter import MAX_UTTERANCE, PREROLL, Segmenter
from referee.speech.listen import understand
from referee.speech.understanding.meaning import Intent
from training.progress import Bar
from training.rooms import active_power

END_SILENCE = 0.25
GAP = 2.5  # seconds of room noise between commands
FAR_DB = 16.0  # how much quieter a player across the table is (0.5 m against 3 m)
NOISE_LEVEL = 0.03  # RMS of the room's noise (full scale 1)


@dataclass(frozen=True)
class Span:
    """An utterance: the audio handed over, and when the detector decided it ended."""

    start: float
    end: float
    decided: float
    audio: Audio | None = None  # (the segmenter's own; otherwise cut from the stream)


def build_stream(condition: str, voices: list[str], count: int) -> tuple[np.ndarray, list[Span]]:
    """The room's noise with ``count`` commands in it, and where their speech is."""
    cases = [u for u in utterances() if u.is_command][:count]
    pieces: list[np.ndarray] = [np.zeros(int(GAP * RATE))]
    truth: list[Span] = []
    at = GAP
    for i, case in enumerate(cases):
        clean = clean_audio(voices[i % len(voices)], case).samples.astype(np.float64) / 32768
        bounds = speech_bounds(frame_energies(clean * 32768, RATE // 50), RATE // 50, len(clean),
                               30.0, 0)
        lo, hi = bounds if bounds else (0, len(clean))
        truth.append(Span(at + lo / RATE, at + hi / RATE, at + hi / RATE))
        pieces += [clean, np.zeros(int(GAP * RATE))]
        at += (len(clean) + int(GAP * RATE)) / RATE
    speech = np.concatenate(pieces)
    if condition == "clean":
        return speech * 0.3, truth
    if condition.startswith("babble"):
        noise = np.resize(babble_bed(), len(speech))
    else:
        noise = pink_noise(len(speech), 11)
    room, far = condition.removesuffix("-far"), condition.endswith("-far")
    snr = float(room.removeprefix("babble").removeprefix("pink"))
    noise = noise / np.sqrt(np.mean(noise**2)) * NOISE_LEVEL
    mixed = noise.copy()
    for i, span in enumerate(truth):  # each command at the room's SNR over the noise
        lo, hi = int(span.start * RATE), int(span.end * RATE)
        db = snr - (FAR_DB if far and i % 2 else 0.0)
        gain = np.sqrt(NOISE_LEVEL**2 * 10 ** (db / 10) / active_power(speech[lo:hi]))
        mixed[lo:hi] += speech[lo:hi] * gain
    return mixed / max(1.0, float(np.max(np.abs(mixed))) / 0.9), truth


def segmenter_spans(stream: np.ndarray) -> Iterator[Span]:
    segmenter = Segmenter(END_SILENCE)
    data = (np.clip(stream, -1, 1) * 32767).astype("<i2").tobytes()
    step = 320 * 2
    for i in range(0, len(data), step):
        for u in segmenter.feed(data[i : i + step]):
            yield Span(u.audio_start, u.audio_start + u.audio.seconds, segmenter.now, u.audio)
    for u in segmenter.close():
        yield Span(u.audio_start, u.audio_start + u.audio.seconds, segmenter.now, u.audio)


class Silero:
    """Silero VAD v5 through onnxruntime: one probability per 32 ms."""

    CHUNK = 512
    CONTEXT = 64

    def __init__(self) -> None:
        import onnxruntime

        spec = importlib.util.find_spec("silero_vad")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("silero-vad is not installed (./run installs it for the benchmarks)")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / "silero_vad.onnx"
        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = options.intra_op_num_threads = 1
        self.model = onnxruntime.InferenceSession(str(path), sess_options=options,
                                                  providers=["CPUExecutionProvider"])

    def probabilities(self, stream: np.ndarray) -> np.ndarray:
        state = np.zeros((2, 1, 128), dtype=np.float32)
        context = np.zeros((1, self.CONTEXT), dtype=np.float32)
        out = []
        x = stream.astype(np.float32)
        for i in range(0, len(x) - self.CHUNK + 1, self.CHUNK):
            chunk = np.concatenate([context, x[None, i : i + self.CHUNK]], axis=1)
            prob, state = self.model.run(None, {"input": chunk, "state": state,
                                                "sr": np.array(RATE, dtype=np.int64)})
            out.append(float(prob[0][0]))
            context = chunk[:, -self.CONTEXT :]
        return np.asarray(out)


def silero_spans(probabilities: np.ndarray, threshold: float = 0.5) -> Iterator[Span]:
    """Utterances from Silero's probabilities with the same end rule as the segmenter."""
    hop = Silero.CHUNK / RATE
    start: float | None = None
    last_speech = 0.0
    for i, p in enumerate(probabilities):
        t = i * hop
        if start is None:
            if p >= threshold:
                start, last_speech = t, t + hop
        else:
            if p >= threshold - 0.15:
                last_speech = t + hop
            if t + hop - last_speech >= END_SILENCE or t + hop - start >= MAX_UTTERANCE:
                yield Span(max(0.0, start - PREROLL), t + hop, t + hop)
                start = None
    if start is not None:
        yield Span(max(0.0, start - PREROLL), len(probabilities) * hop, len(probabilities) * hop)


def score(spans: list[Span], truth: list[Span]) -> dict[str, float]:
    found = 0
    lateness: list[float] = []
    for command in truth:
        covering = [s for s in spans if s.start <= command.start and s.end >= command.end]
        if covering:
            found += 1
            lateness.append(covering[0].decided - command.end)
    empty = sum(not any(s.start < c.end and s.end > c.start for c in truth) for s in spans)
    stuck = sum(s.end - s.start >= MAX_UTTERANCE - 0.05 for s in spans)
    return {"found": found, "commands": len(truth), "empty": empty, "stuck": stuck,
            "utterances": len(spans),
            "late_p50": statistics.median(lateness) if lateness else float("nan")}


class Hearing:
    """The default recogniser hearing each utterance as the table would."""

    def __init__(self) -> None:
        self.matcher = matcher_for("race65", PLAYERS)
        self.recognizer = recognizer_for(self.matcher.phrases)

    def intent(self, audio: Audio) -> Intent:
        transcript = self.recognizer.decode(self.recognizer.prepare(audio))
        return understand(self.matcher, transcript, PLAYERS[0]).intent

    def score(self, stream: np.ndarray, spans: list[Span], truth: list[Span],
              commands: list[Intent]) -> tuple[int, int]:
        """Commands heard right, and utterances without a command taken for one."""
        heard: dict[int, Intent] = {}
        for i, span in enumerate(spans):
            audio = span.audio if span.audio is not None else Audio(
                (np.clip(stream[int(span.start * RATE) : int(span.end * RATE)], -1, 1)
                 * 32767).astype(np.int16))
            heard[i] = self.intent(audio)
        right = 0
        for command, intent in zip(truth, commands, strict=True):
            covering = [i for i, s in enumerate(spans)
                        if s.start <= command.start and s.end >= command.end]
            right += bool(covering) and heard[covering[0]] == intent
        taken = sum(heard[i].kind != "none" for i, s in enumerate(spans)
                    if not any(s.start < c.end and s.end > c.start for c in truth))
        return right, taken


def main() -> None:
    parser = argparse.ArgumentParser(description="voice activity detection benchmark")
    parser.add_argument("--conditions", nargs="+",
                        default=["clean", "babble30", "babble30-far", "babble20", "babble10",
                                 "babble5", "pink10"])
    parser.add_argument("--voices", nargs="+", default=list(DEV_VOICES))
    parser.add_argument("--count", type=int, default=40, help="commands per room")
    parser.add_argument("--hear", action="store_true",
                        help="decode each utterance too (the default recogniser)")
    args = parser.parse_args()
    silero = Silero()
    hearing = Hearing() if args.hear else None
    commands = [u.intent for u in utterances() if u.is_command][: args.count]
    heard_columns = " heard right | without a command, taken |" if hearing else ""
    print("| room | detector | commands found whole | utterances | without a command | "
          "cut at 8 s | end decided after the speech, p50 | seconds per minute of audio |"
          + heard_columns)
    print("|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if hearing else ""))
    bar = Bar(len(args.conditions), "rooms (each: build, detect, score)")
    for done, condition in enumerate(args.conditions):
        bar(done)
        stream, truth = build_stream(condition, args.voices, args.count)
        minutes = len(stream) / RATE / 60
        t = time.perf_counter()
        energy = list(segmenter_spans(stream))
        energy_s = time.perf_counter() - t
        t = time.perf_counter()
        neural = list(silero_spans(silero.probabilities(stream)))
        neural_s = time.perf_counter() - t
        for name, spans, spent in (("segmenter", energy, energy_s), ("silero", neural, neural_s)):
            s = score(spans, truth)
            heard = ""
            if hearing is not None:
                right, taken = hearing.score(stream, spans, truth, commands)
                heard = f" {right}/{len(truth)} | {taken} |"
            print(f"| {condition} | {name} | {s['found']}/{s['commands']} | {s['utterances']} | "
                  f"{s['empty']} | {s['stuck']} | {1000 * s['late_p50']:.0f} ms | "
                  f"{spent / minutes:.2f} |" + heard)
    bar.close()


if __name__ == "__main__":
    main()
