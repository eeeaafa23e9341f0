"""The shared window of utility-model calls (episode summaries) in SQLite."""

from __future__ import annotations

from fleetmem.store.sqlite.db import Database

#: Rows are kept two days: enough for "today" in any time zone's reading of a UTC day.
KEEP_S = 2 * 86400.0

CALLED = "called"


class UtilityCallsMixin:
    db: Database

    def utility_claim(
        self, use: str, *, now: float, per_minute: int, day_start: float, daily: int
    ) -> str:
        """Count one call of ``use`` if both limits allow it: ``"called"``, else the limit
        that refused it (``"rate_limited"`` or ``"daily_ceiling"``, also recorded).

        One write transaction, so two processes asking at once cannot both take the last
        slot of a window.
        """
        with self.db.write() as conn:
            today = conn.execute(
                "SELECT count(*) FROM utility_calls WHERE at >= ? AND outcome = ?",
                (day_start, CALLED),
            ).fetchone()[0]
            minute = conn.execute(
                "SELECT count(*) FROM utility_calls WHERE at > ? AND outcome = ?",
                (now - 60.0, CALLED),
            ).fetchone()[0]
            if today >= daily:
                outcome = "daily_ceiling"
            elif minute >= per_minute:
                outcome = "rate_limited"
            else:
                outcome = CALLED
            conn.execute(
                "INSERT INTO utility_calls (at, use, outcome) VALUES (?, ?, ?)",
                (now, use[:64], outcome),
            )
            conn.execute("DELETE FROM utility_calls WHERE at < ?", (now - KEEP_S,))
        return outcome

    def utility_counts(self, since: float) -> dict[str, int]:
        """Calls asked for at or after ``since``, by outcome."""
        rows = self.db.conn.execute(
            "SELECT outcome, count(*) FROM utility_calls WHERE at >= ? GROUP BY outcome",
            (since,),
        ).fetchall()
        return {str(outcome): int(n) for outcome, n in rows}
