"""Commands a table asks for: pause and resume, the referee's voice, the
target, who's winning, flips left, long readings in sections, help by topic,
and a new game with the same players."""

from __future__ import annotations

import pytest

from referee.engine.shutbox import sets_making
from referee.gamelog import EventRecord, Record
from referee.games import GAMES
from referee.games.race65 import Race65Options, Race65Spec
from referee.games.shutbox import ShutBoxSpec
from referee.session import SECTION_WORDS, Session, replay_records, sections
from referee.speech.speaking.tts import RATES, EspeakVoice, SilentVoice
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.templates import load_phrases
from referee.table import Table


def timed(records: list[Record] | None = None, difficulty: str = "hard") -> Session:
    """Race to 65, 15-second turns and the target 70 (phase-seven hard)."""
    options = Race65Options(rules="phase-seven", difficulty=difficulty)
    return Session(Race65Spec(["Ann", "Bob"], options),
                   record=None if records is None else records.append)


def texts(said) -> list[str]:
    return [s.text for s in said]


# --- pause and resume -------------------------------------------------------------------


def test_pause_holds_the_timer_until_resume_and_refuses_moves_meanwhile():
    s = timed()
    s.tick(3.0)
    assert texts(s.hear("pause the game", "Bob", 3.0)) == [
        "Paused: the timer is held. Say resume to go on."]
    assert s.next_wakeup() is None
    assert s.tick(100.0) == []  # no countdown, no timeout
    assert texts(s.hear("flip my 7", "Ann", 100.0)) == ["The game is paused: say resume to go on."]
    assert s.game.state.tiles_down("Ann") == frozenset()
    assert "12 seconds" in texts(s.hear("how much time is left", "Ann", 101.0))[0]
    assert texts(s.hear("pause", "Ann", 102.0)) == [
        "The game is already paused: say resume to go on."]
    said = texts(s.hear("resume the game", "Ann", 110.0))
    assert said[0] == "We go on."
    assert s.game.deadline() == pytest.approx(122.0)  # the 12 seconds that were left
    assert texts(s.hear("resume", "Ann", 111.0)) == ["The game is not paused."]
    said = texts(s.hear("flip my 7", "Ann", 112.0))
    assert said[0] == "10 seconds."  # the countdown goes on where it stood
    assert said[1].startswith("Ann, 7 down.")


def test_a_microphone_coming_back_does_not_end_a_pause():
    s = timed()
    s.hear("pause", "Ann", 2.0)
    s.hold(3.0, "I lost the microphone.")
    s.release(5.0, "The microphone is back.")
    assert s.game.deadline() is None
    s.hear("resume", "Ann", 9.0)
    assert s.game.deadline() == pytest.approx(22.0)


def test_a_pause_is_replayed_from_the_log():
    records: list[Record] = []
    s = timed(records)
    s.hear("pause", "Ann", 4.0)
    s.tick(50.0)
    replayed = timed()
    replay_records(replayed, records)
    assert replayed.game.deadline() is None
    replayed.hear("resume", "Ann", 60.0)
    assert replayed.game.deadline() == pytest.approx(71.0)


# --- questions a table asks ----------------------------------------------------------------


def test_target_flips_left_and_who_is_winning():
    s = timed()
    assert texts(s.hear("what's the target", "Ann", 1.0)) == [
        "Call 70 when your total is exactly 70."]
    s.hear("flip my 12", "Ann", 2.0)
    assert texts(s.hear("how many flips are left", "Ann", 3.0)) == [
        "It's Ann's turn, 1 flip left."]
    assert texts(s.hear("who's winning", "Bob", 4.0)) == ["Ann 12: closest to 70."]
    fresh = timed()
    assert texts(fresh.hear("who is winning", "Bob", 1.0)) == [
        "Level: Ann 0 and Bob 0, 70 points from 70."]


def test_who_is_winning_in_shut_the_box_is_the_lowest_finished_score():
    s = Session(ShutBoxSpec(["Ann", "Bob"]))
    s.start()
    first = s.game.current_player()
    assert texts(s.hear("who's winning", first, 1.0)) == ["Nobody has finished a turn yet."]
    while s.game.current_player() == first and not s.over:  # the first player's turn
        s.hear("roll", first, 2.0)
        state = s.game.state
        if state.roll is not None and (ways := sets_making(state.roll, state.open)):
            s.hear("shut " + " and ".join(map(str, ways[0])), first, 2.0)
    score = s.game.state.score_of(first)
    assert score is not None
    assert texts(s.hear("who is in the lead", first, 3.0)) == [
        f"{first} leads with {score}; lowest wins."]


# --- long readings -------------------------------------------------------------------------


def test_sections_keep_whole_sentences_within_the_word_limit():
    text = "One two three. Four five. Six seven eight nine. Ten."
    assert sections(text, most=5) == ["One two three. Four five.", "Six seven eight nine. Ten."]
    assert sections("A very long sentence here.", most=2) == ["A very long sentence here."]
    assert sections("") == []


def test_the_rules_come_in_sections_read_on_more_and_repeat_says_the_last():
    s = timed(difficulty="easy")  # no timer: nothing but the reading is said
    first = texts(s.hear("read the rules", "Ann", 1.0))
    assert len(first) == 1
    assert first[0].endswith("Say more for the rest.")
    assert len(first[0].split()) <= SECTION_WORDS + 5
    parts = [first[0]]
    for at in range(2, 10):
        said = texts(s.hear("more", "Bob", float(at)))
        if said == ["That's all."]:
            break
        parts += said
    assert parts[-1].endswith("a wrong call turns all your tiles up.")
    assert all(p.endswith("Say more for the rest.") for p in parts[:-1])
    assert texts(s.hear("repeat that", "Ann", 20.0)) == [parts[-1]]
    # Nothing left: said so, so that "done" is told from "not heard" (issue #36).
    assert texts(s.hear("more", "Ann", 21.0)) == ["That's all."]
    whole = " ".join(p.replace(" Say more for the rest.", "") for p in parts)
    assert whole == s.spec.answer("rules", None, s.game, 1.0)


# --- help by topic -------------------------------------------------------------------------


def test_help_says_what_to_do_now_and_names_the_topics():
    s = timed()
    said = texts(s.hear("help", "Ann", 1.0))[0]
    assert said.startswith("On your turn say: flip my 7")
    assert said.endswith("say help with moves, help with questions or help with the table.")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_help_by_topic_names_every_command_of_the_game(game):
    """Every intent a player can say is in one help topic: the examples, read
    as a player would say them, are understood as those intents."""
    spec = GAMES[game](["Ann", "Bob"])
    phrases = load_phrases(spec.phrase_file, spec.players)
    matcher = IntentMatcher(phrases, spec.players)
    s = Session(spec, matcher=matcher)
    s.start()
    heard: set[tuple[str, object]] = set()
    for topic in ("moves", "questions", "table"):
        said = " ".join(texts(s.hear(f"help with {'the table' if topic == 'table' else topic}",
                                     "Ann", 1.0)))
        while said.endswith("Say more for the rest."):
            said = said.removesuffix("Say more for the rest.") + " ".join(
                texts(s.hear("more", "Ann", 1.0)))
        examples = said.split(": ", 1)[1].split(". ")
        assert len(examples) >= 5, said
        for example in examples:
            intent = matcher.match(example.strip(" ."), "Ann").intent
            assert intent.kind not in ("none", "ambiguous"), example
            heard.add((intent.kind, intent.get("what")))
    wanted = {(t.fields["kind"], t.fields.get("what")) for t in phrases.intents}
    assert wanted - heard == set()


# --- the referee's voice -------------------------------------------------------------------


def test_louder_slower_and_the_limits_of_the_voice():
    voice = EspeakVoice(volume=0.5)
    table = Table(timed(), voice=voice, show=lambda _: None)
    table.hear_text("quieter", "Ann", 1.0)
    assert voice.volume == pytest.approx(0.5 / 1.5)
    quiet = abs(voice.render("Ann, seven down.").samples.astype(int)).max()
    table.hear_text("louder", "Ann", 2.0)
    table.hear_text("speak up", "Ann", 3.0)
    assert voice.volume == 0.75
    loud = abs(voice.render("Ann, seven down.").samples.astype(int)).max()
    assert loud > 2 * quiet  # the cached sentence was rendered again
    assert table.session.last == ["Louder."]
    for at in (4.0, 5.0):
        table.hear_text("louder", "Ann", at)
    assert voice.volume == 1.0
    assert table.session.last == ["That is as loud as I go: turn the speaker up."]
    long_before = voice.render("Bob's turn, 15 seconds.").seconds
    table.hear_text("slow down", "Bob", 6.0)
    assert voice.rate == 150
    assert voice.render("Bob's turn, 15 seconds.").seconds > long_before * 1.1
    for at in range(7, 20):
        table.hear_text("faster", "Bob", float(at))
    assert voice.rate == RATES[1]
    assert table.session.last == ["That is as fast as I go."]
    assert table.session.game.state.tiles_down("Ann") == frozenset()  # no move made


def test_a_table_without_a_voice_says_so():
    table = Table(timed(), voice=SilentVoice(), show=lambda _: None)
    table.hear_text("louder", "Ann", 1.0)
    assert table.session.last == ["I have no voice here: I am only printing."]


# --- a new game ----------------------------------------------------------------------------


def test_a_rematch_needs_another_player_during_the_game():
    records: list[Record] = []
    s = timed(records)
    s.hear("flip my 7", "Ann", 1.0)
    assert texts(s.hear("new game", "Ann", 2.0)) == ["Bob, do you agree to start a new game?"]
    assert texts(s.hear("no", "Bob", 3.0))[0] == "OK."
    assert s.game.state.tiles_down("Ann") == frozenset({7})
    s.hear("rematch", "Ann", 4.0)
    said = texts(s.hear("Bob agrees", None, 5.0))
    assert said[0].startswith("New game. Race to 70")
    assert s.game.state.tiles_down("Ann") == frozenset()
    assert s.game.current_player() == "Ann"
    assert s.game.deadline() == pytest.approx(20.0)
    assert any(isinstance(r, EventRecord) and r.event == "NewGame" for r in records)
    replayed = timed()
    replay_records(replayed, records)
    assert replayed.final_state() == s.final_state()


def test_after_the_end_a_rematch_starts_at_once_and_undo_cannot_reach_back():
    s = timed()
    s.stop(1.0)
    assert s.over
    said = texts(s.hear("play again", "Bob", 2.0))
    assert said[0].startswith("New game.")
    assert not s.over
    assert texts(s.hear("undo", "Ann", 3.0)) == ["There is nothing to undo."]
