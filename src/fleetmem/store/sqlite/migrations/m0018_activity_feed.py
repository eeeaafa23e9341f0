"""Migration 18: the Memory page's activity feed and Tidy up.

The feed reads the fact journal and the votes of a workspace newest first, page by page, so
each gets an index in that order (context file activity has one since migration 4). Tidy up
proposes merging near-duplicate active facts; a pair a person chose to keep apart is
remembered here, at the revisions they compared, so it is not proposed again unless one of
the two is reworded.
"""

from __future__ import annotations

VERSION = 18
NAME = "activity_feed"

SQL = """
CREATE INDEX fact_journal_newest ON fact_journal (workspace, at DESC, seq DESC);
CREATE INDEX fact_votes_newest ON fact_votes (workspace, at DESC, seq DESC);

CREATE TABLE fact_pairs_kept (
    workspace TEXT NOT NULL,
    first_id TEXT NOT NULL,
    first_revision INTEGER NOT NULL,
    second_id TEXT NOT NULL,
    second_revision INTEGER NOT NULL,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (workspace, first_id, second_id)
);
"""
