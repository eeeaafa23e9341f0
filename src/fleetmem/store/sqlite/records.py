"""Runs, episodes, the provider index and the job queue in SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from fleetmem.core.episode import Episode, render_text
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
from fleetmem.store.sqlite import fts_source
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.packed import pack, pack_against, unpack
from fleetmem.store.sqlite.run_forget import LISTED, scrub_run

_RUN_COLUMNS = (
    "run_id, agent, adapter, trace_id, model, trigger, started_at, ended_at, outcome, reason,"
    " cost_usd, cost_source, spawned, pull_request, repo, branch, episode_status"
)
_EPISODE_COLUMNS = (
    "id, run_id, agent, adapter, model, repo, branch, outcome, scope, trust_class, started_at,"
    " recorded_at, forgotten_at, summary, summary_outcome, episode_json, text, content_hash"
)

#: The same columns with the two bodies left unread (``get_episodes(bodies=False)``).
_HEAD_COLUMNS = _EPISODE_COLUMNS.replace(
    "episode_json, text,", "NULL AS episode_json, NULL AS text,"
)


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _run(row: sqlite3.Row) -> RunRow:
    return RunRow(
        run_id=row["run_id"],
        agent=row["agent"],
        adapter=row["adapter"],
        trace_id=row["trace_id"],
        model=row["model"],
        trigger=row["trigger"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        outcome=row["outcome"],
        reason=row["reason"],
        cost_usd=row["cost_usd"],
        cost_source=row["cost_source"],
        spawned=bool(row["spawned"]),
        pull_request=row["pull_request"],
        repo=row["repo"],
        branch=row["branch"],
        episode_status=row["episode_status"],
    )


def _body_json(episode: Mapping[str, Any] | None) -> str | None:
    """An episode's body as its column holds it once unpacked (the base its rendering and
    index entry are packed against, :mod:`fleetmem.store.sqlite.packed`)."""
    return None if episode is None else json.dumps(episode, ensure_ascii=False)


def _rendering(stored: str | bytes | None, body: str | None) -> str | None:
    """An episode's rendering as stored beside ``body`` (packed against it).

    A body edited behind the store's back (by hand, in SQL) leaves the rendering unreadable;
    it is then rendered again from the body as it now is, rather than failing every read.
    """
    try:
        return unpack(stored, body)
    except ValueError:
        if body is None:
            return None
        try:
            return render_text(Episode.from_dict(json.loads(body)))
        except (ValueError, TypeError, KeyError):
            return None


def episode_from_row(row: sqlite3.Row) -> EpisodeRow:
    body = unpack(row["episode_json"])
    return EpisodeRow(
        id=row["id"],
        run_id=row["run_id"],
        agent=row["agent"],
        adapter=row["adapter"],
        model=row["model"],
        repo=row["repo"],
        branch=row["branch"],
        outcome=row["outcome"],
        scope=row["scope"],
        trust_class=row["trust_class"],
        started_at=row["started_at"],
        recorded_at=row["recorded_at"],
        forgotten_at=row["forgotten_at"],
        summary=row["summary"],
        summary_outcome=row["summary_outcome"],
        episode=json.loads(body) if body is not None else None,
        text=_rendering(row["text"], body),
        content_hash=row["content_hash"],
    )


def _index(row: sqlite3.Row) -> IndexRow:
    return IndexRow(
        provider=row["provider"],
        provider_id=row["provider_id"],
        episode_id=row["episode_id"],
        scope=row["scope"],
        recorded_at=row["recorded_at"],
        forgotten_at=row["forgotten_at"],
        state=row["state"],
    )


def _job(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        provider=row["provider"],
        episode_id=row["episode_id"],
        provider_id=row["provider_id"],
        state=row["state"],
        attempts=row["attempts"],
        created_at=row["created_at"],
        next_attempt_at=row["next_attempt_at"],
        last_error=row["last_error"],
    )


class RecordsMixin:
    db: Database

    # ---- runs -------------------------------------------------------------------------
    def run_hash(self, run_id: str) -> str | None:
        row = self.db.conn.execute(
            "SELECT record_hash FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def insert_run(
        self,
        run: RunRow,
        sessions: Sequence[SessionRow],
        events: Sequence[EventRow],
        record_json: str,
        record_hash: str,
        now: float,
    ) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO runs ({_RUN_COLUMNS}, record_json, record_hash, ingested_at)"
                f" VALUES ({_placeholders(20)})",
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
                    pack(record_json),
                    record_hash,
                    now,
                ),
            )
            conn.executemany(
                "INSERT INTO sessions (run_id, session_id, ord, parent_id, subagent, cwd, repo,"
                " branch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
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
            conn.executemany(
                "INSERT INTO events (run_id, session_id, seq, type, path, passed, error_class)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
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
        row = self.db.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ? AND {LISTED}",
            (run_id,),
        ).fetchone()
        return None if row is None else _run(row)

    def latest_run(self, agent: str) -> RunRow | None:
        row = self.db.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE agent = ? AND {LISTED}"
            " ORDER BY started_at DESC,"
            " run_id DESC LIMIT 1",
            (agent,),
        ).fetchone()
        return None if row is None else _run(row)

    def linked_pull_request(self, repo: str, branch: str, before: float) -> str | None:
        # runs_pull_requests (migration 23), a partial index of the runs that linked one.
        row = self.db.conn.execute(
            "SELECT pull_request FROM runs WHERE repo = ? AND branch = ? AND started_at < ?"
            " AND pull_request IS NOT NULL ORDER BY started_at DESC, run_id DESC LIMIT 1",
            (repo, branch, before),
        ).fetchone()
        return None if row is None else str(row[0])

    def run_status_counts(self) -> dict[str, int]:
        rows = self.db.conn.execute(
            f"SELECT episode_status, count(*) FROM runs WHERE {LISTED} GROUP BY episode_status"
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    # ---- episodes ---------------------------------------------------------------------
    def insert_episode(self, row: EpisodeRow, *, record_job_provider: str | None) -> None:
        body = _body_json(row.episode)
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO episodes ({_EPISODE_COLUMNS}) VALUES ({_placeholders(18)})",
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
                    pack(body),
                    # The rendering repeats the body's values: packed against it, a third of
                    # its size alone.
                    pack_against(row.text, body),
                    row.content_hash,
                ),
            )
            if record_job_provider is not None:
                # Queued in the same transaction, so a crash between storing the episode and
                # sending it to the provider leaves a job behind rather than a lost record.
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
        body = _body_json(episode)
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT rowid, episode_json FROM episodes WHERE id = ? AND forgotten_at IS NULL",
                (episode_id,),
            ).fetchone()
            if found is None:
                return
            # The index entry was packed against the body being replaced.
            fts_source.rebase(conn, int(found[0]), unpack(found[1]), body)
            conn.execute(
                "UPDATE episodes SET summary = ?, summary_outcome = ?, episode_json = ?,"
                " text = ?, content_hash = ? WHERE rowid = ?",
                (
                    summary,
                    summary_outcome,
                    pack(body),
                    pack_against(text, body),
                    content_hash,
                    int(found[0]),
                ),
            )

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        row = self.db.conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
        ).fetchone()
        return None if row is None else episode_from_row(row)

    def get_episodes(
        self, episode_ids: Sequence[str], *, bodies: bool = True
    ) -> dict[str, EpisodeRow]:
        out: dict[str, EpisodeRow] = {}
        ids = list(dict.fromkeys(episode_ids))
        columns = _EPISODE_COLUMNS if bodies else _HEAD_COLUMNS
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = _placeholders(len(chunk))
            rows = self.db.conn.execute(
                f"SELECT {columns} FROM episodes WHERE id IN ({marks})", chunk
            ).fetchall()
            for r in rows:
                out[r["id"]] = episode_from_row(r)
        return out

    def list_episodes(self, flt: EpisodeFilter) -> list[EpisodeRow]:
        where: list[str] = []
        args: list[Any] = []
        if flt.agent is not None:
            where.append("agent = ?")
            args.append(flt.agent)
        if flt.repo is not None:
            where.append("repo = ?")
            args.append(flt.repo)
        if flt.since is not None:
            where.append("started_at >= ?")
            args.append(flt.since)
        if not flt.include_forgotten:
            where.append("forgotten_at IS NULL")
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes{clause}"
            " ORDER BY started_at DESC, id DESC LIMIT ?",
            [*args, flt.limit],
        ).fetchall()
        return [episode_from_row(r) for r in rows]

    def episode_scopes(self) -> list[str]:
        """Every scope holding a live episode, sorted (an operator's recall everywhere)."""
        # One step of the (scope, started_at) index per distinct scope.
        rows = self.db.conn.execute(
            "SELECT DISTINCT scope FROM episodes WHERE forgotten_at IS NULL ORDER BY scope"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def tombstone_episode(self, episode_id: str, now: float) -> list[IndexRow]:
        """Mark forgotten, drop the body and queue a forget per provider id, atomically.

        Returns the index rows whose provider still has to forget them.
        """
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT rowid, episode_json, run_id FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
            if found is not None:
                # Its index entry stays until the provider's forget takes it out, and was
                # packed against the body about to go: it must be readable without it.
                fts_source.rebase(conn, int(found[0]), unpack(found[1]), None)
            conn.execute(
                "UPDATE episodes SET forgotten_at = coalesce(forgotten_at, ?), episode_json = NULL,"
                " text = NULL, summary = NULL WHERE id = ?",
                (now, episode_id),
            )
            # Its run's text and files go with it: no surface shows what was forgotten.
            if found is not None:
                scrub_run(conn, str(found[2]))
            conn.execute(
                "UPDATE provider_index SET forgotten_at = coalesce(forgotten_at, ?),"
                " state = CASE WHEN state = 'recorded' THEN 'forget_pending' ELSE state END"
                " WHERE episode_id = ?",
                (now, episode_id),
            )
            # A record that has not happened yet must not happen after a forget. A job row is
            # deleted once it is done (see finish_job), a cancelled one likewise.
            conn.execute(
                "DELETE FROM jobs WHERE kind = 'record' AND episode_id = ? AND state = 'pending'",
                (episode_id,),
            )
            rows = conn.execute(
                "SELECT * FROM provider_index WHERE episode_id = ? AND state = 'forget_pending'",
                (episode_id,),
            ).fetchall()
            pending = [_index(r) for r in rows]
            for row in pending:
                self.enqueue("forget", row.provider, episode_id, row.provider_id, now)
            return pending

    def episodes_started_before(self, cutoff: float, limit: int) -> list[str]:
        rows = self.db.conn.execute(
            "SELECT id FROM episodes WHERE started_at < ? AND forgotten_at IS NULL"
            " ORDER BY started_at LIMIT ?",
            (cutoff, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def episode_counts(self) -> dict[str, int]:
        row = self.db.conn.execute(
            "SELECT count(*), sum(forgotten_at IS NULL), sum(forgotten_at IS NOT NULL),"
            " sum(summary IS NOT NULL) FROM episodes"
        ).fetchone()
        return {
            "total": int(row[0] or 0),
            "live": int(row[1] or 0),
            "forgotten": int(row[2] or 0),
            "with_summary": int(row[3] or 0),
        }

    # ---- provider index ---------------------------------------------------------------
    def add_index_rows(
        self, provider: str, provider_ids: Sequence[str], episode_id: str, scope: str, now: float
    ) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO provider_index (provider, provider_id, episode_id, scope,"
                " recorded_at, forgotten_at, state) VALUES (?, ?, ?, ?, ?, NULL, 'recorded')"
                " ON CONFLICT (provider, provider_id) DO NOTHING",
                [(provider, pid, episode_id, scope, now) for pid in provider_ids],
            )

    def index_rows(self, provider: str, provider_ids: Sequence[str]) -> dict[str, IndexRow]:
        out: dict[str, IndexRow] = {}
        ids = list(dict.fromkeys(provider_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.conn.execute(
                "SELECT * FROM provider_index WHERE provider = ? AND provider_id IN"
                f" ({_placeholders(len(chunk))})",
                [provider, *chunk],
            ).fetchall()
            for r in rows:
                out[r["provider_id"]] = _index(r)
        return out

    def index_rows_for_episode(self, episode_id: str) -> list[IndexRow]:
        rows = self.db.conn.execute(
            "SELECT * FROM provider_index WHERE episode_id = ? ORDER BY provider, provider_id",
            (episode_id,),
        ).fetchall()
        return [_index(r) for r in rows]

    def set_index_state(self, provider: str, provider_id: str, state: IndexState) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE provider_index SET state = ? WHERE provider = ? AND provider_id = ?",
                (state, provider, provider_id),
            )

    # ---- jobs -------------------------------------------------------------------------
    def enqueue(
        self, kind: JobKind, provider: str, episode_id: str, provider_id: str | None, now: float
    ) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO jobs (kind, provider, episode_id, provider_id, state, attempts,"
                " created_at, next_attempt_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (kind, provider, episode_id, provider_id, now, now),
            )

    def due_jobs(self, now: float, limit: int, *, episode_id: str | None = None) -> list[Job]:
        # One store file has one daemon: nothing to claim (the PostgreSQL store claims).
        only, args = ("", ()) if episode_id is None else (" AND episode_id = ?", (episode_id,))
        rows = self.db.conn.execute(
            "SELECT * FROM jobs WHERE state = 'pending' AND next_attempt_at <= ?"
            f"{only} ORDER BY next_attempt_at, id LIMIT ?",
            (now, *args, limit),
        ).fetchall()
        return [_job(r) for r in rows]

    def finish_job(self, job_id: int) -> None:
        # Nothing reads a finished job (counts leave them out, a pending one is what stops a
        # duplicate), and one store file has one daemon, with no claim to keep: the row goes
        # (105 bytes an episode at 100,000, every episode leaving one record job behind).
        with self.db.write() as conn:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def retry_job(self, job_id: int, next_attempt_at: float, error: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE jobs SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?"
                " WHERE id = ?",
                (next_attempt_at, error[:500], job_id),
            )

    def fail_job(self, job_id: int, error: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'failed', attempts = attempts + 1, last_error = ?"
                " WHERE id = ?",
                (error[:500], job_id),
            )

    def job_counts(self) -> dict[tuple[str, str], int]:
        rows = self.db.conn.execute(
            "SELECT kind, state, count(*) FROM jobs WHERE state != 'done' GROUP BY kind, state"
        ).fetchall()
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}

    def oldest_pending(self, kind: JobKind) -> float | None:
        row = self.db.conn.execute(
            "SELECT min(created_at) FROM jobs WHERE state = 'pending' AND kind = ?", (kind,)
        ).fetchone()
        return None if row[0] is None else float(row[0])
