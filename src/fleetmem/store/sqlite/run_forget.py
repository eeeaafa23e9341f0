"""Forgetting a run's content, and a run itself, in the run graph (docs/runs.md, "What the
run graph keeps").

When its episode is forgotten a stored run keeps only metadata: its id, agent, adapter,
trigger, start and end, outcome, repository and branch, cost, and the episode status
``forgotten``. Its record loses the result text, the prompt, the sessions' events and every
file path, its file rows (``events``, ``run_paths``) and pull request go, and the reads that
feed recent runs, briefings, context and "who edited this file" leave it out.

``remove_run`` takes a run out of the graph entirely: its sessions, events, paths, live row
and files, stored briefing and context loads. The ``runs`` row itself goes too unless an
episode tombstone still names it (a provider has yet to confirm the forget); then it stays
as a bare tombstone (no agent, no repository, no outcome) that no read returns.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.packed import pack, unpack

FORGOTTEN = "forgotten"
REMOVED = "removed"
#: SQL: the runs that are still listed (a removed run is gone from every read).
LISTED = f"episode_status != '{REMOVED}'"
#: What a run's stored record keeps once its episode is forgotten.
KEPT_RECORD_KEYS = (
    "version",
    "run_id",
    "agent",
    "adapter",
    "trigger",
    "started_at",
    "ended_at",
    "outcome",
    "reason",
    "cost",
    "spawned",
)


def scrub_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Drop a run's text and files, keeping its metadata (inside the caller's transaction)."""
    row = conn.execute("SELECT record_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return
    try:
        record: Any = json.loads(unpack(row[0]) or "{}")
    except ValueError:
        record = {}
    kept = {k: record[k] for k in KEPT_RECORD_KEYS if isinstance(record, dict) and k in record}
    conn.execute(
        "UPDATE runs SET record_json = ?, pull_request = NULL, episode_status = ? WHERE run_id = ?",
        (pack(json.dumps(kept, sort_keys=True)), FORGOTTEN, run_id),
    )
    _drop_run_text(conn, run_id)


def _drop_run_text(conn: sqlite3.Connection, run_id: str) -> None:
    # What a run did, file by file and command by command, and what it was briefed.
    # run_path_links: the table behind the run_paths view (its trigger then drops a path
    # that no run names any more).
    for table in ("events", "run_path_links", "live_run_files", "run_briefings"):
        conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))


class RunForgetMixin:
    db: Database

    def episodes_of_run(self, run_id: str) -> list[str]:
        """The ids of the episodes recorded from ``run_id``."""
        rows = self.db.conn.execute(
            "SELECT id FROM episodes WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def remove_run(self, run_id: str) -> bool:
        """Take ``run_id`` out of the run graph; False when no trace of it was stored."""
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT 1 FROM runs WHERE run_id = ? UNION SELECT 1 FROM live_runs"
                " WHERE run_id = ?",
                (run_id, run_id),
            ).fetchone()
            if found is None:
                return False
            _drop_run_text(conn, run_id)
            for table in ("sessions", "run_context_loads", "live_runs"):
                conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            named = conn.execute(
                "SELECT 1 FROM episodes WHERE run_id = ? LIMIT 1", (run_id,)
            ).fetchone()
            if named is None:
                conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            else:
                conn.execute(
                    "UPDATE runs SET agent = '', adapter = '', model = NULL, trace_id = NULL,"
                    " outcome = ?, reason = ?, repo = NULL, branch = NULL, cost_usd = NULL,"
                    " pull_request = NULL, record_json = '{}', episode_status = ?"
                    " WHERE run_id = ?",
                    (REMOVED, REMOVED, REMOVED, run_id),
                )
            return True
