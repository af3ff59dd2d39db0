"""Real human speech in the table's adapter: the folder read, the speakers kept
apart from every measurement set, the channels, the stacked adapter, and a
tiny real-speech training run end to end.

The recordings are real: FSDD's speakers in ``../shared/real-voices/fsdd``
(tests that need them skip, visibly, where ``../shared`` is absent).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from referee.doctor import adapter_state
from referee.speech.audio import RATE, Audio, wav_bytes
from referee.speech.hearing.adapter import (
    ADAPTER,
    ADAPTER_SHA256,
    PROJECTIONS,
    load,
    save,
)
from training.adapters import stack
from training.cli import main as train
from training.data import Dataset
from training.real import (
    FSDD_MEASURED,
    balanced,
    held_back,
    keep_apart,
    measured_speakers,
    read_folder,
    readable,
    unused,
)
from training.rooms import CHANNELS, channel

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
REAL = SHARED / "real-voices"
needs_real = pytest.mark.skipif(not (REAL / "fsdd").is_dir(),
                                reason="../shared/real-voices is not beside the project")


def _wav(path: Path, seconds: float = 0.5, frequency: float = 220.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * RATE)) / RATE
    samples = (0.3 * np.sin(2 * np.pi * frequency * t) * 32767).astype(np.int16)
    path.write_bytes(wav_bytes(Audio(samples, RATE)))
    return path


def test_a_folder_of_real_recordings_is_read_with_words_and_speakers(tmp_path: Path) -> None:
    """Every layout of docs/training.md: a folder per word, a text beside a WAV,
    Speech Commands' ``_unknown_`` names and FSDD's; no speech is skipped."""
    _wav(tmp_path / "seven" / "0a1b2c3d_nohash_0.wav")
    _wav(tmp_path / "turn_off" / "mine.wav")
    _wav(tmp_path / "_unknown_" / "tree_deadbeef_nohash_1.wav.wav")
    _wav(tmp_path / "_silence_" / "noise.wav")
    _wav(tmp_path / "misc" / "take.wav")
    (tmp_path / "misc" / "take.txt").write_text("Flip my SEVEN, please!\n")
    _wav(tmp_path / "fsdd" / "3_george_12.wav")
    (tmp_path / "misc" / "notes.md").write_text("not audio")
    got = {(r.path.name, r.words, r.speaker, r.kind) for r in read_folder(tmp_path)}
    assert got == {
        ("0a1b2c3d_nohash_0.wav", "seven", "0a1b2c3d", "real"),
        ("mine.wav", "turn off", "folder:turn_off", "real-word"),
        ("tree_deadbeef_nohash_1.wav.wav", "tree", "deadbeef", "real-word"),
        ("take.wav", "flip my seven please", "folder:misc", "real-word"),
        ("3_george_12.wav", "three", "george", "real"),
    }


def test_a_damaged_recording_is_left_out_with_its_reason(tmp_path: Path) -> None:
    good = _wav(tmp_path / "yes" / "a.wav")
    (tmp_path / "yes" / "b.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    kept, bad = readable(read_folder(tmp_path))
    assert [r.path for r in kept] == [good]
    assert len(bad) == 1
    assert "b.wav" in bad[0]


@needs_real
def test_no_speaker_of_a_measurement_set_is_trained_on(tmp_path: Path) -> None:
    """Every speaker of the real-voice benchmark (read from its own files), the
    FSDD speaker kept for measuring and the held-back Speech Commands speakers
    are left out; the others kept."""
    measured = measured_speakers(SHARED)
    benchmark = sorted((REAL / "speech_commands_v0.01").rglob("*.wav"))
    assert len(benchmark) == 300
    for path in benchmark[::7]:  # the same speakers, as another data set names them
        word = path.parent.name
        _wav(tmp_path / "_unknown_" / f"{word}_{path.name}")
    _wav(tmp_path / "yes" / "fedcba98_nohash_0.wav")  # a speaker of no measurement set
    _wav(tmp_path / "yes" / "0fedcba9_nohash_0.wav")  # held back: starts with 0
    for name in ("4_lucas_1.wav", "4_jackson_1.wav"):
        _wav(tmp_path / "fsdd" / name)
    kept, dropped = keep_apart(read_folder(tmp_path), measured)
    assert {r.speaker for r in kept} == {"fedcba98", "jackson"}
    assert len(dropped) == len(benchmark[::7]) + 2
    assert set(FSDD_MEASURED) <= measured
    assert held_back("0fedcba9")
    assert held_back("1abcdef0")
    assert not held_back("fedcba98")
    assert not held_back("lucas")


def test_every_channel_keeps_the_length_and_changes_the_sound() -> None:
    """A telephone and narrowband hands-free cut what lies above 4 kHz; every
    channel leaves the utterance as long as it was."""
    rng = np.random.default_rng(0)
    signal = rng.standard_normal(RATE) * 0.1
    for kind in CHANNELS:
        out, name = channel(signal, random.Random(1), kind)
        assert name == kind
        assert len(out) == len(signal)
        assert not np.allclose(out, signal)
        spectrum = np.abs(np.fft.rfft(out)) ** 2
        high = spectrum[np.fft.rfftfreq(len(out), 1 / RATE) > 4200].sum() / spectrum.sum()
        if kind in ("telephone", "hands-free"):
            assert high < 0.01
        if kind == "hands-free-wide":
            assert high > 0.1


def test_a_stacked_adapter_changes_the_decoder_as_both_together() -> None:
    """``stack``: the start adapter and one trained over it, as one adapter
    whose change is the sum of theirs."""
    start = load(ADAPTER, ADAPTER_SHA256)
    rng = np.random.default_rng(3)
    arrays = {}
    for index, layer in enumerate(start.layers):
        for name, ct2 in PROJECTIONS.items():
            a, b = layer[name]
            key = f"decoder/layer_{index}/{ct2}"
            arrays[key + "/lora_a"] = rng.standard_normal((a.shape[0], 2)).astype(np.float16)
            arrays[key + "/lora_b"] = rng.standard_normal((2, b.shape[1])).astype(np.float16)
    both = stack(start, arrays)
    key = "decoder/layer_1/" + PROJECTIONS["ffn_in"]
    x = rng.standard_normal((3, start.layers[1]["ffn_in"][0].shape[0])).astype(np.float32)
    a, b = start.layers[1]["ffn_in"]
    want = x @ a @ b + x @ arrays[key + "/lora_a"].astype(np.float32) @ arrays[
        key + "/lora_b"].astype(np.float32)
    got = x @ both[key + "/lora_a"].astype(np.float32) @ both[key + "/lora_b"].astype(np.float32)
    assert np.allclose(got, want, atol=0.05 * np.abs(want).max())
    assert both[key + "/lora_a"].shape[1] == start.rank + 2


@needs_real
@pytest.mark.slow
def test_training_on_real_recordings_over_the_shipped_adapter_end_to_end(
        tmp_path: Path) -> None:
    """``train ears --real DIR --start ADAPTER``: real FSDD recordings of a
    speaker that is trained on, a measured speaker's (left out), a word that is
    no command; prepared in rooms and channels, encoded, trained half real and
    half synthetic, written as one adapter over the shipped one, and heard with."""
    folder = tmp_path / "real"
    recordings = REAL / "fsdd" / "recordings"
    (folder / "fsdd").mkdir(parents=True)
    for name in ("7_george_0.wav", "3_jackson_1.wav", "5_george_2.wav", "7_lucas_0.wav"):
        shutil.copy(recordings / name, folder / "fsdd" / name)
    # a word that is no command, in a folder of its own (a real voice stands in for it)
    (folder / "tree").mkdir()
    shutil.copy(recordings / "3_george_3.wav", folder / "tree" / "x.wav")
    out = tmp_path / "adapter.npz"
    code = train(["ears", "--lines", "8", "--real", str(folder), "--copies", "2",
                 "--start", str(ADAPTER), "--rank", "2", "--epochs", "1", "--workers", "1",
                 "--data", str(tmp_path / "data" / "data-8"), "--out", str(out)])
    assert code == 0
    adapter = load(out)
    start = load(ADAPTER, ADAPTER_SHA256)
    assert adapter.rank == start.rank + 2
    a, _ = adapter.layers[0]["qkv"]
    assert np.array_equal(a[:, : start.rank].astype(np.float16),
                          start.layers[0]["qkv"][0].astype(np.float16))
    report = adapter.report
    assert report["stacked_on"]["sha256"] == ADAPTER_SHA256
    assert report["data"]["real"]["speakers"] == ["folder:tree", "george", "jackson"]
    assert report["data"]["real"]["left_out"] == 1
    assert report["real_examples"] + report["watched"] >= 8  # 4 recordings, 2 copies each
    assert set(start.report["data"]["voices"]["espeak"]) <= set(
        report["data"]["voices"]["espeak"])
    real = next((tmp_path / "data").glob("real-*"))
    data = Dataset(real)
    assert len(data) == 8
    assert {e.target.rstrip(".").casefold() for e in data.examples if e.kind == "real"} <= {
        "7", "seven", "3", "three", "5", "five"}
    assert {e.target for e in data.examples if e.kind == "real-word"} == {"Tree."}
    assert all(e.voice.startswith("real:") for e in data.examples)
    # doctor's words for what a candidate adapter was made of
    assert "trained on 4 real recordings of 3 speakers over 2 synthetic-voice adapters" \
        in adapter_state(out)


def test_the_tuning_recordings_are_those_training_left_out(tmp_path: Path) -> None:
    """``unused``: what ``balanced`` did not choose (the calibration's real
    tuning set), never a recording the adapter trained on."""
    for n in range(12):
        _wav(tmp_path / "yes" / f"{n:08x}_nohash_0.wav")
    for n in range(3):
        _wav(tmp_path / "tree" / f"{n + 100:08x}_nohash_0.wav")
    recordings = read_folder(tmp_path)
    chosen = balanced(recordings, 5, 2026)
    left = unused(recordings, 5, 2026)
    assert len(chosen) == 8  # 5 of "yes", all 3 of "tree"
    assert {r.path for r in chosen}.isdisjoint(r.path for r in left)
    assert len(left) == 7
    assert {r.words for r in left} == {"yes"}


@needs_real
def test_an_adapter_that_learnt_no_real_speech_is_tuned_on_any_kept_speaker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench realvoices --sets tuning``: for the shipped adapter (synthetic
    voices only) every recording of a speaker in no measurement set may tune
    its calibration, at most 40 of a word; a benchmark speaker's and a
    held-back speaker's never. For an adapter trained on real speech, only
    what its recipe left out."""
    from benchmarks.realvoices import learnt_real, members

    measured = next((REAL / "speech_commands_v0.01" / "yes").glob("*.wav")).name
    for n in range(45):
        _wav(tmp_path / "seven" / f"{n + 0xa0000000:08x}_nohash_0.wav")
    _wav(tmp_path / "seven" / measured)
    _wav(tmp_path / "seven" / "0badcafe_nohash_0.wav")  # held back (0 or 1 first)
    _wav(tmp_path / "tree" / "a1234567_nohash_0.wav")
    monkeypatch.delenv("REFEREE_WHISPER_ADAPTER", raising=False)
    assert not learnt_real(None)
    assert not learnt_real("base")
    chosen = [p.name for _, p in members("tuning", None, [tmp_path], real_trained=False)]
    assert len(chosen) == 41  # 40 of "seven", the one "tree"
    assert measured not in chosen
    assert "0badcafe_nohash_0.wav" not in chosen
    left = [p.name for _, p in members("tuning", None, [tmp_path], real_trained=True)]
    assert left == []  # the recipe (150 a word) trained on all of them
    start = load(ADAPTER, ADAPTER_SHA256)
    arrays = {f"decoder/layer_{i}/{ct2}/lora_{x}": np.asarray(ab, np.float16)
              for i, layer in enumerate(start.layers) for name, ct2 in PROJECTIONS.items()
              for x, ab in zip("ab", layer[name], strict=True)}
    real = tmp_path / "real.npz"
    save(real, arrays, {"data": {"real": {"speakers": ["george"]}}})
    monkeypatch.setenv("REFEREE_WHISPER_ADAPTER", str(real))
    assert learnt_real(None)
