"""What passes between the referee's brain and the rest of the table.

The brain (:class:`~referee.session.Session`) has one entry point,
``Session.step(message) -> list[Output]``: it is told what happened as a typed
*input* and answers with typed *outputs*. It reads no clock and touches no
device; everything it knows arrives as an input, everything it does leaves as
an output. Every way of playing drives it the same way:

==========================  =====================================================
way of playing              inputs it sends
==========================  =====================================================
typed lines, live           :class:`Typed`, :class:`Tick`
typed timed scripts         :class:`Typed`, :class:`Tick` (simulated clock)
microphone, live            :class:`Speech` (what the ears measured),
                            :class:`SoFar` (the words so far, at a pause:
                            does the referee expect them?),
                            :class:`SpokenUntil`, :class:`VoiceCut`,
                            :class:`VoiceChanged`, :class:`MicLost`,
                            :class:`MicBack`, :class:`Stop`, :class:`Tick`
audio scripts               the same on a simulated clock
replay                      the logged inputs again (the first :class:`Start`
                            with ``rebuild``); an older log's records
                            converted (:class:`Understood` ...)
resume                      replay, then :class:`Resume`, then live
==========================  =====================================================

and performs the outputs: :class:`Say` (print, speak, or play in one
player's headphones), :class:`CutVoice`, :class:`ChangeVoice`,
:class:`Caption` (who said what), :class:`Logged` (append to the game log),
:class:`Snapshot` (the public state, for a screen), :class:`Judged` (what
was heard), :class:`Moments` (what the recogniser listens for),
:class:`Expected` (the answer to a :class:`SoFar`, alone in its step),
:class:`WakeAt` (when to tick next) and :class:`Left` (the table is done). A driver learns
everything it knows of the game from these outputs: it never reads the brain.

Each step returns what it logged first (the input itself, then the records
of what happened), then the rest in the order it happened. Every message is
a frozen dataclass and round-trips through JSON (:func:`to_json`,
:func:`from_json`): the game log is these inputs and records, one a line, and
replay steps the inputs again (:mod:`referee.replay`).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from referee.codec import LogError, checked, plain
from referee.records import Record
from referee.speech.hearing.interface import OverVoice, Stream, Transcript
from referee.speech.understanding.intents import Heard


class Tone(StrEnum):
    """What a sentence is, which decides how the mouth treats it."""

    #: A game event ("Ann, 7 down.").
    ANNOUNCE = "announce"
    #: Whose turn it is: the turn's timer starts once it has been said.
    TURN = "turn"
    #: An answer to a question: the timer stands still while it is said.
    ANSWER = "answer"
    #: A yes/no question: the answer time counts from its end.
    QUESTION = "question"
    #: "Five.", "Four." ...: skipped when late or when a player is talking.
    COUNTDOWN = "countdown"
    #: Something is wrong with what was said or typed.
    PROBLEM = "problem"
    #: For one player's ears only (their own headphones).
    PRIVATE = "private"


# --- inputs: what the brain is told ------------------------------------------------


@dataclass(frozen=True)
class Start:
    """The game begins: the opening and any chance it starts with. ``rebuild``:
    the game is rebuilt from a log whose chance steps had these outcomes, in
    order; nothing is said. ``legacy_clock``: the log is of a format before 4,
    whose turn clock could start a new turn while an earlier sentence was
    still being said or read (it is rebuilt, and goes on, as it was played)."""

    type: ClassVar[str] = "start"
    at: float
    rebuild: tuple[str, ...] | None = None
    legacy_clock: bool = False


@dataclass(frozen=True)
class Tick:
    """Game time is now ``at``: countdowns, timeouts, unanswered questions."""

    type: ClassVar[str] = "tick"
    at: float


@dataclass(frozen=True)
class Typed:
    """A typed line (the keyboard, a script), by ``speaker`` if it says who;
    ``source`` "seat" for a line typed on a player's seat page, "tap" for a
    button tapped there."""

    type: ClassVar[str] = "typed"
    at: float
    text: str
    speaker: str | None = None
    source: str = "text"


@dataclass(frozen=True)
class Spoken:
    """A sentence the referee is saying, from ``start`` to ``end``."""

    text: str
    start: float
    end: float
    tone: Tone = Tone.ANNOUNCE


@dataclass(frozen=True)
class Room:
    """What the table knows of the room it listens in (the gate's: :mod:`referee.gate`)."""

    #: How long after a sentence ends its sound may still reach the microphone.
    echo_tail: float = 0.0
    #: The microphone is cleaned of the referee's voice (an echo canceller).
    cancels_echo: bool = False
    #: Fields logs of before 2026-12-05 hold and the room no longer has (a
    #: test-only switch that turned the gate off): read and ignored.
    retired: ClassVar[frozenset[str]] = frozenset({"gated"})


@dataclass(frozen=True)
class Speech:
    """An utterance from ``start`` to ``end`` decided on at ``at``: what the ears
    measured. The brain understands the words (the matcher), says whose they
    are, and judges them (the gate) before it acts."""

    type: ClassVar[str] = "speech"
    at: float
    start: float
    end: float
    #: The seat it came from (seat microphones), or None.
    speaker: str | None
    #: Where it was heard: "mic" (the table's), "seat mic" (a seat's channel of
    #: ``--seat-mics``), "phone" (a seat page), "satellite" (a Wyoming
    #: satellite), "audio script", "echo" (a test's loudspeaker).
    source: str
    #: What the recogniser heard: its words and how sure it is.
    transcript: Transcript
    #: The referee's sentences sounding between ``start`` and ``end`` (with
    #: the echo's tail).
    speaking: tuple[Spoken, ...] = ()
    #: What the microphone measured of it over the referee's voice, if that played.
    over: OverVoice | None = None
    #: The room it was heard in.
    room: Room = Room()

    @property
    def stream(self) -> Stream:
        """The stream it was heard from: its source and seat. The ears and the
        brain each remember a stream's last utterance by this key (to hear
        it again with its rest: :meth:`~referee.speech.listen.Listener.whole`,
        :mod:`referee.brain.parts`)."""
        return self.source, self.speaker


@dataclass(frozen=True)
class Understood:
    """An utterance already understood and judged sure or not (what an older
    game log's ``input`` record holds: :mod:`referee.oldlogs`)."""

    type: ClassVar[str] = "understood"
    at: float
    heard: Heard
    speaker: str | None
    sure: bool = True
    source: str = "text"



@dataclass(frozen=True)
class SoFar:
    """The words a player has said so far, decoded ahead at a pause (they may
    go on): does the referee expect them now? The brain answers
    :class:`Expected` and changes nothing; never logged. The ears wait longer
    for the rest of a move it does not expect ("shut four ..." on a roll of
    nine: :class:`~referee.listening.Listening`)."""

    type: ClassVar[str] = "so-far"
    at: float
    text: str
    #: Who is speaking (a seat's phone), or None (the table's microphone).
    speaker: str | None = None


@dataclass(frozen=True)
class SpokenUntil:
    """A sentence of ``tone`` said at ``at`` finished being said (or read) at
    ``until``: a turn's timer starts then, a question's answer time counts from then."""

    type: ClassVar[str] = "spoken-until"
    at: float
    until: float
    tone: Tone


@dataclass(frozen=True)
class VoiceCut:
    """The referee's voice was cut short at ``at`` ("stop")."""

    type: ClassVar[str] = "voice-cut"
    at: float


@dataclass(frozen=True)
class VoiceChanged:
    """The voice took a :class:`ChangeVoice`; ``reply`` is what to say about it."""

    type: ClassVar[str] = "voice-changed"
    at: float
    reply: str


@dataclass(frozen=True)
class MicLost:
    """The microphone is gone: the timer waits (``text`` says so to the table)."""

    type: ClassVar[str] = "mic-lost"
    at: float
    text: str


@dataclass(frozen=True)
class MicBack:
    """The microphone is back: the timer runs again."""

    type: ClassVar[str] = "mic-back"
    at: float
    text: str


@dataclass(frozen=True)
class Resume:
    """A rebuilt game goes on at a table: say where it stands."""

    type: ClassVar[str] = "resume"
    at: float


@dataclass(frozen=True)
class Stop:
    """The table ends the game (the program is closing)."""

    type: ClassVar[str] = "stop"
    at: float


Input = (Start | Tick | Typed | Speech | Understood | SpokenUntil | VoiceCut
         | VoiceChanged | MicLost | MicBack | Resume | Stop | SoFar)


# --- outputs: what the brain does -----------------------------------------------------


@dataclass(frozen=True)
class Say:
    """One sentence of the referee at ``at``, for the table or for ``to`` alone."""

    type: ClassVar[str] = "say"
    at: float
    text: str
    tone: Tone = Tone.ANNOUNCE
    #: The player a private sentence is for (their own output), else None: everyone.
    to: str | None = None


@dataclass(frozen=True)
class CutVoice:
    """Stop talking ("stop"). When the referee was not talking (not since
    ``since``, if given), say so: a player who cannot see tells that from not heard."""

    type: ClassVar[str] = "cut-voice"
    at: float
    since: float | None = None


@dataclass(frozen=True)
class ChangeVoice:
    """Speak "louder", "quieter", "slower" or "faster"; answer with :class:`VoiceChanged`."""

    type: ClassVar[str] = "change-voice"
    at: float
    change: str


@dataclass(frozen=True)
class Caption:
    """What a player said, as the referee took it (``who`` as printed)."""

    type: ClassVar[str] = "caption"
    at: float
    who: str
    text: str
    source: str


@dataclass(frozen=True)
class Logged:
    """A line for the game log: the input the step was given, or a record of
    what it made happen."""

    type: ClassVar[str] = "logged"
    record: Entry


@dataclass(frozen=True)
class Snapshot:
    """The public state after a step that changed something (for a screen)."""

    type: ClassVar[str] = "snapshot"
    at: float
    state: dict[str, Any] = field(default_factory=dict)
    #: The game's result as it stands.
    final: dict[str, Any] = field(default_factory=dict)
    #: The result of every game of the evening that was played ("play
    #: again"), this one last (what ``--json`` prints at the end, a line each).
    games: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Judged:
    """What the brain made of an utterance: the intent it heard in the words,
    and why it is not acted on (``dropped``: the referee's echo, said over its
    voice, too late ...), or None."""

    type: ClassVar[str] = "judged"
    at: float
    speaker: str | None
    heard: Heard
    transcript: str
    dropped: str | None = None
    #: The referee's decision on the hearing (:mod:`referee.speech.hearing.decision`):
    #: "act" (heard surely), "ask" (heard, unsure: a move is asked about),
    #: "repeat" (the awaited player is asked to say it again) or "none".
    decision: str = "none"
    #: The sentence decided on was one the referee expected of the player it
    #: waits for (a legal move of theirs, an answer to its question).
    expected: bool = False


@dataclass(frozen=True)
class Moments:
    """What can be said now besides the sentences of any time (a Lock waits
    for its target ...): the recogniser listens for those
    (:meth:`~referee.speech.hearing.interface.Recognizer.follow`)."""

    type: ClassVar[str] = "moments"
    at: float
    moments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expected:
    """The answer to :class:`SoFar`: whether the words are a move the referee
    expects of their speaker now (a legal move of the player it waits for);
    None when they are no move (a question, a control, talk): the game has
    no say in them. ``who``: whose words the referee takes them to be (the
    speaker given, else the player it waits for; "someone" when nothing
    tells)."""

    type: ClassVar[str] = "expected"
    at: float
    text: str
    expected: bool | None
    who: str | None = None


@dataclass(frozen=True)
class WakeAt:
    """When the referee next has something to say if nobody speaks (a
    countdown mark, a timeout, a question unanswered); None: not before
    somebody does. The table sends :class:`Tick` by then."""

    type: ClassVar[str] = "wake-at"
    at: float
    wake: float | None = None


@dataclass(frozen=True)
class Left:
    """The table said it is done ("that's all"): whatever drives the table stops."""

    type: ClassVar[str] = "left"
    at: float


Output = (Say | CutVoice | ChangeVoice | Caption | Logged | Snapshot | Judged | Moments | WakeAt
          | Left | Expected)

#: A line of the game log after its header.
Entry = Record | Input


class Brain(Protocol):
    """The brain as every driver sees it (:class:`~referee.session.Session`
    is one): an input in, its outputs back, nothing else. The table, the live
    loop, typed play, replay and the benchmarks are typed against this, so
    mypy refuses a driver that reads the brain's fields."""

    def step(self, message: Input) -> list[Output]:
        """Take one input; what it logged, then what to say and do."""
        ...


def expected(brain: Brain, so_far: SoFar) -> bool | None:
    """The brain's answer to ``so_far`` (:class:`Expected`); None without one."""
    return next((o.expected for o in brain.step(so_far) if isinstance(o, Expected)), None)


def whose(brain: Brain, so_far: SoFar) -> str | None:
    """Whose the brain takes the words of ``so_far`` to be (:attr:`Expected.who`:
    nothing changes); None without an answer."""
    return next((o.who for o in brain.step(so_far) if isinstance(o, Expected)), None)

INPUTS: tuple[type[Any], ...] = typing.get_args(Input)
OUTPUTS: tuple[type[Any], ...] = typing.get_args(Output)
MESSAGE_TYPES: dict[str, type[Any]] = {cls.type: cls for cls in (*INPUTS, *OUTPUTS)}
INPUT_TYPES: dict[str, type[Any]] = {cls.type: cls for cls in INPUTS}


def to_json(message: Input | Output) -> dict[str, Any]:
    """A message as a JSON object: ``{"type": ..., field: value, ...}``."""
    data: dict[str, Any] = plain(message)
    return data


def from_json(data: Any) -> Input | Output:
    """The message a JSON object stands for; :class:`~referee.gamelog.LogError`
    saying what is wrong when it stands for none."""
    if not isinstance(data, dict):
        raise LogError("a message is not a JSON object")
    cls = MESSAGE_TYPES.get(data.get("type", ""))
    if cls is None:
        raise LogError(f"unknown message type {data.get('type')!r}")
    message: Input | Output = checked(data, cls, cls.type)
    return message


def entry_to_json(entry: Entry) -> dict[str, Any]:
    """A game log's line: an input message or a record, as JSON."""
    data: dict[str, Any] = plain(entry)
    return data


def entry_from_json(data: Any) -> Entry:
    """A game log line's input message or record; LogError saying what is wrong."""
    if isinstance(data, dict) and data.get("type") in INPUT_TYPES:
        cls = INPUT_TYPES[data["type"]]
        entry: Entry = checked(data, cls, f"the {cls.type} input")
        return entry
    return Record.from_json(data)
