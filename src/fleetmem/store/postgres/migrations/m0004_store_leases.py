"""Migration 4: leases on work one daemon of a fleet must do at a time (SQLite's 20).

The hourly retention and purge pass, the vector backfill and each run's briefing are done by
whichever daemon holds their lease (``holder`` until ``held_until``); a daemon killed holding
one loses it when it runs out. ``done_at``: when periodic work last finished.
"""

from __future__ import annotations

VERSION = 4
NAME = "store_leases"

_T = 'text COLLATE "C"'

SQL = f"""
CREATE TABLE store_leases (
    name {_T} PRIMARY KEY,
    holder {_T},
    held_until double precision,
    done_at double precision
);
"""
