"""What the referee tells the table while it sets a game up: printed lines,
and problems that are printed now and said aloud once it has a voice."""

from __future__ import annotations

import sys


def emit(line: str) -> None:
    print(line, flush=True)


def note(text: str) -> None:
    print(f"referee: {text}", file=sys.stderr, flush=True)


#: Start-up problems waiting to be said once the referee has a voice.
_PROBLEMS: list[str] = []


def problem(text: str) -> None:
    """A start-up problem: printed now, and said aloud when the game starts
    (players who cannot see the screen must hear it too)."""
    note(text)
    _PROBLEMS.append(text)


def take_problems() -> list[str]:
    taken = list(_PROBLEMS)
    _PROBLEMS.clear()
    return taken
