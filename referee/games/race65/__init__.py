"""Race to 65 at the table: options, intents to actions, and what the referee says.

Announcement decisions (the sentences are printed exactly as they are spoken):

* Numbers are written as digits; every text-to-speech voice reads them.
* An own flip is confirmed briefly ("Ann, 7 down."); an instruction is
  repeated to the player who must flip ("Bob, flip your 4 up.").
* Totals are never announced unprompted, unless the house rule
  ``announce_totals`` is on: the race is in the players' heads.
* A wrong call names the caller's total and the tiles to turn up, since the
  tray is reset anyway and the players must fix the physical tiles.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

from referee.engine.core import (
    Action,
    ClockPaused,
    ClockResumed,
    Event,
    Game,
    GameWon,
    TurnStarted,
)
from referee.engine.race65 import (
    DIFFICULTIES,
    RULE_SETS,
    Call,
    CallCorrect,
    CallIncorrect,
    ConsecutiveViolation,
    Flip,
    Race65,
    RaceConfig,
    RaceState,
    SetTile,
    TileCorrected,
    TileFlipped,
    TileSet,
    TimeUp,
    TurnLost,
    race_config,
    tray_differences,
)
from referee.games.base import (
    GameSpec,
    Intent,
    Options,
    SetupError,
    option,
    parse_house_rules,
    plural,
    sentence,
    spoken_list,
)

HOUSE_RULES = {
    "partial_turn": ("revert", "keep"),
    "announce_totals": ("off", "on"),
}


def _corrections(corrections: Sequence[TileSet], back: bool = True) -> str:
    """ "Ann, flip your 4 back up. Bob, flip your 9 back down." """
    by_owner: dict[str, dict[bool, list[int]]] = defaultdict(lambda: defaultdict(list))
    for c in corrections:
        by_owner[c.owner][c.down].append(c.tile)
    sentences = []
    again = " back" if back else ""
    for owner, ways in by_owner.items():
        parts = [
            f"your {spoken_list(sorted(tiles))}{again} {'down' if down else 'up'}"
            for down, tiles in sorted(ways.items())
        ]
        sentences.append(f"{owner}, flip {' and '.join(parts)}.")
    return " ".join(sentences)


#: ``--confirm-calls``: "always" confirms every spoken call, "never" only one
#: heard unsurely (as any move).
CONFIRM_CALLS = ("always", "never")


@dataclass(frozen=True)
class Race65Options(Options):
    rules: str = option("phase-seven", "rule set", choices=RULE_SETS)
    difficulty: str | None = option(None, "phase-seven level (default easy)",
                                    choices=DIFFICULTIES)
    confirm_calls: str = option("always", "ask before judging a spoken call: always, or "
                                "never (only when unsure)", choices=CONFIRM_CALLS)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """As :meth:`Options.from_json`; a log of before 2026-12-05 may say
        ``confirm_calls`` "unsure", the same as "never" (the word is gone).

        >>> Race65Options.from_json({"confirm_calls": "unsure"}).confirm_calls
        'never'
        """
        if data.get("confirm_calls") == "unsure":
            data = {**data, "confirm_calls": "never"}
        return super().from_json(data)


class Race65Spec(GameSpec):
    name = "race65"
    phrase_file = Path(__file__).with_name("phrases.toml")
    aliases = ("race-to-65", "race")
    summary = "Race to 65: flip tiles, call 65 (or 67, 70) to win; phase-one and phase-seven"
    options_type = Race65Options
    options: Race65Options

    def __init__(self, players: Sequence[str], options: Race65Options | None = None) -> None:
        super().__init__(players, options)
        house = parse_house_rules(self.options.house, HOUSE_RULES)
        try:
            self.config: RaceConfig = race_config(
                self.options.rules, self.options.difficulty, partial_turn=house["partial_turn"]
            )
        except ValueError as error:
            raise SetupError(sentence(str(error)) + ".") from error
        self.announce_totals = house["announce_totals"] == "on"
        self.rules = Race65(self.config, self.first_player())

    # --- set-up -----------------------------------------------------------------
    def new_game(self, at: float) -> Game[RaceState]:
        try:
            return Game(self.rules, self.players, at)
        except ValueError as error:
            raise SetupError(sentence(str(error)) + ".") from error

    def opening(self, game: Game[Any]) -> str:
        c = self.config
        a, b = game.players
        timer = f"{c.turn_seconds:g} seconds per turn" if c.turn_seconds else "no timer"
        first = game.current_player()
        return (
            f"{c.title}. {a} against {b}. {plural(c.flips_per_turn, 'flip').capitalize()} "
            f"per turn, {timer}. Call {c.target} to win. {first} starts."
        )

    # --- intents to actions -------------------------------------------------------
    def action_for(self, intent: Intent, speaker: str, game: Game[Any]) -> Action:
        if intent.kind == "flip":
            return Flip(speaker, intent["owner"], int(intent["tile"]), intent.get("direction"))
        if intent.kind == "call":
            return Call(intent["caller"], int(intent["number"]))
        if intent.kind == "correction":
            down = intent["direction"] == "down"
            return SetTile(speaker, intent["owner"], int(intent["tile"]), down)
        raise ValueError(f"no action for intent {intent}")

    def reset(self, game: Game[Any]) -> str:
        return "Everyone, flip all your tiles back up."

    def where_we_are(self, game: Game[Any], at: float) -> str:
        """Whose turn it is, and the time left when turns are timed."""
        text = super().where_we_are(game, at)
        if self.config.turn_seconds:
            text += " " + self.answer("time", None, game, at)
        return text

    def always_confirm(self, intent: Intent) -> bool:
        """A spoken call is confirmed before it is judged (``--confirm-calls
        always``, the default): a misheard call costs a whole tray."""
        return intent.kind == "call" and self.options.confirm_calls == "always"

    def confirm_tap(self, intent: Intent) -> bool:
        """A call tapped on a seat page is asked about first, whatever
        ``--confirm-calls`` says: it ends the turn or the game."""
        return intent.kind == "call"

    option_hints: ClassVar[dict[str, str]] = {
        "turn_timer": "Race to 65's timer comes from --difficulty: medium 30 seconds a turn, "
                      "hard 15 (phase-seven); easy has none.",
    }

    @property
    def title(self) -> str:
        """ "Race to 67" in a medium game, as the captions say it."""
        return f"Race to {self.config.target}"

    def penalised(self, events: Sequence[Event]) -> bool:
        """A flip of a tile flipped last turn loses the turn, and a call of a
        total the caller does not have resets their tray: neither is a move
        the referee expects (a call is expected only at the target)."""
        return any(isinstance(e, ConsecutiveViolation | CallIncorrect | TurnLost) for e in events)

    def agreement(self, intent: Intent) -> str | None:
        """A tray correction needs another player's yes, like undo."""
        if intent.kind == "correction":
            return f"{intent['owner']}'s {intent['tile']} is {intent['direction']}"
        return super().agreement(intent)

    def barge_in(self, intent: Intent) -> bool:
        """A call of the target interrupts the referee too: a race is a race."""
        if intent.kind == "call":
            return int(intent["number"]) == self.config.target
        return super().barge_in(intent)

    def undone(self, before: Any, game: Game[Any]) -> str:
        state: RaceState = game.state
        changes = tray_differences(state.players, before.down, state.down)
        text = "Undone."
        if changes:
            text += " " + _corrections(changes)
        return f"{text} {self._turn(state)}"

    # --- events to sentences ----------------------------------------------------------
    def announce(self, event: Event, game: Game[Any]) -> str:
        state: RaceState = game.state
        if isinstance(event, TileFlipped):
            way = "down" if event.down else "up"
            text = (
                f"{event.by}, {event.tile} {way}."
                if event.owner == event.by
                else f"{event.owner}, flip your {event.tile} {way}."
            )
            if self.brief:
                pass
            elif event.flips_left == 1:
                text += " One more flip."
            elif event.flips_left > 1:
                text += f" {event.flips_left} more flips."
            if self.announce_totals:
                text += f" {event.owner} has {state.total(event.owner)}."
            return text
        if isinstance(event, TurnStarted):
            seconds = f", {event.seconds:g} seconds" if event.seconds and not self.brief else ""
            return f"{event.player}'s turn{seconds}."
        if isinstance(event, TileCorrected):
            way = "down" if event.down else "up"
            return f"Corrected: {event.owner}'s {event.tile} is {way}."
        if isinstance(event, ConsecutiveViolation):
            whose = "" if event.owner == event.player else f"{event.owner}'s "
            stays = "down" if event.down else "up"
            return sentence(f"{whose}{event.tile} was flipped last turn; it stays {stays}.")
        if isinstance(event, TimeUp):
            return "Time!"
        if isinstance(event, TurnLost):
            text = f"{event.player} loses the turn."
            if event.corrections:
                text += " " + _corrections(event.corrections)
            return text
        if isinstance(event, CallCorrect):
            return f"{event.number}! {event.caller} has exactly {event.number}."
        if isinstance(event, CallIncorrect):
            return self._wrong_call(event)
        if isinstance(event, GameWon):
            return f"{spoken_list(event.winners)} wins!"
        if isinstance(event, ClockPaused):
            return "Timer paused."
        if isinstance(event, ClockResumed):
            left = f": {math.ceil(event.remaining)} seconds left" if event.remaining else ""
            return f"Timer running{left}."
        return ""

    def _wrong_call(self, event: CallIncorrect) -> str:
        if event.number != event.target:
            text = (
                f"Wrong call: {event.caller} called {event.number}, "
                f"the target is {event.target}."
            )
        else:
            text = f"Wrong call: {event.caller} has {event.total}, not {event.target}."
        own = [c for c in event.corrections if c.owner == event.caller]
        others = [c for c in event.corrections if c.owner != event.caller]
        if own:
            tiles = spoken_list(c.tile for c in own)
            text += f" All of {event.caller}'s tiles go up: {event.caller}, flip up your {tiles}."
        else:
            text += f" {event.caller} has no tiles down."
        if others:
            text += " " + _corrections(others)
        return text

    # --- questions ------------------------------------------------------------------
    def answer_question(self, intent: Intent, game: Game[Any], at: float) -> str:
        """ "Is my seven up?": the tile's side, never a flip."""
        if intent["what"] == "tile":
            state: RaceState = game.state
            player, tile = str(intent["player"]), int(intent["tile"])
            side = "down" if tile in state.tiles_down(player) else "up"
            return f"{player}'s {tile} is {side}."
        return super().answer_question(intent, game, at)

    def answer(self, what: str, player: str | None, game: Game[Any], at: float) -> str:
        state: RaceState = game.state
        who = list(state.players) if player is None else [player]
        if what == "score":
            return " ".join(f"{p} has {state.total(p)}." for p in who)
        if what == "board":
            return " ".join(self._board(state, p) for p in who)
        if what == "time":
            return self._time(state, at)
        if what == "turn":
            return self._turn(state)
        if what == "help":
            return self._help(state, player)
        if what == "rules":
            return self._rules_text()
        if what == "target":
            return f"Call {self.config.target} when your total is exactly {self.config.target}."
        if what == "flips":
            return self._turn(state)
        if what == "leader":
            return self._leader(state)
        return "I can tell you the score, the board, the time left or whose turn it is."

    def _board(self, state: RaceState, player: str) -> str:
        down = sorted(state.tiles_down(player))
        if not down:
            return f"All of {player}'s tiles are up."
        return f"{player}'s tiles down: {spoken_list(down)}. Total {sum(down)}."

    def _time(self, state: RaceState, at: float) -> str:
        if state.over:
            return "The game is over."
        remaining = state.timer.remaining(at)
        if remaining is None:
            return "There is no timer in this game."
        seconds = plural(math.ceil(remaining), "second")
        if state.timer.paused:
            return f"The timer is paused with {seconds} left."
        return f"{state.active_player} has {seconds} left."

    def _turn(self, state: RaceState) -> str:
        if state.winner:
            return f"The game is over. {state.winner} won."
        if state.stopped:
            return "The game was stopped."
        left = self.config.flips_per_turn - len(state.flips)
        return f"It's {state.active_player}'s turn, {plural(left, 'flip')} left."

    def _leader(self, state: RaceState) -> str:
        if state.winner:
            return f"{state.winner} won."
        target = self.config.target
        # Tiles flip both ways: the total nearest the target, above or below, leads.
        gap = {p: abs(target - state.total(p)) for p in state.players}
        best = [p for p in state.players if gap[p] == min(gap.values())]
        totals = spoken_list([f"{p} {state.total(p)}" for p in best])
        if len(best) > 1:
            return f"Level: {totals}, {plural(gap[best[0]], 'point')} from {target}."
        return f"{totals}: closest to {target}."

    def help_values(self, game: Game[Any], player: str | None) -> dict[str, Any]:
        return {**super().help_values(game, player), "target": self.config.target}

    def _help(self, state: RaceState, player: str | None) -> str:
        target = self.config.target
        other = [p for p in state.players if p != player]
        opponent = other[0] if other else state.players[1]
        moves = (
            f"On your turn say: flip my 7, or {opponent}, flip your 4 up. "
            if player == state.active_player
            else f"It's {state.active_player}'s turn. "
        )
        return f"{moves}Any time, call {target} to win."

    def _rules_text(self) -> str:
        c = self.config
        timer = (
            f"You have {c.turn_seconds:g} seconds; if time runs out you lose the turn."
            if c.turn_seconds
            else "There is no timer."
        )
        exact = (
            "Each turn, flip exactly one tile: one of yours, or tell your opponent "
            "which tile to flip and which way."
            if c.flips_per_turn == 1
            else "Each turn, flip exactly two different tiles, your own or your "
            "opponent's by telling them the number and the way."
        )
        return (
            f"{c.title}. Down tiles count their number. {exact} {timer} "
            "A tile flipped last turn may not be flipped this turn: that loses the turn. "
            f"Call {c.target} when your total is exactly {c.target} to win; a wrong call "
            "turns all your tiles up."
        )

    # --- final state ------------------------------------------------------------------
    def moves_now(self, game: Game[Any], player: str) -> list[str]:
        """On their turn, their own tiles they may flip and the instructions to
        others the rules allow ("Bob, flip your 4 up"); the call of the
        target when their total is the target (typed, any call is taken: a
        wrong one costs the tray)."""
        state: RaceState = game.state
        own, others = [], []  # own tiles first, then what others must flip
        if player == state.active_player:
            for action in self.rules.legal_actions(state):
                if isinstance(action, Flip) and action.owner == player:
                    own.append(f"flip my {action.tile}")
                elif isinstance(action, Flip):
                    others.append(f"{action.owner}, flip your {action.tile} {action.direction}")
        flips = own + others
        # The call only when it can win (the total is on the board for all to
        # see; a call at 23 is only ever a slip that sends every tile up).
        call = [f"I call {self.config.target}"] if state.total(player) == self.config.target else []
        return [*flips, *call]

    def final_state(self, game: Game[Any]) -> dict[str, Any]:
        state: RaceState = game.state
        return {
            "winner": state.winner,
            "players": {
                p: {"total": state.total(p), "down": sorted(state.tiles_down(p))}
                for p in state.players
            },
            "turn": game.current_player(),
        }

    def public_state(self, game: Game[Any]) -> dict[str, Any]:
        """The final state, and this turn's flips: how many are left, and the
        tiles flipped (each owner's, as "Bob's 4"), so that a player who cannot
        hear the referee sees what "2 flips left" says."""
        state: RaceState = game.state
        flipped = [f"{f.owner}'s {f.tile}" for f in state.flips]
        return self.final_state(game) | {
            "flips_left": None if state.over else self.config.flips_per_turn - len(state.flips),
            "flipped": flipped}
