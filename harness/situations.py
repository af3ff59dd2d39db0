"""Where in a game a benchmark's command is said: a situation in which it is a
move the referee expects of the awaited player (Ann), when there is one.

The referee hears a legal move of the player it waits for more readily than
anything else (:mod:`referee.speech.hearing.decision`), so a benchmark that
judged every command at the start of a fresh game would judge "flip my three
up" (no tile is down yet) and "I rolled five and three" (the referee rolls)
where no player would say them. Each command is therefore judged in the
first of its game's candidate situations (:func:`candidates`) in which the
referee expects it of Ann, asked of the brain itself (:class:`Placer`: the
command's own words, as a sure hearing, report ``expected``); table talk,
and a command expected nowhere, at the start of a fresh game (:func:`start`).

A situation is the game's options and the typed lines that lead there, each
by its player (``None``: whoever the referee asks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.judging import Situations
from referee.games import find_game
from referee.games.base import GameSpec
from referee.speech.hearing.interface import Transcript
from referee.speech.hearing.measures import Measures, Sentence
from referee.speech.understanding.intents import IntentMatcher

Line = tuple[str | None, str]
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "ten", "eleven", "twelve"]


@dataclass(frozen=True)
class Situation:
    """A game's options and the lines typed before the utterance."""

    options: tuple[tuple[str, Any], ...] = ()
    lines: tuple[Line, ...] = ()
    #: A short name for reports.
    name: str = "start"

    def spec(self, game: str, players: tuple[str, ...]) -> GameSpec:
        spec_class = find_game(game)
        return spec_class(list(players), spec_class.options_type(**dict(self.options)))


START = Situation()


def _race65(intent: dict[str, Any]) -> list[Situation]:
    """Race to 65 (Ann and Bob, Ann first; two flips a turn): a tile turned
    down two turns before, to be flipped up; the caller's total at the target
    of the game that has it."""
    kind, owner, tile = intent.get("kind"), intent.get("owner"), intent.get("tile")
    if kind == "flip" and intent.get("direction") == "up" and isinstance(tile, int):
        other = next(t for t in (1, 2, 3) if t != tile)
        down = (f"flip my {WORDS[tile]}" if owner == "Ann" else
                f"Bob flip your {WORDS[tile]} down")
        his = [t for t in (10, 11, 12, 9) if owner != "Bob" or t != tile][:2]
        return [Situation(lines=(("Ann", down), ("Ann", f"flip my {WORDS[other]}"),
                                 ("Bob", f"flip my {WORDS[his[0]]}"),
                                 ("Bob", f"flip my {WORDS[his[1]]}")), name="a tile down")]
    if kind == "call" and intent.get("caller") == "Ann":
        level = {65: "easy", 67: "medium", 70: "hard"}.get(int(intent.get("number") or 0))
        if level is None:
            return []
        tiles: tuple[int, ...] = {"easy": (12, 11, 10, 9, 8, 7, 6, 2),
                                  "medium": (12, 11, 10, 9, 8, 7, 6, 4),
                                  "hard": (12, 11, 10, 9, 8, 7, 6, 5, 3)}[level]
        ann: list[Line] = [("Ann", f"flip my {WORDS[t]}") for t in tiles[0:2] + tiles[4:6]]
        bob: list[Line] = [("Bob", f"Ann flip your {WORDS[t]} down")
                           for t in tiles[2:4] + tiles[6:8]]
        lines = ann[:2] + bob[:2] + ann[2:] + bob[2:]
        if len(tiles) > 8:
            lines.append(("Ann", f"flip my {WORDS[tiles[8]]}"))
        return [Situation((("difficulty", level),), tuple(lines), f"Ann at {intent['number']}")]
    return []


def _shutbox(intent: dict[str, Any]) -> list[Situation]:
    """Shut the Box (Ann, Bob and Cy in the order named): real dice, the roll
    to be told; a roll told, its tiles to be shut."""
    physical = (("dice", "physical"), ("order", "given"))
    found = [Situation(physical, name="real dice, a roll to tell")]
    tiles = intent.get("tiles")
    if intent.get("kind") == "shut" and isinstance(tiles, list) and 2 <= sum(tiles) <= 12:
        total = sum(tiles)
        first = min(6, total - 1)
        found.append(Situation(physical, (("Ann", f"I rolled {WORDS[first]} and "
                                                  f"{WORDS[total - first]}"),), "a roll told"))
    return found


def _turn7(intent: dict[str, Any]) -> list[Situation]:
    """Turn 7 (Cy deals, Ann decides first): the deal's cards told, Ann's
    draw to tell, a Lock of Ann's to give."""
    real = (("deck", "physical"), ("dealer", "Cy"))
    dealt: tuple[Line, ...] = ((None, "five"), (None, "six"), (None, "seven"))
    return [Situation(real, name="the deal's first card"),
            Situation(real, (*dealt, ("Ann", "hit")), "a card drawn"),
            Situation(real, (*dealt, ("Ann", "hit"), ("Ann", "lock")), "a Lock to give")]


def _phase10(intent: dict[str, Any]) -> list[Situation]:
    """Phase 10 Twist: the hand under way; Bob out, Ann asked whether she made
    her phase."""
    return [START, Situation(lines=(("Bob", "I lay down my phase"), ("Bob", "I'm out"),
                                    ("Cy", "no")), name="Ann's report")]


CANDIDATES: dict[str, Callable[[dict[str, Any]], list[Situation]]] = {
    "race65": _race65, "shut-the-box": _shutbox, "turn7": _turn7, "phase10-twist": _phase10}
#: Each game's start with Ann to play first (Shut the Box in the order named,
#: not rolled for; Turn 7 dealt by Cy from a deck shuffled alike every run,
#: a deal that asks Ann "hit or stay?": a random deal made the benchmarks'
#: Turn 7 figures move by a few points from one run to the next): where
#: table talk is judged.
STARTS = {"shut-the-box": Situation((("order", "given"),)),
          "turn7": Situation((("dealer", "Cy"), ("seed", 1)))}


def start(game: str) -> Situation:
    """The start of a fresh game of ``game``, Ann to play first."""
    return STARTS.get(game, START)


def candidates(game: str, intent: dict[str, Any]) -> list[Situation]:
    """Where ``intent`` might be said, in order (the start of a fresh game first)."""
    found = CANDIDATES.get(game)
    return [start(game), *(found(intent) if found is not None else [])]


@dataclass
class Placer:
    """Finds, for each command, the first candidate situation in which the
    referee expects it of Ann (asked of the brain with the command's own
    words as a sure hearing), and judges hearings there."""

    game: str
    players: tuple[str, ...]
    matcher: IntentMatcher
    _placed: dict[str, Situation] = field(default_factory=dict)
    _judges: dict[Situation, Situations] = field(default_factory=dict)

    def judges(self, situation: Situation) -> Situations:
        if situation not in self._judges:
            self._judges[situation] = Situations(
                lambda: situation.spec(self.game, self.players), self.matcher, situation.lines)
        return self._judges[situation]

    def place(self, text: str, intent: dict[str, Any]) -> Situation:
        """Where ``text`` (meaning ``intent`` from Ann) is judged."""
        if text not in self._placed:
            self._placed[text] = start(self.game)
            if intent.get("kind") != "none":
                for situation in candidates(self.game, intent):
                    if self.judges(situation).judge(_sure(text), "Ann").expected:
                        self._placed[text] = situation
                        break
        return self._placed[text]


def _sure(text: str) -> Transcript:
    """``text`` as a sure hearing of it, the only sentence heard."""
    return Transcript(text, 1.0, (), 0.0, Measures(
        model="tiny.en+table", best=text, free=text, primed=text,
        options=(Sentence(text, 10.0, -1.0, 5, -1.0),), best_logprob=-1.0, best_length=5,
        free_logprob=-1.0, free_length=5, similarity=100.0, primed_similarity=100.0, gap=10.0,
        nothing=-10.0, probability=0.999))
