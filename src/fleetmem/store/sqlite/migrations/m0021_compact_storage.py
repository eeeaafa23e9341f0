"""Migration 21: the same rows in fewer bytes (issue 20, footprint at 100,000 episodes).

- ``events`` becomes a WITHOUT ROWID table and loses its index on ``path``: each event was
  stored twice, in the table under a hidden rowid and in its primary key's index (231 of its
  781 bytes an episode on the bench store), and no query reads events by path (171 bytes).
  An event whose session is gone (which the cascade from ``sessions`` would have deleted) is
  not carried: it would fail the new table's foreign key and stop the store from opening.
  ``embeddings`` stays a rowid table: as WITHOUT ROWID its rows of about 900 bytes, written
  in hash order, filled their pages a fifth less (1,208 bytes an episode, measured).
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
