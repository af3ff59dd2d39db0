"""A game rebuilt from its log: each record replayed at its logged time.

The state, the timer and any open question come back exactly; chance steps
take their logged outcomes (:meth:`~referee.brain.moves.Moves._chance`), so
resume repeats what was said. :func:`referee.replay.replay_records` drives it.
"""

from __future__ import annotations

from referee.brain.shared import Shared
from referee.gamelog import (
    AskedRecord,
    DelayRecord,
    EventRecord,
    HoldRecord,
    InputRecord,
    Record,
    ReleaseRecord,
    StopRecord,
)
from referee.protocol import Skipped
from referee.speech.understanding.intents import Heard

#: How far past a log's last record its replay runs the clock (seconds): the
#: log keeps times to the millisecond, and a deadline is a sum of a few of them.
REPLAY_SLACK = 0.0025


class Rebuilding(Shared):
    """A game rebuilt from its log, one record at a time."""

    def _replayed(self, record: Record) -> None:
        """One logged record, replayed at its logged time, so the state, the
        timer and any open question come back exactly. An input the game
        cannot take (an intent edited by hand: no tile in a flip) changes
        nothing and is reported as :class:`~referee.protocol.Skipped`."""
        at = record.at
        match record:
            case EventRecord():
                # An event the rebuilt game has not made yet can only be the
                # clock's (a timeout): its deadline, rebuilt from times rounded to
                # the millisecond, may fall a hair after the logged time. Run the
                # clock that far, before any later record acts on the timer.
                self._replayed_events += 1
                if self.events_logged < self._replayed_events:
                    self._emit(self._tick(at + REPLAY_SLACK))
            case InputRecord():
                before = self.game.depth
                try:
                    self._emit(self._respond(
                        Heard(record.text, record.intent, record.score, record.message),
                        record.speaker, at, sure=record.sure, source=record.source))
                except (KeyError, TypeError, ValueError, AttributeError) as error:
                    if self.game.depth != before:
                        raise
                    self._out.append(Skipped(at, f"the input at {at:g} s ({record.text!r}) "
                                                 f"does not fit the game "
                                                 f"({type(error).__name__}: {error})"))
            case StopRecord():
                self._emit(self._stop(at))
            case AskedRecord():
                self._emit(self._tick(at))  # (the table loop had run the clock up to now)
                self._question_spoken(at, record.until)
            case DelayRecord():
                self._emit(self._tick(at))
                self._delay_clock(at, record.until)
            case HoldRecord():
                self._emit(self._hold(at, record.text))
            case ReleaseRecord():
                self._emit(self._release(at, record.text))
