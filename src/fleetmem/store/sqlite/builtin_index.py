"""The built-in provider's index: FTS5 over episode text and summary, plus vectors.

The standard library's sqlite3 cannot load vector extensions, and brute-force cosine over
an in-memory float32 matrix is as fast as an ANN index at the sizes one machine holds
(100k x 384 in ~15 ms), so vectors live in SQLite as BLOBs and are searched in numpy.
The matrix is a cache: other processes (the CLI beside the daemon) add rows, so each search
first picks up rows with a higher sequence number, and reloads fully after any delete.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fleetmem.store.base import EpisodeRow, Vector
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.records import _EPISODE_COLUMNS, _placeholders, episode_from_row

#: BM25 weight of the context column relative to the episode's own text and summary.
CONTEXT_WEIGHT = 0.3


@dataclass
class _Matrix:
    """Rows of one embedding model, grown by doubling so appends stay amortised O(1)."""

    generation: str = ""
    last_seq: int = 0
    count: int = 0
    ids: list[str] = field(default_factory=list)
    scopes: list[int] = field(default_factory=list)
    vectors: Vector = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    def append(self, ids: list[str], scopes: list[int], block: Vector) -> None:
        if block.shape[0] == 0:
            return
        dim = block.shape[1]
        if self.vectors.shape[1] != dim:
            self.vectors = np.zeros((0, dim), dtype=np.float32)
        need = self.count + block.shape[0]
        if need > self.vectors.shape[0]:
            grown = np.zeros((max(need, 2 * self.vectors.shape[0], 1024), dim), dtype=np.float32)
            grown[: self.count] = self.vectors[: self.count]
            self.vectors = grown
        self.vectors[self.count : need] = block
        self.count = need
        self.ids.extend(ids)
        self.scopes.extend(scopes)


class BuiltinIndexMixin:
    db: Database

    def _init_builtin_index(self) -> None:
        self._matrices: dict[str, _Matrix] = {}
        self._scope_codes: dict[str, int] = {}
        self._matrix_lock = threading.Lock()

    # ---- writes -----------------------------------------------------------------------
    def builtin_put(
        self,
        episode_id: str,
        text: str,
        summary: str | None,
        vector: Vector | None,
        vector_hash: str,
        model_id: str,
        context: str = "",
    ) -> None:
        """Index ``text`` (and ``context``, ranked below it) and, if given, the vector."""
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT rowid, content_hash FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
            if row is None:
                raise KeyError(episode_id)
            rowid, content_hash = int(row[0]), vector_hash
            # Re-recording the same episode replaces its index entry instead of duplicating it.
            conn.execute("DELETE FROM builtin_fts WHERE rowid = ?", (rowid,))
            conn.execute(
                "INSERT INTO builtin_fts (rowid, text, summary, context) VALUES (?, ?, ?, ?)",
                (rowid, text, summary or "", context),
            )
            if vector is not None:
                self.cache_embedding(content_hash, model_id, vector)
                existing = conn.execute(
                    "SELECT content_hash, model_id FROM builtin_vectors WHERE episode_id = ?",
                    (episode_id,),
                ).fetchone()
                if existing is None or tuple(existing) != (content_hash, model_id):
                    if existing is not None:
                        conn.execute(
                            "DELETE FROM builtin_vectors WHERE episode_id = ?", (episode_id,)
                        )
                        self._bump_generation(conn)
                    conn.execute(
                        "INSERT INTO builtin_vectors (episode_id, content_hash, model_id)"
                        " VALUES (?, ?, ?)",
                        (episode_id, content_hash, model_id),
                    )

    def builtin_delete(self, episode_id: str) -> bool:
        with self.db.write() as conn:
            row = conn.execute("SELECT rowid FROM episodes WHERE id = ?", (episode_id,)).fetchone()
            if row is None:
                return False
            had_text = conn.execute(
                "DELETE FROM builtin_fts WHERE rowid = ?", (int(row[0]),)
            ).rowcount
            had_vec = conn.execute(
                "DELETE FROM builtin_vectors WHERE episode_id = ?", (episode_id,)
            ).rowcount
            if had_vec:
                self._bump_generation(conn)
            return bool(had_text or had_vec)

    def builtin_has(self, episode_id: str) -> bool:
        row = self.db.conn.execute(
            "SELECT 1 FROM builtin_fts f JOIN episodes e ON e.rowid = f.rowid WHERE e.id = ?",
            (episode_id,),
        ).fetchone()
        return row is not None

    @staticmethod
    def _bump_generation(conn: object) -> None:
        import sqlite3

        assert isinstance(conn, sqlite3.Connection)
        conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation'"
        )

    # ---- embeddings cache -------------------------------------------------------------
    def cached_embedding(self, content_hash: str, model_id: str) -> Vector | None:
        row = self.db.conn.execute(
            "SELECT dim, vector FROM embeddings WHERE content_hash = ? AND model_id = ?",
            (content_hash, model_id),
        ).fetchone()
        if row is None:
            return None
        return np.frombuffer(row[1], dtype=np.float32).reshape(int(row[0])).copy()

    def cache_embedding(self, content_hash: str, model_id: str, vector: Vector) -> None:
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO embeddings (content_hash, model_id, dim, vector) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (content_hash, model_id) DO NOTHING",
                (content_hash, model_id, int(vec.shape[0]), vec.tobytes()),
            )

    def builtin_missing_vectors(self, model_id: str, limit: int) -> list[EpisodeRow]:
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes e WHERE e.forgotten_at IS NULL"
            " AND e.text IS NOT NULL"
            " AND e.rowid IN (SELECT rowid FROM builtin_fts)"
            " AND NOT EXISTS (SELECT 1 FROM builtin_vectors v WHERE v.episode_id = e.id"
            " AND v.model_id = ?) ORDER BY e.started_at DESC LIMIT ?",
            (model_id, limit),
        ).fetchall()
        return [episode_from_row(r) for r in rows]

    # ---- search -----------------------------------------------------------------------
    def search_text(self, match: str, scopes: Sequence[str], limit: int) -> list[str]:
        """Episode ids in ``scopes`` ranked by BM25 (best first). ``match`` must be quoted.

        Words found only in an episode's context (its neighbours' excerpts) count for less
        than its own, so a neighbour never ties with the episode that holds the words.
        """
        if not scopes:
            return []
        rows = self.db.conn.execute(
            "SELECT e.id FROM builtin_fts JOIN episodes e ON e.rowid = builtin_fts.rowid"
            f" WHERE builtin_fts MATCH ? AND e.scope IN ({_placeholders(len(scopes))})"
            " AND e.forgotten_at IS NULL"
            f" ORDER BY bm25(builtin_fts, 1.0, 1.0, {CONTEXT_WEIGHT}), e.started_at DESC, e.id"
            " LIMIT ?",
            [match, *scopes, limit],
        ).fetchall()
        return [str(r[0]) for r in rows]

    def search_vector(
        self, query: Vector, model_id: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """Episode ids in ``scopes`` by cosine similarity to ``query`` (rows are unit length)."""
        if not scopes or limit <= 0:
            return []
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            if matrix.count == 0:
                return []
            codes = [self._scope_codes[s] for s in scopes if s in self._scope_codes]
            if not codes:
                return []
            scope_arr = np.asarray(matrix.scopes, dtype=np.int64)
            rows = np.flatnonzero(np.isin(scope_arr, np.asarray(codes, dtype=np.int64)))
            if rows.size == 0:
                return []
            q = np.asarray(query, dtype=np.float32).reshape(-1)
            if q.shape[0] != matrix.vectors.shape[1]:
                return []
            # One matrix-vector product over every row, then the scope mask: slicing the
            # matrix first would copy it on every query.
            sims = (matrix.vectors[: matrix.count] @ q)[rows]
            k = min(limit, sims.shape[0])
            top = np.argpartition(-sims, k - 1)[:k] if k < sims.shape[0] else np.arange(k)
            top = top[np.argsort(-sims[top], kind="stable")]
            ids = matrix.ids
            return [(ids[int(rows[i])], float(sims[i])) for i in top]

    def _refresh(self, model_id: str) -> _Matrix:
        conn = self.db.conn
        generation = str(
            conn.execute("SELECT value FROM meta WHERE key = 'vector_generation'").fetchone()[0]
        )
        matrix = self._matrices.get(model_id)
        if matrix is None or matrix.generation != generation:
            matrix = _Matrix(generation=generation)
            self._matrices[model_id] = matrix
        rows = conn.execute(
            "SELECT v.seq, v.episode_id, e.scope, m.dim, m.vector FROM builtin_vectors v"
            " JOIN episodes e ON e.id = v.episode_id"
            " JOIN embeddings m ON m.content_hash = v.content_hash AND m.model_id = v.model_id"
            " WHERE v.model_id = ? AND v.seq > ? ORDER BY v.seq",
            (model_id, matrix.last_seq),
        ).fetchall()
        if rows:
            dim = int(rows[0][3])
            good = [r for r in rows if int(r[3]) == dim]
            block = np.frombuffer(b"".join(r[4] for r in good), dtype=np.float32).reshape(-1, dim)
            scopes = [self._scope_codes.setdefault(r[2], len(self._scope_codes)) for r in good]
            matrix.append([str(r[1]) for r in good], scopes, block)
            matrix.last_seq = int(rows[-1][0])
        return matrix
