"""``referee models install``: the only code that ever downloads anything.

It runs only when a user asks for it. The archive is downloaded into a
temporary file beside the destination with a progress bar, checked (its size
against the server's, its SHA-256, that it is a zip holding a Vosk model),
unpacked into a temporary folder and only then renamed into ``models/``: an
interrupted download, a bad checksum or a bad archive leaves nothing behind.
Without network it says so, with the steps to install by hand.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO


class InstallError(RuntimeError):
    """The model could not be installed; nothing was left half-installed."""


@dataclass(frozen=True)
class ModelSource:
    name: str
    url: str
    #: Folder the archive unpacks to.
    folder: str
    sha256: str | None
    description: str


CATALOG = {
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
    return (
        f"To install it by hand: on a computer with internet, download {source.url}, "
        f"copy it here and unzip it into {dest} (so that {dest / source.folder / 'am'} "
        "exists), or give its folder with --model PATH."
    )


def _progress(out: TextIO | None) -> Callable[[int, int | None], None]:
    def show(done: int, total: int | None) -> None:
        if out is None:
            return
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


def _unpack(archive: Path, into: Path, folder: str) -> Path:
    try:
        with zipfile.ZipFile(archive) as zipped:
            bad = zipped.testzip()
            if bad is not None:
                raise InstallError(f"The archive is damaged ({bad} fails its check).")
            for member in zipped.namelist():
                path = (into / member).resolve()
                if not path.is_relative_to(into.resolve()):
                    raise InstallError(f"The archive tries to write outside: {member}.")
            zipped.extractall(into)
    except zipfile.BadZipFile:
        raise InstallError("The download is not a zip archive.") from None
    model = into / folder
    if not (model / "am").is_dir() or not (model / "conf").is_dir():
        raise InstallError(f"The archive does not hold a Vosk model in {folder}/.")
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
    if (final / "am").is_dir():
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
        model = _unpack(archive, unpacked, source.folder)
        shutil.move(str(model), str(final))
    return final


def installed(dest: Path) -> list[Path]:
    if not dest.is_dir():
        return []
    return sorted(p for p in dest.iterdir() if p.is_dir() and (p / "am").is_dir())
