"""Yes/no questions: confirmations, undo, corrections, ending a game; the log replay."""

from __future__ import annotations

from harness.brain import Drive
from referee.games.race65 import Race65Options, Race65Spec
from referee.protocol import Entry
from referee.wording import ANSWER_SECONDS


def session(difficulty: str = "hard", **extra) -> Drive:
    options = Race65Options(difficulty=difficulty, **extra)
    return Drive(Race65Spec(["Ann", "Bob"], options))


def texts(said) -> list[str]:
    return [s.text for s in said]


def unsure(s: Drive, text: str, speaker: str | None, at: float) -> list[str]:
    """As the voice loop does for speech it is not sure of."""
    heard = s.session.matcher.match(text, s.session.attribute(speaker))
    return texts(s.respond(heard, speaker, at, sure=False))


def test_an_unsure_call_is_confirmed_with_the_timer_paused():
    s = session()
    s.hear("flip my seven", None, 1.0)
    assert unsure(s, "seventy", "Ann", 2.0) == ["Ann, did you call 70?"]
    assert s.state["deadline"] is None            # paused while asking
    assert s.wake == 2.0 + ANSWER_SECONDS
    said = texts(s.hear("yes", None, 4.0))       # unattributed: the player asked
    assert said[0].startswith("Wrong call: Ann has 7, not 70.")
    assert s.state["turn"] == "Bob"      # the active player's call ends the turn


def test_no_answer_means_no_and_the_timer_resumes_with_what_was_left():
    s = session()
    s.hear("flip my seven", None, 1.0)
    unsure(s, "seventy", "Ann", 3.0)
    said = texts(s.tick(3.0 + ANSWER_SECONDS))
    assert said[0] == "No answer, so no. OK, not played."
    assert said[-1] == "Timer running: 12 seconds left."
    assert s.final["players"]["Ann"]["total"] == 7
    assert s.state["deadline"] == 3.0 + ANSWER_SECONDS + 12


def test_a_no_cancels_and_other_moves_wait_for_the_answer():
    s = session()
    unsure(s, "flip my seven", "Ann", 1.0)
    assert texts(s.hear("flip my eight", "Ann", 1.5)) == ["First: Ann, did you say: flip Ann's 7?"]
    assert texts(s.hear("what's my score", "Ann", 1.6)) == ["Ann has 0."]
    assert texts(s.hear("no", "Ann", 2.0))[0] == "OK, not played."
    assert s.final["players"]["Ann"]["total"] == 0


def test_yes_and_no_without_a_question_change_nothing_and_a_typed_one_is_told():
    from referee.speech.understanding.intents import Heard
    from referee.speech.understanding.meaning import Intent
    from referee.wording import NOTHING_TO_ANSWER

    s = session()
    before = s.session.game.state
    assert texts(s.hear("yes", "Ann", 1.0)) == [NOTHING_TO_ANSWER]
    spoken = Heard("no", Intent.of("answer", value="no"), 1.0, None)
    assert s.respond(spoken, "Ann", 1.0, source="mic") == []  # (table talk)
    assert s.hear("stop", "Bob", 1.0) == []
    assert s.session.game.state is before


def test_undo_needs_the_other_player_and_gives_back_the_time():
    s = session()
    s.hear("flip my seven", None, 4.0)           # 11 s left at the flip
    said = texts(s.hear("undo", "Ann", 6.0))[-1:]   # after "10 seconds." at 5 s
    assert said == ["Bob, do you agree to undo: Ann flips 7?"]
    assert texts(s.hear("yes", "Ann", 7.0)) == ["Bob has to answer. " + said[0]]
    said = texts(s.hear("yes", "Bob", 8.0))
    assert said == ["Undone. Ann, flip your 7 back up. It's Ann's turn, 2 flips left."]
    assert s.final["players"]["Ann"]["total"] == 0
    assert s.state["deadline"] == 8.0 + 11.0


def test_undo_of_a_completed_turn_gives_the_turn_back():
    s = session()
    s.hear("flip my seven", None, 1.0)
    s.hear("flip my eight", None, 2.0)
    assert s.state["turn"] == "Bob"
    s.hear("undo", "Ann", 3.0)
    s.hear("yes", "Bob", 3.5)
    assert s.state["turn"] == "Ann"
    assert s.final["players"]["Ann"]["total"] == 7
    assert texts(s.hear("undo", "Bob", 4.0)) == ["Ann, do you agree to undo: Ann flips 7?"]
    s.hear("no", "Ann", 4.5)
    assert s.final["players"]["Ann"]["total"] == 7


def test_nothing_to_undo():
    s = session()
    assert texts(s.hear("undo", "Ann", 1.0)) == ["There is nothing to undo."]


def test_a_tray_correction_needs_agreement_and_is_not_a_flip():
    s = session()
    assert texts(s.hear("correction my 9 is down", "Ann", 1.0)) == [
        "Bob, do you agree: Ann's 9 is down?"
    ]
    assert texts(s.hear("yes", "Bob", 2.0))[0] == "Corrected: Ann's 9 is down."
    state = s.session.game.state
    assert state.total("Ann") == 9
    assert state.flips == ()
    assert state.active_player == "Ann"
    assert texts(s.hear("correction my 9 is down", "Ann", 3.0)) == ["Ann's 9 is already down."]


def test_ending_the_game_needs_agreement():
    s = session()
    assert texts(s.hear("end the game", "Bob", 1.0)) == ["Ann, do you agree: end the game?"]
    assert texts(s.hear("yes", "Ann", 2.0))[0] == "Game stopped. No winner."
    assert s.over


def test_replaying_the_records_rebuilds_state_timer_and_open_question():
    records: list[Entry] = []
    options = Race65Options(difficulty="hard")
    s = Drive(Race65Spec(["Ann", "Bob"], options), record=records.append)
    s.start()
    s.hear("flip my seven", None, 1.0)
    s.hear("Bob, flip your four down", None, 2.0)
    s.tick(20.0)                                # Bob times out at 17
    s.hear("undo", "Bob", 21.0)
    unsure(s, "sixty five", "Ann", 22.0)        # Ann is asked while Bob's undo is open
    copy = Drive(Race65Spec(["Ann", "Bob"], options))
    last = copy.replay(records)
    assert last == 22.0
    assert copy.session.game.state == s.session.game.state
    assert copy.question == s.question
    assert copy.wake == s.wake
    assert texts(copy.hear("repeat", "Ann", 23.0)) == texts(s.hear("repeat", "Ann", 23.0))


def test_brief_verbosity_drops_times_and_flip_counts():
    s = session(verbosity="brief")
    assert texts(s.hear("flip my seven", None, 1.0)) == ["Ann, 7 down."]
    assert texts(s.hear("flip my eight", None, 2.0))[-1] == "Bob's turn."


def test_consent_must_come_from_another_player_by_name_or_seat():
    """An unnamed yes may be the asker's own: it is not consent. "Bob agrees"
    is, said at the table's one microphone or typed; Ann cannot agree for Bob."""
    s = session()
    s.hear("flip my seven", "Ann", 1.0)
    flipped = s.final
    assert texts(s.hear("undo", "Ann", 2.0)) == ["Bob, do you agree to undo: Ann flips 7?"]
    assert texts(s.hear("yes", None, 3.0)) == [
        "Bob, please say it with your name: Bob agrees, or Bob says no."]
    assert s.final == flipped
    assert texts(s.hear("Bob agrees", "Ann", 4.0)) == ["Bob has to say it."]
    assert s.final == flipped
    assert texts(s.hear("Bob agrees", None, 5.0))[0].startswith("Undone")
    assert s.final["players"]["Ann"]["down"] == []


def test_a_named_no_refuses_an_agreement():
    s = session()
    s.hear("end the game", "Bob", 1.0)
    assert texts(s.hear("no, it's Ann", None, 2.0))[0] == (
        "The game goes on. It's Ann's turn, 2 flips left.")
    assert not s.over


def test_an_unsure_move_the_rules_would_refuse_is_refused_without_asking():
    """Ann, unsure, on Bob's turn: no "did you say" question to block Bob for
    six seconds; the refusal it would get after a yes, at once (#73 item 5).
    An unsure move the rules would take is still asked about."""
    s = session(difficulty="easy")
    s.hear("flip my twelve", "Ann", 1.0)
    s.hear("flip my eleven", "Ann", 2.0)
    assert unsure(s, "flip my ten", "Ann", 3.0) == ["It's Bob's turn, not Ann's."]
    assert s.question is None
    assert texts(s.hear("flip my three", "Bob", 4.0)) == ["Bob, 3 down. One more flip."]
    assert unsure(s, "flip my four", "Bob", 5.0) == ["Bob, did you say: flip Bob's 4?"]
