"""Seat satellites (#65): a Wyoming microphone as a player's seat microphone.

The satellite here is a stand-in, named so: a Wyoming server made with the
``wyoming`` package's own server and events, on 127.0.0.1, that does what
``wyoming-satellite`` does once Home Assistant (here the referee) connects
and says ``run-satellite``: it streams its microphone as ``audio-start``,
``audio-chunk`` events in real time, and ``audio-stop``. Its microphone is a
committed recording, resampled to 22,050 Hz stereo as some satellites send,
so the referee's conversion runs. The referee's side is the real one: its
Wyoming client, the seat's stream, Whisper, the live loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.phonegame import PhoneGame
from referee.records import EventRecord
from referee.satellites import Satellite, parse_satellites
from referee.speech.audio import RATE, load_wav

FIXTURES = Path(__file__).parent / "audio_fixtures" / "piper-joe"
#: What the stand-in satellite's microphone sends: 22,050 Hz, 16-bit, stereo.
SENT_RATE = 22050


def sent_as_satellite(name: str) -> bytes:
    """A committed recording with a second of quiet either side, as the
    satellite's microphone sends it (22,050 Hz stereo)."""
    samples = load_wav(FIXTURES / f"{name}.wav").samples.astype(np.float64)
    samples = np.concatenate([np.zeros(RATE), samples, np.zeros(RATE)])
    times = np.arange(int(len(samples) * SENT_RATE / RATE)) * RATE / SENT_RATE
    resampled = np.interp(times, np.arange(len(samples)), samples)
    stereo = np.repeat(resampled[:, None], 2, axis=1)
    return np.clip(np.round(stereo), -32768, 32767).astype("<i2").tobytes()


class StandInSatellite:
    """A stand-in for a Wyoming voice satellite (see the module's doc): it
    streams ``sound`` each time it is told ``run-satellite``."""

    def __init__(self, sound: bytes, port: int = 0) -> None:
        self.sound = sound
        self.told: list[str] = []
        self.streams: list[asyncio.Future[None]] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = port
        self.thread = threading.Thread(target=self.loop.run_until_complete,
                                       args=(self._serve(),), daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    async def _serve(self) -> None:
        from wyoming.server import AsyncEventHandler, AsyncTcpServer

        satellite = self

        class Handler(AsyncEventHandler):
            async def handle_event(self, event: Any) -> bool:
                satellite.told.append(event.type)
                if event.type == "run-satellite":
                    satellite.streams.append(asyncio.ensure_future(satellite._stream(self)))
                return True

        server = AsyncTcpServer("127.0.0.1", self.port)
        await server.start(lambda reader, writer: Handler(reader, writer))
        assert isinstance(server._server, asyncio.Server)
        self.port = server._server.sockets[0].getsockname()[1]
        self.stopping = asyncio.Event()
        self.ready.set()
        await self.stopping.wait()
        await server.stop()

    async def _stream(self, handler: Any) -> None:
        """(The referee may go first: a satellite then just stops sending.)"""
        from wyoming.audio import AudioChunk, AudioStart, AudioStop

        chunk = SENT_RATE // 10 * 4  # 100 ms, 16-bit stereo
        try:
            await handler.write_event(AudioStart(rate=SENT_RATE, width=2, channels=2).event())
            for i in range(0, len(self.sound), chunk):
                await handler.write_event(AudioChunk(rate=SENT_RATE, width=2, channels=2,
                                                     audio=self.sound[i : i + chunk]).event())
                await asyncio.sleep(0.1)
            await handler.write_event(AudioStop().event())
        except (OSError, RuntimeError):
            return

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(timeout=5)


@pytest.fixture
def satellite() -> Iterator[StandInSatellite]:
    running = StandInSatellite(sent_as_satellite("cmd01"))  # "flip my seven"
    yield running
    running.close()


@pytest.mark.slow
def test_a_wyoming_satellite_is_its_player_s_microphone(satellite):
    """The referee connects, says run-satellite, and hears what the satellite
    streams (22,050 Hz stereo, converted) as Ann's: "flip my seven" flips
    Ann's seven; the table is told when the satellite listens and stops, and
    (a table without a screen or keyboard) that Ann cannot be heard until it
    is back: no "page" to type on (#73 item 6)."""
    game = PhoneGame(satellites=[Satellite("Ann", "127.0.0.1", satellite.port)], pages=False)
    try:
        game.wait_until_said("Ann's satellite is listening.")
        game.wait_until_said("Ann, 7 down", timeout=30)
        assert "run-satellite" in satellite.told
        flips = [r for r in list(game.records)
                 if isinstance(r, EventRecord) and r.event == "TileFlipped"]
        assert [(f.fields["owner"], f.fields["tile"], f.fields["by"]) for f in flips] == [
            ("Ann", 7, "Ann")]
        # (logged as what it came from, not "phone": #73 item 11)
        assert [r.source for r in game.inputs() if r.speaker == "Ann"] == ["satellite"]
        satellite.close()  # the satellite goes away
        game.wait_until_said("Ann's satellite stopped listening. I keep trying to reach it; "
                             "until then, I cannot hear Ann.", timeout=10)
    finally:
        game.close()


@pytest.mark.slow
def test_a_satellite_that_is_not_there_yet_is_tried_until_it_is():
    """The referee starts before the satellite: it keeps trying, and hears
    it once it is up."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on (yet)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    game = PhoneGame(satellites=[Satellite("Ann", "127.0.0.1", port)])
    satellite = None
    try:
        time.sleep(3.0)
        assert not any("satellite is listening" in s for s in game.said())
        satellite = StandInSatellite(sent_as_satellite("cmd01"), port)
        game.wait_until_said("Ann, 7 down", timeout=30)
    finally:
        game.close()
        if satellite is not None:
            satellite.close()


@pytest.mark.parametrize(("given", "why"), [
    (["Zed=tcp://127.0.0.1:10700"], "'Zed' is not one of the players"),
    (["Ann=127.0.0.1:10700"], "as tcp://HOST:PORT"),
    (["Ann=tcp://127.0.0.1"], "as tcp://HOST:PORT"),
    (["Ann=tcp://127.0.0.1:notaport"], "as tcp://HOST:PORT"),
    (["Ann=tcp://a:1", "ann=tcp://b:2"], "Ann is given two satellites"),
])
def test_a_bad_seat_satellite_is_refused_with_the_reason(given, why):
    from referee.satellites import SatelliteError

    with pytest.raises(SatelliteError, match=why):
        parse_satellites(given, ("Ann", "Bob"))


def test_play_refuses_a_satellite_with_typed_input_before_the_game(capsys):
    from referee.cli import main

    assert main(["play", "race65", "--input", "text", "--seat",
                 "Ann=tcp://127.0.0.1:10700"]) != 0
    assert "--input text says the referee does not listen" in capsys.readouterr().err
