"""Migration 7: a run's briefing, computed once and served unchanged (seed 000 REQ-15).

A briefing is computed at the run's first read (or at spawn), stored here, and served from
here by every server process until the run asks for ``refresh``, so repeated reads do not
churn the agent's context. ``fact_ids`` are the facts the document shows, in order (JSON), so
each serve can write its exposure rows without parsing the document. Rows are kept for 30
days after they were computed; the run's token stops resolving long before.
"""

from __future__ import annotations

VERSION = 7
NAME = "run_briefings"

SQL = """
CREATE TABLE run_briefings (
    run_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    repo TEXT,
    branch TEXT,
    text TEXT NOT NULL,
    fact_ids TEXT NOT NULL,
    degraded TEXT,
    origin TEXT NOT NULL,
    computed_at REAL NOT NULL,
    version INTEGER NOT NULL
);
CREATE INDEX run_briefings_computed ON run_briefings (computed_at);
"""
