"""The SHA-256 of Whisper's encoder output for 24 committed recordings, as
CTranslate2 computes it under this process's environment (issue #36, item 19;
docs/results.md, "Which CPU and backend"). Run it under two settings, or on two
machines, and compare the lines:

    .venv/bin/python scripts/encoder-hash.py
    CT2_USE_MKL=1 .venv/bin/python scripts/encoder-hash.py
    ONEDNN_MAX_CPU_ISA=AVX2 .venv/bin/python scripts/encoder-hash.py
    REFEREE_ENCODER_COMPUTE=float32 .venv/bin/python scripts/encoder-hash.py

``--features FILE`` saves the log-mel features (``.npy``) or, when the file
exists, encodes those instead of computing them, so that another machine's
encoder can be compared on exactly the same input; ``--save FILE`` keeps the
encoder's output for a closer look.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from referee.speech.audio import load_wav
from referee.speech.hearing.recognizers import find_whisper_model
from referee.speech.hearing.whisper import (
    RATE,
    WINDOW,
    encoder_compute,
    int8_kernels,
    log_mel,
)

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "audio_fixtures" / "piper-joe"
SETTINGS = ("CT2_USE_MKL", "ONEDNN_MAX_CPU_ISA", "CT2_FORCE_CPU_ISA", "REFEREE_ENCODER_COMPUTE")


def features() -> np.ndarray:
    """Every tenth committed recording, as the product's :func:`encode` prepares it."""
    out = []
    for path in sorted(FIXTURES.glob("*.wav"))[::10][:24]:
        samples = load_wav(path).samples.astype(np.float32) / 32768.0
        mel = log_mel(samples, max(WINDOW, math.ceil(len(samples) / RATE)))
        out.append(np.pad(mel, ((0, 0), (0, mel.shape[1] % 2))))
    return np.stack(out).astype(np.float32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=Path, help="features to save, or to encode")
    parser.add_argument("--save", type=Path, help="save the encoder's output (.npy)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import ctranslate2

    if args.features and args.features.exists():
        mels = np.load(args.features)
    else:
        mels = features()
        if args.features:
            np.save(args.features, mels)
    model = find_whisper_model()
    if model is None:
        raise SystemExit("Whisper's model is not installed (./run installs it).")
    encoder = ctranslate2.models.Whisper(str(model), device="cpu", compute_type=encoder_compute(),
                                         intra_threads=args.threads)
    encoded, seconds = [], []
    for mel in mels:
        started = time.perf_counter()
        view = ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[None]))
        encoded.append(np.asarray(encoder.encode(view, to_cpu=True))[0])
        seconds.append(time.perf_counter() - started)
    output = np.stack(encoded).astype(np.float32)
    if args.save:
        np.save(args.save, output)
    print(json.dumps({
        "sha256": hashlib.sha256(output.tobytes()).hexdigest()[:16],
        "compute": encoder_compute(), "int8_kernels": int8_kernels() or "unknown",
        "threads": args.threads, "p50_ms": round(1000 * float(np.median(seconds)), 1),
        "settings": {k: os.environ[k] for k in SETTINGS if k in os.environ},
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
