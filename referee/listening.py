"""A stream's listening: its listener decoding ahead and judging the words so
far, with what the table knows that words alone do not: the referee is
speaking, so a "stop" is acted on at the pause itself; the brain does not
expect the move said so far, so the rest of it is waited for ("shut four
..." on a roll of nine may go on "and five").

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
from referee.speech.hearing.segmenter import EXTENDABLE, UNEXPECTED, URGENT
from referee.speech.listen import Listener

log = logging.getLogger(__name__)


#: Whether the brain expects words said so far of this stream's speaker now:
#: True, False, or None (no move: the game has no say). The table asks the
#: brain (:class:`~referee.protocol.SoFar`).
Expects = Callable[[str], "bool | None"]


class Listening:
    """``listener`` (None: no recogniser, nothing decoded ahead) with the
    table's ``speaking_now()`` and, optionally, the brain's ``expects``."""

    def __init__(self, listener: Listener | None, speaking_now: Callable[[], bool],
                 expects: Expects | None = None) -> None:
        self.listener = listener
        self.speaking_now = speaking_now
        self.expects = expects

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
        "stop" while the referee speaks is acted on at the pause itself, and
        a move the brain does not expect now that more words could change is
        held for them (:data:`~referee.speech.hearing.segmenter.UNEXPECTED`)."""
        if self.listener is None:
            return None
        try:
            verdict = self.listener.judge()
        except Exception:  # a guess is only a guess: leave the end to the detector
            log.exception("judging the words so far failed")
            return None
        if self.listener.guessed_kind == "stop" and self.speaking_now():
            return URGENT
        # (a move the referee would refuse now, that more words could change:
        # "shut four" ... "and five" on a roll of nine)
        if (verdict == EXTENDABLE and self.expects is not None
                and self.expects(self.listener.guessed_text) is False):
            return UNEXPECTED
        return verdict
