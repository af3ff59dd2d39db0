"""The fitting set of ``./run bench intalk --fit``: real words that are no
command, of speakers in no measurement set (the real-voice benchmark's, the
held-back ones), named in ``benchmarks/phrases/intalk-fit.txt``.

The speakers of ``../shared/real-voices/speech_commands_v0.01`` are read from
its own files; the test skips, visibly, where ``../shared`` is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.intalk import FIT_VOICES, FIT_WORDS, fit_words
from harness.fixtures import HELD_OUT_VOICES
from referee.games import GAMES, matcher_for
from training.real import held_back, measured_speakers, speaker_of, words_of

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
BENCHMARK = SHARED / "real-voices" / "speech_commands_v0.01"


def _names(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _measured_in(names: list[str], folder: Path) -> list[str]:
    """The names (as the v0.02 test set's ``_unknown_`` names them) whose
    speaker is in a measurement set or held back."""
    measured = measured_speakers(SHARED)
    speakers = {name: speaker_of(folder / "_unknown_" / name, folder) for name in names}
    return [name for name, who in speakers.items() if who in measured or held_back(who)]


@pytest.mark.skipif(not BENCHMARK.is_dir(),
                    reason="../shared/real-voices is not beside the project")
def test_no_speaker_of_a_measurement_set_is_fitted_on(tmp_path: Path) -> None:
    """Every recording fitted on is of a speaker in no measurement set, each
    speaker once; the check finds a real-voice benchmark speaker planted among
    them (as the v0.02 set names the same speaker's recordings)."""
    names = _names(FIT_WORDS.read_text())
    assert len(names) >= 30
    assert _measured_in(names, tmp_path) == []
    speakers = [speaker_of(tmp_path / "_unknown_" / name, tmp_path) for name in names]
    assert len(set(speakers)) == len(speakers)
    planted = sorted(BENCHMARK.rglob("*.wav"))[0]
    alias = f"{planted.parent.name}_{planted.name}"
    assert _measured_in([*names, alias], tmp_path) == [alias]


def test_the_fitting_set_is_talk_said_beside_tuning_voices(tmp_path: Path) -> None:
    """Each word fitted on is no command in any game (it is talk there); the
    commands beside it are said by voices that are not held out; a folder
    without the recordings is refused with its name."""
    names = _names(FIT_WORDS.read_text())
    for game in GAMES:
        matcher = matcher_for(game, ["Ann", "Bob"])
        for name in names:
            word = words_of(tmp_path / "_unknown_" / name)
            assert word is not None
            assert matcher.match(word, "Ann").intent.kind == "none", (game, word)
    assert not set(FIT_VOICES) & set(HELD_OUT_VOICES)
    with pytest.raises(SystemExit, match=r"not the v0\.02 test set"):
        fit_words(tmp_path)
