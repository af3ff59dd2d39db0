"""A live game whose players speak into their own seat microphones, for the
tests: Race to 65 for Ann and Bob in the real live loop, heard by the real
recogniser, the seats' microphones fed by seat pages (the screen's
WebSockets) and, if given, Wyoming satellites; what it logged and said."""

from __future__ import annotations

import threading
import time
from typing import Any

from harness.brain import matcher_of
from referee.games.race65 import Race65Options, Race65Spec
from referee.live import LiveLoop
from referee.protocol import Speech
from referee.records import DroppedRecord, InputRecord, SaidRecord
from referee.satellites import Satellite, Satellites
from referee.screen.phones import PhoneSeats
from referee.screen.server import Screen
from referee.session import Session
from referee.speech.speaking.tts import NullOutput
from referee.table import Mouth, Reports, Table


class PhoneGame:
    """The seat pages are on 127.0.0.1; ``hearing``: with the recogniser;
    ``voice``, ``output``: the referee's (an output's track feeds the phones'
    echo cancellers); ``satellites``: Wyoming seats; ``pages``: False for a
    table without a screen (the satellites are the only seat microphones)."""

    def __init__(self, *, hearing: bool = True, voice: Any = None, output: Any = None,
                 satellites: list[Satellite] | None = None, pages: bool = True) -> None:
        spec = Race65Spec(["Ann", "Bob"], Race65Options(rules="phase-seven", difficulty="easy"))
        matcher = matcher_of(spec)
        self.phones = PhoneSeats(list(spec.players), track=getattr(output, "track", None))
        self._screen = Screen(spec.players, "127.0.0.1", 0, phones=self.phones) if pages else None
        if self._screen is not None:
            self._screen.start()
        self.records: list[Any] = []
        self.printed: list[str] = []
        recognizer = None
        if hearing:
            from harness.ears import recognizer_for

            recognizer = recognizer_for(matcher.phrases)
        self.table = Table(Session(spec, matcher=matcher), recognizer=recognizer,
                           mouth=Mouth(voice=voice, output=output or (
                               NullOutput() if voice is not None else None)),
                           reports=Reports(show=self.printed.append, stamp=False, screen=None
                                           if self._screen is None else self._screen.publish,
                                           record=self.records.extend))
        self.loop = LiveLoop(self.table, microphone=None, keyboard=None,
                             seat_lines=None if self._screen is None else self._screen.lines,
                             phones=self.phones, max_seconds=120.0)
        self.satellites = Satellites(satellites or [], self.phones)
        self.worker = threading.Thread(target=self.loop.run, daemon=True)
        self.worker.start()
        self.satellites.start()

    @property
    def screen(self) -> Screen:
        """The seat pages' server (a game with ``pages``)."""
        assert self._screen is not None, "a game without pages"
        return self._screen

    def said(self) -> list[str]:
        """Every sentence so far: the game's (logged) and the table's own (printed)."""
        return [*(r.text for r in list(self.records) if isinstance(r, SaidRecord)),
                *self.printed]

    def inputs(self) -> list[InputRecord]:
        return [r for r in list(self.records) if isinstance(r, InputRecord)]

    def heard(self) -> list[str]:
        """What the seats' microphones heard, and what became of it."""
        return [f"{r.speaker}: {r.transcript.text!r} {r.start:.2f}-{r.end:.2f} {r.over} "
                f"{r.room}" if isinstance(r, Speech) else f"  {r}"
                for r in list(self.records) if isinstance(r, (Speech, DroppedRecord))]

    def final(self, timeout: float = 20.0) -> dict[str, Any]:
        """The result as the table last showed it, once it has shown one (the
        loop starts the game in a thread of its own)."""
        deadline = time.monotonic() + timeout
        while not self.table.final:
            assert time.monotonic() < deadline, f"the game never started: {self.said()}"
            time.sleep(0.05)
        return self.table.final

    def wait_until_said(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in s for s in self.said()):
            assert time.monotonic() < deadline, (f"never said {text!r}: {self.said()}; "
                                                 f"heard {self.heard()}")
            time.sleep(0.05)

    def close(self) -> None:
        self.satellites.stop()
        self.loop.stop()
        self.worker.join(timeout=10)
        if self._screen is not None:
            self._screen.stop()
