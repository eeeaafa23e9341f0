"""Facts in SQLite, the writing half: fact rows, purges and vector links; revisions,
provenance and the append-only journal; exposures, votes and their tallies; rate limits.

Every change to a fact or its vector link bumps a generation in ``meta``, which the reading
half (:mod:`fleetmem.store.sqlite.facts`) compares to know when its in-memory copies (the
search index, the vector matrix) are stale, in this process or any other.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

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
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.fact_rows import (
    FACT_COLUMNS,
    N_FACT_COLUMNS,
    fact_values,
    marks,
    to_json,
    vote_row,
)


class FactActivityMixin:
    """Writes and the records kept around each fact (see the module docstring)."""

    db: Database

    @staticmethod
    def _bump(conn: sqlite3.Connection, key: str) -> None:
        """Count one change in ``meta`` (created on first use: a store whose facts tables came
        from an earlier build of migration 2 lacks the row)."""
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key)"
            " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (key,),
        )

    def _bump_fact_vectors(self, conn: sqlite3.Connection) -> None:
        self._bump(conn, "fact_vector_generation")

    # ---- writes -------------------------------------------------------------------------
    def fact_insert(self, row: FactRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({marks(N_FACT_COLUMNS)})",
                fact_values(row),
            )
            self._bump(conn, "fact_generation")

    def fact_update(self, row: FactRow) -> None:
        names = [c.strip() for c in FACT_COLUMNS.split(",")][2:]
        assignments = ", ".join(f"{name} = ?" for name in names)
        with self.db.write() as conn:
            changed = conn.execute(
                f"UPDATE facts SET {assignments} WHERE id = ? AND workspace = ?",
                (*fact_values(row)[2:], row.id, row.workspace),
            ).rowcount
            if changed != 1:
                raise KeyError(row.id)
            self._bump(conn, "fact_generation")

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
            # Votes stay (they are counts), but a voter's words may quote the fact's.
            conn.execute(
                "UPDATE fact_votes SET note = NULL WHERE workspace = ? AND fact_id = ?",
                (workspace, fact_id),
            )
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
                    to_json(row.before),
                    to_json(row.after),
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
        return [_journal_row(r) for r in rows]

    def fact_journal_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[JournalRow]:
        """The workspace's journal newest first (``at``, then ``seq``, descending), only rows
        strictly before ``before`` = (at, seq) when given; at most ``limit``."""
        sql = (
            "SELECT seq, workspace, fact_id, action, actor_kind, actor, run_id, at, before_json,"
            " after_json FROM fact_journal WHERE workspace = ?"
        )
        args: list[Any] = [workspace]
        if before is not None:
            sql += " AND (at < ? OR (at = ? AND seq < ?))"
            args += [before[0], before[0], before[1]]
        sql += " ORDER BY at DESC, seq DESC LIMIT ?"
        rows = self.db.conn.execute(sql, [*args, limit]).fetchall()
        return [_journal_row(r) for r in rows]

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
            " reason, at, note FROM fact_votes WHERE workspace = ? AND fact_id = ? AND run_id = ?",
            (workspace, fact_id, run_id),
        ).fetchone()
        return None if row is None else vote_row(row)

    def fact_vote_add(self, row: VoteRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_votes (workspace, fact_id, revision, run_id, agent, repo,"
                " stance, counted, reason, at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        rows = self.db.conn.execute(
            "SELECT seq, workspace, fact_id, revision, run_id, agent, repo, stance, counted,"
            " reason, at, note FROM fact_votes WHERE workspace = ? AND fact_id = ? ORDER BY seq",
            (workspace, fact_id),
        ).fetchall()
        return [vote_row(r) for r in rows]

    def fact_votes_page(
        self, workspace: str, before: tuple[float, int] | None, limit: int
    ) -> list[VoteRow]:
        """The workspace's votes newest first (``at``, then ``seq``, descending), only those
        strictly before ``before`` = (at, seq) when given; at most ``limit``."""
        sql = (
            "SELECT seq, workspace, fact_id, revision, run_id, agent, repo, stance, counted,"
            " reason, at, note FROM fact_votes WHERE workspace = ?"
        )
        args: list[Any] = [workspace]
        if before is not None:
            sql += " AND (at < ? OR (at = ? AND seq < ?))"
            args += [before[0], before[0], before[1]]
        sql += " ORDER BY at DESC, seq DESC LIMIT ?"
        rows = self.db.conn.execute(sql, [*args, limit]).fetchall()
        return [vote_row(r) for r in rows]

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

    # ---- pairs kept apart (Tidy up) ------------------------------------------------------
    def fact_keep_pair(self, row: KeptPairRow) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO fact_pairs_kept (workspace, first_id, first_revision, second_id,"
                " second_revision, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?)"
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
        rows = self.db.conn.execute(
            "SELECT workspace, first_id, first_revision, second_id, second_revision, actor, at"
            " FROM fact_pairs_kept WHERE workspace = ? ORDER BY first_id, second_id",
            (workspace,),
        ).fetchall()
        return [KeptPairRow(*tuple(r)) for r in rows]

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


def _journal_row(r: sqlite3.Row) -> JournalRow:
    return JournalRow(
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
