"""What the conversation remembers between steps, as a value (the brain's
answers room, :mod:`referee.brain.answers`, keeps one and applies what its
transitions say). The open question is the questions room's own value
(:class:`~referee.brain.shared.Question`); what "repeat" says is kept with
every sentence said (:attr:`~referee.brain.shared.Shared.last`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

#: A wait for one player: who, the game's depth, the open question's text.
Wait = tuple[str, int, str | None]


@dataclass(frozen=True)
class Memory:
    """The sections of a long answer not read yet, the player last named,
    and the wait in which the awaited player was last asked to say it again.

    A long answer is read a section at a time ("more" reads the next):

    >>> memory = Memory().answering(["Part one.", "Part two."])
    >>> memory, section, more = memory.next_section()
    >>> section, more
    ('Part one.', True)
    >>> memory, section, more = memory.next_section()
    >>> section, more, memory.next_section()[1]
    ('Part two.', False, None)

    "Sorry, Ann?" is said once a wait:

    >>> memory, first = memory.prompt(("Ann", 3, None))
    >>> first, memory.prompt(("Ann", 3, None))[1], memory.prompt(("Ann", 4, None))[1]
    (True, False, True)

    A new game forgets what it read and who was named, not whom it prompted:

    >>> memory.naming("Bob").for_new_game() == Memory(prompted=("Ann", 3, None))
    True
    """

    unread: tuple[str, ...] = ()
    named: str | None = None
    prompted: Wait | None = None

    def answering(self, sections: Sequence[str]) -> Memory:
        """A new answer to read, section by section."""
        return replace(self, unread=tuple(sections))

    def next_section(self) -> tuple[Memory, str | None, bool]:
        """The next section to read (None: all was read) and whether more follow."""
        if not self.unread:
            return self, None, False
        rest = self.unread[1:]
        return replace(self, unread=rest), self.unread[0], bool(rest)

    def naming(self, player: str) -> Memory:
        """``player`` was named: "you" means them now."""
        return replace(self, named=player)

    def prompt(self, wait: Wait) -> tuple[Memory, bool]:
        """Whether to ask the awaited player to say it again in ``wait``: once a wait."""
        if wait == self.prompted:
            return self, False
        return replace(self, prompted=wait), True

    def for_new_game(self) -> Memory:
        """A rematch: no answer to read on, nobody named."""
        return replace(self, unread=(), named=None)
