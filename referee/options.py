"""The command line's own option types (a clear message for a bad value) and
the game set up as the command line says (:func:`make_spec`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.games import find_game
from referee.games.base import GameSpec
from referee.wording import NoSuchPlayer, player_named


def within(kind: type[int] | type[float], low: float, high: float,
           unit: str) -> Callable[[str], Any]:
    """An argparse type: a number from ``low`` to ``high`` (a clear message otherwise).

    >>> within(int, 80, 400, "words a minute")("175")
    175
    """
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{text} is out of range: give {low:g} to {high:g} {unit}".rstrip())
        return value

    return parse


def existing_folder(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    return path


def model_option(text: str) -> Path | str:
    """``--model``: ``base`` (Whisper tiny.en without the table's adapter) or a folder."""
    from referee.speech.hearing.recognizers import BASE_MODEL

    if text == BASE_MODEL:
        return BASE_MODEL
    return existing_folder(text)


VOICES = ("espeak", "piper", "none")


def voice_option(text: str) -> str:
    """``--voice``: a voice, ``wav:DIR``, or both (``piper,wav:out``)."""
    for part in text.split(","):
        part = part.strip()
        if part and not part.startswith("wav:") and part not in VOICES:
            raise argparse.ArgumentTypeError(
                f"unknown voice {part!r}: choose {', '.join(VOICES)}, or wav:DIR")
    return text


#: The most players ``referee hear --phrases`` and ``referee phrases check`` take.
MOST_PLAYERS = 8


def make_spec(args: argparse.Namespace, game: str) -> GameSpec:
    """The game set up as the command line says: the only place options are
    read from an argparse namespace."""
    spec_class = find_game(game)
    return spec_class(args.players, spec_class.options_type.from_arguments(args))


def screen_address(text: str) -> str:
    """``--screen``: a port, or HOST:PORT, checked as the command line is read
    (a bad one is refused before anything starts)."""
    from referee.screen.server import ScreenError, parse_address

    try:
        parse_address(text)
    except ScreenError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def parse_seats(text: str | None, players: tuple[str, ...]) -> dict[int, str]:
    """``"Ann=0,Bob=1"`` -> ``{0: "Ann", 1: "Bob"}``, or ValueError with the reason.

    >>> parse_seats("ann=1, Bob=0", ("Ann", "Bob"))
    {1: 'Ann', 0: 'Bob'}
    """
    if not text:
        return {}
    seats: dict[int, str] = {}
    for part in text.split(","):
        name, _, channel = part.partition("=")
        try:
            player = player_named(name, players)
        except NoSuchPlayer as error:
            raise ValueError(f"--seat-mics: {error}") from None
        if not channel.strip().isdigit():
            raise ValueError(f"--seat-mics: give {player}'s input channel as a number "
                             f"(0 is the first), not {channel.strip()!r}.")
        if int(channel) in seats:
            raise ValueError(f"--seat-mics: channel {int(channel)} is given twice.")
        seats[int(channel)] = player
    return seats
