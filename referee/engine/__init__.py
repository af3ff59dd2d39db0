"""Pure game rules: no audio, no speech, no clock reads, no printing.

Time and chance come in as arguments; see :mod:`referee.engine.core` for the
contract every game follows.
"""

from referee.engine.core import (
    Action,
    Event,
    Game,
    Outcome,
    Rejection,
    Rules,
)

__all__ = ["Action", "Event", "Game", "Outcome", "Rejection", "Rules"]
