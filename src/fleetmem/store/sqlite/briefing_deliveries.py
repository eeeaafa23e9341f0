"""Briefing deliveries in SQLite: the rows that carry short-lived processes' counts to /metrics."""

from __future__ import annotations

import logging
import sqlite3

from fleetmem.store.base import DeliveryRow
from fleetmem.store.sqlite.db import Database

log = logging.getLogger(__name__)

KEEP_S = 7 * 86400.0


class BriefingDeliveriesMixin:
    db: Database

    def note_briefing_delivery(self, row: DeliveryRow) -> None:
        """Append one delivery. Bookkeeping must never fail the briefing it counts, so a
        write error is logged and dropped."""
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO briefing_deliveries"
                    " (at, origin, agent, delivery, outcome, reason, bytes)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
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
                conn.execute("DELETE FROM briefing_deliveries WHERE at < ?", (row.at - KEEP_S,))
        except sqlite3.Error as exc:
            log.warning("briefing_delivery.write_failed agent=%s error=%s", row.agent, exc)

    def briefing_deliveries_after(
        self, last_id: int, *, exclude_origin: str, limit: int = 10_000
    ) -> tuple[int, list[DeliveryRow]]:
        """Rows after ``last_id`` written by other processes, and the highest id seen."""
        rows = self.db.conn.execute(
            "SELECT id, at, origin, agent, delivery, outcome, reason, bytes"
            " FROM briefing_deliveries WHERE id > ? ORDER BY id LIMIT ?",
            (last_id, limit),
        ).fetchall()
        top = max((int(r[0]) for r in rows), default=last_id)
        return top, [DeliveryRow(*r[1:]) for r in rows if r[2] != exclude_origin]

    def briefing_deliveries_top(self) -> int:
        row = self.db.conn.execute("SELECT max(id) FROM briefing_deliveries").fetchone()
        return int(row[0] or 0)
