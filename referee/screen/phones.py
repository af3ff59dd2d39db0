"""Seat pages as seat microphones: each player's phone streams its sound to the referee.

A seat page (or any client that holds the seat's key: a test, a script, a
satellite) opens a WebSocket at ``/seat/NAME/listen?key=K`` and sends binary
frames of 16-bit little-endian mono PCM at 16 kHz; the text frame ``end``
says the player let go of "Hold to talk". The server checks and queues the
frames; the live loop cuts each seat's stream into utterances
(:meth:`PhoneSeats.hear`) with a :class:`~referee.speech.hearing.segmenter.Segmenter`
of its own, decoding ahead at its pauses with a listener of the seat's own,
as the table microphone does, and hears each as speech from that seat: the
same hearing, gate, confirmations and log as the table's microphone,
attributed to that player without a guess.

Decisions:

* One stream a seat. A second page that opens the seat's microphone takes
  it over (the player moved to another phone); the first is closed and told why.
* Bounded, and refused with a reason (the WebSocket's close reason): a frame
  of more than a second of sound, an odd number of bytes, a stream that runs
  more than :data:`AHEAD` seconds ahead of real time (too many frames: not
  16 kHz mono), a text frame other than ``end``. At most :data:`QUEUED`
  seconds of sound wait for the live loop; the oldest go first.
* Times are the stream's own sample clock, anchored to when its sound first
  arrived (:func:`time.monotonic`); a gap of more than :data:`GAP` seconds
  (a phone that slept, a held button let go) starts the clock again, and an
  utterance cut by it is dropped: nobody knows how it ended. The pace check
  counts the gap (up to :data:`STALL` seconds) as time the sound may have
  been made in: a stall's sound arrives in one burst after it.
* The referee's loudspeaker reaches the phones too: each stream goes
  through an echo canceller of its own (:class:`~referee.speech.hearing.echopath.EchoPath`)
  with what the speakers played as reference, at the delay its own sound
  shows (a phone's network and audio latency vary, and are measured per
  stream, from a first guess of :data:`LATENCY`). Each utterance then says
  how it stood against the referee's voice, as the table microphone's do,
  and whether the canceller had learnt the room when it began: until then
  only a barge-in ("stop", "repeat") is heard over the referee's voice.
* What the table should know is said (:meth:`PhoneSeats.notices`): a phone
  that starts or stops listening, and one taken over. When a phone stops, the
  player is heard by the table's microphone again, if there is one.
* A stream is said to listen once it has stayed open :data:`SETTLE`
  seconds without a refusal; one refused before that is never said to
  listen or stop: the table hears
  nothing of a client that sends the wrong thing (however often it tries),
  and the terminal prints why (:meth:`PhoneSeats.refusals`), once for each
  new reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from referee.speech.audio import RATE, Audio, PlaybackTrack
from referee.speech.hearing.echopath import EchoPath
from referee.speech.hearing.interface import OverVoice
from referee.speech.hearing.segmenter import Judge, Segmenter, Utterance

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

#: The most sound one frame may hold (seconds).
MAX_FRAME = 1.0
#: How far a stream may run ahead of real time (seconds): a phone catching up
#: after a stall sends a burst; more than this is not 16 kHz mono.
AHEAD = 3.0
#: A gap in a stream longer than this (seconds) starts its clock again.
GAP = 1.0
#: The most of a gap (seconds) a stream's new clock counts as time its sound
#: may have been made in: a page or a server that stalled (a busy machine)
#: sends or reads the sound of the stall in one burst after it, while a page
#: that sends three times too fast is still refused within seconds.
STALL = 10.0
#: Seconds a stream stays open, unrefused, before the table is told it
#: listens (a client sending the wrong thing is refused well within it).
SETTLE = 1.0
#: Notices that may wait for the table.
WAITING = 32
#: Seconds of sound, all seats together, that may wait for the live loop.
QUEUED = 30.0
#: A first guess at how long a phone's sound takes to reach the referee
#: (capture, the page's buffers, Wi-Fi): the echo canceller looks for the
#: referee's voice from 0.3 s before to 0.3 s after where this puts it.
LATENCY = 0.3

#: WebSocket close codes: a policy refused (RFC 6455), a message too big,
#: the seat taken over by another page (an application code).
REFUSED, TOO_BIG, TAKEN_OVER = 1008, 1009, 4000


@dataclass(frozen=True)
class PhoneUtterance:
    """What a seat's phone heard: ``start``/``end`` of the speech and when it
    was ``decided`` (the end of its silence), in :func:`time.monotonic` seconds;
    ``over``: how it stood against the referee's voice, if that played (see
    :class:`~referee.speech.hearing.mic.OverVoice`); ``cancels_echo``: whether
    the phone's echo canceller had learnt the room when it began."""

    player: str
    audio: Audio
    start: float
    end: float
    decided: float
    over: OverVoice | None = None
    cancels_echo: bool = False


class _Clock:
    """A stream's pace, checked as its frames arrive (the server's side)."""

    def __init__(self, opened: float) -> None:
        self.first = 0.0  # when its sound (last) started
        self.sent = 0  # samples since then
        self.last = -GAP - 1.0  # when the last frame arrived
        self.opened = opened
        self.told = False  # whether the table was told it listens
        self.refused_why: str | None = None

    def settled(self, now: float) -> bool:
        """Whether the table may be told that this stream listens."""
        return self.refused_why is None and now - self.opened >= SETTLE

    def refused(self, data: bytes, now: float) -> str | None:
        """Why a frame is refused, or None."""
        if len(data) % 2:
            return "Send 16-bit samples: an even number of bytes."
        if len(data) > MAX_FRAME * RATE * 2:
            return f"At most {MAX_FRAME:g} s of sound a frame, please."
        if now - self.last > GAP:  # the first sound, or after a gap
            # Sound made during the gap (since the stream opened) may come in
            # this burst: the new clock starts where the old one stopped.
            began = max(self.last, self.opened, now - STALL)
            self.first, self.sent = min(began, now - len(data) / 2 / RATE), 0
        self.last = now
        self.sent += len(data) // 2
        if self.sent / RATE > now - self.first + AHEAD:
            return "More sound than time: send 16 kHz mono, as it is heard."
        return None


class _Stream:
    """One seat's stream cut into utterances (the live loop's side): its
    echo canceller, its segmenter, decoding ahead with ``judge`` (the seat's
    own listener), and its clock."""

    def __init__(self, player: str, end_silence: float, judge: Judge | None,
                 echo: EchoPath | None, hurry: Callable[[], bool] | None = None) -> None:
        self.player = player
        self.end_silence = end_silence
        self.judge = judge
        self.echo = echo
        self.hurry = hurry
        #: The sound from this phone that has arrived and is not cut yet (set
        #: by :meth:`PhoneSeats.hear`; nothing until then).
        self.waiting: Callable[[], bytes] = bytes
        self.segmenter = self._segmenter()
        self.anchor = 0.0  # monotonic time of the stream's sample 0
        self.position = 0.0  # seconds of sound since then
        self.last = -GAP - 1.0  # when the last frame arrived

    def _segmenter(self) -> Segmenter:
        judge, hurry, echo = self.judge, self.hurry, self.echo
        if judge is None:
            return Segmenter(self.end_silence)

        def pause(so_far: Audio) -> None:
            # Over the referee's voice (which only a stream with an echo
            # canceller measures) the recogniser keeps a longer tail: the
            # guess must be prepared as the whole utterance will be.
            judge.pause(so_far, self.went_on, echo is not None and hurry is not None and hurry())

        return Segmenter(self.end_silence, on_pause=pause, judge=judge.judge, hurry=hurry,
                         tail=judge.tail)

    def went_on(self) -> bool:
        """Whether the player went on after the pause being decoded ahead:
        what has arrived from their phone since and is not cut yet
        (:attr:`waiting`) holds a frame as loud as their speech. Never while
        the referee speaks (its voice may be in that sound), as the table
        microphone's :meth:`~referee.speech.hearing.mic.Microphone.went_on`."""
        if self.hurry is not None and self.hurry():
            return False
        samples = np.frombuffer(self.waiting(), "<i2")
        return len(samples) > 0 and self.segmenter.speech_in(samples)

    def take(self, data: bytes, now: float) -> list[PhoneUtterance]:
        """Feed one frame (that arrived at ``now``); the utterances it ended."""
        if now - self.last > GAP:  # the first sound, or after a gap: the clock starts again
            self.restart(now - len(data) / 2 / RATE)
        self.last = now
        if self.echo is not None:
            samples = np.frombuffer(data, "<i2").reshape(-1, 1)
            data = self.echo.clean(samples, self.anchor + self.position, LATENCY).tobytes()
        self.position += len(data) / 2 / RATE
        return [self._timed(u, now) for u in self.segmenter.feed(data)]

    def end(self, now: float) -> list[PhoneUtterance]:
        """The player let go: what they said is decided now."""
        found = [self._timed(u, now) for u in self.segmenter.close()]
        self.restart(now)
        self.last = -GAP - 1.0
        return found

    def restart(self, at: float) -> None:
        self.segmenter = self._segmenter()
        self.anchor, self.position = at, 0.0
        if self.echo is not None:
            self.echo.restart()

    @property
    def talking(self) -> bool:
        return self.segmenter.in_speech

    def _timed(self, u: Utterance, now: float) -> PhoneUtterance:
        start, end = self.anchor + u.start, self.anchor + u.end
        over = None
        if self.echo is not None:
            after_echo_db = self.echo.after_echo_db(start, end)
            over = None if after_echo_db is None else OverVoice(after_echo_db)
        return PhoneUtterance(self.player, u.audio, start, end, now, over,
                              self.echo is not None and self.echo.learnt_by(start))


class PhoneSeats:
    """Every seat page's microphone, for the screen's server (which feeds it)
    and the live loop (which takes what it heard)."""

    def __init__(self, players: list[str], end_silence: float = 0.25,
                 clock: Callable[[], float] = time.monotonic,
                 track: PlaybackTrack | None = None) -> None:
        """``track``: what the referee's speakers play, to take out of each
        phone's sound (None: no echo canceller)."""
        self.players = players
        self.end_silence = end_silence
        self.clock = clock
        self.track = track
        #: Each seat's page now (the server's side) and its stream (the loop's).
        self._pages: dict[str, tuple[_Clock, Callable[[int, str], object]]] = {}
        self._streams: dict[str, _Stream] = {}
        self._devices: dict[str, str] = {}
        #: Frames that arrived and the loop has not taken yet: (player, sound
        #: or None for "end", when it arrived), at most :data:`QUEUED` seconds.
        self._frames: deque[tuple[str, bytes | None, float]] = deque()
        self._queued = 0
        self._notices: deque[tuple[str, str]] = deque(maxlen=WAITING)
        #: Refused streams for the terminal: (player, device, why), and the
        #: last reason printed for each seat (each new reason once).
        self._refusals: deque[tuple[str, str, str]] = deque(maxlen=WAITING)
        self._last_refusal: dict[str, str] = {}
        self._lock = threading.Lock()
        #: Held while the loop cuts the phones' sound (their echo cancellers
        #: at work) and while :meth:`close` lets go of them: never both.
        self._hearing = threading.Lock()
        self._closed = False
        #: A byte is written here when something was heard: the live loop
        #: waits on it (:meth:`fileno`) and answers at once, not at its next poll.
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # --- for the live loop -------------------------------------------------------------
    def fileno(self) -> int:
        """A file to wait on (``select``): readable when a phone sent sound."""
        return self._wake_r

    def hear(self, judge_for: Callable[[str], Judge | None] = lambda player: None,
             hurry: Callable[[], bool] | None = None) -> list[PhoneUtterance]:
        """Cut what the phones sent since the last call into utterances; those
        that ended, oldest first. ``judge_for(player)`` decodes that seat's
        speech ahead at its pauses (the seat's own ears), or None; ``hurry()``
        says the referee is speaking, when an urgent word ("stop") is looked
        for sooner (see :class:`~referee.speech.hearing.segmenter.Segmenter`)."""
        with self._hearing:
            if self._closed:  # (the screen stopped: nothing more is heard)
                return []
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 65536)
            with self._lock:
                frames = list(self._frames)
                self._frames.clear()
                self._queued = 0
            found: list[PhoneUtterance] = []
            for i, (player, data, arrived) in enumerate(frames):
                stream = self._streams.get(player)
                if stream is None:
                    echo = None if self.track is None else EchoPath(self.track)
                    stream = self._streams[player] = _Stream(player, self.end_silence,
                                                             judge_for(player), echo, hurry)
                stream.waiting = functools.partial(self._waiting, player, frames, i + 1)
                found += stream.end(arrived) if data is None else stream.take(data, arrived)
            return found

    def _waiting(self, player: str, taken: list[tuple[str, bytes | None, float]],
                 after: int) -> bytes:
        """What ``player``'s phone sent that the loop has not cut yet: the
        frames of ``taken`` from ``after`` on, then those queued since (up to
        the player letting go)."""
        with self._lock:
            queued = list(self._frames)
        sound = []
        for who, data, _ in itertools.chain(itertools.islice(taken, after, None), queued):
            if who == player:
                if data is None:
                    break
                sound.append(data)
        return b"".join(sound)

    def notices(self) -> list[tuple[str, str]]:
        """What the table should be told about the phones since the last call:
        (player, what) with what "listening", "moved" (to another page) or "stopped"."""
        now = self.clock()
        with self._lock:
            for player, (clock, _) in self._pages.items():
                if not clock.told and clock.settled(now):
                    self._tell(player, clock)
            found = list(self._notices)
            self._notices.clear()
        return found

    def refusals(self) -> list[tuple[str, str, str]]:
        """Streams refused since the last call, for the terminal: (player,
        device, why), each seat's reason once until another comes or a
        stream of the seat is taken."""
        with self._lock:
            found = list(self._refusals)
            self._refusals.clear()
        return found

    @property
    def talking(self) -> bool:
        """Whether a player is speaking into a phone now."""
        return any(stream.talking for stream in list(self._streams.values()))

    def talking_of(self, player: str) -> bool:
        """Whether that player's phone hears speech now."""
        stream = self._streams.get(player)
        return stream is not None and stream.talking

    def device_of(self, player: str) -> str:
        """What the seat's microphone is, or was last: "phone" or "satellite"."""
        return self._devices.get(player, "phone")

    @property
    def listening(self) -> list[str]:
        """The players whose phone is listening now."""
        return sorted(self._pages)

    def close(self) -> None:
        """Let go of the wake-up pipe and the echo cancellers (the screen
        stopped), once the loop is not cutting sound with them; from then on
        :meth:`hear` hears nothing."""
        with self._hearing:
            self._closed = True
            for stream in self._streams.values():
                if stream.echo is not None:
                    stream.echo.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    # --- for the server and the satellites ------------------------------------------------
    def open(self, player: str, close: Callable[[int, str], object],
             device: str = "phone") -> object:
        """A stream for ``player``'s seat starts (a page, a satellite); a token
        for :meth:`take` and :meth:`closed`. ``close(code, reason)`` ends it
        (from any thread) when another stream takes the seat over; ``device``
        is what the table is told it is ("Ann's phone is listening")."""
        clock = _Clock(self.clock())
        with self._lock:
            self._devices[player] = device
            previous = self._pages.get(player)
            self._pages[player] = (clock, close)
            if previous is not None and not previous[0].told and previous[0].settled(clock.opened):
                self._tell(player, previous[0])
            if previous is not None and previous[0].told:
                clock.told = True  # (the seat listens on: it moved)
                self._notices.append((player, "moved"))
        if previous is not None:
            previous[1](TAKEN_OVER, f"Another page took {player}'s microphone.")
        return clock

    def take(self, player: str, stream: object, data: bytes | None) -> str | None:
        """A frame of ``player``'s stream (None: the player let go); why it is
        refused (the stream is then to be closed), or None."""
        if not isinstance(stream, _Clock) or self._pages.get(player, (None,))[0] is not stream:
            return "Another page took this microphone."
        now = self.clock()
        if data is None:
            stream.last = -GAP - 1.0
        else:
            refused = stream.refused(data, now)
            if refused is not None:
                self.refuse(player, stream, refused)
                return refused
        self._queue(player, data, now)
        return None

    def refuse(self, player: str, stream: object, why: str) -> None:
        """``player``'s stream is refused (and is to be closed) for ``why``:
        printed on the terminal, and if it was not yet said to listen, the
        table hears nothing of it."""
        if not isinstance(stream, _Clock):
            return
        with self._lock:
            stream.refused_why = why
            if self._last_refusal.get(player) != why:
                self._last_refusal[player] = why
                self._refusals.append((player, self._devices.get(player, "phone"), why))

    def closed(self, player: str, stream: object) -> None:
        """``player``'s stream ended (closed, dropped, refused, taken over)."""
        with self._lock:
            if not isinstance(stream, _Clock) or self._pages.get(player, (None,))[0] is not stream:
                return
            del self._pages[player]
            if not stream.told and stream.settled(self.clock()):
                self._tell(player, stream)
            if stream.told:
                self._notices.append((player, "stopped"))

    async def serve(self, player: str, websocket: WebSocket) -> None:
        """Take one page's stream for ``player`` until it ends (the page closed,
        the connection dropped, another page took the seat, or it was refused)."""
        await websocket.accept()
        loop = asyncio.get_running_loop()

        def close(code: int, reason: str) -> None:
            asyncio.run_coroutine_threadsafe(_close(websocket, code, reason), loop)

        stream = self.open(player, close)
        try:
            await self._receive(player, stream, websocket)
        finally:
            self.closed(player, stream)

    async def _receive(self, player: str, stream: object, websocket: WebSocket) -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data, text = message.get("bytes"), message.get("text")
            if data is None and text != "end":
                why = 'Send sound as binary frames, or "end".'
                self.refuse(player, stream, why)
                await _close(websocket, REFUSED, why)
                return
            refused = self.take(player, stream, data)
            if refused is not None:
                await _close(websocket, TOO_BIG if "At most" in refused else REFUSED, refused)
                return

    def _queue(self, player: str, data: bytes | None, now: float) -> None:
        """A frame for the live loop; the oldest go first when it is
        :data:`QUEUED` seconds behind (it is stuck: they are stale)."""
        with self._lock:
            self._frames.append((player, data, now))
            self._queued += len(data or b"")
            while self._queued > QUEUED * RATE * 2 and self._frames:
                self._queued -= len(self._frames.popleft()[1] or b"")
        with contextlib.suppress(BlockingIOError):  # (already awake)
            os.write(self._wake_w, b".")

    def _tell(self, player: str, stream: _Clock) -> None:
        """The table is told the seat listens (with the lock held)."""
        stream.told = True
        self._last_refusal.pop(player, None)
        self._notices.append((player, "listening"))


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    """Close a page's stream with a reason it can show (at most 123 bytes)."""
    with contextlib.suppress(RuntimeError):  # (already closed)
        await websocket.close(code, reason.encode()[:123].decode(errors="ignore"))
