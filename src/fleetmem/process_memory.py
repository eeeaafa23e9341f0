"""Keep the daemon's resident memory near what it really holds (glibc only; a no-op elsewhere).

Two measured causes of a resident set far above the live data (issue 20, 100,000 episodes):

- onnxruntime folds the int8 model's weights into float32 while it builds the session and
  frees the temporaries, but glibc keeps the freed pages: the session read 165 MiB resident,
  104 MiB after ``malloc_trim``.
- glibc gives each thread that allocates its own heap arena (up to eight per core), and the
  web server's worker threads each kept a recall's freed buffers in theirs: the daemon read
  554 MiB after recalls with the default and 441 MiB with two arenas.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
from functools import cache
from typing import Any

log = logging.getLogger(__name__)

#: glibc's ``mallopt`` parameter number for the arena cap (malloc.h: ``M_ARENA_MAX``).
_M_ARENA_MAX = -8

#: Arenas the daemon allows: enough that two cores rarely wait on one heap lock.
DAEMON_ARENAS = 2


@cache
def _glibc() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        # musl has neither function: only glibc's allocator behaves as described above.
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(arenas: int = DAEMON_ARENAS) -> bool:
    """Cap the heap arenas for threads started from now on; True if the allocator took it."""
    if arenas < 1:
        raise ValueError(f"arenas must be >= 1, got {arenas}")
    libc = _glibc()
    if libc is None:
        return False
    taken = bool(libc.mallopt(_M_ARENA_MAX, arenas))
    log.debug("memory.arenas limit=%d taken=%s", arenas, taken)
    return taken


def give_back() -> bool:
    """Return the freed pages at the top of every heap to the system; True if any were."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.malloc_trim(0))
