"""Workspaces in PostgreSQL (:class:`fleetmem.store.workspaces.WorkspaceStore`, migration 3)."""

from __future__ import annotations

from typing import Any

from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.fact_activity import bump
from fleetmem.store.workspaces import FACT_TABLES, WORKSPACE_TABLES, WorkspaceRow

_COLUMNS = "id, name, created_at, updated_at"
_FACTS_OF = "SELECT id FROM facts WHERE workspace = %s"


def _row(r: Any) -> WorkspaceRow:
    return WorkspaceRow(
        id=str(r[0]), name=str(r[1]), created_at=float(r[2]), updated_at=float(r[3])
    )


class WorkspacesMixin:
    """The workspace methods of the PostgreSQL store."""

    db: PgDatabase

    def workspace_list(self) -> list[WorkspaceRow]:
        rows = self.db.rows(f"SELECT {_COLUMNS} FROM workspaces ORDER BY created_at, id")
        return [_row(r) for r in rows]

    def workspace_get(self, workspace_id: str) -> WorkspaceRow | None:
        found = self.db.row(f"SELECT {_COLUMNS} FROM workspaces WHERE id = %s", (workspace_id,))
        return None if found is None else _row(found)

    def workspace_insert(self, row: WorkspaceRow) -> None:
        self.db.run(
            f"INSERT INTO workspaces ({_COLUMNS}) VALUES (%s, %s, %s, %s)",
            (row.id, row.name, row.created_at, row.updated_at),
        )

    def workspace_rename(self, workspace_id: str, name: str, now: float) -> WorkspaceRow | None:
        found = self.db.returning(
            f"UPDATE workspaces SET name = %s, updated_at = %s WHERE id = %s RETURNING {_COLUMNS}",
            (name, now, workspace_id),
        )
        return _row(found[0]) if found else None

    def workspace_adopt(self, now: float) -> list[str]:
        found = " UNION ".join(f"SELECT workspace FROM {t}" for t in WORKSPACE_TABLES)
        with self.db.write() as conn:
            orphans = [
                str(r[0])
                for r in conn.execute(
                    f"SELECT w FROM (SELECT workspace AS w FROM ({found}) AS f) AS o"
                    " WHERE w NOT IN (SELECT id FROM workspaces) ORDER BY w"
                )
            ]
            for w in orphans:
                conn.execute(
                    f"INSERT INTO workspaces ({_COLUMNS}) VALUES (%s, %s, %s, %s)",
                    (w, w, now, now),
                )
        return orphans

    def workspace_row_counts(self, workspace_id: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        with self.db.connection() as conn:
            for table in WORKSPACE_TABLES:
                found = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE workspace = %s", (workspace_id,)
                ).fetchone()
                counts[table] = int(found[0]) if found else 0
            for table in FACT_TABLES:
                found = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE fact_id IN ({_FACTS_OF})",
                    (workspace_id,),
                ).fetchone()
                counts[table] = int(found[0]) if found else 0
        return counts

    def workspace_delete(self, workspace_id: str) -> dict[str, int] | None:
        with self.db.write() as conn:
            gone = conn.execute(
                "SELECT 1 FROM workspaces WHERE id = %s FOR UPDATE", (workspace_id,)
            ).fetchone()
            if gone is None:
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
            conn.execute("DELETE FROM workspaces WHERE id = %s", (workspace_id,))
            removed: dict[str, int] = {}
            # Rows found through a fact before the facts, while those still name them.
            for table in FACT_TABLES:
                removed[table] = conn.execute(
                    f"DELETE FROM {table} WHERE fact_id IN ({_FACTS_OF})", (workspace_id,)
                ).rowcount
            for table in WORKSPACE_TABLES:
                removed[table] = conn.execute(
                    f"DELETE FROM {table} WHERE workspace = %s", (workspace_id,)
                ).rowcount
            for digest in hashes:
                # A vector cached for one of its bodies goes too, unless something else uses it.
                conn.execute(
                    "DELETE FROM embeddings WHERE content_hash = %(h)s"
                    " AND NOT EXISTS (SELECT 1 FROM fact_vectors WHERE content_hash = %(h)s)"
                    " AND NOT EXISTS (SELECT 1 FROM builtin_vectors WHERE content_hash = %(h)s)",
                    {"h": digest},
                )
            # Every daemon's cached search index and vector matrix is stale now.
            bump(conn, "fact_generation")
            bump(conn, "fact_vector_generation")
            return removed
