"""WAV input: any rate, width and channel count in; clear errors for bad files."""

from __future__ import annotations

import struct
import wave
from pathlib import Path

import numpy as np
import pytest

from referee.speech.audio import (
    RATE,
    Audio,
    AudioError,
    load_wav,
    speech_region,
    stream_wav,
    wav_bytes,
)


def tone(rate: int, seconds: float = 0.5, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return 0.5 * np.sin(2 * np.pi * freq * t)


def write_pcm(path: Path, signal: np.ndarray, rate: int, width: int, channels: int) -> None:
    frames = np.repeat(signal[:, None], channels, axis=1).reshape(-1)
    if width == 1:
        data = (frames * 127 + 128).astype(np.uint8).tobytes()
    elif width == 2:
        data = (frames * 32767).astype("<i2").tobytes()
    elif width == 3:
        ints = (frames * 8388607).astype(np.int32)
        data = b"".join(int(v).to_bytes(3, "little", signed=True) for v in ints)
    else:
        data = (frames * 2147483647).astype("<i4").tobytes()
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(data)


def float_wav(signal: np.ndarray, rate: int) -> bytes:
    data = signal.astype("<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, rate, rate * 4, 4, 32)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data"
    body += struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def dominant_frequency(audio: Audio) -> float:
    spectrum = np.abs(np.fft.rfft(audio.samples.astype(float)))
    return float(np.argmax(spectrum) * audio.rate / len(audio.samples))


@pytest.mark.parametrize("rate", [8000, 11025, 16000, 22050, 44100, 48000])
@pytest.mark.parametrize("width", [1, 2, 3, 4])
@pytest.mark.parametrize("channels", [1, 2, 6])
def test_any_pcm_wav_becomes_16k_mono_16bit(tmp_path, rate, width, channels):
    path = tmp_path / "t.wav"
    write_pcm(path, tone(rate), rate, width, channels)
    audio = load_wav(path)
    assert audio.rate == RATE
    assert audio.samples.dtype == np.int16
    assert abs(audio.seconds - 0.5) < 0.01
    assert abs(dominant_frequency(audio) - 440) < 5
    assert 0.3 < np.abs(audio.samples).max() / 32767 < 0.6


def test_float_wav_is_read():
    audio = load_wav(float_wav(tone(32000), 32000), "float")
    assert abs(dominant_frequency(audio) - 440) < 5


def test_streamed_wav_with_unknown_length_is_read(tmp_path):
    blob = bytearray(wav_bytes(Audio((tone(RATE) * 30000).astype(np.int16))))
    blob[40:44] = struct.pack("<I", 0x7FFFF000)  # as espeak-ng and sox write to a pipe
    assert abs(load_wav(bytes(blob)).seconds - 0.5) < 0.01


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"", "is empty"),
        (b"hello, this is text and not audio", "not a WAV file"),
        (b"ID3\x04\x00" + b"\x00" * 100, "not a WAV file"),
        (b"RIFF\x24\x00\x00\x00WAVE", "no format header"),
    ],
)
def test_bad_files_give_clear_errors(blob, message):
    with pytest.raises(AudioError, match=message):
        load_wav(blob, "the file")


def test_truncated_wav_is_an_error():
    blob = wav_bytes(Audio((tone(RATE) * 30000).astype(np.int16)))
    with pytest.raises(AudioError, match="truncated"):
        load_wav(blob[: len(blob) // 2], "half.wav")


def test_header_only_wav_has_no_audio():
    blob = wav_bytes(Audio(np.zeros(0, dtype=np.int16)))
    with pytest.raises(AudioError, match="no audio"):
        load_wav(blob, "empty.wav")


def test_compressed_wav_is_refused():
    blob = bytearray(float_wav(tone(8000), 8000))
    blob[20:22] = struct.pack("<H", 6)  # A-law
    with pytest.raises(AudioError, match="compressed"):
        load_wav(bytes(blob), "alaw.wav")


def test_missing_file():
    with pytest.raises(AudioError, match="does not exist"):
        load_wav(Path("/no/such/file.wav"))


def test_speech_region_cuts_silence_at_the_edges():
    silence = np.zeros(RATE, dtype=np.int16)
    speech = (tone(RATE) * 20000).astype(np.int16)
    audio = Audio(np.concatenate([silence, speech, silence]))
    cut = speech_region(audio, margin_s=0.1)
    assert 0.6 <= cut.seconds <= 0.75
    assert speech_region(Audio(silence)).seconds == 1.0


# --- streaming: memory that does not grow with the file ------------------------------------


@pytest.mark.parametrize(("rate", "channels", "seconds"),
                         [(16000, 1, 9.3), (44100, 2, 10.1), (8000, 1, 12.7), (22050, 6, 0.4)])
def test_a_wav_read_in_blocks_equals_the_whole_file(tmp_path, rate, channels, seconds):
    path = tmp_path / "t.wav"
    rng = np.random.default_rng(rate)
    signal = 0.3 * np.sin(2 * np.pi * 440 * np.arange(int(rate * seconds)) / rate)
    write_pcm(path, signal + 0.02 * rng.standard_normal(len(signal)), rate, 2, channels)
    whole = load_wav(path).samples.astype(int)
    blocks = list(stream_wav(path, block_seconds=2.0))
    assert len(blocks) == -(-int(rate * seconds) // (2 * rate))
    joined = np.concatenate([b.samples for b in blocks]).astype(int)
    assert len(joined) == len(whole)
    # (Resampling the whole file at once wraps its end into its first 50 ms.)
    inner = slice(int(0.05 * RATE), len(whole) - int(0.05 * RATE))
    assert np.abs(joined[inner] - whole[inner]).max() <= 0.01 * 32767


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"", "is empty"),
        (b"hello, this is text and not audio", "not a WAV file"),
        (b"RIFF\x24\x00\x00\x00WAVE", "no format header"),
        (wav_bytes(Audio(np.zeros(0, dtype=np.int16))), "no audio"),
        (wav_bytes(Audio(np.ones(RATE, dtype=np.int16)))[:RATE], "truncated"),
    ],
)
def test_streaming_gives_the_same_clear_errors(tmp_path, blob, message):
    path = tmp_path / "bad.wav"
    path.write_bytes(blob)
    with pytest.raises(AudioError, match=message):
        list(stream_wav(path))
    with pytest.raises(AudioError, match="does not exist"):
        list(stream_wav(tmp_path / "missing.wav"))


def test_a_streamed_header_of_unknown_length_is_read_in_blocks(tmp_path):
    blob = bytearray(wav_bytes(Audio((tone(RATE, seconds=5.0) * 30000).astype(np.int16))))
    blob[40:44] = struct.pack("<I", 0xFFFFFFFF)  # as espeak-ng and sox write to a pipe
    path = tmp_path / "piped.wav"
    path.write_bytes(bytes(blob))
    assert sum(b.seconds for b in stream_wav(path, block_seconds=1.0)) == pytest.approx(5.0)


class _HungStream:
    """Stands in for a sound stream whose audio server stopped answering
    (one cannot be made to hang here): its stop never returns."""

    def __init__(self) -> None:
        import threading

        self.released = threading.Event()
        self.closed = False

    def abort(self) -> None:
        self.released.wait(30)

    def close(self) -> None:
        self.closed = True


@pytest.mark.slow
def test_a_stream_that_does_not_close_never_keeps_a_game_from_ending():
    import time

    from referee.speech.portaudio import close_stream

    stream = _HungStream()
    began = time.monotonic()
    assert close_stream(stream, within=0.5) is False
    assert time.monotonic() - began < 2.0
    stream.released.set()  # the server answers after all: the stream is closed then
    deadline = time.monotonic() + 5
    while not stream.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.closed


@pytest.fixture
def portaudio_calls(monkeypatch):
    """PortAudio's terminate and initialise replaced by recorders (fakes: the
    real restart runs against an audio server in tests/test_mic_audio_server.py),
    and the module's record of stuck streams fresh for the test."""
    import sounddevice

    from referee.speech import portaudio as audio

    calls: list[str] = []
    monkeypatch.setattr(sounddevice, "_terminate", lambda: calls.append("terminate"))
    monkeypatch.setattr(sounddevice, "_initialize", lambda: calls.append("initialize"))
    monkeypatch.setattr(audio, "_given_up", [])
    monkeypatch.setattr(audio, "_restart_hung", None)
    monkeypatch.setattr(audio, "STREAMS_STUCK", 0)
    return calls


def test_portaudio_is_not_restarted_while_a_stream_close_is_stuck_in_it(portaudio_calls):
    """PortAudio's terminate would wait on a stream whose abort hangs (a killed
    audio server), and the table with it: the restart waits until the close
    is through, and the devices are opened as they are meanwhile."""
    import time

    from referee.speech.portaudio import close_stream, restart_portaudio

    stream = _HungStream()
    assert close_stream(stream, within=0.2) is False
    assert restart_portaudio(within=1.0) is False
    assert portaudio_calls == []
    stream.released.set()  # the close goes through after all
    deadline = time.monotonic() + 5
    while not stream.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # the closer's thread ends just after close()
    assert restart_portaudio(within=1.0) is True
    assert portaudio_calls == ["terminate", "initialize"]


def test_a_portaudio_restart_that_hangs_is_left_and_not_tried_again(portaudio_calls, monkeypatch):
    import threading
    import time

    import sounddevice

    from referee.speech import portaudio as audio

    never = threading.Event()
    monkeypatch.setattr(sounddevice, "_terminate", lambda: never.wait(30))
    began = time.monotonic()
    assert audio.restart_portaudio(within=0.3) is False
    assert time.monotonic() - began < 2.0
    assert audio.STREAMS_STUCK == 1  # the command will end without PortAudio's exit handler
    monkeypatch.setattr(sounddevice, "_terminate", lambda: portaudio_calls.append("terminate"))
    assert audio.restart_portaudio(within=0.3) is False
    assert portaudio_calls == []
    never.set()


def test_a_stuck_stream_does_not_keep_the_command_from_exiting(tmp_path):
    """After a stream's close was given up on, PortAudio's exit handler would
    wait on it for ever (stood in for here by an exit handler that waits on
    the stuck close): the ``referee`` command still ends, with its own code
    and its output flushed."""
    import subprocess
    import sys
    import time

    program = (
        "import atexit, sys, threading\n"
        "from referee import cli\n"
        "from referee.speech.portaudio import close_stream\n"
        "never = threading.Event()\n"
        "class Hung:\n"
        "    def abort(self): never.wait()\n"
        "    def close(self): pass\n"
        "atexit.register(never.wait)\n"
        "def main(argv=None):\n"
        "    print('the game ended', flush=False)\n"
        "    close_stream(Hung(), within=0.2)\n"
        "    return 3\n"
        "cli.main = main\n"
        "cli.entry()\n"
    )
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=30, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "the game ended\n"
    assert time.monotonic() - began < 20


def test_a_wav_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """``Audio.write_wav`` writes beside the target and renames: a reader never
    finds half a file (two benchmark processes make the same fixture), and a
    write that fails leaves the file that was there, and no leftovers."""
    target = tmp_path / "said.wav"
    first = Audio(np.arange(1600, dtype=np.int16))
    first.write_wav(target)
    assert np.array_equal(load_wav(target).samples, first.samples)
    whole = target.read_bytes()
    seen = []

    def slow_bytes(self):
        seen.append(target.read_bytes())  # what a reader finds while it is written
        raise OSError("disk full")

    monkeypatch.setattr(Audio, "to_bytes", slow_bytes)
    with pytest.raises(OSError, match="disk full"):
        Audio(np.zeros(3200, dtype=np.int16)).write_wav(target)
    assert seen == [whole]
    assert target.read_bytes() == whole
    assert [p.name for p in tmp_path.iterdir()] == ["said.wav"]
