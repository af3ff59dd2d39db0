"""What a driver knows of the game: one frozen value folded from the brain's outputs.

A driver (the table, the tests' driver, replay) never reads the brain: it
learns the game from what each step returns (:mod:`referee.protocol`). The
public state and the result (:class:`~referee.protocol.Snapshot`), when to
tick next (:class:`~referee.protocol.WakeAt`), what can be said now
(:class:`~referee.protocol.Moments`) and whether the table left
(:class:`~referee.protocol.Left`) are folded here, the one way every driver
folds them:

>>> from referee.protocol import Left, WakeAt
>>> report = Report().learn(WakeAt(1.0, 3.5)).learn(Left(2.0))
>>> (report.wake, report.left, report.over)
(3.5, True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from referee.protocol import Left, Moments, Output, Snapshot, WakeAt


@dataclass(frozen=True)
class Report:
    """What the outputs so far say of the game."""

    #: The public state (what every player may see) and the result, as last shown.
    state: dict[str, Any] = field(default_factory=dict)
    final: dict[str, Any] = field(default_factory=dict)
    #: The result of every game of the evening that was played ("play again").
    games: tuple[dict[str, Any], ...] = ()
    #: When the brain is next to be ticked (None: nothing is due).
    wake: float | None = None
    #: What can be said now besides the sentences of any time.
    moments: frozenset[str] = frozenset()
    #: The table said it is done ("that's all").
    left: bool = False

    def learn(self, out: Output) -> Report:
        """The report after ``out`` (itself when ``out`` says nothing of these)."""
        match out:
            case Snapshot(state=state, final=final, games=games):
                return replace(self, state=state, final=final, games=games)
            case WakeAt(wake=wake):
                return replace(self, wake=wake)
            case Moments(moments=moments):
                return replace(self, moments=frozenset(moments))
            case Left():
                return replace(self, left=True)
        return self

    def folded(self, outputs: Iterable[Output]) -> Report:
        """The report after each of ``outputs`` in turn."""
        report = self
        for out in outputs:
            report = report.learn(out)
        return report

    @property
    def over(self) -> bool:
        """Whether the game is over (a winner, or stopped)."""
        return bool(self.state.get("over", False))

    @property
    def results(self) -> tuple[dict[str, Any], ...]:
        """The result of each game of the evening (the one game's, before any)."""
        return self.games or (self.final,)


class Reported:
    """A driver that keeps a :class:`Report`: what it says of the game, read
    as the driver's own (``table.state``, ``rebuilt.final`` ...)."""

    report: Report

    @property
    def state(self) -> dict[str, Any]:
        """The public state, as the brain last showed it."""
        return self.report.state

    @property
    def final(self) -> dict[str, Any]:
        """The result, as the brain last showed it."""
        return self.report.final

    @property
    def games(self) -> tuple[dict[str, Any], ...]:
        return self.report.games

    @property
    def wake(self) -> float | None:
        """When the brain is next to be ticked (None: nothing is due)."""
        return self.report.wake

    @property
    def moments(self) -> frozenset[str]:
        return self.report.moments

    @property
    def left(self) -> bool:
        """Whether the table said it is done ("that's all")."""
        return self.report.left

    @property
    def over(self) -> bool:
        return self.report.over
