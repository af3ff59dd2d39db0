"""What a player meant: the typed intent, and how the referee puts it in words.

An :class:`Intent` is a frozen value: a kind ("flip", "shut", "query") and
its slots (``owner="Bob"``, ``tiles=(3, 4)``). The intent matcher makes
them, games turn them into engine actions, the game log keeps them as JSON.

Its three text forms come from one place each:

* ``str(intent)``, the text form for logs, benchmark tables and ``referee
  hear``: ``flip direction=up owner=Bob tile=7``;
* the description ("flip Bob's 7 up"), used to ask about an ambiguous
  sentence, and the confirmation question ("Ann, did you call 65?"): both
  from the ``[describe]`` and ``[confirm]`` tables of the game's phrase file,
  beside the sentences that make the intent (:class:`Wording`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: A slot's value: a word, a number, a list of them, or (for ``ambiguous``) intents.
Value = Any


def spoken_list(items: Iterable[object]) -> str:
    """ "1, 4 and 12": a list as a referee says it.

    >>> spoken_list([1, 4, 12]), spoken_list(["Ann"]), spoken_list([])
    ('1, 4 and 12', 'Ann', '')
    """
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _frozen(value: Value) -> Value:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return Intent.from_json(value)
    return value


def _json(value: Value) -> Any:
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, Intent):
        return value.to_json()
    return value


def _text(value: Value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    return str(value)


@dataclass(frozen=True)
class Intent:
    """A kind and its slots, hashable and comparable.

    >>> flip = Intent.of("flip", owner="Bob", tile=7, direction=None)
    >>> flip["tile"], flip.get("direction"), str(flip)
    (7, None, 'flip direction=None owner=Bob tile=7')
    >>> Intent.from_json(flip.to_json()) == flip
    True
    >>> Intent.of("shut", tiles=[3, 4])["tiles"]
    (3, 4)
    """

    kind: str
    #: (name, value) pairs sorted by name; lists are tuples.
    slots: tuple[tuple[str, Value], ...] = ()

    @classmethod
    def of(cls, kind: str, **slots: Value) -> Intent:
        return cls(kind, tuple(sorted((k, _frozen(v)) for k, v in slots.items())))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Intent:
        """The intent of ``{"kind": "flip", "tile": 7, ...}`` (a log, a fixture)."""
        kind = data.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"an intent needs a kind, not {data!r}")
        return cls.of(kind, **{k: v for k, v in data.items() if k != "kind"})

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **{k: _json(v) for k, v in self.slots}}

    def __getitem__(self, name: str) -> Value:
        for key, value in self.slots:
            if key == name:
                return value
        raise KeyError(f"{self.kind} has no slot {name!r}")

    def get(self, name: str, default: Value = None) -> Value:
        try:
            return self[name]
        except KeyError:
            return default

    def with_slots(self, **slots: Value) -> Intent:
        """The same intent with some slots replaced (or added)."""
        return Intent.of(self.kind, **{**dict(self.slots), **slots})

    @property
    def candidates(self) -> tuple[Intent, ...]:
        """The intents an ``ambiguous`` one hesitates between (none for others)."""
        return tuple(self.get("candidates", ()))

    def __str__(self) -> str:
        return " ".join([self.kind, *(f"{k}={_text(v)}" for k, v in self.slots)])


NONE = Intent("none")


def ambiguous(candidates: Iterable[Intent]) -> Intent:
    return Intent.of("ambiguous", candidates=tuple(candidates))


# --- descriptions and confirmations ---------------------------------------------------------

_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_SLOT = re.compile(r"\{(\w+)\}")


def _said(value: Value) -> str:
    if isinstance(value, tuple):
        return spoken_list(value)
    return "" if value is None else str(value)


def render(template: str, values: Mapping[str, Value]) -> str:
    """Fill ``{slot}`` from ``values``; a ``[part]`` is left out when a slot
    in it has no value.

    >>> render("flip {owner}'s {tile}[ {direction}]", {"owner": "Bob", "tile": 7})
    "flip Bob's 7"
    >>> render("shut {tiles}", {"tiles": (1, 2, 3)})
    'shut 1, 2 and 3'
    """

    def fill(text: str, optional: bool) -> str:
        names = _SLOT.findall(text)
        if optional and any(values.get(n) in (None, (), "") for n in names):
            return ""
        return _SLOT.sub(lambda m: _said(values.get(m[1])), text)

    return fill(_OPTIONAL.sub(lambda m: fill(m[1], True), template), False)


@dataclass(frozen=True)
class Wording:
    """How a game's intents are put in words: the phrase file's ``[describe]``
    and ``[confirm]`` tables.

    A key is a kind ("roll"), or a kind with slot values that must hold
    ("roll dice=1"); the most specific key that holds is used. ``{who}`` in a
    confirmation is the player asked.

    >>> w = Wording({"roll": "roll", "roll dice=1": "roll one die"},
    ...             {"call": "{caller}, did you call {number}?"})
    >>> w.describe(Intent.of("roll", dice=1)), w.describe(Intent.of("roll", dice=2))
    ('roll one die', 'roll')
    >>> w.confirm(Intent.of("roll", dice=1), "Ann")
    'Ann, did you say: roll one die?'
    >>> w.confirm(Intent.of("call", caller="Bob", number=65), "Bob")
    'Bob, did you call 65?'
    """

    descriptions: Mapping[str, str] = field(default_factory=dict)
    confirmations: Mapping[str, str] = field(default_factory=dict)
    #: Help topic ("moves", "questions", "table") -> example commands, each a
    #: template for :func:`render` ("{other}, flip your 4").
    help: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @staticmethod
    def _pick(table: Mapping[str, str], intent: Intent) -> str | None:
        best: tuple[int, str] | None = None
        for key, text in table.items():
            kind, *conditions = key.split()
            if kind != intent.kind:
                continue
            pairs = [c.partition("=") for c in conditions]
            holds = all(_said(intent.get(name)) == value for name, _, value in pairs)
            if holds and (best is None or len(pairs) > best[0]):
                best = (len(pairs), text)
        return None if best is None else best[1]

    def describe(self, intent: Intent) -> str:
        template = self._pick(self.descriptions, intent)
        return intent.kind if template is None else render(template, dict(intent.slots))

    def confirm(self, intent: Intent, who: str) -> str:
        template = self._pick(self.confirmations, intent)
        if template is None:
            return f"{who}, did you say: {self.describe(intent)}?"
        return render(template, {**dict(intent.slots), "who": who})
