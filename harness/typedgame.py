"""A live game played by typed lines in a subprocess, to be killed and resumed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
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


class Lines:
    """A process's output lines as they come, to wait on (read in a thread of
    their own, so the process never blocks on a full pipe)."""

    def __init__(self, stream: Iterable[str] | None) -> None:
        assert stream is not None, "the process's output is not a pipe"
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait(self, text: str, after: int, timeout: float = 30) -> bool:
        """Whether a line from ``after`` on says ``text`` within ``timeout`` seconds."""
        return self.first([text], after, timeout) == text

    def first(self, texts: Sequence[str], after: int, timeout: float = 30) -> str | None:
        """Which of ``texts`` a line from ``after`` on says first, within
        ``timeout`` seconds (None: none of them)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                said = next((t for t in texts if t in line), None)
                if said is not None:
                    return said
            time.sleep(0.1)
        return None
