"""A real audio server for tests and benchmarks: PulseAudio with a null sink "table".

Whatever is played into the sink (``paplay``, or the referee's own voice
through sounddevice) comes out of its monitor, which is the default input, so
the microphone path runs for real on a machine without a sound card.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt

#: A 20 ms frame of a recording above this level (dBFS) is sound.
LOUD_DB = -40.0
FRAME_SECONDS = 0.02


def available() -> bool:
    return shutil.which("pulseaudio") is not None and shutil.which("paplay") is not None


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


def portaudio_sees() -> bool:
    """Restart PortAudio in this process and whether it now has a default
    output, which is the server's (this process's environment must point at
    it: ``audio_server(..., this_process=True)``). Not at once on a busy
    machine: ALSA's PulseAudio plugin can miss a server that has only just
    started, and the restart then lists no device at all (CI, 2026-12-06:
    "Error querying device -1" after a restart that returned); wait on it
    with ``until(portaudio_sees, ...)``."""
    from referee.speech.portaudio import restart_portaudio

    if not restart_portaudio():
        return False
    import sounddevice

    try:
        sounddevice.query_devices(None, kind="output")
    except Exception:  # PortAudioError: no default output yet
        return False
    return True


def stop_audio_server(env: dict[str, str]) -> None:
    subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True, timeout=30)


@contextmanager
def audio_server(directory: Path, *, this_process: bool = False) -> Iterator[dict[str, str]]:
    """A running server whose files live in ``directory``; yields the environment
    that reaches it. With ``this_process`` the process's own environment points
    at it too (for sounddevice here), and is put back afterwards."""
    runtime = directory / "pulse-runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    mine = {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(directory)}
    env = {**os.environ, **mine}
    old = {k: os.environ.get(k) for k in mine}
    if this_process:
        os.environ.update(mine)
    start_audio_server(env)
    try:
        yield env
    finally:
        stop_audio_server(env)
        if this_process:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def loud_frames(path: Path) -> npt.NDArray[np.bool_]:
    """Which 20 ms frames of a WAV recording are sound (over :data:`LOUD_DB`),
    also while ``parecord`` is still writing it (its sizes are written only
    when it ends: the samples are read from its data chunk to the end of the
    file, whole frames only)."""
    data = path.read_bytes() if path.exists() else b""
    fmt, chunk = data.find(b"fmt ", 12), data.find(b"data", 12)
    if fmt < 0 or chunk < 0 or len(data) < fmt + 16:
        return np.zeros(0, bool)
    channels, rate = struct.unpack_from("<HI", data, fmt + 10)
    pcm = data[chunk + 8:]
    whole = len(pcm) // (2 * channels) * 2 * channels
    mono = np.frombuffer(pcm[:whole], "<i2").reshape(-1, channels).astype(np.float64).mean(axis=1)
    frame = int(rate * FRAME_SECONDS)
    frames = mono[: len(mono) // frame * frame].reshape(-1, frame)
    levels = np.sqrt((frames ** 2).mean(axis=1)) if len(frames) else np.zeros(0)
    return np.asarray(levels > 32768 * 10 ** (LOUD_DB / 20))


def loud_seconds(path: Path) -> float:
    """How many seconds of a recording are sound (see :func:`loud_frames`)."""
    return float(loud_frames(path).sum() * FRAME_SECONDS)


def said_and_quiet(path: Path, sound: float, quiet: float) -> bool:
    """Whether a recording being made holds at least ``sound`` seconds of
    sound and has been quiet for ``quiet`` seconds since: what was being
    said into it has been said (a wait on the room, not on the clock: a busy
    machine says it later)."""
    loud = loud_frames(path)
    if loud.sum() * FRAME_SECONDS < sound:
        return False
    last = int(np.flatnonzero(loud)[-1])
    return (len(loud) - 1 - last) * FRAME_SECONDS >= quiet
