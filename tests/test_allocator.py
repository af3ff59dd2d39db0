"""The referee's process allocates from two of glibc's arenas
(:func:`referee.allocator.cap_arenas`), not one a thread: counted by glibc's
own ``malloc_info`` in a fresh interpreter whose eight threads each
allocate at once. Skipped visibly where the C library is not glibc."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.allocator import ARENAS

ROOT = Path(__file__).resolve().parent.parent

#: Eight threads allocate through the C library (ctypes lets the GIL go, so
#: they allocate at once) and live until all have, then glibc writes its
#: arenas ("<heap nr=...>").
PROBE = """
import ctypes, sys, tempfile, threading
from referee.allocator import cap_arenas
print(cap_arenas() if sys.argv[1] == "capped" else None)
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
kept, together = [], threading.Barrier(8)
def allocate():
    kept.extend(libc.malloc(1000) for _ in range(100))
    together.wait()  # (a thread that ended would hand its arena to the next)
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, (ctypes.c_char_p, ctypes.c_char_p)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
with tempfile.NamedTemporaryFile("r") as out:
    written = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, written)
    libc.fclose(written)
    print(out.read().count("<heap nr="))
"""


def _arenas(how: str, **env: str) -> tuple[str, int]:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True,
                          cwd=ROOT, env=environ, timeout=60, check=True)
    said, arenas = done.stdout.split()
    return said, int(arenas)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "malloc_info"), reason="not glibc")
def test_the_referee_s_threads_share_two_arenas() -> None:
    assert _arenas("capped") == ("True", ARENAS)
    assert _arenas("as glibc would")[1] > ARENAS  # (a thread's own each, without the cap)
    # A user's own setting is theirs: not overridden.
    assert _arenas("capped", MALLOC_ARENA_MAX="4") == ("False", 4)
