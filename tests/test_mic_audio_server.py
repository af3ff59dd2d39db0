"""The microphone path for real: a PulseAudio server with a null sink.

The test starts its own PulseAudio daemon (installed by scripts/setup.sh),
plays a stream of spoken commands into the sink with ``paplay`` and lets
``referee hear --mic`` capture the sink's monitor through sounddevice and
PortAudio, exactly as it would a microphone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from benchmarks.fixtures import utterances
from referee.speech.audio import Audio
from tests.test_mic import stream_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("pulseaudio") is None or shutil.which("paplay") is None,
    reason="PulseAudio is not installed (scripts/setup.sh installs it)",
)


@pytest.fixture
def audio_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = tmp_path / "pulse-runtime"
    runtime.mkdir()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}
    subprocess.run(
        ["pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n",
         "--load=module-native-protocol-unix", "--load=module-null-sink sink_name=table",
         "--load=module-always-sink"],
        env=env, check=True, capture_output=True, timeout=30,
    )
    try:
        for _ in range(50):
            if subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        subprocess.run(["pactl", "set-default-source", "table.monitor"], env=env, check=True)
        yield env
    finally:
        subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True, timeout=30)


def test_spoken_commands_are_heard_live_through_an_audio_server(audio_server, tmp_path):
    cases = utterances()[:3]
    data, _ = stream_of(cases)
    wav = tmp_path / "table.wav"
    Audio(np.frombuffer(data, dtype="<i2").astype(np.int16)).write_wav(wav)
    listener = subprocess.Popen(
        [sys.executable, "-m", "referee", "hear", "--players", "Ann", "Bob", "--speaker", "Ann",
         "--mic"],
        env=audio_server, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        time.sleep(3)  # the recogniser loads and the stream opens
        subprocess.run(["paplay", str(wav)], env=audio_server, check=True, timeout=60)
        time.sleep(2)
    finally:
        listener.send_signal(signal.SIGINT)
        out, err = listener.communicate(timeout=30)
    heard = [json.loads(line) for line in out.splitlines()]
    assert [h["intent"] for h in heard] == [c.intent for c in cases], err
    assert "Traceback" not in err
