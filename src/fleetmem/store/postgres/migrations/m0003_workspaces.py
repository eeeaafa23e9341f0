"""Migration 3: workspaces people can create, rename and delete (SQLite's migration 19).

Each workspace gets a row: its id (the value every ``workspace`` column holds, fixed for
life), the name people see, and when it was made and last renamed. ``default`` and every id
already found in a workspace column get theirs, so existing data keeps its workspace.

The fact journal stays append-only, except that the rows of a workspace that no longer exists
may go: deleting a workspace removes its row first, then everything that belonged to it.
"""

from __future__ import annotations

VERSION = 3
NAME = "workspaces"

_T = 'text COLLATE "C"'
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
    id {_T} PRIMARY KEY,
    name text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
);

INSERT INTO workspaces (id, name, created_at, updated_at)
SELECT w, w, extract(epoch FROM now()), extract(epoch FROM now())
FROM (SELECT 'default' AS w UNION {_FOUND}) AS found;

CREATE OR REPLACE FUNCTION fleetmem_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'fact_journal'
            AND NOT EXISTS (SELECT 1 FROM workspaces WHERE id = OLD.workspace) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END
$$;
"""
