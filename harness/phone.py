"""A player's phone on the table, for tests and benchmarks: it hears the room
through a real audio server and its player close up, and streams what it
hears to the player's seat page microphone over a real WebSocket.

The room is the audio server's null sink (``harness.audioserver``): the
referee's voice, played through the real speaker class, and any recording
played into it with ``paplay``. The phone records the sink's monitor with
``parec``, puts it through a room's impulse response (the loudspeaker a
metre or two away: a delay and a 0.3 s reverberant tail, its energy kept)
at ``room_gain``,
adds what its player says into it (:meth:`Phone.say`: close up, so far
louder), and sends 40 ms frames of 16 kHz PCM, as the seat page does,
``latency`` seconds after it heard them (capture, the page, Wi-Fi), with a
little jitter.
"""

from __future__ import annotations

import contextlib
import queue
import random
import subprocess
import threading
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.room import room
from referee.speech.audio import RATE, Audio

#: 40 ms, as the seat page sends.
FRAME = RATE // 25
#: Samples of the room's impulse response (see ``benchmarks.echo.room``).
RESPONSE = int(0.3 * RATE)


class Phone:
    """One phone: start it, let its player :meth:`say` things, close it."""

    def __init__(self, url: str, env: dict[str, str], room_gain: float,
                 latency: float = 0.2, jitter: float = 0.03, seed: int = 0) -> None:
        self.url = url
        self.env = env
        self.room_gain = room_gain
        self.latency = latency
        self.jitter = jitter
        self.rng = random.Random(seed)
        response = room(np.random.default_rng(seed))
        self.response = response / np.sqrt(np.sum(response**2))  # the room's gain is 1
        self._history = np.zeros(RESPONSE, np.float64)
        self._own: queue.Queue[tuple[npt.NDArray[np.float64], threading.Event]] = queue.Queue()
        self._speaking: tuple[npt.NDArray[np.float64], threading.Event] | None = None
        self._frames: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
        self._stopped = threading.Event()
        self._record: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self.closed_because: str | None = None
        self._stack = contextlib.ExitStack()

    def start(self) -> None:
        from websockets.sync.client import connect

        self._socket: Any = self._stack.enter_context(connect(self.url))
        self._record = subprocess.Popen(
            ["parec", "--raw", "--format=s16le", f"--rate={RATE}", "--channels=1",
             "--latency-msec=20", "-d", "table.monitor"],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._threads = [threading.Thread(target=self._hear, daemon=True),
                         threading.Thread(target=self._send, daemon=True)]
        for thread in self._threads:
            thread.start()

    def say(self, audio: Audio, gain: float = 1.0) -> None:
        """The player says ``audio`` into the phone (times ``gain``); returns
        once it has been said."""
        done = threading.Event()
        self._own.put((audio.samples.astype(np.float64) * gain, done))
        done.wait(len(audio.samples) / RATE + 10.0)

    def close(self) -> None:
        self._stopped.set()
        if self._record is not None:
            self._record.kill()
            self._record.wait(timeout=5)
        self._frames.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        with contextlib.suppress(Exception):  # already closed by the server
            self._stack.close()

    def _hear(self) -> None:
        """Record the room, a frame at a time, and add the player's own voice."""
        assert self._record is not None
        assert self._record.stdout is not None
        n = 1 << (RESPONSE + FRAME).bit_length()
        spectrum = np.fft.rfft(self.response, n)
        while not self._stopped.is_set():
            data = self._record.stdout.read(FRAME * 2)
            if len(data) < FRAME * 2:
                return
            heard = time.monotonic()
            block = np.frombuffer(data, "<i2").astype(np.float64)
            x = np.concatenate([self._history, block])
            self._history = x[-RESPONSE:]
            roomed = np.fft.irfft(np.fft.rfft(x, n) * spectrum, n)[RESPONSE : RESPONSE + FRAME]
            mixed = roomed * self.room_gain + self._own_frame()
            out = np.clip(np.round(mixed), -32768, 32767).astype("<i2").tobytes()
            self._frames.put((heard + self.latency + self.rng.uniform(0, self.jitter), out))

    def _own_frame(self) -> npt.NDArray[np.float64]:
        out = np.zeros(FRAME)
        filled = 0
        while filled < FRAME:
            if self._speaking is None:
                try:
                    self._speaking = self._own.get_nowait()
                except queue.Empty:
                    return out
            samples, done = self._speaking
            take = samples[: FRAME - filled]
            out[filled : filled + len(take)] = take
            filled += len(take)
            rest = samples[len(take):]
            if len(rest):
                self._speaking = (rest, done)
            else:
                done.set()
                self._speaking = None
        return out

    def _send(self) -> None:
        """Send each frame when it is due (in order: a late one holds the next)."""
        while True:
            item = self._frames.get()
            if item is None:
                return
            due, data = item
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                self._socket.send(data)
            except Exception as error:  # the server closed the stream
                self.closed_because = str(error)
                return
