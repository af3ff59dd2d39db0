"""The referee's side of the table, independent of any clock or device.

A :class:`Session` is told what was said, by whom and when (:meth:`hear`), and
what time it is (:meth:`tick`); it answers with the sentences the referee says
and when. The typed-text front end, the scripted transcript mode and the voice
loop all drive the same session, so they behave alike; tests drive it with a
simulated clock.

Decisions:

* An utterance without a known speaker is attributed to the active player.
* Countdown marks, in seconds left: half the turn (when more than 10), 10
  (when the turn is longer), then 5, 4, 3, 2, 1. The deadline itself applies the
  engine's timeout.
* "repeat" says again the last thing the referee said, countdown excepted.
* Empty input is ignored; input longer than :data:`MAX_CHARS` characters is
  refused with a message; anything else that is not a command gets a short
  "didn't catch that" (or the near-miss explanation).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.engine.core import Event, Rejection, StopGame, Timeout, TurnStarted
from referee.games.base import GameSpec, spoken_list
from referee.speech.intents import Heard, IntentMatcher

log = logging.getLogger(__name__)

MAX_CHARS = 500
COUNTDOWN_WORDS = {5: "Five.", 4: "Four.", 3: "Three.", 2: "Two.", 1: "One."}


@dataclass(frozen=True)
class Said:
    """One sentence of the referee at a time in seconds."""

    at: float
    text: str
    #: "announce" (game events), "answer" (questions), "countdown", "problem".
    kind: str = "announce"


def countdown_marks(limit: float | None) -> tuple[float, ...]:
    """Seconds-left marks at which the referee counts down a turn.

    >>> countdown_marks(15), countdown_marks(30), countdown_marks(None)
    ((10, 5, 4, 3, 2, 1), (15.0, 10, 5, 4, 3, 2, 1), ())
    """
    if not limit:
        return ()
    marks: list[float] = []
    if limit / 2 > 10:
        marks.append(limit / 2)
    if limit > 10:
        marks.append(10)
    marks.extend(m for m in (5, 4, 3, 2, 1) if m < limit)
    return tuple(marks)


def _mark_text(mark: float) -> str:
    if mark <= 5:
        return COUNTDOWN_WORDS[int(mark)]
    return "10 seconds." if mark == 10 else "Half time."


def clean_text(text: str) -> str:
    """Drop control and unprintable characters; fold white space."""
    kept = (ch if unicodedata.category(ch)[0] not in "CZ" else " " for ch in text)
    return " ".join("".join(kept).split())


class Session:
    """A game being refereed: utterances in, sentences out."""

    def __init__(
        self,
        spec: GameSpec,
        *,
        at: float = 0.0,
        matcher: IntentMatcher | None = None,
    ) -> None:
        self.spec = spec
        self.game = spec.new_game(at)
        self.matcher = matcher or IntentMatcher.for_game(spec.name, spec.players)
        self.now = at
        self.last: list[str] = []
        self._turn_limit: float | None = None
        self._fired: set[float] = set()
        deadline = self.game.deadline()
        if deadline is not None:
            self._turn_limit = deadline - at

    @property
    def players(self) -> tuple[str, ...]:
        return self.game.players

    @property
    def over(self) -> bool:
        return self.game.is_over()

    # --- what the referee says ------------------------------------------------------
    def _say(self, texts: Sequence[str], at: float, kind: str = "announce") -> list[Said]:
        said = [Said(at, t, kind) for t in texts if t]
        if said and kind != "countdown":
            self.last = [s.text for s in said]
        return said

    def _events(self, events: Sequence[Event], at: float) -> list[Said]:
        for event in events:
            if isinstance(event, TurnStarted):
                self._fired = set()
                self._turn_limit = event.seconds
        return self._say([self.spec.announce(e, self.game) for e in events], at)

    def start(self) -> list[Said]:
        """The opening announcement."""
        return self._say([self.spec.opening(self.game)], self.now)

    # --- the clock ---------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        """When the referee next has something to say if nobody speaks."""
        deadline = self.game.deadline()
        if deadline is None:
            return None
        pending = [deadline - m for m in countdown_marks(self._turn_limit) if m not in self._fired]
        return min([*pending, deadline])

    def tick(self, at: float) -> list[Said]:
        """Everything due up to ``at``: countdown marks, then timeouts."""
        said: list[Said] = []
        while not self.over:
            deadline = self.game.deadline()
            if deadline is None:
                break
            due = [
                m for m in countdown_marks(self._turn_limit)
                if m not in self._fired and deadline - m <= at
            ]
            for mark in due:
                self._fired.add(mark)
                said += self._say([_mark_text(mark)], deadline - mark, "countdown")
            if deadline > at:
                break
            events = self.game.apply(Timeout(), deadline)
            said += self._events(events, deadline)
        self.now = max(self.now, at)
        return said

    # --- what players say -----------------------------------------------------------------
    def hear(self, text: str, speaker: str | None, at: float) -> list[Said]:
        """React to one utterance ``text`` by ``speaker`` (None: the active player)."""
        said = self.tick(at)
        text = clean_text(text)
        if not text:
            return said
        if len(text) > MAX_CHARS:
            return said + self._say(
                ["That was too long for me. Please say one move at a time."], at, "problem"
            )
        who = speaker or self.game.current_player() or self.players[0]
        heard = self.matcher.match(text, who)
        log.debug("heard %r from %s: %s", text, who, heard)
        return said + self.respond(heard, who, at)

    def respond(self, heard: Heard, speaker: str, at: float) -> list[Said]:
        """Act on an intent the matcher (or a recogniser) produced."""
        intent = heard.intent
        kind = intent["kind"]
        if kind == "none":
            message = heard.message or "Sorry, I didn't catch that. Say help for what you can say."
            return self._say([message], at, "problem")
        if kind == "ambiguous":
            options = [self.spec.describe_intent(c) for c in intent["candidates"]]
            question = f"Did you mean {spoken_list(options).replace(' and ', ' or ')}?"
            return self._say([f"{question} Please say it again."], at, "problem")
        if kind == "query":
            return self._answer(intent, at)
        return self._act(intent, speaker, at)

    def _answer(self, intent: dict[str, Any], at: float) -> list[Said]:
        if intent["what"] == "repeat":
            if not self.last:
                return self._say(["I haven't said anything yet."], at, "answer")
            return [Said(at, t, "answer") for t in self.last]
        return self._say([self.spec.answer(intent["what"], intent.get("player"), self.game, at)],
                         at, "answer")

    def _act(self, intent: dict[str, Any], speaker: str, at: float) -> list[Said]:
        try:
            action = self.spec.action_for(intent, speaker)
            events = self.game.apply(action, at)
        except Rejection as rejection:
            return self._say([rejection.sentence], at, "problem")
        return self._events(events, at)

    def stop(self, at: float) -> list[Said]:
        """The table ends the game."""
        if self.over:
            return []
        return self._events(self.game.apply(StopGame(), at), at)

    def final_state(self) -> dict[str, Any]:
        return self.spec.final_state(self.game)
