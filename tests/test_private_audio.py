"""A player's own headphones, for real: a PulseAudio server with two sinks.

The room's speaker is the null sink "table"; Ann's headphones are a second
null sink, "ann", which ALSA shows to PortAudio (and so to sounddevice) as
the device "ann_phones" (an ``.asoundrc`` in the server's home, as a user
would name a second sound card). A live Phase 10 Twist game with virtual
Twist cards is played by typed lines; each sink's monitor is recorded: the
referee's public sentences reach only the room, Ann's Twist card only her
headphones, and the shared screen never shows it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from harness.typedgame import Lines

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.audio_server, pytest.mark.realtime]

ASOUNDRC = """
pcm.ann_phones {
    type pulse
    device ann
    hint { show on
           description "Ann's headphones" }
}
"""


def _record(env: dict[str, str], sink: str, path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["parecord", f"--device={sink}.monitor", "--file-format=wav",
                             str(path)], env=env)


def _loud_seconds(path: Path) -> float:
    """How many seconds of the recording are sound (20 ms frames above -40 dBFS)."""
    with wave.open(str(path)) as recording:
        rate, channels = recording.getframerate(), recording.getnchannels()
        samples = np.frombuffer(recording.readframes(recording.getnframes()), dtype=np.int16)
    mono = samples.reshape(-1, channels).astype(np.float64).mean(axis=1) if len(samples) else \
        np.zeros(0)
    frame = rate // 50
    frames = mono[: len(mono) // frame * frame].reshape(-1, frame) if len(mono) >= frame else \
        np.zeros((0, frame))
    levels = np.sqrt((frames ** 2).mean(axis=1)) if len(frames) else np.zeros(0)
    return float((levels > 32768 * 10 ** (-40 / 20)).sum() / 50)


@pytest.mark.slow
def test_a_virtual_twist_card_is_said_in_the_players_headphones_only(audio_server, tmp_path):
    env = audio_server
    Path(env["HOME"], ".asoundrc").write_text(ASOUNDRC)
    subprocess.run(["pactl", "load-module", "module-null-sink", "sink_name=ann"], env=env,
                   check=True, capture_output=True)
    subprocess.run(["pactl", "set-default-sink", "table"], env=env, check=True)
    log = tmp_path / "game.jsonl"
    room_before, phones_before = tmp_path / "room1.wav", tmp_path / "phones1.wav"
    room_after, phones_after = tmp_path / "room2.wav", tmp_path / "phones2.wav"
    recorders = [_record(env, "table", room_before), _record(env, "ann", phones_before)]
    game = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", "phase10-twist", "--players", "Ann", "Bob",
         "--board", "1 T 2 10", "--twist", "virtual", "--private-audio", "Ann=ann_phones",
         "--seed", "3", "--input", "text", "--voice", "espeak", "--log", str(log), "--json"],
        env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    out = Lines(game.stdout)
    try:
        assert game.stdin is not None
        assert out.wait("Everyone: phase 1", 0, timeout=60), out.lines
        game.stdin.write("Bob: I'm out\nAnn: no\n")  # Ann to the Twist space
        game.stdin.flush()
        assert out.wait("you are on a Twist space", 0, timeout=30), out.lines
        time.sleep(12)  # everything public so far has been said
        for recorder in recorders:
            recorder.terminate()
            recorder.wait(timeout=10)
        recorders = [_record(env, "table", room_after), _record(env, "ann", phones_after)]
        time.sleep(1)
        seen = len(out.lines)
        game.stdin.write("Ann: twist card\n")
        game.stdin.flush()
        assert out.wait("to Ann only: (said in Ann's headphones)", seen, timeout=30), out.lines
        time.sleep(8)
        game.stdin.write("Ann: end the game\nBob: yes\nBob: that's all\n")
        game.stdin.close()
        game.wait(timeout=60)
    finally:
        for recorder in recorders:
            recorder.terminate()
            recorder.wait(timeout=10)
        if game.poll() is None:
            game.kill()
    err = game.stderr.read() if game.stderr else ""
    assert "Traceback" not in err
    private = [r for r in map(json.loads, log.read_text().splitlines()) if r.get("to") == "Ann"]
    assert len(private) == 1
    secret = private[0]["text"]
    assert secret.startswith("Ann, your Twist card is ")
    assert not any(secret in line for line in out.lines)  # never on the shared screen
    assert _loud_seconds(room_before) > 3  # the opening and the hand's end, in the room
    assert _loud_seconds(phones_before) == 0  # ... and nothing of it in Ann's headphones
    assert _loud_seconds(phones_after) > 1.5  # her Twist card, in her headphones
