"""Golden transcripts: complete games, utterance by utterance.

Each ``tests/data/golden/*.script`` is played through the real command line in
scripted mode; what the referee announces, and the final state, must equal the
``.expected`` file beside it. After a deliberate change of wording, regenerate
with ``REFEREE_REGENERATE=1 ./run test tests/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.games import golden_game
from referee.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden"
SCRIPTS = sorted(GOLDEN.glob("*.script"))


def play(script: Path, capsys: pytest.CaptureFixture[str]) -> str:
    game, args = golden_game(script)
    assert main(["play", game, *args, "--script", str(script), "--json"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_golden_transcript(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = play(script, capsys)
    expected = script.with_suffix(".expected")
    if os.environ.get("REFEREE_REGENERATE"):
        expected.write_text(out)
    assert out == expected.read_text()


@pytest.mark.parametrize(
    ("stem", "must_say"),
    [
        ("race65-phase-one", ["Time!", "was flipped last turn", "Wrong call", "Ann wins!",
                              "say which way"]),
        ("race65-phase-seven-easy", ["no timer", "already flipped this turn", "Wrong call",
                                     "flip up your", "Ann wins!"]),
        ("race65-phase-seven-medium", ["Half time.", "Time!", "flip your 9 back up",
                                       "was flipped last turn", "Wrong call", "Bob wins!"]),
        ("race65-phase-seven-hard", ["Time!", "flip your 2 back up", "was flipped last turn",
                                     "Wrong call", "already up", "Ann wins!"]),
        ("shut-the-box-virtual", ["Rolls for the order", "Roll first.", "not Ann's",
                                  "you can shut", "your chance of shutting the box",
                                  "named twice", "is already shut", "Nothing makes",
                                  "wins with"]),
        ("shut-the-box-physical", ["Roll your dice and tell me", "Two dice make 2 to 12",
                                   "There is no tile 10", "tie with 7: a play-off",
                                   "Bob wins with 15!"]),
        ("turn7-virtual", ["I shuffle and deal", "for 23.", "percent chance to bust",
                           "who gets the Lock", "is locked with", "Bust: Bob already has a 9",
                           "Life Saver takes the second", "draws three cards",
                           "Round 1 scores.", "I deal the cards in this game", "Cy wins with"]),
        ("turn7-physical", ["what is it?", "First, Bob's card", "no plus 3 card",
                            "no cards yet: you must hit", "draw card 2 of 3",
                            "Life Saver takes the second 5", "only one 1 and it is on the table",
                            "a sudden-death round", "Bob is out of this round",
                            "Ann wins with 34!"]),
        ("phase10-twist-physical", ["at least 6 cards, and that is 5", "lay down your own "
                                    "phase before hitting", "now a set of 7s",
                                    "Ann, did you make your phase?", "First Cy must choose",
                                    "the phases are 2 and 3", "keep it secret",
                                    "Twist card 4 is down", "past Phase 10!",
                                    "Bob: 45 points", "Cy wins with the lowest hand!"]),
        ("phase10-twist-virtual", ["Cy is skipped. Ann's turn.", "you may lay down only on your "
                                   "own turn", "cannot be only Wilds",
                                   "have none (start the game with --private-audio Cy=DEVICE",
                                   "listen in your headphones", "to Bob only: (private)",
                                   "did you make your Twist phase?",
                                   "on a Twist card: back 1 space", "Cy made the phase: past "
                                   "Phase 10!", "Ann went out, and wins!"]),
    ],
)
def test_goldens_cover_the_situations_they_promise(stem: str, must_say: list[str]) -> None:
    text = (GOLDEN / f"{stem}.expected").read_text()
    for phrase in must_say:
        assert phrase in text, f"{stem} never says {phrase!r}"
    assert '"winner": ' in text.splitlines()[-1]
    assert '"winner": null' not in text.splitlines()[-1]
    assert '"winner": []' not in text.splitlines()[-1]
