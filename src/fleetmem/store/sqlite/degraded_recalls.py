"""Degraded recalls in SQLite: when and why a recall could not be answered in full."""

from __future__ import annotations

import logging
import sqlite3

from fleetmem.store.sqlite.db import Database

log = logging.getLogger(__name__)

#: Rows are kept this long; the doctor only looks at the last 24 hours.
KEEP_S = 30 * 86400.0


class DegradedRecallsMixin:
    db: Database

    def note_degraded_recall(self, *, at: float, provider: str, reason: str) -> None:
        """Append one row (provider name and reason code only).

        A bookkeeping row must never turn the degraded answer it describes into a failed
        recall, so a write error is logged and dropped here rather than raised.
        """
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO degraded_recalls (at, provider, reason) VALUES (?, ?, ?)",
                    (at, provider[:64], reason[:64]),
                )
                conn.execute("DELETE FROM degraded_recalls WHERE at < ?", (at - KEEP_S,))
        except sqlite3.Error as exc:
            log.warning("degraded_recall.write_failed provider=%s error=%s", provider, exc)

    def degraded_recalls_since(self, since: float) -> list[tuple[str, int]]:
        """(reason, count) of recalls answered degraded at or after ``since``, most first."""
        rows = self.db.conn.execute(
            "SELECT reason, count(*) AS n FROM degraded_recalls WHERE at >= ?"
            " GROUP BY reason ORDER BY n DESC, reason",
            (since,),
        ).fetchall()
        return [(str(r["reason"]), int(r["n"])) for r in rows]
