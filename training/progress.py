"""A progress bar for long jobs (training, benchmarks), on standard error.

Redrawn at most every ``every`` seconds and at each tenth of the work, not at
every item: a screen reader reads each redraw aloud, and a log file keeps
them all.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Bar:
    """``bar(done)`` redraws ``[#####-----]  50.0 %  120/240  ETA 2 min  what``."""

    def __init__(self, total: int, what: str = "", out: TextIO | None = None,
                 every: float = 5.0) -> None:
        self.total = max(total, 1)
        self.what = what
        self.out = sys.stderr if out is None else out
        self.every = every
        self.started = time.monotonic()
        self._shown = (-1, -1.0)

    def __call__(self, done: int, note: str = "") -> None:
        now = time.monotonic()
        tenth = 10 * done // self.total
        if done < self.total and tenth == self._shown[0] and now - self._shown[1] < self.every:
            return
        self._shown = (tenth, now)
        filled = int(30 * done / self.total)
        elapsed = now - self.started
        left = elapsed / done * (self.total - done) if done else 0.0
        eta = f"ETA {left / 60:.0f} min" if done and done < self.total else \
            f"{elapsed / 60:.1f} min"
        line = (f"[{'#' * filled}{'-' * (30 - filled)}] {100 * done / self.total:5.1f} %  "
                f"{done}/{self.total}  {eta}  {self.what} {note}".rstrip())
        self.out.write("\r" + line + ("\n" if done >= self.total else ""))
        self.out.flush()

    def close(self, note: str = "") -> None:
        """Draw the finished bar (once)."""
        if self._shown[0] < 10:
            self._shown = (-1, -1.0)
            self(self.total, note)
