"""Migration 6: each text index row carries its episode's start (issue 20, recall p95).

The text channel ranks up to 4,000 matching rows and broke ties by the episode's start, which
it read by joining every candidate row to ``episodes`` (also to leave forgotten episodes out).
On the 20,000-episode bench schema that join was most of the server's time (EXPLAIN ANALYZE,
while other work ran: 32.5 ms at p95 against 8.3 without it; end to end, with the rows'
transfer and the scoring in Python, the text channel's p95 went from about 33 to 27 ms). The
start is now kept beside the row (an episode's start never changes), and forgotten episodes
are left out of the few rows a search returns instead of every candidate
(``search_text_scored`` in ``store/postgres/builtin_index.py``). A forgotten episode still
takes one of the 4,000 candidate places until its provider forget removes its row.
"""

from __future__ import annotations

VERSION = 6
NAME = "fts_started_at"

SQL = """
ALTER TABLE builtin_fts ADD COLUMN started_at double precision;
UPDATE builtin_fts f SET started_at = e.started_at FROM episodes e WHERE e.erow = f.erow;
UPDATE builtin_fts SET started_at = 0 WHERE started_at IS NULL;
ALTER TABLE builtin_fts ALTER COLUMN started_at SET NOT NULL;
"""
