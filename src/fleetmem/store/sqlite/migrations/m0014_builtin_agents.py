"""Migration 14: the agents with episodes in each scope of the built-in index.

Recall favours the episodes of an agent a query names (``core/named_agents.py``), so it must
know, before it searches, which names to look for. Reading them off the episodes table would
visit every row of a scope; this table holds one row per (scope, agent) pair, added when an
episode is indexed. A forgotten agent's row may stay: a name with no episodes left changes
nothing but the words searched with.
"""

from __future__ import annotations

VERSION = 14
NAME = "builtin_agents"

SQL = """
CREATE TABLE builtin_agents (
    scope TEXT NOT NULL,
    agent TEXT NOT NULL,
    PRIMARY KEY (scope, agent)
) WITHOUT ROWID;
INSERT OR IGNORE INTO builtin_agents (scope, agent)
    SELECT DISTINCT scope, agent FROM episodes WHERE forgotten_at IS NULL;
"""
