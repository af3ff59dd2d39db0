"""Game logs of formats 1 and 2, read and converted to today's (3).

Those logs recorded what the brain did with typed records that mirrored its
inputs (``stop``, ``delay``, ``asked``, ``hold``, ``release``, ``clock``,
``resumed``; a player's input only as what the referee made of it, times to
the millisecond). :func:`converted` turns each into the protocol's input
that causes it, so such a log is replayed like a new one: by stepping its
inputs. What cannot be recovered exactly (times rounded to the millisecond)
is made up for in :func:`referee.replay.replay_records`, for these logs only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from referee.protocol import (
    Entry,
    MicBack,
    MicLost,
    Resume,
    SpokenUntil,
    Start,
    Stop,
    Tone,
    Understood,
)
from referee.records import RECORD_TYPES, InputRecord, Record
from referee.speech.understanding.intents import Heard


@dataclass(frozen=True)
class ClockRecord(Record):
    """A heartbeat each second while a turn timer runs (resume gets the time back)."""

    type: ClassVar[str] = "clock"


@dataclass(frozen=True)
class DelayRecord(Record):
    """The turn timer held while the referee talks, until ``until``."""

    type: ClassVar[str] = "delay"
    until: float


@dataclass(frozen=True)
class AskedRecord(Record):
    """The open question finished being said at ``until``."""

    type: ClassVar[str] = "asked"
    until: float


@dataclass(frozen=True)
class HoldRecord(Record):
    """The timer paused for something outside the game (a lost microphone)."""

    type: ClassVar[str] = "hold"
    text: str


@dataclass(frozen=True)
class ReleaseRecord(Record):
    """The end of a hold."""

    type: ClassVar[str] = "release"
    text: str


@dataclass(frozen=True)
class StopRecord(Record):
    """The table ended the game."""

    type: ClassVar[str] = "stop"


@dataclass(frozen=True)
class ResumedRecord(Record):
    """The log goes on after ``referee resume``."""

    type: ClassVar[str] = "resumed"
    when: str


#: The record types of formats 1 and 2.
OLD_RECORD_TYPES: dict[str, type[Record]] = {
    **RECORD_TYPES,
    **{cls.type: cls for cls in (ClockRecord, DelayRecord, AskedRecord, HoldRecord,
                                 ReleaseRecord, StopRecord, ResumedRecord)},
}


def converted(records: Sequence[Record]) -> list[Entry]:
    """An old log's records as today's lines: each input the brain was given
    (it begins with :class:`~referee.protocol.Start` at 0), followed by the
    records it made. A player's input becomes :class:`~referee.protocol.Understood`
    (the words as the referee took them then), and its ``input`` record stays.
    A heartbeat (``clock``) stays a record: replay runs the clock to the log's
    last time once, at the end, as it did for these logs."""
    return [Start(0.0), *(entry for record in records for entry in entries(record))]


def entries(record: Record) -> Iterator[Entry]:
    """The lines an old record becomes (see :func:`converted`)."""
    match record:
        case InputRecord():
            heard = Heard(record.text, record.intent, record.score, record.message)
            yield Understood(record.at, heard, record.speaker, record.sure, record.source)
            yield record
        case DelayRecord():
            yield SpokenUntil(record.at, record.until, Tone.TURN)
        case AskedRecord():
            yield SpokenUntil(record.at, record.until, Tone.QUESTION)
        case HoldRecord():
            yield MicLost(record.at, record.text)
        case ReleaseRecord():
            yield MicBack(record.at, record.text)
        case StopRecord():
            yield Stop(record.at)
        case ResumedRecord():
            yield Resume(record.at)
        case _:
            yield record
