"""One voice, several microphones: which of them heard it.

At a table with seat pages listening (phones), a player's words reach their
own phone close up, and also every other phone lying hands-free on the
table, and the table's microphone if there is one. Each would hear them as
its own: another phone as its player's words ("flip my seven" heard by
Bob's phone is Bob's seven), the table microphone as whoever's turn it is.
So what the streams hear is gathered here first (:class:`Overheard`), and
only the closest microphone's copy of a voice is heard:

* a phone's against the table microphone's: the phone's (a hand's width
  from its player's mouth, it knows who spoke);
* two phones': the louder, by :data:`CLOSER_DB` or more (the other phone
  heard it across the table); within that both are kept: two players
  talking at once, each into their own phone.

Two utterances are copies of one voice when they overlap in time (at least
half of the shorter, with :data:`SKEW` seconds of slack: the streams reach
the referee with different delays). An utterance waits, at most
:data:`HOLD` seconds, only while another stream is still hearing speech
that may be its copy; one that nothing else heard is heard at once, so a
table with one phone talking, or no phones, loses no time.

A "stop" is never held: it cuts the referee's voice at once, from whichever
microphone (a second copy finds nothing to cut).

Levels are the utterance's loud part (the 90th percentile of its 10 ms
energies, after the echo canceller): the same voice through two phones'
microphones, whose gains differ by a few decibels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from referee.speech.audio import RATE, Audio

log = logging.getLogger(__name__)

#: The table microphone's name as a source (a phone's is its player's).
TABLE_MIC = ""
#: How much louder one phone must hear a voice than another for the other's
#: copy to be across the table (dB): a player's own phone is a hand's width
#: from their mouth, the others a metre or two (measured in the trust bench:
#: 20 dB); within this, two players spoke at once.
CLOSER_DB = 6.0
#: Seconds of slack when matching two streams' utterances in time.
SKEW = 0.5
#: The longest an utterance waits for another stream's copy (seconds).
HOLD = 0.6
#: Seconds an utterance is kept to compare later ones with.
KEEP = 10.0


def loudness(audio: Audio) -> float:
    """An utterance's loud part (dB): the 90th percentile of its 10 ms energies."""
    frame = RATE // 100
    x = audio.samples[: len(audio.samples) // frame * frame].astype(np.float64)
    if not len(x):
        return -100.0
    energies = 10.0 * np.log10(np.mean(x.reshape(-1, frame) ** 2, axis=1) + 1e-9)
    return float(np.percentile(energies, 90))


@dataclass(frozen=True)
class Caught:
    """An utterance one stream heard: ``source`` the player whose phone heard
    it (:data:`TABLE_MIC`: the table's microphone); ``start``/``end`` in game
    time; ``decided`` when its stream decided it had ended; ``hear(at)``
    hears it (at game time ``at``); ``urgent``: a "stop", heard at once."""

    source: str
    start: float
    end: float
    decided: float
    level: float
    hear: Callable[[float], object]
    urgent: bool = False

    def overlaps(self, other: Caught) -> bool:
        """Whether the two are one voice in time (half the shorter, give or take :data:`SKEW`)."""
        shared = min(self.end, other.end) - max(self.start, other.start) + SKEW
        return shared >= 0.5 * min(self.end - self.start, other.end - other.start)

    def beaten_by(self, other: Caught) -> bool:
        """Whether ``other`` is this voice's closer microphone (see the module)."""
        if other.source == TABLE_MIC:
            return False
        return self.source == TABLE_MIC or other.level >= self.level + CLOSER_DB


class Overheard:
    """What the streams heard, until it is clear which microphone was closest.

    ``talking(source)`` says whether a stream hears speech now (its detector
    is in an utterance); ``sources()`` the streams listening now."""

    def __init__(self, talking: Callable[[str], bool], sources: Callable[[], list[str]]) -> None:
        self.talking = talking
        self.sources = sources
        self._waiting: list[Caught] = []
        self._done: list[Caught] = []  # heard or dropped lately, to compare with
        #: How many copies were dropped (another microphone was closer).
        self.dropped = 0

    def add(self, caught: Caught) -> None:
        self._waiting.append(caught)

    @property
    def due(self) -> float | None:
        """When the first waiting utterance is heard at the latest (game time)."""
        return min((c.decided + HOLD for c in self._waiting), default=None)

    def hear(self, now: float) -> None:
        """Hear what is clear by ``now``; drop the copies a closer microphone heard."""
        self._done = [c for c in self._done if c.end >= now - KEEP]
        for caught in list(self._waiting):
            rivals = [c for c in self._waiting + self._done
                      if c.source != caught.source and c.overlaps(caught)]
            closer = None if caught.urgent else next(
                (c for c in rivals if caught.beaten_by(c)), None)
            if closer is not None:
                log.info("dropped %s's copy of a voice: %s's microphone was closer",
                         caught.source or "the table microphone",
                         closer.source or "the table microphone")
                self.dropped += 1
            elif (not caught.urgent and now < caught.decided + HOLD
                  and self._may_come(caught, rivals)):
                continue
            else:
                caught.hear(now)
            self._waiting.remove(caught)
            self._done.append(caught)

    def _may_come(self, caught: Caught, rivals: list[Caught]) -> bool:
        """Whether another stream may still bring a closer copy: it is hearing
        speech now and has not yet decided an utterance that overlaps this one."""
        decided = {c.source for c in rivals}
        return any(source != caught.source and source not in decided and self.talking(source)
                   for source in self.sources())
