"""Commands a table asks for: pause and resume, the referee's voice, the
target, who's winning, flips left, long readings in sections, help by topic,
and a new game with the same players."""

from __future__ import annotations

from typing import Any

import pytest

from harness.brain import Drive, Kept
from harness.games import SHORT_GAME
from referee.engine.shutbox import sets_making
from referee.games import GAMES, matcher_for
from referee.games.race65 import Race65Options, Race65Spec
from referee.games.shutbox import ShutBoxOptions, ShutBoxSpec
from referee.protocol import Entry
from referee.records import ChanceRecord, EventRecord
from referee.speech.speaking.tts import RATES, EspeakVoice, SilentVoice
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.phrase_files import load_phrases
from referee.table import Mouth, Reports, Table
from referee.wording import SECTION_WORDS, sections


def timed(records: list[Entry] | None = None, difficulty: str = "hard") -> Drive:
    """Race to 65, 15-second turns and the target 70 (phase-seven hard)."""
    options = Race65Options(rules="phase-seven", difficulty=difficulty)
    return Drive(Race65Spec(["Ann", "Bob"], options),
                   record=None if records is None else records.append)


def texts(said) -> list[str]:
    return [s.text for s in said]


# --- pause and resume -------------------------------------------------------------------


def test_pause_holds_the_timer_until_resume_and_refuses_moves_meanwhile():
    s = timed()
    s.tick(3.0)
    assert texts(s.hear("pause the game", "Bob", 3.0)) == [
        "Paused: the timer is held. Say resume to go on."]
    assert s.wake is None
    assert s.tick(100.0) == []  # no countdown, no timeout
    assert texts(s.hear("flip my 7", "Ann", 100.0)) == ["The game is paused: say resume to go on."]
    assert s.final["players"]["Ann"]["down"] == []
    assert "12 seconds" in texts(s.hear("how much time is left", "Ann", 101.0))[0]
    assert texts(s.hear("pause", "Ann", 102.0)) == [
        "The game is already paused: say resume to go on."]
    said = texts(s.hear("resume the game", "Ann", 110.0))
    assert said[0] == "We go on."
    assert s.state["deadline"] == pytest.approx(122.0)  # the 12 seconds that were left
    assert texts(s.hear("resume", "Ann", 111.0)) == ["The game is not paused."]
    said = texts(s.hear("flip my 7", "Ann", 112.0))
    assert said[0] == "10 seconds."  # the countdown goes on where it stood
    assert said[1].startswith("Ann, 7 down.")


def test_a_microphone_coming_back_does_not_end_a_pause():
    s = timed()
    s.hear("pause", "Ann", 2.0)
    s.hold(3.0, "I lost the microphone.")
    s.release(5.0, "The microphone is back.")
    assert s.state["deadline"] is None
    s.hear("resume", "Ann", 9.0)
    assert s.state["deadline"] == pytest.approx(22.0)


def test_a_pause_is_replayed_from_the_log():
    records: list[Entry] = []
    s = timed(records)
    s.hear("pause", "Ann", 4.0)
    s.tick(50.0)
    replayed = timed()
    replayed.replay(records)
    assert replayed.state["deadline"] is None
    replayed.hear("resume", "Ann", 60.0)
    assert replayed.state["deadline"] == pytest.approx(71.0)


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
    s = Drive(ShutBoxSpec(["Ann", "Bob"]))
    s.start()
    first = s.state["turn"]
    assert texts(s.hear("who's winning", first, 1.0)) == ["Nobody has finished a turn yet."]
    while s.state["turn"] == first and not s.over:  # the first player's turn
        s.hear("roll", first, 2.0)
        shown = s.state["game"]
        open_tiles = frozenset(shown["players"][first]["open"] or ())
        if shown["roll"] is not None and (ways := sets_making(shown["roll"], open_tiles)):
            s.hear("shut " + " and ".join(map(str, ways[0])), first, 2.0)
    score = s.final["players"][first]["score"]
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
        if said == ["That's everything."]:
            break
        parts += said
    assert parts[-1].endswith("a wrong call turns all your tiles up.")
    assert all(p.endswith("Say more for the rest.") for p in parts[:-1])
    assert texts(s.hear("repeat that", "Ann", 20.0)) == [parts[-1]]
    # Nothing left: said so, so that "done" is told from "not heard" (issue #36).
    assert texts(s.hear("more", "Ann", 21.0)) == ["That's everything."]
    whole = " ".join(p.replace(" Say more for the rest.", "") for p in parts)
    assert whole == s.spec.answer("rules", None, s.spec.new_game(1.0), 1.0)


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
    s = Drive(spec, matcher=matcher)
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
    shown: list[str] = []
    table = Table(timed().session, mouth=Mouth(voice=voice),
                  reports=Reports(show=shown.append, stamp=False))
    table.hear_text("quieter", "Ann", 1.0)
    assert voice.volume == pytest.approx(0.5 / 1.5)
    quiet = abs(voice.render("Ann, seven down.").samples.astype(int)).max()
    table.hear_text("louder", "Ann", 2.0)
    table.hear_text("speak up", "Ann", 3.0)
    assert voice.volume == 0.75
    loud = abs(voice.render("Ann, seven down.").samples.astype(int)).max()
    assert loud > 2 * quiet  # the cached sentence was rendered again
    assert shown[-1] == "Louder."
    for at in (4.0, 5.0):
        table.hear_text("louder", "Ann", at)
    assert voice.volume == 1.0
    assert shown[-1] == "That is as loud as I go: turn the speaker up."
    long_before = voice.render("Bob's turn, 15 seconds.").seconds
    table.hear_text("slow down", "Bob", 6.0)
    assert voice.rate == 150
    assert voice.render("Bob's turn, 15 seconds.").seconds > long_before * 1.1
    for at in range(7, 20):
        table.hear_text("faster", "Bob", float(at))
    assert voice.rate == RATES[1]
    assert shown[-1] == "That is as fast as I go."
    assert table.final["players"]["Ann"]["down"] == []  # no move made


def test_a_table_without_a_voice_says_so():
    shown: list[str] = []
    table = Table(timed().session, mouth=Mouth(voice=SilentVoice()),
                  reports=Reports(show=shown.append, stamp=False))
    table.hear_text("louder", "Ann", 1.0)
    assert shown[-1] == "I have no voice here: I am only printing."


# --- a new game ----------------------------------------------------------------------------


def test_a_rematch_needs_another_player_during_the_game():
    records: list[Entry] = []
    s = timed(records)
    s.hear("flip my 7", "Ann", 1.0)
    assert texts(s.hear("new game", "Ann", 2.0)) == ["Bob, do you agree to start a new game?"]
    assert texts(s.hear("no", "Bob", 3.0))[0] == "The game goes on. It's Ann's turn, 1 flip left."
    assert s.final["players"]["Ann"]["down"] == [7]
    s.hear("rematch", "Ann", 4.0)
    said = texts(s.hear("Bob agrees", None, 5.0))
    assert said[0] == "New game. Everyone, flip all your tiles back up."
    assert said[1].startswith("Race to 70")
    assert s.final["players"]["Ann"]["down"] == []
    assert s.state["turn"] == "Ann"
    assert s.state["deadline"] == pytest.approx(20.0)
    assert any(isinstance(r, EventRecord) and r.event == "NewGame" for r in records)
    replayed = timed()
    replayed.replay(records)
    assert replayed.final == s.final


def test_after_the_end_a_rematch_starts_at_once_and_undo_cannot_reach_back():
    s = timed()
    s.stop(1.0)
    assert s.over
    said = texts(s.hear("play again", "Bob", 2.0))
    assert said[0].startswith("New game.")
    assert not s.over
    assert texts(s.hear("undo", "Ann", 3.0)) == ["There is nothing to undo."]


# --- after the end: the referee stays at the table -----------------------------------------


def short_box(records: list[Entry] | None = None) -> Drive:
    """Shut the Box with real dice reported by the players, Ann then Bob."""
    spec = ShutBoxSpec(["Ann", "Bob"], ShutBoxOptions(dice="physical", order="given"))
    return Drive(spec, record=None if records is None else records.append)


#: Both players play one short turn: Bob wins with 64.
def play_lines(s: Drive, lines, start: float = 1.0) -> list[str]:
    said: list[str] = []
    for n, (who, text) in enumerate(lines):
        said += texts(s.hear(text, who, start + n))
    return said


def test_after_a_win_the_referee_stays_for_questions_undo_and_a_new_game():
    from referee.wording import AFTER_THE_END, GOODBYE

    records: list[Entry] = []
    s = short_box(records)
    said = play_lines(s, SHORT_GAME)
    assert s.over
    assert not s.left
    assert said[-2:] == ["Everyone has played. Bob wins with 64!", AFTER_THE_END]
    # questions are answered; a move is refused with what to say instead
    assert texts(s.hear("what's the score", "Ann", 10.0)) == ["Ann scored 76. Bob scored 64."]
    assert texts(s.hear("I rolled two and two", "Ann", 11.0)) == [
        "The game is over. Say play again for a new game."]
    # a misheard last report is taken back by agreement, and the game goes on
    assert texts(s.hear("undo", "Ann", 12.0)) == ["Bob, do you agree to undo: Bob rolls 1 and 1?"]
    undone = texts(s.hear("Bob agrees", None, 13.0))
    assert undone[0].startswith("Undone.")
    assert not s.over
    again = texts(s.hear("I rolled one and one", "Bob", 14.0))
    assert again[-1] == AFTER_THE_END
    assert s.over
    # play again: the table is told what to put back, then the opening
    said = texts(s.hear("play again", "Ann", 15.0))
    assert said[0] == "New game. Open all the tiles of the box again."
    assert said[1].startswith("Shut the Box with 12 tiles")
    assert not s.over
    # that's all, once this game is over too, leaves
    play_lines(s, SHORT_GAME, 16.0)
    assert texts(s.hear("that's all", "Bob", 30.0)) == [GOODBYE]
    assert s.left
    # the log rebuilds the same table, left included
    rebuilt = short_box()
    rebuilt.replay(records)
    assert rebuilt.left
    assert rebuilt.final == s.final


def test_leaving_during_a_game_needs_another_players_agreement():
    from referee.wording import GOODBYE

    s = short_box()
    play_lines(s, SHORT_GAME[:2])
    assert texts(s.hear("we're done", "Ann", 5.0)) == ["Bob, do you agree: end the game?"]
    assert texts(s.hear("no", "Bob", 6.0)) == [
        "The game goes on. It's Ann's turn: roll and tell me what you rolled."]
    assert not s.over
    assert not s.left
    s.hear("that's all for tonight", "Ann", 7.0)
    said = texts(s.hear("Bob agrees", None, 8.0))
    assert said == ["Game stopped. No winner.", GOODBYE]
    assert s.over
    assert s.left


@pytest.mark.parametrize(("game", "options", "reset"), [
    ("race65", {}, "Everyone, flip all your tiles back up."),
    ("shut-the-box", {}, "Open all the tiles of the box again."),
    ("turn7", {"deck": "physical"}, "Everyone, gather all the cards and shuffle the deck."),
    ("turn7", {}, ""),  # a virtual deck: nothing on the table to put back
    ("phase10-twist", {}, "Everyone, put your pawns back at the start, put the Twist cards back in "
                    "the holder, and shuffle all the cards."),
])
def test_a_new_game_says_what_to_put_back_on_the_table(game, options, reset):
    spec_type = GAMES[game]
    spec = spec_type(["Ann", "Bob"], spec_type.options_type(**options))
    kept = Kept(spec)
    s = Drive(spec)
    s.start()
    s.stop(1.0)
    said = texts(s.hear("play again", "Ann", 2.0))
    assert said[0] == f"New game. {reset}".strip()
    assert said[1] == spec.opening(kept.game)


def test_a_typed_script_ends_where_the_table_leaves(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "game.txt"
    lines = [f"[{n + 1}] {who}: {text}" for n, (who, text) in enumerate(SHORT_GAME)]
    script.write_text("\n".join([*lines, "[20] Ann: that's all", "[21] Ann: play again"]) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "referee", "play", "shutbox", "--players", "Ann", "Bob",
         "--dice", "physical", "--order", "given", "--script", str(script)],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[-2] == "[20.0] referee: Good game, everyone. Goodbye."
    assert out[-1] == "line 10: the table had left (that's all); the rest is not played."


# --- silence as an answer; reading time; whose words -----------------------------------------


def test_stop_while_the_referee_is_silent_says_so():
    from referee.wording import NOT_SPEAKING

    shown: list[str] = []
    table = Table(timed().session, reports=Reports(show=shown.append))
    table.start()
    table.hear_text("stop", "Ann", 30.0)
    assert shown[-1] == f"[30.0] referee: {NOT_SPEAKING}"


def test_words_addressed_to_the_referee_that_are_no_command_get_an_answer():
    from referee.speech.hearing.interface import Transcript
    from referee.speech.listen import understand
    from referee.wording import NOT_CAUGHT

    shown: list[str] = []
    table = Table(timed(difficulty="easy").session, reports=Reports(show=shown.append))
    table.start()
    for text, answered in [("referee, blue giraffe sandwich", True),
                           ("blue giraffe sandwich", False)]:
        before = len(shown)
        heard = understand(matcher_for("race65", ["Ann", "Bob"]), Transcript(text, 0.9), "Ann")
        assert heard.kind == "none"
        table.hear_transcript(Transcript(text, 0.9), 40.0, 41.0, 41.5, "Ann", "mic")
        answers = [x for x in shown[before:] if x.startswith("[41.5] referee: ")]
        assert answers == ([f"[41.5] referee: {NOT_CAUGHT}"] if answered else []), shown
    assert table.final["players"]["Ann"]["down"] == []


@pytest.mark.parametrize("reading", [None, 160.0])
def test_without_a_voice_the_clock_stands_still_while_an_answer_is_read(reading):
    """Printing only: "rules" then "more" on the first turn (15 s) used to cost
    the turn while the player read them; read at 160 words a minute, they hold
    the clock as a spoken answer does."""
    shown: list[str] = []
    table = Table(timed().session, mouth=Mouth(reading_wpm=reading),
                  reports=Reports(show=shown.append))
    table.start()
    table.hear_text("rules", "Ann", 1.0)
    table.hear_text("more", "Ann", 2.0)
    table.advance(16.5)
    lost = any("Time!" in line for line in shown)
    assert lost is (reading is None)
    if reading is not None:  # the clock runs again once read, and the turn ends in time
        table.advance(120.0)
        assert any("Time!" in line for line in shown)


@pytest.mark.slow
def test_live_play_without_a_voice_holds_the_clock_while_reading(tmp_path):
    """The CLI's live play prints at reading speed: the log shows the clock held."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    log = tmp_path / "game.jsonl"
    subprocess.run([sys.executable, "-m", "referee", "play", "race65", "--rules", "phase-one",
                    "--input", "text", "--voice", "none", "--log", str(log)],
                   input="rules\n", capture_output=True, text=True, timeout=120,
                   cwd=Path(__file__).parent.parent, check=True)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    delays = [x for x in lines if x["type"] == "spoken-until" and x["tone"] in ("turn", "answer")]
    assert delays, log.read_text()
    assert max(d["until"] - d["at"] for d in delays) > 5  # the opening and the rules, read


def test_a_typed_call_without_a_name_is_confirmed_as_a_spoken_one():
    s = timed()
    assert texts(s.hear("I call seventy", None, 1.0)) == ["Ann, did you call 70?"]
    assert texts(s.hear("no", None, 2.0))[0] == "OK, not played."
    assert s.final["players"]["Ann"]["total"] == 0
    said = texts(s.hear("I call seventy", "Bob", 3.0))  # named: the typist said who
    assert said[0].startswith("Wrong call: Bob has 0, not 70.")


def phase10(turns: bool = False) -> Drive:
    from referee.games.phase10 import Phase10Options, Phase10Spec

    spec = Phase10Spec(["Ann", "Bob", "Cy"], Phase10Options(board="1 2 3 4 10", turns=turns))
    s = Drive(spec)
    s.start()
    return s


def test_phase10_without_kept_turns_answers_an_unnamed_question_for_everyone():
    from referee.wording import WHO_SAID

    s = phase10()
    needs = texts(s.hear("what phase do I need", None, 1.0))[0]
    assert all(f"{p} needs phase 1" in needs for p in ("Ann", "Bob", "Cy")), needs
    assert texts(s.hear("where am I", None, 2.0)) == ["Ann is on space 1 of 5, Bob on 1, Cy on 1."]
    before = s.final
    assert texts(s.hear("I lay down my phase", None, 3.0)) == [WHO_SAID]
    assert s.final == before
    assert texts(s.hear("what phase do I need", "Cy", 4.0)) == ["Cy needs phase 1, 2 sets of 3."]
    # with turns kept, the player whose turn it is asked
    kept = phase10(turns=True)
    assert texts(kept.hear("what phase do I need", None, 1.0)) == [
        "Bob needs phase 1, 2 sets of 3."]


def test_phase10_score_is_a_short_standing_not_the_board():
    s = phase10()
    s.hear("I lay down my phase", "Bob", 1.0)
    s.hear("I'm out", "Bob", 2.0)
    s.hear("yes", "Cy", 3.0)
    s.hear("no", "Ann", 4.0)
    assert texts(s.hear("what's the score", "Ann", 5.0)) == [
        "Bob is on space 4 of 5, Cy on 3, Ann on 2."]
    assert texts(s.hear("read the board", "Ann", 6.0))[0].startswith("The board: 1, 2, 3, 4, 10.")


def test_a_refused_undo_says_what_stands_and_whose_turn_it_is():
    s = timed()
    s.hear("flip my 7", "Ann", 1.0)
    s.hear("undo", "Bob", 2.0)
    assert texts(s.hear("no", "Ann", 3.0))[0] == (
        "The move stays: Ann flips 7. It's Ann's turn, 1 flip left.")
    s.hear("undo", "Bob", 4.0)
    said = texts(s.tick(4.0 + 6.0))
    assert said[0] == "No answer, so no. The move stays: Ann flips 7. It's Ann's turn, 1 flip left."
    assert "OK." not in said


def test_thats_all_heard_within_the_referees_own_invitation_is_its_echo():
    """After the win the referee says "... or that's all to finish." into the
    room: those words heard within its sentence are not a player leaving."""
    from referee.gate import ECHO
    from referee.speech.hearing.interface import Transcript

    s = short_box()
    table = Table(s.session, mouth=Mouth(voice=EspeakVoice()),
                  reports=Reports(show=lambda _: None))
    table.start()
    for n, (who, text) in enumerate(SHORT_GAME):
        table.hear_text(text, who, table.busy_until + 1 + n)
    invitation = table.spoken[-1]
    assert invitation.text.endswith("or that's all to finish.")
    inside = table.hear_transcript(Transcript("that's all", 1.0), invitation.end - 1.0,
                               invitation.end - 0.2, invitation.end + 0.3, None, "mic")
    assert inside.dropped == ECHO
    assert not table.left
    after = table.hear_transcript(Transcript("that's all", 1.0), invitation.end + 1.0,
                              invitation.end + 1.8, invitation.end + 2.3, "Ann", "mic")
    assert after.dropped is None
    assert table.left


# --- a rematch draws new chance ------------------------------------------------------------


def chance_after(records: list[Entry], mark: int) -> list[str]:
    return [r.outcome for r in records[mark:] if isinstance(r, ChanceRecord)]


def rematch(spec_for, first_game, seed: int) -> tuple[list[str], list[str], list[Entry]]:
    """One game and its rematch at one table, each played by ``first_game``
    until its first chance: what chance gave in each, and the log."""
    records: list[Entry] = []
    s = Drive(spec_for(seed), record=records.append)
    said = texts(s.start())
    said += first_game(s)
    first = chance_after(records, 0)
    s.stop(50.0)
    mark = len(records)
    said = texts(s.hear("play again", "Ann", 51.0))
    assert said[0].startswith("New game.")
    said += first_game(s)
    second = chance_after(records, mark)
    replayed = Drive(spec_for(seed))
    skipped: list[str] = []
    replayed.replay(records, skipped)
    assert skipped == []
    assert replayed.final == s.final
    return first, second, records


@pytest.mark.slow
def test_a_turn7_rematch_deals_new_cards_and_its_log_replays_them():
    from referee.games.turn7 import Turn7Options, Turn7Spec

    differ = 0
    for seed in range(20):
        first, second, _ = rematch(
            lambda seed: Turn7Spec(["Ann", "Bob", "Cy"], Turn7Options(seed=seed)),
            lambda s: [], seed)
        assert first  # the deal (until an action card waits for its target)
        assert second
        differ += first != second
    assert differ >= 17  # the same first card by chance, now and then; before: never new


@pytest.mark.slow
def test_a_shut_the_box_rematch_rolls_the_order_again():
    differ = 0
    for seed in range(20):
        records: list[Entry] = []
        spec = ShutBoxSpec(["Ann", "Bob", "Cy"], ShutBoxOptions(seed=seed))
        s = Drive(spec, record=records.append)
        opening = texts(s.start())[0]
        s.stop(1.0)
        again = texts(s.hear("play again", "Ann", 2.0))[1]
        assert "Rolls for the order" in again
        differ += opening.split("Rolls for the order")[1] != again.split("Rolls for the order")[1]
        s.hear("roll", None, 3.0)
        replayed = Drive(ShutBoxSpec(["Ann", "Bob", "Cy"], ShutBoxOptions(seed=seed)))
        skipped: list[str] = []
        replayed.replay(records, skipped)
        assert skipped == []
        assert replayed.final == s.final
        assert replayed.state == s.state  # (the order of play, whose turn, the roll)
    assert differ >= 19


@pytest.mark.slow
def test_a_phase10_rematch_draws_new_twist_cards():
    from referee.games.phase10 import Phase10Options, Phase10Spec

    def to_a_twist_card(s: Drive) -> list[str]:
        said: list[str] = []
        for who, line in (("Ann", "I lay down my phase"), ("Bob", "Bob went out"),
                          ("Cy", "no"), ("Ann", "take a twist card")):
            said += texts(s.hear(line, who, 10.0))
        return said

    differ = 0
    for seed in range(20):
        first, second, _ = rematch(
            lambda seed: Phase10Spec(["Ann", "Bob", "Cy"], Phase10Options(
                seed=seed, twist="virtual", private_audio=("Ann=wav:/tmp/unused",))),
            to_a_twist_card, seed)
        assert len(first) == len(second) == 1
        differ += first != second
    assert differ >= 12  # the same card by chance, now and then; before: never new


def test_help_after_the_end_says_what_can_be_done_and_a_typed_yes_with_no_question_is_told():
    from referee.protocol import Typed
    from referee.speech.understanding.intents import Heard
    from referee.speech.understanding.meaning import Intent
    from referee.wording import HELP_AFTER_THE_END, NOTHING_TO_ANSWER

    s = timed()
    assert texts(s.step(Typed(1.0, "yes", "Ann"))) == [NOTHING_TO_ANSWER]
    spoken = Heard("yes", Intent.of("answer", value="yes"), 1.0, None)
    assert texts(s.respond(spoken, "Ann", 1.5, source="mic")) == []  # (spoken: table talk)
    s.stop(2.0)
    assert texts(s.hear("help", "Bob", 3.0)) == [HELP_AFTER_THE_END]
    assert "play again" in HELP_AFTER_THE_END
    assert texts(s.hear("help with moves", "Bob", 4.0))[0].startswith("Moves:")


def test_what_the_table_knows_of_the_game_is_the_brains_latest_word():
    """Saying a turn steps the brain again once it has been said (the clock
    starts then), inside the step that announced it. The table must keep that
    newer step's word on when to wake and what the state is: once the older
    step's report overwrote it, and the live loop, told to wake at a time
    already past, spun a core and missed moves and "stop"s (`./run bench
    trust`)."""
    from referee.replay import replay_records
    from referee.session import Session

    def spec() -> Race65Spec:
        return Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="hard"))

    records: list[Any] = []
    table = Table(Session(spec()), mouth=Mouth(reading_wpm=160.0),
                  reports=Reports(show=lambda _: None, record=records.extend))
    table.start()
    for at, line in ((10.0, "flip my 3"), (11.0, "flip my 5"), (20.0, "what's the score")):
        table.hear_text(line, "Ann", at)
        again = replay_records(Session(spec()), records)  # (the brain's own report, again)
        assert table.wake_at == again.wake, line
        assert table.state == again.state, line
        assert table.wake_at is not None
        assert table.wake_at > at


def test_a_hearing_whose_step_fails_is_reported_and_changes_nothing(monkeypatch):
    """A bug while the brain judges speech is said ("Sorry, something went
    wrong") and logged; the table goes on, and the game is as it was."""
    from referee.brain import hearing as hearing_room
    from referee.session import Session
    from referee.speech.hearing.interface import Transcript
    from referee.wording import SORRY

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in the gate")

    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="easy")))
    shown: list[str] = []
    table = Table(session, reports=Reports(show=shown.append, stamp=False))
    table.start()
    before = table.state["game"]
    monkeypatch.setattr(hearing_room, "judge", broken)
    hearing = table.hear_transcript(Transcript("flip my seven", 1.0), 5.0, 6.0, 6.3, "Ann", "mic")
    assert hearing.dropped == "the step failed"
    assert shown[-1] == SORRY
    assert table.state["game"] == before
    monkeypatch.undo()
    table.hear_text("flip my 7", "Ann", 8.0)
    assert table.state["game"] != before
