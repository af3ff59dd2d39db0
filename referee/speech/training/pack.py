"""A training pack: the training set as dry speech, small enough to travel to an accelerator.

Adapting the encoder needs the audio itself, not the cached encodings the
decoder's training reads (:mod:`~referee.speech.training.data`), and on this
2-core CPU it costs about a second a sample. An accelerator machine does it
in minutes, but it has no eSpeak NG, Piper or Kokoro to speak with, and what
travels to it is limited (64 MiB, the repository included). A pack holds what
:mod:`~referee.speech.training.whole` needs and nothing more:

- ``speech.ogg``: every line said dry in its training voice
  (:func:`~referee.speech.training.data.speak_line`, the same voices as the
  decoder's set), one after the other in Ogg Opus at about 25 kbit/s; the
  rooms are added at training time, fresh each epoch, so noise and
  reverberation never pass through the codec;
- ``rooms.ogg``: the babble talkers' tracks and the referee's sentences the
  rooms mix in (:class:`~referee.speech.training.data.Babble`,
  :class:`~referee.speech.training.data.Echo`);
- ``tokens.npz``: each example's prompt and target tokens (the referee's own
  prompt for its table) and the decoder's vocabulary, so that the machine
  needs no tokenizer;
- ``weights.npz``: the base model's weights that training reads, int8 with a
  scale per output row (CTranslate2's own quantisation of the encoder the
  referee runs), the token embedding only in the rows that are used;
- ``examples.jsonl.gz``: what each example is.

The pack is the same for the same options (seeded, as the decoder's set).
"""

from __future__ import annotations

import gzip
import io
import json
import multiprocessing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE
from referee.speech.training.sentences import Line, draw

#: Silence between two lines in ``speech.ogg`` (the codec's look-ahead never
#: carries one line into the next).
GAP = 0.25
#: soundfile's Opus compression level: 0.9 is about 25 kbit/s for speech.
OPUS_LEVEL = 0.9

#: Encoder positions of an 8 s window, the longest training hears.
ENCODER_FRAMES = 400

Int16s = npt.NDArray[np.int16]


def _said(job: tuple[int, int, Line]) -> tuple[int, Int16s, str]:
    from referee.speech.training.data import speak_line

    index, seed, line = job
    audio, voice, _ = speak_line(line, index, seed)
    return index, audio.samples.astype(np.int16), voice.key()


def _opus(tracks: Sequence[Int16s]) -> tuple[bytes, list[tuple[int, int]]]:
    """Tracks one after the other with :data:`GAP` between, as Ogg Opus; where each is."""
    import soundfile

    gap = np.zeros(int(GAP * RATE), np.int16)
    where, parts, at = [], [], 0
    for track in tracks:
        where.append((at, len(track)))
        parts += [track, gap]
        at += len(track) + len(gap)
    buffer = io.BytesIO()
    whole = np.concatenate(parts) if parts else np.zeros(0, np.int16)
    soundfile.write(buffer, whole.astype(np.float32) / 32768.0, RATE, format="OGG",
                    subtype="OPUS", compression_level=OPUS_LEVEL)
    return buffer.getvalue(), where


def _unopus(data: bytes) -> npt.NDArray[np.float32]:
    import soundfile

    samples, rate = soundfile.read(io.BytesIO(data), dtype="float32")
    if rate != RATE:
        raise ValueError(f"a pack's audio is at {rate} Hz, not {RATE}")
    out: npt.NDArray[np.float32] = samples
    return out


def quantise(weight: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 with one scale per output row (the first axis), as
    CTranslate2 quantises a weight for ``compute_type="int8"``."""
    rows = np.asarray(weight, np.float32).reshape(weight.shape[0], -1)
    scale = np.abs(rows).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(rows / scale[:, None]), -127, 127).astype(np.int8)
    return q.reshape(weight.shape), scale.astype(np.float32)


def pack_weights(variables: Mapping[str, npt.NDArray[Any]],
                 rows: Sequence[int]) -> dict[str, npt.NDArray[Any]]:
    """The float variables, weights of two or more axes int8 (``NAME`` and
    ``NAME@scale``), the rest float16; the embedding only in ``rows``."""
    out: dict[str, npt.NDArray[Any]] = {}
    for name, value in variables.items():
        if name == "decoder/projection/weight" or value.dtype.kind != "f":
            continue  # tied to the embedding; the flags are CTranslate2's
        if name == "decoder/embeddings/weight":
            value = value[np.asarray(rows)]
        if name == "encoder/position_encodings/encodings":
            value = value[:ENCODER_FRAMES]  # training hears 8 s windows
        if value.ndim >= 2 and "position_encodings" not in name:
            out[name], out[name + "@scale"] = quantise(value)
        else:
            out[name] = value.astype(np.float16)
    return out


def unpack_weights(packed: Mapping[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[np.float32]]:
    """The variables back as float32 (int8 ones times their scales)."""
    out: dict[str, npt.NDArray[np.float32]] = {}
    for name, value in packed.items():
        if name.endswith("@scale"):
            continue
        scale = packed.get(name + "@scale")
        if scale is None:
            out[name] = value.astype(np.float32)
        else:
            shape = (-1,) + (1,) * (value.ndim - 1)
            out[name] = value.astype(np.float32) * scale.reshape(shape)
    return out


def build_pack(folder: Path, count: int, seed: int, model: Path, exclude: Iterable[str] = (),
               workers: int = 2, progress: Callable[[int, int], None] | None = None) -> None:
    """Draw ``count`` lines as the decoder's set does, say each in its voice
    and write the pack into ``folder``."""
    from referee.speech.hearing.whisper import Tokens, read_ctranslate2
    from referee.speech.training.data import Babble, Echo
    from referee.speech.training.train import prompt, vocabulary

    folder.mkdir(parents=True, exist_ok=True)
    lines = draw(count, seed, exclude)
    said: dict[int, tuple[Int16s, str]] = {}
    jobs = [(i, seed, line) for i, line in enumerate(lines)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for index, samples, voice in pool.imap_unordered(_said, jobs, chunksize=4):
            said[index] = (samples, voice)
            if progress is not None:
                progress(len(said), count)
    speech, where = _opus([said[i][0] for i in range(count)])
    (folder / "speech.ogg").write_bytes(speech)
    babble, echo = Babble(seed + 1), Echo(seed + 2)
    room_tracks = [np.round(t / np.abs(t).max() * 20000).astype(np.int16) for t in babble.tracks]
    room_tracks += [s.samples.astype(np.int16) for s in echo.sentences]
    rooms, room_where = _opus(room_tracks)
    (folder / "rooms.ogg").write_bytes(rooms)
    (folder / "rooms.json").write_text(json.dumps(
        {"babble": room_where[: len(babble.tracks)], "echo": room_where[len(babble.tracks):]}))
    tokens = Tokens(model / "tokenizer.json")
    config = json.loads((model / "config.json").read_text())
    from referee.speech.training.data import Example

    examples = [Example(i, line.said, line.target, line.kind, line.game, line.players,
                        said[i][1], "dry", round(where[i][1] / RATE, 3))
                for i, line in enumerate(lines)]
    prompts = [prompt(tokens, e) for e in examples]
    targets = [[*tokens.encode(" " + e.target), tokens.end] for e in examples]
    wanted = vocabulary(tokens, set(config.get("suppress_ids", [])), targets)
    used = {token for sequence in (*prompts, *targets) for token in sequence}
    rows = sorted(used | set(wanted))
    row = {t: i for i, t in enumerate(rows)}

    def flat(lists: Sequence[Sequence[int]]) -> tuple[npt.NDArray[np.int32],
                                                      npt.NDArray[np.int64]]:
        ends = np.cumsum([len(x) for x in lists])
        return np.asarray([row[t] for x in lists for t in x], np.int32), ends

    prompt_rows, prompt_ends = flat(prompts)
    target_rows, target_ends = flat(targets)
    np.savez_compressed(folder / "tokens.npz", prompts=prompt_rows, prompt_ends=prompt_ends,
                        targets=target_rows, target_ends=target_ends,
                        vocabulary=np.asarray([row[t] for t in wanted], np.int32),
                        tokens=np.asarray(rows, np.int32))
    weights = pack_weights(read_ctranslate2(model / "model.bin"), rows)
    savez: Any = np.savez  # (its stubs take the arrays' names for its own options)
    savez(folder / "weights.npz", **weights)
    with gzip.open(folder / "examples.jsonl.gz", "wt") as out:
        for example, (start, length) in zip(examples, where, strict=True):
            item = {**example.__dict__, "start": start, "length": length}
            out.write(json.dumps(item) + "\n")
    (folder / "complete").write_text(json.dumps({"count": count, "seed": seed}))


@dataclass
class Pack:
    """A pack read back: dry speech, room tracks, token rows, base weights."""

    folder: Path
    examples: list[dict[str, Any]]
    speech: npt.NDArray[np.float32]
    babble: list[npt.NDArray[np.float64]]
    echo: list[npt.NDArray[np.int16]]
    prompts: list[list[int]]
    targets: list[list[int]]
    #: The decoder's vocabulary, as rows of the packed embedding.
    vocabulary: list[int]
    #: The model's token of each row of the packed embedding.
    tokens: list[int]

    @classmethod
    def read(cls, folder: Path) -> Pack:
        if not (folder / "complete").exists():
            raise FileNotFoundError(f"{folder} holds no complete training pack")
        with gzip.open(folder / "examples.jsonl.gz", "rt") as lines:
            examples = [json.loads(line) for line in lines]
        speech = _unopus((folder / "speech.ogg").read_bytes())
        rooms = _unopus((folder / "rooms.ogg").read_bytes())
        where = json.loads((folder / "rooms.json").read_text())
        babble = [rooms[s:s + n].astype(np.float64) for s, n in where["babble"]]
        babble = [t / (np.std(t) + 1e-9) for t in babble]
        echo = [np.round(rooms[s:s + n] * 32768).clip(-32768, 32767).astype(np.int16)
                for s, n in where["echo"]]
        with np.load(folder / "tokens.npz") as t:
            def split(flat: npt.NDArray[Any], ends: npt.NDArray[Any]) -> list[list[int]]:
                return [x.tolist() for x in np.split(flat, ends[:-1])]

            prompts = split(t["prompts"], t["prompt_ends"])
            targets = split(t["targets"], t["target_ends"])
            vocabulary, tokens = t["vocabulary"].tolist(), t["tokens"].tolist()
        return cls(folder, examples, speech, babble, echo, prompts, targets, vocabulary, tokens)

    def __len__(self) -> int:
        return len(self.examples)

    def utterance(self, i: int) -> Int16s:
        """Example ``i`` said dry, as 16-bit samples."""
        item = self.examples[i]
        piece = self.speech[item["start"]:item["start"] + item["length"]]
        out: Int16s = np.round(piece * 32768).clip(-32768, 32767).astype(np.int16)
        return out

    def variables(self) -> dict[str, npt.NDArray[np.float32]]:
        with np.load(self.folder / "weights.npz") as packed:
            return unpack_weights({name: packed[name] for name in packed.files})
