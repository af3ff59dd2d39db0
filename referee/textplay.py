"""Typed play: each line is an utterance, optionally prefixed "Bob:".

Typed lines in real time go through the live loop (:mod:`referee.live`);
here :func:`run_script` reads a transcript whose lines carry a simulated time,
  ``[12.5] Ann: flip my seven``, so timeouts play out without waiting. A line
  ``[20]`` with no words just lets time pass; a line without a time happens at
  the previous line's time; blank lines and ``#`` comments are skipped.

The script ends where the table leaves ("that's all"): later lines are not
played, and the output says so.

Script output echoes each utterance and prints each sentence of the referee
with its time: ``[12.5] Ann: flip my seven`` then ``[12.5] referee: Ann, 7 down.``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from referee.gamelog import Record
from referee.protocol import (
    Caption,
    ChangeVoice,
    CutVoice,
    Input,
    Left,
    Logged,
    Say,
    Snapshot,
    Start,
    Tick,
    Tone,
    Typed,
    VoiceChanged,
)
from referee.session import Session
from referee.speech.understanding.templates import fold_accents
from referee.wording import NOT_SPEAKING

_SCRIPT_LINE = re.compile(r"^\s*\[\s*([-+]?\d+(?:\.\d*)?)\s*\]\s?(.*)$")
_PREFIX = re.compile(r"^\s*([^\W\d][\w' .-]{0,40}?)\s*:\s*(.*)$")


#: What the referee says to "louder" in a script, which is never spoken.
NO_VOICE = "I have no voice to change here."


class SpeakerError(ValueError):
    """The line names a speaker who is not at the table."""


def split_speaker(line: str, players: Iterable[str]) -> tuple[str | None, str]:
    """ "Bob: sixty-five!" -> ("Bob", "sixty-five!"); no prefix -> (None, line).

    >>> split_speaker("bob: flip my 7", ["Ann", "Bob"])
    ('Bob', 'flip my 7')
    >>> split_speaker("flip my 7", ["Ann", "Bob"])
    (None, 'flip my 7')
    """
    match = _PREFIX.match(line)
    if not match:
        return None, line
    name, rest = match.group(1).strip(), match.group(2)
    names = {fold_accents(p): p for p in players}
    if fold_accents(name) in names:
        return names[fold_accents(name)], rest
    if len(name.split()) <= 2:
        known = " and ".join(names.values())
        raise SpeakerError(f"There is no player called {name}. The players are {known}.")
    return None, line


def format_said(said: Say) -> str:
    if said.to is not None:  # a secret (a virtual Twist card): not on the shared screen
        return f"[{said.at:.1f}] referee, to {said.to} only: (private)"
    return f"[{said.at:.1f}] referee: {said.text}"


class Printer:
    """The mouth of a script: it prints (a script is never spoken)."""

    def __init__(self, session: Session, emit: Callable[[str], None],
                 record: Callable[[Record], None] | None = None) -> None:
        self.session = session
        self.emit = emit
        self.record = record
        #: What the brain last showed of the game, and whether the table left.
        self.state: dict[str, Any] = {}
        self.final: dict[str, Any] = {}
        self.left = False

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(self.state.get("players", ()))

    def tell(self, message: Input) -> None:
        for out in self.session.step(message):
            match out:
                case Snapshot(state=state, final=final):
                    self.state, self.final = state, final
                case Left():
                    self.left = True
                case Say():
                    self.emit(format_said(out))
                case Caption(at=at, who=who, text=text):
                    self.emit(f"[{at:.1f}] {who}: {text if len(text) <= 80 else text[:77] + '...'}")
                case CutVoice(at=at):
                    self.emit(format_said(Say(at, NOT_SPEAKING, Tone.ANSWER)))
                case ChangeVoice(at=at):
                    self.tell(VoiceChanged(at, NO_VOICE))
                case Logged(record=record) if self.record is not None:
                    self.record(record)


def run_script(session: Session, lines: Iterable[str], emit: Callable[[str], None],
               record: Callable[[Record], None] | None = None, at: float = 0.0) -> Printer:
    """Play a timed transcript through ``session`` from ``at``, emitting printed
    lines; ``record`` takes the game log's records. The printer, which knows
    what the brain last showed."""
    printer = Printer(session, emit, record)
    now = at
    printer.tell(Start(now))
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if printer.left:  # "that's all": the referee has left the table
            emit(f"line {number}: the table had left (that's all); the rest is not played.")
            return printer
        match = _SCRIPT_LINE.match(line)
        if match:
            at = float(match.group(1))
            if at < now:
                emit(f"line {number}: time {at:g} is before {now:g}; line skipped.")
                continue
            now, line = at, match.group(2).strip()
        elif line.startswith("["):
            emit(f"line {number}: cannot read the time in {line[:20]!r}; line skipped.")
            continue
        try:
            speaker, text = split_speaker(line, printer.players)
        except SpeakerError as error:
            emit(f"[{now:.1f}] ?: {line}")
            emit(format_said(Say(now, str(error), Tone.PROBLEM)))
            continue
        printer.tell(Typed(now, text, speaker) if text else Tick(now))
    return printer
