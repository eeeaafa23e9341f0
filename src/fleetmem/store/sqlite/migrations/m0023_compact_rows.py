"""Migration 23: fewer bytes for the same rows (issue 20, footprint at 100,000 episodes).

- A finished job's row goes. Every episode left a ``record`` job behind once its provider had
  it (105 bytes an episode), and nothing reads a finished job: counts leave them out, and only
  a pending job stops a duplicate. The store now deletes a job's row when it is done (or
  cancelled by a forget); this removes the ones kept before.
- Each path an event names is stored once. ``events`` held every path in full (six events a
  run, four of them edits, on the bench store); ``event_rows`` holds a number into
  ``event_paths``, which counts the events naming each path and drops a path with its last
  event (forgetting a run leaves no trace of its files). ``events`` is a view of the same
  columns as before, written through INSTEAD OF triggers, as ``run_paths`` is (migration 22).
- ``runs_repo_started`` (every run, 38 bytes each) served one query: the newest earlier run of
  a branch that linked a pull request. A partial index of the runs with a pull request serves
  it now.

Rows written from this version on are smaller in two more ways that need no migration (each
format is read as it was written): vectors as int8 (``store/sqlite/vector_blob.py``), and an
episode's rendering and its text index entry packed against its body
(``store/sqlite/packed.py``, ``store/sqlite/fts_source.py``).
"""

from __future__ import annotations

VERSION = 23
NAME = "compact_rows"

SQL = """
DELETE FROM jobs WHERE state = 'done';

CREATE TABLE event_paths (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    refs INTEGER NOT NULL
);

CREATE TABLE event_rows (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    path_id INTEGER REFERENCES event_paths (id),
    passed INTEGER,
    error_class TEXT,
    PRIMARY KEY (run_id, session_id, seq),
    FOREIGN KEY (run_id, session_id) REFERENCES sessions (run_id, session_id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TRIGGER event_rows_named AFTER INSERT ON event_rows WHEN NEW.path_id IS NOT NULL
BEGIN
    UPDATE event_paths SET refs = refs + 1 WHERE id = NEW.path_id;
END;

CREATE TRIGGER event_rows_unnamed AFTER DELETE ON event_rows WHEN OLD.path_id IS NOT NULL
BEGIN
    UPDATE event_paths SET refs = refs - 1 WHERE id = OLD.path_id;
    DELETE FROM event_paths WHERE id = OLD.path_id AND refs <= 0;
END;

INSERT INTO event_paths (path, refs)
    SELECT DISTINCT path, 0 FROM events WHERE path IS NOT NULL ORDER BY path;

INSERT INTO event_rows (run_id, session_id, seq, type, path_id, passed, error_class)
    SELECT e.run_id, e.session_id, e.seq, e.type, p.id, e.passed, e.error_class
    FROM events e LEFT JOIN event_paths p ON p.path = e.path;

DROP TABLE events;

CREATE VIEW events (run_id, session_id, seq, type, path, passed, error_class) AS
    SELECT r.run_id, r.session_id, r.seq, r.type, p.path, r.passed, r.error_class
    FROM event_rows r LEFT JOIN event_paths p ON p.id = r.path_id;

CREATE TRIGGER events_insert INSTEAD OF INSERT ON events
BEGIN
    INSERT INTO event_paths (path, refs) SELECT NEW.path, 0 WHERE NEW.path IS NOT NULL
        ON CONFLICT (path) DO NOTHING;
    INSERT INTO event_rows (run_id, session_id, seq, type, path_id, passed, error_class)
        VALUES (NEW.run_id, NEW.session_id, NEW.seq, NEW.type,
            (SELECT id FROM event_paths WHERE path = NEW.path),
            NEW.passed, NEW.error_class);
END;

CREATE TRIGGER events_delete INSTEAD OF DELETE ON events
BEGIN
    DELETE FROM event_rows
        WHERE run_id = OLD.run_id AND session_id = OLD.session_id AND seq = OLD.seq;
END;

DROP INDEX runs_repo_started;
CREATE INDEX runs_pull_requests ON runs (repo, branch, started_at)
    WHERE pull_request IS NOT NULL;
"""
