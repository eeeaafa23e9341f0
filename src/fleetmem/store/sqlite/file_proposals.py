"""Proposed Notes changes in SQLite (:class:`fleetmem.store.file_proposals.ProposalStore`)."""

from __future__ import annotations

import sqlite3

from fleetmem.store.file_proposals import ProposalRow
from fleetmem.store.sqlite.db import Database

_COLUMNS = (
    "workspace, agent, run_id, mode, base_revision, proposed_text, diff, created_at, status,"
    " decided_at, decided_by, applied_revision"
)


def _row(r: sqlite3.Row) -> ProposalRow:
    return ProposalRow(
        workspace=r["workspace"],
        agent=r["agent"],
        run_id=r["run_id"],
        mode=r["mode"],
        base_revision=r["base_revision"],
        proposed_text=r["proposed_text"],
        diff=r["diff"],
        created_at=r["created_at"],
        status=r["status"],
        decided_at=r["decided_at"],
        decided_by=r["decided_by"],
        applied_revision=r["applied_revision"],
        id=r["id"],
    )


class SqliteProposals:
    """The ``notes_proposals`` table (migration 12) over one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_proposal(self, row: ProposalRow) -> ProposalRow:
        with self.db.write() as conn:
            cursor = conn.execute(
                f"INSERT INTO notes_proposals ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row.workspace,
                    row.agent,
                    row.run_id,
                    row.mode,
                    row.base_revision,
                    row.proposed_text,
                    row.diff,
                    row.created_at,
                    row.status,
                    row.decided_at,
                    row.decided_by,
                    row.applied_revision,
                ),
            )
            new_id = cursor.lastrowid
        found = self.get_proposal(row.workspace, int(new_id or 0))
        assert found is not None
        return found

    def get_proposal(self, workspace: str, proposal_id: int) -> ProposalRow | None:
        found = self.db.conn.execute(
            f"SELECT id, {_COLUMNS} FROM notes_proposals WHERE workspace = ? AND id = ?",
            (workspace, proposal_id),
        ).fetchone()
        return None if found is None else _row(found)

    def list_proposals(
        self, workspace: str, *, agent: str | None, status: str | None, limit: int
    ) -> list[ProposalRow]:
        sql = f"SELECT id, {_COLUMNS} FROM notes_proposals WHERE workspace = ?"
        params: list[object] = [workspace]
        if agent is not None:
            sql += " AND agent = ?"
            params.append(agent)
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        return [_row(r) for r in self.db.conn.execute(sql, params).fetchall()]

    def decide_proposal(
        self,
        workspace: str,
        proposal_id: int,
        *,
        status: str,
        decided_at: float,
        decided_by: str,
        applied_revision: int | None,
    ) -> bool:
        with self.db.write() as conn:
            cursor = conn.execute(
                "UPDATE notes_proposals SET status = ?, decided_at = ?, decided_by = ?,"
                " applied_revision = ? WHERE workspace = ? AND id = ? AND status = 'pending'",
                (status, decided_at, decided_by, applied_revision, workspace, proposal_id),
            )
        return cursor.rowcount == 1
