"""Numbers as players say them, and as recognisers write them.

>>> words_to_number("sixty five"), number_to_words(65)
(65, 'sixty five')
>>> join_numbers(["flip", "my", "sixty", "seven", "and", "2"])
['flip', 'my', '67', 'and', '2']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

_UNIT_VALUE = {word: value for value, word in enumerate(UNITS)}
_TENS_VALUE = {word: 20 + 10 * i for i, word in enumerate(TENS)}


def ascii_digits(text: str) -> str:
    """Every Unicode digit (Arabic-Indic, full-width, circled, superscript...)
    as its ASCII digit.

    >>> ascii_digits("flip my \u2460 and \u0667")
    'flip my 1 and 7'
    """
    if text.isascii():
        return text
    return "".join(str(unicodedata.digit(ch)) if ch.isdigit() else ch for ch in text)


def number_to_words(n: int) -> str:
    """Spell 0..100 the way a recogniser's dictionary does (no hyphens)."""
    if n < 0 or n > 100:
        raise ValueError(f"cannot spell {n}")
    if n == 100:
        return "one hundred"
    if n < 20:
        return UNITS[n]
    tens, unit = divmod(n, 10)
    word = TENS[tens - 2]
    return word if unit == 0 else f"{word} {UNITS[unit]}"


def words_to_number(text: str) -> int | None:
    """The value of a whole number phrase, or None if it is not one."""
    tokens = join_numbers(text.split())
    if len(tokens) == 1 and tokens[0].isdigit():
        return int(tokens[0])
    return None


def join_numbers(words: Sequence[str]) -> list[str]:
    """Replace each spoken or written number by one token of digits.

    "sixty five" and "sixty-five" (after hyphens are split) become "65";
    "one hundred" becomes "100". Digits are kept, with leading zeros dropped.
    """
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word.isdigit():
            word = ascii_digits(word)
            out.append(str(int(word)) if len(word) < 7 else word)
        elif word in _TENS_VALUE:
            value = _TENS_VALUE[word]
            if nxt in _UNIT_VALUE and 0 < _UNIT_VALUE[nxt] < 10:
                value += _UNIT_VALUE[nxt]
                i += 1
            out.append(str(value))
        elif word in ("one", "a") and nxt == "hundred":
            out.append("100")
            i += 1
        elif word == "hundred":
            out.append("100")
        elif word in _UNIT_VALUE:
            out.append(str(_UNIT_VALUE[word]))
        elif word.endswith("'s") and word[:-2] in _UNIT_VALUE:  # "player one's"
            out.append(f"{_UNIT_VALUE[word[:-2]]}'s")
        else:
            out.append(word)
        i += 1
    return out
