"""The game log: every input and event as JSON lines, appended and flushed as it happens.

The first line describes the game (``"type": "game"``: the game, players and
options); then, in order:

* ``input``: something a player said or typed and what the referee made of
  it (time, source, speaker, transcript, intent, score, whether it was sure);
* ``dropped``: speech heard while the referee spoke and not acted on;
* ``event``: what happened in the game; ``said``: what the referee said;
* ``clock``: a heartbeat each second while a turn timer runs, so a resumed
  game gets back the time that was left within a second;
* ``stop``: the table ended the game; ``resumed``: the log continues after
  ``referee resume``.

Every record is flushed and fsync'd before the referee goes on, so a crash
(even a power cut) loses nothing that was announced. A truncated last line
(the crash happened mid-write) is ignored when the log is read back. A log
that cannot be written is announced once; the game goes on without it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

VERSION = 1
LOGS_DIR = Path(os.environ.get("REFEREE_LOGS", "logs"))


class LogError(ValueError):
    """A log that cannot be read back, with the reason."""


def default_path(game: str) -> Path:
    return LOGS_DIR / f"{game}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


class GameLog:
    """Appends records to ``path``; warns through ``warn`` once if it cannot."""

    def __init__(self, path: Path | str, warn: Callable[[str], None]) -> None:
        self.path = Path(path)
        self.warn = warn
        self._file: TextIO | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as error:
            self._failed(error)

    @property
    def working(self) -> bool:
        return self._file is not None

    def _failed(self, error: OSError) -> None:
        self._file = None
        self.warn(f"I cannot write the game log {self.path} ({error.strerror or error}). "
                  "The game goes on without a log.")

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
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


@dataclass
class LoggedGame:
    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    #: Lines that could not be read (a crash mid-write leaves one at the end).
    damaged: int = 0

    @property
    def last_time(self) -> float:
        return max((float(r.get("at", 0.0)) for r in self.records), default=0.0)


def read_log(path: Path | str) -> LoggedGame:
    """The header and records of a game log, or LogError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise LogError(f"Cannot read the game log {path}: {error.strerror or error}.") from error
    game: LoggedGame | None = None
    damaged = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            damaged += 1
            continue
        if not isinstance(record, dict):
            damaged += 1
        elif game is None:
            if record.get("type") != "game":
                raise LogError(f"{path} is not a referee game log (no game line first).")
            game = LoggedGame(record)
        else:
            game.records.append(record)
    if game is None:
        raise LogError(f"{path} is empty: there is no game in it.")
    if game.header.get("version") != VERSION:
        raise LogError(f"{path} was written by another version of the referee.")
    game.damaged = damaged
    return game
