"""One voice, several microphones (:mod:`referee.overheard`): only the closest
microphone's copy is heard, and nothing waits that need not."""

from __future__ import annotations

import numpy as np

from referee.overheard import CLOSER_DB, HOLD, TABLE_MIC, Caught, Overheard, loudness
from referee.speech.audio import RATE, Audio


class Table:
    """What was heard, and from which microphone; who is still talking."""

    def __init__(self, sources: list[str]) -> None:
        self.heard: list[tuple[str, float]] = []
        self.talking: set[str] = set()
        self.overheard = Overheard(lambda source: source in self.talking, lambda: sources)

    def caught(self, source: str, start: float, end: float, level: float,
               decided: float | None = None) -> None:
        def hear(at: float) -> None:
            self.heard.append((source, at))

        self.overheard.add(Caught(source, start, end, end + 0.3 if decided is None else decided,
                                  level, hear))


def test_a_voice_no_other_microphone_is_hearing_is_heard_at_once():
    table = Table(["Ann", "Bob"])
    table.caught("Ann", 1.0, 2.0, -20.0)
    table.overheard.hear(2.3)
    assert table.heard == [("Ann", 2.3)]
    assert table.overheard.due is None


def test_a_phone_across_the_table_loses_to_the_speaker_s_own():
    """Ann's words reach Bob's phone too, 20 dB quieter and 0.2 s later:
    Ann's copy waits while Bob's phone still hears speech, then only hers
    is heard, whichever was decided first."""
    table = Table(["Ann", "Bob"])
    table.talking = {"Bob"}
    table.caught("Ann", 1.0, 2.0, -20.0)
    table.overheard.hear(2.3)
    assert table.heard == []  # Bob's phone may be hearing the same voice
    table.talking = set()
    table.caught("Bob", 1.2, 2.2, -40.0)
    table.overheard.hear(2.55)
    assert table.heard == [("Ann", 2.55)]
    assert table.overheard.dropped == 1


def test_two_players_talking_at_once_into_their_own_phones_are_both_heard():
    table = Table(["Ann", "Bob"])
    table.caught("Ann", 1.0, 2.0, -20.0)
    table.caught("Bob", 1.1, 2.1, -20.0 - CLOSER_DB + 1.0)
    table.overheard.hear(2.5)
    assert sorted(source for source, _ in table.heard) == ["Ann", "Bob"]


def test_the_table_microphone_s_copy_of_a_phone_s_voice_is_dropped():
    """The table microphone decides first (no network on the way) and its
    copy waits for the phone's, which is heard; the table's is dropped,
    however loud."""
    table = Table([TABLE_MIC, "Ann"])
    table.talking = {"Ann"}
    table.caught(TABLE_MIC, 1.0, 2.0, -10.0)
    table.overheard.hear(2.35)
    assert table.heard == []
    table.talking = set()
    table.caught("Ann", 1.1, 2.15, -30.0)
    table.overheard.hear(2.5)
    assert table.heard == [("Ann", 2.5)]


def test_an_utterance_waits_at_most_the_hold():
    table = Table(["Ann", "Bob"])
    table.talking = {"Bob"}  # Bob's phone hears speech for ever, and decides nothing
    table.caught("Ann", 1.0, 2.0, -20.0, decided=2.3)
    assert table.overheard.due == 2.3 + HOLD
    table.overheard.hear(2.3 + HOLD - 0.01)
    assert table.heard == []
    table.overheard.hear(2.3 + HOLD)
    assert table.heard == [("Ann", 2.3 + HOLD)]


def test_utterances_apart_in_time_are_not_copies():
    table = Table(["Ann", "Bob"])
    table.caught("Ann", 1.0, 2.0, -20.0)
    table.overheard.hear(2.3)
    table.caught("Bob", 4.0, 5.0, -40.0)
    table.overheard.hear(5.3)
    assert [source for source, _ in table.heard] == ["Ann", "Bob"]


def test_loudness_is_the_loud_part_of_the_utterance():
    rng = np.random.default_rng(1)
    quiet = rng.standard_normal(RATE) * 10
    loud = np.concatenate([quiet, rng.standard_normal(RATE // 2) * 1000, quiet])
    assert loudness(Audio(loud.astype(np.int16))) - loudness(Audio(quiet.astype(np.int16))) > 35
