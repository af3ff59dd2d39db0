"""The gate: whether speech heard at the table is a player's, to be acted on.

A pure decision (:func:`judge`): what was heard, when, what the microphone
measured, and which of the referee's sentences were sounding then, in; a
:class:`Verdict` out. The table (:mod:`referee.table`) knows the
sentences, because it renders every one before playing it, and sends them
with the utterance (:class:`~referee.protocol.Speech`); the brain judges it
here and acts on the verdict.

* **Echo.** Words mostly the referee's own, said while it spoke ("Ann, did
  you call 65?" heard back as "Ann calls 65"), are its voice, unless the echo
  canceller shows a player over it; words in the very order the referee says
  them are its echo whatever the canceller shows (it fares worse on some
  sentences than others). With seat microphones, speech over the referee
  heard alike at every seat is its voice: a player is loudest at their own
  seat. A player who repeats the referee's very words over it is lost too;
  they can say it again.
* **Countdown.** Players may talk over "Five.", "Four." ...: it is their own
  time running out. The referee never starts a countdown word while a player
  speaks, so an utterance that starts and ends with a countdown word (give or
  take :data:`ECHO_SLACK`) is its echo, whatever the recogniser made of it.
* **Over the voice.** Without an echo canceller, an utterance that overlaps
  the referee's speech is acted on only if it is a *barge-in* ("stop",
  "repeat", a call of the target: the game's
  :meth:`~referee.games.base.GameSpec.barge_in`). A command that went on
  after the referee's voice died away (which its echo cannot), or one heard
  clearly, was a player's: "Sorry, I was talking: say it again." With one, players may speak
  over the referee and are heard, if clearly (score >= 0.9): an unsure
  hearing there is too often what the canceller left of that voice. Either
  way a move said over the referee's voice is never sure: it is asked about.
* **Replies within the referee's sentence** (a yes, "more", "that's all"):
  its own voice invites them ("Say more for the rest."), so while it speaks
  they are taken for its echo; a player replies once it has said its piece.
* **Late.** A move begun in one player's turn and ended after it ran out
  ("flip my 11" is Bob's late move, not the next player's) is dropped: "Too
  late, Bob: your time was up."
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import LCSseq

from referee.protocol import Room, Spoken, Tone
from referee.speech.hearing.interface import OverVoice
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import normalise_words
from referee.wording import SURE_SCORE

#: Share of a barge-in's words found in the referee's sentence that makes it an echo.
ECHO_SHARE = 0.5
#: Share of an utterance's words that, in the order the referee is saying
#: them, make it the referee's echo whatever the microphone measured ("Bob,
#: did you call 65?" heard back as "call sixty five"): a recogniser hears a
#: voice's words in order; a player's command over it ("flip my three" over
#: "Ann, 3 down. One more flip.") shares a word or two, seldom in order.
ECHO_ORDER = 0.66
#: Over the referee's voice, an utterance that stands less than this far above
#: what the echo canceller leaves of the referee's voice alone (dB; see
#: :attr:`~referee.speech.hearing.mic.OverVoice.after_echo_db`) is that
#: leftover, not a player: a player 12 dB quieter than the echo stands about
#: 8 dB above it, as loud as the echo about 17 dB. A canceller that fares worse
#: on one sentence than on the ones before (its reference late on a busy
#: machine) leaves up to about 12 dB more: with seat microphones, the seats say
#: more (:data:`SEAT_DB`).
NEAR_END_DB = 5.0
#: With seat microphones, an utterance over the referee's voice whose seat
#: stands less than this far above the others beyond where the referee's voice
#: puts it (dB; :attr:`~referee.speech.hearing.mic.OverVoice.seat_db`) is that
#: voice, heard alike at every seat (measured: 0-1.5 dB; a player at their own
#: seat far more).
SEAT_DB = 6.0
#: Seconds around a countdown word within which an utterance is its echo.
ECHO_SLACK = 0.3
#: Why a command said over the referee (no echo canceller) is dropped, and what
#: the referee says when a player clearly said it (it went on after the voice).
SPOKE_OVER = "the referee was speaking"
TALKING = "Sorry, I was talking: say it again."
#: Why an unsure hearing over the referee's voice (echo cancelled) is dropped:
#: what the canceller leaves of that voice can pass for a player and sound like
#: words ("Ann against Bob" in the opening came back as "play again", heard at
#: 0.75, 5.7 dB above the leftover while the canceller was still learning the
#: room). Heard clearly, the same words are a player's, and a move is asked
#: about; a player whose unsure words went on after the referee's voice, or
#: stood :data:`CLEAR_PLAYER_DB` above its leftover, hears :data:`TALKING` and
#: says them again.
UNCLEAR_OVER = "unclear over the referee's voice"
#: Over the referee's (cancelled) voice, an utterance that stands at least this
#: far above what the canceller leaves of that voice (dB) is a player's beyond
#: doubt: the leftover reaches about 12 dB above itself on a sentence the
#: canceller fares worse on (:data:`NEAR_END_DB`). Unsure words from such a
#: player are not acted on, but the player is told (:data:`TALKING`) rather
#: than left unanswered: through a real audio server, moves said over the
#: referee and heard unsure stood 20 to 56 dB above the leftover, and were
#: lost without a word (``./run bench trust``,
#: docs/record/2026-11-23-trust.md).
CLEAR_PLAYER_DB = 15.0
#: Replies to what the referee says, dropped when heard within its own sentence:
#: it invites them ("Say more for the rest.", "... or that's all to finish."),
#: so its own voice must not be taken for them. ("play again" is not one: over
#: the referee, clearly heard, it is a player's, and it only asks or starts a
#: new game; leaving would end the program.)
REPLIES = ("answer", "more", "leave")
WITHIN = "a reply within the referee's own sentence"
ECHO = "echo of the referee's own voice"
#: Why a move begun in one player's turn and ended in the next one's is dropped.
LATE = "begun before the turn ran out"
LEFTOVER = "what the echo canceller left of the referee's voice"
EVERY_SEAT = "the referee's voice, heard alike at every seat"


@dataclass(frozen=True)
class Verdict:
    """What the gate made of speech heard at the table."""

    #: Why it is not acted on (the referee's echo, said over its voice ...), or None.
    dropped: str | None = None
    #: What to tell the player when it is dropped ("Sorry, I was talking ...").
    notice: str | None = None
    #: It was said over the referee's voice: a move is asked about, never played at once.
    over_voice: bool = False


@dataclass(frozen=True)
class Utterance:
    """What the gate is told of one utterance."""

    heard: Heard
    #: The recogniser's words.
    text: str
    start: float
    end: float
    #: The referee's sentences sounding between ``start`` and ``end`` (with
    #: the echo's tail).
    speaking: tuple[Spoken, ...] = ()
    #: What the microphone measured of it against the referee's voice.
    over: OverVoice | None = None
    #: The seat it came from (None: one microphone for the table).
    speaker: str | None = None
    #: Whose turn it was when it began, and when it was decided.
    turn_then: str | None = None
    turn_now: str | None = None


def content_words(text: str) -> list[str]:
    """Words for echo comparison: numbers as digits, plural/possessive s and
    "-ing" dropped (the referee's "Call 65 to win." came back from a phone on
    the table as "I'm calling sixty five").

    >>> content_words("Ann calls sixty-five!")
    ['ann', 'call', '65']
    >>> content_words("I'm calling sixty five, flipping, shutting, saying")
    ["i'm", 'call', '65', 'flip', 'shut', 'say']
    """
    words = join_numbers(normalise_words(text))
    return [_stem(re.sub(r"(?<=[a-z]{3})'?s$", "", w)) for w in words]


def _stem(word: str) -> str:
    """A word without "-ing", a doubled last consonant made single ("flipping":
    flip; "calling": call keeps its own)."""
    stem = re.sub(r"(?<=[a-z]{3})ing$", "", word)
    if stem != word and re.search(r"([^aeioulsfz])\1$", stem):
        stem = stem[:-1]
    return stem


def in_order(words: list[str], said: list[str]) -> int:
    """How many of ``words`` the referee said in that order (the longest common
    subsequence).

    >>> in_order(["call", "65"], ["bob", "did", "you", "call", "65"])
    2
    >>> in_order(["flip", "my", "3"], ["ann", "3", "down", "one", "more", "flip"])
    1
    """
    return int(LCSseq.similarity(words, said))


def judge(u: Utterance, room: Room, *, barge_in: bool, moves: bool) -> Verdict:
    """The verdict on one utterance. ``barge_in``: the game lets its intent
    interrupt the referee; ``moves``: its intent is a move (not a question, a
    yes, "stop" ...), which only the player whose turn it was may be late with."""
    over_voice = any(s.tone != Tone.COUNTDOWN for s in u.speaking)
    dropped = _gated(u, room, barge_in) or _late(u, moves)
    if dropped is None and u.heard.kind in REPLIES and over_voice and not _outlasted(u, room):
        dropped = WITHIN
    notice = None
    if dropped == LATE:
        notice = f"Too late, {u.turn_then}: your time was up."
    elif ((dropped in (SPOKE_OVER, UNCLEAR_OVER) and _outlasted(u, room))
          or (dropped == UNCLEAR_OVER and _clearly_a_player(u))
          or (dropped == SPOKE_OVER and _clearly_said(u))):
        notice = TALKING
    return Verdict(dropped, notice, over_voice)


def _clearly_a_player(u: Utterance) -> bool:
    """Whether the (echo-cancelled) microphone shows a player beyond doubt over
    the referee's voice (:data:`CLEAR_PLAYER_DB`); never twice for one notice."""
    return (u.over is not None and u.over.after_echo_db >= CLEAR_PLAYER_DB
            and not any(s.text == TALKING for s in u.speaking))


def _clearly_said(u: Utterance) -> bool:
    """Whether a command dropped because the referee was speaking was heard
    clearly (and is not its echo: that is found first), so the player is told
    it was lost rather than left to think it counted (#83: a clear "flip my
    five" said over "No answer, so no." was dropped without a word); never
    twice for one notice."""
    return (u.heard.kind not in ("none", "stop") and u.heard.score >= SURE_SCORE
            and not any(s.text == TALKING for s in u.speaking))


def _late(u: Utterance, moves: bool) -> str | None:
    if (u.speaker is None and moves and u.turn_then is not None
            and u.turn_then != u.turn_now):
        return LATE
    return None


def _outlasted(u: Utterance, room: Room) -> bool:
    """Whether a command dropped because the referee was speaking went on
    after the referee's voice had died away (its echo cannot), so a player
    said it and should hear that it was lost; never twice for one notice."""
    if (u.heard.kind in ("none", "stop") or not u.speaking
            or any(s.text == TALKING for s in u.speaking)):
        return False
    return u.end > max(s.end for s in u.speaking) + room.echo_tail + ECHO_SLACK


def _gated(u: Utterance, room: Room, barge_in: bool) -> str | None:
    """Why an utterance heard while the referee spoke is dropped (None: keep it)."""
    if not u.speaking:
        return None
    said = [w for s in u.speaking for w in content_words(s.text)]
    words = content_words(u.text)
    if words and in_order(words, said) / len(words) >= ECHO_ORDER:
        return ECHO
    # Words the referee is saying ("Ann, 3 down. One more flip.") are its echo,
    # unless the canceller shows a player over it: then they are the player's
    # ("flip my three" said over that announcement).
    player_over = room.cancels_echo and no_player(u.over) is None
    if not player_over and words and sum(w in said for w in words) / len(words) >= ECHO_SHARE:
        return ECHO
    if all(s.tone == Tone.COUNTDOWN for s in u.speaking):
        # A player may talk over "Five." (it is their time running out). The
        # echo of a countdown word starts and ends with it; a player's words
        # cannot, as the referee never starts a countdown word over a player
        # ... unless they begin just after it does ("flip my five" right
        # after "Five."): what the canceller shows then decides.
        slack = ECHO_SLACK + room.echo_tail
        if not player_over and any(abs(u.start - s.start) <= slack and u.end <= s.end + slack
                                   for s in u.speaking):
            return ECHO
        return None
    if not room.cancels_echo:
        return None if barge_in else SPOKE_OVER
    return no_player(u.over) or _unclear(u.heard)


def _unclear(heard: Heard) -> str | None:
    """Why a hearing over the referee's (cancelled) voice is too unsure to act
    on or ask about (None: clear enough). A "stop" is lenient (a wrong one only
    hushes the referee); "none" is not acted on anyway."""
    if heard.kind in ("stop", "none") or heard.score >= SURE_SCORE:
        return None
    return UNCLEAR_OVER


def no_player(over: OverVoice | None) -> str | None:
    """Why what the (echo-cancelled) microphone measured over the referee's
    voice is that voice, not a player (None: a player)."""
    if over is None or over.after_echo_db < NEAR_END_DB:
        # What is left of the referee's voice after the canceller can sound
        # like words ("repeat that"): a player's voice keeps the microphone
        # nearly as loud as before the canceller; the leftover does not.
        return LEFTOVER
    if over.seat_db is not None and over.seat_db < SEAT_DB:
        return EVERY_SEAT
    return None


def overlapping(spoken: Sequence[Spoken], start: float, end: float,
                echo_tail: float) -> tuple[Spoken, ...]:
    """The sentences whose sound overlaps ``start..end``; a sentence is heard
    until ``echo_tail`` after it ends (from a real speaker the sound reaches
    the microphone a little late; on a simulated clock the echo is exact)."""
    return tuple(s for s in spoken if s.start < end and s.end + echo_tail > start)
