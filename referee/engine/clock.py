"""The turn timer as a value: an hourglass that can be frozen.

>>> t = TurnTimer.start(15.0, at=100.0)
>>> t.deadline()
115.0
>>> t = t.pause(at=104.0)        # a call is being judged
>>> t.deadline() is None, t.remaining(at=200.0)
(True, 11.0)
>>> t.resume(at=200.0).deadline()
211.0
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class TurnTimer:
    """Time allowed for one turn. ``limit`` None means the turn is untimed."""

    limit: float | None
    started_at: float
    used: float = 0.0
    paused: bool = False

    @classmethod
    def start(cls, limit: float | None, at: float) -> TurnTimer:
        return cls(limit=limit, started_at=at)

    @property
    def timed(self) -> bool:
        return self.limit is not None

    def remaining(self, at: float) -> float | None:
        """Seconds left at time ``at`` (never below zero), None when untimed."""
        if self.limit is None:
            return None
        used = self.used if self.paused else self.used + max(0.0, at - self.started_at)
        return max(0.0, self.limit - used)

    def deadline(self) -> float | None:
        """The moment time runs out, or None while paused or untimed."""
        if self.limit is None or self.paused:
            return None
        return self.started_at + self.limit - self.used

    def expired(self, at: float) -> bool:
        deadline = self.deadline()
        return deadline is not None and at >= deadline

    def pause(self, at: float) -> TurnTimer:
        if self.paused:
            return self
        return replace(self, used=self.used + max(0.0, at - self.started_at), paused=True)

    def resume(self, at: float) -> TurnTimer:
        if not self.paused:
            return self
        return replace(self, started_at=at, paused=False)

    def restored(self, moved_at: float, at: float) -> TurnTimer:
        """This timer, left at ``moved_at`` by a move that is being undone, going on
        ``at`` with the time it had left then (still paused if it was)."""
        timer = self.pause(moved_at)
        return timer if self.paused else timer.resume(at)
