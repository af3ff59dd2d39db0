"""Cards read out at the table, as cards: "three fives and a run of four from
six to nine", "seven greens", "two fives and a wild", "a wild, a skip and a seven".

The phrase file's ``{cards...}`` slot hands over the words (numbers already as
digits); :func:`read_cards` turns them into :class:`Card` values for the phase
checker, or raises :class:`ReadoutError` with a sentence saying what it could
not read. What it reads:

* ``N <number>s`` ("three fives"), ``a set of N <number>s``;
* ``a [colour] run [of N] from L to H`` (``to`` may be heard as "two");
* ``N <colour>s`` / ``N <colour> cards`` ("seven greens": colour only);
* ``a [colour] <number>`` or a bare number: one card;
* ``a wild``, ``N wilds``, ``a skip``, ``N skips``; "and" anywhere between.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.phase10_phases import COLOURS, HIGHEST, SKIP, WILD, Card
from referee.speech.understanding.meaning import spoken_list

PLURALS = {"ones": 1, "twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6,
           "sevens": 7, "eights": 8, "nines": 9, "tens": 10, "elevens": 11, "twelves": 12}
COLOUR_PLURALS = {f"{c}s": c for c in COLOURS}
#: The plural of each number, as a read-out says it after a count.
PLURAL_OF = {n: word for word, n in PLURALS.items()}
SHOWN = "say them like: three fives and three sevens, or a run from six to nine"


class ReadoutError(ValueError):
    """Words that are not cards; ``sentence`` says so."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


def read_cards(words: Sequence[object]) -> tuple[Card, ...]:
    """The cards the words say.

    >>> [str(c) for c in read_cards([3, "fives", "and", "a", "wild"])]
    ['5', '5', '5', 'wild']
    >>> [str(c) for c in read_cards(["a", "run", "of", 4, "from", 6, "to", 9])]
    ['6', '7', '8', '9']
    """
    tokens = [str(w).casefold() for w in words]
    cards: list[Card] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "and":
            i += 1
            continue
        part, i = _part(tokens, i)
        cards += part
    if not cards:
        raise ReadoutError(f"I did not hear any cards: {SHOWN}.")
    return tuple(cards)


def _number(token: str) -> int | None:
    return int(token) if token.isdigit() else None


def _part(tokens: list[str], i: int) -> tuple[list[Card], int]:
    """One part of a read-out starting at ``tokens[i]``, and where the next begins."""
    def at(k: int) -> str:
        return tokens[k] if k < len(tokens) else ""

    count = 1
    counted = False
    if at(i) in ("a", "an"):
        i += 1
    elif _number(at(i)) is not None and at(i + 1) in (
            *PLURALS, *COLOUR_PLURALS, "wild", "wilds", "skip", "skips", *COLOURS):
        count, counted = int(at(i)), True
        i += 1
    word = at(i)
    if counted and word in PLURALS:
        return [Card(PLURALS[word])] * count, i + 1
    if counted and word in COLOUR_PLURALS:
        return [Card(None, COLOUR_PLURALS[word])] * count, i + 1
    if counted and word in COLOURS:  # "seven green cards", "seven green"
        return [Card(None, word)] * count, i + (2 if at(i + 1) in ("cards", "card") else 1)
    if word in ("wild", "wilds"):
        return [WILD] * count, i + 1
    if word in ("skip", "skips"):
        return [SKIP] * count, i + 1
    if word == "set" and at(i + 1) == "of" and _number(at(i + 2)) and at(i + 3) in PLURALS:
        return [Card(PLURALS[at(i + 3)])] * int(at(i + 2)), i + 4
    colour = word if word in COLOURS else None
    if colour is not None and not counted:
        i += 1
        word = at(i)
    if word == "run":
        return _run(tokens, i + 1, colour)
    number = _number(word)
    if number is not None and not counted:
        if not 1 <= number <= HIGHEST:
            raise ReadoutError(f"There is no {number}: cards go from 1 to 12.")
        return [Card(number, colour)], i + 1
    said = " ".join(tokens[i:i + 3]) or " ".join(tokens[-3:])
    raise ReadoutError(f"I could not read the cards at \"{said}\": {SHOWN}.")


def _run(tokens: list[str], i: int, colour: str | None) -> tuple[list[Card], int]:
    """ "[of N] from L to H" after "run"."""
    def at(k: int) -> str:
        return tokens[k] if k < len(tokens) else ""

    length = None
    if at(i) == "of" and _number(at(i + 1)) is not None:
        length = int(at(i + 1))
        i += 2
    low = _number(at(i + 1)) if at(i) == "from" else None
    joined = at(i + 2) in ("to", "2")
    high = _number(at(i + 3)) if joined else None
    if low is None or high is None:
        raise ReadoutError("Say where the run goes, like: a run from six to nine.")
    if not 1 <= low < high <= HIGHEST:
        raise ReadoutError(f"A run from {low} to {high} cannot be: runs go up, from 1 to 12.")
    if length is not None and length != high - low + 1:
        raise ReadoutError(f"A run from {low} to {high} has {high - low + 1} cards, "
                           f"not {length}.")
    return [Card(n, colour) for n in range(low, high + 1)], i + 4


def counted(words: Sequence[object]) -> tuple[object, ...]:
    """The words with each "<count> <number>" read as a count of that number:
    how "three fives and three sevens" often comes back from a recogniser
    ("three five and three seven"). Counts are 2 to 9; other words stay.

    >>> counted([3, 5, "and", 3, 7])
    (3, 'fives', 'and', 3, 'sevens')
    >>> counted([7, 1])
    (7, 'ones')
    """
    out: list[object] = []
    i = 0
    while i < len(words):
        count = str(words[i])
        number = str(words[i + 1]) if i + 1 < len(words) else ""
        if count.isdigit() and 2 <= int(count) <= 9 and number.isdigit() \
                and int(number) in PLURAL_OF:
            out += [words[i], PLURAL_OF[int(number)]]
            i += 2
        else:
            out.append(words[i])
            i += 1
    return tuple(out)


def spoken_cards(words: Sequence[object]) -> str:
    """A read-out as the referee says it back, counts kept with their cards.

    >>> spoken_cards([3, "fives", 3, "sevens"])
    '3 fives and 3 sevens'
    >>> spoken_cards(["a", "run", "of", 4, "from", 6, "to", 9])
    'a run of 4 from 6 to 9'
    """
    parts: list[str] = []
    tokens = [str(w) for w in words]
    i = 0
    while i < len(tokens):
        if tokens[i] == "and":
            i += 1
        elif tokens[i].isdigit() and i + 1 < len(tokens) and tokens[i + 1] in PLURALS:
            parts.append(f"{tokens[i]} {tokens[i + 1]}")
            i += 2
        else:
            start = i
            while i < len(tokens) and tokens[i] != "and" and not (
                    i > start and tokens[i].isdigit() and i + 1 < len(tokens)
                    and tokens[i + 1] in PLURALS):
                i += 1
            parts.append(" ".join(tokens[start:i]))
    return spoken_list(parts)
