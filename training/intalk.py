"""Commands run into talk, as the referee hears their parts (``./run train
ears --intalk N``; an experiment of #83 item 5).

A player says a command with other words in one breath ("coffee ... hit
me", "stay, honestly"). The recogniser hears such an utterance again in
parts, after and before its longest inner pause
(:meth:`~referee.speech.hearing.whisper_recognizer.WhisperRecognizer._part`,
:data:`~referee.speech.hearing.whisper_recognizer.PART_MARGIN` of the pause
kept), and a part is heard worse than the same command alone. Each example
here is such a part: a command and a word that is no command said by the
same training voice, the word at the command's loudness give or take 6 dB,
a gap of 0 to 0.4 s between them; the part keeps the margin of the gap or,
where the gap is shorter, the other's sound up to it; then it is placed in
a room. The command's part is taught as the command; one in four examples
is the word's part instead, taught as that word (so that a part is not
heard as a command by habit).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE, from_float, speech_region
from referee.speech.hearing.whisper_recognizer import PART_MARGIN
from referee.speech.understanding.templates import normalise_words
from training.data import Babble, Echo, Example, prepared, speak_line
from training.rooms import as_float, place
from training.sentences import (
    NAMES,
    TABLES,
    WORDS,
    Line,
    _talk,
    command,
    short,
    spoken,
    training_games,
    written,
)
from training.voices import level_db, perturb, speak

#: Gaps between the word and the command, in seconds.
GAPS = (0.0, 0.1, 0.2, 0.3, 0.4)
#: The share of examples that are the word's part, not the command's.
WORD_SHARE = 0.25


@dataclass(frozen=True)
class RunInto:
    """A command and a word that is no command, said in one breath."""

    line: Line
    words: tuple[str, ...]
    before: bool
    gap: float


def draw(count: int, seed: int, exclude: Iterable[str] = ()) -> list[RunInto]:
    """``count`` commands run into talk, the same for the same seed; a command
    whose words are in ``exclude`` (the benchmarks') is drawn again."""
    rng = random.Random(seed)
    banned = {" ".join(normalise_words(text)) for text in exclude}
    games = training_games()
    tables = [(rng.choice(games), tuple(rng.sample(NAMES, rng.choice((2, 3, 4)))))
              for _ in range(TABLES)]
    drawn: list[RunInto] = []
    while len(drawn) < count:
        game, players = rng.choice(tables)
        line = (short if rng.random() < 0.5 else command)(game, players, rng)
        if " ".join(normalise_words(line.said)) in banned:
            continue
        said = rng.choice(WORDS) if rng.random() < 0.7 else _talk(rng)
        words = tuple(re.findall(r"[\w']+", said.replace("-", " ")))
        drawn.append(RunInto(line, words, rng.random() < 0.5, rng.choice(GAPS)))
    return drawn


def part_example(item: RunInto, index: int, seed: int, babble: Babble,
                 echo: Echo) -> tuple[npt.NDArray[np.float32], Example]:
    """Example ``index``: the part of ``item``'s utterance the recogniser
    would hear, placed in a room and prepared, and what it is taught as."""
    line = item.line
    command_audio, voice, rng = speak_line(line, index, seed)
    word_audio = perturb(speak(voice, spoken(item.words, line.players), seed + index), rng)
    gain = 10 ** ((level_db(command_audio) - level_db(word_audio) + rng.uniform(-6, 6)) / 20)
    word = as_float(speech_region(word_audio, margin_s=0.0)) * gain
    said = as_float(speech_region(command_audio, margin_s=0.0))
    as_word = rng.random() < WORD_SHARE
    wanted, other = (word, said) if as_word else (said, word)
    # The part starts (or ends) PART_MARGIN into the gap; with a shorter gap,
    # in the other's sound.
    reach = int(max(0.0, PART_MARGIN - item.gap) * RATE)
    gap = np.zeros(int(min(item.gap, PART_MARGIN) * RATE))
    wanted_first = item.before == as_word
    pieces = [wanted, gap, other[:reach]] if wanted_first else [other[len(other) - reach:],
                                                                 gap, wanted]
    joined = np.concatenate(pieces)
    part = from_float(joined / max(1.0, float(np.abs(joined).max()) / 0.9), RATE)
    placed, room = place(part, rng, babble, echo)
    word_text = written(item.words, line.players, rng.random() < 0.5)
    target, kind = (word_text, "part-word") if as_word else (line.target, "part-command")
    said_as = (" ".join(item.words) + " / " + line.said if item.before
               else line.said + " / " + " ".join(item.words))
    return prepared(placed), Example(index, said_as, target, kind, line.game, line.players,
                                     voice.key(), f"{room} gap {item.gap}", 0.0)
