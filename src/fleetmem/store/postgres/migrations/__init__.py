"""Numbered migrations of the PostgreSQL store, one module each: ``mNNNN_<name>.py``.

Each module defines ``VERSION``, ``NAME`` and ``SQL`` (one or more statements). Append only:
never edit a released migration; add a new module. Each is applied in one transaction under
an advisory lock and recorded in ``schema_migrations`` (see ``store/postgres/db.py``).

The numbers are this store's own: migration 1 creates in one step the tables that SQLite's
migrations 1 to 17 built one by one, so the two stores' schema versions are not comparable.
"""

from __future__ import annotations

import importlib
import pkgutil


def _load() -> tuple[tuple[int, str, str], ...]:
    found: list[tuple[int, str, str]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("m"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append((int(module.VERSION), str(module.NAME), str(module.SQL)))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration numbers: {versions}")
    return tuple(found)


#: (version, name, SQL) in order.
MIGRATIONS = _load()
