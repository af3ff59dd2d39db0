"""A move heard in full after its first words were taken (#72, a sentence's
end): "flip my seven" ends at a pause (a move the referee expects), and the
player goes on, "down". The ears hear the two again as one
(:meth:`~referee.speech.listen.Listener.whole`), and the brain takes the
whole by what came of the part (:mod:`referee.brain.parts`): the same move
is not heard twice; another move after a played one is not played, and the
referee says it took the first too soon; another move while the part's
question is open takes the question's place.
"""

from __future__ import annotations

import pytest

from harness.brain import Drive
from harness.fixtures import spoken_stream
from referee.brain.parts import HEARD, LATE, LET_GO, SAME, UNSURE_REST, Streams, whole_of
from referee.brain.question import Question
from referee.games import matcher_for
from referee.games.race65 import Race65Options, Race65Spec
from referee.listening import Listening
from referee.live import LiveLoop
from referee.overheard import TABLE_MIC
from referee.protocol import Speech, Start
from referee.records import DroppedRecord
from referee.report import Reported
from referee.session import Session
from referee.speech import listen
from referee.speech.hearing.interface import Transcript
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.hearing.segmenter import Segmenter
from referee.speech.listen import Listener
from referee.speech.understanding.meaning import Intent
from referee.table import Reports, Table

PLAYERS = ["Ann", "Bob"]


def _heard(*said: tuple[str, float, float, float], marked: bool = True
           ) -> tuple[Drive, list[list[str]]]:
    """A fresh Race to 65 game hearing each ``(words, confidence, start, end)``
    from the table's microphone; what it said to each. An utterance that
    began before the last one ended is that one with its rest, as the ears
    mark it (``marked``)."""
    session = Drive(Race65Spec(PLAYERS, Race65Options()))
    session.start()
    answers, ended = [], 0.0
    for text, confidence, start, end in said:
        whole = marked and start < ended
        outputs = session.step(Speech(end + 0.3, start, end, None, "mic",
                                      Transcript(text, confidence, whole=whole)))
        answers.append([o.text for o in outputs])
        ended = end
    return session, answers


def _down(session: Reported) -> list[int]:
    return list(session.state["game"]["players"]["Ann"]["down"])


def test_the_same_move_heard_in_full_is_not_heard_twice() -> None:
    session, answers = _heard(("flip my seven", 1.0, 1.0, 1.6),
                              ("flip my seven down", 1.0, 1.0, 2.4))  # (began with the part)
    assert answers == [["Ann, 7 down. One more flip."], []]
    assert _down(session) == [7]
    # Heard apart (it began after the part ended), the same words are a new
    # move, refused: the seven is down already.
    session, answers = _heard(("flip my seven", 1.0, 1.0, 1.6),
                              ("flip my seven down", 1.0, 1.7, 2.4))
    assert answers[1] == ["Ann's 7 is already down. Nothing was flipped."]
    # The ears say what is a whole, not the times alone: unmarked, it is a new move.
    session, answers = _heard(("flip my seven", 1.0, 1.0, 1.6),
                              ("flip my seven down", 1.0, 1.0, 2.4), marked=False)
    assert answers[1] == ["Ann's 7 is already down. Nothing was flipped."]


def test_another_move_after_a_played_part_is_not_played_and_the_referee_says_so() -> None:
    """"flip my" heard as "flip my eight" and played, then "nine"."""
    session, answers = _heard(("flip my eight", 1.0, 1.0, 1.6), ("flip my nine", 1.0, 1.0, 2.4))
    assert answers[1] == ["Ann, I took flip Ann's 8 before you had finished. "
                          "To take it back, say undo."]
    assert _down(session) == [8]
    # Heard unsurely, the whole casts no doubt on a move heard well: nothing said.
    session, answers = _heard(("flip my eight", 1.0, 1.0, 1.6), ("flip my nine", 0.75, 1.0, 2.4))
    assert answers[1] == []
    assert _down(session) == [8]
    # A whole that is the part's words with a direction the rules refuse
    # from where the game stood ("flip my seven up": it was up) is another move.
    session, answers = _heard(("flip my seven", 1.0, 1.0, 1.6),
                              ("flip my seven up", 1.0, 1.0, 2.4))
    assert answers[1][0].startswith("Ann, I took flip Ann's 7 before"), answers


def test_the_whole_takes_the_place_of_the_parts_open_question() -> None:
    session, answers = _heard(("flip my twelve", 0.75, 1.0, 1.6),  # not sure: asked
                              ("flip my nine", 1.0, 1.0, 2.4))
    assert answers == [["Ann, did you say: flip Ann's 12?"], ["Ann, 9 down. One more flip."]]
    assert session.question is None  # (as the snapshot shows it)
    assert _down(session) == [9]
    # The same move in full leaves the question open, unanswered.
    session, answers = _heard(("flip my twelve", 0.75, 1.0, 1.6),
                              ("flip my twelve down", 1.0, 1.0, 2.4),
                              ("yes", 1.0, 3.0, 3.3))
    assert answers[1:] == [[], ["Ann, 12 down. One more flip."]]
    assert _down(session) == [12]


def test_a_whole_after_an_undone_part_or_of_no_move_is_heard_as_any_utterance() -> None:
    session, answers = _heard(("flip my seven", 1.0, 1.0, 1.6), ("what's my score", 1.0, 1.0, 2.4))
    assert "7" in answers[1][0], answers  # (answered: no move, no part)
    # (the question is the stream's last part now, of no move: its whole is
    # heard as any utterance, a flip the rules refuse)
    rest = Speech(2.8, 1.0, 2.6, None, "mic", Transcript("flip my seven down", 1.0, whole=True))
    assert [s.text for s in session.step(rest)] == [
        "Ann's 7 is already down. Nothing was flipped."]
    session, _ = _heard(("flip my seven", 1.0, 1.0, 1.6))
    session.hear("undo", "Ann", 1.8)
    session.hear("yes", "Bob", 1.9)
    assert _down(session) == []
    whole = Transcript("flip my seven down", 1.0, whole=True)
    outputs = session.step(Speech(2.7, 1.0, 2.4, None, "mic", whole))
    assert outputs[0].text.startswith("Ann, 7 down.")


@pytest.mark.slow
@pytest.mark.parametrize(("join", "route"), [(True, "live loop"), (False, "live loop"),
                                             (True, "table"), (False, "table, two streams")])
def test_flip_my_seven_pause_down_is_heard_whole(join: bool, route: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Real speech through the real recogniser, the live loop's hearing or
    the table's alone (an audio script's route, #84: the join is the
    table's, whatever drives it): "flip my seven", half a second, "down".
    The pause ends the first words (a flip the referee expects); the rest,
    heard with them, is the same move: played once, nothing more said, and
    the log keeps the whole as the rest of a move. Without the joining
    (``join`` False) the rest is heard alone; so it is when it comes from
    another stream (another source, the same seat: the ears key a stream as
    the brain's parts room does, :attr:`~referee.protocol.Speech.stream`)."""
    if not join and route == "live loop":
        monkeypatch.setattr(listen, "JOIN_WITHIN", -1.0)
    matcher = matcher_for("race65", PLAYERS)
    recognizer = make_recognizer(matcher.phrases)
    session = Session(Race65Spec(PLAYERS, Race65Options()), matcher=matcher)
    logged: list[object] = []
    said: list[str] = []
    table = Table(session, recognizer=recognizer, reports=Reports(
        show=said.append, stamp=False, record=logged.extend))
    table.tell(Start(0.0))
    assert table.listener is not None
    listening = table.listening
    segmenter = Segmenter(on_pause=listening.pause, judge=listening.judge, tail=listening.tail)
    data = spoken_stream(0.4, "flip my seven", 0.5, "down", 1.2)
    found = [u for i in range(0, len(data), 320) for u in segmenter.feed(data[i:i + 320])]
    found += list(segmenter.close())
    assert len(found) == 2  # (cut at the pause: the flip is one the referee expects)
    loop = LiveLoop(table, microphone=None, keyboard=None)
    for n, u in enumerate(found):
        if route.startswith("table"):
            source = "audio script" if n and route == "table, two streams" else "mic"
            table.hear_audio(u.audio, 1.0 + u.start, 1.0 + u.end, 1.3 + u.end, source=source)
        else:
            loop._caught(TABLE_MIC, u.audio, 1.0 + u.start, 1.0 + u.end, 1.3 + u.end,
                         speaker=None, source="mic", over=None, cancels_echo=False)
    assert _down(table) == [7]
    assert (table.listener.joined == 1) is join
    assert sum("7 down" in line for line in said) == 1, said
    rests = [r for r in logged if isinstance(r, DroppedRecord)
             and r.reason == "the rest of a move heard already"]
    assert [r.text for r in rests] == (["flip my seven down"] if join else [])


@pytest.mark.slow
@pytest.mark.parametrize(("game", "first", "rest", "whole"), [
    ("turn7", "lock", "Bob", "lock bob"),
    ("turn7", "lock", "stay", None),  # (another player's command, it may be)
    ("race65", "flip my seven", "down", "flip my seven down"),
    ("race65", "flip my seven", "flip my eight", None),  # (two flips)
])
def test_the_ears_join_a_rest_but_not_another_command(game: str, first: str, rest: str,
                                                      whole: str | None) -> None:
    """Real speech through the real recogniser, half a second between the
    two: the rest of a command is heard again whole; a command of its own
    (alone, another command, or another of the same kind) is not."""
    matcher = matcher_for(game, PLAYERS)
    listener = Listener(make_recognizer(matcher.phrases), matcher)
    listening = Listening(listener, lambda: False)
    segmenter = Segmenter(on_pause=listening.pause, judge=listening.judge, tail=listening.tail)
    data = spoken_stream(0.4, first, 0.5, rest, 1.2)
    found = [u for i in range(0, len(data), 320) for u in segmenter.feed(data[i:i + 320])]
    found += list(segmenter.close())
    assert len(found) == 2
    heard = [listener.whole(u.audio, u.start, u.end, listener.transcript(u.audio))
             for u in found]
    assert heard[0] is None
    joined = None if heard[1] is None else (heard[1][0].text, heard[1][1])
    assert joined == (None if whole is None else (whole, found[0].start))


def test_the_whole_of_a_move_that_ended_the_turn_is_not_too_late() -> None:
    """Ann's second flip ends her turn; its whole comes after: the rest of
    a move heard already, not a move made after her turn ("Too late")."""
    session, answers = _heard(("flip my three", 1.0, 0.2, 0.6), ("flip my seven", 1.0, 1.0, 1.6),
                              ("flip my seven down", 1.0, 1.0, 2.4))
    assert answers[1][0].startswith("Ann, 7 down."), answers
    assert answers[2] == []
    assert _down(session) == [3, 7]


@pytest.mark.slow
def test_the_ears_join_only_what_one_stream_said() -> None:
    """Seat microphones share the table's listener: "flip my seven" on Ann's
    channel and "down" on Bob's half a second later are two utterances; so
    are Ann's on two streams (her seat's channel, then the table's audio
    script), which the brain's parts room keys apart too (#84: the ears and
    the brain remember a stream by one key, :attr:`Speech.stream`)."""
    matcher = matcher_for("race65", PLAYERS)
    listener = Listener(make_recognizer(matcher.phrases), matcher)
    listening = Listening(listener, lambda: False)
    segmenter = Segmenter(on_pause=listening.pause, judge=listening.judge, tail=listening.tail)
    data = spoken_stream(0.4, "flip my seven", 0.5, "down", 1.2)
    found = [u for i in range(0, len(data), 320) for u in segmenter.feed(data[i:i + 320])]
    found += list(segmenter.close())
    assert len(found) == 2
    def heard(streams: tuple[tuple[str, str | None], ...]) -> list[str | None]:
        ears = Listener(listener.recognizer, matcher)
        return [None if whole is None else whole[0].text
                for u, stream in zip(found, streams, strict=True)
                for whole in [ears.whole(u.audio, u.start, u.end, ears.transcript(u.audio),
                                         stream)]]

    assert heard((("seat mic", "Ann"), ("seat mic", "Bob"))) == [None, None]
    assert heard((("seat mic", "Ann"), ("audio script", "Ann"))) == [None, None]
    # (Ann's own rest, on her own stream, told as hers)
    assert heard((("seat mic", "Ann"), ("seat mic", "Ann"))) == [None, "flip my seven down"]


def test_the_parts_room_made_alone_says_what_a_whole_does() -> None:
    """The parts room (:class:`~referee.brain.parts.Streams`) is made alone
    and told what it reads: a whole is its stream's last part heard again
    (from where it began), unless that part's move has been undone since;
    what the whole does turns on what came of the part."""
    streams = Streams()
    flip, down = Intent.of("flip", owner="Ann", tile=7), Intent.of("flip", owner="Ann", tile=7,
                                                                   direction="down")
    said = Speech(1.6, 1.0, 1.6, None, "mic", Transcript("flip my seven", 1.0))
    streams.heard(said, "Ann", flip, (0, "Ann flips 7"), None)
    whole = Speech(2.4, 1.0, 2.4, None, "mic", Transcript("flip my seven down", 1.0, whole=True))
    part = streams.part_of(whole, depth=1)
    assert part is not None
    assert part.moved == (0, "Ann flips 7")
    assert streams.part_of(whole, depth=0) is None  # (its move undone since)
    assert streams.part_of(Speech(2.4, 1.0, 2.4, "Bob", "mic", whole.transcript), 1) is None
    assert whole_of(part, down, True, None, lambda: True) == SAME
    assert whole_of(part, down, True, None, lambda: False) == LATE
    assert whole_of(part, down, False, None, lambda: False) == UNSURE_REST
    assert whole_of(part, Intent.of("query", what="score"), True, None, lambda: True) == HEARD
    asked = Question("Ann, did you say: flip Ann's 7?", ("Ann",), flip, "Ann")
    streams.heard(said, "Ann", flip, None, asked)
    part = streams.part_of(whole, depth=1)
    assert part is not None
    assert whole_of(part, Intent.of("flip", owner="Ann", tile=1), True, asked,
                    lambda: False) == LET_GO
    assert whole_of(part, down, True, None, lambda: False) == HEARD  # (its question gone)
