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

#: Live referees, phones and satellites: one at a time (tests/conftest.py).
pytestmark = pytest.mark.realtime

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
    (["Zed=tcp://127.0.0.1:10700"], "--seat: There is no player called Zed."),
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


#: The real wyoming-satellite, in a venv of its own (scripts/setup.sh --train
#: makes it: it pins an older wyoming than the referee's).
REAL_SATELLITE = Path(__file__).parents[1] / "cache" / "wyoming-satellite" / "bin" / "python"
#: The real satellite's microphone: quiet, in real time (16 kHz, 16-bit mono).
QUIET_MICROPHONE = ("import sys, time\n"
                    "while True:\n"
                    "    sys.stdout.buffer.write(bytes(3200))\n"
                    "    sys.stdout.flush()\n"
                    "    time.sleep(0.1)\n")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_real_wyoming_satellite_says_the_referee_s_voice_and_only_its_own_secrets(
        tmp_path):
    """#73 item 18, with the real ``wyoming-satellite`` 1.0.0 at Ann's and
    Bob's seats (its ``--snd-command`` writing what it plays to a file): the
    referee, with no speaker of its own, speaks every sentence on both, the
    very sound it rendered (``--voice espeak,wav:DIR`` keeps a copy); Bob's
    virtual Twist card (``--private-audio Bob=satellite``) is said on Bob's
    satellite alone: all his satellite said besides the table's sentences is
    one sentence as long as the card's, and Ann's said nothing else."""
    import json
    import subprocess
    import sys

    from referee.speech.speaking.tts import make_voice
    from referee.wording import sentences

    probe = subprocess.run([str(REAL_SATELLITE), "-c", "import wyoming_satellite"],
                           capture_output=True, check=False) if REAL_SATELLITE.exists() else None
    if probe is None or probe.returncode != 0:
        pytest.skip("wyoming-satellite is not installed (scripts/setup.sh --train installs it "
                    "in cache/wyoming-satellite)")
    mic = tmp_path / "quiet.py"
    mic.write_text(QUIET_MICROPHONE)
    ports = {"Ann": _free_port(), "Bob": _free_port()}
    played = {player: tmp_path / f"{player}.raw" for player in ports}
    log, rendered = tmp_path / "game.jsonl", tmp_path / "voice"
    game = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", "phase10-twist", "--players", "Ann", "Bob",
         "--board", "1 T 2 10", "--twist", "virtual", "--seed", "7",
         "--voice", f"espeak,wav:{rendered}", "--rate", "400", "--log", str(log),
         *(a for p, port in ports.items() for a in ("--seat", f"{p}=tcp://127.0.0.1:{port}")),
         "--private-audio", "Ann=satellite", "--private-audio", "Bob=satellite"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    satellites: list[subprocess.Popen[Any]] = []
    try:
        out = _Lines(game.stdout)
        # The satellites come up once the opening has been said (it is not
        # waited for in real time): the referee keeps trying to reach them.
        assert out.wait("Hand 1: Ann deals."), out.lines
        satellites = [subprocess.Popen(
            [str(REAL_SATELLITE), "-m", "wyoming_satellite", "--name", player,
             "--uri", f"tcp://127.0.0.1:{port}", "--no-zeroconf",
             "--mic-command", f"{sys.executable} {mic}", "--snd-command",
             f"sh -c 'cat >> {played[player]}'", "--snd-command-rate", "16000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for player, port in ports.items()]
        assert out.wait("Ann's satellite is listening."), out.lines
        assert out.wait("Bob's satellite is listening."), out.lines
        assert game.stdin is not None
        game.stdin.write("Ann: I lay down my phase\nAnn: I'm out\nBob: no\nBob: twist card\n")
        game.stdin.flush()
        assert out.wait("Bob takes a Twist card."), out.lines
        _wait_until_still(played.values())
        heard = {player: path.read_bytes() for player, path in played.items()}
        said = [json.loads(line) for line in log.read_text().splitlines()]
        secret = next(r["text"] for r in said if r["type"] == "said" and r.get("to") == "Bob")
        game.stdin.write("Ann: end the game\nBob: yes\nAnn: that's all\n")
        game.stdin.close()
        game.wait(timeout=30)
    finally:
        processes: list[subprocess.Popen[Any]] = [game, *satellites]
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    errors = game.stderr.read() if game.stderr else ""
    assert "Traceback" not in errors
    table = {row.split("\t")[3]: _frames(rendered / row.split("\t")[0])
             for row in (rendered / "said.tsv").read_text().splitlines()}
    # No microphone here: a satellite table is told so, not told to type (#83).
    assert "each player is heard through their satellite" in errors + "".join(out.lines)
    assert not [s for s in table if "typ" in s.casefold()], list(table)
    assert secret not in table  # (no copy of a private sentence: it is Bob's alone)
    left = {}
    for player, sound in heard.items():
        assert table["Ann went out!"] in sound  # the very sound the referee rendered
        for sentence in table.values():
            sound = sound.replace(sentence, b"", 1)
        left[player] = len(sound) / 2 / RATE
    card = sum(make_voice("espeak", 400).render(s).seconds for s in sentences(secret))
    assert left["Ann"] < 0.05, left
    assert left["Bob"] == pytest.approx(card, rel=0.2), (left, card)


def _frames(path: Path) -> bytes:
    """A WAV file's samples as they are written (16-bit little-endian)."""
    import wave

    with wave.open(str(path), "rb") as wav:
        return wav.readframes(wav.getnframes())


def _wait_until_still(paths: Any, quiet: float = 1.5, most: float = 60.0) -> None:
    """Until the files have not grown for ``quiet`` seconds (the satellites
    say the referee's sentences in real time)."""
    deadline, sizes, since = time.monotonic() + most, None, time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, "the satellites never stopped speaking"
        now = [p.stat().st_size if p.exists() else 0 for p in paths]
        if now != sizes:
            sizes, since = now, time.monotonic()
        time.sleep(0.1)


def _read(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


class _Lines:
    """A process's printed lines, read as they come."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait(self, text: str, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in list(self.lines)):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


def test_a_satellite_says_every_sentence_its_players_or_none_as_asked():
    """``--satellite-voice``: all (the default), own (those that name the
    seat's player, as a word: not "Annie"), or none."""
    from referee.satellites import Satellites, SatelliteVoice
    from referee.screen.phones import PhoneSeats

    seats = Satellites([Satellite("Ann", "127.0.0.1", 1), Satellite("Bob", "127.0.0.1", 2)],
                       PhoneSeats(["Ann", "Bob", "Cy"]))
    assert SatelliteVoice(seats).for_whom("Cy's turn.") == ["Ann", "Bob"]
    own = SatelliteVoice(seats, "own")
    assert own.for_whom("Ann, did you say: flip Bob's 7?") == ["Ann", "Bob"]
    assert own.for_whom("bob's turn, 15 seconds.") == ["Bob"]
    assert own.for_whom("Annie is not here. Cy wins!") == []
    assert SatelliteVoice(seats, "none").for_whom("Ann's turn.") == []


@pytest.mark.slow
def test_private_sentences_on_a_satellite_need_the_player_s_satellite(tmp_path):
    """``--private-audio Bob=satellite`` without ``--seat Bob=...`` is refused
    before the game starts, with the fix."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "referee", "play", "phase10-twist", "--players", "Ann", "Bob",
         "--twist", "virtual", "--seat", "Ann=tcp://127.0.0.1:9", "--private-audio",
         "Bob=satellite", "--voice", "none", "--no-log"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert ("--private-audio Bob=satellite says Bob's private sentences on Bob's satellite, "
            "but Bob has none: add --seat Bob=tcp://HOST:PORT.") in done.stderr
    assert "Traceback" not in done.stderr
