"""The PostgreSQL store's small tables: call log, degraded recalls, utility calls, provider
health, briefing deliveries and stored run briefings. Same rows and rules as the SQLite
modules of the same names; bookkeeping writes never fail what they describe."""

from __future__ import annotations

import logging
from dataclasses import replace

import psycopg

from fleetmem.errors import StoreError
from fleetmem.store.base import DeliveryRow, ProviderHealth
from fleetmem.store.briefings import StoredBriefing, decode_ids, encode_ids
from fleetmem.store.postgres.db import PgDatabase, Row
from fleetmem.store.sqlite import briefing_deliveries, degraded_recalls, utility_calls
from fleetmem.store.sqlite.call_log import CallLogRow

log = logging.getLogger(__name__)

_BRIEFING_COLUMNS = (
    "run_id, agent, repo, branch, text, fact_ids, degraded, origin, computed_at, version"
)


def _briefing(r: Row) -> StoredBriefing:
    return StoredBriefing(
        run_id=r[0],
        agent=r[1],
        repo=r[2],
        branch=r[3],
        text=r[4],
        fact_ids=decode_ids(r[5]),
        degraded=r[6],
        origin=r[7],
        computed_at=r[8],
        version=r[9],
    )


def _briefing_values(row: StoredBriefing) -> tuple[object, ...]:
    return (
        row.run_id,
        row.agent,
        row.repo,
        row.branch,
        row.text,
        encode_ids(row.fact_ids),
        row.degraded,
        row.origin,
        row.computed_at,
        row.version,
    )


class BookkeepingMixin:
    db: PgDatabase

    # ---- call log ---------------------------------------------------------------------
    def log_call(
        self,
        *,
        at: float,
        caller: str,
        upstream: str,
        tool: str,
        args_sha256: str,
        args_bytes: int,
        outcome: str,
        duration_ms: float | None,
        error: str | None,
    ) -> None:
        """Append one row; ``error`` is a short code or class name, never provider text."""
        self.db.run(
            "INSERT INTO call_log (at, caller, upstream, tool, args_sha256, args_bytes,"
            " outcome, duration_ms, error) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                at,
                caller,
                upstream,
                tool,
                args_sha256,
                args_bytes,
                outcome,
                duration_ms,
                None if error is None else error[:200],
            ),
        )

    def recent_calls(self, upstream: str | None = None, limit: int = 50) -> list[CallLogRow]:
        """The newest rows first, optionally of one upstream."""
        where, args = ("WHERE upstream = %s", [upstream]) if upstream else ("", [])
        rows = self.db.rows(
            "SELECT id, at, caller, upstream, tool, args_sha256, args_bytes, outcome,"
            f" duration_ms, error FROM call_log {where} ORDER BY at DESC, id DESC LIMIT %s",
            [*args, limit],
        )
        return [CallLogRow(*r) for r in rows]

    def prune_call_log(self, before: float) -> int:
        """Delete rows older than ``before``; returns how many."""
        return self.db.run("DELETE FROM call_log WHERE at < %s", (before,))

    # ---- degraded recalls -------------------------------------------------------------
    def note_degraded_recall(self, *, at: float, provider: str, reason: str) -> None:
        """Append one row (provider name and reason code only); a write error is logged."""
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO degraded_recalls (at, provider, reason) VALUES (%s, %s, %s)",
                    (at, provider[:64], reason[:64]),
                )
                conn.execute(
                    "DELETE FROM degraded_recalls WHERE at < %s",
                    (at - degraded_recalls.KEEP_S,),
                )
        except (psycopg.Error, StoreError) as exc:
            log.warning("degraded_recall.write_failed provider=%s error=%s", provider, exc)

    def degraded_recalls_since(self, since: float) -> list[tuple[str, int]]:
        """(reason, count) of recalls answered degraded at or after ``since``, most first."""
        rows = self.db.rows(
            "SELECT reason, count(*) AS n FROM degraded_recalls WHERE at >= %s"
            " GROUP BY reason ORDER BY n DESC, reason",
            (since,),
        )
        return [(str(r[0]), int(r[1])) for r in rows]

    # ---- utility calls ----------------------------------------------------------------
    def utility_claim(
        self, use: str, *, now: float, per_minute: int, day_start: float, daily: int
    ) -> str:
        """Count one call of ``use`` if both limits allow it (see the SQLite store's)."""
        with self.db.write() as conn:
            # The store's writer lock (db.py) makes this one claim at a time across every
            # daemon: two cannot take the last slot.
            today = conn.execute(
                "SELECT count(*) FROM utility_calls WHERE at >= %s AND outcome = %s",
                (day_start, utility_calls.CALLED),
            ).fetchone()
            minute = conn.execute(
                "SELECT count(*) FROM utility_calls WHERE at > %s AND outcome = %s",
                (now - 60.0, utility_calls.CALLED),
            ).fetchone()
            if today is not None and today[0] >= daily:
                outcome = "daily_ceiling"
            elif minute is not None and minute[0] >= per_minute:
                outcome = "rate_limited"
            else:
                outcome = utility_calls.CALLED
            conn.execute(
                "INSERT INTO utility_calls (at, use, outcome) VALUES (%s, %s, %s)",
                (now, use[:64], outcome),
            )
            conn.execute("DELETE FROM utility_calls WHERE at < %s", (now - utility_calls.KEEP_S,))
        return outcome

    def utility_counts(self, since: float) -> dict[str, int]:
        """Calls asked for at or after ``since``, by outcome."""
        rows = self.db.rows(
            "SELECT outcome, count(*) FROM utility_calls WHERE at >= %s GROUP BY outcome",
            (since,),
        )
        return {str(outcome): int(n) for outcome, n in rows}

    # ---- provider health --------------------------------------------------------------
    def provider_health(self, provider: str) -> ProviderHealth | None:
        found = self.db.row(
            "SELECT provider, state, down_since, checked_at, reason FROM provider_health"
            " WHERE provider = %s",
            (provider,),
        )
        return None if found is None else ProviderHealth(*found)

    def note_provider_health(
        self, provider: str, *, state: str, down: bool, at: float, reason: str | None
    ) -> ProviderHealth:
        """Record what a probe saw: the first failure of an outage starts ``down_since``,
        later failures keep it, and a success clears it. Returns the row as stored."""
        since = at if down else None
        stored = self.db.returning(
            "INSERT INTO provider_health (provider, state, down_since, checked_at, reason)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (provider) DO UPDATE SET"
            " state = excluded.state,"
            # An outage another process opened keeps its start.
            " down_since = CASE WHEN excluded.down_since IS NULL THEN NULL"
            " ELSE coalesce(provider_health.down_since, excluded.down_since) END,"
            " checked_at = excluded.checked_at, reason = excluded.reason"
            " RETURNING down_since",
            (provider[:64], state[:32], since, at, None if reason is None else reason[:300]),
        )
        kept = stored[0][0] if stored else None
        return ProviderHealth(provider, state, kept, at, reason)

    # ---- briefing deliveries ----------------------------------------------------------
    def note_briefing_delivery(self, row: DeliveryRow) -> None:
        """Append one delivery; a write error is logged and dropped."""
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO briefing_deliveries"
                    " (at, origin, agent, delivery, outcome, reason, bytes)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (
                        row.at,
                        row.origin[:32],
                        row.agent[:64],
                        row.delivery[:16],
                        row.outcome[:16],
                        None if row.reason is None else row.reason[:64],
                        row.bytes,
                    ),
                )
                conn.execute(
                    "DELETE FROM briefing_deliveries WHERE at < %s",
                    (row.at - briefing_deliveries.KEEP_S,),
                )
        except (psycopg.Error, StoreError) as exc:
            log.warning("briefing_delivery.write_failed agent=%s error=%s", row.agent, exc)

    def briefing_deliveries_after(
        self, last_id: int, *, exclude_origin: str, limit: int = 10_000
    ) -> tuple[int, list[DeliveryRow]]:
        """Rows after ``last_id`` written by other processes, and the highest id seen."""
        rows = self.db.rows(
            "SELECT id, at, origin, agent, delivery, outcome, reason, bytes"
            " FROM briefing_deliveries WHERE id > %s ORDER BY id LIMIT %s",
            (last_id, limit),
        )
        top = max((int(r[0]) for r in rows), default=last_id)
        return top, [DeliveryRow(*r[1:]) for r in rows if r[2] != exclude_origin]

    def briefing_deliveries_top(self) -> int:
        return int(self.db.value("SELECT coalesce(max(id), 0) FROM briefing_deliveries"))

    # ---- stored run briefings ---------------------------------------------------------
    def get_run_briefing(self, run_id: str) -> StoredBriefing | None:
        found = self.db.row(
            f"SELECT {_BRIEFING_COLUMNS} FROM run_briefings WHERE run_id = %s", (run_id,)
        )
        return None if found is None else _briefing(found)

    def add_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO run_briefings ({_BRIEFING_COLUMNS})"
                f" VALUES ({', '.join(['%s'] * 10)}) ON CONFLICT (run_id) DO NOTHING",
                _briefing_values(replace(row, version=1)),
            )
            found = conn.execute(
                f"SELECT {_BRIEFING_COLUMNS} FROM run_briefings WHERE run_id = %s",
                (row.run_id,),
            ).fetchone()
        assert found is not None
        return _briefing(found)

    def replace_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        version = self.db.returning(
            f"INSERT INTO run_briefings ({_BRIEFING_COLUMNS})"
            f" VALUES ({', '.join(['%s'] * 10)}) ON CONFLICT (run_id) DO UPDATE SET"
            " agent = excluded.agent, repo = excluded.repo, branch = excluded.branch,"
            " text = excluded.text, fact_ids = excluded.fact_ids,"
            " degraded = excluded.degraded, origin = excluded.origin,"
            " computed_at = excluded.computed_at, version = run_briefings.version + 1"
            " RETURNING version",
            _briefing_values(replace(row, version=1)),
        )
        return replace(row, version=int(version[0][0]))

    def delete_run_briefings_before(self, computed_before: float) -> int:
        return self.db.run("DELETE FROM run_briefings WHERE computed_at < %s", (computed_before,))
