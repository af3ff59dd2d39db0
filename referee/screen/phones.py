"""Seat pages as seat microphones: each player's phone streams its sound to the referee.

A seat page (or any client that holds the seat's key: a test, a script, a
satellite) opens a WebSocket at ``/seat/NAME/listen?key=K`` and sends binary
frames of 16-bit little-endian mono PCM at 16 kHz; the text frame ``end``
says the player let go of "Hold to talk". Each seat's stream is cut into
utterances by a :class:`~referee.speech.hearing.segmenter.Segmenter` of its
own, and the live loop takes them (:meth:`PhoneSeats.heard`) as speech from
that seat: the same hearing, gate, confirmations and log as the table's
microphone, attributed to that player without a guess.

Decisions:

* One stream a seat. A second page that opens the seat's microphone takes
  it over (the player moved to another phone); the first is closed and told why.
* Bounded, and refused with a reason (the WebSocket's close reason): a frame
  of more than a second of sound, an odd number of bytes, a stream that runs
  more than :data:`AHEAD` seconds ahead of real time (too many frames: not
  16 kHz mono), a text frame other than ``end``. At most :data:`WAITING`
  utterances wait for the referee; an older one is dropped first.
* Times are the stream's own sample clock, anchored to when its sound first
  arrived (:func:`time.monotonic`); a gap of more than :data:`GAP` seconds
  (a phone that slept, a held button let go) starts the clock again, and an
  utterance cut by it is dropped: nobody knows how it ended.
* What the table should know is said (:meth:`PhoneSeats.notices`): a phone
  that starts or stops listening, and one taken over. When a phone stops, the
  player is heard by the table's microphone again, if there is one.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.speech.audio import RATE, Audio
from referee.speech.hearing.segmenter import Segmenter, Utterance

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

#: The most sound one frame may hold (seconds).
MAX_FRAME = 1.0
#: How far a stream may run ahead of real time (seconds): a phone catching up
#: after a stall sends a burst; more than this is not 16 kHz mono.
AHEAD = 3.0
#: A gap in a stream longer than this (seconds) starts its clock again.
GAP = 1.0
#: Utterances that may wait for the referee, all seats together.
WAITING = 32

#: WebSocket close codes: a policy refused (RFC 6455), a message too big,
#: the seat taken over by another page (an application code).
REFUSED, TOO_BIG, TAKEN_OVER = 1008, 1009, 4000


@dataclass(frozen=True)
class PhoneUtterance:
    """What a seat's phone heard: ``start``/``end`` of the speech and when it
    was ``decided`` (the end of its silence), in :func:`time.monotonic` seconds."""

    player: str
    audio: Audio
    start: float
    end: float
    decided: float


class _Stream:
    """One seat's stream: its segmenter and its clock."""

    def __init__(self, player: str, end_silence: float) -> None:
        self.player = player
        self.end_silence = end_silence
        self.segmenter = Segmenter(end_silence)
        self.anchor = 0.0  # monotonic time of the stream's sample 0
        self.first = 0.0  # when the clock was last started
        self.last = -GAP - 1.0  # when the last frame arrived

    def take(self, data: bytes, now: float) -> tuple[list[PhoneUtterance], str | None]:
        """Feed one frame; the utterances it ended, and why it is refused (or None)."""
        if len(data) % 2:
            return [], "Send 16-bit samples: an even number of bytes."
        if len(data) > MAX_FRAME * RATE * 2:
            return [], f"At most {MAX_FRAME:g} s of sound a frame, please."
        if now - self.last > GAP:  # the first sound, or after a gap: the clock starts again
            self.restart(now - len(data) / 2 / RATE)
        self.last = now
        if self.segmenter.now + len(data) / 2 / RATE > now - self.first + AHEAD:
            return [], "More sound than time: send 16 kHz mono, as it is heard."
        return [self._timed(u, now) for u in self.segmenter.feed(data)], None

    def end(self, now: float) -> list[PhoneUtterance]:
        """The player let go: what they said is decided now."""
        found = [self._timed(u, now) for u in self.segmenter.close()]
        self.restart(now)
        self.last = -GAP - 1.0
        return found

    def restart(self, at: float) -> None:
        self.segmenter = Segmenter(self.end_silence)
        self.anchor = self.first = at

    @property
    def talking(self) -> bool:
        return self.segmenter.in_speech

    def _timed(self, u: Utterance, now: float) -> PhoneUtterance:
        return PhoneUtterance(self.player, u.audio, self.anchor + u.start, self.anchor + u.end,
                              now)


class PhoneSeats:
    """Every seat page's microphone, for the screen's server (which feeds it)
    and the live loop (which takes what it heard)."""

    def __init__(self, players: list[str], end_silence: float = 0.25,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.players = players
        self.end_silence = end_silence
        self.clock = clock
        self._streams: dict[str, tuple[_Stream, WebSocket]] = {}
        self._heard: deque[PhoneUtterance] = deque(maxlen=WAITING)
        self._notices: deque[tuple[str, str]] = deque(maxlen=WAITING)
        self._lock = threading.Lock()
        #: A byte is written here when something was heard: the live loop
        #: waits on it (:meth:`fileno`) and answers at once, not at its next poll.
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # --- for the live loop -------------------------------------------------------------
    def fileno(self) -> int:
        """A file to wait on (``select``): readable when a phone heard something."""
        return self._wake_r

    def heard(self) -> list[PhoneUtterance]:
        """What the phones heard since the last call, oldest first."""
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_r, 4096)
        with self._lock:
            found = list(self._heard)
            self._heard.clear()
        return found

    def notices(self) -> list[tuple[str, str]]:
        """What the table should be told about the phones since the last call:
        (player, what) with what "listening", "moved" (to another page) or "stopped"."""
        with self._lock:
            found = list(self._notices)
            self._notices.clear()
        return found

    @property
    def talking(self) -> bool:
        """Whether a player is speaking into a phone now."""
        return any(stream.talking for stream, _ in list(self._streams.values()))

    @property
    def listening(self) -> list[str]:
        """The players whose phone is listening now."""
        return sorted(self._streams)

    def close(self) -> None:
        """Let go of the wake-up pipe (the screen stopped)."""
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    # --- for the server ----------------------------------------------------------------
    async def serve(self, player: str, websocket: WebSocket) -> None:
        """Take one page's stream for ``player`` until it ends (the page closed,
        the connection dropped, another page took the seat, or it was refused)."""
        await websocket.accept()
        stream = _Stream(player, self.end_silence)
        previous = self._streams.get(player)
        self._streams[player] = (stream, websocket)
        if previous is not None:
            await _close(previous[1], TAKEN_OVER,
                         f"Another page took {player}'s microphone.")
            self._notice(player, "moved")
        else:
            self._notice(player, "listening")
        try:
            await self._receive(stream, websocket)
        finally:
            if self._streams.get(player, (None,))[0] is stream:
                del self._streams[player]
                self._notice(player, "stopped")

    async def _receive(self, stream: _Stream, websocket: WebSocket) -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            now = self.clock()
            data, text = message.get("bytes"), message.get("text")
            if data is not None:
                found, refused = stream.take(data, now)
                if refused is not None:
                    await _close(websocket, TOO_BIG if "At most" in refused else REFUSED,
                                 refused)
                    return
            elif text == "end":
                found = stream.end(now)
            else:
                await _close(websocket, REFUSED, 'Send sound as binary frames, or "end".')
                return
            if found:
                with self._lock:
                    self._heard.extend(found)
                with contextlib.suppress(BlockingIOError):  # (already awake)
                    os.write(self._wake_w, b".")

    def _notice(self, player: str, what: str) -> None:
        with self._lock:
            self._notices.append((player, what))


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    """Close a page's stream with a reason it can show (at most 123 bytes)."""
    with contextlib.suppress(RuntimeError):  # (already closed)
        await websocket.close(code, reason.encode()[:123].decode(errors="ignore"))
