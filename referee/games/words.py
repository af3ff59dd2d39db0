"""Small helpers for the sentences a game says."""

from __future__ import annotations


def sentence(text: str) -> str:
    """Capitalise the first letter only (names keep their case).

    >>> sentence("bob's 7 was flipped")
    "Bob's 7 was flipped"
    """
    return text[:1].upper() + text[1:]


def plural(n: int, word: str) -> str:
    """A count with its noun.

    >>> plural(1, "flip"), plural(2, "flip")
    ('1 flip', '2 flips')
    """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
