"""Archive reads, idempotent restores and online backups for the SQLite store."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from fleetmem.errors import StoreError
from fleetmem.store.archive import ArchivedRun, ArchiveTable
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.packed import unpack

# Pages copied per step of an online backup: small steps let the daemon's writers in between
# (SQLite restarts a step whose source changed, so a busy store still converges).
_BACKUP_PAGES = 256

# Runs whose episode was forgotten leave no text behind in an archive (forget means forget).
_REMEMBERED_RUNS = """
    FROM runs r
    WHERE NOT EXISTS (
        SELECT 1 FROM episodes e WHERE e.run_id = r.run_id AND e.forgotten_at IS NOT NULL
    )
"""


class ArchiveMixin:
    """Implements :class:`fleetmem.store.archive.ArchiveStore` over ``self.db``."""

    db: Database

    def archive_rows(self, table: ArchiveTable) -> Iterator[dict[str, Any]]:
        columns = ", ".join(table.columns)
        order = ", ".join(table.key)
        cursor = self.db.conn.execute(f"SELECT {columns} FROM {table.name} ORDER BY {order}")
        for row in cursor:
            yield {name: row[name] for name in table.columns}

    def archive_count(self, table: ArchiveTable) -> int:
        return int(self.db.conn.execute(f"SELECT count(*) FROM {table.name}").fetchone()[0])

    def archive_restore(self, table: ArchiveTable, rows: Iterable[Mapping[str, Any]]) -> int:
        columns = ", ".join(table.columns)
        marks = ", ".join("?" for _ in table.columns)
        # "IS" rather than "=" so that two nulls in a key column count as the same value.
        match = " AND ".join(f"{name} IS ?" for name in table.key)
        insert = (
            f"INSERT INTO {table.name} ({columns}) SELECT {marks}"
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
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
                        " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                        (key,),
                    )
        return inserted

    def archive_runs(self) -> Iterator[ArchivedRun]:
        conn = self.db.conn
        cursor = conn.execute(f"SELECT r.run_id, r.record_json {_REMEMBERED_RUNS} ORDER BY r.rowid")
        for run_id, record_json in cursor:
            record = json.loads(unpack(record_json) or "{}")
            resolved = {
                session_id: repo
                for session_id, repo in conn.execute(
                    "SELECT session_id, repo FROM sessions WHERE run_id = ?", (run_id,)
                )
            }
            for session in record.get("sessions") or []:
                repo = resolved.get(session.get("id"))
                if isinstance(session, dict) and session.get("repo") is None and repo:
                    session["repo"] = repo
            yield ArchivedRun(run_id, record)

    def archive_run_count(self) -> int:
        return int(self.db.conn.execute(f"SELECT count(*) {_REMEMBERED_RUNS}").fetchone()[0])

    def backup_to(self, target: Path) -> None:
        if target.exists():
            raise StoreError("the backup target exists already", path=str(target))
        partial = target.with_name(target.name + ".partial")
        partial.unlink(missing_ok=True)
        try:
            with closing(sqlite3.connect(partial)) as copy:
                self.db.conn.backup(copy, pages=_BACKUP_PAGES)
                # A backup is one self-contained file: no WAL beside it to lose in a copy.
                copy.execute("PRAGMA journal_mode = DELETE")
                ok = copy.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise StoreError(f"the backup failed its integrity check: {ok}", path=str(target))
            os.replace(partial, target)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write the backup: {exc}", path=str(target)) from exc
        finally:
            partial.unlink(missing_ok=True)
