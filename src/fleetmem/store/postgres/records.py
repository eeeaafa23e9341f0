"""Runs, episodes, the provider index and the job queue in PostgreSQL.

The same rows as ``store/sqlite/records.py``. One difference is for several daemons sharing
the database: :meth:`RecordsMixin.due_jobs` claims the jobs it returns (``FOR UPDATE SKIP
LOCKED``, then ``claimed_until`` set :data:`CLAIM_S` ahead), so another daemon asking at the
same time gets other jobs; finishing, retrying or failing a job releases it, and a daemon
killed mid-job leaves a claim that simply runs out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.store.base import (
    EpisodeFilter,
    EpisodeRow,
    EventRow,
    IndexRow,
    IndexState,
    Job,
    JobKind,
    RunRow,
    SessionRow,
)
from fleetmem.store.postgres.db import PgDatabase, Row
from fleetmem.store.postgres.run_forget import LISTED, scrub_run

#: How long a claimed job is kept from other daemons before it counts as abandoned.
CLAIM_S = 300.0

RUN_COLUMNS = (
    "run_id, agent, adapter, trace_id, model, trigger, started_at, ended_at, outcome, reason,"
    " cost_usd, cost_source, spawned, pull_request, repo, branch, episode_status"
)
EPISODE_COLUMNS = (
    "id, run_id, agent, adapter, model, repo, branch, outcome, scope, trust_class, started_at,"
    " recorded_at, forgotten_at, summary, summary_outcome, episode_json, text, content_hash"
)
#: The same columns with the two bodies left unread (``get_episodes(bodies=False)``).
_HEAD_COLUMNS = EPISODE_COLUMNS.replace(
    "episode_json, text,", "NULL AS episode_json, NULL AS text,"
)
_INDEX_COLUMNS = "provider, provider_id, episode_id, scope, recorded_at, forgotten_at, state"
_JOB_COLUMNS = (
    "id, kind, provider, episode_id, provider_id, state, attempts, created_at,"
    " next_attempt_at, last_error"
)


def run_row(r: Row) -> RunRow:
    values = list(r)
    values[12] = bool(values[12])  # spawned
    return RunRow(*values)


def episode_row(r: Row) -> EpisodeRow:
    values = list(r)
    body = values[15]
    values[15] = json.loads(body) if body is not None else None
    return EpisodeRow(*values)


def _index(r: Row) -> IndexRow:
    return IndexRow(*r)


def _job(r: Row) -> Job:
    return Job(*r)


class RecordsMixin:
    db: PgDatabase
    #: Seconds a claimed job stays this daemon's (the store's ``[store] claim_timeout``).
    claim_s: float = CLAIM_S

    # ---- runs -------------------------------------------------------------------------
    def run_hash(self, run_id: str) -> str | None:
        found = self.db.value("SELECT record_hash FROM runs WHERE run_id = %s", (run_id,))
        return None if found is None else str(found)

    def insert_run(
        self,
        run: RunRow,
        sessions: Sequence[SessionRow],
        events: Sequence[EventRow],
        record_json: str,
        record_hash: str,
        now: float,
    ) -> None:
        with self.db.write():
            self.db.run(
                f"INSERT INTO runs ({RUN_COLUMNS}, record_json, record_hash, ingested_at)"
                f" VALUES ({', '.join(['%s'] * 20)})",
                (
                    run.run_id,
                    run.agent,
                    run.adapter,
                    run.trace_id,
                    run.model,
                    run.trigger,
                    run.started_at,
                    run.ended_at,
                    run.outcome,
                    run.reason,
                    run.cost_usd,
                    run.cost_source,
                    int(run.spawned),
                    run.pull_request,
                    run.repo,
                    run.branch,
                    run.episode_status,
                    record_json,
                    record_hash,
                    now,
                ),
            )
            self.db.many(
                "INSERT INTO sessions (run_id, session_id, ord, parent_id, subagent, cwd, repo,"
                " branch) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        run.run_id,
                        s.session_id,
                        s.ord,
                        s.parent_id,
                        int(s.subagent),
                        s.cwd,
                        s.repo,
                        s.branch,
                    )
                    for s in sessions
                ],
            )
            self.db.many(
                "INSERT INTO events (run_id, session_id, seq, type, path, passed, error_class)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        run.run_id,
                        e.session_id,
                        e.seq,
                        e.type,
                        e.path,
                        None if e.passed is None else int(e.passed),
                        e.error_class,
                    )
                    for e in events
                ],
            )

    def get_run(self, run_id: str) -> RunRow | None:
        found = self.db.row(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = %s AND {LISTED}", (run_id,)
        )
        return None if found is None else run_row(found)

    def latest_run(self, agent: str) -> RunRow | None:
        found = self.db.row(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE agent = %s AND {LISTED}"
            " ORDER BY started_at DESC, run_id DESC LIMIT 1",
            (agent,),
        )
        return None if found is None else run_row(found)

    def linked_pull_request(self, repo: str, branch: str, before: float) -> str | None:
        found = self.db.value(
            "SELECT pull_request FROM runs WHERE repo = %s AND branch = %s AND started_at < %s"
            " AND pull_request IS NOT NULL ORDER BY started_at DESC, run_id DESC LIMIT 1",
            (repo, branch, before),
        )
        return None if found is None else str(found)

    def run_status_counts(self) -> dict[str, int]:
        rows = self.db.rows(
            f"SELECT episode_status, count(*) FROM runs WHERE {LISTED} GROUP BY episode_status"
        )
        return {str(r[0]): int(r[1]) for r in rows}

    # ---- episodes ---------------------------------------------------------------------
    def insert_episode(self, row: EpisodeRow, *, record_job_provider: str | None) -> None:
        with self.db.write():
            self.db.run(
                f"INSERT INTO episodes ({EPISODE_COLUMNS}) VALUES ({', '.join(['%s'] * 18)})",
                (
                    row.id,
                    row.run_id,
                    row.agent,
                    row.adapter,
                    row.model,
                    row.repo,
                    row.branch,
                    row.outcome,
                    row.scope,
                    row.trust_class,
                    row.started_at,
                    row.recorded_at,
                    row.forgotten_at,
                    row.summary,
                    row.summary_outcome,
                    None if row.episode is None else json.dumps(row.episode, ensure_ascii=False),
                    row.text,
                    row.content_hash,
                ),
            )
            if record_job_provider is not None:
                # Queued in the same transaction: a crash before the send leaves a job.
                self.enqueue("record", record_job_provider, row.id, None, row.recorded_at)

    def update_episode_body(
        self,
        episode_id: str,
        *,
        summary: str | None,
        summary_outcome: str,
        episode: Mapping[str, Any],
        text: str,
        content_hash: str,
    ) -> None:
        self.db.run(
            "UPDATE episodes SET summary = %s, summary_outcome = %s, episode_json = %s,"
            " text = %s, content_hash = %s WHERE id = %s AND forgotten_at IS NULL",
            (
                summary,
                summary_outcome,
                json.dumps(episode, ensure_ascii=False),
                text,
                content_hash,
                episode_id,
            ),
        )

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        found = self.db.row(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = %s", (episode_id,))
        return None if found is None else episode_row(found)

    def get_episodes(
        self, episode_ids: Sequence[str], *, bodies: bool = True
    ) -> dict[str, EpisodeRow]:
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return {}
        columns = EPISODE_COLUMNS if bodies else _HEAD_COLUMNS
        rows = self.db.rows(f"SELECT {columns} FROM episodes WHERE id = ANY(%s)", (ids,))
        return {str(r[0]): episode_row(r) for r in rows}

    def list_episodes(self, flt: EpisodeFilter) -> list[EpisodeRow]:
        where: list[str] = []
        args: list[Any] = []
        if flt.agent is not None:
            where.append("agent = %s")
            args.append(flt.agent)
        if flt.repo is not None:
            where.append("repo = %s")
            args.append(flt.repo)
        if flt.since is not None:
            where.append("started_at >= %s")
            args.append(flt.since)
        if not flt.include_forgotten:
            where.append("forgotten_at IS NULL")
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.rows(
            f"SELECT {EPISODE_COLUMNS} FROM episodes{clause}"
            " ORDER BY started_at DESC, id DESC LIMIT %s",
            [*args, flt.limit],
        )
        return [episode_row(r) for r in rows]

    def episode_scopes(self) -> list[str]:
        """Every scope holding a live episode, sorted (an operator's recall everywhere)."""
        rows = self.db.rows(
            "SELECT DISTINCT scope FROM episodes WHERE forgotten_at IS NULL ORDER BY scope"
        )
        return [str(r[0]) for r in rows]

    def tombstone_episode(self, episode_id: str, now: float) -> list[IndexRow]:
        """Mark forgotten, drop the body and queue a forget per provider id, atomically.

        Returns the index rows whose provider still has to forget them.
        """
        with self.db.write() as conn:
            conn.execute(
                "UPDATE episodes SET forgotten_at = coalesce(forgotten_at, %s),"
                " episode_json = NULL, text = NULL, summary = NULL WHERE id = %s",
                (now, episode_id),
            )
            run = conn.execute(
                "SELECT run_id FROM episodes WHERE id = %s", (episode_id,)
            ).fetchone()
            if run is not None:
                scrub_run(conn, str(run[0]))
            conn.execute(
                "UPDATE provider_index SET forgotten_at = coalesce(forgotten_at, %s),"
                " state = CASE WHEN state = 'recorded' THEN 'forget_pending' ELSE state END"
                " WHERE episode_id = %s",
                (now, episode_id),
            )
            # A record that has not happened yet must not happen after a forget.
            conn.execute(
                "UPDATE jobs SET state = 'done', last_error = 'cancelled: forgotten',"
                " claimed_until = NULL"
                " WHERE kind = 'record' AND episode_id = %s AND state = 'pending'",
                (episode_id,),
            )
            rows = conn.execute(
                f"SELECT {_INDEX_COLUMNS} FROM provider_index WHERE episode_id = %s"
                " AND state = 'forget_pending' ORDER BY provider, provider_id",
                (episode_id,),
            ).fetchall()
            pending = [_index(r) for r in rows]
            for row in pending:
                self.enqueue("forget", row.provider, episode_id, row.provider_id, now)
            return pending

    def episodes_started_before(self, cutoff: float, limit: int) -> list[str]:
        rows = self.db.rows(
            "SELECT id FROM episodes WHERE started_at < %s AND forgotten_at IS NULL"
            " ORDER BY started_at, erow LIMIT %s",
            (cutoff, limit),
        )
        return [str(r[0]) for r in rows]

    def episode_counts(self) -> dict[str, int]:
        found = self.db.row(
            "SELECT count(*), count(*) FILTER (WHERE forgotten_at IS NULL),"
            " count(*) FILTER (WHERE forgotten_at IS NOT NULL),"
            " count(*) FILTER (WHERE summary IS NOT NULL) FROM episodes"
        )
        assert found is not None
        return {
            "total": int(found[0]),
            "live": int(found[1]),
            "forgotten": int(found[2]),
            "with_summary": int(found[3]),
        }

    # ---- provider index ---------------------------------------------------------------
    def add_index_rows(
        self, provider: str, provider_ids: Sequence[str], episode_id: str, scope: str, now: float
    ) -> None:
        self.db.many(
            f"INSERT INTO provider_index ({_INDEX_COLUMNS})"
            " VALUES (%s, %s, %s, %s, %s, NULL, 'recorded')"
            " ON CONFLICT (provider, provider_id) DO NOTHING",
            [(provider, pid, episode_id, scope, now) for pid in provider_ids],
        )

    def index_rows(self, provider: str, provider_ids: Sequence[str]) -> dict[str, IndexRow]:
        ids = list(dict.fromkeys(provider_ids))
        if not ids:
            return {}
        rows = self.db.rows(
            f"SELECT {_INDEX_COLUMNS} FROM provider_index WHERE provider = %s"
            " AND provider_id = ANY(%s)",
            (provider, ids),
        )
        return {str(r[1]): _index(r) for r in rows}

    def index_rows_for_episode(self, episode_id: str) -> list[IndexRow]:
        rows = self.db.rows(
            f"SELECT {_INDEX_COLUMNS} FROM provider_index WHERE episode_id = %s"
            " ORDER BY provider, provider_id",
            (episode_id,),
        )
        return [_index(r) for r in rows]

    def set_index_state(self, provider: str, provider_id: str, state: IndexState) -> None:
        self.db.run(
            "UPDATE provider_index SET state = %s WHERE provider = %s AND provider_id = %s",
            (state, provider, provider_id),
        )

    # ---- jobs -------------------------------------------------------------------------
    def enqueue(
        self, kind: JobKind, provider: str, episode_id: str, provider_id: str | None, now: float
    ) -> None:
        self.db.run(
            "INSERT INTO jobs (kind, provider, episode_id, provider_id, state, attempts,"
            " created_at, next_attempt_at) VALUES (%s, %s, %s, %s, 'pending', 0, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (kind, provider, episode_id, provider_id, now, now),
        )

    def due_jobs(self, now: float, limit: int, *, episode_id: str | None = None) -> list[Job]:
        """Claim and return due pending jobs, oldest due first (see the module docstring).

        Rows another daemon holds are skipped (``SKIP LOCKED``), and so are jobs claimed
        within the last ``claim_s`` seconds (:data:`CLAIM_S` by default) that were not
        finished, retried or failed.
        """
        only = "" if episode_id is None else " AND episode_id = %(episode)s"
        rows = self.db.returning(
            "WITH due AS (SELECT id FROM jobs WHERE state = 'pending'"
            " AND next_attempt_at <= %(now)s"
            " AND (claimed_until IS NULL OR claimed_until <= %(now)s)" + only + ""
            " ORDER BY next_attempt_at, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)"
            " UPDATE jobs j SET claimed_until = %(until)s FROM due WHERE j.id = due.id"
            " RETURNING j.id, j.kind, j.provider, j.episode_id, j.provider_id, j.state,"
            " j.attempts, j.created_at, j.next_attempt_at, j.last_error",
            {"now": now, "until": now + self.claim_s, "limit": limit, "episode": episode_id},
        )
        jobs = [_job(r) for r in rows]
        jobs.sort(key=lambda j: (j.next_attempt_at, j.id))
        return jobs

    def finish_job(self, job_id: int) -> None:
        self.db.run("UPDATE jobs SET state = 'done', claimed_until = NULL WHERE id = %s", (job_id,))

    def retry_job(self, job_id: int, next_attempt_at: float, error: str) -> None:
        self.db.run(
            "UPDATE jobs SET attempts = attempts + 1, next_attempt_at = %s, last_error = %s,"
            " claimed_until = NULL WHERE id = %s",
            (next_attempt_at, error[:500], job_id),
        )

    def fail_job(self, job_id: int, error: str) -> None:
        self.db.run(
            "UPDATE jobs SET state = 'failed', attempts = attempts + 1, last_error = %s,"
            " claimed_until = NULL WHERE id = %s",
            (error[:500], job_id),
        )

    def job_counts(self) -> dict[tuple[str, str], int]:
        rows = self.db.rows(
            "SELECT kind, state, count(*) FROM jobs WHERE state <> 'done' GROUP BY kind, state"
        )
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}

    def oldest_pending(self, kind: JobKind) -> float | None:
        found = self.db.value(
            "SELECT min(created_at) FROM jobs WHERE state = 'pending' AND kind = %s", (kind,)
        )
        return None if found is None else float(found)
