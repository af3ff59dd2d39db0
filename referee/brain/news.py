"""The news after each step: what the drivers were told, and which inputs the log keeps.

After every step the session tells its driver what changed
(:meth:`~referee.session.Session.step`): the public state with the result,
what can be said now, when to tick next, each only when it changed (all of
it on :class:`~referee.protocol.Resume`: a new table). It also remembers
whose turn it was after each of the latest steps, by the time each was told:
whose turn it was when a player *began* to speak decides whether a move
came too late. A tick that did nothing is logged once a second while
something is due (:data:`HEARTBEAT`), so a resumed game gets back the time
that was left within a second.

A held room (``self.news``): a frozen value the session replaces by its
transitions; it reads only what it is given.

>>> news = News().after_step(0.0, "Ann").after_step(4.0, "Bob")
>>> news.turn_at(3.9, now="Cy"), news.turn_at(4.0, now="Cy"), News().turn_at(1.0, now="Cy")
('Ann', 'Bob', 'Cy')
>>> news, kept = News(beat=4.0).logs(4.5, idle_tick=True, wake=9.0)
>>> kept, news.logs(5.0, idle_tick=True, wake=9.0)[1], news.logs(5.0, idle_tick=True, wake=None)[1]
(False, True, False)
>>> news.logs(4.5, idle_tick=False, wake=None)
(News(shown=None, moments=None, wake=-1.0, beat=4.5, turns=()), True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from referee.protocol import Moments, Output, Snapshot, WakeAt

#: While something is due (a turn timer, a question), a tick is logged once
#: in this many seconds, so a resumed game gets back the time that was left.
HEARTBEAT = 1.0
#: How many steps' turns are remembered (a player begins to speak at most a
#: few seconds before the referee decides what was said).
TURNS_KEPT = 128

#: What a report says of the game's outcome: the final state and every game
#: of the evening's results (read only when the public state changed).
Outcome = tuple[dict[str, Any], tuple[dict[str, Any], ...]]


@dataclass(frozen=True)
class News:
    """What the drivers were last told, when an input was last logged, and
    whose turn it was after each of the latest steps."""

    shown: dict[str, Any] | None = None
    moments: tuple[str, ...] | None = None
    wake: float | None = -1.0
    beat: float = 0.0
    turns: tuple[tuple[float, str | None], ...] = ()

    def logs(self, at: float, *, idle_tick: bool, wake: float | None) -> tuple[News, bool]:
        """Whether the log keeps an input told ``at``: every input but a tick
        that did nothing (``idle_tick``), which is kept once a
        :data:`HEARTBEAT` while something is due (``wake``)."""
        if idle_tick and (wake is None or at < self.beat + HEARTBEAT):
            return self, False
        return replace(self, beat=at), True

    def after_step(self, at: float, turn: str | None) -> News:
        """The step told ``at`` left the turn with ``turn`` (None: nobody's)."""
        return replace(self, turns=(*self.turns[-(TURNS_KEPT - 1):], (at, turn)))

    def turn_at(self, at: float, now: str | None) -> str | None:
        """Whose turn it was at ``at``: after the latest step told of a time no
        later than ``at`` (of two told the same time, the later); ``now``
        when none was."""
        then = max(((told, i, turn) for i, (told, turn) in enumerate(self.turns) if told <= at),
                   default=None)
        return now if then is None else then[2]

    def report(self, now: float, *, shown: dict[str, Any], moments: tuple[str, ...],
               wake: float | None, force: bool,
               outcome: Callable[[], Outcome]) -> tuple[News, list[Output]]:
        """What to tell the drivers at ``now``: each of the public state (with
        the ``outcome``, read only then), the moments and the next wake-up
        that changed; all of them when ``force``."""
        news, out = self, list[Output]()
        if force or shown != self.shown:  # (a tick that restarts the clock logs nothing)
            news = replace(news, shown=shown)
            out.append(Snapshot(now, shown, *outcome()))
        if force or moments != self.moments:
            news = replace(news, moments=moments)
            out.append(Moments(now, moments))
        if force or wake != self.wake:
            news = replace(news, wake=wake)
            out.append(WakeAt(now, wake))
        return news, out
