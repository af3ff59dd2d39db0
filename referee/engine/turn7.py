"""Turn 7: the press-your-luck card game, as pure functions of an immutable state.

From ``../shared/seeds/turn-7-card-game.txt`` and the project's decisions
(the Turn 7 section of ``../shared/rules.md``):

* A deck of 94 cards: number cards (twelve 12s down to two 2s, one 1, one 0),
  one each of the modifiers +2, +4, +6, +8, +10 and x2, and three each of the
  actions Lock, Turn Three and Life Saver. Cards are strings: ``"7"``,
  ``"+4"``, ``"x2"``, ``"lock"``, ``"turn3"``, ``"lifesaver"``.
* A round: one card dealt face up to each player in turn order (left of the
  dealer first, the dealer last), an action card resolved before the next card
  is dealt; then each active player in turn hits (one card) or stays. A
  number already in the player's row busts them (round score 0) unless they
  hold a Life Saver; a seventh different number is a Turn 7 (+15) and ends the
  round for everyone. Round score: numbers summed, doubled by x2, plus the
  flat modifiers, plus 15 for a Turn 7.
* The engine never draws: every card is a chance step (:meth:`Turn7.chance`
  lists the cards still in the deck with their probabilities) applied as a
  :class:`Draw` (a seeded virtual deck, or what a player reports of a
  physical one). A card that is not in the deck is refused.
* An action card waits for its drawer to choose a target (:class:`Target`);
  with one possible target it is played on it at once, with none it is
  discarded. During a Turn Three, a Lock or Turn Three waits until the three
  draws are done (in the order revealed); a Life Saver is kept at once (a
  second one is given away after the draws).
* The deck is not reshuffled between rounds: when it runs out (even mid-round)
  the discard pile becomes the new deck; cards in front of players stay.
* After a round in which a total reaches the target (200), the highest total
  wins; equal highest totals play a sudden-death round among themselves
  (``ties="playoff"``, the default) or share the win (``ties="share"``).

Decisions where the texts are silent (also in ``docs/rules.md``):

* A player who was locked or busted before the deal reached them is not dealt
  a card; a player who already drew cards in a Turn Three still gets their
  dealt card.
* A Lock, Turn Three or Life Saver used goes to the discard pile with the
  round's other cards; a Life Saver that saves a bust is discarded at once
  with the duplicate (they may come back in a mid-round reshuffle).
* Target choices and physical card reports are not timed; with a turn timer,
  a player whose hit-or-stay time runs out stays (``expiry="hit"``: hits; a
  player with no cards, who may not stay, always hits).
* A sudden-death round is a whole round among the tied players; the highest
  total after it wins (another one if they are still level).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from referee.engine.clock import TurnTimer
from referee.engine.core import (
    Action,
    Chance,
    Event,
    GameWon,
    IllegalAction,
    NotYourTurn,
    Outcome,
    OutOfRange,
    Rules,
    TimeIsUp,
    TimeNotUp,
    Timeout,
    TurnStarted,
    UnknownPlayer,
    describe_table_action,
)

Ties = Literal["playoff", "share"]
Expiry = Literal["stay", "hit"]
Status = Literal["active", "stayed", "locked", "bust", "turn7", "out"]

TURN7_BONUS = 15
TURN7_CARDS = 7
FORCED_DRAWS = 3
NUMBERS = tuple(str(n) for n in range(13))
BONUSES = ("+2", "+4", "+6", "+8", "+10")
MODIFIERS = (*BONUSES, "x2")
ACTIONS = ("lock", "turn3", "lifesaver")


def full_deck() -> tuple[str, ...]:
    """The 94 cards, sorted.

    >>> deck = full_deck()
    >>> len(deck), deck.count("12"), deck.count("0"), deck.count("lock")
    (94, 12, 1, 3)
    """
    cards = [str(n) for n in range(13) for _ in range(max(n, 1))]
    cards += [*MODIFIERS, *[a for a in ACTIONS for _ in range(3)]]
    return tuple(sorted(cards, key=card_order))


def card_order(card: str) -> tuple[int, int]:
    """Numbers first by value, then modifiers, then actions."""
    if card in NUMBERS:
        return (0, int(card))
    if card in MODIFIERS:
        return (1, MODIFIERS.index(card))
    return (2, ACTIONS.index(card) if card in ACTIONS else 99)


def is_card(card: str) -> bool:
    return card in NUMBERS or card in MODIFIERS or card in ACTIONS


def card_name(card: str) -> str:
    """How the referee says a card.

    >>> card_name("7"), card_name("+4"), card_name("x2"), card_name("turn3")
    ('a 7', 'plus 4', 'times 2', 'a Turn Three')
    """
    if card in NUMBERS:
        return f"an {card}" if card in ("8", "11") else f"a {card}"
    if card in BONUSES:
        return f"plus {card[1:]}"
    return {"x2": "times 2", "lock": "a Lock", "turn3": "a Turn Three",
            "lifesaver": "a Life Saver"}.get(card, card)


ACTION_NAMES = {"lock": "Lock", "turn3": "Turn Three", "lifesaver": "Life Saver"}


# --- a player's cards ------------------------------------------------------------------


@dataclass(frozen=True)
class Hand:
    """What lies in front of one player this round."""

    numbers: tuple[int, ...] = ()
    modifiers: tuple[str, ...] = ()
    #: Action cards played or set aside by this player (discarded at the round's end).
    actions: tuple[str, ...] = ()
    lifesaver: bool = False
    status: Status = "active"

    @property
    def cards(self) -> tuple[str, ...]:
        """Every card in front of the player (the Life Saver held included)."""
        held = ("lifesaver",) if self.lifesaver else ()
        return (*map(str, self.numbers), *self.modifiers, *self.actions, *held)

    @property
    def row(self) -> bool:
        """Whether the player has a number or a modifier (action cards do not count:
        a player with none may not stay)."""
        return bool(self.numbers or self.modifiers)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def score(self) -> int:
        return round_score(self.numbers, self.modifiers, turn7=self.status == "turn7",
                           bust=self.status == "bust")

    def why_out(self, player: str) -> str:
        """Why ``player``, with this hand, takes no more cards this round (a
        second "stay" is told it stayed, not that it sounds like a bust).

        >>> Hand(status="stayed").why_out("Bob")
        'Bob has already stayed.'
        >>> Hand(status="bust").why_out("Bob")
        'Bob has busted: out of this round.'
        """
        match self.status:
            case "stayed":
                return f"{player} has already stayed."
            case "locked":
                return f"{player} is locked: out of this round."
            case "bust":
                return f"{player} has busted: out of this round."
        return f"{player} is out of this round."


def round_score(numbers: Iterable[int], modifiers: Iterable[str], *, turn7: bool = False,
                bust: bool = False) -> int:
    """Numbers summed, doubled by x2, plus the flat modifiers, plus 15 for a Turn 7.

    >>> round_score([12, 9, 6], ["x2", "+4"])
    58
    >>> round_score([1, 2, 3, 4, 5, 6, 7], [], turn7=True)
    43
    """
    if bust:
        return 0
    mods = list(modifiers)
    total = sum(numbers) * (2 if "x2" in mods else 1)
    total += sum(int(m[1:]) for m in mods if m in BONUSES)
    return total + (TURN7_BONUS if turn7 else 0)


def score_parts(hand: Hand) -> str:
    """How a round score was made, in words a listener can follow: "27,
    doubled 54, plus 4, makes 58".

    >>> score_parts(Hand((12, 9, 6), ("x2", "+4"), status="stayed"))
    '27, doubled 54, plus 4, makes 58'
    >>> score_parts(Hand((), ("+4",), status="stayed"))
    'plus 4, makes 4'
    >>> score_parts(Hand((12, 9), status="stayed"))
    '21'
    >>> score_parts(Hand((5,), status="bust"))
    'bust, 0'
    """
    if hand.status == "bust":
        return "bust, 0"
    base = sum(hand.numbers)
    parts = [str(base)] if hand.numbers else []
    if "x2" in hand.modifiers and hand.numbers:
        parts.append(f"doubled {base * 2}")
    parts += [f"plus {m[1:]}" for m in hand.modifiers if m in BONUSES]
    if hand.status == "turn7":
        parts.append(f"plus {TURN7_BONUS} for Turn 7")
    if not parts:
        return "0"
    plain = len(parts) == 1 and bool(hand.numbers)
    return ", ".join(parts) + ("" if plain else f", makes {hand.score()}")


# --- actions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit(Action):
    player: str


@dataclass(frozen=True)
class Stay(Action):
    player: str


@dataclass(frozen=True)
class Draw(Action):
    """``player`` receives ``card`` from the deck (a chance step's outcome)."""

    player: str
    card: str


@dataclass(frozen=True)
class Target(Action):
    """``player`` plays the action card waiting for them on ``target``."""

    player: str
    target: str


# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundStarted(Event):
    round: int
    dealer: str
    players: tuple[str, ...]
    playoff: bool = False


@dataclass(frozen=True)
class CardDrawn(Event):
    """``player`` got ``card``; ``how`` is "deal", "hit" or "forced" (Turn Three)."""

    player: str
    card: str
    how: str
    #: The player's number total after it (numbers only; None for a bust).
    total: int | None = None


@dataclass(frozen=True)
class Busted(Event):
    player: str
    card: str


@dataclass(frozen=True)
class Saved(Event):
    """A Life Saver took a duplicate ``card``: both discarded, the player goes on."""

    player: str
    card: str


@dataclass(frozen=True)
class TurnSeven(Event):
    player: str


@dataclass(frozen=True)
class LifeSaverKept(Event):
    player: str


@dataclass(frozen=True)
class ChooseTarget(Event):
    """``player`` must choose who gets ``card``: one of ``targets``."""

    player: str
    card: str
    targets: tuple[str, ...]


@dataclass(frozen=True)
class ActionPlayed(Event):
    """``player`` played ``card`` on ``target``; ``only`` when nobody else could get it."""

    player: str
    card: str
    target: str
    only: bool = False
    #: A Lock's target's round score (they keep their row).
    score: int | None = None


@dataclass(frozen=True)
class ActionDiscarded(Event):
    player: str
    card: str
    why: str


@dataclass(frozen=True)
class ActionSetAside(Event):
    """A Lock or Turn Three revealed during a Turn Three waits for the draws to end."""

    player: str
    card: str


@dataclass(frozen=True)
class Stayed(Event):
    player: str
    score: int
    timed_out: bool = False


@dataclass(frozen=True)
class TimeUpHit(Event):
    """A player's time ran out with nothing to stay with (or the house rule
    makes a timeout a hit): they take a card."""

    player: str


@dataclass(frozen=True)
class DeckShuffled(Event):
    cards: int


@dataclass(frozen=True)
class RoundScored(Event):
    round: int
    #: (player, round score, how it was made) in turn order.
    scores: tuple[tuple[str, int, str], ...]
    #: Every player's total after the round, in seat order.
    totals: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PlayoffStarted(Event):
    players: tuple[str, ...]
    total: int


# --- rejections ---------------------------------------------------------------------------


class NotInDeck(IllegalAction):
    """A reported card that cannot be in the deck (all of them are out)."""


class NoTarget(IllegalAction):
    """A target who cannot receive the card (not active, or has a Life Saver)."""


class WaitForCard(IllegalAction):
    """A move while the game waits for a card to be drawn."""


# --- state ----------------------------------------------------------------------------------


Phase = Literal["deal", "play", "over"]


@dataclass(frozen=True)
class Waiting:
    """An action card waiting for its drawer to choose a target."""

    card: str
    player: str


@dataclass(frozen=True)
class Turn7State:
    players: tuple[str, ...]
    totals: tuple[int, ...]
    #: Index into ``players`` of this round's dealer.
    dealer: int
    round: int
    #: Who plays this round, in turn order (the dealer last).
    order: tuple[str, ...]
    hands: tuple[Hand, ...]
    deck: tuple[str, ...]
    discard: tuple[str, ...] = ()
    #: How many times the deck was made from the discard pile, and what it held then.
    shuffles: int = 0
    shuffled: tuple[str, ...] = field(default_factory=full_deck)
    phase: Phase = "deal"
    #: Index into ``order`` of the player being dealt to, or whose turn it is.
    at: int = 0
    #: The player who said "hit" and waits for the card.
    drawing: str | None = None
    #: A Turn Three being played: (player, draws left).
    forced: tuple[str, int] | None = None
    #: Action cards waiting for a target, in the order revealed.
    waiting: tuple[Waiting, ...] = ()
    timer: TurnTimer = field(default_factory=lambda: TurnTimer.start(None, 0.0))
    turn_number: int = 0
    #: Each finished round's scores, in order: ((player, score), ...).
    history: tuple[tuple[tuple[str, int], ...], ...] = ()
    #: The sudden-death players, while a play-off round is played.
    playoff: tuple[str, ...] = ()
    winners: tuple[str, ...] = ()
    stopped: bool = False

    @property
    def over(self) -> bool:
        return bool(self.winners) or self.stopped

    def index(self, player: str) -> int:
        return self.players.index(player)

    def hand(self, player: str) -> Hand:
        return self.hands[self.index(player)]

    def total(self, player: str) -> int:
        return self.totals[self.index(player)]

    @property
    def active(self) -> tuple[str, ...]:
        """Players still in the round (dealt or not), in turn order."""
        return tuple(p for p in self.order if self.hand(p).active)

    @property
    def deciding(self) -> str | None:
        """The player who must say hit or stay now (None while something else waits)."""
        if (self.over or self.phase != "play" or self.drawing or self.forced or self.waiting):
            return None
        return self.order[self.at]

    @property
    def on_table(self) -> tuple[str, ...]:
        """Every card in front of the players."""
        return tuple(card for hand in self.hands for card in hand.cards)

    def seen(self) -> tuple[str, ...]:
        """Cards out of the deck since the last shuffle (the table and the discard
        pile of this deck), i.e. ``shuffled`` minus the deck."""
        left = Counter(self.shuffled)
        left.subtract(self.deck)
        return tuple(sorted(left.elements(), key=card_order))

    def with_hand(self, player: str, hand: Hand) -> Turn7State:
        hands = list(self.hands)
        hands[self.index(player)] = hand
        return replace(self, hands=tuple(hands))


@dataclass(frozen=True)
class Turn7Config:
    target: int = 200
    ties: Ties = "playoff"
    expiry: Expiry = "stay"
    #: Seconds for each hit-or-stay decision (None: untimed).
    turn_seconds: float | None = None
    #: Index of the first round's dealer in the players as named.
    dealer: int = 0

    def __post_init__(self) -> None:
        if self.target < 1:
            raise ValueError(f"the target is a positive score, not {self.target}")
        if self.ties not in ("playoff", "share"):
            raise ValueError(f"ties are played off or shared, not {self.ties!r}")
        if self.expiry not in ("stay", "hit"):
            raise ValueError(f"when time runs out the player stays or hits, not {self.expiry!r}")
        if self.turn_seconds is not None and not 3 <= self.turn_seconds <= 600:
            raise ValueError(f"a turn timer is 3 to 600 seconds, not {self.turn_seconds:g}")


def deal_order(players: Sequence[str], dealer: int) -> tuple[str, ...]:
    """Left of the dealer first, the dealer last.

    >>> deal_order(["Ann", "Bob", "Cy"], 0)
    ('Bob', 'Cy', 'Ann')
    """
    n = len(players)
    return tuple(players[(dealer + 1 + i) % n] for i in range(n))


def bust_chance(hand: Hand, deck: Sequence[str]) -> float:
    """The chance that the next card from ``deck`` busts ``hand`` (0 with a Life Saver)."""
    if hand.lifesaver or not deck:
        return 0.0
    return sum(1 for card in deck if card in NUMBERS and int(card) in hand.numbers) / len(deck)


def expected_after_hit(hand: Hand, deck: Sequence[str]) -> float:
    """The expected round score after exactly one more card from ``deck``.

    Numbers and modifiers score as the rules say; an action card leaves the
    row as it is (its holder chooses where it goes), and so does a duplicate
    a Life Saver takes.
    """
    if not deck:
        return float(hand.score())
    counts = Counter(deck)
    total = 0.0
    for card, count in counts.items():
        total += count * _score_with(hand, card)
    return total / len(deck)


def _score_with(hand: Hand, card: str) -> int:
    if card in NUMBERS:
        n = int(card)
        if n in hand.numbers:
            return hand.score() if hand.lifesaver else 0
        numbers = (*hand.numbers, n)
        return round_score(numbers, hand.modifiers, turn7=len(set(numbers)) >= TURN7_CARDS)
    if card in MODIFIERS:
        return round_score(hand.numbers, (*hand.modifiers, card))
    return hand.score()


class Turn7(Rules[Turn7State]):
    name = "turn7"

    def __init__(self, config: Turn7Config | None = None) -> None:
        self.config = config or Turn7Config()

    # contract ------------------------------------------------------------------------
    def initial_state(self, players: Sequence[str], at: float) -> Turn7State:
        names = tuple(players)
        if len(names) < 2:
            raise ValueError("Turn 7 needs at least two players")
        if len({n.casefold() for n in names}) != len(names):
            raise ValueError("every player needs a different name")
        dealer = self.config.dealer % len(names)
        order = deal_order(names, dealer)
        return Turn7State(players=names, totals=(0,) * len(names), dealer=dealer, round=1,
                          order=order, hands=(Hand(),) * len(names), deck=full_deck(),
                          timer=TurnTimer.start(None, at))

    def players(self, state: Turn7State) -> tuple[str, ...]:
        return state.players

    def current_player(self, state: Turn7State) -> str | None:
        """Whom the game waits for: the receiver of the next card, the chooser of
        a target, or the player who must hit or stay."""
        if state.over:
            return None
        if state.waiting and not state.forced:
            return state.waiting[0].player
        receiver = self._receiver(state)
        return receiver if receiver is not None else state.deciding

    def outcome(self, state: Turn7State) -> Outcome | None:
        if state.winners:
            return Outcome(state.winners)
        if state.stopped:
            return Outcome((), stopped=True)
        return None

    def deadline(self, state: Turn7State) -> float | None:
        return None if state.deciding is None else state.timer.deadline()

    def chance(self, state: Turn7State) -> Chance | None:
        """The next card, when the game waits for one: every card still in the
        deck, as likely as its copies there."""
        receiver = self._receiver(state)
        if receiver is None:
            return None
        counts = Counter(state.deck)
        size = len(state.deck)
        outcomes = tuple((Draw(receiver, card), count / size)
                         for card, count in sorted(counts.items(),
                                                   key=lambda kv: card_order(kv[0])))
        return Chance(f"{receiver}'s card", outcomes)

    def legal_actions(self, state: Turn7State) -> list[Action]:
        if state.over:
            return []
        chance = self.chance(state)
        if chance is not None:
            return [action for action, _ in chance.outcomes]
        if state.waiting and not state.forced:
            pending = state.waiting[0]
            return [Target(pending.player, t) for t in self.targets(state, pending)]
        player = state.deciding
        if player is None:
            return []
        hits: list[Action] = [Hit(player)]
        return hits + ([Stay(player)] if state.hand(player).row else [])

    def describe(self, action: Action) -> str:
        if isinstance(action, Hit):
            return f"{action.player} hits"
        if isinstance(action, Stay):
            return f"{action.player} stays"
        if isinstance(action, Draw):
            return f"{action.player} gets {action.card}"
        if isinstance(action, Target):
            return f"{action.player} targets {action.target}"
        return describe_table_action(action) or repr(action)

    def restore(self, state: Turn7State, moved_at: float, at: float) -> Turn7State:
        return replace(state, timer=state.timer.restored(moved_at, at))

    def stopped(self, state: Turn7State) -> Turn7State:
        return replace(state, stopped=True)

    def timer(self, state: Turn7State) -> TurnTimer:
        return state.timer

    def with_timer(self, state: Turn7State, timer: TurnTimer) -> Turn7State:
        return replace(state, timer=timer)

    def play(self, state: Turn7State, action: Action,
             at: float) -> tuple[Turn7State, list[Event]]:
        if isinstance(action, Timeout):
            return self._timeout(state, at)
        if isinstance(action, Draw):
            return self._draw(state, action, at)
        if isinstance(action, Target):
            return self._target(state, action, at)
        if isinstance(action, Hit | Stay):
            self._check_decision(state, action.player, at)
            if isinstance(action, Hit):
                return replace(state, drawing=action.player), []
            if not state.hand(action.player).row:
                raise IllegalAction(f"{action.player}, you have no cards yet: you must hit.")
            return self._stay(state, action.player, at)
        raise IllegalAction(f"Turn 7 has no such action: {action!r}.")

    # checks -----------------------------------------------------------------------------
    def _check_player(self, state: Turn7State, player: str) -> None:
        if player not in state.players:
            raise UnknownPlayer(f"There is no player called {player}.")

    def _check_decision(self, state: Turn7State, player: str, at: float) -> None:
        self._check_player(state, player)
        if player not in state.order or not state.hand(player).active:
            raise NotYourTurn(state.hand(player).why_out(player))
        receiver = self._receiver(state)
        if receiver is not None:
            raise WaitForCard(f"First, {receiver}'s card: what is it?")
        if state.waiting:
            pending = state.waiting[0]
            raise IllegalAction(f"First, {pending.player}: who gets the "
                                f"{ACTION_NAMES[pending.card]}?")
        deciding = state.deciding
        if deciding != player:
            raise NotYourTurn(f"It's {deciding}'s turn, not {player}'s.")
        if state.timer.expired(at):
            raise TimeIsUp(f"Time is up for {player}.")

    def _receiver(self, state: Turn7State) -> str | None:
        """Who gets the next card from the deck (None: no card is due)."""
        if state.over:
            return None
        if state.forced is not None:
            return state.forced[0]
        if state.waiting:
            return None
        if state.drawing is not None:
            return state.drawing
        if state.phase == "deal":
            return state.order[state.at]
        return None

    def targets(self, state: Turn7State, pending: Waiting) -> tuple[str, ...]:
        """Who may get ``pending``'s card: any active player (the drawer too); for a
        Life Saver given away, an active player other than the drawer who has none."""
        active = state.active
        if pending.card == "lifesaver":
            return tuple(p for p in active if p != pending.player
                         and not state.hand(p).lifesaver)
        return active

    # drawing ---------------------------------------------------------------------------
    def _draw(self, state: Turn7State, draw: Draw, at: float) -> tuple[Turn7State, list[Event]]:
        self._check_player(state, draw.player)
        receiver = self._receiver(state)
        if receiver is None:
            raise IllegalAction("No card is due now.")
        if draw.player != receiver:
            raise NotYourTurn(f"The card is {receiver}'s, not {draw.player}'s.")
        if not is_card(draw.card):
            raise OutOfRange(f"There is no card {draw.card} in Turn 7.")
        if draw.card not in state.deck:
            raise NotInDeck(self._not_in_deck(state, draw.card))
        deck = list(state.deck)
        deck.remove(draw.card)
        how = "forced" if state.forced else ("hit" if state.drawing else "deal")
        state = replace(state, deck=tuple(deck), drawing=None)
        state, events = self._receive(state, receiver, draw.card, how)
        if state.forced is not None:  # a Turn Three not ended by a bust or a Turn 7
            player, left = state.forced
            state = replace(state, forced=(player, left - 1) if left > 1 else None)
        state, more = self._settle(state, at)
        events += more
        if not state.deck:
            state, shuffled = self._reshuffle(state)
            events += shuffled
        return state, events

    def _not_in_deck(self, state: Turn7State, card: str) -> str:
        copies = full_deck().count(card)
        name = card_name(card).split(" ", 1)[-1]
        if copies == 1:
            where = "on the table" if card in state.on_table else "out since the last shuffle"
            return f"There is only one {name} and it is {where}. What card did you get?"
        return (f"All {copies} of the {name}s are out since the last shuffle. "
                "What card did you get?")

    def _reshuffle(self, state: Turn7State) -> tuple[Turn7State, list[Event]]:
        """The deck ran out: the discard pile, shuffled, is the new deck. (It is
        never empty then: at most 71 of the 94 cards fit in front of 8 players.)"""
        deck = tuple(sorted(state.discard, key=card_order))
        state = replace(state, deck=deck, discard=(), shuffles=state.shuffles + 1,
                        shuffled=deck)
        return state, [DeckShuffled(len(deck))]

    def _receive(self, state: Turn7State, player: str, card: str,
                 how: str) -> tuple[Turn7State, list[Event]]:
        """``player`` gets ``card``: its effect, at once or set aside."""
        hand = state.hand(player)
        if card in NUMBERS:
            n = int(card)
            if n in hand.numbers and hand.lifesaver:
                state = state.with_hand(player, replace(hand, lifesaver=False))
                state = replace(state, discard=(*state.discard, card, "lifesaver"))
                return state, [CardDrawn(player, card, how, sum(hand.numbers)),
                               Saved(player, card)]
            if n in hand.numbers:
                busted = replace(hand, numbers=(*hand.numbers, n), status="bust")
                state = replace(state.with_hand(player, busted), forced=None)
                return state, [CardDrawn(player, card, how, None), Busted(player, card)]
            hand = replace(hand, numbers=(*hand.numbers, n))
            drawn = CardDrawn(player, card, how, sum(hand.numbers))
            if len(set(hand.numbers)) >= TURN7_CARDS:
                state = state.with_hand(player, replace(hand, status="turn7"))
                return replace(state, forced=None), [drawn, TurnSeven(player)]
            return state.with_hand(player, hand), [drawn]
        if card in MODIFIERS:
            hand = replace(hand, modifiers=(*hand.modifiers, card))
            return state.with_hand(player, hand), [
                CardDrawn(player, card, how, sum(hand.numbers))]
        drawn = CardDrawn(player, card, how, sum(hand.numbers))
        if card == "lifesaver" and not hand.lifesaver:
            state = state.with_hand(player, replace(hand, lifesaver=True))
            return state, [drawn, LifeSaverKept(player)]
        state = replace(state, waiting=(*state.waiting, Waiting(card, player)))
        if state.forced is not None:
            return state, [drawn, ActionSetAside(player, card)]
        return state, [drawn]

    def _settle(self, state: Turn7State, at: float) -> tuple[Turn7State, list[Event]]:
        """After a card or a target: end the round, wait for a Turn Three's next
        draw, play the waiting action cards (those with one possible target at
        once; with several, ask), or move the game on."""
        events: list[Event] = []
        while True:
            if self._round_over(state):
                state, more = self._end_round(state, at)
                return state, events + more
            if state.forced is not None:
                return state, events
            if not state.waiting:
                state, more = self._advance(state, at)
                return state, events + more
            pending = state.waiting[0]
            targets = self.targets(state, pending)
            why = ""
            if state.hand(pending.player).status == "bust":
                why = f"{pending.player} busted"
            elif not targets:
                why = "nobody can take it"
            if why:
                state = replace(state, waiting=state.waiting[1:],
                                discard=(*state.discard, pending.card))
                events.append(ActionDiscarded(pending.player, pending.card, why))
            elif len(targets) == 1:
                state, played = self._play_action(state, pending, targets[0], only=True)
                events += played
            else:
                return state, [*events, ChooseTarget(pending.player, pending.card, targets)]

    def _play_action(self, state: Turn7State, pending: Waiting, target: str,
                     only: bool = False) -> tuple[Turn7State, list[Event]]:
        state = replace(state, waiting=state.waiting[1:])
        if pending.card == "lifesaver":
            hand = state.hand(target)
            state = state.with_hand(target, replace(hand, lifesaver=True))
            return state, [ActionPlayed(pending.player, pending.card, target, only)]
        giver = state.hand(pending.player)
        state = state.with_hand(pending.player,
                                replace(giver, actions=(*giver.actions, pending.card)))
        hand = state.hand(target)
        if pending.card == "lock":
            state = state.with_hand(target, replace(hand, status="locked"))
            return state, [ActionPlayed(pending.player, pending.card, target, only,
                                        hand.score())]
        state = replace(state, forced=(target, FORCED_DRAWS))
        return state, [ActionPlayed(pending.player, pending.card, target, only)]

    def _target(self, state: Turn7State, action: Target,
                at: float) -> tuple[Turn7State, list[Event]]:
        self._check_player(state, action.player)
        self._check_player(state, action.target)
        if not state.waiting or state.forced is not None:
            raise IllegalAction("There is no action card to play now.")
        pending = state.waiting[0]
        name = ACTION_NAMES[pending.card]
        if action.player != pending.player:
            raise NotYourTurn(f"{pending.player} drew the {name} and chooses who gets it.")
        targets = self.targets(state, pending)
        if action.target not in targets:
            raise NoTarget(self._why_not(state, pending, action.target, targets))
        state, events = self._play_action(state, pending, action.target)
        state, more = self._settle(state, at)
        return state, events + more

    def _why_not(self, state: Turn7State, pending: Waiting, target: str,
                 targets: tuple[str, ...]) -> str:
        if pending.card == "lifesaver" and target == pending.player:
            why = "you give the second Life Saver to somebody else"
        elif pending.card == "lifesaver" and state.hand(target).lifesaver:
            why = f"{target} already has a Life Saver"
        else:
            why = f"{target} is out of this round"
        return f"Not {target}: {why}. The {ACTION_NAMES[pending.card]} can go to " \
               f"{either(targets)}."

    def _stay(self, state: Turn7State, player: str, at: float,
              timed_out: bool = False) -> tuple[Turn7State, list[Event]]:
        hand = state.hand(player)
        state = state.with_hand(player, replace(hand, status="stayed"))
        state, more = self._advance(state, at)
        return state, [Stayed(player, hand.score(), timed_out), *more]

    def _timeout(self, state: Turn7State, at: float) -> tuple[Turn7State, list[Event]]:
        player = state.deciding
        deadline = self.deadline(state)
        if player is None or deadline is None or at < deadline:
            raise TimeNotUp("Time is not up yet.")
        if self.config.expiry == "hit" or not state.hand(player).row:
            return replace(state, drawing=player), [TimeUpHit(player)]
        return self._stay(state, player, at, timed_out=True)

    # the flow of a round ---------------------------------------------------------------------
    def _round_over(self, state: Turn7State) -> bool:
        """A Turn 7 ends the round at once; otherwise it ends when nobody is active
        (in the deal too: everybody locked or busted before their card)."""
        return any(state.hand(p).status == "turn7" for p in state.order) or not state.active

    def _advance(self, state: Turn7State, at: float) -> tuple[Turn7State, list[Event]]:
        """Nothing waits: deal the next card, or give the next active player their turn."""
        if self._round_over(state):
            return self._end_round(state, at)
        n = len(state.order)
        active = [i for i in range(n) if state.hand(state.order[i]).active]
        if state.phase == "deal":
            later = [i for i in active if i > state.at]
            if later:
                return replace(state, at=later[0]), []
            return self._start_turn(replace(state, phase="play", at=active[0]), at)
        after = [i for i in active if i > state.at] or active
        return self._start_turn(replace(state, at=after[0]), at)

    def _start_turn(self, state: Turn7State, at: float) -> tuple[Turn7State, list[Event]]:
        number = state.turn_number + 1
        timer = TurnTimer.start(self.config.turn_seconds, at)
        state = replace(state, timer=timer, turn_number=number)
        return state, [TurnStarted(state.order[state.at], number, self.config.turn_seconds)]

    def _end_round(self, state: Turn7State, at: float) -> tuple[Turn7State, list[Event]]:
        scores = tuple((p, state.hand(p).score(), score_parts(state.hand(p)))
                       for p in state.order)
        totals = list(state.totals)
        for player, score, _ in scores:
            totals[state.index(player)] += score
        discard = (*state.discard, *state.on_table, *(w.card for w in state.waiting))
        state = replace(state, totals=tuple(totals), discard=discard,
                        hands=(Hand(),) * len(state.players), waiting=(), forced=None,
                        drawing=None,
                        history=(*state.history, tuple((p, s) for p, s, _ in scores)))
        events: list[Event] = [RoundScored(state.round, scores,
                                           tuple(zip(state.players, totals, strict=True)))]
        reached = any(t >= self.config.target for t in totals)
        if state.playoff or reached:
            contenders = state.playoff or state.players
            best = max(state.total(p) for p in contenders)
            tied = tuple(p for p in contenders if state.total(p) == best)
            if len(tied) == 1 or self.config.ties == "share":
                return replace(state, winners=tied, phase="over"), [*events, GameWon(tied)]
            events.append(PlayoffStarted(tied, best))
            state = replace(state, playoff=tied)
        return self._new_round(state, events)

    def _new_round(self, state: Turn7State,
                   events: list[Event]) -> tuple[Turn7State, list[Event]]:
        dealer = (state.dealer + 1) % len(state.players)
        order = deal_order(state.players, dealer)
        if state.playoff:
            order = tuple(p for p in order if p in state.playoff)
        hands = tuple(Hand() if p in order else Hand(status="out") for p in state.players)
        state = replace(state, dealer=dealer, round=state.round + 1, order=order, hands=hands,
                        phase="deal", at=0)
        events.append(RoundStarted(state.round, state.players[dealer], order,
                                   bool(state.playoff)))
        return state, events


def either(names: Sequence[str]) -> str:
    """One of several names, in words.

    >>> either(["Ann", "Bob", "Cy"])
    'Ann, Bob or Cy'
    """
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} or {names[-1]}"


__all__ = [
    "ActionDiscarded",
    "ActionPlayed",
    "ActionSetAside",
    "Busted",
    "CardDrawn",
    "ChooseTarget",
    "DeckShuffled",
    "Draw",
    "Hand",
    "Hit",
    "LifeSaverKept",
    "NoTarget",
    "NotInDeck",
    "PlayoffStarted",
    "RoundScored",
    "RoundStarted",
    "Saved",
    "Stay",
    "Stayed",
    "Target",
    "TimeUpHit",
    "Turn7",
    "Turn7Config",
    "Turn7State",
    "TurnSeven",
    "bust_chance",
    "card_name",
    "card_order",
    "deal_order",
    "expected_after_hit",
    "full_deck",
    "round_score",
    "score_parts",
]
