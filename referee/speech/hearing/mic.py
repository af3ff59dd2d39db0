"""Listening all the time: the microphone stream cut into utterances.

:class:`Microphone` feeds the segmenter (:mod:`referee.speech.hearing.segmenter`)
from a live input device through ``sounddevice`` (PortAudio): one detector
on the mix of all channels, and with seat microphones
(``--seat-mics Ann=0,Bob=1``) each utterance goes to the seat whose channel
was loudest during it, so a voice leaking into the other microphone does not
confuse the referee. The referee's own voice is taken out by the echo
canceller, and how much of it is left is measured
(:class:`~referee.speech.hearing.interface.OverVoice`).

The microphone needs a device, and says so clearly when there is none.
"""


from __future__ import annotations

import logging
import math
import queue
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.speech.audio import (
    RATE,
    SPEECH_MARGIN,
    Audio,
    PlaybackTrack,
)
from referee.speech.hearing.echopath import EchoPath
from referee.speech.hearing.interface import OverVoice
from referee.speech.hearing.segmenter import (
    BLOCK,
    DEFAULT_END_SILENCE,
    Judge,
    Segmenter,
    Utterance,
)
from referee.speech.portaudio import close_stream

log = logging.getLogger(__name__)

SILENT_FOR = 2.0  # seconds without a block: the microphone is gone
#: A stream may take a while to send its first block (measured: PulseAudio's
#: null-sink monitor here takes 2.0 s), so a new stream gets this much longer.
STARTUP = 3.0
#: Seconds of the latest blocks that date the stream (see :meth:`Microphone.since`).
DATING = 2.0


class MicrophoneError(RuntimeError):
    """No usable input device, with what to do about it."""



def input_device(device: int | str | None) -> Any:
    """The input device to use, or MicrophoneError saying why there is none."""
    try:
        import sounddevice
    except OSError as error:  # PortAudio library missing
        raise MicrophoneError(
            f"Audio input is unavailable ({error}). Run ./run again to install "
            "libportaudio2, or play by typing."
        ) from error
    try:
        return sounddevice.query_devices(device, kind="input")
    except (ValueError, sounddevice.PortAudioError) as error:
        names = [d["name"] for d in sounddevice.query_devices() if d["max_input_channels"] > 0]
        choice = f" Input devices: {', '.join(names)}." if names else ""
        if device is None:
            message = f"No microphone found (PortAudio: {error}). Connect one, or play by typing."
        else:
            message = f"There is no input device {device!r} (PortAudio: {error})."
        raise MicrophoneError(message + choice) from error


@dataclass(frozen=True)
class SeatUtterance(Utterance):
    speaker: str | None
    #: None when the referee was silent (or there is no echo canceller).
    over: OverVoice | None = None


class Microphone:
    """A live input stream cut into utterances, with seat attribution."""

    def __init__(self, device: int | str | None = None, seats: dict[int, str] | None = None,
                 end_silence: float = DEFAULT_END_SILENCE,
                 silent_for: float | None = SILENT_FOR,
                 track: PlaybackTrack | None = None) -> None:
        """``silent_for``: seconds without sound that mean the device is gone
        (None: wait for sound for ever). ``track``: what the referee's speakers
        play; with it, each channel is cleaned of the referee's voice by an
        echo canceller (:mod:`referee.speech.hearing.echo`)."""
        self.device = device
        self.track = track
        self.silent_for = silent_for
        self.seats = seats or {}
        self.channels = max(self.seats, default=0) + 1
        self.end_silence = end_silence
        #: Called with the utterance so far when a speaker pauses (see :class:`Segmenter`),
        #: and what says whether they went on meanwhile (:meth:`went_on`).
        self.on_pause: Callable[[Audio, Callable[[], bool], bool], None] | None = None
        #: Asked what the words so far are, at each pause (see :class:`Segmenter`).
        self.judge: Callable[[], str | None] | None = None
        #: Asked whether an urgent word would be acted on at once (see :class:`Segmenter`).
        self.hurry: Callable[[], bool] | None = None
        #: The quiet after a sound at which the words so far are decoded ahead.
        self.tail = SPEECH_MARGIN
        self._stream: Any = None
        self._echo: EchoPath | None = None  # made by open()
        self._blocks: queue.Queue[tuple[bytes, float]] = queue.Queue()
        self._last_block = 0.0
        #: (stream time at the end of a block, wall clock when it arrived), recent blocks.
        self._arrivals: deque[tuple[float, float]] = deque(maxlen=1000)

    def listen_with(self, listener: Judge | None,
                    hurry: Callable[[], bool] | None = None) -> None:
        """From the next stream opened, ``listener`` decodes ahead at each pause
        and judges the words so far (the table's, or a
        :class:`~referee.speech.listen.Listener`); ``hurry`` says whether an
        urgent word would be acted on at once (see :class:`Segmenter`)."""
        self.on_pause = None if listener is None else listener.pause
        self.judge = None if listener is None else listener.judge
        self.tail = SPEECH_MARGIN if listener is None else listener.tail
        self.hurry = hurry

    def reset(self) -> None:
        """A fresh start for a new stream (stream time 0, nobody talking)."""
        self.segmenter = Segmenter(self.end_silence,
                                   on_pause=None if self.on_pause is None else self._paused,
                                   judge=self.judge, hurry=self.hurry, tail=self.tail)
        self._energy: deque[np.ndarray[Any, Any]] = deque(maxlen=6000)  # 60 s of 10 ms frames
        self._frames = 0
        #: Seconds of audio received so far (stream time).
        self.position = 0.0
        self._blocks = queue.Queue()
        self._arrivals.clear()
        self._overflowed_at = -math.inf
        if self._echo is not None:
            self._echo.close()
        self._echo = None if self.track is None else EchoPath(self.track, self.channels)
        #: Stream time 0 by the wall clock (when the first block reached us, less its length).
        self._anchor: float | None = None

    def open(self) -> None:
        """Open the device, or MicrophoneError saying why not."""
        import sounddevice

        info = input_device(self.device)
        if info["max_input_channels"] < self.channels:
            raise MicrophoneError(
                f"{info['name']} has {info['max_input_channels']} input channels; "
                f"the seat microphones need {self.channels}."
            )
        self.reset()

        def callback(data: Any, frames: int, when: Any, status: Any) -> None:
            arrived = time.monotonic()
            if getattr(status, "input_overflow", False):  # samples were lost before this
                self._overflowed_at = arrived
            self._blocks.put((bytes(data), arrived))

        self._latency = 0.0

        try:
            self._stream = sounddevice.RawInputStream(
                samplerate=RATE, blocksize=BLOCK, device=info.get("index", self.device),
                channels=self.channels, dtype="int16", callback=callback, latency="high",
            )
            self._stream.start()
            self._latency = float(self._stream.latency)
        except Exception as error:  # PortAudioError, OSError
            self._stream = None
            raise MicrophoneError(f"Cannot open the microphone ({error}).") from error
        self._last_block = time.monotonic() + STARTUP

    def read(self, timeout: float) -> list[SeatUtterance]:
        """The utterances that have ended, as soon as one has; else after ``timeout``
        seconds of listening, none."""
        found: list[SeatUtterance] = []
        deadline = time.monotonic() + timeout
        while not found:
            left = deadline - time.monotonic()
            try:
                block, arrived = self._blocks.get(timeout=max(0.0, left))
            except queue.Empty:
                break
            self._last_block = time.monotonic()
            found.extend(self._feed(block, arrived))
            self._arrivals.append((self.position, arrived))
        stream = self._stream
        quiet = time.monotonic() - self._last_block
        if (stream is None or not stream.active
                or (self.silent_for is not None and quiet > self.silent_for)):
            raise MicrophoneError("The microphone stopped sending sound.")
        return found

    def _feed(self, block: bytes, arrived: float | None = None) -> list[SeatUtterance]:
        samples = np.frombuffer(block, dtype="<i2").reshape(-1, self.channels)
        if self._echo is not None and arrived is not None:
            # Blocks arrive in bursts: their time comes from the sample count,
            # anchored on the first block (the echo path measures the delay).
            if self._anchor is None:
                self._anchor = arrived - (self.position + len(samples) / RATE)
            samples = self._echo.clean(samples, self._anchor + self.position, self._latency)
        self.position += len(samples) / RATE
        x = samples.astype(np.float64)
        for i in range(0, len(x), BLOCK):
            frame = x[i : i + BLOCK]
            self._energy.append((frame**2).mean(axis=0))
            self._frames += 1
        mono = x.mean(axis=1) if self.channels > 1 else x[:, 0]
        data = np.clip(mono, -32768, 32767).astype("<i2").tobytes()
        return [self._attributed(u) for u in self.segmenter.feed(data)]

    def _paused(self, so_far: Audio) -> None:
        assert self.on_pause is not None
        self.on_pause(so_far, self.went_on, self.hurry is not None and self.hurry())

    def went_on(self) -> bool:
        """Whether the speaker went on after the pause being decoded ahead: the
        sound captured since, still waiting to be read, holds a frame as loud
        as their speech. The decode is then given up midway (the loop reads on
        at once), not finished for nothing. Never while the referee speaks:
        its voice is in that sound until the echo canceller takes it out, and
        a "stop" decoded ahead must not be given up for it."""
        if self.hurry is not None and self.hurry():
            return False
        with self._blocks.mutex:
            waiting = [block for block, _ in self._blocks.queue]
        if not waiting:
            return False
        x = np.frombuffer(b"".join(waiting), dtype="<i2").reshape(-1, self.channels)
        return self.segmenter.speech_in(x.mean(axis=1) if self.channels > 1 else x[:, 0])

    def _attributed(self, u: Utterance) -> SeatUtterance:
        """The utterance with its seat, and how it stands against the referee's voice."""
        energies = self._channel_energies(u.start, u.end)
        seat = None if energies is None else int(np.argmax(energies))
        echo, anchor = self._echo, self._anchor or 0.0
        after_echo_db = (None if echo is None
                         else echo.after_echo_db(anchor + u.start, anchor + u.end))
        over = None
        if after_echo_db is not None:
            seat_db = None if seat is None else self._seat_db(seat, u.start, energies)
            over = OverVoice(after_echo_db, seat_db)
        return SeatUtterance(u.audio, u.start, u.end, u.audio_start,
                             None if seat is None else self.seats.get(seat), over)

    @property
    def cancelling(self) -> bool:
        """Whether the echo canceller works now (see :attr:`EchoPath.cancelling`)."""
        return self._echo is not None and self._echo.cancelling

    def cancelling_from(self, start: float) -> bool:
        """Whether the canceller works and had learnt the room already when an
        utterance began (``start``, stream seconds; see :meth:`EchoPath.learnt_by`)."""
        return self._echo is not None and self._echo.learnt_by((self._anchor or 0.0) + start)

    def _channel_energies(self, start: float, end: float) -> np.ndarray[Any, Any] | None:
        """Each seat channel's energy from ``start`` to ``end`` (None: no seats)."""
        if not self.seats:
            return None
        first = self._frames - len(self._energy)
        lo, hi = max(first, int(start * 100)), max(first + 1, int(end * 100))
        frames = list(self._energy)[lo - first : hi - first]
        return np.sum(frames, axis=0) if frames else None

    def _seat_db(self, seat: int, start: float,
                 energies: np.ndarray[Any, Any] | None) -> float | None:
        """See :attr:`OverVoice.seat_db`: the seat's lead over the others in the
        utterance, less its lead in the referee's voice over the 10 s before."""
        earlier = ([] if self._echo is None
                   else [e for _, _, _, e in self._echo.before((self._anchor or 0.0) + start)])
        if energies is None or self.channels < 2 or not earlier:
            return None

        def lead(e: np.ndarray[Any, Any]) -> float:
            others = float(np.delete(e, seat).mean())
            return 10.0 * math.log10(max(float(e[seat]), 1.0) / max(others, 1.0))

        return lead(energies) - lead(np.sum(earlier, axis=0))

    def arrival(self, at: float) -> float | None:
        """The wall clock (``time.monotonic``) when stream time ``at`` reached us, if recent."""
        for position, arrived in self._arrivals:
            if position >= at:
                return arrived
        return None

    def since(self, at: float) -> float:
        """Seconds since stream time ``at`` reached us, by the wall clock.

        Not simply how much has been read since: blocks wait in the queue
        while an utterance is decoded (seconds, on a busy machine), and then
        the last sample read is long past. A block can only arrive late, never
        early, so the recent block that came soonest for its place in the
        stream dates the whole stream: one of the last :data:`DATING`
        seconds, as samples lost on the way (an overflow while the machine
        was busy) put every earlier block's place wrong.
        """
        recent = [(position, arrived) for position, arrived in self._arrivals
                  if position >= self.position - DATING and arrived >= self._overflowed_at]
        if not recent:
            return self.position - at
        offset = min(arrived - position for position, arrived in recent)
        return time.monotonic() - (offset + at)

    @property
    def in_speech(self) -> bool:
        """Whether somebody is talking right now (as the voice detector hears it),
        or has only paused in the middle of an utterance."""
        return bool(self._stream is not None and self.segmenter.in_speech)

    def close(self) -> None:
        if self._stream is not None:
            if not close_stream(self._stream):
                log.debug("the microphone's stream did not close")
            self._stream = None


def parse_device(text: str | None) -> int | str | None:
    """A device as given on the command line: a number, a name, or None (the system's).

    >>> parse_device("2"), parse_device("pulse"), parse_device(None)
    (2, 'pulse', None)
    """
    return int(text) if text and text.isdigit() else text


def microphone_utterances(
    device: int | str | None = None, end_silence: float = DEFAULT_END_SILENCE,
    listener: Judge | None = None,
) -> Iterator[Utterance]:
    """Utterances from a live input device, as they end (runs until stopped).

    ``listener`` (a :class:`~referee.speech.listen.Listener`) decodes ahead at
    pauses and judges the words, as in a game."""
    microphone = Microphone(device, end_silence=end_silence, silent_for=None)
    microphone.listen_with(listener)
    microphone.open()
    try:
        while True:
            for u in microphone.read(0.2):
                yield Utterance(u.audio, u.start, u.end, u.audio_start)
    finally:
        microphone.close()
