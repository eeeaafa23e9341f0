"""Forgetting a run's content, and a run itself, in PostgreSQL (``store/sqlite/run_forget.py``
tells what is kept and what goes; this module does the same to the same tables)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.sqlite.run_forget import FORGOTTEN, KEPT_RECORD_KEYS, REMOVED

#: SQL: the runs that are still listed (a removed run is gone from every read).
LISTED = f"episode_status <> '{REMOVED}'"

__all__ = ["FORGOTTEN", "LISTED", "REMOVED", "RunForgetMixin", "scrub_run"]


def scrub_run(conn: psycopg.Connection[Any], run_id: str) -> None:
    """Drop a run's text and files, keeping its metadata (inside the caller's transaction)."""
    row = conn.execute("SELECT record_json FROM runs WHERE run_id = %s", (run_id,)).fetchone()
    if row is None:
        return
    try:
        record: Any = json.loads(row[0])
    except ValueError:
        record = {}
    kept = {k: record[k] for k in KEPT_RECORD_KEYS if isinstance(record, dict) and k in record}
    conn.execute(
        "UPDATE runs SET record_json = %s, pull_request = NULL, episode_status = %s"
        " WHERE run_id = %s",
        (json.dumps(kept, sort_keys=True), FORGOTTEN, run_id),
    )
    _drop_run_text(conn, run_id)


def _drop_run_text(conn: psycopg.Connection[Any], run_id: str) -> None:
    for table in ("events", "run_paths", "live_run_files", "run_briefings"):
        conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))


class RunForgetMixin:
    db: PgDatabase

    def episodes_of_run(self, run_id: str) -> list[str]:
        """The ids of the episodes recorded from ``run_id``."""
        rows = self.db.rows("SELECT id FROM episodes WHERE run_id = %s ORDER BY id", (run_id,))
        return [str(r[0]) for r in rows]

    def remove_run(self, run_id: str) -> bool:
        """Take ``run_id`` out of the run graph; False when no trace of it was stored."""
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT 1 FROM runs WHERE run_id = %s UNION SELECT 1 FROM live_runs"
                " WHERE run_id = %s",
                (run_id, run_id),
            ).fetchone()
            if found is None:
                return False
            _drop_run_text(conn, run_id)
            for table in ("sessions", "run_context_loads", "live_runs"):
                conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))
            named = conn.execute(
                "SELECT 1 FROM episodes WHERE run_id = %s LIMIT 1", (run_id,)
            ).fetchone()
            if named is None:
                conn.execute("DELETE FROM runs WHERE run_id = %s", (run_id,))
            else:
                conn.execute(
                    "UPDATE runs SET agent = '', adapter = '', model = NULL, trace_id = NULL,"
                    " outcome = %s, reason = %s, repo = NULL, branch = NULL, cost_usd = NULL,"
                    " pull_request = NULL, record_json = '{}', episode_status = %s"
                    " WHERE run_id = %s",
                    (REMOVED, REMOVED, REMOVED, run_id),
                )
            return True
