"""From what a recogniser heard to what the referee understands.

:func:`hear_audio` is the whole path for one utterance: denoise it when it is
noisy, cut it to its speech, decode it with the grammar, read the words with
the intent matcher and decide whether to believe them (:func:`understand`).

:class:`Listener` does the same for a live stream, and decodes *ahead*: when
the speech pauses (:class:`~referee.speech.hearing.segmenter.Segmenter` ``on_pause``), the
utterance so far is prepared and decoded while the voice detector is still
waiting out the end silence. When the utterance does end there, it prepares
to the very same samples and the transcript is ready; if somebody went on
talking, the guess is thrown away (from a live microphone, the decode stops
as soon as the speech resumes) and the whole utterance is decoded as usual.
Either way the recogniser decodes exactly what it would have without the
guess.

A player who goes on a moment after an utterance ended on a whole command
that more words could change said its rest ("flip my seven" ... "up"):
:meth:`Listener.whole` hears the two again as one, for the brain to take as
the whole of what it heard in part (:mod:`referee.brain.parts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from referee.speech.audio import OVER_TAIL, Audio, frame_energies, speech_bounds
from referee.speech.hearing.grammar import Prefixes
from referee.speech.hearing.interface import Recognizer, Stream, Transcript
from referee.speech.hearing.segmenter import (
    COMPLETE,
    EXTENDABLE,
    FRAME,
    INCOMPLETE,
    READ_OUT,
    WENT_ON,
)
from referee.speech.understanding.intents import Heard, IntentMatcher
from referee.speech.understanding.meaning import NONE
from referee.speech.understanding.numbers import join_numbers
from referee.speech.understanding.templates import normalise_words

#: Quiet (seconds, from the end of one utterance's speech to the start of the
#: next one's) within which a player who goes on after a whole command that
#: more words could change said its rest (:meth:`Listener.whole`). The
#: referee's answer to the first part begins about 0.3 s after it.
JOIN_WITHIN = 0.8


def understand(matcher: IntentMatcher, transcript: Transcript, speaker: str) -> Heard:
    """The intent of a recognised utterance, or none when it is not believable.

    Its score is the lower of how well the words fit a sentence (the matcher)
    and how sure the recogniser is of the words: a move below
    :data:`~referee.wording.SURE_SCORE` is asked about before it is played.
    """
    if not transcript.text:
        return Heard(transcript.text, NONE, 0.0)
    heard = matcher.match(transcript.text, speaker)
    return replace(heard, score=round(min(heard.score, transcript.confidence, 1.0), 3))


def hear_audio(
    recognizer: Recognizer, matcher: IntentMatcher, audio: Audio, speaker: str
) -> tuple[Heard, Transcript]:
    """Recognise and understand one utterance."""
    transcript = recognizer.decode(recognizer.prepare(audio))
    return understand(matcher, transcript, speaker), transcript


def _said_so_far(transcript: Transcript) -> bool:
    """Whether Whisper's own transcript of the words so far is only the start
    of the sentence decoded ("Flip my." for "flip my nine", "I rolled." for
    "I rolled one"): the grammar's search finished a sentence the speaker has
    not (yet) said, so they are not done.

    >>> from referee.speech.hearing.measures import Measures
    >>> _said_so_far(Transcript("flip my nine", 1.0, measures=Measures(free="Flip my.")))
    True
    >>> _said_so_far(Transcript("flip my nine", 1.0, measures=Measures(free="Flip my 9.")))
    False
    """
    free = words_of(transcript.measures.free if transcript.measures is not None else "")
    sentence = words_of(transcript.text)
    return 0 < len(free) < len(sentence) and sentence[: len(free)] == free


def _holds(guessed: Audio, came: int, whole: Audio) -> bool:
    """Whether the words decoded ahead (``guessed``: its first ``came``
    samples from the stream, the rest quiet filled in) are what the whole
    utterance prepared to: the same samples as far as both came from the
    stream, and nothing after the pause as loud as speech (the end of its
    speech did not move). The whole may be shorter than the guess: a
    command ended at once (:data:`~referee.speech.hearing.segmenter.QUIET_COMPLETE`)
    can end before its tail has all come."""
    n = len(whole.samples)
    if n > len(guessed.samples) or not np.array_equal(guessed.samples[:min(n, came)],
                                                      whole.samples[:min(n, came)]):
        return False
    if n <= came:
        return True
    bounds = speech_bounds(frame_energies(whole.samples, FRAME), FRAME, n, margin=0)
    return bounds is not None and bounds[1] <= came


def words_of(text: str) -> list[str]:
    """The words of a text as the matcher compares them (numbers as digits)."""
    return join_numbers(normalise_words(text))


class Listener:
    """Recognition for a live stream, decoding ahead during the end silence."""

    def __init__(self, recognizer: Recognizer, matcher: IntentMatcher | None = None) -> None:
        self.recognizer = recognizer
        self.matcher = matcher
        #: The quiet after the last sound at which a pause is decoded ahead.
        self.tail = recognizer.ahead
        #: Which word sequences are the start of a longer sentence of the grammar.
        self._prefixes = Prefixes(matcher.phrases) if matcher else None
        #: The words decoded ahead: the audio decoded, how many of its samples
        #: came from the stream (the rest: quiet filled in), the transcript.
        self._guess: tuple[Audio, int, Transcript] | None = None
        #: The intent kind of the words judged last ("stop"), or None; and the words.
        self.guessed_kind: str | None = None
        self.guessed_text = ""
        #: How many utterances were decoded ahead, and how many of those guesses held;
        #: how many decodes ahead were given up midway (the speaker went on).
        self.guessed = 0
        self.kept = 0
        self.given_up = 0
        #: The last decode ahead was given up: the speaker went on.
        self._went_on = False
        #: The last utterance heard from each stream (its source and seat):
        #: its audio, start, end and transcript; and how many
        #: were heard again with their rest.
        self._last: dict[Stream, tuple[Audio, float, float, Transcript]] = {}
        self.joined = 0

    @classmethod
    def judging(cls, recognizer: Recognizer) -> Listener:
        """A listener that judges the words so far with a matcher of its own
        (the recogniser's phrases and names): one a stream, the table
        microphone's or a phone's."""
        return cls(recognizer, IntentMatcher(recognizer.phrases, recognizer.phrases.names))

    def pause(self, so_far: Audio, give_up: Callable[[], bool] | None = None,
              over: bool = False) -> None:
        """The speech paused: decode what was said so far, in case it was all.

        Not when the recogniser's preparation depends on the whole utterance
        (PocketSphinx denoises noisy ones): the guess would never hold.
        ``give_up`` (optional; the microphone's) is asked between the
        decoder's steps whether the speaker has gone on meanwhile: then the
        decode stops there, and there is no guess. ``over``: the referee is
        speaking (the recogniser keeps :data:`~referee.speech.audio.OVER_TAIL`).
        """
        if not self.recognizer.can_guess(so_far):
            self._guess, self._went_on = None, False
            return
        if over:
            audio = self.recognizer.prepare(so_far, OVER_TAIL)
            came = len(audio.samples)
        else:
            audio, came = self.recognizer.prepare_ahead(so_far)
        if self._guess is not None and np.array_equal(self._guess[0].samples, audio.samples):
            return  # what the last pause decoded (a quick look, then the pause): it stands
        self._guess = None
        self._went_on = False
        transcript = self.recognizer.guess(audio, give_up)
        if transcript is None:
            self.given_up += 1
            self._went_on = True
            return
        self._guess = (audio, came, transcript)
        self.guessed += 1

    def judge(self) -> str | None:
        """What the words decoded ahead are, for the segmenter to end on.

        :data:`~referee.speech.hearing.segmenter.COMPLETE`: a command nothing can follow
        ("what's my score": answer at once); :data:`~referee.speech.hearing.segmenter.EXTENDABLE`:
        one that more words could change ("flip my seven" could become "flip
        my seven up"); :data:`~referee.speech.hearing.segmenter.READ_OUT`: one
        a read-out of cards may follow or go on ("I lay down my phase ...");
        :data:`~referee.speech.hearing.segmenter.INCOMPLETE`: no command yet
        ("Bob, ..." decodes to nothing); :data:`~referee.speech.hearing.segmenter.WENT_ON`:
        the speaker went on while the words were being decoded (the pause was
        not the end). None: nothing was decoded ahead.
        """
        self.guessed_kind, self.guessed_text = None, ""
        if self._guess is None and self._went_on:
            return WENT_ON
        if self._guess is None or self.matcher is None:
            return None
        guessed = self._guess[2]
        heard = understand(self.matcher, guessed, self.matcher.players[0])
        self.guessed_kind, self.guessed_text = heard.kind, guessed.text
        if heard.kind == "none" or _said_so_far(guessed):
            return INCOMPLETE
        said = guessed.text.split()
        if self._prefixes is not None and self._prefixes.reads_out(said):
            return READ_OUT
        if self._prefixes is not None and self._prefixes.extendable(said):
            return EXTENDABLE
        return COMPLETE

    def kind(self, transcript: Transcript) -> str:
        """What kind of command the words are ("stop", "flip", "none"), as
        far as words alone say (whoever said them)."""
        if self.matcher is None:
            return "none"
        return understand(self.matcher, transcript, self.matcher.players[0]).kind

    def transcript(self, audio: Audio, over: bool = False) -> Transcript:
        """What was said in the utterance that ended (the guess, if it holds);
        ``over``: the referee's voice played during it."""
        prepared = self.recognizer.prepare(audio, OVER_TAIL if over else None)
        guess, self._guess = self._guess, None
        if guess is not None and _holds(guess[0], guess[1], prepared):
            self.kept += 1
            return replace(guess[2], ahead=True)
        return self.recognizer.decode(prepared)

    def whole(self, audio: Audio, start: float, end: float, transcript: Transcript,
              stream: Stream = ("mic", None)) -> tuple[Transcript, float] | None:
        """This utterance (heard as ``transcript``, from ``start`` to ``end`` on
        the stream's clock, from ``stream``: its source and seat, as the
        brain's parts room keys it: :attr:`~referee.protocol.Speech.stream`)
        with the one before it from there, when it is that one's rest: the
        whole's transcript and where the whole began; else None.

        It is the rest when it began within :data:`JOIN_WITHIN` of the last
        one's end, that one was a whole command that more words could change,
        and the two decoded as one are a command that keeps that one's words,
        all but maybe its last (a cut guesses: "flip my" heard as "flip my
        eight" ... "nine"); this one alone is no command, or the same kind
        of command that the whole ends with ("nine": "flip my nine") or is
        (the recogniser made "me" after "hit" the whole "hit me"), not
        another ("hit", then another player's "stay"; "flip my seven", then
        "flip my eight": two flips). Either way, what is heard last (the
        whole, or this one) is remembered for the next.
        """
        last = self._last.get(stream)
        self._last[stream] = (audio, start, end, transcript)
        if last is None or self.matcher is None or self._prefixes is None:
            return None
        before, began, ended, said = last
        words = said.text.split()
        if not 0.0 <= start - ended <= JOIN_WITHIN or not self._prefixes.extendable(words):
            return None
        both = Audio(np.concatenate([self.recognizer.prepare(before).samples, audio.samples]))
        joined = self.recognizer.decode(self.recognizer.prepare(both))
        whole = joined.text.split()
        kept = next((i for i, (a, b) in enumerate(zip(whole, words, strict=False)) if a != b),
                    min(len(whole), len(words)))
        if kept < max(1, len(words) - 1) or len(whole) < len(words):
            return None
        kind, alone = self.kind(joined), self.kind(transcript)
        rest = transcript.text.split()
        ends = len(whole) > len(rest) and whole[-len(rest):] == rest  # ("nine": "flip my nine")
        completed = whole == rest and whole[: len(words)] == words  # ("me" heard "hit me")
        if kind == "none" or (alone != "none" and not (alone == kind and (ends or completed))):
            return None
        self._last[stream] = (both, began, end, joined)
        self.joined += 1
        return replace(joined, whole=True), began
