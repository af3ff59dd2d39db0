"""Recogniser grammars generated from the phrase file, so the recogniser and
the intent matcher can never drift apart.

* :func:`to_jsgf` keeps the templates' structure (alternatives, optional
  words, slot rules), which PocketSphinx compiles into a small, fast network.
* :func:`phrase_list` lists every sentence of the phrase file's compiled
  network (:mod:`referee.speech.understanding.network`, as Whisper's search
  walks it), for Vosk's grammar list.

Both are restricted to the table: its players' names, the tiles, and only the
slot values worth listening for (``grammar`` in the phrase file: a Race to 65
call is one of the targets).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from referee.speech.understanding.network import Node, compile_phrases, said_as
from referee.speech.understanding.network import sentences as network_sentences
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import (
    _LEX,
    PhraseSet,
    Slot,
    SlotRef,
    normalise_words,
    slot_values,
    spoken_word,
)


def _jsgf_body(template: str) -> str:
    out: list[str] = []
    for match in _LEX.finditer(template):
        piece = match.group(0)
        if piece.startswith("{"):
            suffix = "_list" if match.group(2) else "_s" if match.group(3) else ""
            out.append(f"<{match.group(1)}{suffix}>")
        elif piece in ("(", ")", "[", "]", "|"):
            out.append(piece)
        else:
            out.extend(spoken_word(w) for w in join_numbers(normalise_words(piece)))
    return " ".join(out)


def to_jsgf(phrases: PhraseSet, name: str = "referee") -> str:
    """A JSGF grammar whose public rule is every command of the phrase file,
    written from its templates as they are (as compact as the compiled
    network). Written from the network instead, a rule per node, the same
    sentences made PocketSphinx decide otherwise on 77 of 776 held-out
    Race to 65 utterances, for 2 commands fewer right and 3 wrong moves more
    (#37): so the templates it is."""
    bodies = [f"( {_jsgf_body(s)} )" for intent in phrases.intents for s in intent.sentences]
    lines = ["#JSGF V1.0;", f"grammar {name};", f"public <command> = {' | '.join(bodies)};"]
    for slot_name, slot in phrases.slots.items():
        words = [slot.words_for(v) for v in slot_values(slot, for_grammar=True)]
        lines.append(f"<{slot_name}> = {' | '.join(words)};")
        if slot.kind == "player":
            lines.append(f"<{slot_name}_s> = {' | '.join(w + chr(39) + 's' for w in words)};")
        if slot.most > 1:
            lines.append(f"<{slot_name}_list> = {_jsgf_list(slot_name, slot)};")
        if slot.said:
            parts = " | ".join(f"( {_jsgf_body(part)} )" for part in slot.said)
            lines.append(f"<{slot_name}_part> = {parts};")
    return "\n".join(lines) + "\n"


def _jsgf_list(name: str, slot: Slot) -> str:
    """ "<tiles> [ [and] <tiles> [ [and] <tiles> ] ]": one to ``most`` values
    (of its ``said`` parts, where the slot has them)."""
    unit, most, joiners = f"<{name}>", slot.most, slot.joiner
    if slot.said:
        unit, most, joiners = f"<{name}_part>", slot.said_most, slot.said_joiner
    said = [" ".join(spoken_word(str(t)) for t in e) for e in joiners if e]
    joiner = f"( {' | '.join(said)} )" if said else ""
    if said and () in joiners:
        joiner = f"[ {' | '.join(said)} ]"
    body = ""
    for _ in range(most - 1):
        body = f" [ {joiner} {unit}{body} ]"
    return f"{unit}{body}"


#: More sentences than a grammar list can hold (Phase 10 Twist's read-outs of
#: cards have more than can be written out).
MOST_SENTENCES = 500_000


def phrase_list(phrases: PhraseSet, most: int = MOST_SENTENCES) -> list[str]:
    """Every sentence of the grammar, sorted, without repeats; ValueError when
    there are more than ``most``."""
    sentences: set[str] = set()
    listed = network_sentences(compile_phrases(phrases), phrases.slots, for_grammar=True)
    for n, words in enumerate(listed):
        if n >= most:
            raise ValueError(f"{phrases.title or phrases.game} has more than {most} sentences "
                             "to list")
        sentences.add(words)
    return sorted(sentences)


def grammar_words(phrases: PhraseSet) -> set[str]:
    """Every word a recogniser must be able to say for this grammar.

    From the templates' words and the slots' values, without expanding every
    sentence (Shut the Box's "shut 1, 2, 3 and 4" has tens of thousands).
    """
    words: set[str] = set()
    for word in phrases.vocabulary():
        words.update(spoken_word(w) for w in join_numbers(normalise_words(word)))
    for slot in phrases.slots.values():
        for value in slot_values(slot, for_grammar=True):
            said = slot.words_for(value).split()
            words.update(said)
            if slot.kind == "player":
                words.add(said[-1] + "'s")
    return words


class Prefixes:
    """Which word sequences are the start of a longer sentence of the grammar
    ("flip my" of "flip my seven"), found in the phrase file's network: never by
    listing every sentence (a read-out of cards has more than can be listed).

    >>> from referee.games import matcher_for
    >>> prefixes = Prefixes(matcher_for("shut-the-box", ["Ann", "Bob"]).phrases)
    >>> prefixes.extendable("shut three".split()), prefixes.extendable(["hint"])
    (True, False)
    """

    def __init__(self, phrases: PhraseSet) -> None:
        network = compile_phrases(phrases)
        self.root = network.start
        self._said = {unit: [tuple(w.split()) for w in said_as(unit, phrases.slots, True)]
                      for unit in network.units()}
        #: The slots a read-out in parts is made of (Phase 10 Twist's cards,
        #: ``[slots.NAME.said]``, and the slots of those parts: count, colour ...).
        self._read_out = {name for slot in phrases.slots.values() if slot.said
                          for name in (slot.name, *re.findall(r"\{(\w+)", " ".join(slot.said)))}

    def extendable(self, words: list[str]) -> bool:
        """Whether ``words`` is a sentence's start that can go on."""
        return bool(words) and any(True for _ in self._ends(words))

    def reads_out(self, words: list[str]) -> bool:
        """Whether what may follow ``words`` is a read-out in parts ("I lay down
        my phase" ... "three fives" ... "and three sevens"), where a player
        pauses to look at their cards.

        >>> from referee.games import matcher_for
        >>> prefixes = Prefixes(matcher_for("phase10-twist", ["Ann", "Bob"]).phrases)
        >>> said = "i lay down my phase".split()
        >>> prefixes.reads_out(said), prefixes.reads_out([*said, "three", "fives"])
        (True, True)
        >>> prefixes.reads_out("where am i".split())
        False
        """
        return any(node is not None and any(
            isinstance(unit, SlotRef) and unit.name in self._read_out
            for unit, _ in node.arcs) for node in self._ends(words))

    def _ends(self, words: list[str]) -> Iterator[Node | None]:
        """The network's nodes with arcs on at which ``words`` end (None: they
        end inside an arc's words)."""
        seen: set[tuple[int, int]] = set()

        def walk(node: Node, at: int) -> Iterator[Node | None]:
            if at == len(words):
                if node.arcs:
                    yield node
                return
            if (id(node), at) in seen:
                return
            seen.add((id(node), at))
            for unit, child in node.arcs:
                for said in self._said[unit]:
                    rest = words[at:at + len(said)]
                    if tuple(rest) == said[:len(rest)]:
                        if len(rest) < len(said):  # the words end inside this unit
                            yield None
                        else:
                            yield from walk(child, at + len(said))

        return walk(self.root, 0)
