"""Migration 1: runs, sessions, events, episodes, the provider index, jobs, the built-in index."""

from __future__ import annotations

SQL = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    adapter TEXT NOT NULL,
    trace_id TEXT,
    model TEXT,
    trigger TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    cost_usd REAL,
    cost_source TEXT NOT NULL,
    spawned INTEGER NOT NULL,
    pull_request TEXT,
    repo TEXT,
    branch TEXT,
    record_json TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    episode_status TEXT NOT NULL,
    ingested_at REAL NOT NULL
);
CREATE INDEX runs_agent_started ON runs (agent, started_at);
CREATE INDEX runs_repo_started ON runs (repo, started_at);

CREATE TABLE sessions (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    parent_id TEXT,
    subagent INTEGER NOT NULL,
    cwd TEXT NOT NULL,
    repo TEXT,
    branch TEXT,
    PRIMARY KEY (run_id, session_id)
);

CREATE TABLE events (
    run_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    path TEXT,
    passed INTEGER,
    error_class TEXT,
    PRIMARY KEY (run_id, session_id, seq),
    FOREIGN KEY (run_id, session_id) REFERENCES sessions (run_id, session_id) ON DELETE CASCADE
);
CREATE INDEX events_path ON events (path) WHERE path IS NOT NULL;

CREATE TABLE episodes (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    agent TEXT NOT NULL,
    adapter TEXT NOT NULL,
    model TEXT,
    repo TEXT NOT NULL,
    branch TEXT,
    outcome TEXT NOT NULL,
    scope TEXT NOT NULL,
    trust_class TEXT NOT NULL,
    started_at REAL NOT NULL,
    recorded_at REAL NOT NULL,
    forgotten_at REAL,
    summary TEXT,
    summary_outcome TEXT,
    episode_json TEXT,
    text TEXT,
    content_hash TEXT
);
CREATE INDEX episodes_scope ON episodes (scope, started_at);
CREATE INDEX episodes_agent ON episodes (agent, started_at);
CREATE INDEX episodes_started ON episodes (started_at);

CREATE TABLE provider_index (
    provider TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    episode_id TEXT NOT NULL REFERENCES episodes (id),
    scope TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    forgotten_at REAL,
    state TEXT NOT NULL,
    PRIMARY KEY (provider, provider_id)
);
CREATE INDEX provider_index_episode ON provider_index (episode_id);

CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    provider TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    provider_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    next_attempt_at REAL NOT NULL,
    last_error TEXT
);
CREATE INDEX jobs_due ON jobs (state, next_attempt_at);
CREATE UNIQUE INDEX jobs_one_pending ON jobs (kind, provider, episode_id, coalesce(provider_id, ''))
    WHERE state = 'pending';

CREATE VIRTUAL TABLE builtin_fts USING fts5 (text, summary, tokenize = 'porter unicode61');

CREATE TABLE embeddings (
    content_hash TEXT NOT NULL,
    model_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (content_hash, model_id)
);

CREATE TABLE builtin_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL,
    model_id TEXT NOT NULL
);

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('vector_generation', '0');
"""

VERSION = 1
NAME = "runs_episodes_index_queue"
