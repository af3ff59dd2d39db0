"""Pronunciations for words the recogniser's dictionary lacks (players' names).

The table types any name; PocketSphinx can only listen for words it can
pronounce. A missing name is pronounced by eSpeak NG (``espeak-ng --ipa``,
which has English letter-to-sound rules) and its IPA mapped to the ARPAbet
phones of the CMU dictionary. A possessive ("Zoltan's") is the name plus S or
Z. Without eSpeak NG a crude spelling rule is used, and the game warns.

>>> ipa_to_arpabet("zˈoʊltən")
'Z OW L T AH N'
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Callable

log = logging.getLogger(__name__)

# Longest symbols first when matching.
IPA = {
    "tʃ": "CH", "dʒ": "JH", "aɪ": "AY", "aʊ": "AW", "eɪ": "EY", "oʊ": "OW", "ɔɪ": "OY",
    "əʊ": "OW", "ɪə": "IH R", "eə": "EH R", "ʊə": "UH R", "ɑː": "AA", "ɔː": "AO", "iː": "IY",
    "uː": "UW", "ɜː": "ER", "ɚ": "ER", "ɝ": "ER", "ᵻ": "IH",
    "p": "P", "b": "B", "t": "T", "d": "D", "k": "K", "ɡ": "G", "g": "G", "f": "F", "v": "V",
    "θ": "TH", "ð": "DH", "s": "S", "z": "Z", "ʃ": "SH", "ʒ": "ZH", "h": "HH", "m": "M",
    "n": "N", "ŋ": "NG", "l": "L", "ɹ": "R", "r": "R", "ɾ": "T", "w": "W", "j": "Y",
    "i": "IY", "ɪ": "IH", "e": "EH", "ɛ": "EH", "æ": "AE", "a": "AA", "ɑ": "AA", "ɒ": "AA",
    "ɔ": "AO", "o": "OW", "ʊ": "UH", "u": "UW", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ɜ": "ER",
    "x": "K", "ç": "HH", "ʔ": "",
}
_SYMBOLS = sorted(IPA, key=len, reverse=True)
_IGNORED = set("ˈˌːˑ.‿ -_")
VOICELESS = {"P", "T", "K", "F", "TH"}
SIBILANT = {"S", "Z", "SH", "ZH", "CH", "JH"}

LETTERS = {
    "a": "AE", "b": "B", "c": "K", "d": "D", "e": "EH", "f": "F", "g": "G", "h": "HH",
    "i": "IH", "j": "JH", "k": "K", "l": "L", "m": "M", "n": "N", "o": "AA", "p": "P",
    "q": "K", "r": "R", "s": "S", "t": "T", "u": "AH", "v": "V", "w": "W", "x": "K S",
    "y": "Y", "z": "Z",
}


def ipa_to_arpabet(ipa: str) -> str:
    """Map an eSpeak IPA string to ARPAbet phones ('' if nothing is left)."""
    phones: list[str] = []
    i = 0
    while i < len(ipa):
        if ipa[i] in _IGNORED:
            i += 1
            continue
        for symbol in _SYMBOLS:
            if ipa.startswith(symbol, i):
                if IPA[symbol]:
                    phones.extend(IPA[symbol].split())
                i += len(symbol)
                break
        else:
            log.debug("no ARPAbet phone for IPA %r", ipa[i])
            i += 1
    return " ".join(phones)


def espeak_ipa(word: str) -> str | None:
    if shutil.which("espeak-ng") is None:
        return None
    try:
        result = subprocess.run(
            ["espeak-ng", "-q", "--ipa", "-v", "en-us", word],
            capture_output=True, text=True, timeout=10, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None


def spelled(word: str) -> str:
    """A last resort: one phone per letter."""
    return " ".join(LETTERS[ch] for ch in word if ch in LETTERS)


def pronounce(word: str, lookup: Callable[[str], str | None] | None = None) -> str | None:
    """ARPAbet phones for ``word`` (lower case), or None if it has no letters."""
    lookup = lookup or (lambda _w: None)
    if not any(ch.isalpha() for ch in word):
        return None
    if word.endswith("'s"):
        base = word[:-2]
        phones = lookup(base) or pronounce(base, lookup)
        if not phones:
            return None
        last = phones.split()[-1]
        suffix = "IH Z" if last in SIBILANT else "S" if last in VOICELESS else "Z"
        return f"{phones} {suffix}"
    if " " in word:
        parts = [lookup(w) or pronounce(w, lookup) for w in word.split()]
        return " ".join(p for p in parts if p) or None
    ipa = espeak_ipa(word)
    phones = ipa_to_arpabet(ipa) if ipa else ""
    return phones or spelled(word) or None
