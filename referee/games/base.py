"""What the referee needs to know about a game besides its rules.

A game plugs into the referee with two things: its pure rules, a module in
:mod:`referee.engine`, and a folder here (``referee/games/<game>/``) holding
its :class:`GameSpec` (options, intents to actions, events to sentences,
answers, policy: what to confirm, what needs another player's agreement,
what may interrupt the referee, extra commands) and its phrase file. The
registry (:data:`referee.games.GAMES`) lists the games. The runtime
(:mod:`referee.session`, :mod:`referee.table`, the command line) knows
nothing else about any game; ``tests/test_layers.py`` checks it.
"""

from __future__ import annotations

import argparse
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from referee.engine.core import Action, Chance, Event, Game
from referee.speech.understanding.numbers import words_to_number


class SetupError(ValueError):
    """The table asked for a game that cannot be set up (bad names, options)."""


def spoken_list(items: Iterable[object]) -> str:
    """ "1, 4 and 12": a list as a referee says it.

    >>> spoken_list([1, 4, 12]), spoken_list(["Ann"]), spoken_list([])
    ('1, 4 and 12', 'Ann', '')
    """
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


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


def parse_house_rules(
    pairs: Sequence[str], known: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """``["partial_turn=keep"]`` -> every house rule's value (the first listed by default).

    >>> parse_house_rules(["ties=playoff"], {"ties": ("share", "playoff")})
    {'ties': 'playoff'}
    """
    rules = {name: values[0] for name, values in known.items()}
    for pair in pairs:
        name, _, value = pair.partition("=")
        name, value = name.strip().replace("-", "_"), value.strip()
        if name not in known:
            raise SetupError(f"Unknown house rule {name!r}. House rules: {', '.join(known)}.")
        if value not in known[name]:
            allowed = " or ".join(known[name])
            raise SetupError(f"House rule {name} takes {allowed}, not {value!r}.")
        rules[name] = value
    return rules


_NAME = re.compile(r"^[^\W\d_][\w' -]{0,29}$")


def check_players(players: Sequence[str], least: int, most: int) -> tuple[str, ...]:
    """Names a referee can say and hear: letters first, distinct, not numbers.

    >>> check_players(["Ann", "Bob"], 2, 2)
    ('Ann', 'Bob')
    """
    names = tuple(" ".join(p.split()) for p in players)
    if not least <= len(names) <= most:
        count = str(least) if least == most else f"{least} to {most}"
        raise SetupError(f"This game is for {count} players, not {len(names)}.")
    for name in names:
        if not _NAME.match(name):
            raise SetupError(
                f"{name!r} cannot be a player's name: use letters, at most 30 characters."
            )
        if words_to_number(name.casefold().replace("-", " ")) is not None:
            raise SetupError(f"{name!r} sounds like a number; please choose another name.")
    if len({n.casefold() for n in names}) != len(names):
        raise SetupError("Every player needs a different name.")
    return names


@dataclass(frozen=True)
class Tool:
    """A command a game adds to the command line: ``referee COMMAND GAME [options]``.

    Shut the Box offers ``hint``; another game may offer ``hint`` too, or
    ``check``: the command line gathers every game's tools under their command.
    ``run`` prints its answer and returns the exit code; bad options raise
    :class:`SetupError`.
    """

    command: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class GameSpec(ABC):
    """One game as the referee sees it: set-up, intents, announcements."""

    #: Name on the command line and of the phrase file.
    name: ClassVar[str]
    #: Other names accepted on the command line.
    aliases: ClassVar[tuple[str, ...]] = ()
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    #: Options of ``referee play`` the game reads (kept in the game log for resume).
    option_names: ClassVar[tuple[str, ...]] = ("house", "first", "verbosity")
    #: What players can say: the game folder's ``phrases.toml`` (see
    #: :mod:`referee.speech.understanding.templates`).
    phrase_file: ClassVar[Path]
    #: One line for ``referee play --help``.
    summary: ClassVar[str] = ""
    #: Extra commands of the game (``referee hint shut-the-box ...``).
    tools: ClassVar[tuple[Tool, ...]] = ()

    def __init__(self, players: Sequence[str], options: argparse.Namespace) -> None:
        self.players = check_players(players, self.min_players, self.max_players)
        self._setup = options
        #: "brief" drops what players can see for themselves (times, flips left).
        self.brief = getattr(options, "verbosity", None) == "brief"

    def options(self) -> dict[str, Any]:
        """The game's options as JSON, enough to set the same game up again."""
        return {name: getattr(self._setup, name, None) for name in self.option_names}

    @classmethod  # noqa: B027 (a hook: most games add options, some need none)
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Game-specific options of ``referee play``."""

    @abstractmethod
    def new_game(self, at: float) -> Game[Any]:
        """A fresh game whose first turn starts ``at``."""

    @abstractmethod
    def action_for(self, intent: dict[str, Any], speaker: str, game: Game[Any]) -> Action:
        """The engine action a move intent stands for (may raise a Rejection)."""

    @abstractmethod
    def announce(self, event: Event, game: Game[Any]) -> str:
        """The sentence the referee says for an event ('' for none)."""

    @abstractmethod
    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        """The answer to a question (score, board, time, turn, help, rules)."""

    @abstractmethod
    def opening(self, game: Game[Any]) -> str:
        """What the referee says when the game begins."""

    @abstractmethod
    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        """The game's state as JSON (``--json``)."""

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """Resolve a chance step the game waits for (a roll, a draw, a deal):
        the outcome to apply when the referee holds the dice or the deck
        (virtual), or None when the table resolves it (physical: the players
        report what came, and the game's phrases turn that into the outcome)."""
        return None

    def where_we_are(self, game: Game[Any], at: float) -> str:
        """What the table needs to hear to pick the game up again (on resume)."""
        return self.answer("turn", None, game, at)

    def describe_intent(self, intent: dict[str, Any]) -> str:
        """A short phrase for an intent, used to ask about ambiguous ones."""
        return str(intent.get("kind", "something"))

    # --- policy: what needs asking, and how ------------------------------------------
    def always_confirm(self, intent: dict[str, Any]) -> bool:
        """Whether a spoken move is confirmed even when it was heard surely
        (a move whose mistake would cost too much). Typed moves never are."""
        return False

    def confirmation(self, intent: dict[str, Any], who: str) -> str:
        """The question that confirms a move ``who`` made before it is played."""
        return f"{who}, did you say: {self.describe_intent(intent)}?"

    def agreement(self, intent: dict[str, Any]) -> str | None:
        """What another player must agree to before an intent is carried out
        ("end the game"), or None when it needs nobody's agreement. Undo is
        always agreed (the session names the move)."""
        return "end the game" if intent["kind"] == "end" else None

    def barge_in(self, intent: dict[str, Any]) -> bool:
        """Whether an intent may interrupt the referee while it is speaking."""
        return intent["kind"] == "stop" or (
            intent["kind"] == "query" and intent.get("what") == "repeat"
        )

    def undone(self, before: Any, game: Game[Any]) -> str:
        """What to say after an undo took the game from state ``before`` back."""
        return "Undone."
