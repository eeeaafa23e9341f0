"""Migration 5: live runs (open, heartbeating, closed by their record or by silence).

A live run is known by the SHA-256 of its token, never by the token itself. ``run_paths``
holds the repository-relative paths each stored run edited (event paths are as the harness
reported them, often absolute), so "runs that edited these paths" is an index lookup. The two
indexes on ``runs`` serve "last runs on this repository (and branch)" newest first.
"""

from __future__ import annotations

SQL = """
CREATE TABLE live_runs (
    run_id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    adapter TEXT,
    repo TEXT,
    branch TEXT,
    root TEXT,
    workdir TEXT,
    source TEXT NOT NULL,
    opened_at REAL NOT NULL,
    last_seen_at REAL NOT NULL,
    closed_at REAL,
    close_reason TEXT
);
CREATE INDEX live_runs_open ON live_runs (closed_at, repo, last_seen_at);
CREATE INDEX live_runs_agent ON live_runs (agent, opened_at);

CREATE TABLE live_run_files (
    run_id TEXT NOT NULL REFERENCES live_runs (run_id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    first_seen_at REAL NOT NULL,
    PRIMARY KEY (run_id, path)
);

CREATE TABLE run_paths (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    repo TEXT NOT NULL,
    path TEXT NOT NULL,
    ended_at REAL NOT NULL,
    PRIMARY KEY (run_id, repo, path)
);
CREATE INDEX run_paths_lookup ON run_paths (repo, path, ended_at);

CREATE INDEX runs_repo_ended ON runs (repo, ended_at);
CREATE INDEX runs_repo_branch_ended ON runs (repo, branch, ended_at);
"""

VERSION = 5
NAME = "live_runs"
