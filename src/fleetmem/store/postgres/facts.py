"""Facts in PostgreSQL, the reading half; the writing half is
:mod:`fleetmem.store.postgres.fact_activity`.

As in the SQLite store (``store/sqlite/facts.py``), a search over a workspace's facts reads
two per-process copies, the literal-search index and the vector matrix, each rebuilt only
when a generation counter in ``meta`` has moved. The counters live in the database, so a
fact changed through another daemon invalidates this one's copies too.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fleetmem.store.fact_text_index import FactTextIndex, IndexedFact, LiteralReadsMixin
from fleetmem.store.facts import FactFilter, FactRow, VectorMatrix
from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.fact_activity import FACT_COLUMNS, FactActivityMixin, fact_row

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np


class FactsMixin(LiteralReadsMixin, FactActivityMixin):
    """The :class:`fleetmem.store.facts.FactStore` methods of the PostgreSQL store."""

    db: PgDatabase

    def _init_facts(self) -> None:
        self._fact_matrices: dict[tuple[str, str], tuple[str, VectorMatrix]] = {}
        self._fact_matrix_lock = threading.Lock()
        self._fact_text_indexes: dict[str, tuple[str, FactTextIndex]] = {}
        self._fact_pending: tuple[tuple[object, ...], int] | None = None

    def _generation(self, key: str) -> str:
        found = self.db.value("SELECT value FROM meta WHERE key = %s", (key,))
        return "0" if found is None else str(found)

    # ---- rows ---------------------------------------------------------------------------
    def fact_get(self, workspace: str, fact_id: str) -> FactRow | None:
        found = self.db.row(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE id = %s AND workspace = %s",
            (fact_id, workspace),
        )
        return None if found is None else fact_row(found)

    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]:
        ids = list(dict.fromkeys(fact_ids))
        if not ids:
            return {}
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = %s AND id = ANY(%s)",
            (workspace, ids),
        )
        return {str(r[0]): fact_row(r) for r in rows}

    def fact_list(self, workspace: str, flt: FactFilter) -> list[FactRow]:
        where = ["workspace = %s"]
        args: list[Any] = [workspace]
        if flt.statuses is not None:
            where.append("status = ANY(%s)")
            args.append(list(flt.statuses))
        if flt.scopes is not None:
            where.append("scope = ANY(%s)")
            args.append(list(flt.scopes))
        if flt.pinned is not None:
            where.append("pinned = %s")
            args.append(int(flt.pinned))
        if flt.before is not None:
            where.append("(created_at < %s OR (created_at = %s AND id < %s))")
            args.extend([flt.before[0], flt.before[0], flt.before[1]])
        if flt.updated_after is not None:
            where.append("updated_at > %s")
            args.append(flt.updated_after)
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, id DESC LIMIT %s",
            [*args, flt.limit],
        )
        return [fact_row(r) for r in rows]

    def fact_status_counts(self, workspace: str) -> dict[str, int]:
        rows = self.db.rows(
            "SELECT status, count(*) FROM facts WHERE workspace = %s GROUP BY status",
            (workspace,),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def fact_pinned_count(self, workspace: str, statuses: Sequence[str]) -> int:
        return int(
            self.db.value(
                "SELECT count(*) FROM facts WHERE workspace = %s AND pinned = 1"
                " AND status = ANY(%s)",
                (workspace, list(statuses)),
            )
        )

    def fact_find_norm(
        self, workspace: str, scope: str, norm: str, statuses: Sequence[str]
    ) -> FactRow | None:
        found = self.db.row(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = %s AND norm = %s"
            " AND scope = %s AND status = ANY(%s) ORDER BY created_at, id LIMIT 1",
            (workspace, norm, scope, list(statuses)),
        )
        return None if found is None else fact_row(found)

    def fact_by_idempotency(self, workspace: str, key: str) -> FactRow | None:
        found = self.db.row(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = %s AND idempotency_key = %s",
            (workspace, key),
        )
        return None if found is None else fact_row(found)

    def fact_candidates(
        self, workspace: str, statuses: Sequence[str], scopes: Sequence[str] | None
    ) -> list[FactRow]:
        where = "workspace = %s AND status = ANY(%s)"
        args: list[Any] = [workspace, list(statuses)]
        if scopes is not None:
            where += " AND scope = ANY(%s)"
            args.append(list(scopes))
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {where} ORDER BY created_at DESC, id DESC",
            args,
        )
        return [fact_row(r) for r in rows]

    # ---- search -------------------------------------------------------------------------
    def _text_index(self, workspace: str) -> FactTextIndex:
        """Every fact of a workspace as search sees it, rebuilt only after a fact changed (in
        any process: the generation lives in the store)."""
        generation = self._generation("fact_generation")
        hit = self._fact_text_indexes.get(workspace)
        if hit is not None and hit[0] == generation:
            return hit[1]
        index = FactTextIndex(
            IndexedFact(*r)
            for r in self.db.rows(
                "SELECT id, norm, content_hash, created_at, status, scope FROM facts"
                " WHERE workspace = %s ORDER BY seq",
                (workspace,),
            )
        )
        self._fact_text_indexes[workspace] = (generation, index)
        return index

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
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = %s AND pinned = 0"
            " AND status = ANY(%s) AND scope = ANY(%s) AND id <> ALL(%s)"
            " ORDER BY (origin = 'human' OR confirmed_at IS NOT NULL) DESC, updated_at DESC,"
            " id LIMIT %s",
            (workspace, list(statuses), list(scopes), list(exclude), limit),
        )
        return [fact_row(r) for r in rows]

    def fact_pending_vectors(self, workspace: str, model_id: str, statuses: Sequence[str]) -> int:
        """Facts whose current body has no vector under ``model_id`` yet; recounted only when
        a fact or a vector link changed (every search asks)."""
        key = (
            workspace,
            model_id,
            tuple(sorted(statuses)),
            self._generation("fact_generation"),
            self._generation("fact_vector_generation"),
        )
        cached = self._fact_pending
        if cached is not None and cached[0] == key:
            return cached[1]
        found = self.fact_matrix(workspace, model_id)
        embedded = frozenset(zip(found.ids, found.hashes, strict=True))
        allowed = set(statuses)
        pending = sum(
            1
            for row in self._text_index(workspace).facts
            if row.status in allowed and (row.id, row.content_hash) not in embedded
        )
        self._fact_pending = (key, pending)
        return pending

    def fact_expired(self, cutoff: float, statuses: Sequence[str], limit: int) -> list[FactRow]:
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE status = ANY(%s)"
            " AND coalesce(forgotten_at, updated_at) < %s ORDER BY updated_at, seq LIMIT %s",
            (list(statuses), cutoff, limit),
        )
        return [fact_row(r) for r in rows]

    # ---- vectors ------------------------------------------------------------------------
    def fact_matrix(self, workspace: str, model_id: str) -> VectorMatrix:
        """All of a workspace's fact vectors under ``model_id``, rebuilt only when a vector
        link changed since the last call (in any process: the generation lives in the store)."""
        generation = self._generation("fact_vector_generation")
        key = (workspace, model_id)
        with self._fact_matrix_lock:
            hit = self._fact_matrices.get(key)
            if hit is not None and hit[0] == generation:
                return hit[1]
        rows = self.db.rows(
            "SELECT v.fact_id, v.content_hash, e.dim, e.vector FROM fact_vectors v"
            " JOIN facts f ON f.id = v.fact_id JOIN embeddings e ON e.content_hash ="
            " v.content_hash AND e.model_id = v.model_id WHERE f.workspace = %s AND"
            " v.model_id = %s ORDER BY v.fact_id",
            (workspace, model_id),
        )
        dim = int(rows[0][2]) if rows else 0
        good = [r for r in rows if int(r[2]) == dim]
        matrix = (
            np.frombuffer(b"".join(bytes(r[3]) for r in good), dtype=np.float32).reshape(-1, dim)
            if good
            else np.zeros((0, 0), dtype=np.float32)
        )
        built = VectorMatrix(
            ids=tuple(str(r[0]) for r in good),
            hashes=tuple(str(r[1]) for r in good),
            matrix=matrix,
        )
        with self._fact_matrix_lock:
            self._fact_matrices[key] = (generation, built)
        return built

    def fact_vector_progress(self, model_id: str, statuses: Sequence[str]) -> tuple[int, int]:
        """(facts in ``statuses`` in every workspace, how many have a ``model_id`` vector of
        their current body)."""
        found = self.db.row(
            "SELECT count(*), count(v.fact_id) FROM facts f"
            " LEFT JOIN fact_vectors v ON v.fact_id = f.id AND v.model_id = %s"
            " AND v.content_hash = f.content_hash WHERE f.status = ANY(%s)",
            (model_id, list(statuses)),
        )
        assert found is not None
        return int(found[0]), int(found[1])

    def fact_missing_vectors(
        self, model_id: str, statuses: Sequence[str], limit: int
    ) -> list[FactRow]:
        rows = self.db.rows(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE status = ANY(%s)"
            " AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.fact_id = f.id"
            " AND v.model_id = %s AND v.content_hash = f.content_hash)"
            " ORDER BY created_at DESC, seq DESC LIMIT %s",
            (list(statuses), model_id, limit),
        )
        return [fact_row(r) for r in rows]
