"""The records of a game log, and how any message or record is written as JSON and read back.

A game log (:mod:`referee.gamelog`) holds two kinds of line after its header:
the inputs the brain was given (:mod:`referee.protocol`'s own messages, with
their exact times) and these records of what they made happen: what the
referee made of a player's words (``input``), speech not acted on
(``dropped``), game events, chance outcomes, what the referee said, and a
step that failed (``error``). People read the records; replay steps the inputs.

Each record is a frozen dataclass with ``to_json`` and ``Record.from_json``;
reading checks every field's type (:func:`checked`), so a hand-edited log
gives a message naming the line, never a traceback.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from referee.speech.understanding.meaning import Intent

#: The log format. 4: as 3, the turn clock waiting for each turn's own
#: sentence (#73; a log of an earlier format is rebuilt with the clock as it
#: was: :attr:`~referee.protocol.Start.legacy_clock`); 3: the inputs as the
#: protocol's messages, exact times; 2: typed records that mirrored the
#: inputs; 1: events as ``repr`` strings. 1 and 2 are still read
#: (:mod:`referee.oldlogs` converts them).
VERSION = 4


class LogError(ValueError):
    """A log that cannot be read back, with the reason."""

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
        return {"type": self.type, **_fields(self)}

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
        values = _fields_of(data, cls, str(kind), f"the {kind} record")
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
        fields = _fields(event) if dataclasses.is_dataclass(event) else {}
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


def plain(value: Any) -> Any:
    """A value as JSON has it (tuples as lists, dataclasses as objects, a
    record or a message as an object with its ``type``)."""
    if isinstance(value, np.generic):  # (a recogniser's scores)
        return value.item()
    if isinstance(value, Intent):
        return value.to_json()
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(type(value), "type", None)
        return {"type": kind, **_fields(value)} if isinstance(kind, str) else _fields(value)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}


def checked(value: Any, hint: Any, where: str) -> Any:
    """``value`` read from JSON if it fits the field's type, else LogError."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return checked(value, option, where)
            except LogError:
                continue
        raise LogError(f"{where} is {value!r}")
    if hint is type(None):
        if value is None:
            return None
        raise LogError(f"{where} is {value!r}")
    if origin is tuple:
        (item, *_) = typing.get_args(hint)
        if not isinstance(value, list):
            raise LogError(f"{where} is {value!r}, not a list")
        return tuple(checked(v, item, where) for v in value)
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise LogError(f"{where} is {value!r}, not an object")
        return value
    if hint is Intent:
        try:
            return Intent.from_json(value if isinstance(value, dict) else {})
        except ValueError:
            raise LogError(f"{where} is {value!r}, not an intent") from None
    if isinstance(hint, type) and issubclass(hint, Record):
        record = Record.from_json(value)
        if not isinstance(record, hint):
            raise LogError(f"{where} is a {record.type} record")
        return record
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise LogError(f"{where} is {value!r}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(value, hint, where)
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise LogError(f"{where} is {value!r}, not a number")
    if hint is Any:
        return value
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise LogError(f"{where} is {value!r}")
    return value


def _dataclass(value: Any, cls: type[Any], where: str) -> Any:
    """A frozen dataclass read from a JSON object, each field checked."""
    if not isinstance(value, dict):
        raise LogError(f"{where} is {value!r}, not an object")
    kind = getattr(cls, "type", None)
    if isinstance(kind, str) and value.get("type", kind) != kind:
        raise LogError(f"{where} is a {value.get('type')!r}, not a {kind!r}")
    unknown = (set(value) - {f.name for f in dataclasses.fields(cls)} - {"type"}
               - getattr(cls, "retired", frozenset()))
    if unknown:
        raise LogError(f"{where} has unknown fields {sorted(unknown)}")
    return cls(**_fields_of(value, cls, where, where))


def _fields_of(data: dict[str, Any], cls: type[Any], where: str, what: str) -> dict[str, Any]:
    """``cls``'s fields read from ``data``, each checked against its type; a
    field without a default must be there (``what`` names the object missing it)."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            values[f.name] = checked(data[f.name], hints[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise LogError(f"{what} has no {f.name}")
    return values
