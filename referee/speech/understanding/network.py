"""A phrase file compiled into a word network, never into its sentences.

Templates stand for many sentences ("[please] (flip | turn) [my] {tile}
[up | down]" is 2 x 2 x 2 x 12 x 3 of them; a grammar of 80 such templates has
10^8), but their structure is small. :func:`compile_intent` and
:func:`compile_phrases` turn the structure (``parse_tree`` of
:mod:`referee.speech.understanding.templates`) into an acyclic network whose
arcs are words and slots, the way speech-to-phrase compiles templates into an
FST: its size grows with the templates' text, a list slot (``{tiles...}``)
adds ``most`` arcs, and a slot's values stay one arc, however many there are.

* The intent matcher aligns a transcript with each intent's network
  (:mod:`referee.speech.understanding.intents`).
* Whisper's grammar search walks the whole phrase file's network token by
  token (:class:`~referee.speech.hearing.grammar_tree.SentenceSearch`), made
  deterministic (one arc per word and slot from each node) and minimal (shared
  endings share nodes), so a hypothesis is in one place of it.
* :func:`sentence_count` counts the sentences without listing them.

>>> from referee.speech.understanding.templates import Slot, parse_tree
>>> slots = {"tile": Slot("tile", "number", {str(n): n for n in range(1, 13)})}
>>> net = compile_trees([parse_tree("[please] (flip | turn) [my] {tile} [up | down]")], slots)
>>> len(net.nodes), sentence_count(net, slots)
(6, 288)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from referee.speech.understanding.templates import (
    Choice,
    IntentTemplate,
    Parts,
    PhraseSet,
    Slot,
    SlotRef,
    TemplateError,
    Token,
    Word,
    slot_values,
    spoken_word,
)

#: The most nodes a compiled phrase file may have: far beyond any game (Phase
#: 10 Twist's read-outs of twelve cards compile to a few hundred), a guard
#: against a file that would take the referee's memory.
MOST_NODES = 1_000_000


class NetworkError(TemplateError):
    """A phrase file too big to compile."""


@dataclass(eq=False)
class Node:
    """A point between words: the arcs on, and whether a sentence may end here."""

    arcs: list[tuple[Token, Node]] = field(default_factory=list)
    final: bool = False
    #: Words that may come here for nothing: a list's joiner ("and") after
    #: one of its values, when the network leaves joiners out (the matcher's).
    free: frozenset[str] = frozenset()
    #: Within a list said in parts (a read-out): the words on from here may not
    #: say again what was just said (``whisper.repeats``).
    listing: bool = False


@dataclass(frozen=True)
class Network:
    """A compiled grammar: ``nodes`` in topological order, ``nodes[0]`` the start."""

    nodes: tuple[Node, ...]

    @property
    def start(self) -> Node:
        return self.nodes[0]

    @property
    def arcs(self) -> int:
        return sum(len(node.arcs) for node in self.nodes)

    def units(self) -> Iterator[Token]:
        """Every word and slot on an arc, once each."""
        yield from dict.fromkeys(unit for node in self.nodes for unit, _ in node.arcs)


# --- building ----------------------------------------------------------------------


class _Builder:
    """Thompson's construction: fragments joined by empty arcs (kept in ``empty``
    until :meth:`finish` takes them out)."""

    def __init__(self, slots: Mapping[str, Slot], joiners: bool, source: str) -> None:
        self.slots, self.joiners, self.source = slots, joiners, source
        self.empty: dict[int, list[Node]] = {}  # id(node) -> targets of its empty arcs
        self.made = 0
        #: How deep in lists said in parts the nodes being made are.
        self.listing = 0

    def node(self, free: frozenset[str] = frozenset()) -> Node:
        self.made += 1
        if self.made > MOST_NODES:
            raise NetworkError(f"{self.source or 'the phrases'}: more than {MOST_NODES:,} "
                               "nodes to compile: split the templates or shorten the lists")
        return Node(free=free, listing=self.listing > 0)

    def link(self, a: Node, b: Node) -> None:
        self.empty.setdefault(id(a), []).append(b)

    def parts(self, parts: Parts, start: Node) -> Node:
        node = start
        for part in parts:
            node = self.part(part, node)
        return node

    def part(self, part: Word | SlotRef | Choice, start: Node) -> Node:
        end = self.node()
        if isinstance(part, Choice):
            for option in part.options:
                begin = self.node()
                self.link(start, begin)
                self.link(self.parts(option, begin), end)
        elif isinstance(part, SlotRef) and part.many:
            self.listed(part, start, end)
        else:
            start.arcs.append((part, end))
        return end

    def listed(self, ref: SlotRef, start: Node, end: Node) -> None:
        """One to ``most`` values of a list slot, a joiner between two; in a
        recogniser's network (``joiners``), a slot that says how it is said
        (``said`` parts) is listened for as those parts."""
        slot = self.slots[ref.name]
        if self.joiners and slot.said:
            self.listing += 1
            node = start
            for n in range(slot.said_most):
                if n:
                    node = self.part(Choice(slot.said_joiner), node)
                node = self.part(Choice(slot.said_trees), node)
                self.link(node, end)
            self.listing -= 1
            return
        free = frozenset() if self.joiners else frozenset(
            t.text for e in slot.joiner for t in e if isinstance(t, Word))
        node = start
        for n in range(slot.most):
            if n and self.joiners:
                node = self.part(Choice(slot.joiner), node)
            after = self.node(free)
            node.arcs.append((ref, after))
            self.link(after, end)
            node = after

    def finish(self, start: Node, ends: Iterable[Node]) -> Network:
        for end in ends:
            end.final = True
        return _minimal(self._without_empty_arcs(start))

    def _closure(self, node: Node) -> list[Node]:
        seen = {id(node): node}
        todo = [node]
        while todo:
            for other in self.empty.get(id(todo.pop()), ()):
                if id(other) not in seen:
                    seen[id(other)] = other
                    todo.append(other)
        return list(seen.values())

    def _without_empty_arcs(self, start: Node) -> Node:
        made: dict[int, Node] = {}

        def clean(node: Node) -> Node:
            if id(node) in made:
                return made[id(node)]
            closure = self._closure(node)
            new = made[id(node)] = Node(final=any(n.final for n in closure), free=node.free,
                                        listing=any(n.listing for n in closure))
            arcs = [(unit, target) for n in closure for unit, target in n.arcs]
            pending.append((new, arcs))
            return new

        pending: list[tuple[Node, list[tuple[Token, Node]]]] = []
        root = clean(start)
        while pending:
            new, arcs = pending.pop()
            new.arcs = list(dict.fromkeys((unit, clean(target)) for unit, target in arcs))
        return root


def _order(start: Node) -> list[Node]:
    """The nodes reachable from ``start``, each before every node it leads to."""
    out: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(start, 0)]
    seen.add(id(start))
    while stack:
        node, i = stack.pop()
        if i < len(node.arcs):
            stack.append((node, i + 1))
            target = node.arcs[i][1]
            if id(target) not in seen:
                seen.add(id(target))
                stack.append((target, 0))
        else:
            out.append(node)
    return out[::-1]


def _minimal(start: Node) -> Network:
    """The same network with nodes whose futures are the same merged (shared
    endings), dead ends dropped."""
    order = _order(start)
    same: dict[tuple[object, ...], Node] = {}
    merged: dict[int, Node] = {}
    for node in reversed(order):
        arcs = list(dict.fromkeys((unit, merged[id(t)]) for unit, t in node.arcs))
        signature = (node.final, node.free, node.listing,
                     frozenset((u, id(t)) for u, t in arcs))
        if signature not in same:
            node.arcs = arcs
            same[signature] = node
        merged[id(node)] = same[signature]
    return Network(tuple(_order(merged[id(start)])))


def compile_trees(trees: Sequence[Parts], slots: Mapping[str, Slot],
                  joiners: bool = True, source: str = "") -> Network:
    """The network of some templates' structures as a recogniser listens for
    them (a list slot's joiners as arcs, its ``said`` parts where it has
    them), or, without ``joiners``, as the matcher reads them (a list's values
    one by one, joiners free after each); ``source`` names the file in errors."""
    builder = _Builder(slots, joiners, source)
    start = builder.node()
    ends = []
    for tree in trees:
        begin = builder.node()
        builder.link(start, begin)
        ends.append(builder.parts(tree, begin))
    return builder.finish(start, ends)


#: Intents' networks compiled already (:func:`compile_intent`), at most
#: :data:`KEPT_NETWORKS`.
_COMPILED: dict[tuple[object, ...], Network] = {}
KEPT_NETWORKS = 4096


def compile_intent(phrases: PhraseSet, intent: IntentTemplate) -> Network:
    """One intent's network as the matcher aligns with it: without joiners.

    Its templates and the shape of the lists in them (how many values, the
    joiners) make it; the slots' values never reach it, so it is the same
    whoever sits at the table, and is compiled once (a new table's matcher,
    and the many that tests and benchmarks make, take it from there: a
    matcher was 80 ms to make, 50 of them compiling). Nothing changes a
    network once compiled."""
    shapes = tuple((name, slot.most, slot.joiner) for name, slot in sorted(phrases.slots.items()))
    key = (intent.trees, shapes, phrases.source)
    network = _COMPILED.get(key)
    if network is None:
        network = compile_trees(intent.trees, phrases.slots, joiners=False,
                                source=phrases.source)
        if len(_COMPILED) < KEPT_NETWORKS:
            _COMPILED[key] = network
    return network


def compile_phrases(phrases: PhraseSet) -> Network:
    """Every sentence of the phrase file (joiners included) as one
    deterministic, minimal network: from each node, one arc per word or slot."""
    trees = [tree for intent in phrases.intents for tree in intent.trees]
    return deterministic(compile_trees(trees, phrases.slots, source=phrases.source),
                         phrases.source)


def deterministic(network: Network, source: str = "") -> Network:
    """The same sentences with one arc per unit from each node (subset
    construction; acyclic, so it ends), then minimal."""
    made: dict[frozenset[int], Node] = {}
    members: dict[int, Node] = {id(n): n for n in network.nodes}
    position = {id(n): k for k, n in enumerate(network.nodes)}

    def state(ids: frozenset[int]) -> Node:
        if ids not in made:
            if len(made) >= MOST_NODES:
                raise NetworkError(f"{source or 'the phrases'}: more than {MOST_NODES:,} "
                                   "nodes to compile: split the templates")
            made[ids] = Node(final=any(members[i].final for i in ids),
                             listing=any(members[i].listing for i in ids))
            todo.append(ids)
        return made[ids]

    todo: list[frozenset[int]] = []
    root = state(frozenset({id(network.start)}))
    while todo:
        ids = todo.pop()
        targets: dict[Token, set[int]] = {}
        for i in sorted(ids, key=position.__getitem__):
            for unit, target in members[i].arcs:
                targets.setdefault(unit, set()).add(id(target))
        made[ids].arcs = [(unit, state(frozenset(t))) for unit, t in targets.items()]
    return _minimal(root)


def sentence_count(network: Network, slots: Mapping[str, Slot],
                   for_grammar: bool = False) -> int:
    """How many token sequences the network allows, a slot counting once per
    value (a deterministic network: each is one sentence)."""
    below: dict[int, int] = {}
    for node in reversed(network.nodes):
        total = int(node.final)
        for unit, target in node.arcs:
            ways = 1 if isinstance(unit, Word) else len(slot_values(slots[unit.name], for_grammar))
            total += ways * below[id(target)]
        below[id(node)] = total
    return below[id(network.start)]


def said_as(unit: Token, slots: Mapping[str, Slot], for_grammar: bool = False) -> list[str]:
    """What an arc can be said as: its word, or each value of its slot (for a
    grammar, only those worth listening for)."""
    if isinstance(unit, Word):
        return [spoken_word(unit.text)]
    slot = slots[unit.name]
    suffix = "'s" if unit.possessive else ""
    return [slot.words_for(v) + suffix for v in slot_values(slot, for_grammar)]


def sentences(network: Network, slots: Mapping[str, Slot],
              for_grammar: bool = False) -> Iterator[str]:
    """Every sentence of the network as spoken words, one at a time (for a
    recogniser that wants them listed: Vosk), depth first."""
    said = {unit: said_as(unit, slots, for_grammar) for unit in network.units()}
    stack: list[tuple[Node, tuple[str, ...]]] = [(network.start, ())]
    while stack:
        node, words = stack.pop()
        if node.final:
            yield " ".join(words)
        for unit, target in reversed(node.arcs):
            for word in reversed(said[unit]):
                stack.append((target, (*words, word)))

