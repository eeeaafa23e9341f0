"""Migration 4: context files, their revisions and activity, and what each run loaded."""

from __future__ import annotations

SQL = """
CREATE TABLE context_files (
    workspace TEXT NOT NULL,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    mode TEXT,
    mode_seq INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    updated_at REAL NOT NULL,
    author_kind TEXT NOT NULL,
    author TEXT NOT NULL,
    run_id TEXT,
    PRIMARY KEY (workspace, kind, owner, name)
);

CREATE TABLE context_file_revisions (
    workspace TEXT NOT NULL,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at REAL NOT NULL,
    author_kind TEXT NOT NULL,
    author TEXT NOT NULL,
    run_id TEXT,
    action TEXT NOT NULL,
    restored_from INTEGER,
    PRIMARY KEY (workspace, kind, owner, name, revision)
);

CREATE TABLE context_file_activity (
    id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    at REAL NOT NULL,
    actor_kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    run_id TEXT,
    action TEXT NOT NULL,
    ref TEXT NOT NULL,
    revision INTEGER,
    detail TEXT
);
CREATE INDEX context_file_activity_at ON context_file_activity (workspace, at);

CREATE TABLE run_context_loads (
    workspace TEXT NOT NULL,
    run_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    repo TEXT,
    segment TEXT NOT NULL,
    ref TEXT NOT NULL,
    revision INTEGER,
    budget INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    used INTEGER NOT NULL,
    loaded_at REAL NOT NULL,
    PRIMARY KEY (run_id, segment, ref)
);
CREATE INDEX run_context_loads_ref ON run_context_loads (workspace, ref, loaded_at);
CREATE INDEX run_context_loads_agent ON run_context_loads (workspace, agent, loaded_at);
"""

VERSION = 4
NAME = "context_files"
