"""What every room of the brain shares: the game, the open question, the
turn clock's value, and how the referee says and logs things.

The brain (:class:`~referee.session.Session`) is split into rooms, one
module each, a class over this one: the turn clock
(:mod:`referee.brain.clock`), questions (:mod:`referee.brain.questions`),
moves and chance (:mod:`referee.brain.moves`), answers and the
conversation's memory (:mod:`referee.brain.answers`); the hearing room
(:mod:`referee.brain.hearing`) and the parts room (:mod:`referee.brain.parts`)
are held as fields, not inherited. :class:`Shared` makes
every field; each is then set by one room only, and no room calls another:
the session joins them and keeps the one entry point,
:meth:`~referee.session.Session.step` (``tests/test_rooms.py`` checks both).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from referee.brain.hearing import Hearing, Verdict, awaited, expectation
from referee.brain.memory import Memory
from referee.brain.news import News
from referee.brain.parts import Streams
from referee.brain.played import Played
from referee.brain.question import Question
from referee.brain.turnclock import TurnClock
from referee.engine.core import Event, GameStopped, Rejection, TurnStarted
from referee.games.contract import Contract
from referee.protocol import Output, Say, Speech, Tone
from referee.records import DroppedRecord, EventRecord, Record, SaidRecord
from referee.speech.hearing.decision import Expectation
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.wording import AFTER_THE_END, ANSWER_SECONDS, SOMEONE, NoSuchPlayer, player_named

log = logging.getLogger(__name__)

#: What the referee says of an event the game says nothing of: every game can
#: be stopped by its table ("end the game", the program closing).
DEFAULT_SAID: dict[type[Event], str] = {GameStopped: "Game stopped. No winner."}


class Shared:
    """The state the parts of the brain share, and saying and logging."""

    def __init__(
        self,
        spec: Contract,
        *,
        at: float = 0.0,
        matcher: IntentMatcher | None = None,
        answer_seconds: float = ANSWER_SECONDS,
    ) -> None:
        self.spec = spec
        self.game = spec.begin(at)
        self.matcher = matcher or IntentMatcher.for_phrases(spec.phrase_file, spec.players)
        self.now = at
        #: What "repeat" says again.
        self.last: list[str] = []
        self.question: Question | None = None
        self.answer_seconds = answer_seconds
        #: The moves made and the chance drawn (:mod:`referee.brain.moves` keeps it).
        self.played = Played()
        #: The results of this evening's earlier games ("play again"), each
        #: that had a move (:mod:`referee.brain.moves` keeps it).
        self.evening: tuple[dict[str, Any], ...] = ()
        #: The turn clock's state (:mod:`referee.brain.clock` keeps it).
        self.clock = TurnClock(limit=self._turn_limit(at))
        #: What the conversation remembers: the rest of a long answer, the
        #: player last named, whom "Sorry, Ann?" was said to (:mod:`referee.brain.answers`).
        self.memory = Memory()
        #: The parts room (:mod:`referee.brain.parts`): the last utterance
        #: heard from each stream, to know it again with its rest. Held.
        self.streams = Streams()
        #: The hearing room (:mod:`referee.brain.hearing`): held, not inherited.
        self.hearing = Hearing(spec, self.matcher)
        #: The end of the game was announced, with :data:`AFTER_THE_END`.
        self._ended = False
        #: The table said it is done ("that's all"): the table loop ends.
        self.left = False
        #: What this step logged, and what else it does, in order.
        self._logged: list[Record] = []
        self._out: list[Output] = []
        #: What the drivers were told, and whose turn it was after each of the
        #: latest steps (:mod:`referee.brain.news`). Held.
        self.news = News(beat=at)

    def _expecting(self, who: str) -> Expectation:
        """What the referee expects of ``who`` now (:mod:`referee.brain.hearing`)."""
        question = self.question
        waiting = awaited(self.spec, self.game, None if question is None else question.answerers,
                          self.clock.paused)
        return expectation(self.spec, self.game, self.matcher, who, waiting,
                           question is not None, self.now)

    def _drop(self, m: Speech, reason: str) -> None:
        """``m`` is not acted on, for ``reason``: logged."""
        log.info("not acted on: %r (%s)", m.transcript.text, reason)
        self._log(DroppedRecord(m.at, m.source, m.speaker, m.transcript.text, reason))

    def _dropped(self, m: Speech, verdict: Verdict) -> None:
        """``m`` is not acted on: logged, and what the referee says about
        hearing said (not logged: it is not the game's)."""
        self._drop(m, verdict.dropped or "")
        if verdict.notice is not None:
            self._out.append(Say(m.at, verdict.notice, Tone.PROBLEM))

    def _turn_limit(self, at: float) -> float | None:
        """The first turn's length in a game that begins ``at`` (None: no timer)."""
        deadline = self.game.deadline()
        return None if deadline is None else deadline - at

    @property
    def players(self) -> tuple[str, ...]:
        return self.game.players

    @property
    def over(self) -> bool:
        return self.game.is_over()

    def moments(self) -> frozenset[str]:
        """What can be said now besides the sentences of any time (the game's
        :meth:`~referee.games.contract.Talk.moments`); none once the game is over."""
        return frozenset() if self.over else self.spec.moments(self.game)

    def _emit(self, said: Sequence[Say]) -> None:
        self._out.extend(said)

    def _log(self, record: Record) -> None:
        self._logged.append(record)

    def public_state(self) -> dict[str, Any]:
        """What everyone at the table may know now (a screen shows it): the
        game's own state (:meth:`~referee.games.contract.Talk.public_state`),
        whose turn it is, when it runs out, the open question, and the moves
        each player could make now (as sentences, for seat pages)."""
        return {
            "players": list(self.players),
            "turn": None if self.over else self.game.current_player(),
            "deadline": self.game.deadline(),
            "question": None if self.question is None else self.question.text,
            "paused": self.clock.paused,
            "over": self.over,
            "game": self.spec.public_state(self.game),
            "moves": {p: [] if self.over else self.spec.moves_now(self.game, p)
                      for p in self.players},
        }

    def _say(self, texts: Sequence[str], at: float, tone: Tone = Tone.ANNOUNCE) -> list[Say]:
        said = [Say(at, t, tone) for t in texts if t]
        if said and tone != Tone.COUNTDOWN:
            self._remember([s.text for s in said])
        for s in said:
            self._log(SaidRecord(at, s.text, tone))
        return said

    def _problem(self, text: str, at: float) -> list[Say]:
        return self._say([text], at, Tone.PROBLEM)

    def _events(self, events: Sequence[Event], at: float) -> list[Say]:
        said: list[Say] = []
        for event in events:
            self._log(EventRecord.of(event, at))
            tone = Tone.TURN if isinstance(event, TurnStarted) else Tone.ANNOUNCE
            said += self._say([self.spec.announce(event, self.game) or DEFAULT_SAID.get(
                type(event), "")], at, tone)
            secret = self.spec.private(event, self.game)
            if secret is not None:
                said.append(self._say_privately(*secret, at))
        if self.over and not self._ended:
            self._ended = True
            said += self._say([AFTER_THE_END], at, Tone.TURN)
        if said:
            self._remember([s.text for s in said if s.to is None])
        return said

    def _remember(self, texts: list[str]) -> None:
        """What "repeat" says again from now on."""
        self.last = texts

    def _end_here(self, ended: bool = True) -> None:
        """Whether the end of the game was announced (the table is leaving,
        or an undo reached back before it): nothing more to announce."""
        self._ended = ended

    def _say_privately(self, player: str, text: str, at: float) -> Say:
        """A sentence for one player's ears only (a virtual Twist card): never
        repeated aloud by "repeat"."""
        self._log(SaidRecord(at, text, Tone.PRIVATE, player))
        return Say(at, text, Tone.PRIVATE, player)

    def attribute(self, speaker: str | None) -> str:
        """Who said something when the input does not say: the player asked, else
        the one the game waits for, else :data:`SOMEONE`."""
        if speaker is not None:
            return speaker
        if self.question is not None:
            return self.question.answerers[0]
        if self.over:
            return self.players[0]
        return self.spec.unnamed(self.game) or SOMEONE

    def label(self, speaker: str | None) -> str:
        """The name to print for what ``speaker`` said ("someone" when nothing tells)."""
        who = self.attribute(speaker)
        return "someone" if who == SOMEONE else who

    def _seat(self, speaker: str | None) -> tuple[str | None, str | None]:
        """The player ``speaker`` names, as written at the table ("ann" is Ann),
        and what to say when nobody of that name plays (a script's typo): then
        nothing is done."""
        if speaker is None or speaker in self.players:
            return speaker, None
        try:
            return player_named(speaker, self.players), None
        except NoSuchPlayer as error:
            return None, str(error)

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

    def _others(self, who: str) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != who) or (who,)

    def final_state(self) -> dict[str, Any]:
        return self.spec.final_state(self.game)

    def results(self) -> tuple[dict[str, Any], ...]:
        """Every game of the evening that was played, in order: this one last,
        unless it is a new game in which nothing has happened yet."""
        played = self.played.moves or self.over or not self.evening
        return (*self.evening, self.final_state()) if played else self.evening
