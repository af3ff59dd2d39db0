"""Shared fixtures. A real audio server for tests: PulseAudio with a null sink called "table".

Whatever is played into the sink (``paplay``, or the referee's own voice
through sounddevice) comes out of its monitor, which is the default input:
the microphone path runs for real, room echo included.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Games played by the tests keep their logs out of the repository (subprocesses
# inherit this too).
os.environ.setdefault("REFEREE_LOGS", tempfile.mkdtemp(prefix="referee-test-logs-"))

needs_audio_server = pytest.mark.skipif(
    shutil.which("pulseaudio") is None or shutil.which("paplay") is None,
    reason="PulseAudio is not installed (scripts/setup.sh installs it)",
)


def start_audio_server(env: dict[str, str]) -> None:
    """Start PulseAudio with the null sink "table" whose monitor is the default input."""
    subprocess.run(
        ["pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n",
         "--load=module-native-protocol-unix", "--load=module-null-sink sink_name=table",
         "--load=module-always-sink"],
        env=env, check=True, capture_output=True, timeout=30,
    )
    for _ in range(50):
        if subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    subprocess.run(["pactl", "set-default-source", "table.monitor"], env=env, check=True)


def stop_audio_server(env: dict[str, str]) -> None:
    subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True, timeout=30)


@pytest.fixture
def audio_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = tmp_path / "pulse-runtime"
    runtime.mkdir()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}
    start_audio_server(env)
    try:
        yield env
    finally:
        stop_audio_server(env)
