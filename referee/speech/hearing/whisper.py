"""Whisper tiny.en as a scorer of the game's own sentences.

The referee does not let Whisper write what it likes and then guess a command
from the text (measured: 51 % of commands right that way). It asks the model
how likely each sentence *of the grammar* is for this audio, and how likely
the model's own free transcript is, and compares the two:

* :func:`~referee.speech.hearing.features.log_mel` turns 16 kHz samples into
  Whisper's 80-band log-mel input, padded to
  :data:`~referee.speech.hearing.features.WINDOW` seconds (an 8 s window
  encodes in ~55 ms instead of ~320 ms for the 30 s Whisper was trained on,
  and scored sentences come out as well or better: see docs/results.md).
* The encoder runs in CTranslate2 (``ctranslate2.models.Whisper.encode``).
* The decoder runs in NumPy (:mod:`referee.speech.hearing.decoder`), every
  hypothesis of a beam extended by one token in one batched step, with the
  weights read straight from CTranslate2's ``model.bin``
  (:mod:`referee.speech.hearing.whisper_files`).
* :class:`~referee.speech.hearing.grammar_tree.SentenceSearch` walks a
  prefix tree of the phrase file's templates and :class:`Beam` searches it:
  only tokens that continue some sentence of the grammar are allowed.
* The free transcript (:class:`Greedy`: greedy decoding, cut where it starts
  to repeat itself) is the "anything else" model: table talk scores far
  better as itself than forced into a command. The *margin*, the best
  sentence's log-probability per token minus the free transcript's, is about
  0 when the words are a command and well below when they are not; the
  recogniser turns it and a few other measures into a calibrated probability
  (:func:`referee.speech.hearing.confidence.probability`).

Log-probabilities are normalised over the grammar's and the most frequent
text tokens (:data:`~referee.speech.hearing.decoder.VOCABULARY`).

Nothing is carried from one utterance to the next: the same audio always
gives the same result.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from referee.speech.hearing.decision import PRIOR
from referee.speech.hearing.decoder import (
    VOCABULARY,
    Cache,
    Decoder,
    Lora,
    Memory,
    row_cache,
    select,
)
from referee.speech.hearing.features import RATE, encode
from referee.speech.hearing.grammar_tree import Hypothesis, Scored, SentenceSearch
from referee.speech.hearing.whisper_files import Tokens, read_ctranslate2
from referee.speech.understanding.templates import PhraseSet

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]

#: Added to the log-probability of every token, of a sentence of the grammar
#: and of the free transcript alike: without it, a one-word sentence
#: ("One.") can score better than the four words that were said.
BONUS = 2.0
#: A hypothesis this far below the best finished sentence is given up.
SLACK = 4.0
#: The longest sentence, in tokens.
MAX_TOKENS = 40


class GaveUp(Exception):
    """A decode stopped midway: what it was decoding can no longer be wanted
    (the speaker went on after the pause it was decoded ahead at)."""



# --- the recogniser's core ------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What Whisper made of one utterance."""

    #: The grammar's sentences, best first (empty when nothing fitted).
    nbest: tuple[Scored, ...]
    #: Whisper's own transcript and its score.
    free: Scored
    #: The log-probability that nothing at all was said (end of text first).
    nothing: float = 0.0
    #: Whisper's own transcript told a few of the game's commands came before
    #: (:attr:`WhisperScorer.primer`); None without a primer.
    primed: Scored | None = None
    #: The best sentence's log-probability under the base model, without the
    #: table's adapter (its own ``logprob`` when there is none).
    base_logprob: float | None = None
    #: The same for each sentence of :attr:`nbest` that the referee's
    #: expectation could put first (within :data:`~referee.speech.hearing.decision.PRIOR`
    #: of the best); None for the others.
    base_logprobs: tuple[float | None, ...] = ()

    @property
    def margin(self) -> float:
        """The best sentence's mean log-probability per token minus the free
        transcript's (nats): about 0 when Whisper heard a sentence of the
        grammar, well below when it heard something else. (Per token: the
        total favours whichever is shorter; measured on the tuning fixtures,
        this separates commands from table talk best.)"""
        if not self.nbest:
            return -math.inf
        best = self.nbest[0]
        return best.logprob / best.length - self.free.logprob / self.free.length


#: The encoder's CTranslate2 compute type (the figures of docs/results.md are int8).
ENCODER_COMPUTE = "int8"
#: The encoder's threads: both cores of the machine the referee was made on,
#: unless ``OMP_NUM_THREADS`` (the usual setting for numerical libraries)
#: says otherwise, as a test suite running a process per core does.
def _threads(setting: str | None) -> int:
    """The threads an ``OMP_NUM_THREADS`` setting gives (2 when unset or not a count).

    >>> _threads(None), _threads("1"), _threads("lots"), _threads("0")
    (2, 1, 2, 2)
    """
    return int(setting) if setting and setting.isdigit() and int(setting) > 0 else 2


THREADS = _threads(os.environ.get("OMP_NUM_THREADS"))
#: The compute types the encoder may run with.
COMPUTE_TYPES = ("int8", "float32")


def int8_kernels(cpuinfo: str | None = None) -> str:
    """Which int8 matrix products CTranslate2 runs the encoder with on this CPU,
    as far as it changes what is heard (issue #36, item 19; docs/results.md,
    "Which CPU and backend"): "vnni" where the CPU has VNNI instructions
    (AVX-512 VNNI or AVX-VNNI: the encoder's output was bit for bit the same
    on an AMD EPYC with oneDNN and an Intel Xeon with MKL), "avx2" without
    them (products that saturate: other numbers, and a few decisions
    differ), "" where unknown (not Linux, or not x86). ``cpuinfo``: the text
    of ``/proc/cpuinfo`` (read when None). oneDNN's ``ONEDNN_MAX_CPU_ISA``
    below VNNI (``AVX2``, which the measurements use to stand in for such a
    CPU) counts as a CPU without them."""
    limit = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    limited = limit != "ALL" and not any(k in limit for k in ("VNNI", "AMX", "AVX10"))
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return ""
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines()
                  if line.startswith("flags")), [])
    if ("avx512_vnni" in flags or "avx_vnni" in flags) and not limited:
        return "vnni"
    return "avx2" if "avx2" in flags else ""


@functools.lru_cache(maxsize=4)
def _loaded(folder: Path, compute: str, threads: int
            ) -> tuple[Any, Tokens, dict[str, npt.NDArray[Any]], frozenset[int]]:
    """Whisper's files read once a process, whatever number of recognisers
    hear with them (a test suite makes dozens; all only read them): the
    CTranslate2 encoder, the tokenizer, the decoder's weights (copied: the
    file's other 30 MB can go; an alias once, with what it names: the output
    projection is the token embedding, 40 MB) and the tokens never to write."""
    import ctranslate2

    config = json.loads((folder / "config.json").read_text())
    encoder = ctranslate2.models.Whisper(str(folder), device="cpu", compute_type=compute,
                                         intra_threads=threads)
    copies: dict[int, npt.NDArray[Any]] = {}
    variables = {}
    for name, value in read_ctranslate2(folder / "model.bin").items():
        if name.startswith("decoder/"):
            if id(value) not in copies:
                copies[id(value)] = np.array(value)
            variables[name] = copies[id(value)]
    return (encoder, Tokens(folder / "tokenizer.json"), variables,
            frozenset(config.get("suppress_ids", [])))


class WhisperScorer:
    """Whisper tiny.en: encoder in CTranslate2, decoder and search in NumPy."""

    def __init__(self, folder: Path, threads: int = THREADS, beam: int = 8,
                 adapter: Sequence[Lora] | None = None, compute: str | None = None) -> None:

        #: How the encoder computes: "int8", or "float32" for a measurement
        #: that must be the same on every CPU (:mod:`harness.ears`).
        self.compute = compute or ENCODER_COMPUTE

        self.folder = folder
        self.beam = beam
        #: The table's adapter (:mod:`referee.speech.hearing.adapter`): the
        #: grammar's sentences are scored with it, the free transcripts without.
        self.adapter = adapter
        #: Log-probability added per token (a word insertion bonus).
        self.bonus = BONUS
        #: Text Whisper is told came before (the table's names and the game).
        self.context = ""
        #: The context with a few of the game's commands ("Flip my nine."): a
        #: second free transcript is written after it, which takes the game's
        #: words for what they are. Only that transcript hears it; the
        #: sentences are scored after :attr:`context`, as a primer of commands
        #: would make its own commands likelier ("flip my three up" as "flip
        #: my three down" after "Bob, flip your two down."). Empty: none.
        self.primer = ""
        self.encoder, self.tokens, self._variables, self.suppress = _loaded(
            folder, self.compute, threads)
        self._searches: dict[int, SentenceSearch] = {}
        #: The base decoder and the same with the adapter (rebuilt with it).
        self._adapted: tuple[Decoder, Decoder] | None = None

    def search_for(self, phrases: PhraseSet) -> SentenceSearch:
        key = id(phrases)
        if key not in self._searches:
            self._searches[key] = SentenceSearch(phrases, self.tokens)
            self.__dict__.pop("decoder", None)
        return self._searches[key]

    @cached_property
    def decoder(self) -> Decoder:
        grammar: set[int] = set()
        for search in self._searches.values():
            grammar |= search.token_ids()
        frequent = (t for t in range(VOCABULARY) if t not in self.suppress)
        ids = sorted({*frequent, *grammar, self.tokens.end} - self.suppress)
        return Decoder(self._variables, ids)

    @property
    def scorer(self) -> Decoder:
        """What scores the grammar's sentences: the decoder with the table's
        adapter, or the base decoder without one."""
        decoder = self.decoder
        if self.adapter is None:
            return decoder
        if self._adapted is None or self._adapted[0] is not decoder:
            self._adapted = (decoder, decoder.adapted(self.adapter))
        return self._adapted[1]

    def encode(self, samples: npt.NDArray[np.float32]) -> Floats:
        encoded: Floats = encode(self.encoder, [samples])[0]
        return encoded

    def _prompt(self, context: str) -> list[int]:
        """A context (if any), then the start of the transcript."""
        before = [self.tokens.previous, *self.tokens.encode(" " + context)] if context else []
        return [*before, self.tokens.start, self.tokens.no_timestamps]

    def score(self, samples: npt.NDArray[np.float32], phrases: PhraseSet,
              give_up: Callable[[], bool] | None = None) -> Result:
        """Score the grammar's sentences and the free transcript of one utterance
        (and the primed transcript, with a :attr:`primer`). ``give_up``
        (optional) is asked after the encoder and before every step of the
        decoder; :class:`GaveUp` when it says yes.

        All advance together, one token per step, in one batch: the beam's
        hypotheses first, then each transcript's single one (the primed one
        after its longer context: see :meth:`Decoder.prefixes`). With the
        table's adapter, the beam's rows are decoded with it and the
        transcripts' without (table talk must be compared with a model that
        has not learnt the game's words), the beam starting from a prompt of
        its own.
        """
        search = self.search_for(phrases)
        decoder = self.scorer

        def check() -> None:
            if give_up is not None and give_up():
                raise GaveUp

        check()
        memory = decoder.memory(self.encode(samples))
        check()
        prompts = [self._prompt(self.context)]
        if self.primer:
            prompts.append(self._prompt(self.primer))
        adapted = 1 if self.adapter is not None else 0
        logp, cache, pads = decoder.prefixes([*prompts[:adapted], *prompts], memory, adapted)
        # Where the base model stands after the table's context: the best
        # sentence's base score continues from there.
        base_start = (logp[adapted], row_cache(cache, adapted, pads[adapted]))

        def transcript() -> Greedy:
            return Greedy(decoder, self.tokens.end, self.bonus,
                           int(10 + 8 * len(samples) / RATE), self.tokens.encode(" "))

        transcripts = [transcript() for _ in prompts]
        beam = Beam(search, decoder, self.bonus, self.beam)
        _advance_together(decoder, memory, beam, transcripts, (logp, cache, pads), adapted, check)
        said = [greedy.result(self.tokens) for greedy in transcripts]
        nbest = beam.finished()
        bases = _base_logprobs(decoder, base_start, nbest, memory, adapted)
        return Result(nbest, said[0], transcripts[0].ends[0],
                      said[1] if len(said) > 1 else None, bases[0] if bases else None, bases)


def _base_logprobs(decoder: Decoder, start: tuple[Floats, Cache], nbest: Sequence[Scored],
                   memory: Memory, adapted: int) -> tuple[float | None, ...]:
    """What Whisper as shipped makes of the best sentences: the best one's and
    those within the referee's prior of it (the ones its expectation may put
    first), in one pass; without an adapter their own log-probabilities."""
    if not adapted:
        return tuple(n.logprob for n in nbest)
    contenders = [i for i, n in enumerate(nbest) if i == 0 or n.score >= nbest[0].score - PRIOR]
    scored = decoder.logprobs_after(start, [nbest[i].tokens for i in contenders], memory)
    found = dict(zip(contenders, scored, strict=True))
    return tuple(found.get(i) for i in range(len(nbest)))


def _advance_together(decoder: Decoder, memory: Memory, beam: Beam, transcripts: list[Greedy],
                      start: tuple[Floats, Cache, list[int]], adapted: int,
                      check: Callable[[], None]) -> None:
    """The beam's hypotheses and each transcript's single one, one token a step
    in one batch, until every one has ended (``check`` before every step)."""
    logp, cache, pads = start
    # The row of ``logp`` each transcript reads next, and the beam's hypotheses.
    reading = [adapted + i for i in range(len(transcripts))]
    rows = [0]
    while True:
        tokens, parents = beam.advance(logp, rows)
        rows = list(range(len(tokens)))
        beam_rows = len(tokens) if adapted else 0
        for i, greedy in enumerate(transcripts):
            token = None if greedy.done else greedy.advance(logp[reading[i]])
            if token is not None:
                tokens.append(token)
                parents.append(reading[i])
                reading[i] = len(tokens) - 1
        if not tokens:
            return
        pads = [pads[row] for row in parents]
        check()
        logp, cache = decoder.step(tokens, select(cache, parents), memory, pads, beam_rows)


class Rows(Protocol):
    """Where each token's log-probability is in a decoder's output (Whisper's
    :class:`~referee.speech.hearing.decoder.Decoder`, or Moonshine's full vocabulary)."""

    @property
    def row(self) -> Mapping[int, int]: ...

    @property
    def vocabulary(self) -> npt.NDArray[np.int64]: ...


class Writer(Protocol):
    """A tokenizer as a transcript needs it (Whisper's or Moonshine's)."""

    def decode(self, ids: Iterable[int]) -> str: ...


class Greedy:
    """Whisper's own transcript, a token at a time: the most likely token each
    step, cut where it starts repeating itself (Whisper loops on short windows)."""

    def __init__(self, decoder: Rows, end: int, bonus: float, limit: int,
                 blank: Sequence[int] = ()) -> None:
        self.decoder, self.end, self.bonus, self.limit = decoder, end, bonus, limit
        self.tokens: list[int] = []
        self.logprobs: list[float] = []
        #: The log-probability of ending the transcript at each point.
        self.ends: list[float] = []
        self.done = False
        #: Rows never taken as the first token (end of text, a blank), as in
        #: Whisper's own decoding: the transcript says what it heard.
        self.blank = [decoder.row[t] for t in (end, *blank) if t in decoder.row]

    def advance(self, logp: Floats) -> int | None:
        """The next token from its row of log-probabilities, or None once finished."""
        if self.done:
            return None
        self.ends.append(float(logp[self.decoder.row[self.end]]))
        if not self.tokens and self.blank:
            logp = logp.copy()
            logp[self.blank] = -np.inf
        row = int(np.argmax(logp))
        token = int(self.decoder.vocabulary[row])
        if token == self.end or len(self.tokens) >= self.limit:
            self.done = True
            return None
        self.tokens.append(token)
        self.logprobs.append(float(logp[row]))
        cut = _repeat_start(self.tokens)
        if cut is not None:
            del self.tokens[cut:], self.logprobs[cut:]
            self.done = True
            return None
        return token

    def result(self, tokens: Writer) -> Scored:
        logprob = sum(self.logprobs) + self.ends[len(self.tokens)]
        length = len(self.tokens) + 1
        return Scored(tokens.decode(self.tokens).strip(), logprob + self.bonus * length,
                      logprob, length)


class Beam:
    """A beam search over the grammar's network.

    Scores include ``bonus`` per token, so that a short sentence does not win
    only by being short; a hypothesis is given up once it falls :data:`SLACK`
    below the best finished sentence.
    """

    def __init__(self, search: SentenceSearch, decoder: Rows, bonus: float,
                 width: int) -> None:
        self.search, self.decoder, self.bonus, self.width = search, decoder, bonus, width
        self.hypotheses = [Hypothesis(0.0, (), search.start())]
        self.done: dict[str, Scored] = {}

    def advance(self, logp: Floats, rows: Sequence[int]) -> tuple[list[int], list[int]]:
        """Grow every hypothesis by one token: the tokens of the survivors and the
        rows of ``logp`` (their parents) they came from."""
        if not self.hypotheses or len(self.hypotheses[0].tokens) >= MAX_TOKENS:
            self.hypotheses = []
            return [], []
        grown: dict[tuple[int, int], Hypothesis] = {}
        for hyp, row in zip(self.hypotheses, rows, strict=True):
            scores = logp[row]
            for state in hyp.states:
                for token, after in self.search.moves(state):
                    lp = float(scores[self.decoder.row[token]])
                    score = hyp.score + self.bonus + lp
                    if after is None:
                        self._finish(state.words, score, hyp.logprob + lp, (*hyp.tokens, token))
                        continue
                    key = (row, token)
                    if key not in grown:
                        grown[key] = Hypothesis(score, (*hyp.tokens, token), [], hyp.logprob + lp)
                    grown[key].states.append(after)
        best_done = max((f.score for f in self.done.values()), default=-math.inf)
        ranked = sorted(grown.items(), key=lambda kv: -kv[1].score)
        kept = [kv for kv in ranked if kv[1].score > best_done - SLACK][: self.width]
        self.hypotheses = [hyp for _, hyp in kept]
        return [hyp.tokens[-1] for hyp in self.hypotheses], [row for (row, _), _ in kept]

    def _finish(self, words: tuple[str, ...], score: float, logprob: float,
                tokens: tuple[int, ...]) -> None:
        text = " ".join(words)
        if text not in self.done or score > self.done[text].score:
            self.done[text] = Scored(text, score, logprob, len(tokens), tokens)

    def finished(self, keep: int = 5) -> tuple[Scored, ...]:
        """The best finished sentences, best first."""
        return tuple(sorted(self.done.values(), key=lambda f: -f.score)[:keep])


def _repeat_start(tokens: Sequence[int]) -> int | None:
    """Where a run of tokens that repeats the run just before it starts, if the
    transcript ends with one (Whisper's loops on short windows).

    >>> _repeat_start([5, 1, 2, 3, 1, 2, 3])
    4
    >>> _repeat_start([1, 2, 3]) is None
    True
    """
    n = len(tokens)
    if n >= 3 and tokens[-1] == tokens[-2] == tokens[-3]:
        return n - 2
    for size in range(2, n // 2 + 1):
        if list(tokens[n - size :]) == list(tokens[n - 2 * size : n - size]):
            return n - size
    return None
