"""Games and sentences the tests share: Race to 65's listed forms and the
intents they mean, a game of Race to 65 with its options, a short game of Shut
the Box, whether the recognisers listen for a sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.games.race65 import Race65Options, Race65Spec
from referee.speech.understanding.meaning import Intent
from referee.speech.understanding.network import Network, Node, compile_phrases, said_as
from referee.speech.understanding.templates import PhraseSet, Token


def race65_spec(rules: str = "phase-seven", difficulty: str | None = "hard",
                **extra: Any) -> Race65Spec:
    """A game of Race to 65 for Ann and Bob."""
    return Race65Spec(["Ann", "Bob"], Race65Options(rules=rules, difficulty=difficulty, **extra))


def flip(owner: str, tile: int, direction: str | None = None) -> Intent:
    return Intent.of("flip", owner=owner, tile=tile, direction=direction)


def call(caller: str, number: int) -> Intent:
    return Intent.of("call", caller=caller, number=number)


def query(what: str, player: str | None = "Ann") -> Intent:
    return Intent.of("query", what=what, player=player)


#: Race to 65's forms its first issue lists, for speaker Ann and opponent Bob.
LISTED = [
    ("flip my seven", flip("Ann", 7)),
    ("flip seven", flip("Ann", 7)),
    ("I flip my nine", flip("Ann", 9)),
    ("flip my twelve down", flip("Ann", 12, "down")),
    ("flip my three up", flip("Ann", 3, "up")),
    ("you flip four up", flip("Bob", 4, "up")),
    ("Bob, flip your ten down", flip("Bob", 10, "down")),
    ("Bob flip two down", flip("Bob", 2, "down")),
    ("tell Bob to flip six up", flip("Bob", 6, "up")),
    ("flip Bob's eight down", flip("Bob", 8, "down")),
    ("sixty-five!", call("Ann", 65)),
    ("sixty seven", call("Ann", 67)),
    ("seventy", call("Ann", 70)),
    ("I call sixty-five", call("Ann", 65)),
    ("Bob calls seventy", call("Bob", 70)),
    ("what's my score", query("score")),
    ("read my board", query("board")),
    ("read Bob's board", query("board", "Bob")),
    ("how much time is left", query("time")),
    ("whose turn is it", query("turn")),
    ("repeat that", query("repeat")),
    ("help", query("help")),
    ("rules", query("rules")),
]

#: A short game of Shut the Box, typed: (who, what).
SHORT_GAME = [("Ann", "I rolled one and one"), ("Ann", "shut two"),
              ("Ann", "I rolled one and one"), ("Bob", "I rolled one and one"),
              ("Bob", "shut two"), ("Bob", "I rolled six and six"), ("Bob", "shut twelve"),
              ("Bob", "I rolled one and one")]


#: The networks :func:`listened_for` walked, by phrase file (kept with it).
_COMPILED: dict[int, tuple[PhraseSet, Network, dict[Token, list[tuple[str, ...]]]]] = {}


def listened_for(phrases: PhraseSet, text: str, fillers: bool = False) -> bool:
    """Whether the recognisers' network has this sentence, word for word (with
    ``fillers``: or once a filler of the phrase file before or after is taken
    off, as Whisper's search allows them)."""
    if id(phrases) not in _COMPILED:
        net = compile_phrases(phrases)
        _COMPILED[id(phrases)] = phrases, net, {
            unit: [tuple(w.split()) for w in said_as(unit, phrases.slots, True)]
            for unit in net.units()}
    _, net, said = _COMPILED[id(phrases)]

    def walk(words: list[str], node: Node, at: int) -> bool:
        if at == len(words):
            return node.final
        return any(tuple(words[at:at + len(form)]) == form
                   and walk(words, target, at + len(form))
                   for unit, target in node.arcs for form in said[unit])

    words = text.split()
    heads = [[], *(f.casefold().split() for f in phrases.fillers_before)] if fillers else [[]]
    tails = [[], *(f.casefold().split() for f in phrases.fillers_after)] if fillers else [[]]
    return any(words[:len(head)] == head and words[len(words) - len(tail):] == tail
               and walk(words[len(head):len(words) - len(tail)], net.start, 0)
               for head in heads for tail in tails if len(head) + len(tail) < len(words))


def golden_game(script: Path) -> tuple[str, list[str]]:
    """A golden script's game and command-line arguments, from its own header
    (``# game: NAME`` and ``# args: ...``), never from its file name."""
    import shlex

    lines = script.read_text().splitlines()
    game = next((line.removeprefix("# game:").strip() for line in lines
                 if line.startswith("# game:")), None)
    args = next((line.removeprefix("# args:") for line in lines if line.startswith("# args:")),
                None)
    if not game or args is None:
        raise ValueError(f"{script.name} has no '# game:' or '# args:' line")
    return game, shlex.split(args)
