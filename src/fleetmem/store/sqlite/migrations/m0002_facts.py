"""Migration 2: facts, their revisions, provenance, journal, vectors, exposures, votes, rates.

Every table carries ``workspace`` (the tenant) except those keyed by a fact id, which is
unique across workspaces. No FTS table is used: fact search is by meaning plus substring.
"""

from __future__ import annotations

SQL = """
CREATE TABLE facts (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    body TEXT NOT NULL,
    norm TEXT NOT NULL,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    status TEXT NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    pinned_at REAL,
    origin TEXT NOT NULL,
    author TEXT NOT NULL,
    run_id TEXT,
    conversation TEXT,
    source TEXT,
    revision INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    confirmed_at REAL,
    forgotten_at REAL,
    forgotten_from TEXT,
    merged_into TEXT,
    idempotency_key TEXT
);
CREATE INDEX facts_newest ON facts (workspace, created_at DESC, id DESC);
CREATE INDEX facts_by_status ON facts (workspace, status, created_at DESC, id DESC);
CREATE INDEX facts_by_norm ON facts (workspace, norm);
CREATE UNIQUE INDEX facts_idempotency ON facts (workspace, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE fact_revisions (
    fact_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (fact_id, revision)
);

CREATE TABLE fact_provenance (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    fact_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    author TEXT NOT NULL,
    run_id TEXT,
    conversation TEXT,
    merged_from TEXT,
    at REAL NOT NULL
);
CREATE INDEX fact_provenance_fact ON fact_provenance (fact_id, seq);

CREATE TABLE fact_journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    fact_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    run_id TEXT,
    at REAL NOT NULL,
    before_json TEXT,
    after_json TEXT
);
CREATE INDEX fact_journal_fact ON fact_journal (workspace, fact_id, seq);

CREATE TRIGGER fact_journal_append_only_update BEFORE UPDATE ON fact_journal
BEGIN
    SELECT RAISE(ABORT, 'fact_journal is append-only');
END;

CREATE TRIGGER fact_journal_append_only_delete BEFORE DELETE ON fact_journal
BEGIN
    SELECT RAISE(ABORT, 'fact_journal is append-only');
END;

CREATE TABLE fact_vectors (
    fact_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (fact_id, model_id)
);

CREATE TABLE fact_exposures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    run_id TEXT NOT NULL,
    fact_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    surface TEXT NOT NULL,
    served_as TEXT NOT NULL,
    call_id TEXT,
    agent TEXT NOT NULL,
    repo TEXT,
    at REAL NOT NULL
);
CREATE INDEX fact_exposures_run ON fact_exposures (workspace, run_id, fact_id);
CREATE INDEX fact_exposures_fact ON fact_exposures (workspace, fact_id, at);

CREATE TABLE fact_votes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    fact_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    repo TEXT,
    stance TEXT NOT NULL,
    counted INTEGER NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL,
    UNIQUE (workspace, fact_id, run_id)
);
CREATE INDEX fact_votes_fact ON fact_votes (workspace, fact_id, revision, counted);

CREATE TABLE fact_rate (
    workspace TEXT NOT NULL,
    actor TEXT NOT NULL,
    bucket TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX fact_rate_window ON fact_rate (workspace, actor, bucket, at);

INSERT INTO meta (key, value) VALUES ('fact_vector_generation', '0');
"""

VERSION = 2
NAME = "facts"
