"""The built-in provider's index: FTS5 over episode text and summary, plus vectors.

The standard library's sqlite3 cannot load vector extensions, and brute-force cosine over
an in-memory matrix is as fast as an ANN index at the sizes one machine holds (100k x 384 in
about 7 ms), so vectors live in SQLite as BLOBs and are searched in memory, held as int8
rows with a scale each (``int8_scores``: a quarter of float32's memory).
The matrices (one per scope, so a scoped search multiplies only its own rows) are a cache:
other processes (the CLI beside the daemon) add rows, so each search first picks up rows with
a higher sequence number, and reloads fully after any delete.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fleetmem import process_memory
from fleetmem.core.textquery import match_phrases, or_match, prune_common
from fleetmem.store.base import Compaction, EpisodeRow, IndexEntry, Vector
from fleetmem.store.sqlite import fts_source, fts_upkeep, int8_scores, vector_blob
from fleetmem.store.sqlite.db import Database
from fleetmem.store.sqlite.fts_source import scope_token
from fleetmem.store.sqlite.packed import unpack
from fleetmem.store.sqlite.records import _EPISODE_COLUMNS, _placeholders, episode_from_row
from fleetmem.store.sqlite.term_stats import TermStats

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from fleetmem.lazy_numpy import np

#: BM25 weight of the context column relative to the episode's own text and summary.
CONTEXT_WEIGHT = 0.3
#: At most this many matching in-scope rows are scored by BM25 (the newest indexed).
MAX_SCORED = 4_000
#: The columns user words are matched in (never ``scope_key``).
TEXT_COLUMNS = "text summary context"
#: Query phrases in more than this share of the indexed episodes are not scored...
PRUNE_SHARE = 0.05
#: ...once they are in more than this many: below it every phrase is kept (exact BM25).
PRUNE_FLOOR_DOCS = 2_000

#: Vector rows read from the store at a time when the in-memory matrix is (re)loaded.
_LOAD_BATCH = 2_048


@dataclass
class _Block:
    """One scope's rows of one embedding model, with room to grow by a quarter at a time.

    Rows are kept per scope so a scoped search multiplies only that scope's rows: no mask
    over the whole store and no copy per query. Growth is by a quarter, not by doubling: at
    100k episodes a doubled block could hold as much empty room as vectors.
    """

    count: int = 0
    # Each row's ``builtin_vectors.seq`` (never reused), not its episode id: 8 bytes a row
    # instead of a Python string of about 80 (8 MiB at 100k episodes). The few ids a search
    # returns are looked up by seq.
    seqs: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Each row quantized to int8 with a scale of its own (int8_scores): 388 bytes a row at
    # 384 dimensions instead of float32's 1,536 (146.5 MiB at 100k episodes).
    vectors: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int8))
    scales: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, dtype=np.float32))

    def reserve(self, rows: int, dim: int) -> None:
        """Room for ``rows`` rows in all (a store's first load knows how many are coming)."""
        if self.vectors.shape[1] != dim:
            self.vectors = np.zeros((0, dim), dtype=np.int8)
            self.count = 0
        if rows > self.vectors.shape[0]:
            grown = np.zeros((rows, dim), dtype=np.int8)
            grown[: self.count] = self.vectors[: self.count]
            self.vectors = grown
            scales = np.zeros(rows, dtype=np.float32)
            scales[: self.count] = self.scales[: self.count]
            self.scales = scales
            seqs = np.zeros(rows, dtype=np.int64)
            seqs[: self.count] = self.seqs[: self.count]
            self.seqs = seqs

    def append(self, seqs: list[int], block: Vector) -> None:
        self.append_quantized(seqs, *int8_scores.quantize_rows(block))

    def append_quantized(
        self, seqs: list[int], quantized: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]
    ) -> None:
        """Add rows already quantized (``int8_scores.quantize_rows``), a scale each."""
        dim = quantized.shape[1]
        need = self.count + quantized.shape[0]
        if self.vectors.shape[1] != dim or need > self.vectors.shape[0]:
            self.reserve(max(need, self.vectors.shape[0] + self.vectors.shape[0] // 4, 256), dim)
            need = self.count + quantized.shape[0]
        self.vectors[self.count : need] = quantized
        self.scales[self.count : need] = scales
        self.seqs[self.count : need] = seqs
        self.count = need

    def top(self, query: Vector, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` rows most similar to ``query`` (unit rows: dot product = cosine)."""
        if self.count == 0 or query.shape[0] != self.vectors.shape[1]:
            return []
        sims = int8_scores.scores(self.vectors[: self.count], self.scales[: self.count], query)
        k = min(limit, self.count)
        top = np.argpartition(-sims, k - 1)[:k] if k < self.count else np.arange(k)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(self.seqs[i]), float(sims[i])) for i in top]


@dataclass
class _Matrix:
    """Every vector of one embedding model, by scope, as of ``last_seq``."""

    generation: str = ""
    last_seq: int = 0
    blocks: dict[str, _Block] = field(default_factory=dict)


def idf(total: int, containing: int) -> float:
    """FTS5's inverse document frequency of a phrase found in ``containing`` of ``total``
    rows (its bm25() clamps it to a small positive number, as here)."""
    return max(1e-6, math.log((total - containing + 0.5) / (containing + 0.5)))


def _index(
    conn: sqlite3.Connection, rowid: int, values: fts_source.Indexed, body: str | None
) -> None:
    """Index ``values`` (text, summary, context, scope token) as row ``rowid``, whose
    episode's body is ``body``.

    The index is contentless (migration 21): what it indexed is kept beside it
    (:mod:`~fleetmem.store.sqlite.fts_source`) for :func:`_unindex`, which must hand FTS5
    the very same words to take them out.
    """
    conn.execute(
        "INSERT INTO builtin_fts (rowid, text, summary, context, scope_key) VALUES (?, ?, ?, ?, ?)",
        (rowid, *values),
    )
    fts_source.write(conn, rowid, values, body)


def _unindex(conn: sqlite3.Connection, rowid: int, body: str | None, scope: str) -> int:
    """Take row ``rowid`` (of ``scope``, its episode's body ``body``) out of the index; 1 if
    it was there, else 0."""
    values = fts_source.read(conn, rowid, body, scope_token(scope))
    if values is None:
        return 0
    conn.execute(
        "INSERT INTO builtin_fts (builtin_fts, rowid, text, summary, context, scope_key)"
        " VALUES ('delete', ?, ?, ?, ?, ?)",
        (rowid, *values),
    )
    fts_source.delete(conn, rowid)
    return 1


class BuiltinIndexMixin:
    db: Database

    def _init_builtin_index(self) -> None:
        self._matrices: dict[str, _Matrix] = {}
        self._matrix_lock = threading.Lock()
        self._term_stats = TermStats(self.db)

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
                "SELECT rowid, scope, agent, episode_json FROM episodes WHERE id = ?",
                (episode_id,),
            ).fetchone()
            if row is None:
                raise KeyError(episode_id)
            rowid, content_hash, scope = int(row[0]), vector_hash, str(row[1])
            body = unpack(row[3])
            conn.execute(
                "INSERT OR IGNORE INTO builtin_agents (scope, agent) VALUES (?, ?)",
                (scope, str(row[2])),
            )
            # Re-recording the same episode replaces its index entry instead of duplicating it.
            _unindex(conn, rowid, body, scope)
            _index(conn, rowid, (text, summary or "", context, scope_token(scope)), body)
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

    def builtin_put_many(self, entries: Sequence[IndexEntry]) -> None:
        """:meth:`builtin_put` for each entry, in one transaction."""
        with self.db.write():
            for episode_id, text, summary, vector, vector_hash, model_id, context in entries:
                self.builtin_put(
                    episode_id, text, summary, vector, vector_hash, model_id, context=context
                )

    def builtin_delete(self, episode_id: str) -> bool:
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT rowid, scope, episode_json FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
            if row is None:
                return False
            had_text = _unindex(conn, int(row[0]), unpack(row[2]), str(row[1]))
            had_vec = conn.execute(
                "DELETE FROM builtin_vectors WHERE episode_id = ?", (episode_id,)
            ).rowcount
            if had_vec:
                self._bump_generation(conn)
            return bool(had_text or had_vec)

    def builtin_has(self, episode_id: str) -> bool:
        row = self.db.conn.execute(
            "SELECT 1 FROM builtin_fts_source f JOIN episodes e ON e.rowid = f.rowid"
            " WHERE e.id = ?",
            (episode_id,),
        ).fetchone()
        return row is not None

    def builtin_facets(self, episode_ids: Sequence[str]) -> dict[str, tuple[float, str]]:
        """(start time, agent) of live episodes by id, without decoding bodies: fusion's
        tie-break, and what the period and agent channels select on."""
        out: dict[str, tuple[float, str]] = {}
        ids = list(dict.fromkeys(episode_ids))
        for offset in range(0, len(ids), 500):
            chunk = ids[offset : offset + 500]
            rows = self.db.conn.execute(
                f"SELECT id, started_at, agent FROM episodes WHERE id IN"
                f" ({_placeholders(len(chunk))}) AND forgotten_at IS NULL",
                chunk,
            ).fetchall()
            out.update((str(r[0]), (float(r[1]), str(r[2]))) for r in rows)
        return out

    def builtin_agent_names(self, scopes: Sequence[str]) -> list[str]:
        """The agents that have had an episode indexed in any of ``scopes``, sorted."""
        if not scopes:
            return []
        rows = self.db.conn.execute(
            f"SELECT DISTINCT agent FROM builtin_agents WHERE scope IN"
            f" ({_placeholders(len(scopes))}) ORDER BY agent",
            list(scopes),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def builtin_vectors_for(self, episode_ids: Sequence[str], model_id: str) -> dict[str, Vector]:
        """The stored vectors of ``episode_ids`` under ``model_id`` (those that have one)."""
        ids = list(dict.fromkeys(episode_ids))[:500]
        if not ids:
            return {}
        rows = self.db.conn.execute(
            "SELECT v.episode_id, m.vector FROM builtin_vectors v JOIN embeddings m"
            " ON m.content_hash = v.content_hash AND m.model_id = v.model_id"
            f" WHERE v.model_id = ? AND v.episode_id IN ({_placeholders(len(ids))})",
            [model_id, *ids],
        ).fetchall()
        return {str(r[0]): vector_blob.decode(r[1]) for r in rows}

    def builtin_cosines(
        self, query: Vector, episode_ids: Sequence[str], model_id: str
    ) -> dict[str, float]:
        """Scored on the in-memory int8 rows, as :meth:`search_vector` scores: an episode
        both find gets the same figure from each, and no stored vector is decoded (a
        recall's ~40 word-only hits: 0.37 ms, against 0.53 reading the float vectors)."""
        ids = list(dict.fromkeys(episode_ids))[:500]
        if not ids:
            return {}
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        # Looked up outside the lock (each thread has its own connection), so recalls
        # searching the blocks meanwhile do not wait on it; a row deleted since is not in
        # its block any more and is left out below.
        by_scope: dict[str, list[tuple[int, str]]] = {}
        for seq, eid, scope in self.db.conn.execute(
            "SELECT v.seq, v.episode_id, e.scope FROM builtin_vectors v"
            " JOIN episodes e ON e.id = v.episode_id"
            f" WHERE v.model_id = ? AND v.episode_id IN ({_placeholders(len(ids))})",
            [model_id, *ids],
        ):
            by_scope.setdefault(str(scope), []).append((int(seq), str(eid)))
        out: dict[str, float] = {}
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            for scope, found in by_scope.items():
                block = matrix.blocks.get(scope)
                if block is None or block.count == 0 or block.vectors.shape[1] != q.shape[0]:
                    continue
                # A block's rows are appended in seq order, so its seqs are sorted.
                seqs = block.seqs[: block.count]
                wanted = np.fromiter((seq for seq, _ in found), dtype=np.int64, count=len(found))
                at = np.minimum(np.searchsorted(seqs, wanted), block.count - 1)
                held = seqs[at] == wanted
                rows = at[held]
                if rows.size == 0:
                    continue
                sims = int8_scores.scores(block.vectors[rows], block.scales[rows], q)
                names = [eid for (_, eid), ok in zip(found, held.tolist(), strict=True) if ok]
                out.update(zip(names, sims.tolist(), strict=True))
        return out

    def builtin_vector_count(self, scopes: Sequence[str], model_id: str) -> int:
        """Read off the in-memory blocks (refreshed first), so it costs no query."""
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            return sum(matrix.blocks[s].count for s in dict.fromkeys(scopes) if s in matrix.blocks)

    def builtin_vector_sample(
        self, scopes: Sequence[str], model_id: str, limit: int
    ) -> tuple[list[str], Vector]:
        """Taken from the in-memory blocks (scope by scope, each row as ``scale * int8``)."""
        empty: tuple[list[str], Vector] = ([], np.zeros((0, 0), dtype=np.float32))
        if limit <= 0:
            return empty
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            blocks = [matrix.blocks[s] for s in sorted(set(scopes)) if s in matrix.blocks]
            blocks = [b for b in blocks if b.count]
            dims = {b.vectors.shape[1] for b in blocks}
            total = sum(b.count for b in blocks)
            if total == 0 or len(dims) != 1:
                return empty
            wanted = np.unique(np.linspace(0, total - 1, min(limit, total)).astype(np.int64))
            rows = np.empty((len(wanted), dims.pop()), dtype=np.float32)
            seqs = np.empty(len(wanted), dtype=np.int64)
            start = done = 0
            for block in blocks:
                mine = wanted[(wanted >= start) & (wanted < start + block.count)] - start
                if mine.size:
                    part = slice(done, done + mine.size)
                    seqs[part] = block.seqs[mine]
                    np.multiply(block.vectors[mine], block.scales[mine][:, None], out=rows[part])
                    done += mine.size
                start += block.count
        return self._with_ids(seqs.tolist(), rows)

    def _with_ids(self, seqs: list[int], rows: Vector) -> tuple[list[str], Vector]:
        """The episode ids of ``seqs`` (the rows of ``rows``), those deleted just now left
        out with their rows."""
        ids: dict[int, str] = {}
        for at in range(0, len(seqs), 500):
            chunk = seqs[at : at + 500]
            ids.update(
                (int(r[0]), str(r[1]))
                for r in self.db.conn.execute(
                    "SELECT seq, episode_id FROM builtin_vectors"
                    f" WHERE seq IN ({_placeholders(len(chunk))})",
                    chunk,
                )
            )
        known = [n for n, q in enumerate(seqs) if q in ids]
        if len(known) < len(seqs):
            rows = rows[known]
        return [ids[seqs[n]] for n in known], rows

    def builtin_vectors_after(
        self, scopes: Sequence[str], model_id: str, after: int, limit: int
    ) -> tuple[list[str], Vector, int]:
        """From the in-memory blocks, whose rows are in ``seq`` order: the ``limit`` lowest
        seqs past ``after`` across the scopes' blocks, each row as ``scale * int8``."""
        empty = np.zeros((0, 0), dtype=np.float32)
        if limit <= 0:
            return [], empty, after
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            blocks = [matrix.blocks[s] for s in sorted(set(scopes)) if s in matrix.blocks]
            parts: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int8], Any]] = []
            for block in blocks:
                seqs = block.seqs[: block.count]
                first = int(np.searchsorted(seqs, after, side="right"))
                end = min(block.count, first + limit)
                if end > first:
                    parts.append(
                        (seqs[first:end], block.vectors[first:end], block.scales[first:end])
                    )
            if not parts or len({p[1].shape[1] for p in parts}) != 1:
                return [], empty, after
            seqs = np.concatenate([p[0] for p in parts])
            order = np.argsort(seqs, kind="stable")[:limit]
            seqs = seqs[order]
            rows = np.concatenate([p[1] for p in parts])[order].astype(np.float32)
            rows *= np.concatenate([p[2] for p in parts])[order][:, None]
        # Looked up outside the lock (each thread has its own connection), so recalls
        # searching the blocks meanwhile do not wait on it.
        listed = seqs.tolist()
        found, rows = self._with_ids(listed, rows)
        return found, rows, int(listed[-1])

    def builtin_neighbours(
        self, row: EpisodeRow, window_s: float
    ) -> tuple[EpisodeRow | None, EpisodeRow | None]:
        """The closest earlier and later live episode on ``row``'s scope, repo and branch,
        whichever agent ran it.

        Both lie within ``window_s`` seconds of ``row`` and still have a body; order is
        (started_at, id), so episodes started in the same second still have one order.
        Two lookups on the (scope, started_at) index, each reading only the rows of that
        scope inside the window.
        """
        same = (
            f"SELECT {_EPISODE_COLUMNS} FROM episodes e WHERE e.scope = ? AND e.repo = ?"
            " AND e.branch IS ? AND e.forgotten_at IS NULL AND e.episode_json IS NOT NULL"
        )
        key = (row.scope, row.repo, row.branch)
        conn = self.db.conn
        before = conn.execute(
            f"{same} AND e.started_at >= ? AND (e.started_at, e.id) < (?, ?)"
            " ORDER BY e.started_at DESC, e.id DESC LIMIT 1",
            (*key, row.started_at - window_s, row.started_at, row.id),
        ).fetchone()
        after = conn.execute(
            f"{same} AND e.started_at <= ? AND (e.started_at, e.id) > (?, ?)"
            " ORDER BY e.started_at, e.id LIMIT 1",
            (*key, row.started_at + window_s, row.started_at, row.id),
        ).fetchone()
        return (
            episode_from_row(before) if before is not None else None,
            episode_from_row(after) if after is not None else None,
        )

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
        return vector_blob.decode(row[1]).reshape(int(row[0]))

    def cache_embedding(self, content_hash: str, model_id: str, vector: Vector) -> None:
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO embeddings (content_hash, model_id, dim, vector) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (content_hash, model_id) DO NOTHING",
                (content_hash, model_id, int(vec.shape[0]), vector_blob.encode(vec)),
            )

    def builtin_missing_vectors(self, model_id: str, limit: int) -> list[EpisodeRow]:
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes e WHERE e.forgotten_at IS NULL"
            " AND e.text IS NOT NULL"
            " AND e.rowid IN (SELECT rowid FROM builtin_fts_source)"
            " AND NOT EXISTS (SELECT 1 FROM builtin_vectors v WHERE v.episode_id = e.id"
            " AND v.model_id = ?) ORDER BY e.started_at DESC LIMIT ?",
            (model_id, limit),
        ).fetchall()
        return [episode_from_row(r) for r in rows]

    def builtin_vector_progress(self, model_id: str) -> tuple[int, int]:
        """(episodes in the built-in index, how many of them have a ``model_id`` vector)."""
        row = self.db.conn.execute(
            "SELECT count(*), count(v.episode_id) FROM episodes e"
            " LEFT JOIN builtin_vectors v ON v.episode_id = e.id AND v.model_id = ?"
            " WHERE e.forgotten_at IS NULL AND e.text IS NOT NULL"
            " AND e.rowid IN (SELECT rowid FROM builtin_fts_source)",
            (model_id,),
        ).fetchone()
        return int(row[0]), int(row[1])

    # ---- upkeep -----------------------------------------------------------------------
    def builtin_segments(self) -> list[int]:
        return fts_upkeep.segment_sizes(self.db.conn, "builtin_fts")

    def builtin_compact(self, budget_s: float = fts_upkeep.PASS_BUDGET_S) -> Compaction:
        done = fts_upkeep.compact(self.db, "builtin_fts", budget_s=budget_s)
        # A merge rewrites the index and frees the old segments' pages (about 4 % of the
        # bench store's file after a full merge): give them back to the file system.
        self.db.release_free_pages()
        return done

    # ---- search -----------------------------------------------------------------------
    def search_text(self, match: str, scopes: Sequence[str], limit: int) -> list[str]:
        """Episode ids in ``scopes`` ranked by BM25 (best first): :meth:`search_text_scored`
        without the scores."""
        return [eid for eid, _ in self.search_text_scored(match, scopes, limit)]

    def search_text_scored(
        self, match: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """(episode id, coverage) in ``scopes`` ranked by BM25, best first. ``match`` must be
        quoted.

        The coverage is the BM25 score over the summed IDF of the phrases scored: about 1
        for an episode that holds each of them once at an average length, near 0 for one
        that holds only a common word of the query. Unlike a rank, it says how good a word
        match is whatever else matched, which is what fusion reads
        (:func:`fleetmem.core.ranking.coverage_share`).

        Words found only in an episode's context (its neighbours' excerpts) count for less
        than its own, so a neighbour never ties with the episode that holds the words.

        Cost at scale is bounded three ways, none of which touches scope enforcement:
        phrases found in a large share of the store are dropped first (see
        :func:`~fleetmem.core.textquery.prune_common`); the caller's scope tokens are ANDed
        into the query so FTS5 scores in-scope rows only; and when even that leaves more than
        :data:`MAX_SCORED` rows, the most recently indexed of them are scored. FTS5 ranks
        alone, and only its best rows are joined with ``episodes``, which is what enforces
        scope and drops forgotten episodes (their index rows may outlive the tombstone until
        the forget job runs), so the inner list widens until ``limit`` rows survive or it has
        no more to give. Rows tied on BM25 at the inner cut are taken newest-indexed first.
        """
        if not scopes or limit <= 0:
            return []
        conn = self.db.conn
        words, norm = self._pruned(conn, match)
        tokens = " OR ".join(f'"{scope_token(s)}"' for s in dict.fromkeys(scopes))
        scoped = f"scope_key : ({tokens}) AND {{{TEXT_COLUMNS}}} : ({words})"
        wide = 2 * limit
        in_scope = f"e.scope IN ({_placeholders(len(scopes))}) AND e.forgotten_at IS NULL"
        while True:
            rows = conn.execute(
                "WITH recent AS (SELECT rowid AS r,"
                f" bm25(builtin_fts, 1.0, 1.0, {CONTEXT_WEIGHT}, 0.0) AS score"
                " FROM builtin_fts WHERE builtin_fts MATCH ? ORDER BY rowid DESC LIMIT ?),"
                " best AS (SELECT r, score FROM recent ORDER BY score, r DESC LIMIT ?)"
                f" SELECT e.id, coalesce({in_scope}, 0), best.score FROM best"
                " LEFT JOIN episodes e ON e.rowid = best.r"
                " ORDER BY best.score, e.started_at DESC, e.id",
                [scoped, MAX_SCORED, wide, *scopes],
            ).fetchall()
            # FTS5's bm25() is negative, better matches lower.
            kept = [(str(r[0]), -float(r[2]) / norm) for r in rows if r[1]]
            if len(kept) >= limit or len(rows) < wide or wide >= MAX_SCORED:
                return kept[:limit]
            wide *= 4

    def _pruned(self, conn: sqlite3.Connection, match: str) -> tuple[str, float]:
        """``match`` without its phrases too common to rank by when the store is large, and
        the summed IDF of the phrases kept and of those found nowhere, by FTS5's own formula
        (its bm25() weighs each phrase by the same number)."""
        phrases = match_phrases(match)
        total = self._term_stats.total_docs(conn)
        counts = self._term_stats.phrase_counts(conn, phrases, total)
        kept = phrases
        if len(phrases) >= 2 and total > PRUNE_FLOOR_DOCS:
            kept = prune_common(counts, total, share=PRUNE_SHARE, floor=PRUNE_FLOOR_DOCS)
        # A phrase no episode holds still counts in the sum: a query in words the store never
        # saw is covered less, whatever a document holds of its other words.
        counted = {*kept, *(p for p in phrases if not counts.get(p, 0))}
        norm = sum(idf(total, counts.get(p, 0)) for p in counted) or 1.0
        return (or_match(kept) or match), norm

    def search_vector(
        self, query: Vector, model_id: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """Episode ids in ``scopes`` by cosine similarity to ``query`` (rows are unit length)."""
        if not scopes or limit <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        with self._matrix_lock:
            matrix = self._refresh(model_id)
            hits: list[tuple[int, float]] = []
            for scope in dict.fromkeys(scopes):
                block = matrix.blocks.get(scope)
                if block is not None:
                    hits.extend(block.top(q, limit))
            hits.sort(key=lambda hit: -hit[1])
            hits = hits[:limit]
            if not hits:
                return []
            # Under the lock: a forget bumps the generation and the next search reloads, so
            # every seq here still names its episode unless it was deleted just now.
            ids = dict(
                self.db.conn.execute(
                    "SELECT seq, episode_id FROM builtin_vectors"
                    f" WHERE seq IN ({_placeholders(len(hits))})",
                    [seq for seq, _ in hits],
                ).fetchall()
            )
        return [(str(ids[seq]), score) for seq, score in hits if seq in ids]

    def _refresh(self, model_id: str) -> _Matrix:
        conn = self.db.conn
        generation = str(
            conn.execute("SELECT value FROM meta WHERE key = 'vector_generation'").fetchone()[0]
        )
        matrix = self._matrices.get(model_id)
        if matrix is None or matrix.generation != generation:
            matrix = _Matrix(generation=generation)
            self._matrices[model_id] = matrix
        joined = (
            " FROM builtin_vectors v JOIN episodes e ON e.id = v.episode_id"
            " JOIN embeddings m ON m.content_hash = v.content_hash AND m.model_id = v.model_id"
            " WHERE v.model_id = ? AND v.seq > ?"
        )
        since = (model_id, matrix.last_seq)
        # The rows arrive a batch at a time into blocks sized beforehand: fetching them all
        # at once held every vector twice more as Python bytes while the blocks filled (at
        # 100k episodes the daemon's resident set fell from 608 to 557 MiB with this and the
        # quarter growth).
        for scope, dim, rows in conn.execute(
            f"SELECT e.scope, m.dim, count(*) {joined} GROUP BY e.scope, m.dim", since
        ):
            block = matrix.blocks.setdefault(str(scope), _Block())
            if block.vectors.shape[1] in (0, int(dim)):
                block.reserve(block.count + int(rows), int(dim))
        cursor = conn.execute(
            f"SELECT v.seq, e.scope, m.dim, m.vector {joined} ORDER BY v.seq", since
        )
        loaded = 0
        while batch := cursor.fetchmany(_LOAD_BATCH):
            by_scope: dict[str, list[Any]] = {}
            for r in batch:
                by_scope.setdefault(str(r[1]), []).append(r)
            for scope, good in by_scope.items():
                block = matrix.blocks.setdefault(scope, _Block())
                dim = block.vectors.shape[1] or int(good[0][2])
                good = [r for r in good if int(r[2]) == dim]
                if good:
                    # Stored as int8 already: taken as the search holds them.
                    quantized, scales = vector_blob.quantized_rows([r[3] for r in good], dim)
                    block.append_quantized([int(r[0]) for r in good], quantized, scales)
            matrix.last_seq = int(batch[-1][0])
            loaded += len(batch)
        if loaded >= _LOAD_BATCH:
            # The fetched rows' bytes are freed by now; hand their pages back (a recall
            # that only picks up a few new rows skips this).
            process_memory.give_back()
        return matrix
