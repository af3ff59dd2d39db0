"""A game log fed back into a fresh brain: how resume and replay rebuild a game.

A log holds the inputs the brain was given, with their exact times, and the
records of what each made happen (:mod:`referee.gamelog`). Replay is
:meth:`~referee.session.Session.step` over those inputs again, in order:
the same inputs give the same game. Only chance is not an input: the game
starts with the log's chance outcomes (:class:`~referee.protocol.Start`'s
``rebuild``), so the dice and the deck come out as they did. What the
rebuilt game logs is compared with the log to tell what, if anything, was
lost (a line damaged or edited by hand).

A log of an older format (:mod:`referee.oldlogs`) kept its times to the
millisecond, so a deadline rebuilt from them can fall a hair after the
moment the log says it fell: for those logs only, the clock is run
:data:`OLD_LOG_SLACK` further where the log shows the clock acted first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from referee.protocol import (
    INPUTS,
    Brain,
    Entry,
    Input,
    Logged,
    Output,
    Start,
    Tick,
)
from referee.records import ChanceRecord, ErrorRecord, EventRecord, Record, SaidRecord
from referee.report import Report, Reported

#: How far past a time an older log gives the clock is run when the log shows
#: it acted then (seconds): those logs kept times to the millisecond, and a
#: deadline is a sum of a few of them.
OLD_LOG_SLACK = 0.0025


@dataclass(frozen=True)
class Rebuilt(Reported):
    """A game rebuilt from its log (:func:`replay_records`)."""

    #: The time of the log's last input.
    last: float
    #: What the rebuilt game logged (compared with the log: what was lost).
    records: list[Entry]
    #: The logged inputs that did not fit the game, and why.
    skipped: list[str]
    #: What the rebuilt game's outputs said of it, folded as every driver
    #: folds them: its public state and result, when it is next to be ticked,
    #: what can be said now, whether the table had left, the evening's games.
    report: Report = field(default_factory=Report)


def replay_records(session: Brain, entries: Iterable[Entry],
                   converted: bool = False, at: float = 0.0) -> Rebuilt:
    """Step a fresh ``session`` through a game log's inputs.

    The session must be built like the logged one (same game and options).
    ``converted``: the log is of an older format (:mod:`referee.oldlogs`);
    ``at``: when the game began, for a log that does not say.
    An input that failed when it is replayed and had not failed when it was
    logged (an intent edited by hand) is reported in ``skipped``.
    """
    entries = list(entries)
    first = rebuild_start(entries, at)
    out = session.step(first)
    last = first.at
    skipped: list[str] = []
    old = _OldLog(session, out) if converted else None
    for n, entry in enumerate(entries):
        if old is not None and isinstance(entry, Record):
            last = max(last, entry.at)
            old.record(entry)
        if not isinstance(entry, INPUTS) or isinstance(entry, Start):
            continue
        last = max(last, entry.at)
        made = session.step(entry)
        out += made
        failed = _failed(made)
        if failed and not _failed_then(entries, n):
            skipped.append(f"the input at {entry.at:g} s ({_words(entry)}) does not fit "
                           f"the game ({failed})")
    if old is not None:
        old.end(entries, last)
    return Rebuilt(last, _logged(out), skipped, Report().folded(out))


def rebuild_start(entries: Sequence[Entry], at: float) -> Start:
    """The start a log's game is rebuilt with: the log's own (at ``at`` if it
    has none), with every chance outcome the log holds."""
    chance = tuple(r.outcome for r in entries if isinstance(r, ChanceRecord))
    first = next((e for e in entries if isinstance(e, Start)), Start(at))
    return replace(first, rebuild=chance)


def _logged(out: Iterable[Output]) -> list[Entry]:
    return [o.record for o in out if isinstance(o, Logged)]


def _failed(out: Iterable[Output]) -> str:
    """Why the step failed ("" when it did not)."""
    return next((e.what or "an error" for e in _logged(out) if isinstance(e, ErrorRecord)), "")


def _failed_then(entries: Sequence[Entry], n: int) -> bool:
    """Whether the step of the logged input ``entries[n]`` failed when it was logged."""
    for entry in entries[n + 1:]:
        if not isinstance(entry, Record):
            return False
        if isinstance(entry, ErrorRecord):
            return True
    return False


def _words(entry: Input) -> str:
    text = getattr(entry, "text", None) or getattr(getattr(entry, "heard", None), "text", None)
    return repr(text) if text else entry.type


class _OldLog:
    """What replay makes up for in a log of an older format: its times were
    rounded to the millisecond."""

    def __init__(self, session: Brain, out: list[Output]) -> None:
        self.session, self.out = session, out
        self.told = 0  # event records of the log, so far

    def record(self, record: Record) -> None:
        """An event the rebuilt game has not made yet can only be the clock's
        (a timeout): its deadline, rebuilt from rounded times, may fall a hair
        after the logged time. The clock is run that far before any later
        input acts on the timer."""
        if not isinstance(record, EventRecord):
            return
        self.told += 1
        made = sum(isinstance(e, EventRecord) for e in _logged(self.out))
        if made < self.told:
            self.out += self.session.step(Tick(record.at + OLD_LOG_SLACK))

    def end(self, entries: Sequence[Entry], last: float) -> None:
        """The clock run to the log's last time (its heartbeats were records).
        When the log said more at its last moment than the rebuilt game has
        ("Five." logged at 18.602, rebuilt at 18.6023), a little further; not
        otherwise: a deadline just after the last record was never reached."""
        self.out += self.session.step(Tick(last))
        if _said_at(entries, last) > _said_at(_logged(self.out), last):
            self.out += self.session.step(Tick(last + OLD_LOG_SLACK))


def _said_at(entries: Iterable[Entry], at: float) -> int:
    """How many sentences ``entries`` say at ``at`` (the log's millisecond)."""
    return sum(1 for r in entries if isinstance(r, SaidRecord) and round(r.at, 3) >= at)
