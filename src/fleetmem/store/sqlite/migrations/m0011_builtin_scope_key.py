"""Migration 11: a ``scope_key`` column in the built-in text index.

A scoped recall used to let FTS5 score every matching episode of every scope, then drop the
foreign ones in the join with ``episodes``: at 100k episodes most of the text channel's time
went to rows the caller could never see. Each row now carries one token naming its scope
(``s`` + the scope's UTF-8 bytes in hex + ``0``: exact, so no two scopes share a token, and
never changed by the porter stemmer), and a query ANDs the caller's scope tokens, so FTS5 only
scores in-scope rows. The column narrows the work only: scope is still enforced by the join
with ``episodes`` (the authoritative scope), and the column is weighted 0 in BM25.

FTS5 tables cannot gain a column, so the index is rebuilt from the current one.
"""

from __future__ import annotations

VERSION = 11
NAME = "builtin_scope_key"

SQL = """
CREATE VIRTUAL TABLE builtin_fts_v3 USING fts5 (
    text, summary, context, scope_key, tokenize = 'porter unicode61'
);
INSERT INTO builtin_fts_v3 (rowid, text, summary, context, scope_key)
    SELECT f.rowid, f.text, f.summary, f.context, 's' || lower(hex(e.scope)) || '0'
    FROM builtin_fts f JOIN episodes e ON e.rowid = f.rowid;
DROP TABLE builtin_fts;
ALTER TABLE builtin_fts_v3 RENAME TO builtin_fts;
"""
