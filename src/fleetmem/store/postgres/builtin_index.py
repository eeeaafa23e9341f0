"""The built-in provider's index in PostgreSQL: BM25 over postings, and pgvector.

Text: :mod:`fleetmem.store.postgres.text_index` tokenizes and scores as SQLite's FTS5 does;
this module keeps the index (a posting per term of each episode, with the term's positions,
read newest first: see :meth:`BuiltinIndexMixin._scored`; a posting per pair of adjacent
terms, where phrases are read: :meth:`BuiltinIndexMixin._phrase_rows`; a row of
``builtin_fts`` per episode, naming its terms) and its statistics in step (one write
transaction per change: the store's writer lock keeps daemons sharing the database from
deadlocking on the counts of common terms) and runs the query. The constants that shape a
query (the context column's weight, the scoring cap, phrase pruning) are the SQLite store's
own, imported, so both stores answer the same question the same way.

Vectors: each episode's vector is a ``vector`` in ``builtin_vectors`` (with its scope, so a
scoped search filters in the index scan), searched by cosine distance through an HNSW index
per dimension (created when the first vector of that dimension arrives). pgvector's
iterative index scan keeps scanning until ``limit`` rows of the caller's scopes are found.
Vectors are also kept in the ``embeddings`` cache by content hash, as in SQLite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from fleetmem.core.textquery import match_phrases, prune_common
from fleetmem.store.base import Compaction, EpisodeRow, IndexEntry, Vector
from fleetmem.store.postgres import text_index
from fleetmem.store.postgres.db import PgDatabase
from fleetmem.store.postgres.records import EPISODE_COLUMNS, episode_row
from fleetmem.store.postgres.text_index import Phrase, idf

# The SQLite store's query constants, read at each query (so a change there, or a test's
# monkeypatch, applies to both stores alike).
from fleetmem.store.sqlite import builtin_index as fts5

if TYPE_CHECKING:
    import numpy as np
else:
    from fleetmem.lazy_numpy import np

#: pgvector's HNSW indexes take vectors of at most this many dimensions (larger ones are
#: searched exactly, by a scan).
HNSW_MAX_DIM = 2000
#: Candidates an HNSW scan keeps (pgvector's ef_search); raised to the limit asked for.
EF_SEARCH = 100
Columns = tuple[frozenset[str], frozenset[str], frozenset[str]]
#: A phrase of several tokens whose rarest token is in at most this many documents has its
#: own document count taken (from that token's postings); above it, the rarest token's count
#: stands in.
EXACT_PHRASE_MAX = 2000


def _literal(vector: Vector) -> str:
    """A pgvector literal; float32 values printed so that they parse back exactly."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _term_deltas(before: Columns, after: Columns) -> dict[str, list[int]]:
    """Per lexeme, how a document's change moves its counts: in any column, in the text, the
    summary and the context (each -1, 0 or +1)."""
    was = before[0] | before[1] | before[2]
    now = after[0] | after[1] | after[2]
    deltas: dict[str, list[int]] = {}
    for lexeme in was | now:
        delta = [int(lexeme in now) - int(lexeme in was)] + [
            int(lexeme in a) - int(lexeme in b) for a, b in zip(after, before, strict=True)
        ]
        if any(delta):
            deltas[lexeme] = delta
    return deltas


def _float_rows(blobs: Sequence[bytes]) -> Vector:
    """Stored float32 vectors of one width as one matrix, a row each: one writable buffer
    for every row (a bytearray), so no second copy."""
    return np.frombuffer(bytearray().join(blobs), dtype=np.float32).reshape(len(blobs), -1)


class BuiltinIndexMixin:
    db: PgDatabase

    def _init_builtin_index(self) -> None:
        self._vector_dims: set[int] = set()

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
        self.builtin_put_many([(episode_id, text, summary, vector, vector_hash, model_id, context)])

    def builtin_put_many(self, entries: Sequence[IndexEntry]) -> None:
        """:meth:`builtin_put` for many episodes in one transaction, the term statistics and
        totals moved once for all of them: updating those rows once per episode inside one
        transaction leaves a version of each behind every time, and each update walks them
        (a copy of 3,000 episodes took 118 s that way)."""
        deltas: dict[str, list[int]] = {}
        docs = tokens = 0
        with self.db.write() as conn:
            for episode_id, text, summary, vector, vector_hash, model_id, context in entries:
                doc = text_index.document(text, summary, context)
                row = conn.execute(
                    "SELECT erow, scope, agent, started_at FROM episodes WHERE id = %s",
                    (episode_id,),
                ).fetchone()
                if row is None:
                    raise KeyError(episode_id)
                erow, scope, agent = int(row[0]), str(row[1]), str(row[2])
                conn.execute(
                    "INSERT INTO builtin_agents (scope, agent) VALUES (%s, %s)"
                    " ON CONFLICT DO NOTHING",
                    (scope, agent),
                )
                old = conn.execute(
                    "SELECT doc_len, scope FROM builtin_fts WHERE erow = %s", (erow,)
                ).fetchone()
                stored = self._stored(conn, "erow = %s", erow)
                before = stored.columns
                if old is not None:
                    self._drop_postings(conn, erow, str(old[1]), stored)
                for lexeme, delta in _term_deltas(before, doc.columns).items():
                    into = deltas.setdefault(lexeme, [0, 0, 0, 0])
                    for i, d in enumerate(delta):
                        into[i] += d
                docs += 0 if old is not None else 1
                tokens += doc.length - (int(old[0]) if old else 0)
                # Re-recording the same episode replaces its index entry instead of adding one.
                conn.execute(
                    "INSERT INTO builtin_fts (erow, episode_id, scope, doc_len, text_end,"
                    " summary_end, terms, started_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s::text[], %s)"
                    " ON CONFLICT (erow) DO UPDATE SET scope = excluded.scope,"
                    " doc_len = excluded.doc_len, text_end = excluded.text_end,"
                    " summary_end = excluded.summary_end, terms = excluded.terms,"
                    " started_at = excluded.started_at",
                    (
                        erow,
                        episode_id,
                        scope,
                        doc.length,
                        doc.text_end,
                        doc.summary_end,
                        sorted(doc.positions),
                        float(row[3]),
                    ),
                )
                self._add_postings(conn, erow, scope, doc, float(row[3]))
                if vector is not None:
                    self._put_vector(conn, episode_id, scope, vector, vector_hash, model_id)
            self._apply_term_deltas(conn, deltas)
            if docs or tokens:
                conn.execute(
                    "UPDATE builtin_totals SET docs = docs + %s, tokens = tokens + %s WHERE id = 1",
                    (docs, tokens),
                )

    @staticmethod
    def _add_postings(
        conn: psycopg.Connection[Any],
        erow: int,
        scope: str,
        doc: text_index.IndexedDocument,
        started_at: float,
    ) -> None:
        """One ``builtin_postings`` row per term of ``doc`` (migrations 7 and 8), and one
        ``builtin_pair_postings`` row per pair of adjacent terms (migration 10)."""
        if not doc.positions:
            return
        lexemes = sorted(doc.positions)
        counts = doc.counts
        # The scope's number, made on its first posting (writes are serialised by the
        # writer lock, so the name is either inserted here or there already).
        scope_id = conn.execute(
            "WITH made AS (INSERT INTO builtin_scopes (scope) VALUES (%(scope)s)"
            " ON CONFLICT (scope) DO NOTHING RETURNING id)"
            " SELECT id FROM made UNION ALL"
            " SELECT id FROM builtin_scopes WHERE scope = %(scope)s LIMIT 1",
            {"scope": scope},
        ).fetchone()
        assert scope_id is not None
        conn.execute(
            "INSERT INTO builtin_postings (erow, started_at, scope_id, doc_len, n_main,"
            " n_context, lexeme, positions) SELECT %(erow)s, %(started)s, %(scope_id)s,"
            " %(len)s, m, c, l, p FROM unnest(%(lexemes)s::text[], %(main)s::int2[],"
            " %(context)s::int2[], %(positions)s::bytea[]) AS t(l, m, c, p)",
            {
                "scope_id": int(scope_id[0]),
                "erow": erow,
                "started": started_at,
                "len": doc.length,
                "lexemes": lexemes,
                "main": [counts[lex][0] for lex in lexemes],
                "context": [counts[lex][1] for lex in lexemes],
                "positions": [text_index.pack_positions(doc.positions[lex]) for lex in lexemes],
            },
        )
        held = doc.pairs
        if not held:
            return
        pairs = sorted(held)
        conn.execute(
            "INSERT INTO builtin_pair_postings (pair, scope_id, erow, doc_len, started_at,"
            " n_main, positions) SELECT k, %(scope_id)s, %(erow)s, %(len)s, %(started)s, m, p"
            " FROM unnest(%(pairs)s::int8[], %(main)s::int2[], %(positions)s::bytea[])"
            " AS t(k, m, p)",
            {
                "scope_id": int(scope_id[0]),
                "erow": erow,
                "len": doc.length,
                "started": started_at,
                "pairs": pairs,
                "main": [held[pair][0] for pair in pairs],
                "positions": [text_index.pack_positions(held[pair][1]) for pair in pairs],
            },
        )

    @staticmethod
    def _drop_postings(
        conn: psycopg.Connection[Any], erow: int, scope: str, stored: _Stored
    ) -> None:
        """Remove the postings and pair postings of the entry at ``erow`` (``stored``)."""
        terms = sorted(stored.positions)
        if not terms:
            return
        scope_id = conn.execute(
            "SELECT id FROM builtin_scopes WHERE scope = %s", (scope,)
        ).fetchone()
        if scope_id is None:
            return
        conn.execute(
            "DELETE FROM builtin_postings WHERE lexeme = ANY(%s) AND erow = %s AND scope_id = %s",
            (terms, erow, int(scope_id[0])),
        )
        pairs = sorted(text_index.pair_starts(stored.positions))
        if pairs:
            conn.execute(
                "DELETE FROM builtin_pair_postings WHERE pair = ANY(%s::int8[]) AND erow = %s"
                " AND scope_id = %s",
                (pairs, erow, int(scope_id[0])),
            )

    @staticmethod
    def _stored(conn: psycopg.Connection[Any], where: str, key: object) -> _Stored:
        """One stored document (empty when there is none): its postings' positions, and its
        terms by column, each in the column its place says."""
        rows = conn.execute(
            "SELECT p.lexeme, p.positions, f.text_end, f.summary_end FROM builtin_fts f"
            " JOIN builtin_scopes s ON s.scope = f.scope"
            " JOIN builtin_postings p ON p.lexeme = ANY(f.terms)"
            f" AND p.scope_id = s.id AND p.erow = f.erow WHERE f.{where}",
            (key,),
        ).fetchall()
        if not rows:
            return _Stored({}, (frozenset(), frozenset(), frozenset()))
        held = {str(r[0]): text_index.unpack_positions(bytes(r[1])) for r in rows}
        return _Stored(held, text_index.columns_of(held, int(rows[0][2]), int(rows[0][3])))

    @staticmethod
    def _apply_term_deltas(conn: psycopg.Connection[Any], deltas: dict[str, list[int]]) -> None:
        """Add ``deltas`` (lexeme: docs, in text, in summary, in context) to ``builtin_terms``."""
        deltas = {lex: d for lex, d in deltas.items() if any(d)}
        if not deltas:
            return
        # In lexeme order, so two writers (were they ever not serialised) lock rows alike.
        lexemes = sorted(deltas)
        cols = [[deltas[lex][i] for lex in lexemes] for i in range(4)]
        conn.execute(
            "INSERT INTO builtin_terms (lexeme, docs, in_text, in_summary, in_context)"
            " SELECT * FROM unnest(%s::text[], %s::int[], %s::int[], %s::int[], %s::int[])"
            " ON CONFLICT (lexeme) DO UPDATE SET docs = builtin_terms.docs + excluded.docs,"
            " in_text = builtin_terms.in_text + excluded.in_text,"
            " in_summary = builtin_terms.in_summary + excluded.in_summary,"
            " in_context = builtin_terms.in_context + excluded.in_context",
            (lexemes, *cols),
        )
        gone = [lex for lex in lexemes if deltas[lex][0] < 0]
        if gone:
            conn.execute("DELETE FROM builtin_terms WHERE lexeme = ANY(%s) AND docs <= 0", (gone,))

    def _put_vector(
        self,
        conn: psycopg.Connection[Any],
        episode_id: str,
        scope: str,
        vector: Vector,
        content_hash: str,
        model_id: str,
    ) -> None:
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        dim = int(vec.shape[0])
        self.cache_embedding(content_hash, model_id, vec)
        existing = conn.execute(
            "SELECT content_hash, model_id FROM builtin_vectors WHERE episode_id = %s",
            (episode_id,),
        ).fetchone()
        if existing is not None and tuple(existing) == (content_hash, model_id):
            return
        self._ensure_vector_index(conn, dim)
        conn.execute("DELETE FROM builtin_vectors WHERE episode_id = %s", (episode_id,))
        conn.execute(
            "INSERT INTO builtin_vectors (episode_id, content_hash, model_id, scope, dim,"
            " embedding) VALUES (%s, %s, %s, %s, %s, %s::vector)",
            (episode_id, content_hash, model_id, scope, dim, _literal(vec)),
        )

    def _ensure_vector_index(self, conn: psycopg.Connection[Any], dim: int) -> None:
        """One HNSW cosine index per dimension (a partial index on ``dim``), made once."""
        if dim in self._vector_dims or dim > HNSW_MAX_DIM or dim < 1:
            return
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS builtin_vectors_hnsw_{dim} ON builtin_vectors"
            f" USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
        )
        self._vector_dims.add(dim)

    def builtin_delete(self, episode_id: str) -> bool:
        with self.db.write() as conn:
            stored = self._stored(conn, "episode_id = %s", episode_id)
            old = conn.execute(
                "DELETE FROM builtin_fts WHERE episode_id = %s RETURNING doc_len, erow, scope",
                (episode_id,),
            ).fetchone()
            if old is not None:
                self._drop_postings(conn, int(old[1]), str(old[2]), stored)
                empty: Columns = (frozenset(), frozenset(), frozenset())
                self._apply_term_deltas(conn, _term_deltas(stored.columns, empty))
                conn.execute(
                    "UPDATE builtin_totals SET docs = docs - 1, tokens = tokens - %s WHERE id = 1",
                    (int(old[0]),),
                )
            had_vec = conn.execute(
                "DELETE FROM builtin_vectors WHERE episode_id = %s", (episode_id,)
            ).rowcount
            return bool(old is not None or had_vec)

    def builtin_has(self, episode_id: str) -> bool:
        found = self.db.row(
            "SELECT 1 FROM builtin_fts f JOIN episodes e ON e.erow = f.erow WHERE e.id = %s",
            (episode_id,),
        )
        return found is not None

    def builtin_facets(self, episode_ids: Sequence[str]) -> dict[str, tuple[float, str]]:
        """(start time, agent) of live episodes by id, without decoding bodies."""
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return {}
        rows = self.db.rows(
            "SELECT id, started_at, agent FROM episodes WHERE id = ANY(%s)"
            " AND forgotten_at IS NULL",
            (ids,),
        )
        return {str(r[0]): (float(r[1]), str(r[2])) for r in rows}

    def builtin_agent_names(self, scopes: Sequence[str]) -> list[str]:
        """The agents that have had an episode indexed in any of ``scopes``, sorted."""
        if not scopes:
            return []
        rows = self.db.rows(
            "SELECT DISTINCT agent FROM builtin_agents WHERE scope = ANY(%s) ORDER BY agent",
            (list(scopes),),
        )
        return [str(r[0]) for r in rows]

    def builtin_vectors_for(self, episode_ids: Sequence[str], model_id: str) -> dict[str, Vector]:
        """The stored vectors of ``episode_ids`` under ``model_id`` (those that have one)."""
        ids = list(dict.fromkeys(episode_ids))[:500]
        if not ids:
            return {}
        rows = self.db.rows(
            "SELECT v.episode_id, m.vector FROM builtin_vectors v JOIN embeddings m"
            " ON m.content_hash = v.content_hash AND m.model_id = v.model_id"
            " WHERE v.model_id = %s AND v.episode_id = ANY(%s)",
            (model_id, ids),
        )
        return {str(r[0]): np.frombuffer(bytes(r[1]), dtype=np.float32).copy() for r in rows}

    def builtin_cosines(
        self, query: Vector, episode_ids: Sequence[str], model_id: str
    ) -> dict[str, float]:
        """From the stored float vectors (:meth:`builtin_vectors_for`)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        return {
            eid: float(np.dot(vector, q))
            for eid, vector in self.builtin_vectors_for(episode_ids, model_id).items()
            if vector.shape == q.shape
        }

    def builtin_vector_count(self, scopes: Sequence[str], model_id: str) -> int:
        """Counted on the (model_id, scope) index."""
        wanted = list(dict.fromkeys(scopes))
        if not wanted:
            return 0
        found = self.db.row(
            "SELECT count(*) FROM builtin_vectors WHERE model_id = %s AND scope = ANY(%s)",
            (model_id, wanted),
        )
        return int(found[0]) if found is not None else 0

    def builtin_vector_sample(
        self, scopes: Sequence[str], model_id: str, limit: int
    ) -> tuple[list[str], Vector]:
        """Every n-th row in ``seq`` order, n chosen from the rows' count in the same query."""
        empty: tuple[list[str], Vector] = ([], np.zeros((0, 0), dtype=np.float32))
        wanted = list(dict.fromkeys(scopes))
        if not wanted or limit <= 0:
            return empty
        rows = self.db.rows(
            "SELECT s.episode_id, m.vector FROM ("
            " SELECT episode_id, content_hash, row_number() OVER (ORDER BY seq) AS n,"
            " count(*) OVER () AS total"
            " FROM builtin_vectors WHERE model_id = %s AND scope = ANY(%s)) s"
            " JOIN embeddings m ON m.content_hash = s.content_hash AND m.model_id = %s"
            " WHERE (s.n - 1) %% GREATEST(1, CEIL(s.total / %s::numeric))::bigint = 0"
            " ORDER BY s.n LIMIT %s",
            (model_id, wanted, model_id, limit, limit),
        )
        blobs = [bytes(r[1]) for r in rows]
        if not blobs or len({len(b) for b in blobs}) != 1:
            return empty
        return [str(r[0]) for r in rows], _float_rows(blobs)

    def builtin_vectors_after(
        self, scopes: Sequence[str], model_id: str, after: int, limit: int
    ) -> tuple[list[str], Vector, int]:
        """A page in ``seq`` order, read along the seq index from where the last ended."""
        empty = np.zeros((0, 0), dtype=np.float32)
        wanted = list(dict.fromkeys(scopes))
        if not wanted or limit <= 0:
            return [], empty, after
        rows = self.db.rows(
            "SELECT v.seq, v.episode_id, m.vector FROM builtin_vectors v JOIN embeddings m"
            " ON m.content_hash = v.content_hash AND m.model_id = v.model_id"
            " WHERE v.model_id = %s AND v.scope = ANY(%s) AND v.seq > %s"
            " ORDER BY v.seq LIMIT %s",
            (model_id, wanted, after, limit),
        )
        if not rows:
            return [], empty, after
        blobs = [bytes(r[2]) for r in rows]
        # One model has one dimension; a row of another width is left out, not mixed in.
        kept = [n for n, b in enumerate(blobs) if len(b) == len(blobs[0])]
        matrix = _float_rows([blobs[n] for n in kept])
        return [str(rows[n][1]) for n in kept], matrix, int(rows[-1][0])

    def builtin_neighbours(
        self, row: EpisodeRow, window_s: float
    ) -> tuple[EpisodeRow | None, EpisodeRow | None]:
        """The closest earlier and later live episode on ``row``'s scope, repo and branch,
        whichever agent ran it, within ``window_s`` seconds (see the SQLite store's)."""
        same = (
            f"SELECT {EPISODE_COLUMNS} FROM episodes e WHERE e.scope = %s AND e.repo = %s"
            " AND e.branch IS NOT DISTINCT FROM %s AND e.forgotten_at IS NULL"
            " AND e.episode_json IS NOT NULL"
        )
        key = (row.scope, row.repo, row.branch)
        before = self.db.row(
            f"{same} AND e.started_at >= %s AND (e.started_at, e.id) < (%s, %s)"
            " ORDER BY e.started_at DESC, e.id DESC LIMIT 1",
            (*key, row.started_at - window_s, row.started_at, row.id),
        )
        after = self.db.row(
            f"{same} AND e.started_at <= %s AND (e.started_at, e.id) > (%s, %s)"
            " ORDER BY e.started_at, e.id LIMIT 1",
            (*key, row.started_at + window_s, row.started_at, row.id),
        )
        return (
            episode_row(before) if before is not None else None,
            episode_row(after) if after is not None else None,
        )

    # ---- embeddings cache -------------------------------------------------------------
    def cached_embedding(self, content_hash: str, model_id: str) -> Vector | None:
        found = self.db.row(
            "SELECT dim, vector FROM embeddings WHERE content_hash = %s AND model_id = %s",
            (content_hash, model_id),
        )
        if found is None:
            return None
        return np.frombuffer(bytes(found[1]), dtype=np.float32).reshape(int(found[0])).copy()

    def cache_embedding(self, content_hash: str, model_id: str, vector: Vector) -> None:
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        self.db.run(
            "INSERT INTO embeddings (content_hash, model_id, dim, vector)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (content_hash, model_id) DO NOTHING",
            (content_hash, model_id, int(vec.shape[0]), vec.tobytes()),
        )

    def builtin_missing_vectors(self, model_id: str, limit: int) -> list[EpisodeRow]:
        rows = self.db.rows(
            f"SELECT {EPISODE_COLUMNS} FROM episodes e WHERE e.forgotten_at IS NULL"
            " AND e.text IS NOT NULL"
            " AND EXISTS (SELECT 1 FROM builtin_fts f WHERE f.erow = e.erow)"
            " AND NOT EXISTS (SELECT 1 FROM builtin_vectors v WHERE v.episode_id = e.id"
            " AND v.model_id = %s) ORDER BY e.started_at DESC, e.erow DESC LIMIT %s",
            (model_id, limit),
        )
        return [episode_row(r) for r in rows]

    def builtin_vector_progress(self, model_id: str) -> tuple[int, int]:
        """(episodes in the built-in index, how many of them have a ``model_id`` vector)."""
        found = self.db.row(
            "SELECT count(*), count(v.episode_id) FROM episodes e"
            " JOIN builtin_fts f ON f.erow = e.erow"
            " LEFT JOIN builtin_vectors v ON v.episode_id = e.id AND v.model_id = %s"
            " WHERE e.forgotten_at IS NULL AND e.text IS NOT NULL",
            (model_id,),
        )
        assert found is not None
        return int(found[0]), int(found[1])

    # ---- upkeep -----------------------------------------------------------------------
    def builtin_segments(self) -> list[int]:
        """One "segment": the postings are a B-tree, with no segments to merge, so the index
        is always in the shape FTS5 compacts to."""
        return [1] if self.db.value("SELECT 1 FROM builtin_fts LIMIT 1") else []

    def builtin_compact(self, budget_s: float = 30.0) -> Compaction:
        """Nothing to merge (see :meth:`builtin_segments`): a pass that is already done."""
        segments = len(self.builtin_segments())
        return Compaction("builtin_fts", segments, segments, 0, 0.0, True)

    # ---- search -----------------------------------------------------------------------
    def search_text(self, match: str, scopes: Sequence[str], limit: int) -> list[str]:
        """Episode ids in ``scopes`` ranked by BM25 (best first)."""
        return [eid for eid, _ in self.search_text_scored(match, scopes, limit)]

    def search_text_scored(
        self, match: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """(episode id, coverage) in ``scopes`` ranked by BM25, best first: the SQLite store's
        :meth:`~fleetmem.store.sqlite.builtin_index.BuiltinIndexMixin.search_text_scored`,
        same pruning, same cap, same coverage (BM25 over the summed IDF of the phrases)."""
        if not scopes or limit <= 0:
            return []
        phrases = text_index.phrases(match_phrases(match))
        if not any(p.tokens for p in phrases):
            return []
        totals = self.db.row(
            "SELECT t.docs, t.tokens, (SELECT coalesce(max(erow), 0) FROM builtin_fts)"
            " FROM builtin_totals t WHERE t.id = 1"
        )
        assert totals is not None
        docs, tokens, top = int(totals[0]), int(totals[1]), int(totals[2])
        if docs == 0:
            return []
        both = self._phrase_counts(phrases)
        counts = {text: per_column for text, (per_column, _) in both.items()}
        kept = phrases
        if len(phrases) >= 2 and top > fts5.PRUNE_FLOOR_DOCS:
            by_text = {p.text: counts[p.text] for p in phrases}
            keep = set(
                prune_common(by_text, top, share=fts5.PRUNE_SHARE, floor=fts5.PRUNE_FLOOR_DOCS)
            )
            kept = [p for p in phrases if p.text in keep] or phrases
        counted = {p.text for p in kept} | {p.text for p in phrases if not counts[p.text]}
        norm = sum(idf(top, counts[t]) for t in counted) or 1.0
        idfs = [idf(docs, self._exact_count(p, both[p.text][1])) for p in kept]
        if not any(p.tokens for p in kept):
            return []
        ranked = self._scored(kept, idfs, scopes, tokens / docs, _head(limit))
        return [(eid, score / norm) for score, _, eid in self._live(ranked, limit)]

    def _scored(
        self,
        kept: Sequence[Phrase],
        idfs: Sequence[float],
        scopes: Sequence[str],
        avgdl: float,
        head: int,
    ) -> _Ranked:
        """The query's candidates, scored (:func:`_bm25_ranked`, at least ``head`` of them
        in order), ties of one score and start not yet ordered by id.

        The candidates are the ``MAX_SCORED`` newest rows in scope holding any phrase (as
        FTS5's ``a OR "b c"`` query takes them): each one-token phrase's newest
        ``MAX_SCORED`` postings in each scope are an index-only range read, and each phrase
        of several tokens brings its newest ``MAX_SCORED`` rows (:meth:`_phrase_rows`). The
        union's newest ``MAX_SCORED`` rows are exactly the query's: a row among them holding
        a phrase is among that phrase's newest."""
        cap = fts5.MAX_SCORED
        unique = list(dict.fromkeys(scopes))
        singles = sorted({p.tokens[0] for p in kept if len(p.tokens) == 1})
        # One-token phrases first: the newest ``cap`` rows holding any of them. When there
        # are ``cap`` of them, no older row can be a candidate, so a phrase of several tokens
        # is looked for only down to the last of them (``floor``).
        rows: list[tuple[Any, ...]] = []
        if singles:
            # Each posting comes with its token's place in ``singles`` (``k``, from 1), so the
            # scoring below reads numbers only.
            rows = self.db.rows(
                "WITH p AS (SELECT x.*, l.k FROM unnest(%(lexemes)s::text[])"
                " WITH ORDINALITY l(lexeme, k)"
                " CROSS JOIN builtin_scopes s CROSS JOIN LATERAL"
                " (SELECT b.erow, b.n_main, b.n_context, b.doc_len, b.started_at"
                ' FROM builtin_postings b WHERE b.lexeme = l.lexeme COLLATE "C"'
                " AND b.scope_id = s.id ORDER BY b.erow DESC LIMIT %(cap)s) x"
                " WHERE s.scope = ANY(%(scopes)s)),"
                " cand AS (SELECT DISTINCT erow FROM p ORDER BY erow DESC LIMIT %(cap)s)"
                " SELECT erow, k, n_main, n_context, doc_len, started_at FROM p"
                " WHERE erow >= (SELECT min(erow) FROM cand)",
                {"lexemes": singles, "scopes": unique, "cap": cap},
                binary=True,
            )
        postings = _Postings.of(rows)
        held = np.unique(postings.erow)
        floor = int(held[0]) if held.size >= cap else 0
        # Phrases of several tokens: their rows, frequencies, lengths and starts.
        in_phrases: dict[int, dict[str, float]] = {}
        facts: dict[int, tuple[int, float]] = {}
        multi = [p for p in kept if len(p.tokens) > 1]
        if multi:  # the scopes' numbers, read here only: the postings query joins them itself
            scope_ids = [
                int(r[0])
                for r in self.db.rows(
                    "SELECT id FROM builtin_scopes WHERE scope = ANY(%s)", (unique,)
                )
            ]
            for phrase in multi:
                for erow, (hits, doc_len, started_at) in self._phrase_rows(
                    phrase, scope_ids, cap, floor
                ).items():
                    in_phrases.setdefault(erow, {})[phrase.text] = hits
                    facts[erow] = (doc_len, started_at)
        # bm25()'s sum, phrase by phrase in the query's order.
        terms = [
            (p.tokens[0] if len(p.tokens) == 1 else None, p.text, w)
            for p, w in zip(kept, idfs, strict=True)
            if p.tokens
        ]
        by_token = {token: k for k, token in enumerate(singles, start=1)}
        return _bm25_ranked(postings, by_token, in_phrases, facts, terms, avgdl, cap, head)

    def _phrase_rows(
        self, phrase: Phrase, scope_ids: Sequence[int], cap: int, floor: int = 0
    ) -> dict[int, tuple[float, int, float]]:
        """The newest ``cap`` rows of each scope holding ``phrase`` (several tokens, adjacent),
        from row ``floor`` up: row -> (its weighted frequency there, the document's length,
        its start).

        Read from the phrase's pairs' postings (migration 10), newest first, in windows that
        end at the lead pair's ``step``-th posting below the last window (an index-only step),
        the lead being the pair whose ``step``-th posting is oldest (the sparsest lately).
        The lead's postings in the window are read from the primary key alone, starts
        included; each other pair's too when it holds at most :data:`_RANGE_READ` times as
        many there, else only its postings at the lead's rows, looked up by key. Then they are
        checked together (:func:`_checked`, the ``k``-th pair starting ``k`` after the first).
        A phrase of two tokens is one pair, every posting of which holds the phrase, so its
        first window is its answer. The windows grow fourfold while a phrase of more tokens is
        rarer than its lead. (A query ordered and limited by row would be simpler, but
        PostgreSQL estimates a term's rows in one scope from samples and, guessing few, reads
        and sorts all of them.)"""
        chain, distinct = _pair_chain(phrase)
        out: dict[int, tuple[float, int, float]] = {}
        for scope_id in scope_ids:
            matched = 0
            below = _NO_ROW_ABOVE
            step = cap
            while matched < cap and below > floor:
                ends = {p: self._pair_below(p, scope_id, below, step) for p in distinct}
                lead = min(distinct, key=lambda p: (ends[p], p))
                lowest = max(ends[lead], floor)
                read = self._pair_window([lead], scope_id, lowest, below)
                lead_rows = [int(r[1]) for r in read]
                others = [p for p in distinct if p != lead]
                # A pair with many more postings in the window is looked up at the lead's rows.
                many = [
                    p
                    for p in others
                    if ends[p] >= lowest
                    and self._pair_below(p, scope_id, below, _RANGE_READ * step) >= lowest
                ]
                ranged = [p for p in others if p not in many]
                if ranged:
                    read += self._pair_window(ranged, scope_id, lowest, below)
                if many and lead_rows:
                    read += self._pairs_at(many, scope_id, lead_rows)
                order = [str(lead), *(str(p) for p in others)]
                for erow, doc_len, started_at, f in _checked(chain, order, read):
                    if f and matched < cap:  # newest first: the cap keeps the newest
                        out[erow] = (f, doc_len, started_at)
                        matched += 1
                below = lowest
                step = min(step * 4, 16 * cap)
        return out

    def _pair_below(self, pair: int, scope_id: int, below: int, nth: int) -> int:
        """The row of ``pair``'s ``nth`` posting in a scope below row ``below`` (-1 when it has
        fewer): an index-only step."""
        found = self.db.value(
            "SELECT erow FROM builtin_pair_postings WHERE pair = %s AND scope_id = %s"
            " AND erow < %s ORDER BY erow DESC OFFSET %s LIMIT 1",
            (pair, scope_id, below, nth - 1),
        )
        return int(found) if found is not None else -1

    def _pair_window(
        self, pairs: Sequence[int], scope_id: int, lowest: int, below: int
    ) -> list[tuple[Any, ...]]:
        """The postings of ``pairs`` in a scope from row ``lowest`` to below ``below``, as
        :func:`_checked` reads them (the pair's id as text)."""
        return self.db.rows(
            _PAIR_READ + " WHERE pair = ANY(%s::int8[]) AND scope_id = %s"
            " AND erow >= %s AND erow < %s",
            (list(pairs), scope_id, lowest, below),
            binary=True,
        )

    def _pairs_at(
        self, pairs: Sequence[int], scope_id: int, rows: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        """The postings of ``pairs`` in a scope at ``rows``, looked up by key."""
        return self.db.rows(
            _PAIR_READ + " WHERE pair = ANY(%s::int8[]) AND scope_id = %s"
            " AND erow = ANY(%s::int8[])",
            (list(pairs), scope_id, _bigint_array(rows)),
            binary=True,
        )

    def _live(self, ranked: _Ranked, limit: int) -> list[tuple[float, float, str]]:
        """The first ``limit`` of ``ranked`` (by row) whose episode is not forgotten, with
        their episode ids, read a window at a time (a forgotten episode's entry lasts only
        until its provider forget runs). Within one score and start, ids order the rows, as
        FTS5 breaks ties; a window never ends inside such a run."""
        out: list[tuple[float, float, str]] = []
        scored = ranked.head
        whole = not ranked.more
        start = 0
        while len(out) < limit:
            end = start + max(limit, 32)
            if end > len(scored) and not whole:  # past the head: the rest, ranked below it
                scored = scored + ranked.rest()
                whole = True
            end = min(end, len(scored))
            if start >= end:
                break
            while end < len(scored) and _tie(scored[end], scored[end - 1]):
                end += 1
            window = scored[start:end]
            start = end
            named = {
                int(r[0]): str(r[1])
                for r in self.db.rows(
                    "SELECT f.erow, f.episode_id FROM builtin_fts f JOIN episodes e"
                    " ON e.erow = f.erow WHERE f.erow = ANY(%s) AND e.forgotten_at IS NULL",
                    ([erow for _, _, erow in window],),
                )
            }
            live = [(sc, st, named[erow]) for sc, st, erow in window if erow in named]
            live.sort(key=lambda s: (*_level(s[0]), -s[1], s[2]))
            out.extend(live)
        return out[:limit]

    def _phrase_counts(self, phrases: Sequence[Phrase]) -> dict[str, tuple[int, int]]:
        """Each phrase's document counts, its rarest token's: as the SQLite store's pruning
        and coverage read them (the largest count of one column), and in any column (BM25's)."""
        tokens = sorted({t for p in phrases for t in p.tokens})
        found = {
            str(r[0]): (int(r[1]), int(r[2]))
            for r in self.db.rows(
                "SELECT lexeme, greatest(in_text, in_summary, in_context), docs"
                " FROM builtin_terms WHERE lexeme = ANY(%s)",
                (tokens,),
            )
        }
        return {
            p.text: (
                min((found.get(t, (0, 0))[0] for t in p.tokens), default=0),
                min((found.get(t, (0, 0))[1] for t in p.tokens), default=0),
            )
            for p in phrases
        }

    def _exact_count(self, phrase: Phrase, rarest: int) -> int:
        """The documents holding ``phrase``: exact for one token; for several, counted when
        their rarest token is uncommon (on its pairs' starts), else that token's count (an
        upper bound). The pair with the fewest postings (at most the rarest token's) is read
        whole; the others only at its rows, as one of them may be common."""
        if len(phrase.tokens) == 1 or rarest == 0 or rarest > EXACT_PHRASE_MAX:
            return rarest
        chain, distinct = _pair_chain(phrase)
        held = {
            p: int(
                self.db.value(
                    "SELECT count(*) FROM (SELECT 1 FROM builtin_pair_postings WHERE pair = %s"
                    " LIMIT %s) x",
                    (p, rarest + 1),
                )
                or 0
            )
            for p in distinct
        }
        lead = min(distinct, key=lambda p: (held[p], p))
        if held[lead] == 0:
            return 0
        read = self.db.rows(_PAIR_READ + " WHERE pair = %s", (lead,), binary=True)
        others = [p for p in distinct if p != lead]
        if others:
            by_scope: dict[int, list[int]] = {}
            for row in read:
                by_scope.setdefault(int(row[6]), []).append(int(row[1]))
            for scope_id, rows in by_scope.items():
                read += self._pairs_at(others, scope_id, rows)
        order = [str(lead), *(str(p) for p in others)]
        return sum(1 for *_, f in _checked(chain, order, read) if f)

    def search_vector(
        self, query: Vector, model_id: str, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """Episode ids in ``scopes`` by cosine similarity to ``query``, best first."""
        if not scopes or limit <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        dim = int(q.shape[0])
        if dim < 1:
            return []
        literal = _literal(q)
        with self.db.read() as conn:
            # Settings for this transaction only: the HNSW scan goes on until ``limit`` rows
            # of these scopes are found, and keeps at least ``limit`` candidates.
            conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
            conn.execute(
                "SELECT set_config('hnsw.ef_search', %s, true)", (str(max(EF_SEARCH, limit)),)
            )
            # ``dim`` is an integer: in the SQL text, the planner matches the partial index.
            typed = f"embedding::vector({dim})"
            rows = conn.execute(
                f"SELECT episode_id, 1 - ({typed} <=> %(q)s::vector({dim})) FROM builtin_vectors"
                f" WHERE dim = {dim} AND model_id = %(model)s AND scope = ANY(%(scopes)s)"
                f" ORDER BY {typed} <=> %(q)s::vector({dim}) LIMIT %(limit)s",
                {
                    "q": literal,
                    "model": model_id,
                    "scopes": list(dict.fromkeys(scopes)),
                    "limit": limit,
                },
            ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]


@dataclass(frozen=True, slots=True)
class _Stored:
    """An indexed document as stored: each term's positions, and its terms by column."""

    positions: Mapping[str, Sequence[int]]
    columns: Columns


#: Candidates put in exact order by :func:`_bm25_ranked` beyond the ones asked for: room for
#: forgotten episodes before :meth:`BuiltinIndexMixin._live` has to order the rest.
_ORDERED_SPARE = 2
#: Scores this much below the ordered head's last one (relative) cannot tie with it at the
#: 11 significant digits of :func:`_level`.
_TIE_MARGIN = 1e-9
#: Two counts as one number (a posting keeps at most 256 positions).
_PAIR = 65_536


def _head(limit: int) -> int:
    """How many of a query's candidates to put in exact order: :meth:`~BuiltinIndexMixin._live`
    reads windows of ``max(limit, 32)``."""
    return max(limit, 32) * _ORDERED_SPARE


@dataclass(frozen=True, slots=True)
class _Postings:
    """The one-token phrases' postings of a query, column by column: row, token (its place
    in the query's sorted tokens, from 1), counts in the text or summary and in the context,
    the document's length and start."""

    erow: np.ndarray
    token: np.ndarray
    main: np.ndarray
    context: np.ndarray
    doc_len: np.ndarray
    started_at: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[tuple[Any, ...]]) -> _Postings:
        columns = list(zip(*rows, strict=True)) or [()] * 6
        erow, token, main, context, doc_len = (np.array(c, dtype=np.int64) for c in columns[:5])
        started_at = np.array(columns[5], dtype=np.float64)
        return cls(erow, token, main, context, doc_len, started_at)


@dataclass(frozen=True, slots=True)
class _Ranked:
    """A query's candidates scored, best first: ``head`` as (score, start, row), in
    :func:`_rank`'s order; the others, each ranking below all of the head, are made into
    tuples and ordered only if asked for (most queries read the head alone)."""

    head: list[tuple[float, float, int]]
    score: np.ndarray
    started: np.ndarray
    rows: np.ndarray

    @property
    def more(self) -> bool:
        return bool(self.rows.size)

    def rest(self) -> list[tuple[float, float, int]]:
        """The candidates after the head, in order."""
        tail = zip(self.score.tolist(), self.started.tolist(), self.rows.tolist(), strict=True)
        return sorted(tail, key=_rank)


def _bm25_ranked(
    postings: _Postings,
    by_token: Mapping[str, int],
    in_phrases: Mapping[int, Mapping[str, float]],
    facts: Mapping[int, tuple[int, float]],
    terms: Sequence[tuple[str | None, str, float]],
    avgdl: float,
    cap: int,
    head: int,
) -> _Ranked:
    """FTS5's bm25() of the newest ``cap`` candidates, computed column by column with the
    scalar formulas of :mod:`text_index` (the same operations in the same order, so every
    score is the one a row-by-row sum gives, to the last bit), those scoring above 0.

    ``terms`` are the query's phrases in order: (its token for one token, else None; its
    text; its IDF). ``in_phrases`` holds the phrases of several tokens by row, with their
    frequencies, and ``facts`` those rows' lengths and starts.

    Only the best (at least ``head``) are ordered exactly, by :func:`_rank` on Python floats:
    sorting thousands of candidates by that key cost more than scoring them. Every one of the
    rest scores below the head's last by more than :func:`_level` rounds, so none ties with
    the head."""
    phrase_rows = np.array(sorted(in_phrases), dtype=np.int64)
    everything = np.union1d(postings.erow, phrase_rows)
    candidates = everything[-cap:]  # ascending: the newest ``cap``
    if candidates.size == 0:
        return _Ranked([], np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
    low = candidates[0]
    counts = np.zeros((candidates.size, len(terms)), dtype=np.float64)
    doc_len = np.zeros(candidates.size, dtype=np.int64)
    started = np.zeros(candidates.size, dtype=np.float64)
    inside = postings.erow >= low
    if inside.any():
        at = np.searchsorted(candidates, postings.erow[inside])
        frequency = _frequencies(postings.main[inside], postings.context[inside])
        token = postings.token[inside]
        for column, (single, _, _) in enumerate(terms):
            if single is not None:
                mine = token == by_token[single]
                counts[at[mine], column] = frequency[mine]
        doc_len[at] = postings.doc_len[inside]
        started[at] = postings.started_at[inside]
    if phrase_rows.size:
        newer = [erow for erow in phrase_rows.tolist() if erow >= low]
        place = np.searchsorted(candidates, newer)
        for column, (single, text, _) in enumerate(terms):
            if single is None:
                counts[place, column] = [in_phrases[erow].get(text, 0.0) for erow in newer]
        doc_len[place] = [facts[erow][0] for erow in newer]
        started[place] = [facts[erow][1] for erow in newer]
    norm = text_index.bm25_norm(doc_len, avgdl)
    score = np.zeros(candidates.size, dtype=np.float64)
    for column, (_, _, idf_) in enumerate(terms):
        f = counts[:, column]
        # Added only where found, as the row-by-row sum adds it.
        score = np.where(f > 0, score + text_index.bm25_term(idf_, f, norm), score)
    positive = score > 0
    score, started, rows = score[positive], started[positive], candidates[positive]
    order = np.lexsort((-started, -score))
    ordered = min(head, order.size)
    if ordered:
        last = score[order[ordered - 1]]
        ordered = int(np.count_nonzero(score >= last * (1 - _TIE_MARGIN)))
    first, others = order[:ordered], order[ordered:]
    best = list(
        zip(score[first].tolist(), started[first].tolist(), rows[first].tolist(), strict=True)
    )
    best.sort(key=_rank)
    return _Ranked(best, score[others], started[others], rows[others])


def _checked(
    phrase: Phrase, tokens: Sequence[str], postings: Sequence[tuple[Any, ...]]
) -> list[tuple[int, int, float, float]]:
    """The rows of ``postings`` ((term, row, document length, start, count in the text or
    summary, positions) rows) that hold every one of ``tokens`` (the rarest first), newest
    first: (row, document length, start, the phrase's weighted frequency there, 0 when its
    tokens are never adjacent).

    The frequency is FTS5's: the sum over columns of the column's weight times the phrase's
    hits in it. A hit starting at one of the first token's positions in the text or summary
    (its first ``n_main``, which come first) weighs 1, one in the context
    ``fts5.CONTEXT_WEIGHT``. A dense phrase checks tens of thousands of rows here, so all of
    them are checked at once (numpy): a position of the first token starts a hit when each
    later token, at its distance ``k`` in the phrase, is at that position plus ``k`` in the
    same row."""
    if not postings:
        return []
    # Rows may carry more columns after these (a pair posting's scope).
    term, erow, doc_len, started_at, n_main, packed = list(zip(*postings, strict=True))[:6]
    rows = np.array(erow, dtype=np.int64)
    number = {t: n for n, t in enumerate(dict.fromkeys(tokens))}
    codes = np.array([number.get(t, -1) for t in term], dtype=np.int64)
    # Each token's postings, by row (a row holds one posting of a term).
    by_row: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for t, n in number.items():
        mine = np.flatnonzero(codes == n)
        order = np.argsort(rows[mine])
        by_row[t] = (rows[mine][order], mine[order])
    held = by_row[tokens[0]][0]
    for t in tokens[1:]:
        held = np.intersect1d(held, by_row[t][0], assume_unique=True)
    if held.size == 0:
        return []
    held = held[::-1]  # newest first
    # Where each token's posting of each held row is, in ``postings``.
    at = {t: index[np.searchsorted(found, held)] for t, (found, index) in by_row.items()}
    size = len(phrase.tokens)
    span = text_index.MAX_POSITION + 2 * size + 2  # one row's starts never reach the next's
    head = at[phrase.tokens[0]]
    positions, owner, counts = _unpacked(packed, head)
    # Each start as one number (its row, then its position); a later token's position minus
    # its distance must give the same number.
    starts = owner * span + (positions + size)
    hit = np.ones(starts.size, dtype=bool)
    for k, t in enumerate(phrase.tokens[1:], start=1):
        later, later_owner, _ = _unpacked(packed, at[t])
        hit &= np.isin(starts, later_owner * span + (later - k + size))
    # A start's place in its posting: the first ``n_main`` are in the text or summary.
    place = np.arange(positions.size, dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    in_main = place < np.array(n_main, dtype=np.int64)[head][owner]
    in_text = np.bincount(owner[hit & in_main], minlength=held.size)
    in_context = np.bincount(owner[hit & ~in_main], minlength=held.size)
    frequency = _frequencies(in_text, in_context)
    lengths = np.array(doc_len, dtype=np.int64)[head]
    starts_at = np.array(started_at, dtype=np.float64)[head]
    return list(
        zip(held.tolist(), lengths.tolist(), starts_at.tolist(), frequency.tolist(), strict=True)
    )


def _frequencies(main: np.ndarray, context: np.ndarray) -> np.ndarray:
    """FTS5's weighted frequency for each pair of counts (in the text or summary, in the
    context), as :func:`text_index.posting_frequency` sums it: a few distinct pairs recur over
    thousands of postings, so each is summed once."""
    distinct, which = np.unique(main * _PAIR + context, return_inverse=True)
    weight = fts5.CONTEXT_WEIGHT
    each = [text_index.posting_frequency(int(p) // _PAIR, int(p) % _PAIR, weight) for p in distinct]
    return np.array(each, dtype=np.float64)[which]


def _unpacked(
    packed: Sequence[bytes], postings: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stored positions of ``postings`` (one per held row, in order), all in one array;
    for each, its row (its place among them); and how many each posting holds."""
    blobs = [packed[i] for i in postings.tolist()]
    counts = np.fromiter((len(b) // 2 for b in blobs), dtype=np.int64, count=len(blobs))
    positions = np.frombuffer(b"".join(blobs), dtype=text_index.PACKED_POSITION).astype(np.int64)
    owner = np.repeat(np.arange(len(blobs), dtype=np.int64), counts)
    return positions, owner, counts


def _pair_chain(phrase: Phrase) -> tuple[Phrase, list[int]]:
    """``phrase`` as the chain of its pairs, for :func:`_checked` (the pairs' ids, as text, as
    its tokens: the ``k``-th starts ``k`` after the first), and its distinct pairs."""
    pairs = text_index.phrase_pair_ids(phrase.tokens)
    return Phrase(phrase.text, tuple(str(p) for p in pairs)), sorted(set(pairs))


def _bigint_array(values: Sequence[int]) -> str:
    """``values`` as a PostgreSQL array literal: psycopg adapts a list element by element (a
    pattern match each: 16,000 rows cost about 10 ms), where this is one join."""
    return "{" + ",".join(map(str, map(int, values))) + "}"


#: A pair posting as :func:`_checked` reads it (the pair's id as text, for a token), and its
#: scope's number.
_PAIR_READ = (
    "SELECT pair::text, erow, doc_len, started_at, n_main, positions, scope_id"
    " FROM builtin_pair_postings"
)
#: A phrase's other pair is read over a window's whole range when it holds at most this many
#: times the lead's postings there (a range read of the index costs about a third of a
#: lookup a row), else looked up at the lead's rows.
_RANGE_READ = 3
#: Above every row number (``erow`` is a bigint identity).
_NO_ROW_ABOVE = 2**63 - 1


def _level(score: float) -> tuple[int, float]:
    """A BM25 score as it orders candidates: equal to 11 significant digits is a tie (FTS5
    adds the same terms in another order, so the last bits may differ). Relative, not to a
    number of decimals: a word in nearly every document has its IDF clamped to 1e-6, and its
    scores differ from the sixth decimal on."""
    mantissa, exponent = math.frexp(score)
    return (-exponent, -round(mantissa, 11))


def _rank(scored: tuple[float, float, int]) -> tuple[int, float, float]:
    """A candidate's place: best score first (:func:`_level`), then newest start (FTS5's
    order). Ties of both are ordered by episode id, in :meth:`BuiltinIndexMixin._live`."""
    return (*_level(scored[0]), -scored[1])


def _tie(a: tuple[float, float, int], b: tuple[float, float, int]) -> bool:
    """Whether two scored candidates are ordered by their ids alone (same score and start)."""
    return _rank(a) == _rank(b)
