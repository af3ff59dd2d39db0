"""The games the referee knows, by the name used on the command line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import GameSpec, SetupError
from referee.games.phase10 import Phase10Spec
from referee.games.race65 import Race65Spec
from referee.games.shutbox import ShutBoxSpec
from referee.games.turn7 import Turn7Spec
from referee.speech.understanding.intents import IntentMatcher

GAMES: dict[str, type[GameSpec]] = {
    spec.name: spec for spec in (Race65Spec, ShutBoxSpec, Turn7Spec, Phase10Spec)}


def find_game(name: str) -> type[GameSpec]:
    """The game called ``name`` (or one of its aliases); raises SetupError."""
    key = name.strip().casefold()
    for spec in GAMES.values():
        if key == spec.name or key in spec.aliases:
            return spec
    raise SetupError(f"Unknown game {name!r}. Games: {', '.join(GAMES)}.")


def matcher_for(game: str, players: Sequence[str], **options: Any) -> IntentMatcher:
    """The intent matcher of a registered game, by its name (tests, benchmarks,
    tools). It lives here, not in the matcher, which knows no game."""
    return IntentMatcher.for_phrases(find_game(game).phrase_file, players, **options)


__all__ = ["GAMES", "GameSpec", "SetupError", "find_game", "matcher_for"]
