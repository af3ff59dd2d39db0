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
from collections.abc import Callable, Iterable, Sequence

from referee.protocol import Brain, Caption, Entry, Say, Tick, Tone, Typed
from referee.table import Reports, Table
from referee.wording import MAX_CHARS, NoSuchPlayer, player_named

_SCRIPT_LINE = re.compile(r"^\s*\[\s*([-+]?\d+(?:\.\d*)?)\s*\]\s?(.*)$")
_PREFIX = re.compile(r"^\s*([^\W\d][\w' .-]{0,40}?)\s*:\s*(.*)$")


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
    try:
        return player_named(name, tuple(players)), rest
    except NoSuchPlayer as error:
        # (a longer "prefix" is a sentence with a colon in it; a line too long
        # to be a move is answered so, whoever it names)
        if len(name.split()) <= 2 and len(line) <= MAX_CHARS:
            raise SpeakerError(str(error)) from None
    return None, line


class ScriptTable(Table):
    """The table of a typed script: it prints the transcript (a script is never
    spoken): each typed line as said, each sentence of the referee with its
    time, a sentence for one player alone marked private. Everything else
    (stop, a change of voice, the log) is done as at any table."""

    def __init__(self, session: Brain, emit: Callable[[str], None],
                 record: Callable[[Sequence[Entry]], None] | None = None,
                 at: float = 0.0) -> None:
        super().__init__(session, reports=Reports(show=emit, record=record), at=at)

    def caption(self, caption: Caption) -> None:
        text = caption.text if len(caption.text) <= 80 else caption.text[:77] + "..."
        self._print(caption.at, f"{caption.who}: {text}")

    def private_line(self, said: Say) -> str:
        return f"referee, to {said.to} only: (private)"


def run_script(session: Brain, lines: Iterable[str], emit: Callable[[str], None],
               record: Callable[[Sequence[Entry]], None] | None = None,
               at: float = 0.0) -> ScriptTable:
    """Play a timed transcript through ``session`` from ``at``, emitting printed
    lines; ``record`` takes the game log's records (a step's at once). The
    table, which knows what the brain last showed."""
    table = ScriptTable(session, emit, record, at)
    now = at
    table.start()
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if table.left:  # "that's all": the referee has left the table
            emit(f"line {number}: the table had left (that's all); the rest is not played.")
            return table
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
            speaker, text = split_speaker(line, table.players)
        except SpeakerError as error:
            emit(f"[{now:.1f}] ?: {line}")
            table.say([Say(now, str(error), Tone.PROBLEM)])
            continue
        table.tell(Typed(now, text, speaker) if text else Tick(now))
    return table
