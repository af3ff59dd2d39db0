"""Shared fixtures. A real audio server for tests: PulseAudio with a null sink called "table".

Whatever is played into the sink (``paplay``, or the referee's own voice
through sounddevice) comes out of its monitor, which is the default input:
the microphone path runs for real, room echo included.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.audioserver import audio_server as running_audio_server
from harness.audioserver import available

# Games played by the tests keep their logs out of the repository (subprocesses
# inherit this too).
os.environ.setdefault("REFEREE_LOGS", tempfile.mkdtemp(prefix="referee-test-logs-"))



def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the audio server is marked so (``-m "not audio_server"``
    leaves it out), and skipped, saying why, where PulseAudio is missing."""
    missing = pytest.mark.skip(reason="PulseAudio is not installed (scripts/setup.sh "
                                      "installs it)")
    for item in items:
        if "audio_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.audio_server)
        if item.get_closest_marker("audio_server") and not available():
            item.add_marker(missing)


@pytest.fixture
def audio_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    with running_audio_server(tmp_path) as env:
        yield env
