"""Moves, the table's own commands, and chance.

* A move is asked about first when another player must agree, when the
  words make a likelier move read another way, or when it was not heard
  surely (:mod:`referee.brain.questions`); else it is played, and the chance
  steps after it (a roll, a draw) are resolved while the referee holds the
  dice or the deck, or asked of the table.
* Chance is not undone: a roll or a card that an undo took back comes again
  the same at the next chance step it can come at (undo is no re-roll; Turn
  7's deck keeps the card on top anyway).
* "new game" / "rematch": the same players and options start again, at once
  when the game is over, else once another player agrees; the referee first
  says what to put back on the table ("Everyone, flip all your tiles back
  up.": :meth:`~referee.games.base.GameSpec.reset`).
* "That's all" (or "we're done", "goodbye") leaves:
  :attr:`~referee.brain.shared.Shared.left` tells the table loop to end. Said
  during a game, it asks another player to agree to end the game, then leaves.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.brain.shared import Shared
from referee.engine.core import Event, Rejection
from referee.protocol import Left, Say, Tone
from referee.records import ChanceRecord, EventRecord
from referee.speech.understanding.meaning import Intent
from referee.wording import GOODBYE, MAX_CHANCE_STEPS, NOT_MOVES


class Moves(Shared):
    """Moves, the table commands, and chance."""

    def _start(self, at: float, rebuild: tuple[str, ...] | None) -> None:
        """The opening announcement (the first turn's clock starts after it), then
        any chance the game starts with (a deal), resolved as after a move. A
        game rebuilt from a log says nothing: its chance steps take the logged
        outcomes (``rebuild``), so resume repeats what was said."""
        self.now = max(self.now, at)
        if rebuild is not None:
            self._replaying = True
            self._replayed_chance = list(rebuild)
            # What the game started with (a deal), logged as when it started.
            for event in self._chance(self.now):
                self._log(EventRecord.of(event, self.now))
            return
        said = self._say([self.spec.opening(self.game)], self.now, Tone.TURN)
        self._emit(said + self._after_move([], self.now))

    def _command(self, intent: Intent, who: str, at: float, sure: bool) -> list[Say]:
        """The table's commands (pause, play again, that's all, undo) and moves:
        asked about first when another player must agree, when the words make
        a likelier move read another way, or when not heard surely."""
        kind = intent.kind
        if kind in ("pause", "resume"):
            return self._pause(kind == "pause", at)
        if kind == "rematch" and self.over:
            return self._rematch(at)
        if kind == "leave" and self.over:
            return self._leave(at)
        if kind == "leave":
            return self._ask_agreement(intent, "end the game", who, at)
        if kind == "rematch":
            return self._ask(f"{self._others(who)[0]}, do you agree to start a new game?",
                             self._others(who), intent, who, at, consent=True)
        if self.clock.paused and kind not in NOT_MOVES:
            return self._problem("The game is paused: say resume to go on.", at)
        if kind == "undo":
            return self._ask_undo(who, at)
        agreement = self.spec.agreement(intent)
        if agreement is not None:
            return self._ask_agreement(intent, agreement, who, at)
        likelier = None if kind in NOT_MOVES else self.spec.likelier(intent, who, self.game, at)
        if likelier is not None:  # the words read another way make the move: ask
            return self._ask(self.spec.confirmation(likelier, who), (who,), likelier, who, at)
        if not sure and kind not in NOT_MOVES:
            refused = self._refusal(intent, who, at)
            if refused is not None:  # (refused either way: no question to block the table)
                return self._say([refused], at, Tone.PROBLEM)
            return self._ask(self.spec.confirmation(intent, who), (who,), intent, who, at)
        return self._act(intent, who, at)

    def _refusal(self, intent: Intent, who: str, at: float) -> str | None:
        """What the rules would say to refuse this move now ("It's Bob's turn,
        not Ann's."), tried on the game as it stands (nothing changes); None
        when they would take it (with a penalty or not)."""
        try:
            action = self.spec.action_for(intent, who, self.game)
            self.game.rules.apply(self.game.state, action, at)
        except Rejection as rejection:
            return rejection.sentence
        except ValueError:
            return None
        return None

    def _act(self, intent: Intent, speaker: str, at: float) -> list[Say]:
        if self.over and intent.kind not in NOT_MOVES:
            return self._say(["The game is over. Say play again for a new game."],
                             at, Tone.PROBLEM)
        try:
            action = self.spec.action_for(intent, speaker, self.game)
            depth = self.game.depth
            events = self.game.apply(action, at)
        except Rejection as rejection:
            return self._say([rejection.sentence], at, Tone.PROBLEM)
        self._moves.append((depth, self.game.describe(action)))
        return self._after_move(events, at)

    def _after_move(self, events: Sequence[Event], at: float) -> list[Say]:
        """The events of a move, then those of the chance steps that follow it,
        and, when the table must resolve the next one, the game's request
        ("Ann, draw from the bank and tell me how many")."""
        events = [*events, *self._chance(at)]
        said = self._events(events, at)
        waiting = None if self.over else self.game.chance()
        if waiting is not None:
            said += self._say([self.spec.ask_chance(waiting, self.game)], at, Tone.TURN)
            self.last = [s.text for s in said]
        return said

    def _chance(self, at: float) -> list[Event]:
        """Resolve the chance steps the game waits for, one after another (a roll;
        three forced draws in a row), while the referee holds the dice or the deck
        (:meth:`~referee.games.base.GameSpec.draw`); a step the table resolves
        waits for the players' report. Each outcome is logged; when a log is
        replayed the logged outcome is applied, so resume repeats what was said."""
        events: list[Event] = []
        for _ in range(MAX_CHANCE_STEPS):
            chance = self.game.chance()
            if chance is None:
                break
            outcome = self.spec.draw(chance, self.game)  # drawn even on replay: same sequence
            if self._replayed_chance:
                logged = self._replayed_chance.pop(0)
                outcome = next((a for a, _ in chance.outcomes
                                if self.game.describe(a) == logged), outcome)
            elif self._undone_chance and outcome is not None:  # what an undo took back
                again = self._undone_chance.pop(0)
                outcome = next((a for a, _ in chance.outcomes
                                if self.game.describe(a) == again), outcome)
            if outcome is None:
                break
            self._chanced.append((self.game.depth, self.game.describe(outcome)))
            self._log(ChanceRecord(at, chance.name, self.game.describe(outcome)))
            events += self.game.apply(outcome, at)
        return events

    def _rematch(self, at: float) -> list[Say]:
        """The same players and options start a new game, once the table has
        been told what to put back (when anything was played)."""
        reset = self.spec.reset(self.game) if self._moves or self.over else ""
        self.game = self.spec.begin(at)
        self._ended = False
        self.question = None
        self._moves, self._more, self._named = [], [], None
        self._chanced, self._undone_chance = [], []
        self.clock = self.clock.for_new_game(self._turn_limit(at))
        self._log(EventRecord(at, "NewGame"))
        said = self._say([f"New game. {reset}".strip(), self.spec.opening(self.game)], at,
                         Tone.TURN)
        return said + self._after_move([], at)

    def _leave(self, at: float) -> list[Say]:
        """The table is done: the loop that drives this session ends."""
        self.left = True
        self.question = None
        self._out.append(Left(at))
        return self._say([GOODBYE], at, Tone.ANNOUNCE)
