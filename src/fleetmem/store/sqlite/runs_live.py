"""Live runs and run-graph reads in SQLite (:class:`fleetmem.store.runs.LiveRunStore`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from fleetmem.store.base import EventRow, RunRow, SessionRow
from fleetmem.store.runs import CloseReason, LiveRunRow
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.records import _RUN_COLUMNS, _run
from fleetmem.store.sqlite.run_forget import FORGOTTEN, LISTED, REMOVED

_LIVE_COLUMNS = (
    "run_id, agent, adapter, repo, branch, root, workdir, source, opened_at, last_seen_at,"
    " closed_at, close_reason"
)
_CHUNK = 500


def _live(row: sqlite3.Row, files: tuple[str, ...] = ()) -> LiveRunRow:
    return LiveRunRow(
        run_id=row["run_id"],
        agent=row["agent"],
        adapter=row["adapter"],
        repo=row["repo"],
        branch=row["branch"],
        root=row["root"],
        workdir=row["workdir"],
        source=row["source"],
        opened_at=row["opened_at"],
        last_seen_at=row["last_seen_at"],
        closed_at=row["closed_at"],
        close_reason=row["close_reason"],
        files=files,
    )


def _marks(n: int) -> str:
    return ",".join("?" * n)


class LiveRunsMixin:
    db: Database

    # ---- live runs --------------------------------------------------------------------
    def open_live_run(self, row: LiveRunRow, token_hash: str) -> bool:
        with self.db.write() as conn:
            cursor = conn.execute(
                f"INSERT INTO live_runs ({_LIVE_COLUMNS}, token_hash)"
                f" VALUES ({_marks(13)}) ON CONFLICT DO NOTHING",
                (
                    row.run_id,
                    row.agent,
                    row.adapter,
                    row.repo,
                    row.branch,
                    row.root,
                    row.workdir,
                    row.source,
                    row.opened_at,
                    row.last_seen_at,
                    row.closed_at,
                    row.close_reason,
                    token_hash,
                ),
            )
            return cursor.rowcount == 1

    def _with_files(self, rows: Sequence[sqlite3.Row]) -> list[LiveRunRow]:
        ids = [str(r["run_id"]) for r in rows]
        files: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            for f in self.db.conn.execute(
                f"SELECT run_id, path FROM live_run_files WHERE run_id IN ({_marks(len(chunk))})"
                " ORDER BY run_id, path",
                chunk,
            ):
                files[f["run_id"]].append(f["path"])
        return [_live(r, tuple(files[r["run_id"]])) for r in rows]

    def live_run_by_token(self, token_hash: str) -> LiveRunRow | None:
        row = self.db.conn.execute(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else self._with_files([row])[0]

    def get_live_run(self, run_id: str) -> LiveRunRow | None:
        row = self.db.conn.execute(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else self._with_files([row])[0]

    def heartbeat_live_run(
        self,
        run_id: str,
        now: float,
        *,
        branch: str | None,
        files: Sequence[str],
        max_files: int,
    ) -> None:
        with self.db.write() as conn:
            # A heartbeat after an expiry means the run was only quiet: it is live again.
            conn.execute(
                "UPDATE live_runs SET last_seen_at = max(last_seen_at, ?),"
                " branch = coalesce(?, branch),"
                " closed_at = CASE WHEN close_reason = 'expired' THEN NULL ELSE closed_at END,"
                " close_reason = CASE WHEN close_reason = 'expired' THEN NULL"
                " ELSE close_reason END"
                " WHERE run_id = ?",
                (now, branch, run_id),
            )
            if not files:
                return
            have = conn.execute(
                "SELECT count(*) FROM live_run_files WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            room = max(0, max_files - int(have))
            known = {
                r[0]
                for r in conn.execute(
                    f"SELECT path FROM live_run_files WHERE run_id = ? AND path IN"
                    f" ({_marks(len(files))})",
                    [run_id, *files],
                )
            }
            fresh = [p for p in dict.fromkeys(files) if p not in known][:room]
            conn.executemany(
                "INSERT INTO live_run_files (run_id, path, first_seen_at) VALUES (?, ?, ?)",
                [(run_id, p, now) for p in fresh],
            )

    def close_live_run(self, run_id: str, agent: str, now: float, reason: CloseReason) -> bool:
        with self.db.write() as conn:
            cursor = conn.execute(
                "UPDATE live_runs SET closed_at = ?, close_reason = ?"
                " WHERE run_id = ? AND agent = ?"
                " AND (closed_at IS NULL OR close_reason = 'expired')",
                (now, reason, run_id, agent),
            )
            return cursor.rowcount == 1

    def expire_live_runs(self, seen_before: float, now: float) -> int:
        with self.db.write() as conn:
            cursor = conn.execute(
                "UPDATE live_runs SET closed_at = ?, close_reason = 'expired'"
                " WHERE closed_at IS NULL AND last_seen_at < ?",
                (now, seen_before),
            )
            return int(cursor.rowcount)

    def open_live_runs(self, repo: str | None, seen_since: float) -> list[LiveRunRow]:
        where = "closed_at IS NULL AND last_seen_at >= ?"
        args: list[Any] = [seen_since]
        if repo is not None:
            where += " AND repo = ?"
            args.append(repo)
        rows = self.db.conn.execute(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE {where}"
            " ORDER BY repo, branch, opened_at, run_id",
            args,
        ).fetchall()
        return self._with_files(rows)

    def list_live_runs(
        self, *, repo: str | None, agent: str | None, include_closed: bool, limit: int
    ) -> list[LiveRunRow]:
        where: list[str] = []
        args: list[Any] = []
        if repo is not None:
            where.append("repo = ?")
            args.append(repo)
        if agent is not None:
            where.append("agent = ?")
            args.append(agent)
        if not include_closed:
            where.append("(closed_at IS NULL OR close_reason = 'expired')")
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.conn.execute(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs{clause}"
            " ORDER BY opened_at DESC, run_id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        return self._with_files(rows)

    def count_open_live_runs(self) -> int:
        row = self.db.conn.execute("SELECT count(*) FROM live_runs WHERE closed_at IS NULL")
        return int(row.fetchone()[0])

    # ---- stored runs ------------------------------------------------------------------
    def record_run_paths(
        self, run_id: str, edits: Sequence[tuple[str, str]], ended_at: float
    ) -> None:
        if not edits:
            return
        with self.db.write() as conn:
            # run_paths is a view (migration 22); its trigger interns the path and skips a
            # pair already recorded, as ON CONFLICT DO NOTHING did (a view takes no upsert).
            conn.executemany(
                "INSERT INTO run_paths (run_id, repo, path, ended_at) VALUES (?, ?, ?, ?)",
                [(run_id, repo, path, ended_at) for repo, path in edits],
            )

    def recent_runs(self, repo: str, branch: str | None, limit: int) -> list[RunRow]:
        # A run whose episode was forgotten is not "recent work" any more (docs/runs.md).
        shown = f"episode_status NOT IN ('{FORGOTTEN}', '{REMOVED}')"
        if branch is None:
            sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE repo = ? AND {shown}"
            args: list[Any] = [repo]
        else:
            sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE repo = ? AND branch = ? AND {shown}"
            args = [repo, branch]
        rows = self.db.conn.execute(
            sql + " ORDER BY ended_at DESC, run_id DESC LIMIT ?", [*args, limit]
        ).fetchall()
        return [_run(r) for r in rows]

    def runs_editing(self, repo: str, paths: Sequence[str], limit: int) -> list[RunRow]:
        exact = [p for p in paths if not p.endswith("/")]
        folders = [p for p in paths if p.endswith("/")]
        tests: list[str] = []
        args: list[Any] = [repo]
        if exact:
            tests.append(f"path IN ({_marks(len(exact))})")
            args.extend(exact)
        for folder in folders:
            # Every path under folder/ sorts between "folder/" and "folder0" ('0' follows '/').
            tests.append("(path >= ? AND path < ?)")
            args.extend([folder, folder[:-1] + "0"])
        if not tests:
            return []
        rows = self.db.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id IN ("
            f" SELECT run_id FROM run_paths WHERE repo = ? AND ({' OR '.join(tests)}))"
            " ORDER BY ended_at DESC, run_id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [_run(r) for r in rows]

    def list_runs(self, *, repo: str | None, agent: str | None, limit: int) -> list[RunRow]:
        where: list[str] = [LISTED]
        args: list[Any] = []
        if repo is not None:
            where.append("repo = ?")
            args.append(repo)
        if agent is not None:
            where.append("agent = ?")
            args.append(agent)
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs{clause} ORDER BY ended_at DESC, run_id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [_run(r) for r in rows]

    def get_runs(self, run_ids: Sequence[str]) -> dict[str, RunRow]:
        out: dict[str, RunRow] = {}
        ids = list(dict.fromkeys(run_ids))
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            for r in self.db.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id IN ({_marks(len(chunk))})"
                f" AND {LISTED}",
                chunk,
            ):
                out[r["run_id"]] = _run(r)
        return out

    def run_sessions(self, run_id: str) -> list[SessionRow]:
        rows = self.db.conn.execute(
            "SELECT session_id, ord, parent_id, subagent, cwd, repo, branch FROM sessions"
            " WHERE run_id = ? ORDER BY ord",
            (run_id,),
        ).fetchall()
        return [
            SessionRow(
                session_id=r["session_id"],
                ord=r["ord"],
                parent_id=r["parent_id"],
                subagent=bool(r["subagent"]),
                cwd=r["cwd"],
                repo=r["repo"],
                branch=r["branch"],
            )
            for r in rows
        ]

    def run_events(self, run_id: str) -> list[EventRow]:
        rows = self.db.conn.execute(
            "SELECT session_id, seq, type, path, passed, error_class FROM events"
            " WHERE run_id = ? ORDER BY session_id, seq",
            (run_id,),
        ).fetchall()
        return [
            EventRow(
                session_id=r["session_id"],
                seq=r["seq"],
                type=r["type"],
                path=r["path"],
                passed=None if r["passed"] is None else bool(r["passed"]),
                error_class=r["error_class"],
            )
            for r in rows
        ]
