"""The provider's recorded health in SQLite: its last seen state and since when it is down."""

from __future__ import annotations

from fleetmem.store.base import ProviderHealth
from fleetmem.store.sqlite.db import Database


class ProviderHealthMixin:
    db: Database

    def provider_health(self, provider: str) -> ProviderHealth | None:
        row = self.db.conn.execute(
            "SELECT provider, state, down_since, checked_at, reason FROM provider_health"
            " WHERE provider = ?",
            (provider,),
        ).fetchone()
        return None if row is None else ProviderHealth(*row)

    def note_provider_health(
        self, provider: str, *, state: str, down: bool, at: float, reason: str | None
    ) -> ProviderHealth:
        """Record what a probe saw: the first failure of an outage starts ``down_since``,
        later failures keep it, and a success clears it. Returns the row as stored."""
        with self.db.write() as conn:
            before = conn.execute(
                "SELECT down_since FROM provider_health WHERE provider = ?", (provider,)
            ).fetchone()
            since = None
            if down:
                since = before[0] if before is not None and before[0] is not None else at
            conn.execute(
                "INSERT INTO provider_health (provider, state, down_since, checked_at, reason)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (provider) DO UPDATE SET"
                " state = excluded.state, down_since = excluded.down_since,"
                " checked_at = excluded.checked_at, reason = excluded.reason",
                (provider[:64], state[:32], since, at, None if reason is None else reason[:300]),
            )
        return ProviderHealth(provider, state, since, at, reason)
