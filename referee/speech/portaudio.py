"""Sound devices' streams, which a hung audio server can keep waiting: closed
within a time (:func:`close_stream`), and PortAudio restarted to see devices
that came back (:func:`restart_portaudio`), never waiting for ever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


#: Seconds a sound device's stream is given to close when a game ends.
CLOSE_WITHIN = 2.0
#: Streams whose close was given up on. PortAudio's own exit handler would wait
#: for them for ever, so the command then ends without it (see ``referee.cli.entry``).
STREAMS_STUCK = 0
#: The closes given up on (they may still be running inside PortAudio).
_given_up: list[threading.Thread] = []
#: Seconds PortAudio is given to restart (:func:`restart_portaudio`).
RESTART_WITHIN = 5.0
#: A restart that did not return: PortAudio is not restarted again.
_restart_hung: threading.Thread | None = None


def close_stream(stream: Any, within: float = CLOSE_WITHIN) -> bool:
    """Stop a sound device's stream at once (what it still holds is dropped)
    and close it, giving up after ``within`` seconds: a busy or vanished
    audio server can keep a stream's stop waiting, and that must never keep a
    finished game from ending. False if it did not close in time (or failed)."""
    def close() -> None:
        try:
            stream.abort()
            stream.close()
        except Exception as error:  # a dead device may fail to close
            log.debug("closing a sound stream: %s", error)

    closer = _given_up_after(close, "close-stream", within)
    if closer is not None:
        _given_up.append(closer)
    return closer is None


def _given_up_after(work: Callable[[], None], name: str, within: float
                    ) -> threading.Thread | None:
    """Run ``work`` in a daemon thread for at most ``within`` seconds: the
    thread if it is still running then (counted in :data:`STREAMS_STUCK`, as
    PortAudio's exit handler would wait on it), else None."""
    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(within)
    if not worker.is_alive():
        return None
    global STREAMS_STUCK
    STREAMS_STUCK += 1
    return worker


def restart_portaudio(within: float = RESTART_WITHIN) -> bool:
    """Let PortAudio see sound devices that came back (it lists them only when
    it starts). Whether it was restarted.

    Never while a stream's close is still stuck inside it: an audio server
    that vanished can keep a stream's abort waiting for ever, and PortAudio's
    terminate would wait on that stream too, and the whole table with it
    (typed moves unanswered, the microphone never back: seen under load with
    PulseAudio killed and started again). Then the devices PortAudio listed
    at start are opened as they are, which is enough for the system's
    default (it reaches a restarted audio server afresh); a device unplugged
    and plugged back in is found once the close is through. The restart runs
    in a thread of its own, given ``within`` seconds: one that does not
    return is left, and PortAudio is not restarted again in this process.
    """
    global _restart_hung
    _given_up[:] = [closer for closer in _given_up if closer.is_alive()]
    if _given_up or _restart_hung is not None:
        log.debug("PortAudio not restarted: a stream's close or a restart is still stuck in it")
        return False

    def restart() -> None:
        try:
            import sounddevice

            sounddevice._terminate()
            sounddevice._initialize()
        except Exception as error:  # still no audio system
            log.debug("PortAudio restart: %s", error)

    _restart_hung = _given_up_after(restart, "restart-portaudio", within)
    if _restart_hung is not None:
        log.debug("PortAudio's restart did not return within %.0f s", within)
        return False
    return True
