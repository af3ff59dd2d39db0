"""Aligning a transcript with one intent's network: the matcher's edit
distance (:mod:`referee.speech.understanding.intents` says what it costs),
by dynamic programming over (node, tokens read), and the bound that spares
most networks the alignment (:meth:`Compiled.out_of_reach`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from referee.speech.understanding.network import Network
from referee.speech.understanding.templates import Slot, SlotRef, Word


@dataclass(frozen=True)
class Tok:
    """A transcript's word as the matcher reads it."""

    text: str
    kind: str  # "number" | "player" | "possessive" | "word" | "unknown"
    capital: bool = False

    @property
    def base(self) -> str:
        return self.text[:-2] if self.kind == "possessive" else self.text


#: An alignment so far: its cost, the template's weight it covered, the slots
#: said (in order) and the near misses (slot name, token).
Label = tuple[float, float, tuple[tuple[SlotRef, str], ...], tuple[tuple[str, str], ...]]


class Costs(Protocol):
    """What an alignment asks the matcher: its floor, and what a template's
    word or slot costs against the transcript's tokens."""

    floor: float

    def substitute(self, token: Word | SlotRef, tok: Tok, weight: float
                   ) -> tuple[float, str | None, bool]: ...

    def slot_matches(self, ref: SlotRef, toks: list[Tok], j: int, weight: float
                     ) -> list[tuple[int, float, str, bool]]: ...


class Compiled:
    """An intent's network ready to align with: each node's arcs with their
    weights and targets as indices, and the heaviest way to the end from each.

    It also knows which transcript words it could take for less than their
    own weight (:meth:`takes`): a word of its own, a word free at one of its
    nodes, a value of one of its slots, a number where it has a slot, a
    name where it has a player's, and any word it does not know (which may
    be a near spelling or a stranger's name). Every other word can only be
    an extra word, at its whole weight, so their weights together bound
    the cost of any alignment from below (:meth:`out_of_reach`)."""

    def __init__(self, network: Network, weigh: Callable[[Word | SlotRef], float],
                 slots: Mapping[str, Slot]) -> None:
        self.nodes = network.nodes
        index = {id(node): i for i, node in enumerate(self.nodes)}
        self.arcs = [[(unit, weigh(unit), index[id(target)]) for unit, target in node.arcs]
                     for node in self.nodes]
        self.heaviest = [0.0] * len(self.nodes)
        for i in reversed(range(len(self.nodes))):
            self.heaviest[i] = max((w + self.heaviest[t] for _, w, t in self.arcs[i]),
                                   default=0.0)
        words: set[str] = set()
        self._numbers = self._names = False
        for node in self.nodes:
            words |= node.free
            for unit, _ in node.arcs:
                if isinstance(unit, Word):
                    words.add(unit.text)
                elif slots[unit.name].kind == "player":
                    self._names = True
                else:  # (a number, or a value that may be one: "plus 4")
                    self._numbers = True
                    words.update(word for value in slots[unit.name].values
                                 for word in value.split())
        self._words = frozenset(words)

    def takes(self, tok: Tok) -> bool:
        """Whether some alignment could take ``tok`` for less than its weight."""
        if tok.kind == "unknown":
            return True
        if tok.text in self._words:
            return True
        if tok.kind == "number":
            return self._numbers
        return tok.kind in ("player", "possessive") and self._names

    def out_of_reach(self, toks: list[Tok], tok_weights: list[float], total_u: float,
                     floor: float) -> bool:
        """Whether no alignment with ``toks`` can score ``floor``: the words
        it cannot take cost more than a score of ``floor`` allows even on
        its heaviest path (most templates, for any one transcript)."""
        lost = sum(w for tok, w in zip(toks, tok_weights, strict=True) if not self.takes(tok))
        return lost > (1.0 - floor) * max(self.heaviest[0], total_u) + 1e-9


class Alignment:
    """One transcript aligned with one intent's network. A label is (cost,
    template weight so far, slot fills, near misses); a node keeps the labels
    no other beats on both cost and weight (the score divides by the larger of
    the template's and the transcript's weight, so a heavier path at the same
    cost is better). Labels that cannot reach the matcher's floor are dropped
    as they are made."""

    def __init__(self, matcher: Costs, net: Compiled, toks: list[Tok],
                 tok_weights: list[float], total_u: float) -> None:
        self.matcher, self.net, self.toks, self.tok_weights = matcher, net, toks, tok_weights
        self.total_u = total_u
        self.limit = 1.0 - matcher.floor
        size = len(net.nodes)
        self.cols: list[list[list[Label] | None]] = [[None] * size
                                                      for _ in range(len(toks) + 1)]
        self.cols[0][0] = [(0.0, 0.0, (), ())]
        # What each template word and slot costs against token j, worked out once.
        self.fuzzy: dict[tuple[str, int], float] = {}
        self.slotted: dict[tuple[SlotRef, int], list[tuple[int, float, str, bool]]] = {}
        self._add = self._adder()

    def run(self) -> list[Label]:
        m = len(self.toks)
        for j in range(m + 1):
            self._leave_out(j)
            if j == m:
                break
            self._extra_word(j)
            self._said(j)
        nodes = self.net.nodes
        return [label for at in range(len(nodes)) if nodes[at].final
                for label in self.cols[m][at] or ()]

    def _adder(self) -> Callable[[list[list[Label] | None], int, Label, bool], None]:
        """What adds a label to a node (a closure over the limits: it runs
        millions of times a long line)."""
        limit, heaviest, total_u = self.limit, self.net.heaviest, self.total_u

        def add(col: list[list[Label] | None], at: int, label: Label, first: bool) -> None:
            cost, weight = label[0], label[1]
            if cost > limit * max(weight + heaviest[at], total_u) + 1e-9:
                return
            miss = bool(label[3])
            labels = col[at]
            if labels is None:
                col[at] = [label]
                return
            for other in labels:
                if bool(other[3]) == miss and other[0] <= cost and other[1] >= weight and not (
                        first and other[0] == cost and other[1] == weight):
                    return
            labels[:] = [o for o in labels
                         if bool(o[3]) != miss or o[0] < cost or o[1] > weight]
            labels.append(label)

        return add

    def _leave_out(self, j: int) -> None:
        """Template words left out (a slot never is), in the network's order."""
        col, add, arcs = self.cols[j], self._add, self.net.arcs
        for at in range(len(self.net.nodes)):
            labels = col[at]
            if labels is None:
                continue
            for unit, weight, target in arcs[at]:
                if isinstance(unit, Word):
                    for cost, w, fills, misses in list(labels):
                        add(col, target, (cost + weight, w + weight, fills, misses), True)

    def _extra_word(self, j: int) -> None:
        """Transcript word ``j``, which the template does not have."""
        col, after, text = self.cols[j], self.cols[j + 1], self.toks[j].text
        add, nodes, weight = self._add, self.net.nodes, self.tok_weights[j]
        for at in range(len(nodes)):
            labels = col[at]
            if labels is not None:
                extra = 0.0 if text in nodes[at].free else weight
                for cost, w, fills, misses in labels:
                    add(after, at, (cost + extra, w, fills, misses), False)

    def _said(self, j: int) -> None:
        """The template's word or slot said at transcript word ``j``."""
        col, after, tok = self.cols[j], self.cols[j + 1], self.toks[j]
        add, arcs, fuzzy = self._add, self.net.arcs, self.fuzzy
        for at in range(len(self.net.nodes)):
            labels = col[at]
            if labels is None:
                continue
            for unit, weight, target in arcs[at]:
                if isinstance(unit, Word):
                    key = (unit.text, j)
                    cost_of = fuzzy.get(key)
                    if cost_of is None:
                        cost_of = fuzzy[key] = self.matcher.substitute(unit, tok, weight)[0]
                    if cost_of == float("inf"):
                        continue
                    for cost, w, fills, misses in labels:
                        add(after, target, (cost + cost_of, w + weight, fills, misses), False)
                    continue
                if (unit, j) not in self.slotted:
                    self.slotted[(unit, j)] = self.matcher.slot_matches(unit, self.toks, j,
                                                                         weight)
                for taken, extra, value, near in self.slotted[(unit, j)]:
                    for cost, w, fills, misses in labels:
                        label = (cost + extra, w + weight,
                                 fills if near else (*fills, (unit, value)),
                                 (*misses, (unit.name, value)) if near else misses)
                        add(self.cols[j + taken], target, label, False)
