"""Leases in SQLite (:mod:`fleetmem.store.leases`): ``BEGIN IMMEDIATE`` makes a claim atomic
between the processes sharing the file."""

from __future__ import annotations

from fleetmem.store.leases import upsert_sql
from fleetmem.store.sqlite.db import Database

_CLAIM = upsert_sql("?")


class LeasesMixin:
    db: Database

    def claim_lease(
        self, name: str, holder: str, *, now: float, hold_s: float, every_s: float = 0.0
    ) -> bool:
        with self.db.write() as conn:
            found = conn.execute(_CLAIM, (name, holder, now + hold_s, now, every_s, now))
            return found.fetchone() is not None

    def release_lease(
        self, name: str, holder: str, *, done_at: float | None = None, forget: bool = False
    ) -> None:
        with self.db.write() as conn:
            if forget:
                conn.execute(
                    "DELETE FROM store_leases WHERE name = ? AND holder = ?", (name, holder)
                )
                return
            conn.execute(
                "UPDATE store_leases SET held_until = NULL, done_at = coalesce(?, done_at)"
                " WHERE name = ? AND holder = ?",
                (done_at, name, holder),
            )
