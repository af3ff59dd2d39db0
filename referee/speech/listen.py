"""From what a recogniser heard to what the referee understands.

:func:`hear_audio` is the whole path for one utterance: cut it to its speech,
decode it with the grammar, read the words with the intent matcher and decide
whether to believe them (:func:`understand`).
"""

from __future__ import annotations

from dataclasses import replace

from referee.speech.audio import Audio, speech_region
from referee.speech.intents import NONE, Heard, IntentMatcher
from referee.speech.recognizers import Recognizer, Transcript


def understand(matcher: IntentMatcher, transcript: Transcript, speaker: str) -> Heard:
    """The intent of a recognised utterance, or none when it is not believable."""
    if not transcript.text:
        return Heard(transcript.text, dict(NONE), 0.0)
    heard = matcher.match(transcript.text, speaker)
    return replace(heard, score=round(min(heard.score, 1.0), 3))


def hear_audio(
    recognizer: Recognizer, matcher: IntentMatcher, audio: Audio, speaker: str
) -> tuple[Heard, Transcript]:
    """Recognise and understand one utterance."""
    transcript = recognizer.decode(speech_region(audio))
    return understand(matcher, transcript, speaker), transcript
