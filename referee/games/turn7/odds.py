"""The odds of Turn 7, exactly, from the cards still in the deck (:func:`odds`),
for "what are my odds" and "hint" at the table and for ``referee hint turn7``,
which prints them as JSON (:func:`hint`)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.engine.turn7 import (
    Hand,
    bust_chance,
    card_order,
    expected_after_hit,
    full_deck,
    is_card,
)
from referee.games.base import SetupError


def deck_after(seen: Sequence[str], row: Sequence[int], modifiers: Sequence[str]) -> list[str]:
    """The cards a full deck still holds once ``seen``, the row and the modifiers are out.

    Raises ``SetupError`` for a card the deck does not have (or not that often).
    """
    left = Counter(full_deck())
    for card in [*seen, *map(str, row), *modifiers]:
        if not is_card(card):
            raise SetupError(f"There is no card {card!r} in Turn 7.")
        if left[card] <= 0:
            raise SetupError(f"The deck has only {full_deck().count(card)} of {card}.")
        left[card] -= 1
    return sorted(left.elements(), key=card_order)


@dataclass(frozen=True)
class Odds:
    bust: float
    stay: int
    hit: float
    cards: int

    @property
    def advice(self) -> str:
        return "hit" if self.hit > self.stay else "stay"

    def to_json(self) -> dict[str, Any]:
        return {"bust": self.bust, "stay": self.stay, "hit": self.hit,
                "advice": self.advice, "cards": self.cards}


def odds(hand: Hand, deck: Sequence[str]) -> Odds:
    """The chance that the next card busts ``hand``, its round score if it stays
    now, and its expected round score after exactly one more card."""
    return Odds(bust_chance(hand, deck), hand.score(), expected_after_hit(hand, deck), len(deck))


def parse_card(text: str) -> str:
    """A card as written on the command line: ``7``, ``+4``, ``x2``, ``lock``,
    ``turn3``, ``lifesaver``."""
    card = text.strip().lower().replace("\N{MULTIPLICATION SIGN}", "x").replace(" ", "")
    card = {"turnthree": "turn3", "life-saver": "lifesaver", "*2": "x2"}.get(card, card)
    if not is_card(card):
        raise SetupError(f"There is no card {text!r} in Turn 7: cards are 0 to 12, +2 to +10, "
                         "x2, lock, turn3 and lifesaver.")
    return card


def hint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--row", nargs="*", type=int, default=[], metavar="N",
                        help="the player's number cards")
    parser.add_argument("--mods", nargs="*", default=[], metavar="MOD",
                        help="the player's modifiers: +2 +4 +6 +8 +10 x2")
    parser.add_argument("--seen", nargs="*", default=[], metavar="CARD",
                        help="every other card out of the deck since the last shuffle")
    parser.add_argument("--lifesaver", action="store_true",
                        help="the player holds a Life Saver (a duplicate does not bust)")


def hint(args: argparse.Namespace) -> int:
    """``{"bust": p, "stay": s, "hit": e, "advice": "hit", "cards": n}``."""
    row = list(args.row)
    if len(set(row)) != len(row):
        raise SetupError("A row holds each number once (a second one busts).")
    if len(row) >= 7:
        raise SetupError("Seven different numbers is a Turn 7: the round is over.")
    mods = [parse_card(m) for m in args.mods]
    if any(m in ("lock", "turn3", "lifesaver") or m.isdigit() for m in mods):
        raise SetupError("--mods takes modifiers only: +2 +4 +6 +8 +10 x2.")
    seen = [parse_card(c) for c in args.seen]
    held = ["lifesaver"] if args.lifesaver else []
    deck = deck_after([*seen, *held], row, mods)
    if not deck:
        raise SetupError("Those are all the cards: the deck is empty.")
    hand = Hand(tuple(row), tuple(mods), lifesaver=args.lifesaver)
    print(json.dumps(odds(hand, deck).to_json()))
    return 0
