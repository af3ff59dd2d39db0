#!/usr/bin/env bash
# The prepared run of the encoder's adaptation on an accelerator machine
# (docs/hearing.md, "Adapting the encoder"). Here, first:
#   python -m referee.speech.training.pack .gpu/pack 4200   # the pack (~15 min)
#   and the wheels the machine lacks in .whl/ (soundfile, cffi, pycparser, rapidfuzz)
# then run this there with .gpu and .whl carried. Three adapters from the same
# pack, steps and seed: the decoder's alone, the encoder's with the decoder's,
# and the encoder's under the shipped decoder adapter; each file lands in $OUT.
set -euo pipefail
pack=${1:-.gpu/pack}
out=${OUT:-cache/ears/accelerated}
budget=${BUDGET:-150}
python=${PYTHON:-python3}
mkdir -p "$out"
if [ -d .whl ] && [ -z "${NO_WHEELS:-}" ]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1
# One BLAS thread per process: fifteen data loader workers each starting
# sixteen threads for their log-mel products starved the accelerator
# (2026-11-27: about 50 examples a second, a fifth of the planned steps;
# the likely cause, not yet measured apart).
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
workers=$(( $(nproc) > 2 ? $(nproc) - 1 : 1 ))
nvidia-smi -L 2>/dev/null || true
whole() { "$python" -m referee.speech.training.whole "$pack" "$out/$1.npz" \
    --workers "$workers" --budget "$budget" "${@:2}" 2>&1 | tr '\r' '\n' | grep -v '^\[#*-*\] ' ; }
whole decoder --encoder-rank 0 "${@:2}"
whole both "${@:2}"
whole encoder --start referee/speech/hearing/table_adapter.npz --train-decoder no "${@:2}"
ls -la "$out"
