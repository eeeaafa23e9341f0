"""Migration 2: the Memory page's activity feed and Tidy up (SQLite's migration 18).

Indexes that read a workspace's fact journal and votes newest first, page by page, and the
pairs of facts a person chose to keep apart, at the revisions they compared.
"""

from __future__ import annotations

VERSION = 2
NAME = "activity_feed"

_T = 'text COLLATE "C"'

SQL = f"""
CREATE INDEX fact_journal_newest ON fact_journal (workspace, at DESC, seq DESC);
CREATE INDEX fact_votes_newest ON fact_votes (workspace, at DESC, seq DESC);

CREATE TABLE fact_pairs_kept (
    workspace {_T} NOT NULL,
    first_id {_T} NOT NULL,
    first_revision integer NOT NULL,
    second_id {_T} NOT NULL,
    second_revision integer NOT NULL,
    actor {_T} NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (workspace, first_id, second_id)
);
"""
