"""Any message or record written as JSON and read back, every field checked.

:func:`plain` writes a value as JSON has it (tuples as lists, a frozen
dataclass as an object, with its ``type`` where the class has one);
:func:`checked` reads a value back against a field's type hint, and
:func:`fields_of` a dataclass's fields, so that a hand-edited game log gives
a :class:`LogError` naming what is wrong, never a traceback. The protocol's
messages (:mod:`referee.protocol`) and the log's records
(:mod:`referee.records`) are written and read through it.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any

import numpy as np

from referee.speech.understanding.meaning import Intent


class LogError(ValueError):
    """A log that cannot be read back, with the reason."""


def _a(cls: type[Any]) -> str:
    """ "an intent", "a SaidRecord": what a field should have held."""
    name = cls.__name__ if cls is not Intent else "intent"
    return ("an " if name[0].casefold() in "aeiou" else "a ") + name


def plain(value: Any) -> Any:
    """A value as JSON has it (tuples as lists, dataclasses as objects, a
    record or a message as an object with its ``type``)."""
    if isinstance(value, np.generic):  # (a recogniser's scores)
        return value.item()
    if isinstance(value, Intent):
        return value.to_json()
    if isinstance(value, enum.Enum):
        return value.value
    if getattr(type(value), "writes_itself", False):
        return plain(value.to_json())  # (a recogniser's measures: their own layout)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(type(value), "type", None)
        fields = plain_fields(value)
        return {"type": kind, **fields} if isinstance(kind, str) else fields
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def plain_fields(value: Any) -> dict[str, Any]:
    return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}


def checked(value: Any, hint: Any, where: str) -> Any:
    """``value`` read from JSON if it fits the field's type, else LogError."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return checked(value, option, where)
            except LogError:
                continue
        raise LogError(f"{where} is {value!r}")
    if hint is type(None):
        if value is None:
            return None
        raise LogError(f"{where} is {value!r}")
    if origin is tuple:
        (item, *_) = typing.get_args(hint)
        if not isinstance(value, list):
            raise LogError(f"{where} is {value!r}, not a list")
        return tuple(checked(v, item, where) for v in value)
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise LogError(f"{where} is {value!r}, not an object")
        return value
    if isinstance(hint, type) and callable(getattr(hint, "from_json", None)):
        # (an intent, a record: the class reads itself, or says why not)
        if not isinstance(value, dict):
            raise LogError(f"{where} is {value!r}, not an object")
        try:
            read = typing.cast(Any, hint).from_json(value)
        except LogError as error:
            raise LogError(f"{where}: {error}") from None
        except ValueError:
            raise LogError(f"{where} is {value!r}, not {_a(hint)}") from None
        if not isinstance(read, hint):
            raise LogError(f"{where} is a {getattr(read, 'type', type(read).__name__)}, "
                           f"not {_a(hint)}")
        return read
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise LogError(f"{where} is {value!r}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(value, hint, where)
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise LogError(f"{where} is {value!r}, not a number")
    if hint is Any:
        return value
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise LogError(f"{where} is {value!r}")
    return value


def _dataclass(value: Any, cls: type[Any], where: str) -> Any:
    """A frozen dataclass read from a JSON object, each field checked."""
    if not isinstance(value, dict):
        raise LogError(f"{where} is {value!r}, not an object")
    kind = getattr(cls, "type", None)
    if isinstance(kind, str) and value.get("type", kind) != kind:
        raise LogError(f"{where} is a {value.get('type')!r}, not a {kind!r}")
    unknown = (set(value) - {f.name for f in dataclasses.fields(cls)} - {"type"}
               - getattr(cls, "retired", frozenset()))
    if unknown:
        raise LogError(f"{where} has unknown fields {sorted(unknown)}")
    return cls(**fields_of(value, cls, where, where))


def fields_of(data: dict[str, Any], cls: type[Any], where: str, what: str) -> dict[str, Any]:
    """``cls``'s fields read from ``data``, each checked against its type; a
    field without a default must be there (``what`` names the object missing it)."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            values[f.name] = checked(data[f.name], hints[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise LogError(f"{what} has no {f.name}")
    return values
