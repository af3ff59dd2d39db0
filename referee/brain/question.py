"""A yes/no question the referee asks: a frozen value the rooms share (the
questions room asks it and checks answers; the parts room remembers the
question an utterance opened)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from referee.speech.understanding.meaning import Intent


@dataclass(frozen=True)
class Question:
    """A yes/no question: made to be asked, then (:meth:`Questions._ask
    <referee.brain.questions.Questions._ask>`) the one the referee is
    waiting on, with its deadline."""

    text: str
    #: Who may answer: the player asked first, then any other listed.
    answerers: tuple[str, ...]
    #: The intent to carry out on "yes".
    intent: Intent
    #: Who made the request (the speaker of the intent).
    by: str
    #: When it goes unanswered (none until it is asked).
    deadline: float = math.inf
    #: Whether the turn timer was held for it.
    paused_clock: bool = False
    #: For undo: the stack depth to return to.
    undo_to: int | None = None
    #: Another player's consent (undo, agreements): a yes must say who gives it
    #: (a seat microphone, "Bob: yes" typed, or "Bob agrees").
    consent: bool = False
