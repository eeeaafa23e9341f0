"""Search every byte under a fleetmem home for planted secrets.

Every file counts: the SQLite database, its ``-wal`` and ``-shm``, logs, state files, token
files. The search is case-insensitive (a full-text index stores folded terms) and looks for
each telling fragment of a sample, in UTF-8 and in the JSON ``\\u``-free form SQLite keeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tests.ingress.corpus import Sample


def home_bytes(home: Path) -> dict[Path, bytes]:
    """Every regular file under ``home``, lower-cased."""
    out: dict[Path, bytes] = {}
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path] = path.read_bytes().lower()
    return out


def leaks(home: Path, samples: Iterable[Sample], extra: Iterable[bytes] = ()) -> list[str]:
    """``family: fragment in file`` for every fragment found under ``home`` (or in ``extra``,
    e.g. a daemon's captured stderr)."""
    files = home_bytes(home)
    blobs = [*files.items(), *((Path(f"<captured {i}>"), b.lower()) for i, b in enumerate(extra))]
    found = []
    for sample in samples:
        for fragment in sample.fragments:
            needle = fragment.lower().encode("utf-8")
            for path, data in blobs:
                if needle in data:
                    found.append(f"{sample.family}: {fragment!r} in {path.name}")
    return found


def files_scanned(home: Path) -> list[str]:
    """Names of the files a scan covers (to assert the database and its WAL were there)."""
    return [p.name for p in home_bytes(home)]
