"""Shut the Box: every rule, random play against the invariants, the exact hint."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.brain import Drive
from harness.voicegame import voice_game as play_by_voice
from referee.engine.core import Game, NotYourTurn, OutOfRange, Rejection
from referee.engine.shutbox import (
    AlreadyRolled,
    BadDice,
    BoxConfig,
    BoxShut,
    BoxState,
    ChooseDice,
    OneDieNotAllowed,
    PlayoffStarted,
    Roll,
    Rolled,
    RollFirst,
    Shut,
    ShutTheBox,
    TileShut,
    TurnScored,
    WrongSum,
    order_by_rolls,
    sets_making,
)
from referee.engine.shutbox_strategy import dice_hint, hint, mask_of, tiles_of, value
from referee.games.shutbox import ShutBoxOptions, ShutBoxSpec
from referee.protocol import Entry
from referee.table import Table
from referee.wording import AFTER_THE_END

ROOT = Path(__file__).resolve().parent.parent


def game(players=("Ann", "Bob"), tiles=12, ties="share") -> Game[BoxState]:
    return Game(ShutTheBox(BoxConfig(tiles, ties)), players)


def play(g: Game[BoxState], *actions) -> list[Any]:
    events = []
    for a in actions:
        events += g.apply(a, 0.0)
    return events


def winners(g: Game[BoxState]) -> tuple[str, ...]:
    outcome = g.outcome()
    assert outcome is not None
    return outcome.winners


def close_all_but(g: Game[BoxState], player: str, keep: set[int]) -> None:
    """Shut every other tile, one roll each (tile 1 goes with the next smallest)."""
    to_close = sorted(set(g.state.open) - keep, reverse=True)
    groups: list[tuple[int, ...]] = [(t,) for t in to_close if t != 1]
    if 1 in to_close:
        groups.append((*groups.pop(), 1) if groups else (1,))
    for group in groups:
        total = sum(group)
        count = 1 if total <= 6 and sum(g.state.open) <= 6 else 2
        play(g, Roll(player, total=total, count=count), Shut(player, group))


# --- rules ------------------------------------------------------------------------------


def test_sets_that_make_a_roll_are_every_combination_of_open_tiles():
    assert sets_making(8, frozenset(range(1, 10))) == [
        (8,), (1, 7), (2, 6), (3, 5), (1, 2, 5), (1, 3, 4)
    ]
    assert sets_making(8, frozenset({1, 2, 4})) == []
    assert sets_making(12, frozenset(range(1, 13)))[0] == (12,)


def test_a_turn_rolls_then_shuts_a_set_that_makes_the_roll():
    g = game()
    events = play(g, Roll("Ann", (5, 3)))
    assert isinstance(events[0], Rolled)
    assert events[0].total == 8
    assert g.state.roll == 8
    play(g, Shut("Ann", (7, 1)))
    assert g.state.open == frozenset(range(1, 13)) - {7, 1}
    assert g.state.roll is None
    assert g.current_player() == "Ann"  # and rolls again


@pytest.mark.parametrize(("tiles", "error", "message"), [
    ((6, 1), WrongSum, "6 and 1 make 7, not 8."),
    ((4, 4), TileShut, "4 was named twice"),
    ((13,), OutOfRange, "There is no tile 13."),
])
def test_a_bad_set_is_refused_and_changes_nothing(tiles, error, message):
    g = game()
    play(g, Roll("Ann", (5, 3)))
    before = g.state
    with pytest.raises(error, match=message):
        g.apply(Shut("Ann", tiles), 0.0)
    assert g.state is before


def test_a_shut_tile_cannot_be_shut_again():
    g = game()
    play(g, Roll("Ann", (5, 3)), Shut("Ann", (8,)), Roll("Ann", (4, 4)))
    with pytest.raises(TileShut, match="8 is already shut"):
        g.apply(Shut("Ann", (8,)), 0.0)


def test_order_within_a_turn_roll_first_then_shut():
    g = game()
    with pytest.raises(RollFirst):
        g.apply(Shut("Ann", (8,)), 0.0)
    play(g, Roll("Ann", (5, 3)))
    with pytest.raises(AlreadyRolled):
        g.apply(Roll("Ann", (1, 1)), 0.0)
    with pytest.raises(NotYourTurn):
        g.apply(Roll("Bob", (1, 1)), 0.0)


def test_one_die_only_when_the_open_tiles_add_up_to_six_or_less():
    g = game()
    with pytest.raises(OneDieNotAllowed, match="add up to 78"):
        g.apply(Roll("Ann", (4,)), 0.0)
    close_all_but(g, "Ann", {1, 2, 3})
    assert sum(g.state.open) == 6
    play(g, Roll("Ann", (3,)))
    assert g.state.roll == 3


@pytest.mark.parametrize("roll", [Roll("Ann", (7, 1)), Roll("Ann", total=13),
                                  Roll("Ann", total=1, count=2), Roll("Ann", (1, 2, 3))])
def test_impossible_dice_are_refused(roll):
    with pytest.raises(BadDice):
        game().apply(roll, 0.0)


def test_the_turn_ends_by_itself_when_nothing_makes_the_roll():
    g = game()
    close_all_but(g, "Ann", {2, 5, 9})
    events = play(g, Roll("Ann", (6, 6)))  # 12: no set of 2, 5, 9
    scored = [e for e in events if isinstance(e, TurnScored)]
    assert scored[0].score == 16
    assert scored[0].open == (2, 5, 9)
    assert g.current_player() == "Bob"
    assert g.state.open == frozenset(range(1, 13))  # Bob gets a fresh box
    assert g.state.score_of("Ann") == 16


def test_lowest_score_wins_after_everyone_has_played():
    g = game(("Ann", "Bob", "Cy"))
    close_all_but(g, "Ann", {2, 5, 9})
    play(g, Roll("Ann", (6, 6)))                      # Ann 16
    close_all_but(g, "Bob", {4, 9})
    play(g, Roll("Bob", (1, 1)))                      # Bob 13
    assert not g.is_over()
    close_all_but(g, "Cy", {3, 12})
    play(g, Roll("Cy", (1, 1)))                       # Cy 15
    assert winners(g) == ("Bob",)


def test_equal_lowest_scores_share_the_win():
    g = game()
    close_all_but(g, "Ann", {4, 9})
    play(g, Roll("Ann", (1, 1)))
    close_all_but(g, "Bob", {6, 7})
    play(g, Roll("Bob", (1, 1)))
    assert winners(g) == ("Ann", "Bob")


def test_the_playoff_house_rule_replays_the_tied_players():
    g = game(("Ann", "Bob", "Cy"), ties="playoff")
    close_all_but(g, "Ann", {4, 9})
    play(g, Roll("Ann", (1, 1)))
    close_all_but(g, "Bob", {6, 7})
    play(g, Roll("Bob", (1, 1)))
    close_all_but(g, "Cy", {12, 11})
    events = play(g, Roll("Cy", (1, 1)))
    assert any(isinstance(e, PlayoffStarted) and e.players == ("Ann", "Bob") for e in events)
    assert g.current_player() == "Ann"
    close_all_but(g, "Ann", {9})
    play(g, Roll("Ann", (1, 1)))
    close_all_but(g, "Bob", {4, 6})
    play(g, Roll("Bob", (1, 1)))
    assert winners(g) == ("Ann",)
    assert g.state.score_of("Cy") == 23


def test_shutting_the_box_wins_at_once():
    g = game(("Ann", "Bob"), tiles=9)
    close_all_but(g, "Ann", {1, 2})
    events = play(g, Roll("Ann", (3,)), Shut("Ann", (1, 2)))
    assert any(isinstance(e, BoxShut) for e in events)
    assert winners(g) == ("Ann",)
    with pytest.raises(Rejection):
        g.apply(Roll("Bob", (1, 1)), 0.0)


def test_nine_tiles_have_no_ten():
    g = game(tiles=9)
    play(g, Roll("Ann", (5, 5)))
    with pytest.raises(OutOfRange, match="Tiles go from 1 to 9"):
        g.apply(Shut("Ann", (10,)), 0.0)


def test_order_of_play_is_lowest_roll_first_ties_as_named():
    assert order_by_rolls(["Ann", "Bob", "Cy"], [9, 3, 9]) == ("Bob", "Ann", "Cy")


def test_physical_dice_totals_and_faces():
    g = game()
    play(g, Roll("Ann", total=8))
    assert g.state.roll == 8


def test_rolling_virtual_dice_is_a_chance_step_of_36_faces_or_6():
    g = game()
    assert g.chance() is None  # waiting for the player to roll
    play(g, ChooseDice("Ann", 2))
    chance = g.chance()
    assert chance is not None
    assert chance.name == "two dice"
    assert len(chance.outcomes) == 36
    assert sum(p for _, p in chance.outcomes) == pytest.approx(1.0)
    with pytest.raises(AlreadyRolled):
        play(g, ChooseDice("Ann", 2))
    with pytest.raises(BadDice):
        play(g, Roll("Ann", (4,)))  # two dice were thrown
    play(g, Roll("Ann", (1, 1)))
    assert g.chance() is None  # waiting for a choice, not a roll
    small = game(tiles=9)
    play(small, Roll("Ann", (6, 3)), Shut("Ann", (9,)), Roll("Ann", (6, 2)), Shut("Ann", (8,)),
         Roll("Ann", (6, 1)), Shut("Ann", (7,)), Roll("Ann", (5, 1)), Shut("Ann", (6,)),
         Roll("Ann", (4, 1)), Shut("Ann", (5,)), Roll("Ann", (3, 1)), Shut("Ann", (4,)))
    play(small, ChooseDice("Ann", 1))  # open: 1, 2, 3 add up to 6: one die is allowed
    one = small.chance()
    assert one is not None
    assert [a.dice for a, _ in one.outcomes if isinstance(a, Roll)] == [
        (1,), (2,), (3,), (4,), (5,), (6,)]


def test_the_referee_rolls_virtual_dice_and_a_replayed_log_repeats_them():
    """The runtime resolves the chance step; the log keeps each outcome, and a
    replay applies the logged outcome whatever its own dice would say."""
    from referee.records import ChanceRecord

    options = ShutBoxOptions(order="given")
    faces = iter([(5, 3), (6, 6)])
    records: list[Entry] = []
    s = Drive(ShutBoxSpec(["Ann", "Bob"], options, dice=lambda count: next(faces)),
                record=records.append)
    s.start()
    assert s.hear("roll", None, 1.0)[0].text.startswith("Ann rolled 5 and 3")
    chances = [r for r in records if isinstance(r, ChanceRecord)]
    assert chances == [ChanceRecord(1.0, "two dice", "Ann rolls 5 and 3")]
    other = iter([(1, 1), (2, 2)])
    copy = Drive(ShutBoxSpec(["Ann", "Bob"], options, dice=lambda count: next(other)))
    copy.replay(records)
    assert (copy.state, copy.final) == (s.state, s.final)
    assert copy.state["game"]["roll"] == 8


# --- random play ----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from([9, 12]),
       st.integers(min_value=1, max_value=4))
def test_random_games_keep_the_invariants(rnd, tiles, players):
    names = ("Ann", "Bob", "Cy", "Dee")[:players]
    g = game(names, tiles)
    for _ in range(500):
        if g.is_over():
            break
        state = g.state
        player = g.current_player()
        assert player is not None
        if state.roll is None:
            one = sum(state.open) <= 6 and rnd.random() < 0.5
            faces = (rnd.randint(1, 6),) if one else (rnd.randint(1, 6), rnd.randint(1, 6))
            events = g.apply(Roll(player, faces), 0.0)
            total = sum(faces)
            if sets_making(total, state.open):
                # a turn never ends while a legal set exists
                assert not any(isinstance(e, TurnScored) for e in events)
                assert g.state.roll == total
            else:
                scored = next(e for e in events if isinstance(e, TurnScored))
                # the score is the sum of the open tiles
                assert scored.score == sum(state.open)
                assert g.state.score_of(player) == sum(state.open)
            continue
        # sometimes try something illegal first: a rejection changes nothing
        if rnd.random() < 0.3:
            bad = Shut(player, (rnd.randint(1, tiles), rnd.randint(1, tiles)))
            try:
                g.apply(bad, 0.0)
                continue  # it happened to be legal
            except Rejection:
                assert g.state is state
        options = sets_making(state.roll, state.open)
        g.apply(Shut(player, rnd.choice(options)), 0.0)
    assert g.is_over()
    won = winners(g)
    scores = {p: g.state.score_of(p) for p in names}
    played = {p: s for p, s in scores.items() if s is not None}
    if 0 in played.values() and len(won) == 1:
        assert played[won[0]] == 0  # shut the box: won at once
    else:
        assert set(won) == {p for p, s in played.items() if s == min(played.values())}


# --- the exact hint against brute force -------------------------------------------------------


def brute_force(open_tiles: frozenset[int], goal: str) -> float:
    """Expectimax over individual dice faces, with no shared tables: slow but obvious."""

    @cache
    def before_roll(tiles: frozenset[int]) -> float:
        if not tiles:
            return 1.0 if goal == "shut" else 0.0
        options = []
        dice_counts = (1, 2) if sum(tiles) <= 6 else (2,)
        for count in dice_counts:
            faces = list(itertools.product(range(1, 7), repeat=count))
            total = 0.0
            for face in faces:
                roll = sum(face)
                choices = [frozenset(c) for n in range(1, len(tiles) + 1)
                           for c in itertools.combinations(sorted(tiles), n) if sum(c) == roll]
                if not choices:
                    total += 0.0 if goal == "shut" else sum(tiles)
                else:
                    values = [before_roll(tiles - c) for c in choices]
                    total += max(values) if goal == "shut" else min(values)
            options.append(total / len(faces))
        return max(options) if goal == "shut" else min(options)

    return before_roll(open_tiles)


@pytest.mark.parametrize("goal", ["shut", "score"])
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_the_dynamic_programme_equals_brute_force_on_small_trays(n, goal):
    for size in range(1, n + 1):
        for tiles in itertools.combinations(range(1, n + 1), size):
            expected = brute_force(frozenset(tiles), goal)
            assert value(mask_of(tiles), goal) == pytest.approx(expected, abs=1e-12)


def test_a_hint_is_the_choice_with_the_best_value_after_it():
    tiles = (1, 3, 4, 9)
    for roll in range(2, 13):
        choice, best = hint(tiles, roll, "shut")
        options = sets_making(roll, frozenset(tiles))
        if not options:
            assert choice is None
            continue
        values = {o: brute_force(frozenset(tiles) - set(o), "shut") for o in options}
        assert choice is not None
        assert best == pytest.approx(max(values.values()))
        assert values[choice] == pytest.approx(max(values.values()))
    choice, best = hint(tiles, 7)
    assert choice == (3, 4)
    assert best == pytest.approx(3 / 36 + 4 / 36 / 6)


def test_known_values_of_whole_boxes():
    # The chance of shutting a 9-tile box with best play is about 9.8 % (often quoted).
    assert value(mask_of(range(1, 10)), "shut") == pytest.approx(0.0976, abs=0.001)
    assert tiles_of(mask_of([1, 5, 12])) == (1, 5, 12)
    # {1, 2}: one die makes 3 (1/6) or 1 or 2 then the other (1/6 each): 8/36
    count, chance = dice_hint([1, 2], "shut")
    assert count == 1
    assert chance == pytest.approx(8 / 36)


@pytest.mark.slow
def test_referee_hint_prints_the_documented_json():
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hint", "shut-the-box", "--open", "1", "3", "4", "9",
         "--roll", "7"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(result.stdout) == {"shut": [3, 4], "value": pytest.approx(0.101852)}
    result = subprocess.run(
        [sys.executable, "-m", "referee", "hint", "shut-the-box", "--open", "2", "5", "9",
         "--roll", "12", "--goal", "score"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(result.stdout) == {"shut": None, "value": 16.0}
    bad = subprocess.run(
        [sys.executable, "-m", "referee", "hint", "shut-the-box", "--open", "13", "--roll", "3"],
        capture_output=True, text=True, cwd=ROOT, check=False)
    assert bad.returncode == 2
    assert "There is no tile 13" in bad.stderr


# --- the game at the table ----------------------------------------------------------------


def spec(**options) -> ShutBoxSpec:
    defaults: dict[str, Any] = {"seed": 1, "order": "given"}
    return ShutBoxSpec(["Ann", "Bob", "Cy"], ShutBoxOptions(**{**defaults, **options}))


def texts(said) -> list[str]:
    return [s.text for s in said]


def test_virtual_dice_come_from_the_injected_source():
    s = spec()
    faces = iter([(5, 3), (6, 6)])
    s.dice = lambda count: next(faces)
    session = Drive(s)
    assert texts(session.hear("roll", None, 1.0)) == [
        "Ann rolled 5 and 3: 8. Shut tiles that make 8."
    ]
    said = texts(session.hear("shut seven and one", None, 2.0))
    assert said == ["7 and 1 shut. Open: 2, 3, 4, 5, 6, 8, 9, 10, 11 and 12. Roll again."]
    assert texts(session.hear("I rolled five and three", None, 3.0)) == [
        "I roll the dice in this game: say roll."
    ]


def test_physical_dice_are_reported_by_the_player():
    session = Drive(spec(dice="physical"))
    assert "tell me what you rolled" in texts(session.hear("roll", None, 1.0))[0]
    assert texts(session.hear("I rolled five and three", None, 2.0))[0].startswith(
        "Ann rolled 5 and 3: 8.")
    session.hear("shut 8", None, 3.0)
    assert texts(session.hear("rolled eleven", None, 4.0))[0].startswith("Ann rolled 11.")


def test_options_and_hint_are_read_out():
    s = spec()
    s.dice = lambda count: (5, 2)
    session = Drive(s)
    session.hear("roll", None, 1.0)
    assert texts(session.hear("options", None, 2.0)) == [
        "For 7 you can shut: 7; 1 and 6; 2 and 5; 3 and 4; 1 and 2 and 4."
    ]
    assert texts(session.hear("hint", None, 3.0))[0].startswith("Shut 7: your chance of")


def test_order_of_play_by_the_referees_rolls():
    faces = iter([(6, 6), (1, 2), (3, 3)])
    options = ShutBoxOptions(order="roll")
    s = ShutBoxSpec(["Ann", "Bob", "Cy"], options, dice=lambda count: next(faces))
    assert s.players == ("Bob", "Cy", "Ann")
    assert "Rolls for the order: Ann 12, Bob 3, Cy 6." in s.opening(s.new_game(0.0))


# --- a whole game by voice ---------------------------------------------------------------

MOVES = [  # (recording, what it says); a box of 9, physical dice, Ann's turn (see voice_game)
    ("stb04", "I rolled five and three"), ("stb07", "shut seven and one"),
    ("stb12", "I rolled six and three"), ("stb11", "nine"),
    ("stb18", "what's open"),
    ("stb04", "I rolled five and three"), ("stb08", "close eight"),
    ("stb06", "I got a six"), ("stb10", "shut two and four"),
    ("stb19", "my score"),
    ("stb13", "rolled eleven"), ("stb14", "shut five and six"),
    ("stb15", "I rolled a three"), ("stb16", "shut three"),
]
def voice_game(condition: str, tmp_path: Path) -> tuple[Table, list[str]]:
    """Ann's turn by voice (:func:`harness.voicegame.voice_game`)."""
    options = ShutBoxOptions(tiles=9, dice="physical", order="given")
    # The table the recordings' expected intents assume (tests/audio_fixtures/shut-the-box.tsv);
    # Ann plays first, and shutting the box wins at once.
    return play_by_voice(ShutBoxSpec(["Ann", "Bob", "Cy"], options), "shut-the-box", MOVES,
                         "stb28", condition, tmp_path)


@pytest.mark.slow
def test_a_whole_game_by_voice_ends_with_the_box_shut(tmp_path):
    table, shown = voice_game("clean", tmp_path)
    assert "[" in shown[1]
    said = [line.split("referee: ", 1)[1] for line in shown if "referee: " in line]
    assert "Open: 2, 3, 4, 5, 6 and 8, adding up to 28." in said, shown  # "what's open"
    assert "Ann is playing: 14 open so far." in said, shown
    assert "Ann shut the box!" in said, shown
    win = said.index("Ann shut the box!")
    assert said[win - 1] == "3 shut."  # not "Open: none. Roll again ..." first
    assert said[win + 1] == "Ann wins!"
    assert said[win + 2:] == [AFTER_THE_END]  # and nothing else
    assert table.final == {"winner": ["Ann"],
                           "players": {"Ann": {"score": 0, "open": []},
                                       "Bob": {"score": None, "open": None},
                                       "Cy": {"score": None, "open": None}},
                           "turn": None}


@pytest.mark.slow
@pytest.mark.parametrize("condition", ["reverb", "babble20", "babble10", "babble5", "pink10"])
def test_a_voice_game_in_a_noisy_room_never_breaks_the_rules(condition, tmp_path):
    """Misheard moves may happen in noise; the game must stay legal and never crash.

    The accuracy per room is measured by ``./run bench recognition --game shut-the-box``.
    """
    table, shown = voice_game(condition, tmp_path)
    game, turn = table.state["game"], table.state["turn"]
    assert all(set(seat["open"] or ()) <= set(range(1, 10))
               for seat in game["players"].values())
    if game["roll"] is not None and turn is not None:  # waiting for a set that makes it
        assert sets_making(game["roll"], frozenset(game["players"][turn]["open"]))
    assert not any("something went wrong" in line for line in shown)
    assert set(table.final["players"]) == {"Ann", "Bob", "Cy"}


def test_a_logged_game_without_a_seed_replays_the_same_rolls():
    """The log keeps the seed the referee chose, so resume rolls the same dice."""


    records: list[Entry] = []
    options = ShutBoxOptions(order="roll")
    first = ShutBoxSpec(["Ann", "Bob"], options)
    session = Drive(first, record=records.append)
    for t, line in enumerate(["roll", "options", "roll"], start=1):
        session.hear(line, None, float(t))
    shown = session.state["game"]
    if shown["roll"] is not None:
        open_tiles = frozenset(shown["players"][shown["turn"]]["open"])
        session.hear("shut " + " and ".join(map(str, sets_making(shown["roll"], open_tiles)[0])),
                     None, 5.0)
    again = ShutBoxSpec(["Ann", "Bob"], ShutBoxOptions.from_json(first.options.to_json()))
    copy = Drive(again)
    copy.replay(records)
    assert again.players == first.players
    assert (copy.state, copy.final) == (session.state, session.final)
    assert again.dice(2) == first.dice(2)  # and the dice go on alike


def test_the_last_tiles_shut_are_not_followed_by_roll_again():
    """"Open: none. Roll again and tell me." made no sense once the box is shut:
    the last tiles are said, then "Ann shut the box!" (#73 item 8)."""
    from referee.engine.shutbox import TilesShut

    spec = ShutBoxSpec(["Ann", "Bob"], ShutBoxOptions(tiles=9, dice="physical", order="given"))
    game: Game[Any] = spec.begin(0.0)
    assert spec.announce(TilesShut("Ann", (1, 2), ()), game) == "1 and 2 shut."
    assert spec.announce(TilesShut("Ann", (1, 2), (3,)), game) == (
        "1 and 2 shut. Open: 3. Roll again and tell me.")


def test_an_undone_roll_comes_again_the_same():
    """Chance is not undone: the roll an undo took back is the next roll's (as
    Turn 7's undone card stays on top); the log replays to the same (#73 item 9)."""
    records: list[Entry] = []
    spec = ShutBoxSpec(["Ann", "Bob"], ShutBoxOptions(seed=7, order="given"))
    s = Drive(spec, record=records.append)
    s.start()
    first = [x.text for x in s.hear("roll", "Ann", 1.0)]
    s.hear("undo", "Ann", 2.0)
    assert next(x.text for x in s.hear("yes", "Bob", 3.0)).startswith("Undone.")
    assert [x.text for x in s.hear("roll", "Ann", 4.0)] == first
    s.hear("shut five", "Ann", 5.0)
    again = Drive(ShutBoxSpec(["Ann", "Bob"], ShutBoxOptions(seed=7, order="given")))
    again.replay(records)
    assert again.final == s.final
