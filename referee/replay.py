"""A game log fed back into a fresh brain: how resume and replay rebuild a game.

:func:`replay_records` starts a :class:`~referee.session.Session` with the
log's chance outcomes and steps it through each record
(:class:`~referee.protocol.Replayed`); what the rebuilt game logs is compared
with the log to tell what, if anything, was lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.brain.replayed import REPLAY_SLACK
from referee.gamelog import ChanceRecord, Record, SaidRecord
from referee.protocol import Logged, Output, Replayed, Skipped, Snapshot, Start, Tick
from referee.session import Session


@dataclass(frozen=True)
class Rebuilt:
    """A game rebuilt from its log (:func:`replay_records`)."""

    #: The time of the log's last record.
    last: float
    #: What the rebuilt game logged (compared with the log: what was lost).
    records: list[Record]
    #: The logged inputs that did not fit the game, and why.
    skipped: list[str]
    #: The public state and the result of the rebuilt game (its last snapshot).
    state: dict[str, Any] = field(default_factory=dict)
    final: dict[str, Any] = field(default_factory=dict)


def replay_records(session: Session, records: Iterable[Record]) -> Rebuilt:
    """Feed a game log's records back into a fresh ``session``.

    The session must be built like the logged one (same game and options):
    it starts with the log's chance outcomes, then takes each record as
    :class:`~referee.protocol.Replayed`.
    """
    records = list(records)
    chance = tuple(r.outcome for r in records if isinstance(r, ChanceRecord))
    out = session.step(Start(session.now, rebuild=chance))
    last = session.now
    for record in records:
        last = max(last, record.at)
        out += session.step(Replayed(record))
    # The clock is run to the last record. A deadline rebuilt from times the
    # log rounded to the millisecond can fall a millisecond or two after the
    # sentence it made ("Five." logged at 18.602, rebuilt at 18.6023): a game
    # killed right after it would resume without it. So when the log said
    # more at its last moment than the rebuilt game has, the clock is run that
    # much further; otherwise not, for a deadline just after the last record
    # (a flip at 14.998 s, half time at 15 s) was never reached live, and
    # must not be announced, nor a turn lost, by the rebuilding.
    out += session.step(Tick(last))
    if _said_at(records, last) > _said_at(_logged(out), last):
        out += session.step(Tick(last + REPLAY_SLACK))
    shown = [o for o in out if isinstance(o, Snapshot)]
    return Rebuilt(last, _logged(out), [o.why for o in out if isinstance(o, Skipped)],
                   shown[-1].state if shown else {}, shown[-1].final if shown else {})


def _logged(out: Iterable[Output]) -> list[Record]:
    return [o.record for o in out if isinstance(o, Logged)]


def _said_at(records: Iterable[Record], at: float) -> int:
    """How many sentences ``records`` say at ``at`` (the log's millisecond)."""
    return sum(1 for r in records if isinstance(r, SaidRecord) and round(r.at, 3) >= at)
