"""What the referee says of the Phase 10 Twist board: spaces, pawns, hands,
phases and Twist cards, in words (:class:`BoardWords`)."""

from __future__ import annotations

from referee.engine.core import GameWon
from referee.engine.phase10 import HandResult, HandStarted, PawnsMoved, Phase10State, PhaseLaidDown
from referee.engine.phase10_phases import BOARD_PHASES, Board, Card, Phase
from referee.games.base import plural, sentence, spoken_list


def phase_words(phase: Phase) -> str:
    return f"{phase.name}, {phase.words()}"


def card_words(card: Card) -> str:
    if card.kind != "number":
        return f"a {card.kind}"
    colour = f"{card.colour} " if card.colour else ""
    return f"a {colour}{card.number}" if card.number else f"a {colour}card"


class BoardWords:
    """Sentences about one board; Twist cards are the referee's to deal when ``virtual``."""

    def __init__(self, board: Board, virtual: bool) -> None:
        self.board = board
        self.virtual = virtual

    def neighbours(self, state: Phase10State, player: str) -> tuple[int, int]:
        space = state.seat(player).space
        if space > self.board.last or self.board.spaces[space] is not None:
            return (0, 0)
        return self.board.neighbours(space)

    @staticmethod
    def secret(player: str, card: Phase) -> str:
        return f"{player}, your Twist card is {card.number}: {card.words()}."

    def hand(self, event: HandStarted) -> str:
        start = f"Hand {event.hand}: {event.dealer} deals."
        phases = {p: ph for p, ph in event.phases}
        known = [ph for ph in phases.values()]
        if len(set(known)) == 1 and known[0] is not None:
            return f"{start} Everyone: {phase_words(known[0])}."
        said = [f"{p}: {phase_words(ph)}." if ph is not None else f"{p}: a Twist space."
                for p, ph in phases.items()]
        return f"{start} {' '.join(said)}"

    def laid(self, event: PhaseLaidDown) -> str:
        if event.phase is None:
            return (f"{event.player} lays down the Twist phase. Say which Twist card it is "
                    "when you read the cards, and I check them.")
        if event.checked:
            return f"{event.player}'s {event.phase.name} is down: {event.phase.words()}. Good."
        return f"{event.player} lays down {event.phase.name}."

    @staticmethod
    def choice_question(player: str, low: int, high: int) -> str:
        return f"{player}, you are on a Twist space: phase {low}, phase {high}, or a Twist card?"

    def report_question(self, state: Phase10State, player: str | None) -> str:
        if player is None:
            return ""
        what = "your Twist phase" if state.seat(player).twist else "your phase"
        return f"{player}, did you make {what}?"

    def moves(self, event: PawnsMoved) -> str:
        said = [f"End of hand {event.hand}."]
        for move in event.moves:
            said.append(self.move(move))
        return " ".join(said)

    def move(self, move: HandResult) -> str:
        how = {"out": "went out", "made": "made the phase", "failed": "did not make the phase"}
        what = how[move.result] + (" on a Twist card" if move.twist else "")
        where = self.space(move.to)
        steps = move.to - move.space
        if move.to > self.board.last:
            return f"{move.player} {what}: past Phase 10!"
        if steps == 0:
            return f"{move.player} {what}: stays on {where}."
        if steps < 0:
            return f"{move.player} {what}: back {plural(-steps, 'space')}, to {where}."
        return f"{move.player} {what}: {plural(steps, 'space')}, to {where}."

    def space(self, space: int) -> str:
        if space > self.board.last:
            return "past Phase 10"
        phase = self.board.spaces[space]
        if space == self.board.last:
            return f"the Phase 10 space: {BOARD_PHASES[10].words()}"
        if phase is None:
            low, high = self.board.neighbours(space)
            return f"a Twist space, between phase {low} and phase {high}"
        return phase_words(BOARD_PHASES[phase])

    def won(self, event: GameWon, state: Phase10State) -> str:
        if len(event.winners) > 1:
            return f"{spoken_list(event.winners)} share the win!"
        winner = event.winners[0]
        if state.deciding:
            return f"{winner} wins with the lowest hand!"
        if len([p for p in state.players if state.seat(p).space > self.board.last]) > 1:
            return f"{winner} went out, and wins!"
        return f"{winner} wins!"

    def where(self, state: Phase10State, player: str) -> str:
        space = state.seat(player).space
        if space > self.board.last:
            return f"{player} is past Phase 10."
        return f"{player} is on space {space + 1} of {len(self.board.spaces)}: " \
               f"{self.space(space)}."

    def need(self, state: Phase10State, player: str) -> str:
        seat = state.seat(player)
        if state.over:
            return "The game is over."
        if seat.twist:
            took = "took a Twist card"
            if seat.phase is not None and seat.laid:
                return f"{player} {took} and laid down {seat.phase.name}."
            return f"{player} {took}: it stays secret until it is laid down."
        if seat.phase is None:
            low, high = self.neighbours(state, player)
            return f"{player} is on a Twist space: phase {low}, phase {high}, or a Twist card."
        done = " It is down." if seat.laid else ""
        return f"{player} needs {phase_words(seat.phase)}.{done}"

    def standing(self, state: Phase10State) -> str:
        """Where everyone stands, the furthest first: "Bob is on space 6 of 14,
        Ann on 5, Cy on 2." (the board itself: "read the board")."""
        seats = sorted(state.players, key=lambda p: -state.seat(p).space)
        last = len(self.board.spaces)

        def where(player: str, first: bool) -> str:
            space = state.seat(player).space
            if space > self.board.last:
                return f"{player} {'is ' if first else ''}past Phase 10"
            return f"{player} {'is on space' if first else 'on'} {space + 1}" + (
                f" of {last}" if first else "")

        return sentence(", ".join(where(p, i == 0) for i, p in enumerate(seats))) + "."

    def read_board(self, state: Phase10State) -> str:
        spaces = ", ".join("Twist" if p is None else str(p) for p in self.board.spaces)
        pawns = " ".join(self.where(state, p) for p in state.players)
        return f"The board: {spaces}. {pawns}"

    def leader(self, state: Phase10State) -> str:
        best = max(s.space for s in state.seats)
        leaders = [p for p in state.players if state.seat(p).space == best]
        where = "past Phase 10" if best > self.board.last else f"on {self.space(best)}"
        verb = "are" if len(leaders) > 1 else "is"
        return f"{spoken_list(leaders)} {verb} ahead, {where}."

    def my_twist(self, state: Phase10State, player: str) -> str:
        seat = state.seat(player)
        if not seat.twist:
            return f"{player} has no Twist card this hand."
        if not self.virtual:
            return f"{player}, your Twist card is the one you drew: I do not know it."
        return f"{player}, I can only say your Twist card in your headphones."

    def their_twist(self, state: Phase10State, player: str) -> str:
        """Another player's Twist card: whether they have one is known to all
        (it was taken aloud), which one is their secret until laid down."""
        if not state.seat(player).twist:
            return f"{player} has no Twist card this hand."
        return f"{player}'s Twist card is {player}'s secret until {player} lays it down."

    def phase_number(self, space: int) -> int | str | None:
        if space > self.board.last:
            return None
        phase = self.board.spaces[space]
        return "twist" if phase is None else phase
