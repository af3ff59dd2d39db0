"""``referee hear``: what the referee understands of a typed line, of WAV files
(a long recording cut into utterances as the microphone would), or of the
microphone, one line (or JSON object) each."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.games import SetupError
from referee.games.base import COMMAND_NAME_SCORE, check_players
from referee.options import MOST_PLAYERS, make_spec
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.phrase_files import load_phrases

if TYPE_CHECKING:
    from referee.speech.listen import Listener

#: Files longer than this (seconds) are recordings of a game: ``referee hear``
#: cuts them into utterances instead of decoding them as one.
LONG_FILE = 30.0


def cmd_hear(args: argparse.Namespace) -> int:
    if args.phrases is not None:  # any phrase file, no game
        players = check_players(args.players, 1, MOST_PLAYERS)
        phrases = load_phrases(args.phrases, players)
        commands = IntentMatcher(load_phrases(args.phrases, ()), ())
        for name in players:
            heard = commands.match(name, name)
            if heard.kind != "none" and heard.score >= COMMAND_NAME_SCORE:
                raise SetupError(f"{name!r} is also a command of {args.phrases.name}; please "
                                 "choose another name.")
            word = phrases.said_word(name)
            if word is not None:
                raise SetupError(f"{name!r} is a word of {args.phrases.name} (\"{word}\"): a "
                                 "player called so would be heard in every sentence with it. "
                                 "Please choose another name.")
    else:
        spec = make_spec(args, args.game)  # checks the names and the options
        # The players as named, not as the game would seat them (Shut the Box
        # rolls for the order): who speaks by default, who "player one" is and
        # what Whisper is told ("Ann and Bob play Shut the Box.") are the same
        # every run.
        players = check_players(args.players, spec.min_players, spec.max_players)
        phrases = load_phrases(spec.phrase_file, players)
    speaker = args.speaker or players[0]
    match = [p for p in players if p.casefold() == speaker.casefold()]
    if not match:
        raise SetupError(f"The speaker {speaker} is not one of the players.")
    matcher = IntentMatcher(phrases, players)
    show = _json_line if args.json else _readable
    if args.text is not None:
        show(matcher.match(args.text, match[0]).to_json())
        return 0
    if args.mic:
        return hear_microphone(args, matcher, match[0], show)
    return hear_files(args.files, matcher, match[0], args.engine, args.model, show)


def _json_line(heard: dict[str, Any]) -> None:
    print(json.dumps(heard), flush=True)


def _readable(heard: dict[str, Any]) -> None:
    """What was heard as a line to read: 'move.wav (1.2-2.5 s): "flip my
    seven": flip, owner Ann, tile 7 (score 0.98; 0.21 s to decode)'."""
    where = heard.get("file", "")
    if "start" in heard:
        where += f" ({heard['start']:g}-{heard['end']:g} s)"
    if "error" in heard:
        print(f"{where}: {heard['error']}", flush=True)
        return
    intent = heard["intent"]
    slots = ", ".join(f"{k} {' and '.join(map(str, v)) if isinstance(v, list) else v}"
                      for k, v in intent.items() if k != "kind" and v is not None)
    meaning = intent["kind"] + (f", {slots}" if slots else "")
    if intent["kind"] == "none":
        meaning = "no command" + (f": {heard['message']}" if heard.get("message") else "")
    details = [f"score {heard['score']:.2f}"]
    if "decode_s" in heard:
        details.append(f"{heard['decode_s']:.2f} s to decode")
    said = f'"{heard["text"]}"' if heard.get("text") else "(nothing heard)"
    print(f"{where + ': ' if where else ''}{said}: {meaning} ({'; '.join(details)})", flush=True)


def hear_microphone(args: argparse.Namespace, matcher: IntentMatcher, speaker: str,
                    show: Callable[[dict[str, Any]], None] = _json_line) -> int:
    """Print the intent of each utterance heard live, until Ctrl-C."""
    from referee.speech.hearing.interface import RecognizerError
    from referee.speech.hearing.mic import (
        MicrophoneError,
        input_device,
        microphone_utterances,
        parse_device,
    )
    from referee.speech.hearing.recognizers import make_recognizer
    from referee.speech.listen import Listener, understand

    device = parse_device(args.device)
    try:
        input_device(device)
        recognizer = make_recognizer(matcher.phrases, args.engine, args.model)
    except (MicrophoneError, RecognizerError) as error:
        raise SetupError(str(error)) from error
    print(f"Listening ({recognizer.name}); Ctrl-C stops.", file=sys.stderr, flush=True)
    try:
        listener = Listener(recognizer, matcher)  # decodes ahead and judges pauses, as in a game
        for utterance in microphone_utterances(device, args.end_silence, listener):
            transcript = listener.transcript(utterance.audio)
            heard = understand(matcher, transcript, speaker)
            show({**heard.to_json(), "text": transcript.text, "engine": recognizer.name,
                  "audio_s": round(utterance.audio.seconds, 3),
                  "decode_s": round(transcript.decode_s, 4)})
    except MicrophoneError as error:  # the stream could not open, or died
        raise SetupError(str(error)) from error
    return 0


def hear_files(
    files: Sequence[str], matcher: IntentMatcher, speaker: str,
    engine: str | None, model: Path | str | None,
    show: Callable[[dict[str, Any]], None] = _json_line,
) -> int:
    """Decode each WAV file; a line (or JSON object) per file, or per utterance of a
    file longer than :data:`LONG_FILE` seconds (a recorded game: the file is
    read a block at a time and cut into utterances as the microphone would,
    decoding ahead at pauses: ``start`` and ``end`` in seconds). Exit 1 if any
    failed."""
    from referee.speech.audio import Audio, AudioError
    from referee.speech.hearing.interface import RecognizerError
    from referee.speech.hearing.recognizers import make_recognizer
    from referee.speech.listen import Listener, hear_audio, understand

    try:
        recognizer = make_recognizer(matcher.phrases, engine, model)
    except RecognizerError as error:
        raise SetupError(str(error)) from error

    listener = Listener(recognizer, matcher)

    def decode(audio: Audio, name: str, **where: Any) -> None:
        if where:  # an utterance of a recording, cut with the words' help (as live)
            transcript = listener.transcript(audio)
            heard = understand(matcher, transcript, speaker)
        else:
            heard, transcript = hear_audio(recognizer, matcher, audio, speaker)
        show({"file": name, **where, **heard.to_json(), "text": transcript.text,
              "engine": recognizer.name, "audio_s": round(audio.seconds, 3),
              "decode_s": round(transcript.decode_s, 4)})

    failed = False
    for name in files:
        try:
            _decode_file(name, listener, partial(decode, name=name))
        except AudioError as error:
            print(f"referee: {error}", file=sys.stderr)
            if show is _json_line:
                show({"file": name, "error": str(error)})
            failed = True
    return 1 if failed else 0


def _decode_file(name: str, listener: Listener, decode: Callable[..., None]) -> None:
    """One WAV file decoded whole, or, when longer than :data:`LONG_FILE`
    seconds, read a block at a time and cut into utterances."""
    import numpy as np

    from referee.speech.audio import Audio, stream_wav
    from referee.speech.hearing.segmenter import Segmenter

    blocks = stream_wav(name)
    head: list[Audio] = []
    for block in blocks:  # the first LONG_FILE seconds, or the whole file
        head.append(block)
        if sum(b.seconds for b in head) > LONG_FILE:
            break
    start = Audio(np.concatenate([b.samples for b in head]))
    if start.seconds <= LONG_FILE:
        decode(start)
        return
    segmenter = Segmenter(on_pause=listener.pause, judge=listener.judge, tail=listener.tail)
    for block in itertools.chain([start], blocks):
        for utterance in segmenter.feed(block.to_bytes()):
            decode(utterance.audio, start=round(utterance.start, 2), end=round(utterance.end, 2))
    for utterance in segmenter.close():
        decode(utterance.audio, start=round(utterance.start, 2), end=round(utterance.end, 2))

