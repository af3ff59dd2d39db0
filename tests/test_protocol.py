"""The messages between the referee's brain and the table: every one round-trips
through JSON. The examples are made from each message's own field types, so a
new message, or a new field, is checked without touching this test."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from referee import protocol
from referee.protocol import INPUTS, OUTPUTS, Say, Tone, from_json, to_json
from referee.records import LogError, Record, SaidRecord
from referee.speech.hearing.measures import Measures, Part, Sentence
from referee.speech.understanding.intents import Heard
from referee.speech.understanding.meaning import Intent

SAMPLES: dict[Any, Any] = {
    float: 1.25, str: "Ann, 7 down.", bool: True, int: 3,
    Record: SaidRecord(2.5, "Bob's turn.", "turn"),
    Heard: Heard("flip my seven", Intent.of("flip", owner="Ann", tile=7), 0.93, None),
    Intent: Intent.of("call", number=65),
    # (a hearing's measures hold a part's: a sample of every field, by hand)
    Measures: Measures(
        model="tiny.en+table", best="pause", free="Dog, flip my 7.", primed=None,
        options=(Sentence("pause", -9.0, -9.0, 2, None),), best_logprob=-9.0, best_length=2,
        free_logprob=-4.5, free_length=6, margin=-3.75, similarity=20.0,
        primed_similarity=None, gap=float("inf"), nothing=-12.5, base_logprob=None,
        probability=0.001, parts=(Part(Measures(
            model="tiny.en+table", best="flip my seven", free="Flip my 7.",
            options=(Sentence("flip my seven", 9.5, -1.25, 4, -1.5),), best_logprob=-1.25,
            best_length=4, free_logprob=-2.0, free_length=5, margin=0.1, similarity=96.0,
            primed_similarity=96.0, gap=4.5, nothing=-10.0, base_logprob=-1.5,
            probability=0.97), 0.8, 1.9), Part(Measures(
            model="tiny.en+table", best="pause", free="Dog.", options=(
                Sentence("pause", -3.0, -3.0, 2, None),), probability=0.2), 0.0, 0.9))),
}


def sample(hint: Any) -> Any:
    """A value of type ``hint`` (the first type of a union that is not None)."""
    if hint in SAMPLES:
        return SAMPLES[hint]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return sample(next(a for a in typing.get_args(hint) if a is not type(None)))
    if origin is tuple:
        return (sample(typing.get_args(hint)[0]),) * 2
    if origin is dict or hint is dict:
        return {"turn": "Ann", "scores": [1, 2]}
    if isinstance(hint, type) and issubclass(hint, Tone):
        return Tone.QUESTION
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        made: Any = hint
        return made(**{f.name: sample(hints[f.name]) for f in dataclasses.fields(hint)})
    raise AssertionError(f"no sample for {hint!r}: add one")


MESSAGES = (*INPUTS, *OUTPUTS)


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda c: c.type)
def test_every_message_round_trips_through_json(cls):
    message = sample(cls)
    text = json.dumps(to_json(message))
    assert json.loads(text)["type"] == cls.type
    assert from_json(json.loads(text)) == message


def test_every_message_has_its_own_type_and_is_frozen():
    assert len({cls.type for cls in MESSAGES}) == len(MESSAGES)
    for cls in MESSAGES:
        with pytest.raises(dataclasses.FrozenInstanceError):
            sample(cls).at = 0.0


@pytest.mark.parametrize("data", [
    [], {"type": "shout", "at": 1.0}, {"type": "say", "text": "hi"},
    {"type": "say", "at": 1.0, "text": "hi", "tone": "whisper"},
    {"type": "say", "at": "soon", "text": "hi"},
    {"type": "say", "at": 1.0, "text": "hi", "loud": True},
    {"type": "speech", "at": 1.0, "start": 0.5, "end": 0.9, "speaker": None, "source": "mic",
     "heard": {"text": "x"}, "transcript": "x"},
    {"type": "logged", "record": {"type": "said", "at": 1.0}},
])
def test_a_bad_message_is_refused_with_a_reason(data):
    with pytest.raises(LogError):
        from_json(data)


def test_the_tone_is_written_as_its_word():
    assert to_json(Say(1.0, "Five.", Tone.COUNTDOWN))["tone"] == "countdown"
    assert protocol.Tone("turn") is Tone.TURN


def test_a_field_the_protocol_retired_is_read_from_an_older_log_and_ignored():
    """Logs of before 2026-12-05 give the room a ``gated`` switch (test-only,
    removed): such a speech still reads, as the room it now is; an unknown
    field elsewhere in the room is still refused."""
    message = json.loads(json.dumps(to_json(sample(protocol.Speech))))
    older = {**message, "room": {**message["room"], "gated": True}}
    assert from_json(older) == from_json(message)
    with pytest.raises(LogError, match="unknown fields"):
        from_json({**message, "room": {**message["room"], "muted": True}})


#: How a driver once took the game in from the outputs by itself.
OWN_FOLD = re.compile(r"case (Snapshot|WakeAt|Left)\(|isinstance\(\w+, (WakeAt|Left|Moments)\)")


def test_every_driver_folds_the_outputs_one_way():
    """Issue #84 item 3: the table, the tests' driver and replay learn the
    game from the brain's outputs through one :class:`~referee.report.Report`;
    none folds a snapshot, a wake-up or a leaving of its own (three folds
    had been kept side by side, and could disagree)."""
    root = Path(__file__).resolve().parent.parent
    for path in ("referee/table.py", "referee/replay.py", "harness/brain.py"):
        text = (root / path).read_text(encoding="utf-8")
        assert "Report" in text, path
        assert OWN_FOLD.findall(text) == [], path
    assert OWN_FOLD.search("        match out:\n            case WakeAt(wake=wake):\n")
    assert OWN_FOLD.search("    wakes = [o.wake for o in out if isinstance(o, WakeAt)]")


def test_a_field_that_reads_itself_says_what_it_should_have_held() -> None:
    """The codec reads an intent or a record through its own ``from_json``
    and names what a field should have held when it holds something else."""
    from referee.codec import checked
    from referee.records import ChanceRecord
    from referee.speech.understanding.meaning import Intent

    said = SaidRecord(1.0, "Hi.", "answer")
    assert checked(said.to_json(), SaidRecord, "x") == said
    assert checked({"kind": "flip", "tile": 7}, Intent, "x") == Intent.of("flip", tile=7)
    with pytest.raises(LogError, match="x is a chance, not a SaidRecord"):
        checked(ChanceRecord(1.0, "dice", "5").to_json(), SaidRecord, "x")
    with pytest.raises(LogError, match="x is 'flip', not an object"):
        checked("flip", Intent, "x")
    with pytest.raises(LogError, match=r"x is .*, not an intent"):
        checked({"tile": 7}, Intent, "x")
    with pytest.raises(LogError, match="x: unknown record type 'nothing'"):
        checked({"type": "nothing"}, Record, "x")


def test_a_hearing_s_parts_read_from_logs_old_and_new() -> None:
    """A hearing's parts (#83 item 5): the likeliest is the log's ``part``,
    as logs have always had it (an older log reads into one part), the
    others ``other_parts``; a damaged list is refused by name."""
    from referee.speech.hearing.measures import Measures

    measures = sample(protocol.Speech).transcript.measures
    assert len(measures.parts) == 2
    data = json.loads(json.dumps(measures.to_json()))
    assert Measures.from_json(data) == measures
    older = {k: v for k, v in data.items() if k != "other_parts"}
    assert Measures.from_json(older).parts == measures.parts[:1]
    with pytest.raises(LogError, match="the other parts are 'x', not a list"):
        Measures.from_json({**data, "other_parts": "x"})
