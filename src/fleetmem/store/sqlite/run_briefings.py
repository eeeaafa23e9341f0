"""Stored run briefings in SQLite (:class:`fleetmem.store.briefings.RunBriefingStore`)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from fleetmem.store.briefings import StoredBriefing, decode_ids, encode_ids
from fleetmem.store.sqlite.db import Database

_COLUMNS = "run_id, agent, repo, branch, text, fact_ids, degraded, origin, computed_at, version"


def _row(r: sqlite3.Row) -> StoredBriefing:
    return StoredBriefing(
        run_id=r["run_id"],
        agent=r["agent"],
        repo=r["repo"],
        branch=r["branch"],
        text=r["text"],
        fact_ids=decode_ids(r["fact_ids"]),
        degraded=r["degraded"],
        origin=r["origin"],
        computed_at=r["computed_at"],
        version=r["version"],
    )


def _values(row: StoredBriefing) -> tuple[object, ...]:
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


class RunBriefingsMixin:
    db: Database

    def get_run_briefing(self, run_id: str) -> StoredBriefing | None:
        found = self.db.conn.execute(
            f"SELECT {_COLUMNS} FROM run_briefings WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if found is None else _row(found)

    def add_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO run_briefings ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (run_id) DO NOTHING",
                _values(replace(row, version=1)),
            )
            found = conn.execute(
                f"SELECT {_COLUMNS} FROM run_briefings WHERE run_id = ?", (row.run_id,)
            ).fetchone()
        return _row(found)

    def replace_run_briefing(self, row: StoredBriefing) -> StoredBriefing:
        with self.db.write() as conn:
            before = conn.execute(
                "SELECT version FROM run_briefings WHERE run_id = ?", (row.run_id,)
            ).fetchone()
            version = 1 if before is None else int(before["version"]) + 1
            conn.execute(
                f"INSERT OR REPLACE INTO run_briefings ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                _values(replace(row, version=version)),
            )
        return replace(row, version=version)

    def delete_run_briefings_before(self, computed_before: float) -> int:
        with self.db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM run_briefings WHERE computed_at < ?", (computed_before,)
            )
            return cursor.rowcount
