"""A game's options and the command line's glue: :class:`Options` (a frozen
value each game subclasses, declared with :func:`option`), house rules, the
players' names, and :class:`Tool` (a command a game adds). What a game is
lives in :mod:`referee.games.base`.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from referee.speech.understanding.numbers import words_to_number


class SetupError(ValueError):
    """The table asked for a game that cannot be set up (bad names, options)."""


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


#: How closely a name must match a command to be refused ("Stop": 1.0).
COMMAND_NAME_SCORE = 0.9

_NAME = re.compile(r"^[^\W\d_][\w' -]{0,29}$")


#: Words that stand for all the players ("everyone's score"): no player's name.
EVERYONE = frozenset({"everyone", "everybody", "anyone", "anybody", "all"})


def check_players(players: Sequence[str], least: int, most: int) -> tuple[str, ...]:
    """Names a referee can say and hear: letters first, distinct, not numbers,
    not a seat's alias ("player two") nor a word for all the players.

    >>> check_players(["Ann", "Bob"], 2, 2)
    ('Ann', 'Bob')
    >>> check_players(["player two", "Ann"], 2, 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    referee.games.options.SetupError: 'player two' is how the referee names a seat ...
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
        words = name.casefold().split()
        if len(words) == 2 and words[0] == "player" and words_to_number(words[1]) is not None:
            raise SetupError(f"{name!r} is how the referee names a seat at any table "
                             "(\"player two's score\"); please choose another name.")
        if name.casefold() in EVERYONE:
            raise SetupError(f"{name!r} means all the players to the referee "
                             "(\"everyone's score\"); please choose another name.")
    if len({n.casefold() for n in names}) != len(names):
        raise SetupError("Every player needs a different name.")
    return names


def option(default: Any, help: str, *, choices: Sequence[Any] | None = None,
           metavar: str | None = None) -> Any:
    """A field of a game's :class:`Options`: its default, its help on the
    command line, and the values it may take (checked however the options are
    made: command line, game log or a test)."""
    metadata = {"help": help, "choices": tuple(choices) if choices else None, "metavar": metavar}
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Options:
    """A game's options: a frozen value, made by the command line
    (:meth:`from_arguments`), from a game log (:meth:`from_json`) or directly
    (tests). Each game subclasses it with its own fields, declared with
    :func:`option`; ``referee play GAME`` offers exactly these fields.

    >>> Options(house=["ties=playoff"]).house
    ('ties=playoff',)
    >>> Options(verbosity="loud")
    Traceback (most recent call last):
    ...
    referee.games.options.SetupError: --verbosity takes normal or brief, not 'loud'.
    """

    first: str | None = option(None, "who starts (default: the first named)", metavar="NAME")
    house: tuple[str, ...] = option(
        (), "a house rule, e.g. partial_turn=keep (repeatable; see docs/playing.md)",
        metavar="RULE=VALUE")
    verbosity: str = option("normal", "brief leaves out what players can see for "
                            "themselves (times, what is left of a turn)",
                            choices=("normal", "brief"))

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            kind = hints[field.name]
            if _is_tuple(kind) and isinstance(value, list | tuple):
                object.__setattr__(self, field.name, tuple(str(v) for v in value))
                continue
            if value is None and _optional(kind):
                continue
            want = _scalar(kind)
            if want is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
                object.__setattr__(self, field.name, value)
            if want is bool and not isinstance(value, bool):
                raise SetupError(f"{_flag(field.name)} is on or off, not {value!r}.")
            if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
                raise SetupError(f"{_flag(field.name)} takes {_kind_name(want)}, not {value!r}.")
            choices = field.metadata.get("choices")
            if choices and value not in choices:
                allowed = " or ".join(map(str, choices))
                raise SetupError(f"{_flag(field.name)} takes {allowed}, not {value!r}.")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, title: str) -> None:
        """One command-line option per field: the common ones first, then the game's."""
        group = parser.add_argument_group(title)
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            target = parser if field.name in _COMMON else group
            meta = field.metadata
            kind = hints[field.name]
            extra: dict[str, Any] = {"metavar": meta.get("metavar")}
            if _is_tuple(kind):
                extra["action"] = "append"
            elif _scalar(kind) is bool:  # a switch: --turns
                extra = {"action": "store_true"}
            else:
                extra["type"] = _scalar(kind)
                if meta.get("choices"):
                    extra["choices"] = meta["choices"]
            text = meta.get("help") or ""
            if field.default not in (None, (), False) and "default" not in text:
                text += f" (default {field.default})"
            target.add_argument(_flag(field.name), help=text, default=None, **extra)

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Self:
        """The options given on a command line (absent ones take their defaults)."""
        given = {f.name: getattr(args, f.name, None) for f in dataclasses.fields(cls)}
        return cls(**{name: value for name, value in given.items() if value is not None})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The options a game log kept (see :meth:`to_json`)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(k for k, v in data.items() if k not in names and v is not None)
        if unknown:
            raise SetupError(f"This game has no option {unknown[0]!r}.")
        return cls(**{k: v for k, v in data.items() if k in names and v is not None})

    def to_json(self) -> dict[str, Any]:
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


_COMMON = {f.name for f in dataclasses.fields(Options)}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _kind_name(kind: type) -> str:
    return {int: "a whole number", str: "a word"}.get(kind, kind.__name__)


def _optional(kind: Any) -> bool:
    return isinstance(kind, types.UnionType) and type(None) in typing.get_args(kind)


def _is_tuple(kind: Any) -> bool:
    return typing.get_origin(kind) is tuple


def _scalar(kind: Any) -> type:
    """``int`` for ``int | None``: the type a value of the field has."""
    if isinstance(kind, types.UnionType):
        kinds = [k for k in typing.get_args(kind) if k is not type(None)]
        return typing.cast(type, kinds[0])
    return typing.cast(type, kind)


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
