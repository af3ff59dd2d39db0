"""The hearing room: what the referee makes of one utterance.

From an utterance as the ears measured it (:class:`~referee.protocol.Speech`)
and a read-only :class:`View` of the brain (whose it is taken to be, what
the referee expects of them, whose turn it was), :meth:`Hearing.hear`
returns one frozen :class:`Verdict`: what was heard and the decision on it
(act, ask, "Sorry, Ann?", nothing), the gate's judgement over the referee's
voice, the caption, why it is dropped and what to say then, and what the
session is to do with it. The session holds the room (``self.hearing``) and
acts on the verdict; the room calls nothing of the session, and a test can
make it alone. The route, with the constants each step turns on:
docs/hearing.md.

Beside it, pure functions of the game as it stands: whom the referee is
waiting for (:func:`awaited`) and what it expects of them
(:func:`expectation`); and :class:`Judge`, the decision on one recogniser's
hearing with that in mind (over
:func:`referee.speech.hearing.decision.decide_expecting`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from referee.engine.core import Game
from referee.games.contract import Policy, Talk
from referee.gate import Utterance, judge
from referee.protocol import Expected, Judged, SoFar, Speech
from referee.speech.hearing.confidence import calibration_of, names_before
from referee.speech.hearing.decision import (
    ACT,
    ASK,
    NONE,
    REPEAT,
    Decision,
    Expectation,
    decide_expecting,
)
from referee.speech.hearing.interface import Transcript
from referee.speech.hearing.measures import Measures, Part
from referee.speech.listen import understand
from referee.speech.understanding.intents import FLOOR, Heard, IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.wording import (
    ADDRESSED,
    MAX_CHARS,
    NOT_CAUGHT,
    NOT_MOVES,
    SURE_SCORE,
    TOO_LONG,
    clean_text,
)

log = logging.getLogger(__name__)

#: What the session does with an utterance (:attr:`Verdict.action`): nothing
#: but log why the gate dropped it; or, heard: log it as not nearly a command
#: (table talk, a cough), cut the referee's voice ("stop"), prompt its speaker
#: ("Sorry, Ann?"), or answer it.
DROP, IGNORE, CUT, PROMPT, RESPOND = "drop", "ignore", "cut", "prompt", "respond"


def awaited(spec: Talk, game: Game[Any], answerers: tuple[str, ...] | None,
            paused: bool) -> tuple[str, ...]:
    """The players the referee is waiting for: those its open question asks
    (``answerers``), else the player whose move it is, or every player when
    it waits for nobody in particular (Phase 10 Twist between reports: any of
    them may lay down); nobody while the game is paused or over."""
    if game.is_over() or paused:
        return ()
    if answerers is not None:
        return answerers
    player = spec.unnamed(game)
    return game.players if player is None else (player,)


def expectation(spec: Policy, game: Game[Any], matcher: IntentMatcher, who: str,
                waiting_for: tuple[str, ...], question_open: bool, at: float) -> Expectation:
    """What the referee expects of ``who`` now: with a question open, a yes
    or a no from one it asked; else a move the rules take from them now
    without a penalty (:meth:`~referee.games.contract.Policy.expects`), or a
    yes or no that answers the game's own question
    (:meth:`~referee.games.contract.Policy.answer_move`)."""

    @lru_cache(maxsize=16)
    def expects(sentence: str) -> bool:
        intent = matcher.match(sentence, who).intent
        if question_open or intent.kind == "answer":
            return intent.kind == "answer" and (
                question_open or spec.answer_move(intent, who, game) is not None)
        return intent.kind not in NOT_MOVES and spec.expects(intent, who, game, at)

    def answered(sentence: str) -> bool:  # (a question about the game, however unsure)
        return matcher.match(sentence, who).intent.kind == "query"

    return Expectation(who in waiting_for, expects, answered)


#: A part of an utterance heard again around its pause (a command said with
#: other words in one breath) that is a move the referee expects of the
#: awaited player is asked about from this probability (with the
#: expectation's prior: :func:`~referee.speech.hearing.decision.decide_expecting`),
#: and a question of theirs from :data:`PART_QUERY_HEARD` (its own probability):
#: fitted on real talk words of speakers in no measurement set
#: (``./run bench intalk --fit``; docs/hearing.md).
PART_HEARD = 0.6
PART_QUERY_HEARD = 0.95
#: Turn 7's own :data:`PART_HEARD`: the same rule on Turn 7's fitting streams
#: alone chooses 0.3 (its one-word moves, "hit" and "stay", are heard less
#: surely in a part than the other games' longer commands); on every other
#: game's it chooses the pooled 0.6 (docs/record/2026-12-07-every-part-weighed.md).
TURN7_PART_HEARD = 0.3
#: The games whose own fitting streams chose another :data:`PART_HEARD`; a
#: game not named here (a new game's included) takes the pooled one.
GAME_PART_HEARD: Mapping[str, float] = {"turn7": TURN7_PART_HEARD}


def part_heard(game: str) -> float:
    """The probability from which an expected move in a part of an
    utterance is asked about, in ``game``."""
    return GAME_PART_HEARD.get(game, PART_HEARD)


class Judge:
    """The referee's decisions on hearings for one table: the matcher's
    readings and the names a sentence would change, kept between hearings."""

    def __init__(self, matcher: IntentMatcher) -> None:
        self.matcher = matcher
        players = matcher.players or ("?",)
        self._names = names_before(lambda s: matcher.match(s, players[0]), matcher.players)

    def decide(self, transcript: Transcript, who: str,
               expecting: Expectation | None) -> Decision:
        """The decision on one hearing by ``who``; a hearing without the
        measures (another recogniser, an older log) is decided as its
        recogniser did. A part of the utterance heard again around its pause
        (:attr:`Measures.parts`: a command said with other words in one breath)
        is asked about when the whole was not heard, the speaker is awaited,
        and the part is a sentence expected of them, heard at the threshold
        of one nobody expects (a part is weaker evidence than a whole)."""
        own = _as_heard(transcript)
        measures = transcript.measures
        if measures is None or not measures.options or measures.probability is None:
            return own
        calibration = calibration_of(measures.model)

        def meaning(sentence: str) -> Intent:
            return self.matcher.match(sentence, who).intent

        names: Callable[[str], Collection[str]] = self._names
        weights = dict(calibration.weights)
        decision = decide_expecting(measures, own, weights, names, meaning, expecting)
        if decision.decision != ACT:
            decision = self._as_written(measures, who, decision)
        if (decision.decision in (NONE, REPEAT) and measures.parts
                and expecting is not None and expecting.awaited):
            return self._parts(measures.parts, decision, weights, names, meaning, expecting)
        return decision

    def _parts(self, parts: Sequence[Part], decision: Decision, weights: dict[str, float],
               names: Callable[[str], Collection[str]], meaning: Callable[[str], Intent],
               expecting: Expectation) -> Decision:
        """``decision`` (nothing heard, or "Sorry, Ann?" from the awaited
        player), unless a part of the utterance heard again around its pause
        is a command they said with other words in one breath ("Sheila, hit
        me", "hit me, come on", "dog, what's my score"): asked about, never
        acted on at once (a part is weaker evidence than a whole), when it
        is a move the referee expects of them heard from :func:`part_heard`
        (the game's own threshold, else :data:`PART_HEARD`), or a question
        heard from :data:`PART_QUERY_HEARD` that the part is likelier than
        any expected move. Every cut is weighed (a move before a question,
        then the likelier): the part that holds the move is often the less
        likely one by its own probability, beside a word heard surely as
        another command ("house" as "pause"). (Off-turn talk stays talk: the
        caller weighs no part of another player's.)"""
        moves: list[Decision] = []
        threshold = part_heard(self.matcher.phrases.game)
        for part in parts:
            measures = part.measures
            if not measures.options:
                continue
            as_heard = Decision(NONE, measures.best, measures.chance)
            heard = decide_expecting(measures, as_heard, weights, names, meaning, expecting)
            if heard.decision in (ASK, REPEAT):  # likeliest an expected move
                if heard.decision == ASK and heard.probability >= threshold:
                    moves.append(heard)
            elif (as_heard.sentence and meaning(as_heard.sentence).kind == "query"
                    and as_heard.probability >= PART_QUERY_HEARD):
                moves.append(Decision(ASK, as_heard.sentence, as_heard.probability,
                                      contested=True))
        return max(moves, key=lambda d: (not d.contested, d.probability), default=decision)

    def _as_written(self, measures: Measures, who: str, decision: Decision) -> Decision:
        """``decision``, one the search is not sure of, unless the free
        transcript wrote a number the game does not have in that very
        command (#83): "flip my thirteen" is searched among the sentences of
        the game, where "flip my three" comes closest, unsure, but written
        freely as "Flip my 13.", which the matcher reads as a near miss of a
        flip. The referee then says so ("There is no tile 13. Tiles go from 1
        to 12.") rather than ask "did you say: flip Ann's 3?", which a
        reflexive yes would play, or say nothing. Only a number, only in a
        command of the kind the search heard, and never over a sentence the
        search is sure of: the free transcript writes a number for another
        word now and then ("I call seventy", heard surely, written "I call
        17."), and a name written freely is often another spelling of a
        player's ("Bop")."""
        free = measures.free
        if not free:
            return decision
        read = self.matcher.match(free, who)
        if read.missed != "number" or read.near is None or (
                read.near.kind != self.matcher.match(decision.sentence, who).intent.kind):
            return decision
        return Decision(ACT, free, decision.probability, decision.expected, near_miss=True)


def _as_heard(transcript: Transcript) -> Decision:
    """A recogniser's own decision (its text and confidence) as a :class:`Decision`."""
    measures = transcript.measures
    chance = (measures.probability if measures is not None else None) or transcript.confidence
    if not transcript.text:
        return Decision(NONE, measures.best if measures is not None else "", chance)
    sure = transcript.confidence >= SURE_SCORE
    return Decision(ACT if sure else ASK, transcript.text, chance)


@dataclass(frozen=True)
class View:
    """What the hearing room reads of the brain for one utterance, taken by
    the session when the utterance is decided (nothing else of it is read)."""

    #: Whose utterance it is taken to be (a seat's player; the table
    #: microphone's: the player its words name, else the awaited one).
    who: str
    #: What the referee expects of them now (:func:`expectation`).
    expecting: Expectation
    #: Whose turn it was when the utterance began, and now.
    turn_then: str | None
    turn_now: str | None


@dataclass(frozen=True)
class Verdict:
    """What the referee makes of one utterance; the session acts on it."""

    #: What to do (:data:`DROP`, :data:`IGNORE`, :data:`CUT`, :data:`PROMPT`, :data:`RESPOND`).
    action: str
    #: What was heard, as the drivers are told it.
    judged: Judged
    #: The intent read from the words decided on, with how sure the matcher is.
    heard: Heard
    #: Why it is not acted on (logged), for :data:`DROP` and :data:`IGNORE`.
    dropped: str | None = None
    #: What the referee says about hearing ("Sorry, I was talking: say it
    #: again", "I didn't catch that"): said, not logged.
    notice: str | None = None
    #: What to caption as said (None: nothing: the gate dropped it).
    caption: str | None = None
    #: Heard surely and not over the referee's voice: a move may be played
    #: at once (what the rest of a move played too soon is judged by).
    sure: bool = False
    #: Said over the referee's voice: a move is asked about, never played.
    over_voice: bool = False
    #: For :data:`RESPOND`: played at once (else asked about first), and a
    #: question to confirm before answering it (``Decision.contested``).
    respond_sure: bool = False
    confirm: bool = False


class Hearing:
    """The hearing room: held by the session, never inherited. It keeps
    what is decided of hearings between them (:class:`Judge`'s readings)
    and reads nothing of the brain but the :class:`View` it is given."""

    def __init__(self, spec: Policy, matcher: IntentMatcher) -> None:
        self.spec, self.matcher = spec, matcher
        self._judge = Judge(matcher)

    def hear(self, m: Speech, view: View) -> Verdict:
        """The verdict on ``m``: decided (:class:`Judge`), read (the
        matcher), judged against the referee's voice (:func:`referee.gate.judge`),
        then sorted: dropped, "stop", "Sorry, Ann?", not nearly a command
        (dropped, but "I didn't catch that" when addressed to the referee),
        or answered."""
        decision = self._judge.decide(m.transcript, view.who, view.expecting)
        text = decision.text
        heard = understand(self.matcher, replace(m.transcript, text=text,
                                                 confidence=decision.confidence), view.who)
        utterance = Utterance(heard, text, m.start, m.end, m.speaking, m.over, m.speaker,
                              view.turn_then, view.turn_now)
        gate = judge(utterance, m.room, barge_in=self.spec.barge_in(heard.intent),
                     moves=heard.kind not in NOT_MOVES)
        judged = Judged(m.at, m.speaker, heard, text, gate.dropped, decision.decision,
                        decision.expected)
        verdict = Verdict(DROP, judged, heard, over_voice=gate.over_voice)
        if gate.dropped is not None:
            return replace(verdict, dropped=gate.dropped, notice=gate.notice)
        caption = (text or "...") if heard.kind != "none" or text else None
        verdict = replace(verdict, caption=caption,
                          sure=decision.decision == ACT and not gate.over_voice)
        if heard.kind == "stop":
            return replace(verdict, action=CUT)
        if decision.decision == REPEAT:
            return replace(verdict, action=PROMPT)
        if heard.kind == "none" and not heard.message and heard.score < FLOOR:
            return replace(verdict, action=IGNORE, dropped="not a command",
                           notice=NOT_CAUGHT if ADDRESSED.match(heard.text) else None)
        return replace(verdict, action=RESPOND, confirm=decision.contested,
                       respond_sure=self.is_sure(heard, named=False) and not gate.over_voice)

    def so_far(self, m: SoFar, who: str, expecting: Callable[[str], Expectation]) -> Expected:
        """The ears' question while ``who`` is still speaking: whether the
        words said so far are a move the referee expects of them now
        (``expecting``; None: no move, the game has no say). A failure is no
        opinion, never the end of the game."""
        try:
            if self.matcher.match(m.text, who).intent.kind in NOT_MOVES:
                return Expected(m.at, m.text, None, who)
            expects = expecting(who)
            return Expected(m.at, m.text, expects.awaited and expects.expects(m.text), who)
        except Exception:
            log.exception("judging the words so far failed")
            return Expected(m.at, m.text, None, who)

    def read(self, text: str, who: str, *, named: bool, tap: bool) -> tuple[Heard, bool]:
        """A typed line (cleaned, not empty) by ``who`` (``named``: the line
        said who typed it) read: what it means, and whether a move in it is
        played at once (:meth:`is_sure`). A line longer than
        :data:`~referee.wording.MAX_CHARS` characters is refused, its start
        kept (logged with the answer it got, so that replay and resume say the
        same). A move sent by tapping a seat page's button (``tap``) is asked
        about first when it ends a turn or the game
        (:meth:`~referee.games.contract.Policy.confirm_tap`): one tap is
        easily a slip."""
        if len(text) > MAX_CHARS:
            return Heard(text[:MAX_CHARS] + "...", Intent("none"), 0.0, TOO_LONG), False
        heard = self.matcher.match(text, who)
        return heard, self.is_sure(heard, named=named) and not (
            tap and self.spec.confirm_tap(heard.intent))

    def is_sure(self, heard: Heard, *, named: bool) -> bool:
        """Whether a move heard so is played at once rather than asked about
        first: the matcher's score is high enough, and it is not a move the
        game always confirms (a call that costs a tray) unless a typed line
        named who made it. The one rule for typed and spoken input (a spoken
        move never names its player in words the referee can trust)."""
        return heard.score >= SURE_SCORE and (
            named or not self.spec.always_confirm(heard.intent))

    def is_stop(self, text: str, who: str) -> bool:
        """Whether a typed line is "stop" (it cuts the voice as a spoken one does)."""
        return self.matcher.match(clean_text(text)[:MAX_CHARS], who).kind == "stop"
