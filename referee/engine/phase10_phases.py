"""Phase 10 Twist's cards, phases and board, and the checker of a laid-down phase.

From ``../shared/seeds/phase-10-twist-excerpt.txt`` and the Phase 10 Twist
section of ``../shared/rules.md``:

* Cards: numbers 1 to 12 in four colours, Wilds (any number or colour) and
  Skips (never part of a phase). A card here is what a player reads out: a
  number, a number with its colour, a colour alone ("seven greens": the
  numbers do not matter in a colour group), ``wild`` or ``skip``.
* A phase is groups: a *set* (cards of one number), a *run* (consecutive
  numbers, each once; "of one colour" for Twist card 8) or a *colour* group
  (cards of one colour). Each group needs at least its size; more cards may
  be laid down only where they fit directly (a fifth 7 on a set of 7s, a 10
  on a run 6-9). A Wild stands for any card; a phase needs at least one
  natural card (the whole phase, as the rules say: not each group).
* The board is data (:func:`parse_board`): a sequence of phase numbers and
  Twist spaces, the last one the red Phase 10 space.

Decisions where the texts are silent (also in ``docs/rules.md``): two sets of
a phase may be of the same number (six 5s are two sets of 3); the numbers of a
colour group are not checked; a card read out without its colour cannot be
counted in a colour group.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Literal

COLOURS = ("red", "blue", "green", "yellow")
HIGHEST = 12
GroupKind = Literal["set", "run", "colour"]


# --- cards ------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Card:
    """A card as read out: ``Card(7)``, ``Card(7, "red")``, ``Card(None, "green")``
    (a green card whose number does not matter), ``WILD``, ``SKIP``."""

    number: int | None = None
    colour: str | None = None
    kind: Literal["number", "wild", "skip"] = "number"

    def __post_init__(self) -> None:
        if self.kind == "number":
            if self.number is None and self.colour is None:
                raise ValueError("a number card needs a number or a colour")
            if self.number is not None and not 1 <= self.number <= HIGHEST:
                raise ValueError(f"there is no {self.number}: cards go from 1 to 12")
            if self.colour is not None and self.colour not in COLOURS:
                raise ValueError(f"there is no colour {self.colour!r}: red, blue, green, yellow")

    @property
    def natural(self) -> bool:
        return self.kind == "number"

    @property
    def points(self) -> int:
        """What the card costs in a hand at the end: 1..9 = 5, 10..12 = 10,
        Skip 15, Wild 25 (a colour alone counts as 5)."""
        if self.kind == "wild":
            return 25
        if self.kind == "skip":
            return 15
        return 10 if self.number is not None and self.number >= 10 else 5

    def __str__(self) -> str:
        if self.kind != "number":
            return self.kind
        if self.number is None:
            return str(self.colour)
        return f"{self.number}:{self.colour}" if self.colour else str(self.number)


WILD = Card(kind="wild")
SKIP = Card(kind="skip")


def parse_card(text: str) -> Card:
    """A card as written on the command line: ``7``, ``7:red``, ``red``, ``wild``, ``skip``.

    >>> parse_card("7:Red"), parse_card("wild")
    (Card(number=7, colour='red', kind='number'), Card(number=None, colour=None, kind='wild'))
    """
    word = text.strip().casefold()
    if word in ("wild", "skip"):
        return WILD if word == "wild" else SKIP
    number, _, colour = word.partition(":")
    if number in COLOURS and not colour:
        return Card(None, number)
    if not number.isdigit() or (colour and colour not in COLOURS):
        raise ValueError(f"{text!r} is not a card: write 7, 7:red, wild or skip")
    return Card(int(number), colour or None)


def hand_points(cards: Sequence[Card]) -> int:
    """The points of the cards left in a hand.

    >>> hand_points([WILD, SKIP, Card(7)])
    45
    """
    return sum(card.points for card in cards)


# --- phases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One group a phase asks for: at least ``size`` cards."""

    kind: GroupKind
    size: int
    one_colour: bool = False  # a run of one colour (Twist card 8)

    def words(self, count: int = 1) -> str:
        """ "a set of 3", "2 sets of 3", "7 cards of one colour"."""
        if self.kind == "colour":
            return f"{self.size} cards of one colour"
        name = self.kind if count == 1 else f"{count} {self.kind}s"
        lead = "a " if count == 1 else ""
        colour = " of one colour" if self.one_colour else ""
        return f"{lead}{name} of {self.size}{colour}"


@dataclass(frozen=True)
class Phase:
    """A phase of the board (``number``) or of a Twist card (``twist``)."""

    number: int
    groups: tuple[Group, ...]
    twist: bool = False

    @property
    def name(self) -> str:
        return f"Twist card {self.number}" if self.twist else f"phase {self.number}"

    @property
    def cards(self) -> int:
        """The fewest cards that make it."""
        return sum(g.size for g in self.groups)

    def words(self) -> str:
        """ "a set of 3 and a run of 4", "2 sets of 3"."""
        counted = Counter(self.groups)
        parts = [group.words(counted[group]) for group in dict.fromkeys(self.groups)]
        return " and ".join(parts)


_GROUP = re.compile(r"^(\d+) (set|run|card)s? of (\d+)( one colou?r)?$|"
                    r"^(\d+) cards one colou?r$")


def phase_from_text(number: int, text: str, twist: bool = False) -> Phase:
    """A phase written as in the rules: ``"1 set of 3 + 1 run of 4"``.

    >>> phase_from_text(8, "1 run of 5 of one colour", twist=True).words()
    'a run of 5 of one colour'
    """
    groups: list[Group] = []
    for part in text.split("+"):
        words = " ".join(part.replace(" of one", " one").split())
        match = _GROUP.match(words)
        if match is None:
            raise ValueError(f"cannot read the phase {text!r}")
        if match.group(5):
            groups.append(Group("colour", int(match.group(5))))
            continue
        count, kind, size = int(match.group(1)), match.group(2), int(match.group(3))
        one_colour = bool(match.group(4))
        groups += [Group("run" if kind == "run" else "set", size, one_colour)] * count
    return Phase(number, tuple(groups), twist)


#: The standard ten phases of the board (``../shared/rules.md``).
BOARD_PHASES = {n: phase_from_text(n, text) for n, text in {
    1: "2 sets of 3", 2: "1 set of 3 + 1 run of 4", 3: "1 set of 4 + 1 run of 4",
    4: "1 run of 7", 5: "1 run of 8", 6: "1 run of 9", 7: "2 sets of 4",
    8: "7 cards of one colour", 9: "1 set of 5 + 1 set of 2", 10: "1 set of 5 + 1 set of 3",
}.items()}

#: The ten Twist cards (the seed's list).
TWIST_PHASES = {n: phase_from_text(n, text, twist=True) for n, text in {
    1: "3 sets of 3", 2: "4 sets of 2", 3: "1 set of 5 + 1 run of 4",
    4: "2 sets of 3 + 1 run of 3", 5: "1 set of 3 + 1 run of 6", 6: "2 runs of 4",
    7: "4 cards of one colour + 1 run of 4", 8: "1 run of 5 of one colour",
    9: "8 cards of one colour", 10: "9 cards of one colour",
}.items()}


# --- laid-down groups, for hits ----------------------------------------------------------------


@dataclass(frozen=True)
class Laid:
    """A group on the table as the referee knows it: a set's number, a run's
    ends, a colour (None where only Wilds say it)."""

    kind: GroupKind
    number: int | None = None
    low: int = 0
    high: int = 0
    colour: str | None = None

    def words(self) -> str:
        if self.kind == "set":
            return f"a set of {self.number}s" if self.number else "a set of Wilds"
        if self.kind == "run":
            colour = f"{self.colour} " if self.colour else ""
            return f"a {colour}run from {self.low} to {self.high}"
        return f"the {self.colour} cards" if self.colour else "a colour group"

    def add(self, card: Card) -> Laid | None:
        """The group with ``card`` added, or None when it does not fit directly.
        A Wild on a run extends it upwards, or downwards from 12."""
        if self.kind == "set":
            if card.kind == "wild" or card.number == self.number:
                return self
            if self.number is None and card.number is not None:
                return replace(self, number=card.number)
            return None
        if self.kind == "colour":
            if card.kind == "wild" or card.colour == self.colour:
                return self
            if self.colour is None and card.colour is not None:
                return replace(self, colour=card.colour)
            return None
        if not card.natural:
            if card.kind == "skip":
                return None
            if self.high < HIGHEST:
                return replace(self, high=self.high + 1)
            return replace(self, low=self.low - 1) if self.low > 1 else None
        if self.colour is not None and card.colour not in (None, self.colour):
            return None
        if card.number == self.high + 1:
            return replace(self, high=self.high + 1)
        if card.number == self.low - 1:
            return replace(self, low=self.low - 1)
        return None


# --- the checker ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether cards make a phase; why not; and the groups they make (for hits)."""

    valid: bool
    reason: str = ""
    groups: tuple[Laid, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"valid": True} if self.valid else {"valid": False, "reason": self.reason}


#: The natural cards a group holds so far: a set's numbers, a colour group's
#: colours, a run's (number, colour) pairs.
_Fill = tuple[Any, ...]


def check_phase(phase: Phase, cards: Sequence[Card]) -> Verdict:
    """Whether ``cards`` laid down together make ``phase`` (every card used).

    >>> check_phase(BOARD_PHASES[1], [Card(5)] * 3 + [Card(7)] * 2 + [WILD]).valid
    True
    >>> check_phase(BOARD_PHASES[1], [WILD] * 6).reason
    'A phase needs at least one natural card: it cannot be only Wilds.'
    """
    if not cards:
        return Verdict(False, "No cards were read out.")
    if any(card.kind == "skip" for card in cards):
        return Verdict(False, "A Skip cannot be part of a phase.")
    if not any(card.natural for card in cards):
        return Verdict(False, "A phase needs at least one natural card: it cannot be only Wilds.")
    if len(cards) < phase.cards:
        return Verdict(False, f"{_cap(phase.name)} is {phase.words()}: at least "
                              f"{phase.cards} cards, and that is {len(cards)}.")
    naturals = tuple(sorted((c for c in cards if c.natural), key=_order))
    wilds = len(cards) - len(naturals)
    found = _search(phase.groups, naturals, wilds)
    if found is not None:
        return Verdict(True, groups=found)
    return Verdict(False, _why_not(phase, naturals, wilds))


def _order(card: Card) -> tuple[int, str]:
    return (card.number or 0, card.colour or "")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _search(groups: tuple[Group, ...], naturals: tuple[Card, ...],
            wilds: int) -> tuple[Laid, ...] | None:
    """Assign every natural card to a group, then the Wilds where they are needed."""
    empty: tuple[_Fill, ...] = tuple(() for _ in groups)

    @cache
    def place(i: int, fills: tuple[_Fill, ...]) -> tuple[Laid, ...] | None:
        if i == len(naturals):
            return _finish(groups, fills, wilds)
        card = naturals[i]
        tried: set[tuple[Group, _Fill]] = set()
        for g, group in enumerate(groups):
            if (group, fills[g]) in tried:  # an identical group in the same state
                continue
            tried.add((group, fills[g]))
            grown = _accepts(group, fills[g], card)
            if grown is None:
                continue
            found = place(i + 1, (*fills[:g], grown, *fills[g + 1:]))
            if found is not None:
                return found
        return None

    return place(0, empty)


def _accepts(group: Group, fill: _Fill, card: Card) -> _Fill | None:
    """The group's cards with ``card`` added, if it may belong to it."""
    if group.kind == "colour":
        if card.colour is None or (fill and fill[0] != card.colour):
            return None
        return (*fill, card.colour)
    if card.number is None:
        return None
    if group.kind == "set":
        return None if fill and fill[0] != card.number else (*fill, card.number)
    numbers = [n for n, _ in fill]
    if card.number in numbers:
        return None
    if group.one_colour and (card.colour is None or (fill and fill[0][1] != card.colour)):
        return None
    span = max([*numbers, card.number]) - min([*numbers, card.number]) + 1
    if span > HIGHEST:
        return None
    return (*fill, (card.number, card.colour))


def _finish(groups: tuple[Group, ...], fills: tuple[_Fill, ...],
            wilds: int) -> tuple[Laid, ...] | None:
    """Fill the gaps and missing cards with Wilds; the spare ones must fit
    somewhere (a set or colour group takes any number, a run up to 12 long)."""
    need = room = 0
    laid: list[Laid] = []
    for group, fill in zip(groups, fills, strict=True):
        if group.kind != "run":
            need += max(0, group.size - len(fill))
            value = fill[0] if fill else None
            laid.append(Laid("set", number=value) if group.kind == "set"
                        else Laid("colour", colour=value))
            continue
        numbers = sorted(n for n, _ in fill)
        length = max(group.size, numbers[-1] - numbers[0] + 1) if numbers else group.size
        need += length - len(numbers)
        room += HIGHEST - length
        low = min(numbers[0], HIGHEST - length + 1) if numbers else 1
        colour = fill[0][1] if fill and group.one_colour else None
        laid.append(Laid("run", low=low, high=low + length - 1, colour=colour))
    if any(g.kind != "run" for g in groups):
        room = wilds
    if need > wilds or wilds - need > room:
        return None
    return tuple(laid)


def _why_not(phase: Phase, naturals: tuple[Card, ...], wilds: int) -> str:
    """What is wrong, in a sentence: the first group the cards cannot make even
    on its own, else that they do not split into the phase's groups."""
    wanted = f"{_cap(phase.name)} is {phase.words()}"
    colours_only = all(g.kind == "colour" or g.one_colour for g in phase.groups)
    if colours_only and any(c.colour is None for c in naturals):
        return f"{wanted}: I need the colours of the cards."
    for group in dict.fromkeys(phase.groups):
        if not _could_make(group, naturals, wilds):
            return f"{wanted}, and there is no {group.words().removeprefix('a ')} in these cards."
    return (f"{wanted}: these cards do not split into that; extra cards must fit "
            "directly on the phase's groups.")


def _could_make(group: Group, naturals: tuple[Card, ...], wilds: int) -> bool:
    """Whether some of the cards (and Wilds) make this one group."""
    if group.kind != "run":
        counts = Counter(c.number if group.kind == "set" else c.colour for c in naturals)
        counts.pop(None, None)
        return max(counts.values(), default=0) + wilds >= group.size
    keys = {(c.colour if group.one_colour else None) for c in naturals}
    for key in keys:
        numbers = {c.number for c in naturals if c.number is not None
                   and (not group.one_colour or c.colour == key)}
        for low in range(1, HIGHEST - group.size + 2):
            span = set(range(low, low + group.size))
            if len(span - numbers) <= wilds and span & numbers:
                return True
    return False


# --- the board --------------------------------------------------------------------------------

TWIST = None  # a Twist space on the board


@dataclass(frozen=True)
class Board:
    """The board's spaces in order: a phase number, or ``None`` for a Twist
    space. The first space is the start; the last is the red Phase 10 space."""

    spaces: tuple[int | None, ...]

    @property
    def last(self) -> int:
        """The index of the Phase 10 space; a pawn beyond it has finished."""
        return len(self.spaces) - 1

    def neighbours(self, space: int) -> tuple[int, int]:
        """The phases on either side of a Twist space (the nearest numbered ones)."""
        before = next(p for p in reversed(self.spaces[:space]) if p is not None)
        after = next(p for p in self.spaces[space + 1:] if p is not None)
        return before, after

    def words(self, space: int) -> str:
        """ "phase 3", "a Twist space", "the Phase 10 space", "past Phase 10"."""
        if space > self.last:
            return "past Phase 10"
        if space == self.last:
            return "the Phase 10 space"
        phase = self.spaces[space]
        return "a Twist space" if phase is None else f"phase {phase}"

    def text(self) -> str:
        """The board as a board file writes it."""
        cells = ["T" if p is None else str(p) for p in self.spaces]
        return " ".join(cells)


#: The default board of ``../shared/rules.md`` (an assumption: the seed does not give it).
DEFAULT_BOARD_TEXT = "1 2 T 3 4 T 5 6 T 7 8 T 9 10"

_CELL = re.compile(r"^(?:(\d+)|(t|twist))(?:\((start|red)\))?$", re.IGNORECASE)


def parse_board(text: str) -> Board:
    """A board file: spaces separated by spaces, commas or new lines, ``#``
    comments; a space is a phase number (1 to 10) or ``T`` for a Twist space;
    ``1(start)`` and ``10(red)`` may mark the first and last. Raises
    ``ValueError`` with a sentence that says what is wrong.

    >>> parse_board(DEFAULT_BOARD_TEXT).neighbours(2)
    (2, 3)
    """
    cells = [c for line in text.splitlines() for c in re.split(r"[\s,]+", line.split("#")[0])
             if c]
    spaces: list[int | None] = []
    for n, cell in enumerate(cells, start=1):
        match = _CELL.match(cell)
        if match is None:
            raise ValueError(f"Space {n} of the board, {cell!r}, is neither a phase number "
                             "nor T for a Twist space.")
        if match.group(2):
            spaces.append(None)
            continue
        phase = int(match.group(1))
        if not 1 <= phase <= 10:
            raise ValueError(f"Space {n} of the board is phase {phase}: phases go from 1 to 10.")
        spaces.append(phase)
    if len(spaces) < 2:
        raise ValueError("A board needs at least a first space and the Phase 10 space.")
    if spaces[0] is None:
        raise ValueError("The first space of the board must be a phase, not a Twist space.")
    if spaces[-1] != 10:
        raise ValueError("The last space of the board must be the red Phase 10 space: 10.")
    early = [n for n, p in enumerate(spaces[:-1], start=1) if p == 10]
    if early:
        raise ValueError(f"Space {early[0]} of the board is 10: only the last space, the red "
                         "one, is Phase 10.")
    return Board(tuple(spaces))


DEFAULT_BOARD = parse_board(DEFAULT_BOARD_TEXT)
