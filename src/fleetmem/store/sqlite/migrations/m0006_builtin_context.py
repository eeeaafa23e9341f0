"""Migration 6: a ``context`` column in the built-in text index.

Context (the excerpts of an episode's neighbouring runs) is ranked below the episode's own
words, which needs a column of its own: FTS5 weighs columns, not parts of one column. FTS5
tables cannot gain a column, so the index is rebuilt; existing rows start with no context.
"""

from __future__ import annotations

VERSION = 6
NAME = "builtin_context"

SQL = """
CREATE VIRTUAL TABLE builtin_fts_v2 USING fts5 (
    text, summary, context, tokenize = 'porter unicode61'
);
INSERT INTO builtin_fts_v2 (rowid, text, summary, context)
    SELECT rowid, text, summary, '' FROM builtin_fts;
DROP TABLE builtin_fts;
ALTER TABLE builtin_fts_v2 RENAME TO builtin_fts;
"""
