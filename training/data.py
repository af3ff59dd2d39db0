"""The training set: lines spoken, placed in rooms, prepared and encoded as the referee does.

Each example is one line (:mod:`~training.sentences`) in one
training voice (:mod:`~training.voices`) in one room
(:mod:`~training.rooms`), then exactly what the referee does
with an utterance: :func:`~referee.speech.audio.trailing_cut`, Whisper's
log-mel features and the int8 CTranslate2 encoder
(:func:`~referee.speech.hearing.features.encode`). Only the decoder is
trained, so the encodings are computed once and kept (float16, 8 s windows:
400 x 384 values, 300 kB an example) with the line, the voice and the room.

Example ``i`` depends only on the seed and ``i`` (its own random generator),
so a set is the same however many workers build it. Two workers share the
two cores: each renders, places and encodes its own half.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import subprocess
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE, Audio, trailing_cut
from referee.speech.hearing.features import WINDOW
from training.rooms import Signal, as_float, place
from training.sentences import REFEREE, Line, draw, negative, training_games
from training.voices import VoiceSpec, draw_voice, perturb, speak

#: Encoder frames and width of an 8 s window.
FRAMES, WIDTH = 400, 384
#: Examples encoded together.
BATCH = 8


@dataclass(frozen=True)
class Example:
    """What one stored encoding is."""

    index: int
    said: str
    target: str
    kind: str
    game: str
    players: tuple[str, ...]
    voice: str
    room: str
    seconds: float


class Babble:
    """Other people talking, from training voices only: table talk read by
    eSpeak NG and Piper voices, three to six talkers at once."""

    def __init__(self, seed: int, talkers: int = 8, tracks: Sequence[Signal] = ()) -> None:
        """Eight talkers of the seed's drawing, or the ``tracks`` given (a pack's)."""
        rng = random.Random(seed)
        self.rng = rng
        self.tracks: list[Signal] = list(tracks)
        for n in range(0 if tracks else talkers):
            voice = draw_voice(rng)
            while voice.engine == "kokoro":  # the slowest to render; not needed here
                voice = draw_voice(rng)
            games = training_games()
            lines = [negative("talk", games[n % len(games)], ("Ann", "Bob"), rng)
                     for _ in range(6)]
            track = np.concatenate([as_float(speak(voice, line.said, seed + n))
                                    for line in lines])
            self.tracks.append(track / (np.std(track) + 1e-9))

    def __call__(self, n: int) -> Signal:
        out = np.zeros(n)
        for track in self.rng.sample(self.tracks, self.rng.randint(3, 6)):
            start = self.rng.randrange(len(track))
            out += np.resize(np.roll(track, -start), n)
        return out


class Echo:
    """The referee's own sentences in its own voice, as they leak back."""

    def __init__(self, seed: int, count: int = 12, sentences: Sequence[Audio] = ()) -> None:
        rng = random.Random(seed)
        self.rng = rng
        referee = VoiceSpec("referee", "espeak", 1.0)
        self.sentences = list(sentences) or [
            speak(referee, negative("referee", training_games()[0], ("Ann", "Bob"), rng).said)
            for _ in range(count)]

    def __call__(self) -> Audio:
        return self.rng.choice(self.sentences)


def speak_line(line: Line, index: int, seed: int) -> tuple[Audio, VoiceSpec, random.Random]:
    """Example ``index``'s line said dry (no room yet) in its voice, and its
    random generator as the room is to draw from it. A voice that fails on the
    line (a tool's error) is replaced by the next voice the generator draws:
    the same every time."""
    rng = random.Random(seed * 1_000_003 + index)
    if line.kind == "referee":
        voice = VoiceSpec("referee", "espeak", 1.0)
        return speak(voice, line.said), voice, rng
    for attempt in range(5):
        voice = draw_voice(rng)
        try:
            audio = perturb(speak(voice, line.said, seed + index), rng)
        except (OSError, ValueError, subprocess.CalledProcessError, RuntimeError):
            if attempt == 4:
                raise
            continue
        if len(audio.samples):
            break
    return audio, voice, rng


def render(line: Line, index: int, seed: int, babble: Callable[[int], Signal],
           echo: Callable[[], Audio] | None,
           over: bool = False) -> tuple[npt.NDArray[np.float32], str, str]:
    """Example ``index``'s prepared samples, its voice and its room (``over``:
    said over the referee's voice, through the echo canceller)."""
    audio, voice, rng = speak_line(line, index, seed)
    clean_share = 0.0 if line.kind == "referee" else 0.2
    placed, room = place(audio, rng, babble, echo, clean_share, over and line.kind != "referee")
    if line.kind == "referee":
        room = f"leak {room}"
    return prepared(placed), voice.key(), room


def prepared(placed: Audio) -> npt.NDArray[np.float32]:
    """What the referee hears of an utterance: :func:`trailing_cut`, as floats."""
    samples: npt.NDArray[np.float32] = trailing_cut(placed).samples.astype(np.float32) / 32768.0
    return samples


def line_example(over: bool, line: Line, index: int, seed: int, babble: Babble,
                 echo: Echo) -> tuple[npt.NDArray[np.float32], Example]:
    """Example ``index`` of a synthesised set: its line said, placed and prepared
    (``over``: said over the referee's voice), and what it is."""
    samples, voice, room = render(line, index, seed, babble, echo, over)
    return samples, Example(index, line.said, line.target, line.kind, line.game, line.players,
                            voice, room, 0.0)


#: How one example is made: ``maker(item, index, seed, babble, echo)`` gives its
#: prepared samples and what it is (a top-level function, or a ``partial`` of
#: one, so that worker processes can be handed it).
Maker = Callable[[Any, int, int, Babble, Echo], tuple[npt.NDArray[np.float32], Example]]


def _work(job: tuple[Path, int, int, Sequence[int], Sequence[Any], Maker]) -> int:
    """One worker: make, prepare and encode its examples into one shard,
    going on from where an interrupted run of it stopped."""
    import ctranslate2

    from referee.speech.hearing.features import encode
    from referee.speech.hearing.interface import find_whisper_model

    folder, worker, seed, indexes, items, maker = job
    model = find_whisper_model()
    if model is None:
        raise RuntimeError("Whisper's model is not installed (./run installs it).")
    encoder = ctranslate2.models.Whisper(str(model), device="cpu", compute_type="int8",
                                         intra_threads=1)
    babble, echo = Babble(seed + 17 * worker + 1), Echo(seed + 31 * worker + 2)
    shard, meta_path = folder / f"shard{worker}.npy", folder / f"shard{worker}.jsonl"
    progress = folder / f"progress{worker}"
    done = _stored(folder, worker)
    if done and shard.exists() and meta_path.exists():
        store = np.load(shard, mmap_mode="r+")
        kept = meta_path.read_text().splitlines()[:done]
        meta_path.write_text("".join(line + "\n" for line in kept))
    else:
        done = 0
        store = np.lib.format.open_memmap(shard, mode="w+", dtype=np.float16,
                                          shape=(len(indexes), FRAMES, WIDTH))
        meta_path.write_text("")
    with meta_path.open("a") as meta:
        for start in range(done, len(indexes), BATCH):
            batch, rows = [], []
            for index, item in zip(indexes[start:start + BATCH], items[start:start + BATCH],
                                   strict=True):
                samples, example = maker(item, index, seed, babble, echo)
                if len(samples) > WINDOW * RATE:
                    samples = samples[: int(WINDOW * RATE)]
                batch.append(samples)
                example = replace(example, seconds=round(len(samples) / RATE, 3))
                rows.append(json.dumps(asdict(example)))
            store[start:start + len(batch)] = encode(encoder, batch).astype(np.float16)
            store.flush()
            meta.write("".join(row + "\n" for row in rows))
            meta.flush()
            progress.write_text(str(start + len(batch)))
    return len(indexes)


def _stored(folder: Path, worker: int) -> int:
    """How many examples a worker has stored (0 when it has not started)."""
    path = folder / f"progress{worker}"
    try:
        return int(path.read_text() or 0) if path.exists() else 0
    except ValueError:
        return 0


def build(folder: Path, count: int, seed: int, exclude: Iterable[str] = (), workers: int = 2,
          progress: Callable[[int, int], None] | None = None,
          mix: dict[str, float] | None = None, over: bool = False) -> list[Line]:
    """Draw ``count`` lines (of ``mix``: :data:`~training.sentences.MIX`
    by default) and build their examples into ``folder`` (shards of encodings
    and their descriptions). ``exclude``: sentences never to train on.
    ``over``: every line said over the referee's voice, through the echo
    canceller (:func:`~training.rooms.over_referee`)."""
    lines = draw(count, seed, exclude, mix)
    build_examples(folder, lines, seed, partial(line_example, over), workers, progress)
    return lines


def build_examples(folder: Path, items: Sequence[Any], seed: int, maker: Maker,
                   workers: int = 2, progress: Callable[[int, int], None] | None = None) -> None:
    """Make example ``i`` of ``items`` with ``maker`` (its own random draws
    depend on ``seed`` and ``i`` only), in ``workers`` processes, and store
    the encodings and what each is in ``folder``; marked complete at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    count = len(items)
    jobs = [(folder, w, seed, list(range(w, count, workers)), items[w::workers], maker)
            for w in range(workers)]
    if workers == 1:
        _work(jobs[0])
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            waiting = pool.map_async(_work, jobs)
            while not waiting.ready():
                waiting.wait(2.0)
                if progress is not None:
                    progress(_done(folder, workers), count)
            waiting.get()
    if progress is not None:
        progress(_done(folder, workers), count)
    (folder / "complete").write_text(json.dumps({"count": count, "seed": seed,
                                                 "workers": workers, "at": time.time()}))


def _done(folder: Path, workers: int) -> int:
    return sum(_stored(folder, w) for w in range(workers))


class Dataset:
    """Built training sets, one after the other: encodings (memory-mapped)
    and their examples."""

    def __init__(self, folder: Path, *more: Path) -> None:
        self.folder = folder
        self.shards: list[npt.NDArray[np.float16]] = []
        self.examples: list[Example] = []
        self._where: list[tuple[int, int]] = []
        for part in (folder, *more):
            if not (part / "complete").exists():
                raise FileNotFoundError(f"{part} holds no complete training set")
            examples: list[Example] = []
            where: list[tuple[int, int]] = []
            for shard in sorted(part.glob("shard*.npy")):
                self.shards.append(np.load(shard, mmap_mode="r"))
                with shard.with_suffix(".jsonl").open() as meta:
                    for row, text in enumerate(meta):
                        item = json.loads(text)
                        item["players"] = tuple(item["players"])
                        examples.append(Example(**item))
                        where.append((len(self.shards) - 1, row))
            # In the order the lines were drawn, whichever worker made them.
            order = sorted(range(len(examples)), key=lambda i: examples[i].index)
            self.examples += [examples[i] for i in order]
            self._where += [where[i] for i in order]

    def __len__(self) -> int:
        return len(self.examples)

    def encoding(self, i: int) -> npt.NDArray[np.float16]:
        shard, row = self._where[i]
        encoded: npt.NDArray[np.float16] = self.shards[shard][row]
        return encoded

    def voices(self) -> set[str]:
        return {e.voice for e in self.examples}

    def spoken_by(self, engines: Collection[str]) -> None:
        """Keep only the lines said in voices of ``engines`` ("espeak", "piper",
        "kokoro"), in their order: a learning curve over voices at a fixed
        number of lines. The referee's own sentences leaking back are kept
        whatever ``engines`` (they are the referee's voice, not a player's)."""
        keep = [i for i, example in enumerate(self.examples)
                if example.voice.split(":", 1)[0] in {*engines, "referee"}]
        self.examples = [self.examples[i] for i in keep]
        self._where = [self._where[i] for i in keep]


    def real_speakers(self, count: int, seed: int) -> None:
        """Keep the real recordings of ``count`` of their speakers only (drawn
        with ``seed``), and every synthetic line: a learning curve over the
        number of real speakers."""
        speakers = sorted({e.voice for e in self.examples if e.voice.startswith("real:")})
        chosen = set(random.Random(seed).sample(speakers, min(count, len(speakers))))
        keep = [i for i, example in enumerate(self.examples)
                if not example.voice.startswith("real:") or example.voice in chosen]
        self.examples = [self.examples[i] for i in keep]
        self._where = [self._where[i] for i in keep]


def describe(lines: Sequence[Line]) -> dict[str, Any]:
    """How many lines of each kind and game."""
    out: dict[str, Any] = {}
    for line in lines:
        out[line.kind] = out.get(line.kind, 0) + 1
        out[line.game] = out.get(line.game, 0) + 1
    return out


__all__ = ["REFEREE", "Dataset", "Example", "build", "describe"]


def benchmark_sentences(root: Path) -> list[str]:
    """The sentences the benchmarks measure with that are no sentence of the
    games' grammars, where the project's tests are: every held-out line
    (``*-heldout.tsv``: paraphrases and table talk) and the tuning split's table
    talk and single words (``tests/audio_fixtures/*.tsv`` with no intent, and
    ``tests/data/table_talk.txt``). They are never trained on, so that the
    benchmarks stay measurements. (The tuning split's commands are sentences of
    the grammars, which the training covers whole; what keeps that split a
    measurement is its voices, never trained on.)"""
    texts: list[str] = []
    for tsv in sorted((root / "tests" / "audio_fixtures").glob("*.tsv")):
        for row in tsv.read_text().splitlines():
            cells = row.split("\t")
            if row.startswith("#") or len(cells) < 3:
                continue
            if tsv.stem.endswith("-heldout") or json.loads(cells[2]).get("kind") == "none":
                texts.append(cells[1])
    talk = root / "tests" / "data" / "table_talk.txt"
    if talk.exists():
        texts += [t for t in talk.read_text().splitlines() if t.strip() and not t.startswith("#")]
    return texts
