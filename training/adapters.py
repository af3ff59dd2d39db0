"""Adapters made into one, for training and measuring (not the player's package):
averaged (:func:`average`, ``./run train average``) or a new one stacked over
the one it was trained on (:func:`stack`, ``./run train ears --start``). Both
write the ranks side by side, so the referee applies the result as any
adapter (:mod:`referee.speech.hearing.adapter`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.hearing.adapter import PROJECTIONS, Adapter, AdapterError


def average(adapters: Sequence[Adapter],
            weights: Sequence[float] | None = None) -> tuple[dict[str, npt.NDArray[np.float16]],
                                                           dict[str, Any]]:
    """Adapters' changes averaged (a "model soup", Wortsman et al. 2022): what
    :func:`save` writes, and the report.

    Each projection's change is ``sum_i w_i A_i B_i``, written exactly as one
    adapter of the ranks side by side, ``A = [A_1 ... A_n]`` and ``B`` the
    ``w_i B_i`` stacked, so the referee applies it as any other (two adapters
    of rank 32 make one of rank 64). ``weights`` default to equal and must sum
    to 1. Adapters trained from the same base on different draws of the
    training set average well: two 12,000-line draws averaged had a lower loss
    on lines neither saw than either alone
    (docs/record/2026-11-28-adapters-averaged.md). The report lists each
    part's file, SHA-256, weight and report, and, under ``data``, every voice
    any part was trained on (so the check that no benchmark voice was trained
    on reads an average as any adapter).
    """
    if not adapters:
        raise AdapterError("Nothing to average: name at least one adapter.")
    weights = [1 / len(adapters)] * len(adapters) if weights is None else list(weights)
    if len(weights) != len(adapters) or min(weights) < 0 or abs(sum(weights) - 1) > 1e-6:
        raise AdapterError("The weights must be one per adapter, none negative, summing to 1.")
    if len({len(a.layers) for a in adapters}) != 1:
        raise AdapterError("Only adapters of the same model average.")
    arrays: dict[str, npt.NDArray[np.float16]] = {}
    for index in range(len(adapters[0].layers)):
        for name, ct2 in PROJECTIONS.items():
            key = f"decoder/layer_{index}/{ct2}"
            arrays[key + "/lora_a"] = np.concatenate(
                [a.layers[index][name][0] for a in adapters], axis=1).astype(np.float16)
            arrays[key + "/lora_b"] = np.concatenate(
                [a.layers[index][name][1] * w for a, w in zip(adapters, weights, strict=True)],
                axis=0).astype(np.float16)
    voices: dict[str, set[str]] = {}
    for adapter in adapters:
        for engine, names in adapter.report.get("data", {}).get("voices", {}).items():
            voices.setdefault(engine, set()).update(names)
    report = {"averaged": [{"file": a.path.name if a.path else "", "sha256": a.sha256,
                            "weight": w, "report": dict(a.report)}
                           for a, w in zip(adapters, weights, strict=True)],
              "data": {"voices": {engine: sorted(names) for engine, names in voices.items()}}}
    return arrays, report


def stack(start: Adapter, arrays: Mapping[str, npt.NDArray[Any]]
          ) -> dict[str, npt.NDArray[np.float16]]:
    """A new adapter trained over ``start`` (``arrays``, as :func:`save` takes
    them) and ``start`` as one adapter: each projection's change is the sum of
    both, written as their ranks side by side (rank 64 and rank 8 make one of
    rank 72), so the referee applies it as any other."""
    out: dict[str, npt.NDArray[np.float16]] = {}
    for index, layer in enumerate(start.layers):
        for name, ct2 in PROJECTIONS.items():
            key = f"decoder/layer_{index}/{ct2}"
            a, b = layer[name]
            out[key + "/lora_a"] = np.concatenate(
                [a, np.asarray(arrays[key + "/lora_a"], np.float32)], axis=1).astype(np.float16)
            out[key + "/lora_b"] = np.concatenate(
                [b, np.asarray(arrays[key + "/lora_b"], np.float32)], axis=0).astype(np.float16)
    return out
