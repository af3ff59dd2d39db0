"""Turn 7: the rules (every card and the corner cases), random play against the
invariants, the exact odds against brute force, and the table side (virtual and
physical decks, targets, questions, the log)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.brain import Drive, Kept
from referee.cli import main
from referee.engine.core import Game, GameWon, IllegalAction, NotYourTurn, Timeout, TurnStarted
from referee.engine.turn7 import (
    ActionDiscarded,
    ActionPlayed,
    ActionSetAside,
    Busted,
    ChooseTarget,
    DeckShuffled,
    Draw,
    Hand,
    Hit,
    NoTarget,
    NotInDeck,
    PlayoffStarted,
    RoundScored,
    Saved,
    Stay,
    Stayed,
    Target,
    Turn7,
    Turn7Config,
    Turn7State,
    TurnSeven,
    full_deck,
    round_score,
)
from referee.games.base import SetupError
from referee.games.turn7 import Turn7Options, Turn7Spec
from referee.games.turn7.odds import deck_after, odds
from referee.protocol import Entry
from referee.table import Table
from referee.wording import AFTER_THE_END

PLAYERS = ("Ann", "Bob", "Cy")


def new(players: Sequence[str] = PLAYERS, **config: Any) -> Game[Turn7State]:
    """A game whose first round Ann deals: Bob, Cy, then Ann get the first cards."""
    return Game(Turn7(Turn7Config(**config)), players)


def deal(g: Game[Turn7State], *cards: str) -> list[Any]:
    """Give each card to whoever the game waits for (a deal, a hit, a forced draw)."""
    events: list[Any] = []
    for card in cards:
        chance = g.chance()
        assert chance is not None, f"no card is due for {card}"
        player = next(a.player for a, _ in chance.outcomes if isinstance(a, Draw))
        events += g.apply(Draw(player, card), 0.0)
    return events


def of(events: Sequence[Any], kind: Any) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def accounted(state: Turn7State) -> bool:
    cards = (Counter(state.deck) + Counter(state.discard) + Counter(state.on_table)
             + Counter(w.card for w in state.waiting))
    return cards == Counter(full_deck())


# --- the deck and scoring ---------------------------------------------------------------


def test_the_deck_has_94_cards_of_the_rules():
    deck = Counter(full_deck())
    assert sum(deck.values()) == 94
    assert [deck[str(n)] for n in range(13)] == [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert all(deck[m] == 1 for m in ("+2", "+4", "+6", "+8", "+10", "x2"))
    assert all(deck[a] == 3 for a in ("lock", "turn3", "lifesaver"))


@pytest.mark.parametrize(("numbers", "mods", "turn7", "score"), [
    ((12, 9, 6), ("x2", "+4"), False, 58),   # x2 first, then +X
    ((12, 9, 6), ("+4", "x2"), False, 58),   # whatever order they came in
    ((3,), ("+2", "+10"), False, 15),
    ((0, 1, 2, 3, 4, 5, 6), (), True, 36),
    ((0, 1, 2, 3, 4, 5, 6), ("x2",), True, 57),  # the bonus is not doubled
    ((), ("+6",), False, 6),
])
def test_round_score_is_numbers_doubled_then_flat_modifiers_then_the_bonus(
        numbers, mods, turn7, score):
    assert round_score(numbers, mods, turn7=turn7) == score
    assert round_score(numbers, mods, turn7=turn7, bust=True) == 0


# --- a round ----------------------------------------------------------------------------------


def test_the_deal_starts_left_of_the_dealer_and_the_dealer_is_last():
    g = new()
    events = deal(g, "5", "6", "7")
    assert [g.state.hand(p).numbers for p in PLAYERS] == [(7,), (5,), (6,)]
    assert of(events, TurnStarted)[0].player == "Bob"
    assert g.current_player() == "Bob"


def test_hit_draws_one_card_and_play_passes_to_the_next_active_player():
    g = new()
    deal(g, "5", "6", "7")
    assert g.apply(Hit("Bob"), 1.0) == []
    assert g.current_player() == "Bob"  # waiting for Bob's card
    events = deal(g, "9")
    assert g.state.hand("Bob").numbers == (5, 9)
    assert of(events, TurnStarted)[0].player == "Cy"


def test_only_the_player_on_turn_hits_or_stays_and_nothing_else_moves():
    g = new()
    deal(g, "5", "6", "7")
    before = g.state
    with pytest.raises(NotYourTurn, match="Bob's turn"):
        g.apply(Hit("Cy"), 1.0)
    g.apply(Hit("Bob"), 1.0)
    with pytest.raises(IllegalAction, match="Bob's card"):
        g.apply(Stay("Bob"), 1.0)
    assert g.state.hand("Bob") == before.hand("Bob")


def test_a_duplicate_number_busts_and_the_player_never_acts_again_in_the_round():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "5")
    assert of(events, Busted) == [Busted("Bob", "5")]
    assert g.state.hand("Bob").status == "bust"
    assert g.state.hand("Bob").score() == 0
    g.apply(Stay("Cy"), 2.0)
    g.apply(Stay("Ann"), 3.0)  # Bob is skipped: the round ends
    assert g.state.round == 2
    assert g.state.history[-1] == (("Bob", 0), ("Cy", 6), ("Ann", 7))


def test_a_second_stay_is_told_it_stayed_and_a_busted_player_that_it_busted():
    """Issue #83: a second "stay" got "Bob is out of this round.", which
    sounds like a bust to a player who cannot see the table."""
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Stay("Bob"), 1.0)
    with pytest.raises(NotYourTurn, match=r"^Bob has already stayed\.$"):
        g.apply(Stay("Bob"), 2.0)
    g.apply(Hit("Cy"), 3.0)
    deal(g, "6")
    with pytest.raises(NotYourTurn, match=r"^Cy has busted: out of this round\.$"):
        g.apply(Hit("Cy"), 4.0)


def test_stay_banks_the_row_and_a_player_with_no_cards_may_not_stay():
    g = new()
    events = deal(g, "lock")  # Bob is dealt a Lock: he chooses, and has no card
    assert of(events, ChooseTarget)[0].targets == ("Bob", "Cy", "Ann")
    g.apply(Target("Bob", "Cy"), 1.0)
    assert g.state.hand("Cy").status == "locked"
    deal(g, "8")  # Cy is not dealt (locked); Ann is
    assert g.current_player() == "Bob"
    with pytest.raises(IllegalAction, match="no cards yet"):
        g.apply(Stay("Bob"), 2.0)
    assert not g.state.hand("Bob").row
    assert g.state.hand("Bob").actions == ("lock",)


def test_an_action_dealt_is_resolved_before_the_next_card_and_counts_as_the_card():
    g = new()
    events = deal(g, "turn3")
    assert isinstance(events[-1], ChooseTarget)
    assert g.chance() is None  # no card until Bob chooses
    g.apply(Target("Bob", "Ann"), 1.0)
    deal(g, "1", "2", "3")  # Ann's three forced cards
    assert g.state.hand("Ann").numbers == (1, 2, 3)
    deal(g, "4", "5")  # then the deal goes on: Cy, then Ann (her dealt card)
    assert g.state.hand("Cy").numbers == (4,)
    assert g.state.hand("Ann").numbers == (1, 2, 3, 5)
    assert g.state.hand("Bob").numbers == ()


def test_turn_seven_ends_the_round_for_everyone_with_the_bonus():
    g = new(("Ann", "Bob"))
    deal(g, "0", "12")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "1")
    g.apply(Stay("Ann"), 1.0)
    for card in ("2", "3", "4", "5"):
        g.apply(Hit("Bob"), 1.0)
        assert not of(deal(g, card), TurnSeven)
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "6")
    assert of(events, TurnSeven) == [TurnSeven("Bob")]
    assert dict(g.state.history[-1]) == {"Bob": 21 + 15, "Ann": 12}
    assert g.state.round == 2


def test_a_turn_seven_scores_every_player_who_has_not_busted():
    g = new()
    deal(g, "0", "12", "1")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "2")
    g.apply(Hit("Cy"), 1.0)
    deal(g, "12")  # Cy busts
    g.apply(Hit("Ann"), 1.0)
    deal(g, "lock")
    g.apply(Target("Ann", "Ann"), 2.0)  # Ann locks herself with 1
    for card in ("3", "4", "5", "6", "7"):
        g.apply(Hit("Bob"), 3.0)
        events = deal(g, card)
    assert of(events, TurnSeven)
    assert dict(g.state.history[-1]) == {"Bob": 27 + 15, "Cy": 0, "Ann": 1}


def test_modifiers_never_bust_and_never_count_toward_turn_seven():
    g = new()
    deal(g, "+4", "x2", "+2")
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "+10")
    assert not of(events, Busted)
    assert g.state.hand("Bob").modifiers == ("+4", "+10")
    assert g.state.hand("Bob").score() == 14


def test_a_life_saver_takes_one_duplicate_and_that_hit_is_spent():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "lifesaver")
    g.apply(Stay("Cy"), 2.0)
    g.apply(Stay("Ann"), 2.0)
    g.apply(Hit("Bob"), 3.0)
    before = len(g.state.discard)
    events = deal(g, "5")
    assert of(events, Saved) == [Saved("Bob", "5")]
    hand = g.state.hand("Bob")
    assert hand.status == "active"
    assert hand.numbers == (5,)
    assert not hand.lifesaver
    assert len(g.state.discard) == before + 2  # the duplicate and the Life Saver
    assert g.current_player() == "Bob"  # the only one left: his turn again
    assert of(events, TurnStarted)[0].turn > 0


def test_a_second_life_saver_goes_to_an_active_player_without_one():
    g = new()
    deal(g, "lifesaver", "lifesaver", "3")  # Bob keeps one, Cy keeps one
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "lifesaver")  # Bob's second: only Ann can take it
    played = of(events, ActionPlayed)
    assert played == [ActionPlayed("Bob", "lifesaver", "Ann", only=True)]
    assert g.state.hand("Ann").lifesaver


def test_a_second_life_saver_with_a_choice_is_asked_and_refused_to_a_holder():
    g = new(("Ann", "Bob", "Cy", "Dee"))
    deal(g, "lifesaver", "2", "3", "4")  # Bob holds one
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "lifesaver")
    assert of(events, ChooseTarget)[0].targets == ("Cy", "Dee", "Ann")
    with pytest.raises(NoTarget, match="somebody else"):
        g.apply(Target("Bob", "Bob"), 2.0)
    g.apply(Target("Bob", "Dee"), 2.0)
    assert g.state.hand("Dee").lifesaver


def test_a_second_life_saver_nobody_can_take_is_discarded():
    g = new(("Ann", "Bob"))
    deal(g, "lifesaver", "lifesaver")  # Bob and Ann each hold one
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "lifesaver")
    assert of(events, ActionDiscarded) == [ActionDiscarded("Bob", "lifesaver",
                                                           "nobody can take it")]
    assert g.state.discard[-1] == "lifesaver"
    assert accounted(g.state)


def test_lock_on_yourself_as_the_last_active_player_is_played_at_once():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Stay("Bob"), 1.0)
    g.apply(Stay("Cy"), 1.0)
    g.apply(Hit("Ann"), 1.0)
    events = deal(g, "lock")
    assert of(events, ActionPlayed) == [ActionPlayed("Ann", "lock", "Ann", True, 7)]
    assert of(events, RoundScored)[0].scores[2][:2] == ("Ann", 7)


def test_lock_needs_an_active_target():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Stay("Bob"), 1.0)
    g.apply(Hit("Cy"), 1.0)
    deal(g, "lock")
    with pytest.raises(NoTarget, match="Bob is out of this round"):
        g.apply(Target("Cy", "Bob"), 2.0)
    with pytest.raises(NotYourTurn, match="Cy drew the Lock"):
        g.apply(Target("Ann", "Cy"), 2.0)
    g.apply(Target("Cy", "Ann"), 2.0)
    assert g.state.hand("Ann").status == "locked"
    assert g.current_player() == "Cy"  # the only active player


def test_turn_three_revealing_a_turn_three_and_a_lock_waits_and_plays_them_in_order():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "turn3")
    g.apply(Target("Bob", "Cy"), 2.0)
    events = deal(g, "turn3", "lock", "9")
    assert of(events, ActionSetAside) == [ActionSetAside("Cy", "turn3"),
                                          ActionSetAside("Cy", "lock")]
    assert g.state.hand("Cy").numbers == (6, 9)
    assert of(events, ChooseTarget)[-1] == ChooseTarget("Cy", "turn3", ("Bob", "Cy", "Ann"))
    g.apply(Target("Cy", "Ann"), 3.0)  # the Turn Three first: Ann draws three
    events = deal(g, "1", "2", "3")
    assert of(events, ChooseTarget)[-1] == ChooseTarget("Cy", "lock", ("Bob", "Cy", "Ann"))
    events = g.apply(Target("Cy", "Bob"), 4.0)
    assert g.state.hand("Bob").status == "locked"
    assert of(events, TurnStarted)[0].player == "Cy"  # the turn after Bob's
    assert accounted(g.state)


def test_a_life_saver_revealed_in_a_turn_three_saves_a_later_bust_in_it():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "turn3")
    g.apply(Target("Bob", "Ann"), 2.0)
    events = deal(g, "lifesaver", "7", "8")
    assert of(events, Saved) == [Saved("Ann", "7")]
    assert g.state.hand("Ann").numbers == (7, 8)
    assert g.state.hand("Ann").active


def test_a_bust_in_a_turn_three_stops_it_and_discards_its_set_aside_actions():
    g = new()
    deal(g, "5", "6", "7")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "turn3")
    g.apply(Target("Bob", "Cy"), 2.0)
    events = deal(g, "lock", "6")
    assert of(events, Busted) == [Busted("Cy", "6")]
    assert of(events, ActionDiscarded) == [ActionDiscarded("Cy", "lock", "Cy busted")]
    assert g.chance() is None  # no third card
    assert g.current_player() == "Ann"
    assert accounted(g.state)


def test_a_turn_seven_in_a_turn_three_ends_the_round_and_its_actions_with_it():
    g = new(("Ann", "Bob"))
    deal(g, "0", "12")
    g.apply(Hit("Bob"), 1.0)
    deal(g, "1")
    g.apply(Stay("Ann"), 1.0)
    for card in ("2", "3", "4"):
        g.apply(Hit("Bob"), 1.0)
        deal(g, card)
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "turn3")  # Bob is the only one left: on him at once
    assert of(events, ActionPlayed) == [ActionPlayed("Bob", "turn3", "Bob", only=True)]
    events = deal(g, "lock", "5", "6")
    assert of(events, ActionSetAside) == [ActionSetAside("Bob", "lock")]
    assert of(events, TurnSeven) == [TurnSeven("Bob")]
    assert not of(events, ChooseTarget)  # the Lock went with the round
    assert g.state.round == 2
    assert "lock" in g.state.discard
    assert accounted(g.state)


def test_the_deck_runs_out_mid_round_and_the_discard_pile_becomes_the_deck():
    from dataclasses import replace
    g = new(("Ann", "Bob"))
    rest = Counter(full_deck())
    rest.subtract(["5", "6", "7"])
    # A position set up for the test: 3 cards left, the rest in the discard pile.
    g._states[-1] = replace(g.state, deck=("5", "6", "7"), discard=tuple(rest.elements()))
    deal(g, "5", "6")  # Bob 5, Ann 6
    g.apply(Hit("Bob"), 1.0)
    events = deal(g, "7")
    assert of(events, DeckShuffled) == [DeckShuffled(91)]
    assert len(g.state.deck) == 91
    assert g.state.discard == ()
    assert g.state.shuffles == 1
    assert g.state.hand("Bob").numbers == (5, 7)  # the cards in front stay
    assert g.state.seen() == ()  # nothing out of the new deck yet
    assert accounted(g.state)


def test_a_card_that_cannot_be_in_the_deck_is_refused():
    g = new()
    deal(g, "2", "2", "1")  # both 2s are out
    g.apply(Hit("Bob"), 1.0)
    before = g.state
    with pytest.raises(NotInDeck, match="All 2 of the 2s are out"):
        g.apply(Draw("Bob", "2"), 1.0)
    with pytest.raises(NotInDeck, match="only one 1 and it is on the table"):
        g.apply(Draw("Bob", "1"), 1.0)
    assert g.state == before


def test_a_tie_at_the_target_is_played_off_by_the_tied_players_only():
    g = new(target=10)
    deal(g, "10", "10", "3")
    g.apply(Stay("Bob"), 1.0)
    g.apply(Stay("Cy"), 1.0)
    events = g.apply(Stay("Ann"), 1.0)
    assert of(events, PlayoffStarted) == [PlayoffStarted(("Bob", "Cy"), 10)]
    assert g.state.order == ("Cy", "Bob")  # Bob deals the play-off: Cy first
    assert g.state.hand("Ann").status == "out"
    deal(g, "9", "8")  # Cy 9, Bob 8
    g.apply(Stay("Cy"), 2.0)
    events = g.apply(Stay("Bob"), 2.0)
    assert of(events, GameWon) == [GameWon(("Cy",))]
    assert g.state.totals == (3, 18, 19)


def test_a_tie_at_200_is_played_off():
    from dataclasses import replace
    g = new()
    g._states[-1] = replace(g.state, totals=(0, 190, 190))  # a position set up for the test
    deal(g, "10", "10", "3")
    for p in ("Bob", "Cy"):
        g.apply(Stay(p), 1.0)
    events = g.apply(Stay("Ann"), 1.0)
    assert of(events, PlayoffStarted) == [PlayoffStarted(("Bob", "Cy"), 200)]
    assert not of(events, GameWon)


def test_a_tie_is_shared_with_the_house_rule():
    g = new(target=10, ties="share")
    deal(g, "10", "10", "3")
    for p in ("Bob", "Cy"):
        g.apply(Stay(p), 1.0)
    events = g.apply(Stay("Ann"), 1.0)
    assert of(events, GameWon) == [GameWon(("Bob", "Cy"))]


def test_the_highest_total_wins_when_several_pass_the_target():
    g = new(target=10)
    deal(g, "11", "12", "3")
    for p in ("Bob", "Cy"):
        g.apply(Stay(p), 1.0)
    events = g.apply(Stay("Ann"), 1.0)
    assert of(events, GameWon) == [GameWon(("Cy",))]


def test_the_dealer_moves_one_seat_each_round():
    g = new()
    deal(g, "5", "6", "7")
    for p in ("Bob", "Cy", "Ann"):
        g.apply(Stay(p), 1.0)
    assert g.state.players[g.state.dealer] == "Bob"
    assert g.state.order == ("Cy", "Ann", "Bob")
    assert sorted(g.state.discard) == ["5", "6", "7"]  # the round's cards, not reshuffled


def test_a_timed_turn_stays_when_time_runs_out_or_hits_with_the_house_rule():
    g = new(turn_seconds=10.0)
    deal(g, "5", "6", "7")
    assert g.deadline() == 10.0
    events = g.apply(Timeout(), 10.0)
    assert of(events, Stayed) == [Stayed("Bob", 5, True)]
    h = new(turn_seconds=10.0, expiry="hit")
    deal(h, "5", "6", "7")
    h.apply(Timeout(), 10.0)
    assert h.chance() is not None
    assert h.current_player() == "Bob"


def test_rejections_change_nothing():
    g = new()
    deal(g, "5", "6", "7")
    before = g.state
    for action in (Stay("Cy"), Draw("Bob", "4"), Target("Bob", "Cy"), Draw("Bob", "13")):
        with pytest.raises(IllegalAction if not isinstance(action, Stay) else NotYourTurn):
            g.apply(action, 1.0)
    assert g.state == before


# --- random play ---------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=2, max_value=8),
       st.sampled_from([60, 200]))
@pytest.mark.slow
def test_random_games_keep_the_invariants(rnd, n, target):
    players = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")[:n]
    g = new(players, target=target)
    out: set[str] = set()  # busted or locked in this round
    round_number = g.state.round
    for step in range(5000):
        if g.is_over():
            break
        state = g.state
        if state.round != round_number:
            out, round_number = set(), state.round
        chance = g.chance()
        if chance is not None:
            actions = [a for a, _ in chance.outcomes]
            action = rnd.choices(actions, [p for _, p in chance.outcomes])[0]
            assert abs(sum(p for _, p in chance.outcomes) - 1) < 1e-9
        else:
            action = rnd.choice(g.legal_actions())
        actor = getattr(action, "player", None)
        if isinstance(action, Hit | Stay):
            assert actor not in out  # a busted or locked player never acts again
        events = g.apply(action, float(step))
        after = g.state
        assert accounted(after)  # all 94 cards: deck, discard, rows, set aside
        for event in events:
            if isinstance(event, Busted):
                out.add(event.player)
            if isinstance(event, ActionPlayed) and event.card == "lock":
                out.add(event.target)
            if isinstance(event, RoundScored):
                assert all(score >= 0 for _, score, _ in event.scores)
        # The round ends exactly when nobody is active or somebody turned 7.
        if of(events, RoundScored):
            removed = ({e.player for e in of(events, Busted | Stayed)}
                       | {e.target for e in of(events, ActionPlayed) if e.card == "lock"})
            assert of(events, TurnSeven) or set(state.active) <= removed
        elif not after.over:
            assert after.active
            assert not any(after.hand(p).status == "turn7" for p in after.order)
        if not after.over and after.phase == "play" and after.round == state.round:
            assert after.active  # a round with nobody active has ended
            for p in after.order:  # scores follow the formula
                hand = after.hand(p)
                assert hand.score() == round_score(hand.numbers, hand.modifiers,
                                                   turn7=hand.status == "turn7",
                                                   bust=hand.status == "bust")
    assert g.is_over()
    assert max(g.state.totals) >= target


# --- the odds ---------------------------------------------------------------------------------


def brute_force(hand: Hand, deck: Sequence[str]) -> tuple[Fraction, Fraction]:
    """Bust chance and expected score after one card, card by card (no grouping)."""
    bust, total = Fraction(0), Fraction(0)
    for card in deck:
        g = Game(Turn7(Turn7Config()), ("Ann", "Bob"))
        from dataclasses import replace
        state = g.state
        hands = (hand, Hand(numbers=(99,)))  # Ann's hand; Bob is active
        g._states[-1] = replace(state, hands=hands, deck=tuple(deck), phase="play",
                                order=("Ann", "Bob"), at=0)
        g.apply(Hit("Ann"), 0.0)
        events = g.apply(Draw("Ann", card), 0.0)
        after = g.state.hand("Ann") if not of(events, RoundScored) else None
        if of(events, Busted):
            bust += 1
            continue
        if after is None:  # a Turn 7 ended the round
            total += dict(g.state.history[-1])["Ann"]
        else:
            total += after.score()
    return bust / len(deck), total / len(deck)


@pytest.mark.parametrize("seed", range(40))
def test_the_odds_equal_brute_force_over_small_decks(seed):
    import random
    rnd = random.Random(seed)
    numbers = tuple(rnd.sample(range(13), rnd.randint(1, 6)))
    mods = tuple(rnd.sample(["+2", "+4", "x2", "+10"], rnd.randint(0, 2)))
    hand = Hand(numbers, mods, lifesaver=rnd.random() < 0.3)
    pool = [c for c in full_deck() if c != "lifesaver" or not hand.lifesaver]
    deck = rnd.sample([c for c in pool if c not in mods], rnd.randint(1, 12))
    result = odds(hand, deck)
    bust, hit = brute_force(hand, deck)
    assert result.bust == pytest.approx(float(bust))
    assert result.hit == pytest.approx(float(hit))
    assert result.stay == hand.score()


def test_a_known_position_has_the_odds_worked_by_hand():
    # Row 12 and 11 from a fresh deck: 11 twelves and 10 elevens in 92 cards bust.
    hand = Hand((12, 11))
    result = odds(hand, deck_after([], [12, 11], []))
    assert result.bust == pytest.approx(21 / 92)
    assert result.stay == 23


def test_referee_hint_turn7_prints_the_documented_json(capsys):
    assert main(["hint", "turn7", "--row", "3", "7", "12", "--mods", "x2", "+4",
                 "--seen", "12", "12", "lock"]) == 0
    out = json.loads(capsys.readouterr().out)
    deck = deck_after(["12", "12", "lock"], [3, 7, 12], ["x2", "+4"])
    expected = odds(Hand((3, 7, 12), ("x2", "+4")), deck)
    assert out["bust"] == pytest.approx(expected.bust)
    assert out["bust"] == pytest.approx((2 + 6 + 9) / 86)  # 3s, 7s and 12s left, of 86
    assert out["stay"] == 48
    assert out["hit"] == pytest.approx(expected.hit)
    assert out["advice"] in ("hit", "stay")


@pytest.mark.parametrize(("args", "message"), [
    (["--row", "3", "3"], "each number once"),
    (["--row", "13"], "no card '13'"),
    (["--row", "1", "--seen", "1"], "only 1 of 1"),
    (["--mods", "lock"], "modifiers only"),
])
def test_referee_hint_turn7_refuses_impossible_positions(args, message, capsys):
    assert main(["hint", "turn7", *args]) == 2
    assert message in capsys.readouterr().err


# --- the table side -----------------------------------------------------------------------


def session(deck: str = "virtual", top: Sequence[str] = (), players: Sequence[str] = PLAYERS,
            **options: Any) -> tuple[Drive, list[str], list[Entry]]:
    records: list[Entry] = []
    spec = Turn7Spec(players, Turn7Options(deck=deck, seed=3, **options), top=top)
    s = Drive(spec, record=records.append)
    said = [x.text for x in s.start()]
    return s, said, records


def says(s: Drive, line: str, speaker: str | None = None, at: float = 1.0) -> list[str]:
    return [x.text for x in s.hear(line, speaker, at)]


def test_the_virtual_deck_deals_and_announces_every_card():
    _, said, _ = session(top=["5", "+4", "9"])
    assert said[0].startswith("Turn 7 for Ann, Bob and Cy, to 200")
    assert said[1:4] == ["Bob: a 5.", "Cy: plus 4.", "Ann: a 9."]
    assert said[-1] == "Bob: hit or stay?"


def test_a_virtual_hit_says_the_card_and_its_total_and_a_bust_why():
    s, _, _ = session(top=["5", "6", "7", "9", "6", "5"])
    assert says(s, "hit") == ["Bob: a 9, for 14.", "Cy: hit or stay?"]
    assert says(s, "hit") == ["Cy: a 6.", "Bust: Cy already has a 6. Cy scores nothing "
                                          "this round.", "Ann: hit or stay?"]


def test_undo_of_a_virtual_hit_puts_the_card_back_on_top():
    s, _, _ = session(top=["5", "6", "7", "9"])
    says(s, "hit")
    assert s.state["game"]["players"]["Bob"]["cards"] == [5, 9]
    says(s, "undo", "Bob")
    says(s, "Cy agrees", "Cy", 2.0)
    assert s.state["game"]["players"]["Bob"]["cards"] == [5]
    says(s, "hit", "Bob", 3.0)
    assert s.state["game"]["players"]["Bob"]["cards"] == [5, 9]


def test_targets_are_named_or_answered_with_a_bare_name():
    s, _, _ = session(top=["5", "6", "7", "lock", "turn3"])
    said = says(s, "hit")
    assert said[-1] == "Bob, who gets the Lock: Bob, Cy or Ann?"
    assert says(s, "hit") == ["First, Bob: who gets the Lock?"]
    assert says(s, "Cy") == ["Cy is locked with 6.", "Ann: hit or stay?"]
    said = says(s, "hit")
    assert said[-1] == "Ann, who gets the Turn Three: Bob or Ann?"
    said = says(s, "turn three on me")
    assert said[0] == "Ann draws three cards."
    assert len(s.state["game"]["players"]["Ann"]["cards"]) >= 2


def test_the_physical_deck_asks_for_each_card_and_questions_impossible_ones():
    s, said, _ = session(deck="physical")
    assert said[-1] == "Ann, deal Bob a card: Bob, what is it?"
    assert says(s, "I got a two") == ["Bob: a 2.", "Ann, deal Cy a card: Cy, what is it?"]
    assert says(s, "two") == ["Cy: a 2.", "Ann, deal yourself a card: Ann, what is it?"]
    assert says(s, "plus four")[-1] == "Bob: hit or stay?"
    said = says(s, "hit")
    assert said == ["Bob, draw a card and tell me what it is."]
    mark = s.mark()
    said = says(s, "two")
    assert said[0].startswith("All 2 of the 2s are out since the last shuffle")
    assert s.changed_since(mark) == []
    assert says(s, "plus three") == ["There is no plus 3 card: bonus cards are plus 2, 4, "
                                     "6, 8 and 10."]
    assert says(s, "times two")[0] == "Bob: times 2."
    assert says(s, "hit") == ["Cy, draw a card and tell me what it is."]


def test_a_reported_card_with_the_virtual_deck_is_refused():
    s, _, _ = session()
    assert says(s, "nine") == ["I deal the cards in this game: say hit or stay."]


def test_a_life_saver_held_alone_is_said_and_a_modifier_alone_is_plain():
    """A Life Saver held before any number (kept from a Turn Three, given by
    another player): "what does Bob have" and "read the table" say it; a lone
    plus card reads plainly."""
    from referee.engine.turn7 import Hand

    spec = Turn7Spec(PLAYERS, Turn7Options(seed=3))
    kept = Kept(spec)
    s = Drive(spec)
    s.start()
    game = kept.game
    game._states.append(game.state.with_hand("Bob", Hand(lifesaver=True)).with_hand(
        "Cy", Hand(modifiers=("+4",))))  # (a state the deal could reach; set directly)
    assert says(s, "what do I have", "Bob") == [
        "Bob has a Life Saver and no numbers yet; still in."]
    assert says(s, "what does Cy have", "Bob") == ["Cy has plus 4, worth 4; still in."]
    table = " ".join(says(s, "read the table", "Ann"))
    assert "Bob has a Life Saver and no numbers yet" in table
    assert "Cy has plus 4, worth 4" in table


def test_questions_at_any_time():
    s, _, _ = session(top=["5", "6", "7", "lifesaver", "x2", "+4"])
    says(s, "hit")
    assert says(s, "what do I have", "Bob") == [
        "Bob has 5 and a Life Saver; still in."]
    says(s, "hit")  # Cy: times 2
    assert says(s, "what does Cy have", "Bob") == ["Cy has 6 and times 2, worth 12; still in."]
    assert says(s, "how many cards are left") == ["89 cards left in the deck; 0 cards in the "
                                                  "discard pile."]
    assert says(s, "who is still in") == ["Still in: Bob, Cy and Ann."]
    # Ann has a 7: six 7s are left among 89 cards.
    odds_said = says(s, "what are my odds", "Ann")[0]
    assert odds_said.startswith("Ann: 6.7 percent chance to bust. Staying scores 7;")
    assert says(s, "hint", "Ann")[0].startswith("Hit. Ann: 6.7 percent")
    assert says(s, "scores") == ["Totals: Ann 0, Bob 0, Cy 0."]


def test_a_whole_round_is_scored_with_how_each_score_was_made():
    s, _, _ = session(top=["12", "9", "6", "x2", "9", "+4"], target=50)
    for line in ("hit", "hit", "hit"):  # Bob times 2, Cy busts on a 9, Ann plus 4
        says(s, line)
    assert says(s, "stay")[0] == "Bob stays with 24."
    said = says(s, "stay", "Ann")
    assert said[1] == ("Round 1 scores. Bob: 12, doubled 24, makes 24. Cy: bust, 0. "
                       "Ann: 6, plus 4, makes 10. Totals: Ann 10, Bob 24, Cy 0."), said
    assert said[2] == "Round 2: Bob deals."


def test_a_logged_game_replays_the_same_cards():
    s, _, records = session()
    for i, line in enumerate(["hit", "hit", "stay", "hit", "hit"], start=1):
        says(s, line, None, float(i))
    first = s.spec
    assert isinstance(first, Turn7Spec)
    again = Turn7Spec(PLAYERS, Turn7Options.from_json(first.options.to_json()))
    copy = Drive(again)
    copy.replay(records)
    assert (copy.state, copy.final) == (s.state, s.final)
    assert says(copy, "hit", None, 6.0) == says(s, "hit", None, 6.0)  # the same deck on


def test_bad_options_are_refused_with_a_sentence():
    with pytest.raises(SetupError, match="There is no player called"):
        Turn7Spec(PLAYERS, Turn7Options(dealer="Zed"))
    with pytest.raises(SetupError, match="3 to 600 seconds"):
        Turn7Spec(PLAYERS, Turn7Options(turn_timer=1))
    with pytest.raises(SetupError, match="--deck takes virtual or physical"):
        Turn7Options(deck="paper")
    with pytest.raises(SetupError, match="2 to 8 players"):
        Turn7Spec(["Ann"])


# --- a whole game by voice ---------------------------------------------------------------

VOICE_MOVES = [  # (recording, what it says); physical deck, Ann deals, to 20
    ("t7c13", "nine"),                   # Bob is dealt a 9
    ("t7c14", "I got a seven"),          # Cy a 7
    ("t7c17", "lock"),                   # Ann a Lock ...
    ("t7c12", "Cy"),                     # ... on Cy, who is locked with 7
    ("t7c22", "what do I have"),         # Bob asks
    ("t7c02", "hit me"),
    ("t7c20", "twelve"),                 # Bob 21
    ("t7c01", "hit"),                    # Ann has no cards: she hits
    ("t7c15", "plus four"),
    ("t7c04", "stay"),                   # Bob stays with 21
    ("t7c28", "what are my odds"),       # Ann asks
    ("t7c03", "another card"),
    ("t7c16", "times two"),
    ("t7c34", "hit me again"),
    ("t7c21", "I got an eleven"),        # Ann: 11, doubled 22, plus 4: 26
    ("t7c05", "I'll stay"),              # the round ends: Ann passes 20 with the most
]


def turn7_by_voice(condition: str, tmp_path: Path) -> tuple[Table, list[str], Kept]:
    from harness.voicegame import voice_game

    spec = Turn7Spec(PLAYERS, Turn7Options(deck="physical", target=20))
    kept = Kept(spec)
    table, shown = voice_game(spec, "turn7", VOICE_MOVES, "t7c32", condition, tmp_path)
    return table, shown, kept


@pytest.mark.slow
def test_a_whole_game_by_voice_with_a_physical_deck(tmp_path):
    table, shown, _ = turn7_by_voice("clean", tmp_path)
    said = [line.split("referee: ", 1)[1] for line in shown if "referee: " in line]
    assert "Cy is locked with 7." in said, shown
    assert "Bob has 9; still in." in said, shown
    assert "Bob stays with 21." in said, shown
    assert any(s.startswith("Ann: 0 percent chance to bust. Staying scores 4;")
               for s in said), shown
    assert said[-2:] == ["Ann wins with 26!", AFTER_THE_END], shown
    assert table.final == {
        "winner": ["Ann"], "rounds": 1, "turn": None,
        "players": {"Ann": {"total": 26, "rounds": [26]}, "Bob": {"total": 21, "rounds": [21]},
                    "Cy": {"total": 7, "rounds": [7]}}}


@pytest.mark.slow
@pytest.mark.parametrize("condition", ["reverb", "babble10", "pink10"])
def test_a_voice_game_in_a_noisy_room_never_breaks_the_rules(condition, tmp_path):
    """Misheard moves may happen in noise; the game must stay legal and never crash.

    The accuracy per room is measured by ``./run bench recognition --game turn7``.
    """
    table, shown, kept = turn7_by_voice(condition, tmp_path)
    assert accounted(kept.game.state)  # (the rules' own state, of the game the spec began)
    assert not any("something went wrong" in line for line in shown)
    assert set(table.final["players"]) == set(PLAYERS)


# --- the command line: audio scripts, the log, resume -------------------------------------

ROOT = Path(__file__).resolve().parent.parent
PIPER = ROOT / "tests" / "audio_fixtures" / "piper-joe"


@pytest.mark.slow
def test_a_game_from_an_audio_script_with_the_virtual_deck(tmp_path, capsys):
    # Each move followed by "yes" (t7c32), as a player answers "do you want
    # another card?" when the referee is unsure; with no question open it is
    # ignored. Whether it asks depends on the CPU's int8 kernels (a VNNI CPU
    # hears this "hit" sure, one without VNNI asks): the flow is the same.
    lines = ["[+0.5] " + str(PIPER / f"{uid}.wav")
             for uid in ("t7c01", "t7c32", "t7c22", "t7c04", "t7c32")]
    script = tmp_path / "game.txt"
    script.write_text("\n".join(lines) + "\n")
    code = main(["play", "turn7", "--players", "Ann", "Bob", "Cy", "--seed", "140",
                 "--audio-script", str(script), "--json"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    said = [x.split("referee: ", 1)[1] for x in out if "] referee: " in x]
    # seed 140 deals Bob a 12, Cy a 10, Ann a 12, and then Bob's hit is an 11
    assert said[1:4] == ["Bob: a 12.", "Cy: a 10.", "Ann: a 12."]
    assert "Bob: an 11, for 23." in said, out
    assert "Cy has 10; still in." in said, out
    assert "Cy stays with 10." in said, out
    assert json.loads(out[-1])["turn"] == "Ann"


@pytest.mark.slow
def test_a_killed_game_resumes_and_deals_the_cards_it_would_have_dealt(tmp_path):
    import signal
    import subprocess
    import sys

    from harness.typedgame import QUIET, start, type_lines, until

    log = tmp_path / "game.jsonl"
    quiet = QUIET
    args = ["turn7", "--players", "Ann", "Bob", "Cy", "--seed", "140"]
    game = start(args, log)
    until(game, "Bob: hit or stay?")
    type_lines(game, [("hit", "Cy: hit or stay?"), ("stay", "Ann: hit or stay?")])
    game.kill()  # a crash: no clean-up
    game.wait(timeout=10)
    assert game.returncode == -signal.SIGKILL

    resumed = subprocess.run([sys.executable, "-m", "referee", "resume", str(log), *quiet,
                              "--json", "--no-log"], input="hit\n", capture_output=True,
                             text=True, cwd=ROOT, timeout=60, check=False)
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[0] == "Resuming the game. It's Ann's turn. Ann: hit or stay?"
    # The same three lines played without a crash deal the same card to Ann.
    whole = tmp_path / "whole.txt"
    whole.write_text("hit\nstay\nhit\n")
    straight = subprocess.run([sys.executable, "-m", "referee", "play", *args, "--script",
                               str(whole), "--json"], capture_output=True, text=True, cwd=ROOT,
                              timeout=60, check=False)
    card = [x for x in straight.stdout.splitlines() if "referee: Ann: " in x][-1]
    assert card.split("referee: ", 1)[1] in [x.split("referee: ", 1)[-1] for x in lines]
    replay = subprocess.run([sys.executable, "-m", "referee", "replay", str(log), "--json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert replay.returncode == 0, replay.stderr
    assert any(x.endswith("referee: Bob: an 11, for 23.") for x in replay.stdout.splitlines())
    resumed_state = json.loads(lines[-1])
    assert resumed_state["players"] == json.loads(straight.stdout.splitlines()[-1])["players"]


def test_the_turn_timer_counts_down_aloud_and_the_player_stays_when_it_runs_out():
    s, _, _ = session(top=["5", "6", "7"], turn_timer=10)
    said = [x.text for x in s.tick(10.0)]
    assert said[0] == "Five."
    assert said[-2:] == ["Time! Bob stays with 5.", "Cy: hit or stay?"]
    assert s.state["deadline"] == 20.0


def test_with_the_hit_house_rule_the_referee_deals_the_card_when_time_runs_out():
    s, _, _ = session(top=["5", "6", "7", "9"], turn_timer=10, house=["expiry=hit"])
    said = [x.text for x in s.tick(10.0)]
    assert said[-2:] == ["Bob: a 9, for 14.", "Cy: hit or stay?"]


# --- moments: what can be said now ------------------------------------------------------


def test_targets_and_card_reports_are_phrases_of_their_moment_only():
    from referee.games import matcher_for

    phrases = matcher_for("turn7", PLAYERS).phrases
    assert phrases.moments == {"target", "card"}
    anytime = {str(i.fields["kind"]) for i in phrases.only(frozenset()).intents}
    assert {"hit", "stay", "query", "stop"} <= anytime
    assert not anytime & {"target", "card"}
    at_target = {str(i.fields["kind"]) for i in phrases.only(frozenset({"target"})).intents}
    assert "target" in at_target
    assert "card" not in at_target


def test_the_game_says_which_moment_it_is_at():
    s, _, _ = session(top=["5", "6", "7", "lock"])
    assert s.moments == frozenset()
    says(s, "hit")
    assert s.moments == {"target"}
    p, _, _ = session(deck="physical")
    assert p.moments == {"card"}
    says(p, "nine")
    says(p, "ten")
    says(p, "lock")
    assert p.moments == {"target"}  # Ann's dealt Lock waits for her choice
    says(p, "undo", "Ann", 2.0)
    says(p, "Bob agrees", "Bob", 3.0)
    assert p.moments == {"card"}  # the Lock undone: Ann's card again


@pytest.mark.slow
@pytest.mark.parametrize("model", ["base", None])
def test_a_bare_name_is_heard_only_when_a_target_is_asked_for(model):
    """Whisper as shipped (``base``) hears Piper's "hint" as the bare name "Ann"
    (a target: a move) with every sentence in the grammar; at a hit-or-stay
    moment no bare name is listened for, and it is no move (the sentences left
    fit it worse than Whisper's own "Ann": it is dropped, or at most a stray
    "Ann, yeah", which answers nothing). With the table's adapter (``None``)
    "hint" is the hint it is at both moments; bare names and cards are heard
    only when asked for, as with the base model."""
    from harness.fixtures import COMMITTED_VOICE, clean_path, utterances
    from referee.games import matcher_for
    from referee.speech.audio import load_wav
    from referee.speech.hearing.recognizers import make_recognizer
    from referee.speech.listen import understand

    matcher = matcher_for("turn7", PLAYERS)
    recognizer = make_recognizer(matcher.phrases, "whisper", model=model)
    cases = {u.id: u for u in utterances("turn7")}

    def heard(uid: str, moments: frozenset[str]) -> Any:
        recognizer.follow(moments)
        audio = load_wav(clean_path(COMMITTED_VOICE, cases[uid]))
        return understand(matcher, recognizer.decode(recognizer.prepare(audio)), "Ann").intent

    if model == "base":
        assert heard("t7c29", frozenset({"target"})).kind == "target"  # "hint" as "Ann"
        assert heard("t7c29", frozenset()).kind in ("none", "query", "answer")
    else:
        assert heard("t7c29", frozenset({"target"})) == cases["t7c29"].intent
        assert heard("t7c29", frozenset()) == cases["t7c29"].intent
    assert heard("t7c12", frozenset({"target"})) == cases["t7c12"].intent  # "Cy"
    assert heard("t7c12", frozenset()).kind != "target"
    assert heard("t7c13", frozenset({"card"})) == cases["t7c13"].intent  # "nine"
    assert heard("t7c13", frozenset()).kind != "card"


def test_a_timeout_that_deals_a_card_says_time_first():
    """A timeout that gives the player a card (nothing to stay with, or the
    house rule expiry=hit) says "Time!" as a timeout that stays does (#73 item 10)."""
    s = Drive(Turn7Spec(["Ann", "Bob"], Turn7Options(turn_timer=10, seed=3,
                                                      house=("expiry=hit",))))
    s.start()
    said = [x.text for x in s.tick(11.5)]
    assert said[said.index("One.") + 1] == "Time! Bob takes a card."
    assert said[said.index("One.") + 2].startswith("Bob: a ")
