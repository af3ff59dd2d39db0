"""Shared fixtures. A real audio server for tests: PulseAudio with a null sink called "table".

Whatever is played into the sink (``paplay``, or the referee's own voice
through sounddevice) comes out of its monitor, which is the default input:
the microphone path runs for real, room echo included.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.audioserver import audio_server as running_audio_server
from harness.audioserver import available

# Games played by the tests keep their logs out of the repository (subprocesses
# inherit this too), in a folder the process that made it removes as it ends.
if "REFEREE_LOGS" not in os.environ:
    os.environ["REFEREE_LOGS"] = tempfile.mkdtemp(prefix="referee-test-logs-")
    atexit.register(shutil.rmtree, os.environ["REFEREE_LOGS"], ignore_errors=True)



#: Fixtures that run a referee, a phone or a satellite in real time.
REAL_TIME_FIXTURES = frozenset({"audio_server", "game", "satellite"})


@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist reads the groups: tests/test_suite.py)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the audio server is marked so (``-m "not audio_server"``
    leaves it out), and skipped, saying why, where PulseAudio is missing.

    A test that runs in real time (marked ``realtime``, or using one of
    :data:`REAL_TIME_FIXTURES` in a module that plays live) joins one
    pytest-xdist group: ``--dist loadgroup`` (scripts/test.sh) runs them one
    after another on one worker while the other runs the rest, so two
    referees decoding and speaking in real time never share the two cores
    (#84: side by side, each missed its fixed budgets now and then)."""
    missing = pytest.mark.skip(reason="PulseAudio is not installed (scripts/setup.sh "
                                      "installs it)")
    for item in items:
        callspec = getattr(item, "callspec", None)  # (a parameter named "game" is no fixture)
        fixtures = set(getattr(item, "fixturenames", ())) - set(
            callspec.params if callspec is not None else ())
        if "audio_server" in fixtures:
            item.add_marker(pytest.mark.audio_server)
        if item.get_closest_marker("audio_server") and not available():
            item.add_marker(missing)
        if fixtures & REAL_TIME_FIXTURES or item.get_closest_marker("realtime"):
            item.add_marker(pytest.mark.realtime)
            item.add_marker(pytest.mark.xdist_group("realtime"))


@pytest.fixture
def audio_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    with running_audio_server(tmp_path) as env:
        yield env
