"""Leases in PostgreSQL (:mod:`fleetmem.store.leases`): the store's writer lock makes a claim
atomic between every daemon of the fleet."""

from __future__ import annotations

from fleetmem.store.leases import upsert_sql
from fleetmem.store.postgres.db import PgDatabase

_CLAIM = upsert_sql("%s")


class LeasesMixin:
    db: PgDatabase

    def claim_lease(
        self, name: str, holder: str, *, now: float, hold_s: float, every_s: float = 0.0
    ) -> bool:
        return bool(self.db.returning(_CLAIM, (name, holder, now + hold_s, now, every_s, now)))

    def release_lease(
        self, name: str, holder: str, *, done_at: float | None = None, forget: bool = False
    ) -> None:
        if forget:
            self.db.run("DELETE FROM store_leases WHERE name = %s AND holder = %s", (name, holder))
            return
        self.db.run(
            "UPDATE store_leases SET held_until = NULL,"
            " done_at = coalesce(%s::double precision, done_at) WHERE name = %s AND holder = %s",
            (done_at, name, holder),
        )
