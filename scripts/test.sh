#!/usr/bin/env bash
# The whole test suite: lint, then types beside every test. Extra arguments go to pytest.
#   ./run test           everything, as CI runs it
#   ./run test --fast    lint, types, and the tests marked neither slow nor
#                        audio_server (pyproject.toml); kept under 90 s on two
#                        cores (docs/development.md has today's figures)
#   ./run test ARGS      pytest ARGS on one worker per core (a file, -k, -m ...)
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
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
nice -n 19 .venv/bin/mypy >"$out/types" 2>&1 &
mypy_pid=$!
# One thread a process for the numerical libraries (Whisper's encoder, BLAS):
# two workers each spinning two threads on two cores ran the CPU-heavy tests
# three to four times slower.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
pytest=(.venv/bin/python -m pytest --durations=15)

# A lane's status: 5 is "no test selected", which a lane may well be.
passed() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }

tests=0
if [ ${#selection[@]} -eq 0 ] && [ $# -eq 0 ]; then
    # The whole suite in two lanes at once. The tests marked realtime (a
    # referee, a phone or a satellite playing in real time: tests/conftest.py)
    # run one after another in one process at normal priority: they wait on
    # the clock most of the time (45 % of a core) and keep their budgets only
    # when no other referee shares the CPU with them. The rest run on one
    # worker per core, niced, in the time the real-time tests leave free.
    echo "== pytest: the real-time tests, one at a time, beside the rest (printed after them)"
    "${pytest[@]}" -n 0 -m realtime >"$out/realtime" 2>&1 &
    realtime_pid=$!
    echo "== pytest: the rest"
    nice -n 19 "${pytest[@]}" -n auto --dist loadgroup -m "not realtime" || tests=$?
    realtime=0
    wait "$realtime_pid" || realtime=$?
    echo "== pytest: the real-time tests"
    cat "$out/realtime"
    if passed "$tests" && ! passed "$realtime"; then
        tests=$realtime
    fi
    if passed "$tests"; then
        tests=0
    fi
else
    echo "== pytest"
    # Tests that run in real time form one group, run one after another on one
    # worker (tests/conftest.py): only --dist loadgroup honours groups.
    "${pytest[@]}" -n auto --dist loadgroup "${selection[@]}" "$@" || tests=$?
fi
echo "== mypy"
typed=0
wait "$mypy_pid" || typed=$?
cat "$out/types"
if [ "$tests" -ne 0 ] || [ "$typed" -ne 0 ]; then
    exit $(( tests != 0 ? tests : typed ))
fi
