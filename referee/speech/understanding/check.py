"""``referee phrases check FILE.toml``: what a phrase file amounts to, and
where its sentences collide, before anyone plays with it.

The size comes from the compiled networks (:mod:`~referee.speech.understanding.network`),
never from listing sentences. Sentences two intents share are found exactly,
by walking their networks side by side (intents listened for at different
moments never meet). Then sentences drawn at random from each template
(seeded: the same report every run) are matched as a player's words would
be: one heard as another intent than its own, as two at once, or not at all
is reported.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.network import (
    Network,
    compile_intent,
    compile_phrases,
    compile_trees,
    said_as,
    sentence_count,
)
from referee.speech.understanding.phrase_files import load_phrases, where
from referee.speech.understanding.templates import (
    Choice,
    IntentTemplate,
    Parts,
    PhraseSet,
    Slot,
    SlotRef,
    Word,
    spoken_word,
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
    #: Sentences two intents both have (found exactly, from their networks).
    shared: list[str] = field(default_factory=list)
    checked: int = 0
    #: What the sentences drawn from the templates were heard as, when wrong.
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.shared and not self.problems

    def lines(self) -> list[str]:
        slots = ", ".join(f"{name} ({n})" for name, n in self.slots.items()) or "none"
        return [
            f"{where(self.path, '')}: {self.intents} intents, {self.templates} templates",
            f"  slots: {slots}",
            f"  sentences: {self.sentences:,} ({self.sentences:.1e})",
            f"  compiled: {self.nodes:,} nodes, {self.arcs:,} arcs, in {self.build_s:.2f} s",
            "  sentences two intents share: " + (f"{len(self.shared)}" if self.shared
                                                   else "none"),
            *(f"    {shared}" for shared in self.shared),
            f"  sentences drawn from the templates and matched: {self.checked:,}, "
            + (f"{len(self.problems)} heard wrong" if self.problems else "all heard right"),
            *(f"    {problem}" for problem in self.problems),
        ]


def draw(phrases: PhraseSet, tree: Parts, rng: random.Random) -> str:
    """One sentence of a template, its choices and slot values drawn at random."""
    words: list[str] = []
    for part in tree:
        if isinstance(part, Choice):
            words.append(draw(phrases, rng.choice(part.options), rng))
        elif isinstance(part, SlotRef):
            slot = phrases.slots[part.name]
            # A list said in parts (a read-out) is drawn as recognisers hear it.
            parts = slot.said_trees if part.many else ()
            most, joiner = (slot.said_most, slot.said_joiner) if parts else (slot.most,
                                                                             slot.joiner)
            values = said_as(SlotRef(part.name), phrases.slots)
            said: list[str] = []
            for n in range(rng.randint(1, most) if part.many else 1):
                if n:
                    said.extend(spoken_word(t.text) for t in rng.choice(joiner)
                                if isinstance(t, Word))
                said.append(draw(phrases, rng.choice(parts), rng) if parts
                            else rng.choice(values))
            words.append(" ".join(said) + ("'s" if part.possessive else ""))
        else:
            words.append(spoken_word(part.text))
    return " ".join(w for w in words if w)


def _fixed(intent: IntentTemplate) -> dict[str, object]:
    """The intent's fields that no slot or speaker fills."""
    return {k: v for k, v in intent.fields.items()
            if not (isinstance(v, str) and (v.startswith("{") or v.startswith("$")))
            and not isinstance(v, list)}


def shared_sentence(a: Network, b: Network, slots: Mapping[str, Slot]) -> str | None:
    """A sentence both networks have, if any (the shortest; a value of several
    words only meets the same value): the networks walked side by side."""
    said = {unit: set(said_as(unit, slots)) for net in (a, b) for unit in net.units()}
    start = (id(a.start), id(b.start))
    nodes = {id(n): n for net in (a, b) for n in net.nodes}
    came: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    todo = deque([start])
    while todo:
        here = todo.popleft()
        left, right = nodes[here[0]], nodes[here[1]]
        if left.final and right.final:
            words = []
            while came[here] is not None:
                here, word = came[here]  # type: ignore[misc]
                words.append(word)
            return " ".join(reversed(words))
        for unit_a, target_a in left.arcs:
            for unit_b, target_b in right.arcs:
                common = said[unit_a] & said[unit_b]
                pair = (id(target_a), id(target_b))
                if common and pair not in came:
                    came[pair] = (here, min(common))
                    todo.append(pair)
    return None


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
    # Sentences two intents share (exactly, from their networks): asked about
    # every time they are said, unless the intents are listened for at
    # different moments of the game.
    full = [compile_trees(intent.trees, phrases.slots) for intent in phrases.intents]
    for i, first in enumerate(phrases.intents):
        for j in range(i + 1, len(phrases.intents)):
            second = phrases.intents[j]
            if first.when is not None and second.when is not None and first.when != second.when:
                continue
            example = shared_sentence(full[i], full[j], phrases.slots)
            if example is not None:
                report.shared.append(
                    f"{example!r} ({where(path, first.sentences[0])} and "
                    f"{where(path, second.sentences[0]).rsplit(', ', 1)[-1]})")
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
