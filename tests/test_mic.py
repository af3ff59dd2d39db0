"""Cutting a live stream into utterances, and the microphone's failures."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.fixtures import COMMITTED_VOICE, clean_path, stream_of, utterances
from referee.games import matcher_for
from referee.speech.audio import AHEAD, OVER_TAIL, RATE, SPEECH_MARGIN, TAIL, Audio, load_wav
from referee.speech.hearing.mic import MicrophoneError, input_device
from referee.speech.hearing.segmenter import MAX_UTTERANCE, Segmenter, segment
from referee.speech.hearing.sphinx_vosk import PocketSphinxRecognizer
from referee.speech.listen import hear_audio
from referee.speech.understanding.meaning import Intent

ROOT = Path(__file__).resolve().parent.parent


def chunks(data: bytes, size: int = 3200) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.slow
def test_a_stream_is_cut_into_its_utterances_which_are_understood():
    cases = utterances()[:5]
    data, starts = stream_of(cases)
    found = segment(chunks(data))
    assert len(found) == len(cases)
    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = PocketSphinxRecognizer(matcher.phrases)
    for utterance, case, start in zip(found, cases, starts, strict=True):
        assert abs(utterance.start - start) < 0.5
        assert utterance.end > utterance.start
        heard, _ = hear_audio(recognizer, matcher, utterance.audio, "Ann")
        assert heard.intent == case.intent


@pytest.mark.parametrize("end_silence", [0.2, 0.4, 0.5])
def test_an_utterance_ends_after_the_end_silence(end_silence):
    data, _ = stream_of(utterances()[:1], gap=1.0)
    segmenter = Segmenter(end_silence)
    position, ended_at = 0, None
    for chunk in chunks(data, 320):
        position += len(chunk)
        if list(segmenter.feed(chunk)):
            ended_at = position / 2 / RATE
            break
    assert ended_at is not None
    speech_end = 1.0 + load_wav(clean_path(COMMITTED_VOICE, utterances()[0])).seconds
    # Piper's audio has a little silence of its own at the end.
    assert ended_at - speech_end <= end_silence + 0.15


def test_speech_still_going_at_the_end_of_the_stream_is_kept():
    data, _ = stream_of(utterances()[:1], gap=0.5)
    cut = data[: len(data) - int(0.5 * RATE) * 2 - 3200]  # stop while speaking
    assert len(segment(chunks(cut))) == 1


def test_silence_and_steady_noise_are_no_utterances():
    rng = np.random.default_rng(3)
    quiet = (rng.standard_normal(3 * RATE) * 30).astype("<i2").tobytes()
    assert segment(chunks(quiet)) == []


@pytest.mark.slow
def test_endless_chatter_is_cut_into_utterances_of_at_most_the_maximum():
    """Babble keeps the voice detector in speech; the segmenter cuts it anyway."""
    from harness.fixtures import babble_bed

    bed = babble_bed()[: 20 * RATE]
    data = (bed / np.max(np.abs(bed)) * 8000).astype("<i2").tobytes()
    segmenter = Segmenter(max_seconds=5.0)
    found = [u for c in chunks(data) for u in segmenter.feed(c)]
    assert len(found) >= 3
    assert all(u.audio.seconds <= 5.01 for u in found)
    assert all(b.start >= a.end - 0.01 for a, b in itertools.pairwise(found))


@pytest.mark.parametrize("room", ["babble20", "babble30-far"])
def test_commands_over_background_talk_end_soon_after_their_speech(room):
    """Talk 20 or 30 dB below the players (six other talkers) keeps the
    endpointer in speech all the time: each command still ends whole about
    half a second after its speech, not at the cut, and the talk between
    commands is no utterance of its own. In ``babble30-far`` every other
    command is 16 dB quieter (a player across the table): no background."""
    from benchmarks.vad import build_stream, score, segmenter_spans

    stream, truth = build_stream(room, [COMMITTED_VOICE], 8)
    result = score(list(segmenter_spans(stream)), truth)
    assert (result["found"], result["utterances"], result["stuck"]) == (8, 8, 0)
    assert result["late_p50"] < 0.7


def test_nobody_is_talking_in_the_background_between_commands():
    """Between commands said over background talk the table is free for the
    referee's countdown; during a command it is not."""
    from benchmarks.vad import build_stream

    stream, truth = build_stream("babble20", [COMMITTED_VOICE], 4)
    data = (np.clip(stream, -1, 1) * 32767).astype("<i2").tobytes()
    segmenter = Segmenter()
    talking: list[tuple[float, bool]] = []
    for chunk in chunks(data, 320):
        list(segmenter.feed(chunk))
        talking.append((segmenter.now, segmenter.in_speech))

    def at(t: float) -> bool:
        return next(speaking for now, speaking in talking if now >= t)

    for command, following in itertools.pairwise(truth):
        assert at((command.start + command.end) / 2)
        assert not at(command.end + 1.0)
        assert not at(following.start - 0.3)


def test_louder_background_talk_never_splits_a_command():
    """Talk within 15 dB of the speech is left to the endpointer and the cut:
    the background rule ends no command in the middle."""
    from benchmarks.vad import build_stream, segmenter_spans

    stream, truth = build_stream("babble10", [COMMITTED_VOICE], 8)
    spans = list(segmenter_spans(stream))
    ended_inside = [s for s in spans for c in truth if c.start < s.end < c.end]
    assert all(s.end - s.start >= MAX_UTTERANCE - 0.05 for s in ended_inside)


def test_end_silence_must_be_sensible():
    with pytest.raises(ValueError, match="end_silence"):
        Segmenter(5.0)


def test_no_microphone_is_a_clear_message():
    """This machine has no sound card; a named device that does not exist fails too."""
    import sounddevice

    if not any(d["max_input_channels"] > 0 for d in sounddevice.query_devices()):
        with pytest.raises(MicrophoneError, match="No microphone found"):
            input_device(None)
    with pytest.raises(MicrophoneError, match="There is no input device 'no such mic'"):
        input_device("no such mic")


def test_hear_mic_without_a_device_exits_cleanly():
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hear", "--players", "Ann", "Bob", "--mic",
         "--device", "no such mic"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert result.returncode == 2
    assert "There is no input device" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("device", ["99", "no such mic"])
def test_play_with_a_device_that_does_not_exist_is_refused_before_anything_starts(
        device, tmp_path):
    """``--device 99`` used to fall back to typed input; the table named a
    microphone, so the game does not start without it (issue #36)."""
    log = tmp_path / "game.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "referee", "play", "race65", "--device", device,
         "--voice", "none", "--log", str(log)],
        input="flip my seven\n", capture_output=True, text=True, cwd=ROOT, timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert f"There is no input device {device if device.isdigit() else repr(device)}" \
        in result.stderr
    assert "Falling back to typed input" not in result.stderr
    assert "7 down" not in result.stdout
    assert not log.exists()


@pytest.mark.parametrize("tail", [SPEECH_MARGIN, TAIL, AHEAD])
def test_a_pause_gives_the_utterance_so_far_which_the_end_then_confirms(tail):
    """Decoding ahead: what is reported at the pause is the start of the utterance,
    reported as soon as ``tail`` of quiet follows its last loud frame, and it
    prepares to exactly what the whole utterance prepares to, for each
    recogniser's preparation (PocketSphinx: cut to the speech, with
    SPEECH_MARGIN; Whisper: only the quiet after TAIL dropped, and at AHEAD
    the TAIL's quiet still to come filled in: the whole is as long, and the
    same as far as the stream had come)."""
    from referee.speech.audio import (
        filled_tail,
        frame_energies,
        speech_bounds,
        speech_region,
        trailing_cut,
    )
    from referee.speech.hearing.segmenter import FRAME
    from referee.speech.listen import _holds

    cases = utterances()[:6]
    data, _ = stream_of(cases)
    pauses: list[Audio] = []
    segmenter = Segmenter(on_pause=pauses.append, tail=tail)
    found = []
    for chunk in chunks(data, 320):
        for utterance in segmenter.feed(chunk):
            found.append((utterance, list(pauses)))
            pauses.clear()
    assert len(found) == len(cases)
    preparations = [lambda a: trailing_cut(a, tail)]
    if tail >= SPEECH_MARGIN:
        preparations.append(speech_region)
    for utterance, paused in found:
        assert paused, "every utterance pauses before it ends"
        whole = utterance.audio.samples
        for so_far in paused:
            assert np.array_equal(so_far.samples, whole[: len(so_far.samples)])
        last = paused[-1].samples
        bounds = speech_bounds(frame_energies(last, FRAME), FRAME, len(last), margin=0)
        assert bounds is not None
        quiet, wait = len(last) - bounds[1], int(tail * RATE) + FRAME
        assert wait <= quiet < wait + FRAME + RATE // 100  # (a frame, a block) no later
        for prepare in preparations:
            assert np.array_equal(prepare(paused[-1]).samples,
                                  prepare(utterance.audio).samples)
        filled, came = filled_tail(paused[-1], TAIL)
        assert came == len(last) or tail >= TAIL
        prepared = trailing_cut(utterance.audio, TAIL)
        assert len(filled.samples) == len(prepared.samples)
        assert _holds(filled, came, prepared)
        # A sound as loud as speech after the pause moves the end: no hold.
        louder = prepared.samples.copy()
        louder[came:] = prepared.samples.max()
        assert not _holds(filled, came, Audio(louder)) or came == len(louder)


def test_whisper_hears_the_tail_it_is_decoded_ahead_with():
    """Whisper's preparation keeps TAIL of quiet and decodes ahead after AHEAD
    (the rest filled in), and a listener with it asks the microphone's
    segmenter to decode ahead after that much; while the referee speaks,
    after OVER_TAIL, the whole tail come."""
    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.whisper_recognizer import WhisperRecognizer
    from referee.speech.listen import Listener

    assert AHEAD < TAIL <= SPEECH_MARGIN == OVER_TAIL
    assert (WhisperRecognizer.tail, WhisperRecognizer.ahead) == (TAIL, AHEAD)
    assert PocketSphinxRecognizer.tail == PocketSphinxRecognizer.ahead == SPEECH_MARGIN
    recognizer = PocketSphinxRecognizer(matcher_for("race65", ["Ann", "Bob"]).phrases)
    recognizer.ahead = AHEAD  # (the instance only: as Whisper's)
    microphone = Microphone()
    microphone.listen_with(Listener(recognizer))
    microphone.reset()
    assert microphone.segmenter._tail == int(AHEAD * RATE)
    assert microphone.segmenter._over_tail == int(OVER_TAIL * RATE)
    with pytest.raises(ValueError, match="tail"):
        Segmenter(tail=-0.1)


@pytest.mark.slow
def test_speech_that_goes_on_after_a_pause_is_decoded_whole():
    """A pause inside an utterance (shorter than the end silence): the guess made
    at the pause does not hold, and the whole utterance is decoded."""
    from referee.speech.listen import Listener

    flip, down = (load_wav(clean_path(COMMITTED_VOICE, c)).samples for c in utterances()[:2])
    gap = np.zeros(int(0.2 * RATE), dtype=np.int16)  # shorter than the end silence
    quiet = np.zeros(RATE, dtype=np.int16)
    data = np.concatenate([quiet, flip, gap, down, quiet]).astype("<i2").tobytes()
    recognizer = PocketSphinxRecognizer(matcher_for("race65", ["Ann", "Bob"]).phrases)
    listener = Listener(recognizer)
    segmenter = Segmenter(0.5, on_pause=listener.pause)
    found = [u for chunk in chunks(data, 320) for u in segmenter.feed(chunk)]
    assert len(found) == 1
    assert listener.guessed >= 2  # one at the gap, one at the end
    transcript = listener.transcript(found[0].audio)
    assert listener.kept == 1  # the guess at the end, not the one at the gap
    assert transcript.text == recognizer.decode(recognizer.prepare(found[0].audio)).text
    # Without a fresh guess the utterance is decoded again, to the same words.
    assert listener.transcript(found[0].audio).text == transcript.text
    assert listener.kept == 1


class _StandInStream:
    """Stands in for a sound card's input stream (none here): always running."""

    active = True


def test_the_microphone_hands_over_an_utterance_as_soon_as_it_ends():
    """read() returns when an utterance has ended, not when its wait is over:
    the sound after it is still waiting to be read."""
    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK

    data, _ = stream_of(utterances()[:1], gap=1.0)
    microphone = Microphone()
    microphone.reset()
    microphone._stream = _StandInStream()
    for chunk in chunks(data, BLOCK * 2):
        microphone._blocks.put((chunk, 0.0))
    found = microphone.read(timeout=30.0)
    assert len(found) == 1
    assert 0 < microphone._blocks.qsize() < RATE / BLOCK  # the rest of the gap
    assert microphone.arrival(found[0].end) == 0.0
    assert microphone.read(timeout=0.0) == []


def test_an_utterance_read_late_is_placed_when_it_was_said():
    """Blocks that waited in the queue while a decode ran (here 3 s): the
    utterance is dated by when its samples arrived, in bursts, not by how much
    has been read since it ended."""
    import time

    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK

    data, _ = stream_of(utterances()[:1], gap=1.0)
    microphone = Microphone()
    microphone.reset()
    microphone._stream = _StandInStream()
    blocks = chunks(data, BLOCK * 2)
    said_at = time.monotonic() - 3.0 - len(blocks) * BLOCK / RATE  # the stream's start
    for i, chunk in enumerate(blocks):
        burst = (i // 8 + 1) * 8  # eight blocks at a time, when the last was captured
        microphone._blocks.put((chunk, said_at + burst * BLOCK / RATE + 0.01))
    found = microphone.read(timeout=30.0)
    assert len(found) == 1
    ended = said_at + found[0].end  # when the last word's end was captured
    assert abs((time.monotonic() - microphone.since(found[0].end)) - ended) < 0.05
    # How much was read after the end would have put it 3 s later.
    assert microphone.position - found[0].end < 1.0


def test_samples_lost_on_the_way_do_not_misplace_what_follows():
    """1.5 s of samples lost (an overflow on a busy machine): the same stream
    then arrives 1.5 s later for its sample count, and what follows is dated
    by the blocks since, not by those before the loss."""
    import time

    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK

    data, _ = stream_of(utterances()[:1], gap=3.0)
    microphone = Microphone()
    microphone.reset()
    microphone._stream = _StandInStream()
    blocks = chunks(data, BLOCK * 2)
    half = len(blocks) // 4  # the loss: within the first second of silence
    now = time.monotonic()
    started = now - 1.5 - len(blocks) * BLOCK / RATE
    for i, chunk in enumerate(blocks):
        lost = 1.5 if i >= half else 0.0
        microphone._blocks.put((chunk, started + lost + (i + 1) * BLOCK / RATE))
    found = microphone.read(timeout=30.0)
    assert len(found) == 1
    ended = started + 1.5 + found[0].end
    # Two wall-clock reads bracket since()'s own, so a busy machine pausing
    # this thread between them cannot fail the test.
    before = time.monotonic()
    since = microphone.since(found[0].end)
    after = time.monotonic()
    assert before - since - 0.05 < ended < after - since + 0.05


def _joined(*parts: object) -> bytes:
    """Committed recordings (by text) and silences (by seconds) as one stream."""
    by_text = {c.text: c for c in utterances()}
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(load_wav(clean_path(COMMITTED_VOICE, by_text[part])).samples)
        else:
            pieces.append(np.zeros(int(float(part) * RATE), dtype=np.int16))  # type: ignore[arg-type]
    return np.concatenate(pieces).astype("<i2").tobytes()


def _listen(data: bytes, judged: bool) -> tuple[list[tuple[float, str]], PocketSphinxRecognizer]:
    """(when each utterance was handed over, its words) with or without judging words."""
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = PocketSphinxRecognizer(matcher.phrases)
    listener = Listener(recognizer, matcher)
    segmenter = Segmenter(on_pause=listener.pause, judge=listener.judge if judged else None)
    found = []
    for i, chunk in enumerate(chunks(data, 320)):
        for utterance in segmenter.feed(chunk):
            found.append(((i + 1) * 160 / RATE, listener.transcript(utterance.audio).text))
    found += [(len(data) / 2 / RATE, listener.transcript(u.audio).text) for u in segmenter.close()]
    return found, recognizer


@pytest.mark.slow
def test_a_whole_command_is_answered_before_the_detector_hears_its_end():
    data = _joined(0.5, "what's my score", 1.0)
    plain, _ = _listen(data, judged=False)
    judged, _ = _listen(data, judged=True)
    assert [t for _, t in judged] == [t for _, t in plain] == ["what's my score"]
    assert judged[0][0] < plain[0][0] - 0.1  # handed over >100 ms sooner, same words


@pytest.mark.slow
def test_words_that_are_no_command_yet_are_waited_for():
    """Table talk, a pause the detector takes for the end, then a command: judged,
    the pause is waited out and the whole is one utterance (the matcher decides)."""
    data = _joined(0.5, "let me think", 0.3, "flip my seven", 1.0)
    plain, _ = _listen(data, judged=False)
    judged, _ = _listen(data, judged=True)
    assert len(plain) == 2
    assert len(judged) == 1


def test_what_follows_a_command_answered_early_is_an_utterance_of_its_own():
    # Only the recordings' own silence between them: the endpointer never hears
    # an end in between, the words do.
    data = _joined(0.5, "what's my score", "flip my seven", 1.0)
    judged, _ = _listen(data, judged=True)
    # By meaning: decoded ahead, PocketSphinx writes the second "put my seven"
    # since "put my six down" joined the phrase file (the same flip, matched
    # loosely, so the referee asks before playing it).
    matcher = matcher_for("race65", ["Ann", "Bob"])
    assert [matcher.match(t, "Ann").intent for _, t in judged] == [
        Intent.of("query", what="score", player="Ann"),
        Intent.of("flip", owner="Ann", tile=7, direction=None)]


@pytest.mark.parametrize(("text", "verdict"), [
    ("what's my score", "complete"),  # nothing can follow
    ("flip my seven", "extendable"),  # ... "up" would change it
    ("let me think", "incomplete"),  # no command (yet)
])
def test_the_listener_judges_the_words_decoded_ahead(text, verdict):
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    assert listener.judge() is None  # nothing decoded ahead yet
    listener.pause(load_wav(clean_path(COMMITTED_VOICE, {c.text: c for c in utterances()}[text])))
    assert listener.judge() == verdict


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_speech_is_lost_whatever_the_pauses(seed):
    """Random commands and table talk with random gaps (50 ms to 1 s), judged by
    their words: every loud 20 ms frame of the stream is in some utterance."""
    from referee.speech.audio import frame_energies

    rng = np.random.default_rng(seed)
    cases = utterances()
    parts: list[object] = [0.5]
    for _ in range(6):
        parts += [cases[int(rng.integers(len(cases)))].text, float(rng.uniform(0.05, 1.0))]
    data = _joined(*parts)
    matcher = matcher_for("race65", ["Ann", "Bob"])
    from referee.speech.listen import Listener

    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    segmenter = Segmenter(on_pause=listener.pause, judge=listener.judge)
    found = [u for chunk in chunks(data, 320) for u in segmenter.feed(chunk)]
    found += list(segmenter.close())
    samples = np.frombuffer(data, dtype="<i2")
    energy = frame_energies(samples, RATE // 50)
    loud = np.nonzero(energy >= energy.max() - 20)[0] * 0.02
    spans = [(u.audio_start, u.audio_start + u.audio.seconds) for u in found]
    lost = [t for t in loud if not any(a - 0.02 <= t <= b for a, b in spans)]
    assert not lost, f"speech at {lost[:5]} s is in no utterance"



def test_stop_over_the_referee_is_looked_for_sooner():
    """While the referee speaks, the start of an utterance is looked at after
    0.05 s of quiet instead of 0.15 s: a "stop" is handed over (and cuts the
    voice) sooner, with the same words; when the referee is silent, nothing
    changes."""
    from referee.speech.hearing.segmenter import URGENT
    from referee.speech.listen import Listener

    data = _joined(0.5, "stop", 1.0)
    matcher = matcher_for("race65", ["Ann", "Bob"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)

    def judge() -> str | None:
        verdict = listener.judge()
        return URGENT if listener.guessed_kind == "stop" else verdict

    def handed_over(speaking: bool) -> list[tuple[float, str]]:
        segmenter = Segmenter(on_pause=listener.pause, judge=judge, hurry=lambda: speaking)
        found = []
        for i, chunk in enumerate(chunks(data, 320)):
            for utterance in segmenter.feed(chunk):
                found.append(((i + 1) * 160 / RATE, listener.transcript(utterance.audio).text))
        return found

    quick, usual = handed_over(True), handed_over(False)
    assert [t for _, t in quick] == [t for _, t in usual] == ["stop"]
    assert quick[0][0] <= usual[0][0] - 0.06


# --- giving up a decode ahead when the speaker goes on --------------------------------


@pytest.mark.slow
def test_whisper_gives_up_a_decode_ahead_midway_and_otherwise_decodes_it_whole():
    """The real model on a real recording: a guess asked to give up after a few
    steps returns nothing, having stopped there; one never asked to is the
    very transcript of a whole decode."""
    from referee.speech.hearing.recognizers import make_recognizer

    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = make_recognizer(matcher.phrases, "whisper")
    audio = recognizer.prepare(load_wav(clean_path(COMMITTED_VOICE, utterances()[0])))
    asked = []

    def after(n: int):
        def give_up() -> bool:
            asked.append(n)
            return len(asked) > n
        return give_up

    whole = recognizer.decode(audio)
    kept = recognizer.guess(audio, after(1000))
    assert kept is not None
    assert (kept.text, kept.confidence, kept.nbest) == (whole.text, whole.confidence, whole.nbest)
    steps = len(asked)
    assert steps >= 4  # before and after the encoder, then each step of the decoder
    asked.clear()
    assert recognizer.guess(audio, after(2)) is None
    assert len(asked) == 3  # it stopped at the first yes
    assert recognizer.decode(audio).text == whole.text  # and nothing of it lingers
    # Over the referee's voice it keeps the longer tail.
    raw = load_wav(clean_path(COMMITTED_VOICE, utterances()[0]))
    short, long = recognizer.prepare(raw), recognizer.prepare(raw, OVER_TAIL)
    assert len(long.samples) - len(short.samples) == int(OVER_TAIL * RATE) - int(TAIL * RATE)
    assert np.array_equal(long.samples[: len(short.samples)], short.samples)


def test_a_guess_given_up_is_no_guess_and_the_utterance_is_decoded_whole():
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    recognizer = PocketSphinxRecognizer(matcher.phrases)
    listener = Listener(recognizer, matcher)
    audio = load_wav(clean_path(COMMITTED_VOICE, {c.text: c for c in utterances()}[
        "what's my score"]))
    listener.pause(audio)
    assert listener.judge() == "complete"
    longer = Audio(np.concatenate([audio.samples, audio.samples]))
    listener.pause(longer, give_up=lambda: True)  # a later pause, and the speaker went on
    assert (listener.guessed, listener.given_up) == (1, 1)
    assert listener.judge() == "went on"  # the earlier guess is gone: they went on
    transcript = listener.transcript(audio)
    assert listener.kept == 0
    assert transcript.text == "what's my score"


def _microphone_listening(parts: list[bytes], speaking: bool = False):
    """A microphone with a PocketSphinx listener decoding ahead, whose blocks
    arrive in ``parts``: each part has all arrived before the next is read,
    so what follows a pause within a part is waiting while its decode runs."""
    from referee.speech.hearing.mic import Microphone
    from referee.speech.hearing.segmenter import BLOCK
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    microphone = Microphone(end_silence=0.5)
    microphone.listen_with(listener, hurry=lambda: speaking)
    microphone.reset()
    microphone._stream = _StandInStream()
    found = []
    for part in parts:
        for chunk in chunks(part, BLOCK * 2):
            microphone._blocks.put((chunk, 0.0))
        while not microphone._blocks.empty():
            found += microphone.read(timeout=0.0)
    return found, listener


@pytest.mark.slow
def test_the_microphone_gives_up_a_decode_ahead_when_the_speaker_goes_on():
    """Two commands and a gap shorter than the end silence: the pause at the gap
    is decoded ahead while the second one's start is already waiting, so that
    decode is given up; the one at the end, of the whole, is kept."""
    data = _joined(0.5, "flip my seven", 0.2, "flip seven", 1.0)
    split = len(_joined(0.5, "flip my seven", 0.2)) + 2 * int(0.2 * RATE)
    parts = [data[:split], data[split:]]
    found, listener = _microphone_listening(parts)
    assert len(found) == 1
    assert listener.given_up >= 1
    assert found[0].end > split / 2 / RATE  # the second command is in it
    transcript = listener.transcript(found[0].audio)
    assert listener.kept == 1  # the decode at the end was not given up
    assert transcript.text.split()[:3] == ["put", "my", "seven"]  # (PocketSphinx's words)
    # While the referee speaks, its voice may be in what is waiting: no giving up.
    found, listener = _microphone_listening(parts, speaking=True)
    assert listener.given_up == 0
    assert listener.guessed >= 2


@pytest.mark.slow
def test_a_phone_gives_up_a_decode_ahead_when_its_player_goes_on():
    """A seat page's sound, all arrived before the loop cuts it: at the pause
    inside, the second command is already waiting, so that decode is given
    up, as the table microphone's is; the pause at the end is kept. While
    the referee speaks nothing is given up."""
    from referee.screen.phones import PhoneSeats
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    data = _joined(0.5, "flip my seven", 0.25, "flip seven", 1.0)

    def heard(speaking: bool) -> tuple[int, Listener]:
        listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
        now = [0.0]  # the frames arrive in real time, as a phone sends them
        phones = PhoneSeats(["Ann", "Bob"], end_silence=0.5, clock=lambda: now[0])
        ann = phones.open("Ann", lambda code, reason: None)
        for i in range(0, len(data), 1280):  # 40 ms frames, as the page sends
            now[0] += 0.04
            assert phones.take("Ann", ann, data[i : i + 1280]) is None
        found = phones.hear(lambda player: listener, hurry=lambda: speaking)
        phones.close()
        return len(found), listener

    count, listener = heard(speaking=False)
    assert count == 1
    assert listener.given_up >= 1
    assert listener.guessed >= 1  # the end's
    count, listener = heard(speaking=True)
    assert listener.given_up == 0


def test_speech_in_what_is_waiting_is_judged_against_the_utterance():
    """A frame as loud as the utterance's speech is speech; room noise is not."""
    segmenter = Segmenter()
    assert not segmenter.speech_in(np.full(640, 3000, dtype=np.int16))  # no utterance yet
    data = _joined(0.5, "what's my score")
    for chunk in chunks(data, 320):
        list(segmenter.feed(chunk))
    speech = np.frombuffer(data, dtype="<i2")[-RATE // 2 :]
    rng = np.random.default_rng(0)
    assert segmenter.speech_in(speech)
    assert not segmenter.speech_in(rng.normal(0, 30, RATE // 2).astype(np.int16))
    assert not segmenter.speech_in(np.zeros(100, dtype=np.int16))  # not a whole frame


def test_the_same_samples_are_not_decoded_ahead_twice():
    """A quick look and then the pause can prepare to the very same samples
    (Whisper's tail is about the quick look's quiet): one decode stands for both."""
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    audio = load_wav(clean_path(COMMITTED_VOICE, {c.text: c for c in utterances()}[
        "what's my score"]))
    listener.pause(audio)
    listener.pause(Audio(audio.samples.copy()))
    assert listener.guessed == 1
    assert listener.judge() == "complete"
    longer = Audio(np.concatenate([audio.samples, audio.samples]))
    listener.pause(longer)
    assert listener.guessed == 2


def test_over_the_referee_a_pause_waits_for_the_longer_tail():
    """While the referee speaks (``hurry``), the pause that decodes ahead comes
    after OVER_TAIL of quiet, not Whisper's TAIL, and prepares as the end does."""
    from referee.speech.audio import frame_energies, speech_bounds, trailing_cut
    from referee.speech.hearing.segmenter import FRAME

    data, _ = stream_of(utterances()[:3])
    pauses: list[Audio] = []
    segmenter = Segmenter(on_pause=pauses.append, tail=TAIL, hurry=lambda: True)
    found = []
    for chunk in chunks(data, 320):
        for utterance in segmenter.feed(chunk):
            found.append((utterance, list(pauses)))
            pauses.clear()
    assert len(found) == 3
    for utterance, paused in found:
        last = paused[-1].samples
        bounds = speech_bounds(frame_energies(last, FRAME), FRAME, len(last), margin=0)
        assert bounds is not None
        assert len(last) - bounds[1] >= int(OVER_TAIL * RATE) + FRAME
        assert np.array_equal(trailing_cut(paused[-1], OVER_TAIL).samples,
                              trailing_cut(utterance.audio, OVER_TAIL).samples)


def _utterances(data: bytes, verdict: str | None) -> list[tuple[float, float]]:
    """(start, end) of each utterance the segmenter cuts ``data`` into when
    every pause's words are judged ``verdict`` (the listener's judgement)."""
    segmenter = Segmenter(on_pause=lambda audio: None, judge=lambda: verdict)
    found = [(u.start, u.end) for chunk in chunks(data, 320) for u in segmenter.feed(chunk)]
    return found + [(u.start, u.end) for u in segmenter.close()]


@pytest.mark.parametrize(("verdict", "pause", "parts"), [
    ("went on", 0.4, 1),  # the decode ahead was given up: they went on
    ("read-out", 0.5, 1),  # "I lay down my phase ... three fives"
    ("unexpected", 0.4, 1),  # "shut four ... " on a roll of nine: refused alone
    ("extendable", 0.4, 2),  # "flip my seven ... " the end silence ends it
    (None, 0.4, 2),  # nothing decoded ahead: the endpointer decides
])
def test_a_pause_is_held_where_the_words_say_more_is_coming(verdict, pause, parts):
    """A pause longer than the end silence ends the utterance, unless the words
    decoded ahead say more is coming: the speaker went on while they were
    decoded, or a read-out of cards may go on."""
    data = _joined(0.5, "let me think", pause, "flip my seven", 1.0)
    assert len(_utterances(data, verdict)) == parts


def test_a_decode_ahead_given_up_is_judged_as_the_speaker_going_on():
    from referee.speech.hearing.segmenter import WENT_ON
    from referee.speech.listen import Listener

    matcher = matcher_for("race65", ["Ann", "Bob"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    audio = load_wav(clean_path(COMMITTED_VOICE, {c.text: c for c in utterances()}["let me think"]))
    listener.pause(audio, give_up=lambda: True)
    assert listener.judge() == WENT_ON
    listener.pause(audio)
    assert listener.judge() == "incomplete"


@pytest.mark.slow
def test_a_phase10_read_out_is_judged_as_one_that_may_go_on():
    from referee.speech.hearing.interface import Transcript
    from referee.speech.hearing.segmenter import READ_OUT
    from referee.speech.listen import Listener

    matcher = matcher_for("phase10-twist", ["Ann", "Bob", "Cy"])
    listener = Listener(PocketSphinxRecognizer(matcher.phrases), matcher)
    for said, verdict in (("i lay down my phase", READ_OUT),
                          ("i lay down my phase three fives", READ_OUT),
                          ("where am i", "complete")):
        listener._guess = (Audio(np.zeros(1600, dtype=np.int16)), 1600, Transcript(said, 1.0))
        assert listener.judge() == verdict
