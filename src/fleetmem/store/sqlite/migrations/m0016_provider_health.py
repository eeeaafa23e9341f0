"""Migration 16: the provider's health as the daemon last saw it (seed 000 REQ-19).

Each process sees the provider through its own session, which only knows since when it has
been down since that process started. The daemon probes the provider every few seconds and
keeps here since when it has been unreachable, so that ``fleetmem doctor`` run at any moment,
from any process, can tell a five-minute outage from a blip.
"""

from __future__ import annotations

VERSION = 16
NAME = "provider_health"

SQL = """
CREATE TABLE provider_health (
    provider TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    down_since REAL,
    checked_at REAL NOT NULL,
    reason TEXT
);
"""
