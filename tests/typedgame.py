"""A live game played by typed lines in a subprocess, to be killed and resumed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Typed input, no voice: what a crash test needs.
QUIET = ["--input", "text", "--voice", "none"]


def start(args: Sequence[str], log: Path) -> subprocess.Popen[str]:
    """``referee play ARGS`` with a game log, reading typed lines from a pipe."""
    return subprocess.Popen([sys.executable, "-m", "referee", "play", *args, *QUIET,
                             "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def until(game: subprocess.Popen[str], text: str) -> None:
    """Read the game's output until a line says ``text`` (at most 50 lines)."""
    assert game.stdout is not None
    seen = []
    for _ in range(50):
        seen.append(game.stdout.readline())
        if text in seen[-1]:
            return
    raise AssertionError(f"{text!r} never came: {seen}")


def type_lines(game: subprocess.Popen[str], steps: Sequence[tuple[str, str]]) -> None:
    """Type each line and wait for what it should make the referee say."""
    assert game.stdin is not None
    for line, then in steps:
        game.stdin.write(line + "\n")
        game.stdin.flush()
        until(game, then)
