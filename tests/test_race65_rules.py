"""One named test for every rule of the Race to 65 texts and of rules.md."""

from __future__ import annotations

import pytest

from referee.engine.core import (
    ClockPaused,
    ClockResumed,
    Game,
    GameOver,
    GameStopped,
    GameWon,
    NotYourTurn,
    OutOfRange,
    PauseClock,
    ResumeClock,
    StopGame,
    TimeIsUp,
    TimeNotUp,
    Timeout,
    TurnStarted,
    UnknownPlayer,
)
from referee.engine.race65 import (
    AlreadyFlipped,
    Call,
    CallCorrect,
    CallIncorrect,
    ConsecutiveViolation,
    Flip,
    MissingDirection,
    Race65,
    RaceState,
    TileFlipped,
    TileSet,
    TimeUp,
    TurnLost,
    WrongDirection,
    race_config,
)


def new_game(
    rule_set: str = "phase-seven",
    difficulty: str | None = "hard",
    first: str | None = None,
    **house: str,
) -> Game[RaceState]:
    config = race_config(rule_set, difficulty, **house)
    return Game(Race65(config, first), ["Ann", "Bob"], at=0.0)


def set_down(game: Game[RaceState], ann: set[int], bob: set[int]) -> None:
    """Arrange the trays directly (a test fixture, not a move)."""
    from dataclasses import replace

    game._states[-1] = replace(game.state, down=(frozenset(ann), frozenset(bob)))


# --- configuration ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule_set", "difficulty", "target", "flips", "seconds"),
    [
        ("phase-one", None, 65, 1, 15.0),
        ("phase-seven", "easy", 65, 2, None),
        ("phase-seven", "medium", 67, 2, 30.0),
        ("phase-seven", "hard", 70, 2, 15.0),
    ],
)
def test_rule_sets_have_their_targets_flips_and_timers(
    rule_set, difficulty, target, flips, seconds
):
    config = race_config(rule_set, difficulty)
    assert (config.target, config.flips_per_turn, config.turn_seconds) == (target, flips, seconds)


def test_phase_seven_defaults_to_easy():
    assert race_config("phase-seven").difficulty == "easy"


@pytest.mark.parametrize(
    ("rule_set", "difficulty", "house"),
    [("phase-nine", None, {}), ("phase-seven", "brutal", {}), ("phase-one", "hard", {}),
     ("phase-seven", "hard", {"partial_turn": "maybe"})],
)
def test_unknown_rule_sets_levels_and_house_values_are_refused(rule_set, difficulty, house):
    with pytest.raises(ValueError, match=r"unknown|no difficulty|partial_turn"):
        race_config(rule_set, difficulty, **house)


def test_game_needs_exactly_two_distinct_players():
    with pytest.raises(ValueError, match="two players"):
        Game(Race65(), ["Ann", "Bob", "Cy"])
    with pytest.raises(ValueError, match="different names"):
        Game(Race65(), ["Ann", "ann"])


# --- set-up -------------------------------------------------------------------------


def test_all_tiles_start_up_and_totals_are_zero():
    game = new_game()
    assert game.state.total("Ann") == game.state.total("Bob") == 0
    assert game.state.tiles_down("Ann") == frozenset()


def test_first_named_player_starts_by_default():
    assert new_game().current_player() == "Ann"


def test_table_can_choose_who_starts():
    assert new_game(first="Bob").current_player() == "Bob"


# --- tile values and flips ----------------------------------------------------------


def test_down_tiles_count_their_number_up_tiles_count_nothing():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 7), 1)
    game.apply(Flip("Ann", "Bob", 12, "down"), 2)
    assert game.state.total("Ann") == 7
    assert game.state.total("Bob") == 12


def test_own_flip_without_direction_toggles():
    game = new_game("phase-one", None)
    game.apply(Flip("Ann", "Ann", 5), 1)
    game.apply(Flip("Bob", "Bob", 1), 2)
    game.apply(Flip("Ann", "Ann", 9), 3)
    game.apply(Flip("Bob", "Bob", 2), 4)
    events = game.apply(Flip("Ann", "Ann", 5), 5)
    assert events[0] == TileFlipped("Ann", "Ann", 5, False, 0)
    assert 5 not in game.state.tiles_down("Ann")


def test_own_flip_with_contradicting_direction_is_rejected_without_penalty():
    game = new_game()
    before = game.state
    with pytest.raises(WrongDirection, match="already up"):
        game.apply(Flip("Ann", "Ann", 7, "up"), 1)
    assert game.state is before


def test_instruction_with_wrong_direction_is_rejected_and_timer_keeps_running():
    game = new_game()
    with pytest.raises(WrongDirection, match="Bob's 4 is already up"):
        game.apply(Flip("Ann", "Bob", 4, "up"), 3)
    assert game.deadline() == 15.0
    assert game.current_player() == "Ann"


def test_instruction_must_say_up_or_down():
    game = new_game()
    with pytest.raises(MissingDirection, match="up or down"):
        game.apply(Flip("Ann", "Bob", 4), 1)


def test_instruction_flips_the_opponents_tile():
    game = new_game()
    events = game.apply(Flip("Ann", "Bob", 4, "down"), 1)
    assert events == [TileFlipped("Ann", "Bob", 4, True, 1)]
    assert game.state.tiles_down("Bob") == {4}


@pytest.mark.parametrize("tile", [0, 13, -1, 65])
def test_tiles_outside_1_to_12_are_rejected(tile):
    game = new_game()
    with pytest.raises(OutOfRange, match=f"no tile {tile}"):
        game.apply(Flip("Ann", "Ann", tile), 1)


def test_unknown_players_are_rejected():
    game = new_game()
    with pytest.raises(UnknownPlayer, match="no player called Carl"):
        game.apply(Flip("Ann", "Carl", 4, "down"), 1)
    with pytest.raises(UnknownPlayer):
        game.apply(Call("Carl", 65), 1)


def test_only_the_active_player_flips():
    game = new_game()
    with pytest.raises(NotYourTurn, match="It's Ann's turn"):
        game.apply(Flip("Bob", "Bob", 3), 1)


# --- turn structure -----------------------------------------------------------------


def test_phase_one_turn_is_exactly_one_action():
    game = new_game("phase-one", None)
    events = game.apply(Flip("Ann", "Ann", 3), 1)
    assert events[-1] == TurnStarted("Bob", 2, 15.0)
    assert game.current_player() == "Bob"


def test_phase_seven_turn_is_exactly_two_flips_then_ends_at_once():
    game = new_game()
    first = game.apply(Flip("Ann", "Ann", 3), 1)
    assert first == [TileFlipped("Ann", "Ann", 3, True, 1)]
    assert game.current_player() == "Ann"
    second = game.apply(Flip("Ann", "Bob", 9, "down"), 2)
    assert second == [TileFlipped("Ann", "Bob", 9, True, 0), TurnStarted("Bob", 2, 15.0)]


def test_two_flips_may_mix_own_and_instructions():
    game = new_game()
    game.apply(Flip("Ann", "Bob", 2, "down"), 1)
    game.apply(Flip("Ann", "Bob", 5, "down"), 2)
    assert game.state.tiles_down("Bob") == {2, 5}


def test_same_tile_cannot_be_flipped_twice_in_one_turn():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 6), 1)
    before = game.state
    with pytest.raises(AlreadyFlipped, match="already flipped this turn"):
        game.apply(Flip("Ann", "Ann", 6), 2)
    assert game.state is before


def test_same_number_on_the_other_tray_is_a_different_tile():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 6), 1)
    game.apply(Flip("Ann", "Bob", 6, "down"), 2)
    assert game.state.tiles_down("Bob") == {6}


# --- consecutive tile rule ----------------------------------------------------------


def test_consecutive_rule_phase_one_example_from_the_rule_text():
    # "If Player A tells Player B to flip tile 7 up, Player B may not flip tile 7
    # down on their next turn."
    game = new_game("phase-one", None)
    set_down(game, set(), {7})
    game.apply(Flip("Ann", "Bob", 7, "up"), 1)
    events = game.apply(Flip("Bob", "Bob", 7, "down"), 2)
    assert events[0] == ConsecutiveViolation("Bob", "Bob", 7, False)
    assert events[1] == TurnLost("Bob", "consecutive", ())
    assert game.current_player() == "Ann"
    assert 7 not in game.state.tiles_down("Bob")


def test_consecutive_rule_applies_across_players_and_trays():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 3), 1)
    game.apply(Flip("Ann", "Bob", 8, "down"), 2)
    # Bob may not touch Ann's 3 nor his own 8 this turn.
    violation = game.apply(Flip("Bob", "Ann", 3, "up"), 3)
    assert isinstance(violation[0], ConsecutiveViolation)
    assert game.current_player() == "Ann"


def test_consecutive_violation_loses_turn_with_no_tiles_flipped():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 3), 1)
    game.apply(Flip("Ann", "Ann", 4), 2)
    game.apply(Flip("Bob", "Bob", 11), 3)  # first flip of Bob's turn
    events = game.apply(Flip("Bob", "Ann", 4, "up"), 4)
    assert events == [
        ConsecutiveViolation("Bob", "Ann", 4, True),
        TurnLost("Bob", "consecutive", (TileSet("Bob", 11, False),)),
        TurnStarted("Ann", 3, 15.0),
    ]
    assert game.state.tiles_down("Bob") == frozenset()
    assert game.state.tiles_down("Ann") == {3, 4}


def test_consecutive_memory_is_only_the_immediately_preceding_turn():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 3), 1)
    game.apply(Flip("Ann", "Ann", 4), 2)
    game.apply(Flip("Bob", "Bob", 1), 3)
    game.apply(Flip("Bob", "Bob", 2), 4)
    # Ann's 3 was flipped two turns ago: allowed again.
    events = game.apply(Flip("Ann", "Ann", 3), 5)
    assert events[0] == TileFlipped("Ann", "Ann", 3, False, 1)


def test_void_turn_flipped_nothing_so_nothing_is_restricted_after_it():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 3), 1)
    game.apply(Flip("Ann", "Ann", 4), 2)
    game.apply(Flip("Bob", "Bob", 9), 3)
    game.apply(Timeout(), 17.0)  # Bob's turn began at 2 and is void
    game.apply(Flip("Ann", "Ann", 5), 18)
    game.apply(Flip("Ann", "Ann", 6), 19)
    # Bob's 9 was reverted by the void turn; it is free again.
    events = game.apply(Flip("Bob", "Bob", 9), 20)
    assert events[0] == TileFlipped("Bob", "Bob", 9, True, 1)


def test_penalty_reset_is_not_a_flip_for_the_consecutive_rule():
    game = new_game()
    set_down(game, set(), {1, 2})
    game.apply(Call("Bob", 70), 1)  # wrong: Bob's 1 and 2 go up
    game.apply(Flip("Ann", "Ann", 5), 2)
    game.apply(Flip("Ann", "Ann", 6), 3)
    events = game.apply(Flip("Bob", "Bob", 1), 4)  # 1 was reset, not flipped
    assert events[0] == TileFlipped("Bob", "Bob", 1, True, 1)


# --- timer ---------------------------------------------------------------------------


def test_timeout_before_the_action_loses_the_turn():
    game = new_game("phase-one", None)
    events = game.apply(Timeout(), 15.0)
    assert events == [TimeUp("Ann"), TurnLost("Ann", "time", ()), TurnStarted("Bob", 2, 15.0)]


def test_timeout_reverts_the_flips_of_an_incomplete_turn():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 4), 1)
    game.apply(Timeout(), 15.0)
    assert game.state.tiles_down("Ann") == frozenset()
    assert game.state.timer.deadline() == 30.0


def test_timeout_lists_tiles_to_turn_back_on_both_trays():
    game = new_game()
    set_down(game, set(), {9})
    game.apply(Flip("Ann", "Bob", 9, "up"), 1)
    events = game.apply(Timeout(), 15.0)
    assert events[1] == TurnLost("Ann", "time", (TileSet("Bob", 9, True),))


def test_partial_turn_keep_house_rule_keeps_the_flips():
    game = new_game(partial_turn="keep")
    game.apply(Flip("Ann", "Ann", 4), 1)
    events = game.apply(Timeout(), 15.0)
    assert events[1] == TurnLost("Ann", "time", ())
    assert game.state.tiles_down("Ann") == {4}
    assert ("Ann", 4) in game.state.last_turn


def test_timeout_before_the_deadline_is_refused():
    game = new_game()
    with pytest.raises(TimeNotUp, match="still"):
        game.apply(Timeout(), 10.0)


def test_easy_mode_has_no_timer():
    game = new_game("phase-seven", "easy")
    assert game.deadline() is None
    with pytest.raises(TimeNotUp, match="no timer"):
        game.apply(Timeout(), 1000.0)
    game.apply(Flip("Ann", "Ann", 1), 5000.0)
    assert game.state.tiles_down("Ann") == {1}


def test_medium_mode_gives_thirty_seconds():
    game = new_game("phase-seven", "medium")
    assert game.deadline() == 30.0


def test_moves_after_the_deadline_are_refused_until_the_timeout_is_applied():
    game = new_game()
    with pytest.raises(TimeIsUp):
        game.apply(Flip("Ann", "Ann", 1), 15.0)
    with pytest.raises(TimeIsUp):
        game.apply(Call("Bob", 70), 16.0)


def test_next_turn_timer_starts_when_the_previous_turn_ends():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 1), 3)
    game.apply(Flip("Ann", "Ann", 2), 4)
    assert game.deadline() == 19.0


def test_timer_pauses_and_resumes_with_the_time_that_was_left():
    game = new_game()
    events = game.apply(PauseClock(), 5.0)
    assert events == [ClockPaused(10.0)]
    assert game.deadline() is None
    with pytest.raises(TimeNotUp, match="paused"):
        game.apply(Timeout(), 100.0)
    events = game.apply(ResumeClock(), 50.0)
    assert events == [ClockResumed(10.0)]
    assert game.deadline() == 60.0


# --- calls ---------------------------------------------------------------------------


def test_phase_one_call_of_65_with_exactly_65_wins():
    game = new_game("phase-one", None)
    set_down(game, {12, 11, 10, 9, 8, 7, 5, 3}, set())
    events = game.apply(Call("Ann", 65), 1)
    assert events == [CallCorrect("Ann", 65), GameWon(("Ann",))]
    assert game.outcome() is not None
    assert game.outcome().winners == ("Ann",)  # type: ignore[union-attr]


def test_phase_seven_hard_needs_a_call_of_70():
    game = new_game()
    set_down(game, {12, 11, 10, 9, 8, 7, 6, 4, 3}, set())
    assert game.state.total("Ann") == 70
    events = game.apply(Call("Ann", 70), 1)
    assert events[-1] == GameWon(("Ann",))


def test_reaching_the_target_silently_does_not_win():
    game = new_game()
    set_down(game, {12, 11, 10, 9, 8, 7, 6, 4}, set())
    game.apply(Flip("Ann", "Ann", 3), 1)  # total now 70
    game.apply(Flip("Ann", "Bob", 1, "down"), 2)
    assert game.state.total("Ann") == 70
    assert game.outcome() is None


def test_incorrect_call_resets_all_of_the_callers_tiles_and_only_theirs():
    game = new_game()
    set_down(game, {1, 2, 3}, {4, 5})
    events = game.apply(Call("Bob", 70), 1)
    assert events == [
        CallIncorrect("Bob", 70, 9, 70, (TileSet("Bob", 4, False), TileSet("Bob", 5, False)))
    ]
    assert game.state.tiles_down("Bob") == frozenset()
    assert game.state.tiles_down("Ann") == {1, 2, 3}


def test_call_of_the_right_total_but_wrong_number_is_incorrect():
    game = new_game()  # target 70
    set_down(game, {12, 11, 10, 9, 8, 7, 5, 3}, set())  # 65
    events = game.apply(Call("Ann", 65), 1)
    assert isinstance(events[0], CallIncorrect)
    assert game.state.total("Ann") == 0


def test_out_of_turn_call_does_not_end_the_active_players_turn():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 5), 1)
    game.apply(Call("Bob", 70), 2)
    assert game.current_player() == "Ann"
    assert game.state.flips == (TileSet("Ann", 5, True),)
    assert game.deadline() == 15.0


def test_call_by_the_active_player_ends_the_turn_void():
    game = new_game()
    game.apply(Flip("Ann", "Bob", 5, "down"), 1)
    events = game.apply(Call("Ann", 70), 2)
    wrong = events[0]
    assert isinstance(wrong, CallIncorrect)
    assert wrong.corrections == (TileSet("Bob", 5, False),)
    assert events[1] == TurnLost("Ann", "call", ())
    assert events[2] == TurnStarted("Bob", 2, 15.0)
    assert game.state.tiles_down("Bob") == frozenset()


def test_active_players_wrong_call_in_phase_one_passes_the_turn():
    game = new_game("phase-one", None)
    game.apply(Call("Ann", 65), 2)
    assert game.current_player() == "Bob"


def test_calls_are_allowed_in_easy_mode_at_any_time():
    game = new_game("phase-seven", "easy")
    set_down(game, set(), {12, 11, 10, 9, 8, 7, 5, 3})
    assert game.apply(Call("Bob", 65), 999.0)[-1] == GameWon(("Bob",))


def test_reset_tray_is_not_turned_back_down_when_the_turn_is_voided():
    game = new_game()
    set_down(game, set(), {4})
    game.apply(Flip("Ann", "Bob", 4, "up"), 1)
    game.apply(Call("Bob", 70), 2)  # Bob's tray reset (all up)
    events = game.apply(Timeout(), 15.0)
    assert events[1] == TurnLost("Ann", "time", ())
    assert game.state.tiles_down("Bob") == frozenset()


# --- game end, undo, describe ------------------------------------------------------------


def test_correct_call_ends_the_game_and_nothing_more_applies():
    game = new_game()
    set_down(game, {12, 11, 10, 9, 8, 7, 6, 4, 3}, set())
    game.apply(Call("Ann", 70), 1)
    assert game.current_player() is None
    assert game.deadline() is None
    with pytest.raises(GameOver):
        game.apply(Flip("Bob", "Bob", 1), 2)


def test_stopped_game_has_no_winner():
    game = new_game()
    assert game.apply(StopGame(), 3) == [GameStopped()]
    outcome = game.outcome()
    assert outcome is not None
    assert outcome.winners == ()
    assert outcome.stopped


def test_undo_returns_to_the_state_before_the_last_action():
    game = new_game()
    before = game.state
    game.apply(Flip("Ann", "Ann", 7), 1)
    game.undo()
    assert game.state is before
    with pytest.raises(Exception, match="nothing to undo"):
        game.undo()


def test_the_game_as_it_stood_is_a_copy_that_changes_nothing():
    game = new_game()
    start = game.state
    game.apply(Flip("Ann", "Ann", 7), 1)
    then = game.before(1)
    assert then.state is start
    then.apply(Flip("Ann", "Ann", 3), 2)  # (played there, not here)
    assert game.depth == 2
    assert game.state.down[0] == frozenset({7})
    with pytest.raises(Exception, match="never there"):
        game.before(3)


def test_legal_actions_exclude_restricted_tiles_and_include_calls():
    game = new_game()
    game.apply(Flip("Ann", "Ann", 3), 1)
    game.apply(Flip("Ann", "Bob", 8, "down"), 2)
    legal = game.legal_actions()
    assert Flip("Bob", "Ann", 3, "up") not in legal
    assert Flip("Bob", "Bob", 8) not in legal
    assert Flip("Bob", "Ann", 4, "down") in legal
    assert Call("Ann", 70) in legal
    for action in legal:
        trial = new_game()
        trial._states = list(game._states)
        trial.apply(action, 3)  # every legal action applies without rejection


def test_race_to_65_has_no_chance_steps():
    game = new_game()
    assert game.chance() is None


def test_describe_says_what_an_action_is():
    game = new_game()
    assert game.describe(Flip("Ann", "Bob", 4, "up")) == "Ann tells Bob to flip 4 up"
    assert game.describe(Flip("Ann", "Ann", 7)) == "Ann flips 7"
    assert game.describe(Call("Bob", 70)) == "Bob calls 70"
