"""Words heard again with their rest: "flip my seven" ... "up".

The ears end an utterance at a pause when its words are a whole command
(docs/hearing.md, "When an utterance ends"). A player who goes on a moment
later said the rest of it, and the ears hear the two again as one utterance
(:meth:`~referee.speech.listen.Listener.whole`): speech that begins where the
part began. This room keeps the last utterance heard from each stream (its
microphone, phone or satellite, and speaker) with what came of it, and says
whether the whole is the same move as the part; what the whole then does is
the session's (:meth:`~referee.session.Session._rest_of`).

The room also reads what the referee expects of a speaker from the brain's
state (:meth:`Parts._expecting`, which the hearing room's view carries, and
:meth:`Parts._so_far`, the ears' question while a player is still
speaking: :class:`~referee.protocol.SoFar`), and logs an utterance dropped.
What is decided of a hearing is the hearing room's (:mod:`referee.brain.hearing`).
"""

from __future__ import annotations

import logging
from typing import Any

from referee.brain.hearing import awaited, expectation
from referee.brain.shared import Part, Question, Shared
from referee.engine.core import Game, Rejection
from referee.protocol import Expected, SoFar, Speech
from referee.records import DroppedRecord
from referee.speech.hearing.decision import Expectation
from referee.speech.understanding.meaning import Intent
from referee.wording import NOT_MOVES

log = logging.getLogger(__name__)


class Parts(Shared):
    """What the referee expects of a speaker, the last utterance of each
    stream, and whether its whole is the same move; sure or not, dropped."""

    def _expecting(self, who: str) -> Expectation:
        """What the referee expects of ``who`` now (:mod:`referee.brain.hearing`)."""
        question = self.question
        waiting = awaited(self.spec, self.game, None if question is None else question.answerers,
                          self.clock.paused)
        return expectation(self.spec, self.game, self.matcher, who, waiting,
                           question is not None, self.now)

    def _so_far(self, m: SoFar) -> Expected:
        """Whether the words said so far are a move the referee expects of
        their speaker now (None: no move, the game has no say); a failure
        is no opinion, never the end of the game."""
        try:
            who = self.attribute(m.speaker)
            if self.matcher.match(m.text, who).intent.kind in NOT_MOVES:
                return Expected(m.at, m.text, None)
            expecting = self._expecting(who)
            return Expected(m.at, m.text, expecting.awaited and expecting.expects(m.text))
        except Exception:
            log.exception("judging the words so far failed")
            return Expected(m.at, m.text, None)

    def _drop(self, m: Speech, reason: str) -> None:
        """``m`` is not acted on, for ``reason``: logged."""
        log.info("not acted on: %r (%s)", m.transcript.text, reason)
        self._log(DroppedRecord(m.at, m.source, m.speaker, m.transcript.text, reason))

    def _part_of(self, m: Speech) -> Part | None:
        """The last utterance heard from ``m``'s stream when ``m`` is it heard
        again with its rest (the ears marked it whole:
        :meth:`~referee.speech.listen.Listener.whole`; it began where that
        one did), else None (and None when the move it played was undone
        since: nothing to compare)."""
        part = self.parts.get((m.source, m.speaker))
        if part is None or not m.transcript.whole or m.start >= part.end:
            return None
        undone = part.moved is not None and part.moved[0] >= self.game.depth
        return None if undone else part

    def _heard_part(self, m: Speech, who: str, intent: Intent,
                    moved: tuple[int, str] | None, question: Question | None) -> None:
        """``m`` was heard as ``who``'s ``intent``: it played ``moved`` (the
        game's depth before the move and the move), or opened ``question``,
        or neither."""
        part = Part(m.start, m.end, m.at, who, intent, moved, question)
        self.parts = {**self.parts, (m.source, m.speaker): part}

    def _same_move(self, whole: Intent, part: Part) -> bool:
        """Whether ``whole``, said by the part's speaker, is the move ``part``
        played (it leaves the game as that move did, from where it stood
        before it: "flip my seven down" for "flip my seven" that turned the
        seven down) or asked about (the same, from now); a whole the rules
        refuse there is another."""
        if part.moved is not None:
            depth = part.moved[0]
            played: dict[str, Any] | None = self.spec.public_state(self.game.before(depth + 1))
            return self._after(whole, part.who, self.game.before(depth)) == played
        if part.question is None:
            return False
        asked = self._after(part.question.intent, part.question.by, self.game)
        return asked is not None and self._after(whole, part.who, self.game) == asked

    def _after(self, intent: Intent, who: str, game: Game[Any]) -> dict[str, Any] | None:
        """What everyone would see after ``intent`` played in ``game`` (on a
        copy: nothing is kept), or None when it is no move or the rules
        refuse it there."""
        if intent.kind in NOT_MOVES:
            return None
        then = game.before(game.depth)
        try:
            then.apply(self.spec.action_for(intent, who, then), self.now)
        except Rejection:
            return None
        return self.spec.public_state(then)
