"""Migration 15: one row per utility-model call asked for, for the shared limits (000 REQ-7).

Summaries go to a paid endpoint, so their rate and daily count are limited across every
process that shares the home (the daemon and any CLI ingesting runs): the window is counted
here, not in memory. A row holds when, which use and whether the call was let through; never
the text sent. Rows older than two days are pruned as new ones are written.
"""

from __future__ import annotations

VERSION = 15
NAME = "utility_calls"

SQL = """
CREATE TABLE utility_calls (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    use TEXT NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX utility_calls_at ON utility_calls (at, outcome);
"""
