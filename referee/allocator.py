"""The process's memory allocator, set once before any thread starts.

glibc's ``malloc`` gives each thread that allocates while another holds
the lock an arena of its own, up to eight a core, and never hands a page
of one arena to another. The live loop runs many threads that allocate
(the microphone's, the decode ahead, the voice, Whisper's and Moonshine's
own), so the peak resident size grew with pages held in arenas nobody was
using at that moment. Two arenas, as ``MALLOC_ARENA_MAX=2`` would set:
``./run bench table --live 32 --ears whisper+moonshine-tiny`` peaked at
596 and 598 MB with glibc's default, 558 and 583 MB with two arenas, the
answer no slower (docs/record/2026-12-07-two-ears-memory.md).

On a C library without ``mallopt`` (macOS, musl) nothing is set; a
``MALLOC_ARENA_MAX`` of the user's own is left to glibc."""

from __future__ import annotations

import ctypes
import os

#: ``mallopt``'s parameter for the most arenas (glibc's ``malloc.h``).
M_ARENA_MAX = -8
#: The arenas the referee's process allocates from.
ARENAS = 2


def cap_arenas(arenas: int = ARENAS) -> bool:
    """Let ``malloc`` use at most ``arenas`` arenas; whether it was set (only
    glibc can, and only where the environment did not set its own)."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
