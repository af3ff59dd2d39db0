"""``referee hear``: what the referee understands of a typed line, of WAV files
(a long recording cut into utterances as the microphone would), or of the
microphone, one line (or JSON object) each.

Speech is heard as at a table: each utterance goes to the referee's brain at
the start of a fresh game, while it waits for the first player's move
(``--turn NAME``: for that player's), from the table's microphone (its
player is whoever the game waits for) or, with ``--speaker NAME``, from that
player's own seat. The brain's decision is printed with it ("act", "ask",
"repeat", "none": :mod:`referee.speech.hearing.decision`). Every utterance
meets the same fresh game: what one of them would play is not played for
the next. With ``--phrases`` (no game) nothing is waited for.
"""

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
from referee.games.base import COMMAND_NAME_SCORE, GameSpec, check_players
from referee.options import MOST_PLAYERS, make_spec
from referee.speech.hearing.interface import Transcript
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.phrase_files import load_phrases
from referee.wording import SURE_SCORE, NoSuchPlayer, player_named

if TYPE_CHECKING:
    from referee.listening import Listening
    from referee.protocol import Brain
    from referee.speech.listen import Listener

#: The decisions as a line to read says them.
DECIDED = {"act": "acted on", "ask": "asked about", "repeat": "asked to say it again",
           "none": "not acted on"}
#: Files longer than this (seconds) are recordings of a game: ``referee hear``
#: cuts them into utterances instead of decoding them as one.
LONG_FILE = 30.0


def cmd_hear(args: argparse.Namespace) -> int:
    spec: GameSpec | None = None
    # "--players Ann Bob move.wav": the files after the names are files, not names
    # (argparse gives them all to --players).
    recordings = [name for name in args.players if _a_file(name)]
    if recordings and args.text is None and not args.mic:
        args.players = [name for name in args.players if not _a_file(name)]
        args.files = [*recordings, *args.files]
    if args.text is None and not args.mic and not args.files:
        raise SetupError("Say what to hear: --text WORDS, WAV files, or --mic.")
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
        if args.turn is not None:
            args.first = args.turn  # (the game's own option: who starts)
        spec = make_spec(args, args.game)  # checks the names and the options
        # The players as named, not as the game would seat them (Shut the Box
        # rolls for the order): who speaks by default, who "player one" is and
        # what Whisper is told ("Ann and Bob play Shut the Box.") are the same
        # every run.
        players = check_players(args.players, spec.min_players, spec.max_players)
        phrases = load_phrases(spec.phrase_file, players)
    try:
        speaker = player_named(args.speaker or players[0], players)
    except NoSuchPlayer as error:
        raise SetupError(f"--speaker: {error}") from None
    matcher = IntentMatcher(phrases, players)
    show = _json_line if args.json else _readable
    if args.text is not None:
        show(matcher.match(args.text, speaker).to_json())
        return 0
    table = Situation(matcher, spec, speaker if args.speaker else None)
    if args.mic:
        return hear_microphone(args, table, show)
    return hear_files(args.files, table, args.engine, args.model, show)


class Situation:
    """Where ``referee hear`` hears: a fresh game's brain at the start, told
    each utterance from the table's microphone (``speaker`` None) or from a
    player's seat; without a game (a phrase file alone), the recogniser's own
    decision for the first player."""

    def __init__(self, matcher: IntentMatcher, spec: GameSpec | None,
                 speaker: str | None) -> None:
        self.matcher, self.spec, self.speaker = matcher, spec, speaker
        self._brain: Brain | None = None  # (asked what it expects: never changed)

    def listening(self, listener: Listener) -> Listening:
        """``listener`` judging pauses as in a game: a move this fresh game's
        brain does not expect of the speaker is waited out (:class:`Listening`)."""
        from referee.listening import Listening

        return Listening(listener, lambda: False, None if self.spec is None else self.expects)

    def expects(self, text: str) -> bool | None:
        """Whether the brain at the start of a fresh game expects these words
        said so far (:class:`~referee.protocol.SoFar`: a question that changes nothing)."""
        from referee.protocol import SoFar, expected

        if self.spec is None:
            return None
        if self._brain is None:
            self._brain = self._fresh_game(self.spec)
        return expected(self._brain, SoFar(1.0, text, self.speaker))

    def _fresh_game(self, spec: GameSpec) -> Brain:
        """A brain at the start of a fresh game of ``spec`` (the table's)."""
        from referee.protocol import Start
        from referee.session import Session

        brain = Session(spec, matcher=self.matcher)
        brain.step(Start(0.0))
        return brain

    def judge(self, transcript: Transcript, seconds: float) -> dict[str, Any]:
        """What the referee makes of one utterance: its intent (with score and
        message), the words it took, and its decision."""
        from referee.protocol import Judged, Speech
        from referee.speech.listen import understand

        if self.spec is None:
            who = self.speaker or self.matcher.players[0]
            heard = understand(self.matcher, transcript, who)
            decision = ("none" if not transcript.text else
                        "act" if heard.score >= SURE_SCORE else "ask")
            return {**heard.to_json(), "text": transcript.text, "decision": decision}
        brain = self._fresh_game(self.spec)
        said = brain.step(Speech(seconds + 0.3, 0.0, seconds, self.speaker, "mic", transcript))
        judged = next((o for o in said if isinstance(o, Judged)), None)
        if judged is None:  # (the step failed, and said so)
            return {"intent": {"kind": "none"}, "score": 0.0, "text": "", "decision": "none"}
        return {**judged.heard.to_json(), "text": judged.transcript,
                "decision": judged.decision}


def _json_line(heard: dict[str, Any]) -> None:
    print(json.dumps(heard), flush=True)


def _readable(heard: dict[str, Any]) -> None:
    """What was heard as a line to read: 'move.wav (1.2-2.5 s): "flip my
    seven": flip, owner Ann, tile 7 (score 0.98; 0.21 s to decode; heard by
    whisper)'."""
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
    if "decision" in heard:
        details.append(DECIDED.get(str(heard["decision"]), str(heard["decision"])))
    if "decode_s" in heard:
        details.append(f"{heard['decode_s']:.2f} s to decode")
    if "engine" in heard:
        details.append(f"heard by {heard['engine']}")
    said = f'"{heard["text"]}"' if heard.get("text") else "(nothing heard)"
    print(f"{where + ': ' if where else ''}{said}: {meaning} ({'; '.join(details)})", flush=True)


def hear_microphone(args: argparse.Namespace, table: Situation,
                    show: Callable[[dict[str, Any]], None] = _json_line) -> int:
    """Print the intent of each utterance heard live, until Ctrl-C."""
    from referee.speech.hearing.interface import RecognizerError
    from referee.speech.hearing.mic import (
        MicrophoneError,
        input_device,
        microphone_utterances,
        parse_device,
    )
    from referee.speech.hearing.recognizers import make_ears
    from referee.speech.listen import Listener

    device = parse_device(args.device)
    try:
        input_device(device)
        recognizer = make_ears(table.matcher.phrases, args.engine, args.model, _warn)
    except (MicrophoneError, RecognizerError) as error:
        raise SetupError(str(error)) from error
    print(f"Listening ({recognizer.name}); Ctrl-C stops.", file=sys.stderr, flush=True)
    try:
        # (decodes ahead and judges pauses, as in a game)
        listener = Listener(recognizer, table.matcher)
        listening = table.listening(listener)
        for utterance in microphone_utterances(device, args.end_silence, listening):
            transcript = listener.transcript(utterance.audio)
            show({**table.judge(transcript, utterance.audio.seconds), "engine": recognizer.name,
                  "audio_s": round(utterance.audio.seconds, 3),
                  "decode_s": round(transcript.decode_s, 4)})
    except MicrophoneError as error:  # the stream could not open, or died
        raise SetupError(str(error)) from error
    return 0


def _warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def hear_files(
    files: Sequence[str], table: Situation,
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
    from referee.speech.hearing.recognizers import make_ears
    from referee.speech.listen import Listener

    try:
        recognizer = make_ears(table.matcher.phrases, engine, model, _warn)
    except RecognizerError as error:
        raise SetupError(str(error)) from error

    listener = Listener(recognizer, table.matcher)

    def decode(audio: Audio, name: str, **where: Any) -> None:
        if where:  # an utterance of a recording, cut with the words' help (as live)
            transcript = listener.transcript(audio)
        else:
            transcript = recognizer.decode(recognizer.prepare(audio))
        show({"file": name, **where, **table.judge(transcript, audio.seconds),
              "engine": recognizer.name, "audio_s": round(audio.seconds, 3),
              "decode_s": round(transcript.decode_s, 4)})

    failed = False
    for name in files:
        try:
            _decode_file(name, table.listening(listener), partial(decode, name=name),
                         recognizer.tail)
        except AudioError as error:
            print(f"referee: {error}", file=sys.stderr)
            if show is _json_line:
                show({"file": name, "error": str(error)})
            failed = True
    return 1 if failed else 0


def _decode_file(name: str, listener: Listening, decode: Callable[..., None],
                 tail: float) -> None:
    """One WAV file decoded whole, or, when longer than :data:`LONG_FILE`
    seconds, read a block at a time and cut into utterances, decoded ahead
    at a pause once ``tail`` of quiet has come (the recogniser's whole tail:
    nothing here gives a decode up when the speaker goes on, as the
    microphone does)."""
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
    segmenter = Segmenter(on_pause=listener.pause, judge=listener.judge, tail=tail)
    for block in itertools.chain([start], blocks):
        for utterance in segmenter.feed(block.to_bytes()):
            decode(utterance.audio, start=round(utterance.start, 2), end=round(utterance.end, 2))
    for utterance in segmenter.close():
        decode(utterance.audio, start=round(utterance.start, 2), end=round(utterance.end, 2))


def _a_file(word: str) -> bool:
    """Whether a word given among the players is a recording: a WAV file's name."""
    return word.lower().endswith(".wav") or Path(word).is_file()
