"""Typed play at a terminal: a prompt with line editing and history.

When the keyboard and the screen are both a terminal, lines are read by
prompt_toolkit (a well-kept line editor: arrow keys, Home/End, Ctrl-R search,
Up for the lines typed before) on a thread of their own, and everything the
referee prints goes *above* the prompt: a countdown never lands in the
middle of a half-typed line, which is redrawn under it. The live loop polls
:meth:`TerminalKeyboard.lines` between its other duties.

Anything else (a pipe, a file, ``TERM=dumb``) is read as plain lines by the
loop itself, so scripts and screen readers that prefer a plain terminal are
unaffected.

The editor puts the terminal in raw mode while a prompt is up. Every way out
gives it back as it was found (:meth:`TerminalKeyboard.close`: the editor's
thread is waited for, then the settings saved at the start are put back), and
the last prompt is erased, so nothing is left after the referee's last words.
The live loop closes it on the game's end, an error, Ctrl-C, and SIGTERM or
SIGHUP (:func:`signals_end_the_game`); only SIGKILL cannot be caught (``stty
sane`` mends a terminal then).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any, TextIO

log = logging.getLogger(__name__)

#: What the prompt shows.
PROMPT = "> "
#: Put on the queue for Ctrl-D on an empty line.
EOF_MARK = "\x04"
#: Put on the queue for Ctrl-C.
INTERRUPT_MARK = "\x03"


def wanted(keyboard_fd: int) -> bool:
    """Whether typed play gets the line editor: a real terminal in and out."""
    return (os.isatty(keyboard_fd) and sys.stdout.isatty()
            and os.environ.get("TERM", "") not in ("", "dumb"))


class TerminalKeyboard:
    """Reads edited lines on a thread; the loop takes them with :meth:`lines`."""

    def __init__(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import InMemoryHistory

        self._session: PromptSession[str] = PromptSession(history=InMemoryHistory())
        self._queue: queue.Queue[str] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read, name="keyboard", daemon=True)
        #: The terminal's settings before the editor changed them (None: not a terminal).
        self._found: list[Any] | None = None

    def start(self) -> None:
        self._found = _settings(sys.stdin)
        self._thread.start()

    def _read(self) -> None:
        while not self._closed.is_set():
            try:
                line = self._session.prompt(PROMPT, handle_sigint=False)
            except EOFError:
                line = EOF_MARK
            except KeyboardInterrupt:
                line = INTERRUPT_MARK
            except Exception:  # the terminal went away: as if closed
                log.exception("the line editor stopped")
                line = EOF_MARK
            self._queue.put(line)

    def lines(self, timeout: float) -> list[str]:
        """The lines typed within ``timeout`` seconds (waits for the first only)."""
        try:
            got = [self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()]
        except queue.Empty:
            return []
        while True:
            try:
                got.append(self._queue.get_nowait())
            except queue.Empty:
                return got

    def close(self) -> None:
        """Stop reading, erase the prompt, and give the terminal back as it was."""
        self._closed.set()
        app = self._session.app

        def leave() -> None:
            app.erase_when_done = True  # no "> " left under the last words
            app.exit(exception=EOFError)

        if app.is_running and app.loop is not None:
            with contextlib.suppress(Exception):
                app.loop.call_soon_threadsafe(leave)
        if self._thread.is_alive():
            self._thread.join(timeout=CLOSE_WAIT)
        if self._found is not None:
            _give_back(sys.stdin, self._found)


#: How long :meth:`TerminalKeyboard.close` waits for the editor to finish (seconds).
CLOSE_WAIT = 2.0


def _settings(stream: TextIO) -> list[Any] | None:
    """A terminal's settings (termios), or None where there are none."""
    try:
        import termios

        return termios.tcgetattr(stream.fileno())
    except Exception:  # not a terminal, or none (Windows)
        return None


def _give_back(stream: TextIO, found: list[Any]) -> None:
    try:
        import termios

        termios.tcsetattr(stream.fileno(), termios.TCSADRAIN, found)
    except Exception as error:  # the terminal hung up: nothing to give back
        log.debug("terminal settings not restored: %s", error)


@contextlib.contextmanager
def signals_end_the_game() -> Iterator[None]:
    """SIGTERM and SIGHUP end the game as Ctrl-C does (the ``finally`` blocks
    run: the log is closed, the terminal given back); the handlers that were
    there before are put back after. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def end(number: int, _frame: types.FrameType | None) -> None:
        raise SystemExit(128 + number)

    wanted_signals = [s for s in ("SIGTERM", "SIGHUP") if hasattr(signal, s)]
    before = {name: signal.signal(getattr(signal, name), end) for name in wanted_signals}
    try:
        yield
    finally:
        for name, handler in before.items():
            signal.signal(getattr(signal, name), handler)


@contextlib.contextmanager
def printed_above_the_prompt() -> Iterator[None]:
    """Everything written to stdout meanwhile goes above the prompt."""
    from prompt_toolkit.patch_stdout import patch_stdout

    with patch_stdout(raw=True):
        yield
