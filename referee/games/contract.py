"""The game contract in one screen: what the referee's brain asks of a game.

The brain (:mod:`referee.session`, :mod:`referee.brain`) is typed against
these protocols, never against a game's class, and mypy checks that every
game meets them. A game's spec (:class:`~referee.games.base.GameSpec`)
provides the core and gets a default for everything else, which fits a game
without that capability: a new game overrides only what it has
(docs/architecture.md, "What a game provides"). Each line says what the
brain asks; the default is in :mod:`referee.games.base`, beside the method
of that name. ``tests/test_layers.py`` shows mypy refusing a game that
lacks one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from referee.engine.core import Action, Chance, Event, Game
from referee.speech.understanding.meaning import Intent


class Core(Protocol):
    """Required: the players, the phrase file, a game, and what is said of it."""

    @property
    def name(self) -> str: ...                   # on the command line, in the log
    @property
    def phrase_file(self) -> Path: ...           # what players can say
    @property
    def players(self) -> tuple[str, ...]: ...    # in the order they were named

    def begin(self, at: float) -> Game[Any]: ...  # a new game (first, or "play again")
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action: ...
    def announce(self, event: Event, game: Game[Any]) -> str: ...  # '' for none
    def opening(self, game: Game[Any]) -> str: ...
    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str: ...
    def final_state(self, game: Game[Any]) -> dict[str, Any]: ...  # the result, as JSON


class Talk(Protocol):
    """How the game talks beyond its events: answers, help, the screen."""

    def answer_question(self, intent: Intent, game: Game[Any], at: float) -> str: ...
    def help(self, topic: str | None, game: Game[Any], player: str | None,
             at: float) -> str: ...
    def describe_intent(self, intent: Intent) -> str: ...  # "flip Bob's 7"
    def public_state(self, game: Game[Any]) -> dict[str, Any]: ...  # what all may see
    def moves_now(self, game: Game[Any], player: str) -> list[str]: ...  # seat buttons
    def unnamed(self, game: Game[Any]) -> str | None: ...  # whose words nobody named
    def moments(self, game: Game[Any]) -> frozenset[str]: ...  # for phrases' ``when``
    def reset(self, game: Game[Any]) -> str: ...  # what to put back before "play again"
    def where_we_are(self, game: Game[Any], at: float) -> str: ...  # said on resume
    def undone(self, before: Any, game: Game[Any]) -> str: ...  # said after an undo


class Policy(Protocol):
    """What is asked about before it is played, expected, or may interrupt."""

    def always_confirm(self, intent: Intent) -> bool: ...  # a spoken move, even if sure
    def confirm_tap(self, intent: Intent) -> bool: ...  # a move tapped on a seat page
    def confirmation(self, intent: Intent, who: str) -> str: ...  # "Ann, did you say ...?"
    def likelier(self, intent: Intent, who: str, game: Game[Any],
                 at: float) -> Intent | None: ...  # another reading the rules take
    def expects(self, intent: Intent, who: str, game: Game[Any], at: float) -> bool: ...
    def agreement(self, intent: Intent) -> str | None: ...  # another player must agree
    def answer_move(self, intent: Intent, speaker: str,
                    game: Game[Any]) -> Intent | None: ...  # a yes to the game's question
    def waiting_for(self, game: Game[Any], player: str) -> str | None: ...
    def barge_in(self, intent: Intent) -> bool: ...  # may cut the referee's voice


class ChanceAtTable(Protocol):
    """Who resolves a chance step: the referee (virtual dice, deck) or the table."""

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None: ...  # None: the table
    def ask_chance(self, chance: Chance, game: Game[Any]) -> str: ...  # "roll and tell me"


class Privacy(Protocol):
    """Sentences for one player's ears only (their own headphones)."""

    def private(self, event: Event, game: Game[Any]) -> tuple[str, str] | None: ...
    def answer_privately(self, intent: Intent,
                         game: Game[Any]) -> tuple[str, str, str] | None: ...


class Contract(Core, Talk, Policy, ChanceAtTable, Privacy, Protocol):
    """Everything the brain asks of a game."""

