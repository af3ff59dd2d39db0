"""What the moves room remembers besides the game itself, as a value: the
moves made (for undo and for what a no says stands), each chance step's
outcome, and the outcomes that must come again (:mod:`referee.brain.moves`
keeps one and applies what its transitions say).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Played:
    """The moves and chance of a game so far; every transition returns a new one.

    Undo is no re-roll: the chance an undo took back comes again, the same,
    at the next chance step it can come at:

    >>> played = Played().moved(0, "Ann flips 7").chanced(1, "Bob draws 3")
    >>> played = played.undone(0)
    >>> played.moves, played.undone_chance
    ((), ('Bob draws 3',))
    >>> played, again = played.next_outcome(drawn=True)
    >>> again, played.undone_chance
    ('Bob draws 3', ())

    A game rebuilt from its log takes the logged outcomes as they came, and
    an undo there queues nothing again (the log has what came next):

    >>> played = Played().rebuilt(("Ann rolls 5 and 3",))
    >>> played, logged = played.next_outcome(drawn=True)
    >>> logged, played.replaying
    ('Ann rolls 5 and 3', True)
    >>> played.chanced(1, logged).moved(1, "Ann shuts 8").undone(0).undone_chance
    ()
    """

    #: (the game's depth before the move, what the move was), oldest first.
    moves: tuple[tuple[int, str], ...] = ()
    #: Each chance step's outcome, with the game's depth before it.
    chance: tuple[tuple[int, str], ...] = ()
    #: Outcomes an undo took back, to come again, first first.
    undone_chance: tuple[str, ...] = ()
    #: Outcomes read from a log being replayed, oldest first.
    logged_chance: tuple[str, ...] = ()
    #: A game rebuilt from a log, until it goes on at a table.
    replaying: bool = False

    def moved(self, depth: int, move: str) -> Played:
        return replace(self, moves=(*self.moves, (depth, move)))

    def chanced(self, depth: int, outcome: str) -> Played:
        return replace(self, chance=(*self.chance, (depth, outcome)))

    def next_outcome(self, drawn: bool) -> tuple[Played, str | None]:
        """The outcome the next chance step must have, if any: the logged one
        on replay, else one an undo took back (when the referee draws:
        ``drawn``); None: whatever is drawn or told."""
        if self.logged_chance:
            return replace(self, logged_chance=self.logged_chance[1:]), self.logged_chance[0]
        if self.undone_chance and drawn:
            return replace(self, undone_chance=self.undone_chance[1:]), self.undone_chance[0]
        return self, None

    def undone(self, undo_to: int) -> Played:
        """The last move taken back, with the chance after ``undo_to``."""
        undone = tuple(o for depth, o in self.chance if depth > undo_to)
        return replace(self, moves=self.moves[:-1],
                       chance=tuple((d, o) for d, o in self.chance if d <= undo_to),
                       undone_chance=self.undone_chance if self.replaying
                       else undone + self.undone_chance)

    def rebuilt(self, logged: tuple[str, ...]) -> Played:
        """A game rebuilt from a log: its chance steps take ``logged``."""
        return replace(self, replaying=True, logged_chance=logged)

    def at_table(self) -> Played:
        """The rebuilt game goes on at a table."""
        return replace(self, replaying=False)
