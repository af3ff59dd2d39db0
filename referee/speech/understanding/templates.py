"""Phrase templates: the one data file per game that says what players can say.

A phrase file (``phrases.toml`` in the game's folder, ``referee/games/<game>/``)
has slots, word weights
and intents. Each intent has fixed fields and a list of sentence templates in
the syntax of hassil:

* ``(flip | turn)``: one of the alternatives;
* ``[my]``: optional words;
* ``{tile}``: a slot, filled from the slot's values; ``{player}'s`` is the
  possessive form of a name slot;
* ``{tiles...}``: a list slot, one to ``most`` values of a slot declared with
  ``most = N``, separated by the slot's ``joiner`` (a template, "and" by
  default): "shut 3 4 and 5". It stays one token in the templates; the
  compiled network (:mod:`referee.speech.understanding.network`) gives it
  ``most`` places, never every combination of values.
  A slot's values are ``numbers = [low, high]``, ``words`` (a value may be
  several words: "life saver"), a ``values`` table of what is said and what
  it means (synonyms: ``lifesaver = "lifesaver"``, ``"life saver" =
  "lifesaver"``), or ``players = true``; a slot may have both ``numbers`` and
  ``words`` (Phase 10 Twist's read-out, "three fives and a wild"), and
  ``leave_out``: values heard but kept out of the intent ("a", "and").

Intent fields are JSON values; a string field ``"{slot}"`` takes the value of
that slot (null when the sentence has none; for a list slot, the list of the
values said, in order), a list of them
(``["{tile}", "{tile2}"]``) the list of the values the sentence has,
``"$speaker"`` the person who spoke and ``"$addressee"`` the one other player.
``include = ["common"]`` adds the intents of ``common.toml`` (conversation and
questions every game shares).

A template is read into its structure (:func:`parse_tree`), never into its
sentences; from the same structure come the intent matcher
(:mod:`referee.speech.understanding.intents`) and the recognisers' grammars,
so they never drift apart. A file is read by
:func:`~referee.speech.understanding.phrase_files.load_phrases`;
docs/phrases.md is the guide to writing one.

>>> [" ".join(map(str, e)) for e in parse_template("[i] flip (my|the) {tile}")]
['i flip my {tile}', 'i flip the {tile}', 'flip my {tile}', 'flip the {tile}']
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

from referee.speech.understanding.numbers import ascii_digits, join_numbers, number_to_words

PHRASE_DIR = Path(__file__).with_name("phrases")

DEFAULT_SLOT_WEIGHT = 4.0
DEFAULT_WORD_WEIGHT = 1.0


class TemplateError(ValueError):
    """A phrase file or template that does not parse."""


# --- template tokens ------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class SlotRef:
    name: str
    possessive: bool = False
    #: A list slot (``{tiles...}``): one to the slot's ``most`` values.
    many: bool = False

    def __str__(self) -> str:
        return "{" + self.name + ("..." if self.many else "") + "}" + (
            "'s" if self.possessive else "")


Token = Word | SlotRef
Expansion = tuple[Token, ...]


@dataclass(frozen=True)
class Choice:
    """Alternatives in a template: ``(a | b)``, or ``[a]`` (``a`` or nothing)."""

    options: tuple[Parts, ...]

    def __str__(self) -> str:
        said = [" ".join(map(str, option)) for option in self.options if option]
        inside = " | ".join(said)
        return f"[{inside}]" if len(said) < len(self.options) else f"({inside})"


#: A template's structure: words, slots and choices in a row.
Part = Word | SlotRef | Choice
Parts = tuple[Part, ...]

_LEX = re.compile(r"\{(\w+)(\.\.\.)?\}('s)?|[()\[\]|]|[^\s()\[\]|{}]+")
#: A slot with letters glued after it ("{drink}s"), which would read as a word "s".
_GLUED = re.compile(r"\{\w+(\.\.\.)?\}(?!'s\b)\w+")


@lru_cache(maxsize=16384)
def parse_tree(template: str) -> Parts:
    """A template's structure, never expanded: its size grows with the
    template's text, not with the sentences it stands for. Read once a
    template (the structure is immutable): each new table reads its phrase
    file again for its players.

    >>> [str(part) for part in parse_tree("flip [my] {tile}")]
    ['flip', '[my]', '{tile}']
    """
    pieces = [m.group(0) for m in _LEX.finditer(template)]
    consumed = "".join(pieces)
    if consumed != re.sub(r"\s+", "", template):
        raise TemplateError(f"cannot read template {template!r}")
    glued = _GLUED.search(template)
    if glued:
        raise TemplateError(f"{glued.group(0)!r} in {template!r}: a slot takes no letters after "
                            "it but 's; give the slot the forms said (\"lattes\") as values")
    pos = 0

    def seq() -> Parts:
        nonlocal pos
        parts: list[Part] = []
        while pos < len(pieces) and pieces[pos] not in (")", "]", "|"):
            piece = pieces[pos]
            pos += 1
            if piece in ("(", "["):
                options = alternatives(")" if piece == "(" else "]")
                parts.append(Choice((*options, ()) if piece == "[" else options))
            elif piece.startswith("{"):
                match = _LEX.fullmatch(piece)
                assert match is not None
                parts.append(SlotRef(match.group(1), bool(match.group(3)), bool(match.group(2))))
            else:
                parts.extend(Word(w) for w in join_numbers(normalise_words(piece)))
        return tuple(parts)

    def alternatives(close: str) -> tuple[Parts, ...]:
        nonlocal pos
        options = [seq()]
        while pos < len(pieces) and pieces[pos] == "|":
            pos += 1
            options.append(seq())
        if pos >= len(pieces) or pieces[pos] != close:
            raise TemplateError(f"missing {close!r} in template {template!r}")
        pos += 1
        return tuple(options)

    options = [seq()]
    while pos < len(pieces) and pieces[pos] == "|":
        pos += 1
        options.append(seq())
    if pos != len(pieces):
        raise TemplateError(f"unbalanced brackets in template {template!r}")
    return options[0] if len(options) == 1 else (Choice(tuple(options)),)


def expand_tree(parts: Parts) -> list[Expansion]:
    """Every token sequence a template's structure stands for, in order."""
    results: list[Expansion] = [()]
    for part in parts:
        if isinstance(part, Choice):
            options = [e for option in part.options for e in expand_tree(option)]
        else:
            options = [(part,)]
        results = [a + b for a in results for b in options]
    return results


def tree_tokens(parts: Parts) -> Iterator[Token]:
    """Every word and slot of a template's structure, once each place it is."""
    for part in parts:
        if isinstance(part, Choice):
            for option in part.options:
                yield from tree_tokens(option)
        else:
            yield part


def parse_template(template: str, keep_empty: bool = False) -> list[Expansion]:
    """All token sequences a template stands for, in a deterministic order
    (the empty one only if ``keep_empty``: a joiner may be nothing). For
    tests, tools and training: the matcher and the grammars never expand."""
    options = expand_tree(parse_tree(template))
    # Drop empty and repeated expansions (e.g. "[a] [a]") while keeping order.
    return list(dict.fromkeys(e for e in options if e or keep_empty))


# --- normalisation -----------------------------------------------------------------

_PUNCT = re.compile(r"[^\w'\s]+")
#: Letters that carry no accent to take off but are typed as plain ones.
_PLAIN_LETTERS = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l",
                                "þ": "th", "\u0131": "i"})


def fold_accents(text: str) -> str:
    """Lower case without accents, as a player types a name on any keyboard:
    "Zoë Ørjan" -> "zoe orjan" (names match whichever way they are written).

    >>> fold_accents("Zoë, Ørjan, José, Łucja")
    'zoe, orjan, jose, lucja'
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_PLAIN_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalise_words(text: str) -> list[str]:
    """Lower-case words without accents, punctuation removed; hyphens split words."""
    text = ascii_digits(text).replace("\u2019", "'").replace("-", " ").replace("_", " ")
    text = _PUNCT.sub(" ", fold_accents(text))
    words = []
    for word in text.split():
        word = word.strip("'")
        if word:
            words.append(word)
    return words


# --- slots ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A place in a sentence filled from a list of values.

    ``values`` maps the token that stands in a sentence (digits for numbers,
    a lower-case name) to the value the intent carries. ``kind`` says what sort
    of token belongs here, so that a token of the right kind with a value not
    in the list ("tile thirteen") is recognised as a near miss.
    """

    name: str
    kind: str  # "number" | "words" | "player"
    values: Mapping[str, Any]
    weight: float = DEFAULT_SLOT_WEIGHT
    spoken: Mapping[str, str] = field(default_factory=dict)
    #: The values a recogniser's grammar offers, when fewer than ``values``
    #: (calls: only the game's targets are worth listening for).
    grammar: tuple[str, ...] | None = None
    #: What to say when a token of this kind is not one of the values, with
    #: ``{value}`` standing for it ("There is no tile {value}.").
    near_miss: str = ""
    #: A list slot (``{tiles...}`` in a template) holds one to ``most`` values ...
    most: int = 1
    #: ... with one of these between two of them (the empty one: nothing).
    joiner: tuple[Expansion, ...] = ((),)
    #: Values heard in a list but left out of the intent (a read-out's "a" and
    #: "and": "three fives and a wild" means the same with or without them).
    leave_out: frozenset[str] = frozenset()
    #: How the recognisers listen for the list (``[slots.NAME.said]``): one to
    #: ``said_most`` of these parts (templates of words and other slots),
    #: ``said_joiner`` between two. Empty: its values one by one, as the
    #: matcher always reads them. Phase 10 Twist's read-out is listened for as
    #: "three fives and a run of four from six to nine", not as any twelve of
    #: its words, so "three fives" has no neighbour "three five" there.
    said: tuple[str, ...] = ()
    said_most: int = 1
    said_joiner: tuple[Expansion, ...] = ((),)

    @property
    def said_trees(self) -> tuple[Parts, ...]:
        """The structures of the ``said`` parts."""
        return _trees(self.said)

    def words_for(self, token: str) -> str:
        """How the token is said: digits spelled out, names as written."""
        return self.spoken.get(token, token)


@cache
def _trees(templates: tuple[str, ...]) -> tuple[Parts, ...]:
    return tuple(parse_tree(t) for t in templates)


def number_slot(name: str, low: int, high: int, weight: float, near_miss: str = "") -> Slot:
    values = {str(n): n for n in range(low, high + 1)}
    spoken = {str(n): number_to_words(n) for n in range(low, high + 1)}
    return Slot(name, "number", values, weight, spoken, near_miss=near_miss)


def player_slot(name: str, players: Sequence[str], weight: float, near_miss: str = "") -> Slot:
    """The table's names, and "player one", "player two"... which always work."""
    values: dict[str, str] = {}
    spoken: dict[str, str] = {}
    for seat, player in enumerate(players, start=1):
        values[" ".join(normalise_words(player))] = player
        alias = f"player {seat}"
        values[alias] = player
        spoken[alias] = f"player {number_to_words(seat)}"
    return Slot(name, "player", values, weight, spoken, near_miss=near_miss)


# --- phrase files ------------------------------------------------------------------------


@dataclass(frozen=True)
class IntentTemplate:
    """One intent of a phrase file: its fields and its sentence expansions."""

    fields: Mapping[str, Any]
    #: Each template's structure (:func:`parse_tree`), never expanded.
    trees: tuple[Parts, ...]
    #: The templates as written, for grammars that keep their structure.
    sentences: tuple[str, ...] = ()
    #: The moment this intent can be said (``when = "target"`` in the phrase file):
    #: a recogniser listens for it only then (:meth:`PhraseSet.only`). None: any time.
    when: str | None = None
    #: Heard on weaker evidence (``lenient = true`` in the phrase file): a wrong
    #: one costs little (it is asked about, or only hushes the referee) and a
    #: missed one much. What "weaker" means is the recogniser's to say.
    lenient: bool = False

    @cached_property
    def expansions(self) -> tuple[Expansion, ...]:
        """Every token sequence of the templates (for tests, tools and
        training; the matcher and the grammars use the structure)."""
        return tuple(dict.fromkeys(e for tree in self.trees for e in expand_tree(tree) if e))


@dataclass(frozen=True)
class PhraseSet:
    """A game's phrase file with its slots filled for one table."""

    game: str
    slots: Mapping[str, Slot]
    weights: Mapping[str, float]
    intents: tuple[IntentTemplate, ...]
    #: Advice for a transcript that is no command but has a telling word.
    hints: Mapping[str, str] = field(default_factory=dict)
    #: The game's name as players say it ("Race to 65"), for the recogniser's context.
    title: str = ""
    #: Phrases a player may put before or after a command ("okay", "please"):
    #: a recogniser may hear them around a sentence; they mean nothing.
    fillers_before: tuple[str, ...] = ()
    fillers_after: tuple[str, ...] = ()
    #: A few of the game's commands as players say them ("flip my nine",
    #: "{player}, flip your two down"), for the recogniser's context.
    examples: tuple[str, ...] = ()
    #: The file it was read from, as messages name it ("turn7/phrases.toml").
    source: str = ""

    def vocabulary(self) -> frozenset[str]:
        """Every literal word of every template, of the list slots' joiners and
        said parts, and of the slots' values of several words ("life saver")."""
        words: set[str] = set()
        for intent in self.intents:
            for tree in intent.trees:
                words.update(t.text for t in tree_tokens(tree) if isinstance(t, Word))
        for slot in self.slots.values():
            if slot.kind != "player":
                words.update(w for key in slot.values if " " in key for w in key.split())
        for slot in self.slots.values():
            words.update(t.text for e in (*slot.joiner, *slot.said_joiner) for t in e
                         if isinstance(t, Word))
            for tree in slot.said_trees:
                words.update(t.text for t in tree_tokens(tree) if isinstance(t, Word))
        return frozenset(words)

    @property
    def player_slot(self) -> Slot | None:
        """The slot the table's names fill (``players = true``), whatever it is called."""
        return next((slot for slot in self.slots.values() if slot.kind == "player"), None)

    @property
    def names(self) -> list[str]:
        """The players whose names the set was filled with, in seat order."""
        slot = self.player_slot
        return [str(v) for v in dict.fromkeys(slot.values.values())] if slot is not None else []

    def said_word(self, name: str) -> str | None:
        """The name as players say it when it is also a word of the phrases (a
        template's word or a slot's value: "A", "Skip", "Red"), else None. A
        player called so would be heard in every sentence with the word."""
        said = " ".join(join_numbers(normalise_words(name)))
        values = (key for slot in self.slots.values() if slot.kind != "player"
                  for key in slot.values)
        if said in self.vocabulary() or said in values:
            return said
        return None

    def unroll(self, expansion: Expansion, joiners: bool = True) -> list[Expansion]:
        """The expansion with each list slot written out as one to ``most``
        values (each a ``many`` slot reference), with the joiner's choices
        between them; without ``joiners``, the values alone (the intent
        matcher lets a joiner word between list values pass for free).

        Shut the Box's "(shut | close) [the] {tiles...}" becomes 4 x 15 token
        sequences for a grammar, whatever the number of tiles.
        """
        out: list[Expansion] = [()]
        for token in expansion:
            if not (isinstance(token, SlotRef) and token.many):
                out = [(*e, token) for e in out]
                continue
            slot = self.slots[token.name]
            gaps = slot.joiner if joiners else ((),)
            runs: list[Expansion] = [(token,)]
            lists = list(runs)
            for _ in range(slot.most - 1):
                runs = [run + gap + (token,) for run in runs for gap in gaps]
                lists += runs
            out = [e + run for e in out for run in lists]
        return list(dict.fromkeys(out))

    def word_weight(self, word: str) -> float:
        return self.weights.get(word, DEFAULT_WORD_WEIGHT)

    @property
    def lenient_kinds(self) -> frozenset[str]:
        """The kinds of intent heard on weaker evidence (``lenient``)."""
        return frozenset(str(i.fields["kind"]) for i in self.intents if i.lenient)

    @property
    def moments(self) -> frozenset[str]:
        """Every ``when`` of the intents: the moments some sentences wait for."""
        return frozenset(i.when for i in self.intents if i.when is not None)

    def only(self, moments: frozenset[str]) -> PhraseSet:
        """The phrases that can be said at these ``moments`` (the intents without a
        ``when``, and those whose ``when`` is one of them): what a recogniser
        listens for now. Turn 7's bare names answer "who gets the Lock?" only
        when a Lock waits for its target; anywhere else "hint" heard as "Ann"
        would be a move."""
        kept = tuple(i for i in self.intents if i.when is None or i.when in moments)
        return replace(self, intents=kept)


# --- expansion into sentences (for grammars and tests) -------------------------------------


def spoken_word(word: str) -> str:
    """A literal template word as said: digits spelled out."""
    return number_to_words(int(word)) if word.isdigit() else word


def slot_values(slot: Slot, for_grammar: bool = False) -> tuple[str, ...]:
    """The slot's tokens; for a grammar, only those worth listening for."""
    if for_grammar and slot.grammar is not None:
        return slot.grammar
    return tuple(slot.values)


def _token_choices(
    token: Token, slots: Mapping[str, Slot], for_grammar: bool
) -> list[tuple[str, str | None]]:
    """(spoken words, slot token) pairs a template token can become."""
    if isinstance(token, Word):
        return [(spoken_word(token.text), None)]
    slot = slots[token.name]
    suffix = "'s" if token.possessive else ""
    return [(slot.words_for(v) + suffix, v) for v in slot_values(slot, for_grammar)]


#: The slot tokens a sentence used: a token per slot, a tuple of them per list slot.
Fills = dict[str, str | tuple[str, ...]]


def expand_sentences(
    phrases: PhraseSet, expansion: Expansion, for_grammar: bool = False
) -> Iterator[tuple[str, Fills]]:
    """Every sentence (as words) of one unrolled expansion (see
    :meth:`PhraseSet.unroll`), with the slot tokens used."""
    choices = [_token_choices(token, phrases.slots, for_grammar) for token in expansion]
    for combo in itertools.product(*choices):
        words = " ".join(spoken for spoken, _ in combo)
        filled: Fills = {}
        for token, (_, value) in zip(expansion, combo, strict=True):
            if not isinstance(token, SlotRef) or value is None:
                continue
            if token.many:
                before = filled.get(token.name, ())
                filled[token.name] = (*before, value)
            else:
                filled[token.name] = value
        yield words, filled


def expand_phrases(
    phrases: PhraseSet, for_grammar: bool = False
) -> Iterator[tuple[str, IntentTemplate, Fills]]:
    """Every sentence the phrase file allows, with its intent and slot fills."""
    for intent in phrases.intents:
        for expansion in intent.expansions:
            for unrolled in phrases.unroll(expansion):
                for words, filled in expand_sentences(phrases, unrolled, for_grammar):
                    yield words, intent, filled
