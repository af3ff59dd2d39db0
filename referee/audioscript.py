"""Recorded games: timed WAV utterances played through a table on a simulated clock.

An audio script is lines of ``[seconds] [Speaker:] FILE.wav`` (docs/playing.md,
"Recorded games"); :class:`AudioScript` plays them through a
:class:`~referee.table.Table` as a microphone would hear them, on the time the
script says, through the real recogniser and the real brain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from referee.protocol import Say, Spoken, Tone
from referee.speech.audio import Audio, AudioError, load_wav
from referee.speech.hearing.segmenter import DEFAULT_END_SILENCE
from referee.table import Table
from referee.wording import NoSuchPlayer, player_named

_AUDIO_LINE = re.compile(
    r"^\s*\[\s*(\+?)(\d+(?:\.\d*)?)\s*\]\s*(?:([^\W\d][\w' -]{0,30}):\s*)?(.*?)\s*$"
)


@dataclass(frozen=True)
class ScriptLine:
    at: float
    #: ``at`` counts from when the referee last fell silent ("[+1.5]").
    relative: bool
    speaker: str | None
    path: Path | None  # None: just let time pass
    number: int


def read_audio_script(lines: Iterable[str], base: Path) -> Iterator[ScriptLine | str]:
    """Parse ``[seconds] [Speaker:] FILE.wav`` lines; yields a message for each bad line."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _AUDIO_LINE.match(line)
        if not match:
            yield f"line {number}: expected '[seconds] [Speaker:] FILE.wav', got {line[:40]!r}"
            continue
        relative, at = bool(match.group(1)), float(match.group(2))
        speaker, name = match.group(3), match.group(4)
        path = (base / name) if name else None
        yield ScriptLine(at, relative, speaker.strip() if speaker else None, path, number)


def script_problems(lines: Iterable[str], base: Path, players: tuple[str, ...]) -> list[str]:
    """Every problem of an audio script, found before its game starts (a line
    that cannot be read, a speaker not at the table, a recording that is
    missing or not a WAV the referee can hear), one message a line: a
    recorded game is checked whole rather than stopped short at its line 6."""
    problems: list[str] = []
    for item in read_audio_script(lines, base):
        if isinstance(item, str):
            problems.append(item)
            continue
        if item.speaker is not None:
            try:
                player_named(item.speaker, players)
            except NoSuchPlayer as error:
                problems.append(f"line {item.number}: {error}")
        if item.path is not None:
            try:
                load_wav(item.path)
            except AudioError as error:
                problems.append(f"line {item.number}: {error}")
    return problems


@dataclass
class _Pending:
    """An utterance heard and not yet decided on."""

    end: float
    start: float
    audio: Audio
    speaker: str | None
    source: str


class AudioScript:
    """Timed WAV utterances played through a table on a simulated clock.

    Each utterance starts at its time and is decided ``end_silence`` after it
    ends: the microphone's acoustic rule, the slower one (live, the words of
    a whole command end it sooner), so recorded games err on the late side. A
    time ``[+2]`` means two seconds after the referee has answered the
    previous line and fallen silent, as players at a table wait for it. With
    ``echo``, every sentence the referee says is also heard by the
    recogniser, as a microphone beside the loudspeaker would: give the table
    :meth:`heard_back`.
    """

    def __init__(self, lines: Iterable[str], base: Path, *,
                 end_silence: float = DEFAULT_END_SILENCE, echo: bool = False) -> None:
        self.lines = lines
        self.base = base
        self.end_silence = end_silence
        self.echo = echo
        self._pending: list[_Pending] = []
        self._closing = False
        self._answering_echo = False

    def heard_back(self, audio: Audio, spoken: Spoken) -> None:
        """A sentence the referee said, heard by the microphone (with ``echo``).
        Once the script is over the microphone is closed; and what the referee
        says in answer to its own echo is not heard again (no endless loop
        when the gate is off)."""
        if self.echo and not self._closing and not self._answering_echo:
            self._pending.append(_Pending(spoken.end, spoken.start, audio, None, "echo"))

    def run(self, table: Table) -> None:
        table.start()
        now = table.now
        for item in read_audio_script(self.lines, self.base):
            if isinstance(item, str):
                table.show(item)
                continue
            if item.relative:
                while self._pending:  # the previous utterance has been answered ...
                    self._flush(table, self._pending[0].end + self.end_silence)
                table.advance(now)
                item = replace(item, at=max(now, table.busy_until) + item.at)  # ... and said
            if item.at < now:
                table.show(f"line {item.number}: time {item.at:g} is before {now:g}; "
                           "line skipped.")
                continue
            now = self._line(table, item, now)
            if table.left:  # "that's all": the rest of the script is not played
                break
        self._closing = True
        self._flush(table, float("inf"))
        table.advance(max(now, table.busy_until))

    def _line(self, table: Table, item: ScriptLine, now: float) -> float:
        """Play one line; the time the script is at after it."""
        audio: Audio | None = None
        speaker: str | None = None
        if item.path is not None:
            known, speaker = _speaker(table, item)
            if not known:
                return now
            try:
                audio = load_wav(item.path)
            except AudioError as error:
                table.show(f"line {item.number}: {error}")
                table.say([Say(item.at, "I could not hear that recording.", Tone.PROBLEM)])
                return now
            # From here on a player is talking: no countdown word over them.
            table.player_talking(item.at, item.at + audio.seconds + self.end_silence)
        self._flush(table, item.at)
        table.advance(item.at)
        if audio is None or table.left:
            return item.at
        end = item.at + audio.seconds
        self._pending.append(_Pending(end, item.at, audio, speaker, "audio script"))
        self._flush(table, end + self.end_silence)
        table.player_talking(None)
        return max(item.at, end + self.end_silence)

    def _flush(self, table: Table, until: float) -> None:
        """Decide on every utterance whose end silence is over by ``until``."""
        while self._pending:
            self._pending.sort(key=lambda p: p.end)
            first = self._pending[0]
            if first.end + self.end_silence > until:
                return
            self._pending.pop(0)
            self._answering_echo = first.source == "echo"
            table.hear_audio(first.audio, first.start, first.end, first.end + self.end_silence,
                             first.speaker, first.source)
            self._answering_echo = False


def _speaker(table: Table, item: ScriptLine) -> tuple[bool, str | None]:
    """(known, the named speaker as spelled at the table or None if unnamed)."""
    if item.speaker is None:
        return True, None
    try:
        return True, player_named(item.speaker, table.players)
    except NoSuchPlayer as error:
        table.say([Say(item.at, str(error), Tone.PROBLEM)])
        return False, None
