"""From a transcript to a structured intent, with a score.

The matcher compares the transcript's words with every sentence of the
game's phrase file (see :mod:`referee.speech.understanding.templates`) by a
weighted word-level edit distance, without listing the sentences: it aligns
the transcript with each intent's compiled network
(:mod:`referee.speech.understanding.network`), so its time grows with the
templates' size, not with the number of sentences they stand for:

* a template word missing from the transcript costs its weight, an extra
  transcript word costs its own weight (1 for an unknown word, so "please" or
  a misheard filler barely matters, a number or a name much more);
* a slot matches one token of its kind whose value is in the slot's list
  (a tile, a call number, a player); it is never fuzzily substituted, so a
  misheard number is never silently turned into another number; a value of
  several words ("life saver") is matched as the template's own words are
  (one misheard, left out or put in costs its share of the slot's weight,
  up to half of it);
* a list slot (``{tiles...}``) is tried with one to ``most`` values, and a
  joiner word ("and") after one of its values costs nothing;
* a literal word may match a misspelling of itself (rapidfuzz ratio >= 0.75)
  at a fraction of its weight.

The score of an alignment is ``1 - cost / max(template weight, transcript
weight)``. An intent whose network cannot take enough of the transcript's
words to reach ``floor`` on its heaviest path (a transcript word it has
nowhere costs its whole weight) is not aligned at all: the same result, in
about a third of the time (most intents share no word with a sentence).
Candidates are grouped by the intent they would produce (after
resolving "my", "your", names and the speaker). The ranking is deterministic:

* the best intent is returned when it scores at least ``accept`` and no other
  intent comes within ``margin`` of it (and within ``MARGIN_COST`` of its
  cost: a margin in score alone grows with the sentence, and a long command
  would tie with itself less one adjective);
* several intents within ``margin`` of the best, all above ``floor``, give an
  ``ambiguous`` intent with the candidates: the caller asks, never guesses;
* otherwise the ``none`` intent.

Intents are typed values (:class:`~referee.speech.understanding.meaning.Intent`).

A near miss (a tile number that does not exist, a name that is not at the
table) is reported as ``none`` with a ``message`` to say to the players.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from referee.speech.understanding.alignment import Alignment, Compiled, Label, Tok
from referee.speech.understanding.meaning import NONE, Intent, ambiguous
from referee.speech.understanding.network import compile_intent
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.phrase_files import load_phrases
from referee.speech.understanding.templates import (
    Fills,
    IntentTemplate,
    PhraseSet,
    SlotRef,
    Word,
    normalise_words,
)

#: A field meaning "the player spoken to" ("you", "your") at a table of more
#: than two, left for the session to resolve (see ``Answers._addressed``).
ADDRESSEE = "$addressee"

ACCEPT = 0.75
FLOOR = 0.6
MARGIN = 0.05
#: ... and in cost, whatever the sentence's length: less than any plain word
#: (weight 1) weighs, so one word more or less is never a tie. Up to a
#: sentence weighing 15 (most commands) the relative margin is the smaller.
MARGIN_COST = 0.75
FUZZY_WORD = 0.75
UNKNOWN_WORD_WEIGHT = 1.5
MAX_WORDS = 40
#: Cost of a name heard without its "'s", or with one it should not have.
POSSESSIVE_SLIP = 1.0


@dataclass(frozen=True)
class Heard:
    """What the matcher made of one transcript."""

    text: str
    intent: Intent
    score: float
    #: A sentence to say when the transcript nearly was a command but named
    #: something the game does not have ("There is no tile 13.").
    message: str | None = None
    #: The kind of slot ("number", "player", "words") the transcript named a
    #: value of that the game does not have ('' for none): what made
    #: :attr:`message` a near miss rather than advice.
    missed: str = ""
    #: The command the near miss nearly was, without the value it missed
    #: ("flip my thirteen": a flip of Ann's, no tile).
    near: Intent | None = None

    @property
    def kind(self) -> str:
        return self.intent.kind

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "intent": self.intent.to_json(),
                               "score": self.score}
        if self.message:
            out["message"] = self.message
        return out


@dataclass
class _Candidate:
    score: float
    intent: Intent
    near_miss: list[tuple[str, str]] = field(default_factory=list)
    #: The larger of the sentence's and the transcript's weight (the score's divisor).
    weight: float = 1.0

    @property
    def key(self) -> str:
        return json.dumps(self.intent.to_json(), sort_keys=True)


def _fills(said: Sequence[tuple[SlotRef, str]]) -> Fills:
    """The slot tokens of an alignment: one per slot, the values in order for a list."""
    fills: Fills = {}
    for ref, value in said:
        if ref.many:
            before = fills.get(ref.name, ())
            fills[ref.name] = (*before, value) if isinstance(before, tuple) else (value,)
        else:
            fills[ref.name] = value
    return fills


_SPLIT = re.compile(r"[^\w'\u2019-]+")


class IntentMatcher:
    """Maps transcripts to intents for one game and one table of players."""

    def __init__(
        self,
        phrases: PhraseSet,
        players: Sequence[str],
        *,
        accept: float = ACCEPT,
        floor: float = FLOOR,
        margin: float = MARGIN,
        remember: int | None = 512,
    ) -> None:
        self.phrases = phrases
        self.players = tuple(players)
        self.accept = accept
        self.floor = floor
        self.margin = margin
        slot = phrases.player_slot
        self._names = dict(slot.values) if slot is not None else {}
        self._names.update({" ".join(normalise_words(p)): p for p in self.players})
        self._multiword = sorted(
            (tuple(k.split()) for k in self._names if " " in k), key=len, reverse=True
        )
        self._vocabulary = phrases.vocabulary()
        #: Each intent's network (:mod:`~referee.speech.understanding.network`):
        #: the matcher aligns a transcript with it, never with its sentences.
        self._networks = [Compiled(compile_intent(phrases, intent), self._template_weight,
                                    phrases.slots)
                          for intent in phrases.intents]
        #: The values of more than one word of each slot, by each of their words.
        self._long_values: dict[str, dict[str, list[tuple[str, tuple[str, ...]]]]] = {}
        for name, slot in phrases.slots.items():
            for key in slot.values:
                words = tuple(key.split())
                if len(words) > 1 and slot.kind != "player":
                    for word in dict.fromkeys(words):
                        self._long_values.setdefault(name, {}).setdefault(word, []).append(
                            (key, words))
        self._longest = {name: max(len(words) for entries in values.values()
                                   for _, words in entries)
                         for name, values in self._long_values.items()}
        #: ``match(text, speaker) -> Heard``, remembering the last ``remember``
        #: transcripts (None: every one, for a benchmark reading a dump again).
        self.match = lru_cache(maxsize=remember)(self._match)

    @classmethod
    def for_phrases(cls, path: Path, players: Sequence[str], **options: Any) -> IntentMatcher:
        """The matcher of the phrase file at ``path``."""
        return cls(load_phrases(path, players), players, **options)

    # --- tokens ------------------------------------------------------------------
    def tokenise(self, text: str) -> list[Tok]:
        """The transcript as typed tokens: numbers, names, words."""
        raw = [w.strip("'\u2019") for w in _SPLIT.split(text.replace("-", " "))]
        capitals = {w.casefold() for w in raw if w[:1].isupper()}
        words = join_numbers(normalise_words(text))[:MAX_WORDS]
        words = self._join_names(words)
        tokens = []
        for word in words:
            if word not in self._names and word.endswith("s") and word[:-1] in self._names:
                word = word[:-1] + "'s"  # "bobs" typed without the apostrophe
            capital = word in capitals or word.removesuffix("'s") in capitals
            tokens.append(Tok(word, self._kind(word), capital))
        return tokens

    def _join_names(self, words: list[str]) -> list[str]:
        if not self._multiword:
            return words
        out: list[str] = []
        i = 0
        while i < len(words):
            for name in self._multiword:
                n = len(name)
                window = words[i : i + n]
                if tuple(window[:-1]) == name[:-1] and window and (
                    window[-1] in (name[-1], name[-1] + "'s")
                ):
                    suffix = "'s" if window[-1] != name[-1] else ""
                    out.append(" ".join(name) + suffix)
                    i += n
                    break
            else:
                out.append(words[i])
                i += 1
        return out

    def _kind(self, word: str) -> str:
        if word.isdigit():
            return "number"
        if word in self._names:
            return "player"
        if word.endswith("'s") and word[:-2] in self._names:
            return "possessive"
        if word in self._vocabulary:
            return "word"
        return "unknown"

    def _token_weight(self, tok: Tok) -> float:
        if tok.kind == "number":
            return 4.0
        if tok.kind in ("player", "possessive"):
            slot = self.phrases.player_slot
            return slot.weight if slot else 4.0
        if tok.kind == "word":
            return self.phrases.word_weight(tok.text)
        return UNKNOWN_WORD_WEIGHT

    def _template_weight(self, token: Word | SlotRef) -> float:
        if isinstance(token, SlotRef):
            return self.phrases.slots[token.name].weight
        if token.text.isdigit():  # "roll 1 die": weighs what a said number weighs
            return self._token_weight(Tok(token.text, "number", False))
        return self.phrases.word_weight(token.text)

    # --- alignment ---------------------------------------------------------------
    def substitute(
        self, token: Word | SlotRef, tok: Tok, weight: float
    ) -> tuple[float, str | None, bool]:
        """Cost of matching ``token`` with ``tok``, the slot value, near miss."""
        if isinstance(token, Word):
            if token.text == tok.text:
                return 0.0, None, False
            if tok.kind == "unknown" and min(len(token.text), len(tok.text)) >= 3:
                ratio = fuzz.ratio(token.text, tok.text) / 100.0
                if ratio >= FUZZY_WORD:
                    return weight * (1.0 - ratio) * 2.0, None, False
            return float("inf"), None, False
        slot = self.phrases.slots[token.name]
        if slot.kind == "player":
            wanted = "possessive" if token.possessive else "player"
            if tok.kind == wanted:
                return 0.0, tok.base, False
            if tok.kind in ("player", "possessive"):
                return POSSESSIVE_SLIP, tok.base, False  # "read Bob board": the 's dropped
            looks_like_name = tok.kind == "unknown" and tok.capital
            if looks_like_name and token.possessive == tok.text.endswith("'s"):
                return 0.0, tok.text.removesuffix("'s"), True  # "Carl's": no player Carl
            return float("inf"), None, False
        if token.possessive:
            return float("inf"), None, False
        if tok.text in slot.values:
            return 0.0, tok.text, False
        if slot.kind == "number" and tok.kind == "number":
            return 0.0, tok.text, True
        return float("inf"), None, False

    def slot_matches(self, ref: SlotRef, toks: list[Tok], j: int, weight: float
                      ) -> list[tuple[int, float, str, bool]]:
        """How a slot can match the transcript from token ``j``: (tokens
        taken, cost, value, near miss) for each way. A value of several words
        ("life saver", "plus 4") is matched as the template's own words are: a
        word misheard ("life savor"), left out or put in costs its share of
        the slot's weight, up to half of it; a value of one word (a number, a
        name, a colour) only as it is."""
        out = []
        values = self._long_values.get(ref.name)
        if values and not ref.possessive:
            window = toks[j:j + 1 + self._longest[ref.name]]
            candidates: dict[str, tuple[str, ...]] = {}
            for tok in window:
                for key, words in values.get(tok.text, ()):
                    candidates[key] = words
                if tok.kind == "unknown" and len(tok.text) >= 3:
                    for word, entries in values.items():
                        if len(word) >= 3 and fuzz.ratio(word, tok.text) >= FUZZY_WORD * 100:
                            candidates.update(entries)
            for key, words in candidates.items():
                for taken, cost in self._value_alignments(words, toks, j, weight):
                    out.append((taken, cost, key, False))
        cost, value, near = self.substitute(ref, toks[j], weight)
        if value is not None and cost != float("inf"):
            out.append((1, cost, value, near))
        return out

    def _value_alignments(self, words: tuple[str, ...], toks: list[Tok], j: int,
                          weight: float) -> list[tuple[int, float]]:
        """(tokens taken, cost) for each stretch of the transcript from ``j``
        that says the value's words with at most half its weight amiss, its
        first token one of the value's words."""
        share = weight / len(words)
        units = [Word(w) for w in words]
        if all(self.substitute(u, toks[j], share)[0] == float("inf") for u in units):
            return []  # a word put in before the value is the sentence's, not the value's
        found = []
        for taken in range(1, min(len(words) + 1, len(toks) - j) + 1):
            stretch = toks[j:j + taken]
            row = [share * i for i in range(len(units) + 1)]
            for tok in stretch:
                extra = self._token_weight(tok)
                new = [row[0] + extra]
                for i, unit in enumerate(units, start=1):
                    said = self.substitute(unit, tok, share)[0]
                    new.append(min(row[i] + extra, new[i - 1] + share, row[i - 1] + said))
                row = new
            if row[-1] <= weight / 2:
                found.append((taken, row[-1]))
        return found

    def _align(self, net: Compiled, toks: list[Tok], tok_weights: list[float],
               total_u: float) -> list[Label]:
        """The transcript aligned with an intent's network: a weighted edit
        distance over the network's paths, by dynamic programming over
        (node, tokens read) (:class:`Alignment`). Returns the labels at the
        final nodes after the last token."""
        return Alignment(self, net, toks, tok_weights, total_u).run()

    # --- resolution ----------------------------------------------------------------
    def _resolve(self, template: IntentTemplate, fills: Fills, speaker: str) -> list[Intent]:
        """The intents a matched template stands for (several if "your" is unclear)."""
        intents: list[dict[str, Any]] = [{}]
        for name, spec in template.fields.items():
            options: list[Any]
            if isinstance(spec, str) and spec.startswith("{") and spec.endswith("}"):
                slot_name = spec[1:-1]
                token = fills.get(slot_name)
                slot = self.phrases.slots[slot_name]
                if isinstance(token, tuple) or slot.most > 1:
                    tokens = (token,) if isinstance(token, str) else token or ()
                    options = [tuple(slot.values.get(t, t) for t in tokens
                                     if t not in slot.leave_out)]
                elif token is None:
                    options = [None]
                elif slot.kind == "player":
                    options = [self._names.get(token, token)]
                else:
                    options = [slot.values.get(token, token)]
            elif isinstance(spec, list):
                values = []
                for item in spec:
                    token = fills.get(str(item)[1:-1])
                    if isinstance(token, str):
                        values.append(self.phrases.slots[str(item)[1:-1]].values.get(token, token))
                options = [values]
            elif spec == "$speaker":
                options = [speaker]
            elif spec == "$addressee":
                others = [p for p in self.players if p != speaker] or [speaker]
                # With two players "you" is the other one; with more, the
                # session knows whom the speaker is talking to (ADDRESSEE).
                options = others if len(others) == 1 else [ADDRESSEE]
            elif spec == "$everyone":
                options = [None]
            else:
                options = [spec]
            intents = [{**i, name: o} for i in intents for o in options]
        return [Intent.from_json(i) for i in intents]

    # --- matching --------------------------------------------------------------------
    def _match(self, text: str, speaker: str) -> Heard:
        toks = self.tokenise(text)
        if not toks:
            return Heard(text, NONE, 0.0)
        tok_weights = [self._token_weight(t) for t in toks]
        total_u = sum(tok_weights)
        best: dict[str, _Candidate] = {}
        near: _Candidate | None = None
        for template, net in zip(self.phrases.intents, self._networks, strict=True):
            if net.out_of_reach(toks, tok_weights, total_u, self.floor):
                continue
            # The best alignment for each way of filling the slots: two readings
            # of one template that differ in a slot are two candidates.
            kept: dict[str, tuple[float, float, Fills]] = {}  # score, weight, fills
            for cost, weight, slots_said, misses in self._align(net, toks, tok_weights, total_u):
                score = max(0.0, 1.0 - cost / max(weight, total_u))
                if score < self.floor:
                    continue
                fills = _fills(slots_said)
                if any(isinstance(v, tuple) and set(v) <= self.phrases.slots[n].leave_out
                       for n, v in fills.items()):
                    continue  # a list of words that mean nothing ("a") lists nothing
                if misses:
                    for intent in self._resolve(template, fills, speaker):
                        if near is None or score > near.score:
                            near = _Candidate(score, intent, list(misses))
                    continue
                key = json.dumps(fills, sort_keys=True)
                if key not in kept or score > kept[key][0]:
                    kept[key] = (score, max(weight, total_u), fills)
            for score, weight, fills in kept.values():
                for intent in self._resolve(template, fills, speaker):
                    key = json.dumps(intent.to_json(), sort_keys=True)
                    if key not in best or score > best[key].score:
                        best[key] = _Candidate(score, intent, weight=weight)
        ranked = sorted(best.values(), key=lambda c: (-c.score, c.key))
        top = ranked[0].score if ranked else 0.0
        if near is not None and near.score >= self.accept and near.score > top + self.margin:
            return Heard(text, NONE, round(top, 3), self._near_miss_message(near),
                         self.phrases.slots[near.near_miss[0][0]].kind, near.intent)
        if not ranked:
            return Heard(text, NONE, 0.0, self._hint(toks))
        margin = min(self.margin, MARGIN_COST / ranked[0].weight)
        close = [c for c in ranked if c.score >= top - margin]
        if len(close) > 1:
            return Heard(text, ambiguous(c.intent for c in close[:4]), round(top, 3))
        if top >= self.accept:
            return Heard(text, ranked[0].intent, round(top, 3))
        return Heard(text, NONE, round(top, 3), self._hint(toks))

    def _hint(self, toks: list[Tok]) -> str | None:
        """The phrase file's advice for a sentence with a telling word ("flip")."""
        for tok in toks:
            if tok.text in self.phrases.hints:
                return self.phrases.hints[tok.text]
        return None

    def _near_miss_message(self, candidate: _Candidate) -> str:
        slot_name, value = candidate.near_miss[0]
        slot = self.phrases.slots[slot_name]
        shown = self._names.get(value, value.title() if slot.kind == "player" else value)
        if slot.near_miss:
            return slot.near_miss.format(value=shown)
        if slot.kind == "player":
            return f"There is no player called {shown}."
        return f"{shown} is not a {slot_name.replace('_', ' ')} here."

