"""The referee's brain driven as tests read it: one call, one input, what it says.

:class:`Drive` builds a :class:`~referee.session.Session` and sends it typed
inputs (:mod:`referee.protocol`) through its one entry point; each call
returns the sentences the referee says (:class:`~referee.protocol.Say`), and
every record it logs goes to ``record`` as the game log would take it. It is
the smallest mouth there is: it has no voice ("louder" is answered so) and
never speaks (so a sentence takes no time). A step that fails (the session
says sorry and logs an ``error`` record, so a game goes on) fails the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from referee.games.base import GameSpec
from referee.protocol import (
    ChangeVoice,
    Entry,
    Input,
    Logged,
    MicBack,
    MicLost,
    Output,
    Say,
    SpokenUntil,
    Start,
    Stop,
    Tick,
    Tone,
    Typed,
    Understood,
    VoiceChanged,
)
from referee.records import ErrorRecord
from referee.replay import replay_records
from referee.session import Session
from referee.speech.speaking.tts import SilentVoice
from referee.speech.understanding.intents import Heard, IntentMatcher
from referee.wording import ANSWER_SECONDS


class Drive:
    """A session, and the calls a test makes of it."""

    def __init__(self, spec: GameSpec, *, at: float = 0.0,
                 matcher: IntentMatcher | None = None, answer_seconds: float = ANSWER_SECONDS,
                 record: Callable[[Entry], None] | None = None) -> None:
        self.session = Session(spec, at=at, matcher=matcher, answer_seconds=answer_seconds)
        self.record = record
        #: Every output of every step so far.
        self.outputs: list[Output] = []

    @classmethod
    def of(cls, session: Session, record: Callable[[Entry], None] | None = None) -> Drive:
        """Drive a session made elsewhere."""
        drive = cls.__new__(cls)
        drive.session, drive.record, drive.outputs = session, record, []
        return drive

    def __getattr__(self, name: str) -> Any:  # the session's state: game, question, last ...
        return getattr(self.session, name)

    def step(self, message: Input) -> list[Say]:
        said: list[Say] = []
        for out in self.session.step(message):
            self.outputs.append(out)
            if isinstance(out, Say):
                said.append(out)
            elif isinstance(out, Logged):
                if isinstance(out.record, ErrorRecord):  # the session swallowed a bug
                    raise AssertionError(f"a step failed on {message!r}: its traceback "
                                         "is in the captured log")
                if self.record is not None:
                    self.record(out.record)
            elif isinstance(out, ChangeVoice):
                said += self.step(VoiceChanged(out.at, SilentVoice().adjust(out.change)))
        return said

    def start(self) -> list[Say]:
        return self.step(Start(self.session.now))

    def hear(self, text: str, speaker: str | None = None, at: float = 0.0) -> list[Say]:
        return self.step(Typed(at, text, speaker))

    def tick(self, at: float) -> list[Say]:
        return self.step(Tick(at))

    def respond(self, heard: Heard, speaker: str | None, at: float, *, sure: bool = True,
                source: str = "text") -> list[Say]:
        return self.step(Understood(at, heard, speaker, sure, source))

    def hold(self, at: float, text: str) -> list[Say]:
        return self.step(MicLost(at, text))

    def release(self, at: float, text: str) -> list[Say]:
        return self.step(MicBack(at, text))

    def stop(self, at: float) -> list[Say]:
        return self.step(Stop(at))

    def delay_clock(self, at: float, until: float) -> list[Say]:
        """A new turn was said from ``at`` to ``until`` (its clock waits for it)."""
        return self.step(SpokenUntil(at, until, Tone.TURN))

    def replay(self, records: Iterable[Entry], skipped: list[str] | None = None,
               converted: bool = False) -> float:
        """Rebuild the game from a log's lines (``converted``: of an older
        format); the last input's time. What the rebuilt game logs goes to
        ``record``; the inputs that did not fit, to ``skipped``."""
        rebuilt = replay_records(self.session, records, converted)
        if self.record is not None:
            for record in rebuilt.records:
                self.record(record)
        if skipped is not None:
            skipped += rebuilt.skipped
        return rebuilt.last
