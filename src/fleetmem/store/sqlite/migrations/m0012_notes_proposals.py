"""Migration 12: changes an agent proposed to its own Notes file, waiting for a person (S17).

Without the ``edit_agent_files`` permission ``update_notes`` writes nothing to the file; the
change it would make is kept here, attributed to the agent (and its run), as ``pending``, until
a person applies it (a new revision of the file, by that person) or dismisses it. ``base_revision``
is the revision the proposal was computed from: applying it is a save based on that revision, so
a file changed meanwhile refuses it like any stale save. ``diff`` is the unified diff shown for
review; ``proposed_text`` the whole new body.
"""

from __future__ import annotations

VERSION = 12
NAME = "notes_proposals"

SQL = """
CREATE TABLE notes_proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    agent TEXT NOT NULL,
    run_id TEXT,
    mode TEXT NOT NULL CHECK (mode IN ('append', 'replace')),
    base_revision INTEGER NOT NULL,
    proposed_text TEXT NOT NULL,
    diff TEXT NOT NULL,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'applied', 'dismissed')),
    decided_at REAL,
    decided_by TEXT,
    applied_revision INTEGER
);
CREATE INDEX notes_proposals_by_agent ON notes_proposals (workspace, agent, status, id);
"""
