"""Random sequences of legal and illegal actions keep every invariant.

The events the engine emits drive an independent model of the two physical
trays (what players would do on hearing the referee); it must always agree
with the engine's state.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.core import (
    Action,
    Event,
    Game,
    GameWon,
    PauseClock,
    Rejection,
    ResumeClock,
    Timeout,
    TurnStarted,
)
from referee.engine.race65 import (
    Call,
    CallIncorrect,
    ConsecutiveViolation,
    Flip,
    Race65,
    RaceState,
    TileFlipped,
    TurnLost,
    race_config,
)

PLAYERS = ("Ann", "Bob")
CONFIGS = [
    ("phase-one", None),
    ("phase-seven", "easy"),
    ("phase-seven", "medium"),
    ("phase-seven", "hard"),
]

junk = st.one_of(
    st.builds(
        Flip,
        st.sampled_from(PLAYERS),
        st.sampled_from(PLAYERS),
        st.integers(0, 13),
        st.sampled_from([None, "up", "down"]),
    ),
    st.builds(Call, st.sampled_from(PLAYERS), st.sampled_from([0, 60, 65, 67, 70, 72])),
)
KINDS = [
    *["legal"] * 6, *["greedy"] * 6, "call", "win", "win", *["consecutive"] * 2, *["junk"] * 3,
    "timeout", "pause", "resume",
]


def choose(data: st.DataObject, game: Game[RaceState], target: int) -> Action:
    """Draw the next action, legal or not, from what the game allows now."""
    state = game.state
    kind = data.draw(st.sampled_from(KINDS))
    player = state.active_player
    ready = [p for p in PLAYERS if state.total(p) == target]
    if kind == "win" and ready:
        return Call(ready[0], target)
    if kind in ("greedy", "win"):
        own = [t for t in range(1, 13) if t not in state.tiles_down(player)]
        fits = [t for t in own if state.total(player) + t <= target] or own or [1]
        return Flip(player, player, max(fits))
    if kind == "call":
        return Call(data.draw(st.sampled_from(PLAYERS)), target)
    if kind == "consecutive" and state.last_turn:
        owner, tile = data.draw(st.sampled_from(sorted(state.last_turn)))
        return Flip(player, owner, tile, None if owner == player else "up")
    if kind == "junk":
        return data.draw(junk)
    if kind == "timeout":
        return Timeout()
    if kind == "pause":
        return PauseClock()
    if kind == "resume":
        return ResumeClock()
    legal = game.legal_actions()
    return legal[data.draw(st.integers(0, len(legal) - 1))]


class Trays:
    """The physical trays as players keep them by following announcements."""

    def __init__(self) -> None:
        self.down: dict[str, set[int]] = {p: set() for p in PLAYERS}

    def follow(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, TileFlipped):
                (self.down[event.owner].add if event.down else self.down[event.owner].discard)(
                    event.tile
                )
            corrections = getattr(event, "corrections", ())
            for c in corrections:
                (self.down[c.owner].add if c.down else self.down[c.owner].discard)(c.tile)


@settings(max_examples=300, deadline=None)
@given(
    config=st.sampled_from(CONFIGS),
    partial=st.sampled_from(["revert", "keep"]),
    length=st.integers(1, 150),
    data=st.data(),
)
@pytest.mark.slow
def test_random_play_keeps_the_invariants(config, partial, length, data):
    rules = race_config(config[0], config[1], partial_turn=partial)
    game: Game[RaceState] = Game(Race65(rules), PLAYERS, at=0.0)
    trays = Trays()
    now = 0.0
    turn_flips: list[tuple[str, int]] = []
    previous_turn: set[tuple[str, int]] = set()

    def run(action: Action, at: float) -> None:
        nonlocal turn_flips, previous_turn
        before = game.state
        try:
            events = game.apply(action, at)
        except Rejection as rejection:
            assert rejection.sentence
            assert game.state is before
            assert game.state == before
            return
        trays.follow(events)
        for event in events:
            if isinstance(event, TileFlipped):
                key = (event.owner, event.tile)
                assert key not in previous_turn, "consecutive rule broken"
                assert key not in turn_flips, "same tile twice in a turn"
                turn_flips.append(key)
                assert len(turn_flips) <= rules.flips_per_turn
            if isinstance(event, TurnStarted):
                lost = any(isinstance(e, (TurnLost, ConsecutiveViolation)) for e in events)
                kept = not lost or rules.partial_turn == "keep"
                previous_turn = set(turn_flips) if kept else set()
                turn_flips = []
            if isinstance(event, GameWon):
                (winner,) = event.winners
                assert isinstance(action, Call)
                assert action.number == rules.target
                assert before.total(winner) == rules.target
            if isinstance(event, CallIncorrect):
                assert game.state.tiles_down(event.caller) == frozenset()

    for _ in range(length):
        now += data.draw(st.floats(0, 12, allow_nan=False))
        deadline = game.deadline()
        if deadline is not None and deadline <= now:
            run(Timeout(), deadline)
            if game.state.over:
                break
        run(choose(data, game, rules.target), now)
        state = game.state
        for player in PLAYERS:
            assert trays.down[player] == set(state.tiles_down(player))
            assert state.total(player) == sum(trays.down[player])
            assert state.tiles_down(player) <= set(range(1, 13))
        assert len(state.flips) < rules.flips_per_turn or state.over
        if game.outcome() is not None and not state.stopped:
            assert state.winner is not None
        if state.over:
            break
