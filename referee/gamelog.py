"""The game log: every input the brain is given, and what it made happen, as
JSON lines appended and flushed as it happens.

The first line describes the game (``"type": "game"``: the game, players,
options and the format's ``version``). Then each step of the brain
(:meth:`~referee.session.Session.step`) in order: the input it was given, as
the protocol's own message with its exact time (``start``, ``typed``,
``speech`` with what the ears measured, ``spoken-until``, ``mic-lost``,
``stop``, ``resume``, ...: :mod:`referee.protocol`), then the records of what
it made happen (:mod:`referee.records`: ``input``, what the referee made of
a player's words; ``dropped``; ``event``; ``chance``; ``said``; ``error``).
Replay is stepping those inputs again (:mod:`referee.replay`). A tick is
logged when it did something, and once a second while something is due (a
turn timer, a question): a resumed game gets back the time that was left
within a second.

Logs of formats 1 and 2 are still read: :mod:`referee.oldlogs` converts them.

Every step's lines are written at once and fsync'd before the referee goes
on, so a crash (even a power cut) loses nothing that was announced. A
truncated last line (the crash happened mid-write) is ignored when the log
is read back. A log that cannot be written is announced once; the game goes
on without it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from referee import oldlogs
from referee.protocol import (
    Entry,
    Resume,
    Speech,
    SpokenUntil,
    Start,
    Tick,
    Typed,
    Understood,
    VoiceCut,
    entry_from_json,
    entry_to_json,
)
from referee.records import (
    VERSION,
    DroppedRecord,
    ErrorRecord,
    GameHeader,
    LogError,
    Record,
    SaidRecord,
)

READABLE_VERSIONS = (1, 2, 3, VERSION)
#: The first format whose turn clock waits for each turn's own sentence.
CLOCK_WAITS = 4
LOGS_DIR = Path(os.environ.get("REFEREE_LOGS", "logs"))


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

    def write(self, entry: Entry) -> None:
        self.write_all([entry])

    def write_all(self, records: Sequence[Entry]) -> None:
        """Append ``records`` (one step of the game: its input, what it caused
        and what the referee said of it) in one write, then flush and fsync: a
        kill -9 leaves the whole step in the log or none of it (written a
        record at a time, a kill between two left a move without the turn it
        gave, which resume then said once more than the log)."""
        if self._file is None or not records:
            return
        try:
            line = "".join(json.dumps(entry_to_json(r), separators=(",", ":")) + "\n"
                           for r in records)
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
    #: The inputs and records after the header, in order (those of a log of
    #: an older format converted: :mod:`referee.oldlogs`).
    records: list[Entry] = field(default_factory=list)
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

    @property
    def converted(self) -> bool:
        """Written by an older referee (format 1 or 2) and converted."""
        return self.header.version < 3

    def line_of(self, record: Entry) -> int | None:
        """The line ``record`` was read from (None: not one of this log's records)."""
        for r, number in zip(self.records, self.lines, strict=True):
            if r is record:
                return number
        return None



#: The inputs kept after the last announcement (the time went on), and the records.
_CLOCK = (Tick, SpokenUntil, VoiceCut)
_KEPT = (oldlogs.ClockRecord, DroppedRecord, ErrorRecord)
#: What a player says or types.
_PLAYERS = (Typed, Speech, Understood)


def steps(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The entries of a log grouped by step: each input with the records it made."""
    grouped: list[list[Entry]] = []
    for entry in entries:
        if not grouped or not isinstance(entry, Record):
            grouped.append([entry])
        else:
            grouped[-1].append(entry)
    return grouped


def announced(entries: Sequence[Entry]) -> tuple[list[Entry], int]:
    """The log up to what the referee last said, and how many players' inputs
    came after it. A crash between a player's input and its announcement
    ("Ann, 7 down.") leaves a move nobody heard the referee take; resume
    restores exactly what was last announced, so the steps after the last
    sentence are left out, but for the clock's (the time went on).

    A log resumed before has such a cut at each ``resume``: the game went on
    from what was announced before it (only the last part's inputs are
    counted: the earlier ones were told when that resume started).
    """
    kept: list[Entry] = []
    unheard = 0
    part: list[list[Entry]] = []
    for step in [*steps(entries), None]:
        if step is not None and not isinstance(step[0], Resume):
            part.append(step)
            continue
        said = [i for i, s in enumerate(part) if any(isinstance(r, SaidRecord) for r in s)]
        cut = said[-1] + 1 if said else len(part)  # (a log without sentences: written by a tool)
        unheard = 0
        for i, s in enumerate(part):
            if i < cut or isinstance(s[0], _CLOCK):
                kept += s
                continue
            kept += [e for e in s if isinstance(e, _KEPT)]
            unheard += isinstance(s[0], _PLAYERS) and not any(
                isinstance(e, DroppedRecord) for e in s)
        if step is not None:
            kept += step
        part = []
    return kept, unheard


def read_log(path: Path | str) -> LoggedGame:
    """The header and lines of a game log, or LogError.

    A line that is not JSON is damaged and skipped (a crash mid-write leaves
    one at the end); a line that is JSON but no input or record the referee
    writes (a bad field, an unknown type: the log was changed by hand or by
    something else) is skipped too, and ``skipped`` says which and why, for
    the referee to tell the table. Only a bad first line (the game) is an
    error. A log of an older format is converted (:mod:`referee.oldlogs`).
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
            game = _header(path, data, number)
            if game.converted:  # (they began without a start)
                game.records.append(Start(0.0, legacy_clock=True))
                game.lines.append(number)
            continue
        try:
            entries = (oldlogs.entries(Record.from_json(data, oldlogs.OLD_RECORD_TYPES))
                       if game.converted else [entry_from_json(data)])
        except LogError as error:
            game.skipped.append(f"line {number}: {error}")
            continue
        for entry in entries:
            if isinstance(entry, GameHeader):
                game.skipped.append(f"line {number}: a second game line")
                continue
            if isinstance(entry, Start) and game.header.version < CLOCK_WAITS:
                entry = replace(entry, legacy_clock=True)  # (rebuilt as it was played)
            game.records.append(entry)
            game.lines.append(number)
    if game is None and damaged:
        raise LogError(f"{path} is not a referee game log: none of its lines can be read.")
    if game is None:
        raise LogError(f"{path} is empty: there is no game in it.")
    game.damaged_lines = damaged
    game.torn = bool(damaged) and damaged[-1] == last
    return game


def _header(path: Path, data: object, number: int) -> LoggedGame:
    """The game a log's first line describes, or LogError."""
    if not isinstance(data, dict) or data.get("type") != "game":
        raise LogError(f"{path} is not a referee game log (no game line first).")
    if data.get("version") not in READABLE_VERSIONS:
        raise LogError(f"{path} was written by another version of the referee "
                       f"(log format {data.get('version')!r}; this one reads "
                       f"{', '.join(map(str, READABLE_VERSIONS))}).")
    try:
        header = Record.from_json(data, oldlogs.OLD_RECORD_TYPES)
    except LogError as error:
        raise LogError(f"{path}, line {number}: {error}.") from None
    assert isinstance(header, GameHeader)
    return LoggedGame(header)
