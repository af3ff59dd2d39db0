#!/usr/bin/env bash
# The whole test suite: lint, then types beside every test. Extra arguments go to pytest.
#   ./run test           everything, as CI runs it
#   ./run test --fast    lint, types, and the tests marked neither slow nor
#                        audio_server (pyproject.toml); kept under 90 s on two
#                        cores (docs/development.md has today's figures)
# The tests run on one worker per core (pytest-xdist), each test whole on one;
# with no arguments, those marked alone run afterwards, one process, nothing beside.
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

echo "== pytest"
# The tests that run in real time (a referee, a phone or a satellite: marked
# realtime, tests/conftest.py) form one group, run one after another on one
# worker while the other runs the rest: only --dist loadgroup honours groups.
# (Run as a lane of their own beside two niced workers, 2026-12-07, they
# missed their budgets in 3 of 5 fresh clones: docs/record/2026-12-07-lanes-and-groups.md.)
tests=0
if [ ${#selection[@]} -eq 0 ] && [ $# -eq 0 ]; then
    # The whole suite: the tests marked alone (hearing a move over the
    # referee's voice in real time: beside the other worker's CPU the echo
    # canceller lost the room in 3 of 3 fresh clones through a phone, and 1
    # of 10 runs through the room's microphone, 2026-12-07) run afterwards,
    # with the machine to themselves.
    "${pytest[@]}" -n auto --dist loadgroup -m "not alone" || tests=$?
    echo "== pytest: the tests that run alone"
    alone=0
    "${pytest[@]}" -m alone || alone=$?
    if [ "$tests" -eq 0 ] && [ "$alone" -ne 0 ]; then
        tests=$alone
    fi
else
    "${pytest[@]}" -n auto --dist loadgroup "${selection[@]}" "$@" || tests=$?
fi
echo "== mypy"
typed=0
wait "$mypy_pid" || typed=$?
cat "$out/types"
if [ "$tests" -ne 0 ] || [ "$typed" -ne 0 ]; then
    exit $(( tests != 0 ? tests : typed ))
fi
