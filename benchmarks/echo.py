"""Commands said over the referee's voice, with and without the echo canceller.

    ./run bench echo [--voices piper-joe espeak-nyc-m3] [--count 30]

The referee (eSpeak, the live default) says its opening and then a run of
announcements; its voice reaches the microphone through a room (a direct path
50 ms late and a decaying reverberant tail, RT60 0.3 s, seeded); a player's
command starts during the second part, when the canceller has heard the
referee for a while, as at a real table. The echo is set 0, 6 or 12 dB louder
than the player. Each command is decoded by the default recogniser from the
microphone as it is (what the referee heard before) and after
:func:`~referee.speech.hearing.echo.cancel_echo`. Prints the commands right,
the echo removed while the referee speaks alone, and the canceller's time.
Held-out voices are marked * (never tuned on).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import numpy.typing as npt

from harness.ears import recognizer_for
from harness.fixtures import COMMITTED_VOICE, HELD_OUT_VOICES, fixture, utterances
from harness.room import room
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.hearing.echo import cancel_echo
from referee.speech.listen import hear_audio
from referee.speech.speaking.tts import EspeakVoice
from training.progress import Bar

RATIOS_DB = (0, 6, 12)
OPENING = ("Race to 65, phase-seven easy. Ann against Bob. 2 flips per turn, no timer. "
           "Call 65 to win. Ann starts.")
LATER = "Ann, 7 down. One more flip. Ten seconds. Bob, did you call 65? Bob's turn."


def _db(x: npt.NDArray[np.float64]) -> float:
    return 10.0 * float(np.log10(np.mean(x**2) + 1e-9))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", nargs="+", default=[COMMITTED_VOICE, HELD_OUT_VOICES[1]])
    parser.add_argument("--count", type=int, default=30, help="commands per voice")
    args = parser.parse_args()
    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = recognizer_for(matcher.phrases)
    voice = EspeakVoice()
    opening, later = voice.render(OPENING), voice.render(LATER)
    played = np.concatenate([opening.samples, np.zeros(RATE // 2, np.int16),
                             later.samples]).astype(np.float64)
    alone = slice(int(0.5 * len(opening.samples)), len(opening.samples))
    cases = [u for u in utterances("race65") if u.is_command][: args.count]
    rng = np.random.default_rng(1)
    response = room(rng)
    echo_path = np.convolve(played, response)[: len(played)]
    print(f"`./run bench echo --voices {' '.join(args.voices)} --count {args.count}`, "
          f"{recognizer.describe()}\n")
    print("| voice | referee over player | commands right, as heard | with the canceller | "
          "echo removed (referee alone) | canceller time per second |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.voices:
        mark = " *" if name in HELD_OUT_VOICES else ""
        for ratio in RATIOS_DB:
            right_raw = right_aec = 0
            removed: list[float] = []
            seconds = spent = 0.0
            bar = Bar(len(cases), f"{name} at +{ratio} dB")
            for n, case in enumerate(cases):
                bar(n)
                player = load_wav(fixture(name, case, "clean")).samples.astype(np.float64)
                echo = echo_path * (np.sqrt(np.mean(player**2)) / np.sqrt(np.mean(echo_path**2))
                                    * 10 ** (ratio / 20))
                start = int(rng.uniform(len(opening.samples) + RATE, len(played) - RATE))
                mic = np.zeros(max(len(echo), start + len(player)))
                mic[: len(echo)] += echo
                mic[start : start + len(player)] += player
                scale = min(1.0, 30000.0 / max(1.0, float(np.abs(mic).max())))
                heard = Audio((mic * scale).astype(np.int16))
                reference = Audio(played.astype(np.int16))
                began = time.perf_counter()
                clean = cancel_echo(heard, reference)
                spent += time.perf_counter() - began
                seconds += heard.seconds
                removed.append(_db(heard.samples[alone].astype(np.float64))
                               - _db(clean.samples[alone].astype(np.float64)))
                cut = slice(start, start + len(player) + RATE // 4)
                raw_intent = hear_audio(recognizer, matcher, Audio(heard.samples[cut]), "Ann")[0]
                aec_intent = hear_audio(recognizer, matcher, Audio(clean.samples[cut]), "Ann")[0]
                right_raw += raw_intent.intent == case.intent
                right_aec += aec_intent.intent == case.intent
            bar.close()
            n = len(cases)
            print(f"| {name}{mark} | +{ratio} dB | {right_raw}/{n} | {right_aec}/{n} | "
                  f"{np.median(removed):.1f} dB | {spent / seconds * 1000:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
