"""A game played by voice from the speech fixtures, as a player at a table plays it.

Shared by the games' voice tests: each move is said (the committed Piper
recording of a fixture list); when the referee asks "Ann, did you say: ...?",
the player answers "yes" (the committed recording) if that is what they said
and "no" (eSpeak) if not. When a move was not taken (nothing happened, or
they said no), they say it again in eSpeak's voice, once more slower, and then
in Piper's voice if need be, as a player repeats herself. (eSpeak's rendering
of a sentence varies by a few samples with what it rendered before, so one
eSpeak retry may be heard where another was not; Piper's is the same every
time.) Questions are said once. The player knows what the table shows and
hears: the question's words, whether the game changed (the moves and chance
logged), and the game's end; never the brain's fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.brain import matcher_of
from harness.ears import recognizer_for
from referee.games.base import GameSpec
from referee.records import ChanceRecord, EventRecord
from referee.session import Session
from referee.speech.audio import Audio
from referee.speech.understanding.meaning import Intent
from referee.table import Reports, Table


def voice_game(spec: GameSpec, game: str, moves: Sequence[tuple[str, ...]], yes_id: str,
               condition: str, tmp_path: Path,
               means: Mapping[str, Intent] | None = None) -> tuple[Table, list[str]]:
    """Play ``moves`` ((fixture id, its text[, the seat it is said at]), in order) in
    ``condition``'s room (a move with a seat comes from that player's seat
    microphone; the others from the table's one microphone);
    returns the table (what it last showed of the game: ``table.final`` ...)
    and what it showed. ``means``: what a move stands for when it is
    not its fixture's intent (a "no" that answers the game's own question is the
    move it makes), to answer "did you say ...?" rightly."""
    from harness.fixtures import COMMITTED_VOICE, apply_condition, fixture, utterances
    from referee.speech.audio import load_wav
    from referee.speech.hearing.segmenter import DEFAULT_END_SILENCE
    from referee.speech.speaking.tts import EspeakVoice, PiperVoice

    cases = {u.id: u for u in utterances(game)}
    shown: list[str] = []
    logged: list[Any] = []
    matcher = matcher_of(spec)
    table = Table(Session(spec, matcher=matcher), recognizer=recognizer_for(matcher.phrases),
                  reports=Reports(show=shown.append, record=logged.extend))
    clock = [0.0]

    def say(audio: Audio, seat: str | None = None) -> None:
        """Speak once the referee has finished, and let it answer."""
        at = max(clock[0], table.busy_until) + 1.0
        table.advance(at)
        end = at + audio.seconds
        table.hear_audio(audio, at, end, end + DEFAULT_END_SILENCE, seat,
                         "seat" if seat else "mic")
        clock[0] = end + DEFAULT_END_SILENCE
        table.advance(clock[0])

    def room(audio: Audio, name: str) -> Audio:
        path = tmp_path / f"{name}.wav"
        apply_condition(audio, condition, f"test/{name}").write_wav(path)
        return load_wav(path)

    yes = load_wav(fixture(COMMITTED_VOICE, cases[yes_id], condition))
    no = room(EspeakVoice().render("no"), "no")
    table.start()
    for i, (uid, text, *seat) in enumerate(moves):
        tries = [load_wav(fixture(COMMITTED_VOICE, cases[uid], condition))]
        if cases[uid].intent.kind != "query":  # a question needs no repeat
            tries += [room(EspeakVoice().render(text), f"{i:02d}a"),
                      room(EspeakVoice(rate=140).render(text), f"{i:02d}b"),
                      room(PiperVoice().render(text), f"{i:02d}c")]
        for attempt in tries:
            before = len(logged)
            say(attempt, *seat)
            if table.state["question"] is not None:
                wanted = (means or {}).get(uid, cases[uid].intent)
                meant = table.state["question"] in {spec.confirmation(wanted, p)
                                                    for p in spec.players}
                say(yes if meant else no, *seat)
            if table.over or any(isinstance(r, EventRecord | ChanceRecord)
                                 for r in logged[before:]):
                break
    return table, shown
