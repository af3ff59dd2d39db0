"""What the referee waits for, and its decision on what it heard.

Pure functions of the game as it stands: whom the referee is waiting for
(:func:`awaited`), what it expects of them (:func:`expectation`), and its
decision on one recogniser's hearing with that in mind (:func:`decide`,
over :func:`referee.speech.hearing.decision.decide_expecting`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import lru_cache
from typing import Any

from referee.engine.core import Game
from referee.games.contract import Policy, Talk
from referee.speech.hearing.confidence import calibration_of, names_before
from referee.speech.hearing.decision import (
    ACT,
    ASK,
    NONE,
    REPEAT,
    Decision,
    Expectation,
    decide_expecting,
    options,
)
from referee.speech.hearing.interface import Transcript
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.wording import NOT_MOVES, SURE_SCORE


def awaited(spec: Talk, game: Game[Any], answerers: tuple[str, ...] | None,
            paused: bool) -> tuple[str, ...]:
    """The players the referee is waiting for: those its open question asks
    (``answerers``), else the player whose move it is, or every player when
    it waits for nobody in particular (Phase 10 Twist between reports: any of
    them may lay down); nobody while the game is paused or over."""
    if game.is_over() or paused:
        return ()
    if answerers is not None:
        return answerers
    player = spec.unnamed(game)
    return game.players if player is None else (player,)


def expectation(spec: Policy, game: Game[Any], matcher: IntentMatcher, who: str,
                waiting_for: tuple[str, ...], question_open: bool, at: float) -> Expectation:
    """What the referee expects of ``who`` now: with a question open, a yes
    or a no from one it asked; else a move the rules take from them now
    without a penalty (:meth:`~referee.games.contract.Policy.expects`), or a
    yes or no that answers the game's own question
    (:meth:`~referee.games.contract.Policy.answer_move`)."""

    @lru_cache(maxsize=16)
    def expects(sentence: str) -> bool:
        intent = matcher.match(sentence, who).intent
        if question_open or intent.kind == "answer":
            return intent.kind == "answer" and (
                question_open or spec.answer_move(intent, who, game) is not None)
        return intent.kind not in NOT_MOVES and spec.expects(intent, who, game, at)

    def answered(sentence: str) -> bool:  # (a question about the game, however unsure)
        return matcher.match(sentence, who).intent.kind == "query"

    return Expectation(who in waiting_for, expects, answered)


class Judge:
    """The referee's decisions on hearings for one table: the matcher's
    readings and the names a sentence would change, kept between hearings."""

    def __init__(self, matcher: IntentMatcher) -> None:
        self.matcher = matcher
        players = matcher.players or ("?",)
        self._names = names_before(lambda s: matcher.match(s, players[0]), matcher.players)

    def decide(self, transcript: Transcript, who: str,
               expecting: Expectation | None) -> Decision:
        """The decision on one hearing by ``who``; a hearing without the
        measures (another recogniser, an older log) is decided as its
        recogniser did. A part of the utterance heard again around its pause
        (``extra["part"]``: a command said with other words in one breath)
        is asked about when the whole was not heard, the speaker is awaited,
        and the part is a sentence expected of them, heard at the threshold
        of one nobody expects (a part is weaker evidence than a whole)."""
        own = _as_heard(transcript)
        extra = transcript.extra
        if not options(extra) or "probability" not in extra:
            return own
        calibration = calibration_of(extra.get("model"))

        def meaning(sentence: str) -> Intent:
            return self.matcher.match(sentence, who).intent

        names: Callable[[str], Collection[str]] = self._names
        weights = dict(calibration.weights)
        decision = decide_expecting(extra, own, weights, names, meaning, expecting)
        part = extra.get("part")
        if (decision.decision in (NONE, REPEAT) and isinstance(part, dict) and options(part)
                and expecting is not None and expecting.awaited):
            # A command said with other words in one breath ("Sheila, hit
            # me", "hit me, come on"): asked about, never acted on at once,
            # when it is one the referee expects of them.
            heard = decide_expecting(part, Decision(NONE, str(part.get("best") or ""),
                                                    float(part.get("probability") or 0.0)),
                                     weights, names, meaning, expecting)
            # (a part is weaker evidence than a whole: it is asked about
            # only from the threshold of a sentence nobody expects)
            if heard.decision == ASK and heard.probability >= calibration.threshold(
                    meaning(heard.sentence).kind, self.matcher.phrases.lenient_kinds):
                return heard
        return decision


def _as_heard(transcript: Transcript) -> Decision:
    """A recogniser's own decision (its text and confidence) as a :class:`Decision`."""
    chance = float(transcript.extra.get("probability") or transcript.confidence)
    if not transcript.text:
        return Decision(NONE, str(transcript.extra.get("best") or ""), chance)
    sure = transcript.confidence >= SURE_SCORE
    return Decision(ACT if sure else ASK, transcript.text, chance)
