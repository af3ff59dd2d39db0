#!/usr/bin/env bash
# The whole test suite: lint, types, then every test. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff"
.venv/bin/ruff check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/python -m pytest "$@"
