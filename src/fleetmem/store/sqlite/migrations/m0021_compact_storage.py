"""Migration 21: the same rows in fewer bytes (issue 20, footprint at 100,000 episodes).

- ``embeddings`` and ``events`` become WITHOUT ROWID tables: each was stored twice, once
  in the table under a hidden rowid and once in the index of its primary key (2,175 and 610
  bytes an episode on the bench store, about a third of that the second copy). An event
  whose session is gone (which the cascade from ``sessions`` would have deleted) is not
  carried: it would fail the new table's foreign key and stop the store from opening.
- The text index keeps no copy of what it indexed. FTS5 stored every indexed column
  uncompressed (1,564 bytes an episode) only so it could find the words to remove when a row
  is replaced or deleted; ``builtin_fts_source`` now keeps them (deflated by the store when it
  writes a row, see ``store/sqlite/packed.py``) and the index is contentless. Rows carried
  over here are kept as JSON text, which the store reads the same way.

Vectors keep their bytes here; the store writes new ones in half precision
(``store/sqlite/vector_blob.py``).
"""

from __future__ import annotations

VERSION = 21
NAME = "compact_storage"

SQL = """
CREATE TABLE embeddings_compact (
    content_hash TEXT NOT NULL,
    model_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (content_hash, model_id)
) WITHOUT ROWID;

INSERT INTO embeddings_compact (content_hash, model_id, dim, vector)
    SELECT content_hash, model_id, dim, vector FROM embeddings;

DROP TABLE embeddings;

ALTER TABLE embeddings_compact RENAME TO embeddings;

CREATE TABLE events_compact (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    path TEXT,
    passed INTEGER,
    error_class TEXT,
    PRIMARY KEY (run_id, session_id, seq),
    FOREIGN KEY (run_id, session_id) REFERENCES sessions (run_id, session_id) ON DELETE CASCADE
) WITHOUT ROWID;

INSERT INTO events_compact (run_id, session_id, seq, type, path, passed, error_class)
    SELECT run_id, session_id, seq, type, path, passed, error_class FROM events e
    WHERE EXISTS (
        SELECT 1 FROM sessions s WHERE s.run_id = e.run_id AND s.session_id = e.session_id
    );

DROP TABLE events;

ALTER TABLE events_compact RENAME TO events;

CREATE INDEX events_path ON events (path) WHERE path IS NOT NULL;

CREATE TABLE builtin_fts_source (
    rowid INTEGER PRIMARY KEY,
    indexed BLOB NOT NULL
);

INSERT INTO builtin_fts_source (rowid, indexed)
    SELECT rowid, json_array(text, summary, context, scope_key) FROM builtin_fts;

DROP TABLE builtin_fts;

CREATE VIRTUAL TABLE builtin_fts USING fts5 (
    text, summary, context, scope_key, content = '', tokenize = 'porter unicode61'
);

INSERT INTO builtin_fts (rowid, text, summary, context, scope_key)
    SELECT rowid, json_extract(indexed, '$[0]'), json_extract(indexed, '$[1]'),
        json_extract(indexed, '$[2]'), json_extract(indexed, '$[3]')
    FROM builtin_fts_source;
"""
