"""The referee's voices, rendered for real, and where their sentences go."""

from __future__ import annotations

import numpy as np
import pytest

from referee.games import matcher_for
from referee.speech.audio import Audio, load_wav
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.listen import hear_audio
from referee.speech.speaking.tts import (
    EspeakVoice,
    PiperVoice,
    SilentVoice,
    VoiceError,
    WavDirOutput,
    make_voice,
)


@pytest.fixture(scope="module")
def ears():
    matcher = matcher_for("race65", ["Ann", "Bob"])
    return make_recognizer(matcher.phrases), matcher


@pytest.mark.slow
@pytest.mark.parametrize("voice", [EspeakVoice, PiperVoice])
def test_a_voice_says_what_it_is_given(voice, ears):
    """What the voice renders is speech the recogniser understands: the sentence
    of the grammar that fits it best means what was said. (Whether the referee
    would act on it is the calibration's business, measured by the benchmarks:
    eSpeak's rendering changes a little with what it rendered before in the
    process, and its robotic voice sits near the threshold.)"""
    recognizer, matcher = ears
    audio = voice().render("Bob, flip your four up.")
    assert 0.8 < audio.seconds < 4
    _, transcript = hear_audio(recognizer, matcher, audio, "Ann")
    best = matcher.match(transcript.nbest[0], "Ann").intent
    assert best.to_json() == {"kind": "flip", "owner": "Bob", "tile": 4, "direction": "up"}


@pytest.mark.slow
def test_rate_and_volume_change_the_rendering(tmp_path):
    """``--rate`` and ``--volume`` as a user gives them (eSpeak keeps one rate per
    process, so each rate is its own game here)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    seconds = {}
    games = {rate: subprocess.Popen(  # (the two games side by side: two cores)
        [sys.executable, "-m", "referee", "play", "race65", "--input", "text",
         "--voice", f"espeak,wav:{tmp_path / f'rate{rate}'}", "--rate", str(rate), "--no-log"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        text=True, cwd=root) for rate in (120, 300)}
    for rate, game in games.items():
        game.communicate("flip my seven\n", timeout=120)
        assert game.returncode == 0
        rows = [r.split("\t") for r in (tmp_path / f"rate{rate}" / "said.tsv").read_text()
                .splitlines()]
        seconds[rate] = next(float(r[2]) for r in rows if r[3].startswith("Ann, 7 down"))
    assert seconds[120] > 1.5 * seconds[300]
    # (two eSpeak renderings of one sentence differ by a few samples: compare peaks)
    text = "Ann, seven down. One more flip."
    loud = np.abs(EspeakVoice().render(text).samples.astype(float)).max()
    quiet = np.abs(EspeakVoice(volume=0.5).render(text).samples.astype(float)).max()
    assert loud > 5000
    assert 0.45 < quiet / loud < 0.55


@pytest.mark.parametrize(("name", "options", "message"), [
    ("robot", {}, "Unknown voice 'robot'"),
    ("espeak", {"rate": 20}, "out of range"),
    ("espeak", {"volume": 2.0}, "between 0 and 1"),
])
def test_bad_voices_are_refused_with_a_reason(name, options, message):
    with pytest.raises(VoiceError, match=message):
        make_voice(name, **options)


def test_the_silent_voice_says_nothing():
    assert SilentVoice().render("Five.").seconds == 0


def test_sentences_are_rendered_once():
    class Counting(SilentVoice):
        calls = 0

        def _render(self, text: str) -> Audio:
            Counting.calls += 1
            return Audio(np.ones(160, dtype=np.int16))

    voice = Counting()
    first = voice.render("Five.")
    assert voice.render("Five.") is first
    voice.render("Four.")
    assert Counting.calls == 2


def test_a_wav_folder_gets_one_file_per_sentence_and_a_cut_keeps_what_was_said(tmp_path):
    out = WavDirOutput(tmp_path / "said")
    voice = EspeakVoice()
    rules = voice.render("Race to 70. Each turn, flip exactly two different tiles.")
    five = voice.render("Five.")
    out.play(five, "Five.", 1.0)
    out.play(rules, "Race to 70...", 2.0)
    out.cut(3.0)
    files = sorted((tmp_path / "said").glob("*.wav"))
    assert [f.name for f in files] == ["0001.wav", "0002.wav"]
    assert load_wav(files[0]).seconds == pytest.approx(five.seconds, abs=0.01)
    assert load_wav(files[1]).seconds == pytest.approx(1.0, abs=0.01)
    rows = (tmp_path / "said" / "said.tsv").read_text().splitlines()
    assert rows[0].split("\t")[3] == "Five."
    assert rows[-1].endswith("(cut)")


def test_an_unwritable_wav_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(VoiceError, match="Cannot write the referee's speech"):
        WavDirOutput(blocker / "said")
