"""Live runs and run-graph reads in PostgreSQL (:class:`fleetmem.store.runs.LiveRunStore`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleetmem.store.base import EventRow, RunRow, SessionRow
from fleetmem.store.postgres.db import PgDatabase, Row
from fleetmem.store.postgres.records import RUN_COLUMNS, run_row
from fleetmem.store.postgres.run_forget import FORGOTTEN, LISTED, REMOVED
from fleetmem.store.runs import CloseReason, LiveRunRow

_LIVE_COLUMNS = (
    "run_id, agent, adapter, repo, branch, root, workdir, source, opened_at, last_seen_at,"
    " closed_at, close_reason"
)


class LiveRunsMixin:
    db: PgDatabase

    # ---- live runs --------------------------------------------------------------------
    def open_live_run(self, row: LiveRunRow, token_hash: str) -> bool:
        changed = self.db.run(
            f"INSERT INTO live_runs ({_LIVE_COLUMNS}, token_hash)"
            f" VALUES ({', '.join(['%s'] * 13)}) ON CONFLICT DO NOTHING",
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
        return changed == 1

    def _with_files(self, rows: Sequence[Row]) -> list[LiveRunRow]:
        ids = [str(r[0]) for r in rows]
        files: dict[str, list[str]] = {i: [] for i in ids}
        if ids:
            for run_id, path in self.db.rows(
                "SELECT run_id, path FROM live_run_files WHERE run_id = ANY(%s)"
                " ORDER BY run_id, path",
                (ids,),
            ):
                files[str(run_id)].append(str(path))
        return [
            LiveRunRow(
                run_id=r[0],
                agent=r[1],
                adapter=r[2],
                repo=r[3],
                branch=r[4],
                root=r[5],
                workdir=r[6],
                source=r[7],
                opened_at=r[8],
                last_seen_at=r[9],
                closed_at=r[10],
                close_reason=r[11],
                files=tuple(files[str(r[0])]),
            )
            for r in rows
        ]

    def live_run_by_token(self, token_hash: str) -> LiveRunRow | None:
        found = self.db.row(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE token_hash = %s", (token_hash,)
        )
        return None if found is None else self._with_files([found])[0]

    def get_live_run(self, run_id: str) -> LiveRunRow | None:
        found = self.db.row(f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE run_id = %s", (run_id,))
        return None if found is None else self._with_files([found])[0]

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
            # The row lock taken here also serialises two heartbeats adding files at once.
            conn.execute(
                "UPDATE live_runs SET last_seen_at = greatest(last_seen_at, %s),"
                " branch = coalesce(%s, branch),"
                " closed_at = CASE WHEN close_reason = 'expired' THEN NULL ELSE closed_at END,"
                " close_reason = CASE WHEN close_reason = 'expired' THEN NULL"
                " ELSE close_reason END"
                " WHERE run_id = %s",
                (now, branch, run_id),
            )
            if not files:
                return
            found = conn.execute(
                "SELECT count(*) FROM live_run_files WHERE run_id = %s", (run_id,)
            ).fetchone()
            room = max(0, max_files - int(found[0] if found else 0))
            known = {
                str(r[0])
                for r in conn.execute(
                    "SELECT path FROM live_run_files WHERE run_id = %s AND path = ANY(%s)",
                    (run_id, list(files)),
                )
            }
            fresh = [p for p in dict.fromkeys(files) if p not in known][:room]
            if fresh:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO live_run_files (run_id, path, first_seen_at)"
                        " VALUES (%s, %s, %s)",
                        [(run_id, p, now) for p in fresh],
                    )

    def close_live_run(self, run_id: str, agent: str, now: float, reason: CloseReason) -> bool:
        changed = self.db.run(
            "UPDATE live_runs SET closed_at = %s, close_reason = %s"
            " WHERE run_id = %s AND agent = %s"
            " AND (closed_at IS NULL OR close_reason = 'expired')",
            (now, reason, run_id, agent),
        )
        return changed == 1

    def expire_live_runs(self, seen_before: float, now: float) -> int:
        return self.db.run(
            "UPDATE live_runs SET closed_at = %s, close_reason = 'expired'"
            " WHERE closed_at IS NULL AND last_seen_at < %s",
            (now, seen_before),
        )

    def open_live_runs(self, repo: str | None, seen_since: float) -> list[LiveRunRow]:
        where = "closed_at IS NULL AND last_seen_at >= %s"
        args: list[Any] = [seen_since]
        if repo is not None:
            where += " AND repo = %s"
            args.append(repo)
        rows = self.db.rows(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs WHERE {where}"
            " ORDER BY repo NULLS FIRST, branch NULLS FIRST, opened_at, run_id",
            args,
        )
        return self._with_files(rows)

    def list_live_runs(
        self, *, repo: str | None, agent: str | None, include_closed: bool, limit: int
    ) -> list[LiveRunRow]:
        where: list[str] = []
        args: list[Any] = []
        if repo is not None:
            where.append("repo = %s")
            args.append(repo)
        if agent is not None:
            where.append("agent = %s")
            args.append(agent)
        if not include_closed:
            where.append("(closed_at IS NULL OR close_reason = 'expired')")
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.rows(
            f"SELECT {_LIVE_COLUMNS} FROM live_runs{clause}"
            " ORDER BY opened_at DESC, run_id DESC LIMIT %s",
            [*args, limit],
        )
        return self._with_files(rows)

    def count_open_live_runs(self) -> int:
        return int(self.db.value("SELECT count(*) FROM live_runs WHERE closed_at IS NULL"))

    # ---- stored runs ------------------------------------------------------------------
    def record_run_paths(
        self, run_id: str, edits: Sequence[tuple[str, str]], ended_at: float
    ) -> None:
        self.db.many(
            "INSERT INTO run_paths (run_id, repo, path, ended_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            [(run_id, repo, path, ended_at) for repo, path in edits],
        )

    def recent_runs(self, repo: str, branch: str | None, limit: int) -> list[RunRow]:
        # A run whose episode was forgotten is not "recent work" any more (docs/runs.md).
        shown = f"episode_status NOT IN ('{FORGOTTEN}', '{REMOVED}')"
        sql = f"SELECT {RUN_COLUMNS} FROM runs WHERE repo = %s AND {shown}"
        args: list[Any] = [repo]
        if branch is not None:
            sql += " AND branch = %s"
            args.append(branch)
        rows = self.db.rows(sql + " ORDER BY ended_at DESC, run_id DESC LIMIT %s", [*args, limit])
        return [run_row(r) for r in rows]

    def runs_editing(self, repo: str, paths: Sequence[str], limit: int) -> list[RunRow]:
        exact = [p for p in paths if not p.endswith("/")]
        folders = [p for p in paths if p.endswith("/")]
        tests: list[str] = []
        args: list[Any] = [repo]
        if exact:
            tests.append("path = ANY(%s)")
            args.append(exact)
        for folder in folders:
            # Every path under folder/ sorts between "folder/" and "folder0" ('0' follows '/').
            tests.append("(path >= %s AND path < %s)")
            args.extend([folder, folder[:-1] + "0"])
        if not tests:
            return []
        rows = self.db.rows(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id IN ("
            f" SELECT run_id FROM run_paths WHERE repo = %s AND ({' OR '.join(tests)}))"
            " ORDER BY ended_at DESC, run_id DESC LIMIT %s",
            [*args, limit],
        )
        return [run_row(r) for r in rows]

    def list_runs(self, *, repo: str | None, agent: str | None, limit: int) -> list[RunRow]:
        where: list[str] = [LISTED]
        args: list[Any] = []
        if repo is not None:
            where.append("repo = %s")
            args.append(repo)
        if agent is not None:
            where.append("agent = %s")
            args.append(agent)
        rows = self.db.rows(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE {' AND '.join(where)}"
            " ORDER BY ended_at DESC, run_id DESC LIMIT %s",
            [*args, limit],
        )
        return [run_row(r) for r in rows]

    def get_runs(self, run_ids: Sequence[str]) -> dict[str, RunRow]:
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return {}
        rows = self.db.rows(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ANY(%s) AND {LISTED}", (ids,)
        )
        return {str(r[0]): run_row(r) for r in rows}

    def run_sessions(self, run_id: str) -> list[SessionRow]:
        rows = self.db.rows(
            "SELECT session_id, ord, parent_id, subagent, cwd, repo, branch FROM sessions"
            " WHERE run_id = %s ORDER BY ord",
            (run_id,),
        )
        return [
            SessionRow(
                session_id=r[0],
                ord=r[1],
                parent_id=r[2],
                subagent=bool(r[3]),
                cwd=r[4],
                repo=r[5],
                branch=r[6],
            )
            for r in rows
        ]

    def run_events(self, run_id: str) -> list[EventRow]:
        rows = self.db.rows(
            "SELECT session_id, seq, type, path, passed, error_class FROM events"
            " WHERE run_id = %s ORDER BY session_id, seq",
            (run_id,),
        )
        return [
            EventRow(
                session_id=r[0],
                seq=r[1],
                type=r[2],
                path=r[3],
                passed=None if r[4] is None else bool(r[4]),
                error_class=r[5],
            )
            for r in rows
        ]
