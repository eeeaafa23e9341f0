"""Compiled regular expressions, kept between processes like dataclass methods are.

An agent hook is a fresh process for every event. The capture rules it runs on a prompt that
asks to remember something are a few large patterns, and compiling them took about 50 ms of
a 250 ms hook (2026-12-07), every time; the redactor's patterns add a few ms to every event.
Compiling a pattern means parsing it and generating the code the regular expression engine
runs; the engine itself (``_sre``) builds a pattern object from that code in microseconds.

:func:`compile` keeps that code. On a miss it compiles as :func:`re.compile` does and, where
it may write the cache, also produces the code the way :mod:`re` does internally and keeps it
only if the pattern built from it is equal to the one :func:`re.compile` returned (equality
of compiled patterns compares their code), so a Python whose internals differ keeps nothing
and loses nothing. On a hit the engine builds the pattern from the kept code, after checking
the entry's checksum; anything unexpected falls back to :func:`re.compile`. The engine
validates the code it is given, as it does for every pattern.

The cache is one file, ``$XDG_CACHE_HOME/fleetmem/patterns-<interpreter>.marshal``, named
for the exact interpreter build and engine version. :func:`save` merges what this process
compiled into it, atomically, at interpreter exit and from the hook entry point (which leaves
by ``os._exit``), and only where Python may write bytecode (``PYTHONDONTWRITEBYTECODE`` unset),
like :mod:`fleetmem.dataclass_cache`. ``FLEETMEM_PATTERN_CACHE=0`` turns it off. Whoever can
write the user's cache folder can change what a pattern matches, as they can change the
dataclass methods kept beside it: the folder is the user's own.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the engine itself: no stubs
import atexit
import functools
import marshal
import os
import re
import sys
import threading
import zlib
from pathlib import Path
from typing import Any

from fleetmem import cache_files
from fleetmem.cache_files import read_marshalled, write_marshalled

#: Turns the cache off when set to "0".
ENV = "FLEETMEM_PATTERN_CACHE"
#: What marks the file as this module's (a foreign or truncated file is not loaded).
HEADER = b"fleetmem-patterns-1\n"
#: A file larger than this is not read.
MAX_FILE_BYTES = 32 * 1024 * 1024
#: Past this size a save keeps only the entries this process used, so patterns since edited
#: (a new release, a developer's checkout) do not pile up (fleetmem's own make 1.4 MB).
KEEP_BYTES = 8 * 1024 * 1024

Key = tuple[str, int]

_lock = threading.Lock()
#: (source, flags) -> checksum and code, as the file held them (None: not read yet).
_table: dict[Key, bytes] | None = None
#: What this process compiled that the file lacked.
_new: dict[Key, bytes] = {}
#: The entries this process used, read or new.
_used: set[Key] = set()


def cache_file(environ: Any = os.environ) -> Path:
    build = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}"
    return cache_files.cache_folder(environ) / f"patterns-{build}.marshal"


@functools.cache
def _where() -> Path | None:
    try:
        return cache_file()
    except Exception:  # no home directory: patterns compile as usual
        return None


def read_table(path: Path) -> dict[Key, bytes]:
    """The entries a file holds; empty for a missing, foreign or damaged one."""
    table = read_marshalled(path, HEADER, MAX_FILE_BYTES)
    if not isinstance(table, dict):
        return {}
    return {
        key: value
        for key, value in table.items()
        if isinstance(key, tuple)
        and len(key) == 2
        and isinstance(key[0], str)
        and isinstance(key[1], int)
        and isinstance(value, bytes)
    }


def _loaded() -> dict[Key, bytes]:
    global _table
    with _lock:
        if _table is None:
            where = _where()
            _table = {} if where is None else read_table(where)
        return _table


def _may_save() -> bool:
    return not sys.dont_write_bytecode and _where() is not None


def compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """What ``re.compile(source, flags)`` returns, from the kept code when there is some."""
    key = (source, int(flags))
    entry = _loaded().get(key)
    if entry is not None:
        pattern = _built(source, entry)
        if pattern is not None:
            with _lock:
                _used.add(key)
            return pattern
    pattern = re.compile(source, flags)
    if _may_save():
        entry = _entry(source, int(flags), pattern)
        if entry is not None:
            with _lock:
                _new[key] = entry
                _used.add(key)
    return pattern


def _entry(source: str, flags: int, expected: re.Pattern[str]) -> bytes | None:
    """The checksummed code of ``source``, made as :mod:`re` makes it; None unless the
    pattern built from it equals ``expected``."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(source, flags)
        code = [int(op) for op in _compiler._code(parsed, flags)]
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        parts = (
            int(flags | parsed.state.flags),
            code,
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        if _sre.compile(source, *parts) != expected:
            return None
        body = marshal.dumps(parts)
    except Exception:  # other internals: nothing kept
        return None
    return zlib.crc32(body).to_bytes(4, "big") + body


def _built(source: str, entry: bytes) -> re.Pattern[str] | None:
    """The pattern ``entry`` holds the code of; None when it is damaged or unusable."""
    body = entry[4:]
    if len(entry) < 5 or zlib.crc32(body).to_bytes(4, "big") != entry[:4]:
        return None
    try:
        flags, code, groups, groupindex, indexgroup = marshal.loads(body)
        pattern: re.Pattern[str] = _sre.compile(source, flags, code, groups, groupindex, indexgroup)
    except Exception:  # damaged, or code the engine refuses: compiled afresh
        return None
    return pattern


def install() -> None:
    """Have :class:`fleetmem.core.lazy_pattern.LazyPattern` compile through the cache."""
    if os.environ.get(ENV) == "0":
        return
    from fleetmem.core import lazy_pattern

    lazy_pattern.use_compiler(compile)
    atexit.register(save)


def save() -> None:
    """Merge what this process compiled into the file; never raises."""
    with _lock:
        new = dict(_new)
        _new.clear()
        used = set(_used)
    where = _where()
    if not new or not _may_save() or where is None:
        return
    merged = {**read_table(where), **new}  # what other processes kept since this one read
    if sum(len(key[0]) + len(entry) for key, entry in merged.items()) > KEEP_BYTES:
        merged = {key: entry for key, entry in merged.items() if key in used}
    write_marshalled(where, HEADER, merged)
