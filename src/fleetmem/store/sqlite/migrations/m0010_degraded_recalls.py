"""Migration 10: one row per recall answered degraded, for the doctor (seed 000 REQ-19).

The recall counter in /metrics resets with the process, but the doctor must say whether any
recall in the last 24 hours was degraded, and why, even right after a restart. A row holds the
provider's configured name and the reason code only: never the query, the scopes or any id,
so this table is not a second copy of what agents asked. Rows older than 30 days are pruned
when new ones are written.
"""

from __future__ import annotations

VERSION = 10
NAME = "degraded_recalls"

SQL = """
CREATE TABLE degraded_recalls (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    provider TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX degraded_recalls_at ON degraded_recalls (at);
"""
