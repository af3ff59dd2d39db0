"""The grammar as a prefix tree of tokens: what may come next in some
sentence of the phrase file (:class:`SentenceSearch`), each word in the
spellings Whisper writes ("seven", "Seven", "7"; "sixty-five", "65";
"Bob's", "Bobs"), optional punctuation between words, one filler phrase
before ("okay", "could you") or after ("please") a command, and end-of-text
where a template ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from referee.speech.understanding.network import Node, compile_phrases, said_as
from referee.speech.understanding.numbers import UNITS, join_numbers
from referee.speech.understanding.templates import PhraseSet, SlotRef, Word

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]


# --- the grammar as a prefix tree -----------------------------------------------------------------

PUNCTUATION = (",", ".", "!", "?")
#: Numbers said in the plural ("three fives"), which Whisper may write as digits.
PLURAL_NUMBERS = {("sixes" if n == 6 else f"{w}s"): n for n, w in enumerate(UNITS) if 0 < n <= 12}


def spellings(words: str) -> list[str]:
    """How Whisper may write these spoken words (a word, a slot value).

    >>> spellings("sixty five")
    [' sixty five', ' Sixty five', ' sixty-five', ' Sixty-five', ' 65']
    >>> spellings("bob's")
    [" bob's", " Bob's", ' bobs', ' Bobs']
    """
    forms = [" " + words, " " + words[:1].upper() + words[1:]]
    parts = words.split()
    numbers = join_numbers(parts)
    if len(numbers) == 1 and numbers[0].isdigit():
        if len(parts) > 1:
            hyphen = "-".join(parts)
            forms += [" " + hyphen, " " + hyphen[:1].upper() + hyphen[1:]]
        forms.append(" " + numbers[0])
    elif len(parts) > 1 and parts[-1] in UNITS:  # "player one"
        forms.append(" " + " ".join(parts[:-1]) + " " + str(UNITS.index(parts[-1])))
        forms.append(" " + (" ".join(parts[:-1])).capitalize() + " " +
                     str(UNITS.index(parts[-1])))
    if words.endswith("'s"):
        forms += [f.replace("'s", "s") for f in forms]
    plural = PLURAL_NUMBERS.get(words)
    if plural is not None:  # "fives" as Whisper writes it: "5s"
        forms.append(f" {plural}s")
    if words == "i" or words.startswith("i'"):
        forms = [f for f in forms if not f.startswith(" i")]
    return list(dict.fromkeys(forms))


def repeats(words: Sequence[str]) -> bool:
    """Whether the words end with the same 2 to 8 words twice over.

    Past the end of the speech Whisper readily says again what it just said,
    and a list slot (a read-out of cards, tiles) lets it: "three sevens three
    sevens ...". Nobody reads out the same cards twice in a row.

    >>> repeats("a wild skip a wild skip".split()), repeats("five five five".split())
    (True, False)
    """
    return any(len(words) >= 2 * n and tuple(words[-n:]) == tuple(words[-2 * n:-n])
               for n in range(2, 9))


class Spelling(Protocol):
    """A tokenizer as the search needs it (Whisper's
    :class:`~referee.speech.hearing.whisper_files.Tokens`, Moonshine's
    :class:`~referee.speech.hearing.moonshine.MoonshineTokens`)."""

    @property
    def end(self) -> int: ...

    def encode(self, text: str) -> tuple[int, ...]: ...


@dataclass(frozen=True)
class _State:
    """Where a hypothesis is in the grammar."""

    node: Node
    #: Tokens still to come of the word being spelled.
    pending: tuple[int, ...]
    #: The spoken words so far (fillers are not words).
    words: tuple[str, ...]
    #: The last token was punctuation (no two in a row).
    after_punctuation: bool = False
    #: Something was said (a word or a filler): a filler may no longer start it.
    begun: bool = False


@dataclass
class Hypothesis:
    score: float
    tokens: tuple[int, ...]
    states: list[_State]
    logprob: float = 0.0


@dataclass(frozen=True)
class Scored:
    """A sentence of the grammar with its log-probability."""

    words: str
    score: float
    #: Its log-probability without the bonus, and its number of tokens.
    logprob: float = 0.0
    length: int = 0
    #: Its tokens, end of text included (a sentence of the grammar's search).
    tokens: tuple[int, ...] = ()


class SentenceSearch:
    """The phrase file's network (:func:`~referee.speech.understanding.network.compile_phrases`),
    searched token by token."""

    def __init__(self, phrases: PhraseSet, tokens: Spelling) -> None:
        self.tokens = tokens
        network = compile_phrases(phrases)
        self.root = network.start
        #: Each unit's (spoken words, token spellings) choices.
        self._choices: dict[Word | SlotRef, list[tuple[str, list[tuple[int, ...]]]]] = {}
        for unit in network.units():
            self._choices[unit] = [
                (words, [tokens.encode(s) for s in spellings(words)])
                for words in said_as(unit, phrases.slots, for_grammar=True)
            ]
        self.punctuation = [tokens.encode(p)[0] for p in PUNCTUATION]
        self.before = [tokens.encode(s) for f in phrases.fillers_before for s in spellings(f)]
        self.after = [tokens.encode(s) for f in phrases.fillers_after for s in spellings(f)]
        #: Where a sentence is once its closing filler is said: it can only end.
        self.closed = Node(final=True)

    def token_ids(self) -> set[int]:
        """Every token a sentence of the grammar can use."""
        ids = {self.tokens.end, *self.punctuation}
        for filler in (*self.before, *self.after):
            ids.update(filler)
        for choices in self._choices.values():
            for _, forms in choices:
                for form in forms:
                    ids.update(form)
        return ids

    def start(self) -> list[_State]:
        return [_State(self.root, (), ())]

    def moves(self, state: _State) -> Iterator[tuple[int, _State | None]]:
        """(next token, state after it) for every way on; None after end-of-text."""
        node, words = state.node, state.words
        if state.pending:
            yield state.pending[0], _State(node, state.pending[1:], words, begun=True)
            return
        if not state.begun:
            for form in self.before:
                yield form[0], _State(node, form[1:], words, begun=True)
        for unit, child in node.arcs:
            listed = node.listing or (isinstance(unit, SlotRef) and unit.many)
            for said, forms in self._choices[unit]:
                if listed and repeats((*words, said)):
                    continue
                for form in forms:
                    yield form[0], _State(child, form[1:], (*words, said), begun=True)
        if state.begun and not state.after_punctuation:
            for token in self.punctuation:
                yield token, _State(node, (), words, True, True)
        if node.final:
            if node is not self.closed:
                for form in self.after:
                    yield form[0], _State(self.closed, form[1:], words, begun=True)
            yield self.tokens.end, None


