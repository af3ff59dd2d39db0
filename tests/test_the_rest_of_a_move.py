"""The rest of a move waited for (#72, a sentence's end): words said so far
that are a move the referee does not expect now ("shut four" on a roll of
nine, a move out of turn) and that more words could change are held like
words that are no command yet; a move it expects ends as before.

The brain answers the ears' question with :class:`~referee.protocol.SoFar`
-> :class:`~referee.protocol.Expected`, changing nothing; the table's
:class:`~referee.listening.Listening` asks it at each pause.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.fixtures import spoken_stream
from referee.games import matcher_for
from referee.games.shutbox import ShutBoxOptions, ShutBoxSpec
from referee.listening import Listening
from referee.protocol import Expected, Say, SoFar, Start, Typed
from referee.session import Session
from referee.speech.audio import Audio
from referee.speech.hearing.interface import Recognizer, Transcript
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.hearing.segmenter import EXTENDABLE, UNEXPECTED, Segmenter
from referee.table import Reports, Table

PLAYERS = ["Ann", "Bob"]


def _rolled_nine(recognizer: Recognizer | None = None) -> Table:
    """Shut the Box with the table's dice: Ann rolled 5 and 4."""
    session = Session(ShutBoxSpec(PLAYERS, ShutBoxOptions(dice="physical", order="given")))
    table = Table(session, recognizer=recognizer, reports=Reports(show=lambda line: None))
    table.tell(Start(0.0))
    table.tell(Typed(1.0, "I rolled five and four", "Ann"))
    return table


def test_the_brain_says_whether_it_expects_the_words_and_changes_nothing() -> None:
    session = Session(ShutBoxSpec(PLAYERS, ShutBoxOptions(dice="physical", order="given")))
    session.step(Start(0.0))
    session.step(Typed(1.0, "I rolled five and four", "Ann"))
    for text, speaker, expected in (
            ("shut four", None, False),  # 4 is not the 9 rolled: more may come
            ("shut four and five", None, True),
            ("shut four and five", "Ann", True),
            ("shut four and five", "Bob", False),  # not Bob's turn
            ("what's open", None, None)):  # no move: the game has no say
        outputs = session.step(SoFar(2.0, text, speaker))
        # (whose the words are taken to be: the speaker's, else Ann's, awaited)
        assert outputs == [Expected(2.0, text, expected, speaker or "Ann")], text
    # Nothing was logged or said (the outputs above), nor changed: the move
    # is still Ann's to make.
    said = [o.text for o in session.step(Typed(3.0, "shut four and five", "Ann"))
            if isinstance(o, Say)]
    assert said[0].startswith("4 and 5 shut."), said


def _listening_to(table: Table, said: str, expects: bool) -> str | None:
    """The verdict on ``said`` decoded ahead, with or without the brain's say."""
    assert table.listener is not None
    table.listener._guess = (Audio(np.zeros(1600, dtype=np.int16)), 1600, Transcript(said, 1.0))
    listening = table.listening if expects else Listening(table.listener, table.speaking_now)
    return listening.judge()


def test_a_move_the_referee_does_not_expect_is_held_for_its_rest() -> None:
    table = _rolled_nine(make_recognizer(matcher_for("shut-the-box", PLAYERS).phrases))
    assert _listening_to(table, "shut four", expects=False) == EXTENDABLE
    assert _listening_to(table, "shut four", expects=True) == UNEXPECTED
    assert _listening_to(table, "shut four and five", expects=True) == EXTENDABLE


@pytest.mark.slow
def test_shut_four_pause_and_five_is_one_move_on_a_roll_of_nine() -> None:
    """Real speech through the real recogniser: "shut four ... and five" with
    half a second between. Without the brain's say the pause ends "shut
    four" (a move more words could change, heard after a quarter second of
    quiet) and the referee would refuse it; with it, the whole is one."""
    recognizer = make_recognizer(matcher_for("shut-the-box", PLAYERS).phrases)
    data = spoken_stream(0.4, "shut four", 0.5, "and five", 1.2)
    for expects, parts in ((False, 2), (True, 1)):
        table = _rolled_nine(recognizer)
        assert table.listener is not None
        listener = table.listener
        listening = table.listening if expects else Listening(listener, table.speaking_now)
        segmenter = Segmenter(on_pause=listening.pause, judge=listening.judge,
                              tail=listening.tail)
        found = [u for i in range(0, len(data), 320) for u in segmenter.feed(data[i:i + 320])]
        found += list(segmenter.close())
        heard = [listener.transcript(u.audio).text for u in found]
        assert len(found) == parts, heard
        if expects:
            assert heard == ["shut four and five"]
