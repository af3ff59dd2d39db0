"""Reading a phrase file (:func:`load_phrases`): its slots, word weights and
intents, its includes, and clear messages that say where a mistake is
(file and line). The template language itself is in
:mod:`referee.speech.understanding.templates`; docs/phrases.md is the guide."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from referee.speech.understanding.meaning import Wording
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import (
    DEFAULT_SLOT_WEIGHT,
    PHRASE_DIR,
    IntentTemplate,
    Parts,
    PhraseSet,
    Slot,
    SlotRef,
    TemplateError,
    normalise_words,
    number_slot,
    parse_template,
    parse_tree,
    player_slot,
    spoken_word,
    tree_tokens,
)


@cache
def _read_phrase_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise TemplateError(f"{_named(path)}: not a phrase file: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(f"{_named(path)}: cannot read it ({error})") from None


def _named(path: Path) -> str:
    """A phrase file as messages name it: a game's with its folder."""
    return f"{path.parent.name}/{path.name}" if path.name == "phrases.toml" else path.name


def where(path: Path, text: str) -> str:
    """The file's name and the line where ``text`` first appears ("race65.toml,
    line 12"), or the name alone."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for wanted in (f'"{text}"', text):  # a template as a string of the file first
        for number, line in enumerate(lines, start=1):
            if text and wanted in line:
                return f"{_named(path)}, line {number}"
    return _named(path)


def _slot(name: str, spec: Mapping[str, Any], players: Sequence[str]) -> Slot:
    """A slot of a phrase file from its table (``[slots.NAME]``)."""
    weight = float(spec.get("weight", DEFAULT_SLOT_WEIGHT))
    near_miss = str(spec.get("near_miss", ""))
    said: dict[str, Any] = {}
    for word in spec.get("words", ()):
        said[str(word)] = str(word)
    for word, value in dict(spec.get("values", {})).items():  # synonyms: in -> out
        said[str(word)] = value
    values: dict[str, Any] = {}
    spoken: dict[str, str] = {}
    for written, value in said.items():
        key = " ".join(join_numbers(normalise_words(written)))
        if not key:
            raise TemplateError(f"the value {written!r} has no words")
        values[key] = value
        if " " in key or key.isdigit():
            spoken[key] = " ".join(spoken_word(w) for w in key.split())
    if "numbers" in spec:
        low, high = spec["numbers"]
        numbers = number_slot(name, int(low), int(high), weight, near_miss)
        if values:  # a read-out: "three fives and a wild"
            slot = Slot(name, "words", {**numbers.values, **values}, weight,
                        {**numbers.spoken, **spoken}, near_miss=near_miss)
        else:
            slot = numbers
        if "grammar" in spec:
            slot = replace(slot, grammar=tuple(str(int(n)) for n in spec["grammar"]))
    elif values:
        slot = Slot(name, "words", values, weight, spoken, near_miss=near_miss)
    elif spec.get("players"):
        slot = player_slot(name, players, weight, near_miss)
    else:
        raise TemplateError("it has no values (numbers, words, values or players)")
    most = int(spec.get("most", 1))
    if most < 1:
        raise TemplateError("most must be 1 or more")
    joiner = tuple(parse_template(str(spec.get("joiner", "and")), keep_empty=True))
    slot = replace(slot, most=most, joiner=joiner if most > 1 else ((),),
                   leave_out=frozenset(map(str, spec.get("leave_out", ()))))
    return _said(slot, spec.get("said"), str(spec.get("joiner", "and")))


def _said(slot: Slot, spec: Any, joiner: str) -> Slot:
    """The slot with how the recognisers listen for it (``[slots.NAME.said]``:
    ``parts``, ``most``, ``joiner``), when it says."""
    if spec is None:
        return slot
    if slot.most < 2:
        raise TemplateError("said is for a list (give it most = 2 or more)")
    if not isinstance(spec, Mapping) or not spec.get("parts"):
        raise TemplateError("said needs parts: the templates one stretch of the list "
                            "is said as")
    unknown = set(spec) - {"parts", "most", "joiner"}
    if unknown:
        raise TemplateError(f"said has parts, most and joiner, not {', '.join(sorted(unknown))}")
    parts = tuple(map(str, spec["parts"]))
    for part in parts:
        parse_tree(part)
    most = int(spec.get("most", slot.most))
    if most < 1:
        raise TemplateError("said: most must be 1 or more")
    between = tuple(parse_template(str(spec.get("joiner", joiner)), keep_empty=True))
    return replace(slot, said=parts, said_most=most, said_joiner=between)


def _check_slots(tree: Parts, slots: Mapping[str, Slot], sentence: str) -> None:
    for token in tree_tokens(tree):
        if isinstance(token, SlotRef) and token.name not in slots:
            raise TemplateError(f"unknown slot {token} in {sentence!r}")
        if isinstance(token, SlotRef) and token.many and slots[token.name].most < 2:
            raise TemplateError(f"{token} in {sentence!r}: the slot {token.name!r} "
                                "is not a list (give it most = 2 or more)")


def _check_part(tree: Parts, slots: Mapping[str, Slot], name: str) -> None:
    """A ``said`` part of the list slot ``name``: its slots exist, each one value."""
    for token in tree_tokens(tree):
        if not isinstance(token, SlotRef):
            continue
        if token.name not in slots:
            raise TemplateError(f"unknown slot {token} in its said part")
        if token.name == name or token.many or token.possessive:
            raise TemplateError(f"{token} in a said part: a part names other slots, "
                                "one value each")


#: The key an included intent keeps its file under (for messages that name it).
FROM = "\0file"


def _with_includes(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The file's data after the files it includes (``include = ["common"]``).

    Included slots, weights and hints are defaults the game's own file
    overrides; included intents, and the examples of each help topic, come
    after the game's own. A file without a ``[help]`` list of moves has its
    ``examples`` read out for "help with moves".
    """
    merged = {key: dict(data.get(key, {}))
              for key in ("slots", "weights", "hints", "fillers", "describe", "confirm")}
    helps = {topic: list(examples) for topic, examples in data.get("help", {}).items()}
    if "moves" not in helps and data.get("examples"):  # ("help with moves" without a [help])
        helps["moves"] = [str(e).replace("{player}", "{other}") for e in data["examples"]]
    intents = list(data.get("intents", []))
    for name in data.get("include", []):
        other = path.with_name(f"{name}.toml")
        if not other.exists():
            other = PHRASE_DIR / f"{name}.toml"
        if not other.exists():
            raise TemplateError(f"{path.name} includes {name!r}, which does not exist")
        extra = _read_phrase_file(other)
        for key in merged:
            merged[key] = {**extra.get(key, {}), **merged[key]}
        for topic, examples in extra.get("help", {}).items():
            helps[topic] = [*helps.get(topic, []), *examples]
        intents += [{**entry, FROM: other} for entry in extra.get("intents", [])]
    return {**data, **merged, "help": helps, "intents": intents}


def load_phrases(path: Path, players: Sequence[str]) -> PhraseSet:
    """Read a game's phrase file (its folder's ``phrases.toml``) and fill its
    slots for these players. Includes are looked for beside it, then among
    the shared files (``referee/speech/understanding/phrases/``: ``common``)."""
    if not path.exists():
        raise TemplateError(f"no phrase file {path}")
    data = _with_includes(_read_phrase_file(path), path)
    slots: dict[str, Slot] = {}
    for name, spec in data.get("slots", {}).items():
        try:
            slots[name] = _slot(name, spec, players)
        except (TypeError, ValueError) as error:  # TemplateError is a ValueError
            raise TemplateError(f"{where(path, f'slots.{name}')}: slot {name!r}: "
                                f"{error}") from None
    for name, slot in slots.items():
        for part in slot.said:
            try:
                _check_part(parse_tree(part), slots, name)
            except TemplateError as error:
                raise TemplateError(f"{where(path, part)}: slot {name!r}: {error}") from None
    weights = {word: float(w) for word, w in data.get("weights", {}).items()}
    intents = []
    for entry in data.get("intents", []):
        source = entry.get(FROM, path)  # (the file the intent is written in)
        sentences = entry.get("sentences", [])
        when = entry.get("when")
        lenient = entry.get("lenient", False)
        if not isinstance(lenient, bool):
            raise TemplateError(f"{where(source, 'lenient')}: lenient is true or false, "
                                f"not {lenient!r}")
        fields = {k: v for k, v in entry.items()
                  if k not in ("sentences", "when", "lenient", FROM)}
        if "kind" not in fields or not sentences:
            raise TemplateError(f"{where(source, str(sentences[:1]) if sentences else '')}: "
                                "an intent lacks a kind or sentences")
        trees = []
        for sentence in sentences:
            try:
                tree = parse_tree(str(sentence))
                _check_slots(tree, slots, str(sentence))
            except TemplateError as error:
                raise TemplateError(f"{where(source, str(sentence))}: {error}"
                                    + (f" (used by {_named(path)})" if source != path else "")
                                    ) from None
            trees.append(tree)
        intents.append(IntentTemplate(fields, tuple(trees), tuple(sentences),
                                      None if when is None else str(when), lenient))
    hints = {str(word): str(text) for word, text in data.get("hints", {}).items()}
    fillers = data.get("fillers", {})
    game = str(data.get("game", path.parent.name))
    return PhraseSet(game, slots, weights, tuple(intents), hints, str(data.get("title", "")),
                     tuple(map(str, fillers.get("before", []))),
                     tuple(map(str, fillers.get("after", []))),
                     tuple(map(str, data.get("examples", []))), _named(path))


@cache
def shared_kinds() -> frozenset[str]:
    """The kinds of intent every game shares (``common.toml``: questions and
    the conversation with the referee). None of them is a move of the game."""
    data = _read_phrase_file(PHRASE_DIR / "common.toml")
    return frozenset(str(intent["kind"]) for intent in data.get("intents", []))


@cache
def load_wording(path: Path) -> Wording:
    """How the phrase file at ``path`` (and what it includes) describes and
    confirms its intents, and its spoken help: its ``[describe]``, ``[confirm]``
    and ``[help]`` tables."""
    if not path.exists():
        raise TemplateError(f"no phrase file {path}")
    data = _with_includes(_read_phrase_file(path), path)
    return Wording({str(k): str(v) for k, v in data.get("describe", {}).items()},
                   {str(k): str(v) for k, v in data.get("confirm", {}).items()},
                   {str(k): tuple(map(str, v)) for k, v in data.get("help", {}).items()})
