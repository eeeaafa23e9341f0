"""Compiled dataclass methods, kept between processes like ``.pyc`` files.

``@dataclass`` writes the source of each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` (and, when frozen, ``__setattr__`` and ``__delattr__``) and compiles it while the
module is imported. fleetmem defines some two hundred such classes, so an agent hook, which
is a fresh process for every event, spent about 110 ms of its 300 compiling the same few
thousand lines every time (measured on a SessionStart, 2026-12-06).

:func:`install` gives the :mod:`dataclasses` module an ``exec`` of its own that looks the
source up among code objects kept in the user's cache, and compiles only what is missing.
The code object for a source text is what ``exec`` would compile from it, so the classes are
exactly the same, and a text never seen before is compiled as usual. This holds for any
Python whose :mod:`dataclasses` runs generated source through ``exec`` (3.11 to 3.13 do, per
method or per class); anything else is passed through untouched.

The cache is a folder, ``$XDG_CACHE_HOME/fleetmem/dataclass-code-<bytecode magic>``
(``~/.cache/fleetmem/…``), with one file per module that defines dataclasses, read the
first time that module defines one; so a process reads only what it imports. :func:`save`
writes the files of the modules that compiled something new, holding the sources that
module used in this process (a class since changed leaves nothing behind), atomically. It
runs at interpreter exit and from the hook entry point, which leaves by ``os._exit``, and
only when Python may write bytecode (``PYTHONDONTWRITEBYTECODE`` unset). An unreadable or
foreign file is ignored and replaced. ``FLEETMEM_DATACLASS_CACHE=0`` turns it all off.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import functools
import os
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from fleetmem import cache_files
from fleetmem.cache_files import read_marshalled, write_marshalled

#: Turns the cache off when set to "0".
ENV = "FLEETMEM_DATACLASS_CACHE"
#: What marks a file as this module's (a foreign or truncated file is not loaded).
HEADER = b"fleetmem-dataclass-code-2\n"
#: A file larger than this is not read (nothing fleetmem writes comes near it).
MAX_FILE_BYTES = 4 * 1024 * 1024

_lock = threading.Lock()
_installed = False
#: module -> {source: code}: what its file held, then what this process compiled.
_tables: dict[str, dict[str, CodeType]] = {}
#: module -> the sources it used in this process.
_used: dict[str, set[str]] = {}
#: Modules that compiled something their file lacked.
_dirty: set[str] = set()


def cache_folder(environ: Any = os.environ) -> Path:
    from importlib.util import MAGIC_NUMBER

    return cache_files.cache_folder(environ) / f"dataclass-code-{MAGIC_NUMBER.hex()}"


def _file(folder: Path, module: str) -> Path:
    return folder / f"{module}.marshal"


def read_table(path: Path) -> dict[str, CodeType]:
    """The code objects a file holds; empty for a missing, foreign or damaged one."""
    table = read_marshalled(path, HEADER, MAX_FILE_BYTES)
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}


@functools.cache
def _where() -> Path | None:
    """Where the files are: found when the first dataclass is defined (None: nowhere)."""
    try:
        return cache_folder()
    except Exception:  # no home directory: classes compile as usual
        return None


def _exec(source: Any, globals_: Any = None, locals_: Any = None) -> None:
    folder = _where() if isinstance(source, str) else None
    if folder is not None and isinstance(globals_, dict):
        module = globals_.get("__name__")
        if isinstance(module, str) and _file_safe(module):
            source = _code(folder, module, source)
    builtins.exec(source, globals_, locals_)


def _file_safe(module: str) -> bool:
    """Whether a module's name can name its file (a dotted name; nothing that climbs out of
    the folder or is too long for a file name)."""
    return (
        0 < len(module) <= 200
        and module[0] != "."
        and not any(sep in module for sep in ("/", "\\", "\0"))
    )


def _code(folder: Path, module: str, source: str) -> CodeType:
    with _lock:
        table = _tables.get(module)
        if table is None:
            table = _tables[module] = read_table(_file(folder, module))
        _used.setdefault(module, set()).add(source)
        code = table.get(source)
    if code is None:
        # dont_inherit: this module's `from __future__ import annotations` must not turn the
        # generated methods' annotations into strings, as dataclasses' own exec would not.
        code = compile(source, "<string>", "exec", dont_inherit=True)
        with _lock:
            table[source] = code
            _dirty.add(module)
    return code


def install() -> None:
    """Route :mod:`dataclasses`' ``exec`` through the cache (once per process).

    When :mod:`dataclasses` is not imported yet it is not imported here (with ``inspect`` it
    costs a relayed hook, which defines no dataclass, 5 ms): a finder patches it as it loads.
    """
    global _installed
    if _installed or os.environ.get(ENV) == "0":
        return
    _installed = True
    loaded = sys.modules.get("dataclasses")
    if loaded is not None:
        loaded.exec = _exec  # type: ignore[attr-defined]
    else:
        sys.meta_path.insert(0, _PatchOnLoad())
    atexit.register(save)


class _PatchOnLoad:
    """A meta path finder that answers for :mod:`dataclasses` once: it finds the module's
    spec with the finders after it, and has the loader set ``exec`` before the module's own
    code runs (``dataclass`` looks ``exec`` up in the module's globals when it is called)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "dataclasses":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def patched(module: Any) -> None:
            module.exec = _exec
            exec_module(module)

        loader.exec_module = patched
        return spec


def save() -> None:
    """Write the files of modules that compiled something new; never raises."""
    if not _dirty or sys.dont_write_bytecode:
        return
    folder = _where()  # found already: something was compiled for a file in it
    if folder is None:
        return
    with _lock:
        modules = sorted(_dirty)
        _dirty.clear()
        tables = {m: {s: _tables[m][s] for s in _used[m]} for m in modules}
    for module, table in tables.items():
        write_marshalled(_file(folder, module), HEADER, table)
