"""Migration 17: one row per briefing delivered or skipped, from whichever process served it.

A briefing prepended to a one-shot's prompt is served by the short-lived ``fleetmem run`` or
hook process, which has no /metrics. Each such process writes its deliveries here and the
daemon adds the ones other processes wrote to its own counters on every background tick, so a
scrape sees every delivery (seed 000 REQ-16, REQ-21). A row holds the agent, the delivery
path, the outcome, a skip's reason code and the size: never the briefing's text. Rows older
than seven days are pruned as new ones are written.
"""

from __future__ import annotations

VERSION = 17
NAME = "briefing_deliveries"

SQL = """
CREATE TABLE briefing_deliveries (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    origin TEXT NOT NULL,
    agent TEXT NOT NULL,
    delivery TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT,
    bytes INTEGER
);
"""
