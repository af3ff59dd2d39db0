"""A stream's listening: its listener decoding ahead and judging the words so
far, with what the table knows that words alone do not (the referee is
speaking, so a "stop" is acted on at the pause itself).

The table microphone has one, each seat's phone or satellite one of its own
(the same recogniser, a matcher of its own): the segmenter of each stream
asks it at every pause (see :class:`~referee.speech.hearing.segmenter.Judge`).

("Ears", in this project, are only the recogniser and its trained adapter:
``./run train ears``, :mod:`harness.ears`.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from referee.speech.audio import SPEECH_MARGIN, Audio
from referee.speech.hearing.segmenter import URGENT
from referee.speech.listen import Listener

log = logging.getLogger(__name__)


class Listening:
    """``listener`` (None: no recogniser, nothing decoded ahead) with the
    table's ``speaking_now()``."""

    def __init__(self, listener: Listener | None, speaking_now: Callable[[], bool]) -> None:
        self.listener = listener
        self.speaking_now = speaking_now

    @property
    def tail(self) -> float:
        """The quiet after a player's last sound at which their words are
        decoded ahead (the recogniser's; see the listener)."""
        return SPEECH_MARGIN if self.listener is None else self.listener.tail

    def pause(self, so_far: Audio, give_up: Callable[[], bool] | None = None,
              over: bool = False) -> None:
        """A player's speech paused: decode it ahead, in case they are done
        (given up midway if ``give_up()`` says they went on); ``over``: the
        referee is speaking."""
        if self.listener is None:
            return
        try:
            self.listener.pause(so_far, give_up, over)
        except Exception:  # a guess is only a guess: the utterance is decoded again
            log.exception("decoding ahead failed")

    def judge(self) -> str | None:
        """What a player's words so far are, at a pause (see the listener);
        "stop" while the referee speaks is acted on at the pause itself."""
        if self.listener is None:
            return None
        try:
            verdict = self.listener.judge()
        except Exception:  # a guess is only a guess: leave the end to the detector
            log.exception("judging the words so far failed")
            return None
        if self.listener.guessed_kind == "stop" and self.speaking_now():
            return URGENT
        return verdict
