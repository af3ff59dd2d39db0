"""``referee phrases check FILE.toml``: what a phrase file amounts to, and
where its sentences collide, before anyone plays with it.

The size comes from the compiled networks (:mod:`~referee.speech.understanding.network`),
never from listing sentences; the collisions from sentences drawn at random
from each template (seeded: the same report every run) and matched as a
player's words would be: a sentence heard as another intent than its own is
a collision, one heard as two at once an ambiguity, one not heard at all a
template the matcher cannot reach.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.network import compile_intent, compile_phrases, sentence_count
from referee.speech.understanding.templates import (
    Choice,
    IntentTemplate,
    Parts,
    PhraseSet,
    SlotRef,
    load_phrases,
    spoken_word,
    where,
)

#: Sentences drawn from each template by default.
SAMPLES = 20


@dataclass
class Report:
    """What ``referee phrases check`` found."""

    path: Path
    intents: int
    templates: int
    slots: dict[str, int]
    sentences: int
    nodes: int
    arcs: int
    build_s: float
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        slots = ", ".join(f"{name} ({n})" for name, n in self.slots.items()) or "none"
        return [
            f"{where(self.path, '')}: {self.intents} intents, {self.templates} templates",
            f"  slots: {slots}",
            f"  sentences: {self.sentences:,} ({self.sentences:.1e})",
            f"  compiled: {self.nodes:,} nodes, {self.arcs:,} arcs, in {self.build_s:.2f} s",
            f"  checked {self.checked:,} sentences drawn from the templates: "
            + (f"{len(self.problems)} problems" if self.problems else "no problems"),
            *(f"  {problem}" for problem in self.problems),
        ]


def draw(phrases: PhraseSet, tree: Parts, rng: random.Random) -> str:
    """One sentence of a template, its choices and slot values drawn at random."""
    words: list[str] = []
    for part in tree:
        if isinstance(part, Choice):
            words.append(draw(phrases, rng.choice(part.options), rng))
        elif isinstance(part, SlotRef):
            slot = phrases.slots[part.name]
            values = list(slot.values)
            said: list[str] = []
            for n in range(rng.randint(1, slot.most) if part.many else 1):
                if n:
                    said.extend(spoken_word(t.text) for t in rng.choice(slot.joiner)
                                if not isinstance(t, SlotRef))
                said.append(slot.words_for(rng.choice(values)))
            words.append(" ".join(said) + ("'s" if part.possessive else ""))
        else:
            words.append(spoken_word(part.text))
    return " ".join(w for w in words if w)


def _fixed(intent: IntentTemplate) -> dict[str, object]:
    """The intent's fields that no slot or speaker fills."""
    return {k: v for k, v in intent.fields.items()
            if not (isinstance(v, str) and (v.startswith("{") or v.startswith("$")))
            and not isinstance(v, list)}


def check_phrases(path: Path, players: Sequence[str], samples: int = SAMPLES,
                  seed: int = 0) -> Report:
    """Compile the phrase file, measure it, and match sentences drawn from it."""
    started = time.perf_counter()
    phrases = load_phrases(path, players)
    networks = [compile_intent(phrases, intent) for intent in phrases.intents]
    whole = compile_phrases(phrases)
    matcher = IntentMatcher(phrases, players)
    build_s = time.perf_counter() - started
    templates = sum(len(intent.trees) for intent in phrases.intents)
    report = Report(
        path, len(phrases.intents), templates,
        {name: len(slot.values) for name, slot in phrases.slots.items()},
        sentence_count(whole, phrases.slots),
        sum(len(n.nodes) for n in networks) + len(whole.nodes),
        sum(n.arcs for n in networks) + whole.arcs, build_s)
    rng = random.Random(seed)
    speaker = players[0] if players else ""
    seen: set[str] = set()
    found: dict[tuple[str, str], list[Any]] = {}
    for intent in phrases.intents:
        fixed = _fixed(intent)
        for sentence, tree in zip(intent.sentences, intent.trees, strict=True):
            for _ in range(samples):
                words = draw(phrases, tree, rng)
                if words in seen:
                    continue
                seen.add(words)
                report.checked += 1
                heard = matcher.match(words, speaker).intent
                got = heard.to_json()
                if heard.kind == "ambiguous":
                    problem = f"is heard as {len(got['candidates'])} intents at once"
                elif heard.kind == "none":
                    problem = "is not heard as anything"
                elif any(got.get(k) != v for k, v in fixed.items()):
                    problem = f"is heard as {got}"
                else:
                    continue
                key = (where(path, sentence), problem.split()[3])
                if key not in found:
                    found[key] = [f"{words!r} ({key[0]}) {problem}", 0]
                found[key][1] += 1
    for text, count in found.values():
        report.problems.append(text + (f" (and {count - 1} more like it)" if count > 1 else ""))
    return report
