"""Bad input never crashes and never corrupts a game: a small run of the fuzz
benchmark (``./run bench fuzz`` runs 100,000 lines per game), random bytes on
the keyboard, Unicode digits and names that are not at the table."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from benchmarks.fuzz import fuzz
from harness.brain import Drive
from referee.games import GAMES
from referee.games.base import SetupError
from referee.games.race65 import Race65Spec
from referee.speech.understanding.meaning import Intent


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(GAMES))
def test_random_lines_and_speakers_never_raise(game):
    _, failures, moves, _ = fuzz(game, 1500, seed=7)
    assert failures == []
    if game == "race65":  # (Shut the Box's random lines seldom make a legal move:
        assert moves > 0  # 30 in 100,000; a "pause" among them holds every move after it)


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(GAMES))
def test_random_bytes_typed_at_the_keyboard_end_cleanly(game):
    rng = random.Random(game)
    data = bytes(rng.randrange(256) for _ in range(4000)) + b"\n\xff\xfe\x00\x04\n"
    result = subprocess.run(
        [sys.executable, "-m", "referee", "play", game, "--input", "text", "--voice", "none",
         "--no-log", "--json"], input=data, capture_output=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    assert b"Game stopped." in result.stdout


@pytest.mark.parametrize(
    "digit", ["7", "\u0667", "\uff17", "\u096d", "\U0001d7d5", "\u2466"])
def test_any_script_s_digit_is_a_number(digit):
    session = Drive(Race65Spec(["Ann", "Bob"]))
    session.start()
    heard = session.matcher.match(f"flip my {digit}", "Ann")
    assert heard.intent == Intent.of("flip", owner="Ann", tile=7, direction=None)
    assert session.hear(f"flip my {digit}", "Ann", 1.0)[0].text.startswith("Ann, 7")
    # a superscript 2, a circled 1, a circled 20 (not a digit): never a crash
    for other in ("\u00b2", "\u2460", "\u2473"):
        session.hear(f"flip my {other}", "Ann", 2.0)


def test_a_speaker_not_at_the_table_is_named_and_changes_nothing():
    session = Drive(Race65Spec(["Ann", "Bob"]))
    session.start()
    mark = session.mark()
    assert [s.text for s in session.hear("flip my seven", "Zed", 1.0)] == [
        "There is no player called Zed. The players are Ann and Bob."]
    assert [s.text for s in session.hear("what's my score", "Zed", 1.5)] == [
        "There is no player called Zed. The players are Ann and Bob."]
    assert session.changed_since(mark) == []
    assert session.hear("flip my seven", "ann", 2.0)[0].text.startswith("Ann, 7")


@pytest.mark.parametrize(("game", "name"), [("race65", "Stop"), ("race65", "Help"),
                                            ("race65", "yes"), ("shut-the-box", "Hint"),
                                            ("shut-the-box", "Roll"), ("turn7", "Stay")])
def test_a_name_that_is_a_command_is_refused(game, name):
    with pytest.raises(SetupError, match=f"'{name}' is also something players say"):
        GAMES[game]([name, "Bob"])


def test_names_that_only_look_like_words_are_kept():
    assert Race65Spec(["Hint", "Skip"]).players == ("Hint", "Skip")  # not Race to 65's words


def test_a_name_that_is_a_word_of_the_games_sentences_is_refused():
    """ "Turn" is no command of Race to 65 but a word of its sentences ("turn
    my seven"): a player called so would be heard in each of them (#37)."""
    with pytest.raises(SetupError, match="'Turn' is a word of Race to 65's commands"):
        Race65Spec(["Turn", "Bob"])
