"""Real human speech in the training set (``./run train ears --real DIR``).

Synthetic voices taught the decoder the games' sentences but not people: real
bare digits stayed at 71-75 of 90 whatever synthetic voices trained it
(docs/record/2026-11-29-learning-curve-voices.md). A few thousand real
recordings of short words, said by a few hundred people, are what moves them.

**The folder** (any user can fill one; files are read in sorted order):

* ``WORD/*.wav``: each recording says the folder's name ("seven/", "yes/";
  an underscore in a folder's name is a space: "turn_off/");
* ``NAME.wav`` with ``NAME.txt`` beside it: the text file says what was said
  (any folder; it wins over the folder's name);
* Speech Commands' own layouts: ``_unknown_/WORD_SPEAKER_nohash_N.wav``
  (the word before the speaker) is read as WORD; other folders whose name
  starts with an underscore (``_silence_``, ``_background_noise_``) are no
  speech and are skipped;
* the Free Spoken Digit Dataset's names, ``DIGIT_SPEAKER_N.wav``, say DIGIT.

Recordings at any rate are read as the referee hears them (16 kHz mono:
:func:`~referee.speech.audio.load_wav` resamples; FSDD's 8 kHz stays a
telephone's band, which is what it is).

**Who spoke.** A recording's speaker is read from its name (Speech Commands:
the eight hex digits before ``_nohash_``; FSDD: the name after the digit;
otherwise the folder's path). Every speaker of a measurement set is kept out
of training (:func:`measured_speakers`, :func:`keep_apart`): the real-voice
benchmark's Speech Commands speakers, the FSDD speaker kept for measuring
(:data:`FSDD_MEASURED`), and one in eight Speech Commands speakers held back
(:func:`held_back`). A test checks the shipped adapter's report against
them (``tests/test_ears.py``).

**What the decoder learns.** Each recording's words are its target, written
as Whisper writes them (:func:`~training.sentences.written`:
"Seven." or "7.", "Yes.", "Tree."), after the prompt of a table drawn at
random: a command word and a word that is no command alike, so that "tree"
is written "Tree." and not "Three.". Each recording is used ``copies`` times,
each copy in a room, a noise and a channel of its own draw
(:func:`~training.rooms.place`,
:func:`~training.rooms.channel`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from referee.speech.audio import Audio, AudioError, from_float, load_wav
from referee.speech.understanding.numbers import number_to_words
from training.data import Babble, Echo, Example, build_examples, prepared
from training.rooms import as_float, channel, place
from training.sentences import NAMES, training_games, written
from training.voices import perturb

#: The FSDD speakers of ``../shared/real-voices/fsdd`` kept for measuring (never
#: trained on): one of the three, Lucas (German accent), so that a speaker of
#: that set the adapter never heard is measured (``./run bench realvoices --fsdd``).
FSDD_MEASURED = ("lucas",)
#: The kinds of real example: a word that is a move at some table ("seven",
#: "yes", "stop"), or one that is none ("tree", "marvin", "up").
COMMAND_WORDS = frozenset({
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    "yes", "no", "stop"})
#: The share of copies put through a channel (:func:`~training.rooms.channel`):
#: a telephone, Bluetooth hands-free or a cheap headset.
CHANNEL_SHARE = 0.3

_SPEECH_COMMANDS = re.compile(r"(?:^|_)([0-9a-f]{8})_nohash_\d+")
_SPEAKER_HASH = re.compile(r"[0-9a-f]{8}")
_FSDD = re.compile(r"^(\d)_([a-z]+)_\d+$")


@dataclass(frozen=True)
class Recording:
    """One real recording and what was said in it."""

    path: Path
    words: str
    speaker: str

    @property
    def kind(self) -> str:
        return "real" if self.words in COMMAND_WORDS else "real-word"


def _stem(path: Path) -> str:
    """The name without every suffix ("x.wav.wav" -> "x")."""
    name = path.name
    while Path(name).suffix.lower() in (".wav", ".txt"):
        name = Path(name).stem
    return name


def speaker_of(path: Path, folder: Path) -> str:
    """Who said a recording: Speech Commands' hash, FSDD's name, or its folder's path."""
    stem = _stem(path)
    if found := _SPEECH_COMMANDS.search(stem):
        return found.group(1)
    if found := _FSDD.match(stem):
        return found.group(2)
    return "folder:" + path.parent.relative_to(folder).as_posix()


def words_of(path: Path) -> str | None:
    """What a recording says, by the rules of the module's description; None:
    nothing that can be known (or no speech)."""
    text = path.with_name(_stem(path) + ".txt")
    if text.is_file():
        said = " ".join(re.findall(r"[\w']+", text.read_text(errors="replace").casefold()))
        return said or None
    stem, parent = _stem(path), path.parent.name
    if found := _FSDD.match(stem):
        return number_to_words(int(found.group(1)))
    if parent == "_unknown_":
        word = stem.split("_", 1)[0].casefold()
        return word if word.isalpha() else None
    if parent.startswith("_") or not parent:
        return None
    return " ".join(parent.casefold().replace("_", " ").split()) or None


def read_folder(folder: Path) -> list[Recording]:
    """Every recording under ``folder`` whose words are known, in sorted order."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() != ".wav" or not path.is_file():
            continue
        said = words_of(path)
        if said:
            out.append(Recording(path, said, speaker_of(path, folder)))
    return out


def measured_speakers(shared: Path) -> frozenset[str]:
    """The speakers of every measurement set: the real-voice benchmark's Speech
    Commands speakers (from its file names) and :data:`FSDD_MEASURED`."""
    found = set(FSDD_MEASURED)
    for path in (shared / "real-voices" / "speech_commands_v0.01").rglob("*.wav"):
        if match := _SPEECH_COMMANDS.search(_stem(path)):
            found.add(match.group(1))
    return frozenset(found)


def held_back(speaker: str) -> bool:
    """A Speech Commands speaker held back from training to measure with
    (``./run bench realvoices --sets held-back``): one in eight, those whose
    hash starts with 0 or 1."""
    return _SPEAKER_HASH.fullmatch(speaker) is not None and speaker[0] in "01"


def keep_apart(recordings: Iterable[Recording],
               measured: Collection[str]) -> tuple[list[Recording], list[Recording]]:
    """The recordings whose speaker is in no measurement set (``measured``, or
    :func:`held_back`), and the others."""
    kept: list[Recording] = []
    dropped: list[Recording] = []
    for recording in recordings:
        out = recording.speaker in measured or held_back(recording.speaker)
        (dropped if out else kept).append(recording)
    return kept, dropped


def balanced(recordings: Sequence[Recording], most: int, seed: int) -> list[Recording]:
    """At most ``most`` recordings of each word (drawn with ``seed``), in order:
    four hundred "yes" beside eighteen "seven" would teach mostly "yes"."""
    by_word: dict[str, list[int]] = {}
    for i, recording in enumerate(recordings):
        by_word.setdefault(recording.words, []).append(i)
    rng = random.Random(seed)
    keep: set[int] = set()
    for indexes in by_word.values():
        keep.update(indexes if len(indexes) <= most else rng.sample(indexes, most))
    return [recordings[i] for i in sorted(keep)]


def unused(recordings: Sequence[Recording], most: int, seed: int) -> list[Recording]:
    """The recordings :func:`balanced` leaves out (with the same ``most`` and
    ``seed``): the training speakers' other recordings, never trained on, which
    the calibration may be fitted on (``./run bench realvoices --sets tuning``)."""
    chosen = {r.path for r in balanced(recordings, most, seed)}
    return [r for r in recordings if r.path not in chosen]


def real_example(recording: Recording, index: int, seed: int, babble: Babble,
                 echo: Echo) -> tuple[npt.NDArray[np.float32], Example]:
    """Example ``index``: the recording at a table drawn at random, perhaps
    slowed, sped or pitched, in a room, a noise and a channel of its draw."""
    rng = random.Random(seed * 1_000_003 + index)
    game = rng.choice(training_games())
    players = tuple(rng.sample(NAMES, rng.choice((2, 2, 3, 3, 4))))
    audio = load_wav(recording.path)
    audio = perturb(audio, rng)
    placed, room = place(audio, rng, babble, echo, clean_share=0.25)
    if rng.random() < CHANNEL_SHARE:
        through, name = channel(as_float(placed), rng)
        placed, room = from_float(through, placed.rate), f"{room} {name}"
    target = written(recording.words.split(), players, digits=rng.random() < 0.6)
    example = Example(index, recording.words, target, recording.kind, game, players,
                      f"real:{recording.speaker}", room, 0.0)
    return prepared(placed), example


def build_real(folder: Path, recordings: Sequence[Recording], copies: int, seed: int,
               workers: int = 2, progress: Callable[[int, int], None] | None = None) -> None:
    """The training set of ``recordings``, each ``copies`` times (example
    ``i`` is recording ``i // copies``), built into ``folder``."""
    items = [recording for recording in recordings for _ in range(copies)]
    build_examples(folder, items, seed, real_example, workers, progress)


def readable(recordings: Iterable[Recording]) -> tuple[list[Recording], list[str]]:
    """The recordings that can be read, and a reason for each that cannot
    (a damaged or empty WAV is left out with its name, not a crash)."""
    good: list[Recording] = []
    bad: list[str] = []
    for recording in recordings:
        try:
            audio: Audio = load_wav(recording.path)
        except AudioError as error:
            bad.append(str(error))
            continue
        if len(audio.samples):
            good.append(recording)
    return good, bad
