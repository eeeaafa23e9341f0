"""Context files, revisions, activity and run loads in SQLite (see store/files.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from fleetmem.store.files import (
    ActivityRow,
    FileKey,
    FileRow,
    LoadRow,
    NewRevision,
    RevisionRow,
)
from fleetmem.store.sqlite.db import Database

_KEY_WHERE = "workspace = ? AND kind = ? AND owner = ? AND name = ?"


def _key_args(key: FileKey) -> tuple[str, str, str, str]:
    return (key.workspace, key.kind, key.owner, key.name)


def _file(row: sqlite3.Row) -> FileRow:
    return FileRow(
        key=FileKey(row["workspace"], row["kind"], row["owner"], row["name"]),
        mode=row["mode"],
        revision=int(row["revision"]),
        body=row["body"],
        updated_at=float(row["updated_at"]),
        author_kind=row["author_kind"],
        author=row["author"],
        run_id=row["run_id"],
    )


def _revision(row: sqlite3.Row) -> RevisionRow:
    return RevisionRow(
        key=FileKey(row["workspace"], row["kind"], row["owner"], row["name"]),
        revision=int(row["revision"]),
        body=row["body"],
        created_at=float(row["created_at"]),
        author_kind=row["author_kind"],
        author=row["author"],
        run_id=row["run_id"],
        action=row["action"],
        restored_from=row["restored_from"],
    )


def _load(row: sqlite3.Row) -> LoadRow:
    return LoadRow(
        workspace=row["workspace"],
        run_id=row["run_id"],
        agent=row["agent"],
        repo=row["repo"],
        segment=row["segment"],
        ref=row["ref"],
        revision=row["revision"],
        budget=int(row["budget"]),
        tokens=int(row["tokens"]),
        used=int(row["used"]),
        loaded_at=float(row["loaded_at"]),
    )


class FilesMixin:
    """Implements :class:`fleetmem.store.files.FileStore` over ``self.db``."""

    db: Database

    def get_file(self, key: FileKey) -> FileRow | None:
        row = self.db.conn.execute(
            f"SELECT * FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
        ).fetchone()
        return None if row is None else _file(row)

    def list_files(self, workspace: str, kind: str, owner: str | None = None) -> list[FileRow]:
        sql = "SELECT * FROM context_files WHERE workspace = ? AND kind = ?"
        args: list[str] = [workspace, kind]
        if owner is not None:
            sql += " AND owner = ?"
            args.append(owner)
        rows = self.db.conn.execute(sql + " ORDER BY owner, name", args).fetchall()
        return [_file(r) for r in rows]

    def file_owners(self, workspace: str, kind: str) -> list[str]:
        rows = self.db.conn.execute(
            "SELECT DISTINCT owner FROM context_files WHERE workspace = ? AND kind = ?"
            " ORDER BY owner",
            (workspace, kind),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def create_file(self, key: FileKey, mode: str | None, now: float) -> FileRow:
        with self.db.write() as conn:
            inserted = conn.execute(
                "INSERT INTO context_files (workspace, kind, owner, name, mode, mode_seq,"
                " revision, body, updated_at, author_kind, author, run_id)"
                " VALUES (?, ?, ?, ?, ?, 0, 0, '', ?, 'system', 'fleetmem', NULL)"
                " ON CONFLICT DO NOTHING",
                (*_key_args(key), mode, now),
            ).rowcount
            if inserted:
                conn.execute(
                    "INSERT INTO context_file_revisions (workspace, kind, owner, name, revision,"
                    " body, created_at, author_kind, author, run_id, action, restored_from)"
                    " VALUES (?, ?, ?, ?, 0, '', ?, 'system', 'fleetmem', NULL, 'created', NULL)",
                    (*_key_args(key), now),
                )
            row = conn.execute(
                f"SELECT * FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
            ).fetchone()
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
            # One write transaction (BEGIN IMMEDIATE): no other writer can slip in between the
            # comparison and the save.
            current = self.create_file(key, None, now)
            if current.revision != base_revision:
                return current, False
            revision = current.revision + 1
            conn.execute(
                "INSERT INTO context_file_revisions (workspace, kind, owner, name, revision, body,"
                " created_at, author_kind, author, run_id, action, restored_from)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                "UPDATE context_files SET revision = ?, body = ?, updated_at = ?,"
                f" author_kind = ?, author = ?, run_id = ? WHERE {_KEY_WHERE}",
                (revision, new.body, now, new.author_kind, new.author, new.run_id, *_key_args(key)),
            )
            conn.execute(
                f"DELETE FROM context_file_revisions WHERE {_KEY_WHERE}"
                " AND revision <= ? AND created_at < ?",
                (*_key_args(key), revision - keep_last, keep_after),
            )
            row = conn.execute(
                f"SELECT * FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
            ).fetchone()
        return _file(row), True

    def set_mode(
        self, key: FileKey, mode: str, now: float, *, max_every_run: int
    ) -> tuple[FileRow, list[str]]:
        with self.db.write() as conn:
            # The service creates workspace files with their default modes first.
            current = self.create_file(key, None, now)
            if mode == "every_run" and current.mode != "every_run":
                others = conn.execute(
                    "SELECT name FROM context_files WHERE workspace = ? AND kind = ?"
                    " AND mode = 'every_run' ORDER BY mode_seq, rowid",
                    (key.workspace, key.kind),
                ).fetchall()
                if len(others) >= max_every_run:
                    return current, [str(r[0]) for r in others]
            conn.execute(
                # mode_seq orders the every-run files by when they were switched (for messages).
                "UPDATE context_files SET mode_seq = CASE WHEN mode IS ? THEN mode_seq ELSE"
                " (SELECT coalesce(max(mode_seq), 0) + 1 FROM context_files WHERE workspace = ?)"
                f" END, mode = ? WHERE {_KEY_WHERE}",
                (mode, key.workspace, mode, *_key_args(key)),
            )
            row = conn.execute(
                f"SELECT * FROM context_files WHERE {_KEY_WHERE}", _key_args(key)
            ).fetchone()
        return _file(row), []

    def list_revisions(self, key: FileKey) -> list[RevisionRow]:
        rows = self.db.conn.execute(
            f"SELECT * FROM context_file_revisions WHERE {_KEY_WHERE} ORDER BY revision DESC",
            _key_args(key),
        ).fetchall()
        return [_revision(r) for r in rows]

    def get_revision(self, key: FileKey, revision: int) -> RevisionRow | None:
        row = self.db.conn.execute(
            f"SELECT * FROM context_file_revisions WHERE {_KEY_WHERE} AND revision = ?",
            (*_key_args(key), revision),
        ).fetchone()
        return None if row is None else _revision(row)

    def add_activity(self, row: ActivityRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO context_file_activity (workspace, at, actor_kind, actor, run_id,"
                " action, ref, revision, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        sql = "SELECT * FROM context_file_activity WHERE workspace = ?"
        args: list[object] = [workspace]
        if ref is not None:
            sql += " AND ref = ?"
            args.append(ref)
        rows = self.db.conn.execute(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*args, limit])
        return [_activity_row(r) for r in rows.fetchall()]

    def file_activity_page(
        self,
        workspace: str,
        before: tuple[float, int] | None,
        limit: int,
        actions: Sequence[str],
    ) -> list[ActivityRow]:
        marks = ", ".join("?" for _ in actions)
        sql = f"SELECT * FROM context_file_activity WHERE workspace = ? AND action IN ({marks})"
        args: list[object] = [workspace, *actions]
        if before is not None:
            sql += " AND (at < ? OR (at = ? AND id < ?))"
            args += [before[0], before[0], before[1]]
        rows = self.db.conn.execute(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*args, limit])
        return [_activity_row(r) for r in rows.fetchall()]

    def write_times(self, workspace: str, actor_kind: str, actor: str, since: float) -> list[float]:
        rows = self.db.conn.execute(
            "SELECT at FROM context_file_activity WHERE workspace = ? AND at >= ?"
            " AND actor_kind = ? AND actor = ? AND action IN ('save', 'restore', 'append', 'mode')"
            " ORDER BY at",
            (workspace, since, actor_kind, actor),
        ).fetchall()
        return [float(r[0]) for r in rows]

    def record_loads(self, rows: Sequence[LoadRow]) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO run_context_loads (workspace, run_id, agent, repo, segment, ref,"
                " revision, budget, tokens, used, loaded_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, segment, ref) DO NOTHING",
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
        rows = self.db.conn.execute(
            "SELECT * FROM run_context_loads WHERE workspace = ? AND run_id = ? ORDER BY rowid",
            (workspace, run_id),
        ).fetchall()
        return [_load(r) for r in rows]

    def last_loads(self, workspace: str, agent: str) -> list[LoadRow]:
        row = self.db.conn.execute(
            "SELECT run_id FROM run_context_loads WHERE workspace = ? AND agent = ?"
            " ORDER BY loaded_at DESC, rowid DESC LIMIT 1",
            (workspace, agent),
        ).fetchone()
        return [] if row is None else self.loads_for_run(workspace, str(row[0]))

    def runs_in_flight(self, workspace: str, ref: str, below_revision: int, since: float) -> int:
        row = self.db.conn.execute(
            "SELECT count(DISTINCT l.run_id) FROM run_context_loads l"
            " WHERE l.workspace = ? AND l.ref = ? AND l.revision < ? AND l.loaded_at >= ?"
            " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = l.run_id)",
            (workspace, ref, below_revision, since),
        ).fetchone()
        return int(row[0] or 0)


def _activity_row(r: sqlite3.Row) -> ActivityRow:
    return ActivityRow(
        workspace=r["workspace"],
        at=float(r["at"]),
        actor_kind=r["actor_kind"],
        actor=r["actor"],
        run_id=r["run_id"],
        action=r["action"],
        ref=r["ref"],
        revision=r["revision"],
        detail=r["detail"],
        id=int(r["id"]),
    )
