"""What the referee decides about one Whisper hearing, knowing what it waits for.

The recogniser measures (:mod:`referee.speech.hearing.confidence`); the
referee decides, with what only it knows: who it is waiting for and what
they may do now. :func:`decide_expecting` turns a hearing's measures
(:class:`~referee.speech.hearing.measures.Measures`) and an
:class:`Expectation` into one of four decisions:

* ``act``: at :data:`~referee.speech.hearing.confidence.SURE_PROBABILITY`
  (0.95), exactly as without an expectation. The expectation never makes a
  sentence sure: what would only have been asked about is still asked about.
* ``ask``: "Ann, did you say: flip Ann's 7?" From the sentence's own
  threshold (0.6; 0.5 for a lenient intent) as before; and, for the player
  the referee waits for, from :data:`EXPECTED_HEARD` when the sentence is
  one it expects of them (a legal move of theirs, an answer to its open
  question). Before that, each expected sentence of the n-best is given
  :data:`PRIOR` nats more (a prior: on her turn, Ann's "seven" is likelier
  her move than "pause"), and the sentence that comes first then is judged
  with the calibration as the best one is. A question the referee would
  answer at once, heard unsure, with an expected sentence close behind it
  (at :data:`EXPECTED_HEARD` as the best) is ``contested``: "hint" heard and
  "hit" nearly is asked about ("Bob, did you say: ask for a hint?"), never
  answered over the move.
* ``repeat``: the awaited player said what looks like an attempt at a
  command (an expected sentence above :data:`REPEAT_FLOOR`, below its
  threshold): the referee says "Sorry, Ann?" (once a wait: the brain
  keeps count).
* ``none``: nothing the referee should act on (table talk, a cough).

Someone else than the awaited player (a seat microphone's player on another's
turn) is judged exactly as without an expectation: no prior, no lower
threshold, no prompt. With one table microphone every utterance is the
awaited player's unless its words name another (the brain attributes it).

Thresholds fitted on the tuning split only (real tuning speakers and the
synthetic tuning voices, with the game's state): docs/hearing.md, "What the
referee expects".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from referee.speech.hearing.confidence import (
    UNSURE_CONFIDENCE,
    name_checked,
    primer_checked,
    probability,
    similarity,
    whisper_features,
)
from referee.speech.hearing.measures import Measures

ACT, ASK, REPEAT, NONE = "act", "ask", "repeat", "none"
DECISIONS = (ACT, ASK, REPEAT, NONE)
#: Nats added to the score of a sentence the referee expects of the awaited player.
PRIOR = 3.0
#: The probability from which an expected sentence of the awaited player is asked about.
EXPECTED_HEARD = 0.1
#: The probability from which an expected sentence of the awaited player, not
#: heard, gets "Sorry, Ann?".
REPEAT_FLOOR = 0.02


@dataclass(frozen=True)
class Expectation:
    """What the referee waits for, for one utterance: whether its speaker is
    the player it waits for (``awaited``), and which sentences, said by them,
    it expects (``expects``: a legal move of theirs, an answer to the open
    question)."""

    awaited: bool
    expects: Callable[[str], bool]
    #: Which sentences the referee answers at once however unsure it is (a
    #: question about the game): confirmed first when a move it expects was
    #: heard nearly as well (#83).
    answered: Callable[[str], bool] = lambda sentence: False


@dataclass(frozen=True)
class Decision:
    """The referee's decision on one hearing."""

    decision: str
    #: The sentence decided on ('' for none; the sentence not heard for repeat).
    sentence: str
    #: Its calibrated probability.
    probability: float
    #: Whether the sentence was one the referee expected of the awaited player.
    expected: bool = False
    #: An unsure question with a sentence the referee expects of the awaited
    #: player close behind it ("hint" heard, "hit" nearly): asked about, not
    #: answered over the move.
    contested: bool = False
    #: The free transcript named a number the game does not have ("Flip my
    #: 13."): its sentence is that transcript, which the matcher reads as a
    #: near miss the rules refuse aloud ("There is no tile 13"), never a
    #: move onto a number the game has ("flip my 3?").
    near_miss: bool = False

    @property
    def text(self) -> str:
        """What the referee takes as said ('' unless it acts or asks)."""
        return self.sentence if self.decision in (ACT, ASK) else ""

    @property
    def confidence(self) -> float:
        """As a transcript's confidence: 1 sure, unsure, or 0."""
        return {ACT: 1.0, ASK: UNSURE_CONFIDENCE}.get(self.decision, 0.0)


def option_measures(measures: Measures, index: int, adjusted: Sequence[float],
                    meaning: Callable[[str], object]) -> Measures:
    """The measures of the hearing as if sentence ``index`` of its options
    were the best one, with scores ``adjusted`` (the prior added): what the
    calibration weighs (:func:`~referee.speech.hearing.confidence.whisper_features`)."""
    found = measures.options
    chosen = found[index]
    mine = meaning(chosen.words)
    others = [adjusted[j] for j, other in enumerate(found)
              if j != index and meaning(other.words) != mine]
    primed = measures.primed or measures.free
    return measures.as_if(chosen, adjusted[index] - max(others) if others else math.inf,
                          similarity(measures.free, chosen.words),
                          similarity(primed, chosen.words))


def decide_expecting(measures: Measures, own: Decision, weights: dict[str, float],
                     names: Callable[[str], Collection[str]] | None,
                     meaning: Callable[[str], object],
                     expectation: Expectation | None) -> Decision:
    """The decision on a hearing's measures given
    what the referee expects (None: nothing, as ``referee hear`` without a
    game), over the recogniser's ``own`` decision (what it acts on at once,
    or asks about, without an expectation: it stands, but for a sentence
    heard more readily as expected)."""
    as_before = replace(own, expected=_expects(expectation, own.sentence))
    found = measures.options
    if as_before.decision == ACT or expectation is None or not expectation.awaited or not found:
        return as_before
    expected = [expectation.expects(o.words) for o in found]
    adjusted = [o.score + PRIOR * e for o, e in zip(found, expected, strict=True)]
    first = max(range(len(found)), key=lambda i: (adjusted[i], -i))
    if not expected[first]:
        rival = max((i for i in range(len(found)) if expected[i]),
                    key=lambda i: (adjusted[i], -i), default=None)
        contested = (rival is not None and as_before.decision == ASK
                     and expectation.answered(as_before.sentence)
                     and _chance(measures, rival, adjusted, weights, names, meaning)
                     >= EXPECTED_HEARD)
        return replace(as_before, contested=contested)
    sentence = found[first].words
    chance = _chance(measures, first, adjusted, weights, names, meaning)
    if chance >= EXPECTED_HEARD:
        return Decision(ASK, sentence, chance, True)
    if as_before.decision == ASK:
        return as_before
    if chance >= REPEAT_FLOOR:
        return Decision(REPEAT, sentence, chance, True)
    return as_before


def _chance(measures: Measures, index: int, adjusted: Sequence[float],
            weights: dict[str, float], names: Callable[[str], Collection[str]] | None,
            meaning: Callable[[str], object]) -> float:
    """The calibrated probability of option ``index``, judged as the best one."""
    as_best = option_measures(measures, index, adjusted, meaning)
    chance = primer_checked(probability(whisper_features(as_best), weights), as_best, weights)
    if names is not None:
        chance = name_checked(chance, as_best, names(measures.options[index].words))
    return chance


def _expects(expectation: Expectation | None, sentence: str) -> bool:
    return (bool(sentence) and expectation is not None and expectation.awaited
            and expectation.expects(sentence))
