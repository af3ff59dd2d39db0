"""Shut the Box at the table: options, dice, intents to actions, what the referee says.

Decisions:

* Dice are virtual (``--dice virtual``, the default: the referee rolls when a
  player says "roll" and announces it; ``--seed`` makes it repeatable) or
  physical (players roll real dice and say "I rolled five and three" or
  "rolled eight"). With virtual dice "roll" is a :class:`ChooseDice` and the
  faces are a chance step the session resolves through :meth:`ShutBoxSpec.draw`
  (tests inject the dice: :attr:`ShutBoxSpec.dice`); physical dice reach the
  engine as the reported :class:`Roll`.
* The order of play is the lowest roll first (the rules): the referee rolls
  one die pair for each player at the start and announces it; ties keep the
  order the players were named in. ``--order given`` keeps the named order.
  The order roll is the referee's even with physical dice (seeded, kept in
  the log's options): it is not a move, and it saves the table a round of
  rolling and reporting before play.
* "roll" rolls two dice; "roll one" rolls one die, allowed when the open
  tiles add up to 6 or less. A physical total of 6 or less is taken as one
  die when one die is allowed.
* After each roll the referee says the roll; after each shut, what is still
  open. "options" reads every set that makes the roll; "hint" names the best
  one (:mod:`referee.engine.shutbox_strategy`), for the chance of shutting the
  box, or for the lowest expected score with ``--house goal=score``.
"""

from __future__ import annotations

import argparse
import json
import random
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
from referee.engine.shutbox import (
    BoxConfig,
    BoxShut,
    BoxState,
    ChooseDice,
    PlayoffStarted,
    Roll,
    Rolled,
    Shut,
    ShutTheBox,
    TilesShut,
    TurnScored,
    one_die_allowed,
    order_by_rolls,
    sets_making,
)
from referee.engine.shutbox_strategy import dice_hint, hint
from referee.games.base import (
    GameSpec,
    Intent,
    Options,
    SetupError,
    Tool,
    option,
    parse_house_rules,
    sentence,
    spoken_list,
)

HOUSE_RULES = {
    "tiles": ("12", "9"),
    "ties": ("share", "playoff"),
    "goal": ("shut", "score"),
}

Dice = Callable[[int], tuple[int, ...]]


def seeded_dice(seed: int) -> Dice:
    rng = random.Random(seed)
    return lambda count: tuple(rng.randint(1, 6) for _ in range(count))


def tiles_text(tiles: Sequence[int]) -> str:
    return spoken_list(tiles) if tiles else "none"


def _hint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--open", nargs="+", type=int, required=True, metavar="TILE",
                        help="the open tiles")
    parser.add_argument("--roll", type=int, help="the roll (without it: how many dice to roll)")
    parser.add_argument("--goal", choices=["shut", "score"], default="shut",
                        help="shut: most likely to shut the box (default); score: lowest "
                        "expected score")
    parser.add_argument("--tiles", type=int, choices=(9, 12), default=12,
                        help="tiles in the box (default 12)")


def _hint(args: argparse.Namespace) -> int:
    """``{"shut": [3, 4], "value": 0.123}``: the tiles to shut and the value after;
    without a roll, ``{"dice": 1, "value": ...}``: how many dice to roll."""
    tiles = list(args.open)
    bad = [t for t in tiles if not 1 <= t <= args.tiles]
    if bad:
        raise SetupError(f"There is no tile {bad[0]} in a box of {args.tiles}.")
    if len(set(tiles)) != len(tiles):
        raise SetupError("Each open tile once, please.")
    if args.roll is None:
        count, best = dice_hint(tiles, args.goal)
        print(json.dumps({"dice": count, "value": round(best, 6)}))
        return 0
    if not 1 <= args.roll <= 12:
        raise SetupError(f"A roll is 1 to 12, not {args.roll}.")
    shut, best = hint(tiles, args.roll, args.goal)
    print(json.dumps({"shut": None if shut is None else list(shut), "value": round(best, 6)}))
    return 0


@dataclass(frozen=True)
class ShutBoxOptions(Options):
    tiles: int | None = option(None, "tiles in the box (default 12, or house rule tiles=9)",
                               choices=(9, 12))
    dice: str = option("virtual", "the referee rolls (virtual) or players roll real dice",
                       choices=("virtual", "physical"))
    seed: int | None = option(None, "seed for the virtual dice")
    order: str = option("roll", "order of play: lowest roll first, or as named",
                        choices=("roll", "given"))


class ShutBoxSpec(GameSpec):
    name = "shut-the-box"
    phrase_file = Path(__file__).with_name("phrases.toml")
    aliases = ("shutbox", "shut", "stb")
    summary = "Shut the Box: roll, shut tiles that make the roll, lowest score wins"
    tools = (Tool("hint", "the best move in Shut the Box, computed exactly", _hint_arguments,
                  _hint),)
    min_players = 1
    max_players = 8
    options_type = ShutBoxOptions
    options: ShutBoxOptions

    def __init__(
        self, players: Sequence[str], options: ShutBoxOptions | None = None,
        dice: Dice | None = None,
    ) -> None:
        super().__init__(players, options)
        house = parse_house_rules(self.options.house, HOUSE_RULES)
        tiles = self.options.tiles or int(house["tiles"])
        try:
            self.config = BoxConfig(tiles, house["ties"])  # type: ignore[arg-type]
        except ValueError as error:
            raise SetupError(sentence(str(error)) + ".") from error
        self.goal: Any = house["goal"]
        self.physical = self.options.dice == "physical"
        #: The virtual dice's seed, chosen now when none is given and kept in the
        #: options, so that the game log replays the same rolls (``referee resume``).
        self.seed: int = (random.randrange(2**31) if self.options.seed is None
                          else self.options.seed)
        self.options = replace(self.options, seed=self.seed)
        #: Where virtual dice come from: count -> faces. Tests replace it.
        self.dice: Dice = dice or seeded_dice(self.seed)
        self.rules = ShutTheBox(self.config)
        self.order_rolls: list[tuple[str, int]] = []
        self._order()

    def _order(self) -> None:
        """The order of play: ``--first`` first, or by the order roll (the
        highest total first, of the players as named)."""
        first = self.first_player()
        if first is not None:
            self.players = (first, *[p for p in self.named_players if p != first])
        elif self.options.order == "roll" and len(self.players) > 1:
            rolls = [sum(self.dice(2)) for _ in self.named_players]
            self.order_rolls = list(zip(self.named_players, rolls, strict=True))
            self.players = order_by_rolls(self.named_players, rolls)

    # --- set-up -------------------------------------------------------------------------
    def new_game(self, at: float) -> Game[BoxState]:
        if self.games_begun > 1:  # "play again": dice of its own, and a new order roll
            self.dice = seeded_dice(self.game_seed(self.seed))
            self._order()
        return Game(self.rules, self.players, at)

    def opening(self, game: Game[Any]) -> str:
        dice = "you roll real dice and tell me" if self.physical else "I roll the dice"
        text = f"Shut the Box with {self.config.tiles} tiles; {dice}."
        if self.order_rolls:
            rolls = ", ".join(f"{p} {r}" for p, r in self.order_rolls)
            text += f" Rolls for the order: {rolls}."
        order = spoken_list(game.players)
        first = game.current_player()
        return f"{text} Order of play: {order}. {first}, {self._roll_prompt()}"

    def reset(self, game: Game[Any]) -> str:
        return "Open all the tiles of the box again."

    def _roll_prompt(self) -> str:
        return "roll and tell me what you rolled." if self.physical else "say roll."

    # --- intents to actions ---------------------------------------------------------------
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        kind = intent.kind
        if kind == "roll":
            if self.physical:
                raise IllegalAction("Roll your dice and tell me what you rolled, "
                                    "like: I rolled 5 and 3.")
            return ChooseDice(speaker, 1 if intent.get("dice") == 1 else 2)
        if kind == "rolled":
            if not self.physical:
                raise IllegalAction("I roll the dice in this game: say roll.")
            if intent.get("dice"):
                return Roll(speaker, tuple(int(d) for d in intent["dice"]))
            total = int(intent["total"])
            state: BoxState = game.state
            count = 1 if total <= 6 and one_die_allowed(state.open) else 2
            return Roll(speaker, total=total, count=count)
        if kind == "shut":
            return Shut(speaker, tuple(int(t) for t in intent["tiles"]))
        raise ValueError(f"no action for intent {intent}")

    def draw(self, chance: Chance, game: Game[Any]) -> Action | None:
        """Virtual dice: the faces come from the seeded dice (``--seed``, logged)."""
        if self.physical:
            return None
        count = max(len(a.dice) for a, _ in chance.outcomes if isinstance(a, Roll))
        faces = self.dice(count)
        for action, _ in chance.outcomes:
            if isinstance(action, Roll) and action.dice == faces:
                return action
        raise ValueError(f"the dice gave {faces}, which is not an outcome of {chance.name}")

    # --- events to sentences -----------------------------------------------------------------
    def announce(self, event: Event, game: Game[Any]) -> str:
        state: BoxState = game.state
        if isinstance(event, Rolled):
            dice = " and ".join(map(str, event.dice))
            said = f"{event.player} rolled {dice}" + (
                f": {event.total}." if len(event.dice) > 1 else "."
            )
            if not event.options or self.brief:
                return said
            return f"{said} Shut tiles that make {event.total}."
        if isinstance(event, TilesShut):
            shut = spoken_list(event.tiles)
            if self.brief or not event.open:  # (the box is shut: that is said next)
                return f"{shut} shut."
            again = "Roll again and tell me." if self.physical else "Roll again."
            return f"{shut} shut. Open: {tiles_text(event.open)}. {again}"
        if isinstance(event, TurnScored):
            return (f"Nothing makes {event.roll}. {event.player}'s turn is over with "
                    f"{tiles_text(event.open)} open: score {event.score}.")
        if isinstance(event, TurnStarted):
            return f"{event.player}'s turn: {self._roll_prompt()}"
        if isinstance(event, BoxShut):
            return f"{event.player} shut the box!"
        if isinstance(event, PlayoffStarted):
            return (f"{spoken_list(event.players)} tie with {event.score}: "
                    "a play-off round between them.")
        if isinstance(event, GameWon):
            if len(event.winners) > 1:
                score = state.score_of(event.winners[0])
                return f"{spoken_list(event.winners)} share the win with {score}."
            winner = event.winners[0]
            if state.score_of(winner) == 0:
                return f"{winner} wins!"
            return f"Everyone has played. {winner} wins with {state.score_of(winner)}!"
        return ""

    # --- questions ------------------------------------------------------------------------
    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        state: BoxState = game.state
        if what == "board":
            return self._board(state)
        if what == "score":
            who = list(state.players) if player is None else [player]
            return " ".join(self._score(state, p) for p in who)
        if what == "options":
            return self._options(state)
        if what == "hint":
            return self._hint(state)
        if what == "turn":
            return self._turn(state)
        if what == "time":
            return "There is no timer in this game."
        if what == "help":
            return "Say roll, then the tiles to shut, like: shut 7 and 1."
        if what == "leader":
            return self._leader(state)
        if what == "rules":
            return (f"Shut the Box. Roll two dice, or one die when the open tiles add up to 6 "
                    f"or less. Shut any open tiles that add up to the roll, then roll again. "
                    f"When nothing makes the roll, your score is the sum of the open tiles. "
                    f"Lowest score wins; shutting all {self.config.tiles} tiles wins at once.")
        return "I can tell you what's open, the scores, your options or a hint."

    def _board(self, state: BoxState) -> str:
        if state.over:
            return "The game is over."
        text = f"Open: {tiles_text(sorted(state.open))}, adding up to {sum(state.open)}."
        if state.roll is not None:
            text += f" {state.active_player} rolled {state.roll}."
        return text

    def _leader(self, state: BoxState) -> str:
        played = {p: score for p in state.players
                  if (score := state.score_of(p)) is not None}
        if not played:
            return "Nobody has finished a turn yet."
        low = min(played.values())
        best = [p for p, score in played.items() if score == low]
        lead = "lead" if len(best) > 1 else "leads"
        return f"{spoken_list(best)} {lead} with {low}; lowest wins."

    def _score(self, state: BoxState, player: str) -> str:
        score = state.score_of(player)
        if score is not None:
            return f"{player} scored {score}."
        if not state.over and player == state.active_player:
            return f"{player} is playing: {sum(state.open)} open so far."
        return f"{player} has not played yet."

    def _options(self, state: BoxState) -> str:
        if state.over:
            return "The game is over."
        if state.roll is None:
            one = " or one die" if one_die_allowed(state.open) else ""
            return f"Roll first: two dice{one}."
        sets = sets_making(state.roll, state.open)
        said = "; ".join(" and ".join(map(str, s)) for s in sets)
        return f"For {state.roll} you can shut: {said}."

    def _hint(self, state: BoxState) -> str:
        if state.over:
            return "The game is over."
        goal = "your chance of shutting the box" if self.goal == "shut" else "expected score"
        if state.roll is None:
            count, value = dice_hint(state.open, self.goal)
            dice = "one die" if count == 1 else "both dice"
            return f"Roll {dice}: {goal} {self._value(value)}."
        tiles, value = hint(sorted(state.open), state.roll, self.goal)
        if tiles is None:
            return f"Nothing makes {state.roll}."
        return f"Shut {spoken_list(tiles)}: {goal} {self._value(value)}."

    def _value(self, value: float) -> str:
        if self.goal == "shut":
            percent = 100 * value
            return f"{percent:.1f} percent" if percent < 10 else f"{percent:.0f} percent"
        return f"{value:.1f}"

    def _turn(self, state: BoxState) -> str:
        if state.winners:
            return f"The game is over. {spoken_list(state.winners)} won."
        if state.stopped:
            return "The game was stopped."
        if state.roll is None:
            return f"It's {state.active_player}'s turn: {self._roll_prompt()}"
        return (f"It's {state.active_player}'s turn: shut tiles that make {state.roll}.")

    def undone(self, before: Any, game: Game[Any]) -> str:
        return f"Undone. {self._board(game.state)} {self._turn(game.state)}"

    # --- final state -----------------------------------------------------------------------
    def moves_now(self, game: Game[Any], player: str) -> list[str]:
        """On their turn: roll (virtual dice), or each set of open tiles that
        makes the roll ("shut 3 and 4"). Physical dice are reported in words."""
        state: BoxState = game.state
        if state.over or player != state.active_player:
            return []
        if state.roll is None:
            return [] if self.physical else ["roll"]
        return [f"shut {spoken_list([str(t) for t in tiles])}"
                for tiles in sets_making(state.roll, frozenset(state.open))]

    def public_state(self, game: Game[Any]) -> dict[str, Any]:
        """The final state, and the roll the player must shut tiles for."""
        state: BoxState = game.state
        return {**self.final_state(game), "roll": state.roll}

    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        state: BoxState = game.state
        players = {}
        for p in state.players:
            left = state.left_open(p)
            if left is None and not state.over and p == state.active_player:
                left = tuple(sorted(state.open))
            players[p] = {"score": None if left is None else sum(left),
                          "open": None if left is None else list(left)}
        return {"winner": list(state.winners), "players": players,
                "turn": game.current_player()}
