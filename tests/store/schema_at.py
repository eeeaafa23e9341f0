"""A SQLite store file as an older fleetmem left it, for testing the migrations after."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fleetmem.store.sqlite.db import _statements
from fleetmem.store.sqlite.migrations import MIGRATIONS


def store_before(path: Path, version: int) -> sqlite3.Connection:
    """``path`` migrated up to (not including) ``version``, foreign keys off for seeding."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at REAL NOT NULL)"
    )
    for number, name, sql in MIGRATIONS:
        if number >= version:
            continue
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (number, name))
    conn.execute("PRAGMA foreign_keys = OFF")
    return conn
