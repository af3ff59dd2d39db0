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
  default): "shut 3 4 and 5". It stays one token in the templates; the intent
  matcher and the recognisers' grammars unroll it into at most ``most``
  values (:meth:`PhraseSet.unroll`), never into every combination of values.
  A slot may have both ``numbers`` and ``words`` (Phase 10 Twist's read-out,
  "three fives and a wild"), and ``leave_out``: values heard but kept out of
  the intent ("a", "and").

Intent fields are JSON values; a string field ``"{slot}"`` takes the value of
that slot (null when the sentence has none; for a list slot, the list of the
values said, in order), a list of them
(``["{tile}", "{tile2}"]``) the list of the values the sentence has,
``"$speaker"`` the person who spoke and ``"$addressee"`` the one other player.
``include = ["common"]`` adds the intents of ``common.toml`` (conversation and
questions every game shares).

From the same file come the intent matcher (:mod:`referee.speech.understanding.intents`)
and, through :func:`expand_phrases`, every sentence the recogniser's grammar
allows, so the two never drift apart.

>>> [" ".join(map(str, e)) for e in parse_template("[i] flip (my|the) {tile}")]
['i flip my {tile}', 'i flip the {tile}', 'flip my {tile}', 'flip the {tile}']
"""

from __future__ import annotations

import itertools
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from referee.speech.understanding.meaning import Wording
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

_LEX = re.compile(r"\{(\w+)(\.\.\.)?\}('s)?|[()\[\]|]|[^\s()\[\]|{}]+")


def parse_template(template: str, keep_empty: bool = False) -> list[Expansion]:
    """All token sequences a template stands for, in a deterministic order
    (the empty one only if ``keep_empty``: a joiner may be nothing)."""
    pieces = [m.group(0) for m in _LEX.finditer(template)]
    consumed = "".join(pieces)
    if consumed != re.sub(r"\s+", "", template):
        raise TemplateError(f"cannot read template {template!r}")
    pos = 0

    def seq() -> list[Expansion]:
        nonlocal pos
        results: list[Expansion] = [()]
        while pos < len(pieces) and pieces[pos] not in (")", "]", "|"):
            piece = pieces[pos]
            pos += 1
            if piece in ("(", "["):
                options = alternatives(")" if piece == "(" else "]")
                if piece == "[":
                    options = [*options, ()]
            elif piece.startswith("{"):
                match = _LEX.fullmatch(piece)
                assert match is not None
                options = [(SlotRef(match.group(1), bool(match.group(3)), bool(match.group(2))),)]
            else:
                words = join_numbers(normalise_words(piece))
                options = [tuple(Word(w) for w in words)]
            results = [a + b for a in results for b in options]
        return results

    def alternatives(close: str) -> list[Expansion]:
        nonlocal pos
        options = seq()
        while pos < len(pieces) and pieces[pos] == "|":
            pos += 1
            options.extend(seq())
        if pos >= len(pieces) or pieces[pos] != close:
            raise TemplateError(f"missing {close!r} in template {template!r}")
        pos += 1
        return options

    options = seq()
    while pos < len(pieces) and pieces[pos] == "|":
        pos += 1
        options.extend(seq())
    if pos != len(pieces):
        raise TemplateError(f"unbalanced brackets in template {template!r}")
    # Drop empty and repeated expansions (e.g. "[a] [a]") while keeping order.
    return list(dict.fromkeys(e for e in options if e or keep_empty))


# --- normalisation -----------------------------------------------------------------

_PUNCT = re.compile(r"[^\w'\s]+")


def normalise_words(text: str) -> list[str]:
    """Lower-case words with punctuation removed; hyphens split words."""
    text = ascii_digits(text).replace("\u2019", "'").replace("-", " ").replace("_", " ")
    text = _PUNCT.sub(" ", text.casefold())
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

    def words_for(self, token: str) -> str:
        """How the token is said: digits spelled out, names as written."""
        return self.spoken.get(token, token)


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
    expansions: tuple[Expansion, ...]
    #: The templates as written, for grammars that keep their structure.
    sentences: tuple[str, ...] = ()
    #: The moment this intent can be said (``when = "target"`` in the phrase file):
    #: a recogniser listens for it only then (:meth:`PhraseSet.only`). None: any time.
    when: str | None = None
    #: Heard on weaker evidence (``lenient = true`` in the phrase file): a wrong
    #: one costs little (it is asked about, or only hushes the referee) and a
    #: missed one much. What "weaker" means is the recogniser's to say.
    lenient: bool = False


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

    def vocabulary(self) -> frozenset[str]:
        """Every literal word of every template, and of the list slots' joiners."""
        words: set[str] = set()
        for intent in self.intents:
            for expansion in intent.expansions:
                words.update(t.text for t in expansion if isinstance(t, Word))
        for slot in self.slots.values():
            words.update(t.text for e in slot.joiner for t in e if isinstance(t, Word))
        return frozenset(words)

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


@cache
def _read_phrase_file(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _with_includes(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The file's data after the files it includes (``include = ["common"]``).

    Included slots, weights and hints are defaults the game's own file
    overrides; included intents, and the examples of each help topic, come
    after the game's own.
    """
    merged = {key: dict(data.get(key, {}))
              for key in ("slots", "weights", "hints", "fillers", "describe", "confirm")}
    helps = {topic: list(examples) for topic, examples in data.get("help", {}).items()}
    intents = list(data.get("intents", []))
    for name in data.get("include", []):
        other = path.with_name(f"{name}.toml")
        if not other.exists():
            other = PHRASE_DIR / f"{name}.toml"
        if not other.exists():
            raise TemplateError(f"{path.name} includes {name!r}, which does not exist")
        extra = _read_phrase_file(other)
        for key in merged:
            merged[key] = {**extra.get(key, {}), **merged[key]}
        for topic, examples in extra.get("help", {}).items():
            helps[topic] = [*helps.get(topic, []), *examples]
        intents += extra.get("intents", [])
    return {**data, **merged, "help": helps, "intents": intents}


def load_phrases(path: Path, players: Sequence[str]) -> PhraseSet:
    """Read a game's phrase file (its folder's ``phrases.toml``) and fill its
    slots for these players. Includes are looked for beside it, then among
    the shared files (``referee/speech/understanding/phrases/``: ``common``)."""
    if not path.exists():
        raise TemplateError(f"no phrase file {path}")
    data = _with_includes(_read_phrase_file(path), path)
    slots: dict[str, Slot] = {}
    for name, spec in data.get("slots", {}).items():
        weight = float(spec.get("weight", DEFAULT_SLOT_WEIGHT))
        near_miss = str(spec.get("near_miss", ""))
        if "numbers" in spec and "words" in spec:  # a read-out: "three fives and a wild"
            low, high = spec["numbers"]
            numbers = number_slot(name, int(low), int(high), weight)
            values = {**numbers.values, **{w: w for w in spec["words"]}}
            slot = Slot(name, "words", values, weight, numbers.spoken, near_miss=near_miss)
        elif "numbers" in spec:
            low, high = spec["numbers"]
            slot = number_slot(name, int(low), int(high), weight, near_miss)
            if "grammar" in spec:
                slot = replace(slot, grammar=tuple(str(int(n)) for n in spec["grammar"]))
        elif "words" in spec:
            values = {w: w for w in spec["words"]}
            slot = Slot(name, "words", values, weight, near_miss=near_miss)
        elif spec.get("players"):
            slot = player_slot(name, players, weight, near_miss)
        else:
            raise TemplateError(f"slot {name!r} in {path.name} has no values")
        most = int(spec.get("most", 1))
        if most < 1:
            raise TemplateError(f"slot {name!r} in {path.name}: most must be 1 or more")
        joiner = tuple(parse_template(str(spec.get("joiner", "and")), keep_empty=True))
        slots[name] = replace(slot, most=most, joiner=joiner if most > 1 else ((),),
                              leave_out=frozenset(map(str, spec.get("leave_out", ()))))
    weights = {word: float(w) for word, w in data.get("weights", {}).items()}
    intents = []
    for entry in data.get("intents", []):
        sentences = entry.get("sentences", [])
        when = entry.get("when")
        lenient = entry.get("lenient", False)
        if not isinstance(lenient, bool):
            raise TemplateError(f"lenient in {path.name} is true or false, not {lenient!r}")
        fields = {k: v for k, v in entry.items() if k not in ("sentences", "when", "lenient")}
        if "kind" not in fields or not sentences:
            raise TemplateError(f"an intent in {path.name} lacks a kind or sentences")
        expansions: list[Expansion] = []
        for sentence in sentences:
            for expansion in parse_template(sentence):
                for token in expansion:
                    if isinstance(token, SlotRef) and token.name not in slots:
                        raise TemplateError(f"unknown slot {token} in {sentence!r}")
                    if isinstance(token, SlotRef) and token.many and slots[token.name].most < 2:
                        raise TemplateError(f"{token} in {sentence!r}: the slot {token.name!r} "
                                            "is not a list (give it most = 2 or more)")
                expansions.append(expansion)
        intents.append(
            IntentTemplate(fields, tuple(dict.fromkeys(expansions)), tuple(sentences),
                           None if when is None else str(when), lenient)
        )
    hints = {str(word): str(text) for word, text in data.get("hints", {}).items()}
    fillers = data.get("fillers", {})
    game = str(data.get("game", path.parent.name))
    return PhraseSet(game, slots, weights, tuple(intents), hints, str(data.get("title", "")),
                     tuple(map(str, fillers.get("before", []))),
                     tuple(map(str, fillers.get("after", []))),
                     tuple(map(str, data.get("examples", []))))


@cache
def load_wording(path: Path) -> Wording:
    """How the phrase file at ``path`` (and what it includes) describes and
    confirms its intents, and its spoken help: its ``[describe]``, ``[confirm]``
    and ``[help]`` tables."""
    if not path.exists():
        raise TemplateError(f"no phrase file {path}")
    data = _with_includes(_read_phrase_file(path), path)
    return Wording({str(k): str(v) for k, v in data.get("describe", {}).items()},
                   {str(k): str(v) for k, v in data.get("confirm", {}).items()},
                   {str(k): tuple(map(str, v)) for k, v in data.get("help", {}).items()})


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
