"""Waiting on the game, not the clock: the one way a test waits (#84 item 4).

A test of a live referee waits for something the referee does or writes (a
line printed, a record logged, a stream opened, the room gone quiet), for as
long as a busy machine needs, up to a bound that is a failure, never an
expectation. :func:`until` polls a condition; :func:`logged` waits for a
record in a game's log.

>>> until(lambda: 3, timeout=1.0)
3
>>> until(lambda: None, timeout=0.05)
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
#: How often a condition is looked at (seconds).
POLL = 0.05


def until(condition: Callable[[], T], timeout: float, poll: float = POLL) -> T:
    """``condition()`` as soon as it is true, or its last (false) value once
    ``timeout`` seconds have passed: ``assert until(...), why`` fails a test
    with what it waited for."""
    deadline = time.monotonic() + timeout
    value = condition()
    while not value and time.monotonic() < deadline:
        time.sleep(poll)
        value = condition()
    return value


def records(log: Path) -> list[dict[str, Any]]:
    """The records a game's log holds so far (a line still being written is
    left for the next look)."""
    found: list[dict[str, Any]] = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        with contextlib.suppress(json.JSONDecodeError):
            found.append(json.loads(line))
    return found


def logged(log: Path, wanted: Callable[[dict[str, Any]], bool], timeout: float,
           after: int = 0) -> bool:
    """Whether a game's log gets a record ``wanted`` (beyond its first ``after``
    records) within ``timeout`` seconds; a line being written is read again."""
    return until(lambda: any(wanted(r) for r in records(log)[after:]), timeout, poll=0.1)
