"""Migration 5: drop the index on ``events.path`` (SQLite's 21 dropped its own).

No query reads events by path: a run's events are read by run id, and the paths a run
touched are kept in ``run_paths``. The index cost its size on disk and a write per event.
"""

from __future__ import annotations

VERSION = 5
NAME = "drop_events_path"

SQL = "DROP INDEX IF EXISTS events_path;"
