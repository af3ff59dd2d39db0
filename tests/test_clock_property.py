"""The turn clock never runs before its turn's sentence has been said or read
(#73 item 1): a property over random sequences of inputs.

A driver stands in for the table as :class:`~referee.table.Table` does
without a voice: every sentence the clock waits for (a turn, an answer, a
question) is read at a reading speed, one after the other, and the brain is
told when each has been read (:class:`~referee.protocol.SpokenUntil`). Moves,
questions and the time come at random; after every step, a running turn
clock's deadline is at least the time its turn had (a whole turn, or what
an undo gave back) after its turn's sentence was read.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.games.race65 import Race65Options, Race65Spec
from referee.protocol import (
    Brain,
    Input,
    Output,
    Say,
    Snapshot,
    SpokenUntil,
    Start,
    Tick,
    Tone,
    Typed,
)
from referee.session import Session
from referee.table import TIMED

TURN_SECONDS = 15.0  # (hard)
WPM = 160.0
LINES = ["flip my twelve", "flip my eleven", "flip my three", "Bob flip your four down",
         "flip my twelve up", "whose turn is it", "what's my score", "rules", "undo", "yes",
         "no", "I call seventy", "pause", "resume", "repeat"]
steps = st.lists(st.one_of(
    st.tuples(st.just("type"), st.floats(0.0, 4.0), st.sampled_from(LINES),
              st.sampled_from([None, "Ann", "Bob"])),
    st.tuples(st.just("tick"), st.floats(0.0, 20.0), st.just(""), st.none()),
), max_size=25)


class Reader:
    """The table's reading without a voice: sentences read one after the
    other at :data:`WPM`; the brain told when each that holds the clock was read."""

    def __init__(self, session: Brain) -> None:
        self.session = session
        self.read_until = 0.0
        #: When the latest turn's sentence will have been read.
        self.turn_read = 0.0
        #: The time the turn had left when its sentence was said: a whole
        #: turn, or less where an undo gave a turn back what it had left.
        self.turn_left = TURN_SECONDS
        #: The turn's deadline as the last snapshot showed it.
        self.deadline: float | None = None
        #: After each input and the sentences it made said: (the input's time,
        #: the deadline then, when its turn's sentence was read, the time it
        #: had left then).
        self.deadlines: list[tuple[float, float | None, float, float]] = []

    def tell(self, message: Input) -> None:
        """One input, and the ends of the sentences it made said, as the table does."""
        self.take(self.session.step(message))
        self.deadlines.append((message.at, self.deadline, self.turn_read, self.turn_left))

    def take(self, outputs: list[Output]) -> None:
        for out in outputs:
            if isinstance(out, Snapshot):
                self.deadline = out.state.get("deadline")
        for out in outputs:
            if isinstance(out, Say) and out.to is None and out.tone != Tone.COUNTDOWN:
                start = max(out.at, self.read_until)
                self.read_until = start + len(out.text.split()) * 60.0 / WPM
                if out.tone == Tone.TURN:
                    self.turn_read = self.read_until
                    self.turn_left = TURN_SECONDS if self.deadline is None else min(
                        TURN_SECONDS, self.deadline - out.at)
                if out.tone in TIMED:
                    self.take(self.session.step(SpokenUntil(out.at, self.read_until, out.tone)))


#: Found by the property (2026-12-05): Bob's turn ran out in the step where
#: Ann said "pause" (the turn began and was held at once, before the brain
#: was told when its sentence would end), and "resume" started Ann's clock
#: at once, 11 s before her turn's sentence had been read.
PAUSED_AS_THE_TURN_BEGAN = [
    ("type", 0.0, "flip my twelve", None), ("type", 10.0, "flip my eleven", None),
    ("tick", 11.0, "", None), ("tick", 19.5, "", None), ("type", 3.0, "flip my twelve", None),
    ("tick", 19.0, "", None), ("type", 4.0, "rules", None), ("type", 2.0, "rules", None),
    ("type", 2.0, "flip my twelve", None), ("tick", 19.0, "", None),
    ("type", 4.0, "pause", None), ("type", 0.0, "resume", None)]

#: Found by the property (2026-12-07): Ann's turn ran out, Bob's began, and
#: Bob agreed to undo Ann's flip: her turn came back with the 13 s it had
#: left, running at once, while "Undone. It's Ann's turn" waited to be read
#: behind Bob's turn and the question (8 s of her 13 spent listening).
UNDONE_BEHIND_OTHER_SENTENCES = [
    ("type", 0.0, "I call seventy", None), ("type", 2.0, "flip my twelve", None),
    ("type", 2.0, "flip my twelve", None), ("tick", 7.0, "", None), ("tick", 7.0, "", None),
    ("type", 0.0, "flip my twelve", None), ("tick", 10.0, "", None),
    ("type", 4.0, "undo", "Ann"), ("type", 0.0, "yes", "Bob")]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(steps)
@example(PAUSED_AS_THE_TURN_BEGAN)
@example(UNDONE_BEHIND_OTHER_SENTENCES)
def test_a_turns_clock_never_runs_before_its_own_sentence_is_read(
        plan: list[tuple[str, float, str, str | None]]) -> None:
    reader = Reader(Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard"))))
    reader.tell(Start(0.0))
    at = 0.0
    for kind, wait, text, who in plan:
        at += wait
        reader.tell(Typed(at, text, who) if kind == "type" else Tick(at))
    for when, deadline, turn_read, left in reader.deadlines:
        if deadline is not None:
            assert deadline >= turn_read + left - 1e-6, (when, deadline, turn_read, left)


def test_the_new_users_case_holds_the_second_turn_until_it_is_read() -> None:
    """Two moves typed within the first turn's reading: Bob's turn begins while
    the opening is still being read, and its clock waits for its own sentence."""
    session = Session(Race65Spec(["Ann", "Bob"], Race65Options(difficulty="hard")))
    session.step(Start(0.0))
    session.step(SpokenUntil(0.0, 17.625, Tone.TURN))
    session.step(Typed(2.9, "flip my twelve"))
    session.step(Typed(3.9, "flip my eleven"))
    session.step(SpokenUntil(3.9, 22.5, Tone.TURN))
    said = [o for o in session.step(Tick(9.0)) if isinstance(o, Say)]
    assert said == []
    shown = [o for o in session.step(Tick(23.0)) if isinstance(o, Snapshot)]
    assert shown
    assert shown[-1].state["deadline"] == 22.5 + TURN_SECONDS
