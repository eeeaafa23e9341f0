"""Context files, revisions, activity, run loads and Notes proposals in PostgreSQL
(``store/files.py`` and ``store/file_proposals.py`` define them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleetmem.store.file_proposals import ProposalRow
from fleetmem.store.files import (
    ActivityRow,
    FileKey,
    FileRow,
    LoadRow,
    NewRevision,
    RevisionRow,
)
from fleetmem.store.postgres.db import PgDatabase, Row

_KEY_WHERE = "workspace = %s AND kind = %s AND owner = %s AND name = %s"
_FILE_COLUMNS = (
    "workspace, kind, owner, name, mode, revision, body, updated_at, author_kind, author, run_id"
)
_REVISION_COLUMNS = (
    "workspace, kind, owner, name, revision, body, created_at, author_kind, author, run_id,"
    " action, restored_from"
)
_LOAD_COLUMNS = (
    "workspace, run_id, agent, repo, segment, ref, revision, budget, tokens, used, loaded_at"
)
_PROPOSAL_COLUMNS = (
    "workspace, agent, run_id, mode, base_revision, proposed_text, diff, created_at, status,"
    " decided_at, decided_by, applied_revision"
)


_ACTIVITY_COLUMNS = "workspace, at, actor_kind, actor, run_id, action, ref, revision, detail, id"


def _activity(r: Row) -> ActivityRow:
    return ActivityRow(
        workspace=r[0],
        at=float(r[1]),
        actor_kind=r[2],
        actor=r[3],
        run_id=r[4],
        action=r[5],
        ref=r[6],
        revision=r[7],
        detail=r[8],
        id=int(r[9]),
    )


def _key_args(key: FileKey) -> tuple[str, str, str, str]:
    return (key.workspace, key.kind, key.owner, key.name)


def _file(r: Row) -> FileRow:
    return FileRow(FileKey(*r[:4]), r[4], int(r[5]), r[6], float(r[7]), r[8], r[9], r[10])


def _revision(r: Row) -> RevisionRow:
    return RevisionRow(
        FileKey(*r[:4]), int(r[4]), r[5], float(r[6]), r[7], r[8], r[9], r[10], r[11]
    )


def _load(r: Row) -> LoadRow:
    return LoadRow(*r)


def _proposal(r: Row) -> ProposalRow:
    return ProposalRow(
        workspace=r[1],
        agent=r[2],
        run_id=r[3],
        mode=r[4],
        base_revision=r[5],
        proposed_text=r[6],
        diff=r[7],
        created_at=r[8],
        status=r[9],
        decided_at=r[10],
        decided_by=r[11],
        applied_revision=r[12],
        id=int(r[0]),
    )


class FilesMixin:
    """Implements :class:`fleetmem.store.files.FileStore` and
    :class:`fleetmem.store.file_proposals.ProposalStore` over ``self.db``."""

    db: PgDatabase

    def get_file(self, key: FileKey) -> FileRow | None:
        found = self.db.row(
            f"SELECT {_FILE_COLUMNS} FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
        )
        return None if found is None else _file(found)

    def list_files(self, workspace: str, kind: str, owner: str | None = None) -> list[FileRow]:
        sql = f"SELECT {_FILE_COLUMNS} FROM context_files WHERE workspace = %s AND kind = %s"
        args: list[str] = [workspace, kind]
        if owner is not None:
            sql += " AND owner = %s"
            args.append(owner)
        return [_file(r) for r in self.db.rows(sql + " ORDER BY owner, name", args)]

    def file_owners(self, workspace: str, kind: str) -> list[str]:
        rows = self.db.rows(
            "SELECT DISTINCT owner FROM context_files WHERE workspace = %s AND kind = %s"
            " ORDER BY owner",
            (workspace, kind),
        )
        return [str(r[0]) for r in rows]

    def create_file(self, key: FileKey, mode: str | None, now: float) -> FileRow:
        with self.db.write() as conn:
            inserted = conn.execute(
                "INSERT INTO context_files (workspace, kind, owner, name, mode, mode_seq,"
                " revision, body, updated_at, author_kind, author, run_id)"
                " VALUES (%s, %s, %s, %s, %s, 0, 0, '', %s, 'system', 'fleetmem', NULL)"
                " ON CONFLICT DO NOTHING",
                (*_key_args(key), mode, now),
            ).rowcount
            if inserted:
                conn.execute(
                    "INSERT INTO context_file_revisions (workspace, kind, owner, name, revision,"
                    " body, created_at, author_kind, author, run_id, action, restored_from)"
                    " VALUES (%s, %s, %s, %s, 0, '', %s, 'system', 'fleetmem', NULL, 'created',"
                    " NULL)",
                    (*_key_args(key), now),
                )
            row = conn.execute(
                f"SELECT {_FILE_COLUMNS} FROM context_files WHERE {_KEY_WHERE}",
                _key_args(key),
            ).fetchone()
        assert row is not None
        return _file(row)

    def write_revision(
        self,
        key: FileKey,
        base_revision: int,
        new: NewRevision,
        now: float,
        *,
        keep_last: int,
        keep_after: float,
    ) -> tuple[FileRow, bool]:
        with self.db.write() as conn:
            # Under the store's writer lock: no other writer can slip in between the
            # comparison and the save.
            current = self.create_file(key, None, now)
            if current.revision != base_revision:
                return current, False
            revision = current.revision + 1
            conn.execute(
                f"INSERT INTO context_file_revisions ({_REVISION_COLUMNS})"
                f" VALUES ({', '.join(['%s'] * 12)})",
                (
                    *_key_args(key),
                    revision,
                    new.body,
                    now,
                    new.author_kind,
                    new.author,
                    new.run_id,
                    new.action,
                    new.restored_from,
                ),
            )
            conn.execute(
                "UPDATE context_files SET revision = %s, body = %s, updated_at = %s,"
                f" author_kind = %s, author = %s, run_id = %s WHERE {_KEY_WHERE}",
                (revision, new.body, now, new.author_kind, new.author, new.run_id, *_key_args(key)),
            )
            conn.execute(
                f"DELETE FROM context_file_revisions WHERE {_KEY_WHERE}"
                " AND revision <= %s AND created_at < %s",
                (*_key_args(key), revision - keep_last, keep_after),
            )
            row = conn.execute(
                f"SELECT {_FILE_COLUMNS} FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
            ).fetchone()
        assert row is not None
        return _file(row), True

    def set_mode(
        self, key: FileKey, mode: str, now: float, *, max_every_run: int
    ) -> tuple[FileRow, list[str]]:
        with self.db.write() as conn:
            # Under the store's writer lock: two switches cannot both take the last slot.
            current = self.create_file(key, None, now)
            if mode == "every_run" and current.mode != "every_run":
                others = conn.execute(
                    "SELECT name FROM context_files WHERE workspace = %s AND kind = %s"
                    " AND mode = 'every_run' ORDER BY mode_seq, seq",
                    (key.workspace, key.kind),
                ).fetchall()
                if len(others) >= max_every_run:
                    return current, [str(r[0]) for r in others]
            conn.execute(
                "UPDATE context_files SET mode_seq = CASE WHEN mode IS NOT DISTINCT FROM %s"
                " THEN mode_seq ELSE (SELECT coalesce(max(mode_seq), 0) + 1 FROM context_files"
                f" WHERE workspace = %s) END, mode = %s WHERE {_KEY_WHERE}",
                (mode, key.workspace, mode, *_key_args(key)),
            )
            row = conn.execute(
                f"SELECT {_FILE_COLUMNS} FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
            ).fetchone()
        assert row is not None
        return _file(row), []

    def list_revisions(self, key: FileKey) -> list[RevisionRow]:
        rows = self.db.rows(
            f"SELECT {_REVISION_COLUMNS} FROM context_file_revisions WHERE {_KEY_WHERE}"
            " ORDER BY revision DESC",
            _key_args(key),
        )
        return [_revision(r) for r in rows]

    def get_revision(self, key: FileKey, revision: int) -> RevisionRow | None:
        found = self.db.row(
            f"SELECT {_REVISION_COLUMNS} FROM context_file_revisions WHERE {_KEY_WHERE}"
            " AND revision = %s",
            (*_key_args(key), revision),
        )
        return None if found is None else _revision(found)

    def add_activity(self, row: ActivityRow) -> None:
        self.db.run(
            "INSERT INTO context_file_activity (workspace, at, actor_kind, actor, run_id,"
            " action, ref, revision, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                row.workspace,
                row.at,
                row.actor_kind,
                row.actor,
                row.run_id,
                row.action,
                row.ref,
                row.revision,
                row.detail,
            ),
        )

    def list_activity(
        self, workspace: str, limit: int, ref: str | None = None
    ) -> list[ActivityRow]:
        sql = f"SELECT {_ACTIVITY_COLUMNS} FROM context_file_activity WHERE workspace = %s"
        args: list[object] = [workspace]
        if ref is not None:
            sql += " AND ref = %s"
            args.append(ref)
        rows = self.db.rows(sql + " ORDER BY at DESC, id DESC LIMIT %s", [*args, limit])
        return [_activity(r) for r in rows]

    def file_activity_page(
        self,
        workspace: str,
        before: tuple[float, int] | None,
        limit: int,
        actions: Sequence[str],
    ) -> list[ActivityRow]:
        """Activity rows with one of ``actions``, newest first (``at``, then ``id``), only
        those strictly before ``before`` = (at, id) when given."""
        sql = f"SELECT {_ACTIVITY_COLUMNS} FROM context_file_activity WHERE workspace = %s"
        sql += " AND action = ANY(%s)"
        args: list[object] = [workspace, list(actions)]
        if before is not None:
            sql += " AND (at < %s OR (at = %s AND id < %s))"
            args += [before[0], before[0], before[1]]
        rows = self.db.rows(sql + " ORDER BY at DESC, id DESC LIMIT %s", [*args, limit])
        return [_activity(r) for r in rows]

    def write_times(self, workspace: str, actor_kind: str, actor: str, since: float) -> list[float]:
        rows = self.db.rows(
            "SELECT at FROM context_file_activity WHERE workspace = %s AND at >= %s"
            " AND actor_kind = %s AND actor = %s"
            " AND action IN ('save', 'restore', 'append', 'mode') ORDER BY at",
            (workspace, since, actor_kind, actor),
        )
        return [float(r[0]) for r in rows]

    def record_loads(self, rows: Sequence[LoadRow]) -> None:
        self.db.many(
            f"INSERT INTO run_context_loads ({_LOAD_COLUMNS})"
            f" VALUES ({', '.join(['%s'] * 11)}) ON CONFLICT (run_id, segment, ref) DO NOTHING",
            [
                (
                    r.workspace,
                    r.run_id,
                    r.agent,
                    r.repo,
                    r.segment,
                    r.ref,
                    r.revision,
                    r.budget,
                    r.tokens,
                    r.used,
                    r.loaded_at,
                )
                for r in rows
            ],
        )

    def loads_for_run(self, workspace: str, run_id: str) -> list[LoadRow]:
        rows = self.db.rows(
            f"SELECT {_LOAD_COLUMNS} FROM run_context_loads WHERE workspace = %s"
            " AND run_id = %s ORDER BY seq",
            (workspace, run_id),
        )
        return [_load(r) for r in rows]

    def last_loads(self, workspace: str, agent: str) -> list[LoadRow]:
        found = self.db.value(
            "SELECT run_id FROM run_context_loads WHERE workspace = %s AND agent = %s"
            " ORDER BY loaded_at DESC, seq DESC LIMIT 1",
            (workspace, agent),
        )
        return [] if found is None else self.loads_for_run(workspace, str(found))

    def runs_in_flight(self, workspace: str, ref: str, below_revision: int, since: float) -> int:
        found = self.db.value(
            "SELECT count(DISTINCT l.run_id) FROM run_context_loads l"
            " WHERE l.workspace = %s AND l.ref = %s AND l.revision < %s AND l.loaded_at >= %s"
            " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = l.run_id)",
            (workspace, ref, below_revision, since),
        )
        return int(found or 0)

    # ---- Notes proposals (store/file_proposals.py) ------------------------------------
    def add_proposal(self, row: ProposalRow) -> ProposalRow:
        new_id = self.db.returning(
            f"INSERT INTO notes_proposals ({_PROPOSAL_COLUMNS})"
            f" VALUES ({', '.join(['%s'] * 12)}) RETURNING id",
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
        found = self.get_proposal(row.workspace, int(new_id[0][0]))
        assert found is not None
        return found

    def get_proposal(self, workspace: str, proposal_id: int) -> ProposalRow | None:
        found = self.db.row(
            f"SELECT id, {_PROPOSAL_COLUMNS} FROM notes_proposals WHERE workspace = %s AND id = %s",
            (workspace, proposal_id),
        )
        return None if found is None else _proposal(found)

    def list_proposals(
        self, workspace: str, *, agent: str | None, status: str | None, limit: int
    ) -> list[ProposalRow]:
        sql = f"SELECT id, {_PROPOSAL_COLUMNS} FROM notes_proposals WHERE workspace = %s"
        params: list[Any] = [workspace]
        if agent is not None:
            sql += " AND agent = %s"
            params.append(agent)
        if status is not None:
            sql += " AND status = %s"
            params.append(status)
        rows = self.db.rows(sql + " ORDER BY id DESC LIMIT %s", [*params, limit])
        return [_proposal(r) for r in rows]

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
        changed = self.db.run(
            "UPDATE notes_proposals SET status = %s, decided_at = %s, decided_by = %s,"
            " applied_revision = %s WHERE workspace = %s AND id = %s AND status = 'pending'",
            (status, decided_at, decided_by, applied_revision, workspace, proposal_id),
        )
        return changed == 1
