"""One input stream cleaned of the referee's voice, and how well.

The table's microphone and each seat page's phone hear the referee's
loudspeaker. :class:`EchoPath` is one stream's side of it: an echo canceller
a channel (:class:`~referee.speech.hearing.echo.EchoCanceller`), fed what
the speakers played (a :class:`~referee.speech.audio.PlaybackTrack`) at
the delay the sound itself shows (:class:`~referee.speech.hearing.echo.DelayFinder`:
device buffers, a phone's network and its own latency all vary), and the
measures the gate needs: whether the canceller has learnt the room yet
(:meth:`EchoPath.cancelling`, :meth:`EchoPath.learnt_by`) and how far an
utterance stands above what it leaves of the referee's voice
(:meth:`EchoPath.after_echo_db`).

Times are the stream's own (:func:`time.monotonic` seconds at which its
sound reached the referee); ``latency`` says how much earlier a block was
captured, as far as the device knows: the rest is measured.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from referee.speech.audio import RATE, PlaybackTrack
from referee.speech.hearing.echo import FRAME, DelayFinder, EchoCanceller

#: Playback quieter than this (mean absolute sample) does not test the canceller.
PLAYED_LEVEL = 100.0
#: The canceller counts as working when it removes this much of the referee ...
CANCELLED_DB = 10.0
CANCELLED_RATIO = 10 ** (CANCELLED_DB / 10)
#: ... within this many seconds.
CANCELLED_FOR = 30.0
#: Seconds of playback the canceller's effect is smoothed over, and measured
#: for before it is judged: its first output is silence while it fills its
#: frame, which once passed for 10 dB removed 0.04 s into the game (live, the
#: filter removed 10 dB after about 3.4 s).
MEASURED_FOR = 2.0
#: Seconds of the referee's voice before an utterance that show how much of it
#: the echo canceller leaves (see :meth:`EchoPath.after_echo_db`).
LEFTOVER_HISTORY = 10.0

Channels = np.ndarray[Any, Any]
#: 10 ms while the referee played: (its time, energy before the canceller,
#: after it, and each channel's after it).
EchoBlock = tuple[float, float, float, Channels]


class EchoPath:
    """One input stream's echo canceller (a channel each) and its measures."""

    def __init__(self, track: PlaybackTrack, channels: int = 1) -> None:
        self.track = track
        self.channels = channels
        self._cancellers = [EchoCanceller() for _ in range(channels)]
        self._delay = DelayFinder()
        self._now = -math.inf  # the end of the last block
        #: Smoothed energies of the stream before and after the canceller
        #: while the referee plays, the samples measured so, when the canceller
        #: last removed enough of it, and when it first did.
        self._before = self._after = 0.0
        self._measured = 0
        self._cancelled_at = -math.inf
        self._learnt_at = math.inf
        self._blocks: deque[EchoBlock] = deque(maxlen=3000)  # 30 s

    def clean(self, samples: Channels, at: float, latency: float = 0.0) -> Channels:
        """``samples`` (one column a channel) heard from ``at`` on, captured
        about ``latency`` seconds before: each channel without what the
        speakers played meanwhile (the same number of samples)."""
        captured = at - latency
        mono = samples.mean(axis=1).astype(np.int16) if self.channels > 1 else samples[:, 0]
        self._delay.feed(mono, captured, self.track.window)
        played = self.track.window(captured + self._delay.offset, len(samples))
        cleaned = np.stack([c.process(np.ascontiguousarray(samples[:, i]), played)
                            for i, c in enumerate(self._cancellers)], axis=1)
        if len(cleaned) == len(samples):
            for i in range(0, len(samples), FRAME):
                self._measure(samples[i : i + FRAME], cleaned[i : i + FRAME],
                              played[i : i + FRAME], at + i / RATE)
        self._now = at + len(samples) / RATE
        # The canceller holds back what does not fill a 10 ms frame: keep the lengths.
        if len(cleaned) < len(samples):
            cleaned = np.concatenate([np.zeros((len(samples) - len(cleaned), self.channels),
                                               np.int16), cleaned])
        return cleaned[: len(samples)]

    def restart(self) -> None:
        """The stream's sound stopped for a while and starts again (a phone
        let go of): its recent sound no longer runs on from the last, so the
        delay is looked for afresh (the one found is kept meanwhile)."""
        self._delay.restart()

    def close(self) -> None:
        for canceller in self._cancellers:
            canceller.close()

    def _measure(self, raw: Channels, cleaned: Channels, played: Channels, at: float) -> None:
        """Track how much of the referee's voice the canceller removes (its
        echo return loss enhancement, over about two seconds of playback),
        and each 10 ms's energy before and after it while the referee plays."""
        if float(np.abs(played).mean()) < PLAYED_LEVEL:
            return
        before = float(np.mean(raw.astype(np.float64) ** 2))
        channels = (cleaned.astype(np.float64) ** 2).mean(axis=0)
        after = float(channels.mean())
        self._blocks.append((at, before, after, channels))
        keep = 1.0 - len(raw) / (MEASURED_FOR * RATE)
        self._before = keep * self._before + before
        self._after = keep * self._after + after
        self._measured += len(raw)
        if (self._measured >= MEASURED_FOR * RATE
                and self._before > CANCELLED_RATIO * max(self._after, 1.0)):
            self._cancelled_at = at
            self._learnt_at = min(self._learnt_at, at)

    @property
    def cancelling(self) -> bool:
        """Whether the canceller removed most of the referee's voice recently
        (at least :data:`CANCELLED_DB` over two seconds of playback, within
        the last :data:`CANCELLED_FOR` seconds): until it has learnt the room,
        speech over the referee is not to be trusted."""
        return self._now - self._cancelled_at <= CANCELLED_FOR

    def learnt_by(self, at: float) -> bool:
        """Whether the canceller is working and had learnt the room already at
        ``at``: an utterance begun while it was learning holds what it left of
        the referee's voice then, loud enough to pass for a player (the
        opening's "Ann against Bob" came back as "play again", 5.7 dB above
        the leftover)."""
        return self.cancelling and self._learnt_at <= at

    def after_echo_db(self, start: float, end: float) -> float | None:
        """How far an utterance from ``start`` to ``end`` stands above what the
        canceller leaves of the referee's voice alone (dB), or None when the
        referee did not play meanwhile. The leftover is the 30th percentile of the after/before
        ratio over the referee's last 10 s of voice before the utterance
        (mostly the referee alone); the utterance's own level is its 100 ms
        where the ratio is highest: a player's short "stop" amid the
        detector's longer stretch of leftover keeps its own 100 ms high."""
        def ratio(blocks: list[tuple[float, float]]) -> float:
            before = sum(b for b, _ in blocks)
            after = sum(a for _, a in blocks)
            return 10.0 * math.log10(max(after, 1.0) / max(before, 1.0))

        blocks = [(b, a) for at, b, a, _ in self._blocks if start <= at <= end + FRAME / RATE]
        if not blocks:
            return None
        span = round(0.1 * RATE / FRAME)
        best = max(ratio(blocks[i : i + span]) for i in range(max(1, len(blocks) - span + 1)))
        earlier = [ratio([(b, a)]) for _, b, a, _ in self.before(start)]
        if len(earlier) >= span:
            leftover = float(np.percentile(earlier, 30))
        else:  # the referee has only just begun: how much the canceller removed lately
            leftover = -10.0 * math.log10(max(self._before, 1.0) / max(self._after, 1.0))
        return best - leftover

    def before(self, start: float) -> list[EchoBlock]:
        """The referee's voice in the :data:`LEFTOVER_HISTORY` before ``start``:
        mostly the referee alone, to compare an utterance with."""
        return [b for b in self._blocks if start - LEFTOVER_HISTORY <= b[0] < start]
