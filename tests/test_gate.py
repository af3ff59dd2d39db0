"""The gate, a pure decision: one row a case, what was heard when, over which of
the referee's sentences, in which room, and the verdict expected."""

from __future__ import annotations

import pytest

from referee.gate import (
    ECHO,
    EVERY_SEAT,
    LATE,
    LEFTOVER,
    SPOKE_OVER,
    TALKING,
    UNCLEAR_OVER,
    WITHIN,
    Utterance,
    Verdict,
    judge,
)
from referee.protocol import Room, Spoken, Tone
from referee.speech.hearing.interface import OverVoice
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import NONE, Intent

FLIP = Heard("flip my three", Intent.of("flip", owner="Ann", tile=3), 0.95)
UNSURE_FLIP = Heard("flip my three", Intent.of("flip", owner="Ann", tile=3), 0.7)
REPEAT = Heard("repeat", Intent.of("query", what="repeat"), 0.95)
YES = Heard("yes", Intent.of("answer", value="yes"), 0.95)
NOTHING = Heard("blue giraffe", NONE, 0.2)
ANNOUNCE = Spoken("Ann, 3 down. One more flip.", 1.0, 3.0, Tone.ANNOUNCE)
ASK = Spoken("Bob, did you call 65?", 1.0, 3.0, Tone.QUESTION)
FIVE = Spoken("Five.", 1.0, 1.4, Tone.COUNTDOWN)
RULES = Spoken("2 flips per turn, no timer. Call 65 to win. Ann starts.", 1.0, 3.0, Tone.ANSWER)
PLAYER = OverVoice(after_echo_db=12.0)
CLEAR = OverVoice(after_echo_db=25.0)
LEFT_OVER = OverVoice(after_echo_db=2.0)
SEATS_ALIKE = OverVoice(after_echo_db=12.0, seat_db=1.0)
PLAIN = Room()
CANCELLED = Room(cancels_echo=True)

# (case, heard, words, start, end, speaking, over, room, barge_in, verdict)
CASES = [
    ("nobody speaks over anything", FLIP, "flip my three", 4.0, 5.0, (), None, PLAIN, False,
     Verdict()),
    ("the referee's words in its order are its echo", Heard("", NONE, 0.5),
     "did you call sixty five", 1.2, 2.8, (ASK,), PLAYER, CANCELLED, False,
     Verdict(ECHO, None, True)),
    ("its words said another way, a call that may interrupt: still its echo",
     Heard("i'm calling sixty five", Intent.of("call", caller="Ann", number=65), 0.8),
     "i'm calling sixty five", 1.2, 2.6, (RULES,), None, PLAIN, True,
     Verdict(ECHO, None, True)),
    ("its words out of order, no canceller: its echo", FLIP, "one more three", 1.2, 2.0,
     (ANNOUNCE,), None, PLAIN, False, Verdict(ECHO, None, True)),
    ("a player's move over it, canceller shows the player", FLIP, "flip my three", 1.2, 2.5,
     (ANNOUNCE,), PLAYER, CANCELLED, False, Verdict(None, None, True)),
    ("said clearly over it, no canceller, not a barge-in: the player hears so (#83)", FLIP,
     "flip my seven", 1.2, 2.5, (ANNOUNCE,), None, PLAIN, False,
     Verdict(SPOKE_OVER, TALKING, True)),
    ("said unsurely over it, no canceller: dropped without a word", UNSURE_FLIP,
     "flip my seven", 1.2, 2.5, (ANNOUNCE,), None, PLAIN, False,
     Verdict(SPOKE_OVER, None, True)),
    ("said clearly over that very notice: no second one", FLIP, "flip my seven", 1.2, 2.5,
     (Spoken(TALKING, 1.0, 3.0, Tone.PROBLEM),), None, PLAIN, False,
     Verdict(SPOKE_OVER, None, True)),
    ("said over it and went on after it: the player hears so", FLIP, "flip my seven", 2.5, 4.0,
     (ANNOUNCE,), None, PLAIN, False, Verdict(SPOKE_OVER, TALKING, True)),
    ("a barge-in over it is kept (never sure)", REPEAT, "repeat that", 1.2, 2.0, (ANNOUNCE,),
     None, PLAIN, True, Verdict(None, None, True)),
    ("what the canceller left of the voice", FLIP, "flip my seven", 1.2, 2.5, (ANNOUNCE,),
     LEFT_OVER, CANCELLED, False, Verdict(LEFTOVER, None, True)),
    ("heard alike at every seat: the voice", FLIP, "flip my seven", 1.2, 2.5, (ANNOUNCE,),
     SEATS_ALIKE, CANCELLED, False, Verdict(EVERY_SEAT, None, True)),
    ("unsure over the cancelled voice", UNSURE_FLIP, "flip my seven", 1.2, 2.5, (ANNOUNCE,),
     PLAYER, CANCELLED, False, Verdict(UNCLEAR_OVER, None, True)),
    ("unsure over it, a player beyond doubt: told to say it again", UNSURE_FLIP,
     "flip my seven", 1.2, 2.5, (ANNOUNCE,), CLEAR, CANCELLED, False,
     Verdict(UNCLEAR_OVER, TALKING, True)),
    ("... but not over that very notice", UNSURE_FLIP, "flip my seven", 1.2, 2.5,
     (Spoken(TALKING, 1.0, 3.0, Tone.PROBLEM),), CLEAR, CANCELLED, False,
     Verdict(UNCLEAR_OVER, None, True)),
    ("sure over it, a player beyond doubt: kept (and asked about)", FLIP, "flip my seven",
     1.2, 2.5, (ANNOUNCE,), CLEAR, CANCELLED, False, Verdict(None, None, True)),
    ("starts and ends with a countdown word: its echo", FLIP, "two", 1.05, 1.5, (FIVE,), None,
     PLAIN, False, Verdict(ECHO, None, False)),
    ("a player talking over the countdown is heard", FLIP, "flip my three", 1.2, 2.4, (FIVE,),
     None, PLAIN, False, Verdict(None, None, False)),
    ("a yes within the referee's own question", YES, "yes", 1.5, 2.0, (ASK,), PLAYER,
     CANCELLED, False, Verdict(WITHIN, None, True)),
    ("a yes that outlasts the question is a player's", YES, "yes", 2.8, 3.6, (ASK,), PLAYER,
     CANCELLED, False, Verdict(None, None, True)),
    ("table talk over it goes on after it, no notice", NOTHING, "blue giraffe", 2.5, 4.0,
     (ANNOUNCE,), None, PLAIN, False, Verdict(SPOKE_OVER, None, True)),
    ("a move the game lets interrupt it is kept over the voice", FLIP, "flip my seven", 1.2,
     2.5, (ANNOUNCE,), None, PLAIN, True, Verdict(None, None, True)),
]


@pytest.mark.parametrize(
    ("heard", "words", "start", "end", "speaking", "over", "room", "barge_in", "verdict"),
    [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_gate(heard, words, start, end, speaking, over, room, barge_in, verdict):
    u = Utterance(heard, words, start, end, speaking, over)
    assert judge(u, room, barge_in=barge_in, moves=heard.kind == "flip") == verdict


@pytest.mark.parametrize(("speaker", "then", "now", "moves", "late"), [
    (None, "Bob", "Ann", True, True),      # Bob's move ended in Ann's turn
    ("Bob", "Bob", "Ann", True, False),    # a seat microphone says who: Bob, played as his
    (None, "Bob", "Bob", True, False),     # the same turn
    (None, "Bob", "Ann", False, False),    # a question is never too late
])
def test_a_move_begun_in_a_turn_that_ran_out_is_too_late(speaker, then, now, moves, late):
    u = Utterance(FLIP, "flip my eleven", 10.0, 11.0, speaker=speaker, turn_then=then,
                  turn_now=now)
    verdict = judge(u, PLAIN, barge_in=False, moves=moves)
    assert verdict == (Verdict(LATE, "Too late, Bob: your time was up.") if late else Verdict())
