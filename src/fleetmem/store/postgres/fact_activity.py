"""Facts in PostgreSQL, the writing half: fact rows, purges and vector links; revisions,
provenance and the append-only journal; exposures, votes and their tallies; rate limits.

Every change to a fact or its vector link bumps a generation in ``meta`` (as the SQLite
store's ``fact_activity.py`` does), which the reading half compares to know when its
in-memory copies are stale, in this process or any other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from fleetmem.core.facts import Tally
from fleetmem.store.facts import (
    ExposureRow,
    FactRow,
    JournalRow,
    KeptPairRow,
    ProvenanceRow,
    RevisionRow,
    VoteRow,
)
from fleetmem.store.postgres.db import PgDatabase, Row

FACT_COLUMNS = (
    "id, workspace, body, norm, kind, scope, status, pinned, pinned_at, origin, author, run_id,"
    " conversation, source, revision, content_hash, created_at, updated_at, confirmed_at,"
    " forgotten_at, forgotten_from, merged_into, idempotency_key"
)
_FACT_NAMES = [c.strip() for c in FACT_COLUMNS.split(",")]
_VOTE_COLUMNS = (
    "seq, workspace, fact_id, revision, run_id, agent, repo, stance, counted, reason, at, note"
)


_JOURNAL_COLUMNS = (
    "seq, workspace, fact_id, action, actor_kind, actor, run_id, at, before_json, after_json"
)


def _journal(r: Row) -> JournalRow:
    return JournalRow(
        workspace=r[1],
        fact_id=r[2],
        action=r[3],
        actor_kind=r[4],
        actor=r[5],
        run_id=r[6],
        at=r[7],
        before=None if r[8] is None else json.loads(r[8]),
        after=None if r[9] is None else json.loads(r[9]),
        seq=int(r[0]),
    )


def fact_row(r: Row) -> FactRow:
    values = list(r)
    values[7] = bool(values[7])  # pinned
    return FactRow(*values)


def fact_values(f: FactRow) -> tuple[Any, ...]:
    """A record's values in :data:`FACT_COLUMNS` order."""
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


def _to_json(value: object) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _vote(r: Row) -> VoteRow:
    return VoteRow(
        workspace=r[1],
        fact_id=r[2],
        revision=int(r[3]),
        run_id=r[4],
        agent=r[5],
        repo=r[6],
        stance=r[7],
        counted=bool(r[8]),
        reason=r[9],
        at=r[10],
        seq=int(r[0]),
        note=r[11],
    )


def bump(conn: psycopg.Connection[Any], key: str) -> None:
    """Count one change in ``meta``."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, '1') ON CONFLICT (key)"
        " DO UPDATE SET value = (meta.value::bigint + 1)::text",
        (key,),
    )


class FactActivityMixin:
    """Writes and the records kept around each fact (see the module docstring)."""

    db: PgDatabase

    # ---- writes -------------------------------------------------------------------------
    def fact_insert(self, row: FactRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({', '.join(['%s'] * 23)})",
                fact_values(row),
            )
            bump(conn, "fact_generation")

    def fact_update(self, row: FactRow) -> None:
        assignments = ", ".join(f"{name} = %s" for name in _FACT_NAMES[2:])
        with self.db.write() as conn:
            changed = conn.execute(
                f"UPDATE facts SET {assignments} WHERE id = %s AND workspace = %s",
                (*fact_values(row)[2:], row.id, row.workspace),
            ).rowcount
            if changed != 1:
                raise KeyError(row.id)
            bump(conn, "fact_generation")

    def fact_purge(self, workspace: str, fact_id: str) -> None:
        """Delete the fact, its bodies, provenance and vector links; the journal stays."""
        with self.db.write() as conn:
            found = conn.execute(
                "SELECT 1 FROM facts WHERE id = %s AND workspace = %s FOR UPDATE",
                (fact_id, workspace),
            ).fetchone()
            if found is None:
                return
            hashes = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT content_hash FROM fact_vectors WHERE fact_id = %s",
                    (fact_id,),
                )
            ]
            if conn.execute("DELETE FROM fact_vectors WHERE fact_id = %s", (fact_id,)).rowcount:
                bump(conn, "fact_vector_generation")
            conn.execute("DELETE FROM fact_revisions WHERE fact_id = %s", (fact_id,))
            conn.execute("DELETE FROM fact_provenance WHERE fact_id = %s", (fact_id,))
            # Votes stay (they are counts), but a voter's words may quote the fact's.
            conn.execute(
                "UPDATE fact_votes SET note = NULL WHERE workspace = %s AND fact_id = %s",
                (workspace, fact_id),
            )
            conn.execute("DELETE FROM facts WHERE id = %s", (fact_id,))
            bump(conn, "fact_generation")
            for digest in hashes:
                # The cached vector of a purged body goes too, unless something else uses it.
                conn.execute(
                    "DELETE FROM embeddings WHERE content_hash = %(h)s"
                    " AND NOT EXISTS (SELECT 1 FROM fact_vectors WHERE content_hash = %(h)s)"
                    " AND NOT EXISTS (SELECT 1 FROM builtin_vectors WHERE content_hash = %(h)s)",
                    {"h": digest},
                )

    def fact_link_vector(self, fact_id: str, model_id: str, content_hash: str) -> None:
        with self.db.write() as conn:
            current = conn.execute(
                "SELECT content_hash FROM fact_vectors WHERE fact_id = %s AND model_id = %s",
                (fact_id, model_id),
            ).fetchone()
            if current is not None and current[0] == content_hash:
                return
            conn.execute(
                "INSERT INTO fact_vectors (fact_id, model_id, content_hash) VALUES (%s, %s, %s)"
                " ON CONFLICT (fact_id, model_id)"
                " DO UPDATE SET content_hash = excluded.content_hash",
                (fact_id, model_id, content_hash),
            )
            bump(conn, "fact_vector_generation")

    # ---- revisions, provenance, journal ------------------------------------------------
    def fact_add_revision(self, row: RevisionRow) -> None:
        self.db.run(
            "INSERT INTO fact_revisions (fact_id, revision, body, actor_kind, actor, at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (row.fact_id, row.revision, row.body, row.actor_kind, row.actor, row.at),
        )

    def fact_revisions(self, fact_id: str) -> list[RevisionRow]:
        rows = self.db.rows(
            "SELECT fact_id, revision, body, actor_kind, actor, at FROM fact_revisions"
            " WHERE fact_id = %s ORDER BY revision",
            (fact_id,),
        )
        return [RevisionRow(*r) for r in rows]

    def fact_add_provenance(self, rows: Sequence[ProvenanceRow]) -> None:
        self.db.many(
            "INSERT INTO fact_provenance (fact_id, origin, author, run_id, conversation,"
            " merged_from, at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [
                (p.fact_id, p.origin, p.author, p.run_id, p.conversation, p.merged_from, p.at)
                for p in rows
            ],
        )

    def fact_provenance(self, fact_id: str) -> list[ProvenanceRow]:
        rows = self.db.rows(
            "SELECT fact_id, origin, author, run_id, conversation, merged_from, at"
            " FROM fact_provenance WHERE fact_id = %s ORDER BY seq",
            (fact_id,),
        )
        return [ProvenanceRow(*r) for r in rows]

    def fact_journal_add(self, row: JournalRow) -> None:
        self.db.run(
            "INSERT INTO fact_journal (workspace, fact_id, action, actor_kind, actor, run_id,"
            " at, before_json, after_json) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                row.workspace,
                row.fact_id,
                row.action,
                row.actor_kind,
                row.actor,
                row.run_id,
                row.at,
                _to_json(row.before),
                _to_json(row.after),
            ),
        )

    def fact_journal(self, workspace: str, fact_id: str | None = None) -> list[JournalRow]:
        sql = f"SELECT {_JOURNAL_COLUMNS} FROM fact_journal WHERE workspace = %s"
        args: list[Any] = [workspace]
        if fact_id is not None:
            sql += " AND fact_id = %s"
            args.append(fact_id)
        return [_journal(r) for r in self.db.rows(sql + " ORDER BY seq", args)]

    def fact_journal_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[JournalRow]:
        """The workspace's journal newest first (``at``, then ``seq``, descending), only rows
        strictly before ``before`` = (at, seq) when given; at most ``limit``."""
        sql = f"SELECT {_JOURNAL_COLUMNS} FROM fact_journal WHERE workspace = %s"
        args: list[Any] = [workspace]
        if before is not None:
            sql += " AND (at < %s OR (at = %s AND seq < %s))"
            args += [before[0], before[0], before[1]]
        rows = self.db.rows(sql + " ORDER BY at DESC, seq DESC LIMIT %s", [*args, limit])
        return [_journal(r) for r in rows]

    # ---- exposure and votes ------------------------------------------------------------
    def fact_add_exposures(self, rows: Sequence[ExposureRow]) -> int:
        """Record exposures; a counted vote by an exposed run stops counting. Returns how
        many votes were uncounted."""
        uncounted = 0
        with self.db.write() as conn:
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO fact_exposures (workspace, run_id, fact_id, revision,"
                        " surface, served_as, call_id, agent, repo, at)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
                    "UPDATE fact_votes SET counted = 0, reason = 'exposed' WHERE workspace = %s"
                    " AND fact_id = %s AND run_id = %s AND counted = 1",
                    (e.workspace, e.fact_id, e.run_id),
                ).rowcount
        return uncounted

    def fact_exposures(
        self, workspace: str, *, run_id: str | None = None, fact_id: str | None = None
    ) -> list[ExposureRow]:
        sql = (
            "SELECT workspace, run_id, fact_id, revision, surface, served_as, call_id, agent,"
            " repo, at FROM fact_exposures WHERE workspace = %s"
        )
        args: list[Any] = [workspace]
        if run_id is not None:
            sql += " AND run_id = %s"
            args.append(run_id)
        if fact_id is not None:
            sql += " AND fact_id = %s"
            args.append(fact_id)
        return [ExposureRow(*r) for r in self.db.rows(sql + " ORDER BY seq", args)]

    def fact_was_exposed(self, workspace: str, run_id: str, fact_id: str) -> bool:
        found = self.db.row(
            "SELECT 1 FROM fact_exposures WHERE workspace = %s AND run_id = %s AND fact_id = %s"
            " LIMIT 1",
            (workspace, run_id, fact_id),
        )
        return found is not None

    def fact_in_flight(self, workspace: str, fact_id: str, revision: int, since: float) -> int:
        """Runs shown an older revision since ``since`` whose run record has not arrived."""
        return int(
            self.db.value(
                "SELECT count(DISTINCT x.run_id) FROM fact_exposures x WHERE x.workspace = %s"
                " AND x.fact_id = %s AND x.revision < %s AND x.at >= %s"
                " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = x.run_id)",
                (workspace, fact_id, revision, since),
            )
        )

    def fact_vote_get(self, workspace: str, fact_id: str, run_id: str) -> VoteRow | None:
        found = self.db.row(
            f"SELECT {_VOTE_COLUMNS} FROM fact_votes WHERE workspace = %s AND fact_id = %s"
            " AND run_id = %s",
            (workspace, fact_id, run_id),
        )
        return None if found is None else _vote(found)

    def fact_vote_add(self, row: VoteRow) -> None:
        self.db.run(
            "INSERT INTO fact_votes (workspace, fact_id, revision, run_id, agent, repo,"
            " stance, counted, reason, at, note)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
                row.note,
            ),
        )

    def fact_votes(self, workspace: str, fact_id: str) -> list[VoteRow]:
        rows = self.db.rows(
            f"SELECT {_VOTE_COLUMNS} FROM fact_votes WHERE workspace = %s AND fact_id = %s"
            " ORDER BY seq",
            (workspace, fact_id),
        )
        return [_vote(r) for r in rows]

    def fact_votes_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[VoteRow]:
        """The workspace's votes newest first (``at``, then ``seq``, descending), only those
        strictly before ``before`` = (at, seq) when given; at most ``limit``."""
        sql = f"SELECT {_VOTE_COLUMNS} FROM fact_votes WHERE workspace = %s"
        args: list[Any] = [workspace]
        if before is not None:
            sql += " AND (at < %s OR (at = %s AND seq < %s))"
            args += [before[0], before[0], before[1]]
        rows = self.db.rows(sql + " ORDER BY at DESC, seq DESC LIMIT %s", [*args, limit])
        return [_vote(r) for r in rows]

    def fact_tally(
        self, workspace: str, fact_id: str, revision: int, stance: str, since: float
    ) -> Tally:
        found = self.db.row(
            "SELECT count(DISTINCT run_id), count(DISTINCT agent), count(DISTINCT repo)"
            " FROM fact_votes WHERE workspace = %s AND fact_id = %s AND revision = %s"
            " AND stance = %s AND counted = 1 AND at >= %s",
            (workspace, fact_id, revision, stance, since),
        )
        assert found is not None
        return Tally(runs=int(found[0]), agents=int(found[1]), repos=int(found[2]))

    def fact_tallies(self, workspace: str) -> dict[str, tuple[Tally, Tally]]:
        """(support, contradict) of counted votes on each fact's current revision."""
        rows = self.db.rows(
            "SELECT v.fact_id, v.stance, count(DISTINCT v.run_id), count(DISTINCT v.agent),"
            " count(DISTINCT v.repo) FROM fact_votes v JOIN facts f ON f.id = v.fact_id"
            " AND f.revision = v.revision WHERE v.workspace = %s AND v.counted = 1"
            " GROUP BY v.fact_id, v.stance",
            (workspace,),
        )
        out: dict[str, tuple[Tally, Tally]] = {}
        for fact_id, stance, runs, agents, repos in rows:
            support, contradict = out.get(fact_id, (Tally(), Tally()))
            tally = Tally(runs=int(runs), agents=int(agents), repos=int(repos))
            out[fact_id] = (tally, contradict) if stance == "support" else (support, tally)
        return out

    # ---- pairs kept apart (Tidy up) ------------------------------------------------------
    def fact_keep_pair(self, row: KeptPairRow) -> None:
        self.db.run(
            "INSERT INTO fact_pairs_kept (workspace, first_id, first_revision, second_id,"
            " second_revision, actor, at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (workspace, first_id, second_id) DO UPDATE SET"
            " first_revision = excluded.first_revision,"
            " second_revision = excluded.second_revision,"
            " actor = excluded.actor, at = excluded.at",
            (
                row.workspace,
                row.first_id,
                row.first_revision,
                row.second_id,
                row.second_revision,
                row.actor,
                row.at,
            ),
        )

    def fact_kept_pairs(self, workspace: str) -> list[KeptPairRow]:
        rows = self.db.rows(
            "SELECT workspace, first_id, first_revision, second_id, second_revision, actor, at"
            " FROM fact_pairs_kept WHERE workspace = %s ORDER BY first_id, second_id",
            (workspace,),
        )
        return [KeptPairRow(*r) for r in rows]

    # ---- rate limits --------------------------------------------------------------------
    def fact_rate_hits(self, workspace: str, actor: str, bucket: str, since: float) -> list[float]:
        rows = self.db.rows(
            "SELECT at FROM fact_rate WHERE workspace = %s AND actor = %s AND bucket = %s"
            " AND at >= %s ORDER BY at",
            (workspace, actor, bucket, since),
        )
        return [float(r[0]) for r in rows]

    def fact_rate_add(self, workspace: str, actor: str, bucket: str, at: float) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_rate (workspace, actor, bucket, at) VALUES (%s, %s, %s, %s)",
                (workspace, actor, bucket, at),
            )
            # Windows are at most an hour; older hits are never read again.
            conn.execute(
                "DELETE FROM fact_rate WHERE workspace = %s AND actor = %s AND bucket = %s"
                " AND at < %s",
                (workspace, actor, bucket, at - 86_400.0),
            )
