"""Seat pages as seat microphones (#65): the real server on 127.0.0.1, real
WebSockets (the ``websockets`` client, as a script or a satellite would
send), the real recogniser on the committed recordings, and a real headless
Chromium whose fake microphone plays a WAV file into the seat page."""

from __future__ import annotations

import functools
import ipaddress
import os
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from harness.phonegame import PhoneGame
from harness.waits import until
from referee.protocol import Speech
from referee.screen.phones import AHEAD, SETTLE, STALL, TAKEN_OVER, PhoneSeats, _Clock
from referee.screen.server import Screen
from referee.speech.audio import RATE, load_wav
from referee.speech.speaking.tts import EspeakVoice

#: Live referees and phones: one at a time (tests/conftest.py).
pytestmark = pytest.mark.realtime

FIXTURES = Path(__file__).parent / "audio_fixtures" / "piper-joe"
CHROMIUM = Path("/usr/bin/chromium")
ARTEFACTS = Path(os.environ.get("REFEREE_ARTEFACTS",
                                Path(__file__).parent.parent / "cache" / "artefacts")) / "screen"
FRAME = RATE // 10  # 100 ms a frame, as the seat page sends
#: The tests that say "stop" while the rules are read have them read slowly
#: (words a minute, a setting players have), so that at least
#: :data:`READING_AHEAD` seconds of the section lie ahead when the stop is
#: said: on a busy CI worker a stop once took 6 s to cut the voice (2026-12-07).
SLOW_RATE = 90
READING_AHEAD = 12


def pcm(name: str) -> bytes:
    """A committed recording's samples (16 kHz mono), as a phone sends them."""
    return load_wav(FIXTURES / f"{name}.wav").to_bytes()


SILENCE = bytes(2 * RATE)  # one second


def listen_url(screen: Screen, player: str, key: str | None = None) -> str:
    seat = screen.seats[player]
    return (f"ws://127.0.0.1:{screen.port}/seat/{player}/listen"
            f"?key={seat.key if key is None else key}")


def stream(socket: Any, data: bytes, pace: float = 0.1) -> None:
    """Send ``data`` in 100 ms frames, ``pace`` seconds apart (0.1: real time)."""
    for i in range(0, len(data), FRAME * 2):
        socket.send(data[i : i + FRAME * 2])
        time.sleep(pace)


def closed_because(socket: Any, frames: list[Any]) -> str:
    """Send ``frames``, then wait for the server to close the stream; its reason."""
    try:
        for frame in frames:
            socket.send(frame)
        socket.recv(timeout=5)
    except ConnectionClosed as closed:
        return "" if closed.rcvd is None else str(closed.rcvd.reason)
    raise AssertionError("the stream was not closed")


@pytest.fixture
def game() -> Iterator[PhoneGame]:
    played = PhoneGame()
    yield played
    played.close()


@pytest.mark.slow
def test_a_phone_s_stream_is_heard_as_its_player_s_move(game):
    """"flip my seven" streamed from Ann's page in real time is heard, logged
    as Ann's from her phone, and played; the same words from Bob's page, on
    Ann's turn, are Bob's: the seat says who spoke, not the turn."""
    with connect(listen_url(game.screen, "Ann")) as ann:
        stream(ann, SILENCE[: RATE] + pcm("cmd01") + SILENCE)
        game.wait_until_said("Ann, 7 down")
    heard = game.inputs()[-1]
    assert (heard.speaker, heard.source, heard.intent.kind) == ("Ann", "phone", "flip")
    assert heard.intent["tile"] == 7
    # Decoded ahead during the end silence by Ann's own listener, as the
    # table microphone's words are.
    (speech,) = [r for r in list(game.records) if isinstance(r, Speech)]
    assert speech.transcript.ahead
    game.wait_until_said("Ann's phone stopped listening")
    with connect(listen_url(game.screen, "Bob")) as bob:
        stream(bob, SILENCE[: RATE] + pcm("cmd01") + SILENCE)
        assert until(lambda: game.inputs()[-1] is not heard, 20), game.said()
    bob_said = game.inputs()[-1]
    assert (bob_said.speaker, bob_said.by, bob_said.source) == ("Bob", "Bob", "phone")
    assert game.final()["players"]["Ann"]["down"] == [7]  # Bob's words moved nothing


@pytest.mark.slow
def test_hold_to_talk_ends_the_utterance_when_the_player_lets_go(game):
    """A page in hold-to-talk sends sound only while the button is held, then
    "end": the move is decided at once, with no silence after it."""
    with connect(listen_url(game.screen, "Ann")) as ann:
        stream(ann, pcm("cmd01"), pace=0.0)
        ann.send("end")
        game.wait_until_said("Ann, 7 down")


def test_a_stream_without_the_seat_s_key_is_refused_before_it_opens():
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=PhoneSeats(["Ann", "Bob"]))
    shown.start()
    try:
        for url in (listen_url(shown, "Ann", key="wrong"), listen_url(shown, "Ann", key=""),
                    f"ws://127.0.0.1:{shown.port}/seat/Cy/listen?key=x"):
            with pytest.raises(InvalidStatus) as refused:
                connect(url)
            assert refused.value.response.status_code in (403, 404)
        assert shown.phones is not None
        assert shown.phones.listening == []
    finally:
        shown.stop()


@pytest.mark.parametrize(("frames", "why"), [
    ([b"\x00" * 3], "an even number of bytes"),
    ([bytes(4 * RATE)], "At most 1 s of sound a frame"),
    (["hello"], 'Send sound as binary frames, or "end"'),
    ([bytes(2 * RATE)] * int(AHEAD + 3), "More sound than time"),
])
def test_bad_frames_close_the_stream_with_a_reason_and_change_nothing(frames, why):
    phones = PhoneSeats(["Ann", "Bob"])
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=phones)
    shown.start()
    try:
        for _ in range(4):  # (a client that tries again and again)
            with connect(listen_url(shown, "Ann")) as ann:
                assert why in closed_because(ann, frames)
        time.sleep(0.2)
        assert phones.hear() == []
        # The table hears nothing of a stream refused at once (#73 item 7);
        # the terminal is told why, once.
        assert phones.notices() == []
        ((player, device, reason),) = phones.refusals()
        assert (player, device) == ("Ann", "phone")
        assert why in reason
    finally:
        shown.stop()


def test_a_stream_that_stalled_may_catch_up_but_one_too_fast_is_refused():
    """A busy machine stalls the page or the server: the stall's sound then
    arrives in one burst (CI refused a Chromium page so, at its start). The
    gap counts as time the sound was made in; three times too fast is still
    refused within seconds."""
    second = bytes(2 * RATE)

    def pace(arrivals: list[tuple[float, int]], opened: float = 0.0) -> list[str | None]:
        clock = _Clock(opened)
        return [clock.refused(second[: 2 * int(RATE * length)], at) for at, length in arrivals]

    # Opened at 0, nothing read until 5 s, then five seconds of sound at once.
    assert pace([(5.0, 1)] * 5) == [None] * 5
    # Two seconds of sound, a 4-s stall, then the stall's four seconds.
    assert pace([(0.0, 1), (1.0, 1), *[(5.0, 1)] * 4]) == [None] * 6
    # A stall longer than STALL gives no more than STALL.
    late = pace([(0.0, 1), *[(STALL + 30.0, 1)] * int(STALL + AHEAD + 2)])
    assert "More sound than time" in str(late[-1])
    # 48 kHz sent as 16 kHz: three seconds of sound every second of time.
    fast = pace([(t / 3, 1) for t in range(30)])
    first = next(i for i, why in enumerate(fast) if why)
    assert first / 3 < 5.0  # refused within five seconds


@pytest.mark.slow
def test_a_second_page_takes_the_seat_over_and_the_first_is_told():
    phones = PhoneSeats(["Ann", "Bob"])
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=phones)
    shown.start()
    try:
        with connect(listen_url(shown, "Ann")) as first:
            first.send(bytes(FRAME * 2))
            time.sleep(SETTLE + 0.2)
            with connect(listen_url(shown, "Ann")) as second:
                assert closed_because(first, []) == "Another page took Ann's microphone."
                assert first.close_code == TAKEN_OVER
                second.send(bytes(FRAME * 2))
                time.sleep(0.2)
                assert phones.listening == ["Ann"]
        time.sleep(0.3)
        assert phones.notices() == [("Ann", "listening"), ("Ann", "moved"), ("Ann", "stopped")]
        assert phones.listening == []
    finally:
        shown.stop()


def test_seats_closed_while_the_loop_hears_never_cancel_with_a_closed_canceller():
    """The screen stops (closing the phones' echo cancellers) while the live
    loop still takes what they sent: what it had not taken is heard no more,
    and nothing reaches a closed canceller (the loop's thread died in
    speexdsp there: a segmentation fault, 2026-12-07)."""
    from referee.speech.audio import PlaybackTrack

    phones = PhoneSeats(["Ann", "Bob"], track=PlaybackTrack())
    ann = phones.open("Ann", lambda code, reason: None)
    tone = (np.sin(np.arange(RATE // 10) / 5) * 4000).astype("<i2").tobytes()
    assert phones.take("Ann", ann, tone) is None
    assert phones.hear() == []  # (Ann's stream and its canceller, under way)
    assert phones.take("Ann", ann, tone) is None
    phones.close()
    assert phones.hear() == []
    phones.close()  # (twice is nothing)


def test_a_screen_whose_referee_does_not_listen_to_voices_says_so():
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=None)
    shown.start()
    try:
        with connect(listen_url(shown, "Ann")) as ann:
            assert "not listening to voices" in closed_because(ann, [])
    finally:
        shown.stop()


def with_microphone(playwright: Any, wav: Path) -> Any:
    """Headless Chromium whose microphone plays ``wav`` (in a loop), granted
    to any page without asking."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=["--no-sandbox", "--disable-gpu", "--no-first-run",
              "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
              f"--use-file-for-fake-audio-capture={wav}",
              "--autoplay-policy=no-user-gesture-required"])


def _fake_microphone(path: Path, name: str = "cmd01", before: float = 1.0,
                     after: float = 3.0, hiss: float = 0.0) -> Path:
    """A WAV for Chromium's fake microphone: a recording ("flip my seven")
    between silences (Chromium plays it in a loop). With ``hiss``, at 48 kHz
    as a phone records, with noise from 8.5 to 20 kHz throughout, ``hiss``
    times as loud as the speech (RMS): nothing of it belongs in 16 kHz sound."""
    samples = np.concatenate([np.zeros(int(before * RATE), np.int16),
                              np.frombuffer(pcm(name), "<i2"),
                              np.zeros(int(after * RATE), np.int16)]).astype(np.float64)
    rate = RATE
    if hiss:  # (by the FFT: 16 kHz to 48 kHz exactly, and the noise's band exactly)
        speech_rms = float(np.sqrt(np.mean(np.frombuffer(pcm(name), "<i2").astype(float) ** 2)))
        rate, n = 48000, 3 * len(samples)
        samples = np.fft.irfft(np.fft.rfft(samples), n) * 3
        spectrum = np.fft.rfft(np.random.default_rng(7).standard_normal(n))
        freqs = np.fft.rfftfreq(n, 1 / rate)
        band = np.fft.irfft(np.where((freqs >= 8500) & (freqs <= 20000), spectrum, 0), n)
        samples += band / np.sqrt(np.mean(band**2)) * speech_rms * hiss
        samples *= min(1.0, 30000 / np.abs(samples).max())
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())
    return path


@pytest.mark.slow
def test_a_seat_page_in_chromium_is_its_player_s_microphone(game, tmp_path):
    """Real headless Chromium, its microphone a WAV file: Ann opens her seat
    page (on this machine's own address, a secure page), switches hands-free
    on, and her spoken move is played; the page says it is listening and
    shows what the referee made of it."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    wav = _fake_microphone(tmp_path / "ann.wav")
    with sync_playwright() as playwright:
        chromium = with_microphone(playwright, wav)
        try:
            page = chromium.new_page(viewport={"width": 390, "height": 844})
            page.goto(game.screen.seat_url("Ann").replace("localhost", "127.0.0.1"))
            assert page.get_by_role("button", name="Hold to talk").is_enabled()
            page.get_by_label("Hands-free: listen all the time").check()
            page.wait_for_function(
                "document.getElementById('mic-status').innerText.includes('listening')",
                timeout=10_000)
            game.wait_until_said("Ann, 7 down", timeout=30)
            page.wait_for_function(
                "document.getElementById('captions').innerText.includes('Ann, 7 down')",
                timeout=10_000)
            ARTEFACTS.mkdir(parents=True, exist_ok=True)  # (docs/playing.md shows it)
            page.screenshot(path=str(ARTEFACTS / "seat-page-listening.png"),
                            clip={"x": 0, "y": 0, "width": 390, "height": 560})
        finally:
            chromium.close()
    assert any(r.source == "phone" and r.speaker == "Ann" for r in game.inputs())


@pytest.mark.slow
def test_after_hold_to_talk_the_mic_line_says_what_was_heard_and_is_ready_again(
        game, tmp_path):
    """Issue #83: 20 s after the referee answered, the line still said "Sent.
    Waiting for the referee." It says what the referee heard of this seat and
    what became of it, then that the button is ready. The button is held for
    one turn of the fake microphone's loop (which starts when the page opens
    the microphone, at the first press): one whole "flip my seven"."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    wav = _fake_microphone(tmp_path / "ann.wav", before=1.0, after=1.0)
    loop = load_wav(wav).seconds
    with sync_playwright() as playwright:
        chromium = with_microphone(playwright, wav)
        try:
            page = chromium.new_page(viewport={"width": 390, "height": 844})
            page.goto(game.screen.seat_url("Ann").replace("localhost", "127.0.0.1"))
            talk = page.locator("#talk")
            talk.dispatch_event("pointerdown")
            page.wait_for_function(
                "document.getElementById('mic-status').innerText.includes('speak now')",
                timeout=10_000)
            page.wait_for_timeout(int(loop * 1000))
            talk.dispatch_event("pointerup")
            status = "document.getElementById('mic-status').innerText"
            game.wait_until_said("Ann, 7 down", timeout=30)
            page.wait_for_function(f"{status}.includes('Hold the button to talk')",
                                   timeout=10_000)
            line = page.evaluate(status)
            assert line.startswith("Heard: "), line
            assert ": played." in line, line
            assert "Waiting" not in line
        finally:
            chromium.close()


@pytest.mark.slow
def test_a_phone_s_48_khz_sound_with_hiss_above_8_khz_is_heard_as_its_16_khz_original(
        game, tmp_path):
    """#73 item 21: Chromium's fake microphone plays "flip my seven" at 48 kHz,
    as a phone records, with hiss from 8.5 to 20 kHz twice as loud as the
    voice. The page low-passes before it resamples to 16 kHz: between her
    words nothing comes through (averaging three samples let the hiss fold
    into the band at a quarter of its level), and her move is heard."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    wav = _fake_microphone(tmp_path / "ann.wav", hiss=2.0)
    sent: list[bytes] = []  # (what the page sent, as the server took it)
    phones: PhoneSeats = game.phones
    take = phones.take

    def taken(player: str, stream: object, data: bytes | None) -> str | None:
        sent.append(data or b"")
        return take(player, stream, data)

    phones.take = taken  # type: ignore[method-assign]
    with sync_playwright() as playwright:
        chromium = with_microphone(playwright, wav)
        try:
            page = chromium.new_page()
            page.goto(game.screen.seat_url("Ann").replace("localhost", "127.0.0.1"))
            page.get_by_label("Hands-free: listen all the time").check()
            assert until(lambda: any("Ann, 7 down" in s or "did you say: flip Ann's 7?" in s
                                     for s in game.said()), 30), (game.said(), game.heard())
        finally:
            chromium.close()
    sound = np.frombuffer(b"".join(sent), "<i2").astype(np.float64)
    quarters = sound[: len(sound) // 4000 * 4000].reshape(-1, 4000)
    assert len(quarters) >= 8
    assert np.sqrt(np.mean(quarters**2, axis=1)).min() < 20


@pytest.mark.slow
def test_the_seat_page_low_passes_before_it_resamples_to_16_khz():
    """#73 item 21: the seat page's audio worklet, run by Chromium itself (an
    offline audio context at a phone's rate): a 1 kHz tone comes through at
    its level, and a louder 12 kHz tone, which has no place in 16 kHz sound,
    does not fold into it at 4 kHz (averaging three samples let it through
    at a third of its level, above the 1 kHz tone); 7 kHz is still heard."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=PhoneSeats(["Ann", "Bob"]))
    shown.start()
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                  args=["--no-sandbox", "--disable-gpu"])
            try:
                page = chromium.new_page()
                page.goto(shown.seat_url("Ann").replace("localhost", "127.0.0.1"))
                sent = {rate: page.evaluate(_RENDER_THROUGH_CAPTURE, rate)
                        for rate in (48000, 44100)}  # (a phone's two usual rates)
            finally:
                chromium.close()
    finally:
        shown.stop()
    for rate, samples in sent.items():
        out = np.asarray(samples, dtype=np.float64)[4000:] / 32768.0  # (past the start)
        assert len(out) >= 16000, rate

        def level(freq: float, out: Any = out) -> float:
            t = np.arange(len(out)) / 16000
            return float(2 * np.abs(np.sum(out * np.exp(-2j * np.pi * freq * t))) / len(out))

        assert level(1000) == pytest.approx(0.1, rel=0.05), rate
        assert level(4000) < 0.1 * 10 ** (-60 / 20), rate  # the 12 kHz tone: 60 dB below
        assert level(7000) > 0.1 * 0.5, rate  # (the 7 kHz tone: more than half its level)


#: Run in the seat page: the 1 kHz, 7 kHz and 12 kHz tones (0.1, 0.1, 0.5)
#: for 2 s at the given rate through the page's capture worklet, offline;
#: the 16-bit samples it posted.
_RENDER_THROUGH_CAPTURE = """async (rate) => {
  const seconds = 2;
  const context = new OfflineAudioContext(1, rate * seconds, rate);
  await context.audioWorklet.addModule("/static/capture.js");
  const buffer = context.createBuffer(1, rate * seconds, rate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < data.length; i++) {
    const t = i / rate;
    data[i] = 0.1 * Math.sin(2 * Math.PI * 1000 * t) + 0.1 * Math.sin(2 * Math.PI * 7000 * t)
            + 0.5 * Math.sin(2 * Math.PI * 12000 * t);
  }
  const source = context.createBufferSource();
  source.buffer = buffer;
  const node = new AudioWorkletNode(context, "capture");
  const sent = [];
  node.port.onmessage = (m) => sent.push(...new Int16Array(m.data));
  source.connect(node);
  node.connect(context.destination);
  source.start();
  await context.startRendering();
  await new Promise((done) => setTimeout(done, 200));  // (the last messages)
  return sent;
}"""


def test_the_screen_over_https_with_the_referee_s_own_certificate(tmp_path, monkeypatch):
    """``--tls``: the referee makes a certificate for its addresses once and
    keeps it; the pages and a seat's microphone are served over it (HTTPS,
    WSS), and a client that trusts it gets the page; one that does not, no page."""
    import ssl
    import urllib.error
    import urllib.request

    from referee.screen.tls import checked_pair, own_certificate

    monkeypatch.setenv("REFEREE_DATA", str(tmp_path))
    cert, key = own_certificate(["127.0.0.1"])
    assert cert.parent == tmp_path / "tls"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert own_certificate(["127.0.0.1"]) == (cert, key)  # kept, not made again
    made = cert.stat().st_mtime_ns
    own_certificate(["127.0.0.1"])
    assert cert.stat().st_mtime_ns == made
    phones = PhoneSeats(["Ann", "Bob"])
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=phones, tls=checked_pair(cert, key))
    shown.start()
    try:
        assert shown.url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(shown.seat_url("Ann"), context=trusting, timeout=5) as page:
            assert "Hold to talk" in page.read().decode()
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(shown.url, context=ssl.create_default_context(), timeout=5)
        wss = listen_url(shown, "Ann").replace("ws://", "wss://")
        with connect(wss, ssl=trusting) as ann:
            ann.send(bytes(FRAME * 2))
            time.sleep(0.3)
            assert phones.listening == ["Ann"]
    finally:
        shown.stop()


def test_the_referee_s_certificate_is_one_phones_accept_and_is_renewed_before_it_ends(tmp_path):
    """#73 item 20: serverAuth in its extended key usage, valid at most 397
    days (Apple's and the browsers' rules for TLS server certificates); kept
    while it has a month left, then renewed, and the table is told. A
    ten-year certificate without the usage (an older referee's) is renewed."""
    import datetime

    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from referee.screen.tls import RENEW_DAYS, VALID_DAYS, own_certificate

    def read(cert: Path) -> x509.Certificate:
        return x509.load_pem_x509_certificate(cert.read_bytes())

    told: list[str] = []
    made = datetime.datetime(2026, 12, 5, tzinfo=datetime.UTC)
    cert, _ = own_certificate(["127.0.0.1"], tmp_path, told.append, now=made)
    first = read(cert)
    usage = first.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    assert list(usage.value) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert first.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature
    lasts = first.not_valid_after_utc - first.not_valid_before_utc
    assert lasts <= datetime.timedelta(days=397)
    assert VALID_DAYS <= 397
    assert first.not_valid_before_utc < made < first.not_valid_after_utc
    later = first.not_valid_after_utc - datetime.timedelta(days=RENEW_DAYS + 1)
    own_certificate(["127.0.0.1"], tmp_path, told.append, now=later)
    assert read(cert).serial_number == first.serial_number
    assert told == []
    soon = first.not_valid_after_utc - datetime.timedelta(days=RENEW_DAYS - 1)
    own_certificate(["127.0.0.1"], tmp_path, told.append, now=soon)
    renewed = read(cert)
    assert renewed.serial_number != first.serial_number
    assert renewed.not_valid_after_utc > soon + datetime.timedelta(days=300)
    assert told == [f"The screen's certificate was renewed (it ends on "
                    f"{first.not_valid_after_utc:%d %B %Y}): each phone must accept it again "
                    "the next time it opens its page."]
    # An older referee's certificate: ten years, no extended key usage.
    _ten_year_certificate(cert, tmp_path / "screen-key.pem")
    told.clear()
    own_certificate(["127.0.0.1"], tmp_path, told.append, now=made)
    assert read(cert).extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    assert told == ["The screen's certificate was renewed (it was not a server certificate "
                    "phones accept): each phone must accept it again the next time it opens "
                    "its page."]


def _ten_year_certificate(cert: Path, key: Path) -> None:
    """A certificate as the referee made them before #73: valid ten years,
    without key usages."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "The referee's screen")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    built = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
             .public_key(private.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
             .add_extension(x509.SubjectAlternativeName(names), critical=False)
             .sign(private, hashes.SHA256()))
    cert.write_bytes(built.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))


def test_a_certificate_that_does_not_fit_its_key_is_refused_with_the_reason(tmp_path):
    from referee.screen.tls import TLSError, checked_pair, own_certificate

    one, _ = own_certificate(["127.0.0.1"], tmp_path / "one")
    _, other = own_certificate(["127.0.0.1"], tmp_path / "other")
    with pytest.raises(TLSError, match="Cannot use the certificate"):
        checked_pair(one, other)
    with pytest.raises(TLSError, match="Cannot use the certificate"):
        checked_pair(tmp_path / "missing.pem", other)


@pytest.mark.slow
def test_a_phone_that_goes_quiet_without_closing_stops_listening_and_is_told():
    """A phone that locks or leaves the network closes nothing: its page just
    stops answering. The server's pings find it within about ten seconds; the
    seat stops listening and the table is told (here: a raw socket that opens
    the stream, then never reads again)."""
    import base64
    import os as _os
    import socket

    from referee.screen.server import PING

    phones = PhoneSeats(["Ann", "Bob"])
    shown = Screen(["Ann", "Bob"], "127.0.0.1", 0, phones=phones)
    shown.start()
    try:
        raw = socket.create_connection(("127.0.0.1", shown.port))
        key = base64.b64encode(_os.urandom(16)).decode()
        raw.sendall((f"GET /seat/Ann/listen?key={shown.seats['Ann'].key} HTTP/1.1\r\n"
                     f"Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        assert raw.recv(4096).startswith(b"HTTP/1.1 101")
        time.sleep(0.3)
        assert phones.listening == ["Ann"]
        assert phones.notices() == []  # (not yet: it may still be refused)
        time.sleep(SETTLE)
        assert phones.notices() == [("Ann", "listening")]
        assert until(lambda: not phones.listening, 3 * PING + 5), \
            "the silent phone was never let go"
        assert phones.notices() == [("Ann", "stopped")]
        raw.close()
    finally:
        shown.stop()


@pytest.mark.slow
def test_stop_said_into_a_phone_cuts_the_referee_s_voice():
    """The referee reads the rules aloud (eSpeak, to no speaker: the time it
    takes is real); Ann says "stop" into her phone meanwhile: the voice is
    cut there (the brain is told, and logs it), long before the section ends
    (read at :data:`SLOW_RATE`)."""
    from referee.protocol import VoiceCut

    game = PhoneGame(voice=EspeakVoice(rate=SLOW_RATE))
    try:
        game.wait_until_said("Ann starts")
        time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 0.2)
        status, _ = _post(game.screen, "Ann", "rules")
        assert status == 200
        assert until(lambda: game.table.busy_until >= game.loop.now() + READING_AHEAD, 10), \
            "the rules were never read"
        reading_until = game.table.busy_until
        with connect(listen_url(game.screen, "Ann")) as ann:
            stream(ann, pcm("cmd51") + SILENCE)
            assert until(lambda: any(isinstance(r, VoiceCut) for r in list(game.records)),
                         10), game.said()
        assert game.table.busy_until < reading_until - 2.0
    finally:
        game.close()


def _post(screen: Screen, player: str, text: str) -> tuple[int, bytes]:
    import json
    import urllib.request

    request = urllib.request.Request(screen.seat_url(player).replace("?", "/say?"),
                                     data=json.dumps({"text": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        return reply.status, reply.read()


@pytest.mark.slow
def test_noise_and_silence_from_a_phone_change_nothing(game):
    """A phone in a pocket: seconds of loud hiss, then of silence, streamed
    in real time. Nothing is played, nothing is asked, the game is as it was."""
    before = game.final()
    hiss = (np.random.default_rng(5).standard_normal(3 * RATE) * 6000).astype("<i2").tobytes()
    with connect(listen_url(game.screen, "Ann")) as ann:
        stream(ann, hiss + SILENCE * 2)
    time.sleep(1.0)
    assert game.final() == before
    assert not any(r.intent.kind not in ("none",) and r.sure for r in game.inputs())
    assert not any("did you" in s.lower() for s in game.said())


@pytest.mark.slow
def test_a_seat_page_on_plain_http_says_why_its_microphone_is_off():
    """Opened at the machine's network address over plain HTTP (not a secure
    page: a phone would give it no microphone), the seat page turns its
    microphone controls off and says why, and how to get them; tapping and
    typing stay."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    from referee.screen.server import lan_addresses

    address = next(iter(lan_addresses()), None)
    if address is None:
        pytest.skip("this machine has no network address but loopback")
    shown = Screen(["Ann", "Bob"], "0.0.0.0", 0, phones=PhoneSeats(["Ann", "Bob"]))
    shown.start()
    try:
        assert shown.seat_url("Ann").startswith(f"http://{address}:")
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True,
                args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            try:
                page = chromium.new_page()
                page.goto(shown.seat_url("Ann"))
                assert page.get_by_role("button", name="Hold to talk").is_disabled()
                status = page.locator("#mic-status").inner_text()
                assert "The microphone is off" in status
                assert "--tls" in status
                assert page.get_by_role("button", name="Send").is_enabled()
            finally:
                chromium.close()
    finally:
        shown.stop()


def _judged_from(game: PhoneGame, source: str, since: int) -> bool:
    """Whether the brain has judged an utterance from ``source`` (taken or
    dropped) since its ``since``-th record."""
    from referee.records import DroppedRecord, InputRecord

    return any(isinstance(r, DroppedRecord | InputRecord) and r.source == source
               for r in list(game.records)[since:])


def _cut_since(game: PhoneGame, since: int) -> bool:
    """Whether the referee's voice was cut since its ``since``-th record."""
    from referee.protocol import VoiceCut

    return any(isinstance(r, VoiceCut) for r in list(game.records)[since:])


@pytest.mark.slow
@pytest.mark.alone
def test_a_phone_on_the_table_hears_its_player_through_the_referee_s_voice(tmp_path):
    """The referee speaks through a real audio server into the room; Ann's
    phone lies on the table, hands-free: it hears the room (the referee's
    voice through a room's response, 200 ms late on the way) and Ann close
    up. Its stream goes through an echo canceller of its own: it learns the
    room, nothing the referee says is heard as a move, Ann's "flip my
    twelve" said over the rules is heard and asked about (never played
    unasked: it was said over the voice; heard unclear there, or not at all,
    she says it again, as a player who was not answered does), and her
    "stop" cuts the voice (said again likewise)."""
    from harness import audioserver
    from harness.phone import Phone
    from referee.records import EventRecord
    from referee.speech.audio import PlaybackTrack
    from referee.speech.hearing.echo import available
    from referee.speech.speaking.tts import SpeakerOutput

    if not (audioserver.available() and available()):
        pytest.skip("PulseAudio or libspeexdsp is not installed (scripts/setup.sh installs them)")
    with audioserver.audio_server(tmp_path, this_process=True) as env:
        # PortAudio lists devices when it starts: it must start again to see
        # this server, which it declines while an earlier test's stream close
        # is stuck inside it, and which a restart on a busy machine can miss
        # (two fresh clones of 2026-12-06: "Error querying device -1").
        assert until(audioserver.portaudio_sees, 30), \
            "PortAudio never saw the audio server (stuck on an earlier stream, or no output)"
        game = PhoneGame(voice=EspeakVoice(), output=SpeakerOutput(track=PlaybackTrack()))
        phone = Phone(listen_url(game.screen, "Ann"), env, room_gain=0.5, latency=0.2)
        try:
            phone.start()
            game.wait_until_said("Ann starts")
            time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 0.5)
            # (the phone's first frames, on a busy machine)
            assert until(lambda: "Ann" in game.phones._streams, 10), \
                "the phone never sent its sound"
            echo = game.phones._streams["Ann"].echo
            assert echo is not None

            def read_rules() -> float:
                """Ask for the rules; 3 s into the reading, when it runs till."""
                assert _post(game.screen, "Ann", "rules")[0] == 200
                # (a bound for a starved machine, where the table's loop may
                # still be deciding what the phone heard: 10 s once ran out)
                assert until(lambda: game.table.busy_until >= game.loop.now() + 8, 30), (
                    "the rules were never read", game.said()[-6:], game.heard()[-4:])
                time.sleep(3.0)
                return game.table.busy_until

            # The canceller learns the room while the referee speaks (6-10 s
            # of its voice, measured): a move said over it before then is not
            # trusted (the gate's older rule holds), so the rules are read
            # until it has.
            for _ in range(5):
                read_rules()
                time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 1.0)
                if echo.cancelling:
                    break
            assert echo.cancelling, "the canceller never learnt the room"
            mark = len(game.records)
            asked = "Ann, did you say: flip Ann's 12?"
            # Heard unclear over the voice (1 run in 5 alone: "i flip my
            # twelve", what the canceller left of the rules before it), the
            # referee says so ("Sorry, I was talking") or, not nearly a
            # command, nothing; and Ann says it again over the rules read
            # again, as a player who was not answered does: up to three times.
            for _ in range(3):
                read_rules()
                tried = len(game.records)
                phone.say(load_wav(FIXTURES / "cmd54.wav"))  # flip my twelve
                assert until(functools.partial(_judged_from, game, "phone", tried), 30), (
                    game.said(), game.heard())
                if until(lambda: any(asked in t for t in game.said()), 5):
                    break
                time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 1.0)
            game.wait_until_said(asked, timeout=5)
            assert _post(game.screen, "Ann", "no")[0] == 200
            time.sleep(1.0)
            # Her "stop" over the rules read again cuts them; not answered (CI,
            # 2026-12-07: no cut within 20 s; beside two busy processes here,
            # words over the voice were heard as nothing or unclear), she says
            # it again over the next reading, up to three times.
            for _ in range(3):
                reading_until = read_rules()
                tried = len(game.records)
                phone.say(load_wav(FIXTURES / "cmd51.wav"))  # stop
                # (a bound for a starved machine, whose loop hears late: 5 s ran
                # out beside two busy processes, 2026-12-07)
                if until(functools.partial(_cut_since, game, tried), 20):
                    break
                time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 1.0)
            assert _cut_since(game, mark), (game.said()[-4:], game.heard()[-6:])
            assert game.table.busy_until < reading_until - 2.0
            heard = [r for r in game.inputs() if r.source == "phone"]
            assert [r.intent.kind for r in heard if r.intent.kind != "none"] == ["flip"], heard
            assert not any(isinstance(r, EventRecord) and r.event == "TileFlipped"
                           for r in list(game.records)), game.said()
            assert phone.closed_because is None
        finally:
            phone.close()
            game.close()


@pytest.mark.slow
def test_stop_said_into_a_seat_page_in_chromium_cuts_the_referee(tmp_path):
    """Real headless Chromium: Ann asks for the rules on her seat page (typed),
    and once the referee is reading them (eSpeak, to no speaker: the time it
    takes is real) she switches hands-free on and her fake microphone says
    "stop" 1 s later: the voice is cut there, long before the section ends.
    (Hands-free is switched on only once the reading has begun, so the stop
    falls inside it however slowly Chromium starts on a busy machine; read
    at :data:`SLOW_RATE`.)"""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (./run test installs it: scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    from referee.protocol import VoiceCut

    wav = _fake_microphone(tmp_path / "stop.wav", "cmd51", before=1.0, after=30.0)
    game = PhoneGame(voice=EspeakVoice(rate=SLOW_RATE))
    try:
        game.wait_until_said("Ann starts")
        time.sleep(max(0.0, game.table.busy_until - game.loop.now()) + 0.2)
        with sync_playwright() as playwright:
            chromium = with_microphone(playwright, wav)
            try:
                page = chromium.new_page()
                page.goto(game.screen.seat_url("Ann").replace("localhost", "127.0.0.1"))
                page.get_by_label("Type what you would say").fill("rules")
                page.get_by_role("button", name="Send").click()
                deadline = time.monotonic() + 10
                while game.table.busy_until < game.loop.now() + READING_AHEAD:
                    assert time.monotonic() < deadline, game.said()
                    time.sleep(0.05)
                reading_until = game.table.busy_until
                page.get_by_label("Hands-free: listen all the time").check()  # the file starts
                deadline = time.monotonic() + READING_AHEAD + 2
                while not any(isinstance(r, VoiceCut) for r in list(game.records)):
                    assert time.monotonic() < deadline, (game.said(), game.heard())
                    time.sleep(0.05)
            finally:
                chromium.close()
        assert game.table.busy_until < reading_until - 2.0
        assert any(isinstance(r, Speech) and r.source == "phone" and r.speaker == "Ann"
                   and "stop" in r.transcript.text for r in list(game.records)), game.heard()
    finally:
        game.close()


def test_a_stream_refused_again_and_again_is_told_to_the_terminal_once():
    """#73 item 7: a client that keeps sending the wrong thing is never said
    to listen or stop (the table hears nothing of it); its reason is printed
    once, and again only after a stream of the seat was taken, or for a new
    reason. A good stream is said to listen once it has been open a while."""
    now = [100.0]
    phones = PhoneSeats(["Ann", "Bob"], clock=lambda: now[0])

    def attempt(frame: bytes, lasting: float = 0.5) -> str | None:
        stream = phones.open("Ann", lambda code, why: None)
        refused = phones.take("Ann", stream, frame)
        now[0] += lasting
        phones.closed("Ann", stream)
        return refused

    for _ in range(3):
        assert attempt(b"\x00" * 3) is not None
    assert phones.notices() == []
    assert phones.refusals() == [("Ann", "phone", "Send 16-bit samples: an even number of bytes.")]
    assert attempt(bytes(4 * RATE)) is not None  # a new reason is printed
    assert [why for _, _, why in phones.refusals()] == ["At most 1 s of sound a frame, please."]
    assert attempt(bytes(320)) is None  # a good stream, but over at once: nothing said
    assert phones.notices() == []
    assert attempt(bytes(320), SETTLE) is None  # a good stream: listening, then stopped
    assert phones.notices() == [("Ann", "listening"), ("Ann", "stopped")]
    assert attempt(b"\x00" * 3) is not None  # (after a good one, printed again)
    assert len(phones.refusals()) == 1
    assert phones.notices() == []
    # A stream that sends nothing is said to listen once it has been open a while.
    quiet = phones.open("Bob", lambda code, why: None, "satellite")
    assert phones.notices() == []
    now[0] += SETTLE
    assert phones.notices() == [("Bob", "listening")]
    phones.closed("Bob", quiet)
    assert phones.notices() == [("Bob", "stopped")]


def test_a_seat_microphone_that_stops_tells_the_table_how_the_player_is_heard_now():
    """#73 item 6: the table microphone if there is one, else the seat page,
    else the keyboard (a satellite is tried again), else nobody until it is back."""
    from referee.live import phone_notice

    assert phone_notice("Ann", "stopped", True, "satellite", pages=False).endswith(
        "I hear them on the table microphone again.")
    assert phone_notice("Ann", "stopped", False).endswith("They can type or tap on their page.")
    no_page = phone_notice("Ann", "stopped", False, "satellite", pages=False)
    assert "page" not in no_page
    assert no_page == ("Ann's satellite stopped listening. I keep trying to reach it; until "
                       "then, type Ann's moves at the keyboard, starting with 'Ann:'.")
    assert phone_notice("Ann", "stopped", False, "satellite", pages=False, keyboard=False) == (
        "Ann's satellite stopped listening. I keep trying to reach it; until then, I cannot "
        "hear Ann.")


@pytest.mark.slow
def test_a_page_refused_again_and_again_is_not_announced_and_its_reason_is_printed():
    """#73 item 7, in the live loop: four refused streams from Ann's seat (a
    text frame each) are never said to the table, and the terminal says why once."""
    game = PhoneGame(hearing=False)
    try:
        for _ in range(4):
            with connect(listen_url(game.screen, "Ann")) as ann:
                assert "binary frames" in closed_because(ann, ["hello"])
        deadline = time.monotonic() + 5
        while not any("was refused" in line for line in game.printed):
            assert time.monotonic() < deadline, game.printed
            time.sleep(0.05)
        time.sleep(SETTLE + 0.3)
        assert [line for line in game.printed if "refused" in line] == [
            "referee: Ann's phone was refused: Send sound as binary frames, or \"end\"."]
        assert not any("listening" in s for s in game.said()), game.said()
    finally:
        game.close()
