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
        later failures keep it, and a success clears it. Returns the row as stored.

        ``status`` asks on a read path, so a probe that only confirms what the row says is
        written best-effort (it never waits behind an ingest); a change always is.
        """
        known = self.provider_health(provider)
        unchanged = (
            known is not None and known.state == state and (known.down_since is None) != down
        )
        since = None
        if down:
            since = known.down_since if known is not None and known.down_since is not None else at
        row = (provider[:64], state[:32], since, at, None if reason is None else reason[:300])
        writing = self.db.try_write(_QUICK_MS) if unchanged else self.db.write()
        with writing as conn:
            if conn is not None:
                if not unchanged:
                    # Read again in the write: another process may have opened the outage.
                    before = conn.execute(
                        "SELECT down_since FROM provider_health WHERE provider = ?", (provider,)
                    ).fetchone()
                    if down and before is not None and before[0] is not None:
                        since = before[0]
                        row = (*row[:2], since, *row[3:])
                conn.execute(_UPSERT, row)
        return ProviderHealth(provider, state, since, at, reason)


_QUICK_MS = 50
_UPSERT = (
    "INSERT INTO provider_health (provider, state, down_since, checked_at, reason)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (provider) DO UPDATE SET"
    " state = excluded.state, down_since = excluded.down_since,"
    " checked_at = excluded.checked_at, reason = excluded.reason"
)
