"""Typed play: each line is an utterance, optionally prefixed "Bob:".

Two front ends drive a :class:`~referee.session.Session`:

* :func:`run_interactive` reads the keyboard (or any stream) in real time and
  prints the countdown as it happens;
* :func:`run_script` reads a transcript whose lines carry a simulated time,
  ``[12.5] Ann: flip my seven``, so timeouts play out without waiting. A line
  ``[20]`` with no words just lets time pass; a line without a time happens at
  the previous line's time; blank lines and ``#`` comments are skipped.

Script output echoes each utterance and prints each sentence of the referee
with its time: ``[12.5] Ann: flip my seven`` then ``[12.5] referee: Ann, 7 down.``.
"""

from __future__ import annotations

import os
import re
import select
import time
from collections.abc import Callable, Iterable
from typing import BinaryIO, TextIO

from referee.session import MAX_CHARS, Said, Session

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
    names = {p.casefold(): p for p in players}
    if name.casefold() in names:
        return names[name.casefold()], rest
    if len(name.split()) <= 2:
        known = " and ".join(names.values())
        raise SpeakerError(f"There is no player called {name}. The players are {known}.")
    return None, line


def format_said(said: Said) -> str:
    return f"[{said.at:.1f}] referee: {said.text}"


def run_script(
    session: Session, lines: Iterable[str], emit: Callable[[str], None]
) -> None:
    """Play a timed transcript through ``session``, emitting printed lines."""
    now = session.now
    for said in session.start():
        emit(format_said(said))
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
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
            speaker, text = split_speaker(line, session.players)
        except SpeakerError as error:
            emit(f"[{now:.1f}] ?: {line}")
            emit(format_said(Said(now, str(error), "problem")))
            continue
        if not text:
            for said in session.tick(now):
                emit(format_said(said))
            continue
        who = speaker or session.game.current_player() or session.players[0]
        for said in session.tick(now):
            emit(format_said(said))
        emit(f"[{now:.1f}] {who}: {text if len(text) <= 80 else text[:77] + '...'}")
        for said in session.hear(text, speaker, now):
            emit(format_said(said))


def run_interactive(
    session: Session,
    source: BinaryIO,
    out: TextIO,
    clock: Callable[[], float] = time.monotonic,
    speed: float = 1.0,
) -> None:
    """Play in real time: lines from ``source``, the countdown as it happens.

    ``speed`` > 1 runs the game clock faster than the wall clock (for tests).
    """
    start, base = clock(), session.now

    def now() -> float:
        return base + (clock() - start) * speed

    def show(saids: Iterable[Said]) -> None:
        for said in saids:
            print(said.text, file=out, flush=True)

    show(session.start())
    fd = source.fileno()
    pending = b""
    while not session.over:
        wake = session.next_wakeup()
        timeout = None if wake is None else max(0.0, (wake - now()) / speed)
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            show(session.tick(now()))
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending and not session.over:
            raw, pending = pending.split(b"\n", 1)
            handle_line(session, raw.decode("utf-8", errors="replace"), now(), show)
        if len(pending) > MAX_CHARS * 8:  # an endless line: judge what we have
            handle_line(session, pending.decode("utf-8", errors="replace"), now(), show)
            pending = b""
    if pending.strip() and not session.over:
        handle_line(session, pending.decode("utf-8", errors="replace"), now(), show)
    if not session.over:
        show(session.stop(now()))


def handle_line(
    session: Session, line: str, at: float, show: Callable[[Iterable[Said]], None]
) -> None:
    """One typed line: split off the speaker and let the session hear it."""
    try:
        speaker, text = split_speaker(line, session.players)
    except SpeakerError as error:
        show([Said(at, str(error), "problem")])
        return
    show(session.hear(text, speaker, at))
