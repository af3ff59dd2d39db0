"""The records of a game log.

A game log (:mod:`referee.gamelog`) holds two kinds of line after its header:
the inputs the brain was given (:mod:`referee.protocol`'s own messages, with
their exact times) and these records of what they made happen: what the
referee made of a player's words (``input``), speech not acted on
(``dropped``), game events, chance outcomes, what the referee said, and a
step that failed (``error``). People read the records; replay steps the inputs.

Each record is a frozen dataclass with ``to_json`` and ``Record.from_json``;
reading checks every field's type (:mod:`referee.codec`), so a hand-edited
log gives a message naming the line, never a traceback.
"""

from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.codec import LogError, fields_of, plain_fields
from referee.speech.understanding.meaning import Intent

__all__ = ["RECORD_TYPES", "VERSION", "ChanceRecord", "DroppedRecord", "ErrorRecord",
           "EventRecord", "GameHeader", "InputRecord", "LogError", "Record", "SaidRecord"]

#: The log format. 4: as 3, the turn clock waiting for each turn's own
#: sentence (#73; a log of an earlier format is rebuilt with the clock as it
#: was: :attr:`~referee.protocol.Start.legacy_clock`); 3: the inputs as the
#: protocol's messages, exact times; 2: typed records that mirrored the
#: inputs; 1: events as ``repr`` strings. 1 and 2 are still read
#: (:mod:`referee.oldlogs` converts them).
VERSION = 4


# --- the records ------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One line of the log. Each subclass is one ``type``; ``at`` is game time."""

    type: ClassVar[str]
    at: float

    def __post_init__(self) -> None:
        # Game time to the millisecond: the log is read by people too.
        object.__setattr__(self, "at", round(self.at, 3))

    def to_json(self) -> dict[str, Any]:
        """The record as the JSON object written on its line."""
        return {"type": self.type, **plain_fields(self)}

    @staticmethod
    def from_json(data: Any, kinds: dict[str, builtins.type[Record]] | None = None) -> Record:
        """The record a JSON object stands for (one of ``kinds``: by default
        this format's), or LogError saying what is wrong."""
        if not isinstance(data, dict):
            raise LogError("a line is not a JSON object")
        kind = data.get("type")
        cls = (kinds or RECORD_TYPES).get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise LogError(f"unknown record type {kind!r}")
        # (Fields a later version may add are left for it: a log stays readable.)
        values = fields_of(data, cls, str(kind), f"the {kind} record")
        if cls is EventRecord and isinstance(values.get("event"), str) and "fields" not in data:
            values["event"] = values["event"].split("(", 1)[0]  # version 1: a repr string
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class GameHeader(Record):
    """The first line: which game, who plays, its options (enough to set it up again)."""

    type: ClassVar[str] = "game"
    at: float = 0.0
    game: str
    players: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION
    started: str = ""
    #: What heard the players (a game played by voice): the recogniser and its
    #: model, with the table adapter's SHA-256
    #: (:func:`~referee.speech.hearing.recognizers.hearing_label`).
    hearing: str = ""


@dataclass(frozen=True)
class InputRecord(Record):
    """Something a player said or typed, and what the referee made of it."""

    type: ClassVar[str] = "input"
    source: str
    speaker: str | None
    #: Who the referee took it to come from.
    by: str | None
    text: str
    intent: Intent
    score: float
    sure: bool
    message: str | None = None


@dataclass(frozen=True)
class DroppedRecord(Record):
    """Speech heard and not acted on (the referee's echo, table talk)."""

    type: ClassVar[str] = "dropped"
    source: str
    speaker: str | None
    text: str
    reason: str


@dataclass(frozen=True)
class EventRecord(Record):
    """Something that happened in the game: the event's class name and fields."""

    type: ClassVar[str] = "event"
    event: str
    #: (Logs of the first format have the event's repr instead: no fields.)
    fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, event: object, at: float) -> EventRecord:
        fields = plain_fields(event) if dataclasses.is_dataclass(event) else {}
        return cls(at, type(event).__name__, fields)


@dataclass(frozen=True)
class ChanceRecord(Record):
    """A chance step the referee resolved (virtual dice or deck): its name and
    the outcome, as the rules describe it ("Ann rolls 5 and 3")."""

    type: ClassVar[str] = "chance"
    name: str
    outcome: str


@dataclass(frozen=True)
class SaidRecord(Record):
    """A sentence the referee said (``kind``: announce, turn, countdown, answer, ...)."""

    type: ClassVar[str] = "said"
    text: str
    kind: str
    #: Said to this player alone (their own headphones), for kind "private".
    to: str | None = None


@dataclass(frozen=True)
class ErrorRecord(Record):
    """A step of the game failed (a bug); the game went on."""

    type: ClassVar[str] = "error"
    #: The error ("KeyError: 'flip has no slot owner'").
    what: str = ""


RECORD_TYPES: dict[str, type[Record]] = {
    cls.type: cls for cls in (GameHeader, InputRecord, DroppedRecord, EventRecord, ChanceRecord,
                              SaidRecord, ErrorRecord)
}
