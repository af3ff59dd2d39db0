"""Seat satellites: any Wyoming microphone as a player's seat microphone.

``--seat Ann=tcp://HOST:PORT`` makes a Wyoming satellite (a Home Assistant
voice satellite, ``wyoming-satellite`` on a Raspberry Pi, any program that
speaks the Wyoming protocol: the ``wyoming`` package) Ann's microphone, as
her seat page's would be. The referee connects to it as Home Assistant does,
says ``run-satellite``, and takes the ``audio-chunk`` events it sends
(converted to 16 kHz 16-bit mono if they are not); ``audio-stop`` ends an
utterance at once, as letting go of "Hold to talk" does. The sound goes into
the seat's stream exactly as a page's frames do
(:class:`~referee.screen.phones.PhoneSeats`): the same checks, echo
canceller, segmenter, hearing and log, attributed to that player.

Decisions:

* A satellite that cannot be reached, or drops, is tried again every
  :data:`RETRY` seconds; the table is told when it starts and stops
  listening, as for a phone.
* A seat page that opens the seat's microphone takes the seat over; the
  satellite waits until the seat is free again, then takes it back.
* Sound the seat refuses (far faster than real time, frames of over a
  second) ends the connection, which is tried again later.
* A satellite has a speaker (``wyoming-satellite --snd-command``): the
  referee's voice goes to it as Wyoming ``audio-start``, ``audio-chunk`` and
  ``audio-stop`` events, 16 kHz 16-bit mono (the satellite converts it to its
  own rate), sent in real time at most :data:`SPEAK_AHEAD` seconds ahead, so
  that "stop" silences it within a fraction of a second. ``--satellite-voice``
  says what each satellite says: ``all`` the referee's sentences (the
  default), ``own`` those that name its player, or ``none``. A player's
  private sentences (Phase 10 Twist's virtual Twist cards) go to their
  satellite alone with ``--private-audio Ann=satellite``. What the
  satellites say is the echo cancellers' reference too, when the table has
  no speaker of its own to be one (:class:`SatelliteVoice`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import threading
import time
import warnings
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.satellite import RunSatellite

from referee.games.base import GameSpec, SetupError
from referee.screen.phones import PhoneSeats
from referee.speech.audio import RATE, Audio, PlaybackTrack
from referee.speech.speaking.tts import Output
from referee.told import note
from referee.wording import NoSuchPlayer, player_named

with warnings.catch_warnings():  # (it imports audioop, deprecated in Python 3.11)
    warnings.simplefilter("ignore", DeprecationWarning)
    from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop

if TYPE_CHECKING:
    from referee.screen.server import Screen

log = logging.getLogger(__name__)

#: Seconds between tries to reach a satellite.
RETRY = 2.0
#: Seconds a satellite may take to answer before it counts as gone.
CONNECT_WITHIN = 5.0
#: How far ahead of its playing the referee's voice is sent to a satellite
#: (seconds), in chunks of :data:`SPEAK_CHUNK` seconds.
SPEAK_AHEAD = 0.3
SPEAK_CHUNK = 0.1


class SatelliteError(ValueError):
    """A ``--seat`` that cannot be used, with the reason."""


@dataclass(frozen=True)
class Satellite:
    player: str
    host: str
    port: int


def parse_satellites(values: list[str] | None, players: tuple[str, ...]) -> list[Satellite]:
    """``["Ann=tcp://pi.local:10700"]`` -> the satellites, or SatelliteError.

    >>> parse_satellites(["ann=tcp://127.0.0.1:10700"], ("Ann", "Bob"))
    [Satellite(player='Ann', host='127.0.0.1', port=10700)]
    """
    found: dict[str, Satellite] = {}
    for value in values or []:
        name, _, uri = value.partition("=")
        try:
            player = player_named(name, players)
        except NoSuchPlayer as error:
            raise SatelliteError(f"--seat: {error}") from None
        if player in found:
            raise SatelliteError(f"--seat: {player} is given two satellites.")
        try:
            parts = urlparse(uri.strip())
            port = parts.port
        except ValueError:
            port = None
            parts = urlparse("")
        if parts.scheme != "tcp" or not parts.hostname or port is None:
            raise SatelliteError(f"--seat: give {player}'s satellite as tcp://HOST:PORT "
                                 f"(a Wyoming satellite listens on 10700), not {uri.strip()!r}.")
        found[player] = Satellite(player, parts.hostname, port)
    return list(found.values())


class Satellites:
    """The satellites' connections, in a thread of their own, feeding ``phones``."""

    def __init__(self, satellites: list[Satellite], phones: PhoneSeats) -> None:
        self.satellites = satellites
        self.phones = phones
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="satellites", daemon=True)
        self._stopping: asyncio.Event | None = None
        self._stop_asked = False
        #: Each connected satellite's voice: what is still to be sent to it
        #: (the loop's side), and how many times it was hushed ("stop").
        self._voices: dict[str, asyncio.Queue[Audio]] = {}
        self._hushed: dict[str, int] = {}

    @property
    def players(self) -> list[str]:
        return [s.player for s in self.satellites]

    def speak(self, player: str, audio: Audio) -> None:
        """Say ``audio`` on ``player``'s satellite after what it is saying
        (from any thread); nothing if it is not connected now."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._queue_voice, player, audio)

    def hush(self) -> None:
        """Stop every satellite's voice now, and what was still to come ("stop")."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._hush_all)

    def _queue_voice(self, player: str, audio: Audio) -> None:
        queue = self._voices.get(player)
        if queue is not None:
            queue.put_nowait(audio)

    def _hush_all(self) -> None:
        for player, queue in self._voices.items():
            self._hushed[player] = self._hushed.get(player, 0) + 1
            while not queue.empty():
                queue.get_nowait()

    def start(self) -> None:
        if self.satellites:
            self._thread.start()

    def stop(self) -> None:
        """Let go of every satellite (within a second or two)."""
        if not self._thread.is_alive():
            return
        self._loop.call_soon_threadsafe(self._ask_to_stop)
        self._thread.join(timeout=5)

    def _ask_to_stop(self) -> None:  # (in the loop: before or after it began)
        self._stop_asked = True
        if self._stopping is not None:
            self._stopping.set()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._all())

    async def _all(self) -> None:
        self._stopping = asyncio.Event()
        if self._stop_asked:
            return
        tasks = [asyncio.create_task(self._keep(s)) for s in self.satellites]
        await self._stopping.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _keep(self, satellite: Satellite) -> None:
        """Reach the satellite, take its sound while it sends it, and again."""
        while True:
            if satellite.player not in self.phones.listening:  # (a page may hold the seat)
                try:
                    await self._listen(satellite)
                except (TimeoutError, OSError, ValueError) as error:
                    log.debug("satellite %s:%s: %s", satellite.host, satellite.port, error)
            await asyncio.sleep(RETRY)

    async def _listen(self, satellite: Satellite) -> None:
        client = AsyncTcpClient(satellite.host, satellite.port)
        await asyncio.wait_for(client.connect(), CONNECT_WITHIN)
        ended = asyncio.Event()

        def close(code: int, reason: str) -> None:
            self._loop.call_soon_threadsafe(ended.set)

        stream = None
        voice = self._voices[satellite.player] = asyncio.Queue()
        speaking = asyncio.create_task(self._speak(satellite.player, client, voice))
        try:
            await client.write_event(RunSatellite().event())
            stream = self.phones.open(satellite.player, close, "satellite")
            convert = AudioChunkConverter(rate=RATE, width=2, channels=1)
            while not ended.is_set():
                event = await _first(client.read_event(), ended)
                if event is None:  # the satellite closed the connection (or was let go)
                    return
                if AudioChunk.is_type(event.type):
                    data: bytes | None = convert.convert(AudioChunk.from_event(event)).audio
                elif AudioStop.is_type(event.type):
                    data = None
                else:
                    continue
                refused = self.phones.take(satellite.player, stream, data)
                if refused is not None:
                    log.info("satellite %s:%s refused: %s", satellite.host, satellite.port,
                             refused)
                    return
        finally:
            if self._voices.get(satellite.player) is voice:
                del self._voices[satellite.player]
            speaking.cancel()
            await asyncio.gather(speaking, return_exceptions=True)
            if stream is not None:
                self.phones.closed(satellite.player, stream)
            with contextlib.suppress(Exception):
                await client.disconnect()

    async def _speak(self, player: str, client: AsyncTcpClient, voice: asyncio.Queue[Audio]
                     ) -> None:
        """Send the satellite its voice, a sentence at a time, each as
        audio-start, chunks in real time, audio-stop; a sentence hushed
        midway ends there."""
        free_at = 0.0  # when what was sent so far has been played
        while True:
            audio = await voice.get()
            hushed = self._hushed.get(player, 0)
            rate, samples = audio.rate, audio.to_bytes()
            await client.write_event(AudioStart(rate=rate, width=2, channels=1).event())
            start = max(time.monotonic(), free_at)
            step = int(SPEAK_CHUNK * rate) * 2
            for offset in range(0, len(samples), step):
                due = start + offset / 2 / rate - SPEAK_AHEAD
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                if self._hushed.get(player, 0) != hushed:
                    free_at = 0.0
                    break
                await client.write_event(AudioChunk(rate=rate, width=2, channels=1,
                                                    audio=samples[offset : offset + step]
                                                    ).event())
                free_at = start + (offset + step) / 2 / rate
            await client.write_event(AudioStop().event())


async def _first(reading: Coroutine[Any, Any, Event | None], ended: asyncio.Event
                 ) -> Event | None:
    """The next event, or None once ``ended`` is set first (neither is left pending)."""
    read: asyncio.Future[Event | None] = asyncio.ensure_future(reading)
    wait: asyncio.Future[Any] = asyncio.ensure_future(ended.wait())
    try:
        done, _ = await asyncio.wait([read, wait], return_when=asyncio.FIRST_COMPLETED)
        return read.result() if read in done else None
    finally:
        for task in (read, wait):
            task.cancel()
        await asyncio.gather(read, wait, return_exceptions=True)


class SatelliteVoice(Output):
    """The referee's voice on the satellite seats (``--satellite-voice``):
    every sentence (``all``), or those that name the seat's player (``own``).
    With a ``track`` (the table has no speaker that keeps one), what the
    satellites are sent is noted in it, for the seats' echo cancellers."""

    def __init__(self, satellites: Satellites, which: str = "all",
                 track: PlaybackTrack | None = None) -> None:
        self.satellites = satellites
        self.which = which
        self.own_track = track
        self._free_at = 0.0

    def for_whom(self, text: str) -> list[str]:
        """The satellite seats that say ``text``."""
        if self.which == "all":
            return self.satellites.players
        if self.which == "own":
            return [p for p in self.satellites.players
                    if re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text, re.IGNORECASE)]
        return []

    def play(self, audio: Audio, text: str, at: float) -> None:
        seats = self.for_whom(text)
        for player in seats:
            self.satellites.speak(player, audio)
        if seats and self.own_track is not None:
            start = max(time.monotonic() + SPEAK_AHEAD, self._free_at)
            self.own_track.add(start, audio.samples)
            self._free_at = start + audio.seconds

    def cut(self, at: float) -> None:
        self.satellites.hush()
        self._free_at = 0.0


class SatelliteOutput(Output):
    """One player's private sentences, on their own satellite alone
    (``--private-audio Ann=satellite``)."""

    def __init__(self, satellites: Satellites, player: str) -> None:
        self.satellites = satellites
        self.player = player

    def play(self, audio: Audio, text: str, at: float) -> None:
        self.satellites.speak(self.player, audio)


#: ``--private-audio Ann=satellite``: Ann's private sentences go to her satellite.
ON_SATELLITE = "satellite"


def satellites_for(args: argparse.Namespace, spec: GameSpec) -> list[Satellite]:
    """The seat satellites asked for (``--seat``), or SetupError saying why not."""
    try:
        satellites = parse_satellites(getattr(args, "seat", None), spec.players)
    except SatelliteError as error:
        raise SetupError(str(error)) from error
    if satellites and args.input == "text":
        raise SetupError("--seat gives a player a microphone, but --input text says the "
                         "referee does not listen: leave out one or the other.")
    seated = {s.player for s in satellites}
    for player, device in spec.private_channels().items():
        if device == ON_SATELLITE and player not in seated:
            raise SetupError(f"--private-audio {player}=satellite says {player}'s private "
                             f"sentences on {player}'s satellite, but {player} has none: add "
                             f"--seat {player}=tcp://HOST:PORT.")
    return satellites


@contextlib.contextmanager
def seat_satellites(satellites: list[Satellite], screen: Screen | None, spec: GameSpec,
                    args: argparse.Namespace, track: PlaybackTrack | None
                    ) -> Iterator[tuple[PhoneSeats | None, Satellites | None]]:
    """The seats' own microphones while the game runs: the seat pages' (with
    a screen) and the Wyoming satellites', connected and let go with the game;
    and the satellites, to speak through."""
    phones = None if screen is None else screen.phones
    if satellites and phones is None:
        phones = PhoneSeats(list(spec.players), args.end_silence, track=track)
    if not satellites:
        yield phones, None
        return
    assert phones is not None
    running = Satellites(satellites, phones)
    running.start()
    note("Seat satellites: " + ", ".join(f"{s.player} at {s.host}:{s.port}"
                                         for s in satellites) + ".")
    try:
        yield phones, running
    finally:
        running.stop()
