"""Moonshine's decoder in NumPy, read from its ``.ort`` file, for an adapter.

ONNX Runtime runs Moonshine as shipped (:mod:`referee.speech.hearing.moonshine`);
an adapter trained for the table (``./run train moonshine``,
:mod:`training.moonshine`) changes the decoder's projections, which the
int8 ``.ort`` file cannot take. So the decoder is also written here, as
Whisper's is (:mod:`referee.speech.hearing.decoder`):

* :func:`read_decoder` reads the merged decoder's weights out of the
  ``.ort`` flatbuffer (ONNX Runtime's own Python tools read it) and
  dequantizes them, each under the name of its role in the Hugging Face
  model (``layers.0.self_attn.q_proj.weight``, ``proj_out.weight``, ...):
  every matrix as ``x @ W``.
* :class:`NumpyDecoder` is one step of the decoder for a batch of rows, with
  the same cache (``past_key_values.N.decoder.key`` ...) as the ONNX session,
  so the grammar search runs on either. Pre-norm layers (LayerNorm without
  bias), causal self-attention with rotary embeddings on the first
  :data:`ROTARY` of each head's 36 dimensions (pairs interleaved), cross-
  attention over the encoded audio, a gated SiLU feed-forward.
* :func:`with_adapter` adds an adapter's low-rank changes ``A @ B`` to the
  weights they change.

Tested equal to ONNX Runtime's decoder (the same best sentence; log-
probabilities within the int8 activations' rounding): ``tests/test_moonshine.py``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.hearing.whisper_files import ModelError

Floats = npt.NDArray[np.float32]

#: Moonshine tiny's decoder: width, heads (of 36 dimensions), layers, and the
#: dimensions of each head that turn with the position.
WIDTH, HEADS, LAYERS, ROTARY = 288, 8, 6, 32
HEAD = WIDTH // HEADS
#: The projections an adapter may change, in each layer.
PROJECTIONS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
               "encoder_attn.q_proj", "encoder_attn.k_proj", "encoder_attn.v_proj",
               "encoder_attn.o_proj", "mlp.fc1", "mlp.fc2")
_TYPES: dict[int, Any] = {1: np.float32, 2: np.uint8, 3: np.int8, 7: np.int64}


def _tensors(graph: Any) -> dict[str, npt.NDArray[Any]]:
    found: dict[str, npt.NDArray[Any]] = {}
    for i in range(graph.InitializersLength()):
        tensor = graph.Initializers(i)
        dtype = _TYPES.get(tensor.DataType())
        if dtype is None or tensor.RawDataIsNone():
            continue
        dims = [tensor.Dims(j) for j in range(tensor.DimsLength())]
        raw = tensor.RawDataAsNumpy().tobytes()
        found[tensor.Name().decode()] = np.frombuffer(raw, dtype).reshape(dims)
    return found


def read_decoder(path: Path) -> dict[str, Floats]:
    """The weights of Moonshine's merged decoder (``decoder_model_merged.ort``),
    dequantized to float32, by role; :class:`ModelError` if the file is not
    one."""
    from onnxruntime.tools.ort_format_model.ort_flatbuffers_py import fbs

    try:
        data = path.read_bytes()
        session = fbs.InferenceSession.InferenceSession.GetRootAsInferenceSession(data, 0)
        graph = session.Model().Graph()
        tensors = _tensors(graph)
        branches = [graph.Nodes(i).Attributes(a).G()
                    for i in range(graph.NodesLength())
                    for a in range(graph.Nodes(i).AttributesLength())]
        subgraphs = [g for g in branches if g is not None]
        for sub in subgraphs:
            tensors.update(_tensors(sub))
        weights: dict[str, Floats] = {}
        for sub in subgraphs:
            for i in range(sub.NodesLength()):
                _read_node(sub.Nodes(i), tensors, weights)
        weights["embed_tokens.weight"] = _dequantized(
            tensors, "model.decoder.embed_tokens.weight_merged_0_quantized",
            "model.decoder.embed_tokens.weight_merged_0_scale",
            "model.decoder.embed_tokens.weight_merged_0_zero_point")
    except (OSError, KeyError, ValueError, IndexError, TypeError, struct.error) as error:
        raise ModelError(f"{path} is not Moonshine's decoder ({error}).") from error
    missing = [k for k in _expected() if k not in weights]
    if missing:
        raise ModelError(f"{path} is not Moonshine tiny's decoder (no {missing[0]}).")
    return weights


def _read_node(node: Any, tensors: Mapping[str, npt.NDArray[Any]],
               weights: dict[str, Floats]) -> None:
    """One node's weights, if it is a projection or a LayerNorm of the decoder:
    its role from the name of what it computes."""
    kind = node.OpType().decode()
    inputs = [node.Inputs(j).decode() for j in range(node.InputsLength())]
    out = node.Outputs(0).decode()
    if kind == "LayerNormalization":
        role = out.split("/LayerNormalization")[0].removeprefix("/model/decoder/")
        weights[role.replace("/", ".") + ".weight"] = tensors[inputs[1]].astype(np.float32)
        return
    if kind == "MatMulIntegerToFloat":  # (x, W, x scale, W scale, x zero, W zero[, bias])
        weight, scale, zero, bias = inputs[1], inputs[3], inputs[5], inputs[6:7]
    elif kind == "DynamicQuantizeMatMul":  # (x, W, W scale, W zero[, bias])
        weight, scale, zero, bias = inputs[1], inputs[2], inputs[3], inputs[4:5]
    else:
        return
    role = "proj_out" if out == "logits" else (
        out.split("/MatMul")[0].split("/Add")[0].removeprefix("/model/decoder/").replace("/", "."))
    weights[role + ".weight"] = _dequantized(tensors, weight, scale, zero)
    if bias and bias[0]:
        weights[role + ".bias"] = tensors[bias[0]].astype(np.float32)


def _dequantized(tensors: Mapping[str, npt.NDArray[Any]], name: str, scale: str,
                 zero: str) -> Floats:
    values: Floats = ((tensors[name].astype(np.float32) - tensors[zero].astype(np.float32))
                      * tensors[scale].astype(np.float32))
    return values


def _expected() -> list[str]:
    layer = [*(p + ".weight" for p in PROJECTIONS), "mlp.fc1.bias", "mlp.fc2.bias",
             "input_layernorm.weight", "post_attention_layernorm.weight",
             "final_layernorm.weight"]
    return ["embed_tokens.weight", "norm.weight", "proj_out.weight",
            *(f"layers.{i}.{k}" for i in range(LAYERS) for k in layer)]


def adapter_key(layer: int, projection: str, part: str) -> str:
    """An adapter file's name for one projection's ``A`` or ``B``.

    >>> adapter_key(0, "self_attn.q_proj", "A")
    'layers_0_self_attn_q_proj_A'
    """
    return f"layers_{layer}_{projection.replace('.', '_')}_{part}"


def with_adapter(weights: Mapping[str, Floats], adapter: Mapping[str, Floats]) -> dict[str, Floats]:
    """The weights with an adapter's changes added (``W + A @ B`` for every
    projection it has); :class:`ModelError` if its shapes do not fit."""
    changed = dict(weights)
    for layer in range(LAYERS):
        for projection in PROJECTIONS:
            a, b = adapter_key(layer, projection, "A"), adapter_key(layer, projection, "B")
            if a not in adapter or b not in adapter:
                continue
            key = f"layers.{layer}.{projection}.weight"
            change = np.asarray(adapter[a], np.float32) @ np.asarray(adapter[b], np.float32)
            if change.shape != weights[key].shape:
                raise ModelError(f"The adapter's {key} is {change.shape}, not "
                                 f"{weights[key].shape}: not an adapter for this model.")
            changed[key] = (weights[key] + change).astype(np.float32)
    return changed


def load_adapter(path: Path) -> dict[str, Floats]:
    """An adapter file's ``A`` and ``B`` of each projection it changes."""
    try:
        with np.load(path) as stored:
            return {k: np.asarray(stored[k], np.float32) for k in stored.files
                    if k.endswith(("_A", "_B"))}
    except (OSError, ValueError) as error:
        raise ModelError(f"{path} is no Moonshine adapter ({error}).") from error


def _layer_norm(x: Floats, weight: Floats) -> Floats:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    out: Floats = centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + 1e-5) * weight
    return out


def _softmax(x: Floats) -> Floats:
    e = np.exp(x - x.max(-1, keepdims=True))
    out: Floats = e / e.sum(-1, keepdims=True)
    return out


def _heads(x: Floats) -> Floats:
    """(rows, steps, width) -> (rows, heads, steps, 36)."""
    out: Floats = x.reshape(x.shape[0], x.shape[1], HEADS, HEAD).transpose(0, 2, 1, 3)
    return out


_FREQUENCIES = (1.0 / 10000.0 ** (np.arange(0, ROTARY, 2, dtype=np.float32) / ROTARY)).astype(
    np.float32)


def rotated(x: Floats, position: int) -> Floats:
    """Rotary embedding at ``position`` on the first :data:`ROTARY` dimensions
    of each head (pairs of neighbours turned together), the rest as it is."""
    angles = position * _FREQUENCIES
    cos, sin = np.repeat(np.cos(angles), 2), np.repeat(np.sin(angles), 2)
    turning, rest = x[..., :ROTARY], x[..., ROTARY:]
    swapped = np.stack((-turning[..., 1::2], turning[..., 0::2]), -1).reshape(turning.shape)
    out: Floats = np.concatenate([turning * cos + swapped * sin, rest], -1).astype(np.float32)
    return out


class NumpyDecoder:
    """One step of Moonshine's decoder in NumPy, for a batch of rows, with the
    ONNX session's cache (see the module)."""

    def __init__(self, weights: Mapping[str, Floats]) -> None:
        self.w = dict(weights)
        self.scale = np.float32(1.0 / np.sqrt(HEAD))

    def step(self, tokens: Sequence[int], cache: Mapping[str, Floats], memory: Floats,
             first: bool) -> tuple[Floats, dict[str, Floats]]:
        """The logits after each row's next token, and the grown cache.
        ``memory``: the encoded audio ([1, frames, width]); ``first``: the
        cross-attention's keys and values are made now (else taken from
        ``cache``)."""
        w, rows = self.w, len(tokens)
        x: Floats = w["embed_tokens.weight"][np.asarray(tokens)][:, None, :]
        position = cache["past_key_values.0.decoder.key"].shape[2]
        grown: dict[str, Floats] = {}
        for i in range(LAYERS):
            p, past = f"layers.{i}.", f"past_key_values.{i}."
            h = _layer_norm(x, w[p + "input_layernorm.weight"])
            q = rotated(_heads(h @ w[p + "self_attn.q_proj.weight"]), position)
            k = np.concatenate([cache[past + "decoder.key"],
                                rotated(_heads(h @ w[p + "self_attn.k_proj.weight"]), position)], 2)
            v = np.concatenate([cache[past + "decoder.value"],
                                _heads(h @ w[p + "self_attn.v_proj.weight"])], 2)
            grown[past + "decoder.key"], grown[past + "decoder.value"] = k, v
            attended: Floats = _softmax(q @ k.transpose(0, 1, 3, 2) * self.scale) @ v
            x = x + attended.transpose(0, 2, 1, 3).reshape(rows, 1, WIDTH) @ w[
                p + "self_attn.o_proj.weight"]
            h = _layer_norm(x, w[p + "post_attention_layernorm.weight"])
            q = _heads(h @ w[p + "encoder_attn.q_proj.weight"])
            ck: Floats
            cv: Floats
            if first:
                shape = (rows, HEADS, memory.shape[1], HEAD)
                ck = np.broadcast_to(_heads(memory @ w[p + "encoder_attn.k_proj.weight"]), shape)
                cv = np.broadcast_to(_heads(memory @ w[p + "encoder_attn.v_proj.weight"]), shape)
            else:
                ck, cv = cache[past + "encoder.key"], cache[past + "encoder.value"]
            grown[past + "encoder.key"], grown[past + "encoder.value"] = ck, cv
            attended = _softmax(q @ ck.transpose(0, 1, 3, 2) * self.scale) @ cv
            x = x + attended.transpose(0, 2, 1, 3).reshape(rows, 1, WIDTH) @ w[
                p + "encoder_attn.o_proj.weight"]
            h = _layer_norm(x, w[p + "final_layernorm.weight"])
            u = h @ w[p + "mlp.fc1.weight"] + w[p + "mlp.fc1.bias"]
            value, gate = np.split(u, 2, axis=-1)
            gated: Floats = (gate / (1.0 + np.exp(-gate)) * value).astype(np.float32)
            x = x + gated @ w[p + "mlp.fc2.weight"] + w[p + "mlp.fc2.bias"]
        logits: Floats = (_layer_norm(x[:, -1], w["norm.weight"]) @ w["proj_out.weight"]).astype(
            np.float32)
        return logits, grown
