"""How the suite itself runs (scripts/test.sh, tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: A suite in small: a module-scoped fixture that records the worker that set
#: it up, tests grouped by a mark (as the trained adapter's tests are) and by
#: a mark a conftest adds as tests/conftest.py adds the real-time tests' (first:
#: pytest-xdist reads the groups in a hook of its own), and tests of no group.
SUITE = {
    "conftest.py": '''
import pytest

@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist reads the groups)
def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.endswith("_live"):
            item.add_marker(pytest.mark.xdist_group("realtime"))
''',
    "test_grouped.py": '''
import os
import time
from pathlib import Path

import pytest

TRAINED = pytest.mark.xdist_group("training")
LOG = Path(__file__).with_name("log")

def _note(what):
    with LOG.open("a") as log:
        log.write(f"{what} {os.environ['PYTEST_XDIST_WORKER']}\\n")

@pytest.fixture(scope="module")
def trained():
    _note("trained")

@TRAINED
def test_a(trained): _note("training"); time.sleep(0.2)
def test_b(): time.sleep(0.2)
@TRAINED
def test_c(trained): _note("training"); time.sleep(0.2)
def test_d_live(): _note("realtime"); time.sleep(0.2)
def test_e(): time.sleep(0.2)
def test_f_live(): _note("realtime"); time.sleep(0.2)
@TRAINED
def test_g(trained): _note("training"); time.sleep(0.2)
def test_h(): time.sleep(0.2)
''',
}


@pytest.mark.slow
def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path: Path) -> None:
    """``--dist loadgroup`` keeps a group's tests on one worker, so a module
    fixture they share (the trained adapter, 84 s of CPU) is set up once;
    pytest 9.2 with pytest-xdist 3.8 silently spread them over both
    (pytest-dev/pytest-xdist#1386: pyproject.toml keeps pytest below it)."""
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
         "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    workers = {what: {worker for w, worker in notes if w == what}
               for what in ("trained", "training", "realtime")}
    assert [w for w, _ in notes].count("trained") == 1, notes  # set up once
    assert len(workers["training"]) == 1, notes
    assert len(workers["realtime"]) == 1, notes
