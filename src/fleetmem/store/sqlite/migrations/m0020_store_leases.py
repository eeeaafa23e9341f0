"""Migration 20: leases on work that one process of a fleet must do at a time.

Several processes share a store: the daemon and ``fleetmem jobs`` on one machine, or several
daemons on several hosts (PostgreSQL has the same table). Work that must not run twice at
once, or more often than its period across all of them (the hourly retention and purge
pass, the vector backfill, computing one run's briefing), is done by whoever holds its lease:
``holder`` until ``held_until``, after which a process that died holding it loses it.
``done_at`` is when the work last finished, for work done every so often.
"""

from __future__ import annotations

VERSION = 20
NAME = "store_leases"

SQL = """
CREATE TABLE store_leases (
    name TEXT PRIMARY KEY,
    holder TEXT,
    held_until REAL,
    done_at REAL
);
"""
