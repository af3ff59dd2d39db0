#!/usr/bin/env bash
# The whole test suite: lint, then types beside every test. Extra arguments go to pytest.
#   ./run test           everything, as CI runs it
#   ./run test --fast    lint, types, and the tests marked neither slow nor
#                        audio_server (pyproject.toml); kept under 90 s on two
#                        cores (docs/development.md has today's figures)
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
# mypy runs beside the tests (much of the suite waits in real time: games
# played aloud, browsers, referee processes), at a lower priority so that it
# never starves a test that listens in real time, and its report is printed
# after theirs; either failing fails the run.
types=$(mktemp)
trap 'rm -f "$types"' EXIT
nice -n 10 .venv/bin/mypy >"$types" 2>&1 &
mypy_pid=$!
echo "== pytest"
# One thread a worker for the numerical libraries (Whisper's encoder, BLAS):
# two workers each spinning two threads on two cores ran the CPU-heavy tests
# three to four times slower.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
tests=0
# The tests that run in real time form one group, run one after another on one
# worker (tests/conftest.py): only --dist loadgroup honours groups.
.venv/bin/python -m pytest -n auto --dist loadgroup --durations=15 "${selection[@]}" "$@" \
    || tests=$?
echo "== mypy"
typed=0
wait "$mypy_pid" || typed=$?
cat "$types"
if [ "$tests" -ne 0 ] || [ "$typed" -ne 0 ]; then
    exit $(( tests != 0 ? tests : typed ))
fi
