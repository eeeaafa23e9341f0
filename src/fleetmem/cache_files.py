"""Files of compiled code kept in the user's cache folder (:mod:`fleetmem.dataclass_cache`,
:mod:`fleetmem.pattern_cache`): a header that says whose a file is, then one marshalled
value, replaced atomically. A missing, foreign, damaged or oversized file reads as nothing;
a write that fails (a read-only or full disk) leaves the old file and raises nothing.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from pathlib import Path
from typing import Any


def cache_folder(environ: Any = os.environ) -> Path:
    """``$XDG_CACHE_HOME/fleetmem`` (``~/.cache/fleetmem``)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fleetmem"


def read_marshalled(path: Path, header: bytes, max_bytes: int) -> object | None:
    """The value ``path`` holds after ``header``; None when there is none to trust."""
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError:
        return None
    if not data.startswith(header) or len(data) > max_bytes:
        return None
    try:
        value: object = marshal.loads(data[len(header) :])
    except (EOFError, ValueError, TypeError):
        return None
    return value


def write_marshalled(path: Path, header: bytes, value: Any) -> None:
    """Replace ``path`` with ``header`` and ``value``, atomically; never raises."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(header + marshal.dumps(value))
        os.replace(temp, path)
    except (OSError, ValueError):  # compiled again next time
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
