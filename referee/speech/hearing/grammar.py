"""Recogniser grammars generated from the phrase file, so the recogniser and
the intent matcher can never drift apart.

* :func:`to_jsgf` keeps the templates' structure (alternatives, optional
  words, slot rules), which PocketSphinx compiles into a small, fast network.
* :func:`phrase_list` expands every sentence, for Vosk's grammar list.

Both are restricted to the table: its players' names, the tiles, and only the
slot values worth listening for (``grammar`` in the phrase file: a Race to 65
call is one of the targets).
"""

from __future__ import annotations

from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import (
    _LEX,
    PhraseSet,
    Slot,
    expand_phrases,
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
    """A JSGF grammar whose public rule is every command of the phrase file."""
    bodies = [f"( {_jsgf_body(s)} )" for intent in phrases.intents for s in intent.sentences]
    lines = ["#JSGF V1.0;", f"grammar {name};", f"public <command> = {' | '.join(bodies)};"]
    for slot_name, slot in phrases.slots.items():
        words = [slot.words_for(v) for v in slot_values(slot, for_grammar=True)]
        lines.append(f"<{slot_name}> = {' | '.join(words)};")
        if slot.kind == "player":
            lines.append(f"<{slot_name}_s> = {' | '.join(w + chr(39) + 's' for w in words)};")
        if slot.most > 1:
            lines.append(f"<{slot_name}_list> = {_jsgf_list(slot_name, slot)};")
    return "\n".join(lines) + "\n"


def _jsgf_list(name: str, slot: Slot) -> str:
    """ "<tiles> [ [and] <tiles> [ [and] <tiles> ] ]": one to ``most`` values."""
    said = [" ".join(spoken_word(str(t)) for t in e) for e in slot.joiner if e]
    joiner = f"( {' | '.join(said)} )" if said else ""
    if said and () in slot.joiner:
        joiner = f"[ {' | '.join(said)} ]"
    body = ""
    for _ in range(slot.most - 1):
        body = f" [ {joiner} <{name}>{body} ]"
    return f"<{name}>{body}"


def phrase_list(phrases: PhraseSet) -> list[str]:
    """Every sentence of the grammar, sorted, without repeats."""
    return sorted({words for words, _, _ in expand_phrases(phrases, for_grammar=True)})


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
