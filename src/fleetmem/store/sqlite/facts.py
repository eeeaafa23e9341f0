"""Facts in SQLite: the rows behind :class:`fleetmem.store.facts.FactStore`.

Vectors live in the shared ``embeddings`` cache (content hash + model id) and are linked to
facts in ``fact_vectors``; a per-process dictionary keeps decoded vectors so a search over a
workspace's 2,000 facts reads no blobs once they are warm.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from fleetmem.core.facts import Tally
from fleetmem.store.facts import (
    ExposureRow,
    FactFilter,
    FactRow,
    JournalRow,
    ProvenanceRow,
    RevisionRow,
    SearchRow,
    VectorMatrix,
    VoteRow,
)
from fleetmem.store.sqlite.db import Database

_FACT_COLUMNS = (
    "id, workspace, body, norm, kind, scope, status, pinned, pinned_at, origin, author, run_id,"
    " conversation, source, revision, content_hash, created_at, updated_at, confirmed_at,"
    " forgotten_at, forgotten_from, merged_into, idempotency_key"
)
_N_FACT_COLUMNS = 23
_CHUNK = 500


class _RankRow(NamedTuple):
    id: str
    norm: str
    content_hash: str
    created_at: float
    status: str
    scope: str


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _fact(row: sqlite3.Row) -> FactRow:
    return FactRow(
        id=row["id"],
        workspace=row["workspace"],
        body=row["body"],
        norm=row["norm"],
        kind=row["kind"],
        scope=row["scope"],
        status=row["status"],
        pinned=bool(row["pinned"]),
        pinned_at=row["pinned_at"],
        origin=row["origin"],
        author=row["author"],
        run_id=row["run_id"],
        conversation=row["conversation"],
        source=row["source"],
        revision=int(row["revision"]),
        content_hash=row["content_hash"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        confirmed_at=row["confirmed_at"],
        forgotten_at=row["forgotten_at"],
        forgotten_from=row["forgotten_from"],
        merged_into=row["merged_into"],
        idempotency_key=row["idempotency_key"],
    )


def _values(f: FactRow) -> tuple[Any, ...]:
    return (
        f.id,
        f.workspace,
        f.body,
        f.norm,
        f.kind,
        f.scope,
        f.status,
        int(f.pinned),
        f.pinned_at,
        f.origin,
        f.author,
        f.run_id,
        f.conversation,
        f.source,
        f.revision,
        f.content_hash,
        f.created_at,
        f.updated_at,
        f.confirmed_at,
        f.forgotten_at,
        f.forgotten_from,
        f.merged_into,
        f.idempotency_key,
    )


def _json(value: object) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


class FactsMixin:
    db: Database

    def _fact_matrix_cache(
        self,
    ) -> tuple[dict[tuple[str, str], tuple[str, VectorMatrix]], threading.Lock]:
        cache: dict[tuple[str, str], tuple[str, VectorMatrix]] | None = getattr(
            self, "_fact_matrices", None
        )
        if cache is None:
            cache = {}
            self._fact_matrices = cache
            self._fact_matrix_lock = threading.Lock()
        return cache, self._fact_matrix_lock

    @staticmethod
    def _bump(conn: sqlite3.Connection, key: str) -> None:
        """Count one change in ``meta`` (created on first use: a store whose facts tables came
        from an earlier build of migration 2 lacks the row)."""
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
            " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (key,),
        )

    def _generation(self, key: str) -> str:
        row = self.db.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return "0" if row is None else str(row[0])

    def _ranking_rows(self, workspace: str) -> tuple[_RankRow, ...]:
        """Every fact of a workspace as search sees it, reread only after a fact changed (in
        any process: the generation lives in the store)."""
        generation = self._generation("fact_generation")
        cache: dict[str, tuple[str, tuple[_RankRow, ...]]] | None = getattr(
            self, "_fact_rank_rows", None
        )
        if cache is None:
            cache = {}
            self._fact_rank_rows = cache
        hit = cache.get(workspace)
        if hit is not None and hit[0] == generation:
            return hit[1]
        rows = tuple(
            _RankRow(*r)
            for r in self.db.conn.execute(
                "SELECT id, norm, content_hash, created_at, status, scope FROM facts"
                " WHERE workspace = ?",
                (workspace,),
            )
        )
        cache[workspace] = (generation, rows)
        return rows

    def _bump_fact_vectors(self, conn: sqlite3.Connection) -> None:
        self._bump(conn, "fact_vector_generation")

    def fact_insert(self, row: FactRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({_marks(_N_FACT_COLUMNS)})",
                _values(row),
            )
            self._bump(conn, "fact_generation")

    def fact_update(self, row: FactRow) -> None:
        names = [c.strip() for c in _FACT_COLUMNS.split(",")][2:]
        assignments = ", ".join(f"{name} = ?" for name in names)
        with self.db.write() as conn:
            changed = conn.execute(
                f"UPDATE facts SET {assignments} WHERE id = ? AND workspace = ?",
                (*_values(row)[2:], row.id, row.workspace),
            ).rowcount
            if changed != 1:
                raise KeyError(row.id)
            self._bump(conn, "fact_generation")

    def fact_get(self, workspace: str, fact_id: str) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE id = ? AND workspace = ?",
            (fact_id, workspace),
        ).fetchone()
        return None if row is None else _fact(row)

    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]:
        ids = list(dict.fromkeys(fact_ids))
        out: dict[str, FactRow] = {}
        # "+workspace" keeps the lookup on the primary key: without statistics SQLite would
        # walk the workspace's index and test each of its rows against the id list.
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            for row in self.db.conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE +workspace = ? AND id IN"
                f" ({_marks(len(chunk))})",
                [workspace, *chunk],
            ):
                out[row["id"]] = _fact(row)
        return out

    def fact_list(self, workspace: str, flt: FactFilter) -> list[FactRow]:
        where = ["workspace = ?"]
        args: list[Any] = [workspace]
        if flt.statuses is not None:
            where.append(f"status IN ({_marks(len(flt.statuses))})")
            args.extend(flt.statuses)
        if flt.scopes is not None:
            where.append(f"scope IN ({_marks(len(flt.scopes))})")
            args.extend(flt.scopes)
        if flt.pinned is not None:
            where.append("pinned = ?")
            args.append(int(flt.pinned))
        if flt.before is not None:
            where.append("(created_at < ? OR (created_at = ? AND id < ?))")
            args.extend([flt.before[0], flt.before[0], flt.before[1]])
        rows = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            [*args, flt.limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    def fact_status_counts(self, workspace: str) -> dict[str, int]:
        rows = self.db.conn.execute(
            "SELECT status, count(*) FROM facts WHERE workspace = ? GROUP BY status", (workspace,)
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def fact_pinned_count(self, workspace: str, statuses: Sequence[str]) -> int:
        row = self.db.conn.execute(
            f"SELECT count(*) FROM facts WHERE workspace = ? AND pinned = 1"
            f" AND status IN ({_marks(len(statuses))})",
            [workspace, *statuses],
        ).fetchone()
        return int(row[0])

    def fact_find_norm(
        self, workspace: str, scope: str, norm: str, statuses: Sequence[str]
    ) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE workspace = ? AND norm = ? AND scope = ?"
            f" AND status IN ({_marks(len(statuses))}) ORDER BY created_at, id LIMIT 1",
            [workspace, norm, scope, *statuses],
        ).fetchone()
        return None if row is None else _fact(row)

    def fact_by_idempotency(self, workspace: str, key: str) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE workspace = ? AND idempotency_key = ?",
            (workspace, key),
        ).fetchone()
        return None if row is None else _fact(row)

    def fact_candidates(
        self, workspace: str, statuses: Sequence[str], scopes: Sequence[str] | None
    ) -> list[FactRow]:
        where = f"workspace = ? AND status IN ({_marks(len(statuses))})"
        args: list[Any] = [workspace, *statuses]
        if scopes is not None:
            where += f" AND scope IN ({_marks(len(scopes))})"
            args.extend(scopes)
        rows = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where} ORDER BY created_at DESC, id DESC",
            args,
        ).fetchall()
        return [_fact(r) for r in rows]

    def fact_search_rows(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str] | None,
        *,
        ids: Sequence[str],
        phrase: str,
        words: Sequence[str],
        ids_if_worded: Sequence[str] = (),
    ) -> list[SearchRow]:
        """Facts among ``ids``, among ``ids_if_worded`` when they contain one of ``words``, or
        matching ``phrase`` / all ``words`` literally; with how many of ``words`` each
        contains (substrings of the normalized body: :func:`fleetmem.core.facts.literal_matcher`
        over rows cached until a fact changes)."""
        wanted, worded = set(ids), set(ids_if_worded)
        allowed_status = set(statuses)
        allowed_scope = None if scopes is None else set(scopes)
        out: list[SearchRow] = []
        for row in self._ranking_rows(workspace):
            if row.status not in allowed_status:
                continue
            if allowed_scope is not None and row.scope not in allowed_scope:
                continue
            norm = row.norm
            literal = None
            if phrase and phrase in norm:
                literal = "phrase"
            elif words:
                for word in words:
                    if word not in norm:
                        break
                else:
                    literal = "words"
            if literal is None and row.id not in wanted and row.id not in worded:
                continue
            found = len(words) if literal == "words" else sum(word in norm for word in words)
            if literal is None and row.id not in wanted and not found:
                continue
            out.append(SearchRow(row.id, row.content_hash, row.created_at, literal, found))
        return out

    def fact_top_unvoted(
        self,
        workspace: str,
        statuses: Sequence[str],
        scopes: Sequence[str],
        *,
        exclude: Sequence[str],
        limit: int,
    ) -> list[FactRow]:
        """Unpinned facts outside ``exclude`` in the order their confidence prior ranks them:
        a person's word first (written or confirmed by one), then newest update, then id."""
        exclude = list(exclude)
        rows = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE workspace = ? AND pinned = 0"
            f" AND status IN ({_marks(len(statuses))}) AND scope IN ({_marks(len(scopes))})"
            f" AND id NOT IN ({_marks(len(exclude))})"
            " ORDER BY (origin = 'human' OR confirmed_at IS NOT NULL) DESC, updated_at DESC,"
            " id LIMIT ?",
            [workspace, *statuses, *scopes, *exclude, limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    def fact_pending_vectors(self, workspace: str, model_id: str, statuses: Sequence[str]) -> int:
        """Facts whose current body has no vector under ``model_id`` yet."""
        embedded = set(self._matrix_pairs(workspace, model_id))
        allowed = set(statuses)
        return sum(
            1
            for row in self._ranking_rows(workspace)
            if row.status in allowed and (row.id, row.content_hash) not in embedded
        )

    def _matrix_pairs(self, workspace: str, model_id: str) -> frozenset[tuple[str, str]]:
        found = self.fact_matrix(workspace, model_id)
        return frozenset(zip(found.ids, found.hashes, strict=True))

    def fact_expired(self, cutoff: float, statuses: Sequence[str], limit: int) -> list[FactRow]:
        rows = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE status IN ({_marks(len(statuses))})"
            " AND coalesce(forgotten_at, updated_at) < ? ORDER BY updated_at LIMIT ?",
            [*statuses, cutoff, limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    def fact_purge(self, workspace: str, fact_id: str) -> None:
        """Delete the fact, its bodies, provenance and vector links; the journal stays."""
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT 1 FROM facts WHERE id = ? AND workspace = ?", (fact_id, workspace)
            ).fetchone()
            if found is None:
                return
            hashes = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT content_hash FROM fact_vectors WHERE fact_id = ?", (fact_id,)
                )
            ]
            if conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (fact_id,)).rowcount:
                self._bump_fact_vectors(conn)
            conn.execute("DELETE FROM fact_revisions WHERE fact_id = ?", (fact_id,))
            conn.execute("DELETE FROM fact_provenance WHERE fact_id = ?", (fact_id,))
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            self._bump(conn, "fact_generation")
            for digest in hashes:
                # The cached vector of a purged body goes too, unless something else uses it.
                conn.execute(
                    "DELETE FROM embeddings WHERE content_hash = ?"
                    " AND NOT EXISTS (SELECT 1 FROM fact_vectors WHERE content_hash = ?)"
                    " AND NOT EXISTS (SELECT 1 FROM builtin_vectors WHERE content_hash = ?)",
                    (digest, digest, digest),
                )

    # ---- vectors ------------------------------------------------------------------------
    def fact_link_vector(self, fact_id: str, model_id: str, content_hash: str) -> None:
        with self.db.write() as conn:
            current = conn.execute(
                "SELECT content_hash FROM fact_vectors WHERE fact_id = ? AND model_id = ?",
                (fact_id, model_id),
            ).fetchone()
            if current is not None and current[0] == content_hash:
                return
            conn.execute(
                "INSERT INTO fact_vectors (fact_id, model_id, content_hash) VALUES (?, ?, ?)"
                " ON CONFLICT (fact_id, model_id)"
                " DO UPDATE SET content_hash = excluded.content_hash",
                (fact_id, model_id, content_hash),
            )
            self._bump_fact_vectors(conn)

    def fact_matrix(self, workspace: str, model_id: str) -> VectorMatrix:
        """All of a workspace's fact vectors under ``model_id``, rebuilt only when a vector
        link changed since the last call (in any process: the generation lives in the store)."""
        generation = self._generation("fact_vector_generation")
        cache, lock = self._fact_matrix_cache()
        key = (workspace, model_id)
        with lock:
            hit = cache.get(key)
            if hit is not None and hit[0] == generation:
                return hit[1]
        rows = self.db.conn.execute(
            "SELECT v.fact_id, v.content_hash, e.dim, e.vector FROM fact_vectors v"
            " JOIN facts f ON f.id = v.fact_id JOIN embeddings e ON e.content_hash ="
            " v.content_hash AND e.model_id = v.model_id WHERE f.workspace = ? AND"
            " v.model_id = ? ORDER BY v.fact_id",
            (workspace, model_id),
        ).fetchall()
        dim = int(rows[0][2]) if rows else 0
        good = [r for r in rows if int(r[2]) == dim]
        matrix = (
            np.frombuffer(b"".join(r[3] for r in good), dtype=np.float32).reshape(-1, dim)
            if good
            else np.zeros((0, 0), dtype=np.float32)
        )
        built = VectorMatrix(
            ids=tuple(str(r[0]) for r in good),
            hashes=tuple(str(r[1]) for r in good),
            matrix=matrix,
        )
        with lock:
            cache[key] = (generation, built)
        return built

    def fact_missing_vectors(
        self, model_id: str, statuses: Sequence[str], limit: int
    ) -> list[FactRow]:
        rows = self.db.conn.execute(
            f"SELECT {_FACT_COLUMNS} FROM facts f WHERE status IN ({_marks(len(statuses))})"
            " AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.fact_id = f.id"
            " AND v.model_id = ? AND v.content_hash = f.content_hash)"
            " ORDER BY created_at DESC LIMIT ?",
            [*statuses, model_id, limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    # ---- revisions, provenance, journal ------------------------------------------------
    def fact_add_revision(self, row: RevisionRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_revisions (fact_id, revision, body, actor_kind, actor, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (row.fact_id, row.revision, row.body, row.actor_kind, row.actor, row.at),
            )

    def fact_revisions(self, fact_id: str) -> list[RevisionRow]:
        rows = self.db.conn.execute(
            "SELECT fact_id, revision, body, actor_kind, actor, at FROM fact_revisions"
            " WHERE fact_id = ? ORDER BY revision",
            (fact_id,),
        ).fetchall()
        return [RevisionRow(*tuple(r)) for r in rows]

    def fact_add_provenance(self, rows: Sequence[ProvenanceRow]) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO fact_provenance (fact_id, origin, author, run_id, conversation,"
                " merged_from, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (p.fact_id, p.origin, p.author, p.run_id, p.conversation, p.merged_from, p.at)
                    for p in rows
                ],
            )

    def fact_provenance(self, fact_id: str) -> list[ProvenanceRow]:
        rows = self.db.conn.execute(
            "SELECT fact_id, origin, author, run_id, conversation, merged_from, at"
            " FROM fact_provenance WHERE fact_id = ? ORDER BY seq",
            (fact_id,),
        ).fetchall()
        return [ProvenanceRow(*tuple(r)) for r in rows]

    def fact_journal_add(self, row: JournalRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_journal (workspace, fact_id, action, actor_kind, actor, run_id,"
                " at, before_json, after_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.workspace,
                    row.fact_id,
                    row.action,
                    row.actor_kind,
                    row.actor,
                    row.run_id,
                    row.at,
                    _json(row.before),
                    _json(row.after),
                ),
            )

    def fact_journal(self, workspace: str, fact_id: str | None = None) -> list[JournalRow]:
        sql = (
            "SELECT seq, workspace, fact_id, action, actor_kind, actor, run_id, at, before_json,"
            " after_json FROM fact_journal WHERE workspace = ?"
        )
        args: list[Any] = [workspace]
        if fact_id is not None:
            sql += " AND fact_id = ?"
            args.append(fact_id)
        rows = self.db.conn.execute(sql + " ORDER BY seq", args).fetchall()
        return [
            JournalRow(
                workspace=r["workspace"],
                fact_id=r["fact_id"],
                action=r["action"],
                actor_kind=r["actor_kind"],
                actor=r["actor"],
                run_id=r["run_id"],
                at=r["at"],
                before=None if r["before_json"] is None else json.loads(r["before_json"]),
                after=None if r["after_json"] is None else json.loads(r["after_json"]),
                seq=int(r["seq"]),
            )
            for r in rows
        ]

    # ---- exposure and votes ------------------------------------------------------------
    def fact_add_exposures(self, rows: Sequence[ExposureRow]) -> int:
        """Record exposures; a counted vote by an exposed run stops counting. Returns how
        many votes were uncounted."""
        uncounted = 0
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO fact_exposures (workspace, run_id, fact_id, revision, surface,"
                " served_as, call_id, agent, repo, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        e.workspace,
                        e.run_id,
                        e.fact_id,
                        e.revision,
                        e.surface,
                        e.served_as,
                        e.call_id,
                        e.agent,
                        e.repo,
                        e.at,
                    )
                    for e in rows
                ],
            )
            for e in rows:
                uncounted += conn.execute(
                    "UPDATE fact_votes SET counted = 0, reason = 'exposed' WHERE workspace = ?"
                    " AND fact_id = ? AND run_id = ? AND counted = 1",
                    (e.workspace, e.fact_id, e.run_id),
                ).rowcount
        return uncounted

    def fact_exposures(
        self, workspace: str, *, run_id: str | None = None, fact_id: str | None = None
    ) -> list[ExposureRow]:
        sql = (
            "SELECT workspace, run_id, fact_id, revision, surface, served_as, call_id, agent,"
            " repo, at FROM fact_exposures WHERE workspace = ?"
        )
        args: list[Any] = [workspace]
        if run_id is not None:
            sql += " AND run_id = ?"
            args.append(run_id)
        if fact_id is not None:
            sql += " AND fact_id = ?"
            args.append(fact_id)
        rows = self.db.conn.execute(sql + " ORDER BY seq", args).fetchall()
        return [ExposureRow(*tuple(r)) for r in rows]

    def fact_was_exposed(self, workspace: str, run_id: str, fact_id: str) -> bool:
        row = self.db.conn.execute(
            "SELECT 1 FROM fact_exposures WHERE workspace = ? AND run_id = ? AND fact_id = ?"
            " LIMIT 1",
            (workspace, run_id, fact_id),
        ).fetchone()
        return row is not None

    def fact_in_flight(self, workspace: str, fact_id: str, revision: int, since: float) -> int:
        """Runs shown an older revision since ``since`` whose run record has not arrived."""
        row = self.db.conn.execute(
            "SELECT count(DISTINCT x.run_id) FROM fact_exposures x WHERE x.workspace = ?"
            " AND x.fact_id = ? AND x.revision < ? AND x.at >= ?"
            " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = x.run_id)",
            (workspace, fact_id, revision, since),
        ).fetchone()
        return int(row[0])

    def fact_vote_get(self, workspace: str, fact_id: str, run_id: str) -> VoteRow | None:
        row = self.db.conn.execute(
            "SELECT seq, workspace, fact_id, revision, run_id, agent, repo, stance, counted,"
            " reason, at FROM fact_votes WHERE workspace = ? AND fact_id = ? AND run_id = ?",
            (workspace, fact_id, run_id),
        ).fetchone()
        return None if row is None else _vote(row)

    def fact_vote_add(self, row: VoteRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_votes (workspace, fact_id, revision, run_id, agent, repo,"
                " stance, counted, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.workspace,
                    row.fact_id,
                    row.revision,
                    row.run_id,
                    row.agent,
                    row.repo,
                    row.stance,
                    int(row.counted),
                    row.reason,
                    row.at,
                ),
            )

    def fact_votes(self, workspace: str, fact_id: str) -> list[VoteRow]:
        rows = self.db.conn.execute(
            "SELECT seq, workspace, fact_id, revision, run_id, agent, repo, stance, counted,"
            " reason, at FROM fact_votes WHERE workspace = ? AND fact_id = ? ORDER BY seq",
            (workspace, fact_id),
        ).fetchall()
        return [_vote(r) for r in rows]

    def fact_tally(
        self, workspace: str, fact_id: str, revision: int, stance: str, since: float
    ) -> Tally:
        row = self.db.conn.execute(
            "SELECT count(DISTINCT run_id), count(DISTINCT agent), count(DISTINCT repo)"
            " FROM fact_votes WHERE workspace = ? AND fact_id = ? AND revision = ?"
            " AND stance = ? AND counted = 1 AND at >= ?",
            (workspace, fact_id, revision, stance, since),
        ).fetchone()
        return Tally(runs=int(row[0]), agents=int(row[1]), repos=int(row[2]))

    def fact_tallies(self, workspace: str) -> dict[str, tuple[Tally, Tally]]:
        """(support, contradict) of counted votes on each fact's current revision."""
        rows = self.db.conn.execute(
            "SELECT v.fact_id, v.stance, count(DISTINCT v.run_id), count(DISTINCT v.agent),"
            " count(DISTINCT v.repo) FROM fact_votes v JOIN facts f ON f.id = v.fact_id"
            " AND f.revision = v.revision WHERE v.workspace = ? AND v.counted = 1"
            " GROUP BY v.fact_id, v.stance",
            (workspace,),
        ).fetchall()
        out: dict[str, tuple[Tally, Tally]] = {}
        for fact_id, stance, runs, agents, repos in rows:
            support, contradict = out.get(fact_id, (Tally(), Tally()))
            tally = Tally(runs=int(runs), agents=int(agents), repos=int(repos))
            out[fact_id] = (tally, contradict) if stance == "support" else (support, tally)
        return out

    # ---- rate limits --------------------------------------------------------------------
    def fact_rate_hits(self, workspace: str, actor: str, bucket: str, since: float) -> list[float]:
        rows = self.db.conn.execute(
            "SELECT at FROM fact_rate WHERE workspace = ? AND actor = ? AND bucket = ?"
            " AND at >= ? ORDER BY at",
            (workspace, actor, bucket, since),
        ).fetchall()
        return [float(r[0]) for r in rows]

    def fact_rate_add(self, workspace: str, actor: str, bucket: str, at: float) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_rate (workspace, actor, bucket, at) VALUES (?, ?, ?, ?)",
                (workspace, actor, bucket, at),
            )
            # Windows are at most an hour; older hits are never read again.
            conn.execute(
                "DELETE FROM fact_rate WHERE workspace = ? AND actor = ? AND bucket = ? AND at < ?",
                (workspace, actor, bucket, at - 86_400.0),
            )


def _vote(r: sqlite3.Row) -> VoteRow:
    return VoteRow(
        workspace=r["workspace"],
        fact_id=r["fact_id"],
        revision=int(r["revision"]),
        run_id=r["run_id"],
        agent=r["agent"],
        repo=r["repo"],
        stance=r["stance"],
        counted=bool(r["counted"]),
        reason=r["reason"],
        at=r["at"],
        seq=int(r["seq"]),
    )
