"""The live loop: the microphone, the keyboard and the wall clock drive a table.

* The microphone (:class:`~referee.speech.hearing.mic.Microphone`) is read in
  short waits between the other duties; each utterance it finds (with its
  seat, if the table has seat microphones) goes to the table.
* Typed lines are always accepted too, so a helper can type for a player and
  the game goes on if the microphone fails. At a terminal they are read with
  a line editor (:mod:`referee.terminal`: history, editing, a prompt that
  printed lines go above).
* Microphone lost (no sound for a second, or the stream died): the referee
  says so and pauses the timer; it tries to reopen the device every two
  seconds and says when it is back, resuming the timer.
* The loop ticks the table at least once a second; while a turn timer runs,
  the brain logs a tick a second, so ``referee resume`` gets the time left
  back within a second.
* A win does not end the loop: the table stays for questions, an undo or
  "play again" until it says "that's all" (a :class:`~referee.protocol.Left` output). Ctrl-D at a
  terminal leaves too: at once when the game is over, else when pressed a
  second time (the first asks). A keyboard that closes (a pipe's end) leaves
  unless a microphone is still listening.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from referee.listening import Listening
from referee.overheard import TABLE_MIC, Caught, Overheard, loudness
from referee.protocol import MicBack, MicLost, Say, Tone
from referee.speech.audio import Audio
from referee.speech.hearing.interface import OverVoice
from referee.speech.hearing.mic import Microphone, MicrophoneError
from referee.speech.listen import Listener
from referee.speech.portaudio import restart_portaudio
from referee.speech.speaking.tts import VoiceError
from referee.table import Table
from referee.terminal import (
    EOF_MARK,
    INTERRUPT_MARK,
    TerminalKeyboard,
    printed_above_the_prompt,
    signals_end_the_game,
    wanted,
)
from referee.textplay import SpeakerError, split_speaker
from referee.wording import MAX_CHARS

if TYPE_CHECKING:
    from referee.screen.phones import PhoneSeats

log = logging.getLogger(__name__)

RETRY_EVERY = 2.0


def phone_notice(player: str, what: str, table_mic: bool, device: str = "phone",
                 pages: bool = True, keyboard: bool = True) -> str:
    """What the table is told when a seat's own microphone (a seat page's
    phone, a satellite) starts, moves or stops: when it stops, how the
    player is heard now (the table's microphone, their seat page, the
    keyboard, or not at all until it is back)."""
    if what == "listening":
        return f"{player}'s {device} is listening."
    if what == "moved":
        return f"{player}'s microphone moved to another page."
    if table_mic:
        then = "I hear them on the table microphone again."
    elif pages:
        then = "They can type or tap on their page."
    else:
        until = "I keep trying to reach it; until then" if device == "satellite" else "Until then"
        then = (f"{until}, type {player}'s moves at the keyboard, starting with '{player}:'."
                if keyboard else f"{until}, I cannot hear {player}.")
    return f"{player}'s {device} stopped listening. {then}"


@contextlib.contextmanager
def library_noise_to(path: Path) -> Iterator[None]:
    """Send what C libraries write to the terminal (ALSA's "underrun occurred",
    PortAudio's and eSpeak's chatter) to ``path`` instead, for as long as the
    game runs; the referee's own messages still reach the terminal. A screen
    reader then reads the game, not hundreds of audio-library lines.
    """
    sys.stderr.flush()
    try:
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as error:
        log.debug("library messages stay on the terminal: %s", error)
        yield
        return
    terminal = os.dup(2)
    os.dup2(target, 2)
    os.close(target)
    python_stderr = sys.stderr
    sys.stderr = os.fdopen(os.dup(terminal), "w", buffering=1, encoding="utf-8",
                           errors="replace")
    # The referee's own logging stays on the terminal too.
    handlers = [h for h in logging.getLogger().handlers
                if isinstance(h, logging.StreamHandler) and h.stream is python_stderr]
    for handler in handlers:
        handler.setStream(sys.stderr)
    try:
        yield
    finally:
        sys.stderr.flush()
        for handler in handlers:
            handler.setStream(python_stderr)
        sys.stderr.close()
        os.dup2(terminal, 2)
        os.close(terminal)
        sys.stderr = python_stderr


class LiveLoop:
    """Runs a table in real time until the table leaves or the keyboard closes."""

    def __init__(
        self,
        table: Table,
        *,
        microphone: Microphone | None,
        keyboard: BinaryIO | None,
        clock: Callable[[], float] = time.monotonic,
        max_seconds: float | None = None,
        speed: float = 1.0,
        seat_lines: Callable[[], list[tuple[str, str, str]]] | None = None,
        phones: PhoneSeats | None = None,
    ) -> None:
        self.table = table
        self.microphone = microphone
        self.keyboard = keyboard
        self.clock = clock
        self.max_seconds = max_seconds
        #: Game seconds per wall-clock second (tests run the clock faster).
        self.speed = speed
        #: Lines sent from the players' seat pages since the last call (the screen).
        self.seat_lines = seat_lines
        #: The seat pages' microphones (the screen's), if players may speak into them,
        #: and each seat's listener.
        self.phones = phones
        self._listeners: dict[str, Listener] = {}
        #: With phones, one voice may reach several microphones: the closest is heard.
        self.overheard = None if phones is None else Overheard(self._talking_of,
                                                               self._sources)
        self._base = table.now
        self._t0 = clock()
        self._mic_ok = False
        self._next_try = 0.0
        self._pending = b""
        #: The rest of a line too long to be a move is dropped up to its end
        #: (the line was answered once: "That was too long for me").
        self._overlong = False
        self._stopped = False
        #: Ctrl-D was pressed once at a terminal: a second one ends the game.
        self._eof_asked = False
        #: The line editor, when the keyboard and the screen are a terminal.
        self.terminal: TerminalKeyboard | None = None
        if keyboard is not None and wanted(keyboard.fileno()):
            try:
                self.terminal = TerminalKeyboard()
            except Exception as error:  # no line editor here: plain lines, as from a pipe
                log.debug("no line editor: %s", error)
        if microphone is not None:
            # Decode ahead while the end silence runs, and end at once, or wait
            # longer, by the words; a "stop" over the referee is looked for sooner.
            microphone.listen_with(table.listening, hurry=table.speaking_now)

    def now(self) -> float:
        return self._base + (self.clock() - self._t0) * self.speed

    def run(self, greet: bool = True) -> None:
        if self.terminal is None:
            self._run(greet)
            return
        with signals_end_the_game():
            self.terminal.start()
            try:
                with printed_above_the_prompt():
                    self._run(greet)
            finally:
                self.terminal.close()

    def _run(self, greet: bool) -> None:
        if greet:
            self.table.start()
        if self.microphone is not None:
            self._open_microphone(announce=False)
        stop_at = None if self.max_seconds is None else self.now() + self.max_seconds
        while not self.table.left and not self._stopped:
            if stop_at is not None and self.now() >= stop_at:
                break
            if not self._keyboard(0.0 if self._mic_ok else self._wait()):
                break
            for player, line, source in self.seat_lines() if self.seat_lines else ():
                if not self.table.left:
                    self.table.hear_text(line, player, self.now(), source=source)
            if self.phones is not None:
                self._phones()
            if self._mic_ok:
                self._listen()
            if self.overheard is not None:
                self.overheard.hear(self.now())
            if self._mic_ok or self.phones is not None:
                talking = ((self._mic_ok and self.microphone is not None
                            and self.microphone.in_speech)
                           or (self.phones is not None and self.phones.talking))
                self.table.player_talking(self.now() if talking else None)
            elif self.microphone is not None and self.now() >= self._next_try:
                self._open_microphone(announce=True)
            self.table.advance(self.now())
        if self.microphone is not None:
            self.microphone.close()

    def stop(self) -> None:
        """End the loop from another thread (within one wait)."""
        self._stopped = True

    def _wait(self) -> float:
        wake = self.table.wake_at
        until = 0.2 if self.microphone is not None else 1.0
        if self.seat_lines is not None:  # a seat page's move is played at once
            until = 0.1
        due = None if self.overheard is None else self.overheard.due
        for at in (wake, due):
            if at is not None:
                until = min(until, max(0.0, (at - self.now()) / self.speed))
        return until

    # --- keyboard ---------------------------------------------------------------------
    def _keyboard(self, timeout: float) -> bool:
        """Handle typed lines; False when the keyboard closed (the table is done)."""
        if self.terminal is not None:
            return self._edited(timeout)
        # (what a phone heard wakes the loop at once)
        woken = [self.phones.fileno()] if self.phones is not None else []
        if self.keyboard is None:
            if timeout and woken:
                select.select(woken, [], [], timeout)
            elif timeout:
                time.sleep(timeout)
            return True
        fd = self.keyboard.fileno()
        ready, _, _ = select.select([fd, *woken], [], [], timeout)
        if fd not in ready:
            return True
        chunk = os.read(fd, 65536)
        if not chunk:
            if self._pending.strip():
                self._line(self._pending.decode("utf-8", errors="replace"))
                self._pending = b""
            if os.isatty(fd):
                return self._ctrl_d()
            # The keyboard closed: go on listening if there is a microphone.
            self.keyboard = None
            return self.microphone is not None or self.phones is not None
        self._eof_asked = False
        self._pending += chunk
        while b"\n" in self._pending:
            raw, self._pending = self._pending.split(b"\n", 1)
            if not self._overlong:
                self._line(raw.decode("utf-8", errors="replace"))
            self._overlong = False
        if len(self._pending) > MAX_CHARS * 8:
            if not self._overlong:
                self._line(self._pending.decode("utf-8", errors="replace"))
            self._pending, self._overlong = b"", True
        return True

    def _ctrl_d(self) -> bool:
        """Ctrl-D at a terminal, perhaps by mistake: during a game the referee
        asks first; after it (or pressed again) the table leaves. Whether to go on."""
        if not self.table.over and not self._eof_asked:
            self._eof_asked = True
            self.table.say([Say(self.now(), "Press Ctrl-D again to end the game; "
                                "type anything else to go on.", Tone.PROBLEM)])
            return True
        return False  # (a microphone does not keep a table that typed Ctrl-D)

    def _edited(self, timeout: float) -> bool:
        """Lines from the line editor (:meth:`_keyboard` at a terminal)."""
        assert self.terminal is not None
        for line in self.terminal.lines(timeout):
            if line == INTERRUPT_MARK:
                raise KeyboardInterrupt
            if line == EOF_MARK:
                if not self._ctrl_d():
                    return False
                continue
            self._eof_asked = False
            self._line(line)
        return True

    def _line(self, line: str) -> None:
        """One typed line, unless the table has left: lines that came after
        "that's all" in one read (a pipe) are not played."""
        if self.table.left:
            return
        at = self.now()
        try:
            speaker, text = split_speaker(line, self.table.players)
        except SpeakerError as error:
            self.table.say([Say(at, str(error), Tone.PROBLEM)])
            return
        self.table.hear_text(text, speaker, at)

    # --- microphone -------------------------------------------------------------------
    def _open_microphone(self, announce: bool) -> None:
        assert self.microphone is not None
        if announce:
            restart_portaudio()
        try:
            self.microphone.open()
        except MicrophoneError as error:
            self._next_try = self.now() + RETRY_EVERY
            if not announce:
                self._lost(str(error))
            return
        self._mic_ok = True
        if announce:
            # The audio system went away and came back: the speaker's stream
            # went with it (and with PortAudio's restart, if there was one),
            # so it is opened again (or the game goes on in print, said so).
            try:
                self.table.output.reopen()
            except VoiceError as error:
                self.table.show(f"referee: the speaker did not come back ({error}); "
                                "printing only.")
            self.table.tell(MicBack(self.now(), "The microphone is back."))

    def _listen(self) -> None:
        assert self.microphone is not None
        try:
            utterances = self.microphone.read(self._wait())
        except MicrophoneError as error:
            self.microphone.close()
            self._lost(str(error))
            return
        for u in utterances:
            # Stream time to game time by when its samples reached us (the
            # stream may be read seconds late while a decode runs).
            at = self.now()
            end = at - self.microphone.since(u.end)
            start = end - (u.end - u.start)
            log.debug("utterance %.2f-%.2f (game time), decided at %.2f", start, end, at)
            # Speech over the referee is heard only while the echo canceller
            # really removes its voice (it had learnt the room when the
            # utterance began); else the gate.
            self._caught(TABLE_MIC, u.audio, start, end, at, speaker=u.speaker,
                         source="seat mic" if u.speaker else "mic", over=u.over,
                         cancels_echo=self.microphone.cancelling_from(u.start))

    def _phones(self) -> None:
        """What the seat pages' phones heard: speech from those seats, heard
        like the table microphone's; and what changed about them, said."""
        assert self.phones is not None
        for player, device, why in self.phones.refusals():
            self.table.show(f"referee: {player}'s {device} was refused: {why}")
        for player, what in self.phones.notices():
            notice = phone_notice(player, what, self._mic_ok, self.phones.device_of(player),
                                  pages=self.seat_lines is not None,
                                  keyboard=self.keyboard is not None)
            self.table.say([Say(self.now(), notice,
                                Tone.ANNOUNCE)])
        for u in self.phones.hear(self._seat_listening, hurry=self.table.speaking_now):
            at = self.now()
            end = min(at, self._game_time(u.end))
            start = min(end, self._game_time(u.start))
            self._caught(u.player, u.audio, start, end, at, speaker=u.player,
                         source=self.phones.device_of(u.player),  # "phone", "satellite"
                         over=u.over, cancels_echo=u.cancels_echo,
                         listener=self._listeners.get(u.player))

    def _caught(self, stream: str, audio: Audio, start: float, end: float, at: float, *,
                speaker: str | None, source: str, over: OverVoice | None,
                cancels_echo: bool, listener: Listener | None = None) -> None:
        """An utterance a stream heard, decoded: heard now, or (with phones,
        when another microphone may have heard the same voice) once it is
        clear which was closest (:mod:`referee.overheard`)."""
        transcript, start = self.table.decoded(audio, start, end, (source, speaker), over,
                                               listener)
        heard_by = listener or self.table.listener
        hear = partial(self.table.hear_transcript, transcript, start, end, speaker=speaker,
                       source=source, over=over, cancels_echo=cancels_echo)
        if self.overheard is None:
            hear(at)
            return
        urgent = heard_by is not None and heard_by.kind(transcript) == "stop"
        self.overheard.add(Caught(stream, start, end, at, loudness(audio), hear, urgent))

    def _sources(self) -> list[str]:
        """The microphones listening now: the table's, and the phones'."""
        phones = [] if self.phones is None else self.phones.listening
        return [TABLE_MIC, *phones] if self._mic_ok else phones

    def _talking_of(self, source: str) -> bool:
        """Whether that microphone hears speech now."""
        if source == TABLE_MIC:
            return self.microphone is not None and self.microphone.in_speech
        return self.phones is not None and self.phones.talking_of(source)

    def _seat_listening(self, player: str) -> Listening | None:
        """The seat's own listening, decoding its phone's speech ahead."""
        recognizer = self.table.recognizer
        if recognizer is None:
            return None
        listener = self._listeners[player] = Listener.judging(recognizer)
        return Listening(listener, self.table.speaking_now,
                         partial(self.table.expects, speaker=player))

    def _game_time(self, monotonic: float) -> float:
        return self._base + (monotonic - self._t0) * self.speed

    def _lost(self, why: str) -> None:
        self._mic_ok = False
        self._next_try = self.now() + RETRY_EVERY
        text = (f"I lost the microphone: {why} The timer is paused until it is back; "
                "you can type moves meanwhile.")
        self.table.tell(MicLost(self.now(), text))
