#!/usr/bin/env bash
# The whole test suite: lint, types, then every test. Extra arguments go to pytest.
#   ./run test           everything, as CI runs it
#   ./run test --fast    lint, types, and the tests marked neither slow nor
#                        audio_server (pyproject.toml); kept under 90 s on two
#                        cores (docs/architecture.md has today's figures)
# The tests run on one worker per core (pytest-xdist), each test whole on one.
set -euo pipefail
cd "$(dirname "$0")/.."
selection=()
if [ "${1:-}" = "--fast" ]; then
    shift
    selection=(-m "not slow and not audio_server")
fi
echo "== ruff"
.venv/bin/ruff check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
# One thread a worker for the numerical libraries (Whisper's encoder, BLAS):
# two workers each spinning two threads on two cores ran the CPU-heavy tests
# three to four times slower.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
exec .venv/bin/python -m pytest -n auto --dist worksteal --durations=15 "${selection[@]}" "$@"
