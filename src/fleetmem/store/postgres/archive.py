"""Archive reads and idempotent restores for the PostgreSQL store (``store/archive.py``).

The same rows as the SQLite store's archive: an archive exported from either store imports
into the other. A backup (``fleetmem backup``) is a SQLite file in the SQLite store; a
PostgreSQL database is backed up with PostgreSQL's own tools (docs/postgres.md), so
:meth:`ArchiveMixin.backup_to` says so instead of writing a partial copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from fleetmem.errors import StoreError
from fleetmem.store.archive import ArchivedRun, ArchiveTable
from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.fact_activity import bump

# Runs whose episode was forgotten leave no text behind in an archive (forget means forget).
_REMEMBERED_RUNS = """
    FROM runs r
    WHERE NOT EXISTS (
        SELECT 1 FROM episodes e WHERE e.run_id = r.run_id AND e.forgotten_at IS NOT NULL
    )
"""


class ArchiveMixin:
    """Implements :class:`fleetmem.store.archive.ArchiveStore` over ``self.db``."""

    db: PgDatabase

    def archive_rows(self, table: ArchiveTable) -> Iterator[dict[str, Any]]:
        columns = ", ".join(table.columns)
        # NULLS FIRST: SQLite's order, so both stores export the same lines in the same order.
        order = ", ".join(f"{name} NULLS FIRST" for name in table.key)
        for row in self.db.rows(f"SELECT {columns} FROM {table.name} ORDER BY {order}"):
            yield dict(zip(table.columns, row, strict=True))

    def archive_count(self, table: ArchiveTable) -> int:
        return int(self.db.value(f"SELECT count(*) FROM {table.name}"))

    def _column_types(self, table: ArchiveTable) -> dict[str, str]:
        rows = self.db.rows(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (table.name,),
        )
        return {str(name): str(kind) for name, kind in rows}

    def archive_restore(self, table: ArchiveTable, rows: Iterable[Mapping[str, Any]]) -> int:
        types = self._column_types(table)
        # Typed placeholders: an archive's nulls and numbers land in their columns' types.
        marks = ", ".join(f"%s::{types[name]}" for name in table.columns)
        match = " AND ".join(f"{name} IS NOT DISTINCT FROM %s::{types[name]}" for name in table.key)
        insert = (
            f"INSERT INTO {table.name} ({', '.join(table.columns)}) SELECT {marks}"
            f" WHERE NOT EXISTS (SELECT 1 FROM {table.name} WHERE {match})"
        )
        inserted = 0
        with self.db.write() as conn:
            for row in rows:
                values = [row[name] for name in table.columns]
                keys = [row[name] for name in table.key]
                inserted += conn.execute(insert, [*values, *keys]).rowcount
            if inserted:
                for key in table.generations:
                    bump(conn, key)
        return inserted

    def archive_runs(self) -> Iterator[ArchivedRun]:
        for run_id, record_json in self.db.rows(
            f"SELECT r.run_id, r.record_json {_REMEMBERED_RUNS} ORDER BY r.seq"
        ):
            record = json.loads(record_json)
            resolved: dict[str, str | None] = dict(
                self.db.rows("SELECT session_id, repo FROM sessions WHERE run_id = %s", (run_id,))
            )
            for session in record.get("sessions") or []:
                repo = resolved.get(session.get("id"))
                if isinstance(session, dict) and session.get("repo") is None and repo:
                    session["repo"] = repo
            yield ArchivedRun(run_id, record)

    def archive_run_count(self) -> int:
        return int(self.db.value(f"SELECT count(*) {_REMEMBERED_RUNS}"))

    def backup_to(self, target: Path) -> None:
        raise StoreError(
            "fleetmem backup copies a SQLite store; back up a PostgreSQL store with pg_dump"
            " (docs/postgres.md), or take a portable archive with fleetmem export",
            url=self.db.path,
        )
