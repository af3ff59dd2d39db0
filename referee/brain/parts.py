"""Words heard again with their rest: "flip my seven" ... "up".

The ears end an utterance at a pause when its words are a whole command
(docs/hearing.md, "When an utterance ends"). A player who goes on a moment
later said the rest of it, and the ears hear the two again as one utterance
(:meth:`~referee.speech.listen.Listener.whole`): speech that begins where the
part began. This room keeps the last utterance heard from each stream (its
microphone, phone or satellite, and speaker) with what came of it, and says
what the whole does (:func:`whole_of`); the session acts on that.

A held room (``self.streams``): a class of its own, told what it may read,
never inherited; it imports neither the session nor another room.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.brain.question import Question
from referee.engine.core import Game, Rejection
from referee.games.contract import Contract
from referee.protocol import Speech
from referee.speech.hearing.interface import Stream
from referee.speech.understanding.meaning import Intent
from referee.wording import NOT_MOVES

#: What the whole of a part does (:func:`whole_of`): heard as any utterance;
#: not heard twice (the move the part played or asked about, said in full);
#: the part's move was played, and the whole, another move heard surely, came
#: too late (the referee says so, and how to take it back); the same, heard
#: unsurely (nothing said: a misheard rest must not cast doubt on a move heard
#: well); or another move where the part's question is still open: the
#: question is let go, and the whole heard as any utterance.
HEARD, SAME, LATE, UNSURE_REST, LET_GO = "heard", "same", "late", "unsure rest", "let go"
#: Why the whole is dropped, logged.
DROPPED = {SAME: "the rest of a move heard already",
           LATE: "the whole of a move played too soon",
           UNSURE_REST: "the rest of a move, not heard surely"}


@dataclass(frozen=True)
class Part:
    """An utterance as the brain heard it, kept until its stream's next one:
    when it was said, what it meant, and what came of it: the move it played
    (the game's depth before it, and the move as the game describes it), or
    the question it opened; whose it was, and when it was decided (``at``)."""

    start: float
    end: float
    at: float
    who: str
    intent: Intent
    moved: tuple[int, str] | None
    question: Question | None


class Streams:
    """The parts room: the last utterance of each stream (source and speaker)."""

    def __init__(self) -> None:
        self._last: dict[Stream, Part] = {}

    def part_of(self, m: Speech, depth: int) -> Part | None:
        """The last utterance heard from ``m``'s stream when ``m`` is it heard
        again with its rest (the ears marked it whole:
        :meth:`~referee.speech.listen.Listener.whole`; it began where that
        one did), else None (and None when the move it played was undone
        since: the game is back at ``depth``, no deeper)."""
        part = self._last.get(m.stream)
        if part is None or not m.transcript.whole or m.start >= part.end:
            return None
        undone = part.moved is not None and part.moved[0] >= depth
        return None if undone else part

    def heard(self, m: Speech, who: str, intent: Intent, moved: tuple[int, str] | None,
              question: Question | None) -> None:
        """``m`` was heard as ``who``'s ``intent``: it played ``moved`` (the
        game's depth before the move and the move), or opened ``question``,
        or neither."""
        self._last = {**self._last,
                      m.stream: Part(m.start, m.end, m.at, who, intent, moved,
                                                  question)}


def whole_of(part: Part, whole: Intent, sure: bool, open_now: Question | None,
             same: Callable[[], bool]) -> str:
    """What ``whole``, the part heard again with its rest (``sure``: heard
    surely), does (:data:`HEARD` ... :data:`LET_GO`), with ``open_now`` the
    question open now and ``same`` whether it is the part's own move
    (:func:`same_move`, asked only where it matters)."""
    asked = open_now is not None and part.question is not None and (
        (open_now.text, open_now.by) == (part.question.text, part.question.by))
    if whole.kind in NOT_MOVES or (part.moved is None and not asked):
        return HEARD
    if same():
        return SAME
    if part.moved is not None:
        return LATE if sure else UNSURE_REST
    return LET_GO


def same_move(spec: Contract, game: Game[Any], whole: Intent, part: Part, at: float) -> bool:
    """Whether ``whole``, said by the part's speaker, is the move ``part``
    played (it leaves the game as that move did, from where it stood
    before it: "flip my seven down" for "flip my seven" that turned the
    seven down) or asked about (the same, from now); a whole the rules
    refuse there is another."""
    if part.moved is not None:
        depth = part.moved[0]
        played: dict[str, Any] | None = spec.public_state(game.before(depth + 1))
        return played_out(spec, whole, part.who, game.before(depth), at) == played
    if part.question is None:
        return False
    asked = played_out(spec, part.question.intent, part.question.by, game, at)
    return asked is not None and played_out(spec, whole, part.who, game, at) == asked


def played_out(spec: Contract, intent: Intent, who: str, game: Game[Any],
           at: float) -> dict[str, Any] | None:
    """What everyone would see after ``intent`` played in ``game`` (on a
    copy: nothing is kept), or None when it is no move or the rules
    refuse it there."""
    if intent.kind in NOT_MOVES:
        return None
    then = game.before(game.depth)
    try:
        then.apply(spec.action_for(intent, who, then), at)
    except Rejection:
        return None
    return spec.public_state(then)
