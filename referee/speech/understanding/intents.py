"""From a transcript to a structured intent, with a score.

The matcher compares the transcript's words with every expansion of every
template of the game's phrase file (see :mod:`referee.speech.understanding.templates`) by a
weighted word-level edit distance:

* a template word missing from the transcript costs its weight, an extra
  transcript word costs its own weight (1 for an unknown word, so "please" or
  a misheard filler barely matters, a number or a name much more);
* a slot matches one token of its kind whose value is in the slot's list
  (a tile, a call number, a player); it is never fuzzily substituted, so a
  misheard number is never silently turned into another number;
* a list slot (``{tiles...}``) is tried with one to ``most`` values, and a
  joiner word ("and") after one of its values costs nothing;
* a literal word may match a misspelling of itself (rapidfuzz ratio >= 0.75)
  at a fraction of its weight.

The score of an alignment is ``1 - cost / max(template weight, transcript
weight)``. Candidates are grouped by the intent they would produce (after
resolving "my", "your", names and the speaker). The ranking is deterministic:

* the best intent is returned when it scores at least ``accept`` and no other
  intent comes within ``margin`` of it;
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

from referee.speech.understanding.meaning import NONE, Intent, ambiguous
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import (
    Expansion,
    Fills,
    IntentTemplate,
    PhraseSet,
    SlotRef,
    Word,
    load_phrases,
    normalise_words,
)

#: A field meaning "the player spoken to" ("you", "your") at a table of more
#: than two, left for the session to resolve (see ``Session.respond``).
ADDRESSEE = "$addressee"

ACCEPT = 0.75
FLOOR = 0.6
MARGIN = 0.05
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

    @property
    def kind(self) -> str:
        return self.intent.kind

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "intent": self.intent.to_json(),
                               "score": self.score}
        if self.message:
            out["message"] = self.message
        return out


@dataclass(frozen=True)
class _Tok:
    text: str
    kind: str  # "number" | "player" | "possessive" | "word" | "unknown"
    capital: bool = False

    @property
    def base(self) -> str:
        return self.text[:-2] if self.kind == "possessive" else self.text


@dataclass
class _Candidate:
    score: float
    intent: Intent
    near_miss: list[tuple[str, str]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return json.dumps(self.intent.to_json(), sort_keys=True)


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
    ) -> None:
        self.phrases = phrases
        self.players = tuple(players)
        self.accept = accept
        self.floor = floor
        self.margin = margin
        slot = phrases.slots.get("player")
        self._names = dict(slot.values) if slot is not None and slot.kind == "player" else {}
        self._names.update({" ".join(normalise_words(p)): p for p in self.players})
        self._multiword = sorted(
            (tuple(k.split()) for k in self._names if " " in k), key=len, reverse=True
        )
        self._vocabulary = phrases.vocabulary()
        self._templates = [
            (intent, unrolled)
            for intent in phrases.intents
            for expansion in intent.expansions
            for unrolled in phrases.unroll(expansion, joiners=False)
        ]
        #: Which sentence of the phrase file each unrolled one comes from: the
        #: lengths of one list slot are one sentence, so they never compete
        #: ("... and a wild" with or without the "a" in the read-out).
        self._origins = [
            (i, e)
            for i, intent in enumerate(phrases.intents)
            for e, expansion in enumerate(intent.expansions)
            for _ in phrases.unroll(expansion, joiners=False)
        ]
        #: The words that may pass for free after a value of each list slot.
        self._joiners = {
            name: frozenset(t.text for e in slot.joiner for t in e if isinstance(t, Word))
            for name, slot in phrases.slots.items() if slot.most > 1
        }
        self._all_joiners = frozenset().union(*self._joiners.values())
        self._weights = [
            [self._template_weight(t) for t in expansion] for _, expansion in self._templates
        ]
        #: ``match(text, speaker) -> Heard``, remembering recent transcripts.
        self.match = lru_cache(maxsize=512)(self._match)

    @classmethod
    def for_game(cls, game: str, players: Sequence[str], **options: Any) -> IntentMatcher:
        """The matcher of a registered game, by its name (tests, benchmarks, tools)."""
        from referee.games import find_game  # the registry; speech itself knows no game

        return cls.for_phrases(find_game(game).phrase_file, players, **options)

    @classmethod
    def for_phrases(cls, path: Path, players: Sequence[str], **options: Any) -> IntentMatcher:
        """The matcher of the phrase file at ``path``."""
        return cls(load_phrases(path, players), players, **options)

    # --- tokens ------------------------------------------------------------------
    def tokenise(self, text: str) -> list[_Tok]:
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
            tokens.append(_Tok(word, self._kind(word), capital))
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

    def _token_weight(self, tok: _Tok) -> float:
        if tok.kind == "number":
            return 4.0
        if tok.kind in ("player", "possessive"):
            slot = self.phrases.slots.get("player")
            return slot.weight if slot else 4.0
        if tok.kind == "word":
            return self.phrases.word_weight(tok.text)
        return UNKNOWN_WORD_WEIGHT

    def _template_weight(self, token: Word | SlotRef) -> float:
        if isinstance(token, SlotRef):
            return self.phrases.slots[token.name].weight
        if token.text.isdigit():  # "roll 1 die": weighs what a said number weighs
            return self._token_weight(_Tok(token.text, "number", False))
        return self.phrases.word_weight(token.text)

    # --- alignment ---------------------------------------------------------------
    def _substitute(
        self, token: Word | SlotRef, tok: _Tok, weight: float
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

    def _align(
        self, expansion: Expansion, weights: list[float], toks: list[_Tok], tok_weights: list[float]
    ) -> tuple[float, Fills, list[tuple[str, str]]]:
        n, m = len(expansion), len(toks)
        cost = [[0.0] * (m + 1) for _ in range(n + 1)]
        back = [[""] * (m + 1) for _ in range(n + 1)]
        for i in range(1, n + 1):
            cost[i][0] = cost[i - 1][0] + weights[i - 1]
            back[i][0] = "d"
        for j in range(1, m + 1):
            cost[0][j] = cost[0][j - 1] + tok_weights[j - 1]
            back[0][j] = "i"
        subs: dict[tuple[int, int], tuple[str | None, bool]] = {}
        for i in range(1, n + 1):
            token, w = expansion[i - 1], weights[i - 1]
            row, prev = cost[i], cost[i - 1]
            free = self._joiners.get(token.name, frozenset()) if (
                isinstance(token, SlotRef) and token.many) else frozenset()
            for j in range(1, m + 1):
                best, move = prev[j] + w, "d"
                inserted = row[j - 1] + (0.0 if toks[j - 1].text in free else tok_weights[j - 1])
                if inserted < best:
                    best, move = inserted, "i"
                sub_cost, value, near = self._substitute(token, toks[j - 1], w)
                if prev[j - 1] + sub_cost < best:
                    best, move = prev[j - 1] + sub_cost, "s"
                    subs[(i, j)] = (value, near)
                row[j] = best
                back[i][j] = move
        fills: Fills = {}
        near_misses: list[tuple[str, str]] = []
        i, j = n, m
        while i > 0 or j > 0:
            move = back[i][j]
            if move == "s":
                token = expansion[i - 1]
                value, near = subs[(i, j)]
                if isinstance(token, SlotRef) and value is not None:
                    if near:
                        near_misses.append((token.name, value))
                    elif token.many:  # read backwards: put each value before the later ones
                        fills[token.name] = (value, *fills.get(token.name, ()))
                    else:
                        fills[token.name] = value
                i, j = i - 1, j - 1
            elif move == "d":
                i -= 1
            else:
                j -= 1
        return cost[n][m], fills, near_misses

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
        joined = sum(w for t, w in zip(toks, tok_weights, strict=True)
                     if t.text in self._all_joiners)
        best: dict[str, _Candidate] = {}
        near: _Candidate | None = None
        per_origin: dict[tuple[int, int], tuple[float, list[_Candidate]]] = {}
        for (template, expansion), weights, origin in zip(
                self._templates, self._weights, self._origins, strict=True):
            total_t = sum(weights)
            # Cheap bound: the cost is at least the difference in weight (less
            # the joiner words, which may be free).
            if 1.0 - max(0.0, abs(total_t - total_u) - joined) / max(total_t, total_u) < self.floor:
                continue
            cost, fills, misses = self._align(expansion, weights, toks, tok_weights)
            score = max(0.0, 1.0 - cost / max(total_t, total_u))
            if score < self.floor:
                continue
            said = sum(len(v) if isinstance(v, tuple) else 1 for v in fills.values())
            if said + len(misses) < sum(isinstance(t, SlotRef) for t in expansion):
                continue  # a slot of the sentence was not said ("tell ... to flip 8")
            if misses:
                for intent in self._resolve(template, fills, speaker):
                    if near is None or score > near.score:
                        near = _Candidate(score, intent, misses)
                continue
            if origin in per_origin and per_origin[origin][0] >= score:
                continue
            per_origin[origin] = (score, [_Candidate(score, intent, misses) for intent
                                          in self._resolve(template, fills, speaker)])
        for _, candidates in per_origin.values():
            for candidate in candidates:
                key = candidate.key
                if key not in best or candidate.score > best[key].score:
                    best[key] = candidate
        ranked = sorted(best.values(), key=lambda c: (-c.score, c.key))
        top = ranked[0].score if ranked else 0.0
        if near is not None and near.score >= self.accept and near.score > top + self.margin:
            return Heard(text, NONE, round(top, 3), self._near_miss_message(near))
        if not ranked:
            return Heard(text, NONE, 0.0, self._hint(toks))
        close = [c for c in ranked if c.score >= top - self.margin]
        if len(close) > 1:
            return Heard(text, ambiguous(c.intent for c in close[:4]), round(top, 3))
        if top >= self.accept:
            return Heard(text, ranked[0].intent, round(top, 3))
        return Heard(text, NONE, round(top, 3), self._hint(toks))

    def _hint(self, toks: list[_Tok]) -> str | None:
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
