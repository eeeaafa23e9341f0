"""Workspaces in SQLite (:class:`fleetmem.store.workspaces.WorkspaceStore`, migration 19)."""

from __future__ import annotations

import sqlite3

from fleetmem.store.sqlite.db import Database
from fleetmem.store.workspaces import FACT_TABLES, WORKSPACE_TABLES, WorkspaceRow

_COLUMNS = "id, name, created_at, updated_at"
_FACTS_OF = "SELECT id FROM facts WHERE workspace = ?"


def _row(r: sqlite3.Row) -> WorkspaceRow:
    return WorkspaceRow(
        id=str(r[0]), name=str(r[1]), created_at=float(r[2]), updated_at=float(r[3])
    )


class WorkspacesMixin:
    """The workspace methods of the SQLite store."""

    db: Database

    def workspace_list(self) -> list[WorkspaceRow]:
        rows = self.db.conn.execute(
            f"SELECT {_COLUMNS} FROM workspaces ORDER BY created_at, id"
        ).fetchall()
        return [_row(r) for r in rows]

    def workspace_get(self, workspace_id: str) -> WorkspaceRow | None:
        found = self.db.conn.execute(
            f"SELECT {_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
        ).fetchone()
        return None if found is None else _row(found)

    def workspace_insert(self, row: WorkspaceRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO workspaces ({_COLUMNS}) VALUES (?, ?, ?, ?)",
                (row.id, row.name, row.created_at, row.updated_at),
            )

    def workspace_rename(self, workspace_id: str, name: str, now: float) -> WorkspaceRow | None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE workspaces SET name = ?, updated_at = ? WHERE id = ?",
                (name, now, workspace_id),
            )
            return self.workspace_get(workspace_id)

    def workspace_adopt(self, now: float) -> list[str]:
        found = " UNION ".join(f"SELECT workspace FROM {t}" for t in WORKSPACE_TABLES)
        with self.db.write() as conn:
            orphans = [
                str(r[0])
                for r in conn.execute(
                    f"SELECT w FROM (SELECT workspace AS w FROM ({found}))"
                    " WHERE w NOT IN (SELECT id FROM workspaces) ORDER BY w"
                )
            ]
            conn.executemany(
                f"INSERT INTO workspaces ({_COLUMNS}) VALUES (?, ?, ?, ?)",
                [(w, w, now, now) for w in orphans],
            )
        return orphans

    def workspace_row_counts(self, workspace_id: str) -> dict[str, int]:
        conn = self.db.conn
        counts: dict[str, int] = {}
        for table in WORKSPACE_TABLES:
            counts[table] = int(
                conn.execute(
                    f"SELECT count(*) FROM {table} WHERE workspace = ?", (workspace_id,)
                ).fetchone()[0]
            )
        for table in FACT_TABLES:
            counts[table] = int(
                conn.execute(
                    f"SELECT count(*) FROM {table} WHERE fact_id IN ({_FACTS_OF})",
                    (workspace_id,),
                ).fetchone()[0]
            )
        return counts

    def workspace_delete(self, workspace_id: str) -> dict[str, int] | None:
        with self.db.write() as conn:
            if self.workspace_get(workspace_id) is None:
                return None
            hashes = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT content_hash FROM fact_vectors"
                    f" WHERE fact_id IN ({_FACTS_OF})",
                    (workspace_id,),
                )
            ]
            # The workspace row first: the fact journal lets its rows go only then.
            conn.execute("DELETE FROM workspaces WHERE id = ?", (workspace_id,))
            removed: dict[str, int] = {}
            # Rows found through a fact before the facts, while those still name them.
            for table in FACT_TABLES:
                removed[table] = conn.execute(
                    f"DELETE FROM {table} WHERE fact_id IN ({_FACTS_OF})", (workspace_id,)
                ).rowcount
            for table in WORKSPACE_TABLES:
                removed[table] = conn.execute(
                    f"DELETE FROM {table} WHERE workspace = ?", (workspace_id,)
                ).rowcount
            for digest in hashes:
                # A vector cached for one of its bodies goes too, unless something else uses it.
                conn.execute(
                    "DELETE FROM embeddings WHERE content_hash = ?"
                    " AND NOT EXISTS (SELECT 1 FROM fact_vectors WHERE content_hash = ?)"
                    " AND NOT EXISTS (SELECT 1 FROM builtin_vectors WHERE content_hash = ?)",
                    (digest, digest, digest),
                )
            for key in ("fact_generation", "fact_vector_generation"):
                # Every process's cached search index and vector matrix is stale now.
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
                    " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                    (key,),
                )
            return removed
