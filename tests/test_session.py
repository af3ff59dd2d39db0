"""The referee's session on a simulated clock: countdown, timeouts, questions."""

from __future__ import annotations

import pytest

from harness.brain import Drive
from harness.games import race65_spec
from referee.games.race65 import Race65Options, Race65Spec
from referee.wording import countdown_marks


def session(*args, **options) -> Drive:
    return Drive(race65_spec(*args, **options))


def texts(said) -> list[str]:
    return [s.text for s in said]


def test_countdown_marks_follow_the_turn_length():
    assert countdown_marks(15) == (10, 5, 4, 3, 2, 1)
    assert countdown_marks(30) == (15.0, 10, 5, 4, 3, 2, 1)
    assert countdown_marks(4) == (3, 2, 1)
    assert countdown_marks(None) == ()


def test_countdown_is_announced_at_its_times_then_time_is_up():
    s = session()
    said = s.tick(15.0)
    assert [(x.at, x.text) for x in said[:6]] == [
        (5.0, "10 seconds."), (10.0, "Five."), (11.0, "Four."), (12.0, "Three."),
        (13.0, "Two."), (14.0, "One."),
    ]
    assert texts(said[6:]) == ["Time!", "Ann loses the turn.", "Bob's turn, 15 seconds."]
    assert s.state["turn"] == "Bob"


def test_next_wakeup_is_the_next_countdown_mark_then_the_deadline():
    s = session()
    s.tick(0.0)
    assert s.wake == 5.0
    s.tick(5.0)
    assert s.wake == 10.0
    s.tick(14.0)
    assert s.wake == 15.0


def test_a_long_silence_times_out_turn_after_turn():
    s = session()
    said = texts(s.tick(46.0))
    assert said.count("Time!") == 3
    assert s.state["turn"] == "Bob"


def test_countdown_waits_while_the_timer_is_paused():
    s = session()
    assert texts(s.hear("pause", "Ann", 3.0)) == [
        "Paused: the timer is held. Say resume to go on."]
    assert s.wake is None
    assert s.tick(100.0) == []
    assert texts(s.hear("resume", "Bob", 100.0))[0] == "We go on."
    assert s.wake == 102.0  # 12 s were left: "10 seconds" two seconds later
    assert "Time!" in texts(s.tick(112.0))


def test_easy_mode_never_counts_down():
    s = session(difficulty="easy")
    assert s.wake is None
    assert s.tick(10_000.0) == []


def test_utterances_first_let_due_timeouts_happen():
    s = session()
    said = texts(s.hear("flip my seven", None, 16.0))
    assert "Time!" in said
    assert said[-1] == "Bob, 7 down. One more flip."


def test_questions_do_not_change_the_game():
    s = session()
    s.hear("flip my seven", None, 1.0)
    mark = s.mark()
    for question in ["what's my score", "read Bob's board", "how much time is left",
                     "whose turn is it", "help", "rules", "what's the score"]:
        assert s.hear(question, "Bob", 2.0)
    assert s.changed_since(mark) == []
    assert texts(s.hear("what's my score", "Ann", 2.0)) == ["Ann has 7."]
    assert texts(s.hear("how much time is left", "Bob", 3.5)) == ["Ann has 12 seconds left."]
    assert texts(s.hear("whose turn is it", "Bob", 4.0)) == ["It's Ann's turn, 1 flip left."]


def test_repeat_says_the_last_announcement_again():
    s = session()
    s.hear("flip my seven", None, 1.0)
    assert texts(s.hear("repeat that", "Bob", 2.0)) == ["Ann, 7 down. One more flip."]
    s.hear("what's my score", "Ann", 3.0)
    assert texts(s.hear("say that again", "Bob", 4.0)) == ["Ann has 7."]


def test_unknown_speech_gets_a_message_and_changes_nothing():
    s = session()
    mark = s.mark()
    assert texts(s.hear("pass me the chips please", None, 1.0)) == [
        "Sorry, I didn't catch that. Say help for what you can say."
    ]
    assert texts(s.hear("flip my thirteen", None, 1.0)) == [
        "There is no tile 13. Tiles go from 1 to 12."
    ]
    assert s.changed_since(mark) == []


@pytest.mark.parametrize("text", ["", "   ", "\x00\x07\x1b\r"])
def test_empty_input_is_ignored(text):
    s = session()
    assert s.hear(text, None, 1.0) == []


def test_a_huge_line_is_refused_with_a_message():
    s = session()
    mark = s.mark()
    said = texts(s.hear("flip my seven " * 8000, None, 1.0))
    assert said == ["That was too long for me. Please say one move at a time."]
    assert s.changed_since(mark) == []


def test_ambiguous_speech_asks_which_was_meant():
    s = session()
    said = texts(s.hear("Bob's", "Ann", 1.0))
    assert said[0].startswith("Did you mean ")
    assert " or " in said[0]


def test_out_of_turn_moves_are_refused_but_calls_are_heard():
    s = session()
    assert texts(s.hear("flip my seven", "Bob", 1.0)) == ["It's Ann's turn, not Bob's."]
    said = texts(s.hear("seventy", "Bob", 2.0))
    assert said == ["Wrong call: Bob has 0, not 70. Bob has no tiles down."]
    assert s.state["turn"] == "Ann"


def test_announce_totals_house_rule_adds_the_total_to_each_flip():
    options = Race65Options(difficulty="hard", house=("announce_totals=on",))
    s = Drive(Race65Spec(["Ann", "Bob"], options))
    assert texts(s.hear("flip my seven", None, 1.0)) == ["Ann, 7 down. One more flip. Ann has 7."]


def test_stop_ends_the_game_without_a_winner():
    s = session()
    assert texts(s.stop(3.0)) == ["Game stopped. No winner."]
    assert s.final["winner"] is None
    assert s.final["turn"] is None


def test_a_question_about_a_tile_is_answered_and_flips_nothing():
    s = session()
    s.hear("flip my seven", "Ann", 1.0)
    board = s.final
    assert texts(s.hear("is my seven up", "Ann", 2.0)) == ["Ann's 7 is down."]
    assert texts(s.hear("is Bob's four down", "Ann", 3.0)) == ["Bob's 4 is up."]
    assert texts(s.hear("which way is my nine", "Ann", 4.0)) == ["Ann's 9 is up."]
    assert s.final == board


def test_a_flip_of_another_players_tile_addressed_to_the_player_on_turn_is_heard_whole():
    """ "Bob, flip Ann's 12 up" on Bob's turn names the tile: before, the
    referee asked "Flip which tile? Say the number too"."""
    s = Drive(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    s.start()
    s.hear("flip my 7", "Ann", 1.0)
    s.hear("flip my 3", "Ann", 2.0)
    assert texts(s.hear("Bob, flip Ann's 12 up", None, 3.0)) == [
        "Ann's 12 is already up. Nothing was flipped."]
    said = texts(s.hear("Bob, flip Ann's 12 down", None, 4.0))
    assert said[0].startswith("Ann, flip your 12 down.")
    assert s.final["players"]["Ann"]["down"] == [3, 7, 12]


@pytest.mark.parametrize(("begun", "late"), [(-0.5, True), (+0.3, False)])
def test_speech_begun_in_a_turn_that_ran_out_while_it_was_said_is_too_late(begun, late):
    """Live, the loop ticks the brain every 0.1-0.2 s, so by the time an
    utterance is decided the turn it began in may be over: whose turn it was
    at its start is the brain's to know (its record of the latest steps),
    not the clock's now. Begun before Ann's time ran out and ended after it:
    too late, not Bob's move; begun after: Bob's."""
    from referee.gate import LATE
    from referee.protocol import Judged, Speech
    from referee.speech.hearing.interface import Transcript

    drive = Drive(Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven",
                                                           difficulty="hard")))
    drive.start()
    deadline = drive.state["deadline"]
    assert deadline is not None
    at = 0.0
    while at < deadline + 1.0:  # the live loop's ticks, through Ann's timeout
        at = round(at + 0.1, 3)
        drive.tick(at)
    assert drive.state["turn"] == "Bob"
    mark = drive.mark()
    said = drive.step(Speech(at + 0.2, deadline + begun, at, None, "mic",
                             Transcript("flip my eleven", 1.0)))
    judged = next(o for o in drive.outputs[mark:] if isinstance(o, Judged))
    assert (judged.dropped == LATE) == late
    assert any("Too late, Ann" in s.text for s in said) == late
