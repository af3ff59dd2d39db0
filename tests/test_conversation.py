"""Yes/no questions: confirmations, undo, corrections, ending a game; the log replay.

Each conversation is rows of (when, who, what they said, what the referee
says to it: :func:`~harness.brain.converse`); what the table's screen shows
is read from the snapshots between them."""

from __future__ import annotations

import pytest

from harness.brain import TICK, Drive, Unsure, converse
from harness.games import listened_for
from referee.games import GAMES
from referee.games.race65 import Race65Options, Race65Spec
from referee.protocol import Entry
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import Intent
from referee.speech.understanding.phrase_files import load_phrases
from referee.wording import AFTER_THE_END, ANSWER_SECONDS, NOTHING_TO_ANSWER

UNDO_7 = "Bob, do you agree to undo: Ann flips 7?"


def session(difficulty: str = "hard", **extra) -> Drive:
    options = Race65Options(difficulty=difficulty, **extra)
    return Drive(Race65Spec(["Ann", "Bob"], options))


def texts(said) -> list[str]:
    return [s.text for s in said]


def test_an_unsure_call_is_confirmed_with_the_timer_paused():
    s = session()
    converse(s, [(1.0, None, "flip my seven", ["Ann, 7 down. One more flip."]),
                 (2.0, "Ann", Unsure("seventy"), ["Ann, did you call 70?"])])
    assert s.state["deadline"] is None            # paused while asking
    assert s.wake == 2.0 + ANSWER_SECONDS
    converse(s, [(4.0, None, "yes", [               # unattributed: the player asked
        "Wrong call: Ann has 7, not 70. All of Ann's tiles go up: Ann, flip up your 7.",
        "Ann loses the turn.", "Bob's turn, 15 seconds."])])
    assert s.state["turn"] == "Bob"      # the active player's call ends the turn


def test_no_answer_means_no_and_the_timer_resumes_with_what_was_left():
    s = session()
    converse(s, [(1.0, None, "flip my seven", ["Ann, 7 down. One more flip."]),
                 (3.0, "Ann", Unsure("seventy"), ["Ann, did you call 70?"]),
                 (3.0 + ANSWER_SECONDS, None, TICK, [
                     "No answer, so no. OK, not played.", "Timer running: 12 seconds left."])])
    assert s.final["players"]["Ann"]["total"] == 7
    assert s.state["deadline"] == 3.0 + ANSWER_SECONDS + 12


def test_a_no_cancels_and_other_moves_wait_for_the_answer():
    s = session()
    converse(s, [
        (1.0, "Ann", Unsure("flip my seven"), ["Ann, did you say: flip Ann's 7?"]),
        (1.5, "Ann", "flip my eight", ["First: Ann, did you say: flip Ann's 7?"]),
        (1.6, "Ann", "what's my score", ["Ann has 0."]),
        (2.0, "Ann", "no", ["OK, not played.", "Timer running: 14 seconds left."])])
    assert s.final["players"]["Ann"]["total"] == 0


def test_yes_and_no_without_a_question_change_nothing_and_a_typed_one_is_told():
    s = session()
    mark = s.mark()
    converse(s, [(1.0, "Ann", "yes", [NOTHING_TO_ANSWER]), (1.0, "Bob", "stop", [])])
    spoken = Heard("no", Intent.of("answer", value="no"), 1.0, None)
    assert s.respond(spoken, "Ann", 1.0, source="mic") == []  # (table talk)
    assert s.changed_since(mark) == []


def test_undo_needs_the_other_player_and_gives_back_the_time():
    s = session()
    converse(s, [
        (4.0, None, "flip my seven", [..., "Ann, 7 down. One more flip."]),  # 11 s left
        (6.0, "Ann", "undo", ["10 seconds.", UNDO_7]),
        (7.0, "Ann", "yes", ["Bob has to answer. " + UNDO_7]),
        (8.0, "Bob", "yes", [
            "Undone. Ann, flip your 7 back up. It's Ann's turn, 2 flips left."])])
    assert s.final["players"]["Ann"]["total"] == 0
    assert s.state["deadline"] == 8.0 + 11.0


def test_undo_of_a_completed_turn_gives_the_turn_back():
    s = session()
    converse(s, [
        (1.0, None, "flip my seven", ["Ann, 7 down. One more flip."]),
        (2.0, None, "flip my eight", ["Ann, 8 down.", "Bob's turn, 15 seconds."]),
        (3.0, "Ann", "undo", ["Bob, do you agree to undo: Ann flips 8?"]),
        (3.5, "Bob", "yes", [
            "Undone. Ann, flip your 8 back up. It's Ann's turn, 1 flip left."])])
    assert s.state["turn"] == "Ann"
    assert s.final["players"]["Ann"]["total"] == 7
    converse(s, [(4.0, "Bob", "undo", ["Ann, do you agree to undo: Ann flips 7?"]),
                 (4.5, "Ann", "no", [..., "The move stays: Ann flips 7. It's Ann's turn, "
                                          "1 flip left.", "Timer running: 13 seconds left."])])
    assert s.final["players"]["Ann"]["total"] == 7


def test_nothing_to_undo():
    converse(session(), [(1.0, "Ann", "undo", ["There is nothing to undo."])])


def test_a_tray_correction_needs_agreement_and_is_not_a_flip():
    s = session()
    converse(s, [
        (1.0, "Ann", "correction my 9 is down", ["Bob, do you agree: Ann's 9 is down?"]),
        (2.0, "Bob", "yes", ["Corrected: Ann's 9 is down.", "Timer running: 14 seconds left."])])
    game = s.state["game"]
    assert game["players"]["Ann"]["total"] == 9
    assert (game["flipped"], game["flips_left"]) == ([], 2)  # not a flip
    assert s.state["turn"] == "Ann"
    converse(s, [(3.0, "Ann", "correction my 9 is down", ["Ann's 9 is already down."])])


def test_ending_the_game_needs_agreement():
    s = session()
    converse(s, [(1.0, "Bob", "end the game", ["Ann, do you agree: end the game?"]),
                 (2.0, "Ann", "yes", ["Game stopped. No winner.", AFTER_THE_END])])
    assert s.over


def test_replaying_the_records_rebuilds_state_timer_and_open_question():
    records: list[Entry] = []
    options = Race65Options(difficulty="hard")
    s = Drive(Race65Spec(["Ann", "Bob"], options), record=records.append)
    s.start()
    converse(s, [(1.0, None, "flip my seven", [..., "Ann, 7 down. One more flip."]),
                 (2.0, None, "Bob, flip your four down", [..., "Bob's turn, 15 seconds."]),
                 (20.0, None, TICK, [..., "Time!", "Bob loses the turn.",  # at 17
                                               "Ann's turn, 15 seconds."]),
                 (21.0, "Bob", "undo", ["Ann, do you agree to undo: Ann tells Bob to flip "
                                        "4 down?"]),
                 (22.0, "Ann", Unsure("sixty five"), ["First: Ann, do you agree to undo: Ann "
                                                      "tells Bob to flip 4 down?"])])
    copy = Drive(Race65Spec(["Ann", "Bob"], options))
    last = copy.replay(records)
    assert last == 22.0
    assert (copy.state, copy.final) == (s.state, s.final)
    assert copy.question == s.question
    assert copy.wake == s.wake
    assert texts(copy.hear("repeat", "Ann", 23.0)) == texts(s.hear("repeat", "Ann", 23.0))


def test_brief_verbosity_drops_times_and_flip_counts():
    converse(session(verbosity="brief"), [
        (1.0, None, "flip my seven", ["Ann, 7 down."]),
        (2.0, None, "flip my eight", ["Ann, 8 down.", "Bob's turn."])])


def test_consent_must_come_from_another_player_by_name_or_seat():
    """An unnamed yes may be the asker's own: it is not consent. "Bob agrees"
    is, said at the table's one microphone or typed; Ann cannot agree for Bob."""
    s = session()
    converse(s, [(1.0, "Ann", "flip my seven", ["Ann, 7 down. One more flip."])])
    flipped = s.final
    converse(s, [
        (2.0, "Ann", "undo", [UNDO_7]),
        (3.0, None, "yes", ["Bob, please say it with your name: Bob agrees, or Bob says no."]),
        (4.0, "Ann", "Bob agrees", ["Bob has to say it."])])
    assert s.final == flipped
    converse(s, [(5.0, None, "Bob agrees", [
        "Undone. Ann, flip your 7 back up. It's Ann's turn, 2 flips left."])])
    assert s.final["players"]["Ann"]["down"] == []


def test_a_named_no_refuses_an_agreement():
    s = session()
    converse(s, [(1.0, "Bob", "end the game", ["Ann, do you agree: end the game?"]),
                 (2.0, None, "no, it's Ann", [
                     "The game goes on. It's Ann's turn, 2 flips left.",
                     "Timer running: 14 seconds left."])])
    assert not s.over


def test_an_unsure_move_the_rules_would_refuse_is_refused_without_asking():
    """Ann, unsure, on Bob's turn: no "did you say" question to block Bob for
    six seconds; the refusal it would get after a yes, at once (#73 item 5).
    An unsure move the rules would take is still asked about."""
    s = session(difficulty="easy")
    converse(s, [
        (1.0, "Ann", "flip my twelve", ["Ann, 12 down. One more flip."]),
        (2.0, "Ann", "flip my eleven", ["Ann, 11 down.", "Bob's turn."]),
        (3.0, "Ann", Unsure("flip my ten"), ["It's Bob's turn, not Ann's."])])
    assert s.question is None
    converse(s, [(4.0, "Bob", "flip my three", ["Bob, 3 down. One more flip."]),
                 (5.0, "Bob", Unsure("flip my four"), ["Bob, did you say: flip Bob's 4?"])])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_who_won_is_answered_in_every_game_before_and_after_its_end(game):
    """Issue #83: "who won" after the end was not understood (and, spoken, not
    even listened for). It is a question of every game (``common.toml``):
    before the end it says nobody has yet, and who leads."""
    spec = GAMES[game](["Ann", "Bob"])
    assert listened_for(load_phrases(spec.phrase_file, spec.players), "who won")
    s = Drive(spec)
    s.start()
    early = texts(s.hear("who won", "Ann", 1.0))
    assert len(early) == 1, early
    assert early[0].startswith("Nobody has won yet. "), early
    s.hear("end the game", "Ann", 2.0)
    s.hear("yes", "Bob", 3.0)
    assert s.over
    for question in ("who won", "who's the winner", "who's winning"):
        assert texts(s.hear(question, "Bob", 4.0)) == ["Nobody won."], question


def test_who_won_names_the_winner():
    s = session(difficulty="easy", confirm_calls="never")
    s.start()
    at = 1.0
    for player, tiles in [("Ann", (12, 11)), ("Bob", (1, 2)), ("Ann", (10, 9)), ("Bob", (3, 4)),
                          ("Ann", (8, 7)), ("Bob", (5, 6)), ("Ann", (5, 3))]:
        for tile in tiles:
            s.hear(f"flip my {tile}", player, at)
            at += 1.0
    s.hear("I call 65", "Ann", at)
    assert s.over
    assert texts(s.hear("who won", "Bob", at + 1)) == ["Ann won."]
