"""The referee's words and their rules, shared by the brain and its drivers.

What the referee says for the table's own commands and problems, the
thresholds a hearing is judged by, and how a long answer is cut into
sentences and sections. The brain (:mod:`referee.session`), the gate, the
table, the live loop and typed play import these from here, not from the
brain.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from referee.speech.understanding.meaning import spoken_list
from referee.speech.understanding.phrase_files import shared_kinds
from referee.speech.understanding.templates import fold_accents

MAX_CHARS = 500
TOO_LONG = "That was too long for me. Please say one move at a time."
#: Seconds to answer a yes/no question; silence means no.
ANSWER_SECONDS = 6.0
#: Matcher scores below this are confirmed before they are acted on.
SURE_SCORE = 0.9
#: Where a line was typed (the keyboard, a script, a seat page), not spoken.
TYPED_SOURCES = frozenset({"text", "seat", "tap"})
#: Chance steps resolved in a row at most (a guard against a game that never stops).
MAX_CHANCE_STEPS = 100
#: Intents that are not moves: what every game shares (questions, yes and no,
#: stop, undo, pause... in ``common.toml``) and the matcher's "none" and
#: "ambiguous"; everything else is (a flip, a call, a roll, a shut).
NOT_MOVES = frozenset({"none", "ambiguous"}) | shared_kinds()
#: Answers longer than this many words are read a section at a time ("more").
SECTION_WORDS = 40
MORE = "Say more for the rest."
#: "more" with nothing left to read (not "That's all.": players say that to leave).
ALL_READ = "That's everything."
#: Said once the game is over: the referee stays at the table.
AFTER_THE_END = ("Ask me anything about the game. Say play again for a new game, "
                 "or that's all to finish.")
#: "help" once the game is over: what can be done now.
HELP_AFTER_THE_END = ("The game is over. Say play again for a new game with the same players, "
                      "or that's all to finish. You can still ask about the game: the score, "
                      "the rules, or help with moves.")
#: A typed "yes" or "no" when no question is open.
NOTHING_TO_ANSWER = "There is no question to answer just now."
#: "stop" when the referee was silent (the table says it: only it knows when it
#: speaks): a player who cannot see tells that from not heard.
NOT_SPEAKING = "I wasn't speaking."
#: Said when the table leaves.
GOODBYE = "Good game, everyone. Goodbye."
#: Said for what was nearly a command but not one.
DID_NOT_CATCH = "Sorry, I didn't catch that. Say help for what you can say."
#: What the player the referee waits for hears when they said what looks like
#: an attempt at a command that was not heard well enough to ask about
#: (:mod:`referee.speech.hearing.decision`): once a wait, short, with their
#: name so that they know it was theirs.
SAY_AGAIN = "Sorry, {who}?"
#: A move played from the first words of an utterance that, heard whole, is
#: another move (:mod:`referee.brain.parts`): the whole is not played.
TOO_SOON = "{who}, I took {move} before you had finished. To take it back, say undo."
#: Why such an utterance is logged as not acted on.
ASKED_AGAIN = "not caught: asked to say it again"
#: Words addressed to the referee that are not a command.
NOT_CAUGHT = "Sorry, I didn't catch that."
ADDRESSED = re.compile(r"^\W*(?:(?:hey|ok|okay|so|um|uh)\W+)?referee\b", re.IGNORECASE)
#: Said when a step of the game failed (a bug): the game goes on.
SORRY = ("Sorry, something went wrong with that. The game goes on; "
         "please say it again.")

COUNTDOWN_WORDS = {5: "Five.", 4: "Four.", 3: "Three.", 2: "Two.", 1: "One."}
#: The speaker of an utterance nothing attributes (see :meth:`Session.attribute`).
SOMEONE = "$someone"
#: Said for a move whose player the referee cannot tell.
WHO_SAID = "Who said that? Please say it again, starting with your name."


def countdown_marks(limit: float | None) -> tuple[float, ...]:
    """Seconds-left marks at which the referee counts down a turn.

    >>> countdown_marks(15), countdown_marks(30), countdown_marks(None)
    ((10, 5, 4, 3, 2, 1), (15.0, 10, 5, 4, 3, 2, 1), ())
    """
    if not limit:
        return ()
    marks: list[float] = []
    if limit / 2 > 10:
        marks.append(limit / 2)
    if limit > 10:
        marks.append(10)
    marks.extend(m for m in (5, 4, 3, 2, 1) if m < limit)
    return tuple(marks)


def mark_text(mark: float) -> str:
    """What the countdown says at ``mark`` seconds left."""
    if mark <= 5:
        return COUNTDOWN_WORDS[int(mark)]
    return "10 seconds." if mark == 10 else "Half time."


class NoSuchPlayer(ValueError):
    """A name no player at the table has; its message is the sentence said of it."""


def player_named(name: str, players: Sequence[str]) -> str:
    """The player ``name`` names, as written at the table, however it is cased
    or accented ("ann" is Ann, "Zoe" is Zoë); :class:`NoSuchPlayer` with the
    one sentence every part of the referee says of a name nobody has (a
    script's line, an option, a seat, a satellite, a seat page).

    >>> player_named(" zoe ", ("Ann", "Zoë"))
    'Zoë'
    >>> player_named("Zed", ("Ann", "Bob"))
    Traceback (most recent call last):
    referee.wording.NoSuchPlayer: There is no player called Zed. The players are Ann and Bob.
    """
    key = fold_accents(name.strip())
    for player in players:
        if fold_accents(player) == key:
            return player
    raise NoSuchPlayer(f"There is no player called {clean_text(name)[:30]}. "
                       f"The players are {spoken_list(players)}.")


def clean_text(text: str) -> str:
    """Drop control and unprintable characters; fold white space."""
    kept = (ch if unicodedata.category(ch)[0] not in "CZ" else " " for ch in text)
    return " ".join("".join(kept).split())


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """The sentences of what the referee says, each rendered and played in turn.

    >>> sentences("Ann, 7 down. One more flip.")
    ['Ann, 7 down.', 'One more flip.']
    """
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def sections(text: str, most: int = SECTION_WORDS) -> list[str]:
    """``text`` in sections of whole sentences of at most ``most`` words (a
    longer sentence is a section of its own).

    >>> sections("One two. Three four five. Six.", most=4)
    ['One two.', 'Three four five. Six.']
    """
    parts: list[str] = []
    for sentence in sentences(text):
        if parts and len(parts[-1].split()) + len(sentence.split()) <= most:
            parts[-1] += " " + sentence
        else:
            parts.append(sentence)
    return parts
