"""The game log: every input and event as JSON lines, appended and flushed as it happens.

The first line describes the game (``"type": "game"``: the game, players and
options); then, in order:

* ``input``: something a player said or typed and what the referee made of
  it (time, source, speaker, transcript, intent, score, whether it was sure);
* ``dropped``: speech heard while the referee spoke and not acted on;
* ``event``: what happened in the game (the event's class and its fields);
  ``chance``: a roll or draw the referee made, and its outcome;
  ``said``: what the referee said;
* ``clock``: a heartbeat each second while a turn timer runs, so a resumed
  game gets back the time that was left within a second;
* ``delay``, ``asked``, ``hold``, ``release``: the timer held while the
  referee talks, a question's answer time, a pause for a lost microphone;
* ``stop``: the table ended the game; ``resumed``: the log continues after
  ``referee resume``; ``error``: a step failed and the game went on.

Each type is a frozen dataclass (:class:`Record` and its subclasses) with
``to_json`` and ``Record.from_json``; reading checks every field's type, so a
hand-edited log gives a message naming the line, never a traceback.

Every record is flushed and fsync'd before the referee goes on, so a crash
(even a power cut) loses nothing that was announced. A truncated last line
(the crash happened mid-write) is ignored when the log is read back. A log
that cannot be written is announced once; the game goes on without it.
"""

from __future__ import annotations

import dataclasses
import enum
import fcntl
import json
import os
import time
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TextIO

from referee.speech.understanding.meaning import Intent

#: The log format: 2 has typed records and structured events; 1 (events as
#: ``repr`` strings) is still read, as nothing read back depends on them.
VERSION = 2
READABLE_VERSIONS = (1, 2)
LOGS_DIR = Path(os.environ.get("REFEREE_LOGS", "logs"))


class LogError(ValueError):
    """A log that cannot be read back, with the reason."""


class LogInUse(LogError):
    """Another referee is writing this game log now."""


def default_path(game: str) -> Path:
    """A new, empty log file in ``logs/`` named after the game and the time; two
    games started in the same second get two files (``...-2.jsonl``). The file
    is created here, atomically, so no other game can take the name."""
    LOGS_DIR.mkdir(parents=True, exist_ok=True)
    stem = f"{game}-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 1000):
        path = LOGS_DIR / (f"{stem}.jsonl" if n == 1 else f"{stem}-{n}.jsonl")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            continue
        return path
    raise LogError(f"Too many game logs named {stem} in {LOGS_DIR}.")


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
    def from_json(data: Any) -> Record:
        """The record a JSON object stands for, or LogError saying what is wrong."""
        if not isinstance(data, dict):
            raise LogError("a line is not a JSON object")
        kind = data.get("type")
        cls = RECORD_TYPES.get(kind) if isinstance(kind, str) else None
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
class ErrorRecord(Record):
    """A step of the game failed (a bug); the game went on."""

    type: ClassVar[str] = "error"


@dataclass(frozen=True)
class ResumedRecord(Record):
    """The log goes on after ``referee resume``."""

    type: ClassVar[str] = "resumed"
    when: str


RECORD_TYPES: dict[str, type[Record]] = {
    cls.type: cls for cls in (GameHeader, InputRecord, DroppedRecord, EventRecord, ChanceRecord,
                              SaidRecord,
                              ClockRecord, DelayRecord, AskedRecord, HoldRecord, ReleaseRecord,
                              StopRecord, ErrorRecord, ResumedRecord)
}


def plain(value: Any) -> Any:
    """A value as JSON has it (tuples as lists, dataclasses as objects, a
    record or a message as an object with its ``type``)."""
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
    unknown = set(value) - {f.name for f in dataclasses.fields(cls)} - {"type"}
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


class GameLog:
    """Appends records to ``path``; warns through ``warn`` once if it cannot.

    The log is locked while it is open (an advisory ``flock``, let go when the
    process ends, even killed): a second referee that opens it, to resume the
    same game twice, gets :class:`LogInUse` and writes nothing.
    """

    def __init__(self, path: Path | str, warn: Callable[[str], None]) -> None:
        self.path = Path(path)
        self.warn = warn
        self._file: TextIO | None = None
        #: The file ends in the middle of a line (a crash mid-write): the next
        #: record starts a new line, so the torn one stays a line of its own.
        self._torn = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as error:
            self._failed(error)
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            self._file = None
            raise LogInUse(f"The game log {self.path} is in use: another referee is playing "
                           "that game now. Nothing was changed.") from None
        self._torn = _ends_torn(self.path)

    @property
    def working(self) -> bool:
        return self._file is not None

    def _failed(self, error: OSError) -> None:
        self._file = None
        self.warn(f"I cannot write the game log {self.path} ({error.strerror or error}). "
                  "The game goes on without a log.")

    def write(self, record: Record) -> None:
        self.write_all([record])

    def write_all(self, records: Sequence[Record]) -> None:
        """Append ``records`` (one step of the game: a move, what it caused and
        what the referee said of it) in one write, then flush and fsync: a
        kill -9 leaves the whole step in the log or none of it (written a
        record at a time, a kill between two left a move without the turn it
        gave, which resume then said once more than the log)."""
        if self._file is None or not records:
            return
        try:
            line = "".join(json.dumps(r.to_json(), separators=(",", ":")) + "\n" for r in records)
            self._file.write("\n" + line if self._torn else line)
            self._torn = False
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as error:
            self._failed(error)
        except ValueError as error:  # a closed file
            self._failed(OSError(str(error)))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_torn(path: Path) -> bool:
    """Whether the file at ``path`` ends in the middle of a line."""
    with path.open("rb") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


@dataclass
class LoggedGame:
    header: GameHeader
    records: list[Record] = field(default_factory=list)
    #: The line each record was read from (1 is the game line).
    lines: list[int] = field(default_factory=list)
    #: The numbers of the lines that are not JSON: damaged (a crash mid-write
    #: leaves one at the end, :attr:`torn`; one in the middle is damage).
    damaged_lines: list[int] = field(default_factory=list)
    #: The last line was cut by a crash mid-write.
    torn: bool = False
    #: Why each record line that was skipped could not be read ("line 7: ...").
    skipped: list[str] = field(default_factory=list)

    @property
    def damaged(self) -> int:
        return len(self.damaged_lines)

    def line_of(self, record: Record) -> int | None:
        """The line ``record`` was read from (None: not one of this log's records)."""
        for r, number in zip(self.records, self.lines, strict=True):
            if r is record:
                return number
        return None

    @property
    def last_time(self) -> float:
        return max((r.at for r in self.records), default=0.0)


#: Records after the last announcement that are kept: the clock went on.
_AFTER_ANNOUNCED = (ClockRecord, DelayRecord, AskedRecord, DroppedRecord, ErrorRecord)


def announced(records: Sequence[Record]) -> tuple[list[Record], int]:
    """The records up to what the referee last said, and how many inputs came
    after it. A crash between an input and its announcement ("Ann, 7 down.")
    leaves a move nobody heard the referee take; resume restores exactly what
    was last announced, so such inputs (and what they caused) are left out.
    The clock's own records after it are kept: the time went on.

    A log resumed before has such a cut at each ``resumed`` record: the game
    went on from what was announced before it (only the last part's inputs
    are counted: the earlier ones were told when that resume started).
    """
    kept: list[Record] = []
    unheard = 0
    start = 0
    ends = [i for i, r in enumerate(records) if isinstance(r, ResumedRecord)]
    for end in [*ends, len(records)]:
        part = records[start:end]
        said = [i for i, r in enumerate(part) if isinstance(r, SaidRecord)]
        if said:
            later = part[said[-1] + 1 :]
            unheard = sum(isinstance(r, InputRecord) for r in later)
            part = [*part[: said[-1] + 1], *(r for r in later if isinstance(r, _AFTER_ANNOUNCED))]
        else:  # a log that does not record what was said (written by hand, by a tool)
            unheard = 0
        kept += part
        if end < len(records):
            kept.append(records[end])
        start = end + 1
    return kept, unheard


def read_log(path: Path | str) -> LoggedGame:
    """The header and records of a game log, or LogError.

    A line that is not JSON is damaged and skipped (a crash mid-write leaves
    one at the end); a record line that is JSON but not a record the referee
    writes (a bad field, an unknown type: the log was changed by hand or by
    something else) is skipped too, and ``skipped`` says which and why, for
    the referee to tell the table. Only a bad first line (the game) is an error.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise LogError(f"Cannot read the game log {path}: {error.strerror or error}.") from error
    game: LoggedGame | None = None
    damaged: list[int] = []
    last = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        last = number
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            damaged.append(number)
            continue
        if game is None:
            if not isinstance(data, dict) or data.get("type") != "game":
                raise LogError(f"{path} is not a referee game log (no game line first).")
            if data.get("version") not in READABLE_VERSIONS:
                raise LogError(f"{path} was written by another version of the referee "
                               f"(log format {data.get('version')!r}; this one reads "
                               f"{' and '.join(map(str, READABLE_VERSIONS))}).")
        try:
            record = Record.from_json(data)
        except LogError as error:
            if game is None:
                raise LogError(f"{path}, line {number}: {error}.") from None
            game.skipped.append(f"line {number}: {error}")
            continue
        if game is None:
            assert isinstance(record, GameHeader)
            game = LoggedGame(record)
        elif isinstance(record, GameHeader):
            game.skipped.append(f"line {number}: a second game line")
        else:
            game.records.append(record)
            game.lines.append(number)
    if game is None and damaged:
        raise LogError(f"{path} is not a referee game log: none of its lines can be read.")
    if game is None:
        raise LogError(f"{path} is empty: there is no game in it.")
    game.damaged_lines = damaged
    game.torn = bool(damaged) and damaged[-1] == last
    return game
