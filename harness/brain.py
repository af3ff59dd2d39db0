"""The referee's brain driven as tests read it: one call, one input, what it says.

:class:`Drive` builds a :class:`~referee.session.Session` and sends it typed
inputs (:mod:`referee.protocol`) through its one entry point; each call
returns the sentences the referee says (:class:`~referee.protocol.Say`), and
every record it logs goes to ``record`` as the game log would take it. What
a test reads of the game comes from the outputs, as a driver's does: the
last :class:`~referee.protocol.Snapshot` (:attr:`Drive.state`,
:attr:`Drive.final`), :class:`~referee.protocol.WakeAt`,
:class:`~referee.protocol.Moments` and :class:`~referee.protocol.Left`. It is
the smallest mouth there is: it has no voice ("louder" is answered so) and
never speaks (so a sentence takes no time). A step that fails (the session
says sorry and logs an ``error`` record, so a game goes on) fails the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from types import EllipsisType
from typing import Any

from referee.engine.core import Game
from referee.games.base import GameSpec
from referee.protocol import (
    Brain,
    ChangeVoice,
    Entry,
    Input,
    Logged,
    MicBack,
    MicLost,
    Output,
    Say,
    Snapshot,
    SoFar,
    SpokenUntil,
    Start,
    Stop,
    Tick,
    Tone,
    Typed,
    Understood,
    VoiceChanged,
    whose,
)
from referee.records import ChanceRecord, ErrorRecord, EventRecord
from referee.replay import replay_records
from referee.report import Report, Reported
from referee.session import Session
from referee.speech.speaking.tts import SilentVoice
from referee.speech.understanding.intents import Heard, IntentMatcher
from referee.wording import ANSWER_SECONDS


class Drive(Reported):
    """A session, and the calls a test makes of it."""

    def __init__(self, spec: GameSpec, *, at: float = 0.0,
                 matcher: IntentMatcher | None = None, answer_seconds: float = ANSWER_SECONDS,
                 record: Callable[[Entry], None] | None = None) -> None:
        self._drive(Session(spec, at=at, matcher=matcher, answer_seconds=answer_seconds),
                    spec, at, record)

    @classmethod
    def of(cls, session: Brain, spec: GameSpec, *, at: float = 0.0,
           record: Callable[[Entry], None] | None = None) -> Drive:
        """Drive a brain made elsewhere, of ``spec``'s game, made at ``at``."""
        drive = cls.__new__(cls)
        drive._drive(session, spec, at, record)
        return drive

    def _drive(self, session: Brain, spec: GameSpec, at: float,
               record: Callable[[Entry], None] | None) -> None:
        #: The brain, as every driver holds it: its one entry point is ``step``.
        self.session = session
        #: The game being played (what the test built the session with), and
        #: when the brain was made.
        self.spec, self.made_at = spec, at
        self.record = record
        #: Every output of every step so far.
        self.outputs: list[Output] = []
        #: What the outputs said of the game, folded as the table folds them
        #: (:class:`~referee.report.Report`): the public state and the result,
        #: when to tick next, what can be said now, whether the table left.
        self.report = Report()

    @property
    def question(self) -> str | None:
        """The open question's words, as the snapshot shows them (None: none open)."""
        question = self.state.get("question")
        return None if question is None else str(question)

    def mark(self) -> int:
        """Where the outputs stand now, for :meth:`changed_since`."""
        return len(self.outputs)

    def changed_since(self, mark: int) -> list[str]:
        """What the game did since ``mark``, as a driver sees it: each event
        and chance step logged, and each snapshot whose game (its own public
        state, whose turn it is) differs from the one before; a question
        opened or closed, or the clock, is not the game ([] when the game
        is as it was: nothing played, drawn or changed on the board)."""
        def game(state: dict[str, Any]) -> tuple[Any, Any]:
            return state.get("game"), state.get("turn")

        changed: list[str] = []
        shown = next((game(o.state) for o in reversed(self.outputs[:mark])
                      if isinstance(o, Snapshot)), None)
        for out in self.outputs[mark:]:
            if isinstance(out, Snapshot) and shown is not None and game(out.state) != shown:
                changed.append("snapshot")
            if isinstance(out, Snapshot):
                shown = game(out.state)
            elif isinstance(out, Logged) and isinstance(out.record, EventRecord | ChanceRecord):
                changed.append(type(out.record).__name__)
        return changed

    def step(self, message: Input) -> list[Say]:
        said: list[Say] = []
        for out in self.session.step(message):
            self.outputs.append(out)
            self.report = self.report.learn(out)
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

    @cached_property
    def matcher(self) -> IntentMatcher:
        """The game's sentences, as a recogniser's words are matched to them
        (a matcher of the test's own, not the brain's)."""
        return matcher_of(self.spec)

    def whose(self, text: str, at: float) -> str | None:
        """Whose the brain takes ``text`` to be when nobody is named: its
        answer to the ears' question (:class:`~referee.protocol.SoFar`), which
        changes nothing."""
        return whose(self.session, SoFar(at, text, None))

    def start(self) -> list[Say]:
        return self.step(Start(self.made_at))

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
        self.report = replace(rebuilt.report, left=self.left or rebuilt.left)
        if self.record is not None:
            for record in rebuilt.records:
                self.record(record)
        if skipped is not None:
            skipped += rebuilt.skipped
        return rebuilt.last


class Kept:
    """The games a test's own game spec begins from now on, kept: the
    engine's game, for a test that sets up a position the deal could reach,
    or checks the rules' own state after a game by voice. (The spec's
    ``new_game`` is wrapped on that one instance.) The brain's own fields
    stay its own."""

    def __init__(self, spec: GameSpec) -> None:
        #: The games begun, in order.
        self.games: list[Game[Any]] = []
        new_game = spec.new_game

        def kept(at: float) -> Game[Any]:
            game = new_game(at)
            self.games.append(game)
            return game

        vars(spec)["new_game"] = kept

    @property
    def game(self) -> Game[Any]:
        """The game begun last."""
        return self.games[-1]


def matcher_of(spec: GameSpec) -> IntentMatcher:
    """The game's sentences as the brain matches words to them: a test makes
    its own (and hands it to the brain it makes, to build it once), never
    reads the brain's."""
    return IntentMatcher.for_phrases(spec.phrase_file, spec.players)


@dataclass(frozen=True)
class Unsure:
    """A line heard by a recogniser that was not sure of it (``sure=False``),
    as the voice loop sends it: a move is asked about before it is played."""

    text: str


#: A row's line that says nothing: the time passes (a :class:`~referee.protocol.Tick`).
TICK = Unsure("")

#: A conversation's row: when, who spoke (None: the input does not say), what
#: was said (typed; :class:`Unsure`; :data:`TICK`), and every sentence the
#: referee says to it, in order. Expected sentences that begin with ``...``
#: are the last ones said (what comes before, a countdown mark, is not checked).
Row = tuple[float, str | None, "str | Unsure", Sequence["str | EllipsisType"]]


def converse(drive: Drive, rows: Iterable[Row]) -> None:
    """Say each row's line to ``drive`` in turn, and check what the referee says."""
    for at, speaker, line, expected in rows:
        if line is TICK:
            said = drive.tick(at)
        elif isinstance(line, Unsure):
            heard = drive.matcher.match(line.text, speaker or str(drive.state.get("turn")))
            said = drive.respond(heard, speaker, at, sure=False)
        else:
            said = drive.hear(line, speaker, at)
        got = [s.text for s in said]
        if list(expected[:1]) == [...]:
            tail = [str(e) for e in expected[1:]]
            got = got[len(got) - len(tail):] if len(got) >= len(tail) else got
            assert got == tail, f"at {at}, {speaker}: {line!r} -> {[s.text for s in said]}"
        else:
            assert got == list(expected), f"at {at}, {speaker}: {line!r} -> {got}"
