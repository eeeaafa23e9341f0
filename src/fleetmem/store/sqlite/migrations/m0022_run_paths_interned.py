"""Migration 22: each file path a run edited is stored once (issue 20, footprint).

``run_paths`` held every (run, repository, path) with both names in full, three times over:
in the table, in its primary key and in its lookup index (1,006 bytes an episode on the
bench store, where 100,000 runs edited 265 distinct paths). Each distinct (repository, path)
now has a row of ``store_paths`` and a run's edit is a pair of numbers in
``run_path_links``. ``run_paths`` is a view of the same columns as before, which the store
reads and writes as it did (an INSTEAD OF trigger interns a new path), so a copy between
stores carries it like any table.

A path no run names any more is deleted with its last link (trigger below): forgetting a run
leaves no trace of the files it touched.
"""

from __future__ import annotations

VERSION = 22
NAME = "run_paths_interned"

SQL = """
CREATE TABLE store_paths (
    id INTEGER PRIMARY KEY,
    repo TEXT NOT NULL,
    path TEXT NOT NULL,
    UNIQUE (repo, path)
);

CREATE TABLE run_path_links (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    path_id INTEGER NOT NULL REFERENCES store_paths (id),
    ended_at REAL NOT NULL,
    PRIMARY KEY (run_id, path_id)
) WITHOUT ROWID;

CREATE INDEX run_path_links_by_path ON run_path_links (path_id, ended_at);

INSERT INTO store_paths (repo, path)
    SELECT DISTINCT repo, path FROM run_paths r
    WHERE EXISTS (SELECT 1 FROM runs WHERE runs.run_id = r.run_id)
    ORDER BY repo, path;

INSERT INTO run_path_links (run_id, path_id, ended_at)
    SELECT r.run_id, p.id, r.ended_at FROM run_paths r
    JOIN store_paths p ON p.repo = r.repo AND p.path = r.path
    WHERE EXISTS (SELECT 1 FROM runs WHERE runs.run_id = r.run_id);

DROP TABLE run_paths;

CREATE VIEW run_paths (run_id, repo, path, ended_at) AS
    SELECT l.run_id, p.repo, p.path, l.ended_at
    FROM run_path_links l JOIN store_paths p ON p.id = l.path_id;

CREATE TRIGGER run_paths_insert INSTEAD OF INSERT ON run_paths
BEGIN
    INSERT OR IGNORE INTO store_paths (repo, path) VALUES (NEW.repo, NEW.path);
    INSERT OR IGNORE INTO run_path_links (run_id, path_id, ended_at)
        SELECT NEW.run_id, id, NEW.ended_at FROM store_paths
        WHERE repo = NEW.repo AND path = NEW.path;
END;

CREATE TRIGGER run_paths_delete INSTEAD OF DELETE ON run_paths
BEGIN
    DELETE FROM run_path_links WHERE run_id = OLD.run_id AND path_id = (
        SELECT id FROM store_paths WHERE repo = OLD.repo AND path = OLD.path
    );
END;

CREATE TRIGGER run_path_links_last AFTER DELETE ON run_path_links
WHEN NOT EXISTS (SELECT 1 FROM run_path_links WHERE path_id = OLD.path_id)
BEGIN
    DELETE FROM store_paths WHERE id = OLD.path_id;
END;
"""
