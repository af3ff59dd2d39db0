"""Turn 7 at the table: the deck (virtual or physical), intents to actions, what
the referee says, and the exact odds.

Decisions (also in ``docs/playing.md``):

* **The deck.** ``--deck virtual`` (the default): the referee shuffles and
  announces every card ("Ann: a 9, for 21."). The order of each deck is a
  pure function of the seed and how many times the deck was made
  (:func:`deck_order`), so a replayed log, an undo and a resume deal the same
  cards: after "undo" of a hit, the card goes back on top. ``--deck
  physical``: the players deal and draw real cards and say what came ("nine",
  "I got plus four", "lock"); the referee asks for each card in the deal and
  after each hit, and refuses a card that cannot be in the deck.
* **Who says a card.** A reported card is the card of whoever the referee is
  waiting for, whoever reports it (the dealer often reads it out).
* **Targets.** An action card's drawer names the target ("lock Bob", "turn
  three on me", "give the life saver to Cy", or a bare name when asked). With
  one possible target the referee plays it at once and says so.
* **"stay" and "stop".** "stop" only ever cuts the referee's speech and is
  acted on only while it speaks; "stay" is a move. The recogniser decodes the
  game's sentences, so the two are different sentences with their own
  scores; a "stay" heard unsurely, or over the referee's voice, is asked
  about ("Ann, do you stay, and keep this round's points?") and never
  played on a guess. The recognition benchmark reports how often one is
  taken for the other.
* **Odds.** "what are my odds" and "hint" answer from the cards still in the
  deck (the last shuffle's cards minus every card out since), exactly:
  :func:`~referee.games.turn7.odds.odds`; ``referee hint turn7`` prints the same as JSON.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.engine.core import (
    Action,
    Chance,
    Event,
    Game,
    GameWon,
    IllegalAction,
    TurnStarted,
)
from referee.engine.turn7 import (
    ACTION_NAMES,
    ActionDiscarded,
    ActionPlayed,
    ActionSetAside,
    Busted,
    CardDrawn,
    ChooseTarget,
    DeckShuffled,
    Draw,
    Hand,
    Hit,
    LifeSaverKept,
    PlayoffStarted,
    RoundScored,
    RoundStarted,
    Saved,
    Stay,
    Stayed,
    Target,
    TimeUpHit,
    Turn7,
    Turn7Config,
    Turn7State,
    TurnSeven,
    card_name,
    card_order,
    full_deck,
    is_card,
)
from referee.games.base import (
    GameSpec,
    Intent,
    Options,
    SetupError,
    Tool,
    option,
    parse_house_rules,
    plural,
    sentence,
    spoken_list,
)
from referee.games.turn7.odds import hint, hint_arguments, odds

HOUSE_RULES = {
    "ties": ("playoff", "share"),
    "expiry": ("stay", "hit"),
}

#: The next card of a virtual deck, given the game's state.
Dealer = Callable[[Turn7State], str]


def deck_order(seed: int, shuffles: int, cards: Sequence[str]) -> list[str]:
    """The order of the deck made for the ``shuffles``-th time from ``cards``.

    >>> deck_order(7, 0, ["1", "2", "3"]) == deck_order(7, 0, ["3", "2", "1"])
    True
    """
    order = sorted(cards, key=card_order)
    random.Random(f"turn7/{seed}/{shuffles}").shuffle(order)
    return order


def seeded_dealer(seed: int, top: Sequence[str] = ()) -> Dealer:
    """A virtual deck: each deck's order from the seed (:func:`deck_order`); the
    first deck may start with ``top`` (tests stack it)."""

    def next_card(state: Turn7State) -> str:
        order = deck_order(seed, state.shuffles, state.shuffled)
        if state.shuffles == 0 and top:
            rest = Counter(state.shuffled)
            rest.subtract(top)
            tail = []
            for card in order:
                if rest[card] > 0:
                    tail.append(card)
                    rest[card] -= 1
            order = [*top, *tail]
        drawn = len(state.shuffled) - len(state.deck)
        left = Counter(state.deck)
        for card in order[drawn:]:  # the next card still in the deck
            if left[card] > 0:
                return card
        return sorted(state.deck, key=card_order)[0]

    return next_card


def _receiver(chance: Chance) -> str:
    """Whose card a chance step of Turn 7 is."""
    return next(a.player for a, _ in chance.outcomes if isinstance(a, Draw))


# --- options and the spec --------------------------------------------------------------------


@dataclass(frozen=True)
class Turn7Options(Options):
    deck: str = option("virtual", "the referee deals (virtual) or players use real cards",
                       choices=("virtual", "physical"))
    seed: int | None = option(None, "seed for the virtual deck")
    target: int = option(200, "the total that ends the game")
    turn_timer: int | None = option(None, "seconds to say hit or stay (default: no timer)",
                                    metavar="SECONDS")
    dealer: str | None = option(None, "who deals the first round (default: the first named)",
                                metavar="NAME")


class Turn7Spec(GameSpec):
    name = "turn7"
    phrase_file = Path(__file__).with_name("phrases.toml")
    aliases = ("turn-7", "turn-seven")
    summary = "Turn 7: hit or stay, seven different numbers, first to 200"
    tools = (Tool("hint", "the exact odds of one more card in Turn 7", hint_arguments,
                  hint),)
    min_players = 2
    max_players = 8
    options_type = Turn7Options
    options: Turn7Options

    def __init__(self, players: Sequence[str], options: Turn7Options | None = None,
                 top: Sequence[str] = ()) -> None:
        super().__init__(players, options)
        house = parse_house_rules(self.options.house, HOUSE_RULES)
        dealer = self.player_named(self.options.dealer) if self.options.dealer else None
        first = self.first_player()
        if dealer is None and first is not None:  # --first: the dealer sits before them
            dealer = self.players[(self.players.index(first) - 1) % len(self.players)]
        try:
            self.config = Turn7Config(
                target=self.options.target, ties=house["ties"],  # type: ignore[arg-type]
                expiry=house["expiry"],  # type: ignore[arg-type]
                turn_seconds=(None if self.options.turn_timer is None
                              else float(self.options.turn_timer)),
                dealer=0 if dealer is None else self.players.index(dealer))
        except ValueError as error:
            raise SetupError(sentence(str(error)) + ".") from error
        self.physical = self.options.deck == "physical"
        #: The virtual deck's seed, chosen now when none is given and kept in the
        #: options, so that the game log deals the same cards (``referee resume``).
        self.seed: int = (random.randrange(2**31) if self.options.seed is None
                          else self.options.seed)
        self.options = replace(self.options, seed=self.seed)
        bad = [c for c in top if not is_card(c)]
        if bad:
            raise SetupError(f"There is no card {bad[0]!r} in Turn 7.")
        #: Where virtual cards come from. Tests stack the deck with ``top``.
        self.dealer: Dealer = seeded_dealer(self.seed, top)
        self.rules = Turn7(self.config)

    # --- set-up -------------------------------------------------------------------------
    def new_game(self, at: float) -> Game[Turn7State]:
        if self.games_begun > 1:  # "play again": a deck of its own (no stacked top)
            self.dealer = seeded_dealer(self.game_seed(self.seed))
        return Game(self.rules, self.players, at)

    def opening(self, game: Game[Any]) -> str:
        state: Turn7State = game.state
        deck = ("you deal and draw real cards and tell me each one" if self.physical
                else "I shuffle and deal, and say every card")
        timer = (f" {self.config.turn_seconds:g} seconds to say hit or stay."
                 if self.config.turn_seconds else "")
        return (f"Turn 7 for {spoken_list(state.players)}, to {self.config.target}: {deck}."
                f"{timer} Round 1: {state.players[state.dealer]} deals.")

    def reset(self, game: Game[Any]) -> str:
        """Real cards go back into the deck; a virtual deck has nothing to put back."""
        return "Everyone, gather all the cards and shuffle the deck." if self.physical else ""

    def where_we_are(self, game: Game[Any], at: float) -> str:
        text = self.answer("turn", None, game, at)
        if self.config.turn_seconds and game.deadline() is not None:
            text += " " + self.answer("time", None, game, at)
        return text

    # --- intents to actions ---------------------------------------------------------------
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        state: Turn7State = game.state
        kind = intent.kind
        if kind == "hit":
            return Hit(speaker)
        if kind == "stay":
            return Stay(speaker)
        if kind == "target":
            return self._target(intent, speaker, state)
        if kind == "card":
            return self._reported(intent, game)
        raise ValueError(f"no action for intent {intent}")

    def _target(self, intent: Intent, speaker: str, state: Turn7State) -> Action:
        card = intent.get("card")
        waiting = state.waiting[0] if state.waiting and state.forced is None else None
        if waiting is None:
            raise IllegalAction("There is no action card to play now.")
        if card is not None and card != waiting.card:
            raise IllegalAction(f"{waiting.player}, the card to play is the "
                                f"{ACTION_NAMES[waiting.card]}: who gets it?")
        return Target(speaker, str(intent["player"]))

    def _reported(self, intent: Intent, game: Game[Any]) -> Action:
        if not self.physical:
            raise IllegalAction("I deal the cards in this game: say hit or stay.")
        chance = game.chance()
        if chance is None:
            raise IllegalAction("No card is due now.")
        receiver = _receiver(chance)
        if intent.get("number") is not None:
            card = str(intent["number"])
        elif intent.get("bonus") is not None:
            card = f"+{intent['bonus']}"
            if card not in full_deck():
                raise IllegalAction(f"There is no plus {intent['bonus']} card: bonus cards "
                                    "are plus 2, 4, 6, 8 and 10.")
        else:
            card = str(intent["special"])
        return Draw(receiver, card)

    def confirm_tap(self, intent: Intent) -> bool:
        """ "stay" tapped on a seat page is asked about first: it ends the
        player's round."""
        return intent.kind == "stay"

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """Virtual deck: the next card of the seeded deck (``--seed``, logged)."""
        if self.physical:
            return None
        state: Turn7State = game.state
        card = self.dealer(state)
        return next(a for a, _ in chance.outcomes if isinstance(a, Draw) and a.card == card)

    def moments(self, game: Game[Any]) -> frozenset[str]:
        """ "target" while an action card waits for its drawer's choice; "card"
        while the referee waits for a card of a physical deck."""
        state: Turn7State = game.state
        now = set()
        if state.waiting and state.forced is None:
            now.add("target")
        if self.physical and game.chance() is not None:
            now.add("card")
        return frozenset(now)

    def ask_chance(self, chance: Chance, game: Game[Any]) -> str:
        state: Turn7State = game.state
        receiver = _receiver(chance)
        if state.forced is not None:
            nth = 3 - state.forced[1] + 1
            return f"{receiver}, draw card {nth} of 3 and tell me what it is."
        if state.drawing is not None:
            return f"{receiver}, draw a card and tell me what it is."
        dealer = state.players[state.dealer]
        return f"{dealer}, deal {'yourself' if dealer == receiver else receiver} a card: " \
               f"{receiver}, what is it?"

    # --- events to sentences -----------------------------------------------------------------
    def announce(self, event: Event, game: Game[Any]) -> str:
        if isinstance(event, CardDrawn):
            return self._card(event)
        if isinstance(event, Busted):
            return (f"Bust: {event.player} already has {card_name(event.card)}. "
                    f"{event.player} scores nothing this round.")
        if isinstance(event, Saved):
            return (f"{event.player}'s Life Saver takes the second {event.card}: both are "
                    f"discarded, and {event.player} plays on.")
        if isinstance(event, TurnSeven):
            return (f"Turn 7! {event.player} has seven different numbers: plus 15, and the "
                    "round is over.")
        if isinstance(event, LifeSaverKept):
            return "" if self.brief else f"{event.player} keeps the Life Saver."
        if isinstance(event, ActionSetAside):
            return f"The {ACTION_NAMES[event.card]} waits until the three cards are done."
        if isinstance(event, ChooseTarget):
            return self._choose(event)
        if isinstance(event, ActionPlayed):
            return self._played(event)
        if isinstance(event, ActionDiscarded):
            return f"The {ACTION_NAMES[event.card]} is discarded: {event.why}."
        if isinstance(event, Stayed):
            time = "Time! " if event.timed_out else ""
            return f"{time}{event.player} stays with {event.score}."
        if isinstance(event, TimeUpHit):
            return f"Time! {event.player} takes a card."
        if isinstance(event, DeckShuffled):
            if self.physical:
                return (f"The deck is out: shuffle the discard pile, {event.cards} cards, "
                        "into a new deck.")
            return f"The deck ran out: I shuffle the {event.cards} discarded cards."
        if isinstance(event, RoundScored):
            return self._scored(event)
        if isinstance(event, PlayoffStarted):
            return (f"{spoken_list(event.players)} tie with {event.total}: a sudden-death "
                    "round between them.")
        if isinstance(event, RoundStarted):
            return f"Round {event.round}: {event.dealer} deals."
        if isinstance(event, TurnStarted):
            return self._turn_prompt(game.state, event.player)
        if isinstance(event, GameWon):
            state: Turn7State = game.state
            total = state.total(event.winners[0])
            if len(event.winners) > 1:
                return f"{spoken_list(event.winners)} share the win with {total}!"
            return f"{event.winners[0]} wins with {total}!"
        return ""

    def _card(self, event: CardDrawn) -> str:
        said = f"{event.player}: {card_name(event.card)}"
        if event.total is None or self.brief or not event.card.isdigit() or event.how == "deal":
            return said + "."
        return f"{said}, for {event.total}."

    def _choose(self, event: ChooseTarget) -> str:
        who = spoken_list(event.targets).replace(" and ", " or ")
        if event.card == "lifesaver":
            return (f"{event.player} already has a Life Saver. {event.player}, who gets "
                    f"this one: {who}?")
        return f"{event.player}, who gets the {ACTION_NAMES[event.card]}: {who}?"

    def _played(self, event: ActionPlayed) -> str:
        only = (f"{event.target} is the only one who can take it: " if event.only else "")
        if event.card == "lock":
            return f"{only}{event.target} is locked with {event.score}."
        if event.card == "turn3":
            return f"{only}{event.target} draws three cards."
        return f"{only}{event.player} gives the Life Saver to {event.target}."

    def _scored(self, event: RoundScored) -> str:
        scores = " ".join(f"{p}: {how}." for p, _, how in event.scores)
        totals = ", ".join(f"{p} {t}" for p, t in event.totals)
        return f"Round {event.round} scores. {scores} Totals: {totals}."

    def _turn_prompt(self, state: Turn7State, player: str) -> str:
        if not state.hand(player).row:
            return f"{player}, you have no cards yet: say hit."
        return f"{player}: hit or stay?"

    # --- questions ------------------------------------------------------------------------
    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        state: Turn7State = game.state
        if what == "hand":
            return self._hand(state, player or self._asker(game))
        if what == "board":
            return " ".join(self._hand(state, p) for p in state.order)
        if what == "score":
            if player is None:
                return "Totals: " + ", ".join(f"{p} {state.total(p)}"
                                             for p in state.players) + "."
            return self._score(state, player)
        if what == "round":
            return self._round(state)
        if what == "active":
            return self._active(state)
        if what == "deck":
            return (f"{plural(len(state.deck), 'card')} left in the deck; "
                    f"{plural(len(state.discard), 'card')} in the discard pile.")
        if what in ("odds", "hint"):
            return self._odds(state, player or self._asker(game), advise=what == "hint")
        if what == "turn":
            return self._whose(game)
        if what == "time":
            remaining = state.timer.remaining(at)
            if remaining is None:
                return "There is no timer in this game."
            if game.deadline() is None and state.deciding is None:
                return "The timer runs when it is somebody's turn to hit or stay."
            return f"{remaining:.0f} seconds left."
        if what == "leader":
            best = max(state.totals)
            leaders = [p for p in state.players if state.total(p) == best]
            lead = "lead" if len(leaders) > 1 else "leads"
            return f"{spoken_list(leaders)} {lead} with {best}."
        if what == "help":
            return self._help(game)
        if what == "rules":
            return (f"Turn 7. On your turn say hit for a card or stay to bank your row. A "
                    f"number you already have busts you: you score nothing this round. Seven "
                    f"different numbers is a Turn 7: plus 15, and the round ends. Times 2 "
                    f"doubles your numbers; plus cards add. Lock ends a player's round with "
                    f"what they have; Turn Three makes a player draw three cards; a Life "
                    f"Saver saves you from one bust. First to {self.config.target} wins.")
        return "I can tell you the cards, the scores, who is still in, or your odds."

    def _asker(self, game: Game[Any]) -> str:
        return game.current_player() or game.players[0]

    def _hand(self, state: Turn7State, player: str) -> str:
        """What a player holds, said plainly: "Bob has 10 and plus 4, worth 14;
        still in." (a held Life Saver too); the worth only when it is not
        plain from the cards."""
        hand = state.hand(player)
        if hand.status == "out":
            return f"{player} sits out this sudden-death round."
        if not hand.row and hand.status == "active":
            if hand.lifesaver:
                return f"{player} has a Life Saver and no numbers yet; still in."
            return f"{player} has no cards yet."
        cards = [*map(str, hand.numbers), *(card_name(m) for m in hand.modifiers)]
        if hand.lifesaver:
            cards.append("a Life Saver")
        status = {"active": "still in", "stayed": "stayed", "locked": "locked",
                  "bust": "bust", "turn7": "Turn 7"}[hand.status]
        plain = len(hand.numbers) <= 1 and not hand.modifiers and hand.status != "turn7"
        worth = "" if plain or hand.status == "bust" else f", worth {hand.score()}"
        return f"{player} has {spoken_list(cards)}{worth}; {status}."

    def _score(self, state: Turn7State, player: str) -> str:
        hand = state.hand(player)
        text = f"{player} has {state.total(player)} in all"
        if hand.cards and not state.over:
            text += f", {hand.score()} in this round's row"
        return text + "."

    def _round(self, state: Turn7State) -> str:
        now = ", ".join(f"{p} {state.hand(p).score()}" for p in state.order
                        if state.hand(p).cards)
        text = f"Round {state.round} so far: {now}." if now and not state.over else ""
        if state.history:
            last = ", ".join(f"{p} {s}" for p, s in state.history[-1])
            text += f" Round {len(state.history)}: {last}."
        return text.strip() or "No round has been scored yet."

    def _active(self, state: Turn7State) -> str:
        if state.over:
            return "The game is over."
        still = state.active
        text = f"Still in: {spoken_list(still)}." if still else "Nobody is still in."
        out = [f"{p} {self._status(state.hand(p))}" for p in state.order
               if not state.hand(p).active]
        return text + (f" {sentence('; '.join(out))}." if out else "")

    @staticmethod
    def _status(hand: Hand) -> str:
        if hand.status == "bust":
            return "busted"
        return f"{hand.status} with {hand.score()}"

    def _odds(self, state: Turn7State, player: str, advise: bool) -> str:
        if state.over:
            return "The game is over."
        hand = state.hand(player)
        if not hand.active:
            return hand.why_out(player)
        result = odds(hand, state.deck)
        bust = 100 * result.bust
        chance = f"{bust:.1f}" if 0 < bust < 10 else f"{bust:.0f}"
        saver = " (your Life Saver takes a duplicate)" if hand.lifesaver else ""
        text = (f"{player}: {chance} percent chance to bust{saver}. Staying scores "
                f"{result.stay}; one more card is worth {result.hit:.1f} on average.")
        if advise:
            return f"{sentence(result.advice)}. {text}"
        return text

    def _whose(self, game: Game[Any]) -> str:
        state: Turn7State = game.state
        if state.winners:
            return f"The game is over. {spoken_list(state.winners)} won."
        if state.stopped:
            return "The game was stopped."
        chance = game.chance()
        if chance is not None:
            if self.physical:
                return self.ask_chance(chance, game)
            return f"I'm dealing to {game.current_player()}."
        if state.waiting and state.forced is None:
            pending = state.waiting[0]
            targets = self.rules.targets(state, pending)
            return self._choose(ChooseTarget(pending.player, pending.card, targets))
        player = state.deciding
        if player is None:
            return "Nobody is playing right now."
        return f"It's {player}'s turn. {self._turn_prompt(state, player)}"

    def _help(self, game: Game[Any]) -> str:
        state: Turn7State = game.state
        if state.waiting and state.forced is None:
            return "Say who gets the card, like: lock Bob, or just the name."
        if game.chance() is not None and self.physical:
            return "Tell me the card, like: nine, plus four, times two, or lock."
        return "Say hit for another card, or stay to keep your row."

    def undone(self, before: Any, game: Game[Any]) -> str:
        return f"Undone. {self._whose(game)}"

    # --- final state -----------------------------------------------------------------------
    def moves_now(self, game: Game[Any], player: str) -> list[str]:
        """Hit or stay on their turn; when their action card waits for a target,
        each player still in the round (a bare name answers "who gets it?").
        A physical card drawn is reported in words."""
        state: Turn7State = game.state
        if state.over:
            return []
        if state.waiting and not state.forced and state.waiting[0].player == player:
            return [p for p in state.players if state.hand(p).active]
        if state.deciding != player:
            return []
        return ["hit", "stay"] if state.hand(player).row else ["hit"]  # (no cards: must hit)

    def public_state(self, game: Game[Any]) -> dict[str, Any]:
        """The final state, and each player's row this round: its number cards,
        modifiers, whether they hold a Life Saver (it decides busts: a player
        who cannot hear the table sees it) and whether they are still in (the
        screen shows them)."""
        shown = self.final_state(game)
        state: Turn7State = game.state
        for player in state.players:
            hand = state.hand(player)
            shown["players"][player] |= {"cards": list(hand.numbers),
                                         "modifiers": list(hand.modifiers),
                                         "life_saver": hand.lifesaver,
                                         "status": hand.status}
        shown["round"] = state.round
        return shown

    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        state: Turn7State = game.state
        rounds: dict[str, list[int]] = {p: [] for p in state.players}
        for scores in state.history:
            for p, s in scores:
                rounds[p].append(s)
        players = {p: {"total": state.total(p), "rounds": rounds[p]} for p in state.players}
        return {"winner": list(state.winners), "players": players,
                "rounds": len(state.history), "turn": game.current_player()}
