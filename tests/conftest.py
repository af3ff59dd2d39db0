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

from benchmarks.audioserver import audio_server as running_audio_server
from benchmarks.audioserver import available

# Games played by the tests keep their logs out of the repository (subprocesses
# inherit this too).
os.environ.setdefault("REFEREE_LOGS", tempfile.mkdtemp(prefix="referee-test-logs-"))

needs_audio_server = pytest.mark.skipif(
    not available(), reason="PulseAudio is not installed (scripts/setup.sh installs it)"
)


@pytest.fixture
def audio_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    with running_audio_server(tmp_path) as env:
        yield env
