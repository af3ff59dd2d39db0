"""The echo canceller on real rendered speech: the referee's eSpeak voice
through a simulated room, a player's recorded command over it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.fixtures import COMMITTED_VOICE, fixture, utterances
from harness.room import room
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, PlaybackTrack, load_wav
from referee.speech.hearing.echo import FRAME, DelayFinder, EchoCanceller, available, cancel_echo
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.listen import hear_audio

pytestmark = pytest.mark.skipif(not available(), reason="libspeexdsp is not installed")


def _db(x: np.ndarray) -> float:
    return 10 * float(np.log10(np.mean(x.astype(np.float64) ** 2) + 1e-9))


#: The referee's voice saying OPENING, half a second of silence, then LATER.
_RENDER = """
import sys
import numpy as np
from benchmarks.echo import LATER, OPENING
from referee.speech.audio import RATE
from referee.speech.speaking.tts import EspeakVoice
voice = EspeakVoice()
sys.stdout.buffer.write(np.concatenate([voice.render(OPENING).samples,
                        np.zeros(RATE // 2, np.int16), voice.render(LATER).samples]).tobytes())
"""


@pytest.fixture(scope="module")
def referee_voice() -> np.ndarray:
    """Rendered in a process of its own: eSpeak's library keeps state between
    renderings, so what the suite said before would change these tests' input."""
    out = subprocess.run([sys.executable, "-c", _RENDER], capture_output=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent, timeout=60).stdout
    return np.frombuffer(out, dtype=np.int16).copy()


@pytest.mark.slow
def test_the_referee_s_voice_is_removed_from_the_microphone(referee_voice):
    echo = np.convolve(referee_voice.astype(np.float64), room(np.random.default_rng(3)))
    heard = Audio(np.clip(echo[: len(referee_voice)], -32768, 32767).astype(np.int16))
    clean = cancel_echo(heard, Audio(referee_voice))
    later = slice(len(referee_voice) // 2, len(referee_voice))  # once it has learnt the room
    assert _db(heard.samples[later]) - _db(clean.samples[later]) > 15


@pytest.mark.slow
def test_a_command_said_over_the_referee_is_heard_only_with_the_canceller(referee_voice):
    case = next(u for u in utterances("race65") if u.text == "flip my twelve down")
    player = load_wav(fixture(COMMITTED_VOICE, case, "clean")).samples.astype(np.float64)
    echo = np.convolve(referee_voice.astype(np.float64), room(np.random.default_rng(4)))
    echo = echo[: len(referee_voice)]
    echo *= np.sqrt(np.mean(player**2) / np.mean(echo**2)) * 2.0  # the referee 6 dB louder
    start = len(referee_voice) - len(player) - RATE // 2
    mic = echo.copy()
    mic[start : start + len(player)] += player
    heard = Audio(np.clip(mic * 0.5, -32768, 32767).astype(np.int16))
    clean = cancel_echo(heard, Audio(referee_voice))
    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = make_recognizer(matcher.phrases)
    cut = slice(start, start + len(player) + RATE // 4)
    as_heard = hear_audio(recognizer, matcher, Audio(heard.samples[cut]), "Ann")[0]
    cleaned = hear_audio(recognizer, matcher, Audio(clean.samples[cut]), "Ann")[0]
    assert as_heard.intent != case.intent
    assert cleaned.intent == case.intent


def test_the_delay_to_the_microphone_is_found_from_the_sound(referee_voice):
    """The devices' latency estimates are off by 0.23 s: the finder measures it."""
    track = PlaybackTrack()
    track.add(100.0, referee_voice)
    late = int(0.23 * RATE)
    mic = np.concatenate([np.zeros(late, np.int16), referee_voice])[: len(referee_voice)]
    finder = DelayFinder()
    for i in range(0, 4 * RATE, FRAME):
        finder.feed(mic[i : i + FRAME], 100.0 + i / RATE, track.window)
    assert finder.found
    # the reference starts 50 ms ahead of the echo: at capture - 0.23 + 0.05
    assert finder.offset == pytest.approx(-0.23 + 0.05, abs=0.002)


def test_the_playback_track_gives_what_was_played_and_silence_elsewhere():
    track = PlaybackTrack()
    track.add(10.0, np.full(RATE, 1000, np.int16))
    window = track.window(9.5, RATE)
    assert not window[: RATE // 2].any()
    assert (window[RATE // 2 :] == 1000).all()
    assert track.playing(10.5, 10.6)
    assert not track.playing(11.5, 12.0)


def test_a_canceller_keeps_the_lengths_and_refuses_other_rates():
    canceller = EchoCanceller()
    out = canceller.process(np.zeros(250, np.int16), np.zeros(250, np.int16))
    assert len(out) == FRAME  # the other 90 samples wait for the next 10 ms
    assert len(canceller.process(np.zeros(70, np.int16), np.zeros(70, np.int16))) == FRAME
    canceller.close()
    with pytest.raises(ValueError, match="16000"):
        EchoCanceller(rate=8000)


@pytest.mark.slow
def test_seat_microphones_tell_a_player_from_the_referee_s_voice(referee_voice):
    """Two seats, the referee's voice reaching each through its own path in
    the room, and Bob's recorded command into his own microphone over it, 6 dB
    quieter than the echo: the referee's voice stands about level at the
    seats (its ``seat_db`` near 0), Bob's command stands out at his."""
    from referee.gate import SEAT_DB
    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK

    case = next(u for u in utterances("race65") if u.text == "flip my twelve down")
    player = load_wav(fixture(COMMITTED_VOICE, case, "clean")).samples.astype(np.float64)
    seats = []
    for seed in (5, 6):
        echo = np.convolve(referee_voice.astype(np.float64), room(np.random.default_rng(seed)))
        echo = echo[: len(referee_voice)]
        seats.append(echo * np.sqrt(np.mean(player**2) / np.mean(echo**2)) * 2.0)  # +6 dB
    start = len(referee_voice) - len(player) - RATE // 2
    seats[1][start : start + len(player)] += player
    stereo = np.clip(np.stack(seats, axis=1) * 0.5, -32768, 32767).astype("<i2")
    stereo = np.concatenate([stereo, np.zeros((RATE, 2), "<i2")])  # a quiet second after
    track = PlaybackTrack()
    track.add(100.0, referee_voice)
    microphone = Microphone(seats={0: "Ann", 1: "Bob"}, track=track)
    microphone.reset()
    microphone._latency = 0.0
    found = []
    for i in range(0, len(stereo), BLOCK):
        block = stereo[i : i + BLOCK]
        found += microphone._feed(block.tobytes(), 100.0 + (i + len(block)) / RATE)
    said = start / RATE
    over = [(u.speaker, round(u.start, 2), round(u.end, 2), u.over) for u in found]
    players = [u for u in found if u.end > said + 0.5]
    voices = [u for u in found if 3.0 < u.end < said]  # once the canceller has learnt
    assert players, over
    assert voices, over
    assert all(u.start <= u.end for u in found), over
    assert [u.speaker for u in players] == ["Bob"], over
    assert all(u.over and u.over.seat_db is not None and u.over.seat_db >= SEAT_DB
               for u in players), over
    assert all(u.over and u.over.seat_db is not None and abs(u.over.seat_db) < 3
               for u in voices), over


@pytest.mark.slow
def test_the_canceller_counts_as_working_only_once_it_has_learnt_the_room(referee_voice):
    """The referee's voice through a room into the microphone, nobody else: the
    canceller's first output is silence while it fills its frame, which must
    not pass for having learnt the room; an utterance begun while it was still
    learning is not trusted over the referee's voice (the older gate holds),
    one begun after it has learnt is."""
    from referee.speech.hearing.echopath import MEASURED_FOR
    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK

    echo = np.convolve(referee_voice.astype(np.float64), room(np.random.default_rng(5)))
    mono = np.clip(echo[: len(referee_voice)] * 0.5, -32768, 32767).astype("<i2")
    track = PlaybackTrack()
    track.add(100.0, referee_voice)
    microphone = Microphone(track=track)
    microphone.reset()
    microphone._latency = 0.0
    learnt = None
    for i in range(0, len(mono), BLOCK):
        block = mono[i : i + BLOCK]
        microphone._feed(block.tobytes(), 100.0 + (i + len(block)) / RATE)
        if learnt is None and microphone.cancelling:
            learnt = microphone.position
    assert learnt is not None  # it learns the room within the referee's opening
    assert MEASURED_FOR <= learnt < len(mono) / RATE - 1
    assert not microphone.cancelling_from(0.5)
    assert microphone.cancelling_from(learnt + 0.1)


def test_a_closed_canceller_refuses_a_frame_and_never_closes_inside_one():
    """Closed (a screen that stopped) while the live loop still cancels in
    another thread: a frame and the closing never overlap, and a frame after
    it is refused, not handed to speexdsp as a freed state (the loop's
    thread died in it: a segmentation fault, 2026-12-07)."""
    import threading

    from referee.speech.hearing.echo import EchoError

    canceller = EchoCanceller()
    tone = (np.sin(np.arange(RATE) / 5) * 4000).astype(np.int16)
    assert len(canceller.process(tone, tone)) == RATE
    cancelling = threading.Event()
    refused: list[str] = []

    def loop() -> None:
        try:
            while True:
                canceller.process(tone[:FRAME * 10], tone[:FRAME * 10])
                cancelling.set()
        except EchoError as error:
            refused.append(str(error))

    thread = threading.Thread(target=loop)
    thread.start()
    assert cancelling.wait(10)
    canceller.close()
    thread.join(10)
    assert refused == ["the echo canceller was closed"]
    with pytest.raises(EchoError):
        canceller.process(tone, tone)
    canceller.close()  # (twice is nothing)


def _speaker_on_a_fake_device(monkeypatch: pytest.MonkeyPatch, now: list[float]) -> Any:
    """The real speaker class over a stand-in stream (a fake: this test drives
    its callback by hand, at the times ``now`` says; the real device path is
    tests/test_phones.py's and tests/test_mic_audio_server.py's)."""
    import sounddevice

    from referee.speech.speaking import tts

    class Stream:  # (the stand-in: a latency, and nothing to start)
        latency = 0.05

        def start(self) -> None: ...

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return now[0]

    monkeypatch.setattr(sounddevice, "RawOutputStream", lambda **_: Stream())
    monkeypatch.setattr(sounddevice, "query_devices", lambda *_, **__: {"index": 0})
    monkeypatch.setattr(tts, "clock", Clock)
    return tts.SpeakerOutput(track=PlaybackTrack())


@pytest.mark.parametrize("ran_dry", [True, False])
def test_the_speaker_stamps_its_samples_from_the_clock_again_when_the_device_ran_dry(
        monkeypatch: pytest.MonkeyPatch, ran_dry: bool) -> None:
    """A busy machine calls the speaker back 0.11 s late, and the device, run
    dry, played silence meanwhile (PortAudio says so: an output underflow):
    what is played next is heard from then on, and the echo canceller's
    reference says so; not where the count of samples would put it, 0.09 s
    early (the count was 0.08-0.1 s behind at each underflow of a busy run,
    2026-12-07). A callback as late without an underflow is one of a burst
    (the device plays on from its buffer): the count holds."""
    import sounddevice

    now = [100.0]
    speaker = _speaker_on_a_fake_device(monkeypatch, now)
    speaker.play(Audio(np.full(3 * 320, 1000, np.int16)), "a sentence", 100.0)
    for at, late in ((100.0, False), (100.02, False), (100.13, ran_dry)):
        now[0] = at
        flags = sounddevice.CallbackFlags()
        flags.output_underflow = late
        speaker._callback(bytearray(640), 320, None, flags)
    assert speaker.track is not None
    assert speaker.track.playing(100.05, 100.09)  # the first two blocks, by the count
    third = (100.18, 100.2) if ran_dry else (100.09, 100.11)
    assert speaker.track.playing(*third)
    assert speaker.track.playing(100.12, 100.17) is False
