"""Migration 13: the built-in index's phrase-pruning counts, shared by every process.

The text channel drops query terms found in a large share of the store before FTS5 scores
anything (``store/sqlite/term_stats.py``). Counting a common term walks its whole posting
list, which at 100k episodes costs more than the rest of a recall; a process remembers its
counts, but a ``fleetmem mcp`` started for one agent run lives minutes and would pay for
every term again. Counts are kept here so the first process to count a term spares the
others. A row is a cache entry, not data: the term, its document count and the store size it
was taken at (entries whose size has drifted are recounted). Only common terms are kept (rare
ones are cheap to count), so the table is bounded by the index's own vocabulary, never by
what callers type.
"""

from __future__ import annotations

VERSION = 13
NAME = "builtin_term_counts"

SQL = """
CREATE TABLE builtin_term_counts (
    term TEXT PRIMARY KEY,
    docs INTEGER NOT NULL,
    taken_at INTEGER NOT NULL
) WITHOUT ROWID;
"""
