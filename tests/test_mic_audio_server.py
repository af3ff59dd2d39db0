"""The microphone path for real: a PulseAudio server with a null sink.

The test starts its own PulseAudio daemon (installed by scripts/setup.sh),
plays a stream of spoken commands into the sink with ``paplay`` and lets
``referee hear --mic`` capture the sink's monitor through sounddevice and
PortAudio, exactly as it would a microphone.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.audioserver import start_audio_server, stop_audio_server
from harness.fixtures import stream_of, utterances
from harness.typedgame import Lines
from harness.waits import logged, records, until
from referee.speech.audio import Audio

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.audio_server


def _interruptible() -> None:
    """Ctrl+C's own action for the child, as in a terminal.

    A test run started in the background by a script (``./run test &``
    without job control) inherits SIGINT ignored, and Python keeps an ignored
    SIGINT ignored: the referee would never see the Ctrl+C this test sends
    (measured: ``bash -c 'pytest ... & wait'`` failed this test every time)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_spoken_commands_are_heard_live_through_an_audio_server(audio_server, tmp_path):
    """Commands after a little table talk, as at a real table.

    The first utterances through a new audio path are decoded with cepstral
    means still close to their generic start values, and where the audio
    server's resampling and the capture's start put the samples changes the
    words a little: "flip my seven" right after "good game" was "flip your
    seven" in 5 of 20 such variants. The commands here (a flip for another
    player, a call and a query) were each right in all 60 variants of this
    stream tried offline (20 start offsets times none, 44.1 and 48 kHz
    round trips), so a wrong word here is the microphone path's fault.
    """
    by_text = {u.text: u for u in utterances()}
    cases = [by_text[t] for t in ("good game", "Bob flip two down", "sixty-five!",
                                  "what's my score")]
    data, _ = stream_of(cases)
    wav = tmp_path / "table.wav"
    Audio(np.frombuffer(data, dtype="<i2").astype(np.int16)).write_wav(wav)
    listener = subprocess.Popen(
        [sys.executable, "-m", "referee", "hear", "--players", "Ann", "Bob", "--speaker", "Ann",
         "--mic", "--json"],
        env=audio_server, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_interruptible,
    )
    try:
        assert listener.stderr is not None
        first = listener.stderr.readline()  # the recogniser is loaded (or it exited: EOF)
        assert first.startswith("Listening"), first
        printed: list[str] = []
        said: list[str] = []
        readers = [threading.Thread(target=lambda into=into, pipe=pipe: into.extend(pipe),
                                    daemon=True)
                   for into, pipe in ((printed, listener.stdout), (said, listener.stderr))]
        for reader in readers:
            reader.start()
        time.sleep(3)  # the stream opens; the monitor's first block takes about 2 s
        subprocess.run(["paplay", str(wav)], env=audio_server, check=True, timeout=60)
        until(lambda: len(printed) >= len(cases), 30)  # (a busy machine decodes the last one late)
        time.sleep(1)  # nothing more is heard
    finally:
        listener.send_signal(signal.SIGINT)
        try:
            listener.wait(timeout=30)
        except subprocess.TimeoutExpired:
            listener.kill()  # left running, it would take the next tests' cores
            raise
    for reader in readers:
        reader.join(timeout=5)
    err = "".join(said)
    heard = [json.loads(line) for line in printed]
    words = [h["text"] for h in heard]
    assert len(heard) == len(cases), (words, err)
    assert [h["intent"] for h in heard[1:]] == [c.intent.to_json() for c in cases[1:]], (words, err)
    assert "Traceback" not in err


def _stereo(path: Path, left: bool, out: Path) -> Path:
    """The recording on one channel only: a seat microphone's view of its player."""
    from referee.speech.audio import load_wav

    mono = load_wav(path).samples
    silent = np.zeros_like(mono)
    frames = np.stack([mono, silent] if left else [silent, mono], axis=1)
    import wave

    with wave.open(str(out), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(frames.astype("<i2").tobytes())
    return out


def _play(recording: Path, seat: str, tmp_path: Path, server: dict[str, str]) -> None:
    """A player at seat Ann (left) or Bob (right) says a recording into the room."""
    wav = _stereo(recording, seat == "Ann", tmp_path / f"{seat}-{recording.name}")
    subprocess.run(["paplay", str(wav)], env=server, check=True, timeout=60)


def _live_game(env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    """``referee play race65`` listening to the audio server's microphone."""
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "play", "race65", *options, "--input", "mic",
         "--json"],
        env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible,
    )


@pytest.mark.slow
def test_a_live_game_by_voice_with_seat_microphones_through_an_audio_server(
    audio_server, tmp_path
):
    """The whole live loop for real: the referee speaks into the same room it listens to.

    Ann sits on the left channel and Bob on the right; the referee's voice
    (eSpeak through sounddevice) goes into the sink too, so the recogniser
    hears it: it must never act on it. Each player speaks once the referee
    has answered the previous move and had time to say it.

    Where the audio server's resampling and the capture's start put the
    samples changes what Whisper hears a little. Bob's bare "sixty-five!"
    (cmd11) was not heard in 5 of 17 runs of this test: offline, one
    capture of it here was heard at 12 of 20 start offsets (16 samples
    apart), the committed recording at 14 of 20; on the six tuning voices
    6.5 % of the commands change between right and wrong when started 5, 10
    or 15 ms later (docs/record/2026-11-26-ears-trained.md). That is the recogniser's accuracy,
    which the benchmarks measure; this test is of the live loop, so every
    recording here was heard right in all 60 variants tried offline (20
    offsets times none, 44.1 and 48 kHz round trips): Bob calls with "I call
    sixty-five" (cmd14). A move it hears right but is not sure of, it asks about
    first ("Ann, did you say: flip Ann's 12?"), and the player says yes: how
    sure the model is of one recording is the benchmarks' business too.
    """
    fixtures = ROOT / "tests" / "audio_fixtures" / "piper-joe"
    moves = [  # (recording, seat, what the referee answers)
        ("cmd54", "Ann", "Ann, 12 down."),
        ("cmd14", "Bob", "Bob, did you call 65?"),
        ("cmd49", "Bob", "OK, not played."),
        ("cmd53", "Ann", "Bob, do you agree: end the game?"),
        ("cmd48", "Bob", "Game stopped. No winner."),
    ]
    log = tmp_path / "game.jsonl"
    game = _live_game(audio_server, "--difficulty", "easy", "--seat-mics", "Ann=0,Bob=1",
                      "--log", str(log), "--screen", "0")
    # The table's screen is on too: what the referee says reaches a page as
    # captions while the voice and the seats work as they do without it.
    shown = _screen_events(game)
    out = Lines(game.stdout)
    answered = []
    speaker = _Speaker(audio_server)  # (the room's sound: players wait for the referee)
    try:
        assert speaker.listening(), "the recorder got no samples"
        assert out.wait("Ann starts.", 0)
        # The opening (about 10 s) has been said: waited for in the room (#84).
        assert speaker.said(time.monotonic() - 1.0, timeout=60), _told(out)
        for name, seat, answer in moves:
            seen = len(out.lines)
            _play(fixtures / f"{name}.wav", seat, tmp_path, audio_server)
            came = out.first([answer, f"{seat}, did you say: "], seen, timeout=10)
            printed = time.monotonic()
            if came is not None and came != answer:
                # Unsure of the move, the referee asks first; the player says yes.
                seen = len(out.lines)
                assert speaker.said(printed, timeout=30), _told(out)
                _play(fixtures / "cmd48.wav", seat, tmp_path, audio_server)
                came = out.first([answer], seen, timeout=10)
                printed = time.monotonic()
            answered.append(came == answer)
            if came is not None:  # (the referee has said it, in the room)
                assert speaker.said(printed, timeout=30), _told(out)
        # It said "... or that's all to finish." into the room and stayed: the
        # echo of that was not taken for a player leaving (its words decoded
        # at once as they ended: two seconds are a bound, not a guess).
        time.sleep(2)
        assert game.poll() is None
        assert game.stdin is not None
        game.stdin.write("Bob: that's all\n")
        game.stdin.flush()
        game.wait(timeout=30)
    finally:
        speaker.close()
        if game.poll() is None:
            game.kill()
    err = game.stderr.read() if game.stderr else ""
    assert "Traceback" not in err
    records = [json.loads(x) for x in log.read_text().splitlines()]
    inputs = [r for r in records if r["type"] == "input"]
    # The referee heard itself through the room and did not act on it: its
    # voice is dropped as its own echo, or (Whisper hears eSpeak's sentences
    # as what they are) as not a command.
    dropped = [r for r in records if r["type"] == "dropped"]
    assert dropped, records
    # Everything acted on came from a player's seat, and every move was answered.
    assert {r["source"] for r in inputs if r["intent"]["kind"] != "leave"} == {"seat mic"}
    calls = [r for r in inputs if r["intent"]["kind"] == "call"]
    assert [r["speaker"] for r in calls] == ["Bob"], (out.lines, records)
    assert answered == [True] * len(moves), (out.lines, records)
    assert game.returncode == 0, err
    final = json.loads(out.lines[-1])
    assert final["winner"] is None
    assert final["players"] == {"Ann": {"total": 12, "down": [12]},
                                "Bob": {"total": 0, "down": []}}
    captions = [e["text"] for e in shown if e["type"] == "say"]
    heard = [(e["who"], e["source"]) for e in shown if e["type"] == "heard"]
    assert [a for _, _, a in moves if any(a in c for c in captions)] == [a for _, _, a in moves]
    assert ("Bob", "seat mic") in heard
    assert [e for e in shown if e["type"] == "state"][-1]["state"]["game"]["players"] == \
        final["players"]


def _screen_events(game: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """The events a page of the game's screen gets, collected as they come
    (the screen's address is the first thing the referee prints about it)."""
    assert game.stderr is not None
    url = ""
    for line in game.stderr:
        if "the table's screen: " in line:
            url = line.split("the table's screen: ")[1].strip()
            break
    assert url, "the referee printed no screen address"
    events: list[dict[str, Any]] = []

    def read() -> None:
        with contextlib.suppress(OSError), urllib.request.urlopen(url + "events") as stream:
            for raw in stream:
                if raw.startswith(b"data: "):
                    events.append(json.loads(raw[6:]))

    threading.Thread(target=read, daemon=True).start()
    return events


@pytest.mark.slow
def test_a_lost_microphone_pauses_the_timer_until_it_is_back(audio_server, tmp_path):
    """The audio server dies mid-turn and comes back: announced, timer held, game goes on."""
    log = tmp_path / "game.jsonl"
    game = _live_game(audio_server, "--difficulty", "hard", "--voice", "none",
                      "--log", str(log))
    out = Lines(game.stdout)
    try:
        assert out.wait("Ann starts.", 0)
        time.sleep(2)
        stop_audio_server(audio_server)
        assert out.wait("I lost the microphone", 0, timeout=15)
        lost_at = len(out.lines)
        time.sleep(4)  # the timer must not run meanwhile
        assert not any("Time!" in x for x in out.lines)
        start_audio_server(audio_server)
        assert out.wait("The microphone is back.", lost_at, timeout=20)
        assert out.wait("Time!", lost_at, timeout=20)  # the turn goes on, and ends
        assert game.stdin is not None
        game.stdin.write("Ann: end the game\nBob: yes\nBob: that's all\n")  # typing works as well
        game.stdin.close()
        game.wait(timeout=30)
    finally:
        if game.poll() is None:
            game.kill()
    records = [json.loads(x) for x in log.read_text().splitlines()]
    hold = next(r for r in records if r["type"] == "mic-lost")
    release = next(r for r in records if r["type"] == "mic-back")
    assert release["at"] - hold["at"] >= 4
    # The time left when it was lost: the clock started once the opening had
    # been read (printed: no voice here), or had not started yet.
    started = max([0.0] + [r["until"] for r in records
                           if r["type"] == "spoken-until" and r["tone"] in ("turn", "answer")
                           and r["at"] < hold["at"]])
    resumed = next((x for x in out.lines if x.startswith("Timer running: ")), None)
    if resumed is None:
        # Back before Ann's turn had been read out: her clock starts at the
        # reading's end as ever, whole (#73 item 1), and runs out 15 s later.
        assert release["at"] < started
        time_up = next(r for r in records if r["type"] == "said" and r["text"] == "Time!")
        assert time_up["at"] == pytest.approx(started + 15, abs=0.2)
    else:
        assert math.ceil(15 - max(0.0, hold["at"] - started)) == int(resumed.split()[2])
    assert game.returncode == 0
    assert json.loads(out.lines[-1])["winner"] is None


#: A sample level below which the room's sink is quiet (a null sink plays
#: exact silence between sentences).
QUIET_LEVEL = 300


class _Speaker:
    """What the room's speaker plays from now on: a recorder on the null sink's
    monitor, read as it comes, so that a test waits for the sound however late
    a busy machine makes it, instead of sampling a fixed window."""

    def __init__(self, env: dict[str, str]) -> None:
        self.loudest = 0
        #: When the room last sounded (above :data:`QUIET_LEVEL`; 0: not yet).
        self.sounded = 0.0
        self._listening = threading.Event()
        self._recorder = subprocess.Popen(
            ["parec", "--device=table.monitor", "--format=s16le", "--rate=16000",
             "--channels=1", "--latency-msec=20"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._recorder.stdout is not None
        while block := self._recorder.stdout.read(640):
            samples = np.frombuffer(block[: len(block) // 2 * 2], dtype=np.int16)
            if len(samples):
                peak = int(np.abs(samples.astype(np.int32)).max())
                self.loudest = max(self.loudest, peak)
                if peak > QUIET_LEVEL:
                    self.sounded = time.monotonic()
            self._listening.set()

    def listening(self, timeout: float = 15) -> bool:
        """Whether the recorder gets the monitor's samples (silence included)."""
        return self._listening.wait(timeout)

    def plays_above(self, level: int, timeout: float) -> bool:
        """Whether a sample louder than ``level`` is played within ``timeout`` s."""
        return until(lambda: self.loudest > level, timeout)

    def said(self, since: float, timeout: float, quiet: float = 1.0) -> bool:
        """Whether the room sounds after ``since`` (a :func:`time.monotonic`
        time: when a sentence was printed, which is before it is played) and
        then goes quiet (nothing above :data:`QUIET_LEVEL`) for ``quiet``
        seconds, within ``timeout`` s: the referee has said its piece,
        however late a busy machine plays it."""
        return until(lambda: self.sounded > since
                     and time.monotonic() - self.sounded >= quiet, timeout)

    def close(self) -> None:
        self._recorder.terminate()
        self._recorder.wait(timeout=10)


def _told(out: Lines) -> str:
    """The game's last lines, for a failed wait's message."""
    return "\n".join(out.lines[-20:])


def _score_said_aloud(game: subprocess.Popen[str], out: Lines, env: dict[str, str]) -> None:
    """Ann asks her score (typed): the answer is printed and the speaker plays it.

    The waits are bounds for a busy machine (the suite runs the game beside
    other processes on two cores), not expectations."""
    assert game.stdin is not None
    speaker = _Speaker(env)
    try:
        assert speaker.listening(), "the recorder got no samples"
        seen = len(out.lines)
        game.stdin.write("Ann: what's my score\n")
        game.stdin.flush()
        assert speaker.plays_above(5000, timeout=20), f"nothing played:\n{_told(out)}"
    finally:
        speaker.close()
    assert out.wait("Ann has 0.", seen, timeout=30), _told(out)


def _said_in_the_room(env: dict[str, str], out: Lines, printed: str | None = None) -> None:
    """Wait until the referee has said its piece in the room (after ``printed``
    is printed, when given): it sounded and went quiet, however late a busy
    machine plays it (#84: a fixed 8 s before)."""
    speaker = _Speaker(env)
    try:
        assert speaker.listening(), "the recorder got no samples"
        if printed is not None:
            assert out.wait(printed, 0, timeout=45), _told(out)
        assert speaker.said(time.monotonic() - 1.0, timeout=60), _told(out)
    finally:
        speaker.close()


@pytest.mark.slow
def test_the_voice_and_the_keyboard_come_back_with_the_audio_server(audio_server):
    """The audio server goes away and comes back: the referee speaks again (its
    old output stream went with PortAudio's restart) and typed lines are answered."""
    game = _live_game(audio_server, "--difficulty", "easy", "--voice", "espeak")
    out = Lines(game.stdout)
    try:
        assert out.wait("Ann starts.", 0), _told(out)
        _said_in_the_room(audio_server, out)  # the opening
        _score_said_aloud(game, out, audio_server)
        stop_audio_server(audio_server)
        assert out.wait("I lost the microphone", 0, timeout=30), _told(out)
        time.sleep(3)  # (the server is away a while)
        start_audio_server(audio_server)
        _said_in_the_room(audio_server, out, "The microphone is back.")
        _score_said_aloud(game, out, audio_server)
        assert sum("I lost the microphone" in x for x in out.lines) == 1, _told(out)
        assert game.stdin is not None
        game.stdin.write("Ann: end the game\nBob: yes\nBob: that's all\n")
        game.stdin.close()
        game.wait(timeout=30)
    finally:
        if game.poll() is None:
            game.kill()
    assert game.returncode == 0


#: "flip my twelve" (piper's joe), said over the referee's reading of the rules.
OVER_THE_RULES = ROOT / "tests" / "audio_fixtures" / "piper-joe" / "cmd54.wav"
#: How often Ann says it, each time over the rules read again, until it is
#: heard: a player the referee did not answer says it again.
TRIES = 3


def _outcome(log: Path, played: float) -> list[dict[str, Any]] | None:
    """What the referee made of the microphone's utterances around a move
    played into the room at ``played`` (the referee's clock; the recording's
    voice runs from 0.04 to 0.79 s): the record logged after each one's ``speech`` (an input or a
    drop), once the ears have judged the utterance that holds the move's end
    or one after it; None while they have not."""
    entries = records(log)
    outcome: list[dict[str, Any]] = []
    past = False
    for i, entry in enumerate(entries):
        if entry["type"] != "speech" or entry["source"] == "text":
            continue
        past = past or entry["end"] >= played + 0.5 or entry["start"] > played + 1.0
        if entry["end"] < played - 0.5 or entry["start"] > played + 1.5:
            continue
        judged = next((e for e in entries[i + 1:] if e["type"] == "speech" or (
            e["type"] in ("input", "dropped") and e["source"] == entry["source"])), None)
        if judged is None or judged["type"] == "speech":
            return None  # (its verdict not written yet; a speech's has no other record)
        outcome.append(judged)
    return outcome if past else None


def _spoken_over_the_rules(audio_server, tmp_path, echo_cancel: str) -> list[dict[str, Any]]:
    """A live game: Ann asks for the rules (typed), and while the referee reads
    them into the room, her "flip my twelve" is played into the same room; with
    the canceller on, up to :data:`TRIES` times, until it is heard (over a
    voice some words are lost now and then: a player says them again); then
    Ctrl+C, as the game's questions stand.

    Heard with Whisper tiny.en as shipped (``--model base``): this checks the
    echo canceller and the gate, not the model. With the table's adapter the
    move left after the canceller was heard in 1 of 3 runs (2026-11-26; a known
    regression of the adapter, issue #35's note and docs/record/2026-11-26-ears-trained.md).

    Every wait is on the referee's log (#84): how far behind a busy machine
    leaves it does not matter. The referee's clock is read from the typed
    line's record (its time there, against when it was typed)."""
    log = tmp_path / f"game-{echo_cancel}.jsonl"
    game = _live_game(audio_server, "--difficulty", "easy", "--echo-cancel", echo_cancel,
                      "--log", str(log), "--model", "base")
    out = Lines(game.stdout)
    assert game.stdin is not None
    stdin = game.stdin

    def typed(line: str) -> tuple[float, float]:
        """``line`` typed: when here, and when on the referee's clock."""
        seen = len(records(log))
        stdin.write(line + "\n")
        stdin.flush()
        at = time.monotonic()
        assert logged(log, lambda e: e["type"] == "typed", timeout=30, after=seen), line
        return at, next(e["at"] for e in records(log)[seen:] if e["type"] == "typed")

    try:
        assert out.wait("Ann starts.", 0)
        # The opening's end is logged (the table told the brain so).
        assert logged(log, lambda entry: entry["type"] == "spoken-until", timeout=20)
        for _ in range(TRIES if echo_cancel == "on" else 1):
            # The rules are read once everything said before them has been
            # (each "spoken-until" is written as its sentence is queued, with
            # its end). The move comes two seconds into them, after the
            # opening's 8 s of voice (the canceller has learnt the room), over
            # "Down tiles count their number.". (8 s into the rules, over "flip
            # exactly two different tiles", 2 of 2 were unclear, 2026-12-07.)
            before = max(e["until"] for e in records(log) if e["type"] == "spoken-until")
            here, there = typed("Ann: rules")
            offset = here - there  # (the referee's clock to this one's)
            time.sleep(max(0.0, offset + max(before, there) + 2.0 - time.monotonic()))
            played = time.monotonic() - offset
            subprocess.run(["paplay", str(OVER_THE_RULES)], env=audio_server, check=True,
                           timeout=60)
            heard = until(functools.partial(_outcome, log, played), timeout=90)
            assert heard is not None, log.read_text()
            if any("twelve" in e["text"].lower() for e in heard if e["type"] == "input"):
                break
        # (Whatever is still open is left unanswered: the game is stopped.)
        game.send_signal(signal.SIGINT)
        game.wait(timeout=60)
    finally:
        if game.poll() is None:
            game.kill()
    err = game.stderr.read() if game.stderr else ""
    assert "Traceback" not in err
    return records(log)


@pytest.mark.slow
@pytest.mark.alone  # (beside a busy worker it lost the move 1 of 10 times: #84)
def test_a_move_said_over_the_referee_is_heard_through_its_voice_and_confirmed(
    audio_server, tmp_path
):
    """The echo canceller (speexdsp, with what the speakers play as reference)
    lets a player speak over the referee: the move is heard (within
    :data:`TRIES` tries), and, being mixed with the referee's voice, confirmed
    rather than played. Without it the same move is dropped (the referee was
    speaking)."""
    flip = {"kind": "flip", "owner": "Ann", "tile": 12, "direction": None}
    entries = _spoken_over_the_rules(audio_server, tmp_path, "on")
    # (The tail of the referee's opening, heard before the canceller has learnt
    # the room, may come out as a "yes" that answers nothing: not a move.)
    heard = [r for r in entries if r["type"] == "input" and r["source"] != "text"
             and r["intent"]["kind"] != "answer"]
    seen = [(r["at"], r["type"], r["text"][:50], r.get("reason") or r.get("intent"))
            for r in entries if r["type"] in ("input", "dropped", "said")]
    assert heard, "\n".join(map(str, seen))
    assert heard[-1]["intent"] == flip, "\n".join(map(str, seen))
    assert not any(r["sure"] for r in heard), heard  # over the voice: never played at once
    asked = [r["text"] for r in entries if r["type"] == "said" and r["kind"] == "question"]
    assert "Ann, did you say: flip Ann's 12?" in asked, entries
    assert "TileFlipped" not in [r["event"] for r in entries if r["type"] == "event"]

    entries = _spoken_over_the_rules(audio_server, tmp_path, "off")
    assert not [r for r in entries if r["type"] == "input" and r["intent"] == flip]
    assert any(r["type"] == "dropped" and r["reason"] == "the referee was speaking"
               for r in entries), entries


def test_doctor_lists_the_audio_servers_devices_by_number(audio_server):
    """``referee doctor`` numbers every device as ``--device`` and
    ``--private-audio`` take them (the README points there, issue #63)."""
    doctor = subprocess.run([sys.executable, "-m", "referee", "doctor"], env=audio_server,
                            capture_output=True, text=True, timeout=120, check=False)
    assert doctor.returncode == 0, doctor.stderr
    devices = [line.strip() for line in doctor.stdout.splitlines()
               if line.strip().startswith("device ")]
    assert devices, doctor.stdout
    assert any("(input" in line for line in devices)
    assert any("output)" in line or "(output" in line for line in devices)
    assert devices[0].startswith("device 0: ")
