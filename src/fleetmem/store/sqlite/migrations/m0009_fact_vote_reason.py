"""Migration 9: a vote keeps the voter's reason (what it checked), as ``fact_votes.note``.

``fact_votes.reason`` already says why a vote counted or not (``exposed``, ``author_run``), so
the voter's own words get their own column. Stored redacted and at most 500 characters (the
fact service refuses a reason holding a secret); earlier votes have none (NULL).
"""

from __future__ import annotations

VERSION = 9
NAME = "fact_vote_reason"

SQL = """
ALTER TABLE fact_votes ADD COLUMN note TEXT;
"""
