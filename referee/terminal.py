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
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
from collections.abc import Iterator

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

    def start(self) -> None:
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
        self._closed.set()
        app = self._session.app
        if app.is_running and app.loop is not None:
            with contextlib.suppress(Exception):
                app.loop.call_soon_threadsafe(lambda: app.exit(exception=EOFError))


@contextlib.contextmanager
def printed_above_the_prompt() -> Iterator[None]:
    """Everything written to stdout meanwhile goes above the prompt."""
    from prompt_toolkit.patch_stdout import patch_stdout

    with patch_stdout(raw=True):
        yield
