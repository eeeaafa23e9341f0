"""Migration 19: workspaces people can create, rename and delete.

Until now a workspace was only a value of the ``workspace`` columns (``default`` unless the
Python API named another). Each now has a row: its id (the value those columns hold, fixed
for life), the name people see, and when it was made and last renamed. The ``default``
workspace gets its row, and so does every other id already found in a workspace column, so
existing data keeps its workspace and shows up in the list.

The fact journal stays append-only, except that the rows of a workspace that no longer exists
may go: deleting a workspace removes its row first, then everything that belonged to it.
"""

from __future__ import annotations

VERSION = 19
NAME = "workspaces"

_OWNED = (
    "facts",
    "fact_journal",
    "fact_exposures",
    "fact_votes",
    "fact_rate",
    "fact_pairs_kept",
    "context_files",
    "context_file_revisions",
    "context_file_activity",
    "run_context_loads",
    "notes_proposals",
)
_FOUND = " UNION ".join(f"SELECT workspace FROM {table}" for table in _OWNED)

SQL = f"""
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);

INSERT INTO workspaces (id, name, created_at, updated_at)
SELECT w, w, CAST(strftime('%s', 'now') AS REAL), CAST(strftime('%s', 'now') AS REAL)
FROM (SELECT 'default' AS w UNION {_FOUND});

DROP TRIGGER fact_journal_append_only_delete;
CREATE TRIGGER fact_journal_append_only_delete BEFORE DELETE ON fact_journal
WHEN EXISTS (SELECT 1 FROM workspaces WHERE id = OLD.workspace)
BEGIN
    SELECT RAISE(ABORT, 'fact_journal is append-only');
END;
"""
