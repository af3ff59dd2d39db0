"""Cutting a live stream into utterances, and the microphone's failures."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.fixtures import COMMITTED_VOICE, clean_path, utterances
from referee.speech.audio import RATE, load_wav
from referee.speech.intents import IntentMatcher
from referee.speech.listen import hear_audio
from referee.speech.mic import MicrophoneError, Segmenter, input_device, segment
from referee.speech.recognizers import PocketSphinxRecognizer

ROOT = Path(__file__).resolve().parent.parent


def stream_of(cases, gap: float = 1.0) -> tuple[bytes, list[float]]:
    """Utterances separated by silence, as a microphone would hear them."""
    silence = np.zeros(int(gap * RATE), dtype=np.int16)
    parts, starts, t = [silence], [], gap
    for case in cases:
        samples = load_wav(clean_path(COMMITTED_VOICE, case)).samples
        starts.append(t)
        parts += [samples, silence]
        t += len(samples) / RATE + gap
    return np.concatenate(parts).astype("<i2").tobytes(), starts


def chunks(data: bytes, size: int = 3200) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_stream_is_cut_into_its_utterances_which_are_understood():
    cases = utterances()[:5]
    data, starts = stream_of(cases)
    found = segment(chunks(data))
    assert len(found) == len(cases)
    matcher = IntentMatcher.for_game("race65", ["Ann", "Bob"])
    recognizer = PocketSphinxRecognizer(matcher.phrases)
    for utterance, case, start in zip(found, cases, starts, strict=True):
        assert abs(utterance.start - start) < 0.5
        assert utterance.end > utterance.start
        heard, _ = hear_audio(recognizer, matcher, utterance.audio, "Ann")
        assert heard.intent == case.intent


@pytest.mark.parametrize("end_silence", [0.2, 0.4, 0.5])
def test_an_utterance_ends_after_the_end_silence(end_silence):
    data, _ = stream_of(utterances()[:1], gap=1.0)
    segmenter = Segmenter(end_silence)
    position, ended_at = 0, None
    for chunk in chunks(data, 320):
        position += len(chunk)
        if list(segmenter.feed(chunk)):
            ended_at = position / 2 / RATE
            break
    assert ended_at is not None
    speech_end = 1.0 + load_wav(clean_path(COMMITTED_VOICE, utterances()[0])).seconds
    # Piper's audio has a little silence of its own at the end.
    assert ended_at - speech_end <= end_silence + 0.15


def test_speech_still_going_at_the_end_of_the_stream_is_kept():
    data, _ = stream_of(utterances()[:1], gap=0.5)
    cut = data[: len(data) - int(0.5 * RATE) * 2 - 3200]  # stop while speaking
    assert len(segment(chunks(cut))) == 1


def test_silence_and_steady_noise_are_no_utterances():
    rng = np.random.default_rng(3)
    quiet = (rng.standard_normal(3 * RATE) * 30).astype("<i2").tobytes()
    assert segment(chunks(quiet)) == []


def test_endless_chatter_is_cut_into_utterances_of_at_most_the_maximum():
    """Babble keeps the voice detector in speech; the segmenter cuts it anyway."""
    from benchmarks.fixtures import babble_bed

    bed = babble_bed()[: 20 * RATE]
    data = (bed / np.max(np.abs(bed)) * 8000).astype("<i2").tobytes()
    segmenter = Segmenter(max_seconds=5.0)
    found = [u for c in chunks(data) for u in segmenter.feed(c)]
    assert len(found) >= 3
    assert all(u.audio.seconds <= 5.01 for u in found)
    assert all(b.start >= a.end - 0.01 for a, b in itertools.pairwise(found))


def test_end_silence_must_be_sensible():
    with pytest.raises(ValueError, match="end_silence"):
        Segmenter(5.0)


def test_no_microphone_is_a_clear_message():
    """This machine has no sound card; a named device that does not exist fails too."""
    import sounddevice

    if not any(d["max_input_channels"] > 0 for d in sounddevice.query_devices()):
        with pytest.raises(MicrophoneError, match="No microphone found"):
            input_device(None)
    with pytest.raises(MicrophoneError, match="There is no input device 'no such mic'"):
        input_device("no such mic")


def test_hear_mic_without_a_device_exits_cleanly():
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hear", "--players", "Ann", "Bob", "--mic",
         "--device", "no such mic"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert result.returncode == 2
    assert "There is no input device" in result.stderr
    assert "Traceback" not in result.stderr
