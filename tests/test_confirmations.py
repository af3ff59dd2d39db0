"""A question the referee asks before it plays a move it is unsure of must name
the move in a way nobody says yes to by mistake (issue #36: "hint", heard as
"hit", was asked as "did you say: hit?", and a yes took a card).

Every game's grammar is searched for moves whose sentence sits within two
letters of a question's, an answer's or a table command's; the confirmation of
each such move must not sound like the other sentence.
"""

from __future__ import annotations

import functools
import math
import re

import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from harness.brain import Drive
from referee.games import find_game
from referee.games.base import GameSpec
from referee.speech.understanding.intents import Heard, IntentMatcher
from referee.speech.understanding.numbers import number_to_words
from referee.speech.understanding.templates import (
    Expansion,
    PhraseSet,
    SlotRef,
    expand_sentences,
    slot_values,
)
from referee.wording import NOT_MOVES

GAMES = ["race65", "shut-the-box", "turn7", "phase10-twist"]
PLAYERS = ["Ann", "Bob"]


def _spec(game: str) -> GameSpec:
    """The game at its default options, a virtual deck dealt the same every
    run (a deal that began with a Turn Three asked Bob who gets it first)."""
    spec_class = find_game(game)
    options = spec_class.options_type().to_json()
    if "seed" in options:
        options["seed"] = 1
    return spec_class(PLAYERS, spec_class.options_type.from_json(options))


@functools.cache
def near_pairs(game: str) -> list[tuple[str, str, str]]:
    """(move sentence, the near sentence, its kind): sentences of up to four
    words, at most two letters apart (and at most half the shorter one)."""
    matcher = IntentMatcher.for_phrases(_spec(game).phrase_file, PLAYERS)
    moves: dict[str, str] = {}
    others: dict[str, str] = {}
    phrases = matcher.phrases
    for template in phrases.intents:
        kind = template.fields["kind"]
        for expansion in template.expansions:
            # (List slots without their joiners: with them, Phase 10's read-outs
            # unroll to millions of sequences.)
            for unrolled in phrases.unroll(expansion, joiners=False):
                if len(unrolled) > 4 or _sentences(phrases, unrolled) > 20_000:
                    continue
                for words, _ in expand_sentences(phrases, unrolled):
                    if len(words.split()) <= 4:
                        (others if kind in NOT_MOVES else moves).setdefault(words, kind)
    return [(move, other, kind) for move in moves for other, kind in others.items()
            if (d := Levenshtein.distance(move, other)) <= 2 and d <= min(len(move),
                                                                             len(other)) // 2]


def _sentences(phrases: PhraseSet, expansion: Expansion) -> int:
    """How many sentences an unrolled expansion stands for."""
    return math.prod(len(slot_values(phrases.slots[t.name])) if isinstance(t, SlotRef) else 1
                     for t in expansion)


def _words(text: str) -> str:
    """A sentence as words, lower case, numbers spelled ("Ann, is your card 9?"
    -> "ann is your card nine")."""
    text = re.sub(r"\d+", lambda m: number_to_words(int(m[0])), text.lower())
    return " ".join(re.findall(r"[a-z']+", text))


@pytest.mark.slow
def test_the_grammars_have_near_pairs_to_check():
    """The search finds the pair of the report, so the test below can fail."""
    assert ("hit", "hint", "query") in near_pairs("turn7")
    assert sum(len(near_pairs(game)) for game in GAMES) > 10


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.slow
def test_a_confirmation_never_sounds_like_the_question_it_may_have_been(game):
    spec = _spec(game)
    matcher = IntentMatcher.for_phrases(spec.phrase_file, PLAYERS)
    for move, other, kind in near_pairs(game):
        intent = matcher.match(move, "Ann").intent
        if intent.kind in ("none", "ambiguous"):  # (alone, it is not taken for anything)
            continue
        assert intent.kind not in NOT_MOVES, move
        asked = _words(spec.confirmation(intent, "Ann"))
        named = asked.removeprefix("ann ").removeprefix("did you say ")
        assert named != _words(move), (game, move, asked)  # it names the move, not the words
        assert fuzz.ratio(named, _words(other)) < 60, (game, move, other, kind, asked)


def test_hint_heard_as_hit_is_asked_as_another_card_and_a_no_takes_nothing():
    """The report's case through the session: an unsure "hit" asks about a card."""
    spec = _spec("turn7")
    session = Drive(spec)
    session.start()
    hit = IntentMatcher.for_phrases(spec.phrase_file, PLAYERS).match("hit", "Bob")
    said = session.respond(Heard("hit", hit.intent, 0.75), "Bob", 1.0, sure=False,
                           source="mic")  # (Bob decides first: Ann deals)
    assert [s.text for s in said] == ["Bob, do you want another card?"]
    mark = session.mark()
    session.hear("no", "Bob", 2.0)
    assert session.changed_since(mark) == []  # no card was dealt
