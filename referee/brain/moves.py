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

This room plays: a move, the chance after it, an undo, a new game. Which of
them a sentence asks for, and what is asked first, is the session's
(:meth:`~referee.session.Session._command`).
"""

from __future__ import annotations

from referee.brain.played import Played
from referee.brain.shared import Shared
from referee.engine.core import Event, Rejection
from referee.records import ChanceRecord, EventRecord
from referee.speech.understanding.meaning import Intent
from referee.wording import MAX_CHANCE_STEPS, NOT_MOVES


class Moves(Shared):
    """Moves, chance, undo and a new game: the game and what was played."""

    def _rebuilt(self, rebuild: tuple[str, ...]) -> None:
        """A game rebuilt from a log says nothing: its chance steps take the
        logged outcomes (``rebuild``), so resume repeats what was said; what
        the game started with (a deal) is logged as when it started."""
        self.played = self.played.rebuilt(rebuild)
        for event in self._chance(self.now):
            self._log(EventRecord.of(event, self.now))

    def _replayed(self) -> None:
        """The rebuilt game goes on at a table: a step that fails is a bug again."""
        self.played = self.played.at_table()

    def _play(self, intent: Intent, speaker: str, at: float) -> list[Event] | str:
        """Play a move: what happened, or why it was refused."""
        if self.over and intent.kind not in NOT_MOVES:
            return "The game is over. Say play again for a new game."
        try:
            action = self.spec.action_for(intent, speaker, self.game)
            depth = self.game.depth
            events = self.game.apply(action, at)
        except Rejection as rejection:
            return rejection.sentence
        self.played = self.played.moved(depth, self.game.describe(action))
        return events

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
            # (the logged outcome on replay; else what an undo took back)
            self.played, wanted = self.played.next_outcome(drawn=outcome is not None)
            if wanted is not None:
                outcome = next((a for a, _ in chance.outcomes
                                if self.game.describe(a) == wanted), outcome)
            if outcome is None:
                break
            self.played = self.played.chanced(self.game.depth, self.game.describe(outcome))
            self._log(ChanceRecord(at, chance.name, self.game.describe(outcome)))
            events += self.game.apply(outcome, at)
        return events

    def _chance_request(self) -> str | None:
        """The game's request when the table must resolve the next chance step
        ("Ann, draw from the bank and tell me how many")."""
        waiting = None if self.over else self.game.chance()
        return None if waiting is None else self.spec.ask_chance(waiting, self.game)

    def _undo(self, undo_to: int, at: float) -> str:
        """Take back the last move and all after it: what to say of it. The
        chance it took back comes again (undo is no re-roll)."""
        before = self.game.undo_to(undo_to, at)
        self.played = self.played.undone(undo_to)
        self._log(EventRecord(at, "Undone"))
        return self.spec.undone(before, self.game)

    def _new_game(self, at: float) -> str:
        """The same players and options begin again: what to put back on the
        table first (when anything was played)."""
        reset = self.spec.reset(self.game) if self.played.moves or self.over else ""
        self.evening = self.results()
        self.game = self.spec.begin(at)
        self.played = Played()
        self._log(EventRecord(at, "NewGame"))
        return reset

    def _leave(self) -> None:
        """The table is done: the loop that drives this session ends."""
        self.left = True
