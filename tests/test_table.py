"""End-to-end games by voice: recorded utterances through the real recogniser and loop.

Every game here is a timed sequence of WAV files (the committed Piper
recordings in tests/audio_fixtures/piper-joe) played on a simulated clock
through the default recogniser (Whisper), the intent matcher, the session and the table; the
referee speaks with the real eSpeak voice (pyttsx3), rendered to WAV files,
and with ``echo`` its own voice is fed back into the recogniser as a
microphone beside the loudspeaker would hear it. ``[+0.5]`` lines start half
a second after the referee has fallen silent, as players at a table do.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from referee.audioscript import AudioScript
from referee.cli import main
from referee.games import matcher_for
from referee.games.race65 import Race65Options, Race65Spec
from referee.gate import ECHO, TALKING, content_words
from referee.protocol import Room, Say, Tone
from referee.session import Session
from referee.speech.audio import Audio, load_wav
from referee.speech.hearing.interface import OverVoice
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.speaking.tts import EspeakVoice, WavDirOutput
from referee.speech.understanding.intents import IntentMatcher
from referee.table import Mouth, Reports, Table
from referee.wording import AFTER_THE_END, NOT_MOVES, sentences

ROOT = Path(__file__).resolve().parent.parent
F = ROOT / "tests" / "audio_fixtures" / "piper-joe"

# The recordings (see race65.tsv).
FLIP_12, FLIP_11, FLIP_8_DOWN, FLIP_7, FLIP_3 = "cmd54", "cmd62", "cmd29", "cmd01", "cmd63"
FLIP_10_BACK_UP = "cmd30"
ANN_10_DOWN, ANN_9_DOWN, ANN_6_DOWN, ANN_4_DOWN = "cmd55", "cmd56", "cmd57", "cmd58"
BOB_10_DOWN, BOB_1_DOWN = "cmd07", "cmd64"
SEVENTY, BOB_CALLS_70, RULES = "cmd13", "cmd15", "cmd47"  # "what are the rules"
YES, STOP, TAKE_THAT_BACK = "cmd48", "cmd51", "cmd60"


@functools.cache
def _matcher() -> IntentMatcher:
    """The sentences of the tests' table (Race to 65, Ann and Bob): the
    test's own, as a recogniser's words are matched to them."""
    return matcher_for("race65", ["Ann", "Bob"])


def _down(table: Table, player: str) -> frozenset[int]:
    """The tiles ``player`` has down, as the table last showed them."""
    return frozenset(table.state["game"]["players"][player]["down"])


def line(when: str, wav: str | None = None, speaker: str | None = None) -> str:
    who = f"{speaker}: " if speaker else ""
    return f"[{when}] {who}{F / (wav + '.wav')}" if wav else f"[{when}]"


def move(wav: str, speaker: str | None = None) -> list[str]:
    """A spoken move, then "yes" from the same player: it answers the referee when
    it asks "did you say ...?" (Whisper is unsure of some of these recordings:
    "flip my eleven" comes out "flip my loving"), and is ignored otherwise."""
    return [line("+0.5", wav, speaker), line("+0.5", YES, speaker)]


def said_and_confirmed(table: Table, audio: Audio, at: float) -> None:
    """A move said at ``at`` and, if the referee asks "did you say ...?", a
    "yes" from the same player once it has asked (as :func:`move` scripts it)."""
    table.hear_audio(audio, at, at + audio.seconds, at + audio.seconds + 0.3)
    if table.state["question"] is not None:
        yes = load_wav(F / f"{YES}.wav")
        then = table.busy_until + 0.5
        table.hear_audio(yes, then, then + yes.seconds, then + yes.seconds + 0.3)


WIN = [
    *move(FLIP_12), *move(FLIP_11),
    *move(ANN_10_DOWN, "Bob"), *move(ANN_9_DOWN, "Bob"),
    *move(FLIP_8_DOWN), *move(FLIP_7),
    *move(ANN_6_DOWN, "Bob"), *move(ANN_4_DOWN, "Bob"),
    *move(FLIP_3), *move(BOB_1_DOWN),
    line("+0.5", SEVENTY, "Ann"), line("+0.5", YES, "Ann"),
]


def play(tmp_path: Path, lines: list[str], capsys, *extra: str) -> tuple[list[str], dict[str, Any]]:
    script = tmp_path / "game.txt"
    script.write_text("\n".join(lines) + "\n")
    code = main(["play", "race65", "--rules", "phase-seven", "--difficulty", "hard",
                 "--audio-script", str(script), "--json", *extra])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    return out[:-1], json.loads(out[-1])


def said(out: list[str]) -> list[str]:
    return [x.split("referee: ", 1)[1] for x in out if "] referee: " in x]


@pytest.mark.slow
def test_a_hard_game_is_won_by_a_confirmed_call_spoken_in_real_sentences(
    tmp_path, capsys
):
    voice_dir = tmp_path / "said"
    out, final = play(tmp_path, WIN, capsys, "--voice", f"wav:{voice_dir}")
    assert final["winner"] == "Ann"
    assert final["players"]["Ann"] == {"total": 70, "down": [3, 4, 6, 7, 8, 9, 10, 11, 12]}
    texts = said(out)
    assert "Ann, did you call 70?" in texts
    assert texts[-3:] == ["70! Ann has exactly 70.", "Ann wins!", AFTER_THE_END]
    # Bob's lines of the script are his speech, not lines of a seat page (#73 item 11)
    assert not any("(seat page)" in line for line in out)
    assert any("] Bob: (" in line for line in out)
    # Every sentence spoken is a real recording of it (each sentence of an
    # announcement rendered and played in turn), listed with its start time.
    rows = [r.split("\t") for r in (voice_dir / "said.tsv").read_text().splitlines()]
    # (a countdown mark the referee could not say on time is skipped, never said late)
    countdown = {"10 seconds.", "Five.", "Four.", "Three.", "Two.", "One."}
    assert [r[3] for r in rows if r[3] not in countdown] == [
        s for t in texts if t not in countdown for s in sentences(t)
    ]
    assert any(len(sentences(t)) > 1 for t in texts)
    starts = [float(r[1]) for r in rows]
    ends = [float(r[1]) + float(r[2]) for r in rows]
    assert all(b >= a - 0.002 for a, b in zip(ends, starts[1:], strict=False))  # one at a time
    for name, _, seconds, text in rows:
        audio = load_wav(voice_dir / name)
        assert audio.seconds == pytest.approx(float(seconds), abs=0.01)
        assert audio.seconds > 0.25 * len(text.split())  # real speech, not a click


@pytest.mark.slow
def test_the_referee_hearing_its_own_voice_never_plays_it():
    """The same game with every sentence the referee says heard back by the
    recogniser (an audio script's echo): the gate drops the echoes, some of
    them heard as moves (played, they would change the game), and the game
    ends as without them."""
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
    script = AudioScript(WIN, ROOT, echo=True)
    table = Table(session, recognizer=make_recognizer(_matcher().phrases),
                  mouth=Mouth(voice=EspeakVoice(), heard_back=script.heard_back),
                  reports=Reports(show=lambda text: None))
    script.run(table)
    echoes = [judged for judged in table.heard if judged.dropped == ECHO]
    assert len(echoes) >= 10
    assert any(judged.heard.kind not in NOT_MOVES for judged in echoes), echoes
    assert table.final["winner"] == "Ann"
    assert table.final["players"]["Ann"] == {"total": 70, "down": [3, 4, 6, 7, 8, 9, 10, 11, 12]}


@pytest.mark.slow
def test_a_timeout_reverts_the_partial_turn(tmp_path, capsys):
    out, final = play(tmp_path, [*move(FLIP_12), line("+20")], capsys)
    texts = said(out)
    assert texts.index("Time!") < texts.index("Ann loses the turn. Ann, flip your 12 back up.")
    assert final["players"]["Ann"]["total"] == 0
    assert final["turn"] == "Bob"


@pytest.mark.slow
def test_a_consecutive_tile_loses_the_turn(tmp_path, capsys):
    out, final = play(tmp_path, [*move(BOB_10_DOWN), *move(FLIP_12),
                                 line("+0.5", FLIP_10_BACK_UP, "Bob")], capsys)
    texts = said(out)
    assert "10 was flipped last turn; it stays down." in texts
    assert "Bob loses the turn." in texts
    assert final["players"]["Bob"]["down"] == [10]
    assert final["turn"] == "Ann"


@pytest.mark.slow
def test_an_incorrect_call_resets_the_callers_tray(tmp_path, capsys):
    out, final = play(tmp_path, [*move(FLIP_12), *move(FLIP_11),
                                 line("+0.5", SEVENTY, "Ann"), line("+0.5", YES, "Ann")],
                      capsys)
    assert any(t.startswith("Wrong call: Ann has 23, not 70. All of Ann's tiles go up")
               for t in said(out))
    assert final["players"]["Ann"]["total"] == 0
    assert final["turn"] == "Bob"  # an out-of-turn call does not end Bob's turn


@pytest.mark.slow
def test_out_of_turn_calls_are_attributed_by_name_and_by_seat(tmp_path, capsys):
    by_name = [line("+0.5", BOB_CALLS_70), line("+0.5", YES)]
    out, final = play(tmp_path, by_name, capsys)
    texts = said(out)
    assert "Bob, did you call 70?" in texts  # "yes" unattributed: the player asked
    assert any(t.startswith("Wrong call: Bob has 0, not 70.") for t in texts)
    assert final["turn"] == "Ann"
    by_seat = [line("+0.5", SEVENTY, "Bob"), line("+0.5", YES, "Bob")]
    out, _ = play(tmp_path, by_seat, capsys)
    assert "Bob, did you call 70?" in said(out)


@pytest.mark.slow
def test_an_unanswered_confirmation_is_a_no_and_the_timer_resumes(tmp_path, capsys):
    out, final = play(tmp_path, [*move(FLIP_12), line("+0.5", SEVENTY), line("+7")], capsys)
    texts = said(out)
    ask = texts.index("Ann, did you call 70?")
    assert texts[ask + 1] == "No answer, so no. OK, not played."
    assert texts[ask + 2].startswith("Timer running: ")
    assert final["players"]["Ann"] == {"total": 12, "down": [12]}


@pytest.mark.slow
def test_undo_by_voice_needs_the_other_player(tmp_path, capsys):
    out, final = play(tmp_path, [*move(FLIP_12), line("+0.5", TAKE_THAT_BACK),
                                 line("+0.5", YES, "Bob")], capsys)
    texts = said(out)
    assert "Bob, do you agree to undo: Ann flips 12?" in texts
    assert "Undone. Ann, flip your 12 back up. It's Ann's turn, 2 flips left." in texts
    assert final["players"]["Ann"]["total"] == 0


@pytest.mark.slow
def test_a_move_begun_before_the_time_ran_out_is_not_given_to_the_next_player():
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
    shown: list[str] = []
    table = Table(session, recognizer=make_recognizer(_matcher().phrases),
                  reports=Reports(show=shown.append, stamp=False))
    table.start()
    deadline = table.state["deadline"]
    assert deadline is not None
    flip = load_wav(F / f"{FLIP_12}.wav")  # "flip my twelve", unnamed: the active player's
    start = deadline - 0.5
    heard = table.hear_audio(flip, start, start + flip.seconds, start + flip.seconds + 0.3)
    assert heard.dropped == "begun before the turn ran out"
    assert "Too late, Ann: your time was up." in shown
    assert table.state["turn"] == "Bob"
    assert _down(table, "Bob") == frozenset()
    assert _down(table, "Ann") == frozenset()
    # In Bob's own time the same words are his move.
    said_and_confirmed(table, flip, table.now + 1.0)
    assert _down(table, "Bob") == frozenset({12})


def test_a_move_begun_just_after_a_countdown_word_is_the_players_when_the_canceller_says_so(
    tmp_path,
):
    """"flip my five" begun 0.2 s into the countdown's "Five." lies where that
    word's echo would: without a canceller, or with one showing only its
    leftover, it is the echo; with one showing a player over it, the player's
    (played: a countdown word is no reason to doubt a move)."""
    from referee.speech.hearing.interface import Transcript

    for over, expected in ((None, "echo of the referee's own voice"),
                           (OverVoice(1.0), "echo of the referee's own voice"),
                           (OverVoice(12.0), None)):
        session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
        table = Table(session,
                      mouth=Mouth(voice=EspeakVoice(), output=WavDirOutput(tmp_path / str(over))),
                      room=Room(echo_tail=0.5, cancels_echo=over is not None),
                      reports=Reports(show=lambda text: None))
        table.start()
        table.advance(table.busy_until + 0.1)  # the turn's clock starts once it is said
        deadline = table.state["deadline"]
        assert deadline is not None
        table.advance(deadline - 4.9)
        five = table.spoken[-1]
        assert (five.text, five.tone) == ("Five.", "countdown")
        result = table.hear_transcript(Transcript("flip my five", 1.0), five.start + 0.2,
                                   five.start + 0.9, five.start + 1.2, "Ann", "seat", over=over)
        assert result.dropped == expected, over
        assert (5 in _down(table, "Ann")) == (expected is None)


@pytest.mark.slow
def test_a_move_that_outlasts_the_referees_voice_gets_a_spoken_notice():
    """Without an echo canceller a move said over the referee is dropped; when it
    goes on after the referee's voice has died away (its echo cannot), a player
    said it, and hears "Sorry, I was talking: say it again" (once)."""
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    shown: list[str] = []
    table = Table(session, recognizer=make_recognizer(_matcher().phrases),
                  mouth=Mouth(voice=EspeakVoice()),
                  reports=Reports(show=shown.append, stamp=False))
    table.start()
    opening = table.spoken[-1]
    flip = load_wav(F / f"{FLIP_12}.wav")
    inside = opening.end - flip.seconds - 0.5  # within the referee's voice: maybe its echo
    heard = table.hear_audio(flip, inside, inside + flip.seconds, opening.end + 0.5)
    assert heard.dropped == "the referee was speaking"
    assert not any("Sorry, I was talking" in x for x in shown)
    late = opening.end - 0.3  # starts over its last words, ends a second after them
    heard = table.hear_audio(flip, late, late + flip.seconds, late + flip.seconds + 0.3)
    assert heard.dropped == "the referee was speaking"
    assert shown[-1] == "Sorry, I was talking: say it again."
    notice = table.spoken[-1]
    again = table.hear_audio(flip, notice.end - 0.3, notice.end - 0.3 + flip.seconds,
                             notice.end + flip.seconds)
    assert again.dropped == "the referee was speaking"
    assert sum("Sorry, I was talking" in x for x in shown) == 1  # never a notice for a notice
    assert _down(table, "Ann") == frozenset()


@pytest.mark.slow
def test_stop_cuts_the_referee_and_other_speech_over_it_is_ignored(tmp_path):
    options = Race65Options(difficulty="hard")
    session = Session(Race65Spec(["Ann", "Bob"], options))
    out_dir = tmp_path / "said"
    table = Table(session, recognizer=make_recognizer(_matcher().phrases),
                  mouth=Mouth(voice=EspeakVoice(), output=WavDirOutput(out_dir)),
                  reports=Reports(show=lambda text: None))
    AudioScript([line("+0.5", RULES)], ROOT).run(table)
    # (The opening starts the same way; the rules, a long reading, come last.)
    first = [s for s in table.spoken if s.text == "Race to 70, phase-seven hard."][-1]
    rules = [s for s in table.spoken if s.start >= first.start]  # one Spoken a sentence
    assert len(rules) > 3
    assert rules[1].text == "Down tiles count their number."
    assert rules[-1].end - first.start > 10
    before = table.state["game"]
    flip = load_wav(F / f"{FLIP_12}.wav")
    talk_over = table.hear_audio(flip, first.start + 2, first.start + 2 + flip.seconds,
                                 first.start + 2.4 + flip.seconds)
    assert talk_over.dropped == "the referee was speaking"
    assert table.state["game"] == before
    stop = load_wav(F / f"{STOP}.wav")
    at = first.start + 5
    heard = table.hear_audio(stop, at, at + stop.seconds, at + stop.seconds + 0.4)
    assert heard.dropped is None
    assert heard.heard.kind == "stop"
    cut_at = at + stop.seconds + 0.4
    assert table.busy_until == pytest.approx(cut_at)
    # The sentence being said is cut where "stop" was decided; the later ones are gone.
    playing = next(s for s in rules if s.start <= cut_at < s.end)
    files = sorted(out_dir.glob("*.wav"))
    rows = [r.split("\t") for r in (out_dir / "said.tsv").read_text().splitlines()]
    assert next(r[3] for r in rows if r[0] == files[-1].name) == playing.text
    assert load_wav(files[-1]).seconds == pytest.approx(cut_at - playing.start, abs=0.01)
    assert table.spoken[-1].end == pytest.approx(cut_at)
    assert table.state["game"] == before


BAD_LINES = ["[+0.5] {tmp}/missing.wav", "[+0.5] {tmp}/garbage.wav", "[+0.5] Carl: {F}/cmd01.wav",
             "this is not a line", "[abc] ok.wav"]


@pytest.mark.slow
def test_a_script_s_bad_lines_are_all_reported_before_its_game_starts(tmp_path, capsys):
    """Issue #83: a bad line was reported only when play reached it (line 6,
    after five lines played). Every bad line is listed before anything is
    said or logged, and the game does not start."""
    (tmp_path / "garbage.wav").write_bytes(b"RIFF\x00\x00garbage")
    lines = [*move(FLIP_12), *(x.format(tmp=tmp_path, F=F) for x in BAD_LINES)]
    script = tmp_path / "game.txt"
    script.write_text("\n".join(lines) + "\n")
    log = tmp_path / "game.jsonl"
    code = main(["play", "race65", "--audio-script", str(script), "--log", str(log)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert not log.exists()
    first = len(move(FLIP_12)) + 1
    for number, message in enumerate(["missing.wav does not exist", "garbage.wav",
                                      "There is no player called Carl.",
                                      "expected '[seconds] [Speaker:] FILE.wav'",
                                      "expected '[seconds] [Speaker:] FILE.wav'"], start=first):
        assert any(line.strip().startswith(f"line {number}: ") and message in line
                   for line in captured.err.splitlines()), (number, captured.err)


@pytest.mark.slow
def test_bad_recordings_met_during_a_game_never_change_it(tmp_path):
    """A recording that goes bad after the script was checked (deleted,
    overwritten) is said and skipped as it is met: the game is unchanged."""
    (tmp_path / "garbage.wav").write_bytes(b"RIFF\x00\x00garbage")
    lines = [*move(FLIP_12), *(x.format(tmp=tmp_path, F=F) for x in BAD_LINES)]
    shown: list[str] = []
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
    table = Table(session, recognizer=make_recognizer(_matcher().phrases),
                  reports=Reports(show=shown.append))
    AudioScript(lines, ROOT).run(table)
    text = "\n".join(shown)
    assert "missing.wav does not exist" in text
    assert "garbage.wav" in text
    assert "There is no player called Carl." in text
    assert "expected '[seconds] [Speaker:] FILE.wav'" in text
    assert table.final["players"]["Ann"] == {"total": 12, "down": [12]}


@pytest.mark.slow
def test_a_clear_move_said_over_the_greeting_is_answered_not_dropped_in_silence(
        tmp_path, capsys):
    """Issue #83: an audio script's "flip my seven" one second into the
    opening (no echo canceller) was heard clearly and dropped without a word:
    the player's next move would have become their first. It is still not
    played (the referee was speaking), and the player hears so."""
    out, final = play(tmp_path, [line("1", FLIP_7)], capsys, "--voice", f"wav:{tmp_path}")
    log = [x for x in out if "flip my" in x.lower() or "referee:" in x]
    assert TALKING in said(out), log
    assert final["players"]["Ann"]["down"] == []


def test_content_words_ignore_plurals_and_spell_numbers():
    assert content_words("Bob's turn, fifteen seconds.") == ["bob", "turn", "15", "second"]


def test_a_typed_stop_cuts_the_referee_at_once(tmp_path):
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
    out_dir = tmp_path / "said"
    table = Table(session, mouth=Mouth(voice=EspeakVoice(), output=WavDirOutput(out_dir)),
                  reports=Reports(show=lambda text: None))
    table.start()
    table.hear_text("rules", "Ann", table.busy_until + 0.5)
    reading = table.busy_until
    at = reading - 8.0  # the rules take longer than that to say
    table.hear_text("stop", "Bob", at)
    assert table.busy_until == pytest.approx(at)
    assert table.spoken[-1].end == pytest.approx(at)
    rows = [r.split("\t") for r in (out_dir / "said.tsv").read_text().splitlines()]
    assert rows[-1][3] == "(cut)"


def test_the_referees_own_words_from_a_player_over_it_are_the_players(tmp_path):
    """"flip my three" over "Ann, 3 down. One more flip." shares most of its
    words: without the canceller that is the referee's echo; with a canceller
    showing a player over it (12 dB above its leftover) it is the player's.
    "more" within the referee's sentence (its "Say more for the rest.") is not
    a reply."""
    from referee.speech.hearing.interface import Transcript

    for cancels, expected in ((False, "echo of the referee's own voice"), (True, None)):
        session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
        table = Table(session,
                      mouth=Mouth(voice=EspeakVoice(),
                                  output=WavDirOutput(tmp_path / str(cancels))),
                      room=Room(cancels_echo=cancels), reports=Reports(show=lambda text: None))
        table.start()
        table.hear_text("flip my 3", "Ann", table.busy_until + 0.5)
        first, second = table.spoken[-2:]
        assert (first.text, second.text) == ("Ann, 3 down.", "One more flip.")
        result = table.hear_transcript(Transcript("flip my three", 1.0), first.start + 0.2,
                                   second.end - 0.1, second.end + 0.2, None, "mic",
                                   over=OverVoice(12.0) if cancels else None)
        assert result.dropped == expected
    more = _matcher().match("go on", "Ann")
    assert more.kind == "more"
    asked = table.busy_until + 3.0
    table.hear_text("rules", "Bob", asked)
    reading = next(s for s in table.spoken if s.start >= asked and s.end - s.start > 2.0)
    result = table.hear_transcript(Transcript("go on", 1.0), reading.start + 1,
                               reading.start + 1.5, reading.start + 1.8, None, "mic",
                               over=OverVoice(12.0))
    assert result.dropped == "a reply within the referee's own sentence"


def test_the_referees_words_in_its_order_are_its_echo_whatever_the_microphone_measured(
    tmp_path,
):
    """"Bob, did you call 65?" heard back as "call sixty five" while the
    canceller fared badly on that sentence (10.6 dB above its usual leftover,
    measured on a busy machine) is the referee's echo: its words, in its
    order. "Bob flip two down" over "Ann, 2 down." shares two words in order
    of four: a player's."""
    from referee.speech.hearing.interface import Transcript

    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    table = Table(session,
                  mouth=Mouth(voice=EspeakVoice(), output=WavDirOutput(tmp_path / "said")),
                  room=Room(cancels_echo=True), reports=Reports(show=lambda text: None))
    table.start()
    table.hear_text("flip my 2", "Ann", table.busy_until + 0.5)
    announced = table.spoken[-2]
    assert announced.text == "Ann, 2 down."
    kept = table.hear_transcript(Transcript("Bob flip two down", 1.0), announced.start + 0.1,
                             announced.end + 0.4, announced.end + 0.7, "Ann", "seat",
                             over=OverVoice(12.0))
    assert kept.dropped is None
    assert table.state["question"] == "Ann, did you say: flip Bob's 2 down?"
    table.hear_text("no", "Ann", table.busy_until + 0.5)  # (it was a test of the gate)
    table.hear_text("flip my 3", "Ann", table.busy_until + 0.5)
    table.hear_text("65", "Bob", table.busy_until + 0.5)
    table.hear_text("no", "Bob", table.busy_until + 0.5)
    before = table.state["game"]
    table.say([Say(table.busy_until + 0.5, "Bob, did you call 65?", Tone.QUESTION)])
    question = table.spoken[-1]
    call = _matcher().match("call sixty five", "Bob")
    assert call.kind == "call"
    echo = table.hear_transcript(Transcript("call sixty five", 0.75), question.start + 0.05,
                             question.end - 0.05, question.end + 0.6, "Bob", "seat",
                             over=OverVoice(10.6))
    assert echo.dropped == "echo of the referee's own voice"
    assert table.state["game"] == before


def _reading_the_rules(tmp_path: Path) -> tuple[Table, float]:
    """A table with an echo canceller reading the rules, and a time in the middle."""
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    table = Table(session,
                  mouth=Mouth(voice=EspeakVoice(), output=WavDirOutput(tmp_path / "said")),
                  room=Room(cancels_echo=True), reports=Reports(show=lambda text: None))
    table.start()
    table.hear_text("rules", "Ann", table.busy_until + 0.5)
    return table, table.busy_until - 10.0


def test_seat_microphones_overrule_a_canceller_that_fared_badly(tmp_path):
    """Over the rules, "flip my twelve" standing 12 dB above the canceller's
    usual leftover but level at every seat (the speakers reach them alike) is
    the referee's voice; standing out at its seat, a player's, asked about."""
    from referee.speech.hearing.interface import Transcript

    table, at = _reading_the_rules(tmp_path)
    level = table.hear_transcript(Transcript("flip my twelve", 1.0), at, at + 1, at + 1.3,
                              "Ann", "seat", over=OverVoice(12.0, seat_db=1.0))
    assert level.dropped == "the referee's voice, heard alike at every seat"
    assert table.state["question"] is None
    player = table.hear_transcript(Transcript("flip my twelve", 1.0), at + 2, at + 3,
                               at + 3.3, "Ann", "seat", over=OverVoice(12.0, seat_db=25.0))
    assert player.dropped is None
    assert table.state["question"] is not None


def test_over_the_referees_voice_only_what_is_heard_clearly_is_taken(tmp_path):
    """What the echo canceller leaves of the referee's voice can stand above its
    usual leftover while the canceller is still learning the room, and sound
    like words: live, the opening's "Ann against Bob" came back as "play again",
    heard unsure (0.75), 5.7 dB above the leftover. Over the referee an unsure
    hearing is dropped, with "say it again" when it went on after the voice (a
    player's, then); the same words heard clearly are a player's."""
    from referee.speech.hearing.interface import Transcript

    table, at = _reading_the_rules(tmp_path)
    before = table.state["game"]

    def heard(text: str, confidence: float) -> Transcript:
        return Transcript(text, confidence)

    echo = table.hear_transcript(heard("play again", 0.75), at, at + 1, at + 1.3, None, "mic",
                             over=OverVoice(5.7))
    assert echo.heard.kind == "rematch"
    assert echo.dropped == "unclear over the referee's voice"
    assert table.state["question"] is None
    assert table.spoken[-1].text != "Sorry, I was talking: say it again."
    end = table.busy_until  # the rules' section ends; an unsure move goes on after it
    late = table.hear_transcript(heard("flip my twelve", 0.75), end - 0.5, end + 1.5, end + 1.8,
                             None, "mic", over=OverVoice(12.0))
    assert late.dropped == "unclear over the referee's voice"
    assert table.spoken[-1].text == "Sorry, I was talking: say it again."
    assert table.state["question"] is None
    notice = table.spoken[-1]
    clear = table.hear_transcript(heard("play again", 1.0), notice.start, notice.start + 1,
                              notice.start + 1.3, None, "mic", over=OverVoice(12.0))
    assert clear.dropped is None
    assert table.state["question"] is not None
    assert table.state["question"] == "Bob, do you agree to start a new game?"
    assert table.state["game"] == before


def test_with_the_echo_canceller_a_player_over_the_referee_is_heard_and_its_leftover_not(
    tmp_path,
):
    """Over the referee's voice (its echo cancelled) "flip my twelve" from a
    player (the microphone as loud after the canceller as before: -2 dB) is
    heard and confirmed, never played at once; "pardon" made of what the
    canceller left of the referee's own voice (1 dB above its usual leftover)
    is dropped."""
    from referee.speech.hearing.interface import Transcript

    table, at = _reading_the_rules(tmp_path)
    before = table.state["game"]
    leftover = _matcher().match("pardon", "Ann")
    assert leftover.kind == "query"
    dropped = table.hear_transcript(Transcript("pardon", 1.0), at, at + 1, at + 1.3,
                                None, "mic", over=OverVoice(1.0))
    assert dropped.dropped == "what the echo canceller left of the referee's voice"
    heard = table.hear_transcript(Transcript("flip my twelve", 1.0), at + 2, at + 3, at + 3.3,
                              None, "mic", over=OverVoice(12.0))
    assert heard.dropped is None
    assert table.state["question"] is not None
    assert table.state["question"] == "Ann, did you say: flip Ann's 12?"
    assert table.state["game"] == before
    # A "yes" within the referee's own sentence is not an answer (its echo, most
    # likely): dropped; one that goes on after the sentence is asked about.
    question = table.spoken[-1]  # said once the rules' section is over
    assert question.text == "Ann, did you say: flip Ann's 12?"
    inside = table.hear_transcript(Transcript("yes", 1.0), at + 4, at + 4.5, at + 4.8, None,
                               "mic", over=OverVoice(12.0))
    assert inside.dropped == "a reply within the referee's own sentence"
    assert table.state["question"] is not None
    late = table.hear_transcript(Transcript("yes", 1.0), question.end - 0.2, question.end + 1.2,
                             question.end + 1.5, None, "mic", over=OverVoice(12.0))
    assert late.dropped is None
    assert table.spoken[-2].text == "Sorry, was that a yes or a no?"
    assert table.state["game"] == before


@pytest.mark.slow
def test_the_game_log_names_what_heard_the_players(tmp_path, capsys):
    """The log's first line says which recogniser and which table adapter
    (its SHA-256) heard the game, and ``--model base`` that none did."""
    from referee.speech.hearing.adapter import ADAPTER_SHA256

    for model, want in ((None, f"whisper tiny.en+table, adapter {ADAPTER_SHA256[:12]}"),
                        ("base", "whisper tiny.en as shipped")):
        log = tmp_path / f"{model}.jsonl"
        play(tmp_path, [*move(FLIP_12)], capsys, "--log", str(log),
             *(("--model", model) if model else ()))
        header = json.loads(log.read_text().splitlines()[0])
        assert header["type"] == "game"
        assert header["hearing"] == want
