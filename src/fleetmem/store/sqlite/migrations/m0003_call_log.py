"""Migration 3: the call log of fleetmem's own calls to upstream MCP servers.

One row per call: who called, which upstream and tool, a SHA-256 of the arguments and their
size, the outcome and the duration. Arguments themselves are never stored, so the call log
is not a second copy of the episodes sent to a provider (seed 000 REQ-18). Calls an agent
tried and fleetmem refused (a reserved provider tool) are rows with outcome ``denied``.
"""

from __future__ import annotations

VERSION = 3
NAME = "call_log"

SQL = """
CREATE TABLE call_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    caller TEXT NOT NULL,
    upstream TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    args_bytes INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms REAL,
    error TEXT
);
CREATE INDEX call_log_at ON call_log (at);
CREATE INDEX call_log_upstream ON call_log (upstream, at);
"""
