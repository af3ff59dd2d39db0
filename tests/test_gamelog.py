"""The game log: written as things happen, survives a crash, resumes and replays."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.brain import Drive
from referee.engine.race65 import TileCorrected, TileSet, TurnLost
from referee.gamelog import GameLog, read_log
from referee.protocol import Entry, Resume, SpokenUntil, Tick, Tone
from referee.records import (
    RECORD_TYPES,
    VERSION,
    EventRecord,
    GameHeader,
    InputRecord,
    LogError,
    Record,
    SaidRecord,
)
from referee.speech.understanding.meaning import Intent
from referee.wording import ANSWER_SECONDS

ROOT = Path(__file__).resolve().parent.parent
HARD = ["race65", "--rules", "phase-seven", "--difficulty", "hard"]
QUIET = ["--input", "text", "--voice", "none"]


def referee(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)


def wait_for(stream, text: str, timeout: float = 20) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        seen.append(line.rstrip("\n"))
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never came; got {seen}")


def _ticked_after_the_turn_was_read(log: Path) -> bool:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]
    read = [x["until"] for x in lines if x["type"] == "spoken-until" and x["tone"] == "turn"]
    return bool(read) and any(x["type"] == "tick" and x["at"] > read[-1] for x in lines)


@pytest.mark.slow
@pytest.mark.realtime
def test_a_killed_game_resumes_with_the_same_state_and_time_left(tmp_path):
    log = tmp_path / "game.jsonl"
    game = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", *HARD, *QUIET, "--log", str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT,
    )
    assert game.stdin is not None
    assert game.stdout is not None
    wait_for(game.stdout, "Ann starts.")
    game.stdin.write("flip my seven\n")
    game.stdin.flush()
    wait_for(game.stdout, "Ann, 7 down.")
    # Ann's timer starts once the opening has been read (printed, at reading
    # speed); heartbeats (ticks) go to the log while it runs.
    deadline = time.monotonic() + 20
    while not _ticked_after_the_turn_was_read(log) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.5)
    os.kill(game.pid, signal.SIGKILL)  # a crash: no clean-up, no final write
    game.wait(timeout=10)

    logged = read_log(log)
    assert logged.header.game == "race65"
    assert [r.text for r in logged.records if isinstance(r, InputRecord)] == ["flip my seven"]
    assert any(isinstance(r, Tick) for r in logged.records)  # (the heartbeat)
    flips = [r for r in logged.records if isinstance(r, EventRecord) and r.event == "TileFlipped"]
    assert flips[0].fields == {"by": "Ann", "owner": "Ann", "tile": 7, "down": True,
                               "flips_left": 1}
    # Ann's clock started once the opening was read (printed, at reading speed).
    started = max(r.until for r in logged.records
                  if isinstance(r, SpokenUntil) and r.tone == Tone.TURN)
    last = max(r.at for r in logged.records if not isinstance(r, Record))
    left = math.ceil(15 - (last - started))

    result = referee("resume", str(log), *QUIET, "--json", stdin="flip my eight\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (f"Resuming the game. It's Ann's turn, 1 flip left. "
                        f"Ann has {left} seconds left.")
    assert "Ann, 8 down." in lines
    assert json.loads(lines[-1])["players"]["Ann"] == {"total": 15, "down": [7, 8]}

    replay = referee("replay", str(log), "--json")
    assert replay.returncode == 0
    printed = replay.stdout.splitlines()
    assert any(x.endswith("Ann (text): flip my seven") for x in printed)
    assert any(x.endswith("(resumed)") for x in printed)
    assert any(x.endswith("referee: Ann, 8 down.") for x in printed)
    assert json.loads(printed[-1]) == json.loads(lines[-1])


@pytest.mark.slow
def test_a_line_cut_by_a_crash_is_skipped_and_the_rest_replays(tmp_path):
    log = tmp_path / "game.jsonl"
    result = referee("play", *HARD, *QUIET, "--log", str(log), "--json",
                     stdin="flip my seven\nBob, flip your four down\n")
    assert result.returncode == 0
    whole = log.read_text()
    # remove the stop at the end of input, then cut the last line in half
    kept = [x for x in whole.splitlines() if '"type":"stop"' not in x and "GameStopped" not in x
            and "Game stopped" not in x]
    log.write_text("\n".join(kept) + "\n" + kept[-1][: len(kept[-1]) // 2])
    logged = read_log(log)
    assert logged.damaged == 1
    resumed = referee("resume", str(log), *QUIET, "--json", stdin="Bob: what's the score\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "the last line was cut by a crash mid-write and was skipped" in resumed.stderr
    assert "not what was announced" not in resumed.stderr
    assert "Ann has 7. Bob has 4." in resumed.stdout
    final = json.loads(resumed.stdout.splitlines()[-1])
    assert final["players"]["Bob"]["down"] == [4]


def test_a_log_that_cannot_be_written_is_announced_and_the_game_goes_on():
    # (a full disk: /dev/full takes no byte; a folder is refused before the game)
    result = referee("play", *HARD, *QUIET, "--log", "/dev/full", "--json",
                     stdin="flip my seven\n")
    assert result.returncode == 0
    assert "I cannot write the game log" in result.stderr
    assert "The game goes on without a log." in result.stderr
    assert "Ann, 7 down. One more flip." in result.stdout


def test_writing_after_the_disk_fails_warns_once(tmp_path):
    warnings: list[str] = []
    log = GameLog(tmp_path / "g.jsonl", warnings.append)
    log.write(GameHeader(game="race65", players=("Ann", "Bob")))
    assert log._file is not None
    log._file.close()  # the file goes away under the referee's feet
    log.write(InputRecord(1.0, "text", "Ann", "Ann", "flip my seven", Intent("flip"), 1.0, True))
    log.write(InputRecord(2.0, "text", "Ann", "Ann", "flip my eight", Intent("flip"), 1.0, True))
    assert len(warnings) == 1
    assert not log.working


HEADER = '{"type":"game","version":2,"game":"race65","players":["Ann","Bob"],"options":{}}\n'


@pytest.mark.parametrize(("content", "message"), [
    ("", "is empty"),
    ('{"type": "input"}\n', "not a referee game log"),
    ('{"type": "game", "version": 99}\n', "another version"),
    ('{"type":"game","version":2,"game":"race65","players":"Ann"}\n', "line 1: game.players"),
    ('{"type":"game","version":2,"game":"chess","players":["Ann","Bob"]}\n',
     "Unknown game 'chess'"),
])
@pytest.mark.slow
def test_a_log_whose_game_line_is_bad_is_refused_clearly(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    if "chess" not in message:
        with pytest.raises(LogError, match=message):
            read_log(path)
    result = referee("resume", str(path), *QUIET)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


GOOD_FLIP = ('{"type":"input","at":2,"source":"text","speaker":"Ann","by":"Ann",'
             '"text":"flip my seven","intent":{"kind":"flip","owner":"Ann","tile":7,'
             '"direction":null},"score":1,"sure":true}\n')


@pytest.mark.parametrize(("line", "message"), [
    ('{"type":"input","at":"soon","text":"flip my seven"}\n', "line 2: input.at"),
    ('{"type":"input","at":1,"source":"text","speaker":null,"by":"Ann","text":"x",'
     '"intent":["flip"],"score":1,"sure":true}\n', "line 2: input.intent"),
    ('{"type":"input","at":1,"text":"flip my seven"}\n', "line 2: the input record has no source"),
    ('{"type":"teleport","at":1}\n', "line 2: unknown record type 'teleport'"),
    ('{"type":"delay","at":1}\n', "line 2: the delay record has no until"),
    ('[1, 2]\n', "line 2: a line is not a JSON object"),
    (HEADER, "line 2: a second game line"),
    ('{"type":"input","at":1,"source":"text","speaker":null,"by":"Ann","text":"x",'
     '"intent":{"kind":"flip"},"score":1,"sure":true}\n', "the input at 1 s ('x') does not fit"),
])
def test_a_corrupted_record_is_skipped_with_a_note_and_the_rest_replays(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + line + GOOD_FLIP)
    result = referee("replay", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert f"skipped {message}" in result.stderr
    assert "Traceback" not in result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["players"]["Ann"]["down"] == [7]  # the good line after it was replayed


@pytest.mark.slow
def test_resuming_a_finished_game_says_so(tmp_path):
    log = tmp_path / "game.jsonl"
    referee("play", *HARD, *QUIET, "--log", str(log), stdin="flip my seven\n")
    result = referee("resume", str(log), *QUIET)
    assert result.returncode == 2
    assert "is over; there is nothing to resume" in result.stderr


def _example(cls: type[Record]) -> Record:
    """A record of ``cls`` with a value in every field that differs from its default."""
    values: dict[str, Any] = {
        "at": 12.5, "game": "shut-the-box", "players": ("Ann", "Bob", "Cy"),
        "options": {"tiles": 9, "house": ["ties=playoff"]}, "version": 2,
        "started": "2026-11-22T20:00:00+0000", "source": "seat", "speaker": "Bob", "by": "Bob",
        "text": "shut three and four", "intent": Intent.of("shut", tiles=(3, 4)),
        "score": 0.75, "sure": False, "message": "There is no tile 13.", "reason": "echo",
        "event": "TilesShut", "fields": {"player": "Bob", "tiles": [3, 4], "open": [1, 2]},
        "kind": "answer", "until": 14.25, "when": "2026-11-22T20:05:00+0000",
        "name": "two dice", "outcome": "Bob rolls 5 and 3", "to": "Cy",
        "hearing": "whisper tiny.en+table, adapter 94043fbfba87", "what": "KeyError: 'tile'",
    }
    return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)})


@pytest.mark.parametrize("kind", sorted(RECORD_TYPES))
def test_every_record_type_round_trips_through_json(kind):
    record = _example(RECORD_TYPES[kind])
    line = json.dumps(record.to_json())
    assert json.loads(line)["type"] == kind
    assert Record.from_json(json.loads(line)) == record


def test_events_are_logged_as_their_fields_nested_values_included():
    event = TurnLost("Ann", "time", (TileSet("Ann", 3, False), TileSet("Ann", 7, False)))
    record = EventRecord.of(event, 3.0)
    assert record.to_json() == {
        "type": "event", "at": 3.0, "event": "TurnLost",
        "fields": {"player": "Ann", "reason": "time",
                   "corrections": [{"owner": "Ann", "tile": 3, "down": False},
                                   {"owner": "Ann", "tile": 7, "down": False}]}}
    assert EventRecord.of(TileCorrected("Bob", 4, True), 1.0).fields == {
        "owner": "Bob", "tile": 4, "down": True}


def test_a_log_of_the_first_format_still_resumes(tmp_path):
    """Version 1 logged events as repr strings; its inputs replay as before."""
    log = tmp_path / "old.jsonl"
    log.write_text(
        '{"type":"game","version":1,"game":"race65","players":["Ann","Bob"],'
        '"options":{"rules":"phase-seven","difficulty":"easy","house":[],"first":null,'
        '"verbosity":null},"started":"2026-11-20T10:00:00+0000"}\n'
        '{"type":"said","at":0.0,"text":"Ann starts.","kind":"turn"}\n'
        '{"type":"input","at":2.0,"source":"text","speaker":null,"by":"Ann",'
        '"text":"flip my seven","intent":{"kind":"flip","owner":"Ann","tile":7,'
        '"direction":null},"score":1.0,"sure":true,"message":null}\n'
        '{"type":"event","at":2.0,"event":"TileFlipped(by=\'Ann\', owner=\'Ann\', tile=7, '
        'down=True, flips_left=1)"}\n'
        '{"type":"said","at":2.0,"text":"Ann, 7 down. One more flip.","kind":"announce"}\n')
    logged = read_log(log)
    assert [r.event for r in logged.records if isinstance(r, EventRecord)] == ["TileFlipped"]
    result = referee("resume", str(log), *QUIET, "--json", "--no-log", stdin="flip my eight\n")
    assert result.returncode == 0, result.stderr
    assert "Ann, 8 down." in result.stdout
    assert json.loads(result.stdout.splitlines()[-1])["players"]["Ann"] == {
        "total": 15, "down": [7, 8]}


# --- resume equals what was announced: games killed at random points -----------------------

#: A live game (typed, real time, 15-second turns): moves, a pause, an undo that
#: another player agrees to, a question, a turn that times out, more moves.
LIVE_SCRIPT = [
    (0.3, "Ann: flip my 7"), (0.6, "Ann: flip my 3"), (1.0, "Bob: flip my 12"),
    (1.4, "Bob: pause"), (2.6, "Bob: what's the score"), (3.2, "Bob: resume"),
    (3.6, "Bob: take that back"), (4.0, "Ann agrees"), (4.4, "Bob: read my board"),
    # Bob's 15 seconds (given back by the undo) start once what was printed
    # has been read (160 words a minute: the opening, the answers) and run out
    # at about 48 s.
    (50.0, "Ann: flip my 9"), (50.4, "Ann: flip my 5"), (50.8, "Bob: flip my 12"),
    (51.2, "Bob: end the game"), (51.6, "Ann: yes"),
    # The table stays after the end until it leaves (the keyboard is still open).
    (52.0, "Bob: that's all"),
]


#: A moment at which the log is copied as a kill would leave it (see _live_scripted).
COPY = "<copy the log>"
#: What a script does to the audio server (see MIC_SCRIPT).
LOSE_MIC, FIND_MIC = "<the audio server stops>", "<the audio server starts>"
#: The same kind of game through a microphone (an audio server) that is lost
#: after the first moves and comes back: Bob pauses and resumes the game while
#: it is gone (the game stays held until it is back), then an undo, a turn
#: that times out and the last moves, all typed.
MIC_SCRIPT = [
    (0.3, "Ann: flip my 7"), (0.6, "Ann: flip my 3"), (1.0, "Bob: flip my 12"),
    (1.2, LOSE_MIC), (4.5, "Bob: pause"), (5.0, "Bob: what's the score"),
    (5.5, "Bob: resume"), (6.0, FIND_MIC),
    (10.0, "Bob: take that back"), (10.4, "Ann agrees"),
    # Bob's time (held while the microphone was gone) runs out at about 26 s.
    (30.0, "Ann: flip my 9"), (30.4, "Ann: flip my 5"), (30.8, "Bob: flip my 12"),
    (31.2, "Bob: end the game"), (31.6, "Ann: yes"),
    (32.0, "Bob: that's all"),  # (the microphone would keep the table otherwise)
]


def _live_scripted(log: Path, kill_at: float | None, script: list[tuple[float, str]] = LIVE_SCRIPT,
                   audio_server: dict[str, str] | None = None,
                   copies: Sequence[float] = ()) -> subprocess.Popen[str]:
    """Plays ``script`` into a live game in a thread (typed lines, and the audio
    server stopped and started when there is one); kills it at ``kill_at``.
    At each moment of ``copies`` the log is copied as it stands on disk
    (``copy-N.jsonl`` beside it, N counting from 0): what a kill -9 at that
    moment would leave, since every event is written and flushed as it
    happens (a real kill shows that it is; a copy lets one live game stand
    for several kills)."""
    import threading

    from harness.audioserver import start_audio_server, stop_audio_server

    inputs = (["--input", "mic", "--voice", "none"] if audio_server is not None else QUIET)
    game = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", *HARD, *inputs, "--log", str(log), "--json"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, env=audio_server)
    assert game.stdin is not None
    assert game.stdout is not None
    wait_for(game.stdout, "Ann starts.")
    start = time.monotonic()

    def type_lines() -> None:
        assert game.stdin is not None
        moments = sorted([*script, *((at, f"{COPY}{n}") for n, at in enumerate(copies))])
        for at, line in moments:
            if kill_at is not None and at >= kill_at:
                break
            time.sleep(max(0.0, start + at - time.monotonic()))
            if line.startswith(COPY):
                log.with_name(f"copy-{line.removeprefix(COPY)}.jsonl").write_bytes(
                    log.read_bytes())
                continue
            if line == FIND_MIC:
                assert audio_server is not None
                start_audio_server(audio_server)
                continue
            if line == LOSE_MIC:  # ... and the referee notices (the rest comes late if need be)
                assert audio_server is not None
                stop_audio_server(audio_server)
                deadline = time.monotonic() + 20
                while '"mic-lost"' not in log.read_text() and time.monotonic() < deadline:
                    time.sleep(0.1)
                continue
            game.stdin.write(line + "\n")
            game.stdin.flush()
        if kill_at is not None:
            time.sleep(max(0.0, start + kill_at - time.monotonic()))
            game.kill()  # a crash at a random point: no clean-up, no final write

    threading.Thread(target=type_lines, daemon=True).start()
    return game


def _replayed(log: Path) -> tuple[Drive, float, list[str], list[str]]:
    """The game rebuilt from a log as resume does: the session, the time, what
    the log says was announced and what the rebuilt game says (countdown aside)."""
    from referee.gamelog import announced
    from referee.games.race65 import Race65Options, Race65Spec
    from referee.records import SaidRecord

    logged = read_log(log)
    records, _ = announced(logged.records)
    again: list[Entry] = []
    spec = Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="hard"))
    session = Drive(spec, record=again.append)
    last = session.replay(records, converted=logged.converted)

    def said(rs: list[Entry]) -> list[str]:
        return [r.text for r in rs if isinstance(r, SaidRecord) and r.kind != "countdown"]

    # (Rebuilding a game does not say its opening again.)
    return session, last, said(records)[1:], said(again)


@pytest.mark.slow
def test_a_timeout_announced_last_is_replayed_whatever_the_times_below_a_millisecond():
    """The log keeps times to the millisecond; a game killed just after "Time!"
    resumes with it, whatever the times were below that (75 of 200 such
    games lost it when the replay stopped at the last record's time, so 60
    games are plenty to catch that again)."""
    import random

    from referee.gamelog import announced
    from referee.games.race65 import Race65Options, Race65Spec
    from referee.records import SaidRecord

    script = [(0.3, "Ann", "flip my 7"), (0.6, "Ann", "flip my 3"), (1.0, "Bob", "flip my 12"),
              (1.4, "Bob", "pause"), (3.2, "Bob", "resume"), (3.6, "Bob", "take that back"),
              (4.0, "Ann", "yes")]
    spec = Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="hard"))

    def said(records: list[Entry]) -> list[str]:
        return [r.text for r in records if isinstance(r, SaidRecord) and r.kind != "countdown"]

    lost = 0
    for seed in range(60):
        rng = random.Random(seed)
        logged: list[Entry] = []
        session = Drive(spec, record=logged.append)
        for at, speaker, text in script:
            session.hear(text, speaker, at + rng.uniform(0.0, 0.001))
            session.tick(at + 0.2)
        deadline = session.state["deadline"]
        assert deadline is not None
        session.tick(deadline)  # "Time!", and the game is killed
        records, _ = announced(logged)
        assert said(records)[-3] == "Time!"
        again: list[Entry] = []
        (Drive(spec, record=again.append)).replay(records)
        lost += said(again) != said(records)
    assert lost == 0


@pytest.mark.slow
@pytest.mark.parametrize(("lines", "last"), [
    ([(14.998, "Ann", "flip my 12")], "Ann, 12 down. One more flip."),  # half time at 15 s
    ([(15.0, "Ann", "yes"), (29.998, "Ann", "flip my 12")], "Ann, 12 down. One more flip."),
])
def test_a_deadline_just_after_the_last_record_was_never_reached(lines, last):
    """Replay runs the clock a hair past the log's last record only to find a
    sentence the log said there; a deadline 2 ms after the last record (half
    time, or the turn's end at 30 s) was never reached by the live game, and
    the rebuilt one neither says it nor takes the turn away (found by the
    random resume test: the flip at 29.998 s was undone by a rebuilt
    timeout)."""
    from referee.gamelog import announced
    from referee.records import SaidRecord

    logged: list[Entry] = []
    live = Drive(_medium_race(), record=logged.append)
    live.start()
    for at, speaker, text in lines:
        live.hear(text, speaker, at)
    records, _ = announced(logged)
    again: list[Entry] = []
    rebuilt = Drive(_medium_race(), record=again.append)
    assert rebuilt.replay(records) == lines[-1][0]
    said = [r.text for r in again if isinstance(r, SaidRecord)]
    assert said[-1] == last
    assert said == [r.text for r in records if isinstance(r, SaidRecord)][1:]
    assert rebuilt.final == live.final
    assert live.final["turn"] == "Ann"
    assert live.final["players"]["Ann"]["down"] == [12]


#: Random moments of LIVE_SCRIPT to kill it at: among the first moves, the
#: pause and the undo; then anywhere up to the timeout; around the timeout and the last moves.
KILL_WINDOWS = [(0.2, 4.6), (4.6, 50.0), (46.0, 52.0)]


@pytest.mark.slow
@pytest.mark.realtime
def test_a_game_killed_at_a_random_point_resumes_as_last_announced(tmp_path):
    """A real kill -9 among the first moves (the later windows: the whole
    game's test below, with the log as a kill would leave it)."""
    import random

    kill_at = random.Random(1).uniform(*KILL_WINDOWS[0])
    log = tmp_path / "game.jsonl"
    game = _live_scripted(log, kill_at)
    game.wait(timeout=90)
    assert game.returncode == -signal.SIGKILL
    _resumes_as_announced(log)


@pytest.mark.slow
@pytest.mark.audio_server
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.realtime
def test_a_game_that_lost_its_microphone_killed_at_a_random_point_resumes_as_announced(
    tmp_path, audio_server, seed,
):
    """As above, through a microphone that goes away and comes back: killed
    while it is gone (and the players pause), around its return and the undo,
    or around the timeout and the end."""
    import random

    window = [(3.5, 6.5), (6.5, 12.0), (24.0, 32.0)][seed - 1]
    kill_at = random.Random(seed).uniform(*window)
    log = tmp_path / "game.jsonl"
    game = _live_scripted(log, kill_at, MIC_SCRIPT, audio_server)
    game.wait(timeout=90)
    assert game.returncode == -signal.SIGKILL
    kinds = {json.loads(line)["type"] for line in log.read_text().splitlines() if line.strip()}
    assert "mic-lost" in kinds  # the microphone was lost before the kill
    _resumes_as_announced(log)


def _resumes_as_announced(log: Path) -> None:
    """Replay and resume of a killed game's log give what the referee last announced."""
    session, last, logged, replayed = _replayed(log)
    assert replayed == logged  # the rebuilt game says exactly what was announced, no more
    # The CLI's replay and resume rebuild the same game.
    replay = referee("replay", str(log), "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout.splitlines()[-1]) == session.final
    if session.over:
        return
    resumed = referee("resume", str(log), *QUIET, "--json")
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[0] == session.step(Resume(last))[0].text  # (the brain's own words, resumed)
    final = json.loads(lines[-1])
    assert final["players"] == session.final["players"]


@pytest.mark.slow
@pytest.mark.realtime
def test_a_whole_live_game_replays_to_the_same_end_and_resumes_from_random_points(tmp_path):
    """The whole game replays to its end; and the log as it stood at a random
    moment of each later kill window (what a kill -9 then leaves on disk)
    resumes as last announced."""
    import random

    log = tmp_path / "game.jsonl"
    kills = [random.Random(seed).uniform(*window)
             for seed, window in enumerate(KILL_WINDOWS[1:], start=2)]
    game = _live_scripted(log, None, copies=kills)
    assert game.stdout is not None
    out = game.stdout.read()  # (the opening was read already)
    game.wait(timeout=90)
    assert game.returncode == 0
    live = json.loads(out.splitlines()[-1])
    session, _, logged, replayed = _replayed(log)
    assert replayed == logged
    printed = [x for x in out.splitlines()[:-1] if x not in ("Five.", "Four.", "Three.", "Two.",
                                                              "One.", "10 seconds.")]
    assert printed == logged  # what the log says was said is what the table heard
    assert session.final == live
    assert live["players"] == {"Ann": {"total": 24, "down": [3, 5, 7, 9]},
                               "Bob": {"total": 12, "down": [12]}}
    for n in range(len(kills)):
        copy = log.with_name(f"copy-{n}.jsonl")
        assert 0 < len(copy.read_bytes()) < len(log.read_bytes())
        _resumes_as_announced(copy)


def test_a_move_logged_but_never_announced_is_not_resumed(tmp_path):
    """A crash between a move and its announcement: nobody heard the referee take
    the move, so resume goes on from the last announcement (and says so)."""
    from referee.gamelog import announced
    from referee.games.race65 import Race65Options, Race65Spec
    from referee.records import SaidRecord

    records: list[Entry] = []
    spec = Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="hard"))
    session = Drive(spec, record=records.append)
    session.start()
    session.hear("flip my 7", "Ann", 1.0)
    session.tick(2.0)
    session.hear("flip my 9", "Ann", 3.0)
    move = next(i for i, r in enumerate(records)
                if isinstance(r, InputRecord) and r.text == "flip my 9")
    event = next(i for i in range(move, len(records)) if isinstance(records[i], EventRecord))
    crashed = records[: event + 1]  # the move's event was written, its sentence was not
    assert not any(isinstance(r, SaidRecord) for r in crashed[move:])
    kept, unheard = announced(crashed)
    assert unheard == 1
    assert not any(isinstance(r, InputRecord) and r.text == "flip my 9" for r in kept)
    log = tmp_path / "crashed.jsonl"
    writer = GameLog(log, print)
    writer.write(GameHeader(game="race65", players=("Ann", "Bob"),
                            options=spec.options.to_json()))
    for record in crashed:
        writer.write(record)
    writer.close()
    replay = referee("replay", str(log), "--json")
    assert replay.returncode == 0, replay.stderr
    assert "1 input at the end of" in replay.stderr
    assert json.loads(replay.stdout.splitlines()[-1])["players"]["Ann"]["down"] == [7]


@pytest.mark.parametrize(("lines", "asked", "answer", "then"), [
    (["Ann: flip my 12", "Ann: I call 65"], "Ann, did you call 65?", "Ann: yes",
     "Wrong call"),
    (["Ann: flip my 12", "Ann: end the game"], "Bob, do you agree: end the game?",
     "Bob: yes", "Game stopped"),
])
def test_a_question_open_at_a_crash_is_asked_again_with_its_whole_time(
        lines, asked, answer, then):
    """Issue #83: a resumed game said where it stood, then "No answer, so no"
    seconds later (the question kept its old deadline), and the answer found
    no question. Now it is asked again, and the answer time counts from the
    end of its sentence as it did the first time."""
    from referee.gamelog import announced
    from referee.protocol import Typed

    records: list[Entry] = []
    live = Drive(_medium_race(), record=records.append)
    live.start()
    for second, line in enumerate(lines, start=1):  # (tapped on a seat page: a call is asked)
        speaker, text = line.split(": ")
        live.step(Typed(float(second), text, speaker, source="tap"))
    assert live.question == asked
    live.tick(5.0)  # (a heartbeat, then the crash: 4 of the 6 seconds to answer gone)

    kept, _ = announced(records)
    resumed = Drive(_medium_race())
    last = resumed.replay(kept)
    said = [s.text for s in resumed.step(Resume(last))]
    assert said[0].startswith("Resuming the game.")
    assert said[1:] == [asked]
    resumed.step(SpokenUntil(last, last + 2.0, Tone.QUESTION))  # (said in 2 seconds)
    at = last + 2.0 + ANSWER_SECONDS - 0.1
    assert not resumed.tick(at)  # (no "No answer, so no" yet)
    speaker, text = answer.split(": ")
    answered = " ".join(s.text for s in resumed.step(Typed(at, text, speaker, source="tap")))
    assert then in answered, answered
    assert resumed.question is None


# --- live, replay and resume agree: random games -----------------------------------------

#: What players say in the random games (Race to 65, medium: 30-second turns).
RANDOM_LINES = [
    "Ann: flip my 12", "Ann: flip my 11", "Ann: flip my 7", "Ann: flip my 3", "Ann: flip my 9",
    "Bob: flip my 3", "Bob: flip my 12", "Bob: flip my 5", "Bob: flip Ann's 4",
    "Bob: take that back", "Ann: yes", "Bob: yes", "Ann: no", "Bob: pause", "Ann: resume",
    "Ann: what's the score", "Bob: end the game", "Ann: I call sixty-five", "Bob: hit",
]
#: A step of a random live game: seconds since the last step, what happens, which line.
STEP = st.tuples(st.floats(0.0, 40.0), st.sampled_from(
    ["line", "line", "line", "tick", "hold", "release", "delay", "stop"]),
    st.integers(0, len(RANDOM_LINES) - 1))


def _hard_race() -> Any:
    from referee.games.race65 import Race65Options, Race65Spec

    return Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="hard"))


def _medium_race() -> Any:
    from referee.games.race65 import Race65Options, Race65Spec

    return Race65Spec(["Ann", "Bob"], Race65Options(difficulty="medium"))


def _play_steps(session: Any, steps: list[tuple[float, str, int]], start: float) -> float:
    """Play ``steps`` as the live table loop does (it ticks when it wakes, holds
    for a lost microphone and releases when it is back, delays the clock while
    it talks, stops on Ctrl-D); the time of the last step."""
    at = start
    held = False
    for gap, kind, i in steps:
        at = round(at + gap, 3)
        if kind == "tick":
            session.tick(at)
        elif kind == "line":
            speaker, text = RANDOM_LINES[i].split(": ")
            session.hear(text, speaker, at)
        elif kind == "hold" and not held:
            session.hold(at, "I lost the microphone.")
            held = True
        elif kind == "release" and held:
            session.release(at, "The microphone is back.")
            held = False
        elif kind == "delay":
            session.tick(at)
            session.delay_clock(at, at + i / 4)
        elif kind == "stop":
            session.stop(at)
            break
    return at


def _rebuilt(path: Path) -> tuple[Drive, list[Entry], list[Entry]]:
    """The game ``path`` holds, rebuilt as resume and replay do: the session,
    the records it was rebuilt from, and the records the rebuilding wrote."""
    from referee.gamelog import announced

    records, _ = announced(read_log(path).records)
    again: list[Entry] = []
    session = Drive(_medium_race(), record=again.append)
    session.replay(records)
    return session, records, again


def _said(records: list[Entry]) -> list[tuple[float, str]]:
    from referee.records import SaidRecord

    return [(r.at, r.text) for r in records if isinstance(r, SaidRecord)]


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, max_size=25), more=st.lists(STEP, max_size=12),
       cut=st.floats(0.0, 1.0), torn=st.binary(max_size=40))
@pytest.mark.slow
def test_live_replay_and_resume_agree_on_random_games(tmp_path_factory, steps, more, cut, torn):
    """Random live games with timeouts, holds, delays and stops; killed at a
    random byte (a torn last line), resumed and played on: the rebuilt game
    says what the live one said and ends in the same state, and so does the
    CLI's ``replay --json``."""
    import contextlib
    import io

    from referee.cli import main
    from referee.protocol import Resume

    path = tmp_path_factory.mktemp("log") / "game.jsonl"
    live_log = GameLog(path, print)
    live_log.write(GameHeader(game="race65", players=("Ann", "Bob"),
                              options=_medium_race().options.to_json()))
    live = Drive(_medium_race(), record=live_log.write)
    live.start()
    _play_steps(live, steps, 0.0)
    live_log.close()

    rebuilt, records, again = _rebuilt(path)
    assert _said(again) == _said(records)[1:]   # (the opening is not said again)
    assert rebuilt.final == live.final
    replay = io.StringIO()
    with contextlib.redirect_stdout(replay):
        assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(replay.getvalue().splitlines()[-1]) == live.final

    # A kill at a random byte of the log, then resume, and more play.
    data = path.read_bytes()
    path.write_bytes(data[: max(len(data.split(b"\n", 1)[0]) + 1, int(len(data) * cut))]
                     + torn.replace(b"\n", b" "))
    resumed, records, _ = _rebuilt(path)
    if resumed.over:
        return
    last = max([r.at for r in records if not isinstance(r, Record)], default=0.0)
    resumed_log = GameLog(path, print)
    resumed = Drive.of(resumed.session, resumed.spec, record=resumed_log.write)
    resumed.step(Resume(last))  # (logged: the brain's input, as every other)
    _play_steps(resumed, more, last)
    resumed_log.close()
    rebuilt, records, again = _rebuilt(path)
    assert rebuilt.final == resumed.final


# --- one log, one game, one referee at a time ---------------------------------------------


def test_two_games_started_in_the_same_second_get_two_logs(tmp_path, monkeypatch):
    import referee.gamelog as gamelog

    monkeypatch.setattr(gamelog, "LOGS_DIR", tmp_path / "logs")
    monkeypatch.setattr(time, "strftime", lambda fmt: "20261126-180000")
    paths = [gamelog.default_path("race65") for _ in range(3)]
    assert [p.name for p in paths] == ["race65-20261126-180000.jsonl",
                                       "race65-20261126-180000-2.jsonl",
                                       "race65-20261126-180000-3.jsonl"]
    assert all(p.is_file() for p in paths)


@pytest.mark.slow
def test_a_log_in_use_is_refused_to_a_second_referee_and_left_unchanged(tmp_path):
    """A game running with its log; a second ``play --log`` on that file and a
    second ``resume`` of it are refused with a message and change nothing. Once
    the first referee is gone (killed), the game resumes. (An untimed game:
    with a turn timer the first referee itself adds a clock line each second.)"""
    log = tmp_path / "game.jsonl"
    untimed = ["race65", "--rules", "phase-seven", "--difficulty", "easy"]
    first = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", *untimed, *QUIET, "--log", str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT)
    assert first.stdin is not None
    assert first.stdout is not None
    try:
        wait_for(first.stdout, "Ann starts.")
        first.stdin.write("flip my seven\n")
        first.stdin.flush()
        wait_for(first.stdout, "Ann, 7 down.")
        before = log.read_bytes()

        second = referee("resume", str(log), *QUIET, stdin="flip my three\n")
        assert second.returncode == 2
        assert "is in use: another referee is playing that game now" in second.stderr
        assert "Nothing was changed." in second.stderr
        again = referee("play", *untimed, *QUIET, "--log", str(log), stdin="flip my three\n")
        assert again.returncode == 2
        assert "already holds a game" in again.stderr
        assert log.read_bytes() == before
    finally:
        first.kill()
        first.wait(timeout=20)
    resumed = referee("resume", str(log), *QUIET, "--json", stdin="flip my three\n")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["players"]["Ann"]["down"] == [3, 7]


def _stopped_log(tmp_path: Path, moves: str) -> tuple[Path, list[str]]:
    """A typed game's log without its end (as if it had been killed), and its lines."""
    log = tmp_path / "game.jsonl"
    result = referee("play", *HARD, *QUIET, "--log", str(log), stdin=moves)
    assert result.returncode == 0, result.stderr
    kept = [x for x in log.read_text().splitlines() if '"type":"stop"' not in x
            and "GameStopped" not in x and "Game stopped" not in x]
    return log, kept


@pytest.mark.slow
def test_a_damaged_move_in_the_middle_of_a_log_is_told_with_what_it_lost(tmp_path):
    """A damaged line in the middle that held a move: resume says which line is
    damaged and which announcements it could not restore, then goes on."""
    log, lines = _stopped_log(tmp_path, "flip my seven\nflip my three\nBob: flip my twelve\n")
    seven = next(i for i, x in enumerate(lines) if '"type":"typed"' in x and "seven" in x)
    lines[seven] = lines[seven][:30] + "\x00\x17garbage"
    log.write_text("\n".join(lines) + "\n")
    said = next(i for i, x in enumerate(lines) if "Ann, 7 down" in x)
    resumed = referee("resume", str(log), *QUIET, "--json", stdin="Bob: what's the score\n")
    assert resumed.returncode == 0, resumed.stderr
    assert f"1 damaged line skipped (line {seven + 1})" in resumed.stderr
    assert "crash mid-write" not in resumed.stderr
    assert "the game rebuilt from the rest is not what was announced" in resumed.stderr
    assert f'"Ann, 7 down. One more flip." (line {said + 1})' in resumed.stderr
    # What could be rebuilt is played on, and said: Ann's 3 and the turn still stand.
    final = json.loads(resumed.stdout.splitlines()[-1])
    assert final["players"]["Ann"]["down"] == [3]


@pytest.mark.slow
def test_a_damaged_clock_line_in_the_middle_loses_nothing(tmp_path):
    log, lines = _stopped_log(tmp_path, "flip my seven\nflip my three\n")
    lines.insert(4, '{"type":"tick","at":1.')  # a heartbeat cut short
    log.write_text("\n".join(lines) + "\n")
    resumed = referee("resume", str(log), *QUIET, "--json", stdin="")
    assert resumed.returncode == 0, resumed.stderr
    assert "1 damaged line skipped (line 5)" in resumed.stderr
    assert "not what was announced" not in resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["players"]["Ann"]["down"] == [3, 7]


@pytest.mark.slow
def test_random_bytes_are_not_a_game_log(tmp_path):
    import random

    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(random.Random(3).randbytes(3000))
    for command in ("resume", "replay"):
        result = referee(command, str(junk), *(QUIET if command == "resume" else ()))
        assert result.returncode == 2
        assert "is not a referee game log" in result.stderr
        assert "empty" not in result.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert "is empty" in referee("replay", str(empty)).stderr


@pytest.mark.slow
def test_resuming_a_log_that_does_not_exist_says_so_and_makes_no_file(tmp_path):
    """Issue #83: ``resume nothere.jsonl`` made an empty file and called it empty."""
    missing = tmp_path / "nothere.jsonl"
    result = referee("resume", str(missing), *QUIET)
    assert result.returncode == 2
    assert f"There is no game log {missing}" in result.stderr
    assert "empty" not in result.stderr
    assert not missing.exists()


def test_a_timeout_whose_rebuilt_deadline_falls_a_hair_late_still_comes_before_the_next_record():
    """A real log (the microphone lost and back, an undo, then Bob's time runs
    out; killed just after): the deadline rebuilt from millisecond times is
    25.147000000000002, the log's "Time!" and the next turn's reading delay are
    at 25.147. The replay used to apply the delay first, which held the clock:
    no "Time!", and resume would have gone on in Bob's turn."""
    log = ROOT / "tests" / "data" / "logs" / "timeout-a-hair-after-its-log-time.jsonl"
    session, _, logged, replayed = _replayed(log)
    assert logged[-3:] == ["Time!", "Bob loses the turn.", "Ann's turn, 15 seconds."]
    assert replayed == logged
    assert session.state["turn"] == "Ann"


@pytest.mark.slow
def test_shut_the_box_replays_and_resumes_the_order_its_dice_gave(tmp_path):
    """The order roll reorders the players; the log keeps them as named, so
    that replay and resume draw the same order again (issue #63: seeds 1, 6
    and 7 of 1-8 rebuilt another player's turn, with a false warning)."""
    for seed in range(1, 9):
        log = tmp_path / f"st{seed}.jsonl"
        played = referee("play", "shut-the-box", "--players", "Ann", "Bob", "Cy", "--tiles",
                         "9", "--seed", str(seed), "--log", str(log), "--json",
                         stdin="roll\nhint\n")
        assert played.returncode == 0, played.stderr
        live = json.loads(played.stdout.splitlines()[-1])
        replay = referee("replay", str(log), "--json")
        assert replay.returncode == 0, replay.stderr
        assert "Not restored" not in replay.stdout + replay.stderr
        assert json.loads(replay.stdout.splitlines()[-1]) == live
        header = json.loads(log.read_text().splitlines()[0])
        assert header["players"] == ["Ann", "Bob", "Cy"]


@pytest.mark.slow
def test_a_line_too_long_is_logged_with_its_answer_and_replays_without_a_warning(tmp_path):
    """A typed line over 500 characters is answered "too long"; the log keeps
    the input (its start) beside the answer, so replay warns of nothing
    (issue #63: the answer was logged, not the input)."""
    log = tmp_path / "long.jsonl"
    played = referee("play", "race65", "--players", "Ann", "Bob", "--log", str(log),
                     stdin="flip " * 150 + "\nAnn: flip my 7\n")
    assert played.returncode == 0, played.stderr
    assert "That was too long for me" in played.stdout
    inputs = [json.loads(line) for line in log.read_text().splitlines()
              if json.loads(line)["type"] == "input"]
    assert inputs[0]["text"].startswith("flip flip")
    assert len(inputs[0]["text"]) < 510
    replay = referee("replay", str(log))
    assert replay.returncode == 0, replay.stderr
    assert "That was too long for me" in replay.stdout
    assert "Not restored" not in replay.stdout + replay.stderr
    assert "Check the table" not in replay.stdout + replay.stderr


GOLDEN_SCRIPTS = sorted((Path(__file__).parent / "data" / "golden").glob("*.script"))


@pytest.mark.slow
@pytest.mark.parametrize("script", GOLDEN_SCRIPTS, ids=lambda p: p.stem)
def test_every_game_killed_at_random_points_replays_with_no_false_warning(
    tmp_path, script, capsys,
):
    """Each game's golden script played with a log, then its log as kill -9
    leaves it at random points (a prefix of its lines, which are flushed as
    they happen; now and then a last line cut mid-write): replay warns of
    nothing lost, and rebuilds the game the log announced (before: every Turn
    7 log warned "Not restored: Bob: a 6 ...", its first deal)."""
    import random

    from harness.games import golden_game
    from referee.cli import main

    game, args = golden_game(script)
    log = tmp_path / "whole.jsonl"
    assert main(["play", game, *args, "--script", str(script), "--log", str(log)]) == 0
    lines = log.read_text().splitlines(keepends=True)
    draw = random.Random(script.stem)
    cuts = sorted({2, len(lines), *(draw.randrange(2, len(lines)) for _ in range(6))})
    for cut in cuts:
        killed = tmp_path / f"killed-{cut}.jsonl"
        torn = lines[cut][: len(lines[cut]) // 2] if cut < len(lines) and cut % 3 == 0 else ""
        killed.write_text("".join(lines[:cut]) + torn)
        capsys.readouterr()
        assert main(["replay", str(killed)]) == 0
        err = capsys.readouterr().err
        assert "not what was announced" not in err, (cut, err)


class _Killed(BaseException):
    """The process killed (kill -9) in the middle of writing the log."""


@pytest.mark.slow
def test_a_game_killed_while_writing_its_log_keeps_whole_steps(tmp_path, monkeypatch):
    """The flaky random-kill test's cause: each record was its own write, so a
    kill between "Ann, 3 down." and "Bob's turn, 15 seconds." (the same step)
    left the second torn or missing, and the rebuilt game said one sentence
    more than the log. Now a step's records are one write: a kill during it
    leaves none of the step (here the write itself is cut at every point)."""
    from referee.gamelog import GameLog, announced
    from referee.records import GameHeader, SaidRecord
    from referee.session import Session
    from referee.table import Reports, Table

    def said(rs: list[Entry]) -> list[str]:
        return [r.text for r in rs if isinstance(r, SaidRecord) and r.kind != "countdown"]

    for cut in range(5):
        path = tmp_path / f"game-{cut}.jsonl"
        log = GameLog(path, warn=print)
        spec = _hard_race()
        log.write(GameHeader(game=spec.name, players=spec.players,
                             options=spec.options.to_json()))
        table = Table(Session(spec),
                      reports=Reports(show=lambda _: None, stamp=False, record=log.write_all))
        table.start()
        table.hear_text("flip my 7", "Ann", 0.3)
        real_write = log._file.write  # type: ignore[union-attr]
        writes = iter(range(100))

        def killing_write(text: str, cut: int = cut, writes: Any = writes,
                          real_write: Any = real_write) -> int:
            if next(writes) == cut:  # the kill lands in this write: half of it reaches the disk
                real_write(text[: len(text) // 2])
                raise _Killed
            return int(real_write(text))

        monkeypatch.setattr(log._file, "write", killing_write)
        with contextlib.suppress(_Killed):
            for at, who, line in [(0.6, "Ann", "flip my 3"), (1.0, "Bob", "flip my 12"),
                                  (1.4, "Bob", "flip my 9"), (1.8, "Ann", "what's the score")]:
                table.hear_text(line, who, at)
        monkeypatch.undo()
        log.close()
        logged, _ = announced(read_log(path).records)
        again: list[Entry] = []
        Drive(_hard_race(), record=again.append).replay(logged)
        assert said(again) == said(logged)[1:], cut


def test_a_damaged_logs_replay_says_what_it_left_out_not_what_to_check(tmp_path, capsys):
    """A log that lost an input line mid-game: replay names what the rebuilt
    game lacks and that it prints the log as written; only resume, where the
    game goes on, asks the table to check."""
    from referee.cli import main

    log = tmp_path / "game.jsonl"
    script = tmp_path / "game.script"
    script.write_text("[1] Ann: flip my 7\n[2] Ann: flip my 3\n[3] Bob: flip my 12\n")
    assert main(["play", "race65", "--players", "Ann", "Bob", "--script", str(script),
                 "--log", str(log)]) == 0
    lines = log.read_text().splitlines(keepends=True)
    first_input = next(i for i, line in enumerate(lines) if '"type":"typed"' in line)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines[:first_input] + lines[first_input + 1:]))
    capsys.readouterr()
    assert main(["replay", str(damaged)]) == 0
    told = capsys.readouterr().err
    assert "Not restored" in told
    assert "The replay shows the log as written" in told
    assert "Check the table" not in told


FORMAT_2 = ROOT / "tests" / "data" / "logs" / "format2"


@pytest.mark.parametrize("log", sorted(FORMAT_2.glob("*.jsonl")), ids=lambda p: p.stem)
def test_a_log_of_the_previous_format_replays_to_the_game_it_logged(log, capsys):
    """Each golden script's log as the referee wrote it before its log held
    the brain's inputs (format 2: records that mirrored them, times to the
    millisecond), with the result that referee printed: converted on reading,
    it replays to that result, and nothing it announced is missing."""
    from referee.cli import main

    logged = read_log(log)
    assert logged.header.version == 2
    assert logged.converted
    assert main(["replay", str(log), "--json"]) == 0
    out, err = capsys.readouterr()
    finals = json.loads((FORMAT_2 / "finals.json").read_text())
    assert json.loads(out.splitlines()[-1]) == finals[log.stem]
    assert "not what was announced" not in err
    assert "skipped" not in err


@pytest.mark.slow
def test_a_log_is_the_brain_s_inputs_and_replay_steps_them_again(tmp_path):
    """Every golden game's log: the lines after the header are the protocol's
    input messages, each followed by records; stepping those inputs in a
    fresh brain (with the log's chance) logs the very same lines again, times
    exact to the bit, but for what the start said (a rebuilt game says nothing
    as it starts)."""
    from harness.games import golden_game
    from referee.cli import main
    from referee.gamelog import steps
    from referee.games import find_game
    from referee.protocol import INPUTS, Start
    from referee.replay import replay_records
    from referee.session import Session

    for script in GOLDEN_SCRIPTS:
        game, args = golden_game(script)
        log = tmp_path / f"{script.stem}.jsonl"
        assert main(["play", game, *args, "--script", str(script), "--log", str(log)]) == 0
        logged = read_log(log)
        assert logged.header.version == VERSION
        assert not logged.skipped
        assert isinstance(logged.records[0], Start)
        assert all(isinstance(e, (Record, *INPUTS)) for e in logged.records)
        header = logged.header
        spec_class = find_game(header.game)
        spec = spec_class(list(header.players), spec_class.options_type.from_json(header.options))
        rebuilt = replay_records(Session(spec), logged.records)
        start, *rest = steps(logged.records)  # (what the start said is not said again)
        expected = [e for e in start if not isinstance(e, SaidRecord)]
        expected += [e for step in rest for e in step]
        again = [dataclasses.replace(e, rebuild=None) if isinstance(e, Start) else e
                 for e in rebuilt.records]
        assert again == expected, script.stem
        assert rebuilt.skipped == []


def test_the_log_s_input_and_record_types_are_distinct():
    """A line's ``type`` says alone whether it is an input or a record."""
    from referee.protocol import INPUT_TYPES

    assert not set(INPUT_TYPES) & set(RECORD_TYPES)


def test_speech_with_a_recogniser_s_numpy_scores_is_logged_and_read_back(tmp_path):
    """The log holds what the ears measured: a recogniser's scores may be
    NumPy numbers, and the line is still JSON that reads back the same."""
    import numpy as np

    from referee.protocol import Speech
    from referee.speech.hearing.interface import Transcript
    from referee.speech.hearing.measures import Measures, Sentence

    numbers: Any = (np.float32(9.5), np.float64(-1.25), np.int64(4), np.float64(2.5))
    scored = Sentence("flip my seven", *numbers[:3])
    heard = Transcript("flip my seven", np.float32(0.875),  # type: ignore[arg-type]
                       ("flip my seven",),
                       measures=Measures(margin=numbers[3], options=(scored,),
                                         best="flip my seven"))
    path = tmp_path / "speech.jsonl"
    log = GameLog(path, print)
    log.write(GameHeader(game="race65", players=("Ann", "Bob")))
    log.write(Speech(1.234567891, 0.5, 1.1, "Ann", "phone", heard))
    log.close()
    (speech,) = read_log(path).records
    assert isinstance(speech, Speech)
    assert speech.at == 1.234567891  # exact, not to the millisecond
    assert speech.transcript.confidence == 0.875
    assert speech.transcript.measures == Measures(
        margin=2.5, options=(Sentence("flip my seven", 9.5, -1.25, 4),), best="flip my seven")


def test_a_log_of_before_the_typed_measures_reads_them_from_extra(tmp_path):
    """Logs written before the measures were typed hold them, and the
    decoded-ahead flag, in one object (``extra``): they read into the typed
    value; a damaged one is skipped, named, not a traceback."""
    from referee.protocol import Speech
    from referee.speech.hearing.measures import Measures, Sentence

    extra = {"margin": 1.5, "free": "Flip my 7.", "best": "flip my seven", "primed": None,
             "similarity": 90.0, "primed_similarity": 90.0, "gap": float("inf"),
             "options": [["flip my seven", 9.0, -1.0, 4, None]], "scores": [-1.0, 4, -2.0, 5],
             "nothing": -12.0, "base_logprob": None, "probability": 0.97,
             "model": "tiny.en+table", "ahead": True}
    line = {"type": "speech", "at": 2.0, "start": 1.0, "end": 1.8, "speaker": None,
            "source": "mic", "transcript": {"text": "flip my seven", "confidence": 1.0,
                                            "nbest": ["flip my seven"], "decode_s": 0.2,
                                            "extra": extra}}
    path = tmp_path / "old.jsonl"
    header = {"type": "game", "at": 0.0, "game": "race65", "players": ["Ann", "Bob"],
              "version": 4}
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    (speech,) = read_log(path).records
    assert isinstance(speech, Speech)
    assert speech.transcript.ahead
    assert not speech.transcript.whole
    assert speech.transcript.measures == Measures(
        model="tiny.en+table", best="flip my seven", free="Flip my 7.",
        options=(Sentence("flip my seven", 9.0, -1.0, 4),), best_logprob=-1.0, best_length=4,
        free_logprob=-2.0, free_length=5, margin=1.5, similarity=90.0, primed_similarity=90.0,
        gap=float("inf"), nothing=-12.0, probability=0.97)
    extra["scores"] = [-1.0, "four", -2.0, 5]
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    damaged = read_log(path)
    assert not damaged.records
    assert "scores" in str(damaged.skipped)
