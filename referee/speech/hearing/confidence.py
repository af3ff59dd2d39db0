"""How sure Whisper's hearing is: the calibration that turns what the scoring
measured into a probability (:func:`probability`), and the checks that lower
it (a primer the free transcript disagrees with, a name that was not said).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from referee.speech.hearing.measures import Measures

if TYPE_CHECKING:
    from referee.speech.understanding.intents import Heard

log = logging.getLogger(__name__)



#: are kept to it (``benchmarks.calibrate.SIGNS``): a worse fit never helps.
CALIBRATION = {
    "margin": 1.539, "total_margin": 0.000, "similarity": 1.946, "gap": 1.850,
    "nothing": 0.000, "best_length": -2.420, "free_length": -0.060, "primed_similarity": 4.277,
    "bias": -1.499,
}
#: The same for the model with the table's adapter (its sentences score
#: higher, so the same measures mean something else), fitted the same way on
#: the same tuning split, heard with the adapter (the two adapters averaged,
#: 2026-11-28: docs/record/2026-11-28-adapters-averaged.md).
TABLE_CALIBRATION = {
    "margin": 0.300, "total_margin": 0.885, "similarity": 0.101, "gap": 2.043,
    "nothing": 0.000, "best_length": -0.492, "free_length": -0.271, "primed_similarity": 1.206,
    "base_margin": 0.766, "sentence_confidence": 6.365, "free_confidence": 1.955,
    "bias": -4.841,
}
#: At or above HEARD_PROBABILITY the sentence is heard; below SURE_PROBABILITY a
#: move is asked about first ("Ann, did you say: flip Ann's 7?"). Chosen on the
#: tuning split (docs/results.md), over the four games, with the primer check
#: (:func:`primer_checked`): at 0.6, 1.2 % of the table-talk sentences and 6.4 %
#: of single words said at the table are taken for a command, and 76.5 % of the
#: commands and paraphrases in all rooms are heard right (0.5: 1.7 %, 7.1 %,
#: 77.9 %). At 0.95 three in four of the commands heard right are sure, and
#: 0.8 % of the sure ones are wrong.
HEARD_PROBABILITY = 0.6
#: The probability at which a ``lenient`` intent of the phrase file is heard:
#: one whose wrong hearing costs little and whose missing costs much (measured
#: on the tuning split of the four games: no table talk more taken). "stop"
#: only hushes the referee and is said over its voice: Whisper writes a bare
#: "stop" as "Star." often enough that 0.6 lost 6 of 108. A Turn 7 target
#: ("lock Bob", a bare "Cy") is said in answer to "Ann, who gets the Lock?" and
#: asked about when unsure; a bare name, one short word, often falls short of
#: 0.6 (4 of 192 more right, 1 more asked about wrongly). A yes or no at 0.5
#: gained nothing and took 8 table-talk lines more: not lenient.
LENIENT_PROBABILITY = 0.5
#: With the table's adapter a sentence is heard from 0.6: the lowest of 0.6,
#: 0.65, ... 0.95 at which every game's table-talk sentences taken stay under
#: 1.5 % on the tuning split (its talk widened to 40-50 sentences a game on
#: 2026-11-28; at 0.6 Shut the Box's were 1.4 %, Turn 7's and Phase 10
#: Twist's 1.2 %, Race to 65's 0.8 %).
TABLE_HEARD_PROBABILITY = 0.6
SURE_PROBABILITY = 0.95


@dataclass(frozen=True)
class Calibration:
    """One model's calibration: its features' weights (:func:`probability`) and
    the probabilities its sentences are heard at (``lenient``: a lenient
    intent's, see :data:`LENIENT_PROBABILITY`)."""

    weights: Mapping[str, float]
    heard: float = HEARD_PROBABILITY
    lenient: float = LENIENT_PROBABILITY

    def threshold(self, kind: str, lenient_kinds: Collection[str]) -> float:
        """The probability a sentence meaning an intent of this ``kind`` is heard at."""
        return self.lenient if kind in lenient_kinds else self.heard


#: Moonshine tiny's (``--ears moonshine-tiny``): fitted the same way, on the
#: same tuning split of the four games heard by Moonshine tiny (``./run bench
#: calibrate --model moonshine-tiny``; Moonshine has no adapter and no primer,
#: so the base margin and the primed similarity, the same as the margin and
#: the similarity, are not weighed). Heard from 0.75, the lowest at which
#: every game's tuning talk taken stays under 1.5 % (Race to 65: 1.43 %).
MOONSHINE_TINY_CALIBRATION = {
    "margin": 1.240, "total_margin": 0.914, "similarity": 4.655, "gap": 2.034, "nothing": 0.000,
    "best_length": -0.297, "free_length": -0.770, "sentence_confidence": 1.965,
    "free_confidence": 1.324, "bias": -2.760,
}
MOONSHINE_TINY_HEARD = 0.75
#: Moonshine base's: not fitted on its own hearings yet (its tuning split
#: heard by base takes about four times tiny's hour here); tiny's weights and
#: threshold, the nearer model, until it is. Its figures say so.
MOONSHINE_BASE_CALIBRATION = MOONSHINE_TINY_CALIBRATION
MOONSHINE_BASE_HEARD = MOONSHINE_TINY_HEARD

#: Each model's calibration, by the name its hearings carry (:attr:`Measures.model`):
#: Whisper tiny.en as shipped (``--model base``), with the table's adapter, and
#: each Moonshine. "base" and "table" are the older names of the first two.
CALIBRATIONS = {"base": Calibration(CALIBRATION),
                "table": Calibration(TABLE_CALIBRATION, heard=TABLE_HEARD_PROBABILITY),
                "moonshine-tiny": Calibration(MOONSHINE_TINY_CALIBRATION,
                                              heard=MOONSHINE_TINY_HEARD),
                "moonshine-base": Calibration(MOONSHINE_BASE_CALIBRATION,
                                              heard=MOONSHINE_BASE_HEARD)}
CALIBRATIONS["tiny.en"] = CALIBRATIONS["base"]
CALIBRATIONS["tiny.en+table"] = CALIBRATIONS["table"]


def calibration_of(model: object) -> Calibration:
    """The calibration of the model a hearing names (:attr:`Measures.model`):
    Whisper with the table's adapter when it names none it knows (older logs).

    >>> calibration_of("tiny.en") is CALIBRATIONS["base"]
    True
    >>> calibration_of(None) is CALIBRATIONS["table"]
    True
    """
    return CALIBRATIONS.get(str(model), CALIBRATIONS["table"])
#: Confidence given to a sentence heard but not sure (below SURE_SCORE).
UNSURE_CONFIDENCE = 0.75
#: An utterance whose loudest 20 ms is quieter than this (dBFS) is silence.
SILENCE_DBFS = -60.0


#: The lengths (tokens) the calibration weighs are held to 10, where the
#: sentences it was fitted on end (the four games' commands and table talk:
#: 97 % of them 10 tokens or fewer). Its length weights are negative (among
#: short commands, the longer were likelier table talk); beyond what it saw
#: they only extrapolated, and an order of 18 tokens heard word for word came
#: out unsure. Chosen on the café benchmark's training voices (the largest
#: cap at which their long sentences are acted on as often as their short
#: ones); on the games' held-out recordings it changes 4 decisions of 1,640,
#: right commands asked about that are now acted on (#37;
#: docs/record/2026-11-27-grammar-engine.md).
LENGTH_CAP = 10


def whisper_features(measures: Measures) -> dict[str, float]:
    """What the calibration weighs, from a hearing's measures: the
    margin (nats per token), the total margin (tens of nats), how alike the
    free transcript and the sentence are (0..1), and the primed transcript and
    the sentence (the free one's again without a primer), the gap to the best sentence
    that means something else (tens of nats, at most 1), how likely Whisper
    found it that nothing was said (the log-probability of ending at once, tens
    of nats), both lengths (tens of tokens, at most :data:`LENGTH_CAP`), the margin again with the
    sentence scored by the base model (``base_margin``: with the table's
    adapter, what Whisper as shipped makes of the sentence the adapted model
    found; the margin itself without an adapter), and the sentence's and the
    free transcript's mean probability per token (0..1: how sure each was,
    on a scale where a sure word and a very sure word differ little)."""
    m = measures
    best_logprob, best_length = m.best_logprob, m.best_length
    free_logprob, free_length = m.free_logprob, m.free_length
    if best_logprob is None:
        return {}
    base = best_logprob if m.base_logprob is None else m.base_logprob
    return {
        "margin": float(m.margin or 0.0),
        "base_margin": base / best_length - free_logprob / free_length,
        "sentence_confidence": math.exp(best_logprob / best_length),
        "free_confidence": math.exp(free_logprob / free_length),
        "total_margin": max(best_logprob - free_logprob, -30.0) / 10,
        "similarity": m.similarity / 100,
        "primed_similarity": (m.similarity if m.primed_similarity is None
                              else m.primed_similarity) / 100,
        "gap": min(m.gap, 10.0) / 10,
        "nothing": max(m.nothing, -20.0) / 10,
        "best_length": min(best_length, LENGTH_CAP) / 10,
        "free_length": min(free_length, LENGTH_CAP) / 10,
    }


def probability(features: dict[str, float], weights: Mapping[str, float] = CALIBRATION
                ) -> float:
    """The calibrated probability that Whisper heard a command right."""
    if not features:
        return 0.0
    z = weights["bias"] + sum(weights.get(k, 0.0) * v for k, v in features.items())
    return 1.0 / (1.0 + math.exp(-z))


#: Below this similarity (0..100) of the plain transcript and the best sentence,
#: the plain transcript does not support the sentence (see :func:`primer_checked`).
PLAIN_SUPPORT = 50.0


def primer_checked(chance: float, measures: Measures,
                   weights: Mapping[str, float] = CALIBRATION) -> float:
    """The probability once what only the primed transcript supports is checked.

    The primer names the game's commands, so Whisper writes after it the game's
    words for sounds that are not: "free" said at the table came out "Three."
    after the primer and "Free." without it, and a bare "three" (flip my three)
    was heard at 0.97. A sentence the plain transcript does not support (its
    similarity below :data:`PLAIN_SUPPORT`) while the primed one supports it
    better is never sure: it is asked about at most. A one-word sentence is
    then weighed as if the primed transcript had said what the plain one did:
    one word has no other words to confirm it. Chosen on the tuning split of
    the four games (docs/record/2026-11-22-whisper-tried.md).

    >>> heard = Measures(similarity=0.0, primed_similarity=100.0, best="three", margin=0.0,
    ...                  gap=10.0, nothing=-5.0, best_logprob=-1.0, best_length=3,
    ...                  free_logprob=-1.0, free_length=3)
    >>> probability(whisper_features(heard)) > 0.95, primer_checked(0.97, heard) < 0.6
    (True, True)
    """
    plain, primed = measures.similarity, measures.primed_similarity or 0.0
    if plain >= PLAIN_SUPPORT or primed <= plain:
        return chance
    chance = min(chance, math.nextafter(SURE_PROBABILITY, 0.0))
    if len(measures.best.split()) == 1:
        chance = min(chance, probability(
            whisper_features(replace(measures, primed_similarity=plain)), weights))
    return chance


def words_before(free: str, sentence: str) -> list[str]:
    """The words Whisper's own transcript has in front of what matches the
    sentence (numbers joined, punctuation and case dropped): the place where
    the transcript goes on as the sentence does, or nothing when the whole
    transcript matches it best.

    >>> words_before("And flip your turn down.", "flip your ten down")
    ['and']
    >>> words_before("Flip your 10 down.", "flip your ten down")
    []
    """
    from rapidfuzz import fuzz

    from referee.speech.understanding.numbers import join_numbers
    from referee.speech.understanding.templates import normalise_words

    words = join_numbers(normalise_words(free))
    target = " ".join(join_numbers(normalise_words(sentence)))
    likeness = [fuzz.ratio(" ".join(words[k:]), target) for k in range(len(words))]
    if not likeness:
        return []
    start = max(range(len(likeness)), key=lambda k: (likeness[k], -k))
    return words[:start] if likeness[start] > likeness[0] else []


#: How alike a word and a player's name must be to be taken for the name:
#: written (rapidfuzz ratio, 0..100: Whisper writes "Ann" as "And", 67) or
#: said (the share of their phones in common, 0..1: "Cy" as "Sigh" or "Psy").
NAME_SPELLING = 60.0
NAME_SOUND = 0.75


@lru_cache(maxsize=1024)
def _phones(word: str) -> tuple[str, ...]:
    from referee.speech.hearing.pronounce import pronounce

    return tuple((pronounce(word) or "").split())


def sounds_like(word: str, name: str) -> bool:
    """Whether Whisper's ``word`` may be the player's ``name`` misheard.

    >>> sounds_like("and", "Ann"), sounds_like("bob", "Bob"), sounds_like("um", "Bob")
    (True, True, False)
    """
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Indel

    name = name.lower()
    if fuzz.ratio(word, name) >= NAME_SPELLING:
        return True
    said, named = _phones(word), _phones(name)
    return bool(said and named) and Indel.normalized_similarity(said, named) >= NAME_SOUND


def name_checked(chance: float, measures: Measures, names: Collection[str]) -> float:
    """The probability once a name heard in front of the sentence is checked.

    ``names``: the players whose name, said before the best sentence, would
    make it another move (all the table's names when one would; none when no
    name would change it: see :func:`names_before`). When the word of the free
    transcript just before the sentence sounds like one of them, the name may
    have been lost: "Ann, flip your ten down" came out "flip your ten down"
    (the other player's tile) at 0.96-0.99 while the free transcript wrote
    "And flip your turn down." (Race to 65's tuning and held-out voices,
    docs/record/2026-11-28-lost-name.md). Such a sentence is never sure: it is asked about.

    >>> heard = Measures(free="And flip your turn down.", best="flip your ten down")
    >>> name_checked(0.99, heard, ["Ann", "Bob"]) < SURE_PROBABILITY
    True
    >>> name_checked(0.99, heard, []) == 0.99
    True
    """
    best = measures.best
    if not names or not best or chance < SURE_PROBABILITY:
        return chance
    before = words_before(measures.free, best)
    if before and any(sounds_like(before[-1], name) for name in names):
        return min(chance, math.nextafter(SURE_PROBABILITY, 0.0))
    return chance


def names_before(meaning: Callable[[str], Heard], names: Collection[str]
                 ) -> Callable[[str], tuple[str, ...]]:
    """For :func:`name_checked`: given a sentence of the grammar, the table's
    names if one of them said in front of it makes another move ("flip your
    ten down" is the other player's tile, "Ann flip your ten down" Ann's),
    else none. ``meaning`` reads a sentence for one speaker; who spoke is not
    known when the words are heard, so every name counts once one matters."""

    @lru_cache(maxsize=1024)
    def before(sentence: str) -> tuple[str, ...]:
        plain = meaning(sentence).intent
        for name in names:
            named = meaning(f"{name.lower()} {sentence}")
            if named.score >= 1.0 and named.intent != plain:
                return tuple(names)
        return ()

    return before


def decide(measures: Measures, weights: Mapping[str, float],
           heard_at: Callable[[str], float],
           names: Callable[[str], Collection[str]] | None = None
           ) -> tuple[str, float, float]:
    """What the referee makes of a hearing's measures: the text it
    heard (empty: nothing to act on), its confidence (1 sure,
    :data:`UNSURE_CONFIDENCE` asked about, 0 not heard) and the calibrated
    probability. ``heard_at(sentence)``: the probability that sentence is
    heard at (:meth:`WhisperRecognizer.heard_at`); ``names(sentence)``: the
    names that would change it said in front (:func:`names_before`). A pure
    function of the measures, so that a benchmark's dump can be judged again
    with another calibration."""
    best = measures.best
    chance = primer_checked(probability(whisper_features(measures), weights), measures, weights)
    if names is not None:
        chance = name_checked(chance, measures, names(best))
    if best and chance >= SURE_PROBABILITY:
        return best, 1.0, chance
    if best and chance >= heard_at(best):
        return best, UNSURE_CONFIDENCE, chance
    return "", 0.0, chance



def similarity(free: str, sentence: str) -> float:
    """How alike Whisper's own transcript and a sentence of the grammar are written,
    0..100 (numbers as digits, plural ones too: "fives" as Whisper's "5s";
    punctuation and case ignored).

    >>> similarity("Flip Bob's 8-pound.", "flip bob's eight down") > 80
    True
    >>> similarity("The pizza is here.", "that's right") < 50
    True
    >>> similarity("I lay down my Phase 3 5s and 3 7s.", "i lay down my phase three fives "
    ...            "and three sevens")
    100.0
    """
    from rapidfuzz import fuzz

    from referee.speech.hearing.grammar_tree import PLURAL_NUMBERS
    from referee.speech.understanding.numbers import join_numbers
    from referee.speech.understanding.templates import normalise_words

    def plain(text: str) -> str:
        words = join_numbers(normalise_words(text))
        return " ".join(f"{PLURAL_NUMBERS[w]}s" if w in PLURAL_NUMBERS else w for w in words)

    return float(fuzz.ratio(plain(free), plain(sentence)))


