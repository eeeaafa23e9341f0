"""Facts in SQLite, the reading half: rows, lists and counts, search candidates, and the
vector matrix; the writing half is :mod:`fleetmem.store.sqlite.fact_activity`.

Vectors live in the shared ``embeddings`` cache (content hash + model id) and are linked to
facts in ``fact_vectors``. Two per-process copies make a search over a workspace's 2,000
facts read almost nothing: the decoded vector matrix and the literal-search index
(:mod:`fleetmem.store.fact_text_index`), each rebuilt only when the generation the
writing half bumps in ``meta`` has moved.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fleetmem.store.fact_text_index import FactTextIndex, IndexedFact, LiteralReadsMixin
from fleetmem.store.facts import FactFilter, FactRow, VectorMatrix
from fleetmem.store.sqlite import vector_blob
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.fact_activity import FactActivityMixin
from fleetmem.store.sqlite.fact_rows import CHUNK, FACT_COLUMNS, fact_row, marks

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np


class FactsMixin(LiteralReadsMixin, FactActivityMixin):
    """The :class:`fleetmem.store.facts.FactStore` methods of the SQLite store."""

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

    def _generation(self, key: str) -> str:
        row = self.db.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return "0" if row is None else str(row[0])

    # ---- rows ---------------------------------------------------------------------------
    def fact_get(self, workspace: str, fact_id: str) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ? AND workspace = ?",
            (fact_id, workspace),
        ).fetchone()
        return None if row is None else fact_row(row)

    def fact_get_many(self, workspace: str, fact_ids: Sequence[str]) -> dict[str, FactRow]:
        ids = list(dict.fromkeys(fact_ids))
        out: dict[str, FactRow] = {}
        # "+workspace" keeps the lookup on the primary key: without statistics SQLite would
        # walk the workspace's index and test each of its rows against the id list.
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            for row in self.db.conn.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE +workspace = ? AND id IN"
                f" ({marks(len(chunk))})",
                [workspace, *chunk],
            ):
                out[row["id"]] = fact_row(row)
        return out

    def fact_list(self, workspace: str, flt: FactFilter) -> list[FactRow]:
        where = ["workspace = ?"]
        args: list[Any] = [workspace]
        if flt.statuses is not None:
            where.append(f"status IN ({marks(len(flt.statuses))})")
            args.extend(flt.statuses)
        if flt.scopes is not None:
            where.append(f"scope IN ({marks(len(flt.scopes))})")
            args.extend(flt.scopes)
        if flt.pinned is not None:
            where.append("pinned = ?")
            args.append(int(flt.pinned))
        if flt.before is not None:
            where.append("(created_at < ? OR (created_at = ? AND id < ?))")
            args.extend([flt.before[0], flt.before[0], flt.before[1]])
        if flt.updated_after is not None:
            where.append("updated_at > ?")
            args.append(flt.updated_after)
        rows = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            [*args, flt.limit],
        ).fetchall()
        return [fact_row(r) for r in rows]

    def fact_status_counts(self, workspace: str) -> dict[str, int]:
        rows = self.db.conn.execute(
            "SELECT status, count(*) FROM facts WHERE workspace = ? GROUP BY status", (workspace,)
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def fact_pinned_count(self, workspace: str, statuses: Sequence[str]) -> int:
        row = self.db.conn.execute(
            f"SELECT count(*) FROM facts WHERE workspace = ? AND pinned = 1"
            f" AND status IN ({marks(len(statuses))})",
            [workspace, *statuses],
        ).fetchone()
        return int(row[0])

    def fact_find_norm(
        self, workspace: str, scope: str, norm: str, statuses: Sequence[str]
    ) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = ? AND norm = ? AND scope = ?"
            f" AND status IN ({marks(len(statuses))}) ORDER BY created_at, id LIMIT 1",
            [workspace, norm, scope, *statuses],
        ).fetchone()
        return None if row is None else fact_row(row)

    def fact_by_idempotency(self, workspace: str, key: str) -> FactRow | None:
        row = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = ? AND idempotency_key = ?",
            (workspace, key),
        ).fetchone()
        return None if row is None else fact_row(row)

    def fact_candidates(
        self, workspace: str, statuses: Sequence[str], scopes: Sequence[str] | None
    ) -> list[FactRow]:
        where = f"workspace = ? AND status IN ({marks(len(statuses))})"
        args: list[Any] = [workspace, *statuses]
        if scopes is not None:
            where += f" AND scope IN ({marks(len(scopes))})"
            args.extend(scopes)
        rows = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {where} ORDER BY created_at DESC, id DESC",
            args,
        ).fetchall()
        return [fact_row(r) for r in rows]

    # ---- search -------------------------------------------------------------------------
    def _text_index(self, workspace: str) -> FactTextIndex:
        """Every fact of a workspace as search sees it, rebuilt only after a fact changed (in
        any process: the generation lives in the store)."""
        generation = self._generation("fact_generation")
        cache: dict[str, tuple[str, FactTextIndex]] | None = getattr(
            self, "_fact_text_indexes", None
        )
        if cache is None:
            cache = {}
            self._fact_text_indexes = cache
        hit = cache.get(workspace)
        if hit is not None and hit[0] == generation:
            return hit[1]
        index = FactTextIndex(
            IndexedFact(*r)
            for r in self.db.conn.execute(
                "SELECT id, norm, content_hash, created_at, status, scope FROM facts"
                " WHERE workspace = ? ORDER BY rowid",
                (workspace,),
            )
        )
        cache[workspace] = (generation, index)
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
        exclude = list(exclude)
        rows = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE workspace = ? AND pinned = 0"
            f" AND status IN ({marks(len(statuses))}) AND scope IN ({marks(len(scopes))})"
            f" AND id NOT IN ({marks(len(exclude))})"
            " ORDER BY (origin = 'human' OR confirmed_at IS NOT NULL) DESC, updated_at DESC,"
            " id LIMIT ?",
            [workspace, *statuses, *scopes, *exclude, limit],
        ).fetchall()
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
        cached: tuple[tuple[object, ...], int] | None = getattr(self, "_fact_pending", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        embedded = self._matrix_pairs(workspace, model_id)
        allowed = set(statuses)
        pending = sum(
            1
            for row in self._text_index(workspace).facts
            if row.status in allowed and (row.id, row.content_hash) not in embedded
        )
        self._fact_pending = (key, pending)
        return pending

    def _matrix_pairs(self, workspace: str, model_id: str) -> frozenset[tuple[str, str]]:
        found = self.fact_matrix(workspace, model_id)
        return frozenset(zip(found.ids, found.hashes, strict=True))

    def fact_expired(self, cutoff: float, statuses: Sequence[str], limit: int) -> list[FactRow]:
        rows = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE status IN ({marks(len(statuses))})"
            " AND coalesce(forgotten_at, updated_at) < ? ORDER BY updated_at LIMIT ?",
            [*statuses, cutoff, limit],
        ).fetchall()
        return [fact_row(r) for r in rows]

    # ---- vectors ------------------------------------------------------------------------
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
            vector_blob.decode_rows([r[3] for r in good], dim)
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

    def fact_vector_progress(self, model_id: str, statuses: Sequence[str]) -> tuple[int, int]:
        """(facts in ``statuses`` in every workspace, how many have a ``model_id`` vector of
        their current body)."""
        row = self.db.conn.execute(
            "SELECT count(*), count(v.fact_id) FROM facts f"
            " LEFT JOIN fact_vectors v ON v.fact_id = f.id AND v.model_id = ?"
            " AND v.content_hash = f.content_hash"
            f" WHERE f.status IN ({marks(len(statuses))})",
            [model_id, *statuses],
        ).fetchone()
        return int(row[0]), int(row[1])

    def fact_missing_vectors(
        self, model_id: str, statuses: Sequence[str], limit: int
    ) -> list[FactRow]:
        rows = self.db.conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE status IN ({marks(len(statuses))})"
            " AND NOT EXISTS (SELECT 1 FROM fact_vectors v WHERE v.fact_id = f.id"
            " AND v.model_id = ? AND v.content_hash = f.content_hash)"
            " ORDER BY created_at DESC LIMIT ?",
            [*statuses, model_id, limit],
        ).fetchall()
        return [fact_row(r) for r in rows]
