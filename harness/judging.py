"""A hearing judged by the referee's brain in a game's situation, as at a table.

Benchmarks hear a recording once and judge it as said by the player the
referee waits for and by another player off-turn: each judgement is a fresh
brain (:class:`~referee.session.Session`), started, brought to a situation
by typed lines, then told the utterance as :class:`~referee.protocol.Speech`
from the table's microphone (``speaker`` None: the player the game waits
for) or from one player's seat. What it decided comes back in its
:class:`~referee.protocol.Judged` output, as it does at a table.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import referee.speech.hearing.decision as decision
from referee.games.base import GameSpec
from referee.protocol import Brain, Judged, SoFar, Speech, Start, Typed, expected
from referee.session import Session
from referee.speech.hearing.interface import Transcript
from referee.speech.hearing.measures import measures_of
from referee.speech.understanding.intents import IntentMatcher

#: How a hearing went, for a command: acted on at once and right, asked about
#: and right, the player asked to say it again, nothing said, or another move
#: acted on or asked about; for words that are no command: taken (acted on,
#: or asked about), prompted, or silent.
OUTCOMES = ("acted", "asked", "prompted", "silent", "acted wrong", "asked wrong")


@dataclass(frozen=True)
class Judgement:
    decision: str
    intent: dict[str, Any]
    dropped: str | None
    #: The sentence decided on was one the referee expected of the awaited player.
    expected: bool = False


def outcome(judged: Judgement, want: dict[str, Any]) -> str:
    """One of :data:`OUTCOMES` (for words that are no command, ``want`` is
    ``{"kind": "none"}``: taken is "acted wrong" or "asked wrong")."""
    if judged.dropped is not None and judged.decision != "repeat":
        return "silent"
    if judged.decision == "repeat":
        return "prompted"
    if judged.decision not in ("act", "ask") or judged.intent.get("kind") == "none":
        return "silent"
    right = judged.intent == want
    return ("acted" if judged.decision == "act" else "asked") + ("" if right else " wrong")


class Situations:
    """Fresh brains for one game at one table, brought to a situation by typed
    lines (``before``: ``(speaker, text)``; none: the start of a fresh game)."""

    def __init__(self, spec: Callable[[], GameSpec], matcher: IntentMatcher,
                 before: Sequence[tuple[str | None, str]] = ()) -> None:
        self.spec, self.matcher, self.before = spec, matcher, tuple(before)
        self._ready: tuple[Brain, float] | None = None
        self._game: GameSpec | None = None

    def _brought(self) -> tuple[Brain, float]:
        """The brain brought to the situation (once), and the time there."""
        if self._ready is None:
            self._game = self.spec()
            brain = Session(self._game, matcher=self.matcher)
            brain.step(Start(0.0))
            at = 0.0
            for who, text in self.before:
                at += 0.5
                brain.step(Typed(at, text, who))
            self._ready = (brain, at + 1.0)
        return self._ready

    def expects(self, text: str, speaker: str | None = None) -> bool | None:
        """Whether the brain there expects the words said so far
        (:class:`~referee.protocol.SoFar`: a question that changes nothing)."""
        ready, at = self._brought()
        return expected(ready, SoFar(at, text, speaker))

    def fresh(self) -> tuple[Brain, float]:
        """A brain in the situation of its own (brought there once, copied for
        each use, sharing the game's spec and the matcher), and the time there."""
        ready, at = self._brought()
        shared = {id(self.matcher): self.matcher, id(self._game): self._game}
        return copy.deepcopy(ready, shared), at

    def judge(self, transcript: Transcript, speaker: str | None,
              seconds: float = 1.0) -> Judgement:
        brain, at = self.fresh()
        said = brain.step(Speech(at + seconds + 0.3, at, at + seconds, speaker, "mic",
                                 transcript))
        judged = next((o for o in said if isinstance(o, Judged)), None)
        if judged is None:
            raise AssertionError(f"the brain's step failed on {transcript.text!r}")
        return Judgement(judged.decision, judged.heard.intent.to_json(), judged.dropped,
                         judged.expected)


def transcript_of(row: dict[str, Any]) -> Transcript:
    """A dumped hearing (``text``, ``confidence``, ``extra``) as the transcript it was."""
    return Transcript(str(row.get("heard", "")), float(row.get("confidence", 0.0)), (), 0.0,
                      measures_of(row.get("extra")))


@contextmanager
def as_before() -> Iterator[None]:
    """The referee's decision as it was before it knew what it waits for
    (#72): no prior, no lower threshold, no prompt to say it again; for a
    benchmark's "before" column."""
    names = ("PRIOR", "EXPECTED_HEARD", "REPEAT_FLOOR")
    saved = {name: getattr(decision, name) for name in names}
    try:
        decision.PRIOR = 0.0
        decision.EXPECTED_HEARD = decision.REPEAT_FLOOR = 2.0
        yield
    finally:
        for name, value in saved.items():
            setattr(decision, name, value)
