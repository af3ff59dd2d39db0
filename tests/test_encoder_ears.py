"""Adapting the encoder: the PyTorch encoder against CTranslate2's, the pack, training, merging.

Everything is real: the shipped model's own weights, CTranslate2 encoding
real WAV files, a pack synthesised with the real training voices and
compressed with the real codec, adapters trained in PyTorch on it, and the
referee loading the merged encoder.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from referee.speech.audio import load_wav
from referee.speech.hearing.adapter import load
from referee.speech.hearing.recognizers import find_whisper_model
from referee.speech.hearing.whisper import (
    ModelError,
    Tokens,
    WhisperScorer,
    encode,
    log_mel,
    merge_encoder,
    read_ctranslate2,
)
from referee.speech.training.data import benchmark_sentences
from referee.speech.training.encoder import ENCODER_PROJECTIONS, TableEncoder
from referee.speech.training.pack import Pack, build_pack, quantise, unpack_weights
from referee.speech.training.voices import VoiceSpec, check_not_held_out
from referee.speech.training.whole import WholeSettings, main, train_whole

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "audio_fixtures" / "piper-joe" / "cmd01.wav"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    folder = find_whisper_model()
    if folder is None or not (folder / "model.bin").is_file():
        pytest.skip("Whisper's model is not installed")
    return folder


def _samples() -> np.ndarray:
    return load_wav(FIXTURE.read_bytes(), str(FIXTURE)).samples.astype(np.float32) / 32768.0


def _with_adapters(encoder: TableEncoder, arrays: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    for i, layer in enumerate(encoder.layers):
        for name, module in layer.projections().items():  # type: ignore[operator]
            a, b = arrays[f"encoder/layer_{i}/{ENCODER_PROJECTIONS[name]}"]
            with torch.no_grad():
                module.a.copy_(torch.from_numpy(a))
                module.b.copy_(torch.from_numpy(b) / module.scale)


def _random_adapters(variables: dict[str, np.ndarray], rank: int = 4,
                     size: float = 0.02) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    out = {}
    for key in sorted(variables):
        if key.startswith("encoder/layer_") and key.endswith("/weight") and any(
                key.endswith(p + "/weight") for p in ENCODER_PROJECTIONS.values()):
            rows, cols = variables[key].shape
            out[key.removesuffix("/weight")] = (
                rng.standard_normal((cols, rank)).astype(np.float32) / np.sqrt(cols),
                rng.standard_normal((rank, rows)).astype(np.float32) * size)
    return out


@pytest.mark.slow
def test_the_training_encoder_encodes_as_ctranslate2(model_dir: Path) -> None:
    import ctranslate2

    encoder = TableEncoder(read_ctranslate2(model_dir / "model.bin"), rank=4).eval()
    samples = _samples()
    reference = encode(ctranslate2.models.Whisper(str(model_dir), compute_type="float32"),
                       [samples])[0]
    with torch.no_grad():
        ours = encoder(torch.from_numpy(log_mel(samples)[None])).numpy()[0]
    assert ours.shape == reference.shape == (400, 384)
    assert np.abs(ours - reference).max() < 1e-3


@pytest.mark.slow
def test_an_encoder_adapter_is_merged_into_the_model_as_trained(model_dir: Path) -> None:
    import ctranslate2

    blob = (model_dir / "model.bin").read_bytes()
    variables = read_ctranslate2(model_dir / "model.bin")
    adapters = _random_adapters(variables)
    merged = merge_encoder(blob, adapters)
    assert len(merged) == len(blob)
    assert merged != blob
    assert merge_encoder(blob, adapters) == merged  # deterministic
    changed = read_ctranslate2_bytes(merged)
    for name, value in variables.items():
        if name in changed and not any(name == key + "/weight" for key in adapters):
            assert np.array_equal(changed[name], value), name

    files = {p.name: merged if p.name == "model.bin" else p.read_bytes()
             for p in model_dir.iterdir() if p.is_file()}
    adapted = ctranslate2.models.Whisper(str(model_dir), compute_type="float32", files=files)
    samples = _samples()
    heard = encode(adapted, [samples])[0]
    base = encode(ctranslate2.models.Whisper(str(model_dir), compute_type="float32"),
                  [samples])[0]
    encoder = TableEncoder(variables, rank=4).eval()
    _with_adapters(encoder, adapters)
    with torch.no_grad():
        trained = encoder(torch.from_numpy(log_mel(samples)[None])).numpy()[0]
    assert np.abs(heard - trained).max() < 0.05  # float16 rounding of the merged weights
    assert np.abs(heard - base).max() > 0.5

    key = next(iter(adapters))
    with pytest.raises(ModelError):
        merge_encoder(blob, {key: (adapters[key][0][:-1], adapters[key][1])})
    with pytest.raises(ModelError):
        merge_encoder(blob, {"encoder/layer_9/ffn/linear_0": adapters[key]})


def read_ctranslate2_bytes(blob: bytes) -> dict[str, np.ndarray]:
    from referee.speech.hearing.whisper import ctranslate2_layout

    return {name: np.frombuffer(blob, dtype=dtype, count=int(np.prod(shape)),
                                offset=offset).reshape(shape)
            for name, (offset, dtype, shape) in ctranslate2_layout(blob).items()}


@pytest.mark.slow
def test_the_referee_hears_with_a_merged_encoder_and_the_pinned_file_stays(
        model_dir: Path, tmp_path: Path) -> None:
    before = hashlib.sha256((model_dir / "model.bin").read_bytes()).hexdigest()
    adapters = _random_adapters(read_ctranslate2(model_dir / "model.bin"), size=0.005)
    scorer = WhisperScorer(model_dir, encoder_adapter=adapters, compute="float32")
    plain = WhisperScorer(model_dir, compute="float32")
    assert scorer.encoder_adapted
    assert not plain.encoder_adapted
    samples = _samples()
    assert np.abs(scorer.encode(samples) - plain.encode(samples)).max() > 0.05
    assert hashlib.sha256((model_dir / "model.bin").read_bytes()).hexdigest() == before


def test_int8_packing_is_ctranslate2s_and_comes_back_within_half_a_step() -> None:
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((6, 5)).astype(np.float16)
    weight[2] = 0  # a row of zeros keeps a usable scale
    q, scale = quantise(weight)
    assert q.dtype == np.int8
    assert scale.shape == (6,)
    assert np.all(np.abs(q).max(axis=1)[[0, 1, 3, 4, 5]] == 127)
    back = unpack_weights({"w": q, "w@scale": scale, "b": weight[0]})
    assert np.all(np.abs(back["w"] - weight.astype(np.float32)) <= scale[:, None] / 2 + 1e-6)
    assert np.array_equal(back["b"], weight[0].astype(np.float32))


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Pack:
    folder = tmp_path_factory.mktemp("pack")
    build_pack(folder, 6, 11, model_dir, benchmark_sentences(ROOT), workers=1)
    return Pack.read(folder)


@pytest.mark.slow
def test_a_pack_holds_the_lines_in_training_voices_and_the_referees_tokens(
        pack: Pack, model_dir: Path) -> None:
    tokens = Tokens(model_dir / "tokenizer.json")
    assert len(pack) == 6
    for i, example in enumerate(pack.examples):
        engine, name, *_ = example["voice"].split(":")
        if engine != "referee":
            pitch = 50 if engine != "espeak" else int(example["voice"].split(":")[3])
            check_not_held_out(VoiceSpec(engine, name, 1.2, pitch))
        said = pack.utterance(i)
        assert len(said) == example["length"] > 1600
        assert np.abs(said).max() > 1000  # speech, not silence
        target = [pack.tokens[r] for r in pack.targets[i]]
        assert tokens.decode(target[:-1]).strip() == example["target"]
        assert target[-1] == tokens.end
        assert pack.tokens[pack.prompts[i][0]] == tokens.previous
    assert all(pack.tokens[r] != tokens.previous for r in pack.vocabulary)
    assert len(pack.babble) == 8
    assert len(pack.echo) == 12
    variables = pack.variables()
    shipped = read_ctranslate2(model_dir / "model.bin")
    for name in ("encoder/conv1/weight", "encoder/layer_0/ffn/linear_0/weight",
                 "decoder/layer_3/attention/linear_1/weight"):
        step = np.abs(shipped[name].astype(np.float32)).reshape(shipped[name].shape[0], -1).max(1)
        assert np.all(np.abs(variables[name] - shipped[name]).reshape(len(step), -1)
                      <= step[:, None] / 254 + 1e-3)
    rows = np.asarray(pack.tokens)
    assert np.abs(variables["decoder/embeddings/weight"]
                  - shipped["decoder/embeddings/weight"][rows]).max() < 0.02


@pytest.mark.slow
def test_whole_training_learns_reproducibly_and_the_referee_loads_what_it_writes(
        pack: Pack, tmp_path: Path) -> None:
    settings = WholeSettings(encoder_rank=4, decoder_rank=4, batch=3, epochs=9.0, warmup=1,
                             watch_every=6, rate=3e-3)
    whole, report = train_whole(pack, settings, workers=0, log=lambda _: None)
    assert report["steps"] == report["planned_steps"] == 15
    # Five lines, each in a new room every epoch, learnt: the loss falls.
    assert report["train_loss_last"] < 0.7 * report["train_loss_first"]
    exported = whole.export()
    assert any(k.startswith("encoder/") for k in exported)
    assert any(np.abs(v).max() > 0 for k, v in exported.items() if k.endswith("/lora_b")
               and k.startswith("encoder/"))

    out = tmp_path / "both.npz"
    args = [str(Path(pack.folder)), str(out), "--encoder-rank", "4", "--decoder-rank", "4",
            "--batch", "3", "--epochs", "2", "--warmup", "1", "--watch-every", "3",
            "--rate", "0.003", "--workers", "0", "--device", "cpu"]
    assert main(args) == 0
    again = tmp_path / "again.npz"
    assert main([*args[:1], str(again), *args[2:]]) == 0
    with np.load(out) as first, np.load(again) as second:  # the report holds the time taken
        assert sorted(first.files) == sorted(second.files)
        assert all(np.array_equal(first[k], second[k]) for k in first.files if k != "report")
    adapter = load(out)
    assert adapter.rank == 4
    assert len(adapter.encoder) == 16
    assert adapter.report["settings"]["encoder_rank"] == 4


@pytest.mark.slow
def test_the_decoder_can_stay_the_shipped_adapters_while_the_encoder_learns(
        pack: Pack) -> None:
    from referee.speech.hearing.adapter import ADAPTER

    shipped = load(ADAPTER)
    settings = WholeSettings(encoder_rank=4, start=str(ADAPTER),  # at its rank
                             train_decoder=False, batch=3, epochs=1.0, warmup=1, watch_every=3)
    whole, report = train_whole(pack, settings, workers=0, log=lambda _: None)
    assert report["steps"] == 2  # four lines to train on, three a batch
    exported = whole.export()
    a, b = shipped.layers[2]["ffn_in"]
    assert np.allclose(exported["decoder/layer_2/ffn/linear_0/lora_a"], a, atol=1e-3)
    assert np.allclose(exported["decoder/layer_2/ffn/linear_0/lora_b"], b, atol=1e-3)
    # The shipped decoder adapter knows these lines far better than the base decoder.
    assert report["loss_before"] < report["base_loss_before"]


def test_the_accelerator_side_needs_none_of_the_referees_runtime_parts() -> None:
    """What travels to an accelerator machine imports without CTranslate2, the
    audio devices, the voices or the screen (none of them is there)."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'ctranslate2', 'vosk', 'sounddevice', 'pyttsx3',\n"
        "                'starlette', 'uvicorn', 'segno', 'pocketsphinx', 'piper',\n"
        "                'kokoro_onnx', 'onnxruntime', 'playwright'}:\n"
        "            raise ImportError('not on the accelerator: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import referee.speech.training.whole\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_referee_train_pack_writes_a_pack_that_reads_back(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          model_dir: Path) -> None:
    from referee.cli import main as referee

    out = tmp_path / "pack"
    assert referee(["train", "pack", "--lines", "2", "--workers", "1", "--out", str(out)]) == 0
    assert "The pack is in" in capsys.readouterr().out
    assert len(Pack.read(out)) == 2
    with pytest.raises(SystemExit) as refused:
        referee(["train", "pack", "--lines", "0", "--out", str(out)])
    assert refused.value.code == 2
    assert "0 is not 1 or more" in capsys.readouterr().err


@pytest.mark.slow
def test_the_accelerator_script_trains_its_three_adapters(
        pack: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``scripts/gpu-ears.sh`` as a lent machine runs it, here on the CPU; the
    referee then hears with what it wrote."""
    import os

    from referee.games import matcher_for
    from referee.speech.hearing.adapter import ADAPTER, ADAPTER_ENV
    from referee.speech.hearing.recognizers import WhisperRecognizer, make_recognizer

    env = {**os.environ, "OUT": str(tmp_path), "PYTHON": sys.executable, "NO_WHEELS": "1"}
    result = subprocess.run(
        ["bash", "scripts/gpu-ears.sh", str(pack.folder), "--batch", "3", "--epochs", "1",
         "--warmup", "1", "--watch-every", "3"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:]
    decoder, both, encoder = (load(tmp_path / f"{name}.npz")
                              for name in ("decoder", "both", "encoder"))
    assert not decoder.encoder
    assert len(both.encoder) == len(encoder.encoder) == 16
    shipped = load(ADAPTER)
    a, b = shipped.layers[1]["qkv"]
    assert np.allclose(encoder.layers[1]["qkv"][0], a, atol=1e-3)
    assert np.allclose(encoder.layers[1]["qkv"][1], b, atol=1e-3)
    assert result.stdout.count('"planned_steps": 2') == 3

    phrases = matcher_for("race65", ["Ann", "Bob"]).phrases
    shipped_ears = make_recognizer(phrases)
    assert "(decoder, rank" in shipped_ears.describe()
    monkeypatch.setenv(ADAPTER_ENV, str(tmp_path / "encoder.npz"))
    ears = make_recognizer(phrases)
    assert isinstance(ears, WhisperRecognizer)
    assert ears.scorer.encoder_adapted
    assert f"(decoder and encoder, rank {shipped.rank}" in ears.describe()
    heard = ears.decode(ears.prepare(load_wav(FIXTURE.read_bytes(), str(FIXTURE))))
    assert heard.extra["model"] == "tiny.en+table"
