"""The table's screen (:mod:`referee.screen.server`): the board, the clock and
the captions in any browser at the table, and a page per player."""
