"""Moonshine tiny with a table's adapter: its decoder read out of the real
``.ort`` file and run in NumPy (equal to ONNX Runtime's on real WAV files),
the adapter's changes where they belong, damaged files refused, and the
training (``./run train moonshine``) end to end on a few lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.games import matcher_for
from referee.speech.audio import load_wav
from referee.speech.hearing.moonshine import MoonshineScorer, find_moonshine_model
from referee.speech.hearing.moonshine_decoder import (
    LAYERS,
    PROJECTIONS,
    adapter_key,
    load_adapter,
    read_decoder,
    with_adapter,
)
from referee.speech.hearing.whisper_files import ModelError
from referee.speech.understanding.templates import PhraseSet

ROOT = Path(__file__).resolve().parent.parent
PIPER = ROOT / "tests" / "audio_fixtures" / "piper-joe"
TINY = find_moonshine_model("moonshine-tiny")
DECODER = TINY / "decoder_model_merged.ort"


def _samples(name: str) -> np.ndarray:
    return load_wav(PIPER / f"{name}.wav").samples.astype(np.float32) / 32768.0


def _adapter(path: Path, scale: float, rank: int = 2, seed: int = 0) -> Path:
    """An adapter file of random changes ``scale`` large (0: none at all)."""
    rng = np.random.default_rng(seed)
    weights = read_decoder(DECODER)
    parts: dict[str, Any] = {}
    for layer in range(LAYERS):
        for projection in PROJECTIONS:
            rows, cols = weights[f"layers.{layer}.{projection}.weight"].shape
            parts[adapter_key(layer, projection, "A")] = rng.normal(0, 1, (rows, rank))
            parts[adapter_key(layer, projection, "B")] = scale * rng.normal(0, 1, (rank, cols))
    np.savez(path, **parts)
    return path


@pytest.fixture(scope="module")
def phrases() -> PhraseSet:
    return matcher_for("race65", ["Ann", "Bob"]).phrases


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cmd04", "cmd07", "talk02"])
def test_the_decoder_in_numpy_hears_as_onnx_runtime(tmp_path, phrases, name):
    """An adapter that changes nothing: the grammar search in NumPy finds the
    two best sentences ONNX Runtime finds, in its order, their log-probabilities
    within the int8 activations' rounding; the free transcript is the same."""
    shipped = MoonshineScorer(TINY)
    numpy = MoonshineScorer(TINY, adapter=_adapter(tmp_path / "zero.npz", 0.0))
    samples = _samples(name)
    want, got = shipped.score(samples, phrases), numpy.score(samples, phrases)
    assert [n.words for n in got.nbest[:2]] == [n.words for n in want.nbest[:2]], (
        got.nbest[:3], want.nbest[:3])
    assert np.allclose([n.logprob for n in got.nbest[:2]],
                       [n.logprob for n in want.nbest[:2]], atol=0.6)
    assert got.free.words == want.free.words


@pytest.mark.slow
def test_an_adapter_changes_the_grammar_s_scores_and_not_the_free_transcript(tmp_path, phrases):
    samples = _samples("cmd07")
    plain = MoonshineScorer(TINY, adapter=_adapter(tmp_path / "zero.npz", 0.0))
    changed = MoonshineScorer(TINY, adapter=_adapter(tmp_path / "some.npz", 0.02))
    before, after = plain.score(samples, phrases), changed.score(samples, phrases)
    assert after.free == before.free  # written by the model as shipped
    assert after.nbest[0].logprob != pytest.approx(before.nbest[0].logprob, abs=1e-3)


@pytest.mark.slow
def test_a_damaged_decoder_or_adapter_is_a_model_error(tmp_path):
    cut = tmp_path / "decoder_model_merged.ort"
    cut.write_bytes(DECODER.read_bytes()[:4096])
    with pytest.raises(ModelError):
        read_decoder(cut)
    garbage = tmp_path / "adapter.npz"
    garbage.write_bytes(b"not an adapter")
    with pytest.raises(ModelError):
        load_adapter(garbage)
    weights = {"layers.0.self_attn.q_proj.weight": np.zeros((288, 288), np.float32)}
    wrong = {adapter_key(0, "self_attn.q_proj", "A"): np.zeros((288, 2), np.float32),
             adapter_key(0, "self_attn.q_proj", "B"): np.zeros((2, 100), np.float32)}
    with pytest.raises(ModelError, match="not an adapter for this model"):
        with_adapter(weights, wrong)


@pytest.mark.slow
def test_the_weights_read_are_the_decoder_s_every_one():
    weights = read_decoder(DECODER)
    assert weights["embed_tokens.weight"].shape == (32768, 288)
    assert weights["proj_out.weight"].shape == (288, 32768)
    assert weights["layers.5.mlp.fc1.weight"].shape == (288, 2304)
    assert all(w.dtype == np.float32 and np.isfinite(w).all() for w in weights.values())


@pytest.mark.slow
def test_the_decoder_trained_is_the_decoder_the_referee_runs():
    """The training's PyTorch decoder (its adapter still zero) gives the
    logits the referee's NumPy decoder gives, step by step with its cache."""
    torch = pytest.importorskip("torch")
    from referee.speech.hearing.moonshine_decoder import NumpyDecoder
    from training.moonshine import _model

    scorer = MoonshineScorer(TINY)
    memory = scorer.encode(_samples("cmd07"))
    said = [1, *scorer.tokens.encode(" Flip your 10 down."), scorer.tokens.end]
    weights = read_decoder(DECODER)
    model = _model(weights, rank=4, seed=0)
    with torch.no_grad():
        taught = model(torch.tensor([said]), torch.from_numpy(memory),
                       torch.ones(1, memory.shape[1], dtype=torch.bool))[0].numpy()
    decoder, cache = NumpyDecoder(weights), scorer._empty()
    for step, token in enumerate(said):
        logits, cache = decoder.step([token], cache, memory, step == 0)
        assert np.abs(logits[0] - taught[step]).max() < 1e-3


@pytest.mark.slow
def test_training_runs_end_to_end_and_the_referee_hears_with_it(tmp_path, phrases):
    """``./run train moonshine`` on 40 lines (training voices, rooms), one
    process: the encoded set is kept and reused, the adapter written with its
    report, and Moonshine hears a real WAV with it."""
    import json

    pytest.importorskip("torch")
    from training.cli import main

    data, out = tmp_path / "data.npz", tmp_path / "adapter.npz"
    argv = ["moonshine", "--lines", "40", "--epochs", "2", "--rank", "4", "--workers", "1",
            "--data", str(data), "--out", str(out)]
    assert main(argv) == 0
    assert data.exists()
    with np.load(out) as stored:
        report = json.loads(str(stored["report"]))
        assert stored[adapter_key(5, "mlp.fc2", "B")].shape == (4, 288)
    assert report["lines"] == 40
    assert report["kept_loss_after"] < report["kept_loss_before"]
    heard = MoonshineScorer(TINY, adapter=out).score(_samples("cmd07"), phrases)
    assert heard.nbest[0].words == "flip your ten down"
    stamp = data.stat().st_mtime_ns
    assert main([*argv[:-2], "--out", str(tmp_path / "again.npz")]) == 0
    assert data.stat().st_mtime_ns == stamp  # the set was read again, not made again
